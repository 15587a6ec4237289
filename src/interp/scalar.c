/* scalar.c — XLA's scalar semantics of every elementwise op, on cx_scalar values. Floats are
 * computed in double and rounded to the element type after every op; integers in 64 bits and
 * wrapped to the type's width (unsigned types on their bit pattern). The rules follow XLA's
 * HloEvaluator and elemental IR emitter; where they differ, the comment says which we chose. */
#include <string.h>
#include "interp/internal.h"

cx_scalar cx_scalar_load(cxla_type t, const void *base, int64_t i) {
  cx_scalar s;
  if (cx_type_is_float(t)) s.f = cx_load_f64(t, base, i);
  else s.i = cx_load_i64(t, base, i);
  return s;
}

void cx_scalar_store(cxla_type t, void *base, int64_t i, cx_scalar v) {
  if (cx_type_is_float(t)) cx_store_f64(t, base, i, v.f);
  else cx_store_i64(t, base, i, v.i);
}

/* ---- integers ---- */

static int is_signed(cxla_type t) { return cx_type_kind(t) == CX_KIND_SINT; }

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

static int64_t int_unary(cx_op op, cxla_type t, int64_t x) {
  int bits = cx_type_bits(t);
  if (t == CXLA_PRED) return op == CX_OP_NOT ? !x : x;
  switch (op) {
  case CX_OP_ABS: /* abs(INT_MIN) wraps back to INT_MIN */
    return is_signed(t) && x < 0 ? cx_wrap_int(t, (int64_t)(0 - (uint64_t)x)) : x;
  case CX_OP_NEGATE: return cx_wrap_int(t, (int64_t)(0 - (uint64_t)x));
  case CX_OP_SIGN:
    if (is_signed(t)) return (x > 0) - (x < 0);
    return x != 0;
  case CX_OP_NOT: return cx_wrap_int(t, ~x);
  case CX_OP_POPCNT: return __builtin_popcountll(cx_zext(bits, x));
  case CX_OP_CLZ: {
    uint64_t u = cx_zext(bits, x);
    return u ? __builtin_clzll(u) - (64 - bits) : bits;
  }
  default: return x; /* copy; floor/ceil/round are the identity on integers */
  }
}

static int64_t int_binary(cx_op op, cxla_type t, int64_t a, int64_t b) {
  int bits = cx_type_bits(t), sgn = is_signed(t);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  /* the type's bit patterns, for unsigned comparisons and logical shifts */
  uint64_t za = cx_zext(bits, a), zb = cx_zext(bits, b);
  int64_t int_min = sgn ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
  if (t == CXLA_PRED) {
    /* XLA computes pred arithmetic as int8(x) OP int8(y) != 0 */
    switch (op) {
    case CX_OP_ADD: case CX_OP_MAXIMUM: case CX_OP_OR: return a | b;
    case CX_OP_MULTIPLY: case CX_OP_MINIMUM: case CX_OP_AND: return a & b;
    case CX_OP_SUBTRACT: case CX_OP_XOR: return a ^ b;
    case CX_OP_POWER: return a || !b;
    default: return 0;
    }
  }
  switch (op) {
  case CX_OP_ADD: return cx_wrap_int(t, (int64_t)(ua + ub));
  case CX_OP_SUBTRACT: return cx_wrap_int(t, (int64_t)(ua - ub));
  case CX_OP_MULTIPLY: return cx_wrap_int(t, (int64_t)(ua * ub));
  case CX_OP_DIVIDE:
    /* x/0 has all bits set (-1 signed, UINT_MAX unsigned); INT_MIN/-1 = INT_MIN */
    if (b == 0) return cx_wrap_int(t, -1);
    if (!sgn) return cx_wrap_int(t, (int64_t)(za / zb));
    if (b == -1) return a == int_min ? a : -a;
    return a / b; /* C truncates toward zero, as XLA does */
  case CX_OP_REMAINDER:
    /* x%0 = x; INT_MIN%-1 = 0; otherwise the sign of the dividend (C's %) */
    if (b == 0) return a;
    if (!sgn) return cx_wrap_int(t, (int64_t)(za % zb));
    if (b == -1) return 0;
    return a % b;
  case CX_OP_POWER:
    /* HloEvaluator: 1^y = x^0 = 1; a negative signed exponent gives (x == 1 ? 1 : 0) */
    if (a == 1 || b == 0) return 1;
    if (sgn && b < 0) return 0;
    return cx_wrap_int(t, (int64_t)ipow(ua, sgn ? ub : zb));
  case CX_OP_MAXIMUM:
    if (sgn) return a > b ? a : b;
    return za > zb ? a : b;
  case CX_OP_MINIMUM:
    if (sgn) return a < b ? a : b;
    return za < zb ? a : b;
  case CX_OP_AND: return a & b;
  case CX_OP_OR: return a | b;
  case CX_OP_XOR: return a ^ b;
  /* Shift amounts are read as unsigned of the type's width; >= width shifts everything out. */
  case CX_OP_SHIFT_LEFT:
    return zb >= (uint64_t)bits ? 0 : cx_wrap_int(t, (int64_t)(ua << zb));
  case CX_OP_SHIFT_RIGHT_LOGICAL:
    return zb >= (uint64_t)bits ? 0 : cx_wrap_int(t, (int64_t)(za >> zb));
  case CX_OP_SHIFT_RIGHT_ARITHMETIC: {
    int64_t s = cx_sext(bits, a); /* unsigned types shift in their top bit too */
    if (zb >= (uint64_t)bits) return cx_wrap_int(t, s < 0 ? -1 : 0);
    int64_t r = s < 0 ? ~(~s >> zb) : s >> zb; /* avoids right-shifting a negative value */
    return cx_wrap_int(t, r);
  }
  default: return 0;
  }
}

