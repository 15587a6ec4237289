/* infer_scaled_dot.c — the shape rules of scaled-dot (XLA's ShapeVerifier::HandleScaledDot:
 * the dot's rule for lhs and rhs, then each scale's) and of the __op$block_scaled_dot
 * custom-call (the checks of XLA's BlockScalingRewriter). ir/scaled_dot.h says what they
 * compute. */
#include "ir/infer.h"
#include "ir/minifloat.h"
#include "ir/scaled_dot.h"

static const char *const k_names[5] = {"lhs", "rhs", "lhs_scale", "rhs_scale", "global_scale"};

/* Operand i: an array cxla can convert to the result type. */
static cxla_status value_array(cx_infer *ic, int i) {
  CX_TRY(cx_vneed_array(ic, i, k_names[i]));
  if (cx_type_is_complex(cx_vop(ic, i)->type))
    return cx_vfail(ic, "%s must be an integer or floating-point array, got %s", k_names[i], cx_vshape(ic, cx_vop(ic, i)));
  return CXLA_OK;
}

static cxla_status result_type(cx_infer *ic, cxla_type t) {
  if (!cx_type_is_int(t) && !cx_type_is_float(t))
    return cx_vfail(ic, "the result must be an integer or floating-point array, got %s", cx_vtype(t));
  return CXLA_OK;
}

/* XLA's primitive_util::HigherPrecisionType: float over integer, then more range (the
 * overflow exponent), more precision (significand bits), more bits, signed over unsigned. */
static void precision_key(cxla_type t, int key[4]) {
  int fl = cx_type_is_float(t), ov = -1, sig = -1;
  const cx_mf_format *f = cx_mf_format_of(t);
  if (f) {
    int top = (1 << f->ebits) - 1;
    if (f->kind == CX_MF_IEEE || f->kind == CX_MF_E8M0) top--; /* the all-ones exponent is inf/NaN */
    ov = top - f->bias + 1, sig = f->mbits + 1;
  } else if (fl) {
    ov = t == CXLA_F16 ? 16 : t == CXLA_F64 ? 1024 : 128;
    sig = t == CXLA_F16 ? 11 : t == CXLA_BF16 ? 8 : t == CXLA_F32 ? 24 : 53;
  }
  key[0] = ov, key[1] = sig, key[2] = cx_type_bits(t), key[3] = cx_type_kind(t) == CX_KIND_SINT;
}

static cxla_type higher_precision(cxla_type a, cxla_type b) {
  int ka[4], kb[4];
  precision_key(a, ka);
  precision_key(b, kb);
  for (int i = 0; i < 4; i++)
    if (ka[i] != kb[i]) return ka[i] > kb[i] ? a : b;
  return a;
}

/* XLA's IsNoOpScale: a bf16 scale of all-ones dims (a scalar too) for a bf16 operand that is
 * not all ones itself. */
static int noop_scale(const cx_shape *x, const cx_shape *s) {
  if (s->type != CXLA_BF16 || x->type != CXLA_BF16) return 0;
  int ones = 1, other = 0;
  for (int d = 0; d < s->rank; d++) ones &= s->dims[d] == 1;
  for (int d = 0; d < x->rank; d++) other |= x->dims[d] != 1;
  return ones && other;
}

/* XLA's ScalesShapeVerifier for operand i and its scale i + 2. */
static cxla_status scale_rule(cx_infer *ic, int i) {
  const cx_shape *x = cx_vop(ic, i), *s = cx_vop(ic, i + 2);
  if (noop_scale(x, s)) return CXLA_OK;
  if (s->rank != x->rank)
    return cx_vfail(ic, "%s %s has a different number of dimensions than %s %s (only a bf16 scalar of a bf16 "
                    "operand stands for no scale)", k_names[i + 2], cx_vshape(ic, s), k_names[i], cx_vshape(ic, x));
  const cx_ints *c = i ? &ic->in->a.dot.rhs_contract : &ic->in->a.dot.lhs_contract;
  if (c->n != 1)
    return cx_vfail(ic, "%s_contracting_dims %s: a scaled operand must have exactly one contracting dimension",
                    i ? "rhs" : "lhs", cx_vints(ic, c));
  for (int d = 0; d < x->rank; d++)
    if (s->dims[d] == 0 ? x->dims[d] != 0 : x->dims[d] % s->dims[d] != 0)
      return cx_vfail(ic, "dimension %d of %s %s should be a multiple of dimension %d of %s %s", d, k_names[i],
                      cx_vshape(ic, x), d, k_names[i + 2], cx_vshape(ic, s));
  return CXLA_OK;
}

