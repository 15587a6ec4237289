/* ew_complex.c — the scalar rules of the elementwise ops on complex numbers (c64, c128), for
 * ew_rules.c's table. Each is computed in double and rounded part by part to the element
 * type by the caller, like the float rules.
 *
 * Semantics are XLA's (its elemental IR emitter): |z| = max * sqrt(1 + (min/max)²), NaN when
 * a part is NaN (XLA's max and min propagate it; C's hypot would give inf beside an infinite
 * part), Smith's division, and XLA's special values for infinities and NaN (division, sqrt,
 * rsqrt, tanh, power at 0). Where XLA's formula cancels, an equivalent one that does not is
 * used, so the reference is at least as accurate as XLA on finite values: sin and cos use
 * sinh and cosh (XLA: (e^b - e^-b)/2), built as (expm1(x) - expm1(-x))/2 and (e^x + e^-x)/2;
 * expm1's real part is expm1(a)cos(b) - 2sin²(b/2) (XLA: e^a cos(b) - 1); sqrt is algebraic
 * (XLA: polar, through atan2); tanh is sinh(a)cosh(a) / (sinh²a + cos²b).
 * The cpu backend's element generators (codegen/elemental_complex.c) compute the same
 * formulas in the same order with the same libm functions, so they agree bit for bit. */
#include "interp/internal.h"

cx_cplx cx_c_copy(cx_cplx x) { return x; }
cx_cplx cx_c_negate(cx_cplx x) { return (cx_cplx){-x.re, -x.im}; }

double cx_c_abs(cx_cplx x) {
  if (isnan(x.re) || isnan(x.im)) return NAN;
  double a = fabs(x.re), b = fabs(x.im), hi = a > b ? a : b, lo = a > b ? b : a;
  if (hi == 0) return 0;
  if (hi == INFINITY) return INFINITY;
  double q = lo / hi;
  return hi * sqrt(1 + q * q); /* never overflows where |z| does not */
}
double cx_c_real(cx_cplx x) { return x.re; }
double cx_c_imag(cx_cplx x) { return x.im; }

/* sign(z) = z / |z|, 0 at 0 (a NaN modulus gives NaN parts) */
cx_cplx cx_c_sign(cx_cplx x) {
  double r = cx_c_abs(x);
  if (r == 0) return (cx_cplx){0, 0};
  return (cx_cplx){x.re / r, x.im / r};
}

