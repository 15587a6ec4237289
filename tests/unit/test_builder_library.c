/* test_builder_library.c — the builder's library ops (topk, fft, cholesky, triangular_solve,
 * rng_bit_generator, stochastic_convert): result shapes, argument errors, and a module built
 * from them run on the cpu backend and the interpreter against hand-computed values. */
#include <math.h>
#include "ir/literal.h"
#include "test_cpu_helpers.h"

static cxla_op param(cxla_builder *b, int i, cxla_type t, int rank, const int64_t *dims) {
  cxla_shape s = {t, rank, dims, 0, NULL};
  return cxla_builder_parameter(b, i, &s, NULL);
}

static double at(const cxla_literal *l, int leaf, int64_t i) {
  return cxla_literal_get_f64(cxla_literal_tuple_get((cxla_literal *)l, leaf), i);
}

/* Every call once; the module's text runs on the cpu (compared with the interpreter) and the
 * values are worked out by hand. */
TEST(builder_library_ops_values) {
  cxla_module *m = cxla_module_create(test_ctx(), "lib");
  cxla_builder *b = cxla_builder_create(m, "main");
  static const int64_t d24[2] = {2, 4}, d4[1] = {4}, d22[2] = {2, 2}, d21[2] = {2, 1}, d2[1] = {2}, d3[1] = {3};
  cxla_op x = param(b, 0, CXLA_F32, 2, d24), r = param(b, 1, CXLA_F32, 1, d4), a = param(b, 2, CXLA_F32, 2, d22);
  cxla_op rhs = param(b, 3, CXLA_F32, 2, d21), st = param(b, 4, CXLA_U64, 1, d2), sc = param(b, 5, CXLA_F32, 1, d2);
  cxla_op bits = param(b, 6, CXLA_U32, 1, d2);
  cxla_op tk = cxla_builder_topk(b, x, 2, 1), tk_small = cxla_builder_topk(b, x, 1, 0);
  int64_t n4 = 4;
  cxla_op f = cxla_builder_fft(b, r, CXLA_FFT_RFFT, 1, &n4);
  cxla_op l = cxla_builder_cholesky(b, a, 1);
  cxla_op s = cxla_builder_triangular_solve(b, l, rhs, 1, 1, 0, CXLA_TRANSPOSE_NO);
  cxla_op g = cxla_builder_rng_bit_generator(b, st, CXLA_RNG_THREE_FRY, CXLA_U32, 1, d3);
  cxla_op q = cxla_builder_stochastic_convert(b, sc, bits, CXLA_S32);
  cxla_op outs[7] = {tk, tk_small, f, l, s, g, q};
  CHECK_OK(cxla_builder_finish(b, cxla_builder_tuple(b, 7, outs), 1, NULL));
  char *text = cxla_module_to_string(m);
  CHECK(text != NULL);
  /* the attributes are the ones the text spells */
  CHECK_STR_CONTAINS(text, "topk(");
  CHECK_STR_CONTAINS(text, "k=2, largest=true");
  CHECK_STR_CONTAINS(text, "k=1, largest=false");
  CHECK_STR_CONTAINS(text, "fft_type=RFFT, fft_length={4}");
  CHECK_STR_CONTAINS(text, "lower=true");
  CHECK_STR_CONTAINS(text, "left_side=true");
  CHECK_STR_CONTAINS(text, "transpose_a=NO_TRANSPOSE");
  CHECK_STR_CONTAINS(text, "algorithm=rng_three_fry");
  CHECK_STR_CONTAINS(text, "(u64[2], u32[3]) rng-bit-generator(");
  CHECK_STR_CONTAINS(text, "s32[2] stochastic-convert(");
  const char *in[7] = {"f32[2,4] {{3, 1, 4, 1}, {5, 9, 2, 6}}", "f32[4] {1, 2, 3, 4}", "f32[2,2] {{4, 2}, {2, 5}}",
                       "f32[2,1] {{2}, {5}}", "u64[2] {1, 2}", "f32[2] {1.5, -2.25}", "u32[2] {4294967295, 0}"};
  cxla_literal *got = NULL;
  CHECK(cpu_check(text ? text : "", 7, in, NULL, 1e-6, 1e-6, NULL, &got));
  if (got) {
    /* top-2 of each row: values and indices; the smallest with its first index of a tie */
    static const double tv[4] = {4, 3, 9, 6}, ti[4] = {2, 0, 1, 3};
    cxla_literal *t0 = cxla_literal_tuple_get(got, 0), *t1 = cxla_literal_tuple_get(got, 1);
    for (int i = 0; i < 4; i++) {
      CHECK(at(t0, 0, i) == tv[i]);
      CHECK(at(t0, 1, i) == ti[i]);
    }
    CHECK(at(t1, 0, 0) == 1 && at(t1, 1, 0) == 1 && at(t1, 0, 1) == 2 && at(t1, 1, 1) == 2);
    /* rfft of {1, 2, 3, 4}: {10, -2 + 2i, -2}; parts as stored, real then imaginary */
    static const double fv[6] = {10, 0, -2, 2, -2, 0};
    cxla_literal *fl = cxla_literal_tuple_get(got, 2);
    for (int i = 0; i < 6; i++) CHECK_NEAR(((const float *)cxla_literal_data(fl))[i], fv[i], 1e-6);
    /* cholesky of {{4, 2}, {2, 5}}: {{2, 0}, {1, 2}}; then L x = {2, 5}: x = {1, 2} */
    static const double lv[4] = {2, 0, 1, 2};
    for (int i = 0; i < 4; i++) CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 3), i), lv[i], 1e-6);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 4), 0), 1, 1e-6);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 4), 1), 2, 1e-6);
    /* 1.5 rounds up when the bits are below half of 2^32, -2.25 away from 0 below a quarter */
    CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(got, 6), 0) == 1);
    CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(got, 6), 1) == -3);
  }
  /* the random bits are the ones of the same op written as text */
  const char *want_text = "HloModule t\nENTRY e {\n  s = u64[2] parameter(0)\n"
                          "  ROOT g = (u64[2], u32[3]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n";
  cxla_literal *want = NULL;
  CHECK(cpu_check(want_text, 1, &in[4], NULL, 0, 0, NULL, &want));
  if (got && want) CHECK(cx_literal_equal(cxla_literal_tuple_get(got, 5), want));
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  free(text);
  cxla_module_destroy(m);
}

