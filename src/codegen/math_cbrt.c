/* math_cbrt.c — f32 cube root as inline IR that vectorises (see math.h for the measured
 * accuracy): a first guess from the f32 exponent bits divided by 3, then two Halley steps in
 * double (each cubes the relative error: 4% -> 1e-4 -> 1e-12), rounded once to f32. */
#include "codegen/math_ir.h"

LLVMValueRef cx_math_cbrt_f32(cx_gen *g, LLVMValueRef x) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f = g->cg->t_f32, i = g->cg->t_i32;
  /* f32 denormals: scaled by 2^24 into the normal range, the root by 2^-8 after */
  LLVMValueRef a = cx_ir_intr1(g, "llvm.fabs", x);
  LLVMValueRef den = LLVMBuildFCmp(b, LLVMRealOLT, a, LLVMConstReal(f, 0x1p-126), "");
  LLVMValueRef as = LLVMBuildSelect(b, den, LLVMBuildFMul(b, a, LLVMConstReal(f, 0x1p24), ""), a, "");
  /* bits/3 + (127 - 127/3) << 23 is 2^(e/3) with the mantissa interpolated, within 4% */
  LLVMValueRef gb = LLVMBuildUDiv(b, LLVMBuildBitCast(b, as, i, ""), LLVMConstInt(i, 3, 0), "");
  gb = LLVMBuildAdd(b, gb, LLVMConstInt(i, 0x2a5137a5, 0), "");
  LLVMValueRef ad = LLVMBuildFPExt(b, as, m->d, "");
  LLVMValueRef y = LLVMBuildFPExt(b, LLVMBuildBitCast(b, gb, f, ""), m->d, "");
  for (int k = 0; k < 2; k++) { /* y (y^3 + 2a) / (2 y^3 + a) */
    LLVMValueRef y3 = mul(m, mul(m, y, y), y);
    LLVMValueRef num = fma3(m, D(m, 2), ad, y3), den3 = fma3(m, D(m, 2), y3, ad);
    y = mul(m, y, LLVMBuildFDiv(b, num, den3, ""));
  }
  y = sel(m, den, mul(m, y, D(m, 0x1p-8)), y);
  LLVMValueRef r = cx_ir_intr2(g, "llvm.copysign", LLVMBuildFPTrunc(b, y, f, ""), x);
  /* 0, inf and NaN are their own cube roots */
  LLVMValueRef self = LLVMBuildFCmp(b, LLVMRealUEQ, a, LLVMConstReal(f, 0), "");
  self = LLVMBuildOr(b, self, LLVMBuildFCmp(b, LLVMRealOEQ, a, LLVMConstReal(f, __builtin_inff()), ""), "");
  return LLVMBuildSelect(b, self, x, r, "");
}
