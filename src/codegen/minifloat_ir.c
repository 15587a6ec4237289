/* minifloat_ir.c — the 8- and 4-bit floats (ir/minifloat.h) in generated code: a register of
 * such a type is an f32 (every value is exact in f32), memory one byte holding the code. The
 * conversions compute what cx_mf_decode and cx_mf_encode compute, with integer and float ops
 * only (no tables, no calls), so loops over them still vectorize:
 *  - decode: the code's fields placed into an f32's (normal), or the mantissa times the smallest
 *    subnormal (subnormal), then the type's infinities and NaNs, then the sign;
 *  - encode from f32 or f64 (a convert from f64 rounds once, from the double): a value under the
 *    smallest normal rounds in units of the smallest subnormal (roundeven);
 *    a larger one rounds its bit pattern at the mantissa's last kept bit (add half an ulp less
 *    one plus the last kept bit, shift), then the exponent is re-biased; then overflow, NaN and
 *    infinity as the type has them, and the sign. */
#include <math.h>
#include "codegen/minifloat_ir.h"
#include "ir/minifloat.h"

/* what the conversions build with, all from the builder: they need nothing else of codegen */
typedef struct mf_ir {
  LLVMBuilderRef b;
  LLVMContextRef llctx;
  LLVMModuleRef mod;
  LLVMTypeRef t_i8, t_i32, t_i64, t_f32, t_f64;
} mf_ir;

static mf_ir mf_ir_of(LLVMBuilderRef b) {
  LLVMModuleRef mod = LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(b)));
  LLVMContextRef c = LLVMGetModuleContext(mod);
  return (mf_ir){b, c, mod, LLVMInt8TypeInContext(c), LLVMInt32TypeInContext(c), LLVMInt64TypeInContext(c),
                 LLVMFloatTypeInContext(c), LLVMDoubleTypeInContext(c)};
}

static LLVMValueRef ki(LLVMTypeRef t, uint64_t v) { return LLVMConstInt(t, (unsigned long long)v, 0); }

/* f8e8m0fnu: the code is an f32's biased exponent (the same bias), 0 a subnormal 2^-127;
 * 0xff NaN. */
static LLVMValueRef e8m0_decode(const mf_ir *g, LLVMValueRef code8) {
  LLVMBuilderRef b = g->b;
  LLVMTypeRef I = g->t_i32;
  LLVMValueRef c = LLVMBuildZExt(b, code8, I, "");
  LLVMValueRef v = LLVMBuildBitCast(b, LLVMBuildShl(b, c, ki(I, 23), ""), g->t_f32, "");
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, c, ki(I, 0), ""), LLVMConstReal(g->t_f32, ldexp(1, -127)), v, "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, c, ki(I, 0xff), ""), LLVMConstReal(g->t_f32, NAN), v, "");
}

/* f8e8m0fnu from an f32 (an f64 rounds to f32 first, as ml_dtypes): cx_mf_encode's rule on the
 * f32's exponent and mantissa fields. */
static LLVMValueRef e8m0_encode(const mf_ir *g, LLVMValueRef x) {
  LLVMBuilderRef b = g->b;
  LLVMTypeRef I = g->t_i32;
  if (LLVMTypeOf(x) == g->t_f64) x = LLVMBuildFPTrunc(b, x, g->t_f32, "");
  LLVMValueRef u = LLVMBuildBitCast(b, x, I, "");
  LLVMValueRef e = LLVMBuildLShr(b, LLVMBuildAnd(b, u, ki(I, 0x7f800000), ""), ki(I, 23), "");
  LLVMValueRef m = LLVMBuildAnd(b, u, ki(I, 0x7fffff), "");
  LLVMValueRef up = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntUGE, m, ki(I, 0x400000), ""), I, "");
  LLVMValueRef normal = LLVMBuildAdd(b, e, up, "");
  normal = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, normal, ki(I, 254), ""), ki(I, 0xff), normal, "");
  LLVMValueRef sub = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntUGT, m, ki(I, 0x400000), ""), I, "");
  LLVMValueRef code = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, e, ki(I, 0), ""), sub, normal, "");
  /* not a positive finite value (NaN compares false) */
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, x, LLVMConstReal(g->t_f32, 0), ""),
                                 LLVMBuildFCmp(b, LLVMRealOLT, x, LLVMConstReal(g->t_f32, INFINITY), ""), "");
  code = LLVMBuildSelect(b, ok, code, ki(I, 0xff), "");
  return LLVMBuildTrunc(b, code, g->t_i8, "");
}

