/* test_codegen_math.c — accuracy of the f32 approximations in math.c against the interpreter
 * (double libm, rounded once): 1M inputs sampled evenly over all 2^32 bit patterns (every
 * exponent, both signs, denormals, infinities, NaNs), then 1M evenly spaced points over each
 * function's interesting range. The bounds asserted are the ones math.h documents (measured
 * there over all 2^32 inputs). */
#include "codegen_harness.h"

#define N (1 << 20)

typedef struct sweep {
  int dense;
  double lo, hi;
  int f64; /* the inputs and op are f64 (else f32) */
} sweep;

static void fill_sweep(cxla_literal *lit, int k, void *user) {
  const sweep *s = user;
  float *x = lit->data;
  double *xd = lit->data;
  (void)k;
  for (int64_t i = 0; i < N && s->f64; i++) {
    if (s->dense) {
      xd[i] = s->lo + (s->hi - s->lo) * (double)i / (N - 1);
    } else {
      uint64_t u = (uint64_t)i * ((uint64_t)1 << 44) + (uint64_t)(i * 2654435761u) % ((uint64_t)1 << 44);
      memcpy(&xd[i], &u, 8);
    }
  }
  for (int64_t i = 0; i < N && !s->f64; i++) {
    if (s->dense) {
      x[i] = (float)(s->lo + (s->hi - s->lo) * (double)i / (N - 1));
    } else {
      uint32_t u = (uint32_t)((uint64_t)i * 4096u + (uint64_t)(i * 2654435761u) % 4096u); /* vary the low bits */
      memcpy(&x[i], &u, 4);
    }
  }
}

static double measure(const char *op, sweep s, const char *file, int line) {
  char text[256];
  const char *t = s.f64 ? "f64" : "f32";
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = %s[%d] parameter(0)\n ROOT r = %s[%d] %s(a)\n}\n", t, N, t, N, op);
  cgt_opts o = {.fusion_pass = 1, .ulps = 1e9, .fill = fill_sweep, .user = &s, .chunks = 3};
  if (cgt_check(text, &o, file, line)) test_fail(file, line, "%s: sweep failed", op);
#if defined(__x86_64__)
  if (!o.vectorized) test_fail(file, line, "%s: the loop did not vectorise", op);
#endif
  return o.max_ulps;
}

static void check_fn_t(const char *op, int f64, double max_ulps, double lo, double hi, const char *file, int line) {
  sweep all = {0, 0, 0, f64}, dense = {1, lo, hi, f64};
  double u1 = measure(op, all, file, line), u2 = measure(op, dense, file, line);
  printf("    %s %s: max %g ulps over all bit patterns, %g ulps on [%g, %g]\n", f64 ? "f64" : "f32", op, u1, u2, lo, hi);
  if (u1 > max_ulps || u2 > max_ulps)
    test_fail(file, line, "%s: %g / %g ulps, documented %g", op, u1, u2, max_ulps);
}
#define CHECK_FN(op, ulps, lo, hi) check_fn_t((op), 0, (ulps), (lo), (hi), __FILE__, __LINE__)
#define CHECK_FN64(op, ulps, lo, hi) check_fn_t((op), 1, (ulps), (lo), (hi), __FILE__, __LINE__)

TEST(codegen_math_exp) { CHECK_FN("exponential", 1, -104, 89); }
TEST(codegen_math_expm1) { CHECK_FN("exponential-minus-one", 2, -20, 89); }
TEST(codegen_math_log) { CHECK_FN("log", 1, 0, 100); }
TEST(codegen_math_log1p) { CHECK_FN("log-plus-one", 2, -1, 10); }
/* tanh is odd down to zero's sign (tanh(-0) = -0, as libm's), and its special values are libm's
 * bit for bit: +-inf, NaN, tiny and denormal x (tanh x = x) */
