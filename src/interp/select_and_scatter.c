/* select_and_scatter.c — select-and-scatter (the gradient of max-pooling).
 *
 * The result starts as init_value everywhere. For each source element (row-major), its window
 * over the operand is walked in row-major window order over the in-bounds elements only
 * (padding and base-dilation holes are never selected). The first element is the initial
 * selection; a later element replaces the selection when select(selected, current) is false
 * (XLA's evaluator and CPU emitter rule). Then
 *   result[selected] = scatter(result[selected], source[s])
 * with the current value first, as XLA's CPU/GPU emitters and StableHLO call it (XLA's
 * evaluator passes the two the other way round; that only matters for a non-commutative
 * scatter). A window with no in-bounds element scatters nothing. */
#include "interp/apply.h"
#include "interp/index_util.h"

typedef struct sas_plan {
  int rank;
  cx_window_dim w[CXLA_MAX_RANK];
  int64_t src_dims[CXLA_MAX_RANK];
  int64_t stride[CXLA_MAX_RANK];
  int64_t *coord[CXLA_MAX_RANK];
  int64_t count[CXLA_MAX_RANK];
  int64_t *k;
} sas_plan;

static cxla_status run(cx_interp *st, sas_plan *p, const cxla_literal *x, const cxla_literal *src,
                       const cx_apply *sel, const cx_apply *sct, cxla_literal *res) {
  int rank = p->rank;
  cxla_type t = x->shape.type, rt = res->shape.type, srct = src->shape.type;
  int64_t nsrc = cx_shape_elems(&src->shape);
  int64_t sidx[CXLA_MAX_RANK] = {0};
  for (int64_t si = 0; si < nsrc; si++, cx_idx_next(rank, p->src_dims, sidx)) {
    int empty = 0;
    for (int d = 0; d < rank && !empty; d++) {
      p->count[d] = cx_window_taps(&p->w[d], x->shape.dims[d], sidx[d], p->coord[d], p->k);
      empty = p->count[d] == 0;
    }
    if (empty) continue;
    int64_t t_idx[CXLA_MAX_RANK] = {0};
    int64_t best = -1;
    cx_scalar args[2], pick;
    do {
      int64_t off = 0;
      for (int d = 0; d < rank; d++) off += p->coord[d][t_idx[d]] * p->stride[d];
      cx_scalar cur = cx_scalar_load(t, x->data, off);
      if (best < 0) {
        best = off;
        args[0] = cur;
        continue;
      }
      args[1] = cur;
      CX_TRY(cx_apply_call(st, sel, args, &pick));
      if (!pick.i) {
        best = off;
        args[0] = cur;
      }
    } while (cx_idx_next(rank, p->count, t_idx));
    cx_scalar sargs[2], v;
    sargs[0] = cx_scalar_load(rt, res->data, best);
    sargs[1] = cx_scalar_load(srct, src->data, si);
    CX_TRY(cx_apply_call(st, sct, sargs, &v));
    cx_scalar_store(rt, res->data, best, v);
  }
  return CXLA_OK;
}

cxla_status cx_interp_select_and_scatter(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                                         cxla_literal **out) {
  *out = NULL;
  if (in->nops != 3 || in->ncalled != 2)
    return cx_hv_bad(st, in, "expects operand, source, init_value, select and scatter");
  const cxla_literal *x = ops[0], *src = ops[1], *init = ops[2];
  CX_TRY(cx_hv_check_array(st, in, x, -1, "operand"));
  CX_TRY(cx_hv_check_array(st, in, src, x->shape.rank, "source"));
  CX_TRY(cx_hv_check_array(st, in, init, 0, "init value"));
  sas_plan p = {0};
  p.rank = x->shape.rank;
  CX_TRY(cx_hv_window(st, in, p.rank, x->shape.dims, 0, p.w, p.src_dims));
  for (int d = 0; d < p.rank; d++)
    if (src->shape.dims[d] != p.src_dims[d])
      return cx_hv_bad(st, in, "source dimension %d is %lld, the window gives %lld", d,
                       (long long)src->shape.dims[d], (long long)p.src_dims[d]);
  CX_TRY(cx_hv_check_result(st, in, &in->shape, init->shape.type, p.rank, x->shape.dims));
  cxla_type sel_types[2] = {x->shape.type, x->shape.type};
  cxla_type sct_types[2] = {init->shape.type, src->shape.type};
  cx_apply sel, sct;
  CX_TRY(cx_apply_init(st, in, in->called[0], 2, sel_types, 1, &sel));
  CX_TRY(cx_apply_init(st, in, in->called[1], 2, sct_types, 1, &sct));
  if (sel.comp->root->shape.type != CXLA_PRED || sel.comp->root->shape.rank != 0)
    return cx_hv_bad(st, in, "select must return a pred scalar");
  cx_shape_strides(&x->shape, p.stride);

  int64_t total = 0, maxw = 1;
  for (int d = 0; d < p.rank; d++) {
    total += p.w[d].size;
    if (p.w[d].size > maxw) maxw = p.w[d].size;
  }
  int64_t *buf = cx_malloc(sizeof(int64_t) * (size_t)(total + maxw));
  if (!buf) return cx_hv_oom(st, in);
  int64_t at = 0;
  for (int d = 0; d < p.rank; d++) {
    p.coord[d] = buf + at;
    at += p.w[d].size;
  }
  p.k = buf + total;

  cxla_literal *res = cx_hv_literal(st, in, &in->shape);
  cxla_status s = res ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) {
    cx_scalar iv = cx_scalar_load(init->shape.type, init->data, 0);
    int64_t nres = cx_shape_elems(&res->shape);
    for (int64_t i = 0; i < nres; i++) cx_scalar_store(res->shape.type, res->data, i, iv);
    s = run(st, &p, x, src, &sel, &sct, res);
  }
  cx_free(buf);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}
