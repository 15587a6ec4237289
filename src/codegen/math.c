/* math.c — f32 exp, expm1, log, log1p, tanh, logistic and erf as inline IR (see math.h for
 * the measured accuracy). The polynomials are Chebyshev fits (mpmath.chebyfit) of the reduced
 * functions, with coefficients rounded to f32; llvm.fma is used where the error analysis
 * relies on a single rounding, and no other fast-math flags are set here, so the code computes
 * exactly what the accuracy sweep measured. Clamps are written as compare+select so that NaN
 * flows through unchanged. */
#include "codegen/math.h"

typedef struct mb {
  cx_gen *g;
  LLVMBuilderRef b;
  LLVMTypeRef f, i;
} mb;

static mb mk(cx_gen *g) {
  mb m = {g, g->cg->b, g->cg->t_f32, g->cg->t_i32};
  return m;
}
static LLVMValueRef C(mb *m, double c) { return LLVMConstReal(m->f, c); }
static LLVMValueRef I(mb *m, int64_t c) { return LLVMConstInt(m->i, (unsigned long long)c, 1); }
static LLVMValueRef add(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->b, a, b, ""); }
static LLVMValueRef sub(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->b, a, b, ""); }
static LLVMValueRef mul(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->b, a, b, ""); }
static LLVMValueRef fdiv(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(m->b, a, b, ""); }
static LLVMValueRef fma3(mb *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return cx_ir_intrinsic(m->g, "llvm.fma", &m->f, 1, args, 3);
}
static LLVMValueRef sel(mb *m, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(m->b, c, a, b, ""); }
static LLVMValueRef lt(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFCmp(m->b, LLVMRealOLT, a, b, ""); }
static LLVMValueRef gt(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFCmp(m->b, LLVMRealOGT, a, b, ""); }
static LLVMValueRef eq(mb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFCmp(m->b, LLVMRealOEQ, a, b, ""); }
static LLVMValueRef isnan_(mb *m, LLVMValueRef a) { return LLVMBuildFCmp(m->b, LLVMRealUNO, a, a, ""); }
static LLVMValueRef fabs_(mb *m, LLVMValueRef a) { return cx_ir_intr1(m->g, "llvm.fabs", a); }
static LLVMValueRef copysign_(mb *m, LLVMValueRef a, LLVMValueRef s) { return cx_ir_intr2(m->g, "llvm.copysign", a, s); }
static LLVMValueRef bits(mb *m, LLVMValueRef f) { return LLVMBuildBitCast(m->b, f, m->i, ""); }
static LLVMValueRef flt(mb *m, LLVMValueRef i) { return LLVMBuildBitCast(m->b, i, m->f, ""); }
/* 2^n for n in [-126, 127] built from the exponent field */
static LLVMValueRef pow2i(mb *m, LLVMValueRef n) {
  return flt(m, LLVMBuildShl(m->b, LLVMBuildAdd(m->b, n, I(m, 127), ""), I(m, 23), ""));
}
static LLVMValueRef horner(mb *m, LLVMValueRef x, const float *c, int n) {
  LLVMValueRef p = C(m, c[0]);
  for (int i = 1; i < n; i++) p = fma3(m, p, x, C(m, c[i]));
  return p;
}

/* (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2] */
static const float EXP_P[5] = {0x1.6d10fcp-10f, 0x1.120b62p-7f, 0x1.55551ap-5f, 0x1.5554dep-3f, 0x1p-1f};
#define SHIFT 0x1.8p23f   /* adding it rounds to an integer held in the low mantissa bits */
#define LN2_HI 0x1.62e4p-1f
#define LN2_LO 0x1.7f7d1cp-20f

/* x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite); n as float and as i32, without fptosi (which
 * is poison for NaN). */
static LLVMValueRef reduce_ln2(mb *m, LLVMValueRef x, LLVMValueRef *ni) {
  LLVMValueRef t = fma3(m, x, C(m, 0x1.715476p+0f), C(m, SHIFT));
  LLVMValueRef n = sub(m, t, C(m, SHIFT));
  *ni = LLVMBuildSub(m->b, bits(m, t), bits(m, C(m, SHIFT)), "");
  LLVMValueRef r = fma3(m, n, C(m, -LN2_HI), x);
  return fma3(m, n, C(m, -LN2_LO), r);
}