cx_cplx cx_c_add(cx_cplx a, cx_cplx b) { return (cx_cplx){a.re + b.re, a.im + b.im}; }
cx_cplx cx_c_sub(cx_cplx a, cx_cplx b) { return (cx_cplx){a.re - b.re, a.im - b.im}; }
cx_cplx cx_c_mul(cx_cplx a, cx_cplx b) {
  return (cx_cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* Smith's algorithm, and XLA's repairs of a NaN result: a zero divisor gives infinities with
 * the signs of the numerator (times the sign of b's real part), an infinite numerator over a
 * finite divisor infinities, a finite numerator over an infinite divisor zeros. */
cx_cplx cx_c_div(cx_cplx a, cx_cplx b) {
  double c_r, c_i;
  if (fabs(b.re) < fabs(b.im)) {
    double r = b.re / b.im, d = b.im + b.re * r;
    c_r = (r * a.re + a.im) / d;
    c_i = (r * a.im - a.re) / d;
  } else {
    double r = b.im / b.re, d = b.re + b.im * r;
    c_r = (r * a.im + a.re) / d;
    c_i = (a.im - r * a.re) / d;
  }
  if (!(isnan(c_r) && isnan(c_i))) return (cx_cplx){c_r, c_i};
  if (b.re == 0 && b.im == 0 && (!isnan(a.re) || !isnan(a.im))) {
    double inf = copysign(INFINITY, b.re);
    return (cx_cplx){inf * a.re, inf * a.im};
  }
  int a_inf = isinf(a.re) || isinf(a.im), b_fin = isfinite(b.re) && isfinite(b.im);
  if (a_inf && b_fin) {
    double x = copysign(isinf(a.re) ? 1 : 0, a.re), y = copysign(isinf(a.im) ? 1 : 0, a.im);
    return (cx_cplx){INFINITY * (x * b.re + y * b.im), INFINITY * (y * b.re - x * b.im)};
  }
  int b_inf = isinf(b.re) || isinf(b.im), a_fin = isfinite(a.re) && isfinite(a.im);
  if (b_inf && a_fin) {
    double x = copysign(isinf(b.re) ? 1 : 0, b.re), y = copysign(isinf(b.im) ? 1 : 0, b.im);
    return (cx_cplx){0 * (a.re * x + a.im * y), 0 * (a.im * x - a.re * y)};
  }
  return (cx_cplx){c_r, c_i};
}

cx_cplx cx_c_exp(cx_cplx x) {
  double e = exp(x.re);
  return (cx_cplx){e * cos(x.im), e * sin(x.im)};
}

/* e^a cos b - 1 = expm1(a) cos b - 2 sin²(b/2): no cancellation near 0 */
cx_cplx cx_c_expm1(cx_cplx x) {
  double h = sin(x.im * 0.5);
  return (cx_cplx){expm1(x.re) * cos(x.im) - 2 * h * h, exp(x.re) * sin(x.im)};
}

cx_cplx cx_c_log(cx_cplx x) { return (cx_cplx){log(cx_c_abs(x)), atan2(x.im, x.re)}; }

/* log(1 + z) = 0.5 log1p(a² + 2a + b²) + i atan2(b, a + 1), as XLA */
cx_cplx cx_c_log1p(cx_cplx x) {
  return (cx_cplx){0.5 * log1p(x.re * x.re + 2 * x.re + x.im * x.im), atan2(x.im, x.re + 1)};
}

/* The principal root, algebraically: t = sqrt((|a| + |z|) / 2), then (t, b / 2t) for a >= 0
 * and (|b| / 2t, ±t) otherwise. Infinities and NaN as XLA: an infinite imaginary part or a
 * = +inf give real part inf, a = -inf real part 0 (NaN for a NaN b) and imaginary part ±inf. */
cx_cplx cx_c_sqrt(cx_cplx x) {
  double a = x.re, b = x.im;
  if (isinf(b)) return (cx_cplx){INFINITY, b};
  if (a == -INFINITY) return (cx_cplx){isnan(b) ? NAN : 0, copysign(INFINITY, b)};
  if (a == INFINITY) return (cx_cplx){INFINITY, isnan(b) ? NAN : copysign(0, b)};
  if (isnan(a) || isnan(b)) return (cx_cplx){NAN, NAN};
  if (a == 0 && b == 0) return (cx_cplx){0, 0};
  /* halved before the sum so that |a| + |z| cannot overflow */
  double t = sqrt(fabs(a) * 0.5 + cx_c_abs((cx_cplx){a * 0.5, b * 0.5}));
  if (a >= 0) return (cx_cplx){t, b / (2 * t)};
  return (cx_cplx){fabs(b) / (2 * t), copysign(t, b)};
}

/* 1 / sqrt(z) = conj(sqrt(z)) / |z|; XLA's special values: (inf, NaN) at 0, signed zeros
 * when a part is infinite. */
cx_cplx cx_c_rsqrt(cx_cplx x) {
  double a = x.re, b = x.im;
  if (a == 0 && b == 0) return (cx_cplx){INFINITY, NAN};
  if (isinf(a) || (isinf(b) && isnan(a))) return (cx_cplx){copysign(0, a), -copysign(0, b)};
  if (isinf(b)) return (cx_cplx){0, -copysign(0, b)};
  cx_cplx s = cx_c_sqrt(x);
  /* |z| may overflow where |sqrt z| does not: divide by |sqrt z| twice */
  double r = cx_c_abs(s);
  return (cx_cplx){s.re / r / r, -s.im / r / r};
}

/* (a+bi)^(c+di) = |z|^c e^(-d arg z) (cos q + i sin q), q = c arg z + d log|z|; 0^w is 1 for
 * w = 0 and 0 for a real w > 0 (XLA; Kahan). */
cx_cplx cx_c_pow(cx_cplx z, cx_cplx w) {
  double a = z.re, b = z.im, c = w.re, d = w.im;
  if (a == 0 && b == 0 && d == 0 && c >= 0) return (cx_cplx){c == 0 ? 1 : 0, 0};
  double arg = atan2(b, a), lr = log(cx_c_abs(z));
  double coeff = exp(c * lr - d * arg), q = c * arg + d * lr;
  return (cx_cplx){coeff * cos(q), coeff * sin(q)};
}

cx_cplx cx_c_cbrt(cx_cplx x) { return cx_c_pow(x, (cx_cplx){1.0 / 3.0, 0}); }

/* sinh and cosh without cancellation near 0 (and from the functions the emitter has) */
static double c_sinh(double x) { return (expm1(x) - expm1(-x)) * 0.5; }
static double c_cosh(double x) { return (exp(x) + exp(-x)) * 0.5; }

/* cos(a+bi) = cos a cosh b - i sin a sinh b; sin(a+bi) = sin a cosh b + i cos a sinh b */
cx_cplx cx_c_cos(cx_cplx x) { return (cx_cplx){cos(x.re) * c_cosh(x.im), -(sin(x.re) * c_sinh(x.im))}; }
cx_cplx cx_c_sin(cx_cplx x) { return (cx_cplx){sin(x.re) * c_cosh(x.im), cos(x.re) * c_sinh(x.im)}; }

/* tanh(a+bi) = (sinh a cosh a + i sin b cos b) / (sinh²a + cos²b). Beyond |a| = 20 the real
 * part is ±1 in double (and f32) and the imaginary part a zero of sin(2b)'s sign. XLA's
 * special values: an infinite or NaN b with finite a gives NaN; a = ±inf gives (±1, ±0);
 * a = NaN gives (NaN, +0) for b = 0 and NaN otherwise. */
cx_cplx cx_c_tanh(cx_cplx x) {
  double a = x.re, b = x.im;
  if (isnan(a)) return (cx_cplx){NAN, b == 0 ? 0 : NAN};
  double sb = sin(b), cb = cos(b);
  if (isinf(a)) return (cx_cplx){copysign(1, a), isfinite(b) ? copysign(0, sb * cb) : 0};
  if (!isfinite(b)) return (cx_cplx){NAN, NAN};
  if (fabs(a) > 20) return (cx_cplx){copysign(1, a), copysign(0, sb * cb)};
  double sa = c_sinh(a), d = sa * sa + cb * cb;
  return (cx_cplx){sa * c_cosh(a) / d, sb * cb / d};
}

/* tan z = -i tanh(iz), as XLA: tan(a+bi) = -i tanh(-b + ai), so tanh's special values carry over */
cx_cplx cx_c_tan(cx_cplx x) {
  cx_cplx t = cx_c_tanh((cx_cplx){-x.im, x.re});
  return (cx_cplx){t.im, -t.re};
}

/* XLA's complex atan2(y, x) = -i log((x + iy) / sqrt(x² + y²)), with its complex operations:
 * for real y and x it is the real atan2, up to the rounding of log(|.|) (near 0). */
cx_cplx cx_c_atan2(cx_cplx y, cx_cplx x) {
  cx_cplx r = cx_c_sqrt(cx_c_add(cx_c_mul(x, x), cx_c_mul(y, y)));
  cx_cplx l = cx_c_log(cx_c_div(cx_c_add(x, cx_c_mul((cx_cplx){0, 1}, y)), r));
  return (cx_cplx){l.im, -l.re};
}

/* 1 / (1 + e^-z), as XLA expands logistic before emitting it */
cx_cplx cx_c_logistic(cx_cplx x) {
  cx_cplx e = cx_c_exp(cx_c_negate(x));
  return cx_c_div((cx_cplx){1, 0}, (cx_cplx){1 + e.re, e.im});
}
