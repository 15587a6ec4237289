/* eig_svd_ref.c — symmetric eigenproblems and singular values in double by Jacobi rotations
 * (linalg.h): slow, simple and accurate, nothing in common with LAPACK's divide and conquer. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "interp/linalg.h"
#include "util/util.h"

#define MAX_SWEEPS 100

/* The rotation (c, s) with t = tan, for cot 2theta = zeta, the smaller of the two angles. */
static void rotation(double zeta, double *c, double *s) {
  double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
  *c = 1 / sqrt(1 + t * t);
  *s = *c * t;
}

/* Columns p and q of the r x k matrix x (row stride k) become c x_p - s x_q and s x_p + c x_q. */
static void rotate_cols(double *x, int64_t r, int64_t k, int64_t p, int64_t q, double c, double s) {
  for (int64_t i = 0; i < r; i++) {
    double xp = x[i * k + p], xq = x[i * k + q];
    x[i * k + p] = c * xp - s * xq;
    x[i * k + q] = s * xp + c * xq;
  }
}

/* Sorts the n values w (with the columns of the r x n x, when given) ascending or descending. */
static void sort_with_columns(int64_t n, double *w, double *x, int64_t r, int descending) {
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0 && (descending ? w[j] > w[j - 1] : w[j] < w[j - 1]); j--) {
      double t = w[j];
      w[j] = w[j - 1];
      w[j - 1] = t;
      if (x)
        for (int64_t k = 0; k < r; k++) {
          t = x[k * n + j];
          x[k * n + j] = x[k * n + j - 1];
          x[k * n + j - 1] = t;
        }
    }
}

int cx_ref_syev(int64_t n, double *a, double *w, double *v) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i / n == i % n;
  double fro = 0;
  for (int64_t i = 0; i < n * n; i++) fro += a[i] * a[i];
  int converged = 0;
  for (int sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    double off = 0;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
    converged = !(off > DBL_EPSILON * DBL_EPSILON * fro * 1e-4) || off == 0;
    for (int64_t p = 0; p < n && !converged; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double apq = a[p * n + q];
        if (apq == 0) continue;
        double c, s;
        rotation((a[q * n + q] - a[p * n + p]) / (2 * apq), &c, &s);
        rotate_cols(a, n, n, p, q, c, s);          /* A J */
        for (int64_t k = 0; k < n; k++) {          /* J^T (A J) */
          double x = a[p * n + k], y = a[q * n + k];
          a[p * n + k] = c * x - s * y;
          a[q * n + k] = s * x + c * y;
        }
        a[p * n + q] = a[q * n + p] = 0;
        rotate_cols(v, n, n, p, q, c, s);
      }
  }
  for (int64_t i = 0; i < n; i++) w[i] = a[i * n + i];
  sort_with_columns(n, w, v, n, 0);
  return !converged;
}

/* Column j of the r x k matrix u (columns < j orthonormal) becomes a unit vector orthogonal to
 * them: the first unit vector e_i with a clear component outside their span (twice
 * Gram-Schmidt'ed). Returns 0 if none is found. */
static int complete_column(double *u, int64_t r, int64_t k, int64_t j) {
  for (int64_t e = 0; e < r; e++) {
    for (int64_t i = 0; i < r; i++) u[i * k + j] = i == e;
    for (int pass = 0; pass < 2; pass++)
      for (int64_t c = 0; c < j; c++) {
        double d = 0;
        for (int64_t i = 0; i < r; i++) d += u[i * k + c] * u[i * k + j];
        for (int64_t i = 0; i < r; i++) u[i * k + j] -= d * u[i * k + c];
      }
    double nrm = 0;
    for (int64_t i = 0; i < r; i++) nrm += u[i * k + j] * u[i * k + j];
    if (nrm > 0.25) {
      nrm = sqrt(nrm);
      for (int64_t i = 0; i < r; i++) u[i * k + j] /= nrm;
      return 1;
    }
  }
  return 0;
}

/* m >= n: a (m x n) = u diag(s) v^T with u m x ucols (n or m) and v n x n, either NULL when
 * not wanted; a is overwritten. Returns 0, or 1 if it did not converge or ran out of memory. */
static int svd_tall(int64_t m, int64_t n, double *a, double *s, double *u, int64_t ucols, double *v) {
  double *rot = cx_malloc(sizeof *rot * (size_t)(n * n + n + 1)), *nrm = rot + n * n;
  int64_t *perm = cx_malloc(sizeof *perm * (size_t)(n + 1));
  if (!rot || !perm) {
    cx_free(rot);
    cx_free(perm);
    return 1;
  }
  for (int64_t i = 0; i < n * n; i++) rot[i] = i / n == i % n;
  int converged = 0;
  for (int sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    converged = 1;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < m; i++) {
          al += a[i * n + p] * a[i * n + p];
          be += a[i * n + q] * a[i * n + q];
          ga += a[i * n + p] * a[i * n + q];
        }
        if (ga == 0 || !(fabs(ga) > DBL_EPSILON * sqrt(al * be))) continue;
        converged = 0;
        double c, sn;
        rotation((be - al) / (2 * ga), &c, &sn);
        rotate_cols(a, m, n, p, q, c, sn);
        rotate_cols(rot, n, n, p, q, c, sn);
      }
  }
  /* the values are the column norms, largest first; vectors follow their value */
  for (int64_t j = 0; j < n; j++) {
    double x = 0;
    for (int64_t i = 0; i < m; i++) x += a[i * n + j] * a[i * n + j];
    nrm[j] = sqrt(x);
    perm[j] = j;
  }
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0 && nrm[perm[j]] > nrm[perm[j - 1]]; j--) {
      int64_t t = perm[j];
      perm[j] = perm[j - 1];
      perm[j - 1] = t;
    }
  for (int64_t j = 0; j < n; j++) s[j] = nrm[perm[j]];
  for (int64_t j = 0; v && j < n; j++)
    for (int64_t i = 0; i < n; i++) v[i * n + j] = rot[i * n + perm[j]];
  int ok = 1;
  for (int64_t j = 0; u && ok && j < ucols; j++) {
    if (j < n && s[j] > DBL_MIN)
      for (int64_t i = 0; i < m; i++) u[i * ucols + j] = a[i * n + perm[j]] / s[j];
    else
      ok = complete_column(u, m, ucols, j);
  }
  cx_free(rot);
  cx_free(perm);
  return !converged || !ok;
}

int cx_ref_gesvd(int64_t m, int64_t n, double *a, double *s, double *u, double *vt, int full) {
  int64_t k = m < n ? m : n, big = m < n ? n : m;
  int want = u && vt;
  /* the tall problem: a itself, or its transpose (then u and vt trade places) */
  double *t = cx_malloc(sizeof *t * (size_t)(m * n + big * big + k * k + 1));
  if (!t) return 1;
  double *bu = t + m * n, *bv = bu + big * big;
  int64_t ucols = full ? big : k;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) t[m >= n ? i * n + j : j * m + i] = a[i * n + j];
  int r = svd_tall(big, k, t, s, want ? bu : NULL, ucols, want ? bv : NULL);
  if (want && m >= n) { /* u = bu (m x ucols); vt = bv^T (n x n) */
    memcpy(u, bu, sizeof *u * (size_t)(m * ucols));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = bv[j * n + i];
  } else if (want) { /* u = bv (m x m); vt = bu^T (ucols x n) */
    memcpy(u, bv, sizeof *u * (size_t)(m * m));
    for (int64_t i = 0; i < ucols; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = bu[j * ucols + i];
  }
  cx_free(t);
  return r;
}
