/* gpu_graph.c — loops and conditionals as CUDA graphs with conditional nodes (see gpu_graph.h).
 *
 * Building a graph: the construct's steps are queued on a capture stream of the executable's
 * own with cuStreamBeginCaptureToGraph, so every kernel launch and copy goes through the same
 * code as the stream path (gpu_exec.c's step()). A nested loop or conditional ends the capture,
 * adds its conditional node after the nodes captured so far (cuGraphAddNode), fills the node's
 * body graphs by capturing into them in turn, and capture resumes after the node. The steps run
 * as a chain: each capture starts from the node before it.
 *
 * A WHILE step (condition steps C, body B) becomes  C, ctl(entry), WHILE{ B, C, ctl(test) }:
 * the control kernel sets the node's condition to the predicate C computed, so the body runs
 * while it holds, and the entry form also zeroes the loop's trip counter (a nested loop starts
 * counting again each time its parent's body enters it). A COND step with n branches becomes n
 * control launches (branch k's condition: the index picks k) then n IF nodes: all conditions
 * are set before any branch runs, so a branch that writes the selector's slot changes nothing.
 *
 * The graph bakes in device addresses: the parameter and result leaves of the execution that
 * captured it. It is kept, instantiated, with those addresses, and captured again when an
 * execution's differ; the new graph has the same nodes with other arguments, so it updates the
 * instantiated one (cuGraphExecUpdate) instead of being instantiated itself, which is the
 * larger cost. A driver that refuses the update gets a fresh instantiation. */
#include <string.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include "backend/gpu/gpu_graph.h"

_Static_assert(sizeof(cx_cu_graph_node_params) == 256, "CUgraphNodeParams is 256 bytes in cuda.h");

/* ---- build time: which constructs, and the control kernel ---- */

static int step_end(const cx_gpu_step *s, int i) { return s->kind == CX_GPU_WHILE || s->kind == CX_GPU_COND ? s->end : i + 1; }

/* kernels, copies, loops and conditionals: what a conditional body graph takes. Library calls
 * are not: cuSOLVER's cholesky reads info words back to the host, the emulated libraries run
 * on the host at the call, and each needs its own check that it captures (left for later).
 * Nor are infeed, outfeed and host callbacks: host steps (gpu_host.c) a graph cannot hold. */
static int capturable(const cx_gpu_prog *p, int begin, int end) {
  for (int i = begin; i < end; i++) {
    cx_gpu_step_kind k = p->steps[i].kind;
    if (k != CX_GPU_LAUNCH && k != CX_GPU_COPY && k != CX_GPU_WHILE && k != CX_GPU_COND) return 0;
  }
  return 1;
}

/* The control kernel (one thread). op 0: a loop's entry (zero its trip counter, then as 1);
 * op 1: a loop's test: the condition is the pred at sel, 0 past `arg` trips (arg > 0), when
 * *abort is set to `id` (the WHILE step + 1) and every later test and branch says 0; op 2 and
 * 3: branch `arg` of `id` branches, the selector a pred (true picks 0) or an s32 (out of range
 * picks the last), as the read-back path decides. */
