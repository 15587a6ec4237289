/* gather.c — XLA gather with batching dims (StableHLO's definition):
 *
 * For result index R: the batch dims of R are those not in offset_dims; they index
 * start_indices with index_vector_dim left out (index_vector_dim == rank(indices) means an
 * implicit trailing dimension of size 1). The index vector S read there gives, for each k,
 * the start of operand dim start_index_map[k], clamped to [0, dim - slice_size] so the slice
 * stays in bounds (XLA's rule). Operand dims in operand_batching_dims take the result's batch
 * coordinate of the matching start_indices_batching_dims entry. The offset dims of R, in
 * order, add to the operand dims that are neither collapsed nor batching, in increasing
 * order. */
#include <string.h>
#include "interp/index_util.h"

typedef struct gather_plan {
  int orank, irank, rrank;
  int64_t ivd;                        /* index_vector_dim */
  int64_t nidx;                       /* index vector length */
  int64_t istride[CXLA_MAX_RANK + 1]; /* indices strides (0 for an implicit vector dim) */
  int64_t ostride[CXLA_MAX_RANK];     /* operand strides */
  /* per result dim: operand dim an offset dim adds to (-1 for batch dims) */
  int offset_to_operand[CXLA_MAX_RANK];
  /* per result batch dim: stride into start_indices of its coordinate */
  int64_t batch_istride[CXLA_MAX_RANK];
  /* per operand dim: the result dim whose coordinate is its batching index, or -1 */
  int batching_from[CXLA_MAX_RANK];
  int64_t start_map[CXLA_MAX_RANK];   /* operand dim of index vector entry k */
  int64_t max_start[CXLA_MAX_RANK];   /* per operand dim: dim - slice size */
  int64_t out_dims[CXLA_MAX_RANK];
} gather_plan;

static cxla_status plan_gather(cx_interp *st, cx_instr *in, const cx_shape *os,
                               const cx_shape *is, gather_plan *p) {
  const cx_gather_dims *g = &in->a.gather;
  p->orank = os->rank;
  p->irank = is->rank;
  p->ivd = g->index_vector_dim;
  if (p->ivd < 0 || p->ivd > is->rank) return cx_hv_bad(st, in, "index_vector_dim out of range");
  p->nidx = p->ivd < is->rank ? is->dims[p->ivd] : 1;
  if (g->start_index_map.n != p->nidx)
    return cx_hv_bad(st, in, "start_index_map has %d entries, the index vector %lld",
                     g->start_index_map.n, (long long)p->nidx);
  if (g->slice_sizes.n != os->rank) return cx_hv_bad(st, in, "slice_sizes needs one per operand dim");
  int seen[CXLA_MAX_RANK] = {0}, smap[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_hv_check_dims(st, in, &g->collapsed_slice_dims, os->rank, seen, "collapsed_slice_dims"));
  CX_TRY(cx_hv_check_dims(st, in, &g->operand_batching_dims, os->rank, seen, "operand_batching_dims"));
  CX_TRY(cx_hv_check_dims(st, in, &g->start_index_map, os->rank, smap, "start_index_map"));
  for (int d = 0; d < os->rank; d++) {
    int64_t sz = g->slice_sizes.v[d];
    if (sz < 0 || sz > os->dims[d]) return cx_hv_bad(st, in, "slice size %d out of range", d);
    if (seen[d] && sz != 1) return cx_hv_bad(st, in, "collapsed or batching dim %d needs slice size 1", d);
    p->max_start[d] = os->dims[d] - sz;
  }
  for (int k = 0; k < g->start_index_map.n; k++) p->start_map[k] = g->start_index_map.v[k];

  /* result rank = batch dims (indices rank without the vector dim) + offset dims */
  int nbatch = is->rank - (p->ivd < is->rank ? 1 : 0);
  int noff = os->rank - g->collapsed_slice_dims.n - g->operand_batching_dims.n;
  p->rrank = nbatch + noff;
  if (p->rrank > CXLA_MAX_RANK || g->offset_dims.n != noff)
    return cx_hv_bad(st, in, "offset_dims must list %d dims", noff);
  int is_off[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_hv_check_dims(st, in, &g->offset_dims, p->rrank, is_off, "offset_dims"));

  int64_t ist[CXLA_MAX_RANK];
  cx_shape_strides(is, ist);
  cx_shape_strides(os, p->ostride);
  p->istride[0] = p->ivd < is->rank ? ist[p->ivd] : 0;
  int od = 0, bd = 0; /* next operand offset dim, next indices batch dim */
  int batch_result_dim[CXLA_MAX_RANK]; /* indices dim (vector dim excluded) -> result dim */
  for (int r = 0; r < p->rrank; r++) {
    if (is_off[r]) {
      while (seen[od]) od++;
      p->offset_to_operand[r] = od;
      p->out_dims[r] = g->slice_sizes.v[od];
      od++;
      p->batch_istride[r] = 0;
    } else {
      int idim = bd < p->ivd ? bd : bd + 1;
      p->offset_to_operand[r] = -1;
      p->out_dims[r] = is->dims[idim];
      p->batch_istride[r] = ist[idim];
      batch_result_dim[bd++] = r;
    }
  }
  if (g->operand_batching_dims.n != g->start_indices_batching_dims.n)
    return cx_hv_bad(st, in, "operand_batching_dims and start_indices_batching_dims differ in length");
  int iseen[CXLA_MAX_RANK + 1] = {0};
  if (p->ivd < is->rank) iseen[p->ivd] = 1; /* the vector dim cannot be a batching dim */
  CX_TRY(cx_hv_check_dims(st, in, &g->start_indices_batching_dims, is->rank, iseen,
                          "start_indices_batching_dims"));
  for (int d = 0; d < os->rank; d++) p->batching_from[d] = -1;
  for (int i = 0; i < g->operand_batching_dims.n; i++) {
    int64_t odim = g->operand_batching_dims.v[i], sdim = g->start_indices_batching_dims.v[i];
    if (smap[odim]) return cx_hv_bad(st, in, "batching dim %lld is in start_index_map", (long long)odim);
    int r = batch_result_dim[sdim < p->ivd ? sdim : sdim - 1];
    if (os->dims[odim] != p->out_dims[r])
      return cx_hv_bad(st, in, "batching dims %lld and %lld differ in size", (long long)odim,
                       (long long)sdim);
    p->batching_from[odim] = r;
  }
  return cx_hv_check_result(st, in, &in->shape, os->type, p->rrank, p->out_dims);
}

