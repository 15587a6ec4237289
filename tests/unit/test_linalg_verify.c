/* test_linalg_verify.c — cholesky, triangular-solve and the LAPACK custom-calls in text and in
 * the verifier: XLA's attribute spelling (fields at their proto default left out), XLA's shape
 * rules (batches of square matrices, a and b alike, transpose_a required), jaxlib's operand
 * and result shapes and backend_config codes; and a custom-call target cxla does not know is
 * refused when compiling, by name. */
#include <string.h>
#include "ir/verify.h"
#include "test.h"
#include "text/hlo.h"
#include "util/util.h"

/* The canonical text of a module that parses and verifies, or "ERROR: <message>". */
static char g_out[4096];
static const char *fmt(const char *text) {
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
  o.metadata = 0; /* a known custom-call's backend_config is modelled: it stays */
  cx_print_module(&sb, m, &o);
  snprintf(g_out, sizeof g_out, "%s", sb.buf ? sb.buf : "");
  cx_sb_free(&sb);
  cx_module_free(m);
  return g_out;
}

static const char *entry(const char *body) {
  static char t[2048];
  snprintf(t, sizeof t, "HloModule m\nENTRY e {\n%s\n}\n", body);
  return fmt(t);
}

TEST(linalg_text_as_xla_prints_it) {
  CHECK_STR_CONTAINS(entry("  a = f32[2,3,3] parameter(0)\n  ROOT c = f32[2,3,3] cholesky(a), lower=true"),
                     "ROOT c = f32[2,3,3] cholesky(a), lower=true\n");
  /* lower=false is the proto's default: XLA leaves it out, and so does the printer */
  CHECK_STR_CONTAINS(entry("  a = f64[3,3] parameter(0)\n  ROOT c = f64[3,3] cholesky(a), lower=false"),
                     "ROOT c = f64[3,3] cholesky(a)\n");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT x = triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT"),
                     "ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT\n");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                           "  ROOT x = triangular-solve(a, b), unit_diagonal=true, transpose_a=NO_TRANSPOSE"),
                     "triangular-solve(a, b), unit_diagonal=true, transpose_a=NO_TRANSPOSE\n");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  ROOT c = (f32[3,3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_spotrf_ffi\", api_version=API_VERSION_TYPED_FFI, "
                           "backend_config={uplo = 76 : ui8}"),
                     "custom_call_target=\"lapack_spotrf_ffi\", backend_config={uplo = 76 : ui8}\n");
}

TEST(linalg_shape_rules) {
  /* left out, the result shape is inferred */
  CHECK_STR_CONTAINS(entry("  a = f32[4,5,5] parameter(0)\n  ROOT c = cholesky(a)"), "ROOT c = f32[4,5,5] cholesky(a)");
  CHECK_STR_CONTAINS(entry("  a = f32[5,4] parameter(0)\n  ROOT c = f32[5,4] cholesky(a)"),
                     "the two minor dimensions of a must be equal, got f32[5,4]");
  CHECK_STR_CONTAINS(entry("  a = s32[2,2] parameter(0)\n  ROOT c = s32[2,2] cholesky(a)"),
                     "a must have a floating-point or complex element type, got s32");
  CHECK_STR_CONTAINS(entry("  a = f32[3] parameter(0)\n  ROOT c = f32[3] cholesky(a)"), "a must have rank >= 2");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT x = f32[3,2] triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE"),
                     "b's dimension 1 (right side) must have a's size 3, got f32[3,2]");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true"),
                     "needs transpose_a= (NO_TRANSPOSE, TRANSPOSE or ADJOINT)");
  CHECK_STR_CONTAINS(entry("  a = f32[2,3,3] parameter(0)\n  b = f32[4,3,2] parameter(1)\n"
                           "  ROOT x = f32[4,3,2] triangular-solve(a, b), left_side=true, transpose_a=TRANSPOSE"),
                     "a and b must have the same batch dimensions");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f64[3,2] parameter(1)\n"
                           "  ROOT x = f64[3,2] triangular-solve(a, b), left_side=true, transpose_a=TRANSPOSE"),
                     "a and b must have the same element type, got f32 and f64");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, transpose_a=CONJUGATE"),
                     "expected a transpose option (NO_TRANSPOSE, TRANSPOSE, ADJOINT)");
}

