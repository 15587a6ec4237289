/* fusion_query.c — read-only questions the fusion passes ask: op classes and costs, users and
 * reachability in a computation, how a fused computation reads each parameter (same index,
 * re-read, emitted several times), and which computations are control-flow ones. */
#include <string.h>
#include "passes/fusion_query.h"
#include "ir/literal.h"

cx_fusion_kind fu_kind_of(const cx_instr *in) {
  if (!in || in->op != CX_OP_FUSION || in->ncalled != 1 || in->a.fusion_kind == CX_FUSION_CUSTOM)
    return CX_FUSION_NONE;
  return in->a.fusion_kind;
}

int fu_is_multi_output(const cx_instr *in) {
  return in->op == CX_OP_FUSION && in->ncalled == 1 && in->called[0]->root &&
         in->called[0]->root->op == CX_OP_TUPLE && in->shape.type == CXLA_TUPLE;
}

int fu_nouts(const cx_instr *in) { return fu_is_multi_output(in) ? in->called[0]->root->nops : 1; }

/* The re-indexing ops the emitter generates element by element inside a loop nest (the op
 * table's fuse column). */
int fu_is_fusible_shape_op(cx_op op) { return cx_op_fuses_as_reindex(op); }

static int is_array(const cx_shape *s) { return cx_type_is_array(s->type); }

int fu_is_loop_op(const cx_instr *in) {
  if (!is_array(&in->shape)) return 0;
  return cx_op_is_elementwise(in->op) || fu_is_fusible_shape_op(in->op);
}

int fu_is_window_producer(const cx_instr *in) {
  return cx_op_fuses_when_disjoint(in->op) && in->nops > 0 && is_array(&in->shape) &&
         !cx_type_is_complex(in->shape.type) && cx_window_fusible(&in->a.window, in->ops[0]->shape.rank);
}

int fu_is_pooling(const cx_instr *in) {
  return in->op == CX_OP_REDUCE_WINDOW && in->nops == 2 && is_array(&in->shape) &&
         cx_window_disjoint(&in->a.window, in->ops[0]->shape.rank);
}

int fu_is_simple_reduce(const cx_instr *in) {
  return in->op == CX_OP_REDUCE && in->nops == 2 && is_array(&in->shape);
}

int fu_is_scalar_constant(const cx_instr *in) {
  return in->op == CX_OP_CONSTANT && is_array(&in->shape) && cx_shape_elems(&in->shape) == 1;
}

cx_instr *fu_same_constant(const cx_comp *fc, const cx_instr *x) {
  if (!fu_is_scalar_constant(x) || !x->a.literal) return NULL;
  for (int i = 0; i < fc->ninstrs; i++) {
    cx_instr *y = fc->instrs[i];
    if (fu_is_scalar_constant(y) && y->a.literal && cx_shape_equal(&y->shape, &x->shape) &&
        cx_literal_equal(y->a.literal, x->a.literal))
      return y;
  }
  return NULL;
}

int fu_body_any(const cx_instr *in, int (*pred)(const cx_instr *)) {
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return pred(in);
  const cx_comp *b = in->called[0];
  for (int i = 0; i < b->ninstrs; i++)
    if (pred(b->instrs[i])) return 1;
  return 0;
}

static int raw_expensive(const cx_instr *in) {
  return in->op != CX_OP_PARAMETER && in->op != CX_OP_CONSTANT && in->op != CX_OP_TUPLE &&
         cx_op_is_expensive(in->op);
}

int fu_is_expensive(const cx_instr *in) { return fu_body_any(in, raw_expensive); }

int fu_size(const cx_instr *in) {
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return 1;
  int n = 0;
  const cx_comp *b = in->called[0];
  for (int i = 0; i < b->ninstrs; i++) n += b->instrs[i]->op != CX_OP_PARAMETER;
  return n;
}

int fu_count_reduces(const cx_instr *in) {
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return in->op == CX_OP_REDUCE;
  int n = 0;
  const cx_comp *b = in->called[0];
  for (int i = 0; i < b->ninstrs; i++) n += b->instrs[i]->op == CX_OP_REDUCE;
  return n;
}

const cx_instr *fu_first_reduce(const cx_instr *in) {
  if (in->op == CX_OP_REDUCE) return in;
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return NULL;
  const cx_comp *b = in->called[0];
  for (int i = 0; i < b->ninstrs; i++)
    if (b->instrs[i]->op == CX_OP_REDUCE) return b->instrs[i];
  return NULL;
}