/* ---- the public scalar entry points ---- */

cx_scalar cx_scalar_unary(cx_op op, cxla_type type, cx_scalar x) {
  cx_scalar r;
  if (op == CX_OP_IS_FINITE) {
    r.i = cx_type_is_float(type) ? isfinite(x.f) != 0 : 1;
  } else if (cx_type_is_float(type)) {
    r.f = cx_round_to_type(type, cx_float_unary(op, x.f));
  } else {
    r.i = int_unary(op, type, x.i);
  }
  return r;
}

cx_scalar cx_scalar_binary(cx_op op, cxla_type type, cx_scalar a, cx_scalar b) {
  cx_scalar r;
  if (cx_type_is_float(type)) r.f = cx_round_to_type(type, cx_float_binary(op, a.f, b.f));
  else r.i = int_binary(op, type, a.i, b.i);
  return r;
}

/* TOTALORDER key: the sign-magnitude bit pattern mapped to two's complement, so that
 * -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. Widening to double keeps the order of
 * every narrower float (payloads included), so one key on the double's bits serves all. */
static int64_t total_key(double d) {
  int64_t k;
  memcpy(&k, &d, sizeof k);
  return k < 0 ? k ^ INT64_MAX : k;
}

static int cmp_dir(cxla_compare_dir dir, int lt, int eq) {
  switch (dir) {
  case CXLA_EQ: return eq;
  case CXLA_NE: return !eq;
  case CXLA_LT: return lt;
  case CXLA_LE: return lt || eq;
  case CXLA_GT: return !lt && !eq;
  case CXLA_GE: return !lt;
  }
  return 0;
}

int cx_scalar_compare(cxla_compare_dir dir, cx_cmp_type ct, cxla_type type, cx_scalar a, cx_scalar b) {
  int isf = cx_type_is_float(type), bits = cx_type_bits(type);
  if (ct == CX_CMP_DEFAULT || (isf && ct != CX_CMP_TOTALORDER))
    ct = isf ? CX_CMP_FLOAT : is_signed(type) ? CX_CMP_SIGNED : CX_CMP_UNSIGNED;
  else if (!isf && (ct == CX_CMP_FLOAT || ct == CX_CMP_TOTALORDER))
    ct = is_signed(type) ? CX_CMP_SIGNED : CX_CMP_UNSIGNED;
  switch (ct) {
  case CX_CMP_FLOAT: /* IEEE: every ordered relation with a NaN is false, NE is true */
    switch (dir) {
    case CXLA_EQ: return a.f == b.f;
    case CXLA_NE: return a.f != b.f;
    case CXLA_LT: return a.f < b.f;
    case CXLA_LE: return a.f <= b.f;
    case CXLA_GT: return a.f > b.f;
    case CXLA_GE: return a.f >= b.f;
    }
    return 0;
  case CX_CMP_TOTALORDER: {
    int64_t ka = total_key(a.f), kb = total_key(b.f);
    return cmp_dir(dir, ka < kb, ka == kb);
  }
  case CX_CMP_SIGNED: {
    int64_t sa = cx_sext(bits, a.i), sb = cx_sext(bits, b.i);
    return cmp_dir(dir, sa < sb, sa == sb);
  }
  default: {
    uint64_t ua = cx_zext(bits, a.i), ub = cx_zext(bits, b.i);
    return cmp_dir(dir, ua < ub, ua == ub);
  }
  }
}

/* convert: float->int truncates toward zero and saturates, NaN -> 0 (XLA's saturating
 * fptosi); ->pred is x != 0 (a NaN is != 0, so true); int->int keeps the low bits. Integers
 * go to f32/f16/bf16 through one correctly rounded int->f32 step, as XLA does (f16/bf16 are
 * computed via f32), never through double, which could round twice. */
cx_scalar cx_scalar_convert(cxla_type from, cxla_type to, cx_scalar x) {
  cx_scalar r;
  cx_kind fk = cx_type_kind(from), tk = cx_type_kind(to);
  if (tk == CX_KIND_PRED) {
    r.i = fk == CX_KIND_FLOAT ? x.f != 0 : x.i != 0;
  } else if (tk == CX_KIND_FLOAT) {
    if (fk == CX_KIND_FLOAT) r.f = cx_round_to_type(to, x.f);
    else if (to == CXLA_F64) r.f = from == CXLA_U64 ? (double)(uint64_t)x.i : (double)x.i;
    else r.f = cx_round_to_type(to, from == CXLA_U64 ? (float)(uint64_t)x.i : (float)x.i);
  } else if (fk == CX_KIND_FLOAT) {
    r.i = cx_f64_to_int(to, x.f);
  } else {
    r.i = cx_wrap_int(to, x.i);
  }
  return r;
}

