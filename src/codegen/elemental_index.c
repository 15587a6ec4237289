/* elemental_index.c — re-indexing with data-dependent indices: dynamic-slice,
 * dynamic-update-slice and gather. Start indices are clamped so slices stay in bounds, exactly
 * as the interpreter does (src/interp/shape_ops.c dyn_starts, src/interp/gather.c). */
#include "codegen/gen.h"

/* Start index of dimension d read from the operands from `first` on (one scalar per dim, or
 * the old form: one rank-1 vector), clamped to [0, hi]. */
static LLVMValueRef start_index(cx_gen *g, const cx_instr *in, int first, int d, int64_t hi) {
  int rank = in->ops[0]->shape.rank, nidx = in->nops - first;
  int vec = nidx == 1 && in->ops[first]->shape.rank == 1 && rank != 0;
  const cx_instr *ix = in->ops[vec ? first : first + d];
  if ((!vec && nidx != rank) || !cx_type_is_int(ix->shape.type))
    return cx_gen_fail(g, in, "start indices must be %d integer scalars", rank);
  cx_idx si = cx_idx_scalar(g);
  if (vec) {
    LLVMValueRef dv = cx_ir_i64(g, d);
    si = cx_idx_from_multi(g, &ix->shape, &dv);
  }
  LLVMValueRef v = cx_ir_index_i64(g, ix->shape.type, cx_gen1(g, ix, &si));
  return cx_ir_clamp(g, v, 0, hi < 0 ? 0 : hi);
}

LLVMValueRef cx_gen_dynamic_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const cx_shape *xs = &in->ops[0]->shape;
  LLVMValueRef v[CXLA_MAX_RANK];
  if (in->shape.rank != xs->rank) return cx_gen_fail(g, in, "result rank differs from the operand's");
  for (int d = 0; d < xs->rank; d++) {
    LLVMValueRef s = start_index(g, in, 1, d, xs->dims[d] - in->shape.dims[d]);
    v[d] = LLVMBuildAdd(g->cg->b, s, idx->v[d], "");
  }
  cx_idx oi = cx_idx_from_multi(g, xs, v);
  return cx_gen1(g, in->ops[0], &oi);
}

LLVMValueRef cx_gen_dus_start(cx_gen *g, const cx_instr *dus, int d) {
  return start_index(g, dus, 2, d, dus->ops[0]->shape.dims[d] - dus->ops[1]->shape.dims[d]);
}

typedef struct dus_ctx {
  LLVMValueRef uv[CXLA_MAX_RANK]; /* update index (clamped) */
} dus_ctx;

static LLVMValueRef dus_alt(cx_gen *g, const cx_instr *in, const cx_idx *idx, int k, void *ctx) {
  if (k == 0) return cx_gen1(g, in->ops[0], idx);
  dus_ctx *c = ctx;
  cx_idx ui = cx_idx_from_multi(g, &in->ops[1]->shape, c->uv);
  return cx_gen1(g, in->ops[1], &ui);
}

LLVMValueRef cx_gen_dynamic_update_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_shape *xs = &in->ops[0]->shape, *us = &in->ops[1]->shape;
  dus_ctx c;
  if (us->rank != xs->rank) return cx_gen_fail(g, in, "update rank differs from the operand's");
  if (cx_shape_elems(us) == 0) return cx_gen1(g, in->ops[0], idx);
  LLVMValueRef inside = LLVMConstInt(g->cg->t_i1, 1, 0);
  for (int d = 0; d < xs->rank; d++) {
    LLVMValueRef s = start_index(g, in, 2, d, xs->dims[d] - us->dims[d]);
    LLVMValueRef j = LLVMBuildSub(b, idx->v[d], s, "");
    /* 0 <= j < size as one unsigned compare */
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntULT, j, cx_ir_i64(g, us->dims[d]), ""), "");
    c.uv[d] = cx_ir_clamp(g, j, 0, us->dims[d] - 1);
  }
  int branch = cx_gen_subtree_expensive(in->ops[0]) || cx_gen_subtree_expensive(in->ops[1]);
  return cx_gen_choose(g, in, idx, 2, LLVMBuildZExt(b, inside, g->cg->t_i64, ""), branch, dus_alt, &c);
}

/* ---- gather (batching dims included; see src/interp/gather.c for the definition) ---- */