TEST(linalg_lapack_shape_rules) {
  const char *a = "  a = f32[2,4,3] parameter(0)\n";
  char b[1024];
  /* jaxlib's results: a's shape, then pivots, info, tau, values, vectors by the mode */
  snprintf(b, sizeof b, "%s  ROOT c = (f32[2,4,3], s32[2,3], s32[2]) custom-call(a), custom_call_target=\"lapack_sgetrf_ffi\"", a);
  CHECK_STR_CONTAINS(entry(b), "ROOT c = (f32[2,4,3], s32[2,3], s32[2]) custom-call(a)");
  snprintf(b, sizeof b, "%s  ROOT c = (f32[2,4,3], s32[2,4], s32[2]) custom-call(a), custom_call_target=\"lapack_sgetrf_ffi\"", a);
  CHECK_STR_CONTAINS(entry(b), "ERROR");
  snprintf(b, sizeof b, "%s  ROOT c = (f32[2,4,3], f32[2,3], f32[2,4,4], f32[2,3,3], s32[2]) custom-call(a), "
           "custom_call_target=\"lapack_sgesdd_ffi\", backend_config={mode = 65 : ui8}", a);
  CHECK_STR_CONTAINS(entry(b), "custom_call_target=\"lapack_sgesdd_ffi\"");
  snprintf(b, sizeof b, "%s  ROOT c = (f32[2,4,3], f32[2,3], f32[2,4,3], f32[2,3,3], s32[2]) custom-call(a), "
           "custom_call_target=\"lapack_sgesdd_ffi\", backend_config={mode = 83 : ui8}", a);
  CHECK_STR_CONTAINS(entry(b), "custom_call_target=\"lapack_sgesdd_ffi\"");
  snprintf(b, sizeof b, "%s  ROOT c = (f32[2,4,3], f32[2,3], f32[2,4,3], f32[2,3,3], s32[2]) custom-call(a), "
           "custom_call_target=\"lapack_sgesdd_ffi\", backend_config={mode = 79 : ui8}", a);
  CHECK_STR_CONTAINS(entry(b), "lapack_sgesdd_ffi needs backend_config mode = one of 'ASN' as ui8");
  snprintf(b, sizeof b, "%s  ROOT c = (f64[2,4,3], s32[2]) custom-call(a), custom_call_target=\"lapack_dpotrf_ffi\"", a);
  CHECK_STR_CONTAINS(entry(b), "lapack_dpotrf_ffi: a must be f64, got f32[2,4,3]");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  ROOT c = (f32[3,3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_spotrf_ffi\""),
                     "lapack_spotrf_ffi needs backend_config uplo = one of 'LU' as ui8");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[2,3] parameter(1)\n  ROOT c = f32[2,3] custom-call(a, b), "
                           "custom_call_target=\"lapack_strsm_ffi\", backend_config={diag = 78 : ui8, side = 76 : ui8, "
                           "trans_x = 78 : ui8, uplo = 76 : ui8}"),
                     "lapack_strsm_ffi: a f32[3,3] does not fit b f32[2,3] (side L)");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  b = f32[2,3] parameter(1)\n  ROOT c = f32[2,3] custom-call(a, b), "
                           "custom_call_target=\"lapack_strsm_ffi\", backend_config={diag = 78 : ui8, side = 82 : ui8, "
                           "trans_x = 67 : ui8, uplo = 85 : ui8}"),
                     "ROOT c = f32[2,3] custom-call(a, b)");
  /* complex: heevd's eigenvalues and gesdd's singular values are real */
  CHECK_STR_CONTAINS(entry("  a = c64[3,3] parameter(0)\n  ROOT c = (c64[3,3], f32[3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_cheevd_ffi\", backend_config={mode = 86 : ui8, uplo = 76 : ui8}"),
                     "ROOT c = (c64[3,3], f32[3], s32[]) custom-call(a)");
  CHECK_STR_CONTAINS(entry("  a = c64[3,3] parameter(0)\n  ROOT c = (c64[3,3], c64[3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_cheevd_ffi\", backend_config={mode = 86 : ui8, uplo = 76 : ui8}"),
                     "ERROR");
  CHECK_STR_CONTAINS(entry("  a = c128[4,3] parameter(0)\n  ROOT c = (c128[4,3], f64[3], c128[4,3], c128[3,3], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_zgesdd_ffi\", backend_config={mode = 83 : ui8}"),
                     "ROOT c = (c128[4,3], f64[3], c128[4,3], c128[3,3], s32[]) custom-call(a)");
  /* an unknown target keeps its declared shape: the verifier does not judge it */
  CHECK_STR_CONTAINS(entry("  a = f32[3] parameter(0)\n  ROOT c = (s8[7], f32[]) custom-call(a), custom_call_target=\"mine\""),
                     "ROOT c = (s8[7], f32[]) custom-call(a), custom_call_target=\"mine\"");
}

