/* tridiag_ref.c — the tridiagonal solve of LAPACK's gtsv in complex double (linalg.h):
 * Gaussian elimination with partial pivoting between neighbouring rows, in gtsv's order, so
 * that the factor it leaves in dl, d and du compares with LAPACK's directly. */
#include <math.h>
#include "interp/linalg.h"

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
