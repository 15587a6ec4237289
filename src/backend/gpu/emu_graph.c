/* emu_graph.c — CUDA graphs for the grid emulation (see emu.h): graphs of kernel, copy, memset
 * and conditional nodes, stream capture into a given graph, instantiation and launch, and the
 * device runtime's cudaGraphSetConditional that the control kernels call. Enough of the driver's
 * graph API for gpu_graph.c, with the driver's rules where cxla could break them: a dependency
 * must be a node of the same graph, a conditional's handle must belong to the graph tree being
 * launched, a capture that is not active cannot be ended, and a thread capturing cannot wait
 * for its stream. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/emu.h"

enum { /* the driver's CUresult values */
  E_OK = 0, E_INVALID_VALUE = 1, E_OUT_OF_MEMORY = 2, E_INVALID_HANDLE = 400, E_ILLEGAL_STATE = 401,
  E_CAPTURE_UNSUPPORTED = 900, E_CAPTURE_UNMATCHED = 903, E_UPDATE_FAILURE = 910,
};
/* CUgraphExecUpdateResult */
enum { U_SUCCESS = 0, U_ERROR = 1, U_TOPOLOGY_CHANGED = 2, U_NODE_TYPE_CHANGED = 3, U_PARAMETERS_CHANGED = 5,
       U_UNSUPPORTED_FUNCTION_CHANGE = 7 };

typedef struct egraph egraph;
typedef struct econd econd;

enum { N_KERNEL, N_COPY, N_MEMSET, N_COND };

typedef struct enode {
  int kind;
  egraph *owner;
  /* N_KERNEL: the function, its grid and a copy of its arguments */
  const cx_emu_fn *fn;
  unsigned grid[3], block[3];
  unsigned char *args;
  void *argv[CX_EMU_MAX_PARAMS];
  /* N_COPY, N_MEMSET */
  CUdeviceptr dst, src;
  size_t bytes;
  unsigned char value;
  /* N_COND */
  int ctype;
  unsigned size;
  econd *handle;
  egraph *bodies[2];
  CUgraph out[2];         /* what cuGraphAddNode hands back (the node owns the bodies) */
} enode;

struct econd {            /* a conditional handle */
  uint32_t value, dflt, flags;
  egraph *root;           /* the graph tree it belongs to */
  econd *next;            /* the root's handles */
};

struct egraph {
  enode **nodes;
  int n, cap;
  egraph *root;           /* itself, or the top graph of the tree a body graph is in */
  econd *handles;         /* a root's handles */
};

typedef struct eexec { egraph *g; } eexec;

/* ---- graphs ---- */

CUresult cx_emu_graph_create(CUgraph *g, unsigned flags) {
  if (!g || flags) return E_INVALID_VALUE;
  egraph *eg = calloc(1, sizeof *eg);
  if (!eg) return E_OUT_OF_MEMORY;
  eg->root = eg;
  *g = (CUgraph)eg;
  return E_OK;
}

static void graph_free(egraph *g) {
  for (int i = 0; i < g->n; i++) {
    enode *nd = g->nodes[i];
    for (int b = 0; b < 2; b++)
      if (nd->bodies[b]) graph_free(nd->bodies[b]);
    free(nd->args);
    free(nd);
  }
  for (econd *h = g->handles, *next; h; h = next) {
    next = h->next;
    free(h);
  }
  free(g->nodes);
  free(g);
}

CUresult cx_emu_graph_destroy(CUgraph g) {
  egraph *eg = (egraph *)g;
  if (!eg || eg->root != eg) return E_INVALID_VALUE; /* a body graph belongs to its node */
  graph_free(eg);
  return E_OK;
}

static int has_node(const egraph *g, const void *n) {
  for (int i = 0; i < g->n; i++)
    if (g->nodes[i] == n) return 1;
  return 0;
}

