/* test_rng.c — rng: the verifier's rule (XLA's HandleRng), and the values cxla defines for it
 * (interp/rng.c): the cpu backend gives the interpreter's values bit for bit, natively; they
 * have the distribution asked for (range, mean, deviation, every integer drawn); an execution
 * repeats the last one's numbers. Exact values are pinned in tests/hlo/ops/rng.hlo. */
#include <math.h>
#include <string.h>
#include "ir/literal.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "verify_helpers.h"

TEST(rng_verifier) {
  CHECK_STR_EQ(vt_verify_body("  a = f32[] parameter(0)\n  ROOT r = f32[2,3] rng(a, a), distribution=rng_normal\n"), "ok");
  CHECK_STR_EQ(vt_verify_body("  a = pred[] parameter(0)\n  ROOT r = pred[7] rng(a, a), distribution=rng_uniform\n"), "ok");
  CHECK_STR_CONTAINS(vt_verify_body("  a = s32[] parameter(0)\n  ROOT r = s32[2] rng(a, a), distribution=rng_normal\n"),
                     "rng_normal needs a floating-point result, got s32");
  CHECK_STR_CONTAINS(vt_verify_body("  a = f32[2] parameter(0)\n  ROOT r = f32[2] rng(a, a), distribution=rng_uniform\n"),
                     "a (operand 0) must be a scalar, got f32[2]");
  CHECK_STR_CONTAINS(vt_verify_body("  a = f32[] parameter(0)\n  b = f64[] parameter(1)\n"
                                 "  ROOT r = f32[2] rng(a, b), distribution=rng_uniform\n"),
                     "operand 1 f64[] must have the result's element type f32");
  CHECK_STR_CONTAINS(vt_verify_body("  a = f32[] parameter(0)\n  ROOT r = f32[2] rng(a, a)\n"), "distribution");
  CHECK_STR_CONTAINS(vt_verify_body("  a = f32[] parameter(0)\n  ROOT r = f32[2] rng(a, a), distribution=rng_gamma\n"),
                     "a distribution (rng_uniform, rng_normal)");
}

/* Runs `rng(a, b)` of shape `shape` on the cpu (checked bit for bit against the interpreter,
 * and natively) and returns its values as doubles (caller frees). */
static double *draw(const char *shape, const char *type, const char *a, const char *b, const char *dist, int64_t *n) {
  char text[512], in_a[64], in_b[64];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
           "  ROOT r = %s rng(a, b), distribution=%s\n}\n",
           type, type, shape, dist);
  snprintf(in_a, sizeof in_a, "%s[] %s", type, a);
  snprintf(in_b, sizeof in_b, "%s[] %s", type, b);
  const char *inputs[2] = {in_a, in_b};
  char *stats = NULL;
  cxla_literal *got = NULL;
  CHECK_MSG(cpu_check(text, 2, inputs, "--threads=4", 0, 0, &stats, &got), "%s %s", shape, dist);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "rng ran on the interpreter: %s", stats);
  free(stats);
  if (!got) return NULL;
  *n = cx_shape_elems(&got->shape);
  double *v = malloc(sizeof *v * (size_t)*n);
  for (int64_t i = 0; v && i < *n; i++) v[i] = cx_load_f64(got->shape.type, got->data, i);
  cxla_literal_destroy(got);
  return v;
}

static void moments(const double *v, int64_t n, double *mean, double *sd, double *lo, double *hi) {
  double s = 0, s2 = 0;
  *lo = INFINITY, *hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    s += v[i], s2 += v[i] * v[i];
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
  *mean = s / (double)n;
  *sd = sqrt(s2 / (double)n - *mean * *mean);
}

TEST(rng_values_have_their_distribution) {
  int64_t n = 0;
  double mean, sd, lo, hi;
  double *v = draw("f32[200,500]", "f32", "-2", "3", "rng_uniform", &n);
  if (v) {
    moments(v, n, &mean, &sd, &lo, &hi);
    CHECK_MSG(lo >= -2 && hi < 3 && fabs(mean - 0.5) < 0.02 && fabs(sd - 5 / sqrt(12)) < 0.02, "uniform f32: mean %g sd %g [%g, %g]",
              mean, sd, lo, hi);
  }
  free(v);
  v = draw("f64[100001]", "f64", "1", "2", "rng_normal", &n);
  if (v) {
    moments(v, n, &mean, &sd, &lo, &hi);
    CHECK_MSG(fabs(mean - 1) < 0.03 && fabs(sd - 2) < 0.03, "normal f64: mean %g sd %g", mean, sd);
  }
  free(v);
  v = draw("bf16[4097]", "bf16", "0", "1", "rng_normal", &n);
  if (v) {
    moments(v, n, &mean, &sd, &lo, &hi);
    CHECK_MSG(fabs(mean) < 0.1 && fabs(sd - 1) < 0.1, "normal bf16: mean %g sd %g", mean, sd);
  }
  free(v);
  v = draw("s8[30000]", "s8", "-5", "5", "rng_uniform", &n);
  if (v) {
    int count[10] = {0};
    for (int64_t i = 0; i < n; i++) {
      CHECK(v[i] >= -5 && v[i] < 5);
      if (v[i] >= -5 && v[i] < 5) count[(int)v[i] + 5]++;
    }
    for (int k = 0; k < 10; k++) CHECK_MSG(count[k] > 2700 && count[k] < 3300, "s8 value %d drawn %d times", k - 5, count[k]);
  }
  free(v);
  v = draw("u64[1000]", "u64", "0", "18446744073709551615", "rng_uniform", &n);
  if (v) {
    moments(v, n, &mean, &sd, &lo, &hi);
    CHECK_MSG(fabs(mean / 18446744073709551615.0 - 0.5) < 0.05, "u64 over the whole range: mean %g", mean);
  }
  free(v);
  v = draw("s32[64]", "s32", "7", "7", "rng_uniform", &n); /* an empty range gives a */
  for (int64_t i = 0; v && i < n; i++) CHECK(v[i] == 7);
  free(v);
}

/* Numbers depend on the execution's runs of the instruction, not on earlier executions. */
TEST(rng_executions_repeat) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                     "  ROOT r = f32[8] rng(a, b), distribution=rng_uniform\n}\n";
  static const char *const backends[] = {"interp", "cpu"};
  for (int k = 0; k < 2; k++) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "r.hlo", &m));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[k];
    cxla_literal *x = NULL, *y = NULL;
    if (m) CHECK_OK(cxla_module_run(m, &o, 0, NULL, &x));
    if (m) CHECK_OK(cxla_module_run(m, &o, 0, NULL, &y));
    if (x && y) CHECK_MSG(!memcmp(x->data, y->data, 32), "%s: two executions differ", backends[k]);
    cxla_literal_destroy(x);
    cxla_literal_destroy(y);
    cxla_module_destroy(m);
  }
}