static const float k_tanh_specials[] = {0.0f, -0.0f, __builtin_inff(), -__builtin_inff(), __builtin_nanf(""),
                                        -__builtin_nanf(""), 0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-30f, 9.5f,
                                        -9.75f, 100.0f};

typedef struct spec32 { const float *v; int n; } spec32;

/* the values of a spec32 (user), repeated over the input */
static void fill_spec32(cxla_literal *lit, int k, void *user) {
  const spec32 *s = user;
  float *x = lit->data;
  (void)k;
  for (int64_t i = 0; i < N; i++) x[i] = s->v[i % s->n];
}

TEST(codegen_math_tanh) {
  CHECK_FN("tanh", 1, -10, 10);
  char text[160];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f32[%d] parameter(0)\n ROOT r = f32[%d] tanh(a)\n}\n", N, N);
  spec32 sp = {k_tanh_specials, (int)(sizeof k_tanh_specials / sizeof *k_tanh_specials)};
  cgt_opts o = {.fusion_pass = 1, .ulps = 0, .fill = fill_spec32, .user = &sp, .chunks = 3};
  if (cgt_check(text, &o, __FILE__, __LINE__)) test_fail(__FILE__, __LINE__, "tanh: special values differ from libm");
}
/* Every f32 function of math.c at +-0, +-inf and NaN: libm's zeros and infinities bit for bit,
 * the sign of zero too (log1p(-0) was +0, and JAX's binomial sampler with p = 0 then looped for
 * ever), and NaN for NaN (the harness does not compare NaN payloads or signs) */
static const float k_f32_specials[] = {0.0f, -0.0f, __builtin_inff(), -__builtin_inff(), __builtin_nanf(""),
                                       -__builtin_nanf("")};

TEST(codegen_math_f32_specials) {
  static const char *const ops[] = {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh",
                                    "logistic", "erf", "sine", "cosine", "tan", "cbrt", "power"};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    char text[200];
    int binary = !strcmp(ops[i], "power"); /* x^x: 0^0, inf^inf, NaN^NaN, (-0)^(-0), ... */
    snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f32[%d] parameter(0)\n ROOT r = f32[%d] %s(a%s)\n}\n",
             N, N, ops[i], binary ? ", a" : "");
    spec32 sp = {k_f32_specials, (int)(sizeof k_f32_specials / sizeof *k_f32_specials)};
    cgt_opts o = {.fusion_pass = 1, .ulps = 0, .fill = fill_spec32, .user = &sp, .chunks = 3};
    if (cgt_check(text, &o, __FILE__, __LINE__)) test_fail(__FILE__, __LINE__, "%s: special values differ from libm", ops[i]);
  }
}
TEST(codegen_math_logistic) { CHECK_FN("logistic", 2, -110, 30); }
TEST(codegen_math_erf) { CHECK_FN("erf", 1, -5, 5); }
/* f64: 1M points over all 2^64 bit patterns and 1M dense ones (math_f64.c) */
TEST(codegen_math_exp_f64) { CHECK_FN64("exponential", 1, -746, 710); CHECK_FN64("exponential", 1, -1, 1); }
TEST(codegen_math_log_f64) { CHECK_FN64("log", 1, 0, 100); CHECK_FN64("log", 1, 0.5, 2); }
/* sin/cos/tan: near 0 and over many periods (Cody-Waite in double), and beyond 2^24 where the
 * Payne-Hanek path reduces (the all-bit-patterns sweep covers up to the largest floats). */
TEST(codegen_math_sin) { CHECK_FN("sine", 1, -100, 100); CHECK_FN("sine", 1, 1e7, 1e9); }
TEST(codegen_math_cos) { CHECK_FN("cosine", 1, -100, 100); CHECK_FN("cosine", 1, -1e9, -1e7); }
TEST(codegen_math_tan) { CHECK_FN("tan", 1, -100, 100); CHECK_FN("tan", 1, 1e7, 3e38); }

