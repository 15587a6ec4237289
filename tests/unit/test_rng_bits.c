/* test_rng_bits.c — rng-bit-generator: the verifier's rule, the text form, and the cpu
 * backend's runtime routine (rt/rng.c) against the interpreter on large arrays
 * of every width, both algorithms and both Philox state sizes, split over several threads,
 * and with the state carried through a while loop; the cpu compile must run it natively.
 * Known-answer vectors and XLA's own results are in tests/hlo/ops/rng_bit_generator_*.hlo. */
#include <string.h>
#include "ir/literal.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "util/util.h"
#include "verify_helpers.h"

TEST(rng_bit_generator_verifier) {
  CHECK_STR_EQ(vt_verify_body("  s = u64[2] parameter(0)\n"
                           "  ROOT r = (u64[2], f32[3,4]) rng-bit-generator(s), algorithm=rng_three_fry\n"),
               "ok");
  CHECK_STR_EQ(vt_verify_body("  s = u64[3] parameter(0)\n  ROOT r = (u64[3], s8[5]) rng-bit-generator(s), algorithm=rng_philox\n"),
               "ok");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[3] parameter(0)\n"
                                 "  ROOT r = (u64[3], u32[5]) rng-bit-generator(s), algorithm=rng_three_fry\n"),
                     "the state must be u64[2] for Threefry, got u64[3]");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u32[4] parameter(0)\n  ROOT r = (u32[4], u32[5]) rng-bit-generator(s), algorithm=rng_default\n"),
                     "the state must be u64[2] or u64[3] for Philox, got u32[4]");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = (u64[3], u32[5]) rng-bit-generator(s), algorithm=rng_philox\n"),
                     "result state u64[3] must have the state's shape u64[2]");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = (u64[2], pred[5]) rng-bit-generator(s), algorithm=rng_philox\n"),
                     "random bits of pred: integer or floating-point types only");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = u32[5] rng-bit-generator(s), algorithm=rng_philox\n"),
                     "result must be a tuple (state, bits)");
  /* algorithm= is required, the result shape too (XLA's parser requires both) */
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = (u64[2], u32[5]) rng-bit-generator(s)\n"),
                     "algorithm");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = rng-bit-generator(s), algorithm=rng_philox\n"),
                     "cannot be left out");
  CHECK_STR_CONTAINS(vt_verify_body("  s = u64[2] parameter(0)\n  ROOT r = (u64[2], u32[5]) rng-bit-generator(s), algorithm=mt19937\n"),
                     "an algorithm (rng_default, rng_three_fry, rng_philox)");
}

static void check_cpu(const char *state_type, const char *state, const char *bits_type, const char *algorithm) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  s = %s parameter(0)\n  ROOT r = (%s, %s) rng-bit-generator(s), algorithm=%s\n}\n",
           state_type, state_type, bits_type, algorithm);
  char in[128], *stats = NULL;
  snprintf(in, sizeof in, "%s %s", state_type, state);
  const char *inputs[1] = {in};
  CHECK_MSG(cpu_check(text, 1, inputs, "--threads=4", 0, 0, &stats, NULL), "%s -> %s, %s", state, bits_type, algorithm);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "rng-bit-generator ran on the interpreter: %s", stats);
  free(stats);
}

TEST(rng_bit_generator_cpu_matches_interpreter) {
  static const char *const types[] = {"u8[129,33]", "s16[7,9,5]", "u32[1000,37]", "f32[65]", "u64[4097]",
                                      "f64[3,3]", "bf16[5]", "u16[]"};
  for (size_t i = 0; i < CX_ARRAY_LEN(types); i++) {
    check_cpu("u64[2]", "{12345, 18446744073709551610}", types[i], "rng_three_fry");
    check_cpu("u64[2]", "{18446744073709551615, 18446744073709551614}", types[i], "rng_philox");
    check_cpu("u64[3]", "{7, 18446744073709551615, 3}", types[i], "rng_default");
  }
}

/* The state carried by a while loop, the bits folded in with xor: the counter must advance
 * the same way on both backends, trip after trip. */
TEST(rng_bit_generator_cpu_in_a_loop) {
  const char *text =
      "HloModule m\n"
      "cond {\n  p = (s32[], u64[2], u32[6,5]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(9)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s32[], u64[2], u32[6,5]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  s = u64[2] get-tuple-element(p), index=1\n  a = u32[6,5] get-tuple-element(p), index=2\n"
      "  r = (u64[2], u32[6,5]) rng-bit-generator(s), algorithm=rng_three_fry\n"
      "  s2 = u64[2] get-tuple-element(r), index=0\n  b = u32[6,5] get-tuple-element(r), index=1\n"
      "  a2 = u32[6,5] xor(a, b)\n  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
      "  ROOT t = (s32[], u64[2], u32[6,5]) tuple(i2, s2, a2)\n}\n"
      "ENTRY e {\n  s = u64[2] parameter(0)\n  z = s32[] constant(0)\n  a = u32[6,5] broadcast(u32[] constant(0)), dimensions={}\n"
      "  t = (s32[], u64[2], u32[6,5]) tuple(z, s, a)\n"
      "  ROOT w = (s32[], u64[2], u32[6,5]) while(t), condition=cond, body=body\n}\n";
  const char *inputs[1] = {"u64[2] {42, 1000}"};
  cxla_literal *got = NULL;
  CHECK(cpu_check(text, 1, inputs, NULL, 0, 0, NULL, &got));
  if (!got) return;
  /* 9 trips of a u32[6,5] Threefry (split along 6: 15 counters each) */
  const uint64_t *st = cxla_literal_data(cxla_literal_tuple_get(got, 1));
  CHECK(st[0] == 42 && st[1] == 1000 + 9 * 15);
  cxla_literal_destroy(got);
}
