/* test_linalg_ref.c — the interpreter's reference linear algebra (interp/linalg.h) checked by
 * what each result must satisfy, on random, rank-deficient, tall and wide matrices: P A = L U
 * with LAPACK's pivots, A = Q R with orthonormal Q, A V = V diag(w), A = U S V^T with
 * orthonormal bases (completed when full), L L^T = A, and op(a) x = b for every option. */
#include <math.h>
#include "interp/linalg.h"
#include "test.h"
#include "util/util.h"

static uint64_t g_seed = 1;
static double rnd(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2 - 1;
}
static double *mat(int64_t r, int64_t c) {
  double *a = cx_malloc(sizeof *a * (size_t)(r * c + 1));
  for (int64_t i = 0; a && i < r * c; i++) a[i] = rnd();
  return a;
}
static double *copy(const double *a, int64_t n) {
  double *b = cx_malloc(sizeof *b * (size_t)(n + 1));
  for (int64_t i = 0; b && i < n; i++) b[i] = a[i];
  return b;
}
/* max |x_ij - y_ij| */
static double maxdiff(const double *x, const double *y, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x[i] - y[i]));
  return d;
}
/* max |Q^T Q - I| over the c columns of the r x c matrix q */
static double orth_err(const double *q, int64_t r, int64_t c) {
  double e = 0;
  for (int64_t i = 0; i < c; i++)
    for (int64_t j = 0; j < c; j++) {
      double d = 0;
      for (int64_t k = 0; k < r; k++) d += q[k * c + i] * q[k * c + j];
      e = fmax(e, fabs(d - (i == j)));
    }
  return e;
}

static void check_lu(int64_t m, int64_t n) {
  double *a = mat(m, n), *lu = copy(a, m * n);
  int64_t k = m < n ? m : n;
  int32_t piv[64];
  CHECK_EQ_INT(cx_ref_getrf(m, n, lu, piv), 0);
  /* apply the row swaps to a, then compare with L U */
  for (int64_t j = 0; j < k; j++) {
    CHECK(piv[j] >= j + 1 && piv[j] <= m);
    for (int64_t c = 0; c < n; c++) {
      double t = a[j * n + c];
      a[j * n + c] = a[(piv[j] - 1) * n + c];
      a[(piv[j] - 1) * n + c] = t;
    }
    for (int64_t i = j + 1; i < m; i++) CHECK(fabs(lu[i * n + j]) <= 1); /* partial pivoting */
  }
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      double s = 0;
      for (int64_t t = 0; t <= (i < c ? i : c) && t < k; t++) s += (t == i ? 1 : lu[i * n + t]) * (t <= c ? lu[t * n + c] : 0);
      err = fmax(err, fabs(s - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "getrf %lldx%lld: |PA - LU| = %g", (long long)m, (long long)n, err);
  cx_free(a);
  cx_free(lu);
}

TEST(linalg_ref_lu) {
  check_lu(5, 5);
  check_lu(7, 3);
  check_lu(3, 7);
  /* a zero column: info names the first zero pivot, and the factorization goes on */
  double z[9] = {0, 1, 2, 0, 3, 4, 0, 5, 7};
  int32_t piv[3];
  CHECK_EQ_INT(cx_ref_getrf(3, 3, z, piv), 1);
  CHECK_EQ_INT(piv[0], 1);
  /* the first of equal magnitudes is the pivot, as LAPACK's idamax takes it */
  double t[4] = {-2, 1, 2, 1};
  cx_ref_getrf(2, 2, t, piv);
  CHECK_EQ_INT(piv[0], 1);
}

static void check_qr(int64_t m, int64_t n) {
  double *a = mat(m, n), *qr = copy(a, m * n);
  int64_t k = m < n ? m : n;
  double tau[64];
  cx_ref_geqrf(m, n, qr, tau);
  for (int64_t j = 0; j < k; j++) CHECK(tau[j] == 0 || (tau[j] >= 1 && tau[j] <= 2));
  /* Q (m x k) from the reflectors; R the upper k x n part */
  double *q = cx_malloc(sizeof *q * (size_t)(m * k));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < k; j++) q[i * k + j] = qr[i * n + j];
  cx_ref_orgqr(m, k, k, q, tau);
  CHECK_MSG(orth_err(q, m, k) < 1e-13, "orgqr %lldx%lld: Q^T Q != I", (long long)m, (long long)n);
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      double s = 0;
      for (int64_t t = 0; t <= c && t < k; t++) s += q[i * k + t] * qr[t * n + c];
      err = fmax(err, fabs(s - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "geqrf %lldx%lld: |QR - A| = %g", (long long)m, (long long)n, err);
  /* LAPACK's reflector makes R's diagonal the opposite sign of the pivot it started from */
  CHECK(qr[0] * a[0] < 0);
  cx_free(q);
  cx_free(a);
  cx_free(qr);
}

TEST(linalg_ref_qr) {
  check_qr(6, 4);
  check_qr(4, 4);
  check_qr(3, 5);
  /* orgqr of more columns than reflectors: the identity's columns past k, transformed */
  double a[12] = {1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1}, tau[1];
  double col[4] = {1, 1, 1, 1};
  cx_ref_geqrf(4, 1, col, tau);
  for (int i = 0; i < 4; i++) a[i * 3] = col[i];
  cx_ref_orgqr(4, 3, 1, a, tau);
  CHECK(orth_err(a, 4, 3) < 1e-14);
  CHECK_NEAR(fabs(a[0]), 0.5, 1e-15);
}

static void check_eig(int64_t n, double *a) {
  double *x = copy(a, n * n), w[32], *v = cx_malloc(sizeof *v * (size_t)(n * n));
  CHECK_EQ_INT(cx_ref_syev(n, x, w, v), 0);
  CHECK(orth_err(v, n, n) < 1e-13);
  double err = 0;
  for (int64_t j = 0; j < n; j++) {
    if (j) CHECK(w[j - 1] <= w[j]);
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int64_t k = 0; k < n; k++) s += a[i * n + k] * v[k * n + j];
      err = fmax(err, fabs(s - w[j] * v[i * n + j]));
    }
  }
  CHECK_MSG(err < 1e-12, "syev %lld: |AV - VW| = %g", (long long)n, err);
  cx_free(x);
  cx_free(v);
}