/* pow and atan2: x and y from the same kind of sweep, paired differently (k = 1 reverses the order) */
typedef struct pow_sweep {
  int mode; /* 0: bit patterns; 1: x in (0, 16], y in [-40, 40]; 2: negative x, integer y;
               3: every pair of special values */
} pow_sweep;

static const float k_pow_specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f,
                                       2.5f, -2.5f, 0x1p-149f, -0x1p-149f, 0x1p-130f, 0x1.fffffep127f,
                                       -0x1.fffffep127f, 0x1p24f, 0x1.000002p24f, -0x1p25f, 1.0000001f,
                                       0.99999994f, 127.0f, -149.0f, __builtin_inff(), -__builtin_inff(),
                                       __builtin_nanf("")};
#define NSPEC ((int64_t)(sizeof k_pow_specials / sizeof *k_pow_specials))

static void fill_pow(cxla_literal *lit, int k, void *user) {
  const pow_sweep *s = user;
  float *x = lit->data;
  for (int64_t i = 0; i < N; i++) {
    int64_t j = k ? N - 1 - i : i;
    if (s->mode == 0) {
      uint32_t u = (uint32_t)((uint64_t)j * 4096u + (uint64_t)(j * 2654435761u) % 4096u);
      memcpy(&x[i], &u, 4);
    } else if (s->mode == 1) {
      x[i] = k ? (float)(-40.0 + 80.0 * (double)((i * 7919) % N) / N) : (float)(16.0 * (double)(i + 1) / N);
    } else if (s->mode == 2) {
      x[i] = k ? (float)((i * 7919) % 301 - 150) : (float)(-16.0 * (double)(i + 1) / N);
    } else {
      int64_t p = i % (NSPEC * NSPEC);
      x[i] = k_pow_specials[k ? p % NSPEC : p / NSPEC];
    }
  }
}

static void check_binary(const char *op, const char *file, int line) {
  char text[256];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f32[%d] parameter(0)\n b = f32[%d] parameter(1)\n"
           " ROOT r = f32[%d] %s(a, b)\n}\n", N, N, N, op);
  for (int mode = 0; mode < 4; mode++) {
    pow_sweep s = {mode};
    /* ulps 0 for the specials: bit-exact, -0 != +0 */
    cgt_opts o = {.fusion_pass = 1, .ulps = mode == 3 ? 0 : 1e9, .fill = fill_pow, .user = &s, .chunks = 3};
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "%s: sweep %d failed", op, mode);
#if defined(__x86_64__)
    if (!o.vectorized) test_fail(file, line, "%s: the loop did not vectorise", op);
#endif
    printf("    %s: max %g ulps on sweep %d\n", op, o.max_ulps, mode);
    if (o.max_ulps > 1) test_fail(file, line, "%s: %g ulps on sweep %d, documented 1", op, o.max_ulps, mode);
  }
}

TEST(codegen_math_pow) { check_binary("power", __FILE__, __LINE__); }
TEST(codegen_math_atan2) { check_binary("atan2", __FILE__, __LINE__); }
TEST(codegen_math_cbrt) { CHECK_FN("cbrt", 1, -1000, 1000); CHECK_FN("cbrt", 1, -1e-37, 1e-37); }

/* ---- f64 through glibc's libmvec (libmvec.c): bound 4 ulps against the interpreter's libm
 * (libmvec documents 4 ulp; docs/numerics.md has the measured maxima). Special values must
 * come out bit for bit as libm's: NaN, +-inf, +-0 (its sign), and huge trig arguments, whose
 * slow range reduction must stay correct (within the bound). ---- */

static const double k_f64_specials[] = {0.0, -0.0, __builtin_inf(), -__builtin_inf(), __builtin_nan(""), -__builtin_nan("")};
static const double k_f64_huge[] = {1e22, -1e22, 0x1p1023, -0x1.fffffffffffffp1023, 1e300, 0x1p60, 3e15, -7.5e18, 0x1.921fb54442d18p+50};
typedef struct spec_fill { const double *v; int n; } spec_fill;

