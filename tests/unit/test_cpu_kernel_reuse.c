/* test_cpu_kernel_reuse.c — fusions that are the same but for names share one kernel
 * (codegen/kernel_reuse.h, passes/fusion_key.h), and ones that differ in anything else do not: the same
 * update written for three weights, the third with another learning rate, a fourth with
 * another shape. Each result must still be its own (checked against the interpreter). */
#include <stdlib.h>
#include <string.h>
#include "codegen/kernel_reuse.h"
#include "passes/fusion_key.h"
#include "codegen_harness.h"
#include "test.h"
#include "test_cpu_helpers.h"

static const char text[] =
    "HloModule reuse\n"
    "ENTRY e {\n"
    "  p1 = f32[4] parameter(0)\n  g1 = f32[4] parameter(1)\n"
    "  p2 = f32[4] parameter(2)\n  g2 = f32[4] parameter(3)\n"
    "  p3 = f32[4] parameter(4)\n  g3 = f32[4] parameter(5)\n"
    "  p4 = f32[2,2] parameter(6)\n  g4 = f32[2,2] parameter(7)\n"
    "  lr = f32[] constant(0.1)\n  lr3 = f32[] constant(0.2)\n"
    "  b1 = f32[4] broadcast(lr), dimensions={}\n  s1 = f32[4] multiply(b1, g1)\n"
    "  e1 = f32[4] exponential(s1)\n  n1 = f32[4] subtract(p1, e1)\n"
    "  b2 = f32[4] broadcast(lr), dimensions={}\n  s2 = f32[4] multiply(b2, g2)\n"
    "  e2 = f32[4] exponential(s2)\n  n2 = f32[4] subtract(p2, e2)\n"
    "  b3 = f32[4] broadcast(lr3), dimensions={}\n  s3 = f32[4] multiply(b3, g3)\n"
    "  e3 = f32[4] exponential(s3)\n  n3 = f32[4] subtract(p3, e3)\n"
    "  b4 = f32[2,2] broadcast(lr), dimensions={}\n  s4 = f32[2,2] multiply(b4, g4)\n"
    "  e4 = f32[2,2] exponential(s4)\n  n4 = f32[2,2] subtract(p4, e4)\n"
    "  ROOT t = (f32[4], f32[4], f32[4], f32[2,2]) tuple(n1, n2, n3, n4)\n"
    "}\n";

static int count(const char *stats, const char *key) {
  const char *p = stats ? strstr(stats, key) : NULL;
  return p ? atoi(p + strlen(key)) : -1;
}

TEST(cpu_kernel_reuse_same_fusions_share) {
  const char *in[8] = {"f32[4] {1, 2, 3, 4}",    "f32[4] {0.5, -1, 2, 0}", "f32[4] {-1, 0, 1, 2}",
                       "f32[4] {3, 1, -2, 4}",   "f32[4] {5, 6, 7, 8}",    "f32[4] {1, 1, 1, 1}",
                       "f32[2,2] {{1, 2}, {3, 4}}", "f32[2,2] {{0.5, -1}, {2, 0}}"};
  char *stats = NULL;
  cxla_literal *got = NULL;
  CHECK(cpu_check(text, 8, in, NULL, 1e-6, 1e-6, &stats, &got));
  /* four kernel calls; the second is the first's kernel; lr 0.2 and f32[2,2] are others */
  CHECK_MSG(count(stats, "kernels=") == 4, "%s", stats ? stats : "no stats");
  CHECK_MSG(count(stats, "kernels_reused=") == 1, "%s", stats ? stats : "no stats");
  if (got) { /* n2 is p2 - exp(0.1 g2), from its own operands, not n1 again */
    cxla_literal *n2 = cxla_literal_tuple_get(got, 1);
    CHECK_NEAR(cxla_literal_get_f64(n2, 0), -1 - 1.3498588075760032, 1e-6); /* exp(0.3) */
    CHECK_NEAR(cxla_literal_get_f64(n2, 1), 0 - 1.1051709180756477, 1e-6);  /* exp(0.1) */
  }
  cxla_literal_destroy(got);
  free(stats);
}

/* --fusion=off: every op its own kernel; the two broadcasts of lr are the same kernel, as are
 * the two multiplies, exponentials and subtracts of f32[4] weights 1 and 2 (and 3, but for its
 * broadcast of another constant). */
TEST(cpu_kernel_reuse_unfused_ops) {
  const char *in[8] = {"f32[4] {1, 2, 3, 4}",  "f32[4] {0.5, -1, 2, 0}", "f32[4] {-1, 0, 1, 2}",
                       "f32[4] {3, 1, -2, 4}", "f32[4] {5, 6, 7, 8}",    "f32[4] {1, 1, 1, 1}",
                       "f32[2,2] {{1, 2}, {3, 4}}", "f32[2,2] {{0.5, -1}, {2, 0}}"};
  char *stats = NULL;
  CHECK(cpu_check(text, 8, in, "--fusion=off", 1e-6, 1e-6, &stats, NULL));
  CHECK_MSG(count(stats, "kernels_reused=") > 0, "%s", stats ? stats : "no stats");
  free(stats);
}

