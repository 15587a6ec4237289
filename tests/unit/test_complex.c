/* test_complex.c — the complex element types c64 and c128 below the backends: the type
 * table, literals (HLO's "(re, im)" syntax, printing, tolerance), .npy complex64/complex128,
 * the verifier's rules for complex operands (XLA's), and the interpreter's scalar rules on
 * hand-worked values and XLA's special cases. Reference values: Python's cmath, or worked out
 * in the comments. */
#include "interp/internal.h"
#include "ir/literal_diff.h"
#include "ir/verify.h"
#include "test.h"
#include "text/hlo.h"
#include "text/npy.h"

TEST(complex_type_table) {
  CHECK_EQ_INT(cxla_type_size(CXLA_C64), 8);
  CHECK_EQ_INT(cxla_type_size(CXLA_C128), 16);
  CHECK(!strcmp(cxla_type_name(CXLA_C64), "c64") && !strcmp(cxla_type_name(CXLA_C128), "c128"));
  CHECK_EQ_INT(cx_type_from_name("c64", 3), CXLA_C64);
  CHECK_EQ_INT(cx_type_from_name("c128", 4), CXLA_C128);
  CHECK_EQ_INT(cx_type_from_name("c12", 3), CXLA_INVALID);
  CHECK_EQ_INT(cx_type_part(CXLA_C64), CXLA_F32);
  CHECK_EQ_INT(cx_type_part(CXLA_C128), CXLA_F64);
  CHECK_EQ_INT(cx_type_part(CXLA_S8), CXLA_S8);
  CHECK_EQ_INT(cx_type_complex_of(CXLA_F32), CXLA_C64);
  CHECK_EQ_INT(cx_type_complex_of(CXLA_F64), CXLA_C128);
  CHECK_EQ_INT(cx_type_complex_of(CXLA_F16), CXLA_INVALID);
  CHECK(cx_type_is_complex(CXLA_C64) && cx_type_is_array(CXLA_C128) && !cx_type_is_float(CXLA_C64));
  /* the public enum keeps its old values */
  CHECK_EQ_INT(CXLA_F64, 13);
  CHECK_EQ_INT(CXLA_TOKEN, 15);
  float d[4] = {0};
  cx_store_f64(CXLA_C64, d, 1, 2.5); /* as convert: imaginary part 0 */
  CHECK(d[2] == 2.5f && d[3] == 0);
  cx_store_complex(CXLA_C64, d, 0, 0.1, -3);
  double re, im;
  cx_load_complex(CXLA_C64, d, 0, &re, &im);
  CHECK(re == (double)0.1f && im == -3);
  CHECK(cx_load_f64(CXLA_C64, d, 0) == (double)0.1f);
}

static cxla_literal *lit(const char *text) {
  cxla_literal *l = NULL;
  CHECK_OK(cxla_literal_parse(test_ctx(), text, &l));
  return l;
}

TEST(complex_literals) {
  cxla_literal *a = lit("c64[3] {(1, -2.5), (nan, inf), (0.1, -0)}");
  if (!a) return;
  const float *f = cxla_literal_data(a);
  CHECK(f[0] == 1 && f[1] == -2.5f && isnan(f[2]) && isinf(f[3]) && f[4] == 0.1f && f[5] == 0 && signbit(f[5]));
  char *s = cxla_literal_to_string(a);
  CHECK_STR_CONTAINS(s, "c64[3] {(1, -2.5), (nan, inf), (0.1, -0)}");
  free(s);
  cxla_literal *b = lit("c128[] (0.1, 1e300)");
  if (b) {
    const double *g = cxla_literal_data(b);
    CHECK(g[0] == 0.1 && g[1] == 1e300);
    s = cxla_literal_to_string(b);
    CHECK_STR_CONTAINS(s, "c128[] (0.1, 1e+300)");
    free(s);
    cxla_literal_destroy(b);
  }
  cxla_literal *l = NULL;
  CHECK(cxla_literal_parse(test_ctx(), "c64[] 1", &l) == CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "expected '(' (a c64 value is written (real, imaginary))");
  CHECK(cxla_literal_parse(test_ctx(), "c64[] (1 2)", &l) == CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "expected ',' (between the real and imaginary parts)");
  CHECK(cxla_literal_parse(test_ctx(), "c64[] (1, 1e39)", &l) == CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "out of range for f32");
  /* tolerance in the complex plane: |got - want| <= atol + rtol |want| */
  cxla_literal *w = lit("c64[2] {(1000, 0), (nan, 1)}"), *g1 = lit("c64[2] {(1000, 0.005), (nan, 1)}");
  cxla_literal *g2 = lit("c64[2] {(1000, 0.02), (nan, 1)}"), *g3 = lit("c64[2] {(1000, 0), (1, 1)}");
  if (w && g1 && g2 && g3) {
    CHECK(cx_literal_compare(g1, w, 1e-5, 0, NULL));  /* 0.005 <= 0.01 */
    CHECK(!cx_literal_compare(g2, w, 1e-5, 0, NULL)); /* 0.02 > 0.01 */
    cx_sb why;
    cx_sb_init(&why);
    CHECK(!cx_literal_compare(g3, w, 1e-5, 0, &why)); /* a NaN part matches only NaN */
    CHECK_STR_CONTAINS(why.buf, "element [1] is (1, 1), expected (nan, 1)");
    cx_sb_free(&why);
    cx_diff d;
    CHECK_OK(cx_literal_diff(test_ctx(), g2, w, 1e-5, 0, &d));
    CHECK(d.nbad == 1 && d.first_bad == 0 && fabs(d.max_abs - 0.02) < 1e-6 && fabs(d.max_rel - 2e-5) < 1e-9);
    CHECK_OK(cx_literal_diff(test_ctx(), g3, w, 1e-5, 0, &d));
    CHECK(d.nbad == 1 && d.first_bad == 1 && isinf(d.max_abs));
  }
  double rt, at;
  cx_diff_default_tol(CXLA_C64, &rt, &at);
  CHECK(rt == 1e-5 && at == 1e-6);
  cxla_literal_destroy(w);
  cxla_literal_destroy(g1);
  cxla_literal_destroy(g2);
  cxla_literal_destroy(g3);
  cxla_literal_destroy(a);
}

