/* eig_svd_ref.c — Hermitian eigenproblems and singular values in complex double by Jacobi
 * rotations (linalg.h): slow, simple and accurate, nothing in common with LAPACK's divide and
 * conquer. A complex pair is first made real by a phase on one column (a diagonal unitary),
 * then rotated as in the real algorithm; for real matrices the phases are all +-1. */
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
static void rotate_cols(cx_z *x, int64_t r, int64_t k, int64_t p, int64_t q, double c, double s) {
  for (int64_t i = 0; i < r; i++) {
    cx_z xp = x[i * k + p], xq = x[i * k + q];
    x[i * k + p] = c * xp - s * xq;
    x[i * k + q] = s * xp + c * xq;
  }
}

/* Column q of the r x k matrix x times ph. */
static void scale_col(cx_z *x, int64_t r, int64_t k, int64_t q, cx_z ph) {
  for (int64_t i = 0; i < r; i++) x[i * k + q] *= ph;
}

/* The unit factor that makes z real and non-negative times it: conj(z) / |z| (1 for 0). */
static cx_z unphase(cx_z z) {
  double r = cabs(z);
  return r > 0 ? conj(z) / r : 1;
}

int cx_ref_syev(int64_t n, cx_z *a, double *w, cx_z *v) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i / n == i % n;
  double fro = 0;
  for (int64_t i = 0; i < n * n; i++) fro += creal(a[i] * conj(a[i]));
  int converged = 0;
  for (int sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    double off = 0;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) off += creal(a[p * n + q] * conj(a[p * n + q]));
    converged = !(off > DBL_EPSILON * DBL_EPSILON * fro * 1e-4) || off == 0;
    for (int64_t p = 0; p < n && !converged; p++)
      for (int64_t q = p + 1; q < n; q++) {
        cx_z apq = a[p * n + q];
        if (apq == 0) continue;
        /* D^H A D with D = diag(.., ph at q, ..) makes a[p][q] = |apq| */
        cx_z ph = unphase(apq);
        scale_col(a, n, n, q, ph);
        for (int64_t k = 0; k < n; k++) a[q * n + k] *= conj(ph);
        scale_col(v, n, n, q, ph);
        double r = cabs(apq), c, s;
        rotation((creal(a[q * n + q]) - creal(a[p * n + p])) / (2 * r), &c, &s);
        rotate_cols(a, n, n, p, q, c, s);          /* A J */
        for (int64_t k = 0; k < n; k++) {          /* J^T (A J) */
          cx_z x = a[p * n + k], y = a[q * n + k];
          a[p * n + k] = c * x - s * y;
          a[q * n + k] = s * x + c * y;
        }
        a[p * n + q] = a[q * n + p] = 0;
        a[p * n + p] = creal(a[p * n + p]);
        a[q * n + q] = creal(a[q * n + q]);
        rotate_cols(v, n, n, p, q, c, s);
      }
  }
  /* ascending, each vector with its value */
  int64_t *perm = cx_malloc(sizeof *perm * (size_t)(n + 1));
  cx_z *t = cx_malloc(sizeof *t * (size_t)(n * n + 1));
  if (!perm || !t) {
    cx_free(perm);
    cx_free(t);
    return 1;
  }
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0 && creal(a[perm[j] * n + perm[j]]) < creal(a[perm[j - 1] * n + perm[j - 1]]); j--) {
      int64_t x = perm[j];
      perm[j] = perm[j - 1];
      perm[j - 1] = x;
    }
  memcpy(t, v, sizeof *t * (size_t)(n * n));
  for (int64_t j = 0; j < n; j++) {
    w[j] = creal(a[perm[j] * n + perm[j]]);
    for (int64_t i = 0; i < n; i++) v[i * n + j] = t[i * n + perm[j]];
  }
  cx_free(perm);
  cx_free(t);
  return !converged;
}

/* Column j of the r x k matrix u (columns < j orthonormal) becomes a unit vector orthogonal to
 * them: the first unit vector e_i with a clear component outside their span (twice
 * Gram-Schmidt'ed). Returns 0 if none is found. */
