/* schur_ref.c — the real Schur form of a real matrix (linalg.h), the interpreter's reference
 * for LAPACK's sgees/dgees: the textbook Francis double-shift QR iteration (Householder
 * reflectors of three rows chasing the bulge, deflation at negligible subdiagonal entries,
 * exceptional shifts every tenth step), on the Hessenberg form geev_ref.c reduces to. A 2 x 2
 * block left at the bottom is split by a rotation when its eigenvalues are real, so only the
 * complex pairs keep one. Unblocked and unbalanced, unlike LAPACK's hseqr: the two agree on
 * what a Schur form is (a = z t z^T, z orthogonal, t quasi-triangular), not on which one. */
#include <float.h>
#include <math.h>
#include "interp/linalg.h"
#include "util/util.h"

#define MAX_STEPS_PER_BLOCK 60

typedef struct rs {
  int64_t n;
  double *h, *z; /* row-major n x n */
} rs;

#define H(i, j) (r->h[(i) * r->n + (j)])

/* P = I - 2 v v^T / v^T v on rows k..k+m-1 (columns c0..n-1) and on columns k..k+m-1 (rows
 * 0..r1 of h, all of z): h = P h P, z = z P. */
static void reflect(rs *r, const double *v, int m, int64_t k, int64_t c0, int64_t r1) {
  double vv = 0;
  for (int i = 0; i < m; i++) vv += v[i] * v[i];
  if (vv == 0) return;
  for (int64_t j = c0; j < r->n; j++) {
    double d = 0;
    for (int i = 0; i < m; i++) d += v[i] * H(k + i, j);
    d *= 2 / vv;
    for (int i = 0; i < m; i++) H(k + i, j) -= d * v[i];
  }
  for (int side = 0; side < 2; side++) {
    double *x = side ? r->z : r->h;
    int64_t rows = side ? r->n - 1 : r1;
    for (int64_t i = 0; i <= rows; i++) {
      double d = 0;
      for (int t = 0; t < m; t++) d += x[i * r->n + k + t] * v[t];
      d *= 2 / vv;
      for (int t = 0; t < m; t++) x[i * r->n + k + t] -= d * v[t];
    }
  }
}

/* v = x - alpha e0 with alpha = -sign(x0) |x|: the reflector that maps x to alpha e0. */
static void house(const double *x, int m, double *v) {
  double norm = 0;
  for (int i = 0; i < m; i++) norm += x[i] * x[i], v[i] = x[i];
  norm = sqrt(norm);
  v[0] += x[0] < 0 ? -norm : norm;
}

/* One double-shift step on the unreduced block lo..hi (hi - lo >= 2): the shifts are the
 * eigenvalues of the trailing 2 x 2 (sum s, product t), or exceptional ones. */
static void francis(rs *r, int64_t lo, int64_t hi, int exceptional) {
  double s = H(hi - 1, hi - 1) + H(hi, hi), t = H(hi - 1, hi - 1) * H(hi, hi) - H(hi - 1, hi) * H(hi, hi - 1);
  if (exceptional) {
    double e = fabs(H(hi, hi - 1)) + fabs(H(hi - 1, hi - 2));
    s = 1.5 * e, t = e * e;
  }
  /* the first column of (H - s1 I)(H - s2 I) = H^2 - s H + t I */
  double x[3] = {H(lo, lo) * H(lo, lo) + H(lo, lo + 1) * H(lo + 1, lo) - s * H(lo, lo) + t,
                 H(lo + 1, lo) * (H(lo, lo) + H(lo + 1, lo + 1) - s), H(lo + 1, lo) * H(lo + 2, lo + 1)};
  double v[3];
  for (int64_t k = lo; k + 2 <= hi; k++) {
    house(x, 3, v);
    int64_t last = k + 3 < hi ? k + 3 : hi;
    reflect(r, v, 3, k, k > lo ? k - 1 : lo, last);
    if (k > lo) H(k + 1, k - 1) = H(k + 2, k - 1) = 0; /* the bulge moved on */
    x[0] = H(k + 1, k), x[1] = H(k + 2, k);
    if (k + 3 <= hi) x[2] = H(k + 3, k);
  }
  house(x, 2, v);
  reflect(r, v, 2, hi - 1, hi - 2, hi);
  H(hi, hi - 2) = 0;
}

