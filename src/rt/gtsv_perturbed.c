/* gtsv_perturbed.c — jax's tridiagonal solve with perturb_singular=True on the cpu backend
 * (custom-call tridiagonal_solve_perturbed_ffi, reached through cx_rt_linalg): what jaxlib's CPU
 * kernel computes, in the element type's own arithmetic. No library has it: LAPACK's
 * xLAGTF/xLAGTS, which it follows in spirit, are real only, solve one right-hand side at a time
 * and take a shift; jaxlib's kernel is its own code (jaxlib/tridiagonal_solve_perturbed.h).
 *
 * The rule, per system T x = b (T n x n with subdiagonal dl[1..], diagonal d, superdiagonal
 * du[..n-2]; b n x nrhs row-major):
 *  - elimination between neighbouring rows, fused with the forward solve: row k+1 is reduced by
 *    row k unless |dl[k+1]| / scale2 > |U[k][k]| / scale1 (each row's 1-norm as jaxlib keeps it),
 *    when the two rows swap first; U has at most two superdiagonals;
 *  - back substitution where a pivot p of magnitude below 1 may be perturbed (xLAGTS's rule,
 *    against the largest |.| of the row's right-hand sides, m): while |p| < 1, if |p| < safemin
 *    then p += delta (doubling delta each time) when p is 0 or m * safemin > |p|, else p and the
 *    row are scaled by 1 / safemin and that is all; if m > |p| / safemin, p += delta too; else
 *    stop. delta starts at eps * max|U| (at least safemin), with the sign of re p;
 *  - n = 1 perturbs d[0] against eps * |d[0]|.
 * safemin is the type's smallest normal number (1 / max is smaller for IEEE types, so LAPACK's
 * xLAMCH('S') gives it) and eps the type's epsilon (FLT_EPSILON, DBL_EPSILON). A singular T then
 * gives large finite values, no NaN: jax uses it for inverse iteration. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "rt/rt.h"
#include "ir/types.h"
#include "util/util.h"

/* One instance per element type: T the element, R its real part, ABS and RE its magnitude and
 * real part, EPS and SAFEMIN the type's constants. The bodies are the same text so that each
 * type computes in its own precision, as jaxlib's template does. */
#define CX_GTSV_PERTURBED(NAME, T, R, ABS, RE, EPS, SAFEMIN)                                            \
  static void NAME##_perturb(R delta, T *pivot, T *row, int64_t nrhs) {                                \
    R ap = ABS(*pivot), m = 0;                                                                          \
    if (ap >= 1) return;                                                                                \
    delta = (R)copysign(fmax(fabs(delta), SAFEMIN), RE(*pivot));                                        \
    for (int64_t j = 0; j < nrhs; j++) m = fmax(m, ABS(row[j]));                                        \
    while (ap < 1) {                                                                                    \
      if ((ap < SAFEMIN && (ap == 0 || m * SAFEMIN > ap)) || (ap >= SAFEMIN && m > ap * (1 / SAFEMIN))) { \
        *pivot += delta;                                                                                \
        delta *= 2;                                                                                     \
      } else {                                                                                          \
        if (ap < SAFEMIN) {                                                                             \
          *pivot *= 1 / SAFEMIN;                                                                        \
          for (int64_t j = 0; j < nrhs; j++) row[j] *= 1 / SAFEMIN;                                     \
        }                                                                                               \
        return;                                                                                         \
      }                                                                                                 \
      ap = ABS(*pivot);                                                                                 \
    }                                                                                                   \
  }                                                                                                     \
  /* x's row k from the row r (nrhs scratch) over the (maybe perturbed) pivot p */                      \
  static void NAME##_settle(R delta, T p, T *r, T *xk, int64_t nrhs) {                                  \
    NAME##_perturb(delta, &p, r, nrhs);                                                                 \
    T inv = 1 / p;                                                                                      \
    for (int64_t j = 0; j < nrhs; j++) xk[j] = r[j] * inv;                                              \
  }                                                                                                     \
  /* u: 3n scratch (U's diagonal, first and second superdiagonals); r: nrhs scratch */                  \
  static void NAME(int64_t n, int64_t nrhs, const T *dl, const T *d, const T *du, const T *b, T *x,     \
                   T *u, T *r) {                                                                        \
    T *u0 = u, *u1 = u + n, *u2 = u + 2 * n;                                                            \
    if (n == 0) return;                                                                                 \
    if (n == 1) {                                                                                       \
      T p = d[0]; /* divided by, not multiplied by its inverse, as jaxlib does for n = 1 */            \
      memcpy(r, b, sizeof *r * (size_t)nrhs);                                                           \
      NAME##_perturb(EPS * ABS(p), &p, r, nrhs);                                                        \
      for (int64_t j = 0; j < nrhs; j++) x[j] = r[j] / p;                                               \
      return;                                                                                           \
    }                                                                                                   \
    memset(u, 0, sizeof *u * (size_t)(3 * n));                                                          \
    u0[0] = d[0], u1[0] = du[0];                                                                        \
    R maxu = fmax(ABS(u0[0]), ABS(u1[0])), scale1 = ABS(u0[0]) + ABS(u1[0]);                            \
    memcpy(x, b, sizeof *x * (size_t)nrhs);                                                             \
    for (int64_t k = 0; k + 1 < n; k++) {                                                               \
      T *xk = x + k * nrhs, *x1 = xk + nrhs;                                                            \
      const T *b1 = b + (k + 1) * nrhs;                                                                 \
      u0[k + 1] = d[k + 1];                                                                             \
      R scale2 = ABS(dl[k + 1]) + ABS(u0[k + 1]);                                                       \
      if (k + 2 < n) scale2 += ABS(du[k + 1]);                                                          \
      if (dl[k + 1] == 0) { /* nothing to eliminate */                                                  \
        scale1 = scale2;                                                                                \
        u1[k + 1] = du[k + 1];                                                                          \
        memcpy(x1, b1, sizeof *x1 * (size_t)nrhs);                                                      \
      } else if (ABS(dl[k + 1]) / scale2 <= (u0[k] == 0 ? 0 : ABS(u0[k]) / scale1)) { /* row k pivots */ \
        T f = dl[k + 1] / u0[k];                                                                        \
        scale1 = scale2;                                                                                \
        u0[k + 1] -= f * u1[k];                                                                         \
        u1[k + 1] = du[k + 1];                                                                          \
        for (int64_t j = 0; j < nrhs; j++) x1[j] = b1[j] - f * xk[j];                                   \
      } else { /* rows k and k+1 swap */                                                                \
        T f = u0[k] / dl[k + 1], t = u1[k];                                                             \
        u0[k] = dl[k + 1];                                                                              \
        u0[k + 1] = t - f * d[k + 1];                                                                   \
        u1[k] = d[k + 1];                                                                               \
        if (k + 2 < n) u2[k] = du[k + 1], u1[k + 1] = -f * du[k + 1];                                   \
        for (int64_t j = 0; j < nrhs; j++) x1[j] = xk[j] - f * b1[j], xk[j] = b1[j];                    \
        scale1 = ABS(u0[k + 1]) + ABS(u1[k + 1]);                                                       \
      }                                                                                                 \
      if (k + 2 < n) maxu = fmax(maxu, fmax(ABS(u0[k]), fmax(ABS(u1[k]), ABS(u2[k]))));                 \
    }                                                                                                   \
    maxu = fmax(maxu, ABS(u0[n - 1]));                                                                  \
    R delta = EPS * maxu;                                                                               \
    memcpy(r, x + (n - 1) * nrhs, sizeof *r * (size_t)nrhs);                                            \
    NAME##_settle(delta, u0[n - 1], r, x + (n - 1) * nrhs, nrhs);                                       \
    for (int64_t k = n - 2; k >= 0; k--) {                                                              \
      T *xk = x + k * nrhs;                                                                             \
      for (int64_t j = 0; j < nrhs; j++) {                                                              \
        r[j] = xk[j] - u1[k] * xk[nrhs + j];                                                            \
        if (k + 2 < n) r[j] -= u2[k] * xk[2 * nrhs + j];                                                \
      }                                                                                                 \
      NAME##_settle(delta, u0[k], r, xk, nrhs);                                                         \
    }                                                                                                   \
  }

