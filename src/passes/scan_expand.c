/* scan_expand.c — `scan` becomes the while loop it stands for (XLA's ScanExpander), so compiled
 * backends run it as a loop of compiled code instead of calling the interpreter; the
 * interpreter evaluates `scan` itself (interp/scan.c), so each checks the other.
 *
 *   scan(x_0..x_{I-1}, c_0..c_{C-1}), dimensions={d}, to_apply=f, N steps along d
 *   -> state (k, x..., c..., y...), y_o = zeros of output o's stacked shape;
 *      while k < N: j = k (N-1-k with is_reverse);
 *        r = f(reshape(dynamic-slice(x_i, j along d)) ..., c...);
 *        y_o = dynamic-update-slice(y_o, reshape(r_o), j along d); c = r's carries; k = k + 1
 *   -> (y..., c...), one value unframed when single (ir/infer_scan.c).
 * f is called with `call`, which the inline pass then flattens into the loop body. Runs after
 * the layout pass (no layouts left) and before inlining. */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"

typedef struct sx {
  cx_module *m;
  cx_loc loc;
  int oom;
} sx;

static cx_instr *add(sx *b, cx_comp *c, cx_op op, const cx_shape *s, int nops, cx_instr *const *ops) {
  cx_instr *in = b->oom ? NULL : cx_instr_add(c, op, s, nops, ops, b->loc);
  if (!in) b->oom = 1;
  return in;
}

/* A scalar constant of type t (0 if v is 0: the literal starts zeroed). */
static cx_instr *scalar(sx *b, cx_comp *c, cxla_type t, int64_t v) {
  cx_shape s = cx_shape_scalar(t);
  cxla_literal *lit = b->oom ? NULL : cx_literal_new(&s);
  if (!lit || !cx_module_own_literal(b->m, lit)) return b->oom = 1, NULL;
  if (v) cx_store_i64(t, lit->data, 0, v);
  cx_instr *k = add(b, c, CX_OP_CONSTANT, &s, 0, NULL);
  if (k) k->a.literal = lit;
  return k;
}

static cx_instr *gte(sx *b, cx_comp *c, cx_instr *t, int i) {
  if (!t) return b->oom = 1, NULL;
  cx_instr *g = add(b, c, CX_OP_GET_TUPLE_ELEMENT, &t->shape.tuple[i], 1, &t);
  if (g) g->a.index = i;
  return g;
}

static cx_instr *tuple(sx *b, cx_comp *c, int n, cx_instr **v) {
  cx_shape *el = cx_calloc((size_t)(n ? n : 1), sizeof *el);
  if (!el) return b->oom = 1, NULL;
  for (int i = 0; i < n && !b->oom; i++)
    if (!v[i]) b->oom = 1;
    else el[i] = v[i]->shape;
  cx_shape s = {.type = CXLA_TUPLE, .ntuple = n, .tuple = el};
  cx_instr *t = b->oom ? NULL : add(b, c, CX_OP_TUPLE, &s, n, v);
  cx_free(el);
  return t;
}

