/* types.c — the element-type table and typed element access shared by every backend. */
#include <math.h>
#include <string.h>
#include "ir/minifloat.h"
#include "ir/types.h"
#include "util/util.h"

typedef struct {
  const char *name;
  int bytes, bits;
  cx_kind kind;
  cxla_type part;
} type_info;

static const type_info infos[] = {
    [CXLA_INVALID] = {NULL, 0, 0, CX_KIND_NONE, CXLA_INVALID},
#define X(e, n, b, w, k, p) [e] = {n, b, w, CX_KIND_##k, p},
#include "ir/types.def"
#undef X
    [CXLA_TUPLE] = {NULL, 0, 0, CX_KIND_NONE, CXLA_TUPLE},
    [CXLA_TOKEN] = {NULL, 0, 0, CX_KIND_NONE, CXLA_TOKEN},
};

static const type_info *info(cxla_type t) {
  return (unsigned)t < sizeof infos / sizeof *infos ? &infos[t] : &infos[0];
}

cx_kind cx_type_kind(cxla_type t) { return info(t)->kind; }
cxla_type cx_type_part(cxla_type t) { return info(t)->kind == CX_KIND_NONE ? t : info(t)->part; }
cxla_type cx_type_complex_of(cxla_type t) {
  for (int c = 0; c < CX_ARRAY_LEN(infos); c++)
    if (infos[c].kind == CX_KIND_COMPLEX && infos[c].part == t) return (cxla_type)c;
  return CXLA_INVALID;
}
int cx_type_bits(cxla_type t) { return info(t)->bits; }
size_t cxla_type_size(cxla_type t) { return (size_t)info(t)->bytes; }
const char *cxla_type_name(cxla_type t) {
  if (t == CXLA_TUPLE) return "tuple";
  if (t == CXLA_TOKEN) return "token";
  return info(t)->name;
}

