/* ew_rules.c — the scalar rule of every elementwise op the interpreter runs, one table entry
 * per op next to its functions (the complex ones in ew_complex.c). Adding an elementwise op to the interpreter is an entry here
 * and its functions, for the element types cx_op_valid_for_type accepts; an op without an
 * entry is refused (cx_interp_has_evaluator), never computed as some other op.
 *
 * Floats are computed in double and rounded to the element type by the caller; integers in
 * 64 bits and wrapped to the type's width (unsigned types on their bit pattern); pred is 0/1.
 * The rules follow XLA's HloEvaluator and elemental IR emitter; where they differ, the comment
 * says which we chose. */
#include "interp/internal.h"

/* ---- floats, in double ---- */

/* XLA maximum/minimum (llvm.maximum/minimum): NaN if either is NaN, and -0 < +0. */
static double f_max(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a > b) return a;
  if (b > a) return b;
  return signbit(a) ? b : a; /* equal: only +0/-0 can differ */
}
static double f_min(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a < b) return a;
  if (b < a) return b;
  return signbit(a) ? a : b;
}

static double f_copy(double x) { return x; }
static double f_abs(double x) { return fabs(x); }
static double f_negate(double x) { return -x; }
static double f_sign(double x) { return (isnan(x) || x == 0) ? x : copysign(1.0, x); }
static double f_exp(double x) { return exp(x); }
static double f_expm1(double x) { return expm1(x); }
static double f_log(double x) { return log(x); }
static double f_log1p(double x) { return log1p(x); }
static double f_logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
static double f_sqrt(double x) { return sqrt(x); }
static double f_rsqrt(double x) { return 1.0 / sqrt(x); }
static double f_cbrt(double x) { return cbrt(x); }
static double f_sin(double x) { return sin(x); }
static double f_cos(double x) { return cos(x); }
static double f_tan(double x) { return tan(x); }
static double f_tanh(double x) { return tanh(x); }
/* A signalling NaN comes out quiet, as from IEEE's roundToIntegral and glibc's floor/ceil
 * (GCC's inline floor/ceil, which it uses in some places and not others, would pass it through). */
static double f_floor(double x) { return isnan(x) ? x + x : floor(x); }
static double f_ceil(double x) { return isnan(x) ? x + x : ceil(x); }
static double f_round_afz(double x) { return round(x); }
static double f_round_even(double x) { return nearbyint(x); } /* the default rounding mode: ties to even */
static double f_erf(double x) { return erf(x); }
static double f_real(double x) { return x; }
static double f_imag(double x) { (void)x; return 0; } /* XLA: imag of a real number is 0, NaN's too */
static int64_t fp_is_finite(double x) { return isfinite(x) != 0; }

static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
static double f_rem(double a, double b) { return fmod(a, b); }
/* C's pow already gives XLA's 1^y = 1 and x^0 = 1 (NaN included) */
static double f_pow(double a, double b) { return pow(a, b); }
static double f_atan2(double a, double b) { return atan2(a, b); }

/* ---- integers: s_ signed, u_ unsigned, i_ both ---- */

static int64_t i_copy(cxla_type t, int64_t x) { (void)t; return x; }
/* abs(INT_MIN) wraps back to INT_MIN */
static int64_t s_abs(cxla_type t, int64_t x) { return x < 0 ? cx_wrap_int(t, (int64_t)(0 - (uint64_t)x)) : x; }
static int64_t i_negate(cxla_type t, int64_t x) { return cx_wrap_int(t, (int64_t)(0 - (uint64_t)x)); }
static int64_t s_sign(cxla_type t, int64_t x) { (void)t; return (x > 0) - (x < 0); }
static int64_t i_not(cxla_type t, int64_t x) { return cx_wrap_int(t, ~x); }
static int64_t i_popcnt(cxla_type t, int64_t x) { return __builtin_popcountll(cx_zext(cx_type_bits(t), x)); }
static int64_t i_clz(cxla_type t, int64_t x) {
  int bits = cx_type_bits(t);
  uint64_t u = cx_zext(bits, x);
  return u ? __builtin_clzll(u) - (64 - bits) : bits;
}

