/* elemental.c — elementwise ops in LLVM IR with exactly the interpreter's rules
 * (src/interp/scalar.c): integer x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN, x%0 = x, the
 * remainder takes the dividend's sign, shifts by >= the width give 0 (or the sign for
 * arithmetic right shifts), max/min propagate NaN with -0 < +0 (llvm.maximum/minimum), pred
 * arithmetic as int8 then != 0, and f16/bf16 results rounded after every op. Every integer
 * operation is written so that no input makes it poison or undefined (no division by zero, no
 * over-wide shift). */
#include "codegen/gen.h"

static int is_signed(cxla_type t) { return cx_type_kind(t) == CX_KIND_SINT; }

static LLVMValueRef fl(cx_gen *g, LLVMValueRef v) { return cx_ir_fmf(v, g->fmf); }

static LLVMValueRef float_unary(cx_gen *g, cx_op op, cxla_type t, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ty = LLVMTypeOf(x);
  switch (op) {
  case CX_OP_ABS: return cx_ir_intr1(g, "llvm.fabs", x);
  case CX_OP_NEGATE: return LLVMBuildFNeg(b, x, "");
  case CX_OP_SIGN: { /* NaN and +-0 are their own sign */
    LLVMValueRef keep = LLVMBuildFCmp(b, LLVMRealUEQ, x, LLVMConstReal(ty, 0), "");
    LLVMValueRef one = cx_ir_intr2(g, "llvm.copysign", LLVMConstReal(ty, 1), x);
    return LLVMBuildSelect(b, keep, x, one, "");
  }
  case CX_OP_FLOOR: return cx_ir_intr1(g, "llvm.floor", x);
  case CX_OP_CEIL: return cx_ir_intr1(g, "llvm.ceil", x);
  case CX_OP_ROUND_AFZ: return cx_ir_intr1(g, "llvm.round", x);
  case CX_OP_ROUND_EVEN: return cx_ir_intr1(g, "llvm.roundeven", x);
  case CX_OP_COPY: return x;
  case CX_OP_SQRT: /* correctly rounded in f32; f16/bf16 round again (exact: 24 >= 2*11+2) */
    return cx_gen_round(g, t, cx_ir_intr1(g, "llvm.sqrt", x));
  default: return cx_gen_round(g, t, cx_gen_unary_math(g, op, t, x));
  }
}

static LLVMValueRef int_unary(cx_gen *g, const cx_instr *in, cx_op op, cxla_type t, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ty = LLVMTypeOf(x);
  if (t == CXLA_PRED) {
    if (op == CX_OP_NOT) return LLVMBuildXor(b, x, LLVMConstInt(ty, 1, 0), "");
    if (op == CX_OP_COPY || op == CX_OP_FLOOR || op == CX_OP_CEIL || op == CX_OP_ROUND_AFZ ||
        op == CX_OP_ROUND_EVEN)
      return x;
    return cx_gen_fail(g, in, "not defined on pred");
  }
  switch (op) {
  case CX_OP_ABS: { /* abs(INT_MIN) wraps back to INT_MIN: llvm.abs with int_min_poison=0 */
    if (!is_signed(t)) return x;
    LLVMTypeRef tys[1] = {ty};
    LLVMValueRef args[2] = {x, LLVMConstInt(g->cg->t_i1, 0, 0)};
    return cx_ir_intrinsic(g, "llvm.abs", tys, 1, args, 2);
  }
  case CX_OP_NEGATE: return LLVMBuildSub(b, LLVMConstInt(ty, 0, 0), x, "");
  case CX_OP_SIGN:
    if (is_signed(t)) {
      LLVMValueRef pos = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSGT, x, LLVMConstInt(ty, 0, 0), ""), ty, "");
      LLVMValueRef neg = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSLT, x, LLVMConstInt(ty, 0, 0), ""), ty, "");
      return LLVMBuildSub(b, pos, neg, "");
    }
    return LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstInt(ty, 0, 0), ""), ty, "");
  case CX_OP_NOT: return LLVMBuildXor(b, x, LLVMConstAllOnes(ty), "");
  case CX_OP_POPCNT: return cx_ir_intr1(g, "llvm.ctpop", x);
  case CX_OP_CLZ: {
    LLVMValueRef args[2] = {x, LLVMConstInt(g->cg->t_i1, 0, 0)};
    return cx_ir_intrinsic(g, "llvm.ctlz", &ty, 1, args, 2);
  }
  case CX_OP_COPY: case CX_OP_FLOOR: case CX_OP_CEIL: case CX_OP_ROUND_AFZ: case CX_OP_ROUND_EVEN:
    return x;
  default: return cx_gen_fail(g, in, "not defined on integers");
  }
}

