/* math_ir.h — shorthand for building the double-precision approximations (math_trig.c,
 * math_pow.c): f32 arguments are widened to double (exact), computed in double with i64 bit
 * tricks, and rounded once to f32 at the end. */
#ifndef CX_CODEGEN_MATH_IR_H
#define CX_CODEGEN_MATH_IR_H
#include "codegen/math.h"

typedef struct tb {
  cx_gen *g;
  LLVMBuilderRef b;
  LLVMTypeRef d, l; /* double, i64 */
} tb;

static inline tb tb_make(cx_gen *g) {
  tb m = {g, g->cg->b, g->cg->t_f64, g->cg->t_i64};
  return m;
}
static inline LLVMValueRef D(tb *m, double c) { return LLVMConstReal(m->d, c); }
static inline LLVMValueRef L(tb *m, uint64_t c) { return LLVMConstInt(m->l, c, 0); }
static inline LLVMValueRef mul(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->b, a, b, ""); }
static inline LLVMValueRef fma3(tb *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return cx_ir_intrinsic(m->g, "llvm.fma", &m->d, 1, args, 3);
}
static inline LLVMValueRef sel(tb *m, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(m->b, c, a, b, "");
}
static inline LLVMValueRef fcmp(tb *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(m->b, p, a, b, "");
}
static inline LLVMValueRef ieq(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildICmp(m->b, LLVMIntEQ, a, b, ""); }
static inline LLVMValueRef iadd(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAdd(m->b, a, b, ""); }
static inline LLVMValueRef imul(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildMul(m->b, a, b, ""); }
static inline LLVMValueRef iand(tb *m, LLVMValueRef a, uint64_t c) { return LLVMBuildAnd(m->b, a, L(m, c), ""); }
static inline LLVMValueRef shl(tb *m, LLVMValueRef a, uint64_t c) { return LLVMBuildShl(m->b, a, L(m, c), ""); }
static inline LLVMValueRef lshr(tb *m, LLVMValueRef a, uint64_t c) { return LLVMBuildLShr(m->b, a, L(m, c), ""); }
static inline LLVMValueRef horner(tb *m, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef p = D(m, c[0]);
  for (int i = 1; i < n; i++) p = fma3(m, p, x, D(m, c[i]));
  return p;
}

#endif
