/* linalg_ref.c — Cholesky factorization and triangular solves in complex double (linalg.h). */
#include <math.h>
#include "interp/linalg.h"

/* XLA's CholeskyExpander factors 128 columns at a time. */
#define XLA_CHOLESKY_BLOCK 128

int cx_ref_cholesky_xla(int64_t n, const cx_z *a, cx_z *l) {
  int failed = 0;
  for (int64_t k = 0; k < n * n; k++) l[k] = 0;
  for (int64_t j = 0; j < n && !failed; j++) {
    int64_t b0 = j / XLA_CHOLESKY_BLOCK * XLA_CHOLESKY_BLOCK;
    int64_t bend = b0 + XLA_CHOLESKY_BLOCK < n ? b0 + XLA_CHOLESKY_BLOCK : n;
    cx_z t = a[j * n + j];
    for (int64_t k = 0; k < j; k++) t -= l[j * n + k] * conj(l[j * n + k]);
    double s = sqrt(creal(t));
    failed = isnan(s);
    /* in a block, the unblocked loop divides the whole column (diagonal included) by s; rows
     * below the block solve against the factored diagonal entry (its adjoint) */
    cx_z d = bend - b0 == 1 ? (cx_z)s : t / s;
    l[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      cx_z x = a[i * n + j];
      for (int64_t k = 0; k < j; k++) x -= l[i * n + k] * conj(l[j * n + k]);
      l[i * n + j] = i < bend ? x / s : x / conj(d);
    }
  }
  if (failed)
    for (int64_t k = 0; k < n * n; k++) l[k] = NAN;
  return failed;
}

int cx_ref_potrf_lower(int64_t n, cx_z *a) {
  for (int64_t j = 0; j < n; j++) {
    double t = creal(a[j * n + j]);
    for (int64_t k = 0; k < j; k++) t -= creal(a[j * n + k] * conj(a[j * n + k]));
    if (!(t > 0)) { /* LAPACK's test: not positive, or NaN */
      a[j * n + j] = t;
      return (int)(j + 1);
    }
    double d = sqrt(t);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      cx_z x = a[i * n + j];
      for (int64_t k = 0; k < j; k++) x -= a[i * n + k] * conj(a[j * n + k]);
      a[i * n + j] = x / d;
    }
  }
  return 0;
}

/* op(a)[i][j] of the k x k matrix a, as the solve reads it: 0 outside the triangle given,
 * 1 on a unit diagonal; conjugated for the adjoint. */
static cx_z op_at(const cx_z *a, int64_t k, int lower, int trans, int unit, int64_t i, int64_t j) {
  if (trans) {
    int64_t t = i;
    i = j;
    j = t;
  }
  cx_z v = i == j ? (unit ? 1.0 : a[i * k + j]) : (lower ? i > j : i < j) ? a[i * k + j] : 0.0;
  return trans == 2 ? conj(v) : v;
}

void cx_ref_trsm(int left, int lower, int trans, int unit, int64_t m, int64_t n, const cx_z *a, cx_z *b) {
  int op_lower = lower != (trans != 0); /* op(a) is lower triangular */
  if (left) { /* op(a) x = b, one column of b at a time */
    for (int64_t c = 0; c < n; c++)
      for (int64_t s = 0; s < m; s++) {
        int64_t i = op_lower ? s : m - 1 - s;
        cx_z x = b[i * n + c];
        for (int64_t k = op_lower ? 0 : i + 1; k < (op_lower ? i : m); k++) x -= op_at(a, m, lower, trans, unit, i, k) * b[k * n + c];
        b[i * n + c] = x / op_at(a, m, lower, trans, unit, i, i);
      }
    return;
  }
  /* x op(a) = b, one row of b at a time: x_j op(a)[j][j] = b_j - sum over the other k */
  for (int64_t r = 0; r < m; r++)
    for (int64_t s = 0; s < n; s++) {
      int64_t j = op_lower ? n - 1 - s : s;
      cx_z x = b[r * n + j];
      for (int64_t k = op_lower ? j + 1 : 0; k < (op_lower ? n : j); k++) x -= b[r * n + k] * op_at(a, n, lower, trans, unit, k, j);
      b[r * n + j] = x / op_at(a, n, lower, trans, unit, j, j);
    }
}
