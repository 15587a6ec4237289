/* test_linalg_ref.c — the interpreter's reference linear algebra (interp/linalg.h) checked by
 * what each result must satisfy, on real and complex, random, rank-deficient, tall and wide
 * matrices: P A = L U with LAPACK's pivots, A = Q R with unitary Q, A V = V diag(w),
 * A = U S V^H with orthonormal bases (completed when full), L L^H = A, and op(a) x = b for
 * every option. */
#include <math.h>
#include "interp/linalg.h"
#include "test.h"
#include "util/util.h"

static uint64_t g_seed = 1;
static double rnd(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2 - 1;
}
/* r x c random entries, complex ones when cplx. */
static cx_z *mat(int64_t r, int64_t c, int cplx) {
  cx_z *a = cx_malloc(sizeof *a * (size_t)(r * c + 1));
  for (int64_t i = 0; a && i < r * c; i++) {
    double re = rnd();
    a[i] = cplx ? cx_z_make(re, rnd()) : re;
  }
  return a;
}
static cx_z *copy(const cx_z *a, int64_t n) {
  cx_z *b = cx_malloc(sizeof *b * (size_t)(n + 1));
  for (int64_t i = 0; b && i < n; i++) b[i] = a[i];
  return b;
}
/* max |Q^H Q - I| over the c columns of the r x c matrix q */
static double orth_err(const cx_z *q, int64_t r, int64_t c) {
  double e = 0;
  for (int64_t i = 0; i < c; i++)
    for (int64_t j = 0; j < c; j++) {
      cx_z d = 0;
      for (int64_t k = 0; k < r; k++) d += conj(q[k * c + i]) * q[k * c + j];
      e = fmax(e, cabs(d - (i == j)));
    }
  return e;
}

