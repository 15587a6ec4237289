/* test_minifloat.c — the 8- and 4-bit floats and 4-bit integers: the codec (ir/minifloat.c)
 * against the formats' definitions, and the cpu backend against the interpreter bit for bit on
 * every code, every pair of codes, and a sweep over f32 and f64 bit patterns. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ir/minifloat.h"
#include "ir/types.h"
#include "test_cpu_helpers.h"

static const cxla_type k_floats[] = {CXLA_F8E4M3FN, CXLA_F8E5M2, CXLA_F8E4M3FNUZ, CXLA_F8E5M2FNUZ, CXLA_F8E4M3B11FNUZ,
                                     CXLA_F8E4M3, CXLA_F8E3M4, CXLA_F4E2M1FN, CXLA_F8E8M0FNU};

/* Values fixed by each format's definition: its largest finite value, smallest subnormal, one,
 * and which codes are NaN and infinity. */
TEST(minifloat_formats) {
  static const struct {
    cxla_type t;
    double max, tiny;
    unsigned one, nan, inf; /* codes; 0 where the type has none */
  } k[] = {
      {CXLA_F8E4M3FN, 448, 0x1p-9, 0x38, 0x7f, 0},      {CXLA_F8E5M2, 57344, 0x1p-16, 0x3c, 0x7e, 0x7c},
      {CXLA_F8E4M3FNUZ, 240, 0x1p-10, 0x40, 0x80, 0},   {CXLA_F8E5M2FNUZ, 57344, 0x1p-17, 0x40, 0x80, 0},
      {CXLA_F8E4M3B11FNUZ, 30, 0x1p-13, 0x58, 0x80, 0}, {CXLA_F8E4M3, 240, 0x1p-9, 0x38, 0x7c, 0x78},
      {CXLA_F8E3M4, 15.5, 0x1p-6, 0x30, 0x78, 0x70},    {CXLA_F4E2M1FN, 6, 0.5, 0x2, 0, 0},
  };
  for (size_t i = 0; i < CX_ARRAY_LEN(k); i++) {
    const cx_mf_format *f = cx_mf_format_of(k[i].t);
    CHECK(f != NULL);
    if (!f) continue;
    int bits = 1 + f->ebits + f->mbits, n = 1 << bits;
    double largest = 0, smallest = INFINITY, prev = -1;
    for (int c = 0; c < n / 2; c++) { /* the positive codes ascend */
      double v = cx_mf_decode(f, (uint32_t)c);
      if (isnan(v) || isinf(v)) continue;
      CHECK_MSG(v > prev, "%s: code %#x (%g) not above the previous (%g)", cxla_type_name(k[i].t), c, v, prev);
      prev = v;
      largest = fmax(largest, v);
      if (v > 0) smallest = fmin(smallest, v);
      /* every finite code converts back to itself */
      CHECK(cx_mf_encode(f, v) == (uint32_t)c);
      if (c || f->kind != CX_MF_FNUZ) CHECK(cx_mf_encode(f, -v) == ((uint32_t)c | (uint32_t)n / 2));
    }
    CHECK_MSG(largest == k[i].max, "%s: largest %g", cxla_type_name(k[i].t), largest);
    CHECK_MSG(smallest == k[i].tiny, "%s: smallest %g", cxla_type_name(k[i].t), smallest);
    CHECK(cx_mf_decode(f, k[i].one) == 1 && cx_mf_encode(f, 1) == k[i].one);
    if (k[i].nan) CHECK(isnan(cx_mf_decode(f, k[i].nan)) && cx_mf_encode(f, NAN) == k[i].nan);
    if (k[i].inf) CHECK(cx_mf_decode(f, k[i].inf) == INFINITY && cx_mf_encode(f, 1e30) == k[i].inf);
    if (!k[i].inf) CHECK(cx_mf_encode(f, INFINITY) == (k[i].nan ? k[i].nan : cx_mf_encode(f, k[i].max)));
    /* halfway between the largest and the next step up rounds up, to overflow (the largest
     * has an odd mantissa, except where the all-ones code is NaN) */
    double ulp = ldexp(1, (int)floor(log2(k[i].max)) - f->mbits);
    uint32_t over = cx_mf_encode(f, k[i].max + ulp / 2 * 1.0001);
    CHECK(over != cx_mf_encode(f, k[i].max) || f->kind == CX_MF_FINITE);
    CHECK(cx_mf_encode(f, k[i].tiny / 2) == 0 && cx_mf_encode(f, k[i].tiny * 0.75) == 1);
  }
  CHECK(cx_type_bits(CXLA_S4) == 4 && cx_type_bits(CXLA_F4E2M1FN) == 4 && cxla_type_size(CXLA_U4) == 1);
  CHECK(cx_wrap_int(CXLA_S4, 8) == -8 && cx_wrap_int(CXLA_S4, 15) == -1 && cx_wrap_int(CXLA_U4, -1) == 15);
  CHECK(cx_type_bits(CXLA_S2) == 2 && cxla_type_size(CXLA_U2) == 1 && !strcmp(cxla_type_name(CXLA_S2), "s2"));
  CHECK(cx_wrap_int(CXLA_S2, 2) == -2 && cx_wrap_int(CXLA_S2, 3) == -1 && cx_wrap_int(CXLA_S2, 5) == 1 &&
        cx_wrap_int(CXLA_U2, -1) == 3 && cx_wrap_int(CXLA_U2, 6) == 2);
}

