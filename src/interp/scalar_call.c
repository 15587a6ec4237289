/* scalar_call.c — cx_interp_call_scalar: reducers, comparators and scatter combiners run
 * millions of times, so computations made only of scalar elementwise ops, scalar constants,
 * tuples and get-tuple-element are evaluated on cx_scalar values in a stack array, with no
 * allocation (those four by k_steps, elementwise ops by their rules). Anything else falls back
 * to scalar literals and cx_interp_call.
 *
 * Thread safety: whether a computation is "simple" is decided while evaluating it, every
 * call, from the read-only IR; nothing is cached in the IR (executables run from many threads)
 * or in the interpreter state. The check is a few comparisons per instruction, which is small
 * next to the evaluation it guards. */
#include "interp/internal.h"

#define FAST_MAX 64 /* larger computations are not reducer-sized: use literals */

static int is_scalar(const cx_shape *s) { return s->type != CXLA_TUPLE && cx_type_is_array(s->type) && s->rank == 0; }

/* Position of x among instructions [0, i) of c (operands precede their users), or -1. */
static int find_before(const cx_comp *c, int i, const cx_instr *x) {
  for (int j = i - 1; j >= 0; j--)
    if (c->instrs[j] == x) return j;
  return -1;
}

/* One instruction of a scalar computation: sets v[i], or returns 0 when c needs the general
 * path. Operands precede their users, so each is among v[0..i). */
typedef int (*scalar_step)(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args,
                           cx_scalar *v);

static int parameter(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args, cx_scalar *v) {
  (void)c;
  if (!is_scalar(&in->shape) || in->a.index < 0 || in->a.index >= nargs) return 0;
  v[i] = args[in->a.index];
  return 1;
}

static int constant(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args, cx_scalar *v) {
  (void)c, (void)nargs, (void)args;
  const cxla_literal *l = in->a.literal;
  if (!l || !is_scalar(&l->shape) || l->shape.type != in->shape.type) return 0;
  v[i] = cx_scalar_load(l->shape.type, l->data, 0);
  return 1;
}

/* a tuple of scalars: its elements are read through its operands */
static int tuple(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args, cx_scalar *v) {
  (void)nargs, (void)args, (void)v;
  for (int k = 0; k < in->nops; k++)
    if (!is_scalar(&in->ops[k]->shape) || find_before(c, i, in->ops[k]) < 0) return 0;
  return 1;
}

static int get_tuple_element(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args,
                             cx_scalar *v) {
  (void)nargs, (void)args;
  const cx_instr *t = in->nops == 1 ? in->ops[0] : NULL;
  if (!t || t->op != CX_OP_TUPLE || in->a.index < 0 || in->a.index >= t->nops) return 0;
  int p = find_before(c, i, t->ops[in->a.index]);
  if (p < 0 || find_before(c, i, t) < 0) return 0;
  v[i] = v[p];
  return 1;
}

/* An elementwise op on scalars whose operand types are the ones its rule reads (or the value
 * representation would be misread). */
static int elementwise(const cx_comp *c, int i, const cx_instr *in, int nargs, const cx_scalar *args,
                       cx_scalar *v) {
  (void)nargs, (void)args;
  const cx_ew_rule *r = cx_ew_rule_of(in->op);
  cx_scalar a[3];
  int ar = cx_op_arity(in->op);
  if (!r || ar < 1 || ar > 3 || in->nops != ar || !is_scalar(&in->shape)) return 0;
  for (int k = 0; k < ar; k++)
    if (!is_scalar(&in->ops[k]->shape)) return 0;
  if (!cx_ew_types_ok(r, in)) return 0;
  for (int k = 0; k < ar; k++) {
    int p = find_before(c, i, in->ops[k]);
    if (p < 0) return 0;
    a[k] = v[p];
  }
  v[i] = cx_ew_apply(r, in, a);
  return 1;
}

