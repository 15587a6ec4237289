/* hessenberg_ref.c — LAPACK's reductions by similarity to Hessenberg form (gehrd) and of a
 * Hermitian matrix to tridiagonal form (sytrd/hetrd) in complex double (linalg.h), unblocked
 * (gehd2's and hetd2's order), with ?larfg's reflectors, so that their results compare with
 * LAPACK's directly. */
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

/* The Hermitian part of sytrd's step on the len x len s (row stride n), of which only the
 * triangle `lower` names is read or written (the diagonal's real part): with the reflector v
 * and factor t, x = t S v, w = x - t/2 (x^H v) v, then S -= v w^H + w v^H. x is scratch. */
static void hermitian_update(int64_t len, int64_t n, cx_z *s, const cx_z *v, int64_t vs, cx_z t, int lower, cx_z *x) {
#define S_AT(r, c) ((r) == (c) ? creal(s[(r) * n + (c)]) : (lower == ((r) > (c)) ? s[(r) * n + (c)] : conj(s[(c) * n + (r)])))
  cx_z dot = 0;
  for (int64_t r = 0; r < len; r++) {
    x[r] = 0;
    for (int64_t c = 0; c < len; c++) x[r] += S_AT(r, c) * v[c * vs];
    x[r] *= t;
    dot += conj(x[r]) * v[r * vs];
  }
#undef S_AT
  cx_z h = -0.5 * t * dot;
  for (int64_t r = 0; r < len; r++) x[r] += h * v[r * vs];
  for (int64_t r = 0; r < len; r++)
    for (int64_t c = lower ? 0 : r; c <= (lower ? r : len - 1); c++) {
      cx_z u = v[r * vs] * conj(x[c]) + x[r] * conj(v[c * vs]);
      s[r * n + c] = r == c ? creal(s[r * n + c]) - creal(u) : s[r * n + c] - u;
    }
}

void cx_ref_sytrd(int lower, int64_t n, cx_z *a, double *d, double *e, cx_z *tau, cx_z *x) {
  if (n == 0) return;
  int64_t first = lower ? 0 : n - 1;
  a[first * n + first] = creal(a[first * n + first]);
  for (int64_t s = 0; s + 1 < n; s++) {
    /* lower: reflector i = s annihilates A(i+2.., i), v = (1, ...) in rows i+1..; upper:
     * i = n-2-s annihilates A(0..i-1, i+1), v = (..., 1) in rows 0..i of column i+1 */
    int64_t i = lower ? s : n - 2 - s, len = lower ? n - 1 - i : i + 1;
    cx_z *head = lower ? a + (i + 1) * n + i : a + i * n + i + 1, *v = lower ? head : a + i + 1;
    cx_z alpha = *head, t = larfg(len, &alpha, lower ? head + n : v, n);
    e[i] = creal(alpha);
    if (t != 0) {
      *head = 1;
      hermitian_update(len, n, lower ? a + (i + 1) * n + i + 1 : a, v, n, t, lower, x);
    } else {
      int64_t j = lower ? i + 1 : i;
      a[j * n + j] = creal(a[j * n + j]);
    }
    *head = e[i];
    tau[i] = t;
  }
  for (int64_t i = 0; i < n; i++) d[i] = creal(a[i * n + i]);
}