static void check_lu(int64_t m, int64_t n, int cplx) {
  cx_z *a = mat(m, n, cplx), *lu = copy(a, m * n);
  int64_t k = m < n ? m : n;
  int32_t piv[64];
  CHECK_EQ_INT(cx_ref_getrf(m, n, lu, piv), 0);
  /* apply the row swaps to a, then compare with L U */
  for (int64_t j = 0; j < k; j++) {
    CHECK(piv[j] >= j + 1 && piv[j] <= m);
    for (int64_t c = 0; c < n; c++) {
      cx_z t = a[j * n + c];
      a[j * n + c] = a[(piv[j] - 1) * n + c];
      a[(piv[j] - 1) * n + c] = t;
    }
    for (int64_t i = j + 1; i < m; i++) /* partial pivoting by |re| + |im|: |l| <= 1, sqrt(2) */
      CHECK(cabs(lu[i * n + j]) <= (cplx ? sqrt(2) : 1) + 1e-15);
  }
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      cx_z s = 0;
      for (int64_t t = 0; t <= (i < c ? i : c) && t < k; t++) s += (t == i ? 1 : lu[i * n + t]) * lu[t * n + c];
      err = fmax(err, cabs(s - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "getrf %lldx%lld cplx=%d: |PA - LU| = %g", (long long)m, (long long)n, cplx, err);
  cx_free(a);
  cx_free(lu);
}

TEST(linalg_ref_lu) {
  for (int cplx = 0; cplx < 2; cplx++) {
    check_lu(5, 5, cplx);
    check_lu(7, 3, cplx);
    check_lu(3, 7, cplx);
  }
  /* a zero column: info names the first zero pivot, and the factorization goes on */
  cx_z z[9] = {0, 1, 2, 0, 3, 4, 0, 5, 7};
  int32_t piv[3];
  CHECK_EQ_INT(cx_ref_getrf(3, 3, z, piv), 1);
  CHECK_EQ_INT(piv[0], 1);
  /* the first of equal magnitudes is the pivot, as BLAS's i?amax takes it; complex values by
   * |re| + |im| (2 + 2i beats 3i) */
  cx_z t[4] = {-2, 1, 2, 1};
  cx_ref_getrf(2, 2, t, piv);
  CHECK_EQ_INT(piv[0], 1);
  cx_z c[4] = {3 * I, 1, 2 + 2 * I, 1};
  cx_ref_getrf(2, 2, c, piv);
  CHECK_EQ_INT(piv[0], 2);
}

static void check_qr(int64_t m, int64_t n, int cplx) {
  cx_z *a = mat(m, n, cplx), *qr = copy(a, m * n);
  int64_t k = m < n ? m : n;
  cx_z tau[64];
  cx_ref_geqrf(m, n, qr, tau);
  for (int64_t j = 0; j < k; j++) {
    CHECK(creal(tau[j]) == 0 || (creal(tau[j]) >= 1 && creal(tau[j]) <= 2)); /* LAPACK's range */
    CHECK(cimag(qr[j * n + j]) == 0); /* R's diagonal is real */
  }
  /* Q (m x k) from the reflectors; R the upper k x n part */
  cx_z *q = cx_malloc(sizeof *q * (size_t)(m * k));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < k; j++) q[i * k + j] = qr[i * n + j];
  cx_ref_orgqr(m, k, k, q, tau);
  CHECK_MSG(orth_err(q, m, k) < 1e-13, "orgqr %lldx%lld: Q^H Q != I", (long long)m, (long long)n);
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      cx_z s = 0;
      for (int64_t t = 0; t <= c && t < k; t++) s += q[i * k + t] * qr[t * n + c];
      err = fmax(err, cabs(s - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "geqrf %lldx%lld cplx=%d: |QR - A| = %g", (long long)m, (long long)n, cplx, err);
  /* LAPACK's reflector makes R's diagonal the opposite sign of the pivot's real part */
  CHECK(creal(qr[0]) * creal(a[0]) < 0);
  cx_free(q);
  cx_free(a);
  cx_free(qr);
}

TEST(linalg_ref_qr) {
  for (int cplx = 0; cplx < 2; cplx++) {
    check_qr(6, 4, cplx);
    check_qr(4, 4, cplx);
    check_qr(3, 5, cplx);
  }
  /* orgqr of more columns than reflectors: the identity's columns past k, transformed */
  cx_z a[12] = {1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1}, tau[1];
  cx_z col[4] = {1, 1, 1, 1};
  cx_ref_geqrf(4, 1, col, tau);
  for (int i = 0; i < 4; i++) a[i * 3] = col[i];
  cx_ref_orgqr(4, 3, 1, a, tau);
  CHECK(orth_err(a, 4, 3) < 1e-14);
  CHECK_NEAR(cabs(a[0]), 0.5, 1e-15);
}

static void check_eig(int64_t n, cx_z *a) {
  cx_z *x = copy(a, n * n), *v = cx_malloc(sizeof *v * (size_t)(n * n));
  double w[32];
  CHECK_EQ_INT(cx_ref_syev(n, x, w, v), 0);
  CHECK(orth_err(v, n, n) < 1e-13);
  double err = 0;
  for (int64_t j = 0; j < n; j++) {
    if (j) CHECK(w[j - 1] <= w[j]);
    for (int64_t i = 0; i < n; i++) {
      cx_z s = 0;
      for (int64_t k = 0; k < n; k++) s += a[i * n + k] * v[k * n + j];
      err = fmax(err, cabs(s - w[j] * v[i * n + j]));
    }
  }
  CHECK_MSG(err < 1e-12, "syev %lld: |AV - VW| = %g", (long long)n, err);
  cx_free(x);
  cx_free(v);
}

TEST(linalg_ref_eigen) {
  for (int cplx = 0; cplx < 2; cplx++) {
    cx_z *b = mat(6, 6, cplx), a[36];
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) a[i * 6 + j] = b[i * 6 + j] + conj(b[j * 6 + i]); /* Hermitian */
    check_eig(6, a);
    cx_free(b);
  }
  cx_z rep[9] = {2, 0, 0, 0, 2, 0, 0, 0, -1}; /* a repeated eigenvalue */
  check_eig(3, rep);
  cx_z herm[4] = {1, 2 * I, -2 * I, 1}; /* eigenvalues -1 and 3 */
  check_eig(2, herm);
  cx_z one[1] = {-4};
  check_eig(1, one);
}

