/* test_parser_literal.c — cx_parse_literal / cxla_literal_parse: every element type, limits,
 * special floats, tuples, layouts, the old literal syntax, and bad literals with their
 * "<literal>:LINE:COL" locations. Bit patterns are worked out by hand from IEEE formats. */
#include "ir/literal.h"
#include "text/hlo.h"
#include "test.h"

static cxla_literal *lit_ok(const char *text) {
  cxla_literal *l = NULL;
  cxla_status s = cxla_literal_parse(test_ctx(), text, &l);
  CHECK_MSG(s == CXLA_OK && l, "'%s': %s", text, cxla_context_errmsg(test_ctx()));
  return s == CXLA_OK ? l : NULL;
}

static void lit_err(const char *text, const char *msg, int line) {
  cxla_literal *l = (cxla_literal *)&l;
  cxla_status s = cxla_literal_parse(test_ctx(), text, &l);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s != CXLA_ERR_PARSE) test_fail(__FILE__, line, "'%s' -> %s (%s)", text, cxla_status_str(s), got);
  if (l) test_fail(__FILE__, line, "'%s': literal not NULL after an error", text);
  if (s == CXLA_OK) cxla_literal_destroy(l);
  if (!strstr(got, msg)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, msg);
}
#define LERR(text, msg) lit_err(text, msg, __LINE__)

TEST(literal_parse_arrays_and_tuples) {
  cxla_literal *l = lit_ok("f32[2,2] {{1,2},{3,4}}");
  if (l) {
    CHECK(cxla_literal_type(l) == CXLA_F32 && cxla_literal_rank(l) == 2 && cxla_literal_dims(l)[1] == 2);
    const float *v = cxla_literal_data(l);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4);
    cxla_literal_destroy(l);
  }
  l = lit_ok("s32[] 5");
  if (l) { CHECK(cxla_literal_rank(l) == 0 && *(int32_t *)cxla_literal_data(l) == 5); cxla_literal_destroy(l); }
  l = lit_ok("pred[3] {true, false, true}");
  if (l) {
    const uint8_t *b = cxla_literal_data(l);
    CHECK(b[0] == 1 && b[1] == 0 && b[2] == 1);
    cxla_literal_destroy(l);
  }
  l = lit_ok("(f32[], s32[2]) (1.5, {2, 3})");
  if (l) {
    CHECK(cxla_literal_tuple_size(l) == 2);
    CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(l, 0), 0) == 1.5);
    CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(l, 1), 1) == 3);
    cxla_literal_destroy(l);
  }
  l = lit_ok("f32[0] {}");
  if (l) { CHECK(cxla_literal_element_count(l) == 0); cxla_literal_destroy(l); }
  /* layouts after the shape are allowed and dropped: data stays row-major */
  l = lit_ok("f32[2,2]{0,1} {{1,2},{3,4}}");
  if (l) {
    CHECK(!l->shape.has_layout && ((float *)cxla_literal_data(l))[1] == 2);
    cxla_literal_destroy(l);
  }
  /* nested tuples, element shapes written out, empty tuples, comments and line breaks */
  l = lit_ok("(s32[], (pred[], f32[1]), ()) (1, (true, {2}), ())");
  if (l) {
    cxla_literal *in = cxla_literal_tuple_get(l, 1);
    CHECK(cxla_literal_tuple_size(in) == 2 && cxla_literal_get_f64(cxla_literal_tuple_get(in, 1), 0) == 2);
    CHECK(cxla_literal_tuple_size(cxla_literal_tuple_get(l, 2)) == 0);
    cxla_literal_destroy(l);
  }
  l = lit_ok("(f32[], s32[2]) ( f32[] 1.5, s32[2]{0} {2, 3} )");
  if (l) { CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(l, 1), 0) == 2); cxla_literal_destroy(l); }
  l = lit_ok("s32[2,0,3] { {}, {} }");
  if (l) { CHECK(cxla_literal_element_count(l) == 0); cxla_literal_destroy(l); }
  l = lit_ok("f64[2] {\n  1, // one\n  /* two */ 2\n}\n");
  if (l) { CHECK(cxla_literal_get_f64(l, 1) == 2); cxla_literal_destroy(l); }
}