TEST(linalg_ref_eigen) {
  double *b = mat(6, 6), a[36];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) a[i * 6 + j] = b[i * 6 + j] + b[j * 6 + i];
  check_eig(6, a);
  double rep[9] = {2, 0, 0, 0, 2, 0, 0, 0, -1}; /* a repeated eigenvalue */
  check_eig(3, rep);
  double one[1] = {-4};
  check_eig(1, one);
  cx_free(b);
}

static void check_svd(int64_t m, int64_t n, double *a, int full) {
  int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
  double *x = copy(a, m * n), s[32], *u = cx_malloc(sizeof *u * (size_t)(m * uc)), *vt = cx_malloc(sizeof *vt * (size_t)(vr * n));
  CHECK_EQ_INT(cx_ref_gesvd(m, n, x, s, u, vt, full), 0);
  for (int64_t j = 0; j < k; j++) CHECK(s[j] >= 0 && (!j || s[j - 1] >= s[j]));
  CHECK_MSG(orth_err(u, m, uc) < 1e-13, "svd %lldx%lld full=%d: U not orthonormal", (long long)m, (long long)n, full);
  /* the rows of vt */
  double e = 0;
  for (int64_t i = 0; i < vr; i++)
    for (int64_t j = 0; j < vr; j++) {
      double d = 0;
      for (int64_t c = 0; c < n; c++) d += vt[i * n + c] * vt[j * n + c];
      e = fmax(e, fabs(d - (i == j)));
    }
  CHECK_MSG(e < 1e-13, "svd %lldx%lld full=%d: V not orthonormal", (long long)m, (long long)n, full);
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      double t = 0;
      for (int64_t j = 0; j < k; j++) t += u[i * uc + j] * s[j] * vt[j * n + c];
      err = fmax(err, fabs(t - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "svd %lldx%lld full=%d: |USV^T - A| = %g", (long long)m, (long long)n, full, err);
  double sv[32];
  double *y = copy(a, m * n);
  cx_ref_gesvd(m, n, y, sv, NULL, NULL, 0); /* values only: the same values */
  CHECK(maxdiff(s, sv, k) < 1e-13);
  cx_free(y);
  cx_free(x);
  cx_free(u);
  cx_free(vt);
}

TEST(linalg_ref_svd) {
  for (int full = 0; full < 2; full++) {
    double *a = mat(5, 3), *b = mat(3, 5), *c = mat(4, 4);
    check_svd(5, 3, a, full);
    check_svd(3, 5, b, full);
    check_svd(4, 4, c, full);
    /* rank 1 (the bases are completed past the one nonzero value), and zero */
    double r1[12], z[6] = {0};
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) r1[i * 3 + j] = (i + 1.0) * (j - 1.5);
    check_svd(4, 3, r1, full);
    check_svd(2, 3, z, full);
    cx_free(a);
    cx_free(b);
    cx_free(c);
  }
}

