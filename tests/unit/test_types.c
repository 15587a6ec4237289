/* test_types.c — element types, f16/bf16 conversion, convert semantics, shapes, literals. */
#include "ir/literal.h"
#include "test.h"

TEST(types_f16_roundtrip) {
  CHECK_EQ_INT(cx_f32_to_f16(1.0f), 0x3c00);
  CHECK_EQ_INT(cx_f32_to_f16(-2.0f), 0xc000);
  CHECK_EQ_INT(cx_f32_to_f16(65504.0f), 0x7bff);
  CHECK_EQ_INT(cx_f32_to_f16(65520.0f), 0x7c00);          /* rounds up to inf */
  CHECK_EQ_INT(cx_f32_to_f16(0x1p-24f), 0x0001);          /* smallest subnormal */
  CHECK_EQ_INT(cx_f32_to_f16(0x1p-25f), 0x0000);          /* tie -> even (0) */
  CHECK_EQ_INT(cx_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);   /* tie -> even */
  CHECK_EQ_INT(cx_f32_to_f16(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02); /* tie -> even (up) */
  CHECK(isnan(cx_f16_to_f32(cx_f32_to_f16(NAN))));
  CHECK_NEAR(cx_f16_to_f32(0x3555), 0.333251953125, 0);
  CHECK_NEAR(cx_f16_to_f32(0x0001), 0x1p-24, 0);
  for (uint32_t h = 0; h < 0x7c00; h++) CHECK_EQ_INT(cx_f32_to_f16(cx_f16_to_f32((uint16_t)h)), h);
}

TEST(types_bf16) {
  CHECK_EQ_INT(cx_f32_to_bf16(1.0f), 0x3f80);
  CHECK_NEAR(cx_bf16_to_f32(cx_f32_to_bf16(3.14159f)), 3.140625, 0);
  CHECK_EQ_INT(cx_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);  /* tie -> even */
  CHECK(isnan(cx_bf16_to_f32(cx_f32_to_bf16(NAN))));
}

TEST(types_convert_float_to_int) {
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S32, 2.9), 2);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S32, -2.9), -2);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S8, 300), 127);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S8, -300), -128);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_U8, -5), 0);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S32, NAN), 0);
  CHECK_EQ_INT(cx_f64_to_int(CXLA_S64, 1e30), INT64_MAX);
  CHECK_EQ_INT(cx_wrap_int(CXLA_S8, 200), -56);
  CHECK_EQ_INT(cx_wrap_int(CXLA_U16, -1), 65535);
}

TEST(literal_print_and_compare) {
  int64_t dims[2] = {2, 2};
  float v[4] = {1, 0.1f, INFINITY, NAN};
  cxla_literal *a = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, dims, v, sizeof v);
  CHECK(a != NULL);
  char *s = cxla_literal_to_string(a);
  CHECK_STR_CONTAINS(s, "f32[2,2] {{1, 0.1}, {inf, nan}}");
  free(s);
  cxla_literal *b = cxla_literal_clone(test_ctx(), a);
  CHECK(cx_literal_compare(a, b, 0, 0, NULL));
  cxla_literal_set_f64(b, 1, 0.2);
  cx_sb why;
  cx_sb_init(&why);
  CHECK(!cx_literal_compare(b, a, 1e-3, 0, &why));
  CHECK_STR_CONTAINS(why.buf, "element [0,1] is 0.2, expected 0.1");
  cx_sb_free(&why);
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  CHECK(cxla_literal_from_data(test_ctx(), CXLA_F32, 2, dims, v, 3) == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "3 bytes given");
}