cxla_status cx_interp_gather(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                             cxla_literal **out) {
  *out = NULL;
  if (in->nops != 2) return cx_hv_bad(st, in, "expects operand and start_indices");
  const cxla_literal *x = ops[0], *ix = ops[1];
  CX_TRY(cx_hv_check_array(st, in, x, -1, "operand"));
  CX_TRY(cx_hv_check_array(st, in, ix, -1, "start_indices"));
  if (!cx_type_is_int(ix->shape.type)) return cx_hv_bad(st, in, "start_indices must be integers");
  gather_plan p;
  CX_TRY(plan_gather(st, in, &x->shape, &ix->shape, &p));
  cxla_literal *res = cx_hv_literal(st, in, &in->shape);
  if (!res) return CXLA_ERR_OUT_OF_MEMORY;
  size_t esz = cxla_type_size(x->shape.type);
  int64_t n = cx_shape_elems(&res->shape), ridx[CXLA_MAX_RANK] = {0};
  const char *src = x->data;
  char *dst = res->data;
  for (int64_t e = 0; e < n; e++, cx_idx_next(p.rrank, p.out_dims, ridx)) {
    int64_t oidx[CXLA_MAX_RANK] = {0}, ibase = 0;
    for (int r = 0; r < p.rrank; r++) ibase += ridx[r] * p.batch_istride[r];
    for (int64_t k = 0; k < p.nidx; k++) {
      int64_t d = p.start_map[k];
      int64_t v = cx_hv_load_index(ix->shape.type, ix->data, ibase + k * p.istride[0]);
      oidx[d] = v < 0 ? 0 : v > p.max_start[d] ? p.max_start[d] : v;
    }
    int64_t off = 0;
    for (int d = 0; d < p.orank; d++) {
      if (p.batching_from[d] >= 0) oidx[d] += ridx[p.batching_from[d]];
      off += oidx[d] * p.ostride[d];
    }
    for (int r = 0; r < p.rrank; r++)
      if (p.offset_to_operand[r] >= 0) off += ridx[r] * p.ostride[p.offset_to_operand[r]];
    memcpy(dst + (size_t)e * esz, src + (size_t)off * esz, esz);
  }
  *out = res;
  return CXLA_OK;
}