static void fill_spec64(cxla_literal *lit, int k, void *user) {
  const spec_fill *s = user;
  double *x = lit->data;
  (void)k;
  for (int64_t i = 0; i < N; i++) x[i] = s->v[i % s->n];
}

static void check_specials64(const char *op, const double *v, int n, double ulps, const char *file, int line) {
  char text[256];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f64[%d] parameter(0)\n ROOT r = f64[%d] %s(a)\n}\n", N, N, op);
  spec_fill s = {v, n};
  cgt_opts o = {.fusion_pass = 1, .ulps = ulps, .fill = fill_spec64, .user = &s, .chunks = 3};
  if (cgt_check(text, &o, file, line)) test_fail(file, line, "%s: special values differ from libm", op);
}

static void check_fn64(const char *op, double lo, double hi, const char *file, int line) {
  check_fn_t(op, 1, 4, lo, hi, file, line);
  check_specials64(op, k_f64_specials, 6, 0, file, line);
  check_specials64(op, k_f64_huge, 9, 4, file, line);
}
#define CHECK_MVEC(op, lo, hi) check_fn64((op), (lo), (hi), __FILE__, __LINE__)

TEST(codegen_math_sin_f64) { CHECK_MVEC("sine", -100, 100); CHECK_FN64("sine", 4, 1e6, 1e22); }
TEST(codegen_math_cos_f64) { CHECK_MVEC("cosine", -100, 100); CHECK_FN64("cosine", 4, -1e22, -1e6); }
TEST(codegen_math_tan_f64) { CHECK_MVEC("tan", -100, 100); CHECK_FN64("tan", 4, 1e6, 1e300); }
TEST(codegen_math_cbrt_f64) { CHECK_MVEC("cbrt", -1000, 1000); CHECK_FN64("cbrt", 4, -1e-300, 1e-300); }
TEST(codegen_math_erf_f64) { CHECK_MVEC("erf", -6, 6); }
TEST(codegen_math_tanh_f64) { CHECK_MVEC("tanh", -20, 20); }
TEST(codegen_math_expm1_f64) { CHECK_MVEC("exponential-minus-one", -40, 710); CHECK_FN64("exponential-minus-one", 4, -1e-3, 1e-3); }
TEST(codegen_math_log1p_f64) { CHECK_MVEC("log-plus-one", -1, 100); CHECK_FN64("log-plus-one", 4, -1e-3, 1e-3); }

/* pow and atan2 on f64: check_binary's sweeps on f64 (mode 3: pairs of special and edge values
 * within the bound), and last pairs whose results are special, bit exact (modes 4 and 5) */
static const double k_pow64_specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                                          0x1p-1074, -0x1p-1074, 0x1p-1030, 0x1.fffffffffffffp1023,
                                          -0x1.fffffffffffffp1023, 0x1p53, 0x1.0000000000001p53, -0x1p54,
                                          1.0000000000000002, 0.9999999999999999, 1023.0, -1074.0,
                                          __builtin_inf(), -__builtin_inf(), __builtin_nan("")};
#define NSPEC64 ((int64_t)(sizeof k_pow64_specials / sizeof *k_pow64_specials))
/* pairs of these have special results (0, +-inf, NaN, +-1, +-pi, ...), which must be libm's bit
 * for bit (the sign of zero, too) */
static const double k_exact64_x[] = {0.0, -0.0, 1.0, -1.0, __builtin_inf(), -__builtin_inf(), __builtin_nan("")};
static const double k_exact64_y[] = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -2.5, 0x1.0000000000001p53,
                                     0x1p-1074, __builtin_inf(), -__builtin_inf(), __builtin_nan("")};
#define NEX_X ((int64_t)(sizeof k_exact64_x / sizeof *k_exact64_x))
#define NEX_Y ((int64_t)(sizeof k_exact64_y / sizeof *k_exact64_y))