/* e^x for x that may be NaN; |x| large is clamped to where the result is 0 or inf. */
static LLVMValueRef exp_core(mb *m, LLVMValueRef x) {
  LLVMValueRef xc = sel(m, lt(m, x, C(m, -104)), C(m, -104), x);
  xc = sel(m, gt(m, xc, C(m, 89)), C(m, 89), xc);
  LLVMValueRef ni, r = reduce_ln2(m, xc, &ni);
  LLVMValueRef p = horner(m, r, EXP_P, 5);
  LLVMValueRef e = add(m, fma3(m, mul(m, r, r), p, r), C(m, 1));
  /* 2^n in two factors so that results in the denormal range round once, at the end */
  LLVMValueRef n1 = LLVMBuildAShr(m->b, ni, I(m, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(m->b, ni, n1, "");
  return mul(m, mul(m, e, pow2i(m, n1)), pow2i(m, n2));
}

LLVMValueRef cx_math_exp_f32(cx_gen *g, LLVMValueRef x) {
  mb m = mk(g);
  return sel(&m, isnan_(&m, x), x, exp_core(&m, x));
}

/* e^x for x <= 0 or NaN (value_sign.c proves it: softmax's x - max). The same numbers as
 * cx_math_exp_f32 bit for bit, with less work: no upper clamp, and 2^n in one step. e + 1 is
 * formed scaled by 2^25 (exact: fma(y, 2^25, 2^25) = 2^25 RN(y + 1)), so with n in [-150, 0]
 * the product 2^25 e 2^n stays a normal number and is exact as an add to the exponent field;
 * the one rounding is the final multiply by 2^-25, where the old two-factor scaling rounded
 * too, at the same value. */
LLVMValueRef cx_math_exp_nonpos_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  LLVMValueRef xc = sel(m, lt(m, x, C(m, -104)), C(m, -104), x);
  LLVMValueRef ni, r = reduce_ln2(m, xc, &ni);
  LLVMValueRef y = fma3(m, mul(m, r, r), horner(m, r, EXP_P, 5), r);
  LLVMValueRef e25 = fma3(m, y, C(m, 0x1p25f), C(m, 0x1p25f));
  LLVMValueRef sc = flt(m, LLVMBuildAdd(m->b, bits(m, e25), LLVMBuildShl(m->b, ni, I(m, 23), ""), "exp_nonpos"));
  return sel(m, isnan_(m, x), x, mul(m, sc, C(m, 0x1p-25f)));
}

LLVMValueRef cx_math_expm1_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  /* below -30 the result is -1 in f32; the clamp keeps 2^(n-1) a normal number */
  LLVMValueRef xc = sel(m, lt(m, x, C(m, -30)), C(m, -30), x);
  xc = sel(m, gt(m, xc, C(m, 89)), C(m, 89), xc);
  LLVMValueRef ni, r = reduce_ln2(m, xc, &ni);
  LLVMValueRef em = fma3(m, mul(m, r, r), horner(m, r, EXP_P, 5), r); /* expm1(r) */
  /* expm1(x) = 2^n (em + 1) - 1 = 2 (em t + (t - 1/2)) with t = 2^(n-1) */
  LLVMValueRef t = pow2i(m, LLVMBuildSub(m->b, ni, I(m, 1), ""));
  LLVMValueRef res = mul(m, C(m, 2), fma3(m, em, t, sub(m, t, C(m, 0.5))));
  LLVMValueRef tiny = lt(m, fabs_(m, x), C(m, 0x1p-23f)); /* keeps -0 and denormals exact */
  res = sel(m, tiny, x, res);
  return sel(m, isnan_(m, x), x, res);
}

/* (log1p(f) - f + f^2/2) / f^3 on [sqrt(1/2)-1, sqrt(2)-1] */
static const float LOG_Q[9] = {0x1.1d8ea6p-4f, -0x1.d635bcp-4f, 0x1.dea282p-4f, -0x1.fcf4c6p-4f,
                               0x1.23d21ap-3f, -0x1.555b4ap-3f, 0x1.999d5ap-3f, -0x1.fffffcp-3f,
                               0x1.555554p-2f};

