/* math_atan2.c — f32 atan2 as inline IR that vectorises (see math.h for the measured
 * accuracy), in double: a = min(|x|,|y|) / max(|x|,|y|) in [0, 1], above tan(pi/8) reduced by
 * atan(a) = pi/4 + atan((a-1)/(a+1)), then a Chebyshev fit (mpmath.chebyfit, 2^-47 relative);
 * the octant is restored from which of |x|, |y| was larger and x's sign, y's sign is copied.
 * C's special cases follow from that once 0/0 reads as 0 and inf/inf as 1 (atan2(+-0, -0) =
 * +-pi, atan2(+-inf, -inf) = +-3pi/4, ...). */
#include "codegen/math_ir.h"

/* (atan(t)/t - 1) / t^2 as a polynomial in s = t^2 on [0, tan(pi/8)^2] */
static const double ATAN_P[9] = {-0x1.be2efe9a9e93dp-6, 0x1.a76e53429f68dp-5, -0x1.0c533de737bdfp-4,
                                 0x1.3a9d98b72e3acp-4, -0x1.74563e04a6f0cp-4, 0x1.c71c382a9b0edp-4,
                                 -0x1.249248aa7aa01p-3, 0x1.99999998d17aap-3, -0x1.55555555553a4p-2};
#define PI 0x1.921fb54442d18p+1

LLVMValueRef cx_math_atan2_f32(cx_gen *g, LLVMValueRef y32, LLVMValueRef x32) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMValueRef y = LLVMBuildFPExt(b, y32, m->d, ""), x = LLVMBuildFPExt(b, x32, m->d, "");
  LLVMValueRef ax = cx_ir_intr1(g, "llvm.fabs", x), ay = cx_ir_intr1(g, "llvm.fabs", y);
  LLVMValueRef swap = fcmp(m, LLVMRealOGT, ay, ax);
  LLVMValueRef a = LLVMBuildFDiv(b, sel(m, swap, ax, ay), sel(m, swap, ay, ax), "");
  a = sel(m, fcmp(m, LLVMRealOEQ, ay, D(m, 0)), D(m, 0), a); /* 0/0, and 0/x */
  LLVMValueRef inf = D(m, __builtin_inf());
  a = sel(m, LLVMBuildAnd(b, fcmp(m, LLVMRealOEQ, ax, inf), fcmp(m, LLVMRealOEQ, ay, inf), ""), D(m, 1), a);
  LLVMValueRef big = fcmp(m, LLVMRealOGT, a, D(m, 0x1.a827999fcef32p-2));
  LLVMValueRef t = sel(m, big, LLVMBuildFDiv(b, LLVMBuildFSub(b, a, D(m, 1), ""), LLVMBuildFAdd(b, a, D(m, 1), ""), ""), a);
  LLVMValueRef s = mul(m, t, t);
  LLVMValueRef r = fma3(m, mul(m, t, s), horner(m, s, ATAN_P, 9), t);
  r = sel(m, big, LLVMBuildFAdd(b, r, D(m, PI / 4), ""), r);
  r = sel(m, swap, LLVMBuildFSub(b, D(m, PI / 2), r, ""), r);
  LLVMValueRef xneg = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildBitCast(b, x32, g->cg->t_i32, ""),
                                    LLVMConstInt(g->cg->t_i32, 0, 0), ""); /* -0 too */
  r = sel(m, xneg, LLVMBuildFSub(b, D(m, PI), r, ""), r);
  r = cx_ir_intr2(g, "llvm.copysign", r, y);
  r = sel(m, fcmp(m, LLVMRealUNO, x, y), LLVMBuildFAdd(b, x, y, ""), r);
  return LLVMBuildFPTrunc(b, r, g->cg->t_f32, "");
}
