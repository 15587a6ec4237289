/* test_softmax_div.c — softmax's normalisation divide in a cpu row fusion (reduce_emit.c's
 * plan_fast_div): per row, a reciprocal multiply with one exact correction where the row's
 * bounds allow it, the divide elsewhere. It must give the divide's bits exactly: the same
 * softmax is compiled twice, once as JAX writes it and once with the divisor passed through
 * maximum(sum, 1) (the same value: the sum is at least 1 or NaN; but no longer the pattern, so
 * every row divides), and the
 * results compared bit for bit on rows that take each path (the fast form: logits within 40 of
 * the max, and rows with -inf, whose exps are 0; the divide: a NaN, a tiny exp, all -inf). The fast form's use is checked on the LLVM IR. */
#include "codegen_harness.h"

static void softmax_text(char *buf, size_t n, int64_t rows, int64_t cols, int plain) {
  snprintf(buf, n,
           "HloModule sm\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\n"
           "ad {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
           "ENTRY e {\n x = f32[%lld,%lld] parameter(0)\n ninf = f32[] constant(-inf)\n zero = f32[] constant(0)\n"
           " one = f32[] constant(1)\n m = f32[%lld] reduce(x, ninf), dimensions={1}, to_apply=mx\n"
           " bm = f32[%lld,%lld] broadcast(m), dimensions={0}\n d = f32[%lld,%lld] subtract(x, bm)\n"
           " e = f32[%lld,%lld] exponential(d)\n s = f32[%lld] reduce(e, zero), dimensions={1}, to_apply=ad\n"
           " oneb = f32[%lld] broadcast(one), dimensions={}\n s2 = f32[%lld] %s\n bs = f32[%lld,%lld] broadcast(s2), dimensions={0}\n"
           " ROOT q = f32[%lld,%lld] divide(e, bs)\n}\n",
           (long long)rows, (long long)cols, (long long)rows, (long long)rows, (long long)cols, (long long)rows,
           (long long)cols, (long long)rows, (long long)cols, (long long)rows, (long long)rows, (long long)rows,
           plain ? "maximum(s, oneb)" : "copy(s)", (long long)rows, (long long)cols, (long long)rows, (long long)cols);
}

/* Row kinds by row number: logits in [-20, 20]; [-40, 0]; some -inf; a NaN; far below the max
 * (a tiny exp); all -inf; one huge value among small ones. */
static float logit(int64_t row, int64_t j, int64_t cols, uint64_t *rs) {
  double u = (double)(cgt_rand(rs) >> 11) / 9007199254740992.0;
  switch (row % 8) {
  case 0: case 1: return (float)(-20 + 40 * u);
  case 2: return (float)(-40 * u);
  case 3: return j % 3 == 0 ? -__builtin_inff() : (float)(-5 + 10 * u);
  case 4: return j == cols / 2 ? __builtin_nanf("") : (float)u;
  case 5: return j == 7 ? -75.0f : (float)(2 * u);
  case 6: return -__builtin_inff();
  default: return j == 1 ? 3e38f : (float)u;
  }
}

static void check_shape(int64_t rows, int64_t cols) {
  static char fast[4096], plain[4096];
  softmax_text(fast, sizeof fast, rows, cols, 0);
  softmax_text(plain, sizeof plain, rows, cols, 1);
  int64_t n = rows * cols, dims[2] = {rows, cols};
  float *xv = malloc(sizeof *xv * (size_t)n);
  uint64_t rs = 12345;
  for (int64_t i = 0; i < n && xv; i++) xv[i] = logit(i / cols, i % cols, cols, &rs);
  cxla_literal *x = xv ? cxla_literal_from_data(test_ctx(), CXLA_F32, 2, dims, xv, sizeof *xv * (size_t)n) : NULL;
  CHECK(x != NULL);
  cxla_literal *a = x ? test_run_text(fast, "softmax", "cpu", x) : NULL;
  cxla_literal *b = x ? test_run_text(plain, "softmax divided", "cpu", x) : NULL;
  if (a && b) {
    const uint32_t *ua = cxla_literal_data(a), *ub = cxla_literal_data(b);
    int64_t diff = 0, first = -1;
    const float *fa = (const float *)ua, *fb = (const float *)ub;
    for (int64_t i = 0; i < n; i++) /* any NaN matches any NaN */
      if (ua[i] != ub[i] && !(fa[i] != fa[i] && fb[i] != fb[i]) && diff++ == 0) first = i;
    CHECK_MSG(diff == 0, "f32[%lld,%lld]: %lld elements differ from the divide's, first [%lld,%lld]: %a vs %a",
              (long long)rows, (long long)cols, (long long)diff, (long long)(first / cols), (long long)(first % cols),
              (double)((const float *)ua)[first], (double)((const float *)ub)[first]);
  }
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  cxla_literal_destroy(x);
  free(xv);
}

TEST(softmax_div_bits) {
  check_shape(64, 1000);   /* ordinary stores; a scalar remainder after the vectors */
  check_shape(1024, 2048); /* 8 MiB: the non-temporal last pass */
}

/* The fast form is emitted for the pattern, and not when the divisor is not the row's sum of
 * the dividend (here the sum passed through a maximum); both agree with the interpreter. */
TEST(softmax_div_pattern) {
  static char text[4096];
  for (int plain = 0; plain < 2; plain++) {
    softmax_text(text, sizeof text, 16, 256, plain);
    char *ir = NULL;
    cgt_opts o = {.fusion_pass = 3, .no_specials = 1, .rtol = 1e-5, .atol = 1e-30, .ir = &ir};
    CHECK_MSG(CGT(text, &o) == 0, "softmax (plain %d) differs from the interpreter", plain);
    int used = ir && strstr(ir, "fast_div") != NULL;
    CHECK_MSG(used == !plain, "the divide's fast form was %s (plain %d)", used ? "used" : "not used", plain);
    cx_free(ir);
  }
}
