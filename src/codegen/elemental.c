/* elemental.c — elementwise arithmetic, logic, compare, select and clamp in LLVM IR with exactly
 * the interpreter's rules (src/interp/scalar.c): integer x/0 = -1 (all ones), INT_MIN/-1 =
 * INT_MIN, x%0 = x, the remainder takes the dividend's sign, shifts by >= the width give 0 (or
 * the sign for arithmetic right shifts), max/min propagate NaN with -0 < +0
 * (llvm.maximum/minimum), pred arithmetic as int8 then != 0, and f16/bf16 results rounded
 * after every op that could leave the type. Every integer operation is written so that no
 * input makes it poison or undefined (no division by zero, no over-wide shift).
 *
 * Each op's builders are one row of cx_elem_arith (float, integer and pred operands); the
 * transcendental ops are in elemental_math.c, convert and reduce-precision in
 * elemental_convert.c, and cx_gen_elementwise picks the row and the builder. */
#include "codegen/complex.h"
#include "ir/minifloat.h"

static int is_signed(cxla_type t) { return cx_type_kind(t) == CX_KIND_SINT; }
static LLVMValueRef fl(cx_gen *g, LLVMValueRef v) { return cx_ir_fmf(v, g->fmf); }
static LLVMBuilderRef B(cx_gen *g) { return g->cg->b; }
static LLVMValueRef zero_of(LLVMValueRef x) { return LLVMConstInt(LLVMTypeOf(x), 0, 0); }

#define BUILDER(name) static LLVMValueRef name(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a)
#define UNUSED (void)g, (void)in, (void)t, (void)a

/* ---- unary ---- */

BUILDER(same) { UNUSED; return a[0]; } /* copy; rounding ops on integers and pred */
BUILDER(f_abs) { UNUSED; return cx_ir_intr1(g, "llvm.fabs", a[0]); }
BUILDER(f_neg) { UNUSED; return LLVMBuildFNeg(B(g), a[0], ""); }
BUILDER(f_sign) { /* NaN and +-0 are their own sign */
  UNUSED;
  LLVMTypeRef ty = LLVMTypeOf(a[0]);
  LLVMValueRef keep = LLVMBuildFCmp(B(g), LLVMRealUEQ, a[0], LLVMConstReal(ty, 0), "");
  LLVMValueRef one = cx_ir_intr2(g, "llvm.copysign", LLVMConstReal(ty, 1), a[0]);
  return LLVMBuildSelect(B(g), keep, a[0], one, "");
}
BUILDER(f_floor) { UNUSED; return cx_ir_intr1(g, "llvm.floor", a[0]); }
BUILDER(f_ceil) { UNUSED; return cx_ir_intr1(g, "llvm.ceil", a[0]); }
BUILDER(f_round_afz) { UNUSED; return cx_ir_intr1(g, "llvm.round", a[0]); }
BUILDER(f_round_even) { UNUSED; return cx_ir_intr1(g, "llvm.roundeven", a[0]); }
BUILDER(f_is_finite) {
  UNUSED;
  return LLVMBuildFCmp(B(g), LLVMRealOLT, cx_ir_intr1(g, "llvm.fabs", a[0]),
                       LLVMConstReal(LLVMTypeOf(a[0]), __builtin_inf()), "");
}
BUILDER(always_finite) { UNUSED; return LLVMConstInt(g->cg->t_i1, 1, 0); }

BUILDER(i_abs) { /* abs(INT_MIN) wraps back to INT_MIN: llvm.abs with int_min_poison=0 */
  UNUSED;
  if (!is_signed(t)) return a[0];
  LLVMTypeRef tys[1] = {LLVMTypeOf(a[0])};
  LLVMValueRef args[2] = {a[0], LLVMConstInt(g->cg->t_i1, 0, 0)};
  return cx_ir_intrinsic(g, "llvm.abs", tys, 1, args, 2);
}
BUILDER(i_neg) { UNUSED; return LLVMBuildSub(B(g), zero_of(a[0]), a[0], ""); }
BUILDER(i_sign) {
  UNUSED;
  LLVMBuilderRef b = B(g);
  LLVMValueRef x = a[0], z = zero_of(x);
  LLVMTypeRef ty = LLVMTypeOf(x);
  if (is_signed(t)) {
    LLVMValueRef pos = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSGT, x, z, ""), ty, "");
    LLVMValueRef neg = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSLT, x, z, ""), ty, "");
    return LLVMBuildSub(b, pos, neg, "");
  }
  return LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, z, ""), ty, "");
}
BUILDER(i_not) { UNUSED; return LLVMBuildXor(B(g), a[0], LLVMConstAllOnes(LLVMTypeOf(a[0])), ""); }
BUILDER(p_not) { UNUSED; return LLVMBuildXor(B(g), a[0], LLVMConstInt(LLVMTypeOf(a[0]), 1, 0), ""); }
BUILDER(i_popcnt) { UNUSED; return cx_ir_intr1(g, "llvm.ctpop", a[0]); }
BUILDER(i_clz) {
  UNUSED;
  LLVMTypeRef ty = LLVMTypeOf(a[0]);
  LLVMValueRef args[2] = {a[0], LLVMConstInt(g->cg->t_i1, 0, 0)};
  return cx_ir_intrinsic(g, "llvm.ctlz", &ty, 1, args, 2);
}

