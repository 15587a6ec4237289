/* minifloat.c — the formats of the 8- and 4-bit floats and their conversions (minifloat.h).
 * The formats are ml_dtypes': the exponent bias, whether the all-ones exponent is infinity and
 * NaN (IEEE), or only the all-ones code is NaN (FN), or the code of -0 is NaN (FNUZ), or there
 * is neither (FINITE). Conversion from double rounds once, to nearest even, directly from the
 * double (XLA's CPU emitter goes through f16 first, which can round twice on ties). */
#include <math.h>
#include "ir/minifloat.h"

static const cx_mf_format k_e4m3fn = {4, 3, 7, CX_MF_FN}, k_e5m2 = {5, 2, 15, CX_MF_IEEE},
                          k_e4m3fnuz = {4, 3, 8, CX_MF_FNUZ}, k_e5m2fnuz = {5, 2, 16, CX_MF_FNUZ},
                          k_e4m3b11fnuz = {4, 3, 11, CX_MF_FNUZ}, k_e4m3 = {4, 3, 7, CX_MF_IEEE},
                          k_e3m4 = {3, 4, 3, CX_MF_IEEE}, k_e2m1fn = {2, 1, 1, CX_MF_FINITE},
                          k_e8m0fnu = {8, 0, 127, CX_MF_E8M0};

const cx_mf_format *cx_mf_format_of(cxla_type t) {
  switch (t) {
  case CXLA_F8E4M3FN: return &k_e4m3fn;
  case CXLA_F8E5M2: return &k_e5m2;
  case CXLA_F8E4M3FNUZ: return &k_e4m3fnuz;
  case CXLA_F8E5M2FNUZ: return &k_e5m2fnuz;
  case CXLA_F8E4M3B11FNUZ: return &k_e4m3b11fnuz;
  case CXLA_F8E4M3: return &k_e4m3;
  case CXLA_F8E3M4: return &k_e3m4;
  case CXLA_F4E2M1FN: return &k_e2m1fn;
  case CXLA_F8E8M0FNU: return &k_e8m0fnu;
  default: return NULL;
  }
}

double cx_mf_decode(const cx_mf_format *f, uint32_t code) {
  if (f->kind == CX_MF_E8M0) return (code & 0xff) == 0xff ? NAN : ldexp(1, (int)(code & 0xff) - f->bias);
  int sbit = f->ebits + f->mbits;
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
  code &= (2u << sbit) - 1;
  uint32_t neg = code >> sbit, e = (code >> f->mbits) & emask, m = code & mmask;
  if (f->kind == CX_MF_FNUZ && code == 1u << sbit) return NAN;
  if (f->kind == CX_MF_IEEE && e == emask) return copysign(m ? NAN : INFINITY, neg ? -1.0 : 1.0);
  if (f->kind == CX_MF_FN && e == emask && m == mmask) return copysign(NAN, neg ? -1.0 : 1.0);
  double v = e ? ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits)
               : ldexp((double)m, 1 - f->bias - f->mbits);
  return neg ? -v : v;
}

/* E8M0 (minifloat.h): from the f32's bits, as ml_dtypes converts. */
static uint32_t e8m0_encode(double v) {
  float x = (float)v;
  if (!(x > 0) || isinf(x)) return 0xff; /* NaN, zeros, negative values, infinities */
  union { float f; uint32_t u; } w = {x};
  uint32_t e = w.u >> 23, m = w.u & 0x7fffff;
  if (!e) return m > 0x400000 ? 1 : 0;
  uint32_t c = e + (m >= 0x400000);
  return c > 254 ? 0xff : c;
}

uint32_t cx_mf_encode(const cx_mf_format *f, double v) {
  if (f->kind == CX_MF_E8M0) return e8m0_encode(v);
  int sbit = f->ebits + f->mbits;
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1, sign = signbit(v) ? 1u << sbit : 0;
  uint32_t nan = f->kind == CX_MF_FNUZ ? 1u << sbit : sign | (emask << f->mbits) | mmask;
  if (f->kind == CX_MF_IEEE) nan = sign | (emask << f->mbits) | (1u << (f->mbits - 1)); /* quiet */
  /* the largest finite code */
  uint32_t max = f->kind == CX_MF_IEEE ? ((emask - 1) << f->mbits) | mmask
                 : f->kind == CX_MF_FN ? (emask << f->mbits) | (mmask - 1)
                                       : (emask << f->mbits) | mmask;
  if (isnan(v)) return f->kind == CX_MF_FINITE ? sign ^ (1u << sbit) : nan;
  double a = fabs(v);
  uint32_t code;
  if (a < ldexp(1, 1 - f->bias)) { /* subnormal: in units of the smallest subnormal */
    code = (uint32_t)nearbyint(ldexp(a, f->bias - 1 + f->mbits)); /* 2^m: the smallest normal */
  } else if (isinf(a)) {
    code = max + 1;
  } else {
    int k;
    frexp(a, &k); /* a = x 2^k, x in [0.5, 1): the exponent is k - 1 */
    int e = k - 1;
    if (e + f->bias > (int)emask + 1) {
      code = max + 1;
    } else {
      double q = nearbyint(ldexp(a, f->mbits - e)); /* [2^m, 2^(m+1)]: may carry */
      code = (uint32_t)((e + f->bias) << f->mbits) + (uint32_t)q - (1u << f->mbits);
    }
  }
  if (code > max) {
    if (f->kind == CX_MF_IEEE) return sign | (emask << f->mbits);
    if (f->kind == CX_MF_FINITE) return sign | max;
    return nan;
  }
  if (f->kind == CX_MF_FNUZ && code == 0) return 0;
  return sign | code;
}