/* Bad arguments: the builder's own checks and the verifier's, each naming the op. */
TEST(builder_library_ops_errors) {
  static const int64_t d23[2] = {2, 3}, d2[1] = {2}, d4[1] = {4};
  static const struct {
    int which;
    const char *msg;
  } cases[] = {
      {0, "topk: "},               /* k beyond the row */
      {1, "unknown fft type 9"},
      {2, "fft_length must list 1 to 3 lengths, got 0"},
      {3, "cholesky: "},           /* not square */
      {4, "unknown transpose option 7"},
      {5, "unknown algorithm 5"},
      {6, "rng-bit-generator: "},  /* a state that is not u64 */
      {7, "stochastic-convert: "}, /* random bits of another width */
  };
  for (size_t k = 0; k < CX_ARRAY_LEN(cases); k++) {
    cxla_module *m = cxla_module_create(test_ctx(), "bad");
    cxla_builder *b = cxla_builder_create(m, "main");
    cxla_op x = param(b, 0, CXLA_F32, 2, d23), v = param(b, 1, CXLA_U32, 1, d2), f = param(b, 2, CXLA_F32, 1, d4);
    cxla_op r = {0};
    int64_t n = 3;
    switch (cases[k].which) {
    case 0: r = cxla_builder_topk(b, x, 4, 1); break;
    case 1: r = cxla_builder_fft(b, x, (cxla_fft_type)9, 1, &n); break;
    case 2: r = cxla_builder_fft(b, x, CXLA_FFT_RFFT, 0, &n); break;
    case 3: r = cxla_builder_cholesky(b, x, 1); break;
    case 4: r = cxla_builder_triangular_solve(b, x, x, 1, 1, 0, (cxla_transpose)7); break;
    case 5: r = cxla_builder_rng_bit_generator(b, v, (cxla_rng_algorithm)5, CXLA_U32, 1, d2); break;
    case 6: r = cxla_builder_rng_bit_generator(b, v, CXLA_RNG_PHILOX, CXLA_U32, 1, d2); break;
    default: r = cxla_builder_stochastic_convert(b, f, v, CXLA_S32); break;
    }
    CHECK_MSG(r.id == 0, "case %zu built", k);
    CHECK(cxla_builder_status(b) != CXLA_OK);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), cases[k].msg);
    cxla_builder_destroy(b);
    cxla_module_destroy(m);
  }
}