TEST(complex_npy) {
  const char *texts[2] = {"c64[2] {(1, -2), (0.5, 3)}", "c128[1,2] {{(0.1, -0.2), (1e-300, 7)}}"};
  const char *descr[2] = {"'<c8'", "'<c16'"};
  for (int i = 0; i < 2; i++) {
    cxla_literal *a = lit(texts[i]), *b = NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    if (!a) continue;
    CHECK_OK(cx_npy_encode(test_ctx(), a, &buf, &len));
    if (buf) {
      char hdr[128];
      snprintf(hdr, sizeof hdr, "%.100s", (const char *)buf + 10);
      CHECK_STR_CONTAINS(hdr, descr[i]);
      CHECK_OK(cx_npy_decode(test_ctx(), buf, len, "t.npy", &b));
      CHECK(b && cx_literal_equal(a, b));
    }
    cx_free(buf);
    cxla_literal_destroy(a);
    cxla_literal_destroy(b);
  }
}

/* Parses and verifies one module; "ok" or the error message. */
static const char *verify_text(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  cx_module_free(m);
  return s == CXLA_OK ? "ok" : cxla_context_errmsg(test_ctx());
}

#define M(body) "HloModule m\nENTRY e {\n  a = c64[2] parameter(0)\n  f = f32[2] parameter(1)\n" body "}\n"

TEST(complex_verifier_rules) {
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = f32[2] abs(a)\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = (f32[2], f32[2]) tuple(real(a), imag(a))\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = f32[2] imag(f)\n")), "ok"); /* imag of a real number: 0 */
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[2] abs(a)\n")), "declared shape c64[2] does not match inferred shape f32[2]");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[2] complex(f, f)\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  h = f16[2] convert(f)\n  ROOT r = c64[2] complex(h, h)\n")),
                     "complex needs f32 or f64 parts, got f16[2]");
  CHECK_STR_CONTAINS(verify_text(M("  s = s32[2] convert(f)\n  ROOT r = s32[2] real(s)\n")),
                     "real needs a floating-point or complex type");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = pred[2] compare(a, a), direction=NE\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = pred[2] compare(a, a), direction=LT\n")),
                     "complex operands c64 compare for EQ or NE only");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = pred[2] compare(a, a), direction=EQ, type=TOTALORDER\n")),
                     "type=TOTALORDER does not fit c64 operands (expected FLOAT)");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = f32[2] convert(a)\n")),
                     "conversion from complex to real type c64[2] => f32 is not implemented");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c128[2] convert(a)\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  s = s8[2] convert(f)\n  ROOT r = c64[2] convert(s)\n")), "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = f64[2] bitcast-convert(a)\n")),
                     "bitcast-convert between complex and real type c64[2] => f64");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[2] maximum(a, a)\n")),
                     "maximum needs an array type that is not complex");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[2] remainder(a, a)\n")), "remainder needs an integer or floating-point type");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = pred[2] is-finite(a)\n")), "is-finite needs a floating-point type");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[2] floor(a)\n")), "floor needs a floating-point type");
  const char *ok_ops[] = {"add", "subtract", "multiply", "divide", "power"};
  for (int i = 0; i < 5; i++) {
    char text[256];
    snprintf(text, sizeof text, M("  ROOT r = c64[2] %s(a, a)\n"), ok_ops[i]);
    CHECK_STR_CONTAINS(verify_text(text), "ok");
  }
  const char *unary[] = {"negate", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
                         "rsqrt", "cbrt", "sine", "cosine", "tanh", "logistic"};
  for (int i = 0; i < 13; i++) {
    char text[256];
    snprintf(text, sizeof text, M("  ROOT r = c64[2] %s(a)\n"), unary[i]);
    CHECK_MSG(!strcmp(verify_text(text), "ok"), "%s: %s", unary[i], verify_text(text));
  }
  /* dot: complex x complex, widening to c128 only */
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c64[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n")),
                     "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = c128[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n")),
                     "ok");
  CHECK_STR_CONTAINS(verify_text(M("  ROOT r = f64[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n")),
                     "does not match inferred shape c64[]");
}

