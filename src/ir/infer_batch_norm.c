/* infer_batch_norm.c — shape rules of batch-norm-training, -inference and -grad (XLA's
 * InferBatchNorm*Shape): a float operand of rank >= 1, feature_index one of its dimensions,
 * per-feature operands of rank 1 and the feature count, floats (of any precision, as XLA's
 * SameElementTypeIgnoringFpPrecision allows); grad_output the operand's shape. */
#include "ir/infer.h"

static const char *const k_roles[5] = {"operand", "scale", "offset", "mean", "variance"};
static const char *const k_grad_roles[5] = {"operand", "scale", "mean", "variance", "grad_output"};

/* Checks the operand and the per-feature operands 1..nfeat (roles[i] names operand i). */
static cxla_status check(cx_infer *ic, int nfeat, const char *const *roles) {
  CX_TRY(cx_vneed_array(ic, 0, roles[0]));
  const cx_shape *x = cx_vop(ic, 0);
  int64_t fi = ic->in->a.index;
  if (!cx_type_is_float(x->type))
    return cx_vfail(ic, "the operand must have a floating-point element type, got %s", cx_vtype(x->type));
  if (x->rank < 1) return cx_vfail(ic, "the operand must have rank >= 1, got %s", cx_vshape(ic, x));
  if (fi < 0 || fi >= x->rank)
    return cx_vfail(ic, "feature_index=%lld must be a dimension of the operand %s", (long long)fi, cx_vshape(ic, x));
  for (int i = 1; i <= nfeat; i++) {
    CX_TRY(cx_vneed_array(ic, i, roles[i]));
    const cx_shape *f = cx_vop(ic, i);
    if (!cx_type_is_float(f->type))
      return cx_vfail(ic, "%s must have a floating-point element type, got %s", roles[i], cx_vtype(f->type));
    if (f->rank != 1 || f->dims[0] != x->dims[fi])
      return cx_vfail(ic, "%s must be a rank-1 array of the %lld features, got %s", roles[i], (long long)x->dims[fi],
                      cx_vshape(ic, f));
  }
  return CXLA_OK;
}

/* (operand's shape, x[F], x[F]) in the operand's type, x. */
static cxla_status triple(cx_infer *ic, cx_shape *out) {
  const cx_shape *x = cx_vop(ic, 0);
  cx_shape *el = cx_vtuple(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[0] = *x;
  cx_vplain(&el[0]);
  int64_t f = x->dims[ic->in->a.index];
  cx_vset_array(&el[1], x->type, 1, &f);
  cx_vset_array(&el[2], x->type, 1, &f);
  return CXLA_OK;
}

cxla_status cx_infer_batch_norm_training(cx_infer *ic, cx_shape *out) {
  CX_TRY(check(ic, 2, k_roles));
  return triple(ic, out);
}

cxla_status cx_infer_batch_norm_inference(cx_infer *ic, cx_shape *out) {
  CX_TRY(check(ic, 4, k_roles));
  *out = *cx_vop(ic, 0);
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_batch_norm_grad(cx_infer *ic, cx_shape *out) {
  CX_TRY(check(ic, 3, k_grad_roles));
  CX_TRY(cx_vneed_array(ic, 4, "grad_output"));
  const cx_shape *x = cx_vop(ic, 0), *g = cx_vop(ic, 4);
  if (!cx_type_is_float(g->type) || !cx_shape_same_dims(g, x))
    return cx_vfail(ic, "grad_output must be a float array of the operand's dimensions %s, got %s", cx_vshape(ic, x),
                    cx_vshape(ic, g));
  return triple(ic, out);
}