static void check_svd(int64_t m, int64_t n, cx_z *a, int full) {
  int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
  cx_z *x = copy(a, m * n), *u = cx_malloc(sizeof *u * (size_t)(m * uc)), *vt = cx_malloc(sizeof *vt * (size_t)(vr * n));
  double s[32];
  CHECK_EQ_INT(cx_ref_gesvd(m, n, x, s, u, vt, full), 0);
  for (int64_t j = 0; j < k; j++) CHECK(s[j] >= 0 && (!j || s[j - 1] >= s[j]));
  CHECK_MSG(orth_err(u, m, uc) < 1e-13, "svd %lldx%lld full=%d: U not orthonormal", (long long)m, (long long)n, full);
  /* the rows of vt */
  double e = 0;
  for (int64_t i = 0; i < vr; i++)
    for (int64_t j = 0; j < vr; j++) {
      cx_z d = 0;
      for (int64_t c = 0; c < n; c++) d += vt[i * n + c] * conj(vt[j * n + c]);
      e = fmax(e, cabs(d - (i == j)));
    }
  CHECK_MSG(e < 1e-13, "svd %lldx%lld full=%d: V not orthonormal", (long long)m, (long long)n, full);
  double err = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < n; c++) {
      cx_z t = 0;
      for (int64_t j = 0; j < k; j++) t += u[i * uc + j] * s[j] * vt[j * n + c];
      err = fmax(err, cabs(t - a[i * n + c]));
    }
  CHECK_MSG(err < 1e-12, "svd %lldx%lld full=%d: |USV^H - A| = %g", (long long)m, (long long)n, full, err);
  double sv[32];
  cx_z *y = copy(a, m * n);
  cx_ref_gesvd(m, n, y, sv, NULL, NULL, 0); /* values only: the same values */
  for (int64_t j = 0; j < k; j++) CHECK_NEAR(s[j], sv[j], 1e-13);
  cx_free(y);
  cx_free(x);
  cx_free(u);
  cx_free(vt);
}

TEST(linalg_ref_svd) {
  for (int full = 0; full < 2; full++)
    for (int cplx = 0; cplx < 2; cplx++) {
      cx_z *a = mat(5, 3, cplx), *b = mat(3, 5, cplx), *c = mat(4, 4, cplx);
      check_svd(5, 3, a, full);
      check_svd(3, 5, b, full);
      check_svd(4, 4, c, full);
      /* rank 1 (the bases are completed past the one nonzero value), and zero */
      cx_z r1[12], z[6] = {0};
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) r1[i * 3 + j] = (i + 1.0) * (j - 1.5) * (cplx ? 1 + I : 1);
      check_svd(4, 3, r1, full);
      check_svd(2, 3, z, full);
      cx_free(a);
      cx_free(b);
      cx_free(c);
    }
}

