/* hessenberg_ref.c — LAPACK's reduction to Hessenberg form (gehrd) in complex double
 * (linalg.h), unblocked (gehd2's order), with ?larfg's reflectors, so that its result compares
 * with LAPACK's directly. */
#include <math.h>
#include "interp/linalg.h"

/* ?larfg on alpha and the n - 1 elements x[0], x[s], ...: H^H (alpha, x) = (beta, 0) with
 * beta real, v = (1, x'); returns tau (0 when there is nothing to annihilate). */
static cx_z larfg(int64_t n, cx_z *alpha, cx_z *x, int64_t s) {
  double xnorm = 0;
  for (int64_t i = 0; i + 1 < n; i++) xnorm = hypot(xnorm, cabs(x[i * s]));
  if (xnorm == 0 && cimag(*alpha) == 0) return 0;
  double beta = -copysign(hypot(cabs(*alpha), xnorm), creal(*alpha));
  cx_z tau = (beta - creal(*alpha)) / beta - I * (cimag(*alpha) / beta), scale = 1 / (*alpha - beta);
  for (int64_t i = 0; i + 1 < n; i++) x[i * s] *= scale;
  *alpha = beta;
  return tau;
}

void cx_ref_gehrd(int64_t n, int64_t ilo, int64_t ihi, cx_z *a, cx_z *tau) {
  for (int64_t i = 0; i + 1 < n; i++) tau[i] = 0;
  for (int64_t i = ilo; i < ihi; i++) {
    int64_t len = ihi - i; /* v covers rows i+1 .. ihi of column i */
    cx_z *v = a + (i + 1) * n + i, beta = *v, t = larfg(len, &beta, v + n, n);
    *v = 1;
    for (int64_t r = 0; r <= ihi; r++) { /* A(0:ihi, i+1:ihi) H */
      cx_z w = 0;
      for (int64_t c = 0; c < len; c++) w += a[r * n + i + 1 + c] * v[c * n];
      for (int64_t c = 0; c < len; c++) a[r * n + i + 1 + c] -= t * w * conj(v[c * n]);
    }
    for (int64_t c = i + 1; c < n; c++) { /* H^H A(i+1:ihi, i+1:n-1) */
      cx_z w = 0;
      for (int64_t r = 0; r < len; r++) w += conj(v[r * n]) * a[(i + 1 + r) * n + c];
      for (int64_t r = 0; r < len; r++) a[(i + 1 + r) * n + c] -= conj(t) * v[r * n] * w;
    }
    *v = beta;
    tau[i] = t;
  }
}
