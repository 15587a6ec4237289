/* math.h — f32 transcendental functions as inline LLVM IR (range reduction + polynomials,
 * straight-line code with selects), so loops that use them vectorise; LLVM's llvm.exp.f32 &
 * co. become scalar libm calls. Each handles NaN, +-inf, +-0, overflow, underflow and denormals
 * like libm. Max error against the correctly rounded result (the interpreter computes in
 * double and rounds):
 *   math.c, in f32, measured over all 2^32 f32 inputs:
 *     exp 1 ulp, expm1 2 ulp, log 1 ulp, log1p 2 ulp, tanh 1 ulp, logistic 2 ulp, erf 1 ulp;
 *   math_trig.c, math_pow.c, math_atan2.c, math_cbrt.c, in double (relative error < 2^-36
 *   before the one rounding to f32), bound 1 ulp, measured 0 ulp on every sweep:
 *     sin, cos, tan (any |x|: Payne-Hanek above 2^24), pow, atan2, cbrt;
 *   math_f64.c, f64 exp and log: 1 ulp of f64 against glibc's (measured on 1M points over
 *     all 2^64 bit patterns and dense ranges). The other f64 functions: libmvec.c. 
 * (tests/unit/test_codegen_math.c re-measures them on dense sweeps and fails above these
 * bounds; docs/numerics.md has the table.) */
#ifndef CX_CODEGEN_MATH_H
#define CX_CODEGEN_MATH_H
#include "codegen/gen.h"

LLVMValueRef cx_math_exp_f32(cx_gen *g, LLVMValueRef x);
/* e^x where x is known <= 0 or NaN: bit for bit cx_math_exp_f32's result there, cheaper */
LLVMValueRef cx_math_exp_nonpos_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_expm1_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_log_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_log1p_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_tanh_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_logistic_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_erf_f32(cx_gen *g, LLVMValueRef x);
/* math_trig.c: computed in double */
LLVMValueRef cx_math_sin_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_cos_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_tan_f32(cx_gen *g, LLVMValueRef x);
/* math_cbrt.c, math_pow.c: computed in double */
LLVMValueRef cx_math_cbrt_f32(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_pow_f32(cx_gen *g, LLVMValueRef x, LLVMValueRef y);
/* math_atan2.c: computed in double */
LLVMValueRef cx_math_atan2_f32(cx_gen *g, LLVMValueRef y, LLVMValueRef x);

/* math_f64.c */
LLVMValueRef cx_math_exp_f64(cx_gen *g, LLVMValueRef x);
LLVMValueRef cx_math_log_f64(cx_gen *g, LLVMValueRef x);

#endif