TEST(literal_parse_every_type) {
  struct { const char *text; cxla_type t; uint64_t bits; } cases[] = {
      {"s8[] -128", CXLA_S8, 0x80},
      {"s16[] -32768", CXLA_S16, 0x8000},
      {"s32[] 2147483647", CXLA_S32, 0x7fffffff},
      {"s64[] -9223372036854775808", CXLA_S64, 0x8000000000000000ull},
      {"u8[] 255", CXLA_U8, 0xff},
      {"u16[] 65535", CXLA_U16, 0xffff},
      {"u32[] 4294967295", CXLA_U32, 0xffffffffull},
      {"u64[] 18446744073709551615", CXLA_U64, 0xffffffffffffffffull},
      {"pred[] 1", CXLA_PRED, 1},
      {"pred[] false", CXLA_PRED, 0},
      {"f16[] 65504", CXLA_F16, 0x7bff},
      {"f16[] 0.1", CXLA_F16, 0x2e66},
      {"f16[] -0", CXLA_F16, 0x8000},
      {"f16[] 6e-08", CXLA_F16, 0x0001},        /* smallest subnormal 2^-24 = 5.96e-8 */
      {"bf16[] 3.140625", CXLA_BF16, 0x4049},
      {"bf16[] -inf", CXLA_BF16, 0xff80},
      {"f32[] 0.1", CXLA_F32, 0x3dcccccd},
      {"f32[] -0", CXLA_F32, 0x80000000},
      {"f32[] inf", CXLA_F32, 0x7f800000},
      {"f32[] 3.4028234663852886e+38", CXLA_F32, 0x7f7fffff},
      {"f32[] 1e-45", CXLA_F32, 0x00000001},
      {"f32[] 0x1p3", CXLA_F32, 0x41000000},
      {"f64[] 0.1", CXLA_F64, 0x3fb999999999999aull},
      {"f64[] -0", CXLA_F64, 0x8000000000000000ull},
      {"f64[] -inf", CXLA_F64, 0xfff0000000000000ull},
      {"f64[] 1e-05", CXLA_F64, 0x3ee4f8b588e368f1ull},
  };
  for (int i = 0; i < CX_ARRAY_LEN(cases); i++) {
    cxla_literal *l = lit_ok(cases[i].text);
    if (!l) continue;
    uint64_t bits = 0;
    memcpy(&bits, cxla_literal_data(l), cxla_type_size(cases[i].t));
    CHECK_MSG(cxla_literal_type(l) == cases[i].t && bits == cases[i].bits, "'%s' -> bits 0x%llx, expected 0x%llx",
              cases[i].text, (unsigned long long)bits, (unsigned long long)cases[i].bits);
    cxla_literal_destroy(l);
  }
  cxla_literal *l = lit_ok("f32[4] {nan, -nan, nan(0x7fc00001), -inf}");
  if (l) {
    const float *v = cxla_literal_data(l);
    CHECK(isnan(v[0]) && !signbit(v[0]) && isnan(v[1]) && signbit(v[1]) && isnan(v[2]) && isinf(v[3]) && v[3] < 0);
    cxla_literal_destroy(l);
  }
}

TEST(literal_parse_errors) {
  LERR("", "<literal>:1:1: error: expected a shape, got end of file");
  LERR("s32[] 5 6", "<literal>:1:9: error: expected end of literal, got '6'");
  LERR("f32[2] {1, x}", "<literal>:1:12: error: expected a number (f32 value), got 'x'");
  LERR("f32[2] {1}", "<literal>:1:10: error: too few values in dimension 0: 1 of 2");
  LERR("f32[2] {1, 2, 3}", "<literal>:1:13: error: too many values in dimension 0 (size 2)");
  LERR("f32[2,1] {1, 2}", "<literal>:1:11: error: expected '{' (dimension 1 of f32[2,1]), got '1'");
  LERR("f32[1] 5", "<literal>:1:8: error: expected '{' (dimension 0 of f32[1]), got '5'");
  LERR("s64[] 9223372036854775808", "<literal>:1:7: error: value 9223372036854775808 out of range for s64");
  LERR("u64[] 18446744073709551616", "<literal>:1:7: error: value 18446744073709551616 out of range for u64");
  LERR("u32[] -1", "<literal>:1:7: error: value -1 out of range for u32");
  LERR("s16[] 32768", "<literal>:1:7: error: value 32768 out of range for s16");
  LERR("pred[] yes", "<literal>:1:8: error: expected true or false (pred value), got 'yes'");
  LERR("bf16[] 1e39", "<literal>:1:8: error: value 1e39 out of range for bf16");
  LERR("f32[2]\n{1,\n 2,}", "<literal>:3:3: error: too many values in dimension 0 (size 2)");
  LERR("(f32[], s32[]) (1)", "<literal>:1:18: error: expected ',', got ')'");
  LERR("(f32[], s32[]) (1, 2, 3)", "<literal>:1:21: error: expected ')' (end of tuple value), got ','");
  LERR("(f32[], s32[]) (1, f32[] 2)", "<literal>:1:20: error: literal shape f32[] does not match s32[]");
  LERR("f32[2] {1, \"2\"}", "<literal>:1:12: error: expected a number (f32 value), got a string");
  LERR("token[] 1", "<literal>:1:9: error: a literal cannot have token shape token[]");
  LERR("f32[1000000000000] {1}", "<literal>:1:20: error: literal of shape f32[1000000000000]: the text is too short");
  LERR("f32[2] {1, 2", "<literal>:1:13: error: expected '}', got end of file");
  cxla_literal *l = (cxla_literal *)&l;
  CHECK(cxla_literal_parse(test_ctx(), "u1[] 1", &l) == CXLA_ERR_UNSUPPORTED && l == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "<literal>:1:1: error: not supported: element type u1");
  CHECK(cxla_literal_parse(test_ctx(), NULL, &l) == CXLA_ERR_INVALID_ARGUMENT && l == NULL);
  /* a length that cuts the text: the rest is not read */
  CHECK(cx_parse_literal(test_ctx(), "s32[] 12345", 8, &l) == CXLA_OK && l && *(int32_t *)cxla_literal_data(l) == 12);
  cxla_literal_destroy(l);
}

/* What cxla prints as a literal parses back to the same bits. */
TEST(literal_parse_print_roundtrip) {
  const char *texts[] = {"f32[3] {0.1, -0, 1e+20}", "f64[2] {0.3333333333333333, 5e-324}",
                         "bf16[2,2] {{1.5, -2}, {inf, 0.0078125}}", "f16[3] {65504, 0.099975586, -6.1035156e-05}",
                         "(s8[], (u64[], pred[2])) (-1, (18446744073709551615, {true, false}))"};
  for (int i = 0; i < CX_ARRAY_LEN(texts); i++) {
    cxla_literal *a = lit_ok(texts[i]);
    if (!a) continue;
    char *s = cxla_literal_to_string(a);
    cxla_literal *b = s ? lit_ok(s) : NULL;
    CHECK_MSG(b && cx_literal_equal(a, b), "'%s' printed as '%s' does not read back", texts[i], s ? s : "");
    free(s);
    cxla_literal_destroy(a);
    cxla_literal_destroy(b);
  }
}
