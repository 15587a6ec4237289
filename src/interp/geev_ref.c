/* geev_ref.c — eigenvalues and eigenvectors of a general matrix in complex double (linalg.h),
 * and the complex Schur form on its own (gees):
 * the textbook complex Schur form A = Z T Z^H (Householder reduction to Hessenberg form, then
 * single-shift QR steps with Givens rotations and Wilkinson's shift, deflating at the bottom),
 * and the eigenvectors of the triangular T by substitution, taken back by Z. Nothing in common
 * with LAPACK's balanced, double-shift, blocked geev, so each checks the other; in particular
 * the eigenvalues come in this Schur form's order, not LAPACK's. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "interp/linalg.h"
#include "util/util.h"

#define MAX_STEPS_PER_VALUE 60

void cx_ref_hessenberg(int64_t n, cx_z *a, cx_z *z, cx_z *v) {
  for (int64_t i = 0; i < n * n; i++) z[i] = i / n == i % n;
  for (int64_t k = 0; k + 2 < n; k++) {
    double norm = 0;
    for (int64_t i = k + 1; i < n; i++) norm += creal(a[i * n + k] * conj(a[i * n + k]));
    norm = sqrt(norm);
    if (norm == 0) continue;
    /* v = x + phase(x0) |x| e0, H = I - 2 v v^H / v^H v maps x to a multiple of e0 */
    cx_z x0 = a[(k + 1) * n + k], ph = cabs(x0) > 0 ? x0 / cabs(x0) : 1;
    double vv = 0;
    for (int64_t i = k + 1; i < n; i++) v[i] = a[i * n + k];
    v[k + 1] += ph * norm;
    for (int64_t i = k + 1; i < n; i++) vv += creal(v[i] * conj(v[i]));
    for (int64_t j = 0; j < n; j++) { /* a = H a */
      cx_z d = 0;
      for (int64_t i = k + 1; i < n; i++) d += conj(v[i]) * a[i * n + j];
      d *= 2 / vv;
      for (int64_t i = k + 1; i < n; i++) a[i * n + j] -= v[i] * d;
    }
    for (int64_t i = 0; i < n; i++) { /* a = a H and z = z H */
      cx_z da = 0, dz = 0;
      for (int64_t j = k + 1; j < n; j++) da += a[i * n + j] * v[j], dz += z[i * n + j] * v[j];
      da *= 2 / vv, dz *= 2 / vv;
      for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= da * conj(v[j]), z[i * n + j] -= dz * conj(v[j]);
    }
    for (int64_t i = k + 2; i < n; i++) a[i * n + k] = 0;
  }
}

/* The unitary G = [g0 g1; g2 g3] with G [x; y] = [r; 0], r = |(x, y)|. */
static void givens(cx_z x, cx_z y, cx_z g[4]) {
  double r = hypot(cabs(x), cabs(y));
  if (r == 0) {
    g[0] = g[3] = 1, g[1] = g[2] = 0;
    return;
  }
  g[0] = conj(x) / r, g[1] = conj(y) / r, g[2] = -y / r, g[3] = x / r;
}

/* The eigenvalue of the 2 x 2 [a b; c d] nearer d (Wilkinson's shift). */
static cx_z wilkinson(cx_z a, cx_z b, cx_z c, cx_z d) {
  cx_z h = (a - d) / 2, s = csqrt(h * h + b * c);
  cx_z m1 = (a + d) / 2 + s, m2 = (a + d) / 2 - s;
  return cabs(m1 - d) < cabs(m2 - d) ? m1 : m2;
}

/* One shifted QR step on the active block lo..hi of the Hessenberg t: t - mu I = Q R, t = R Q +
 * mu I, applied to the whole t (rows' right parts, columns' upper parts) and to z. */
static void qr_step(int64_t n, cx_z *t, cx_z *z, int64_t lo, int64_t hi, cx_z mu, cx_z (*g)[4]) {
  for (int64_t k = lo; k <= hi; k++) t[k * n + k] -= mu;
  for (int64_t k = lo; k < hi; k++) {
    givens(t[k * n + k], t[(k + 1) * n + k], g[k]);
    for (int64_t j = k; j < n; j++) {
      cx_z u = t[k * n + j], v = t[(k + 1) * n + j];
      t[k * n + j] = g[k][0] * u + g[k][1] * v;
      t[(k + 1) * n + j] = g[k][2] * u + g[k][3] * v;
    }
  }
  for (int64_t k = lo; k < hi; k++) {
    int64_t last = k + 2 < hi ? k + 2 : hi;
    for (int64_t i = 0; i <= last; i++) {
      cx_z p = t[i * n + k], q = t[i * n + k + 1];
      t[i * n + k] = p * conj(g[k][0]) + q * conj(g[k][1]);
      t[i * n + k + 1] = p * conj(g[k][2]) + q * conj(g[k][3]);
    }
    for (int64_t i = 0; i < n; i++) {
      cx_z p = z[i * n + k], q = z[i * n + k + 1];
      z[i * n + k] = p * conj(g[k][0]) + q * conj(g[k][1]);
      z[i * n + k + 1] = p * conj(g[k][2]) + q * conj(g[k][3]);
    }
  }
  for (int64_t k = lo; k <= hi; k++) t[k * n + k] += mu;
}