static int64_t i_add(cxla_type t, int64_t a, int64_t b) { return cx_wrap_int(t, (int64_t)((uint64_t)a + (uint64_t)b)); }
static int64_t i_sub(cxla_type t, int64_t a, int64_t b) { return cx_wrap_int(t, (int64_t)((uint64_t)a - (uint64_t)b)); }
static int64_t i_mul(cxla_type t, int64_t a, int64_t b) { return cx_wrap_int(t, (int64_t)((uint64_t)a * (uint64_t)b)); }

static int64_t int_min(cxla_type t) {
  int bits = cx_type_bits(t);
  return bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
}

/* x/0 has all bits set (-1 signed, UINT_MAX unsigned); INT_MIN/-1 = INT_MIN; C truncates
 * toward zero, as XLA does */
static int64_t s_div(cxla_type t, int64_t a, int64_t b) {
  if (b == 0) return cx_wrap_int(t, -1);
  if (b == -1) return a == int_min(t) ? a : -a;
  return a / b;
}
static int64_t u_div(cxla_type t, int64_t a, int64_t b) {
  if (b == 0) return cx_wrap_int(t, -1);
  int bits = cx_type_bits(t);
  return cx_wrap_int(t, (int64_t)(cx_zext(bits, a) / cx_zext(bits, b)));
}

/* x%0 = x; INT_MIN%-1 = 0; otherwise the sign of the dividend (C's %) */
static int64_t s_rem(cxla_type t, int64_t a, int64_t b) {
  (void)t;
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}
static int64_t u_rem(cxla_type t, int64_t a, int64_t b) {
  if (b == 0) return a;
  int bits = cx_type_bits(t);
  return cx_wrap_int(t, (int64_t)(cx_zext(bits, a) % cx_zext(bits, b)));
}

/* Exact base^exp modulo 2^64 by repeated squaring; wrapping to the width afterwards gives the
 * result modulo 2^width. */
static uint64_t ipow(uint64_t base, uint64_t exp) {
  uint64_t acc = 1;
  while (exp) {
    if (exp & 1) acc *= base;
    base *= base;
    exp >>= 1;
  }
  return acc;
}

/* HloEvaluator: 1^y = x^0 = 1; a negative signed exponent gives (x == 1 ? 1 : 0) */
static int64_t s_pow(cxla_type t, int64_t a, int64_t b) {
  if (a == 1 || b == 0) return 1;
  if (b < 0) return 0;
  return cx_wrap_int(t, (int64_t)ipow((uint64_t)a, (uint64_t)b));
}
static int64_t u_pow(cxla_type t, int64_t a, int64_t b) {
  if (a == 1 || b == 0) return 1;
  return cx_wrap_int(t, (int64_t)ipow((uint64_t)a, cx_zext(cx_type_bits(t), b)));
}

static int64_t s_max(cxla_type t, int64_t a, int64_t b) { (void)t; return a > b ? a : b; }
static int64_t s_min(cxla_type t, int64_t a, int64_t b) { (void)t; return a < b ? a : b; }
static int64_t u_max(cxla_type t, int64_t a, int64_t b) {
  int bits = cx_type_bits(t);
  return cx_zext(bits, a) > cx_zext(bits, b) ? a : b;
}
static int64_t u_min(cxla_type t, int64_t a, int64_t b) {
  int bits = cx_type_bits(t);
  return cx_zext(bits, a) < cx_zext(bits, b) ? a : b;
}

/* pred and the integers alike */
static int64_t i_and(cxla_type t, int64_t a, int64_t b) { (void)t; return a & b; }
static int64_t i_or(cxla_type t, int64_t a, int64_t b) { (void)t; return a | b; }
static int64_t i_xor(cxla_type t, int64_t a, int64_t b) { (void)t; return a ^ b; }

