/* infer_gather_scatter.c — shape rules of gather and (variadic) scatter, with batching
 * dimensions and index_vector_dim == rank(indices) meaning an implicit trailing 1. */
#include "ir/infer.h"

/* The indices' dims with the implicit trailing 1 added when index_vector_dim == rank.
 * Returns the expanded rank (so the index vector length is e[ivd]). */
static cxla_status expand_indices(cx_infer *ic, int k, int64_t ivd, int64_t *e, int *erank) {
  CX_TRY(cx_vneed_array(ic, k, "indices"));
  const cx_shape *s = cx_vop(ic, k);
  if (!cx_type_is_int(s->type))
    return cx_vfail(ic, "indices (operand %d) must have an integer type, got %s", k, cx_vshape(ic, s));
  if (ivd < 0 || ivd > s->rank)
    return cx_vfail(ic, "index_vector_dim=%lld must be in [0, %d] for indices %s", (long long)ivd, s->rank,
                    cx_vshape(ic, s));
  for (int i = 0; i < s->rank; i++) e[i] = s->dims[i];
  *erank = s->rank;
  if (ivd == s->rank) e[(*erank)++] = 1;
  return CXLA_OK;
}

/* Checks the operand-side dimension lists shared by gather and scatter: the collapsed
 * (gather) / inserted (scatter) dims and the batching dims, both sorted, in range and
 * disjoint; the index map in range, distinct and disjoint from the batching dims; the
 * indices' batching dims distinct, in range, not the index vector dim, paired by size. */
static cxla_status dimension_lists(cx_infer *ic, const cx_shape *x, const cx_shape *idx, int64_t ivd,
                                   const cx_ints *collapsed, const char *cname, const cx_ints *obatch,
                                   const char *obname, const cx_ints *map, const char *mapname,
                                   const cx_ints *ibatch, const char *ibname, char *dropped) {
  if (!cx_vsorted(collapsed)) return cx_vfail(ic, "%s=%s must be sorted", cname, cx_vints(ic, collapsed));
  if (!cx_vsorted(obatch)) return cx_vfail(ic, "%s=%s must be sorted", obname, cx_vints(ic, obatch));
  CX_TRY(cx_vdims(ic, collapsed, x->rank, cname, dropped));
  CX_TRY(cx_vdims(ic, obatch, x->rank, obname, dropped));
  char mapped[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < obatch->n; i++) mapped[obatch->v[i]] = 1;
  CX_TRY(cx_vdims(ic, map, x->rank, mapname, mapped));
  char iused[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, ibatch, idx->rank, ibname, iused));
  if (ivd < idx->rank && iused[ivd])
    return cx_vfail(ic, "%s=%s must not contain index_vector_dim=%lld", ibname, cx_vints(ic, ibatch), (long long)ivd);
  if (obatch->n != ibatch->n)
    return cx_vfail(ic, "%s=%s and %s=%s must have the same length", obname, cx_vints(ic, obatch), ibname,
                    cx_vints(ic, ibatch));
  for (int i = 0; i < obatch->n; i++)
    if (x->dims[obatch->v[i]] != idx->dims[ibatch->v[i]])
      return cx_vfail(ic, "batching dimension %lld of the operand has size %lld but dimension %lld of the indices has "
                      "size %lld", (long long)obatch->v[i], (long long)x->dims[obatch->v[i]], (long long)ibatch->v[i],
                      (long long)idx->dims[ibatch->v[i]]);
  return CXLA_OK;
}

cxla_status cx_infer_gather(cx_infer *ic, cx_shape *out) {
  const cx_gather_dims *g = &ic->in->a.gather;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  int64_t e[CXLA_MAX_RANK + 1];
  int erank;
  CX_TRY(expand_indices(ic, 1, g->index_vector_dim, e, &erank));
  const cx_shape *idx = cx_vop(ic, 1);
  int64_t ivd = g->index_vector_dim;
  if (g->start_index_map.n != e[ivd])
    return cx_vfail(ic, "start_index_map=%s has %d entries but the index vectors have %lld", cx_vints(ic, &g->start_index_map),
                    g->start_index_map.n, (long long)e[ivd]);
  char dropped[CXLA_MAX_RANK] = {0};
  CX_TRY(dimension_lists(ic, x, idx, ivd, &g->collapsed_slice_dims, "collapsed_slice_dims", &g->operand_batching_dims,
                         "operand_batching_dims", &g->start_index_map, "start_index_map",
                         &g->start_indices_batching_dims, "start_indices_batching_dims", dropped));
  const cx_ints *od = &g->offset_dims, *ss = &g->slice_sizes;
  if (x->rank != od->n + g->collapsed_slice_dims.n + g->operand_batching_dims.n)
    return cx_vfail(ic, "operand rank %d must equal the number of offset_dims (%d), collapsed_slice_dims (%d) and "
                    "operand_batching_dims (%d) together", x->rank, od->n, g->collapsed_slice_dims.n,
                    g->operand_batching_dims.n);
  if (ss->n != x->rank)
    return cx_vfail(ic, "slice_sizes=%s must have one entry per dimension of %s", cx_vints(ic, ss), cx_vshape(ic, x));
  for (int i = 0; i < x->rank; i++) {
    if (ss->v[i] < 0 || ss->v[i] > x->dims[i])
      return cx_vfail(ic, "slice_sizes=%s: size %lld of dimension %d must be in [0, %lld]", cx_vints(ic, ss),
                      (long long)ss->v[i], i, (long long)x->dims[i]);
    if (dropped[i] && ss->v[i] > 1)
      return cx_vfail(ic, "slice_sizes=%s: collapsed or batching dimension %d must have size 0 or 1, got %lld",
                      cx_vints(ic, ss), i, (long long)ss->v[i]);
  }
  int rank = od->n + erank - 1;
  if (rank > CXLA_MAX_RANK) return cx_vfail(ic, "result would have rank %d (at most %d)", rank, CXLA_MAX_RANK);
  if (!cx_vsorted(od)) return cx_vfail(ic, "offset_dims=%s must be sorted", cx_vints(ic, od));
  char is_offset[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, od, rank, "offset_dims", is_offset));
  cx_vset_array(out, x->type, rank, NULL);
  int xo = 0, eo = 0; /* next operand dim kept as an offset dim, next indices dim */
  for (int i = 0; i < rank; i++) {
    if (is_offset[i]) {
      while (dropped[xo]) xo++;
      out->dims[i] = ss->v[xo++];
    } else {
      if (eo == ivd) eo++;
      out->dims[i] = e[eo++];
    }
  }
  return CXLA_OK;
}