/* ---- binary: floats ---- */

BUILDER(f_add) { UNUSED; return cx_gen_round(g, t, fl(g, LLVMBuildFAdd(B(g), a[0], a[1], ""))); }
BUILDER(f_sub) { UNUSED; return cx_gen_round(g, t, fl(g, LLVMBuildFSub(B(g), a[0], a[1], ""))); }
BUILDER(f_mul) { UNUSED; return cx_gen_round(g, t, fl(g, LLVMBuildFMul(B(g), a[0], a[1], ""))); }
/* With fast_div (the divisor is the row's value, so 1/b is computed once per row): q0 = a·(1/b),
 * the remainder a − q0·b (exact), and q0 + remainder·(1/b) rounded once, which is the correctly
 * rounded a/b (Markstein's theorem) where reduce_emit.c took this path: quotients in the normal
 * range and far from underflow. Three fused ops instead of a divide. */
BUILDER(f_div) {
  UNUSED;
  LLVMBuilderRef b = B(g);
  if (g->fast_div == in && LLVMTypeOf(a[0]) == g->cg->t_f32) {
    LLVMTypeRef f = g->cg->t_f32;
    LLVMValueRef r = LLVMBuildFDiv(b, LLVMConstReal(f, 1), a[1], "recip");
    LLVMValueRef q0 = LLVMBuildFMul(b, a[0], r, "");
    LLVMValueRef e = cx_ir_intrinsic(g, "llvm.fma", &f, 1, (LLVMValueRef[]){LLVMBuildFNeg(b, q0, ""), a[1], a[0]}, 3);
    return cx_gen_round(g, t, cx_ir_intrinsic(g, "llvm.fma", &f, 1, (LLVMValueRef[]){e, r, q0}, 3));
  }
  return cx_gen_round(g, t, LLVMBuildFDiv(b, a[0], a[1], ""));
}
BUILDER(f_rem) { UNUSED; return cx_gen_round(g, t, LLVMBuildFRem(B(g), a[0], a[1], "")); } /* fmod: exact */

/* XLA max/min with compares and selects: LLVM 19 narrows llvm.minimum/maximum of f16 values to
 * half precision and then returns the zero for (NaN, +-0) on x86, so f16 avoids them; the 8-
 * and 4-bit floats too, so that of two NaNs the first is kept, as the interpreter keeps it (the
 * sign of a NaN is part of their codes). Equal operands (only +0/-0 can differ) combine their
 * bits: min prefers -0, max +0. */
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
/* NaN-propagating, -0 < +0; exact, so no rounding needed */
BUILDER(f_max) {
  UNUSED;
  return t == CXLA_F16 || cx_mf_format_of(t) ? minmax_select(g, 1, a[0], a[1])
                                            : fl(g, cx_ir_intr2(g, "llvm.maximum", a[0], a[1]));
}
BUILDER(f_min) {
  UNUSED;
  return t == CXLA_F16 || cx_mf_format_of(t) ? minmax_select(g, 0, a[0], a[1])
                                            : fl(g, cx_ir_intr2(g, "llvm.minimum", a[0], a[1]));
}

/* ---- binary: integers ---- */

BUILDER(i_add) { UNUSED; return LLVMBuildAdd(B(g), a[0], a[1], ""); }
BUILDER(i_sub) { UNUSED; return LLVMBuildSub(B(g), a[0], a[1], ""); }
BUILDER(i_mul) { UNUSED; return LLVMBuildMul(B(g), a[0], a[1], ""); }
BUILDER(i_and) { UNUSED; return LLVMBuildAnd(B(g), a[0], a[1], ""); }
BUILDER(i_or) { UNUSED; return LLVMBuildOr(B(g), a[0], a[1], ""); }
BUILDER(i_xor) { UNUSED; return LLVMBuildXor(B(g), a[0], a[1], ""); }
BUILDER(i_max) { UNUSED; return cx_ir_intr2(g, is_signed(t) ? "llvm.smax" : "llvm.umax", a[0], a[1]); }
BUILDER(i_min) { UNUSED; return cx_ir_intr2(g, is_signed(t) ? "llvm.smin" : "llvm.umin", a[0], a[1]); }