/* k*ln2 + log1p(f) + c for f in [sqrt(1/2)-1, sqrt(2)-1]. */
static LLVMValueRef log_tail(mb *m, LLVMValueRef k, LLVMValueRef f, LLVMValueRef c) {
  LLVMValueRef q = horner(m, f, LOG_Q, 9);
  LLVMValueRef f2 = mul(m, f, f);
  LLVMValueRef lo = fma3(m, k, C(m, LN2_LO), fma3(m, mul(m, f2, f), q, fma3(m, C(m, -0.5), f2, c)));
  return fma3(m, k, C(m, LN2_HI), add(m, f, lo));
}

/* Splits positive finite u as 2^k * mu with mu in [sqrt(1/2), sqrt(2)); k as i32. */
static LLVMValueRef split_mantissa(mb *m, LLVMValueRef u, LLVMValueRef *k) {
  LLVMValueRef ub = bits(m, u);
  *k = LLVMBuildAShr(m->b, LLVMBuildSub(m->b, ub, I(m, 0x3f3504f3), ""), I(m, 23), "");
  return flt(m, LLVMBuildSub(m->b, ub, LLVMBuildShl(m->b, *k, I(m, 23), ""), ""));
}

static LLVMValueRef log_specials(mb *m, LLVMValueRef x, LLVMValueRef r, LLVMValueRef zero_at) {
  r = sel(m, eq(m, x, zero_at), C(m, -__builtin_inf()), r);
  r = sel(m, LLVMBuildFCmp(m->b, LLVMRealULT, x, zero_at, ""), C(m, __builtin_nan("")), r);
  return sel(m, eq(m, x, C(m, __builtin_inf())), x, r);
}

LLVMValueRef cx_math_log_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  LLVMValueRef den = lt(m, x, C(m, 0x1p-126f)); /* denormals: scale into the normal range */
  LLVMValueRef xs = sel(m, den, mul(m, x, C(m, 0x1p23f)), x);
  LLVMValueRef k, mu = split_mantissa(m, xs, &k);
  k = LLVMBuildSub(m->b, k, sel(m, den, I(m, 23), I(m, 0)), "");
  LLVMValueRef kf = LLVMBuildSIToFP(m->b, k, m->f, "");
  LLVMValueRef r = log_tail(m, kf, sub(m, mu, C(m, 1)), C(m, 0));
  return log_specials(m, x, r, C(m, 0));
}

LLVMValueRef cx_math_log1p_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  /* fdlibm's scheme: near 0 the polynomial takes x itself; elsewhere u = 1+x is split and
   * c = ((1+x) - u)/u corrects for the rounding of u. */
  LLVMValueRef u = add(m, C(m, 1), x);
  LLVMValueRef k, mu = split_mantissa(m, u, &k);
  LLVMValueRef kpos = LLVMBuildICmp(b, LLVMIntSGT, k, I(m, 0), "");
  LLVMValueRef c = sel(m, kpos, sub(m, C(m, 1), sub(m, u, x)), sub(m, x, sub(m, u, C(m, 1))));
  c = fdiv(m, c, u);
  LLVMValueRef small = LLVMBuildAnd(b, gt(m, x, C(m, -0x1.2bec34p-2f)), lt(m, x, C(m, 0x1.a827ap-2f)), "");
  LLVMValueRef f = sel(m, small, x, sub(m, mu, C(m, 1)));
  LLVMValueRef kf = sel(m, small, C(m, 0), LLVMBuildSIToFP(b, k, m->f, ""));
  c = sel(m, small, C(m, 0), c);
  LLVMValueRef r = log_tail(m, kf, f, c);
  r = log_specials(m, x, r, C(m, -1));
  /* NaN, and +-0 as itself: log_tail's 0*ln2 term would turn -0 into +0 (log1p is odd there,
   * and JAX's binomial sampler loops until log(u)/log1p(-p) is +inf for p = 0) */
  return sel(m, LLVMBuildFCmp(b, LLVMRealUEQ, x, C(m, 0), ""), x, r);
}

/* (tanh(x) - x) / x^3 as a polynomial in x^2 on |x| < 0.625 */
static const float TANH_P[6] = {0x1.2c83cp-9f, -0x1.116a16p-7f, 0x1.64a976p-6f, -0x1.ba08c4p-5f,
                                0x1.1110eap-3f, -0x1.555556p-2f};

