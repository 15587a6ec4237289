/* lu_qr_ref.c — LU with partial pivoting and Householder QR in double (linalg.h), unblocked,
 * with LAPACK's conventions for pivots and reflectors, so that their results compare with
 * LAPACK's directly. */
#include <math.h>
#include "interp/linalg.h"

int cx_ref_getrf(int64_t m, int64_t n, double *a, int32_t *ipiv) {
  int info = 0;
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; i++)
      if (fabs(a[i * n + j]) > fabs(a[p * n + j])) p = i;
    ipiv[j] = (int32_t)(p + 1);
    if (a[p * n + j] != 0) {
      for (int64_t c = 0; c < n && p != j; c++) {
        double t = a[j * n + c];
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

/* H = I - tau v v^T (v[0] = 1, v[i] = a[(r0 + i) * n + col] below) applied from the left to
 * columns c0..n-1 of rows r0..m-1 of the m x n matrix x. */
static void apply_reflector(int64_t m, int64_t n, const double *a, int64_t an, int64_t r0, int64_t col, double tau,
                            double *x, int64_t c0) {
  if (tau == 0) return;
  for (int64_t c = c0; c < n; c++) {
    double w = x[r0 * n + c];
    for (int64_t i = r0 + 1; i < m; i++) w += a[i * an + col] * x[i * n + c];
    w *= tau;
    x[r0 * n + c] -= w;
    for (int64_t i = r0 + 1; i < m; i++) x[i * n + c] -= w * a[i * an + col];
  }
}

void cx_ref_geqrf(int64_t m, int64_t n, double *a, double *tau) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    /* dlarfg on alpha = a[j][j], x = a[j+1..m-1][j] */
    double alpha = a[j * n + j], xnorm = 0;
    for (int64_t i = j + 1; i < m; i++) xnorm = hypot(xnorm, a[i * n + j]);
    if (xnorm == 0) {
      tau[j] = 0;
    } else {
      double beta = -copysign(hypot(alpha, xnorm), alpha);
      tau[j] = (beta - alpha) / beta;
      double scale = 1 / (alpha - beta);
      for (int64_t i = j + 1; i < m; i++) a[i * n + j] *= scale;
      a[j * n + j] = beta;
    }
    apply_reflector(m, n, a, n, j, j, tau[j], a, j + 1);
  }
}

void cx_ref_orgqr(int64_t m, int64_t n, int64_t k, double *a, const double *tau) {
  /* dorg2r's order: columns past the reflectors start as the identity's; then, right to
   * left, H(j) goes over columns > j, and column j becomes H(j) e_j itself */
  for (int64_t j = k; j < n; j++)
    for (int64_t i = 0; i < m; i++) a[i * n + j] = i == j;
  for (int64_t j = k - 1; j >= 0; j--) {
    if (j < n - 1) apply_reflector(m, n, a, n, j, j, tau[j], a, j + 1);
    for (int64_t i = j + 1; i < m; i++) a[i * n + j] *= -tau[j];
    a[j * n + j] = 1 - tau[j];
    for (int64_t i = 0; i < j; i++) a[i * n + j] = 0;
  }
}