/* Shift amounts are read as unsigned of the type's width; >= width shifts everything out. */
static int64_t i_shl(cxla_type t, int64_t a, int64_t b) {
  uint64_t n = cx_zext(cx_type_bits(t), b);
  return n >= (uint64_t)cx_type_bits(t) ? 0 : cx_wrap_int(t, (int64_t)((uint64_t)a << n));
}
static int64_t i_shr_logical(cxla_type t, int64_t a, int64_t b) {
  int bits = cx_type_bits(t);
  uint64_t n = cx_zext(bits, b);
  return n >= (uint64_t)bits ? 0 : cx_wrap_int(t, (int64_t)(cx_zext(bits, a) >> n));
}
static int64_t i_shr_arithmetic(cxla_type t, int64_t a, int64_t b) {
  int bits = cx_type_bits(t);
  uint64_t n = cx_zext(bits, b);
  int64_t s = cx_sext(bits, a); /* unsigned types shift in their top bit too */
  if (n >= (uint64_t)bits) return cx_wrap_int(t, s < 0 ? -1 : 0);
  return cx_wrap_int(t, s < 0 ? ~(~s >> n) : s >> n); /* never right-shifts a negative value */
}

/* ---- pred (add, multiply, maximum, minimum are or/and: XLA computes pred arithmetic as
 * int8(x) OP int8(y) != 0) ---- */

static int64_t p_not(cxla_type t, int64_t x) { (void)t; return !x; }

/* ---- ops whose value needs the instruction (attributes, mixed types) ---- */

static cx_scalar compare(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  cx_scalar r;
  r.i = cx_scalar_compare(in->a.dir, in->a.cmp_type, t, x[0], x[1]);
  return r;
}

static cx_scalar convert(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  return cx_scalar_convert(t, in->shape.type, x[0]);
}

static cx_scalar bitcast_convert(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  return cx_scalar_bitcast(t, in->shape.type, x[0]);
}

/* stochastic-convert of a float x (type t) with random bits r to a signed integer type:
 * |x| rounds down, or up when r < fraction(|x|) * 2^bits(r) (the fraction's leading bits as
 * an unsigned number: up with probability fraction for uniform r), the sign comes back, and
 * x at or beyond the type's limits (as t rounds them; infinities included) saturates; NaN
 * gives 0. XLA's HloEvaluator and its StochasticConvertDecomposer compute the same: the
 * decomposer's +1 and negation wrap, which the evaluator spells out for (min, -max). The
 * fraction is exact in double and the scaled value truncates, as XLA's convert does. */
static cx_scalar stochastic_convert(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  cxla_type to = in->shape.type;
  int bits = cx_type_bits(to), rbits = cx_type_bits(in->ops[1]->shape.type);
  int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1, min = -max - 1;
  double v = x[0].f;
  cx_scalar r = {.i = 0};
  if (isnan(v)) return r;
  if (v >= cx_round_to_type(t, (double)max)) return r.i = max, r;
  if (v <= cx_round_to_type(t, (double)min)) return r.i = min, r;
  double a = fabs(v), whole = floor(a);
  uint64_t n = (uint64_t)whole, fixed = (uint64_t)ldexp(a - whole, rbits);
  if (cx_zext(rbits, x[1].i) < fixed) n++;
  r.i = cx_wrap_int(to, (int64_t)(v < 0 ? 0 - n : n));
  return r;
}

static cx_scalar reduce_precision(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  return cx_scalar_reduce_precision(t, x[0], in->a.exponent_bits, in->a.mantissa_bits);
}

/* complex(re, im): the parts are already of the component type */
static cx_scalar complex_compose(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  (void)in, (void)t;
  cx_scalar r = {.f = x[0].f, .im = x[1].f};
  return r;
}

static cx_scalar select(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  (void)in, (void)t;
  return x[0].i ? x[1] : x[2];
}

/* clamp(lo, x, hi) = min(max(x, lo), hi) with XLA's max/min */
static cx_scalar clamp(const cx_instr *in, cxla_type t, const cx_scalar *x) {
  (void)in;
  return cx_scalar_binary(CX_OP_MINIMUM, t, cx_scalar_binary(CX_OP_MAXIMUM, t, x[1], x[0]), x[2]);
}