static int complete_column(cx_z *u, int64_t r, int64_t k, int64_t j) {
  for (int64_t e = 0; e < r; e++) {
    for (int64_t i = 0; i < r; i++) u[i * k + j] = i == e;
    for (int pass = 0; pass < 2; pass++)
      for (int64_t c = 0; c < j; c++) {
        cx_z d = 0;
        for (int64_t i = 0; i < r; i++) d += conj(u[i * k + c]) * u[i * k + j];
        for (int64_t i = 0; i < r; i++) u[i * k + j] -= d * u[i * k + c];
      }
    double nrm = 0;
    for (int64_t i = 0; i < r; i++) nrm += creal(u[i * k + j] * conj(u[i * k + j]));
    if (nrm > 0.25) {
      nrm = sqrt(nrm);
      for (int64_t i = 0; i < r; i++) u[i * k + j] /= nrm;
      return 1;
    }
  }
  return 0;
}

/* m >= n: a (m x n) = u diag(s) v^H with u m x ucols (n or m) and v n x n, either NULL when
 * not wanted; a is overwritten. Returns 0, or 1 if it did not converge or ran out of memory. */
static int svd_tall(int64_t m, int64_t n, cx_z *a, double *s, cx_z *u, int64_t ucols, cx_z *v) {
  cx_z *rot = cx_malloc(sizeof *rot * (size_t)(n * n + 1));
  double *nrm = cx_malloc(sizeof *nrm * (size_t)(n + 1));
  int64_t *perm = cx_malloc(sizeof *perm * (size_t)(n + 1));
  if (!rot || !perm || !nrm) {
    cx_free(rot);
    cx_free(nrm);
    cx_free(perm);
    return 1;
  }
  for (int64_t i = 0; i < n * n; i++) rot[i] = i / n == i % n;
  int converged = 0;
  for (int sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    converged = 1;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double al = 0, be = 0;
        cx_z ga = 0;
        for (int64_t i = 0; i < m; i++) {
          al += creal(a[i * n + p] * conj(a[i * n + p]));
          be += creal(a[i * n + q] * conj(a[i * n + q]));
          ga += conj(a[i * n + p]) * a[i * n + q];
        }
        double g = cabs(ga);
        if (g == 0 || !(g > DBL_EPSILON * sqrt(al * be))) continue;
        converged = 0;
        /* a phase on column q makes a_p^H a_q = |ga|, then the real rotation */
        cx_z ph = unphase(ga);
        scale_col(a, m, n, q, ph);
        scale_col(rot, n, n, q, ph);
        double c, sn;
        rotation((be - al) / (2 * g), &c, &sn);
        rotate_cols(a, m, n, p, q, c, sn);
        rotate_cols(rot, n, n, p, q, c, sn);
      }
  }
  /* the values are the column norms, largest first; vectors follow their value */
  for (int64_t j = 0; j < n; j++) {
    double x = 0;
    for (int64_t i = 0; i < m; i++) x += creal(a[i * n + j] * conj(a[i * n + j]));
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
  cx_free(nrm);
  cx_free(perm);
  return !converged || !ok;
}

int cx_ref_gesvd(int64_t m, int64_t n, cx_z *a, double *s, cx_z *u, cx_z *vt, int full) {
  int64_t k = m < n ? m : n, big = m < n ? n : m;
  int want = u && vt;
  /* the tall problem: a itself, or its adjoint a^H = V S U^H (then u and vt trade places) */
  cx_z *t = cx_malloc(sizeof *t * (size_t)(m * n + big * big + k * k + 1));
  if (!t) return 1;
  cx_z *bu = t + m * n, *bv = bu + big * big;
  int64_t ucols = full ? big : k;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      if (m >= n) t[i * n + j] = a[i * n + j];
      else t[j * m + i] = conj(a[i * n + j]);
    }
  int r = svd_tall(big, k, t, s, want ? bu : NULL, ucols, want ? bv : NULL);
  if (want && m >= n) { /* u = bu (m x ucols); vt = bv^H (n x n) */
    memcpy(u, bu, sizeof *u * (size_t)(m * ucols));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = conj(bv[j * n + i]);
  } else if (want) { /* a = bv S bu^H: u = bv (m x m); vt = bu^H (ucols x n) */
    memcpy(u, bv, sizeof *u * (size_t)(m * m));
    for (int64_t i = 0; i < ucols; i++)
      for (int64_t j = 0; j < n; j++) vt[i * n + j] = conj(bu[j * ucols + i]);
  }
  cx_free(t);
  return r;
}
