/* tridiag_ref.c — the tridiagonal solves in complex double (linalg.h): LAPACK's gtsv (Gaussian
 * elimination with partial pivoting between neighbouring rows, in gtsv's order, so that the
 * factor it leaves in dl, d and du compares with LAPACK's directly), and jax's perturbed solve
 * (tridiagonal_solve_perturbed_ffi), whose rule rt/gtsv_perturbed.c states. */
#include <math.h>
#include "interp/linalg.h"
#include "util/util.h"

/* gtsv's pivoting measure: |re| + |im| (|x| for a real x). */
static double cabs1(cx_z x) { return fabs(creal(x)) + fabs(cimag(x)); }

int cx_ref_gtsv(int64_t n, int64_t nrhs, cx_z *dl, cx_z *d, cx_z *du, cx_z *b) {
  for (int64_t i = 0; i + 1 < n; i++) {
    cx_z *r0 = b + i * nrhs, *r1 = r0 + nrhs;
    if (cabs1(d[i]) >= cabs1(dl[i])) { /* row i stays the pivot row */
      if (d[i] == 0) return (int)(i + 1);
      cx_z f = dl[i] / d[i];
      d[i + 1] -= f * du[i];
      for (int64_t j = 0; j < nrhs; j++) r1[j] -= f * r0[j];
      if (i + 2 < n) dl[i] = 0; /* dl[i] becomes U's second superdiagonal */
    } else { /* rows i and i+1 swap: U gains the fill-in U[i][i+2] in dl[i] */
      cx_z f = d[i] / dl[i], t = d[i + 1];
      d[i] = dl[i];
      d[i + 1] = du[i] - f * t;
      if (i + 2 < n) {
        dl[i] = du[i + 1];
        du[i + 1] = -f * dl[i];
      }
      du[i] = t;
      for (int64_t j = 0; j < nrhs; j++) {
        cx_z x = r0[j];
        r0[j] = r1[j];
        r1[j] = x - f * r1[j];
      }
    }
  }
  if (n > 0 && d[n - 1] == 0) return (int)n;
  for (int64_t j = 0; j < nrhs; j++)
    for (int64_t i = n - 1; i >= 0; i--) {
      cx_z x = b[i * nrhs + j];
      if (i + 1 < n) x -= du[i] * b[(i + 1) * nrhs + j];
      if (i + 2 < n) x -= dl[i] * b[(i + 2) * nrhs + j];
      b[i * nrhs + j] = x / d[i];
    }
  return 0;
}

/* ---- jax's perturbed solve: factor first (U's three diagonals, each step's multiplier and
 * whether it swapped rows), then L's forward solve, then U's back substitution with xLAGTS's
 * perturbation of small pivots. jaxlib fuses the three; this keeps them apart, as LAPACK's
 * xLAGTF and xLAGTS do. ---- */

/* xLAGTS's rule for pivot p of row r (nrhs values): returns the pivot to divide by, after
 * perturbing it by delta, 2 delta, 4 delta, ... (sign of re p) while r / p could overflow, or
 * scaling p and r by 1 / tiny when p is below tiny and r small enough for that. */
static cx_z settle_pivot(cx_z p, cx_z *r, int64_t nrhs, double delta, double tiny) {
  double big = 0;
  for (int64_t j = 0; j < nrhs; j++) big = fmax(big, cabs(r[j]));
  delta = copysign(fmax(fabs(delta), tiny), creal(p));
  for (double m = cabs(p); m < 1; m = cabs(p)) {
    int overflow = m < tiny ? m == 0 || big * tiny > m : big > m / tiny;
    if (!overflow) {
      if (m < tiny) {
        p /= tiny;
        for (int64_t j = 0; j < nrhs; j++) r[j] /= tiny;
      }
      break;
    }
    p += delta;
    delta *= 2;
  }
  return p;
}

