/* apply.c — recognising the computations that can be applied without a call. */
#include "interp/apply.h"
#include "interp/index_util.h"

/* The parameter instruction of c with number `index`, or NULL. Scans the instructions rather
 * than trusting c->params, which only exists once cx_comp_index_params has run. */
static cx_instr *find_param(cx_comp *c, int64_t index) {
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op == CX_OP_PARAMETER && c->instrs[i]->a.index == index) return c->instrs[i];
  return NULL;
}

static int count_params(cx_comp *c) {
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) n += c->instrs[i]->op == CX_OP_PARAMETER;
  return n;
}

/* Is x parameter number a of c, a scalar of type t? */
static int is_scalar_param(cx_comp *c, cx_instr *x, cxla_type t, int nargs, int *a) {
  if (x->op != CX_OP_PARAMETER || x->parent != c || x->a.index < 0 || x->a.index >= nargs)
    return 0;
  if (x->shape.type != t || x->shape.rank != 0) return 0;
  *a = (int)x->a.index;
  return 1;
}

cxla_status cx_apply_init(cx_interp *st, cx_instr *in, cx_comp *c, int nargs,
                          const cxla_type *arg_types, int nouts, cx_apply *f) {
  f->comp = c;
  f->nargs = nargs;
  f->nouts = nouts;
  f->kind = CX_APPLY_CALL;
  if (!c || !c->root) return cx_hv_bad(st, in, "missing called computation");
  if (count_params(c) != nargs)
    return cx_hv_bad(st, in, "computation %s takes %d parameters, expected %d", c->name,
                     count_params(c), nargs);
  for (int i = 0; i < nargs; i++) {
    cx_instr *p = find_param(c, i);
    if (!p || p->shape.rank != 0 || p->shape.type != arg_types[i])
      return cx_hv_bad(st, in, "parameter %d of %s must be a %s scalar", i, c->name,
                       cxla_type_name(arg_types[i]) ? cxla_type_name(arg_types[i]) : "?");
  }
  cx_instr *r = c->root;
  if (nouts != 1 || r->nops != 2 || r->shape.rank != 0) return CXLA_OK;
  cxla_type t = r->ops[0]->shape.type;
  int a, b;
  if (!is_scalar_param(c, r->ops[0], t, nargs, &a) || !is_scalar_param(c, r->ops[1], t, nargs, &b))
    return CXLA_OK;
  /* commutative ops only, so callers may fold (accumulator, element) in either order (reduce
   * and reduce-window do) */
  if (cx_op_is_commutative(r->op) && cx_op_is_elementwise(r->op) && r->shape.type == t &&
      cx_op_valid_for_type(r->op, t)) {
    f->kind = CX_APPLY_BINARY;
    f->op = r->op;
  } else if (r->op == CX_OP_COMPARE && r->shape.type == CXLA_PRED) {
    f->kind = CX_APPLY_COMPARE;
    f->dir = r->a.dir;
    f->ct = r->a.cmp_type;
  } else {
    return CXLA_OK;
  }
  f->type = t;
  f->a = a;
  f->b = b;
  return CXLA_OK;
}
