/* elemental_math.c — the transcendental ops (and power on integers and pred). How each is
 * computed on floats is the target's choice (cg->target->lower_math): for the cpu, f32 (and
 * f16/bf16, computed in f32) uses the inline code of math*.c (every f32 function has one), so
 * loops vectorise; f64 exp and log are inline too, the other f64 functions call libm with
 * libmvec's vector variants attached (libmvec.c). f16/bf16 results are rounded after. */
#include "codegen/complex.h"
#include "codegen/emit.h"
#include "codegen/libmvec.h"
#include "codegen/math.h"

/* ---- codegen's own lowerings (CX_MATH_INLINE) ---- */

/* 1/sqrt(x), on whichever type x has (the cpu: double, as the interpreter computes it) */
static LLVMValueRef rsqrt(cx_gen *g, LLVMValueRef x) {
  return LLVMBuildFDiv(g->cg->b, LLVMConstReal(LLVMTypeOf(x), 1), cx_ir_intr1(g, "llvm.sqrt", x), "");
}

/* 1/(1+e^-x) with the target's f64 exp (the interpreter: the same with libm's) */
static LLVMValueRef logistic_f64(cx_gen *g, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef d = g->cg->t_f64;
  LLVMValueRef e = cx_gen_math(g, CX_OP_EXP, CXLA_F64, 1, (LLVMValueRef[]){LLVMBuildFNeg(b, x, "")});
  return LLVMBuildFDiv(b, LLVMConstReal(d, 1), LLVMBuildFAdd(b, LLVMConstReal(d, 1), e, ""), "");
}

typedef LLVMValueRef (*inline_fn)(cx_gen *g, LLVMValueRef x);
static const struct { inline_fn f32, f64; } k_inline[CX_OP_COUNT] = {
  [CX_OP_EXP] = {cx_math_exp_f32, cx_math_exp_f64},
  [CX_OP_EXPM1] = {cx_math_expm1_f32, NULL},
  [CX_OP_LOG] = {cx_math_log_f32, cx_math_log_f64},
  [CX_OP_LOG1P] = {cx_math_log1p_f32, NULL},
  [CX_OP_TANH] = {cx_math_tanh_f32, NULL},
  [CX_OP_LOGISTIC] = {cx_math_logistic_f32, logistic_f64},
  [CX_OP_ERF] = {cx_math_erf_f32, NULL},
  [CX_OP_SIN] = {cx_math_sin_f32, NULL},
  [CX_OP_COS] = {cx_math_cos_f32, NULL},
  [CX_OP_TAN] = {cx_math_tan_f32, NULL},
  [CX_OP_CBRT] = {cx_math_cbrt_f32, NULL},
  [CX_OP_RSQRT] = {rsqrt, rsqrt},
};
typedef LLVMValueRef (*inline_fn2)(cx_gen *g, LLVMValueRef x, LLVMValueRef y);
static const struct { inline_fn2 f32, f64; } k_inline2[CX_OP_COUNT] = {
  [CX_OP_POWER] = {cx_math_pow_f32, NULL},
  [CX_OP_ATAN2] = {cx_math_atan2_f32, NULL},
};


LLVMValueRef cx_gen_math(cx_gen *g, cx_op op, cxla_type t, int nargs, LLVMValueRef *args) {
  cx_cg *cg = g->cg;
  LLVMBuilderRef b = cg->b;
  cx_math_lowering l = cg->target->lower_math(op, t);
  LLVMTypeRef rt = LLVMTypeOf(args[0]);
  if (l.via_f64 && cg->target->libmvec && rt != cg->t_f64) l = (cx_math_lowering){CX_MATH_CALL, l.via_f64, 1, 1, NULL};
  int widen = l.in_f64 && rt != cg->t_f64;
  LLVMValueRef x[2], r = NULL;
  if (nargs < 1 || nargs > 2) nargs = 0;
  for (int i = 0; i < nargs; i++) x[i] = widen ? LLVMBuildFPExt(b, args[i], cg->t_f64, "") : args[i];
  LLVMTypeRef xt = widen ? cg->t_f64 : rt;
  if (nargs && l.how == CX_MATH_CALL) r = cx_ir_call(g, l.name, nargs, x);
  if (r && l.libmvec && cg->target->libmvec && xt == cg->t_f64) cx_libmvec_attach(cg, r, l.name, nargs, cg->target->libmvec);
  if (nargs && l.how == CX_MATH_INTRINSIC) r = cx_ir_intrinsic(g, l.name, &xt, 1, x, nargs);
  if (nargs == 1 && l.how == CX_MATH_INLINE) {
    inline_fn f = xt == cg->t_f64 ? k_inline[op].f64 : xt == cg->t_f32 ? k_inline[op].f32 : NULL;
    if (f) r = f(g, x[0]);
    /* an f32 function of codegen's own is a long chain of arithmetic per element (tanh: an
     * exp, a polynomial, a divide), which bounds the loop around it */
    if (f && xt == cg->t_f32) cx_cg_prefer_wide_vectors(cg, NULL);
  }
  if (nargs == 2 && l.how == CX_MATH_INLINE) {
    inline_fn2 f = xt == cg->t_f64 ? k_inline2[op].f64 : xt == cg->t_f32 ? k_inline2[op].f32 : NULL;
    if (f) r = f(g, x[0], x[1]);
  }
  if (!r) {
    cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: target %s has no lowering of %s on %s", cg->target->name,
               cx_op_name(op), cxla_type_name(t));
    return LLVMGetUndef(rt);
  }
  return widen ? LLVMBuildFPTrunc(b, r, rt, "") : r;
}

