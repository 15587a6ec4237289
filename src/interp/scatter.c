/* scatter.c — variadic XLA scatter with batching dims (StableHLO's index definition).
 *
 * The result starts as a copy of the operands. The update dims not in update_window_dims are
 * the scatter dims; they index scatter_indices with index_vector_dim left out
 * (index_vector_dim == rank(indices): implicit trailing size-1 dim). The index vector read
 * there sets the start of operand dim scatter_dims_to_operand_dims[k]; operand dims in
 * input_batching_dims start at the scatter coordinate of the matching
 * scatter_indices_batching_dims entry. Window dims of the update, in order, add to the
 * operand dims that are neither inserted nor batching, in increasing order.
 *
 * Order: scatter indices in row-major order, and for each the window in row-major order (the
 * loops of XLA's evaluator); each update applies to_apply(current..., update...).
 * Out of bounds: if any part of an update's window would fall outside the operand, the whole
 * window is skipped — not clamped (XLA's evaluator and CPU runtime rule). */
#include <string.h>
#include "interp/apply.h"
#include "interp/index_util.h"

#define SC_MAX_N 64

typedef struct scatter_plan {
  int n, orank, nsd, nwd;
  int64_t nidx;                      /* index vector length */
  int64_t ivec_stride;               /* indices stride along the vector dim (0 if implicit) */
  int64_t sdims[CXLA_MAX_RANK], wdims[CXLA_MAX_RANK];
  int64_t idx_stride[CXLA_MAX_RANK]; /* per scatter dim: stride into the indices */
  int64_t upd_sstride[CXLA_MAX_RANK], upd_wstride[CXLA_MAX_RANK];
  int64_t op_wstride[CXLA_MAX_RANK]; /* per window dim: stride of its operand dim */
  int64_t start_map[CXLA_MAX_RANK];
  int batching_from[CXLA_MAX_RANK];  /* per operand dim: scatter dim of its batch coord, or -1 */
  int64_t wsize[CXLA_MAX_RANK];      /* per operand dim: extent of the update window */
  int64_t ostride[CXLA_MAX_RANK];
  const int64_t *odims;
} scatter_plan;