TEST(linalg_ref_cholesky) {
  int64_t n = 5;
  double *b = mat(n, n), a[25], l[25];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = i == j ? n : 0;
      for (int k = 0; k < n; k++) s += b[i * n + k] * b[j * n + k];
      a[i * n + j] = s;
    }
  CHECK_EQ_INT(cx_ref_cholesky_xla(n, a, l), 0);
  double err = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += l[i * n + k] * l[j * n + k];
      err = fmax(err, fabs(s - a[i * n + j]));
      if (j > i) CHECK(l[i * n + j] == 0);
    }
  CHECK(err < 1e-12);
  /* potrf agrees on the lower triangle and leaves the upper one */
  double p[25];
  for (int i = 0; i < 25; i++) p[i] = a[i];
  CHECK_EQ_INT(cx_ref_potrf_lower(n, p), 0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) CHECK_NEAR(p[i * n + j], j > i ? a[i * n + j] : l[i * n + j], 1e-14);
  /* not positive definite: all NaN, info names the pivot and keeps its value */
  double np[4] = {1, 2, 2, 1}, nl[4];
  CHECK_EQ_INT(cx_ref_cholesky_xla(2, np, nl), 1);
  CHECK(isnan(nl[0]) && isnan(nl[1]) && isnan(nl[2]) && isnan(nl[3]));
  CHECK_EQ_INT(cx_ref_potrf_lower(2, np), 2);
  CHECK_NEAR(np[3], -3, 0);
  /* a zero last pivot: NaN there only (t / sqrt(t)), but sqrt(t) when alone in its block */
  double zp[4] = {1, 1, 1, 1};
  CHECK_EQ_INT(cx_ref_cholesky_xla(2, zp, nl), 0);
  CHECK(nl[0] == 1 && nl[2] == 1 && nl[1] == 0 && isnan(nl[3]));
  double *big = cx_calloc(129 * 129, sizeof *big), *bl = cx_malloc(sizeof *bl * 129 * 129);
  for (int i = 0; i < 128; i++) big[i * 129 + i] = 4;
  CHECK_EQ_INT(cx_ref_cholesky_xla(129, big, bl), 0);
  CHECK(bl[0] == 2 && bl[129 * 129 - 1] == 0);
  cx_free(big);
  cx_free(bl);
  cx_free(b);
}

TEST(linalg_ref_trsm_every_option) {
  int64_t m = 4, n = 3;
  for (int left = 0; left < 2; left++)
    for (int lower = 0; lower < 2; lower++)
      for (int trans = 0; trans < 3; trans++)
        for (int unit = 0; unit < 2; unit++) {
          int64_t k = left ? m : n;
          double *a = mat(k, k), *b = mat(m, n), *x = copy(b, m * n), op[16];
          for (int64_t i = 0; i < k; i++) a[i * k + i] += 3; /* well conditioned */
          cx_ref_trsm(left, lower, trans, unit, m, n, a, x);
          /* op(a): the triangle read, the unit diagonal, transposed */
          for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++) {
              int64_t r = trans ? j : i, c = trans ? i : j;
              op[i * k + j] = r == c ? (unit ? 1 : a[r * k + c]) : (lower ? r > c : r < c) ? a[r * k + c] : 0;
            }
          double err = 0;
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
              double s = 0;
              for (int64_t t = 0; t < k; t++) s += left ? op[i * k + t] * x[t * n + j] : x[i * n + t] * op[t * k + j];
              err = fmax(err, fabs(s - b[i * n + j]));
            }
          CHECK_MSG(err < 1e-12, "trsm left=%d lower=%d trans=%d unit=%d: %g", left, lower, trans, unit, err);
          cx_free(a);
          cx_free(b);
          cx_free(x);
        }
}
