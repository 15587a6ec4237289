/* test_scaled_dot.c — scaled-dot and the __op$block_scaled_dot custom-call (ir/scaled_dot.h):
 * the result type a scaled-dot written without a shape gets (XLA's HigherPrecisionType), and
 * the cpu backend's expansion (passes/scaled_dot_expand.c) against the interpreter's own loops
 * for several result types, blocks along every kind of dimension, padded scales and a global
 * scale, compiled natively (no interpreter fallback). Hand-derived values are in
 * tests/hlo/ops/scaled_dot*.hlo and tests/hlo/xla_syntax/block_scaled_dot.hlo. */
#include <string.h>
#include "test_cpu_helpers.h"
#include "util/util.h"
#include "verify_helpers.h"

/* The element type inferred for scaled-dot(lhs, rhs, ...) of these operand types. */
static const char *inferred(const char *lt, const char *rt) {
  static char out[16];
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  a = %s[2,4] parameter(0)\n  b = %s[4,2] parameter(1)\n"
           "  as = f8e8m0fnu[2,2] parameter(2)\n  bs = f8e8m0fnu[2,2] parameter(3)\n"
           "  ROOT x = scaled-dot(a, b, as, bs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
           lt, rt);
  cx_module *m = cpu_parse(text);
  snprintf(out, sizeof out, "%s", m ? cxla_type_name(m->entry->root->shape.type) : "?");
  if (m) cx_module_free(m);
  return out;
}

TEST(scaled_dot_inferred_type) {
  CHECK_STR_EQ(inferred("f8e4m3fn", "bf16"), "bf16");   /* range first */
  CHECK_STR_EQ(inferred("f8e4m3fn", "f8e5m2"), "f8e5m2");
  CHECK_STR_EQ(inferred("f16", "bf16"), "bf16");
  CHECK_STR_EQ(inferred("bf16", "f32"), "f32");         /* then precision */
  CHECK_STR_EQ(inferred("s32", "f4e2m1fn"), "f4e2m1fn"); /* float over integer */
  CHECK_STR_EQ(inferred("u32", "s32"), "s32");          /* signed over unsigned */
}

/* One module, checked on the cpu against the interpreter, with no fallback. */
static void check(const char *text, int n, const char *const *inputs, double tol) {
  char *stats = NULL;
  CHECK_MSG(cpu_check(text, n, inputs, NULL, tol, tol, &stats, NULL), "%s", text);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "a scaled dot ran on the interpreter: %s", stats);
  free(stats);
}

TEST(scaled_dot_cpu_matches_interpreter) {
  static const char *const results[] = {"f32", "bf16", "f16", "f64", "s32"};
  int64_t ld[3] = {2, 3, 8}, rd[3] = {2, 8, 4}, lsd[3] = {1, 3, 2}, rsd[3] = {2, 2, 2};
  for (size_t i = 0; i < CX_ARRAY_LEN(results); i++) {
    char text[1024];
    /* a batch dim, blocks of 4 along K on both sides, a lhs scale blocking the batch and an rhs
     * scale blocking the free dimension */
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = f8e4m3fn[2,3,8] parameter(0)\n  b = f8e5m2[2,8,4] parameter(1)\n"
             "  as = f8e8m0fnu[1,3,2] parameter(2)\n  bs = bf16[2,2,2] parameter(3)\n"
             "  ROOT x = %s[2,3,4] scaled-dot(a, b, as, bs), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
             "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
             results[i]);
    char *in[4] = {cpu_ramp_nd("f8e4m3fn", ld, 3, 7, 0.5, -1.5), cpu_ramp_nd("f8e5m2", rd, 3, 5, 0.25, -0.5),
                   cpu_ramp_nd("f8e8m0fnu", lsd, 3, 3, 2, 0.5), cpu_ramp_nd("bf16", rsd, 3, 4, 0.5, -1)};
    check(text, 4, (const char *const *)in, results[i][0] == 's' ? 0 : 1e-2);
    for (int k = 0; k < 4; k++) cx_free(in[k]);
  }
}

TEST(block_scaled_dot_cpu_matches_interpreter) {
  /* rank 3, both scales padded (rows and, with block_size 4, columns), a global scale */
  const char *text =
      "HloModule m\nENTRY e {\n  a = f8e4m3fn[2,3,8] parameter(0)\n  b = f8e4m3fn[2,5,8] parameter(1)\n"
      "  as = f8e8m0fnu[2,4,3] parameter(2)\n  bs = f8e8m0fnu[2,8,2] parameter(3)\n  g = f32[] parameter(4)\n"
      "  ROOT x = f32[2,3,5] custom-call(a, b, as, bs, g), custom_call_target=\"__op$block_scaled_dot\", "
      "backend_config={\"block_scaled_dot_backend_config\":{block_size:4}}\n}\n";
  int64_t ad[3] = {2, 3, 8}, bd[3] = {2, 5, 8}, asd[3] = {2, 4, 3}, bsd[3] = {2, 8, 2};
  char *in[5] = {cpu_ramp_nd("f8e4m3fn", ad, 3, 7, 0.5, -1.5), cpu_ramp_nd("f8e4m3fn", bd, 3, 5, 0.25, -0.5),
                 cpu_ramp_nd("f8e8m0fnu", asd, 3, 3, 2, 0.5), cpu_ramp_nd("f8e8m0fnu", bsd, 3, 4, 2, 0.25),
                 cx_strdup("f32[] 0.75")};
  check(text, 5, (const char *const *)in, 1e-5);
  /* three operands: only the lhs scaled, an f16 result */
  const char *three = "HloModule m\nENTRY e {\n  a = f8e4m3fn[3,8] parameter(0)\n  b = f16[5,8] parameter(1)\n"
                      "  as = f8e8m0fnu[3,2] parameter(2)\n"
                      "  ROOT x = f16[3,5] custom-call(a, b, as), custom_call_target=\"__op$block_scaled_dot\"\n}\n";
  int64_t a2[2] = {3, 8}, b2[2] = {5, 8}, s2[2] = {3, 2};
  char *in2[3] = {cpu_ramp_nd("f8e4m3fn", a2, 2, 7, 0.5, -1.5), cpu_ramp_nd("f16", b2, 2, 5, 0.25, -0.5),
                  cpu_ramp_nd("f8e8m0fnu", s2, 2, 3, 2, 0.5)};
  check(three, 3, (const char *const *)in2, 1e-2);
  for (int k = 0; k < 5; k++) cx_free(in[k]);
  for (int k = 0; k < 3; k++) cx_free(in2[k]);
}
