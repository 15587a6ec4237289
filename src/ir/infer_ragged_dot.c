/* infer_ragged_dot.c — ragged-dot's shape rule, as XLA's InferRaggedDotOpShape has it: the dot
 * rules for the batch and contracting dims, exactly one lhs ragged dimension, group_sizes of
 * shape [G] or [prefix..., G] (ir/ragged_dot.h), one rhs group dimension of size G (neither batch
 * nor contracting) when the ragged dimension is non-contracting and none otherwise. The result is
 * the dot's without the rhs group dimension, with G in front when the ragged dimension is
 * contracting. */
#include <stdio.h>
#include "ir/infer.h"
#include "ir/ragged_dot.h"

cxla_status cx_infer_ragged_dot(cx_infer *ic, cx_shape *out) {
  const cx_dot_dims *d = &ic->in->a.dot;
  CX_TRY(cx_vneed_array(ic, 0, "lhs"));
  CX_TRY(cx_vneed_array(ic, 1, "rhs"));
  CX_TRY(cx_vneed_array(ic, 2, "group_sizes"));
  const cx_shape *l = cx_vop(ic, 0), *r = cx_vop(ic, 1), *gs = cx_vop(ic, 2);
  if (!cx_type_is_int(gs->type) || gs->rank < 1)
    return cx_vfail(ic, "group_sizes must be an integer array of rank 1 or more, got %s", cx_vshape(ic, gs));
  if (d->lhs_ragged.n != 1)
    return cx_vfail(ic, "lhs_ragged_dims %s: there must be exactly one ragged dimension in the lhs",
                    cx_vints(ic, &d->lhs_ragged));
  CX_TRY(cx_vdims(ic, &d->lhs_ragged, l->rank, "lhs_ragged_dims", NULL));
  char used[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, &d->rhs_group, r->rank, "rhs_group_dims", NULL));
  CX_TRY(cx_vdims(ic, &d->rhs_batch, r->rank, "rhs_batch_dims", used));
  CX_TRY(cx_vdims(ic, &d->rhs_contract, r->rank, "rhs_contracting_dims", used));
  for (int i = 0; i < d->rhs_group.n; i++)
    if (used[d->rhs_group.v[i]])
      return cx_vfail(ic, "rhs_group_dims %s: rhs group dimension cannot be a batch or contracting dimension",
                      cx_vints(ic, &d->rhs_group));
  cx_shape dot;
  CX_TRY(cx_infer_dot(ic, &dot)); /* batch and contracting dims, the result type */
  cx_ragged_dims rd;
  cx_ragged_dims_of(ic->in, l->rank, &rd);
  int64_t ng = gs->dims[gs->rank - 1];
  if (gs->rank != 1) {
    int ok = gs->rank == rd.nprefix + 1;
    for (int i = 0; ok && i < rd.nprefix; i++) ok = gs->dims[i] == l->dims[rd.prefix[i]];
    if (!ok) {
      char want[160];
      int n = 0;
      for (int i = 0; i < rd.nprefix && n < (int)sizeof want - 24; i++)
        n += snprintf(want + n, sizeof want - (size_t)n, "%lld,", (long long)l->dims[rd.prefix[i]]);
      snprintf(want + n, sizeof want - (size_t)n, "%lld", (long long)ng);
      return cx_vfail(ic, "group_sizes is expected to have shape [%s] (or [%lld]), got %s", want, (long long)ng,
                      cx_vshape(ic, gs));
    }
  }
  if (rd.mode != CX_RAGGED_NONCONTRACTING && d->rhs_group.n != 0)
    return cx_vfail(ic, "there must be zero group dimensions in the rhs when the ragged dimension is %s",
                    rd.mode == CX_RAGGED_BATCH ? "batch" : "contracting");
  if (rd.mode == CX_RAGGED_NONCONTRACTING) {
    if (d->rhs_group.n != 1)
      return cx_vfail(ic, "there must be exactly one group dimension in the rhs when the lhs ragged dimension is "
                      "non-contracting, got rhs_group_dims=%s", cx_vints(ic, &d->rhs_group));
    if (r->dims[rd.rhs_group] != ng)
      return cx_vfail(ic, "rhs group dimension %lld is expected to have size %lld (the number of groups), got %lld",
                      (long long)rd.rhs_group, (long long)ng, (long long)r->dims[rd.rhs_group]);
  }
  cx_vset_array(out, dot.type, 0, NULL);
  if (rd.mode == CX_RAGGED_CONTRACTING) {
    if (dot.rank + 1 > CXLA_MAX_RANK) return cx_vfail(ic, "result would have rank %d (at most %d)", dot.rank + 1, CXLA_MAX_RANK);
    out->dims[out->rank++] = ng;
  }
  /* the dot's result: batch, lhs free, rhs free; the rhs group dimension is one of the last */
  int nfree_l = l->rank - d->lhs_batch.n - d->lhs_contract.n, k = d->lhs_batch.n + nfree_l;
  for (int i = 0; i < k; i++) out->dims[out->rank++] = dot.dims[i];
  for (int i = 0; i < r->rank; i++) {
    if (used[i]) continue;
    if (i != rd.rhs_group) out->dims[out->rank++] = dot.dims[k];
    k++;
  }
  return CXLA_OK;
}