/* x's shape with dimension d set to n (n = 0: removed). */
static cx_shape with_dim(const cx_shape *x, int d, int64_t n) {
  int64_t dims[CXLA_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (i != d) dims[r++] = x->dims[i];
    else if (n) dims[r++] = n;
  return cx_shape_array(x->type, r, dims);
}

/* The start indices of a slice at j along d of an array of rank `rank`. */
static void starts(sx *b, cx_comp *c, cx_instr *j, int d, int rank, cx_instr **out) {
  cx_instr *zero = scalar(b, c, CXLA_S32, 0);
  for (int i = 0; i < rank; i++) out[i] = i == d ? j : zero;
}

/* x's slice at j along d, with d removed. */
static cx_instr *slice_at(sx *b, cx_comp *c, cx_instr *x, cx_instr *j, int d) {
  cx_instr *ops[CXLA_MAX_RANK + 1] = {x};
  starts(b, c, j, d, x->shape.rank, ops + 1);
  cx_shape one = with_dim(&x->shape, d, 1), none = with_dim(&x->shape, d, 0);
  cx_instr *s = b->oom ? NULL : add(b, c, CX_OP_DYNAMIC_SLICE, &one, x->shape.rank + 1, ops);
  if (s && !cx_ints_set(b->m, &s->a.dims, one.rank, one.dims)) b->oom = 1;
  return s ? add(b, c, CX_OP_RESHAPE, &none, 1, &s) : NULL;
}

/* y with v (y's shape without d) written at j along d. */
static cx_instr *update_at(sx *b, cx_comp *c, cx_instr *y, cx_instr *v, cx_instr *j, int d) {
  cx_shape one = with_dim(&y->shape, d, 1);
  cx_instr *ops[CXLA_MAX_RANK + 2] = {y, v ? add(b, c, CX_OP_RESHAPE, &one, 1, &v) : NULL};
  starts(b, c, j, d, y->shape.rank, ops + 2);
  return b->oom ? NULL : add(b, c, CX_OP_DYNAMIC_UPDATE_SLICE, &y->shape, y->shape.rank + 2, ops);
}

/* A computation of one parameter of shape s, placed before `before` in m->comps. */
static cx_comp *loop_comp(sx *b, const char *prefix, const cx_shape *s, cx_comp *before, cx_instr **param) {
  const char *name = b->oom ? NULL : cx_module_unique_name(b->m, prefix);
  cx_comp *c = name ? cx_comp_new(b->m, name) : NULL;
  if (!c || !cx_module_add_comp(b->m, c)) return b->oom = 1, NULL;
  int at = cx_module_comp_index(b->m, before);
  memmove(b->m->comps + at + 1, b->m->comps + at, sizeof *b->m->comps * (size_t)(b->m->ncomps - 1 - at));
  b->m->comps[at] = c;
  c->loc = b->loc;
  *param = add(b, c, CX_OP_PARAMETER, s, 0, NULL);
  if (*param) (*param)->a.index = 0;
  if (!*param || !cx_comp_index_params(c)) b->oom = 1;
  return c;
}

static cxla_status expand(cx_instr *scan) {
  cx_comp *c = scan->parent, *f = scan->called[0];
  sx b = {.m = c->module, .loc = scan->loc};
  int nc = (int)scan->a.num_carries, ni = scan->nops - nc, d = (int)scan->a.dims.v[0];
  const cx_shape *r = &f->root->shape;
  int nres = r->type == CXLA_TUPLE ? r->ntuple : 1, no = nres - nc, n = 1 + ni + nc + no;
  int64_t steps = scan->ops[0]->shape.dims[d];
  cx_instr **v = cx_calloc((size_t)n, sizeof *v);
  if (!v) return cx_oom(b.m->ctx);
  /* the loop's initial state: k = 0, the inputs, the carries' inits, zeroed outputs */
  v[0] = scalar(&b, c, CXLA_S32, 0);
  for (int i = 0; i < ni + nc; i++) v[1 + i] = scan->ops[i];
  for (int o = 0; o < no; o++) {
    const cx_shape *os = scan->shape.type == CXLA_TUPLE ? &scan->shape.tuple[o] : &scan->shape;
    cx_instr *z = scalar(&b, c, os->type, 0);
    v[1 + ni + nc + o] = z ? add(&b, c, CX_OP_BROADCAST, os, 1, &z) : NULL;
  }
  cx_instr *init = tuple(&b, c, n, v);
  cx_shape state = init ? init->shape : cx_shape_scalar(CXLA_S32);

  /* condition: k < N */
  cx_instr *p;
  cx_comp *cond = loop_comp(&b, "scan_cond", &state, c, &p);
  if (cond) {
    cx_shape pred = cx_shape_scalar(CXLA_PRED);
    cx_instr *cmp[2] = {gte(&b, cond, p, 0), scalar(&b, cond, CXLA_S32, steps)};
    cond->root = b.oom ? NULL : add(&b, cond, CX_OP_COMPARE, &pred, 2, cmp);
    if (cond->root) cond->root->a.dir = CXLA_LT;
  }

  /* body: one step of f */
  cx_comp *body = loop_comp(&b, "scan_body", &state, c, &p);
  if (body) {
    cx_instr *k = gte(&b, body, p, 0), *j = k;
    if (scan->a.is_reverse) {
      cx_instr *sub[2] = {scalar(&b, body, CXLA_S32, steps - 1), k};
      j = b.oom ? NULL : add(&b, body, CX_OP_SUBTRACT, &k->shape, 2, sub);
    }
    cx_instr **args = cx_calloc((size_t)(ni + nc + 1), sizeof *args), **next = cx_calloc((size_t)n, sizeof *next);
    if (!args || !next) b.oom = 1;
    for (int i = 0; i < ni + nc && !b.oom; i++) {
      next[1 + i] = gte(&b, body, p, 1 + i);
      args[i] = i < ni ? slice_at(&b, body, next[1 + i], j, d) : next[1 + i];
    }
    cx_instr *call = b.oom ? NULL : add(&b, body, CX_OP_CALL, r, ni + nc, args);
    if (call && !cx_instr_set_called(call, 1, &f)) b.oom = 1;
    for (int e = 0; e < nres && !b.oom; e++) {
      cx_instr *val = nres == 1 ? call : gte(&b, body, call, e);
      if (e < no) next[1 + ni + nc + e] = update_at(&b, body, gte(&b, body, p, 1 + ni + nc + e), val, j, d);
      else next[1 + ni + e - no] = val;
    }
    cx_instr *one[2] = {k, scalar(&b, body, CXLA_S32, 1)};
    next[0] = b.oom ? NULL : add(&b, body, CX_OP_ADD, &k->shape, 2, one);
    if (!b.oom) body->root = tuple(&b, body, n, next);
    cx_free(args);
    cx_free(next);
  }

  /* the loop, and the scan's value from its final state */
  cx_instr *w = b.oom ? NULL : add(&b, c, CX_OP_WHILE, &state, 1, &init);
  cx_comp *cb[2] = {cond, body};
  if (w && !cx_instr_set_called(w, 2, cb)) b.oom = 1;
  for (int e = 0; e < nres && !b.oom; e++) v[e] = gte(&b, c, w, e < no ? 1 + ni + nc + e : 1 + ni + e - no);
  cx_instr *result = b.oom ? NULL : nres == 1 ? v[0] : tuple(&b, c, nres, v);
  cx_free(v);
  if (b.oom || !result) return cx_oom(b.m->ctx);
  cx_comp_replace_uses(c, scan, result);
  return CXLA_OK;
}

static int is_scan(const cx_instr *in) { return in->op == CX_OP_SCAN && in->ncalled == 1 && in->a.dims.n == 1; }

/* The scans are collected first: expanding one adds computations in front of its own. */
cxla_status cx_pass_scan_expand(cx_module *m, int *changed) {
  int n = 0, k = 0;
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) n += is_scan(m->comps[i]->instrs[j]);
  if (!n) return CXLA_OK;
  cx_instr **scans = cx_calloc((size_t)n, sizeof *scans);
  if (!scans) return cx_oom(m->ctx);
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (is_scan(m->comps[i]->instrs[j])) scans[k++] = m->comps[i]->instrs[j];
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) s = expand(scans[i]);
  for (int i = 0; i < n && s == CXLA_OK; i++)
    if (!i || scans[i]->parent != scans[i - 1]->parent) s = cx_comp_resort(scans[i]->parent, "scan-expand");
  cx_free(scans);
  *changed = 1;
  return s;
}