/* Same reduced dimension set (the attribute order is not significant). */
static int same_dim_set(const cx_ints *a, const cx_ints *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) {
    int found = 0;
    for (int j = 0; j < b->n; j++) found |= a->v[i] == b->v[j];
    if (!found) return 0;
  }
  return 1;
}

static int reduce_matches(const cx_instr *r, const cx_instr *ref) {
  return fu_is_simple_reduce(r) && cx_shape_same_dims(&r->ops[0]->shape, &ref->ops[0]->shape) &&
         same_dim_set(&r->a.dims, &ref->a.dims);
}

static int all_reduces_match(const cx_instr *in, const cx_instr *ref) {
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return in->op != CX_OP_REDUCE || reduce_matches(in, ref);
  const cx_comp *b = in->called[0];
  for (int i = 0; i < b->ninstrs; i++)
    if (b->instrs[i]->op == CX_OP_REDUCE && !reduce_matches(b->instrs[i], ref)) return 0;
  return 1;
}

int fu_reduces_compatible(const cx_instr *a, const cx_instr *b) {
  const cx_instr *ref = fu_first_reduce(a);
  if (!ref) ref = fu_first_reduce(b);
  if (!ref) return 1;
  if (!fu_is_simple_reduce(ref)) return 0;
  return all_reduces_match(a, ref) && all_reduces_match(b, ref);
}

int fu_needs_kernel_wrap(const cx_instr *in) {
  switch (cx_op_class_of(in->op)) {
  case CX_CLASS_ELEMENTWISE:
    return 1;
  case CX_CLASS_SHAPE:
    return in->op != CX_OP_BITCAST; /* a bitcast aliases its operand's buffer */
  case CX_CLASS_REDUCE:
    return in->op != CX_OP_SORT && in->op != CX_OP_SCATTER && /* runtime routines of their own */
           in->op != CX_OP_SELECT_AND_SCATTER;
  default:
    return 0;
  }
}

/* ---- how a fused computation reads its values ----
 * Emission counting follows XLA's FusionNodeIndexingEvaluation: an elementwise user at the
 * same dims passes its own index on, so x is emitted once per distinct "index source" among
 * the non-elementwise users reachable through elementwise chains (and once for the root). */
#define SRC_CAP 16
#define EMIT_HUGE 1000000
typedef struct body_info {
  int n;
  int *emit;      /* emissions per instruction */
  char *reused, *ew, *to_reduce, *to_root, *dot;
} body_info;

/* u reads x at u's own index: elementwise at equal dims, or a reshape (row-major reshapes keep
 * the linear index, e.g. the [N] -> [N,1] of keepdims reductions). */
static int same_index_user(const cx_instr *u, const cx_instr *x) {
  if (u->op == CX_OP_RESHAPE || u->op == CX_OP_BITCAST)
    return cx_type_is_array(u->shape.type) && cx_shape_elems(&u->shape) == cx_shape_elems(&x->shape);
  return cx_op_is_elementwise(u->op) && cx_shape_same_dims(&u->shape, &x->shape);
}

/* Which operands an op reads an element of more than once by itself. */
typedef enum {
  REREAD_IMPLICIT = 0, /* none, except where an elementwise op broadcasts a smaller operand */
  REREAD_GROWS,        /* where the result has more elements than the operand (broadcast) */
  REREAD_ALL,          /* every operand: windows, contractions, map, gather (indices may repeat) */
  REREAD_NOT_FIRST,    /* all but operand 0: start indices (dynamic-slice), a reduce's init */
} reread;
static const uint8_t k_rereads[CX_OP_COUNT] = {
  [CX_OP_BROADCAST] = REREAD_GROWS,
  [CX_OP_REDUCE_WINDOW] = REREAD_ALL, [CX_OP_SELECT_AND_SCATTER] = REREAD_ALL, [CX_OP_MAP] = REREAD_ALL,
  [CX_OP_DOT] = REREAD_ALL, [CX_OP_CONVOLUTION] = REREAD_ALL, [CX_OP_GATHER] = REREAD_ALL,
  [CX_OP_DYNAMIC_SLICE] = REREAD_NOT_FIRST, [CX_OP_REDUCE] = REREAD_NOT_FIRST,
};