TEST(linalg_ref_cholesky) {
  int64_t n = 5;
  for (int cplx = 0; cplx < 2; cplx++) {
    cx_z *b = mat(n, n, cplx), a[25], l[25], p[25];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        cx_z s = i == j ? n : 0;
        for (int k = 0; k < n; k++) s += b[i * n + k] * conj(b[j * n + k]);
        a[i * n + j] = s;
      }
    CHECK_EQ_INT(cx_ref_cholesky_xla(n, a, l), 0);
    double err = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        cx_z s = 0;
        for (int k = 0; k < n; k++) s += l[i * n + k] * conj(l[j * n + k]);
        err = fmax(err, cabs(s - a[i * n + j]));
        if (j > i) CHECK(l[i * n + j] == 0);
      }
    CHECK_MSG(err < 1e-12, "cholesky cplx=%d: |LL^H - A| = %g", cplx, err);
    /* potrf agrees on the lower triangle and leaves the upper one */
    for (int i = 0; i < 25; i++) p[i] = a[i];
    CHECK_EQ_INT(cx_ref_potrf_lower(n, p), 0);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) CHECK(cabs(p[i * n + j] - (j > i ? a[i * n + j] : l[i * n + j])) < 1e-13);
    cx_free(b);
  }
  /* not positive definite: all NaN, info names the pivot and keeps its value */
  cx_z np[4] = {1, 2, 2, 1}, nl[4];
  CHECK_EQ_INT(cx_ref_cholesky_xla(2, np, nl), 1);
  CHECK(isnan(creal(nl[0])) && isnan(creal(nl[1])) && isnan(creal(nl[2])) && isnan(creal(nl[3])));
  CHECK_EQ_INT(cx_ref_potrf_lower(2, np), 2);
  CHECK_NEAR(creal(np[3]), -3, 0);
  /* a zero last pivot: NaN there only (t / sqrt(t)), but sqrt(t) when alone in its block */
  cx_z zp[4] = {1, 1, 1, 1};
  CHECK_EQ_INT(cx_ref_cholesky_xla(2, zp, nl), 0);
  CHECK(nl[0] == 1 && nl[2] == 1 && nl[1] == 0 && isnan(creal(nl[3])));
  cx_z *big = cx_calloc(129 * 129, sizeof *big), *bl = cx_malloc(sizeof *bl * 129 * 129);
  for (int i = 0; i < 128; i++) big[i * 129 + i] = 4;
  CHECK_EQ_INT(cx_ref_cholesky_xla(129, big, bl), 0);
  CHECK(bl[0] == 2 && bl[129 * 129 - 1] == 0);
  cx_free(big);
  cx_free(bl);
  /* a Hermitian 2x2: {{4, 2i}, {-2i, 5}} = L L^H with L = {{2, 0}, {-i, 2}} */
  cx_z h[4] = {4, 2 * I, -2 * I, 5}, hl[4];
  CHECK_EQ_INT(cx_ref_cholesky_xla(2, h, hl), 0);
  CHECK(cabs(hl[0] - 2) < 1e-15 && hl[1] == 0 && cabs(hl[2] + I) < 1e-15 && cabs(hl[3] - 2) < 1e-15);
}

TEST(linalg_ref_trsm_every_option) {
  int64_t m = 4, n = 3;
  for (int cplx = 0; cplx < 2; cplx++)
    for (int left = 0; left < 2; left++)
      for (int lower = 0; lower < 2; lower++)
        for (int trans = 0; trans < 3; trans++)
          for (int unit = 0; unit < 2; unit++) {
            int64_t k = left ? m : n;
            cx_z *a = mat(k, k, cplx), *b = mat(m, n, cplx), *x = copy(b, m * n), op[16];
            for (int64_t i = 0; i < k; i++) a[i * k + i] += 3; /* well conditioned */
            cx_ref_trsm(left, lower, trans, unit, m, n, a, x);
            /* op(a): the triangle read, the unit diagonal, transposed, conjugated for adjoint */
            for (int64_t i = 0; i < k; i++)
              for (int64_t j = 0; j < k; j++) {
                int64_t r = trans ? j : i, c = trans ? i : j;
                cx_z v = r == c ? (unit ? 1 : a[r * k + c]) : (lower ? r > c : r < c) ? a[r * k + c] : 0;
                op[i * k + j] = trans == 2 ? conj(v) : v;
              }
            double err = 0;
            for (int64_t i = 0; i < m; i++)
              for (int64_t j = 0; j < n; j++) {
                cx_z s = 0;
                for (int64_t t = 0; t < k; t++) s += left ? op[i * k + t] * x[t * n + j] : x[i * n + t] * op[t * k + j];
                err = fmax(err, cabs(s - b[i * n + j]));
              }
            CHECK_MSG(err < 1e-12, "trsm cplx=%d left=%d lower=%d trans=%d unit=%d: %g", cplx, left, lower, trans, unit, err);
            cx_free(a);
            cx_free(b);
            cx_free(x);
          }
}
