/* test_batch_norm.c — batch-norm-training, -inference and -grad: text (epsilon= an f32, both
 * keys required as in XLA), XLA's shape rules, and the cpu pipeline's expansion (no
 * batch-norm left, no interpreter fallback) against the interpreter's direct evaluation on
 * every feature_index of rank-1 to rank-4 operands, f16/bf16/f32/f64, per-feature operands of
 * another float type; with the pass disabled the cpu runs them on the interpreter. Hand-derived
 * values are in tests/hlo/linalg/batch_norm*.hlo. */
#include <math.h>
#include <string.h>
#include "ir/verify.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "util/util.h"

static char g_out[4096];
static const char *fmt(const char *body) {
  char text[2048];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%s\n}\n", body);
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s != CXLA_OK) {
    cx_module_free(m);
    snprintf(g_out, sizeof g_out, "ERROR: %s", cxla_context_errmsg(test_ctx()));
    return g_out;
  }
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  snprintf(g_out, sizeof g_out, "%s", sb.buf ? sb.buf : "");
  cx_sb_free(&sb);
  cx_module_free(m);
  return g_out;
}

TEST(batch_norm_text_and_shapes) {
  const char *p = "  x = f32[2,3,4] parameter(0)\n  s = f32[3] parameter(1)\n  o = f32[3] parameter(2)\n";
  char b[1024];
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), epsilon=0.001, feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "ROOT t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n");
  snprintf(b, sizeof b, "%s  ROOT t = f32[2,3,4] batch-norm-inference(x, s, o, s, o), epsilon=1e-05, feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "batch-norm-inference(x, s, o, s, o), epsilon=1e-05, feature_index=1\n");
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-grad(x, s, o, s, x), epsilon=0.25, feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "ROOT t = (f32[2,3,4], f32[3], f32[3]) batch-norm-grad(x, s, o, s, x), epsilon=0.25, feature_index=1\n");
  /* both keys are required, epsilon a finite float */
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "batch-norm-training needs attribute epsilon=");
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), epsilon=0.1", p);
  CHECK_STR_CONTAINS(fmt(b), "batch-norm-training needs attribute feature_index=");
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), epsilon=big, feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "expected an f32 epsilon");
  /* XLA's shape rules */
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), epsilon=0.1, feature_index=3", p);
  CHECK_STR_CONTAINS(fmt(b), "feature_index=3 must be a dimension of the operand f32[2,3,4]");
  snprintf(b, sizeof b, "%s  ROOT t = batch-norm-training(x, s, o), epsilon=0.1, feature_index=2", p);
  CHECK_STR_CONTAINS(fmt(b), "scale must be a rank-1 array of the 4 features, got f32[3]");
  CHECK_STR_CONTAINS(fmt("  x = s32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n"
                         "  ROOT t = batch-norm-training(x, s, s), epsilon=0.1, feature_index=1"),
                     "the operand must have a floating-point element type, got s32");
  snprintf(b, sizeof b, "%s  g = f32[2,3,3] parameter(3)\n  ROOT t = batch-norm-grad(x, s, o, s, g), epsilon=0.1, feature_index=1", p);
  CHECK_STR_CONTAINS(fmt(b), "grad_output must be a float array of the operand's dimensions f32[2,3,4], got f32[2,3,3]");
  /* per-feature operands of another float type, as XLA allows */
  CHECK_STR_CONTAINS(fmt("  x = f16[4,2] parameter(0)\n  s = f32[2] parameter(1)\n"
                         "  ROOT t = batch-norm-training(x, s, s), epsilon=0.1, feature_index=1"),
                     "ROOT t = (f16[4,2], f16[2], f16[2]) batch-norm-training(x, s, s)");
}

static uint64_t g_seed = 3;
static double rnd(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2 - 1;
}