/* ---- reduce-precision ---- */

uint64_t cx_reduce_precision_bits(uint64_t x, int nbits, int src_mbits, int ebits, int mbits) {
  int src_ebits = nbits - 1 - src_mbits;
  uint64_t all = nbits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << nbits) - 1;
  uint64_t sign = UINT64_C(1) << (nbits - 1);
  uint64_t expmask = ((UINT64_C(1) << src_ebits) - 1) << src_mbits;
  uint64_t orig = x;
  if (ebits < 1 || mbits < 0) return x; /* callers refuse these; never shift by a negative */
  int is_nan = (x & ~sign & all) > expmask;
  if (mbits < src_mbits) {
    /* round to nearest even at mantissa_bits: add 0111..1 plus the last kept bit, then
     * truncate; a carry into the exponent is the right answer */
    int sh = src_mbits - mbits;
    uint64_t last = UINT64_C(1) << sh;
    uint64_t bias = (last >> 1) - 1 + ((x & last) >> sh);
    x = ((x + bias) & ~(last - 1)) & all;
  }
  if (ebits < src_ebits) {
    uint64_t bias = (UINT64_C(1) << (src_ebits - 1)) - 1;
    uint64_t rbias = (UINT64_C(1) << (ebits - 1)) - 1;
    uint64_t xe = x & expmask;
    if (xe > (bias + rbias) << src_mbits) x = (x & sign) | expmask;   /* overflow: +-inf */
    else if (xe <= (bias - rbias) << src_mbits) x = x & sign;        /* below normal: +-0 */
  }
  /* NaNs stay NaN (the input unchanged); with no mantissa bits left XLA gives +inf */
  if (is_nan) x = mbits > 0 ? orig : expmask;
  return x;
}

cx_scalar cx_scalar_reduce_precision(cxla_type t, cx_scalar x, int exponent_bits, int mantissa_bits) {
  float f = (float)x.f;
  uint32_t u32;
  uint64_t u64;
  switch (t) {
  case CXLA_F64:
    memcpy(&u64, &x.f, 8);
    u64 = cx_reduce_precision_bits(u64, 64, 52, exponent_bits, mantissa_bits);
    memcpy(&x.f, &u64, 8);
    break;
  case CXLA_F32:
    memcpy(&u32, &f, 4);
    u32 = (uint32_t)cx_reduce_precision_bits(u32, 32, 23, exponent_bits, mantissa_bits);
    memcpy(&f, &u32, 4);
    x.f = f;
    break;
  case CXLA_F16:
    x.f = cx_f16_to_f32((uint16_t)cx_reduce_precision_bits(cx_f32_to_f16(f), 16, 10, exponent_bits,
                                                           mantissa_bits));
    break;
  case CXLA_BF16:
    x.f = cx_bf16_to_f32((uint16_t)cx_reduce_precision_bits(cx_f32_to_bf16(f), 16, 7, exponent_bits,
                                                            mantissa_bits));
    break;
  default: break;
  }
  return x;
}

/* bitcast-convert between equal widths: reinterpret the little-endian bytes. */
cx_scalar cx_scalar_bitcast(cxla_type from, cxla_type to, cx_scalar x) {
  unsigned char buf[8] = {0};
  cx_scalar_store(from, buf, 0, x);
  return cx_scalar_load(to, buf, 0);
}

cx_scalar cx_scalar_eval(const cx_instr *in, const cx_scalar *args) {
  cxla_type t = in->nops ? in->ops[0]->shape.type : in->shape.type;
  cx_scalar r;
  switch (in->op) {
  case CX_OP_COMPARE:
    r.i = cx_scalar_compare(in->a.dir, in->a.cmp_type, t, args[0], args[1]);
    return r;
  case CX_OP_CONVERT: return cx_scalar_convert(t, in->shape.type, args[0]);
  case CX_OP_BITCAST_CONVERT: return cx_scalar_bitcast(t, in->shape.type, args[0]);
  case CX_OP_REDUCE_PRECISION:
    return cx_scalar_reduce_precision(t, args[0], in->a.exponent_bits, in->a.mantissa_bits);
  case CX_OP_SELECT: return args[0].i ? args[1] : args[2];
  case CX_OP_CLAMP: /* clamp(lo, x, hi) = min(max(x, lo), hi) with XLA's max/min */
    t = in->ops[1]->shape.type;
    return cx_scalar_binary(CX_OP_MINIMUM, t, cx_scalar_binary(CX_OP_MAXIMUM, t, args[1], args[0]),
                            args[2]);
  default:
    if (in->nops == 1) return cx_scalar_unary(in->op, t, args[0]);
    return cx_scalar_binary(in->op, t, args[0], args[1]);
  }
}