/* The Schur form: t upper triangular, a = z t z^H. Returns 0, or 1 when it does not converge. */
static int schur(int64_t n, cx_z *t, cx_z *z, cx_z (*g)[4]) {
  int64_t hi = n - 1, steps = 0;
  while (hi > 0) {
    int64_t lo = hi;
    while (lo > 0) {
      double sub = cabs(t[lo * n + lo - 1]), diag = cabs(t[lo * n + lo]) + cabs(t[(lo - 1) * n + lo - 1]);
      if (sub <= DBL_EPSILON * diag || sub < DBL_MIN) break;
      lo--;
    }
    if (lo > 0) t[lo * n + lo - 1] = 0;
    if (lo == hi) { /* t[hi][hi] is an eigenvalue */
      hi--;
      steps = 0;
      continue;
    }
    if (++steps > MAX_STEPS_PER_VALUE) return 1;
    cx_z mu = wilkinson(t[(hi - 1) * n + hi - 1], t[(hi - 1) * n + hi], t[hi * n + hi - 1], t[hi * n + hi]);
    if (steps % 11 == 10) mu = t[hi * n + hi] + cabs(t[hi * n + hi - 1]); /* an exceptional shift breaks cycles */
    qr_step(n, t, z, lo, hi, mu, g);
  }
  return 0;
}

/* Unit 2-norm, the component of largest magnitude (the first of them) real and positive. */
static void normalize(int64_t n, cx_z *v, int64_t stride) {
  double norm = 0, big = -1;
  int64_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    double m = creal(v[i * stride] * conj(v[i * stride]));
    norm += m;
    if (m > big) big = m, at = i;
  }
  if (!(norm > 0)) return;
  cx_z f = conj(v[at * stride]) / (sqrt(big) * sqrt(norm));
  for (int64_t i = 0; i < n; i++) v[i * stride] *= f;
  v[at * stride] = creal(v[at * stride]);
}

/* (t_ii - lambda) made safe to divide by: a tiny multiple of |t| where it is zero (a repeated
 * eigenvalue, whose vectors then come out nearly parallel, as LAPACK's do). */
static cx_z pivot(cx_z d, double small) { return cabs(d) < small ? small : d; }

/* Column k of out (n x n) = z y, y the right (left: 0) eigenvector of the triangular t for
 * t[k][k], in y's scratch. */
static void vector(int64_t n, const cx_z *t, const cx_z *z, int64_t k, int right, double small, cx_z *y, cx_z *out) {
  cx_z lam = t[k * n + k];
  for (int64_t i = 0; i < n; i++) y[i] = i == k;
  if (right) /* t y = lam y: back substitution above k */
    for (int64_t i = k - 1; i >= 0; i--) {
      cx_z s = 0;
      for (int64_t j = i + 1; j <= k; j++) s += t[i * n + j] * y[j];
      y[i] = -s / pivot(t[i * n + i] - lam, small);
    }
  else /* t^H y = conj(lam) y: forward substitution below k */
    for (int64_t i = k + 1; i < n; i++) {
      cx_z s = 0;
      for (int64_t j = k; j < i; j++) s += conj(t[j * n + i]) * y[j];
      y[i] = -s / pivot(conj(t[i * n + i] - lam), small);
    }
  for (int64_t i = 0; i < n; i++) {
    cx_z s = 0;
    for (int64_t j = 0; j < n; j++) s += z[i * n + j] * y[j];
    out[i * n + k] = s;
  }
  normalize(n, out + k, n);
}

int cx_ref_geev(int64_t n, cx_z *a, cx_z *w, cx_z *vl, cx_z *vr) {
  cx_z *z = cx_malloc(sizeof *z * (size_t)(n * n + n + 1));
  cx_z(*g)[4] = cx_malloc(sizeof *g * (size_t)(n + 1));
  int bad = !z || !g;
  if (!bad) {
    cx_z *y = z + n * n;
    cx_ref_hessenberg(n, a, z, y);
    bad = schur(n, a, z, g);
    double fro = 0;
    for (int64_t i = 0; i < n * n; i++) fro += creal(a[i] * conj(a[i]));
    double small = fmax(DBL_EPSILON * sqrt(fro), DBL_MIN);
    for (int64_t k = 0; !bad && k < n; k++) {
      w[k] = a[k * n + k];
      if (vr) vector(n, a, z, k, 1, small, y, vr);
      if (vl) vector(n, a, z, k, 0, small, y, vl);
    }
  }
  cx_free(z);
  cx_free(g);
  return bad;
}

int cx_ref_schur(int64_t n, cx_z *a, cx_z *z) {
  cx_z *y = cx_malloc(sizeof *y * (size_t)(n + 1));
  cx_z(*g)[4] = cx_malloc(sizeof *g * (size_t)(n + 1));
  int bad = !y || !g;
  if (!bad) {
    cx_ref_hessenberg(n, a, z, y);
    bad = schur(n, a, z, g);
    /* the steps' rounding leaves entries of order eps |t| below the subdiagonal, which deflation
     * never looks at; the form is triangular, so they are zero */
    for (int64_t i = 1; !bad && i < n; i++)
      for (int64_t j = 0; j < i; j++) a[i * n + j] = 0;
  }
  cx_free(y);
  cx_free(g);
  return bad;
}