/* f8e8m0fnu: code c is 2^(c - 127), 0xff NaN; conversions as ml_dtypes 0.6 gives them (each
 * pair below is its value -> code, from numpy arrays cast with ml_dtypes.float8_e8m0fnu). */
TEST(minifloat_e8m0fnu) {
  const cx_mf_format *f = cx_mf_format_of(CXLA_F8E8M0FNU);
  CHECK(f != NULL);
  if (!f) return;
  for (uint32_t c = 0; c < 255; c++) {
    CHECK_MSG(cx_mf_decode(f, c) == ldexp(1, (int)c - 127), "code %u", c);
    CHECK_MSG(cx_mf_encode(f, ldexp(1, (int)c - 127)) == c, "code %u", c);
  }
  CHECK(isnan(cx_mf_decode(f, 0xff)));
  static const struct { double v; unsigned code; } k[] = {
      {0, 0xff}, {-0.0, 0xff}, {-1, 0xff}, {INFINITY, 0xff}, {-INFINITY, 0xff}, {NAN, 0xff},
      {1, 127}, {1.5, 128}, {1.4142, 127}, {2.9, 128}, {3, 129}, {0.75, 127}, {5, 129}, {6, 130}, {7, 130},
      {1.49999999, 128}, /* 1.5 in f32 */ {0x1p127, 254}, {0x1p128, 0xff}, {1.7e38, 254}, {3e38, 0xff},
      {0x1p-127, 0}, {0x1.8p-127, 1}, {0x1.6666p-127, 1}, {0x1p-128, 0}, {0x1p-149, 0}, {0x1p-150, 0xff},
      {0x1.8p-150, 0}, {0x1p-200, 0xff},
  };
  for (size_t i = 0; i < CX_ARRAY_LEN(k); i++)
    CHECK_MSG(cx_mf_encode(f, k[i].v) == k[i].code, "%a -> %#x, expected %#x", k[i].v, cx_mf_encode(f, k[i].v),
              k[i].code);
}

static int run_both(const char *text, const char *what) {
  int ok = cpu_check(text, 0, NULL, NULL, 0, 0, NULL, NULL);
  CHECK_MSG(ok, "%s: cpu and interpreter differ:\n%s", what, text);
  return ok;
}

/* Every code decoded, and every pair added, multiplied, divided, compared, maxed, and one
 * sqrt and exp: the results' bits, cpu against the interpreter. */
TEST(minifloat_cpu_matches_interpreter_on_every_code) {
  for (size_t i = 0; i < CX_ARRAY_LEN(k_floats); i++) {
    const char *t = cxla_type_name(k_floats[i]);
    char text[4096];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             "  c = u8[256] iota(), iota_dimension=0\n"
             "  x = %s[256] bitcast-convert(c)\n"
             "  f = f32[256] convert(x)\n"
             "  a = %s[256,256] broadcast(x), dimensions={0}\n  b = %s[256,256] broadcast(x), dimensions={1}\n"
             "  s = %s[256,256] add(a, b)\n  p = %s[256,256] multiply(a, b)\n  q = %s[256,256] divide(a, b)\n"
             "  mx = %s[256,256] maximum(a, b)\n  lt = pred[256,256] compare(a, b), direction=LT\n"
             "  to = pred[256,256] compare(a, b), direction=LT, type=TOTALORDER\n"
             "  r = %s[256] sqrt(x)\n  ex = %s[256] exponential(x)\n"
             "  sb = u8[256,256] bitcast-convert(s)\n  pb = u8[256,256] bitcast-convert(p)\n"
             "  qb = u8[256,256] bitcast-convert(q)\n  mb = u8[256,256] bitcast-convert(mx)\n"
             "  rb = u8[256] bitcast-convert(r)\n  eb = u8[256] bitcast-convert(ex)\n"
             "  ROOT t = (f32[256], u8[256,256], u8[256,256], u8[256,256], u8[256,256], pred[256,256], pred[256,256], "
             "u8[256], u8[256]) tuple(f, sb, pb, qb, mb, lt, to, rb, eb)\n}\n",
             t, t, t, t, t, t, t, t, t);
    /* a 4-bit type takes the 4-bit bitcast: spell it through u4 */
    if (cx_type_bits(k_floats[i]) == 4) {
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  c = u4[16] iota(), iota_dimension=0\n  x = %s[16] bitcast-convert(c)\n"
               "  f = f32[16] convert(x)\n  a = %s[16,16] broadcast(x), dimensions={0}\n"
               "  b = %s[16,16] broadcast(x), dimensions={1}\n  s = %s[16,16] add(a, b)\n  p = %s[16,16] multiply(a, b)\n"
               "  q = %s[16,16] divide(a, b)\n  to = pred[16,16] compare(a, b), direction=LT, type=TOTALORDER\n"
               "  sb = u4[16,16] bitcast-convert(s)\n  pb = u4[16,16] bitcast-convert(p)\n  qb = u4[16,16] bitcast-convert(q)\n"
               "  ROOT t = (f32[16], u4[16,16], u4[16,16], u4[16,16], pred[16,16]) tuple(f, sb, pb, qb, to)\n}\n",
               t, t, t, t, t, t);
    }
    run_both(text, t);
  }
}