static const scalar_step k_steps[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = parameter,
  [CX_OP_CONSTANT] = constant,
  [CX_OP_TUPLE] = tuple,
  [CX_OP_GET_TUPLE_ELEMENT] = get_tuple_element,
};

/* Evaluates c on scalars. Returns 1 with outs filled, or 0 if c needs the general path. */
static int fast_eval(const cx_comp *c, int nargs, const cx_scalar *args, int nouts, cx_scalar *outs) {
  int n = c->ninstrs, root = -1;
  cx_scalar v[FAST_MAX];
  if (n > FAST_MAX) return 0;
  for (int i = 0; i < n; i++) {
    const cx_instr *in = c->instrs[i];
    if (in == c->root) root = i;
    scalar_step step = k_steps[in->op] ? k_steps[in->op] : elementwise;
    if (!step(c, i, in, nargs, args, v)) return 0;
  }
  if (root < 0) return 0;
  const cx_instr *r = c->root;
  if (r->op == CX_OP_TUPLE) {
    if (r->nops != nouts) return 0;
    for (int k = 0; k < nouts; k++) outs[k] = v[find_before(c, root, r->ops[k])];
    return 1;
  }
  if (nouts != 1 || !is_scalar(&r->shape)) return 0;
  outs[0] = v[root];
  return 1;
}

/* The general path: scalar literals in, cx_interp_call, scalars out. */
static cxla_status slow_call(cx_interp *st, cx_comp *c, int nargs, const cx_scalar *args, int nouts,
                             cx_scalar *outs) {
  cxla_literal **lits = cx_calloc((size_t)(nargs > 0 ? nargs : 1), sizeof *lits), *res = NULL;
  cxla_status s = CXLA_OK;
  if (!lits) return cx_oom(st->ctx);
  for (int k = 0; k < nargs && s == CXLA_OK; k++) {
    const cx_instr *p = NULL;
    for (int i = 0; i < c->ninstrs && !p; i++)
      if (c->instrs[i]->op == CX_OP_PARAMETER && c->instrs[i]->a.index == k) p = c->instrs[i];
    if (!p || !is_scalar(&p->shape)) {
      s = cx_error(st->ctx, CXLA_ERR_VERIFY, "computation %s: parameter %d must be a scalar", c->name, k);
      break;
    }
    cx_shape sh = cx_shape_scalar(p->shape.type);
    if (!(lits[k] = cx_literal_new(&sh))) s = cx_oom(st->ctx);
    else cx_scalar_store(sh.type, lits[k]->data, 0, args[k]);
  }
  if (s == CXLA_OK) s = cx_interp_call(st, c, nargs, lits, &res);
  if (s == CXLA_OK) {
    int tuple = res->shape.type == CXLA_TUPLE;
    int ok = tuple ? res->nelems == nouts : nouts == 1;
    for (int k = 0; ok && k < nouts; k++) {
      const cxla_literal *e = tuple ? res->elems[k] : res;
      ok = e && is_scalar(&e->shape);
      if (ok) outs[k] = cx_scalar_load(e->shape.type, e->data, 0);
    }
    if (!ok)
      s = cx_error(st->ctx, CXLA_ERR_VERIFY, "computation %s must return %d scalar%s", c->name, nouts,
                   nouts == 1 ? "" : "s");
  }
  cxla_literal_destroy(res);
  for (int k = 0; k < nargs; k++) cxla_literal_destroy(lits[k]);
  cx_free(lits);
  return s;
}

cxla_status cx_interp_call_scalar(cx_interp *st, cx_comp *c, int nargs, const cx_scalar *args,
                                  int nouts, cx_scalar *outs) {
  if (!c || !c->root) return cx_error(st->ctx, CXLA_ERR_INTERNAL, "call of a computation without a root");
  if (fast_eval(c, nargs, args, nouts, outs)) return CXLA_OK;
  return slow_call(st, c, nargs, args, nouts, outs);
}