static cxla_status plan_scatter(cx_interp *st, cx_instr *in, const cx_shape *os,
                                const cx_shape *is, const cx_shape *us, scatter_plan *p) {
  const cx_scatter_dims *sd = &in->a.scatter;
  int64_t ivd = sd->index_vector_dim;
  p->orank = os->rank;
  p->odims = os->dims;
  if (ivd < 0 || ivd > is->rank) return cx_hv_bad(st, in, "index_vector_dim out of range");
  p->nidx = ivd < is->rank ? is->dims[ivd] : 1;
  if (sd->scatter_dims_to_operand_dims.n != p->nidx)
    return cx_hv_bad(st, in, "scatter_dims_to_operand_dims has %d entries, the index vector %lld",
                     sd->scatter_dims_to_operand_dims.n, (long long)p->nidx);
  int seen[CXLA_MAX_RANK] = {0}, smap[CXLA_MAX_RANK] = {0}, isw[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_hv_check_dims(st, in, &sd->inserted_window_dims, os->rank, seen, "inserted_window_dims"));
  CX_TRY(cx_hv_check_dims(st, in, &sd->input_batching_dims, os->rank, seen, "input_batching_dims"));
  CX_TRY(cx_hv_check_dims(st, in, &sd->scatter_dims_to_operand_dims, os->rank, smap,
                          "scatter_dims_to_operand_dims"));
  CX_TRY(cx_hv_check_dims(st, in, &sd->update_window_dims, us->rank, isw, "update_window_dims"));
  p->nwd = sd->update_window_dims.n;
  p->nsd = us->rank - p->nwd;
  if (p->nwd != os->rank - sd->inserted_window_dims.n - sd->input_batching_dims.n)
    return cx_hv_bad(st, in, "update_window_dims must list %d dims",
                     os->rank - sd->inserted_window_dims.n - sd->input_batching_dims.n);
  if (p->nsd != is->rank - (ivd < is->rank ? 1 : 0))
    return cx_hv_bad(st, in, "updates have %d scatter dims, the indices %d", p->nsd,
                     is->rank - (ivd < is->rank ? 1 : 0));
  for (int k = 0; k < sd->scatter_dims_to_operand_dims.n; k++)
    p->start_map[k] = sd->scatter_dims_to_operand_dims.v[k];

  int64_t ist[CXLA_MAX_RANK], ust[CXLA_MAX_RANK];
  cx_shape_strides(is, ist);
  cx_shape_strides(us, ust);
  cx_shape_strides(os, p->ostride);
  p->ivec_stride = ivd < is->rank ? ist[ivd] : 0;
  int j = 0, w = 0, od = 0;
  for (int d = 0; d < os->rank; d++) p->wsize[d] = 1;
  for (int u = 0; u < us->rank; u++) {
    if (isw[u]) {
      while (seen[od]) od++;
      p->wdims[w] = us->dims[u];
      p->upd_wstride[w] = ust[u];
      p->op_wstride[w] = p->ostride[od];
      p->wsize[od] = us->dims[u];
      w++, od++;
    } else {
      int idim = j < ivd ? j : j + 1;
      if (is->dims[idim] != us->dims[u])
        return cx_hv_bad(st, in, "update dim %d has size %lld, indices dim %d has %lld", u,
                         (long long)us->dims[u], idim, (long long)is->dims[idim]);
      p->sdims[j] = us->dims[u];
      p->upd_sstride[j] = ust[u];
      p->idx_stride[j] = ist[idim];
      j++;
    }
  }
  if (sd->input_batching_dims.n != sd->scatter_indices_batching_dims.n)
    return cx_hv_bad(st, in, "input_batching_dims and scatter_indices_batching_dims differ in length");
  int iseen[CXLA_MAX_RANK + 1] = {0};
  if (ivd < is->rank) iseen[ivd] = 1;
  CX_TRY(cx_hv_check_dims(st, in, &sd->scatter_indices_batching_dims, is->rank, iseen,
                          "scatter_indices_batching_dims"));
  for (int d = 0; d < os->rank; d++) p->batching_from[d] = -1;
  for (int i = 0; i < sd->input_batching_dims.n; i++) {
    int64_t odim = sd->input_batching_dims.v[i], sdim = sd->scatter_indices_batching_dims.v[i];
    if (smap[odim]) return cx_hv_bad(st, in, "batching dim %lld is scattered to", (long long)odim);
    p->batching_from[odim] = (int)(sdim < ivd ? sdim : sdim - 1);
  }
  return CXLA_OK;
}