/* a new node of g after deps (each a node of g, so earlier: adding order is a topological order) */
static enode *add(egraph *g, const CUgraphNode *deps, size_t ndeps, CUresult *err) {
  for (size_t i = 0; i < ndeps; i++)
    if (!deps || !has_node(g, deps[i])) return *err = E_INVALID_VALUE, NULL;
  if (g->n == g->cap) {
    int cap = g->cap ? 2 * g->cap : 16;
    enode **nodes = realloc(g->nodes, sizeof *nodes * (size_t)cap);
    if (!nodes) return *err = E_OUT_OF_MEMORY, NULL;
    g->nodes = nodes, g->cap = cap;
  }
  enode *nd = calloc(1, sizeof *nd);
  if (!nd) return *err = E_OUT_OF_MEMORY, NULL;
  nd->owner = g;
  g->nodes[g->n++] = nd;
  return nd;
}

CUresult cx_emu_graph_handle_create(CUgraphConditionalHandle *h, CUgraph g, CUcontext c, unsigned dflt, unsigned flags) {
  egraph *eg = (egraph *)g;
  if (!h || !eg || !c || flags > 1) return E_INVALID_VALUE;
  econd *ec = calloc(1, sizeof *ec);
  if (!ec) return E_OUT_OF_MEMORY;
  *ec = (econd){.value = dflt, .dflt = dflt, .flags = flags, .root = eg->root, .next = eg->root->handles};
  eg->root->handles = ec;
  *h = (CUgraphConditionalHandle)(uintptr_t)ec;
  return E_OK;
}

static econd *find_handle(const egraph *root, CUgraphConditionalHandle h) {
  for (econd *e = root->handles; e; e = e->next)
    if ((CUgraphConditionalHandle)(uintptr_t)e == h) return e;
  return NULL;
}

CUresult cx_emu_graph_add_node(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, const void *edge_data, size_t ndeps,
                               cx_cu_graph_node_params *p) {
  egraph *eg = (egraph *)g;
  if (!n || !eg || !p || edge_data || p->type != CX_CU_GRAPH_NODE_CONDITIONAL) return E_INVALID_VALUE; /* only these */
  econd *h = find_handle(eg->root, p->cond.handle);
  int t = p->cond.type;
  unsigned size = p->cond.size;
  if (!h || !p->cond.ctx || (t != CX_CU_COND_IF && t != CX_CU_COND_WHILE) || size < 1 ||
      size > (t == CX_CU_COND_IF ? 2u : 1u))
    return E_INVALID_VALUE; /* SWITCH is not emulated: cxla does not use it */
  CUresult err = E_OK;
  enode *nd = add(eg, deps, ndeps, &err);
  if (!nd) return err;
  nd->kind = N_COND, nd->ctype = t, nd->size = size, nd->handle = h;
  for (unsigned b = 0; b < size; b++) {
    egraph *body = calloc(1, sizeof *body);
    if (!body) return E_OUT_OF_MEMORY; /* the node, and the bodies made so far, go with the graph */
    body->root = eg->root;
    nd->bodies[b] = body;
    nd->out[b] = (CUgraph)body;
  }
  p->cond.graphs_out = nd->out;
  *n = (CUgraphNode)nd;
  return E_OK;
}

/* ---- capture (per host thread) ---- */

static _Thread_local struct {
  egraph *g;              /* capturing into it */
  CUgraphNode deps[8];    /* what the next captured node comes after */
  size_t ndeps;
} t_cap;

int cx_emu_capturing(void) { return t_cap.g != NULL; }

CUresult cx_emu_capture_begin(CUstream s, CUgraph g, const CUgraphNode *deps, const void *edge_data, size_t ndeps, int mode) {
  egraph *eg = (egraph *)g;
  if (t_cap.g) return E_ILLEGAL_STATE;
  if (!eg || edge_data || ndeps > 8 || mode < 0 || mode > 2) return E_INVALID_VALUE;
  CUresult r = cx_cuda_emu()->StreamSynchronize(s); /* a stream of the emulation */
  if (r) return r;
  for (size_t i = 0; i < ndeps; i++)
    if (!deps || !has_node(eg, deps[i])) return E_INVALID_VALUE;
  t_cap.g = eg;
  t_cap.ndeps = ndeps;
  if (ndeps) memcpy(t_cap.deps, deps, sizeof *deps * ndeps);
  return E_OK;
}