LLVMValueRef cx_gen_gather(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_gather_dims *gd = &in->a.gather;
  const cx_instr *x = in->ops[0], *ix = in->ops[1];
  const cx_shape *os = &x->shape, *is = &ix->shape;
  int rrank = in->shape.rank;
  int64_t ivd = gd->index_vector_dim;
  if (ivd < 0 || ivd > is->rank || !cx_type_is_int(is->type) || gd->slice_sizes.n != os->rank)
    return cx_gen_fail(g, in, "malformed gather");
  int64_t nidx = ivd < is->rank ? is->dims[ivd] : 1;
  int seen[CXLA_MAX_RANK] = {0}, is_off[CXLA_MAX_RANK] = {0};
  int off_to_op[CXLA_MAX_RANK], batch_idim[CXLA_MAX_RANK], batch_rdim[CXLA_MAX_RANK], batching_from[CXLA_MAX_RANK];
  for (int i = 0; i < gd->collapsed_slice_dims.n; i++) seen[gd->collapsed_slice_dims.v[i]] = 1;
  for (int i = 0; i < gd->operand_batching_dims.n; i++) seen[gd->operand_batching_dims.v[i]] = 1;
  for (int i = 0; i < gd->offset_dims.n; i++) {
    int64_t r = gd->offset_dims.v[i];
    if (r < 0 || r >= rrank) return cx_gen_fail(g, in, "offset_dims out of range");
    is_off[r] = 1;
  }
  if (gd->start_index_map.n != nidx || gd->operand_batching_dims.n != gd->start_indices_batching_dims.n)
    return cx_gen_fail(g, in, "malformed gather dimension numbers");
  int od = 0, bd = 0;
  for (int r = 0; r < rrank; r++) {
    if (is_off[r]) {
      while (od < os->rank && seen[od]) od++;
      if (od >= os->rank) return cx_gen_fail(g, in, "too many offset dims");
      off_to_op[r] = od++;
    } else {
      off_to_op[r] = -1;
      batch_idim[r] = bd < ivd ? bd : bd + 1;
      if (bd >= CXLA_MAX_RANK) return cx_gen_fail(g, in, "too many batch dims");
      batch_rdim[bd++] = r;
    }
  }
  for (int d = 0; d < os->rank; d++) batching_from[d] = -1;
  for (int i = 0; i < gd->operand_batching_dims.n; i++) {
    int64_t sdim = gd->start_indices_batching_dims.v[i];
    int64_t k = sdim < ivd ? sdim : sdim - 1;
    if (k < 0 || k >= bd) return cx_gen_fail(g, in, "bad start_indices_batching_dims");
    batching_from[gd->operand_batching_dims.v[i]] = batch_rdim[k];
  }
  /* the index vector for this result position, entry by entry */
  LLVMValueRef iv[CXLA_MAX_RANK], ov[CXLA_MAX_RANK];
  for (int r = 0; r < rrank; r++)
    if (off_to_op[r] < 0) iv[batch_idim[r]] = idx->v[r];
  for (int d = 0; d < os->rank; d++) ov[d] = cx_ir_i64(g, 0);
  for (int64_t k = 0; k < nidx; k++) {
    int64_t d = gd->start_index_map.v[k];
    if (d < 0 || d >= os->rank) return cx_gen_fail(g, in, "start_index_map out of range");
    if (ivd < is->rank) iv[ivd] = cx_ir_i64(g, k);
    cx_idx ii = cx_idx_from_multi(g, is, iv);
    LLVMValueRef s = cx_ir_index_i64(g, is->type, cx_gen1(g, ix, &ii));
    int64_t hi = os->dims[d] - gd->slice_sizes.v[d];
    ov[d] = cx_ir_clamp(g, s, 0, hi < 0 ? 0 : hi);
  }
  for (int d = 0; d < os->rank; d++)
    if (batching_from[d] >= 0) ov[d] = LLVMBuildAdd(b, ov[d], idx->v[batching_from[d]], "");
  for (int r = 0; r < rrank; r++)
    if (off_to_op[r] >= 0) ov[off_to_op[r]] = LLVMBuildAdd(b, ov[off_to_op[r]], idx->v[r], "");
  cx_idx oi = cx_idx_from_multi(g, os, ov);
  return cx_gen1(g, x, &oi);
}