/* XLA max/min with compares and selects: LLVM 19 narrows llvm.minimum/maximum of f16 values to
 * half precision and then returns the zero for (NaN, +-0) on x86, so f16 avoids them. Equal
 * operands (only +0/-0 can differ) combine their bits: min prefers -0, max +0. */
static LLVMValueRef minmax_select(cx_gen *g, int is_max, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ft = LLVMTypeOf(a), it = ft == g->cg->t_f64 ? g->cg->t_i64 : g->cg->t_i32;
  LLVMValueRef pick = LLVMBuildFCmp(b, is_max ? LLVMRealOGT : LLVMRealOLT, a, c, "");
  LLVMValueRef r = LLVMBuildSelect(b, pick, a, c, "");
  LLVMValueRef ia = LLVMBuildBitCast(b, a, it, ""), ic = LLVMBuildBitCast(b, c, it, "");
  LLVMValueRef both = is_max ? LLVMBuildAnd(b, ia, ic, "") : LLVMBuildOr(b, ia, ic, "");
  r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, a, c, ""), LLVMBuildBitCast(b, both, ft, ""), r, "");
  LLVMValueRef nan = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, a, a, ""), a, c, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, a, c, ""), nan, r, "");
}

static LLVMValueRef float_binary(cx_gen *g, cx_op op, cxla_type t, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = g->cg->b;
  LLVMValueRef r;
  switch (op) {
  case CX_OP_ADD: r = fl(g, LLVMBuildFAdd(b, a, c, "")); break;
  case CX_OP_SUBTRACT: r = fl(g, LLVMBuildFSub(b, a, c, "")); break;
  case CX_OP_MULTIPLY: r = fl(g, LLVMBuildFMul(b, a, c, "")); break;
  case CX_OP_DIVIDE: r = LLVMBuildFDiv(b, a, c, ""); break;
  case CX_OP_REMAINDER: r = LLVMBuildFRem(b, a, c, ""); break; /* fmod: exact */
  /* NaN-propagating, -0 < +0; exact, so no rounding needed */
  case CX_OP_MAXIMUM:
    return t == CXLA_F16 ? minmax_select(g, 1, a, c) : fl(g, cx_ir_intr2(g, "llvm.maximum", a, c));
  case CX_OP_MINIMUM:
    return t == CXLA_F16 ? minmax_select(g, 0, a, c) : fl(g, cx_ir_intr2(g, "llvm.minimum", a, c));
  default: r = cx_gen_binary_math(g, op, t, a, c); break;
  }
  return cx_gen_round(g, t, r);
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

static LLVMValueRef int_binary(cx_gen *g, const cx_instr *in, cx_op op, cxla_type t, LLVMValueRef a,
                               LLVMValueRef c) {
  LLVMBuilderRef b = g->cg->b;
  LLVMTypeRef ty = LLVMTypeOf(a);
  int bits = (int)LLVMGetIntTypeWidth(ty), sgn = is_signed(t);
  LLVMValueRef zero = LLVMConstInt(ty, 0, 0), ones = LLVMConstAllOnes(ty), one = LLVMConstInt(ty, 1, 0);
  if (t == CXLA_PRED) { /* int8(x) OP int8(y) != 0 */
    switch (op) {
    case CX_OP_ADD: case CX_OP_MAXIMUM: case CX_OP_OR: return LLVMBuildOr(b, a, c, "");
    case CX_OP_MULTIPLY: case CX_OP_MINIMUM: case CX_OP_AND: return LLVMBuildAnd(b, a, c, "");
    case CX_OP_SUBTRACT: case CX_OP_XOR: return LLVMBuildXor(b, a, c, "");
    case CX_OP_POWER: return LLVMBuildOr(b, a, LLVMBuildXor(b, c, one, ""), "");
    default: return cx_gen_fail(g, in, "not defined on pred");
    }
  }
  switch (op) {
  case CX_OP_ADD: return LLVMBuildAdd(b, a, c, "");
  case CX_OP_SUBTRACT: return LLVMBuildSub(b, a, c, "");
  case CX_OP_MULTIPLY: return LLVMBuildMul(b, a, c, "");
  case CX_OP_DIVIDE: {
    LLVMValueRef z = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
    if (!sgn) {
      LLVMValueRef q = LLVMBuildUDiv(b, a, LLVMBuildSelect(b, z, one, c, ""), "");
      return LLVMBuildSelect(b, z, ones, q, "");
    }
    /* divisor -1 is a negation (INT_MIN/-1 wraps to INT_MIN); 0 gives -1 */
    LLVMValueRef m1 = LLVMBuildICmp(b, LLVMIntEQ, c, ones, "");
    LLVMValueRef safe = LLVMBuildSelect(b, LLVMBuildOr(b, z, m1, ""), one, c, "");
    LLVMValueRef q = LLVMBuildSDiv(b, a, safe, "");
    q = LLVMBuildSelect(b, m1, LLVMBuildSub(b, zero, a, ""), q, "");
    return LLVMBuildSelect(b, z, ones, q, "");
  }
  case CX_OP_REMAINDER: {
    LLVMValueRef z = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
    if (!sgn) {
      LLVMValueRef r = LLVMBuildURem(b, a, LLVMBuildSelect(b, z, one, c, ""), "");
      return LLVMBuildSelect(b, z, a, r, "");
    }
    LLVMValueRef m1 = LLVMBuildICmp(b, LLVMIntEQ, c, ones, "");
    LLVMValueRef safe = LLVMBuildSelect(b, LLVMBuildOr(b, z, m1, ""), one, c, "");
    LLVMValueRef r = LLVMBuildSRem(b, a, safe, "");
    r = LLVMBuildSelect(b, m1, zero, r, "");
    return LLVMBuildSelect(b, z, a, r, "");
  }
  case CX_OP_POWER: { /* 1^y = x^0 = 1; a negative signed exponent gives 0 (x != 1) */
    LLVMValueRef p = int_pow(g, a, c, sgn ? bits - 1 : bits);
    if (sgn) p = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, c, zero, ""), zero, p, "");
    LLVMValueRef unit = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, a, one, ""),
                                    LLVMBuildICmp(b, LLVMIntEQ, c, zero, ""), "");
    return LLVMBuildSelect(b, unit, one, p, "");
  }
  case CX_OP_MAXIMUM: return cx_ir_intr2(g, sgn ? "llvm.smax" : "llvm.umax", a, c);
  case CX_OP_MINIMUM: return cx_ir_intr2(g, sgn ? "llvm.smin" : "llvm.umin", a, c);
  case CX_OP_AND: return LLVMBuildAnd(b, a, c, "");
  case CX_OP_OR: return LLVMBuildOr(b, a, c, "");
  case CX_OP_XOR: return LLVMBuildXor(b, a, c, "");
  case CX_OP_SHIFT_LEFT: case CX_OP_SHIFT_RIGHT_LOGICAL: case CX_OP_SHIFT_RIGHT_ARITHMETIC: {
    /* amounts read as unsigned; >= width shifts everything out */
    LLVMValueRef w = LLVMConstInt(ty, (unsigned long long)bits, 0);
    LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, c, w, "");
    if (op == CX_OP_SHIFT_RIGHT_ARITHMETIC)
      return LLVMBuildAShr(b, a, LLVMBuildSelect(b, big, LLVMConstInt(ty, (unsigned long long)bits - 1, 0), c, ""), "");
    LLVMValueRef s = LLVMBuildSelect(b, big, zero, c, "");
    LLVMValueRef r = op == CX_OP_SHIFT_LEFT ? LLVMBuildShl(b, a, s, "") : LLVMBuildLShr(b, a, s, "");
    return LLVMBuildSelect(b, big, zero, r, "");
  }
  default: return cx_gen_fail(g, in, "not defined on integers");
  }
}

