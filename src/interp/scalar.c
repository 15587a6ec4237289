/* scalar.c — cx_scalar values: loading and storing them, and the scalar semantics that are
 * not one op's (comparison in every direction and order, conversion, reduce-precision,
 * bitcast). The per-op rules are in ew_rules.c. Floats are held in double, already rounded
 * to the element type (complex numbers part by part); integers in 64 bits, wrapped to the
 * type's width. */
#include <string.h>
#include "interp/internal.h"

cx_scalar cx_scalar_load(cxla_type t, const void *base, int64_t i) {
  cx_scalar s = {.im = 0};
  if (cx_type_is_float(t)) s.f = cx_load_f64(t, base, i);
  else if (cx_type_is_complex(t)) cx_load_complex(t, base, i, &s.f, &s.im);
  else s.i = cx_load_i64(t, base, i);
  return s;
}

void cx_scalar_store(cxla_type t, void *base, int64_t i, cx_scalar v) {
  if (cx_type_is_float(t)) cx_store_f64(t, base, i, v.f);
  else if (cx_type_is_complex(t)) cx_store_complex(t, base, i, v.f, v.im);
  else cx_store_i64(t, base, i, v.i);
}

/* ---- compare ---- */

static int is_signed(cxla_type t) { return cx_type_kind(t) == CX_KIND_SINT; }

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
  if (cx_type_is_complex(type)) { /* EQ and NE only (the verifier's rule): both parts, IEEE */
    int eq = a.f == b.f && a.im == b.im;
    return dir == CXLA_NE ? !eq : dir == CXLA_EQ ? eq : 0;
  }
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
  cx_scalar r = {.im = 0};
  cx_kind fk = cx_type_kind(from), tk = cx_type_kind(to);
  if (tk == CX_KIND_COMPLEX) { /* part by part; a real value's imaginary part is 0 */
    cxla_type part = cx_type_part(to);
    if (fk == CX_KIND_COMPLEX) {
      r.f = cx_round_to_type(part, x.f);
      r.im = cx_round_to_type(part, x.im);
    } else {
      r = cx_scalar_convert(from, part, x);
      r.im = 0;
    }
  } else if (fk == CX_KIND_COMPLEX) { /* refused by the verifier, as XLA does: the real part */
    x.im = 0;
    r = cx_scalar_convert(cx_type_part(from), to, x);
  } else if (tk == CX_KIND_PRED) {
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
  if (cxla_type_size(t) == 1 && cx_type_is_float(t)) { /* f8/f4: on the value (exact in f64), rounded back */
    x = cx_scalar_reduce_precision(CXLA_F64, x, exponent_bits, mantissa_bits);
    x.f = cx_round_to_type(t, x.f);
    return x;
  }
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
  unsigned char buf[16] = {0};
  cx_scalar_store(from, buf, 0, x);
  return cx_scalar_load(to, buf, 0);
}