LLVMValueRef cx_mf_ir_decode(LLVMBuilderRef builder, cxla_type t, LLVMValueRef code8) {
  const cx_mf_format *f = cx_mf_format_of(t);
  mf_ir gs = mf_ir_of(builder), *g = &gs;
  if (f->kind == CX_MF_E8M0) return e8m0_decode(g, code8);
  LLVMBuilderRef b = g->b;
  LLVMTypeRef I = g->t_i32;
  int sbit = f->ebits + f->mbits;
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
  LLVMValueRef c = LLVMBuildAnd(b, LLVMBuildZExt(b, code8, I, ""), ki(I, (2u << sbit) - 1), "");
  LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, c, ki(I, (uint64_t)f->mbits), ""), ki(I, emask), "");
  LLVMValueRef m = LLVMBuildAnd(b, c, ki(I, mmask), "");
  /* normal: exponent e - bias + 127, mantissa at the top of f32's 23 bits */
  LLVMValueRef nbits = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAdd(b, e, ki(I, (uint64_t)(127 - f->bias)), ""), ki(I, 23), ""),
                                   LLVMBuildShl(b, m, ki(I, (uint64_t)(23 - f->mbits)), ""), "");
  LLVMValueRef normal = LLVMBuildBitCast(b, nbits, g->t_f32, "");
  LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, g->t_f32, ""),
                                   LLVMConstReal(g->t_f32, ldexp(1, 1 - f->bias - f->mbits)), "");
  LLVMValueRef v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, e, ki(I, 0), ""), sub, normal, "");
  LLVMValueRef allones = LLVMBuildICmp(b, LLVMIntEQ, e, ki(I, emask), "");
  if (f->kind == CX_MF_IEEE) {
    LLVMValueRef special = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, m, ki(I, 0), ""),
                                           LLVMConstReal(g->t_f32, INFINITY), LLVMConstReal(g->t_f32, NAN), "");
    v = LLVMBuildSelect(b, allones, special, v, "");
  } else if (f->kind == CX_MF_FN) {
    v = LLVMBuildSelect(b, LLVMBuildAnd(b, allones, LLVMBuildICmp(b, LLVMIntEQ, m, ki(I, mmask), ""), ""),
                        LLVMConstReal(g->t_f32, NAN), v, "");
  }
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, c, ki(I, 1u << sbit), ""), ki(I, 0), "");
  v = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, v, ""), v, "");
  if (f->kind == CX_MF_FNUZ) /* the code of -0 is NaN */
    v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, c, ki(I, 1u << sbit), ""), LLVMConstReal(g->t_f32, NAN), v, "");
  return v;
}