CUresult cx_emu_capture_end(CUstream s, CUgraph *g) {
  (void)s;
  if (!g) return E_INVALID_VALUE;
  if (!t_cap.g) return E_CAPTURE_UNMATCHED;
  *g = (CUgraph)t_cap.g;
  t_cap.g = NULL;
  t_cap.ndeps = 0;
  return E_OK;
}

CUresult cx_emu_capture_info(CUstream s, int *status, unsigned long long *id, CUgraph *g, const CUgraphNode **deps,
                             const void **edge_data, size_t *ndeps) {
  (void)s;
  if (!status) return E_INVALID_VALUE;
  *status = t_cap.g ? CX_CU_CAPTURE_ACTIVE : 0;
  if (id) *id = (unsigned long long)(uintptr_t)t_cap.g;
  if (g) *g = (CUgraph)t_cap.g;
  if (deps) *deps = t_cap.deps;
  if (edge_data) *edge_data = NULL;
  if (ndeps) *ndeps = t_cap.g ? t_cap.ndeps : 0;
  return E_OK;
}

static enode *capture_node(CUresult *err) {
  enode *nd = add(t_cap.g, t_cap.deps, t_cap.ndeps, err);
  if (nd) t_cap.deps[0] = (CUgraphNode)nd, t_cap.ndeps = 1;
  return nd;
}

CUresult cx_emu_capture_kernel(const cx_emu_fn *fn, const unsigned grid[3], const unsigned block[3], void **params) {
  size_t total = 0;
  for (int i = 0; i < fn->nparams; i++) total += (fn->param_bytes[i] + 7u) & ~7u;
  unsigned char *args = malloc(total ? total : 1);
  if (!args) return E_OUT_OF_MEMORY;
  CUresult err = E_OK;
  enode *nd = capture_node(&err);
  if (!nd) {
    free(args);
    return err;
  }
  nd->kind = N_KERNEL, nd->fn = fn, nd->args = args;
  memcpy(nd->grid, grid, sizeof nd->grid);
  memcpy(nd->block, block, sizeof nd->block);
  for (int i = 0, off = 0; i < fn->nparams; i++) { /* the values now: the caller's may change */
    memcpy(args + off, params[i], fn->param_bytes[i]);
    nd->argv[i] = args + off;
    off += (fn->param_bytes[i] + 7) & ~7;
  }
  return E_OK;
}

CUresult cx_emu_capture_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  CUresult err = E_OK;
  enode *nd = capture_node(&err);
  if (!nd) return err;
  nd->kind = N_COPY, nd->dst = dst, nd->src = src, nd->bytes = bytes;
  return E_OK;
}

CUresult cx_emu_capture_memset(CUdeviceptr dst, unsigned char value, size_t n) {
  CUresult err = E_OK;
  enode *nd = capture_node(&err);
  if (!nd) return err;
  nd->kind = N_MEMSET, nd->dst = dst, nd->value = value, nd->bytes = n;
  return E_OK;
}

/* ---- instantiation and launch ---- */

static pthread_mutex_t g_count_mu = PTHREAD_MUTEX_INITIALIZER;
static long g_instantiated, g_updated;

void cx_emu_graph_counts(long *instantiated, long *updated) {
  pthread_mutex_lock(&g_count_mu);
  *instantiated = g_instantiated, *updated = g_updated;
  pthread_mutex_unlock(&g_count_mu);
}

static void count(long *n) {
  pthread_mutex_lock(&g_count_mu);
  ++*n;
  pthread_mutex_unlock(&g_count_mu);
}


CUresult cx_emu_graph_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags) {
  egraph *eg = (egraph *)g;
  if (!e || !eg || eg->root != eg || flags) return E_INVALID_VALUE;
  eexec *x = calloc(1, sizeof *x);
  if (!x) return E_OUT_OF_MEMORY;
  x->g = eg; /* the graph must outlive it here (the driver copies it; cxla destroys the exec first) */
  *e = (CUgraphExec)x;
  count(&g_instantiated);
  return E_OK;
}

CUresult cx_emu_graph_exec_destroy(CUgraphExec e) {
  free(e);
  return E_OK;
}