/* Applies every update whose window fits. */
static cxla_status run(cx_interp *st, const scatter_plan *p, const cx_apply *f,
                       const cxla_literal *ix, cxla_literal *const *upd, cxla_literal **res) {
  int n = p->n;
  int64_t sidx[CXLA_MAX_RANK] = {0};
  int64_t nscatter = 1, nwin = 1;
  for (int j = 0; j < p->nsd; j++) nscatter *= p->sdims[j]; /* bounded by the indices' size */
  for (int j = 0; j < p->nwd; j++) nwin *= p->wdims[j];     /* bounded by the updates' size */
  if (nwin == 0) return CXLA_OK;
  cx_scalar args[2 * SC_MAX_N], outs[SC_MAX_N];
  for (int64_t s = 0; s < nscatter; s++, cx_idx_next(p->nsd, p->sdims, sidx)) {
    int64_t start[CXLA_MAX_RANK] = {0}, ibase = 0, ubase = 0, obase = 0;
    for (int j = 0; j < p->nsd; j++) {
      ibase += sidx[j] * p->idx_stride[j];
      ubase += sidx[j] * p->upd_sstride[j];
    }
    for (int64_t k = 0; k < p->nidx; k++)
      start[p->start_map[k]] = cx_hv_load_index(ix->shape.type, ix->data, ibase + k * p->ivec_stride);
    int skip = 0;
    for (int d = 0; d < p->orank; d++) {
      if (p->batching_from[d] >= 0) start[d] = sidx[p->batching_from[d]];
      skip |= start[d] < 0 || start[d] > p->odims[d] - p->wsize[d];
    }
    if (skip) continue; /* before the offset: an index near +-2^63 would overflow it */
    for (int d = 0; d < p->orank; d++) obase += start[d] * p->ostride[d];
    int64_t widx[CXLA_MAX_RANK] = {0};
    do {
      int64_t oo = obase, uo = ubase;
      for (int j = 0; j < p->nwd; j++) {
        oo += widx[j] * p->op_wstride[j];
        uo += widx[j] * p->upd_wstride[j];
      }
      for (int i = 0; i < n; i++) {
        args[i] = cx_scalar_load(res[i]->shape.type, res[i]->data, oo);
        args[n + i] = cx_scalar_load(upd[i]->shape.type, upd[i]->data, uo);
      }
      CX_TRY(cx_apply_call(st, f, args, outs));
      for (int i = 0; i < n; i++) cx_scalar_store(res[i]->shape.type, res[i]->data, oo, outs[i]);
    } while (cx_idx_next(p->nwd, p->wdims, widx));
  }
  return CXLA_OK;
}

cxla_status cx_interp_scatter(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                              cxla_literal **out) {
  *out = NULL;
  if (in->nops < 3 || in->nops % 2 == 0 || in->nops / 2 > SC_MAX_N)
    return cx_hv_bad(st, in, "expects N operands, indices and N updates (1 <= N <= %d)", SC_MAX_N);
  int n = in->nops / 2;
  cxla_literal *const *upd = ops + n + 1;
  const cxla_literal *ix = ops[n];
  cxla_type types[2 * SC_MAX_N];
  CX_TRY(cx_hv_check_array(st, in, ix, -1, "scatter_indices"));
  if (!cx_type_is_int(ix->shape.type)) return cx_hv_bad(st, in, "scatter_indices must be integers");
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_hv_check_array(st, in, ops[i], ops[0]->shape.rank, "operand"));
    CX_TRY(cx_hv_check_array(st, in, upd[i], upd[0]->shape.rank, "updates"));
    if (!cx_shape_same_dims(&ops[i]->shape, &ops[0]->shape) ||
        !cx_shape_same_dims(&upd[i]->shape, &upd[0]->shape))
      return cx_hv_bad(st, in, "operands (and updates) must have the same dimensions");
    const cx_shape *rs = cx_hv_result_shape(st, in, i, n);
    if (!rs) return CXLA_ERR_VERIFY;
    CX_TRY(cx_hv_check_result(st, in, rs, ops[i]->shape.type, ops[i]->shape.rank,
                              ops[i]->shape.dims));
    types[i] = ops[i]->shape.type;
    types[n + i] = upd[i]->shape.type;
  }
  scatter_plan p;
  p.n = n;
  CX_TRY(plan_scatter(st, in, &ops[0]->shape, &ix->shape, &upd[0]->shape, &p));
  cx_apply f;
  CX_TRY(cx_apply_init(st, in, in->ncalled ? in->called[0] : NULL, 2 * n, types, n, &f));

  cxla_literal *res[SC_MAX_N] = {0};
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    if (!(res[i] = cx_hv_literal(st, in, &ops[i]->shape))) s = CXLA_ERR_OUT_OF_MEMORY;
    else memcpy(res[i]->data, ops[i]->data, cxla_literal_size_bytes(ops[i]));
  }
  if (s == CXLA_OK) s = run(st, &p, &f, ix, upd, res);
  if (s != CXLA_OK) {
    for (int i = 0; i < n; i++) cxla_literal_destroy(res[i]);
    return s;
  }
  return cx_hv_finish(st, in, n, res, out);
}
