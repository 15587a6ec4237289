/* value_sign.c — what the emitter can prove about the sign of a value from the HLO that makes
 * it, so that a math function can skip the part of its range the value never reaches. Today one
 * fact: x − broadcast(reduce_max(x)) (softmax, log-softmax, the attention's scores) is ≤ 0 or
 * NaN, whatever x holds: the maximum of a set is ≥ each member, the rounded difference of a ≤ b
 * is ≤ 0, and the infinite cases give −inf or NaN. The proof is purely structural (the same
 * instruction x on both sides, the broadcast putting each row's maximum back on that row), so
 * it holds in any fusion, whichever loop reads it. */
#include "codegen/emit.h"

/* The reduce's computation is maximum(p0, p1) (either order) on one array operand. */
int cx_emit_is_max_reduce(const cx_instr *r) {
  if (r->op != CX_OP_REDUCE || r->nops != 2 || r->ncalled != 1) return 0;
  const cx_instr *x = cx_comp_binary_of_params(r->called[0]);
  return x && x->op == CX_OP_MAXIMUM;
}

/* b is broadcast(r) (r a reduce) with r's kept dims mapped back to where they came from in r's operand, so
 * b at any index reads the maximum over the set that holds the operand's element there. */
int cx_emit_broadcasts_back(const cx_instr *b, const cx_instr *r) {
  const cx_instr *x = r->ops[0];
  if (b->op != CX_OP_BROADCAST || b->nops != 1 || b->ops[0] != r) return 0;
  if (!cx_shape_same_dims(&b->shape, &x->shape) || b->a.dims.n != r->shape.rank) return 0;
  int reduced[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < r->a.dims.n; i++) {
    int64_t d = r->a.dims.v[i];
    if (d < 0 || d >= x->shape.rank) return 0;
    reduced[d] = 1;
  }
  int k = 0;
  for (int d = 0; d < x->shape.rank; d++) {
    if (reduced[d]) continue;
    if (k >= b->a.dims.n || b->a.dims.v[k] != d) return 0;
    k++;
  }
  return k == b->a.dims.n;
}

int cx_emit_nonpositive(const cx_instr *v) {
  if (!v || v->op != CX_OP_SUBTRACT || v->nops != 2) return 0;
  const cx_instr *x = v->ops[0], *b = v->ops[1];
  if (b->op != CX_OP_BROADCAST || b->nops != 1) return 0;
  const cx_instr *r = b->ops[0];
  return cx_emit_is_max_reduce(r) && r->ops[0] == x && cx_emit_broadcasts_back(b, r);
}