cxla_status cx_infer_scatter(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  if (in->nops < 3 || in->nops % 2 == 0)
    return cx_vfail(ic, "expected N operands, the indices and N updates (an odd number >= 3), got %d operands", in->nops);
  const cx_scatter_dims *s = &in->a.scatter;
  int n = (in->nops - 1) / 2;
  cxla_type *types = cx_arena_alloc(ic->arena, sizeof(cxla_type) * (size_t)n); /* any number of operands */
  if (!types) return cx_oom(ic->m->ctx);
  const cx_shape *x = cx_vop(ic, 0), *u0 = cx_vop(ic, n + 1);
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_vneed_array(ic, i, "operand"));
    CX_TRY(cx_vneed_array(ic, n + 1 + i, "update"));
    const cx_shape *xi = cx_vop(ic, i), *ui = cx_vop(ic, n + 1 + i);
    if (!cx_shape_same_dims(xi, x))
      return cx_vfail(ic, "operands must have the same dimensions, got %s and %s", cx_vshape(ic, x), cx_vshape(ic, xi));
    if (!cx_shape_same_dims(ui, u0))
      return cx_vfail(ic, "updates must have the same dimensions, got %s and %s", cx_vshape(ic, u0), cx_vshape(ic, ui));
    if (ui->type != xi->type)
      return cx_vfail(ic, "update %s (operand %d) must have the element type of operand %d %s", cx_vshape(ic, ui),
                      n + 1 + i, i, cx_vshape(ic, xi));
    types[i] = xi->type;
  }
  int64_t e[CXLA_MAX_RANK + 1], ivd = s->index_vector_dim;
  int erank;
  CX_TRY(expand_indices(ic, n, ivd, e, &erank));
  const cx_shape *idx = cx_vop(ic, n);
  const cx_ints *uwd = &s->update_window_dims;
  if (s->scatter_dims_to_operand_dims.n != e[ivd])
    return cx_vfail(ic, "scatter_dims_to_operand_dims=%s has %d entries but the index vectors have %lld",
                    cx_vints(ic, &s->scatter_dims_to_operand_dims), s->scatter_dims_to_operand_dims.n, (long long)e[ivd]);
  char dropped[CXLA_MAX_RANK] = {0};
  CX_TRY(dimension_lists(ic, x, idx, ivd, &s->inserted_window_dims, "inserted_window_dims", &s->input_batching_dims,
                         "input_batching_dims", &s->scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims",
                         &s->scatter_indices_batching_dims, "scatter_indices_batching_dims", dropped));
  if (x->rank != uwd->n + s->inserted_window_dims.n + s->input_batching_dims.n)
    return cx_vfail(ic, "operand rank %d must equal the number of update_window_dims (%d), inserted_window_dims (%d) "
                    "and input_batching_dims (%d) together", x->rank, uwd->n, s->inserted_window_dims.n,
                    s->input_batching_dims.n);
  if (!cx_vsorted(uwd)) return cx_vfail(ic, "update_window_dims=%s must be sorted", cx_vints(ic, uwd));
  int urank = uwd->n + erank - 1;
  if (u0->rank != urank)
    return cx_vfail(ic, "updates %s must have rank %d (%d window dimensions and %d scatter dimensions)",
                    cx_vshape(ic, u0), urank, uwd->n, erank - 1);
  char is_window[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, uwd, urank, "update_window_dims", is_window));
  int xo = 0, eo = 0;
  for (int i = 0; i < urank; i++) {
    if (is_window[i]) {
      while (dropped[xo]) xo++;
      if (u0->dims[i] > x->dims[xo])
        return cx_vfail(ic, "update window dimension %d has size %lld, larger than operand dimension %d (%lld)", i,
                        (long long)u0->dims[i], xo, (long long)x->dims[xo]);
      xo++;
    } else {
      if (eo == ivd) eo++;
      if (u0->dims[i] != e[eo])
        return cx_vfail(ic, "update scatter dimension %d has size %lld but indices dimension %d has size %lld", i,
                        (long long)u0->dims[i], eo, (long long)e[eo]);
      eo++;
    }
  }
  int is_tuple;
  CX_TRY(cx_vreducer(ic, 0, "to_apply", n, types, types, &is_tuple));
  if (n == 1) {
    *out = *x;
    cx_vplain(out);
    return CXLA_OK;
  }
  cx_shape *el = cx_vtuple(ic, out, n);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < n; i++) {
    el[i] = in->ops[i]->shape;
    cx_vplain(&el[i]);
  }
  return CXLA_OK;
}
