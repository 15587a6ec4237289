/* rng_dist.h — the arithmetic of rng's distributions that every place computing rng shares
 * (interp/rng.c defines the values; rt/rng.c is the cpu backend's routine; codegen/rng_emit.c
 * the GPU's kernel). Box-Muller needs a logarithm, a sine and a cosine: libm's differ from a
 * GPU's in the last bit, so cxla defines its own, from IEEE operations that round the same
 * everywhere (+, -, *, /, sqrt and fused multiply-add, each a separate rounding; the
 * polynomials below in Horner form, highest coefficient first, every step an fma). The GPU
 * kernel emits the same sequence with the same constants, which makes rng_normal bit-exact
 * across the interpreter, the cpu backend and the GPU. */
#ifndef CX_IR_RNG_DIST_H
#define CX_IR_RNG_DIST_H
#include <stdint.h>

/* The stream's Philox key: the FNV-1a 64-bit hash of the instruction's name. */
uint64_t cx_rng_key(const char *name);

/* log(x) = e ln2 + log(1 + f) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); log(1 + f) =
 * f - (f^2/2 - s (f^2/2 + R)), s = f / (2 + f), R = z P(z), z = s^2, P's coefficients
 * 2/(2k+1) (fdlibm's scheme, with the Taylor series of 2 atanh(s) long enough to fall below
 * 2^-57). For x normal and positive: rng takes it on [1e-7, 1). */
#define CX_RNG_LOG_N 11
extern const double cx_rng_log_p[CX_RNG_LOG_N];
#define CX_RNG_LN2_HI 0x1.62e42fefa38p-1  /* 42 bits: e * LN2_HI is exact */
#define CX_RNG_LN2_LO 0x1.ef35793c7673p-45
#define CX_RNG_SQRT2 0x1.6a09e667f3bcdp+0
double cx_rng_log(double x);

/* sin and cos of th on [0, 2 pi]: n = th 2/pi rounded to nearest (by adding and subtracting
 * 1.5 2^52), r = th - n pi/2 in two fma steps (pi/2 as PIO2_1 + PIO2_2; the first step is
 * exact), then Taylor polynomials on |r| <= pi/4 (sin r = r + r z S(z), cos r = (1 - z/2) +
 * z^2 C(z), z = r^2) and the quadrant n mod 4. */
#define CX_RNG_SIN_N 9
#define CX_RNG_COS_N 9
extern const double cx_rng_sin_p[CX_RNG_SIN_N], cx_rng_cos_p[CX_RNG_COS_N];
#define CX_RNG_2_OVER_PI 0x1.45f306dc9c883p-1
#define CX_RNG_PIO2_1 0x1.921fb54442d18p+0
#define CX_RNG_PIO2_2 0x1.1a62633145c07p-54
#define CX_RNG_SHIFT 0x1.8p52
#define CX_RNG_2PI 0x1.921fb54442d18p+2 /* 2 pi rounded (2.0 * M_PI) */
void cx_rng_sincos(double th, double *s, double *c);

/* A uniform on [0, 1) from the bits of an element: (w >> 8) / 2^24, a 64-bit one (w >> 11) / 2^53. */
double cx_rng_unit(uint64_t w, int wide);
/* Box-Muller on the uniforms u1, u2 of a pair: r = sqrt(-2 log max(u1, 1e-7)), th = 2 pi u2;
 * the pair's first element is r sin th, its second r cos th. */
void cx_rng_box_muller(double u1, double u2, double *first, double *second);
/* a + b x and a + x (b - a), rounded at each step in that order */
double cx_rng_scale(double a, double b, double x);
double cx_rng_between(double a, double b, double u);

#endif