static const char k_ctl_ir[] =
  "declare void @cudaGraphSetConditional(i64, i32)\n"
  "define void @cxla_graph_ctl(ptr addrspace(1) %sel, ptr addrspace(1) %abort, ptr addrspace(1) %count, i64 %handle,"
  " i64 %op, i64 %arg, i64 %id) {\n"
  "entry:\n  %stop = load i64, ptr addrspace(1) %abort, align 8\n  %stopped = icmp ne i64 %stop, 0\n"
  "  br i1 %stopped, label %set0, label %go\n"
  "go:\n  %isbranch = icmp uge i64 %op, 2\n  br i1 %isbranch, label %branch, label %loop\n"
  "loop:\n  %first = icmp eq i64 %op, 0\n  br i1 %first, label %reset, label %test\n"
  "reset:\n  store i64 0, ptr addrspace(1) %count, align 8\n  br label %test\n"
  "test:\n  %p8 = load i8, ptr addrspace(1) %sel, align 1\n  %p = icmp ne i8 %p8, 0\n"
  "  br i1 %p, label %trip, label %set0\n"
  "trip:\n  %n = load i64, ptr addrspace(1) %count, align 8\n  %limited = icmp sgt i64 %arg, 0\n"
  "  %over = icmp sge i64 %n, %arg\n  %stopnow = and i1 %limited, %over\n  br i1 %stopnow, label %overrun, label %more\n"
  "overrun:\n  store i64 %id, ptr addrspace(1) %abort, align 8\n  br label %set0\n"
  "more:\n  %n1 = add i64 %n, 1\n  store i64 %n1, ptr addrspace(1) %count, align 8\n  br label %set1\n"
  "branch:\n  %ispred = icmp eq i64 %op, 2\n  br i1 %ispred, label %bpred, label %bint\n"
  "bpred:\n  %b8 = load i8, ptr addrspace(1) %sel, align 1\n  %bt = icmp ne i8 %b8, 0\n"
  "  %bk = select i1 %bt, i64 0, i64 1\n  br label %pick\n"
  "bint:\n  %k32 = load i32, ptr addrspace(1) %sel, align 4\n  %k = sext i32 %k32 to i64\n  %last = add i64 %id, -1\n"
  "  %neg = icmp slt i64 %k, 0\n  %big = icmp sge i64 %k, %id\n  %out = or i1 %neg, %big\n"
  "  %kc = select i1 %out, i64 %last, i64 %k\n  br label %pick\n"
  "pick:\n  %idx = phi i64 [ %bk, %bpred ], [ %kc, %bint ]\n  %hit = icmp eq i64 %idx, %arg\n"
  "  br i1 %hit, label %set1, label %set0\n"
  "set0:\n  call void @cudaGraphSetConditional(i64 %handle, i32 0)\n  ret void\n"
  "set1:\n  call void @cudaGraphSetConditional(i64 %handle, i32 1)\n  ret void\n}\n"
  "!nvvm.annotations = !{!0}\n!0 = !{ptr @cxla_graph_ctl, !\"kernel\", i32 1}\n";
static const char k_ctl_name[] = "cxla_graph_ctl";

enum { OP_ENTRY, OP_TEST, OP_BRANCH_PRED, OP_BRANCH_S32 };

static cxla_status add_ctl_kernel(cxla_context *ctx, cx_gpu_prog *p, LLVMModuleRef mod) {
  LLVMContextRef llctx = LLVMGetModuleContext(mod);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(k_ctl_ir, sizeof k_ctl_ir - 1, "cxla_graph_ctl");
  LLVMModuleRef ctl = NULL;
  char *err = NULL;
  if (LLVMParseIRInContext(llctx, buf, &ctl, &err)) { /* takes buf */
    cxla_status s = cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: the graphs' control kernel: %s", err ? err : "");
    LLVMDisposeMessage(err);
    return s;
  }
  LLVMSetTarget(ctl, LLVMGetTarget(mod));
  LLVMSetDataLayout(ctl, LLVMGetDataLayoutStr(mod));
  if (LLVMLinkModules2(mod, ctl)) /* takes ctl */
    return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: linking the graphs' control kernel failed (is %s taken?)",
                    k_ctl_name);
  int64_t cap = p->nkernels;
  if (!cx_vec_reserve((void **)&p->kernels, &cap, p->nkernels + 1, sizeof *p->kernels)) return cx_oom(ctx);
  memset(p->kernels[p->nkernels], 0, sizeof p->kernels[p->nkernels]);
  memcpy(p->kernels[p->nkernels], k_ctl_name, sizeof k_ctl_name);
  p->graph_kernel = p->nkernels++;
  return CXLA_OK;
}

cxla_status cx_gpu_graph_plan(cxla_context *ctx, cx_gpu_prog *p, LLVMModuleRef mod) {
  for (int i = 0; i < p->nsteps; i++) { /* every construct (nested ones too: inside a loop that cannot) */
    cx_gpu_step *s = &p->steps[i];
    if (s->kind == CX_GPU_COND || (s->kind == CX_GPU_WHILE && s->trips < 0)) s->graph = capturable(p, i + 1, s->end);
  }
  int nloops = 0;
  for (int i = 0; i < p->nsteps;) { /* the outermost graphs, and what runs inside them */
    if (!p->steps[i].graph) {
      i++;
      continue;
    }
    int end = p->steps[i].end;
    for (int j = i; j < end; j++) {
      cx_gpu_step *s = &p->steps[j];
      if (s->kind == CX_GPU_WHILE) s->ctl = ++nloops, p->nloops_graph++;
      else if (s->kind == CX_GPU_COND) p->nconds_graph++;
    }
    i = end;
  }
  return p->nloops_graph + p->nconds_graph ? add_ctl_kernel(ctx, p, mod) : CXLA_OK;
}

