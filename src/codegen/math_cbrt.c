/* math_cbrt.c — f32 cube root as inline IR that vectorises (see math.h for the measured
 * accuracy): a first guess of the reciprocal cube root from the f32 exponent bits divided by 3,
 * four Newton steps r += r (1 - a r^3) / 3 in double (the relative error goes 3.4% -> 2e-3 ->
 * 1e-5 -> 2e-10 -> 1e-16), then a r^2, rounded once to f32. No division, where the former two
 * Halley steps each divided in double: 4M f32 on 2 cores, 2.70 -> 2.46 ms. On 73M random f32
 * and three whole binades the results equal the f64 cbrt rounded to f32. */
#include "codegen/math_ir.h"

LLVMValueRef cx_math_cbrt_f32(cx_gen *g, LLVMValueRef x) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f = g->cg->t_f32, i = g->cg->t_i32;
  /* f32 denormals: scaled by 2^24 into the normal range, the root by 2^-8 after */
  LLVMValueRef a = cx_ir_intr1(g, "llvm.fabs", x);
  LLVMValueRef den = LLVMBuildFCmp(b, LLVMRealOLT, a, LLVMConstReal(f, 0x1p-126), "");
  LLVMValueRef as = LLVMBuildSelect(b, den, LLVMBuildFMul(b, a, LLVMConstReal(f, 0x1p24), ""), a, "");
  /* 0x54a232a0 - bits/3 is 2^(-e/3) with the mantissa interpolated: within 3.4% of a^(-1/3)
   * (the constant minimises that bound over the three exponent residues) */
  LLVMValueRef gb = LLVMBuildSub(b, LLVMConstInt(i, 0x54a232a0, 0),
                                 LLVMBuildUDiv(b, LLVMBuildBitCast(b, as, i, ""), LLVMConstInt(i, 3, 0), ""), "");
  LLVMValueRef ad = LLVMBuildFPExt(b, as, m->d, "");
  LLVMValueRef r = LLVMBuildFPExt(b, LLVMBuildBitCast(b, gb, f, ""), m->d, "");
  for (int k = 0; k < 4; k++) {
    LLVMValueRef t = mul(m, mul(m, ad, r), mul(m, r, r));
    r = fma3(m, r, mul(m, LLVMBuildFSub(b, D(m, 1), t, ""), D(m, 1.0 / 3.0)), r);
  }
  LLVMValueRef y = mul(m, ad, mul(m, r, r));
  y = sel(m, den, mul(m, y, D(m, 0x1p-8)), y);
  LLVMValueRef res = cx_ir_intr2(g, "llvm.copysign", LLVMBuildFPTrunc(b, y, f, ""), x);
  /* 0, inf and NaN are their own cube roots */
  LLVMValueRef self = LLVMBuildFCmp(b, LLVMRealUEQ, a, LLVMConstReal(f, 0), "");
  self = LLVMBuildOr(b, self, LLVMBuildFCmp(b, LLVMRealOEQ, a, LLVMConstReal(f, __builtin_inff()), ""), "");
  return LLVMBuildSelect(b, self, x, res, "");
}
