/* math_f64.c — f64 exp and log as inline IR that vectorises (see math.h for the measured
 * accuracy), in the manner of math.c's f32 ones but without tables: Cody-Waite reduction by
 * ln2 (ln2's high part has 42 bits, so n ln2_hi is exact for every n that matters) and Taylor
 * polynomials long enough that truncation stays below 2^-57, the last additions ordered so the
 * one rounding that matters comes last (fdlibm's scheme for log). */
#include "codegen/math_ir.h"

#define LN2_HI 0x1.62e42fefa38p-1
#define LN2_LO 0x1.ef35793c7673p-45
#define SHIFT52 0x1.8p52 /* adding it rounds to an integer held in the low mantissa bits */

/* 1/k!, k = 13..2: e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 */
static const double EXP_P[12] = {0x1.6124613a86d09p-33, 0x1.1eed8eff8d898p-29, 0x1.ae64567f544e4p-26,
                                 0x1.27e4fb7789f5cp-22, 0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
                                 0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
                                 0x1.5555555555555p-5, 0x1.5555555555555p-3, 0x1p-1};

static LLVMValueRef pow2i(tb *m, LLVMValueRef n) {
  return LLVMBuildBitCast(m->b, shl(m, iadd(m, n, L(m, 1023)), 52), m->d, "");
}

LLVMValueRef cx_math_exp_f64(cx_gen *g, LLVMValueRef x) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  /* beyond these e^x is inf or rounds to 0; the clamp keeps 2^(n/2) normal */
  LLVMValueRef xc = sel(m, fcmp(m, LLVMRealOLT, x, D(m, -746)), D(m, -746), x);
  xc = sel(m, fcmp(m, LLVMRealOGT, xc, D(m, 710)), D(m, 710), xc);
  LLVMValueRef t = fma3(m, xc, D(m, 0x1.71547652b82fep+0), D(m, SHIFT52));
  LLVMValueRef n = LLVMBuildFSub(b, t, D(m, SHIFT52), ""), nn = LLVMBuildFNeg(b, n, "");
  LLVMValueRef ni = LLVMBuildSub(b, LLVMBuildBitCast(b, t, m->l, ""), LLVMBuildBitCast(b, D(m, SHIFT52), m->l, ""), "");
  LLVMValueRef r = fma3(m, nn, D(m, LN2_LO), fma3(m, nn, D(m, LN2_HI), xc));
  LLVMValueRef e = LLVMBuildFAdd(b, D(m, 1), fma3(m, mul(m, r, r), horner(m, r, EXP_P, 12), r), "");
  /* 2^n in two factors, so a denormal result rounds once, at the end */
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, L(m, 1), ""), n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef res = mul(m, mul(m, e, pow2i(m, n1)), pow2i(m, n2));
  return sel(m, fcmp(m, LLVMRealUNO, x, x), x, res);
}

/* 2/(2k+1), k = 11..1: log(1+f) = 2s + s z R(z), s = f/(2+f), z = s^2 <= (3-2 sqrt 2)^2 */
static const double LOG_R[11] = {0x1.642c8590b2164p-4, 0x1.8618618618618p-4, 0x1.af286bca1af28p-4,
                                 0x1.e1e1e1e1e1e1ep-4, 0x1.1111111111111p-3, 0x1.3b13b13b13b14p-3,
                                 0x1.745d1745d1746p-3, 0x1.c71c71c71c71cp-3, 0x1.2492492492492p-2,
                                 0x1.999999999999ap-2, 0x1.5555555555555p-1};

LLVMValueRef cx_math_log_f64(cx_gen *g, LLVMValueRef x) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMValueRef den = fcmp(m, LLVMRealOLT, x, D(m, 0x1p-1022)); /* denormals: into the normal range */
  LLVMValueRef xs = sel(m, den, mul(m, x, D(m, 0x1p54)), x), xb = LLVMBuildBitCast(b, xs, m->l, "");
  /* x = 2^k mu with mu in [sqrt(1/2), sqrt(2)) */
  LLVMValueRef k = LLVMBuildAShr(b, LLVMBuildSub(b, xb, L(m, 0x3fe6a09e667f3bcdull), ""), L(m, 52), "");
  LLVMValueRef mu = LLVMBuildBitCast(b, LLVMBuildSub(b, xb, shl(m, k, 52), ""), m->d, "");
  k = LLVMBuildSub(b, k, sel(m, den, L(m, 54), L(m, 0)), "");
  LLVMValueRef kf = LLVMBuildSIToFP(b, k, m->d, "");
  LLVMValueRef f = LLVMBuildFSub(b, mu, D(m, 1), ""); /* exact */
  LLVMValueRef s = LLVMBuildFDiv(b, f, LLVMBuildFAdd(b, D(m, 2), f, ""), ""), z = mul(m, s, s);
  LLVMValueRef hfsq = mul(m, D(m, 0.5), mul(m, f, f));
  /* log(1+f) = f - (hfsq - s (hfsq + z R(z))) */
  LLVMValueRef corr = fma3(m, s, fma3(m, z, horner(m, z, LOG_R, 11), hfsq), mul(m, kf, D(m, LN2_LO)));
  LLVMValueRef lp = LLVMBuildFSub(b, f, LLVMBuildFSub(b, hfsq, corr, ""), "");
  LLVMValueRef r = fma3(m, kf, D(m, LN2_HI), lp);
  r = sel(m, fcmp(m, LLVMRealOEQ, x, D(m, 0)), D(m, -__builtin_inf()), r);
  r = sel(m, fcmp(m, LLVMRealULT, x, D(m, 0)), D(m, __builtin_nan("")), r);
  r = sel(m, fcmp(m, LLVMRealOEQ, x, D(m, __builtin_inf())), x, r);
  return sel(m, fcmp(m, LLVMRealUNO, x, x), x, r);
}