/* ---- the interpreter's rules ---- */

#define CLOSE(z, wr, wi, tol)                                                                   \
  do {                                                                                          \
    cx_cplx z_ = (z);                                                                           \
    double wr_ = (wr), wi_ = (wi);                                                              \
    int ok_ = (isnan(wr_) ? isnan(z_.re) : fabs(z_.re - wr_) <= (tol) * (1 + fabs(wr_)) ||      \
                                              (isinf(wr_) && z_.re == wr_)) &&                  \
              (isnan(wi_) ? isnan(z_.im) : fabs(z_.im - wi_) <= (tol) * (1 + fabs(wi_)) ||      \
                                               (isinf(wi_) && z_.im == wi_));                   \
    if (!ok_) test_fail(__FILE__, __LINE__, "%s = (%.17g, %.17g), expected (%.17g, %.17g)", #z, z_.re, z_.im, wr_, wi_); \
  } while (0)
#define C(a, b) ((cx_cplx){(a), (b)})

TEST(interp_complex_arithmetic) {
  cx_cplx z = C(0.5, -1.25);
  CLOSE(cx_c_add(z, C(1, 2)), 1.5, 0.75, 0);
  CLOSE(cx_c_sub(z, C(1, 2)), -0.5, -3.25, 0);
  CLOSE(cx_c_mul(C(1, 2), C(3, -1)), 5, 5, 0);     /* 3 + 2 - i + 6i */
  CLOSE(cx_c_div(C(5, 5), C(3, -1)), 1, 2, 1e-16); /* the product back */
  CLOSE(cx_c_div(C(1, 2), C(0, 1)), 2, -1, 0);     /* |b_r| < |b_i| branch */
  CLOSE(cx_c_negate(z), -0.5, 1.25, 0);
  CHECK(cx_c_abs(C(3, -4)) == 5);
  CHECK_NEAR(cx_c_abs(C(1e300, -1e300)) / 1e300, sqrt(2), 1e-15); /* no overflow */
  CHECK(cx_c_abs(C(0, -0.0)) == 0 && cx_c_abs(C(-INFINITY, INFINITY)) == INFINITY);
  CLOSE(cx_c_sign(C(3, -4)), 0.6, -0.8, 1e-16);
  CLOSE(cx_c_sign(C(0, -0.0)), 0, 0, 0);
}

/* XLA's repairs of Smith's NaN results (EmitComplexDivide), worked out from its selects. */
TEST(interp_complex_division_corners) {
  CLOSE(cx_c_div(C(1, 1), C(0, 0)), INFINITY, INFINITY, 0);    /* inf * numerator */
  CLOSE(cx_c_div(C(1, -1), C(-0.0, 0)), -INFINITY, INFINITY, 0); /* sign of b's real part */
  CLOSE(cx_c_div(C(0, 0), C(0, 0)), NAN, NAN, 0);               /* inf * 0 */
  CLOSE(cx_c_div(C(NAN, NAN), C(0, 0)), NAN, NAN, 0);
  CLOSE(cx_c_div(C(INFINITY, 0), C(1, 1)), INFINITY, -INFINITY, 0); /* Smith's own result */
  /* Smith gives (inf, NaN): only one part NaN, so XLA keeps it */
  CLOSE(cx_c_div(C(INFINITY, INFINITY), C(1, 2)), INFINITY, NAN, 0);
  CLOSE(cx_c_div(C(1, 2), C(INFINITY, 0)), 0, 0, 0);
  CLOSE(cx_c_div(C(1, 2), C(INFINITY, INFINITY)), 0, 0, 0); /* finite / infinite: 0 * (3, 1) */
  CLOSE(cx_c_div(C(INFINITY, NAN), C(1, 0)), INFINITY, NAN, 0);
  CLOSE(cx_c_div(C(NAN, 0), C(1, 0)), NAN, NAN, 0);
}

TEST(interp_complex_functions) {
  cx_cplx z = C(0.5, -1.25);
  CLOSE(cx_c_exp(z), 0.5198786860084937, -1.5646111274988195, 1e-15);
  CLOSE(cx_c_log(z), 0.2973535538733464, -1.1902899496825317, 1e-15);
  CLOSE(cx_c_sqrt(z), 0.9608046632337985, -0.6504964265019547, 1e-15);
  CLOSE(cx_c_rsqrt(z), 0.7136677874451546, 0.4831766156089769, 1e-15);
  CLOSE(cx_c_sin(z), 0.9053586344209573, -1.4058162504314684, 1e-15);
  CLOSE(cx_c_cos(z), 1.6572478640539148, 0.7680009178735728, 1e-15);
  CLOSE(cx_c_tanh(z), 1.5839635482844239, -0.8066346988510739, 1e-15);
  CLOSE(cx_c_log1p(z), 0.669142570966765, -0.6947382761967031, 1e-15);
  CLOSE(cx_c_pow(z, C(1.5, 0.5)), -0.18670431121492165, -2.826384252140626, 1e-14);
  CLOSE(cx_c_cbrt(z), 1.018418680678539, -0.42670028253249687, 1e-15);
  CLOSE(cx_c_logistic(z), 0.6805661698086823, -0.32883527469514817, 1e-15);
  /* expm1 near 0: e^a cos b - 1 with a = b = 1e-10 is 1e-10 + O(1e-30) (exp - 1 loses 8 digits) */
  CLOSE(cx_c_expm1(C(1e-10, 1e-10)), 1e-10, 1.0000000001e-10, 1e-15);
  CLOSE(cx_c_sqrt(C(3, 4)), 2, 1, 0);
  CLOSE(cx_c_sqrt(C(-4, 0)), 0, 2, 0);
  CLOSE(cx_c_sqrt(C(-4, -0.0)), 0, -2, 0); /* the branch cut follows the sign of zero */
  CLOSE(cx_c_log(C(-1, 0)), 0, M_PI, 1e-16);
  CLOSE(cx_c_pow(C(0, 1), C(2, 0)), -1, 0, 1e-15);
  CLOSE(cx_c_pow(C(0, 0), C(0, 0)), 1, 0, 0); /* XLA: 0^0 = 1 */
  CLOSE(cx_c_pow(C(0, 0), C(2, 0)), 0, 0, 0);
}

/* XLA's special values (EmitComplexSqrt, EmitComplexRsqrt, the tanh selects, EmitComplexAbs). */
TEST(interp_complex_special_values) {
  CHECK(isnan(cx_c_abs(C(INFINITY, NAN))));
  CHECK(isinf(cx_c_abs(C(-INFINITY, 1))));
  CLOSE(cx_c_sqrt(C(1, INFINITY)), INFINITY, INFINITY, 0);
  CLOSE(cx_c_sqrt(C(NAN, -INFINITY)), INFINITY, -INFINITY, 0);
  CLOSE(cx_c_sqrt(C(-INFINITY, 2)), 0, INFINITY, 0);
  CLOSE(cx_c_sqrt(C(-INFINITY, NAN)), NAN, INFINITY, 0);
  CLOSE(cx_c_sqrt(C(INFINITY, -2)), INFINITY, 0, 0);
  CLOSE(cx_c_sqrt(C(INFINITY, NAN)), INFINITY, NAN, 0);
  CLOSE(cx_c_sqrt(C(NAN, 1)), NAN, NAN, 0);
  CLOSE(cx_c_rsqrt(C(0, 0)), INFINITY, NAN, 0);
  CLOSE(cx_c_rsqrt(C(4, 0)), 0.5, 0, 0);
  cx_cplx r = cx_c_rsqrt(C(-INFINITY, 1));
  CHECK(r.re == 0 && signbit(r.re) && r.im == 0 && signbit(r.im));
  CLOSE(cx_c_tanh(C(NAN, 0)), NAN, 0, 0);
  CLOSE(cx_c_tanh(C(NAN, 1)), NAN, NAN, 0);
  CLOSE(cx_c_tanh(C(1, INFINITY)), NAN, NAN, 0);
  CLOSE(cx_c_tanh(C(1, NAN)), NAN, NAN, 0);
  r = cx_c_tanh(C(INFINITY, 2)); /* sin(4)/2 < 0: -0 */
  CHECK(r.re == 1 && r.im == 0 && signbit(r.im));
  r = cx_c_tanh(C(-INFINITY, NAN));
  CHECK(r.re == -1 && r.im == 0);
  r = cx_c_tanh(C(30, 1)); /* beyond |a| = 20: (1, +0) as sin(2) > 0 */
  CHECK(r.re == 1 && r.im == 0 && !signbit(r.im));
  CLOSE(cx_c_tanh(C(1e-9, 0.5)), 1.2984464104095248e-9, 0.5463024898437905, 1e-15);
}