/* f32 and f64 bit patterns in a sweep over their whole range (NaNs, infinities, subnormals,
 * every exponent) converted to each type: the codes, cpu against the interpreter. */
TEST(minifloat_cpu_matches_interpreter_on_conversions) {
  for (size_t i = 0; i < CX_ARRAY_LEN(k_floats); i++) {
    const char *t = cxla_type_name(k_floats[i]);
    const char *u = cx_type_bits(k_floats[i]) == 4 ? "u4" : "u8";
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             "  i = u32[65536] iota(), iota_dimension=0\n  k = u32[] constant(65537)\n"
             "  kb = u32[65536] broadcast(k), dimensions={}\n  w = u32[65536] multiply(i, kb)\n"
             "  x = f32[65536] bitcast-convert(w)\n  a = %s[65536] convert(x)\n  ab = %s[65536] bitcast-convert(a)\n"
             "  j = u64[65536] iota(), iota_dimension=0\n  kk = u64[] constant(281479271743489)\n"
             "  kkb = u64[65536] broadcast(kk), dimensions={}\n  ww = u64[65536] multiply(j, kkb)\n"
             "  y = f64[65536] bitcast-convert(ww)\n  d = %s[65536] convert(y)\n  db = %s[65536] bitcast-convert(d)\n"
             "  ROOT t = (%s[65536], %s[65536]) tuple(ab, db)\n}\n",
             t, u, t, u, u, u);
    run_both(text, t);
  }
}

/* s4, u4, s2 and u2: every pair through the integer ops, conversions to and from f32 and s32. */
TEST(int4_cpu_matches_interpreter_on_every_pair) {
  static const char *const ops[] = {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                                    "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"};
  for (int s = 0; s < 4; s++) {
    const char *t = s == 0 ? "s4" : s == 1 ? "u4" : s == 2 ? "s2" : "u2", *u = s < 2 ? "u4" : "u2";
    int n = s < 2 ? 16 : 4;
    cx_sb sb;
    cx_sb_init(&sb);
    cx_sb_printf(&sb, "HloModule m\nENTRY e {\n  c = %s[%d] iota(), iota_dimension=0\n  x = %s[%d] bitcast-convert(c)\n"
                 "  a = %s[%d,%d] broadcast(x), dimensions={0}\n  b = %s[%d,%d] broadcast(x), dimensions={1}\n",
                 u, n, t, n, t, n, n, t, n, n);
    for (size_t k = 0; k < CX_ARRAY_LEN(ops); k++) cx_sb_printf(&sb, "  o%zu = %s[%d,%d] %s(a, b)\n", k, t, n, n, ops[k]);
    cx_sb_printf(&sb, "  lt = pred[%d,%d] compare(a, b), direction=LT\n  f = f32[%d] convert(x)\n  w = s32[%d] convert(x)\n"
                 "  g = f32[16] constant({-9, -8.5, -8, -1.5, -0.5, 0, 0.5, 3.5, 7, 7.5, 8, 15, 15.5, 16, inf, nan})\n"
                 "  back = %s[16] convert(g)\n  nn = %s[%d] negate(x)\n  ROOT t = (", n, n, n, n, t, t, n);
    for (size_t k = 0; k < CX_ARRAY_LEN(ops); k++) cx_sb_printf(&sb, "%s[%d,%d], ", t, n, n);
    cx_sb_printf(&sb, "pred[%d,%d], f32[%d], s32[%d], %s[16], %s[%d]) tuple(", n, n, n, n, t, t, n);
    for (size_t k = 0; k < CX_ARRAY_LEN(ops); k++) cx_sb_printf(&sb, "o%zu, ", k);
    cx_sb_puts(&sb, "lt, f, w, back, nn)\n}\n");
    if (sb.buf) run_both(sb.buf, t);
    cx_sb_free(&sb);
  }
}
