/* broadcast_order.c — a broadcast whose dimensions= are out of order (XLA allows
 * `broadcast(x), dimensions={3,0}`: operand dim 0 goes to result dim 3, dim 1 to dim 0) both
 * transposes and broadcasts. This pass splits it into a transpose of the operand and a
 * broadcast with increasing dimensions (XLA's BroadcastCanonicalizer), so that the fusion
 * passes and the emitter, which read a broadcast's dimensions as a row/column structure, only
 * ever see the canonical form. The interpreter evaluates either form directly. */
#include "ir/edit.h"
#include "passes/pass.h"

static int in_order(const cx_ints *d) {
  for (int i = 1; i < d->n; i++)
    if (d->v[i - 1] > d->v[i]) return 0;
  return 1;
}

static cxla_status canonicalize(cx_instr *b) {
  cx_module *m = b->parent->module;
  cx_instr *x = b->ops[0];
  int n = b->a.dims.n;
  int64_t perm[CXLA_MAX_RANK], sorted[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = 1; i < n; i++) /* operand dims by the result dim they go to (insertion sort) */
    for (int j = i; j > 0 && b->a.dims.v[perm[j - 1]] > b->a.dims.v[perm[j]]; j--) {
      int64_t t = perm[j];
      perm[j] = perm[j - 1], perm[j - 1] = t;
    }
  for (int j = 0; j < n; j++) sorted[j] = b->a.dims.v[perm[j]], dims[j] = x->shape.dims[perm[j]];
  cx_shape ts = cx_shape_array(x->shape.type, n, dims);
  cx_instr *t = cx_instr_add(b->parent, CX_OP_TRANSPOSE, &ts, 1, &x, b->loc);
  if (!t || !cx_ints_set(m, &t->a.dims, n, perm) || !cx_ints_set(m, &b->a.dims, n, sorted)) return cx_oom(m->ctx);
  b->ops[0] = t;
  return CXLA_OK;
}

static int out_of_order(const cx_instr *in) {
  return in->op == CX_OP_BROADCAST && in->nops == 1 && !in_order(&in->a.dims);
}

cxla_status cx_pass_broadcast_order(cx_module *m, int *changed) {
  *changed = 0;
  return cx_module_rewrite(m, "broadcast-order", out_of_order, canonicalize, changed);
}
