/* simplify_elementwise.c — the simplifier's rules for elementwise ops, one per op. Every rule
 * preserves exact semantics, so several identities that hold in real arithmetic are applied
 * only where they also hold in floating point:
 *   x + 0 -> x only for integers (-0 + +0 is +0); for floats only x + (-0) -> x, which is exact
 *   for every x, -0 and NaN included. x - (+0) -> x likewise.
 *   x * 0 -> 0 only for integers (NaN * 0 is NaN, -1 * 0 is -0).
 *   compare(x, x) folds only for integers, pred and TOTALORDER (NaN != NaN otherwise). */
#include <math.h>
#include "passes/simplify.h"

static int is_intlike(cxla_type t) { return cx_type_is_int(t) || t == CXLA_PRED; }

/* 1 for the "one" of a numeric type (multiplicative identity). */
static int is_one(const cx_instr *x) {
  return cx_type_is_int(x->shape.type) ? cx_simp_is_int(x, 1) : cx_simp_is_float(x, 1.0);
}

static cxla_status splat_int(cx_instr *in, int64_t k, cx_instr **out) {
  cx_scalar v;
  v.i = in->shape.type == CXLA_PRED ? (k & 1) : cx_wrap_int(in->shape.type, k);
  return (*out = cx_simp_splat(in, &in->shape, v)) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* x / 2^k -> x * 2^-k: both are the one real number x * 2^-k rounded once, so they agree
 * bit for bit (NaN, infinities, -0 and subnormal results included) as long as 2^-k itself is
 * exact in the type; a multiply is much cheaper than a divide. */
static cxla_status divide_by_power_of_two(cx_instr *in, cx_instr **out) {
  cx_instr *b = in->ops[1];
  cxla_type t = in->shape.type;
  cx_scalar v;
  int e;
  if (!cx_simp_uniform(b, &v) || !isfinite(v.f) || v.f == 0 || fabs(frexp(v.f, &e)) != 0.5) return CXLA_OK;
  double r = 1.0 / v.f; /* exact in double: a power of two within double's range */
  if (cx_round_to_type(t, r) != r || r * v.f != 1.0) return CXLA_OK;
  cx_scalar rv;
  rv.f = r;
  cx_instr *k = cx_simp_splat(in, &b->shape, rv);
  cx_instr *ops[2] = {in->ops[0], k};
  *out = k ? cx_simp_new(in, CX_OP_MULTIPLY, &in->shape, 2, ops) : NULL;
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* What the binary rules look at: the operands and the kind of their element type. */
typedef struct {
  cx_instr *a, *b;
  cxla_type t;
  int I, F, P; /* integer, float, pred */
} bin;

static bin operands(cx_instr *in) {
  bin o = {in->ops[0], in->ops[1], in->ops[0]->shape.type, 0, 0, 0};
  o.I = cx_type_is_int(o.t);
  o.F = cx_type_is_float(o.t);
  o.P = o.t == CXLA_PRED;
  return o;
}

cxla_status cx_simp_add(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if (o.I && cx_simp_is_int(o.b, 0)) *out = o.a;
  else if (o.I && cx_simp_is_int(o.a, 0)) *out = o.b;
  else if (o.F && cx_simp_is_float(o.b, -0.0)) *out = o.a;
  else if (o.F && cx_simp_is_float(o.a, -0.0)) *out = o.b;
  return CXLA_OK;
}

cxla_status cx_simp_subtract(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if (o.I && cx_simp_is_int(o.b, 0)) *out = o.a;
  else if (o.F && cx_simp_is_float(o.b, 0.0)) *out = o.a;
  else if (o.I && o.a == o.b) return splat_int(in, 0, out); /* wraps consistently: x - x == 0 */
  return CXLA_OK;
}

cxla_status cx_simp_multiply(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if ((o.I || o.F) && is_one(o.b)) *out = o.a;
  else if ((o.I || o.F) && is_one(o.a)) *out = o.b;
  else if (o.I && (cx_simp_is_int(o.a, 0) || cx_simp_is_int(o.b, 0))) return splat_int(in, 0, out);
  return CXLA_OK;
}

cxla_status cx_simp_divide(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if ((o.I || o.F) && is_one(o.b)) *out = o.a;
  else if (o.F) return divide_by_power_of_two(in, out);
  return CXLA_OK;
}

cxla_status cx_simp_power(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if (o.F && cx_simp_is_float(o.b, 1.0)) *out = o.a; /* pow(x, 1) is x, NaN and -0 included */
  return CXLA_OK;
}

/* maximum, minimum */
cxla_status cx_simp_minmax(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  int max = in->op == CX_OP_MAXIMUM;
  if (o.a == o.b) *out = o.a; /* max(NaN, NaN) is that NaN, max(-0, -0) is -0 */
  else if (o.I) {
    int64_t id = max ? cx_simp_int_min(o.t) : cx_simp_int_max(o.t);
    if (cx_simp_is_int(o.b, id)) *out = o.a;
    else if (cx_simp_is_int(o.a, id)) *out = o.b;
  } else if (o.F) { /* max(x, -inf) is x, also for NaN (propagates) and -0 */
    double id = max ? -INFINITY : INFINITY;
    if (cx_simp_is_float(o.b, id)) *out = o.a;
    else if (cx_simp_is_float(o.a, id)) *out = o.b;
  }
  return CXLA_OK;
}

cxla_status cx_simp_and(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  int bits = o.I || o.P;
  if (o.a == o.b) *out = o.a;
  else if (bits && cx_simp_is_int(o.b, -1)) *out = o.a;
  else if (bits && cx_simp_is_int(o.a, -1)) *out = o.b;
  else if (bits && (cx_simp_is_int(o.a, 0) || cx_simp_is_int(o.b, 0))) return splat_int(in, 0, out);
  return CXLA_OK;
}

cxla_status cx_simp_or(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  int bits = o.I || o.P;
  if (o.a == o.b) *out = o.a;
  else if (bits && cx_simp_is_int(o.b, 0)) *out = o.a;
  else if (bits && cx_simp_is_int(o.a, 0)) *out = o.b;
  else if (bits && (cx_simp_is_int(o.a, -1) || cx_simp_is_int(o.b, -1))) return splat_int(in, -1, out);
  return CXLA_OK;
}

cxla_status cx_simp_xor(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  int bits = o.I || o.P;
  if (bits && cx_simp_is_int(o.b, 0)) *out = o.a;
  else if (bits && cx_simp_is_int(o.a, 0)) *out = o.b;
  else if (bits && o.a == o.b) return splat_int(in, 0, out);
  return CXLA_OK;
}

/* the three shifts */
cxla_status cx_simp_shift(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  if (o.I && cx_simp_is_int(o.b, 0)) *out = o.a;
  return CXLA_OK;
}

cxla_status cx_simp_compare(cx_instr *in, cx_instr **out) {
  bin o = operands(in);
  cx_cmp_type ct = in->a.cmp_type;
  int exact = is_intlike(o.t) ? ct != CX_CMP_FLOAT : ct == CX_CMP_TOTALORDER;
  if (o.a != o.b || !exact) return CXLA_OK;
  cxla_compare_dir d = in->a.dir;
  return splat_int(in, d == CXLA_EQ || d == CXLA_LE || d == CXLA_GE, out);
}

/* Whether every value of `from` converts to `to` exactly (so converting back gives the
 * original). */
static int convert_is_exact(cxla_type from, cxla_type to) {
  cx_kind kf = cx_type_kind(from), kt = cx_type_kind(to);
  int bf = cx_type_bits(from), bt = cx_type_bits(to);
  if (from == to) return 1;
  if (kf == CX_KIND_PRED) return kt != CX_KIND_NONE; /* 0 and 1 exist in every type */
  if (kt == CX_KIND_PRED || kf == CX_KIND_NONE || kt == CX_KIND_NONE) return 0;
  if (kf == CX_KIND_FLOAT) /* f16 and bf16 fit in f32, everything in f64; -0, inf, NaN stay */
    return kt == CX_KIND_FLOAT && (to == CXLA_F64 || (to == CXLA_F32 && (from == CXLA_F16 || from == CXLA_BF16)));
  int digits = kf == CX_KIND_SINT ? bf - 1 : bf; /* value bits of the integer type */
  if (kt == CX_KIND_FLOAT) {
    if (cx_type_bits(to) <= 8) return 0; /* f8/f4: a range too small to take integers on trust */
    int mant = to == CXLA_F64 ? 53 : to == CXLA_F32 ? 24 : to == CXLA_F16 ? 11 : 8;
    return digits <= mant; /* small integers are far inside every float type's range */
  }
  if (kf == CX_KIND_SINT) return kt == CX_KIND_SINT && bf <= bt;
  return kt == CX_KIND_UINT ? bf <= bt : bf < bt;
}

static int float_mantissa_bits(cxla_type t, int *ebits) {
  switch (t) {
  case CXLA_F16: *ebits = 5; return 10;
  case CXLA_BF16: *ebits = 8; return 7;
  case CXLA_F32: *ebits = 8; return 23;
  case CXLA_F64: *ebits = 11; return 52;
  default: *ebits = 0; return -1;
  }
}

/* negate, not: -(-x) is x also for INT_MIN (wraps both times) and NaN */
cxla_status cx_simp_involution(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  if (x->op == in->op) *out = x->ops[0];
  return CXLA_OK;
}

cxla_status cx_simp_abs(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  if (x->op == CX_OP_ABS) *out = x;
  else if (x->op == CX_OP_NEGATE) /* |-x| == |x|, INT_MIN included */
    *out = cx_simp_new(in, CX_OP_ABS, &in->shape, 1, &x->ops[0]);
  return *out || x->op != CX_OP_NEGATE ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* copy, bitcast: one that changes the layout matters to a bitcast reading it */
cxla_status cx_simp_same_layout(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  if (cx_shape_equal(&x->shape, &in->shape) && cx_shape_same_layout(&x->shape, &in->shape)) *out = x;
  return CXLA_OK;
}

cxla_status cx_simp_bitcast_convert(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  if (x->shape.type == in->shape.type && cx_shape_equal(&x->shape, &in->shape)) *out = x;
  return CXLA_OK;
}

cxla_status cx_simp_convert(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  cxla_type to = in->shape.type;
  if (x->shape.type == to) { *out = x; return CXLA_OK; }
  if (x->op != CX_OP_CONVERT) return CXLA_OK;
  cx_instr *y = x->ops[0];
  if (!convert_is_exact(y->shape.type, x->shape.type)) return CXLA_OK;
  if (y->shape.type == to) { *out = y; return CXLA_OK; }
  /* On to a third type the value alone decides the result, except into integers: from a
   * float that saturates, from an integer it wraps (s16 300 -> f32 -> s8 is 127, s16 -> s8
   * is 44). So the middle type must be of the source's family there. */
  cx_kind ky = cx_type_kind(y->shape.type), kx = cx_type_kind(x->shape.type);
  if (cx_type_is_int(to) && ky != CX_KIND_PRED && (ky == CX_KIND_FLOAT) != (kx == CX_KIND_FLOAT)) return CXLA_OK;
  *out = cx_simp_new(in, CX_OP_CONVERT, &in->shape, 1, &y);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* keeping at least every bit the type has changes nothing */
cxla_status cx_simp_reduce_precision(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  int eb, mb = float_mantissa_bits(x->shape.type, &eb);
  if (mb >= 0 && in->a.exponent_bits >= eb && in->a.mantissa_bits >= mb) *out = x;
  return CXLA_OK;
}

cxla_status cx_simp_select(cx_instr *in, cx_instr **out) {
  cx_instr *p = in->ops[0], *t = in->ops[1], *f = in->ops[2];
  cx_scalar v;
  if (t == f) *out = t;
  else if (p->shape.type == CXLA_PRED && cx_simp_uniform(p, &v)) *out = v.i ? t : f;
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) *out = NULL;
  return CXLA_OK;
}