/* ---- builders ---- */

static LLVMValueRef f_math(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  if (in->op == CX_OP_EXP && in->nops == 1 && cx_emit_nonpositive(in->ops[0])) {
    cx_math_lowering l = g->cg->target->lower_math(in->op, t);
    if (l.how == CX_MATH_INLINE && !l.in_f64 && LLVMTypeOf(a[0]) == g->cg->t_f32)
      return cx_gen_round(g, t, cx_math_exp_nonpos_f32(g, a[0]));
  }
  return cx_gen_round(g, t, cx_gen_math(g, in->op, t, in->nops, a));
}

/* Integer power by squaring, unrolled over the exponent's bits (the exponent is below 2^bits;
 * negative signed exponents are handled by the caller). Wraps modulo 2^bits like ipow. */
static LLVMValueRef int_pow(cx_gen *g, LLVMValueRef base, LLVMValueRef e, int bits) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ty = LLVMTypeOf(base);
  LLVMValueRef acc = LLVMConstInt(ty, 1, 0), zero = LLVMConstInt(ty, 0, 0);
  for (int i = 0; i < bits; i++) {
    LLVMValueRef bit = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, e, LLVMConstInt(ty, (unsigned long long)1 << i, 0), ""), zero, "");
    acc = LLVMBuildSelect(b, bit, LLVMBuildMul(b, acc, base, ""), acc, "");
    if (i + 1 < bits) base = LLVMBuildMul(b, base, base, "");
  }
  return acc;
}

/* 1^y = x^0 = 1; a negative signed exponent gives 0 (x != 1) */
static LLVMValueRef i_pow(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  (void)in;
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ty = LLVMTypeOf(a[0]);
  int bits = (int)LLVMGetIntTypeWidth(ty), sgn = cx_type_kind(t) == CX_KIND_SINT;
  LLVMValueRef zero = LLVMConstInt(ty, 0, 0), one = LLVMConstInt(ty, 1, 0);
  LLVMValueRef p = int_pow(g, a[0], a[1], sgn ? bits - 1 : bits);
  if (sgn) p = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a[1], zero, ""), zero, p, "");
  LLVMValueRef unit = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, a[0], one, ""),
                                  LLVMBuildICmp(b, LLVMIntEQ, a[1], zero, ""), "");
  return LLVMBuildSelect(b, unit, one, p, "");
}

/* pred as int8 then != 0: x^y is 1 unless x = 0 and y = 1 */
static LLVMValueRef p_pow(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  (void)in, (void)t;
  LLVMBuilderRef b = g->cg->b;
  return LLVMBuildOr(b, a[0], LLVMBuildXor(b, a[1], LLVMConstInt(LLVMTypeOf(a[1]), 1, 0), ""), "");
}

const cx_elem_hooks cx_elem_math[CX_OP_COUNT] = {
  /*                  float   integer pred    complex */
  [CX_OP_EXP] =      {f_math, NULL,   NULL,   cx_cgen_exp},
  [CX_OP_EXPM1] =    {f_math, NULL,   NULL,   cx_cgen_expm1},
  [CX_OP_LOG] =      {f_math, NULL,   NULL,   cx_cgen_log},
  [CX_OP_LOG1P] =    {f_math, NULL,   NULL,   cx_cgen_log1p},
  [CX_OP_LOGISTIC] = {f_math, NULL,   NULL,   cx_cgen_logistic},
  [CX_OP_SQRT] =     {f_math, NULL,   NULL,   cx_cgen_sqrt}, /* correctly rounded in f32; f16/bf16
                                                              round again (exact: 24 >= 2*11+2) */
  [CX_OP_RSQRT] =    {f_math, NULL,   NULL,   cx_cgen_rsqrt},
  [CX_OP_CBRT] =     {f_math, NULL,   NULL,   cx_cgen_cbrt},
  [CX_OP_SIN] =      {f_math, NULL,   NULL,   cx_cgen_sin},
  [CX_OP_COS] =      {f_math, NULL,   NULL,   cx_cgen_cos},
  [CX_OP_TAN] =      {f_math, NULL,   NULL,   cx_cgen_tan},
  [CX_OP_TANH] =     {f_math, NULL,   NULL,   cx_cgen_tanh},
  [CX_OP_ERF] =      {f_math, NULL,   NULL},
  [CX_OP_POWER] =    {f_math, i_pow,  p_pow,  cx_cgen_pow},
  [CX_OP_ATAN2] =    {f_math, NULL,   NULL,   cx_cgen_atan2},
};
