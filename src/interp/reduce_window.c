/* reduce_window.c — variadic reduce-window. Each result element starts from the init values
 * and folds in the operand elements its window covers, in row-major window order; padding
 * and base-dilation holes contribute nothing (XLA's evaluator skips them). Window validity is
 * separable per dimension, so the taps of each dimension are listed once per result element
 * and the window is their cartesian product. */
#include "interp/apply.h"
#include "interp/index_util.h"

#define RW_MAX_N 64

typedef struct rw_plan {
  int n, rank;
  cx_window_dim w[CXLA_MAX_RANK];
  int64_t out_dims[CXLA_MAX_RANK];
  int64_t in_stride[CXLA_MAX_RANK];
  int64_t *coord[CXLA_MAX_RANK]; /* per dim: the taps of the current window position */
  int64_t count[CXLA_MAX_RANK];
  int64_t *k;                    /* scratch for window offsets */
} rw_plan;

static cxla_status check_operands(cx_interp *st, cx_instr *in, cxla_literal *const *ops, int n) {
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_hv_check_array(st, in, ops[i], ops[0]->shape.rank, "operand"));
    CX_TRY(cx_hv_check_array(st, in, ops[n + i], 0, "init value"));
    if (!cx_shape_same_dims(&ops[i]->shape, &ops[0]->shape))
      return cx_hv_bad(st, in, "operands must have the same dimensions");
  }
  return CXLA_OK;
}

/* Folds the window at result index oidx into acc[0..n-1]. */
static cxla_status fold_window(cx_interp *st, const cx_apply *f, rw_plan *p,
                               cxla_literal *const *ops, const int64_t *oidx, cx_scalar *acc) {
  int n = p->n, rank = p->rank;
  for (int d = 0; d < rank; d++) {
    p->count[d] = cx_window_taps(&p->w[d], ops[0]->shape.dims[d], oidx[d], p->coord[d], p->k);
    if (!p->count[d]) return CXLA_OK; /* the window lies entirely in padding or holes */
  }
  int64_t t[CXLA_MAX_RANK] = {0};
  cx_scalar args[2 * RW_MAX_N], outs[RW_MAX_N];
  do {
    int64_t off = 0;
    for (int d = 0; d < rank; d++) off += p->coord[d][t[d]] * p->in_stride[d];
    if (n == 1 && f->kind == CX_APPLY_BINARY) {
      acc[0] = cx_scalar_binary(f->op, f->type, acc[0],
                                cx_scalar_load(ops[0]->shape.type, ops[0]->data, off));
      continue;
    }
    for (int i = 0; i < n; i++) {
      args[i] = acc[i];
      args[n + i] = cx_scalar_load(ops[i]->shape.type, ops[i]->data, off);
    }
    CX_TRY(cx_apply_call(st, f, args, outs));
    for (int i = 0; i < n; i++) acc[i] = outs[i];
  } while (cx_idx_next(rank, p->count, t));
  return CXLA_OK;
}

static cxla_status run(cx_interp *st, cx_instr *in, cxla_literal *const *ops, const cx_apply *f,
                       rw_plan *p, cxla_literal **lits) {
  int n = p->n;
  int64_t out_elems = cx_shape_elems(&lits[0]->shape);
  int64_t oidx[CXLA_MAX_RANK] = {0};
  cx_scalar init[RW_MAX_N], acc[RW_MAX_N];
  for (int i = 0; i < n; i++) init[i] = cx_scalar_load(ops[n + i]->shape.type, ops[n + i]->data, 0);
  for (int64_t o = 0; o < out_elems; o++) {
    for (int i = 0; i < n; i++) acc[i] = init[i];
    CX_TRY(fold_window(st, f, p, ops, oidx, acc));
    for (int i = 0; i < n; i++) cx_scalar_store(lits[i]->shape.type, lits[i]->data, o, acc[i]);
    cx_idx_next(p->rank, p->out_dims, oidx);
  }
  (void)in;
  return CXLA_OK;
}

cxla_status cx_interp_reduce_window(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                                    cxla_literal **out) {
  *out = NULL;
  if (in->nops < 2 || in->nops % 2 || in->nops / 2 > RW_MAX_N)
    return cx_hv_bad(st, in, "expects N operands and N init values (1 <= N <= %d)", RW_MAX_N);
  rw_plan p = {0};
  p.n = in->nops / 2;
  int n = p.n;
  CX_TRY(check_operands(st, in, ops, n));
  const cx_shape *s0 = &ops[0]->shape;
  p.rank = s0->rank;
  CX_TRY(cx_hv_window(st, in, p.rank, s0->dims, 0, p.w, p.out_dims));
  cxla_type types[2 * RW_MAX_N];
  for (int i = 0; i < n; i++) {
    const cx_shape *rs = cx_hv_result_shape(st, in, i, n);
    if (!rs) return CXLA_ERR_VERIFY;
    CX_TRY(cx_hv_check_result(st, in, rs, ops[n + i]->shape.type, p.rank, p.out_dims));
    types[i] = ops[n + i]->shape.type;
    types[n + i] = ops[i]->shape.type;
  }
  cx_apply f;
  CX_TRY(cx_apply_init(st, in, in->ncalled ? in->called[0] : NULL, 2 * n, types, n, &f));
  cx_shape_strides(s0, p.in_stride);

  /* one block: the taps of every dimension, then the window-offset scratch */
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

  cxla_literal *lits[RW_MAX_N] = {0};
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++)
    if (!(lits[i] = cx_hv_literal(st, in, cx_hv_result_shape(st, in, i, n))))
      s = CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = run(st, in, ops, &f, &p, lits);
  cx_free(buf);
  if (s != CXLA_OK) {
    for (int i = 0; i < n; i++) cxla_literal_destroy(lits[i]);
    return s;
  }
  return cx_hv_finish(st, in, n, lits, out);
}