static float re_f(float x) { return x; }
static double re_d(double x) { return x; }
static float re_c(float _Complex x) { return crealf(x); }
static double re_z(double _Complex x) { return creal(x); }
CX_GTSV_PERTURBED(solve_f32, float, float, fabsf, re_f, FLT_EPSILON, FLT_MIN)
CX_GTSV_PERTURBED(solve_f64, double, double, fabs, re_d, DBL_EPSILON, DBL_MIN)
CX_GTSV_PERTURBED(solve_c64, float _Complex, float, cabsf, re_c, FLT_EPSILON, FLT_MIN)
CX_GTSV_PERTURBED(solve_c128, double _Complex, double, cabs, re_z, DBL_EPSILON, DBL_MIN)

int cx_rt_gtsv_perturbed(int64_t type, int64_t batch, int64_t n, int64_t nrhs, void **bufs) {
  size_t es = cxla_type_size((cxla_type)type);
  char *u = cx_malloc(es * (size_t)(3 * n + nrhs + 1));
  if (!u) return -1;
  char *r = u + es * (size_t)(3 * n);
  for (int64_t b = 0; b < batch; b++) {
    size_t v = es * (size_t)(b * n), m = es * (size_t)(b * n * nrhs);
    char *x = (char *)bufs[0] + m, *dl = (char *)bufs[1] + v, *d = (char *)bufs[2] + v, *du = (char *)bufs[3] + v,
         *rhs = (char *)bufs[4] + m;
    switch (type) {
    case CXLA_F32:
      solve_f32(n, nrhs, (float *)dl, (float *)d, (float *)du, (float *)rhs, (float *)x, (float *)u, (float *)r);
      break;
    case CXLA_F64:
      solve_f64(n, nrhs, (double *)dl, (double *)d, (double *)du, (double *)rhs, (double *)x, (double *)u,
                (double *)r);
      break;
    case CXLA_C64:
      solve_c64(n, nrhs, (float _Complex *)dl, (float _Complex *)d, (float _Complex *)du, (float _Complex *)rhs,
                (float _Complex *)x, (float _Complex *)u, (float _Complex *)r);
      break;
    default:
      solve_c128(n, nrhs, (double _Complex *)dl, (double _Complex *)d, (double _Complex *)du, (double _Complex *)rhs,
                 (double _Complex *)x, (double _Complex *)u, (double _Complex *)r);
    }
  }
  cx_free(u);
  return 0;
}