/* u reads some element of its operand x more than once by itself. */
static int op_reuses(const cx_instr *u, const cx_instr *x) {
  switch ((reread)k_rereads[u->op]) {
  case REREAD_GROWS: return cx_shape_elems(&u->shape) > cx_shape_elems(&x->shape);
  case REREAD_ALL: return 1;
  case REREAD_NOT_FIRST: return u->ops[0] != x;
  case REREAD_IMPLICIT: break;
  }
  return cx_op_is_elementwise(u->op) && !cx_shape_same_dims(&u->shape, &x->shape) &&
         cx_shape_elems(&u->shape) > cx_shape_elems(&x->shape);
}

static void body_free(body_info *bi) {
  cx_free(bi->emit);
  cx_free(bi->reused);
}

/* The users of each instruction of b, ascending and each once, as a CSR list: i's are
 * list[first[i] .. first[i + 1]). Scanning every later instruction for each one made the body
 * analysis quadratic, and the fusion pass asks for it after every step. Expects each
 * instruction's aux to be its position + 1. 0 on OOM (nothing to free). */
static int users_csr(const cx_comp *b, int **first_out, int **list_out) {
  int n = b->ninstrs, nedges = 0;
  for (int k = 0; k < n; k++) nedges += b->instrs[k]->nops;
  int *first = cx_calloc((size_t)n + 2, sizeof(int)), *list = cx_malloc(sizeof(int) * (size_t)(nedges + 1));
  int *last = cx_calloc((size_t)n + 1, sizeof(int)); /* the last user added to each list, + 1 */
  if (!first || !list || !last) {
    cx_free(first); cx_free(list); cx_free(last);
    return 0;
  }
  /* first[i + 1] counts i's users, then becomes where its list ends */
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      for (int i = 0; i < n; i++) first[i + 1] += first[i], last[i] = 0;
    for (int k = 0; k < n; k++) {
      const cx_instr *u = b->instrs[k];
      for (int j = 0; j < u->nops; j++) {
        intptr_t t = (intptr_t)u->ops[j]->aux;
        if (t < 1 || t > n || b->instrs[t - 1] != u->ops[j] || last[t - 1] == k + 1) continue;
        last[t - 1] = k + 1;
        if (pass) list[first[t - 1]++] = k;
        else first[t]++;
      }
    }
  }
  /* the fills moved each start to its list's end: shift back */
  for (int i = n; i > 0; i--) first[i] = first[i - 1];
  first[0] = 0;
  cx_free(last);
  *first_out = first;
  *list_out = list;
  return 1;
}