/* ---- load time ---- */

typedef struct graph_entry {
  CUgraph g;
  CUgraphExec x;
  CUdeviceptr *key;       /* the addresses of its `moving` slots it was captured with */
} graph_entry;

typedef struct moving {   /* a construct's parameter and result slots: where an execution's
                             leaves are, which may differ from the last one's */
  int *slots, n, known;
} moving;

enum { RETIRED_MAX = 16 };

typedef struct cx_gpu_graphs {
  CUdeviceptr ctl;        /* [0]: the abort word (WHILE step + 1 of the loop that overran), then
                             one trip counter per loop in a graph (step.ctl) */
  CUstream capture;       /* a stream of its own: capturing on the device's stream would take in
                             other executables' work queued meanwhile */
  graph_entry *per;       /* per step (WHILE/COND marked ones) */
  moving *moves;          /* per step, likewise */
  /* graphs replaced by a new capture while a launch of theirs may still be queued: destroyed
   * once the stream is known to be past them (unload, or when RETIRED_MAX have piled up) */
  graph_entry retired[RETIRED_MAX];
  int nretired;
} cx_gpu_graphs;


cxla_status cx_gpu_graph_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  if (p->graph_kernel < 0) return CXLA_OK;
  const cx_cuda *cu = st->cu;
  cx_gpu_graphs *g = cx_calloc(1, sizeof *g);
  if (!g) return cx_oom(ctx);
  st->graphs = g;
  if (!(g->per = cx_calloc((size_t)p->nsteps, sizeof *g->per)) || !(g->moves = cx_calloc((size_t)p->nsteps, sizeof *g->moves)))
    return cx_oom(ctx);
  CUresult e = cu->MemAlloc(&g->ctl, sizeof(int64_t) * (size_t)(1 + p->nloops_graph));
  if (e) return cx_cuda_error(ctx, cu, e, "cuMemAlloc (the graphs' control words)");
  if ((e = cu->StreamCreate(&g->capture, 1))) return cx_cuda_error(ctx, cu, e, "cuStreamCreate (graph capture)");
  return CXLA_OK;
}

static void entry_drop(const cx_cuda *cu, graph_entry *e) {
  if (e->x) cu->GraphExecDestroy(e->x);
  if (e->g) cu->GraphDestroy(e->g);
  cx_free(e->key);
  memset(e, 0, sizeof *e);
}

void cx_gpu_graph_unload(gpu_state *st) {
  cx_gpu_graphs *g = st->graphs;
  if (!g) return;
  for (int i = 0; g->per && i < st->prog.nsteps; i++) entry_drop(st->cu, &g->per[i]);
  for (int i = 0; i < g->nretired; i++) entry_drop(st->cu, &g->retired[i]);
  for (int i = 0; g->moves && i < st->prog.nsteps; i++) cx_free(g->moves[i].slots);
  cx_free(g->moves);
  if (g->capture) st->cu->StreamDestroy(g->capture);
  if (g->ctl) st->cu->MemFree(g->ctl);
  cx_free(g->per);
  cx_free(g);
  st->graphs = NULL;
}

/* ---- capture ---- */

enum { MAX_DEPS = 8 };

typedef struct seg {      /* a graph being filled: the nodes the next ones come after */
  CUgraph g;
  CUgraphNode deps[MAX_DEPS];
  size_t ndeps;
  int on;                 /* the capture stream is capturing into g */
} seg;

typedef struct cap {
  cx_gpu_run *r;
  const cx_cuda *cu;
  seg *active;            /* the seg capturing now (at most one: ended before a nested one) */
} cap;

static cxla_status cu_fail(cap *c, CUresult e, const char *what) { return cx_cuda_error(c->r->ctx, c->cu, e, what); }

static cxla_status seg_begin(cap *c, seg *sg) {
  if (sg->on) return CXLA_OK;
  CUresult e = c->cu->StreamBeginCaptureToGraph(c->r->stream, sg->g, sg->ndeps ? sg->deps : NULL, NULL, sg->ndeps,
                                                CX_CU_CAPTURE_THREAD_LOCAL);
  if (e) return cu_fail(c, e, "cuStreamBeginCaptureToGraph");
  sg->on = 1;
  c->active = sg;
  return CXLA_OK;
}