LLVMValueRef cx_math_tanh_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  /* both forms on |x|, the sign copied at the end: odd, and tanh(-0) = -0 (x + x^3 p(x^2) is +0
   * there, -0 and the +0 of x^3 p being opposite zeros) */
  LLVMValueRef a = fabs_(m, x), z = mul(m, x, x);
  LLVMValueRef small = fma3(m, mul(m, a, z), horner(m, z, TANH_P, 6), a);
  /* 1 - 2/(e^2a + 1), which rounds to 1 from a > 9.5 on (2/(e^19 + 1) < 2^-25): a clamped
   * there (NaN passes) gives exp_core's e^2a with less work, the same bits on [0, 9.5]: no
   * lower clamp (2a >= 0), and 2^n for n in [0, 28] in one exact step */
  LLVMValueRef ac = sel(m, gt(m, a, C(m, 9.5)), C(m, 9.5), a);
  LLVMValueRef ni, r = reduce_ln2(m, mul(m, C(m, 2), ac), &ni);
  LLVMValueRef e = mul(m, add(m, fma3(m, mul(m, r, r), horner(m, r, EXP_P, 5), r), C(m, 1)), pow2i(m, ni));
  LLVMValueRef big = sub(m, C(m, 1), fdiv(m, C(m, 2), add(m, e, C(m, 1))));
  return copysign_(m, sel(m, lt(m, a, C(m, 0.625)), small, big), x);
}

LLVMValueRef cx_math_logistic_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  /* e = e^-|x| <= 1: 1/(1+e) for x >= 0 and e/(1+e) below, so large negative x keeps its
   * tiny (denormal) result instead of 1/inf */
  LLVMValueRef e = exp_core(m, LLVMBuildFNeg(m->b, fabs_(m, x), ""));
  LLVMValueRef num = sel(m, LLVMBuildFCmp(m->b, LLVMRealOGE, x, C(m, 0), ""), C(m, 1), e);
  LLVMValueRef r = fdiv(m, num, add(m, C(m, 1), e));
  return sel(m, isnan_(m, x), x, r);
}

/* erf(x)/x - 1 as a polynomial in x^2 on |x| < 0.921875 */
static const float ERF_S[7] = {0x1.5fcd12p-14f, -0x1.ab25e6p-11f, 0x1.54e222p-8f, -0x1.b8114cp-6f,
                               0x1.ce2e2ap-4f, -0x1.812744p-2f, 0x1.06eba8p-3f};
/* erfc(x) e^(x^2) as a polynomial in s = x - 2.421875 on [0.921875, 3.921875] */
static const float ERF_R[13] = {0x1.1e5df8p-23f, -0x1.24819ep-21f, 0x1.4372cep-20f, -0x1.31586ep-18f,
                                0x1.4647e8p-16f, -0x1.2882d6p-14f, 0x1.01eedcp-12f, -0x1.b85ccap-11f,
                                0x1.6b974ep-9f, -0x1.20ffbcp-7f, 0x1.b8d982p-6f, -0x1.411b62p-4f,
                                0x1.bbf25ep-3f};

LLVMValueRef cx_math_erf_f32(cx_gen *g, LLVMValueRef x) {
  mb m0 = mk(g), *m = &m0;
  LLVMValueRef a = fabs_(m, x), z = mul(m, x, x);
  LLVMValueRef small = fma3(m, x, horner(m, z, ERF_S, 7), x);
  /* beyond 3.921875 erf rounds to +-1 */
  LLVMValueRef huge = gt(m, a, C(m, 3.921875));
  LLVMValueRef ac = sel(m, huge, C(m, 3.921875), a);
  LLVMValueRef r = horner(m, sub(m, ac, C(m, 0x1.36p+1f)), ERF_R, 13);
  LLVMValueRef e = exp_core(m, LLVMBuildFNeg(m->b, mul(m, ac, ac), ""));
  LLVMValueRef big = fma3(m, LLVMBuildFNeg(m->b, e, ""), r, C(m, 1));
  big = copysign_(m, sel(m, huge, C(m, 1), big), x);
  LLVMValueRef res = sel(m, lt(m, a, C(m, 0.921875)), small, big);
  return sel(m, isnan_(m, x), x, res);
}