static int body_analyze(const cx_comp *b, body_info *bi) {
  int n = b->ninstrs;
  memset(bi, 0, sizeof *bi);
  bi->n = n;
  bi->emit = cx_calloc((size_t)n + 1, sizeof(int));
  bi->reused = cx_calloc((size_t)(n + 1) * 5, 1);
  int *src = cx_malloc(sizeof(int) * (size_t)(n + 1) * SRC_CAP);
  int *nsrc = cx_calloc((size_t)n + 1, sizeof(int));
  int *ufirst = NULL, *ulist = NULL;
  for (int i = 0; i < n; i++) b->instrs[i]->aux = (void *)(intptr_t)(i + 1);
  if (!bi->emit || !bi->reused || !src || !nsrc || !users_csr(b, &ufirst, &ulist)) {
    for (int i = 0; i < n; i++) b->instrs[i]->aux = NULL;
    cx_free(src); cx_free(nsrc); body_free(bi);
    return 0;
  }
  bi->ew = bi->reused + (n + 1);
  bi->to_reduce = bi->ew + (n + 1);
  bi->to_root = bi->to_reduce + (n + 1);
  bi->dot = bi->to_root + (n + 1);
  const cx_instr *root = b->root;
  const int ROOT_SRC = n; /* index source of the outputs */
  for (int i = n - 1; i >= 0; i--) {
    const cx_instr *x = b->instrs[i];
    int *s = src + (size_t)i * SRC_CAP, ns = 0, overflow = 0;
    int ew = 1, red = 0, toroot = 0, reused = 0, dot = 0;
#define ADD_SRC(v) do { int v_ = (v), dup_ = 0; for (int q_ = 0; q_ < ns; q_++) dup_ |= s[q_] == v_; \
    if (!dup_) { if (ns < SRC_CAP) s[ns++] = v_; else overflow = 1; } } while (0)
    if (x == root) { ADD_SRC(ROOT_SRC); toroot = 1; }
    for (int e = ufirst[i]; e < ufirst[i + 1]; e++) {
      int k = ulist[e];
      if (k <= i) continue; /* bodies are in order: a user comes after its operand */
      const cx_instr *u = b->instrs[k];
      if (u == root && u->op == CX_OP_TUPLE) { ADD_SRC(ROOT_SRC); toroot = 1; continue; }
      if (same_index_user(u, x)) {
        for (int q = 0; q < nsrc[k]; q++) ADD_SRC(src[(size_t)k * SRC_CAP + q]);
        overflow |= bi->emit[k] >= EMIT_HUGE;
        ew &= bi->ew[k];
        red |= bi->to_reduce[k];
        toroot |= bi->to_root[k];
      } else {
        ADD_SRC(k);
        if (fu_is_simple_reduce(u) && u->ops[0] == x && u->ops[1] != x) red = 1;
        else ew = 0;
        if (u->op == CX_OP_DOT) dot = 1;
      }
      reused |= op_reuses(u, x) || bi->reused[k];
    }
#undef ADD_SRC
    long emit = 0;
    for (int q = 0; q < ns && !overflow; q++) emit += s[q] == ROOT_SRC ? 1 : bi->emit[s[q]];
    bi->emit[i] = overflow || emit >= EMIT_HUGE ? EMIT_HUGE : (int)emit;
    nsrc[i] = ns;
    bi->reused[i] = reused || bi->emit[i] > 1;
    bi->ew[i] = ew;
    bi->to_reduce[i] = red;
    bi->to_root[i] = toroot;
    bi->dot[i] = dot;
  }
  for (int i = 0; i < n; i++) b->instrs[i]->aux = NULL;
  cx_free(src);
  cx_free(nsrc);
  cx_free(ufirst);
  cx_free(ulist);
  return 1;
}

static void use_of(const body_info *bi, int i, fu_param_use *u) {
  u->emissions = bi->emit[i];
  u->reused = bi->reused[i];
  u->elementwise = bi->ew[i];
  u->to_reduce = bi->to_reduce[i];
  u->to_root = bi->to_root[i];
  u->dot_operand = bi->dot[i];
}

/* u[p] for every parameter p < np of body, from one analysis. */
static int analyze_params(const cx_comp *body, int np, fu_param_use *u) {
  memset(u, 0, sizeof *u * (size_t)np);
  body_info bi;
  if (!body_analyze(body, &bi)) return 0;
  for (int i = 0; i < body->ninstrs; i++) {
    const cx_instr *x = body->instrs[i];
    if (x->op == CX_OP_PARAMETER && x->a.index >= 0 && x->a.index < np) use_of(&bi, i, &u[x->a.index]);
  }
  body_free(&bi);
  return 1;
}

int fu_analyze_param(const cx_comp *body, int p, fu_param_use *u) {
  memset(u, 0, sizeof *u);
  body_info bi;
  if (!body_analyze(body, &bi)) return 0;
  for (int i = 0; i < body->ninstrs; i++) {
    const cx_instr *x = body->instrs[i];
    if (x->op == CX_OP_PARAMETER && x->a.index == p) use_of(&bi, i, u);
  }
  body_free(&bi);
  return 1;
}

/* One value bound to several parameters: its uses add up, and it is read more than once. */
static void combine(fu_param_use *u, const fu_param_use *p) {
  u->emissions += p->emissions;
  u->reused = 1;
  u->elementwise &= p->elementwise;
  u->to_reduce |= p->to_reduce;
  u->to_root |= p->to_root;
  u->dot_operand |= p->dot_operand;
}

int fu_analyze_operand(const cx_instr *in, int i, fu_param_use *u) {
  memset(u, 0, sizeof *u);
  const cx_instr *x = in->ops[i];
  if (in->op != CX_OP_FUSION || in->ncalled != 1) {
    u->emissions = 1;
    u->reused = op_reuses(in, x);
    u->dot_operand = in->op == CX_OP_DOT;
    if (same_index_user(in, x)) {
      u->elementwise = u->to_root = 1;
    } else if (fu_is_simple_reduce(in) && in->ops[0] == x && in->ops[1] != x) {
      u->elementwise = u->to_reduce = 1;
    }
    return 1;
  }
  /* A fusion may take the same value as several operands: combine every parameter bound to it. */
  int first = 1;
  for (int j = 0; j < in->nops; j++) {
    if (in->ops[j] != x) continue;
    fu_param_use p;
    if (!fu_analyze_param(in->called[0], j, &p)) return 0;
    if (first) { *u = p; first = 0; continue; }
    combine(u, &p);
  }
  return 1;
}