static void fill_pow64(cxla_literal *lit, int k, void *user) {
  const pow_sweep *s = user;
  double *x = lit->data;
  for (int64_t i = 0; i < N; i++) {
    int64_t j = k ? N - 1 - i : i;
    if (s->mode == 0) {
      uint64_t u = (uint64_t)j * ((uint64_t)1 << 44) + (uint64_t)(j * 2654435761u) % ((uint64_t)1 << 44);
      memcpy(&x[i], &u, 8);
    } else if (s->mode == 1) {
      x[i] = k ? -40.0 + 80.0 * (double)((i * 7919) % N) / N : 16.0 * (double)(i + 1) / N;
    } else if (s->mode == 2) {
      x[i] = k ? (double)((i * 7919) % 301 - 150) : -16.0 * (double)(i + 1) / N;
    } else if (s->mode == 3) {
      int64_t p = i % (NSPEC64 * NSPEC64);
      x[i] = k_pow64_specials[k ? p % NSPEC64 : p / NSPEC64];
    } else if (s->mode == 4) { /* power(x, y) */
      int64_t p = i % (NEX_X * NEX_Y);
      x[i] = k ? k_exact64_y[p % NEX_Y] : k_exact64_x[p / NEX_Y];
    } else { /* atan2(y, x): both from k_exact64_x */
      int64_t p = i % (NEX_X * NEX_X);
      x[i] = k_exact64_x[k ? p % NEX_X : p / NEX_X];
    }
  }
}

static void check_binary64(const char *op, int exact_mode, const char *file, int line) {
  char text[256];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f64[%d] parameter(0)\n b = f64[%d] parameter(1)\n"
           " ROOT r = f64[%d] %s(a, b)\n}\n", N, N, N, op);
  for (int mode = 0; mode < 5; mode++) {
    pow_sweep s = {mode == 4 ? exact_mode : mode};
    cgt_opts o = {.fusion_pass = 1, .ulps = mode == 4 ? 0 : 1e9, .fill = fill_pow64, .user = &s, .chunks = 3};
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "%s: f64 sweep %d failed", op, mode);
#if defined(__x86_64__)
    if (!o.vectorized) test_fail(file, line, "%s: the f64 loop did not vectorise", op);
#endif
    printf("    f64 %s: max %g ulps on sweep %d\n", op, o.max_ulps, mode);
    if (o.max_ulps > 4) test_fail(file, line, "%s: f64 %g ulps on sweep %d, documented 4", op, o.max_ulps, mode);
  }
}

TEST(codegen_math_pow_f64) { check_binary64("power", 4, __FILE__, __LINE__); }
TEST(codegen_math_atan2_f64) { check_binary64("atan2", 5, __FILE__, __LINE__); }

/* --cpu-libmvec=off: f64 math calls scalar libm, bit for bit the interpreter's */
TEST(codegen_math_f64_libm_only) {
  static const char *const ops[] = {"sine", "tan", "erf", "power"};
  for (int k = 0; k < 4; k++) {
    char text[256];
    if (k < 3)
      snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f64[4099] parameter(0)\n ROOT r = f64[4099] %s(a)\n}\n", ops[k]);
    else
      snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f64[4099] parameter(0)\n b = f64[4099] parameter(1)\n"
               " ROOT r = f64[4099] %s(a, b)\n}\n", ops[k]);
    cgt_opts o = {.fusion_pass = 1, .ulps = 0, .libm_only = 1, .lo = -50, .hi = 50};
    CHECK(CGT(text, &o) == 0);
  }
}

/* ---- exp of a value known to be <= 0 (value_sign.c): x - broadcast(reduce_max(x)) ----
 * Rows of 1024, each starting with 0 so that the row's maximum is 0 and the exp's argument is
 * x itself: the first half of the rows densely over [lo, 0], the second half negative bit
 * patterns (denormals, -inf; NaN patterns become -inf, or every row would be NaN), and one row
 * with a NaN in it. The range-aware exp must keep exp's 1 ulp there. Then the same sweep through
 * x - reduce_min(x) in [0, 88.7], which must not take it (its 2^n in one step would leave the
 * exponent range: far more than 1 ulp off) and reduce_max of another array, which proves
 * nothing either. */
