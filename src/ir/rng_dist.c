/* rng_dist.c — rng's shared arithmetic (see rng_dist.h). Every a * b + c below is either an
 * explicit fma() or two statements: a compiler allowed to contract within an expression
 * (clang's default) then has nothing to fuse, and the roundings are the GPU kernel's. */
#include "ir/rng_dist.h"
#include <math.h>
#include <string.h>

const double cx_rng_log_p[CX_RNG_LOG_N] = { /* 2/23, 2/21, ..., 2/5, 2/3 */
    0x1.642c8590b2164p-4, 0x1.8618618618618p-4, 0x1.af286bca1af28p-4, 0x1.e1e1e1e1e1e1ep-4,
    0x1.1111111111111p-3, 0x1.3b13b13b13b14p-3, 0x1.745d1745d1746p-3, 0x1.c71c71c71c71cp-3,
    0x1.2492492492492p-2, 0x1.999999999999ap-2, 0x1.5555555555555p-1};
const double cx_rng_sin_p[CX_RNG_SIN_N] = { /* -1/19!, 1/17!, ..., 1/5!, -1/3! */
    -0x1.2f49b46814157p-57, 0x1.952c77030ad4ap-49, -0x1.ae7f3e733b81fp-41, 0x1.6124613a86d09p-33,
    -0x1.ae64567f544e4p-26, 0x1.71de3a556c734p-19, -0x1.a01a01a01a01ap-13, 0x1.1111111111111p-7,
    -0x1.5555555555555p-3};
const double cx_rng_cos_p[CX_RNG_COS_N] = { /* 1/20!, -1/18!, ..., -1/6!, 1/4! */
    0x1.e542ba4020225p-62, -0x1.6827863b97d97p-53, 0x1.ae7f3e733b81fp-45, -0x1.93974a8c07c9dp-37,
    0x1.1eed8eff8d898p-29, -0x1.27e4fb7789f5cp-22, 0x1.a01a01a01a01ap-16, -0x1.6c16c16c16c17p-10,
    0x1.5555555555555p-5};

uint64_t cx_rng_key(const char *name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *p = name; p && *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  return h;
}

static double horner(const double *c, int n, double x) {
  double p = c[0];
  for (int i = 1; i < n; i++) p = fma(p, x, c[i]);
  return p;
}

double cx_rng_log(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int64_t e = (int64_t)(bits >> 52) - 1023;
  bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m > CX_RNG_SQRT2) {
    m = m * 0.5;
    e = e + 1;
  }
  double f = m - 1.0, s = f / (2.0 + f), z = s * s;
  double r = z * horner(cx_rng_log_p, CX_RNG_LOG_N, z);
  double f2 = f * f, hfsq = 0.5 * f2, dk = (double)e;
  double t = hfsq + r;
  t = s * t;
  double lo = dk * CX_RNG_LN2_LO;
  t = t + lo;
  t = hfsq - t;
  t = t - f;
  double hi = dk * CX_RNG_LN2_HI;
  return hi - t;
}

void cx_rng_sincos(double th, double *s, double *c) {
  double q = th * CX_RNG_2_OVER_PI;
  q = q + CX_RNG_SHIFT;
  double n = q - CX_RNG_SHIFT;
  double r = fma(-n, CX_RNG_PIO2_1, th);
  r = fma(-n, CX_RNG_PIO2_2, r);
  double z = r * r, rz = r * z;
  double sn = fma(rz, horner(cx_rng_sin_p, CX_RNG_SIN_N, z), r);
  double hz = 0.5 * z, zz = z * z;
  double cs = fma(zz, horner(cx_rng_cos_p, CX_RNG_COS_N, z), 1.0 - hz);
  int quadrant = (int)n & 3;
  *s = quadrant == 0 ? sn : quadrant == 1 ? cs : quadrant == 2 ? -sn : -cs;
  *c = quadrant == 0 ? cs : quadrant == 1 ? -sn : quadrant == 2 ? -cs : sn;
}

double cx_rng_unit(uint64_t w, int wide) { return wide ? (double)(w >> 11) * 0x1p-53 : (double)(w >> 8) * 0x1p-24; }

void cx_rng_box_muller(double u1, double u2, double *first, double *second) {
  double l = cx_rng_log(u1 > 1e-7 ? u1 : 1e-7);
  double r = sqrt(-2.0 * l), th = CX_RNG_2PI * u2, sn, cs;
  cx_rng_sincos(th, &sn, &cs);
  *first = r * sn;
  *second = r * cs;
}

double cx_rng_scale(double a, double b, double x) {
  double t = b * x;
  return a + t;
}

double cx_rng_between(double a, double b, double u) {
  double d = b - a;
  double t = u * d;
  return a + t;
}
