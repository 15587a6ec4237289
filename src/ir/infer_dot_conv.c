/* infer_dot_conv.c — shape rules of dot (batch and contracting dimensions) and convolution
 * (dim_labels, windows, feature and batch groups). */
#include "ir/infer.h"

/* The result type: the declared one when the operands may widen to it (bf16 x bf16 -> f32,
 * s8 x s8 -> s32), otherwise the operands' type, which then shows up as a mismatch. */
static cxla_type result_type(cx_infer *ic) {
  return cx_vaccum_type(cx_vop(ic, 0)->type, cx_vop(ic, 1)->type, ic->in->shape.type);
}

cxla_status cx_infer_dot(cx_infer *ic, cx_shape *out) {
  const cx_dot_dims *d = &ic->in->a.dot;
  CX_TRY(cx_vneed_array(ic, 0, "lhs"));
  CX_TRY(cx_vneed_array(ic, 1, "rhs"));
  const cx_shape *l = cx_vop(ic, 0), *r = cx_vop(ic, 1);
  if (d->lhs_batch.n != d->rhs_batch.n)
    return cx_vfail(ic, "lhs has %d batch dimensions but rhs has %d (expected the same number)", d->lhs_batch.n,
                    d->rhs_batch.n);
  if (d->lhs_contract.n != d->rhs_contract.n)
    return cx_vfail(ic, "lhs has %d contracting dimensions but rhs has %d (expected the same number)",
                    d->lhs_contract.n, d->rhs_contract.n);
  char lused[CXLA_MAX_RANK] = {0}, rused[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, &d->lhs_batch, l->rank, "lhs_batch_dims", lused));
  CX_TRY(cx_vdims(ic, &d->lhs_contract, l->rank, "lhs_contracting_dims", lused));
  CX_TRY(cx_vdims(ic, &d->rhs_batch, r->rank, "rhs_batch_dims", rused));
  CX_TRY(cx_vdims(ic, &d->rhs_contract, r->rank, "rhs_contracting_dims", rused));
  for (int i = 0; i < d->lhs_batch.n; i++) {
    int64_t a = d->lhs_batch.v[i], b = d->rhs_batch.v[i];
    if (l->dims[a] != r->dims[b])
      return cx_vfail(ic, "lhs batch dimension %lld has size %lld but rhs batch dimension %lld has size %lld",
                      (long long)a, (long long)l->dims[a], (long long)b, (long long)r->dims[b]);
  }
  for (int i = 0; i < d->lhs_contract.n; i++) {
    int64_t a = d->lhs_contract.v[i], b = d->rhs_contract.v[i];
    if (l->dims[a] != r->dims[b])
      return cx_vfail(ic, "lhs contracting dimension %lld has size %lld but rhs contracting dimension %lld has size %lld",
                      (long long)a, (long long)l->dims[a], (long long)b, (long long)r->dims[b]);
  }
  int rank = d->lhs_batch.n + (l->rank - d->lhs_batch.n - d->lhs_contract.n) + (r->rank - d->rhs_batch.n - d->rhs_contract.n);
  if (rank > CXLA_MAX_RANK) return cx_vfail(ic, "result would have rank %d (at most %d)", rank, CXLA_MAX_RANK);
  cx_vset_array(out, result_type(ic), 0, NULL);
  for (int i = 0; i < d->lhs_batch.n; i++) out->dims[out->rank++] = l->dims[d->lhs_batch.v[i]];
  for (int i = 0; i < l->rank; i++)
    if (!lused[i]) out->dims[out->rank++] = l->dims[i];
  for (int i = 0; i < r->rank; i++)
    if (!rused[i]) out->dims[out->rank++] = r->dims[i];
  return CXLA_OK;
}