#define ROW 1024

typedef struct sign_sweep {
  double lo, hi; /* the dense half */
  int bits;      /* the other half: negative bit patterns (else dense again) */
} sign_sweep;

static void fill_sign(cxla_literal *lit, int k, void *user) {
  const sign_sweep *s = user;
  float *x = lit->data;
  if (cx_shape_elems(&lit->shape) != N) return; /* only the matrices are swept */
  for (int64_t i = 0; i < N; i++) {
    if (i % ROW == 0) {
      x[i] = k ? -1.0f : (s->lo < 0 ? 0.0f : (float)s->lo);
    } else if (i < N / 2 || !s->bits) {
      double t = (double)(i % (N / 2)) / (N / 2 - 1);
      x[i] = (float)(s->lo + (s->hi - s->lo) * (k ? 1 - t : t));
    } else {
      uint32_t u = 0x80000000u | (uint32_t)(((uint64_t)i * 4096u + (uint64_t)(i * 2654435761u) % 4096u) & 0x7fffffffu);
      if ((u & 0x7f800000u) == 0x7f800000u) u = 0xff800000u;
      memcpy(&x[i], &u, 4);
    }
  }
  if (!k && s->bits) x[N - ROW / 2] = __builtin_nanf("");
}

static double check_sign_rule(const char *red, const char *x_of_red, sign_sweep s, int want_rule, const char *file, int line) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\n%s {\n p0 = f32[] parameter(0)\n p1 = f32[] parameter(1)\n ROOT r = f32[] %s(p0, p1)\n}\n"
           "ENTRY e {\n x = f32[%d,%d] parameter(0)\n y = f32[%d,%d] parameter(1)\n c = f32[] constant(%s)\n"
           " m = f32[%d] reduce(%s, c), dimensions={1}, to_apply=%s\n b = f32[%d,%d] broadcast(m), dimensions={0}\n"
           " d = f32[%d,%d] subtract(x, b)\n ROOT e = f32[%d,%d] exponential(d)\n}\n",
           red, red, N / ROW, ROW, N / ROW, ROW, strcmp(red, "maximum") ? "inf" : "-inf", N / ROW, x_of_red, red,
           N / ROW, ROW, N / ROW, ROW, N / ROW, ROW);
  char *ir = NULL;
  cgt_opts o = {.fusion_pass = 3, .ulps = 1e9, .fill = fill_sign, .user = &s, .chunks = 3, .ir = &ir};
  if (cgt_check(text, &o, file, line)) test_fail(file, line, "exp(x - %s(%s)): sweep failed", red, x_of_red);
  int used = ir && strstr(ir, "exp_nonpos") != NULL;
  cx_free(ir);
  if (used != want_rule)
    test_fail(file, line, "exp(x - %s(%s)): the range-aware exp was %s", red, x_of_red, used ? "used" : "not used");
  printf("    exp(x - %s(%s)): max %g ulps\n", red, x_of_red, o.max_ulps);
  if (o.max_ulps > 1) test_fail(file, line, "exp(x - %s(%s)): %g ulps, documented 1", red, x_of_red, o.max_ulps);
  return o.max_ulps;
}

TEST(codegen_math_exp_nonpositive) {
  check_sign_rule("maximum", "x", (sign_sweep){-110, 0, 1}, 1, __FILE__, __LINE__);
  check_sign_rule("maximum", "x", (sign_sweep){-1, 0, 0}, 1, __FILE__, __LINE__);
  check_sign_rule("minimum", "x", (sign_sweep){0, 88.7, 0}, 0, __FILE__, __LINE__);
  check_sign_rule("maximum", "y", (sign_sweep){-20, 20, 0}, 0, __FILE__, __LINE__);
}
