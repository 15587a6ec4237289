/* test_literal_diff.c — cx_literal_diff (the numbers `cxla run --check` reports), its index
 * text and the default tolerances. Expected values are worked out by hand from the inputs. */
#include <stdint.h>
#include "ir/literal_diff.h"
#include "test.h"

static cxla_literal *f32_vec(int n, const double *v) {
  int64_t d = n;
  cxla_literal *l = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d);
  for (int i = 0; l && i < n; i++) cxla_literal_set_f64(l, i, v[i]);
  return l;
}

TEST(literal_diff_floats) {
  const double want_v[] = {1, 2, 0, NAN, INFINITY, -3, -0.0};
  const double got_v[] = {1, 2.5, 0, NAN, INFINITY, -3, 0.0};
  cxla_literal *want = f32_vec(7, want_v), *got = f32_vec(7, got_v);
  if (!want || !got) { CHECK(0); return; }
  cx_diff d;
  /* 2.5 vs 2: abs 0.5, rel 0.25; beyond 0.1 * 2, within 0.3 * 2. NaN matches NaN, inf
   * matches inf, -0 matches +0. */
  CHECK_OK(cx_literal_diff(test_ctx(), got, want, 0.1, 0, &d));
  CHECK_EQ_INT(d.n, 7);
  CHECK_EQ_INT(d.ndiff, 1);
  CHECK_EQ_INT(d.nbad, 1);
  CHECK_EQ_INT(d.first_diff, 1);
  CHECK_EQ_INT(d.first_bad, 1);
  CHECK_NEAR(d.max_abs, 0.5, 0);
  CHECK_NEAR(d.max_rel, 0.25, 0);
  CHECK_OK(cx_literal_diff(test_ctx(), got, want, 0.3, 0, &d));
  CHECK_EQ_INT(d.nbad, 0);
  CHECK_EQ_INT(d.first_bad, -1);
  CHECK_EQ_INT(d.first_diff, 1);
  /* atol alone: 0.5 <= 0.5 is within */
  CHECK_OK(cx_literal_diff(test_ctx(), got, want, 0, 0.5, &d));
  CHECK_EQ_INT(d.nbad, 0);
  CHECK_OK(cx_literal_diff(test_ctx(), want, want, 0, 0, &d));
  CHECK_EQ_INT(d.ndiff + d.nbad, 0);
  CHECK(d.first_diff == -1 && d.max_abs == 0 && d.max_rel == 0);
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
}

TEST(literal_diff_nan_and_infinity_match_only_themselves) {
  /* pairs (got, want): NaN vs 1, inf vs 1e30, -inf vs inf, 1e-7 vs 0 */
  const double want_v[] = {1, 1e30, INFINITY, 0};
  const double got_v[] = {NAN, INFINITY, -INFINITY, 1e-7};
  cxla_literal *want = f32_vec(4, want_v), *got = f32_vec(4, got_v);
  if (!want || !got) { CHECK(0); return; }
  cx_diff d;
  CHECK_OK(cx_literal_diff(test_ctx(), got, want, 1e30, 1e30, &d)); /* no tolerance rescues them */
  CHECK_EQ_INT(d.ndiff, 4);
  CHECK_EQ_INT(d.nbad, 3);
  CHECK_EQ_INT(d.first_bad, 0);
  CHECK(isinf(d.max_abs) && isinf(d.max_rel));
  /* 1e-7 against 0: within atol 1e-6, its relative error infinite */
  const double z[] = {0}, small[] = {1e-7};
  cxla_literal *wz = f32_vec(1, z), *gs = f32_vec(1, small);
  if (!wz || !gs) { CHECK(0); return; }
  CHECK_OK(cx_literal_diff(test_ctx(), gs, wz, 0, 1e-6, &d));
  CHECK_EQ_INT(d.nbad, 0);
  CHECK_EQ_INT(d.ndiff, 1);
  CHECK(isinf(d.max_rel));
  CHECK_NEAR(d.max_abs, 1e-7, 1e-14); /* 1e-7 rounded to f32 */
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  cxla_literal_destroy(wz);
  cxla_literal_destroy(gs);
}