TEST(linalg_unknown_target_refused_when_compiling) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  ROOT c = f32[3] custom-call(a), "
                     "custom_call_target=\"my_kernel\"\n}\n";
  static const char *const backends[2] = {"interp", "cpu"};
  for (int i = 0; i < 2; i++) {
    cxla_module *m = NULL;
    cxla_executable *e = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "t.hlo", &m));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[i];
    CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.hlo:4:8");
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "custom-call 'c'");
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

TEST(linalg_lapack_gtsv_ormqr_shape_rules) {
  const char *v = "  dl = f64[2,4] parameter(0)\n  d = f64[2,4] parameter(1)\n  du = f64[2,4] parameter(2)\n";
  char b[1024];
  snprintf(b, sizeof b, "%s  x = f64[2,4,3] parameter(3)\n  ROOT c = (f64[2,4], f64[2,4], f64[2,4], f64[2,4,3], s32[2]) custom-call(dl, d, du, x), "
           "custom_call_target=\"lapack_dgtsv_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "ROOT c = (f64[2,4], f64[2,4], f64[2,4], f64[2,4,3], s32[2]) custom-call(dl, d, du, x)");
  snprintf(b, sizeof b, "%s  x = f64[2,5,3] parameter(3)\n  ROOT c = (f64[2,4], f64[2,4], f64[2,4], f64[2,5,3], s32[2]) "
           "custom-call(dl, d, du, x), custom_call_target=\"lapack_dgtsv_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "t.hlo:7:8: error: custom-call c: ");
  CHECK_STR_CONTAINS(entry(b), "lapack_dgtsv_ffi: dl must be f64 with b's batch, then b's 5 rows, got f64[2,4]");
  snprintf(b, sizeof b, "%s  x = f64[2,4,3] parameter(3)\n  ROOT c = (f64[2,4], f64[2,4], f64[2,4], f64[2,4,3], s32[2]) "
           "custom-call(dl, d, x), custom_call_target=\"lapack_dgtsv_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "lapack_dgtsv_ffi takes 4 operands, got 3");
  const char *q = "  a = c64[2,5,3] parameter(0)\n  t = c64[2,3] parameter(1)\n";
  snprintf(b, sizeof b, "%s  x = c64[2,5,4] parameter(2)\n  ROOT c = c64[2,5,4] custom-call(a, t, x), "
           "custom_call_target=\"lapack_cunmqr_ffi\", backend_config={left = true, transpose = true}", q);
  CHECK_STR_CONTAINS(entry(b), "ROOT c = c64[2,5,4] custom-call(a, t, x)");
  snprintf(b, sizeof b, "%s  x = c64[2,4,5] parameter(2)\n  ROOT c = c64[2,4,5] custom-call(a, t, x), "
           "custom_call_target=\"lapack_cunmqr_ffi\", backend_config={left = false, transpose = false}", q);
  CHECK_STR_CONTAINS(entry(b), "ROOT c = c64[2,4,5] custom-call(a, t, x)");
  snprintf(b, sizeof b, "%s  x = c64[2,4,5] parameter(2)\n  ROOT c = c64[2,4,5] custom-call(a, t, x), "
           "custom_call_target=\"lapack_cunmqr_ffi\", backend_config={left = true, transpose = false}", q);
  CHECK_STR_CONTAINS(entry(b), "t.hlo:6:8: error: custom-call c: ");
  CHECK_STR_CONTAINS(entry(b), "lapack_cunmqr_ffi: a c64[2,5,3], tau c64[2,3] (a's batch, then k <= a's rows and columns) "
                               "and c c64[2,4,5] (a's batch, its rows a's rows) do not fit");
  snprintf(b, sizeof b, "%s  x = c64[2,5,4] parameter(2)\n  ROOT c = c64[2,5,4] custom-call(a, t, x), "
           "custom_call_target=\"lapack_cunmqr_ffi\", backend_config={left = true}", q);
  CHECK_STR_CONTAINS(entry(b), "lapack_cunmqr_ffi needs backend_config left and transpose (true or false)");
  snprintf(b, sizeof b, "%s  x = f32[2,5,4] parameter(2)\n  ROOT c = f32[2,5,4] custom-call(a, t, x), "
           "custom_call_target=\"lapack_sormqr_ffi\", backend_config={left = true, transpose = true}", q);
  CHECK_STR_CONTAINS(entry(b), "lapack_sormqr_ffi: a must be f32, got c64[2,5,3]");
  CHECK_STR_CONTAINS(entry("  a = f32[2,5,3] parameter(0)\n  p = s32[2,3] parameter(1)\n  ROOT c = (f32[2,5,3], s32[2,3], "
                           "f32[2,3]) custom-call(a, p), custom_call_target=\"lapack_sgeqp3_ffi\""),
                     "ROOT c = (f32[2,5,3], s32[2,3], f32[2,3]) custom-call(a, p)");
  CHECK_STR_CONTAINS(entry("  a = f32[2,5,3] parameter(0)\n  p = s32[2,5] parameter(1)\n  ROOT c = (f32[2,5,3], s32[2,5], "
                           "f32[2,3]) custom-call(a, p), custom_call_target=\"lapack_sgeqp3_ffi\""),
                     "t.hlo:5:8: error: custom-call c: lapack_sgeqp3_ffi: jpvt must be s32 with a's batch, then a's 3 columns, got s32[2,5] (a f32[2,5,3])");
  CHECK_STR_CONTAINS(entry("  a = f64[4,4] parameter(0)\n  ROOT c = (f64[4,4], f64[3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_dgehrd_ffi\", backend_config={high = 4 : i32, low = 1 : i32}"),
                     "ROOT c = (f64[4,4], f64[3], s32[]) custom-call(a)");
  CHECK_STR_CONTAINS(entry("  a = f64[4,4] parameter(0)\n  ROOT c = (f64[4,4], f64[3], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_dgehrd_ffi\", backend_config={high = 5 : i32, low = 1 : i32}"),
                     "t.hlo:4:8: error: custom-call c: lapack_dgehrd_ffi needs backend_config low and high with 1 <= low <= high <= 4");
  CHECK_STR_CONTAINS(entry("  a = f64[4,3] parameter(0)\n  ROOT c = (f64[4,3], f64[2], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_dgehrd_ffi\", backend_config={high = 3 : i32, low = 1 : i32}"),
                     "lapack_dgehrd_ffi: a must be square matrices, got f64[4,3]");
  CHECK_STR_CONTAINS(entry("  a = c64[2,4,4] parameter(0)\n  ROOT c = (c64[2,4,4], f32[2,4], f32[2,3], c64[2,3], s32[2]) "
                           "custom-call(a), custom_call_target=\"lapack_chetrd_ffi\", backend_config={uplo = 76 : ui8}"),
                     "ROOT c = (c64[2,4,4], f32[2,4], f32[2,3], c64[2,3], s32[2]) custom-call(a)");
  CHECK_STR_CONTAINS(entry("  a = c64[2,4,4] parameter(0)\n  ROOT c = (c64[2,4,4], c64[2,4], f32[2,3], c64[2,3], s32[2]) "
                           "custom-call(a), custom_call_target=\"lapack_chetrd_ffi\", backend_config={uplo = 76 : ui8}"),
                     "t.hlo:4:8: error: custom-call c");
  CHECK_STR_CONTAINS(entry("  a = f32[4,4] parameter(0)\n  ROOT c = (f32[4,4], f32[4], f32[3], f32[3], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_ssytrd_ffi\""),
                     "lapack_ssytrd_ffi needs backend_config uplo = one of 'LU' as ui8");
}

TEST(linalg_lapack_gees_gtsv_perturbed_shape_rules) {
  /* jax's lowering: (t, z, wr, wi, sdim, info) real, (t, z, w, sdim, info) complex */
  CHECK_STR_CONTAINS(entry("  a = f32[2,3,3] parameter(0)\n  ROOT c = (f32[2,3,3], f32[2,3,3], f32[2,3], f32[2,3], s32[2], s32[2]) custom-call(a), custom_call_target=\"lapack_sgees_ffi\", "
                           "backend_config={mode = 86 : ui8, sort = 78 : ui8}"),
                     "ROOT c = (f32[2,3,3], f32[2,3,3], f32[2,3], f32[2,3], s32[2], s32[2]) custom-call(a)");
  CHECK_STR_CONTAINS(entry("  a = c128[3,3] parameter(0)\n  ROOT c = (c128[3,3], c128[3,3], c128[3], s32[], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_zgees_ffi\", backend_config={mode = 78 : ui8, sort = 78 : ui8}"),
                     "ROOT c = (c128[3,3], c128[3,3], c128[3], s32[], s32[]) custom-call(a)");
  CHECK_STR_CONTAINS(entry("  a = c128[3,3] parameter(0)\n  ROOT c = (c128[3,3], c128[3,3], c128[3], c128[3], s32[], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_zgees_ffi\", backend_config={mode = 86 : ui8, sort = 78 : ui8}"),
                     "t.hlo:4:8: error: custom-call c");
  CHECK_STR_CONTAINS(entry("  a = f64[3,4] parameter(0)\n  ROOT c = (f64[3,4], f64[3,4], f64[3], f64[3], s32[], s32[]) custom-call(a), custom_call_target=\"lapack_dgees_ffi\", "
                           "backend_config={mode = 86 : ui8, sort = 78 : ui8}"),
                     "t.hlo:4:8: error: custom-call c: lapack_dgees_ffi: a must be square matrices, got f64[3,4]");
  CHECK_STR_CONTAINS(entry("  a = f32[3,3] parameter(0)\n  ROOT c = (f32[3,3], f32[3,3], f32[3], f32[3], s32[], s32[]) custom-call(a), custom_call_target=\"lapack_dgees_ffi\", "
                           "backend_config={mode = 86 : ui8, sort = 78 : ui8}"),
                     "lapack_dgees_ffi: a must be f64, got f32[3,3]");
  /* sorting needs a select function jaxlib's kernel never gets: refused, as jaxlib refuses it */
  CHECK_STR_CONTAINS(entry("  a = f64[3,3] parameter(0)\n  ROOT c = (f64[3,3], f64[3,3], f64[3], f64[3], s32[], s32[]) custom-call(a), custom_call_target=\"lapack_dgees_ffi\", "
                           "backend_config={mode = 86 : ui8, sort = 83 : ui8}"),
                     "t.hlo:4:8: error: custom-call c: lapack_dgees_ffi needs backend_config sort = one of 'N' as ui8");
  CHECK_STR_CONTAINS(entry("  a = f64[3,3] parameter(0)\n  ROOT c = (f64[3,3], f64[3,3], f64[3], f64[3], s32[], s32[]) custom-call(a), custom_call_target=\"lapack_dgees_ffi\", "
                           "backend_config={sort = 78 : ui8}"),
                     "lapack_dgees_ffi needs backend_config mode = one of 'VN' as ui8");
  /* the perturbed solve: one target name for the four types, x is b's shape */
  const char *v = "  dl = c64[2,4] parameter(0)\n  d = c64[2,4] parameter(1)\n  du = c64[2,4] parameter(2)\n";
  char b[1024];
  snprintf(b, sizeof b, "%s  x = c64[2,4,3] parameter(3)\n  ROOT c = c64[2,4,3] custom-call(dl, d, du, x), "
           "custom_call_target=\"tridiagonal_solve_perturbed_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "ROOT c = c64[2,4,3] custom-call(dl, d, du, x), custom_call_target=\"tridiagonal_solve_perturbed_ffi\"");
  snprintf(b, sizeof b, "%s  x = c128[2,4,3] parameter(3)\n  ROOT c = c128[2,4,3] custom-call(dl, d, du, x), "
           "custom_call_target=\"tridiagonal_solve_perturbed_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "t.hlo:7:8: error: custom-call c: tridiagonal_solve_perturbed_ffi: dl must be c128 with "
                               "b's batch, then b's 4 rows, got c64[2,4] (b c128[2,4,3])");
  snprintf(b, sizeof b, "%s  x = c64[2,5,3] parameter(3)\n  ROOT c = c64[2,5,3] custom-call(dl, d, du, x), "
           "custom_call_target=\"tridiagonal_solve_perturbed_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "dl must be c64 with b's batch, then b's 5 rows, got c64[2,4]");
  snprintf(b, sizeof b, "%s  x = c64[2,4,3] parameter(3)\n  ROOT c = c64[2,4,3] custom-call(dl, d, x), "
           "custom_call_target=\"tridiagonal_solve_perturbed_ffi\"", v);
  CHECK_STR_CONTAINS(entry(b), "tridiagonal_solve_perturbed_ffi takes 4 operands, got 3");
  CHECK_STR_CONTAINS(entry("  dl = s32[4] parameter(0)\n  x = s32[4,1] parameter(1)\n  ROOT c = s32[4,1] custom-call(dl, dl, dl, x), "
                           "custom_call_target=\"tridiagonal_solve_perturbed_ffi\""),
                     "t.hlo:5:8: error: custom-call c: tridiagonal_solve_perturbed_ffi: b must be f32, f64, c64 or c128 of "
                     "rank >= 2, got s32[4,1]");
}