/* Ill-formed instructions the verifier should have refused. */
static const char *select_ill_formed(const cx_instr *in, const cxla_type *types) {
  (void)in;
  return types[0] != CXLA_PRED ? "select needs a pred selector" : NULL;
}
static const char *stochastic_convert_ill_formed(const cx_instr *in, const cxla_type *types) {
  if (cx_type_kind(types[1]) != CX_KIND_UINT || cx_type_bits(types[1]) != cx_type_bits(types[0]))
    return "stochastic-convert needs unsigned random numbers of the operand's width";
  return cx_type_kind(in->shape.type) != CX_KIND_SINT ? "stochastic-convert converts to signed integers only" : NULL;
}
static const char *reduce_precision_ill_formed(const cx_instr *in, const cxla_type *types) {
  (void)types;
  return in->a.exponent_bits < 1 || in->a.mantissa_bits < 0
             ? "exponent_bits must be >= 1 and mantissa_bits >= 0" : NULL;
}

/* Operand types of the ops whose operands are not all of the result's type. */
static cxla_type op_type(const cx_instr *in, int k) { return in->ops[k]->shape.type; }
static int same_types_ok(const cx_instr *in) {
  for (int k = 0; k < in->nops; k++)
    if (op_type(in, k) != in->shape.type) return 0;
  return cx_op_valid_for_type(in->op, in->shape.type);
}
static int convert_ok(const cx_instr *in) { return cx_op_valid_for_type(in->op, op_type(in, 0)); }
static int bitcast_convert_ok(const cx_instr *in) { /* same bit width (s4 and s8 share a byte, not a width) */
  return cx_type_bits(op_type(in, 0)) == cx_type_bits(in->shape.type);
}
static int compare_ok(const cx_instr *in) {
  return in->shape.type == CXLA_PRED && op_type(in, 1) == op_type(in, 0) &&
         cx_op_valid_for_type(in->op, op_type(in, 0));
}
static int stochastic_convert_ok(const cx_instr *in) {
  cxla_type r = op_type(in, 1);
  return cx_op_valid_for_type(in->op, op_type(in, 0)) && cx_type_kind(r) == CX_KIND_UINT &&
         cx_type_bits(r) == cx_type_bits(op_type(in, 0)) && cx_type_kind(in->shape.type) == CX_KIND_SINT;
}
/* abs, real, imag: a complex operand gives its component type */
static int part_ok(const cx_instr *in) {
  return in->shape.type == cx_type_part(op_type(in, 0)) && cx_op_valid_for_type(in->op, op_type(in, 0));
}
static int complex_ok(const cx_instr *in) {
  return op_type(in, 1) == op_type(in, 0) && in->shape.type == cx_type_complex_of(op_type(in, 0));
}
static int is_finite_ok(const cx_instr *in) {
  return in->shape.type == CXLA_PRED && cx_op_valid_for_type(in->op, op_type(in, 0));
}
static int select_ok(const cx_instr *in) {
  return op_type(in, 0) == CXLA_PRED && op_type(in, 1) == in->shape.type && op_type(in, 2) == in->shape.type;
}
static int reduce_precision_ok(const cx_instr *in) {
  return !reduce_precision_ill_formed(in, NULL) && same_types_ok(in);
}

/* ---- the table ---- */

#define F1(f) .f1 = f
#define F2(f) .f2 = f
#define INT1(s, u) .s1 = s, .u1 = u
#define INT2(s, u) .s2 = s, .u2 = u