/* Instructions named after ops (as XLA's legacy text names them: %negate = negate(...)): the
 * key must tell negate from floor. A key made by renaming every token that is an instruction's
 * name renamed the op names too, and floor ran negate's kernel. */
TEST(cpu_kernel_reuse_names_like_ops) {
  static const char ops[] = "HloModule named\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n"
                            "  negate = f32[4] negate(x)\n  floor = f32[4] floor(y)\n"
                            "  ROOT t = (f32[4], f32[4]) tuple(negate, floor)\n}\n";
  const char *in[2] = {"f32[4] {1.5, -2, 0, 3}", "f32[4] {13.5, -0.5, 2, -3.25}"};
  char *stats = NULL;
  cxla_literal *got = NULL;
  CHECK(cpu_check(ops, 2, in, "--fusion=off", 0, 0, &stats, &got));
  CHECK_MSG(count(stats, "kernels_reused=") == 0, "%s", stats ? stats : "no stats");
  if (got) CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 1), 0), 13, 0);
  cxla_literal_destroy(got);
  free(stats);
}

/* Two in-place fusions alike but for which operand each output's memory is: the kernel reads
 * each such operand through its output's pointer, so their keys must differ. */
TEST(cpu_kernel_reuse_key_has_in_place_pairs) {
  static const char two[] = "HloModule pairs\nf {\n a = f32[8] parameter(0)\n b = f32[8] parameter(1)\n"
                            " x = f32[8] add(a, b)\n y = f32[8] multiply(a, b)\n"
                            " ROOT t = (f32[8], f32[8]) tuple(x, y)\n}\n"
                            "ENTRY e {\n a = f32[8] parameter(0)\n b = f32[8] parameter(1)\n"
                            " ROOT r = (f32[8], f32[8]) fusion(a, b), kind=kLoop, calls=f\n}\n";
  cx_module *m = cgt_parse(two, __FILE__, __LINE__);
  if (!m) return;
  int straight[4] = {0, 1, 0, 1}, crossed[4] = {0, 1, 1, 0};
  cx_kalias s1, s2;
  cx_kalias_of_slots(&s1, straight, 2, 4);
  cx_kalias_of_slots(&s2, crossed, 2, 4);
  CHECK(s1.mask == s2.mask && s1.mask == 0xf);
  char e1[CX_KALIAS_TEXT], e2[CX_KALIAS_TEXT];
  cx_kalias_describe(&s1, e1);
  cx_kalias_describe(&s2, e2);
  char *k1 = cx_fusion_key(m->entry->root, e1), *k2 = cx_fusion_key(m->entry->root, e2);
  CHECK(k1 && k2 && strcmp(k1, k2) != 0);
  cx_free(k1);
  cx_free(k2);
  cx_module_free(m);
}

/* jax writes one reducer per reduce (region_0, region_1, ... all the same add): reduces alike
 * but for their reducer's name share a kernel, one whose reducer computes something else
 * (max) does not, and each result is its own. */
TEST(cpu_kernel_reuse_reducers_by_content) {
  static const char regions[] =
      "HloModule regions\n"
      "region_0 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "region_1 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT t = f32[] add(x, y)\n}\n"
      "region_2 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
      "ENTRY e {\n  p = f32[2,3] parameter(0)\n  q = f32[2,3] parameter(1)\n  r = f32[2,3] parameter(2)\n"
      "  z = f32[] constant(0)\n"
      "  s0 = f32[2] reduce(p, z), dimensions={1}, to_apply=region_0\n"
      "  s1 = f32[2] reduce(q, z), dimensions={1}, to_apply=region_1\n"
      "  s2 = f32[2] reduce(r, z), dimensions={1}, to_apply=region_2\n"
      "  ROOT t = (f32[2], f32[2], f32[2]) tuple(s0, s1, s2)\n}\n";
  const char *in[3] = {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[2,3] {{-1, 0.5, 2}, {3, 3, 3}}",
                       "f32[2,3] {{-1, -2, -3}, {7, 1, 2}}"};
  char *stats = NULL;
  cxla_literal *got = NULL;
  CHECK(cpu_check(regions, 3, in, NULL, 0, 0, &stats, &got));
  CHECK_MSG(count(stats, "kernels=") == 3, "%s", stats ? stats : "no stats");
  CHECK_MSG(count(stats, "kernels_reused=") == 1, "%s", stats ? stats : "no stats");
  if (got) {
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 1), 0), 1.5, 0);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 2), 0), 0, 0); /* max(-1,-2,-3, init 0) */
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 2), 1), 7, 0);
  }
  cxla_literal_destroy(got);
  free(stats);
}