static void nest(cx_sb *sb, int rank, const int64_t *dims, int d, double lo, double span) {
  if (d == rank) {
    cx_sb_printf(sb, "%.6g", lo + span * (rnd() + 1));
    return;
  }
  cx_sb_putc(sb, '{');
  for (int64_t i = 0; i < dims[d]; i++) {
    if (i) cx_sb_puts(sb, ", ");
    nest(sb, rank, dims, d + 1, lo, span);
  }
  cx_sb_putc(sb, '}');
}

/* "type[dims] {...}" of random values in [lo, lo + 2 * span). */
static char *values(const char *type, int rank, const int64_t *dims, double lo, double span) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s[", type);
  for (int d = 0; d < rank; d++) cx_sb_printf(&sb, "%s%lld", d ? "," : "", (long long)dims[d]);
  cx_sb_puts(&sb, "] ");
  nest(&sb, rank, dims, 0, lo, span);
  return cx_sb_take(&sb);
}

static const char *shape_of(char *buf, size_t n, const char *type, int rank, const int64_t *dims) {
  size_t k = (size_t)snprintf(buf, n, "%s[", type);
  for (int d = 0; d < rank; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)dims[d]);
  snprintf(buf + k, n - k, "]");
  return buf;
}

/* All three ops on one operand, on the cpu (flags) and the interpreter. */
static void check(const char *type, const char *ftype, int rank, const int64_t *dims, int fi, const char *flags,
                  int want_fallbacks) {
  char xs[64], fs[64], text[2048];
  int64_t f = dims[fi];
  shape_of(xs, sizeof xs, type, rank, dims);
  shape_of(fs, sizeof fs, ftype, 1, &f);
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = %s parameter(0)\n  s = %s parameter(1)\n  o = %s parameter(2)\n"
           "  v = %s parameter(3)\n  g = %s parameter(4)\n"
           "  t = batch-norm-training(x, s, o), epsilon=0.001, feature_index=%d\n"
           "  i = batch-norm-inference(x, s, o, o, v), epsilon=0.5, feature_index=%d\n"
           "  d = batch-norm-grad(x, s, o, v, g), epsilon=0.25, feature_index=%d\n"
           "  ROOT r = tuple(t, i, d)\n}\n",
           xs, fs, fs, fs, xs, fi, fi, fi);
  char *in[5] = {values(type, rank, dims, -2, 2), values(ftype, 1, &f, -1, 1), values(ftype, 1, &f, -1, 1),
                 values(ftype, 1, &f, 0, 1), values(type, rank, dims, -1, 1)};
  int lowp = type[0] != 'f' || type[1] == '1'; /* bf16, f16 */
  char *stats = NULL;
  CHECK_MSG(cpu_check(text, 5, (const char *const *)in, flags, lowp ? 3e-2 : 1e-4, lowp ? 3e-2 : 1e-5, &stats, NULL),
            "%s x %s feature_index %d", xs, fs, fi);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == want_fallbacks, "%s: %s", xs, stats);
  free(stats);
  for (int k = 0; k < 5; k++) cx_free(in[k]);
}

TEST(batch_norm_cpu_matches_interpreter) {
  static const int64_t d1[1] = {5}, d2[2] = {7, 3}, d4[4] = {2, 3, 4, 5};
  check("f32", "f32", 1, d1, 0, NULL, 0);
  for (int fi = 0; fi < 2; fi++) check("f32", "f32", 2, d2, fi, NULL, 0);
  for (int fi = 0; fi < 4; fi++) check("f32", "f32", 4, d4, fi, NULL, 0);
  check("f64", "f64", 4, d4, 3, NULL, 0);
  check("f16", "f16", 4, d4, 1, NULL, 0);
  check("bf16", "f32", 4, d4, 3, NULL, 0);
  check("f32", "f16", 2, d2, 1, "--fusion=off", 0);
  /* with the pass disabled the ops run on the interpreter, and still agree */
  check("f32", "f32", 4, d4, 1, "--disable-pass=batchnorm-expand", 3);
}
