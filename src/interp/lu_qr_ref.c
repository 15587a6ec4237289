/* lu_qr_ref.c — LU with partial pivoting and Householder QR in complex double (linalg.h),
 * unblocked, with LAPACK's conventions for pivots and reflectors, so that their results
 * compare with LAPACK's directly. */
#include <math.h>
#include "interp/linalg.h"

/* BLAS's i?amax measure: |re| + |im|. */
static double cabs1(cx_z x) { return fabs(creal(x)) + fabs(cimag(x)); }

int cx_ref_getrf(int64_t m, int64_t n, cx_z *a, int32_t *ipiv) {
  int info = 0;
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; i++)
      if (cabs1(a[i * n + j]) > cabs1(a[p * n + j])) p = i;
    ipiv[j] = (int32_t)(p + 1);
    if (a[p * n + j] != 0) {
      for (int64_t c = 0; c < n && p != j; c++) {
        cx_z t = a[j * n + c];
        a[j * n + c] = a[p * n + c];
        a[p * n + c] = t;
      }
      for (int64_t i = j + 1; i < m; i++) a[i * n + j] /= a[j * n + j];
    } else if (!info) {
      info = (int)(j + 1);
    }
    for (int64_t i = j + 1; i < m; i++)
      for (int64_t c = j + 1; c < n; c++) a[i * n + c] -= a[i * n + j] * a[j * n + c];
  }
  return info;
}

/* H = I - tau v v^H (v[0] = 1, v[i] = a[(r0 + i) * an + col] below) applied from the left to
 * columns c0..n-1 of rows r0..m-1 of the m x n matrix x. */
static void apply_reflector(int64_t m, int64_t n, const cx_z *a, int64_t an, int64_t r0, int64_t col, cx_z tau, cx_z *x,
                            int64_t c0) {
  if (tau == 0) return;
  for (int64_t c = c0; c < n; c++) {
    cx_z w = x[r0 * n + c];
    for (int64_t i = r0 + 1; i < m; i++) w += conj(a[i * an + col]) * x[i * n + c];
    w *= tau;
    x[r0 * n + c] -= w;
    for (int64_t i = r0 + 1; i < m; i++) x[i * n + c] -= w * a[i * an + col];
  }
}

/* Step j of Householder QR: reflector j from column j (?larfg on alpha = a[j][j], x =
 * a[j+1..m-1][j]), and H^H applied to the columns right of it. */
static void qr_step(int64_t m, int64_t n, cx_z *a, cx_z *tau, int64_t j) {
  cx_z alpha = a[j * n + j];
  double xnorm = 0;
  for (int64_t i = j + 1; i < m; i++) xnorm = hypot(xnorm, cabs(a[i * n + j]));
  if (xnorm == 0 && cimag(alpha) == 0) {
    tau[j] = 0;
  } else {
    double beta = -copysign(hypot(cabs(alpha), xnorm), creal(alpha));
    tau[j] = (beta - creal(alpha)) / beta - I * (cimag(alpha) / beta);
    cx_z scale = 1 / (alpha - beta);
    for (int64_t i = j + 1; i < m; i++) a[i * n + j] *= scale;
    a[j * n + j] = beta;
  }
  apply_reflector(m, n, a, n, j, j, conj(tau[j]), a, j + 1); /* H^H from the left */
}

void cx_ref_geqrf(int64_t m, int64_t n, cx_z *a, cx_z *tau) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) qr_step(m, n, a, tau, j);
}

static void swap_columns(int64_t m, int64_t n, cx_z *a, int64_t p, int64_t q) {
  for (int64_t i = 0; i < m && p != q; i++) {
    cx_z t = a[i * n + p];
    a[i * n + p] = a[i * n + q];
    a[i * n + q] = t;
  }
}

void cx_ref_geqp3(int64_t m, int64_t n, cx_z *a, int32_t *jpvt, cx_z *tau) {
  /* geqp3's order: the marked columns move to the front, in order, each swapping with the
   * column at the front's place; every column's jpvt becomes its 1-based origin */
  int64_t nfxd = 0, k = m < n ? m : n;
  for (int64_t j = 0; j < n; j++) {
    if (jpvt[j] != 0) {
      swap_columns(m, n, a, j, nfxd);
      jpvt[j] = j == nfxd ? (int32_t)(j + 1) : jpvt[nfxd];
      jpvt[nfxd++] = (int32_t)(j + 1);
    } else {
      jpvt[j] = (int32_t)(j + 1);
    }
  }
  for (int64_t j = 0; j < k; j++) {
    if (j >= nfxd) { /* the free column with the largest norm below row j, the first of ties */
      int64_t p = j;
      double best = -1;
      for (int64_t c = j; c < n; c++) {
        double nrm = 0;
        for (int64_t i = j; i < m; i++) nrm = hypot(nrm, cabs(a[i * n + c]));
        if (nrm > best) best = nrm, p = c;
      }
      swap_columns(m, n, a, j, p);
      int32_t t = jpvt[j];
      jpvt[j] = jpvt[p];
      jpvt[p] = t;
    }
    qr_step(m, n, a, tau, j);
  }
}

void cx_ref_orgqr(int64_t m, int64_t n, int64_t k, cx_z *a, const cx_z *tau) {
  /* ?org2r/?ung2r's order: columns past the reflectors start as the identity's; then, right
   * to left, H(j) goes over columns > j, and column j becomes H(j) e_j itself */
  for (int64_t j = k; j < n; j++)
    for (int64_t i = 0; i < m; i++) a[i * n + j] = i == j;
  for (int64_t j = k - 1; j >= 0; j--) {
    if (j < n - 1) apply_reflector(m, n, a, n, j, j, tau[j], a, j + 1);
    for (int64_t i = j + 1; i < m; i++) a[i * n + j] *= -tau[j];
    a[j * n + j] = 1 - tau[j];
    for (int64_t i = 0; i < j; i++) a[i * n + j] = 0;
  }
}

void cx_ref_ormqr(int left, int trans, int64_t m, int64_t n, int64_t k, const cx_z *a, int64_t ka, const cx_z *tau,
                  cx_z *c) {
  /* Q = H(0) ... H(k-1): Q c and c Q^H apply H(k-1) first, Q^H c and c Q H(0) first */
  int down = left == !trans;
  for (int64_t s = 0; s < k; s++) {
    int64_t j = down ? k - 1 - s : s, nq = left ? m : n;
    cx_z t = trans ? conj(tau[j]) : tau[j];
    for (int64_t o = 0; o < (left ? n : m); o++) { /* each column (left) or row (right) of c */
      cx_z w = 0;
      for (int64_t i = j; i < nq; i++) {
        cx_z v = i == j ? 1 : a[i * ka + j], x = left ? c[i * n + o] : c[o * n + i];
        w += left ? conj(v) * x : x * v;
      }
      for (int64_t i = j; i < nq; i++) {
        cx_z v = i == j ? 1 : a[i * ka + j];
        if (left) c[i * n + o] -= t * v * w;
        else c[o * n + i] -= t * w * conj(v);
      }
    }
  }
}