int fu_analyze_operands(const cx_instr *f, fu_param_use *u) {
  int n = f->nops;
  if (!n) return 1;
  fu_param_use *p = cx_malloc(sizeof *p * (size_t)n);
  if (!p || !analyze_params(f->called[0], n, p)) {
    cx_free(p);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    int first = 1;
    for (int j = 0; j < n; j++) {
      if (f->ops[j] != f->ops[i]) continue;
      if (first) u[i] = p[j];
      else combine(&u[i], &p[j]);
      first = 0;
    }
  }
  cx_free(p);
  return 1;
}

int fu_max_emissions(const cx_instr *in) {
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return 1;
  body_info bi;
  if (!body_analyze(in->called[0], &bi)) return EMIT_HUGE;
  int mx = 1;
  for (int i = 0; i < bi.n; i++)
    if (bi.emit[i] > mx) mx = bi.emit[i];
  body_free(&bi);
  return mx;
}

/* ---- computations ---- */

static int is_control_call(cx_op op) { return op == CX_OP_WHILE || op == CX_OP_CONDITIONAL || op == CX_OP_CALL; }

cxla_status fu_control_comps(cx_module *m, cx_comp ***out, int *n) {
  *out = NULL;
  *n = 0;
  int nc = m->ncomps;
  char *flag = cx_calloc((size_t)nc + 1, 1); /* 1 control, 2 embedded somewhere */
  cx_comp **res = cx_malloc(sizeof *res * ((size_t)nc + 1));
  if (!flag || !res) { cx_free(flag); cx_free(res); return cx_oom(m->ctx); }
  for (int i = 0; i < nc; i++) m->comps[i]->aux = (void *)(intptr_t)(i + 1);
  /* Callees come before callers, so one backward sweep propagates from ENTRY downwards. */
  for (int i = nc - 1; i >= 0; i--) {
    cx_comp *c = m->comps[i];
    if (c == m->entry) flag[i] |= 1;
    for (int k = 0; k < c->ninstrs; k++) {
      cx_instr *in = c->instrs[k];
      for (int j = 0; j < in->ncalled; j++) {
        intptr_t ci = in->called[j] ? (intptr_t)in->called[j]->aux : 0;
        if (ci <= 0 || ci > nc) continue;
        if (!is_control_call(in->op)) flag[ci - 1] |= 2;
        else if (flag[i] & 1) flag[ci - 1] |= 1;
      }
    }
  }
  for (int i = 0; i < nc; i++) m->comps[i]->aux = NULL;
  int k = 0;
  for (int i = 0; i < nc; i++)
    if (flag[i] == 1) res[k++] = m->comps[i];
  cx_free(flag);
  *out = res;
  *n = k;
  return CXLA_OK;
}

/* Ops that run no kernel of their own: plumbing, aliases, and control flow (whose
 * computations are counted themselves). */
static const uint8_t k_no_kernel[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = 1, [CX_OP_CONSTANT] = 1, [CX_OP_TUPLE] = 1, [CX_OP_GET_TUPLE_ELEMENT] = 1,
  [CX_OP_BITCAST] = 1, [CX_OP_OPT_BARRIER] = 1, [CX_OP_AFTER_ALL] = 1, [CX_OP_ADD_DEPENDENCY] = 1,
  [CX_OP_DOMAIN] = 1, [CX_OP_WHILE] = 1, [CX_OP_CONDITIONAL] = 1, [CX_OP_CALL] = 1,
};

static int kernel_cost(const cx_instr *in) { return !k_no_kernel[in->op]; }

int cx_count_kernels(const cx_module *m) {
  if (!m || !m->entry) return -1;
  cx_comp **cs;
  int n;
  if (fu_control_comps((cx_module *)m, &cs, &n) != CXLA_OK) return -1;
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < cs[i]->ninstrs; j++) k += kernel_cost(cs[i]->instrs[j]);
  cx_free(cs);
  return k;
}