cxla_status cx_infer_scaled_dot(cx_infer *ic, cx_shape *out) {
  for (int i = 0; i < 4; i++) CX_TRY(value_array(ic, i));
  cxla_type declared = ic->in->shape.type;
  if (declared != CXLA_INVALID) CX_TRY(result_type(ic, declared));
  cx_shape dot;
  CX_TRY(cx_infer_dot(ic, &dot)); /* the dimension numbers against lhs and rhs */
  CX_TRY(scale_rule(ic, 0));
  CX_TRY(scale_rule(ic, 1));
  if (cx_vop(ic, 2)->rank == 0 && cx_vop(ic, 3)->rank == 0)
    return cx_vfail(ic, "at least one of the scales should be not a scalar (a scalar scale is no scale)");
  *out = dot;
  out->type = declared != CXLA_INVALID ? declared : higher_precision(cx_vop(ic, 0)->type, cx_vop(ic, 1)->type);
  return CXLA_OK;
}

/* ---- custom-call __op$block_scaled_dot ---- */

static cxla_status block_scale_rule(cx_infer *ic, int i, int has_b, int64_t b) {
  const cx_shape *x = cx_vop(ic, i), *s = cx_vop(ic, i + 2);
  int r = x->rank;
  if (s->rank != r)
    return cx_vfail(ic, "%s %s must have the rank of %s %s", k_names[i + 2], cx_vshape(ic, s), k_names[i], cx_vshape(ic, x));
  if (r == 3 && s->dims[0] != x->dims[0])
    return cx_vfail(ic, "%s %s must have the batch size of %s %s", k_names[i + 2], cx_vshape(ic, s), k_names[i],
                    cx_vshape(ic, x));
  if (s->dims[r - 2] < x->dims[r - 2])
    return cx_vfail(ic, "%s %s has fewer rows than %s %s (a scale may be padded, not short)", k_names[i + 2],
                    cx_vshape(ic, s), k_names[i], cx_vshape(ic, x));
  int64_t k = x->dims[r - 1], n = s->dims[r - 1];
  if (has_b) {
    int64_t need = k / b + (k % b != 0);
    if (need > n)
      return cx_vfail(ic, "%s %s has %lld blocks of %lld along the contracting dimension, %s %s needs %lld", k_names[i + 2],
                      cx_vshape(ic, s), (long long)n, (long long)b, k_names[i], cx_vshape(ic, x), (long long)need);
    n = need;
  }
  if (k <= 0 || n <= 0 || k % n != 0)
    return cx_vfail(ic, "the contracting dimension of %s %s (the last) must be a positive multiple of the %lld blocks "
                    "of %s %s", k_names[i], cx_vshape(ic, x), (long long)n, k_names[i + 2], cx_vshape(ic, s));
  return CXLA_OK;
}

cxla_status cx_infer_block_scaled_dot(cx_infer *ic, cx_shape *out) {
  int n = ic->in->nops;
  if (n < 3 || n > 5)
    return cx_vfail(ic, CX_BLOCK_SCALED_DOT_TARGET " takes 3 to 5 operands (lhs, rhs, lhs_scale[, rhs_scale[, "
                    "global_scale]]), got %d", n);
  for (int i = 0; i < n && i < 4; i++) CX_TRY(value_array(ic, i));
  CX_TRY(cx_vdeclared_array(ic));
  cxla_type t = ic->in->shape.type;
  CX_TRY(result_type(ic, t));
  const cx_shape *l = cx_vop(ic, 0), *r = cx_vop(ic, 1);
  int rk = l->rank;
  if (rk != r->rank || (rk != 2 && rk != 3))
    return cx_vfail(ic, "lhs and rhs must both have rank 2 ([M,K], [N,K]) or 3 ([B,M,K], [B,N,K]), got %s and %s",
                    cx_vshape(ic, l), cx_vshape(ic, r));
  if (l->dims[rk - 1] != r->dims[rk - 1] || (rk == 3 && l->dims[0] != r->dims[0]))
    return cx_vfail(ic, "lhs %s and rhs %s must have the same contracting (last) and batch (first, at rank 3) sizes",
                    cx_vshape(ic, l), cx_vshape(ic, r));
  int64_t b = 0;
  int has_b = cx_block_scaled_dot_block_size(ic->in, &b);
  if (has_b && b <= 0) return cx_vfail(ic, "backend_config block_size must be positive, got %lld", (long long)b);
  for (int i = 0; i < 2 && i + 2 < n; i++) CX_TRY(block_scale_rule(ic, i, has_b, b));
  if (n == 5) {
    const cx_shape *g = cx_vop(ic, 4);
    if (g->type == CXLA_TUPLE || g->rank != 0 || g->type != t)
      return cx_vfail(ic, "global_scale must be a scalar of the result type %s, got %s", cx_vtype(t), cx_vshape(ic, g));
  }
  cx_vset_array(out, t, 0, NULL);
  if (rk == 3) out->dims[out->rank++] = l->dims[0];
  out->dims[out->rank++] = l->dims[rk - 2];
  out->dims[out->rank++] = r->dims[rk - 2];
  return CXLA_OK;
}