/* ends sg's capture, keeping the nodes captured last as what follows depends on */
static cxla_status seg_end(cap *c, seg *sg) {
  if (!sg->on) return CXLA_OK;
  int status = 0;
  const CUgraphNode *deps = NULL;
  size_t n = 0;
  CUresult e = c->cu->StreamGetCaptureInfo(c->r->stream, &status, NULL, NULL, &deps, NULL, &n);
  CUgraph g = NULL;
  CUresult e2 = c->cu->StreamEndCapture(c->r->stream, &g);
  sg->on = 0;
  c->active = NULL;
  if (e) return cu_fail(c, e, "cuStreamGetCaptureInfo");
  if (e2) return cu_fail(c, e2, "cuStreamEndCapture");
  if (n > MAX_DEPS) return cx_error(c->r->ctx, CXLA_ERR_INTERNAL, "gpu backend: a capture ended on %zu nodes", n);
  if (n) memcpy(sg->deps, deps, sizeof *deps * n);
  sg->ndeps = n;
  return CXLA_OK;
}

static cxla_status handle(cap *c, seg *sg, CUgraphConditionalHandle *h) {
  CUresult e = c->cu->GraphConditionalHandleCreate(h, sg->g, c->r->st->device->cuctx, 0, 0);
  return e ? cu_fail(c, e, "cuGraphConditionalHandleCreate") : CXLA_OK;
}

/* the control kernel on the capturing stream */
static cxla_status ctl(cap *c, const cx_gpu_step *s, CUgraphConditionalHandle h, int64_t op, int64_t arg, int64_t id) {
  gpu_state *st = c->r->st;
  CUdeviceptr sel = cx_gpu_run_slot(c->r, s->sel), abort_at = st->graphs->ctl;
  CUdeviceptr count = abort_at + sizeof(int64_t) * (CUdeviceptr)(s->kind == CX_GPU_WHILE ? s->ctl : 0);
  void *argv[7] = {&sel, &abort_at, &count, &h, &op, &arg, &id};
  CUresult e = c->cu->LaunchKernel(st->fns[st->prog.graph_kernel], 1, 1, 1, 1, 1, 1, 0, c->r->stream, argv, NULL);
  return e ? cu_fail(c, e, "the graphs' control kernel") : CXLA_OK;
}

/* a conditional node after sg's nodes; its (empty) body graph k in *body */
static cxla_status cond_node(cap *c, seg *sg, int type, CUgraphConditionalHandle h, CUgraph *body) {
  CX_TRY(seg_end(c, sg));
  cx_cu_graph_node_params np;
  memset(&np, 0, sizeof np);
  np.type = CX_CU_GRAPH_NODE_CONDITIONAL;
  np.cond.handle = h;
  np.cond.type = type;
  np.cond.size = 1;
  np.cond.ctx = c->r->st->device->cuctx;
  CUgraphNode node = NULL;
  CUresult e = c->cu->GraphAddNode(&node, sg->g, sg->ndeps ? sg->deps : NULL, NULL, sg->ndeps, &np);
  if (e) return cu_fail(c, e, "cuGraphAddNode (a conditional node)");
  if (!np.cond.graphs_out || !np.cond.graphs_out[0])
    return cx_error(c->r->ctx, CXLA_ERR_DEVICE, "gpu backend: the driver gave a conditional node no body graph");
  sg->deps[0] = node;
  sg->ndeps = 1;
  *body = np.cond.graphs_out[0];
  return CXLA_OK;
}

static cxla_status cap_steps(cap *c, seg *sg, int begin, int end);

static cxla_status cap_loop(cap *c, seg *sg, int i) {
  const cx_gpu_step *s = &c->r->st->prog.steps[i];
  int64_t max = c->r->st->max_loop_iterations;
  CUgraphConditionalHandle h;
  CX_TRY(handle(c, sg, &h));
  CX_TRY(cap_steps(c, sg, i + 1, s->body)); /* the condition */
  CX_TRY(seg_begin(c, sg));
  CX_TRY(ctl(c, s, h, OP_ENTRY, max, i + 1));
  seg body = {0};
  CX_TRY(cond_node(c, sg, CX_CU_COND_WHILE, h, &body.g));
  CX_TRY(cap_steps(c, &body, s->body, s->end)); /* the body, then the condition again */
  CX_TRY(cap_steps(c, &body, i + 1, s->body));
  CX_TRY(seg_begin(c, &body));
  CX_TRY(ctl(c, s, h, OP_TEST, max, i + 1));
  return seg_end(c, &body);
}

