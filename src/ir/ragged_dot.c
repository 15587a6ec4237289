/* ragged_dot.c — the mode and group_sizes prefix of a ragged-dot (ir/ragged_dot.h). */
#include "ir/ragged_dot.h"

int cx_ragged_dims_of(const cx_instr *in, int lhs_rank, cx_ragged_dims *r) {
  const cx_dot_dims *d = &in->a.dot;
  if (d->lhs_ragged.n != 1 || d->lhs_ragged.v[0] < 0 || d->lhs_ragged.v[0] >= lhs_rank) return 0;
  int64_t g = d->lhs_ragged.v[0];
  r->lhs_ragged = g;
  r->rhs_group = d->rhs_group.n == 1 ? d->rhs_group.v[0] : -1;
  r->mode = cx_ints_has(&d->lhs_batch, g) ? CX_RAGGED_BATCH
            : cx_ints_has(&d->lhs_contract, g) ? CX_RAGGED_CONTRACTING
                                          : CX_RAGGED_NONCONTRACTING;
  r->nprefix = 0;
  if (r->mode == CX_RAGGED_BATCH) {
    for (int i = 0; i < d->lhs_batch.n && d->lhs_batch.v[i] != g; i++) r->prefix[r->nprefix++] = d->lhs_batch.v[i];
    return 1;
  }
  for (int i = 0; i < d->lhs_batch.n; i++) r->prefix[r->nprefix++] = d->lhs_batch.v[i];
  if (r->mode == CX_RAGGED_CONTRACTING) {
    for (int i = 0; i < d->lhs_contract.n && d->lhs_contract.v[i] != g; i++)
      r->prefix[r->nprefix++] = d->lhs_contract.v[i];
    return 1;
  }
  for (int64_t i = 0; i < g; i++)
    if (!cx_ints_has(&d->lhs_batch, i) && !cx_ints_has(&d->lhs_contract, i)) r->prefix[r->nprefix++] = i;
  return 1;
}