static const cx_ew_rule k_rules[CX_OP_COUNT] = {
  [CX_OP_ABS] = {F1(f_abs), .s1 = s_abs, .cr1 = cx_c_abs, .types_ok = part_ok},
  [CX_OP_NEGATE] = {F1(f_negate), INT1(i_negate, i_negate), .c1 = cx_c_negate},
  [CX_OP_SIGN] = {F1(f_sign), .s1 = s_sign, .c1 = cx_c_sign},
  [CX_OP_EXP] = {F1(f_exp), .c1 = cx_c_exp},
  [CX_OP_EXPM1] = {F1(f_expm1), .c1 = cx_c_expm1},
  [CX_OP_LOG] = {F1(f_log), .c1 = cx_c_log},
  [CX_OP_LOG1P] = {F1(f_log1p), .c1 = cx_c_log1p},
  [CX_OP_LOGISTIC] = {F1(f_logistic), .c1 = cx_c_logistic},
  [CX_OP_SQRT] = {F1(f_sqrt), .c1 = cx_c_sqrt},
  [CX_OP_RSQRT] = {F1(f_rsqrt), .c1 = cx_c_rsqrt},
  [CX_OP_CBRT] = {F1(f_cbrt), .c1 = cx_c_cbrt},
  [CX_OP_SIN] = {F1(f_sin), .c1 = cx_c_sin},
  [CX_OP_COS] = {F1(f_cos), .c1 = cx_c_cos},
  [CX_OP_TAN] = {F1(f_tan), .c1 = cx_c_tan},
  [CX_OP_TANH] = {F1(f_tanh), .c1 = cx_c_tanh},
  [CX_OP_FLOOR] = {F1(f_floor)},
  [CX_OP_CEIL] = {F1(f_ceil)},
  [CX_OP_ROUND_AFZ] = {F1(f_round_afz)},
  [CX_OP_ROUND_EVEN] = {F1(f_round_even)},
  [CX_OP_ERF] = {F1(f_erf)},
  [CX_OP_REAL] = {F1(f_real), .cr1 = cx_c_real, .types_ok = part_ok},
  [CX_OP_IMAG] = {F1(f_imag), .cr1 = cx_c_imag, .types_ok = part_ok},
  [CX_OP_IS_FINITE] = {.fp1 = fp_is_finite, .types_ok = is_finite_ok},
  [CX_OP_NOT] = {INT1(i_not, i_not), .p1 = p_not},
  [CX_OP_POPCNT] = {INT1(i_popcnt, i_popcnt)},
  [CX_OP_CLZ] = {INT1(i_clz, i_clz)},
  [CX_OP_COPY] = {F1(f_copy), INT1(i_copy, i_copy), .p1 = i_copy, .c1 = cx_c_copy},
  [CX_OP_REDUCE_PRECISION] = {.eval = reduce_precision, .types_ok = reduce_precision_ok,
                              .ill_formed = reduce_precision_ill_formed},
  [CX_OP_CONVERT] = {.eval = convert, .types_ok = convert_ok},
  [CX_OP_BITCAST_CONVERT] = {.eval = bitcast_convert, .types_ok = bitcast_convert_ok},
  [CX_OP_ADD] = {F2(f_add), INT2(i_add, i_add), .p2 = i_or, .c2 = cx_c_add},
  [CX_OP_SUBTRACT] = {F2(f_sub), INT2(i_sub, i_sub), .c2 = cx_c_sub},
  [CX_OP_MULTIPLY] = {F2(f_mul), INT2(i_mul, i_mul), .p2 = i_and, .c2 = cx_c_mul},
  [CX_OP_DIVIDE] = {F2(f_div), INT2(s_div, u_div), .c2 = cx_c_div},
  [CX_OP_REMAINDER] = {F2(f_rem), INT2(s_rem, u_rem)},
  [CX_OP_POWER] = {F2(f_pow), INT2(s_pow, u_pow), .c2 = cx_c_pow},
  [CX_OP_ATAN2] = {F2(f_atan2), .c2 = cx_c_atan2},
  [CX_OP_COMPLEX] = {.eval = complex_compose, .types_ok = complex_ok},
  [CX_OP_MAXIMUM] = {F2(f_max), INT2(s_max, u_max), .p2 = i_or},
  [CX_OP_MINIMUM] = {F2(f_min), INT2(s_min, u_min), .p2 = i_and},
  [CX_OP_AND] = {INT2(i_and, i_and), .p2 = i_and},
  [CX_OP_OR] = {INT2(i_or, i_or), .p2 = i_or},
  [CX_OP_XOR] = {INT2(i_xor, i_xor), .p2 = i_xor},
  [CX_OP_SHIFT_LEFT] = {INT2(i_shl, i_shl)},
  [CX_OP_SHIFT_RIGHT_ARITHMETIC] = {INT2(i_shr_arithmetic, i_shr_arithmetic)},
  [CX_OP_SHIFT_RIGHT_LOGICAL] = {INT2(i_shr_logical, i_shr_logical)},
  [CX_OP_COMPARE] = {.eval = compare, .types_ok = compare_ok},
  [CX_OP_STOCHASTIC_CONVERT] = {.eval = stochastic_convert, .types_ok = stochastic_convert_ok,
                                .ill_formed = stochastic_convert_ill_formed},
  [CX_OP_SELECT] = {.eval = select, .types_ok = select_ok, .ill_formed = select_ill_formed, .type_operand = 1},
  [CX_OP_CLAMP] = {.eval = clamp, .type_operand = 1},
};