BUILDER(i_div) {
  UNUSED;
  LLVMBuilderRef b = B(g);
  LLVMValueRef x = a[0], c = a[1], zero = zero_of(x), ones = LLVMConstAllOnes(LLVMTypeOf(x));
  LLVMValueRef one = LLVMConstInt(LLVMTypeOf(x), 1, 0);
  LLVMValueRef z = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
  if (!is_signed(t)) {
    LLVMValueRef q = LLVMBuildUDiv(b, x, LLVMBuildSelect(b, z, one, c, ""), "");
    return LLVMBuildSelect(b, z, ones, q, "");
  }
  /* divisor -1 is a negation (INT_MIN/-1 wraps to INT_MIN); 0 gives -1 */
  LLVMValueRef m1 = LLVMBuildICmp(b, LLVMIntEQ, c, ones, "");
  LLVMValueRef safe = LLVMBuildSelect(b, LLVMBuildOr(b, z, m1, ""), one, c, "");
  LLVMValueRef q = LLVMBuildSDiv(b, x, safe, "");
  q = LLVMBuildSelect(b, m1, LLVMBuildSub(b, zero, x, ""), q, "");
  return LLVMBuildSelect(b, z, ones, q, "");
}

BUILDER(i_rem) {
  UNUSED;
  LLVMBuilderRef b = B(g);
  LLVMValueRef x = a[0], c = a[1], zero = zero_of(x), ones = LLVMConstAllOnes(LLVMTypeOf(x));
  LLVMValueRef one = LLVMConstInt(LLVMTypeOf(x), 1, 0);
  LLVMValueRef z = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
  if (!is_signed(t)) {
    LLVMValueRef r = LLVMBuildURem(b, x, LLVMBuildSelect(b, z, one, c, ""), "");
    return LLVMBuildSelect(b, z, x, r, "");
  }
  LLVMValueRef m1 = LLVMBuildICmp(b, LLVMIntEQ, c, ones, "");
  LLVMValueRef safe = LLVMBuildSelect(b, LLVMBuildOr(b, z, m1, ""), one, c, "");
  LLVMValueRef r = LLVMBuildSRem(b, x, safe, "");
  r = LLVMBuildSelect(b, m1, zero, r, "");
  return LLVMBuildSelect(b, z, x, r, "");
}

/* amounts read as unsigned; >= width shifts everything out */
static LLVMValueRef shift(cx_gen *g, cx_op op, LLVMValueRef x, LLVMValueRef c) {
  LLVMBuilderRef b = B(g);
  LLVMTypeRef ty = LLVMTypeOf(x);
  unsigned long long bits = LLVMGetIntTypeWidth(ty);
  LLVMValueRef zero = zero_of(x), big = LLVMBuildICmp(b, LLVMIntUGE, c, LLVMConstInt(ty, bits, 0), "");
  if (op == CX_OP_SHIFT_RIGHT_ARITHMETIC)
    return LLVMBuildAShr(b, x, LLVMBuildSelect(b, big, LLVMConstInt(ty, bits - 1, 0), c, ""), "");
  LLVMValueRef s = LLVMBuildSelect(b, big, zero, c, "");
  LLVMValueRef r = op == CX_OP_SHIFT_LEFT ? LLVMBuildShl(b, x, s, "") : LLVMBuildLShr(b, x, s, "");
  return LLVMBuildSelect(b, big, zero, r, "");
}
BUILDER(i_shl) { UNUSED; return shift(g, CX_OP_SHIFT_LEFT, a[0], a[1]); }
BUILDER(i_shr_a) { UNUSED; return shift(g, CX_OP_SHIFT_RIGHT_ARITHMETIC, a[0], a[1]); }
BUILDER(i_shr_l) { UNUSED; return shift(g, CX_OP_SHIFT_RIGHT_LOGICAL, a[0], a[1]); }

/* ---- compare, select, clamp: any operand type ---- */

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

BUILDER(compare) { return cx_gen_compare(g, in->a.dir, in->a.cmp_type, t, a[0], a[1]); }
BUILDER(select3) { UNUSED; return LLVMBuildSelect(B(g), a[0], a[1], a[2], ""); }