static cxla_status cap_cond(cap *c, seg *sg, int i) {
  const cx_gpu_step *s = &c->r->st->prog.steps[i];
  int n = s->nbranch, op = c->r->st->prog.bufs.slots[s->sel].size == 1 ? OP_BRANCH_PRED : OP_BRANCH_S32;
  CUgraphConditionalHandle hs[16], *h = n <= 16 ? hs : cx_calloc((size_t)n, sizeof *h);
  if (!h) return cx_oom(c->r->ctx);
  cxla_status st = CXLA_OK;
  for (int k = 0; k < n && st == CXLA_OK; k++) st = handle(c, sg, &h[k]);
  if (st == CXLA_OK) st = seg_begin(c, sg);
  for (int k = 0; k < n && st == CXLA_OK; k++) st = ctl(c, s, h[k], op, k, n);
  for (int k = 0; k < n && st == CXLA_OK; k++) {
    seg body = {0};
    st = cond_node(c, sg, CX_CU_COND_IF, h[k], &body.g);
    if (st == CXLA_OK) st = cap_steps(c, &body, s->slots[k], s->slots[k + 1]);
    if (st == CXLA_OK) st = seg_end(c, &body);
  }
  if (h != hs) cx_free(h);
  return st;
}

static cxla_status cap_steps(cap *c, seg *sg, int begin, int end) {
  const cx_gpu_step *steps = c->r->st->prog.steps;
  for (int i = begin; i < end; i = step_end(&steps[i], i)) {
    const cx_gpu_step *s = &steps[i];
    if (s->kind == CX_GPU_WHILE) CX_TRY(cap_loop(c, sg, i));
    else if (s->kind == CX_GPU_COND) CX_TRY(cap_cond(c, sg, i));
    else {
      CX_TRY(seg_begin(c, sg));
      CX_TRY(cx_gpu_run_step(c->r, s));
    }
  }
  return CXLA_OK;
}

/* captures construct i into a new graph (e->g) */
static cxla_status capture(cx_gpu_run *r, int i, graph_entry *e) {
  const cx_cuda *cu = r->st->cu;
  CUstream stream = r->stream;
  r->stream = r->st->graphs->capture;
  cap c = {.r = r, .cu = cu};
  seg top = {0};
  CUresult err = cu->GraphCreate(&top.g, 0);
  cxla_status s = err ? cx_cuda_error(r->ctx, cu, err, "cuGraphCreate") : CXLA_OK;
  e->g = top.g;
  if (s == CXLA_OK) s = cap_steps(&c, &top, i, i + 1);
  if (s == CXLA_OK) s = seg_end(&c, &top);
  if (c.active) { /* a failure mid-capture: the stream must stop capturing */
    CUgraph g;
    cu->StreamEndCapture(r->stream, &g);
  }
  r->stream = stream;
  return s;
}

static cxla_status instantiate(cx_gpu_run *r, graph_entry *e) {
  CUresult err = r->st->cu->GraphInstantiate(&e->x, e->g, 0);
  return err ? cx_cuda_error(r->ctx, r->st->cu, err, "cuGraphInstantiate") : CXLA_OK;
}

/* ---- run time ---- */

/* e's graph out of use; the stream is waited for only when too many are waiting to go */
static cxla_status retire(cx_gpu_run *r, graph_entry *e) {
  cx_gpu_graphs *g = r->st->graphs;
  const cx_cuda *cu = r->st->cu;
  if (g->nretired == RETIRED_MAX) {
    CUresult err = cu->StreamSynchronize(r->stream);
    if (err) return cx_cuda_error(r->ctx, cu, err, "waiting for replaced graphs to finish (cuStreamSynchronize)");
    for (int i = 0; i < g->nretired; i++) entry_drop(cu, &g->retired[i]);
    g->nretired = 0;
  }
  g->retired[g->nretired++] = *e;
  memset(e, 0, sizeof *e);
  return CXLA_OK;
}

int cx_gpu_graph_usable(const cx_gpu_run *r, const cx_gpu_step *s) { return s->graph && r->st->graphs && !r->events; }

/* the slots of construct i's steps that are parameter or result leaves (the others, temporaries,
 * constants and scratch, stay where they are for the executable's life) */