cxla_type cx_type_from_name(const char *s, int len) {
  for (int t = 0; t < CX_ARRAY_LEN(infos); t++)
    if (infos[t].name && (int)strlen(infos[t].name) == len && !memcmp(infos[t].name, s, (size_t)len))
      return (cxla_type)t;
  if (len == 5 && !memcmp(s, "token", 5)) return CXLA_TOKEN;
  return CXLA_INVALID;
}

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float cx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return u2f(sign | 0x7f800000 | (man << 13));       /* inf / nan */
  if (exp == 0) {                                                      /* zero / subnormal */
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t cx_f32_to_f16(float f) {
  uint32_t u = f2u(f), sign = (u >> 16) & 0x8000;
  uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return (uint16_t)(sign | 0x7e00);              /* nan */
  if (abs >= 0x47800000) {                                              /* >= 65536: inf */
    return (uint16_t)(sign | 0x7c00);
  }
  if (abs < 0x38800000) {                                               /* subnormal in f16 */
    /* Scale so the f16 subnormal unit is 1, then round to nearest even in float. */
    float a = u2f(abs) * 0x1p24f;
    float r = nearbyintf(a);                                            /* default mode: even */
    return (uint16_t)(sign | (uint32_t)r);
  }
  uint32_t man = abs & 0x7fffff, exp = (abs >> 23) - 112;
  uint32_t half = (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;          /* may carry into inf */
  return (uint16_t)(sign | half);
}

float cx_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }

uint16_t cx_f32_to_bf16(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);  /* quiet nan */
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

double cx_round_to_type(cxla_type t, double v) {
  const cx_mf_format *f = cx_mf_format_of(t);
  if (f) return cx_mf_decode(f, cx_mf_encode(f, v));
  switch (t) {
  case CXLA_F32: return (double)(float)v;
  case CXLA_F16: return cx_f16_to_f32(cx_f32_to_f16((float)v));
  case CXLA_BF16: return cx_bf16_to_f32(cx_f32_to_bf16((float)v));
  default: return v;
  }
}

int64_t cx_wrap_int(cxla_type t, int64_t v) {
  switch (t) {
  case CXLA_PRED: return v != 0;
  case CXLA_S8: return (int8_t)v;
  case CXLA_S16: return (int16_t)v;
  case CXLA_S32: return (int32_t)v;
  case CXLA_U8: return (uint8_t)v;
  case CXLA_U16: return (uint16_t)v;
  case CXLA_U32: return (uint32_t)v;
  case CXLA_S4: return (int64_t)((uint64_t)v << 60) >> 60; /* the low four bits, sign-extended */
  case CXLA_U4: return v & 15;
  case CXLA_S2: return (int64_t)((uint64_t)v << 62) >> 62; /* the low two bits, sign-extended */
  case CXLA_U2: return v & 3;
  default: return v;
  }
}

int64_t cx_f64_to_int(cxla_type t, double v) {
  if (t == CXLA_PRED) return v != 0; /* NaN != 0: true, as XLA's convert */
  if (isnan(v)) return 0;
  v = trunc(v);
  if (t == CXLA_U64) {
    if (v <= 0) return 0;
    if (v >= 18446744073709551616.0) return (int64_t)UINT64_MAX;
    return (int64_t)(uint64_t)v;
  }
  int bits = cx_type_bits(t);
  double lo, hi;
  if (cx_type_kind(t) == CX_KIND_UINT) { lo = 0; hi = ldexp(1.0, bits) - 1; }
  else { lo = -ldexp(1.0, bits - 1); hi = ldexp(1.0, bits - 1) - 1; }
  if (v <= lo) return t == CXLA_S64 ? INT64_MIN : (int64_t)lo;
  if (v >= hi) return t == CXLA_S64 ? INT64_MAX : (int64_t)hi;
  return (int64_t)v;
}

double cx_load_f64(cxla_type t, const void *base, int64_t i) {
  switch (t) {
  case CXLA_PRED: return ((const uint8_t *)base)[i] != 0;
  case CXLA_S8: return ((const int8_t *)base)[i];
  case CXLA_S16: return ((const int16_t *)base)[i];
  case CXLA_S32: return ((const int32_t *)base)[i];
  case CXLA_S64: return (double)((const int64_t *)base)[i];
  case CXLA_U8: return ((const uint8_t *)base)[i];
  case CXLA_U16: return ((const uint16_t *)base)[i];
  case CXLA_U32: return ((const uint32_t *)base)[i];
  case CXLA_U64: return (double)((const uint64_t *)base)[i];
  case CXLA_F16: return cx_f16_to_f32(((const uint16_t *)base)[i]);
  case CXLA_BF16: return cx_bf16_to_f32(((const uint16_t *)base)[i]);
  case CXLA_F32: return ((const float *)base)[i];
  case CXLA_F64: return ((const double *)base)[i];
  case CXLA_C64: return ((const float *)base)[2 * i];
  case CXLA_C128: return ((const double *)base)[2 * i];
  case CXLA_S4: case CXLA_U4: case CXLA_S2: case CXLA_U2: return (double)cx_wrap_int(t, ((const uint8_t *)base)[i]);
  case CXLA_F8E4M3FN: case CXLA_F8E5M2: case CXLA_F8E4M3FNUZ: case CXLA_F8E5M2FNUZ: case CXLA_F8E4M3B11FNUZ:
  case CXLA_F8E4M3: case CXLA_F8E3M4: case CXLA_F4E2M1FN: case CXLA_F8E8M0FNU:
    return cx_mf_decode(cx_mf_format_of(t), ((const uint8_t *)base)[i]);
  case CXLA_INVALID: case CXLA_TUPLE: case CXLA_TOKEN: return 0;
  }
  return 0;
}

void cx_load_complex(cxla_type t, const void *base, int64_t i, double *re, double *im) {
  if (cx_type_is_complex(t)) {
    cxla_type p = cx_type_part(t);
    *re = cx_load_f64(p, base, 2 * i);
    *im = cx_load_f64(p, base, 2 * i + 1);
  } else {
    *re = cx_load_f64(t, base, i);
    *im = 0;
  }
}

void cx_store_complex(cxla_type t, void *base, int64_t i, double re, double im) {
  if (!cx_type_is_complex(t)) {
    cx_store_f64(t, base, i, re);
    return;
  }
  cxla_type p = cx_type_part(t);
  cx_store_f64(p, base, 2 * i, re);
  cx_store_f64(p, base, 2 * i + 1, im);
}

int64_t cx_load_i64(cxla_type t, const void *base, int64_t i) {
  switch (t) {
  case CXLA_PRED: return ((const uint8_t *)base)[i] != 0;
  case CXLA_S8: return ((const int8_t *)base)[i];
  case CXLA_S16: return ((const int16_t *)base)[i];
  case CXLA_S32: return ((const int32_t *)base)[i];
  case CXLA_S64: return ((const int64_t *)base)[i];
  case CXLA_U8: return ((const uint8_t *)base)[i];
  case CXLA_U16: return ((const uint16_t *)base)[i];
  case CXLA_U32: return ((const uint32_t *)base)[i];
  case CXLA_U64: return (int64_t)((const uint64_t *)base)[i];
  case CXLA_S4: case CXLA_U4: case CXLA_S2: case CXLA_U2: return cx_wrap_int(t, ((const uint8_t *)base)[i]);
  default: return cx_f64_to_int(CXLA_S64, cx_load_f64(t, base, i));
  }
}

void cx_store_i64(cxla_type t, void *base, int64_t i, int64_t v) {
  switch (t) {
  case CXLA_PRED: ((uint8_t *)base)[i] = v != 0; break;
  case CXLA_S8: ((int8_t *)base)[i] = (int8_t)v; break;
  case CXLA_S16: ((int16_t *)base)[i] = (int16_t)v; break;
  case CXLA_S32: ((int32_t *)base)[i] = (int32_t)v; break;
  case CXLA_S64: ((int64_t *)base)[i] = v; break;
  case CXLA_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
  case CXLA_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
  case CXLA_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
  case CXLA_U64: ((uint64_t *)base)[i] = (uint64_t)v; break;
  case CXLA_S4: case CXLA_U4: ((uint8_t *)base)[i] = (uint8_t)(v & 15); break; /* ml_dtypes' byte */
  case CXLA_S2: case CXLA_U2: ((uint8_t *)base)[i] = (uint8_t)(v & 3); break;
  default: cx_store_f64(t, base, i, (double)v); break;
  }
}

void cx_store_f64(cxla_type t, void *base, int64_t i, double v) {
  switch (t) {
  case CXLA_F16: ((uint16_t *)base)[i] = cx_f32_to_f16((float)v); break;
  case CXLA_BF16: ((uint16_t *)base)[i] = cx_f32_to_bf16((float)v); break;
  case CXLA_F32: ((float *)base)[i] = (float)v; break;
  case CXLA_F64: ((double *)base)[i] = v; break;
  case CXLA_C64: case CXLA_C128: cx_store_complex(t, base, i, v, 0); break;
  case CXLA_F8E4M3FN: case CXLA_F8E5M2: case CXLA_F8E4M3FNUZ: case CXLA_F8E5M2FNUZ: case CXLA_F8E4M3B11FNUZ:
  case CXLA_F8E4M3: case CXLA_F8E3M4: case CXLA_F4E2M1FN: case CXLA_F8E8M0FNU:
    ((uint8_t *)base)[i] = (uint8_t)cx_mf_encode(cx_mf_format_of(t), v);
    break;
  default: cx_store_i64(t, base, i, cx_f64_to_int(t, v)); break;
  }
}