BUILDER(clamp) { /* min(max(x, lo), hi) with XLA's max/min on x's type */
  UNUSED;
  cxla_type xt = in->ops[1]->shape.type;
  cx_elem_fn max = cx_elem_pick(&cx_elem_arith[CX_OP_MAXIMUM], xt);
  cx_elem_fn min = cx_elem_pick(&cx_elem_arith[CX_OP_MINIMUM], xt);
  LLVMValueRef m = max(g, in, xt, (LLVMValueRef[]){a[1], a[0]});
  return min(g, in, xt, (LLVMValueRef[]){m, a[2]});
}

#undef BUILDER
#undef UNUSED

const cx_elem_hooks cx_elem_arith[CX_OP_COUNT] = {
  /*                        float         integer         pred           complex */
  [CX_OP_COPY] =           {same,        same,           same,          same},
  [CX_OP_ABS] =            {f_abs,       i_abs,          NULL,          cx_cgen_abs},
  [CX_OP_NEGATE] =         {f_neg,       i_neg,          NULL,          cx_cgen_neg},
  [CX_OP_SIGN] =           {f_sign,      i_sign,         NULL,          cx_cgen_sign},
  [CX_OP_REAL] =           {same,        NULL,           NULL,          cx_cgen_real},
  [CX_OP_IMAG] =           {cx_cgen_imag_of_real, NULL,  NULL,          cx_cgen_imag},
  [CX_OP_FLOOR] =          {f_floor,     same,           same},
  [CX_OP_CEIL] =           {f_ceil,      same,           same},
  [CX_OP_ROUND_AFZ] =      {f_round_afz, same,           same},
  [CX_OP_ROUND_EVEN] =     {f_round_even, same,          same},
  [CX_OP_IS_FINITE] =      {f_is_finite, always_finite,  always_finite},
  [CX_OP_NOT] =            {NULL,        i_not,          p_not},
  [CX_OP_POPCNT] =         {NULL,        i_popcnt,       NULL},
  [CX_OP_CLZ] =            {NULL,        i_clz,          NULL},
  [CX_OP_ADD] =            {f_add,       i_add,          i_or,          cx_cgen_add},
  [CX_OP_SUBTRACT] =       {f_sub,       i_sub,          i_xor,         cx_cgen_sub},
  [CX_OP_MULTIPLY] =       {f_mul,       i_mul,          i_and,         cx_cgen_mul},
  [CX_OP_DIVIDE] =         {f_div,       i_div,          NULL,          cx_cgen_div},
  [CX_OP_COMPLEX] =        {cx_cgen_compose, NULL,       NULL,          NULL},
  [CX_OP_REMAINDER] =      {f_rem,       i_rem,          NULL},
  [CX_OP_MAXIMUM] =        {f_max,       i_max,          i_or},
  [CX_OP_MINIMUM] =        {f_min,       i_min,          i_and},
  [CX_OP_AND] =            {NULL,        i_and,          i_and},
  [CX_OP_OR] =             {NULL,        i_or,           i_or},
  [CX_OP_XOR] =            {NULL,        i_xor,          i_xor},
  [CX_OP_SHIFT_LEFT] =     {NULL,        i_shl,          NULL},
  [CX_OP_SHIFT_RIGHT_ARITHMETIC] = {NULL, i_shr_a,       NULL},
  [CX_OP_SHIFT_RIGHT_LOGICAL] = {NULL,   i_shr_l,        NULL},
  [CX_OP_COMPARE] =        {compare,     compare,        compare,       cx_cgen_compare},
  [CX_OP_SELECT] =         {select3,     select3,        select3,       select3},
  [CX_OP_CLAMP] =          {clamp,       clamp,          clamp},
};

/* ---- choosing the builder ---- */

const cx_elem_hooks *cx_elem_hooks_of(cx_op op) {
  static const cx_elem_hooks *const tables[] = {cx_elem_arith, cx_elem_math, cx_elem_convert};
  if ((unsigned)op >= CX_OP_COUNT) return NULL;
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    const cx_elem_hooks *h = &tables[i][op];
    if (h->f || h->i || h->pred || h->c) return h;
  }
  return NULL;
}

cx_elem_fn cx_elem_pick(const cx_elem_hooks *h, cxla_type t) {
  if (!h) return NULL;
  if (cx_type_is_complex(t)) return h->c;
  return cx_type_is_float(t) ? h->f : t == CXLA_PRED ? h->pred : h->i;
}

LLVMValueRef cx_gen_elementwise(cx_gen *g, const cx_instr *in, LLVMValueRef *a) {
  cxla_type t = in->nops ? in->ops[0]->shape.type : in->shape.type;
  cx_elem_fn f = cx_elem_pick(cx_elem_hooks_of(in->op), t);
  if (!f) return cx_gen_fail(g, in, "not defined on %s", cxla_type_name(t));
  return f(g, in, t, a);
}