static cxla_status find_moving(cx_gpu_run *r, int i, moving *mv) {
  const cx_gpu_prog *p = &r->st->prog;
  int end = p->steps[i].end, cap = 0;
  for (int j = i; j < end; j++) {
    const cx_gpu_step *s = &p->steps[j];
    /* a launch's arguments, a copy's two ends, a loop's or conditional's selector */
    int ends[3] = {s->sel, s->dst, s->src}, n = s->kind == CX_GPU_LAUNCH ? s->nargs : s->kind == CX_GPU_COPY ? 2 : 1;
    const int *at = s->kind == CX_GPU_LAUNCH ? s->slots : s->kind == CX_GPU_COPY ? ends + 1 : ends;
    for (int k = 0; k < n; k++) {
      int sl = at[k];
      if (sl < 0 || sl >= p->bufs.nslots || (p->bufs.slots[sl].kind != CX_SLOT_PARAM && p->bufs.slots[sl].kind != CX_SLOT_OUTPUT))
        continue;
      if (mv->n == cap) {
        int *more = cx_realloc(mv->slots, sizeof *more * (size_t)(cap = cap ? 2 * cap : 8));
        if (!more) return cx_oom(r->ctx);
        mv->slots = more;
      }
      mv->slots[mv->n++] = sl;
    }
  }
  mv->known = 1;
  return CXLA_OK;
}

static int moved(const cx_gpu_run *r, const moving *mv, const CUdeviceptr *key) {
  for (int k = 0; k < mv->n; k++)
    if (cx_gpu_run_slot(r, mv->slots[k]) != key[k]) return 1;
  return 0;
}

cxla_status cx_gpu_graph_run(cx_gpu_run *r, int i) {
  gpu_state *st = r->st;
  cx_gpu_graphs *g = st->graphs;
  const cx_cuda *cu = st->cu;
  graph_entry *e = &g->per[i];
  moving *mv = &g->moves[i];
  if (!mv->known) CX_TRY(find_moving(r, i, mv));
  if (!e->x || moved(r, mv, e->key)) { /* first, or an address moved: capture (again) */
    graph_entry fresh = {0};
    if (!(fresh.key = cx_malloc(sizeof *fresh.key * (size_t)(mv->n ? mv->n : 1)))) return cx_oom(r->ctx);
    for (int k = 0; k < mv->n; k++) fresh.key[k] = cx_gpu_run_slot(r, mv->slots[k]);
    cxla_status s = capture(r, i, &fresh);
    cx_cu_graph_update_info info;
    if (s == CXLA_OK && e->x && !cu->GraphExecUpdate(e->x, fresh.g, &info)) {
      /* launches queued before keep the old arguments (the driver's rule); the old graph is
       * only the template, no longer needed */
      cu->GraphDestroy(e->g);
      cx_free(e->key);
      e->g = fresh.g, e->key = fresh.key;
    } else {
      if (s == CXLA_OK && e->x) s = retire(r, e); /* refused: a new instantiation replaces it */
      if (s == CXLA_OK) s = instantiate(r, &fresh);
      if (s != CXLA_OK) {
        entry_drop(cu, &fresh);
        return s;
      }
      *e = fresh;
    }
  }
  /* no loop has overrun yet: once per execution (a graph in a loop that reads back runs many
   * times, and an overrun in any of them must reach the check) */
  CUresult err = r->graph_ran ? 0 : cu->MemsetD8Async(g->ctl, 0, sizeof(int64_t), r->stream);
  if (!err) err = cu->GraphLaunch(e->x, r->stream);
  if (err) return cx_cuda_error(r->ctx, cu, err, "cuGraphLaunch");
  r->graph_ran = 1;
  return CXLA_OK;
}

cxla_status cx_gpu_graph_check(cx_gpu_run *r) {
  gpu_state *st = r->st;
  if (!r->graph_ran || st->max_loop_iterations <= 0) return CXLA_OK;
  const cx_cuda *cu = st->cu;
  int64_t id = 0;
  CUresult e = cu->StreamSynchronize(r->stream);
  if (!e) e = cu->MemcpyDtoH(&id, st->graphs->ctl, sizeof id);
  if (e) return cx_cuda_error(r->ctx, cu, e, "reading the graphs' loop limit word");
  if (id < 1 || id > st->prog.nsteps) return CXLA_OK;
  const cx_gpu_step *s = &st->prog.steps[id - 1];
  return cx_error(r->ctx, CXLA_ERR_RUNTIME, "while loop %s did not finish within %lld iterations (--max-loop-iterations)",
                  s->in && s->in->name ? s->in->name : "?", (long long)st->max_loop_iterations);
}