/* One operand's labels: batch-like, feature-like, then spatial dims must permute 0..rank-1. */
static cxla_status labels(cx_infer *ic, const char *what, int64_t a, int64_t b, const int64_t *sp, int ns) {
  int rank = ns + 2;
  unsigned seen = 0;
  for (int i = -2; i < ns; i++) {
    int64_t d = i == -2 ? a : i == -1 ? b : sp[i];
    if (d < 0 || d >= rank || (seen & (1u << d)))
      return cx_vfail(ic, "dim_labels: the %s labels must name each of its %d dimensions once", what, rank);
    seen |= 1u << d;
  }
  return CXLA_OK;
}

cxla_status cx_infer_conv(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  const cx_conv_dims *c = in->a.conv;
  CX_TRY(cx_vneed_array(ic, 0, "lhs"));
  CX_TRY(cx_vneed_array(ic, 1, "rhs"));
  const cx_shape *l = cx_vop(ic, 0), *r = cx_vop(ic, 1);
  if (!c) return cx_vfail(ic, "convolution needs dim_labels (e.g. b01f_01io->b01f)");
  int ns = c->nspatial;
  if (ns < 0 || ns > CXLA_MAX_RANK - 2) return cx_vfail(ic, "dim_labels: invalid number of spatial dimensions %d", ns);
  if (l->rank != ns + 2 || r->rank != ns + 2)
    return cx_vfail(ic, "dim_labels have %d spatial dimensions, so lhs and rhs need rank %d, got %s and %s", ns,
                    ns + 2, cx_vshape(ic, l), cx_vshape(ic, r));
  CX_TRY(labels(ic, "input", c->in_batch, c->in_feature, c->in_spatial, ns));
  CX_TRY(labels(ic, "kernel", c->k_in, c->k_out, c->k_spatial, ns));
  CX_TRY(labels(ic, "output", c->out_batch, c->out_feature, c->out_spatial, ns));
  const cx_window *w = &in->a.window;
  if (w->rank != ns || (ns > 0 && !w->d))
    return cx_vfail(ic, "window has %d dimensions but dim_labels have %d spatial dimensions", w->rank, ns);
  int64_t fg = in->a.feature_group_count, bg = in->a.batch_group_count;
  if (fg < 1 || bg < 1 || (fg > 1 && bg > 1))
    return cx_vfail(ic, "feature_group_count=%lld and batch_group_count=%lld must be >= 1 and not both > 1",
                    (long long)fg, (long long)bg);
  int64_t in_b = l->dims[c->in_batch], in_f = l->dims[c->in_feature];
  int64_t k_in = r->dims[c->k_in], k_out = r->dims[c->k_out];
  if (in_f % fg != 0 || in_f / fg != k_in)
    return cx_vfail(ic, "input feature size %lld must equal kernel input feature size %lld times "
                    "feature_group_count=%lld", (long long)in_f, (long long)k_in, (long long)fg);
  if (k_out % fg != 0 || k_out % bg != 0)
    return cx_vfail(ic, "kernel output feature size %lld must be divisible by feature_group_count=%lld and "
                    "batch_group_count=%lld", (long long)k_out, (long long)fg, (long long)bg);
  if (in_b % bg != 0)
    return cx_vfail(ic, "input batch size %lld must be divisible by batch_group_count=%lld", (long long)in_b,
                    (long long)bg);
  cx_vset_array(out, result_type(ic), ns + 2, NULL);
  out->dims[c->out_batch] = in_b / bg;
  out->dims[c->out_feature] = k_out;
  for (int i = 0; i < ns; i++) {
    int64_t ks = r->dims[c->k_spatial[i]];
    if (w->d[i].size != ks)
      return cx_vfail(ic, "window size %lld in spatial dimension %d differs from the kernel's size %lld",
                      (long long)w->d[i].size, i, (long long)ks);
    CX_TRY(cx_vwindow_dim(ic, i, l->dims[c->in_spatial[i]], &w->d[i], &out->dims[c->out_spatial[i]]));
  }
  return CXLA_OK;
}
