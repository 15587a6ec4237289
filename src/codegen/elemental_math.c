/* elemental_math.c — transcendental ops. f32 (and f16/bf16, computed in f32) use the inline
 * approximations of math.c where there is one, so their loops vectorise; the rest (cbrt, sin,
 * cos, tan, pow, atan2) and rsqrt evaluate in double — through libm exactly as the
 * interpreter does, so they round to the same f32 — and f64 always calls libm. The caller
 * rounds f16/bf16 results. */
#include "codegen/gen.h"
#include "codegen/math.h"

static const char *libm_name(cx_op op) {
  switch (op) {
  case CX_OP_EXP: return "exp";
  case CX_OP_EXPM1: return "expm1";
  case CX_OP_LOG: return "log";
  case CX_OP_LOG1P: return "log1p";
  case CX_OP_TANH: return "tanh";
  case CX_OP_ERF: return "erf";
  case CX_OP_CBRT: return "cbrt";
  case CX_OP_SIN: return "sin";
  case CX_OP_COS: return "cos";
  case CX_OP_TAN: return "tan";
  case CX_OP_POWER: return "pow";
  case CX_OP_ATAN2: return "atan2";
  default: return NULL;
  }
}

/* The op on a double value, as the interpreter's cx_float_unary computes it. */
static LLVMValueRef unary_f64(cx_gen *g, cx_op op, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef d = g->cg->t_f64;
  switch (op) {
  case CX_OP_LOGISTIC: {
    LLVMValueRef e = cx_ir_libm(g, "exp", 1, (LLVMValueRef[]){LLVMBuildFNeg(b, x, "")});
    return LLVMBuildFDiv(b, LLVMConstReal(d, 1), LLVMBuildFAdd(b, LLVMConstReal(d, 1), e, ""), "");
  }
  case CX_OP_RSQRT:
    return LLVMBuildFDiv(b, LLVMConstReal(d, 1), cx_ir_intr1(g, "llvm.sqrt", x), "");
  default: {
    const char *name = libm_name(op);
    if (!name) {
      cx_cg_fail(g->cg, CXLA_ERR_INTERNAL, "codegen: no math function for %s", cx_op_name(op));
      return LLVMGetUndef(d);
    }
    return cx_ir_libm(g, name, 1, &x);
  }
  }
}

LLVMValueRef cx_gen_unary_math(cx_gen *g, cx_op op, cxla_type t, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  if (t == CXLA_F64) return unary_f64(g, op, x);
  switch (op) {
  case CX_OP_EXP: return cx_math_exp_f32(g, x);
  case CX_OP_EXPM1: return cx_math_expm1_f32(g, x);
  case CX_OP_LOG: return cx_math_log_f32(g, x);
  case CX_OP_LOG1P: return cx_math_log1p_f32(g, x);
  case CX_OP_TANH: return cx_math_tanh_f32(g, x);
  case CX_OP_LOGISTIC: return cx_math_logistic_f32(g, x);
  case CX_OP_ERF: return cx_math_erf_f32(g, x);
  default: {
    LLVMValueRef d = unary_f64(g, op, LLVMBuildFPExt(b, x, g->cg->t_f64, ""));
    return LLVMBuildFPTrunc(b, d, g->cg->t_f32, "");
  }
  }
}

LLVMValueRef cx_gen_binary_math(cx_gen *g, cx_op op, cxla_type t, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = g->cg->b;
  const char *name = op == CX_OP_POWER || op == CX_OP_ATAN2 ? libm_name(op) : NULL;
  if (!name) {
    cx_cg_fail(g->cg, CXLA_ERR_INTERNAL, "codegen: %s is not a binary float op", cx_op_name(op));
    return LLVMGetUndef(LLVMTypeOf(a));
  }
  if (t == CXLA_F64) return cx_ir_libm(g, name, 2, (LLVMValueRef[]){a, c});
  LLVMValueRef args[2] = {LLVMBuildFPExt(b, a, g->cg->t_f64, ""), LLVMBuildFPExt(b, c, g->cg->t_f64, "")};
  return LLVMBuildFPTrunc(b, cx_ir_libm(g, name, 2, args), g->cg->t_f32, "");
}