/* op's row, empty for the ops without a rule (whose functions are all NULL). */
static const cx_ew_rule *row(cx_op op) {
  static const cx_ew_rule none;
  return (unsigned)op < CX_OP_COUNT ? &k_rules[op] : &none;
}

const cx_ew_rule *cx_ew_rule_of(cx_op op) {
  const cx_ew_rule *r = row(op);
  /* the commonest first: this runs for every instruction of a scalar computation */
  return r->f2 || r->s2 || r->eval || r->f1 || r->s1 || r->p2 || r->p1 || r->u2 || r->u1 || r->fp1 || r->c1 ||
                 r->cr1 || r->c2
             ? r
             : NULL;
}

int cx_ew_types_ok(const cx_ew_rule *r, const cx_instr *in) {
  return r->types_ok ? r->types_ok(in) : same_types_ok(in);
}

/* ---- applying a rule. A type the op is not defined on (cx_op_valid_for_type, which every
 * evaluator asks first) gives 0, never another op's value. ---- */

static cx_scalar unary(const cx_ew_rule *r, cxla_type t, cx_kind kind, cx_scalar x) {
  cx_scalar v = {.i = 0, .im = 0};
  switch (kind) {
  case CX_KIND_FLOAT:
    if (r->f1) v.f = cx_round_to_type(t, r->f1(x.f));
    else if (r->fp1) v.i = r->fp1(x.f);
    break;
  case CX_KIND_SINT: if (r->s1) v.i = r->s1(t, x.i); break;
  case CX_KIND_UINT: if (r->u1) v.i = r->u1(t, x.i); break;
  case CX_KIND_PRED: if (r->p1) v.i = r->p1(t, x.i); break;
  case CX_KIND_COMPLEX: {
    cxla_type part = cx_type_part(t);
    cx_cplx z = {x.f, x.im};
    if (r->c1) {
      cx_cplx c = r->c1(z);
      v.f = cx_round_to_type(part, c.re);
      v.im = cx_round_to_type(part, c.im);
    } else if (r->cr1) {
      v.f = cx_round_to_type(part, r->cr1(z));
    }
    break;
  }
  case CX_KIND_NONE: break;
  }
  return v;
}

static cx_scalar binary(const cx_ew_rule *r, cxla_type t, cx_kind kind, cx_scalar a, cx_scalar b) {
  cx_scalar v = {.i = 0, .im = 0};
  switch (kind) {
  case CX_KIND_FLOAT: if (r->f2) v.f = cx_round_to_type(t, r->f2(a.f, b.f)); break;
  case CX_KIND_SINT: if (r->s2) v.i = r->s2(t, a.i, b.i); break;
  case CX_KIND_UINT: if (r->u2) v.i = r->u2(t, a.i, b.i); break;
  case CX_KIND_PRED: if (r->p2) v.i = r->p2(t, a.i, b.i); break;
  case CX_KIND_COMPLEX:
    if (r->c2) {
      cx_cplx c = r->c2((cx_cplx){a.f, a.im}, (cx_cplx){b.f, b.im});
      v.f = cx_round_to_type(cx_type_part(t), c.re);
      v.im = cx_round_to_type(cx_type_part(t), c.im);
    }
    break;
  case CX_KIND_NONE: break;
  }
  return v;
}

cx_scalar cx_ew_call(const cx_ew_bound *b, const cx_scalar *args) {
  const cx_ew_rule *r = b->r;
  if (r->eval) return r->eval(b->in, b->t, args);
  if (b->in->nops != 1) return binary(r, b->t, b->kind, args[0], args[1]);
  return unary(r, b->t, b->kind, args[0]);
}

/* The ops with attributes (eval) need the instruction: cx_scalar_eval. */
cx_scalar cx_scalar_unary(cx_op op, cxla_type type, cx_scalar x) {
  return unary(row(op), type, cx_type_kind(type), x);
}

cx_scalar cx_scalar_binary(cx_op op, cxla_type type, cx_scalar a, cx_scalar b) {
  return binary(row(op), type, cx_type_kind(type), a, b);
}