LLVMValueRef cx_mf_ir_encode(LLVMBuilderRef builder, cxla_type t, LLVMValueRef x) {
  const cx_mf_format *f = cx_mf_format_of(t);
  mf_ir gs = mf_ir_of(builder), *g = &gs;
  if (f->kind == CX_MF_E8M0) return e8m0_encode(g, x);
  LLVMBuilderRef b = g->b;
  int dbl = LLVMTypeOf(x) == g->t_f64;
  LLVMTypeRef F = dbl ? g->t_f64 : g->t_f32, W = dbl ? g->t_i64 : g->t_i32, I = g->t_i32;
  int fm = dbl ? 52 : 23, fbias = dbl ? 1023 : 127;
  int sbit = f->ebits + f->mbits;
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
  uint32_t max = f->kind == CX_MF_IEEE ? ((emask - 1) << f->mbits) | mmask
                 : f->kind == CX_MF_FN ? (emask << f->mbits) | (mmask - 1)
                                       : (emask << f->mbits) | mmask;
  LLVMValueRef bits = LLVMBuildBitCast(b, x, W, "");
  LLVMValueRef absbits = LLVMBuildAnd(b, bits, ki(W, dbl ? INT64_MAX : INT32_MAX), "");
  LLVMValueRef a = LLVMBuildBitCast(b, absbits, F, "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, absbits, bits, "");
  LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  /* subnormal: a / smallest subnormal, to nearest even (exact: a power-of-two scale) */
  LLVMValueRef q = LLVMBuildFMul(b, a, LLVMConstReal(F, ldexp(1, f->bias - 1 + f->mbits)), "");
  LLVMTypeRef qt[1] = {F};
  unsigned id = LLVMLookupIntrinsicID("llvm.roundeven", 14);
  LLVMValueRef qr = LLVMBuildCall2(b, LLVMIntrinsicGetType(g->llctx, id, qt, 1),
                                   LLVMGetIntrinsicDeclaration(g->mod, id, qt, 1), &q, 1, "");
  LLVMValueRef sub = LLVMBuildTrunc(b, LLVMBuildFPToUI(b, qr, W, ""), I, "");
  /* normal: round the bit pattern to mbits mantissa bits, nearest even (a carry moves into the
   * exponent, which is right), then re-bias the exponent */
  int sh = fm - f->mbits;
  LLVMValueRef last = LLVMBuildAnd(b, LLVMBuildLShr(b, absbits, ki(W, (uint64_t)sh), ""), ki(W, 1), "");
  LLVMValueRef r = LLVMBuildAdd(b, absbits, LLVMBuildAdd(b, ki(W, (UINT64_C(1) << (sh - 1)) - 1), last, ""), "");
  r = LLVMBuildLShr(b, r, ki(W, (uint64_t)sh), ""); /* (exponent << mbits) | mantissa, source bias */
  /* codes past the largest are overflow; clamp first so the narrowing cannot wrap */
  uint64_t rebias = (uint64_t)(fbias - f->bias) << f->mbits, cap = rebias + max + 1;
  r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, r, ki(W, cap), ""), ki(W, cap), r, "");
  LLVMValueRef normal = LLVMBuildTrunc(b, LLVMBuildSub(b, r, ki(W, rebias), ""), I, "");
  LLVMValueRef is_sub = LLVMBuildFCmp(b, LLVMRealOLT, a, LLVMConstReal(F, ldexp(1, 1 - f->bias)), "");
  LLVMValueRef code = LLVMBuildSelect(b, is_sub, sub, normal, ""); /* infinity lands on max + 1 */
  LLVMValueRef over = LLVMBuildICmp(b, LLVMIntUGT, code, ki(I, max), "");
  uint32_t sign = 1u << sbit;
  LLVMValueRef sgn = LLVMBuildSelect(b, neg, ki(I, sign), ki(I, 0), "");
  LLVMValueRef nan;
  if (f->kind == CX_MF_IEEE) {
    code = LLVMBuildSelect(b, over, ki(I, emask << f->mbits), code, "");
    nan = LLVMBuildOr(b, sgn, ki(I, (emask << f->mbits) | (1u << (f->mbits - 1))), "");
  } else if (f->kind == CX_MF_FINITE) {
    code = LLVMBuildSelect(b, over, ki(I, max), code, "");
    nan = LLVMBuildXor(b, sgn, ki(I, sign), ""); /* a zero of the other sign, as ml_dtypes */
  } else {
    nan = f->kind == CX_MF_FNUZ ? ki(I, sign) : LLVMBuildOr(b, sgn, ki(I, (emask << f->mbits) | mmask), "");
  }
  LLVMValueRef res = LLVMBuildOr(b, code, sgn, "");
  if (f->kind == CX_MF_FNUZ) /* no -0 */
    res = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, code, ki(I, 0), ""), ki(I, 0), res, "");
  if (f->kind == CX_MF_FN || f->kind == CX_MF_FNUZ) res = LLVMBuildSelect(b, over, nan, res, "");
  res = LLVMBuildSelect(b, isnan, nan, res, "");
  return LLVMBuildTrunc(b, res, g->t_i8, "");
}
