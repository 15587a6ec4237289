/* target_cpu.c — the host CPU as a codegen target (see target.h). */
#include <string.h>
#include "codegen/cg.h"

static void add_attr(struct cx_cg *cg, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->llctx, kind, 0));
}

/* void name(i8 **args, i64 begin, i64 end): the backend's thread pool calls it on chunks. */
static LLVMValueRef cpu_declare(struct cx_cg *cg, const char *name, int nargs) {
  (void)nargs;
  LLVMTypeRef params[3] = {cg->t_ptr, cg->t_i64, cg->t_i64};
  LLVMValueRef fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_void, params, 3, 0));
  add_attr(cg, fn, "nounwind");
  return fn;
}

static void cpu_args(struct cx_cg *cg, LLVMValueRef entry, int nargs, LLVMValueRef *args) {
  LLVMBuilderRef b = cg->b;
  LLVMValueRef argv = LLVMGetParam(entry, 0);
  for (int i = 0; i < nargs; i++) {
    LLVMValueRef ix = LLVMConstInt(cg->t_i64, (unsigned long long)i, 0);
    args[i] = LLVMBuildLoad2(b, cg->t_ptr, LLVMBuildInBoundsGEP2(b, cg->t_ptr, argv, &ix, 1, ""), "");
  }
  args[nargs] = LLVMGetParam(entry, 1);
  args[nargs + 1] = LLVMGetParam(entry, 2);
}

/* f32 (and f16/bf16): codegen's own inline code (math*.c, within 1-2 ulp of the interpreter's
 * libm-in-double result, docs/numerics.md), so that loops vectorise; f64 exp and log too
 * (math_f64.c, within 1 ulp of libm, faster than libmvec's and more accurate); the other f64
 * functions call libm with glibc libmvec's vector variants attached (libmvec.c: 2-8 times
 * libm's speed, within 4 ulp; plain libm where the host has no AVX2 or --cpu-libmvec=off). */
#define POLY {CX_MATH_INLINE, NULL, 0, 0}
#define LIBM(fn) {CX_MATH_CALL, fn, 0, 1}
static const cx_math_lowering k_math[CX_OP_COUNT][2] = { /* [op][0: f32, 1: f64] */
  [CX_OP_EXP] = {POLY, POLY},
  [CX_OP_EXPM1] = {POLY, LIBM("expm1")},
  [CX_OP_LOG] = {POLY, POLY},
  [CX_OP_LOG1P] = {POLY, LIBM("log1p")},
  [CX_OP_TANH] = {POLY, LIBM("tanh")},
  [CX_OP_ERF] = {POLY, LIBM("erf")},
  [CX_OP_LOGISTIC] = {POLY, POLY},            /* f64: 1/(1+exp(-x)) with math_f64.c's exp */
  [CX_OP_RSQRT] = {{CX_MATH_INLINE, NULL, 1, 0}, POLY}, /* 1/sqrt(x) in double */
  [CX_OP_SQRT] = {{CX_MATH_INTRINSIC, "llvm.sqrt", 0, 0}, {CX_MATH_INTRINSIC, "llvm.sqrt", 0, 0}},
  [CX_OP_CBRT] = {POLY, LIBM("cbrt")},
  /* f32 sin, cos, tan: in double through libmvec where the host has it (2.0-2.3x the inline
   * code's speed on Zen 4, whose straight-line Payne-Hanek reduction every lane pays for;
   * rounded to f32 both are within 0.5 ulp of the interpreter), else the inline code */
  [CX_OP_SIN] = {{CX_MATH_INLINE, NULL, 0, 0, "sin"}, LIBM("sin")},
  [CX_OP_COS] = {{CX_MATH_INLINE, NULL, 0, 0, "cos"}, LIBM("cos")},
  [CX_OP_TAN] = {{CX_MATH_INLINE, NULL, 0, 0, "tan"}, LIBM("tan")},
  [CX_OP_POWER] = {POLY, LIBM("pow")},
  [CX_OP_ATAN2] = {POLY, LIBM("atan2")},
};
#undef POLY
#undef LIBM

static cx_math_lowering cpu_math(cx_op op, cxla_type t) {
  cx_math_lowering none = {CX_MATH_NONE, NULL, 0, 0};
  /* complex parts: libm, like the interpreter's complex formulas, so they agree bit for bit */
  cx_math_lowering exp_ = {CX_MATH_CALL, "exp", 0, 0}, log_ = {CX_MATH_CALL, "log", 0, 0};
  if (cx_type_is_complex(t) && op == CX_OP_EXP) return exp_;
  if (cx_type_is_complex(t) && op == CX_OP_LOG) return log_;
  int complex = cx_type_is_complex(t);
  if (complex) t = CXLA_F64;
  if ((unsigned)op >= CX_OP_COUNT || !cx_type_is_float(t)) return none;
  cx_math_lowering l = k_math[op][t == CXLA_F64];
  if (complex) l.libmvec = 0; /* scalar libm, the interpreter's */
  return l;
}

const cx_target cx_target_cpu = {
  .name = "cpu",
  .triple = NULL,
  .data_layout = NULL,
  .vector_bits = 256,
  .libmvec = 0,
  .addrspace_global = 0,
  .addrspace_shared = -1,
  .kernel_declare = cpu_declare,
  .kernel_args = cpu_args,
  .lower_math = cpu_math,
};
