/* math_pow.c — f32 x^y as inline IR that vectorises (see math.h for the measured accuracy):
 * 2^(y log2|x|) in double, log2 from 2 atanh((m-1)/(m+1)) and 2^r from its Taylor series
 * (both truncated below 2^-45 relative), so y log2|x| is within 2^-44 absolute where the f32
 * result is finite and nonzero and the one rounding to f32 decides the result. Every special
 * case of C's pow (the interpreter's judge) is a select: zeros, infinities, NaN, negative x
 * with integer and non-integer y. */
#include "codegen/math_ir.h"

/* 2/ln2 / (2j+1), j = 8..0: log2(m) = f P(f^2) with f = (m-1)/(m+1), |f| <= 3-2 sqrt 2 */
static const double LOG2_P[9] = {0x1.5b9ac9b743f0dp-3, 0x1.89f3b1694cffep-3, 0x1.c68f568d31760p-3,
                                 0x1.0c9a84994022dp-2, 0x1.484b13d7c02a9p-2, 0x1.a61762a7aded9p-2,
                                 0x1.2776c50ef9bfep-1, 0x1.ec709dc3a03fdp-1, 0x1.71547652b82fep+1};
/* ln2^k / k!, k = 11..0: 2^r on |r| <= 1/2 */
static const double EXP2_P[12] = {0x1.e8cac7351bb25p-32, 0x1.e4cf5158b8ecap-28, 0x1.b5253d395e7c4p-24,
                                  0x1.62c0223a5c824p-20, 0x1.ffcbfc588b0c7p-17, 0x1.430912f86c787p-13,
                                  0x1.5d87fe78a6731p-10, 0x1.3b2ab6fba4e77p-7, 0x1.c6b08d704a0c0p-5,
                                  0x1.ebfbdff82c58fp-3, 0x1.62e42fefa39efp-1, 0x1p+0};
#define SHIFT52 0x1.8p52 /* adding it rounds to an integer held in the low mantissa bits */

/* log2(a) for a > 0 finite in double (f32 denormals are normal here), +-inf at inf and 0 */
static LLVMValueRef log2_d(tb *m, LLVMValueRef a) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef ab = LLVMBuildBitCast(b, a, m->l, "");
  /* a = 2^k mu with mu in [sqrt(1/2), sqrt(2)) */
  LLVMValueRef k = LLVMBuildAShr(b, LLVMBuildSub(b, ab, L(m, 0x3fe6a09e667f3bcdull), ""), L(m, 52), "");
  LLVMValueRef mu = LLVMBuildBitCast(b, LLVMBuildSub(b, ab, shl(m, k, 52), ""), m->d, "");
  LLVMValueRef f = LLVMBuildFDiv(b, LLVMBuildFSub(b, mu, D(m, 1), ""), LLVMBuildFAdd(b, mu, D(m, 1), ""), "");
  LLVMValueRef r = fma3(m, f, horner(m, mul(m, f, f), LOG2_P, 9), LLVMBuildSIToFP(b, k, m->d, ""));
  r = sel(m, fcmp(m, LLVMRealOEQ, a, D(m, 0)), D(m, -__builtin_inf()), r);
  return sel(m, fcmp(m, LLVMRealOEQ, a, D(m, __builtin_inf())), a, r);
}

/* 2^t in double; beyond +-200 (far outside f32's range) t is clamped, so +-inf give inf and 0 */
static LLVMValueRef exp2_d(tb *m, LLVMValueRef t) {
  LLVMBuilderRef b = m->b;
  t = sel(m, fcmp(m, LLVMRealOLT, t, D(m, -200)), D(m, -200), t);
  t = sel(m, fcmp(m, LLVMRealOGT, t, D(m, 200)), D(m, 200), t);
  LLVMValueRef s = LLVMBuildFAdd(b, t, D(m, SHIFT52), "");
  LLVMValueRef r = LLVMBuildFSub(b, t, LLVMBuildFSub(b, s, D(m, SHIFT52), ""), ""); /* exact */
  /* 2^n from the low bits of s (n in [-200, 200]); NaN t stays NaN through r */
  LLVMValueRef n = LLVMBuildSub(b, LLVMBuildBitCast(b, s, m->l, ""), LLVMBuildBitCast(b, D(m, SHIFT52), m->l, ""), "");
  LLVMValueRef p2n = LLVMBuildBitCast(b, shl(m, iadd(m, n, L(m, 1023)), 52), m->d, "");
  return mul(m, horner(m, r, EXP2_P, 12), p2n);
}

/* whether y is an integer (infinities count, as even ones) */
static LLVMValueRef is_int(tb *m, LLVMValueRef y) {
  return fcmp(m, LLVMRealOEQ, cx_ir_intr1(m->g, "llvm.rint", y), y);
}

LLVMValueRef cx_math_pow_f32(cx_gen *g, LLVMValueRef x32, LLVMValueRef y32) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f = g->cg->t_f32;
  LLVMValueRef x = LLVMBuildFPExt(b, x32, m->d, ""), y = LLVMBuildFPExt(b, y32, m->d, "");
  LLVMValueRef ax = cx_ir_intr1(g, "llvm.fabs", x), ay = cx_ir_intr1(g, "llvm.fabs", y);
  LLVMValueRef mag = exp2_d(m, mul(m, y, log2_d(m, ax)));
  LLVMValueRef yint = is_int(m, y), yodd = LLVMBuildAnd(b, yint, LLVMBuildNot(b, is_int(m, mul(m, y, D(m, 0.5))), ""), "");
  LLVMValueRef xneg = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildBitCast(b, x32, g->cg->t_i32, ""),
                                    LLVMConstInt(g->cg->t_i32, 0, 0), ""); /* -0 too */
  LLVMValueRef r = sel(m, LLVMBuildAnd(b, xneg, yodd, ""), LLVMBuildFNeg(b, mag, ""), mag);
  /* negative finite x and non-integer y: NaN (x = -inf gives +-0 or +-inf by the rules above) */
  LLVMValueRef negfin = fcmp(m, LLVMRealOGT, x, D(m, -__builtin_inf()));
  negfin = LLVMBuildAnd(b, negfin, fcmp(m, LLVMRealOLT, x, D(m, 0)), "");
  r = sel(m, LLVMBuildAnd(b, negfin, LLVMBuildNot(b, yint, ""), ""), D(m, __builtin_nan("")), r);
  /* (+-1)^(+-inf) = 1: y log2|x| is inf * 0 there */
  LLVMValueRef one_inf = LLVMBuildAnd(b, fcmp(m, LLVMRealOEQ, ax, D(m, 1)), fcmp(m, LLVMRealOEQ, ay, D(m, __builtin_inf())), "");
  r = sel(m, one_inf, D(m, 1), r);
  r = sel(m, fcmp(m, LLVMRealUNO, x, y), LLVMBuildFAdd(b, x, y, ""), r);
  /* x^0 = 1^y = 1 even for NaN */
  r = sel(m, LLVMBuildOr(b, fcmp(m, LLVMRealOEQ, y, D(m, 0)), fcmp(m, LLVMRealOEQ, x, D(m, 1)), ""), D(m, 1), r);
  return LLVMBuildFPTrunc(b, r, f, "");
}