void cx_ref_gtsv_perturbed(int64_t n, int64_t nrhs, const cx_z *dl, const cx_z *d, const cx_z *du, cx_z *b,
                           double eps, double tiny) {
  if (n == 0) return;
  if (n == 1) {
    cx_z p = settle_pivot(d[0], b, nrhs, eps * cabs(d[0]), tiny);
    for (int64_t j = 0; j < nrhs; j++) b[j] /= p;
    return;
  }
  cx_z *u = cx_malloc(sizeof *u * (size_t)(4 * n + nrhs));
  unsigned char *swap = cx_malloc((size_t)n);
  if (!u || !swap) { /* no scratch: NaN, which no solve gives */
    for (int64_t i = 0; i < n * nrhs; i++) b[i] = cx_z_make(NAN, NAN);
    cx_free(u);
    cx_free(swap);
    return;
  }
  cx_z *diag = u, *sup1 = u + n, *sup2 = u + 2 * n, *mult = u + 3 * n, *r = u + 4 * n;
  /* factor: row k+1 against the pivot row k, each row's 1-norm (within the matrix) its scale */
  diag[0] = d[0], sup1[0] = du[0];
  double scale = cabs(d[0]) + cabs(du[0]), maxu = fmax(cabs(d[0]), cabs(du[0]));
  for (int64_t k = 0; k + 1 < n; k++) {
    double next = cabs(dl[k + 1]) + cabs(d[k + 1]) + (k + 2 < n ? cabs(du[k + 1]) : 0);
    cx_z up = k + 2 < n ? du[k + 1] : 0;
    sup2[k] = 0, swap[k] = 0, mult[k] = 0;
    diag[k + 1] = d[k + 1], sup1[k + 1] = k + 2 < n ? du[k + 1] : 0;
    double here = diag[k] == 0 ? 0 : cabs(diag[k]) / scale;
    if (dl[k + 1] == 0 || cabs(dl[k + 1]) / next <= here) {
      if (dl[k + 1] != 0) mult[k] = dl[k + 1] / diag[k], diag[k + 1] -= mult[k] * sup1[k];
      scale = next;
    } else {
      swap[k] = 1;
      mult[k] = diag[k] / dl[k + 1];
      diag[k + 1] = sup1[k] - mult[k] * d[k + 1];
      diag[k] = dl[k + 1], sup1[k] = d[k + 1], sup2[k] = up, sup1[k + 1] = -mult[k] * up;
      scale = cabs(diag[k + 1]) + cabs(sup1[k + 1]);
    }
    if (k + 2 < n) maxu = fmax(maxu, fmax(cabs(diag[k]), fmax(cabs(sup1[k]), cabs(sup2[k]))));
  }
  maxu = fmax(maxu, cabs(diag[n - 1]));
  /* L's forward solve, step by step as the factorization went */
  for (int64_t k = 0; k + 1 < n; k++)
    for (int64_t j = 0; j < nrhs; j++) {
      cx_z *x0 = &b[k * nrhs + j], *x1 = x0 + nrhs;
      if (swap[k]) {
        cx_z t = *x0;
        *x0 = *x1, *x1 = t - mult[k] * *x1;
      } else if (dl[k + 1] != 0) { /* a zero subdiagonal eliminates nothing (0 * inf is no zero) */
        *x1 -= mult[k] * *x0;
      }
    }
  /* U's back substitution, row by row over all right-hand sides (the perturbation looks at
   * the whole row) */
  for (int64_t k = n - 1; k >= 0; k--) {
    for (int64_t j = 0; j < nrhs; j++) {
      r[j] = b[k * nrhs + j];
      if (k + 1 < n) r[j] -= sup1[k] * b[(k + 1) * nrhs + j];
      if (k + 2 < n) r[j] -= sup2[k] * b[(k + 2) * nrhs + j];
    }
    cx_z p = settle_pivot(diag[k], r, nrhs, eps * maxu, tiny), inv = 1 / p;
    for (int64_t j = 0; j < nrhs; j++) b[k * nrhs + j] = r[j] * inv;
  }
  cx_free(u);
  cx_free(swap);
}