TEST(literal_diff_integers_exact_beyond_2_53) {
  int64_t d2 = 2;
  cxla_context *ctx = test_ctx();
  cxla_literal *a = cxla_literal_create(ctx, CXLA_S64, 1, &d2), *b = cxla_literal_create(ctx, CXLA_S64, 1, &d2);
  cxla_literal *u = cxla_literal_create(ctx, CXLA_U64, 1, &d2), *v = cxla_literal_create(ctx, CXLA_U64, 1, &d2);
  if (!a || !b || !u || !v) { CHECK(0); return; }
  int64_t *pa = cxla_literal_data(a), *pb = cxla_literal_data(b);
  pa[0] = pb[0] = -5;
  pa[1] = (INT64_C(1) << 53) + 1; /* the same double as 2^53 */
  pb[1] = INT64_C(1) << 53;
  cx_diff d;
  CHECK_OK(cx_literal_diff(test_ctx(), a, b, 1, 1, &d)); /* tolerances do not apply to integers */
  CHECK_EQ_INT(d.nbad, 1);
  CHECK_EQ_INT(d.first_bad, 1);
  CHECK_NEAR(d.max_abs, 1, 0);
  uint64_t *pu = cxla_literal_data(u), *pv = cxla_literal_data(v);
  pu[0] = pv[0] = 7;
  pu[1] = UINT64_MAX;
  pv[1] = 0;
  CHECK_OK(cx_literal_diff(test_ctx(), u, v, 0, 0, &d));
  CHECK_EQ_INT(d.nbad, 1);
  CHECK_NEAR(d.max_abs, 18446744073709551615.0, 0);
  CHECK(isinf(d.max_rel));
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  cxla_literal_destroy(u);
  cxla_literal_destroy(v);
}

TEST(literal_diff_index_and_shapes) {
  int64_t dims[3] = {2, 3, 4};
  cxla_literal *a = cxla_literal_create(test_ctx(), CXLA_F32, 3, dims);
  cxla_literal *b = cxla_literal_create(test_ctx(), CXLA_F32, 3, dims);
  int64_t other[2] = {6, 4};
  cxla_literal *c = cxla_literal_create(test_ctx(), CXLA_F32, 2, other);
  if (!a || !b || !c) { CHECK(0); return; }
  cxla_literal_set_f64(a, 23, 1); /* 1*12 + 2*4 + 3 */
  cx_diff d;
  CHECK_OK(cx_literal_diff(test_ctx(), a, b, 0, 0, &d));
  CHECK_EQ_INT(d.first_bad, 23);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_diff_index(&sb, &a->shape, d.first_bad);
  CHECK_STR_CONTAINS(sb.buf, "[1,2,3]");
  CHECK_EQ_INT(strlen(sb.buf), 7);
  cx_sb_free(&sb);
  cx_shape scalar = cx_shape_scalar(CXLA_F32);
  cx_sb_init(&sb);
  cx_diff_index(&sb, &scalar, 0);
  CHECK(sb.buf && !strcmp(sb.buf, "[]"));
  cx_sb_free(&sb);
  CHECK_EQ_INT(cx_literal_diff(test_ctx(), a, c, 0, 0, &d), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot compare f32[2,3,4] with f32[6,4]");
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  cxla_literal_destroy(c);
}

TEST(literal_diff_default_tolerances) {
  double r, a;
  cx_diff_default_tol(CXLA_F32, &r, &a);
  CHECK(r == 1e-5 && a == 1e-6);
  cx_diff_default_tol(CXLA_F64, &r, &a);
  CHECK(r == 1e-12 && a == 1e-13);
  cx_diff_default_tol(CXLA_F16, &r, &a);
  CHECK(r == 1e-2 && a == 1e-3);
  cx_diff_default_tol(CXLA_BF16, &r, &a);
  CHECK(r == 4e-2 && a == 1e-2);
  cx_diff_default_tol(CXLA_S32, &r, &a);
  CHECK(r == 0 && a == 0);
  cx_diff_default_tol(CXLA_PRED, &r, &a);
  CHECK(r == 0 && a == 0);
}