static LLVMValueRef cmp_dir(cx_gen *g, cxla_compare_dir dir, int sgn, LLVMValueRef a, LLVMValueRef c) {
  static const LLVMIntPredicate s[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate u[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(g->cg->b, sgn ? s[dir] : u[dir], a, c, "");
}

/* TOTALORDER key: the sign-magnitude bits mapped to two's complement. f16/bf16 registers hold
 * the same value as f32, and widening keeps the order. */
static LLVMValueRef total_key(cx_gen *g, LLVMValueRef x) {
  LLVMBuilderRef b = g->cg->b;
  int w = LLVMTypeOf(x) == g->cg->t_f64 ? 64 : 32;
  LLVMTypeRef it = w == 64 ? g->cg->t_i64 : g->cg->t_i32;
  LLVMValueRef k = LLVMBuildBitCast(b, x, it, "");
  LLVMValueRef flip = LLVMBuildXor(b, k, LLVMConstInt(it, w == 64 ? (unsigned long long)INT64_MAX : 0x7fffffffu, 0), "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, k, LLVMConstInt(it, 0, 0), ""), flip, k, "");
}

LLVMValueRef cx_gen_compare(cx_gen *g, cxla_compare_dir dir, cx_cmp_type ct, cxla_type t,
                            LLVMValueRef a, LLVMValueRef c) {
  int isf = cx_type_is_float(t);
  if ((unsigned)dir > CXLA_GE) dir = CXLA_EQ;
  if (ct == CX_CMP_DEFAULT || (isf && ct != CX_CMP_TOTALORDER))
    ct = isf ? CX_CMP_FLOAT : is_signed(t) ? CX_CMP_SIGNED : CX_CMP_UNSIGNED;
  else if (!isf && (ct == CX_CMP_FLOAT || ct == CX_CMP_TOTALORDER))
    ct = is_signed(t) ? CX_CMP_SIGNED : CX_CMP_UNSIGNED;
  if (ct == CX_CMP_FLOAT) {
    static const LLVMRealPredicate p[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(g->cg->b, p[dir], a, c, "");
  }
  if (ct == CX_CMP_TOTALORDER) return cmp_dir(g, dir, 1, total_key(g, a), total_key(g, c));
  /* pred is 0/1 whatever the comparison type says */
  return cmp_dir(g, dir, ct == CX_CMP_SIGNED && t != CXLA_PRED, a, c);
}

LLVMValueRef cx_gen_elementwise(cx_gen *g, const cx_instr *in, LLVMValueRef *a) {
  LLVMBuilderRef b = g->cg->b;
  cxla_type t = in->nops ? in->ops[0]->shape.type : in->shape.type;
  int isf = cx_type_is_float(t);
  switch (in->op) {
  case CX_OP_COMPARE: return cx_gen_compare(g, in->a.dir, in->a.cmp_type, t, a[0], a[1]);
  case CX_OP_CONVERT: return cx_gen_convert(g, t, in->shape.type, a[0]);
  case CX_OP_BITCAST_CONVERT:
    if (cx_type_bits(t) != cx_type_bits(in->shape.type)) return cx_gen_fail(g, in, "width-changing bitcast-convert here");
    return cx_gen_from_bits(g, in->shape.type, cx_gen_to_bits(g, t, a[0]));
  case CX_OP_REDUCE_PRECISION:
    if (!isf || in->a.exponent_bits < 1 || in->a.mantissa_bits < 0)
      return cx_gen_fail(g, in, "needs a float operand, exponent_bits >= 1, mantissa_bits >= 0");
    return cx_gen_reduce_precision(g, t, a[0], in->a.exponent_bits, in->a.mantissa_bits);
  case CX_OP_SELECT: return LLVMBuildSelect(b, a[0], a[1], a[2], "");
  case CX_OP_CLAMP: { /* min(max(x, lo), hi) with XLA's max/min */
    cxla_type xt = in->ops[1]->shape.type;
    LLVMValueRef m = cx_type_is_float(xt) ? float_binary(g, CX_OP_MAXIMUM, xt, a[1], a[0])
                                          : int_binary(g, in, CX_OP_MAXIMUM, xt, a[1], a[0]);
    return cx_type_is_float(xt) ? float_binary(g, CX_OP_MINIMUM, xt, m, a[2])
                                : int_binary(g, in, CX_OP_MINIMUM, xt, m, a[2]);
  }
  case CX_OP_IS_FINITE:
    if (!isf) return LLVMConstInt(g->cg->t_i1, 1, 0);
    return LLVMBuildFCmp(b, LLVMRealOLT, cx_ir_intr1(g, "llvm.fabs", a[0]),
                         LLVMConstReal(LLVMTypeOf(a[0]), __builtin_inf()), "");
  default: break;
  }
  if (in->nops == 1) return isf ? float_unary(g, in->op, t, a[0]) : int_unary(g, in, in->op, t, a[0]);
  if (in->nops == 2) return isf ? float_binary(g, in->op, t, a[0], a[1]) : int_binary(g, in, in->op, t, a[0], a[1]);
  return cx_gen_fail(g, in, "unexpected operand count");
}