/* U_SUCCESS when b can replace a's parameters (the driver's rules for what cxla captures) */
static int update_check(const egraph *a, const egraph *b, const enode **bad) {
  if (a->n != b->n) return *bad = NULL, U_TOPOLOGY_CHANGED;
  for (int i = 0; i < a->n; i++) {
    const enode *x = a->nodes[i], *y = b->nodes[i];
    *bad = y;
    if (x->kind != y->kind) return U_NODE_TYPE_CHANGED;
    if (x->kind == N_KERNEL && x->fn != y->fn) return U_UNSUPPORTED_FUNCTION_CHANGE; /* stricter: cxla's never change */
    if (x->kind == N_COPY && x->bytes != y->bytes) return U_PARAMETERS_CHANGED; /* a 1-D copy keeps its size */
    if (x->kind == N_COND) {
      if (x->ctype != y->ctype || x->size != y->size) return U_PARAMETERS_CHANGED;
      for (unsigned k = 0; k < x->size; k++) {
        int r = update_check(x->bodies[k], y->bodies[k], bad);
        if (r != U_SUCCESS) return r;
      }
    }
  }
  return U_SUCCESS;
}

CUresult cx_emu_graph_exec_update(CUgraphExec e, CUgraph g, cx_cu_graph_update_info *info) {
  eexec *x = (eexec *)e;
  egraph *eg = (egraph *)g;
  if (!x || !eg || !info || eg->root != eg) {
    if (info) *info = (cx_cu_graph_update_info){.result = U_ERROR};
    return E_INVALID_VALUE;
  }
  const enode *bad = NULL;
  int r = update_check(x->g, eg, &bad);
  *info = (cx_cu_graph_update_info){.result = r, .error_node = (CUgraphNode)bad};
  if (r != U_SUCCESS) return E_UPDATE_FAILURE;
  x->g = eg; /* the new parameters, and the new graph's conditional handles (their flags and defaults) */
  count(&g_updated);
  return E_OK;
}

static _Thread_local const egraph *t_launching; /* the root whose graph runs on this thread */
static _Thread_local int t_bad_handle;

void cx_emu_graph_set_conditional(uint64_t handle, uint32_t value) {
  econd *h = t_launching ? find_handle(t_launching, handle) : NULL;
  if (!h) {
    t_bad_handle = 1; /* not a handle of the graph running: the launch fails */
    return;
  }
  h->value = value;
}

static CUresult run(const egraph *g, CUstream s) {
  const cx_cuda *cu = cx_cuda_emu();
  CUresult r = E_OK;
  for (int i = 0; i < g->n && r == E_OK; i++) {
    const enode *nd = g->nodes[i];
    switch (nd->kind) {
    case N_KERNEL:
      r = cu->LaunchKernel((CUfunction)nd->fn, nd->grid[0], nd->grid[1], nd->grid[2], nd->block[0], nd->block[1],
                           nd->block[2], 0, s, (void **)nd->argv, NULL);
      if (r == E_OK && t_bad_handle) r = E_INVALID_VALUE;
      break;
    case N_COPY: r = cu->MemcpyDtoDAsync(nd->dst, nd->src, nd->bytes, s); break;
    case N_MEMSET: r = cu->MemsetD8Async(nd->dst, nd->value, nd->bytes, s); break;
    default:
      if (nd->ctype == CX_CU_COND_WHILE)
        while (r == E_OK && nd->handle->value) r = run(nd->bodies[0], s);
      else if (nd->handle->value) r = run(nd->bodies[0], s);
      else if (nd->size == 2) r = run(nd->bodies[1], s);
      break;
    }
  }
  return r;
}

CUresult cx_emu_graph_launch(CUgraphExec e, CUstream s) {
  const eexec *x = (const eexec *)e;
  if (!x) return E_INVALID_HANDLE;
  if (t_cap.g) return E_CAPTURE_UNSUPPORTED; /* (the driver would add it as a child graph; cxla does not) */
  for (econd *h = x->g->handles; h; h = h->next)
    if (h->flags & 1) h->value = h->dflt; /* CU_GRAPH_COND_ASSIGN_DEFAULT */
  const egraph *saved = t_launching;
  t_launching = x->g;
  t_bad_handle = 0;
  CUresult r = run(x->g, s);
  t_launching = saved;
  return r;
}
