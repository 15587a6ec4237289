/* simplify_reduce.c — simplifier rules for reduce and map.
 *   reduce whose reduced dimensions all have size 1: each result element is
 *     to_apply(init, x) (one fold step, as XLA's evaluator defines it) — NOT x itself, since
 *     e.g. 0 + -0 is +0. It becomes to_apply's binary op on broadcast(init) and reshape(x)
 *     (or a map of to_apply), which the elementwise rules then simplify where that is exact.
 *   reduce of an empty operand: broadcast(init).
 *   map whose computation is one elementwise op on its parameters in order: that op. */
#include "ir/clone.h"
#include "passes/simplify.h"

/* The op of a computation `root = op(param a, param b)`, with *swapped set when a is 1. */
static int simple_binary(const cx_comp *f, int *swapped) {
  const cx_instr *r = f ? f->root : NULL;
  if (!r || r->nops != 2 || r->ncalled || cx_op_class_of(r->op) != CX_CLASS_ELEMENTWISE) return -1;
  if (r->op == CX_OP_COMPARE) return -1; /* its result type differs; other attrs-free ops only */
  const cx_instr *a = r->ops[0], *b = r->ops[1];
  if (a->op != CX_OP_PARAMETER || b->op != CX_OP_PARAMETER || a->a.index == b->a.index) return -1;
  *swapped = a->a.index == 1;
  return r->op;
}

cxla_status cx_simp_reduce(cx_instr *in, cx_instr **out) {
  if (in->nops != 2 || in->ncalled != 1 || !cx_type_is_array(in->shape.type)) return CXLA_OK;
  cx_instr *x = in->ops[0], *init = in->ops[1];
  int64_t nx = cx_shape_elems(&x->shape), nr = cx_shape_elems(&in->shape);
  if (init->shape.rank != 0 || nr <= 0) return CXLA_OK;
  if (nx == 0) { /* nothing is folded in: every result element is init */
    *out = cx_simp_new(in, CX_OP_BROADCAST, &in->shape, 1, &init);
    return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  }
  cxla_type t = in->shape.type;
  if (nx != nr || x->shape.type != t || init->shape.type != t) return CXLA_OK;
  cx_comp *f = in->called[0];
  if (!f || f->nparams != 2) return CXLA_OK;
  int swapped = 0, op = simple_binary(f, &swapped);
  if (op >= 0 && f->root->shape.type != t) op = -1;
  /* build only once the rewrite is certain (a sweep never leaves unused instructions) */
  cx_instr *xr = cx_simp_reshape(in, x, &in->shape);
  cx_instr *bi = xr ? cx_simp_new(in, CX_OP_BROADCAST, &in->shape, 1, &init) : NULL;
  if (!bi) return CXLA_ERR_OUT_OF_MEMORY;
  cx_instr *ops[2] = {swapped ? xr : bi, swapped ? bi : xr};
  if (op >= 0) {
    *out = cx_simp_new(in, (cx_op)op, &in->shape, 2, ops);
    return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  }
  cx_instr *r = cx_simp_new(in, CX_OP_MAP, &in->shape, 2, ops); /* map(init, x): to_apply(acc, elem) */
  int64_t dims[CXLA_MAX_RANK];
  for (int i = 0; i < in->shape.rank; i++) dims[i] = i;
  if (!r || !cx_ints_set(in->parent->module, &r->a.dims, in->shape.rank, dims) || !cx_instr_set_called(r, 1, &f))
    return CXLA_ERR_OUT_OF_MEMORY;
  *out = r;
  return CXLA_OK;
}

cxla_status cx_simp_map(cx_instr *in, cx_instr **out) {
  cx_comp *f = in->ncalled == 1 ? in->called[0] : NULL;
  cx_instr *r = f ? f->root : NULL;
  if (!r || f->nparams != in->nops || !cx_type_is_array(in->shape.type)) return CXLA_OK;
  if (r->op == CX_OP_PARAMETER) { /* map(x0, x1, ...) returning parameter k is x_k */
    cx_instr *x = r->a.index >= 0 && r->a.index < in->nops ? in->ops[r->a.index] : NULL;
    if (x && cx_shape_equal(&x->shape, &in->shape)) *out = x;
    return CXLA_OK;
  }
  if (cx_op_class_of(r->op) != CX_CLASS_ELEMENTWISE || r->nops != in->nops || r->ncalled) return CXLA_OK;
  for (int j = 0; j < r->nops; j++)
    if (r->ops[j]->op != CX_OP_PARAMETER || r->ops[j]->a.index != j) return CXLA_OK;
  if (r->shape.type != in->shape.type) return CXLA_OK;
  cx_module *m = in->parent->module;
  cx_instr *e = cx_instr_clone(in->parent, r, in->ops); /* keeps r's attributes (compare dir, ...) */
  const char *name = e ? cx_module_unique_name(m, cx_op_name(r->op)) : NULL;
  if (!name || !cx_shape_copy(&e->shape, &in->shape, &m->arena)) return CXLA_ERR_OUT_OF_MEMORY;
  e->name = name;
  e->loc = in->loc;
  *out = e;
  return CXLA_OK;
}