/* The 2 x 2 block at i, i+1 made triangular by a rotation when its eigenvalues are real: the
 * rotation's first column is the eigenvector of the one of larger |.| away from the block's
 * lower-right entry. */
static void split(rs *r, int64_t i) {
  double a = H(i, i), b = H(i, i + 1), c = H(i + 1, i), d = H(i + 1, i + 1);
  double p = (a - d) / 2, disc = p * p + b * c;
  if (c == 0 || disc < 0) return;
  double zz = p + copysign(sqrt(disc), p), nrm = hypot(zz, c);
  if (nrm == 0) return;
  double cs = zz / nrm, sn = c / nrm;
  for (int64_t j = i; j < r->n; j++) { /* rows: G^T h */
    double u = H(i, j), v = H(i + 1, j);
    H(i, j) = cs * u + sn * v, H(i + 1, j) = -sn * u + cs * v;
  }
  for (int side = 0; side < 2; side++) { /* columns: h G, z G */
    double *x = side ? r->z : r->h;
    int64_t rows = side ? r->n - 1 : i + 1;
    for (int64_t k = 0; k <= rows; k++) {
      double u = x[k * r->n + i], v = x[k * r->n + i + 1];
      x[k * r->n + i] = cs * u + sn * v, x[k * r->n + i + 1] = -sn * u + cs * v;
    }
  }
  H(i + 1, i) = 0;
}

/* Whether subdiagonal entry l (h[l][l-1]) is negligible beside its diagonal neighbours (or the
 * matrix, when they are zero); it is set to zero when it is. */
static int negligible(rs *r, int64_t l, double norm) {
  double sub = fabs(H(l, l - 1)), diag = fabs(H(l - 1, l - 1)) + fabs(H(l, l));
  if (diag == 0) diag = norm;
  if (sub <= DBL_EPSILON * diag || sub < DBL_MIN) {
    H(l, l - 1) = 0;
    return 1;
  }
  return 0;
}

static int iterate(rs *r) {
  double norm = 0;
  for (int64_t i = 0; i < r->n * r->n; i++) norm = fmax(norm, fabs(r->h[i]));
  int64_t hi = r->n - 1;
  int steps = 0;
  while (hi >= 0) {
    int64_t l = hi;
    while (l > 0 && !negligible(r, l, norm)) l--;
    if (l >= hi - 1) { /* a 1 x 1 or 2 x 2 block has split off */
      if (l == hi - 1) split(r, l);
      hi = l - 1;
      steps = 0;
      continue;
    }
    if (++steps > MAX_STEPS_PER_BLOCK) return 1;
    francis(r, l, hi, steps % 10 == 0);
  }
  return 0;
}

int cx_ref_schur_real(int64_t n, cx_z *a, cx_z *z, cx_z *w) {
  for (int64_t i = 0; i < n * n; i++) a[i] = creal(a[i]);
  cx_z *v = cx_malloc(sizeof *v * (size_t)(n + 1));
  double *h = cx_malloc(sizeof *h * (size_t)(2 * n * n + 1));
  int bad = !v || !h;
  if (!bad) {
    cx_ref_hessenberg(n, a, z, v);
    rs r = {n, h, h + n * n};
    for (int64_t i = 0; i < n * n; i++) r.h[i] = creal(a[i]), r.z[i] = creal(z[i]);
    bad = iterate(&r);
    for (int64_t i = 0; i < n * n; i++) a[i] = r.h[i], z[i] = r.z[i];
    for (int64_t i = 0; !bad && i < n; i++) {
      if (i + 1 < n && r.h[(i + 1) * n + i] != 0) { /* a complex pair */
        double p = (r.h[i * n + i] - r.h[(i + 1) * n + i + 1]) / 2;
        double mid = (r.h[i * n + i] + r.h[(i + 1) * n + i + 1]) / 2;
        double im = sqrt(-(p * p + r.h[i * n + i + 1] * r.h[(i + 1) * n + i]));
        w[i] = cx_z_make(mid, im), w[i + 1] = cx_z_make(mid, -im);
        i++;
      } else {
        w[i] = r.h[i * n + i];
      }
    }
  }
  cx_free(v);
  cx_free(h);
  return bad;
}
