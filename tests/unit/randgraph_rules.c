/* randgraph_rules.c — the analysis rules of the numeric ops (see randgraph.h). A value's error
 * is err + rel*|v|: an absolute part and a part relative to the value, because rounding is
 * relative and an absolute-only bound grows with the range rather than the value (x*64 then
 * tanh would look off by 64 ulps of 64). Per op:
 *  - a range [lo, hi] bounds the finite elements as ANY correct backend computes them: the
 *    exact-math range widened by the error, then cut to what the op guarantees (abs >= 0,
 *    tanh in [-1, 1], clamp between its bounds, ...);
 *  - exact IEEE ops on exact inputs (negate, max, select, shape ops, conversions, compare)
 *    add nothing; arithmetic adds one rounding of its result (rel += eps: FMA contraction,
 *    f16/bf16 computed in f32, different association); transcendentals add APPROX ulps;
 *    sums and dots add the interpreter's sequential rounding; operand errors propagate through
 *    the op's slope (absolute part) and its slope times |x| (relative part);
 *  - an op whose result jumps when its inputs move (compare, floor, sign, convert to an
 *    integer, remainder) needs exact inputs; log/sqrt/divide need their operand range away
 *    from the singularity; results near overflow are not compared. Such values are `bad`.
 * Integers and pred are always exact; a range that may wrap becomes the type's full range. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include "randgraph_rules.h"
#include "ir/types.h"

#define APPROX 16.0  /* ulps allowed to a transcendental function */
#define RED_SLACK 2.0 /* sums: a multiple of the sequential-rounding random walk */
/* Same-sign sums of many equal terms round the same way at every step, so the interpreter's
 * sequential sum drifts linearly, not as a random walk (seed 60080 with CXLA_RANDGRAPH_BIG:
 * 100172 terms, 2.3e-4 relative); bounded by n * eps, which this approaches for large n. */
#define RED_SLACK_SAME_SIGN 8.0

double rg_eps(cxla_type t) {
  switch (t) {
  case CXLA_F16: return ldexp(1, -11);
  case CXLA_BF16: return ldexp(1, -8);
  case CXLA_F32: return ldexp(1, -24);
  case CXLA_F64: return ldexp(1, -53);
  default: return 0;
  }
}

static double max_finite(cxla_type t) {
  switch (t) {
  case CXLA_F16: return 65504.0;
  case CXLA_BF16: return 3.38e38;
  case CXLA_F32: return FLT_MAX;
  case CXLA_F64: return DBL_MAX;
  default: return 0;
  }
}

void rg_type_range(cxla_type t, double *lo, double *hi) {
  if (t == CXLA_PRED) { *lo = 0; *hi = 1; return; }
  int bits = cx_type_bits(t);
  if (cx_type_kind(t) == CX_KIND_UINT) { *lo = 0; *hi = ldexp(1, bits) - 1; return; }
  if (cx_type_kind(t) == CX_KIND_SINT) { *lo = -ldexp(1, bits - 1); *hi = ldexp(1, bits - 1) - 1; return; }
  *lo = -INFINITY;
  *hi = INFINITY;
}

double rg_vmag(rg_val a) { return fmax(fabs(a.lo), fabs(a.hi)); }
double rg_abs_err(rg_val a) { return a.err + a.rel * rg_vmag(a); }
int rg_inexact(rg_val a) { return a.err > 0 || a.rel > 0; }

rg_val rg_hull(rg_val a, rg_val b) {
  rg_val r = {fmin(a.lo, b.lo), fmax(a.hi, b.hi), fmax(a.err, b.err), a.special | b.special, a.bad | b.bad,
              fmax(a.rel, b.rel)};
  return r;
}

void rg_mark_bad(rg_bounds *bd, rg_val *r, const cx_instr *in, const char *why) {
  if (!r->bad)
    snprintf(bd->why, sizeof bd->why, "%s %s: %s", cx_op_name(in->op), in->name ? in->name : "?", why);
  r->bad = 1;
}

/* Both backends' values lie in a range of width w: they differ by at most w. */
static void cap_err(rg_val *r, double w) {
  if (w >= 0 && rg_abs_err(*r) > w) r->err = w, r->rel = 0;
}

rg_val rg_finish(rg_bounds *bd, const cx_instr *in, rg_val r, cxla_type t) {
  if (isnan(r.err) || isnan(r.rel) || isnan(r.lo) || isnan(r.hi)) {
    rg_mark_bad(bd, &r, in, "range lost (NaN bound)");
    r.lo = -INFINITY, r.hi = INFINITY, r.err = INFINITY;
    return r;
  }
  double tlo, thi;
  rg_type_range(t, &tlo, &thi);
  if (cx_type_is_float(t)) {
    r.lo -= r.err + r.rel * fabs(r.lo);
    r.hi += r.err + r.rel * fabs(r.hi);
    /* a value that may round to inf in one backend and not in another cannot be compared */
    if (rg_vmag(r) > 0.01 * max_finite(t)) rg_mark_bad(bd, &r, in, "may overflow");
  } else {
    r.err = r.rel = 0;
    if (r.lo < tlo || r.hi > thi) r.lo = tlo, r.hi = thi; /* wraps */
  }
  return r;
}

/* ---- transcendental functions ---- */

rg_val rg_unary_math(rg_bounds *bd, const cx_instr *in, rg_val a, cxla_type t) {
  double lo = a.lo, hi = a.hi, mx = rg_vmag(a), ea = a.err, er = a.rel;
  double d0 = lo > 0 ? lo : hi < 0 ? -hi : 0; /* distance of the operand range from 0 */
  double olo = -INFINITY, ohi = INFINITY, gl = -INFINITY, gh = INFINITY;
  double abs_out = 0, rel_out = 0, abs_floor = 0; /* propagated errors; approximation floor */
  rg_val r = a;
  switch (in->op) {
  case CX_OP_EXP: /* d exp = exp * dx: relative */
    olo = exp(lo), ohi = exp(hi), gl = 0;
    rel_out = ea + er * mx;
    break;
  case CX_OP_EXPM1:
    olo = expm1(lo), ohi = expm1(hi), gl = -1, abs_floor = 1;
    abs_out = exp(hi) * (ea + er * mx);
    break;
  case CX_OP_LOG: /* d log = dx / x */
    if (!(lo > 0)) rg_mark_bad(bd, &r, in, "operand may be <= 0");
    olo = log(lo), ohi = log(hi), abs_floor = 1;
    abs_out = ea / lo + er;
    break;
  case CX_OP_LOG1P:
    if (!(lo > -1)) rg_mark_bad(bd, &r, in, "operand may be <= -1");
    olo = log1p(lo), ohi = log1p(hi), abs_floor = 1;
    abs_out = (ea + er * mx) / (1 + lo);
    break;
  case CX_OP_LOGISTIC: /* these flatten away from 0: slope at the point nearest 0; max |f'(x) x| */
    olo = 1 / (1 + exp(-lo)), ohi = 1 / (1 + exp(-hi)), gl = 0, gh = 1;
    abs_out = exp(-d0) / ((1 + exp(-d0)) * (1 + exp(-d0))) * ea + 0.224 * er;
    break;
  case CX_OP_TANH:
    olo = tanh(lo), ohi = tanh(hi), gl = -1, gh = 1; /* relative near 0 (tanh x ~ x) */
    abs_out = (1 - tanh(d0) * tanh(d0)) * ea + 0.449 * er;
    break;
  case CX_OP_ERF:
    olo = erf(lo), ohi = erf(hi), gl = -1, gh = 1, abs_floor = 1;
    abs_out = 1.1284 * exp(-d0 * d0) * ea + 0.484 * er;
    break;
  case CX_OP_SQRT: /* relative error halves; near 0, |sqrt(x+e) - sqrt(x)| <= sqrt(e) */
    if (!(lo >= 0)) rg_mark_bad(bd, &r, in, "operand may be < 0");
    olo = sqrt(fmax(lo, 0)), ohi = sqrt(fmax(hi, 0)), gl = 0;
    if (lo > 0) rel_out = 0.5 * (er + ea / lo);
    else abs_out = sqrt(ea), rel_out = 0.5 * er;
    break;
  case CX_OP_RSQRT:
    if (!(lo > 0)) rg_mark_bad(bd, &r, in, "operand may be <= 0");
    olo = 1 / sqrt(hi), ohi = 1 / sqrt(lo), gl = 0;
    rel_out = 0.5 * (er + ea / lo) * 1.01;
    break;
  case CX_OP_CBRT:
    olo = cbrt(lo), ohi = cbrt(hi);
    if (d0 > 0) rel_out = (er + ea / d0) / 3;
    else abs_out = 2 * cbrt(ea), rel_out = er / 3;
    break;
  case CX_OP_SIN:
  case CX_OP_COS:
    olo = -1, ohi = 1, gl = -1, gh = 1, abs_floor = fmax(1, mx);
    if (in->op == CX_OP_SIN && lo >= -1.5 && hi <= 1.5) olo = sin(lo), ohi = sin(hi);
    abs_out = ea + er * mx;
    break;
  case CX_OP_TAN:
    if (!(lo >= -1.4 && hi <= 1.4)) rg_mark_bad(bd, &r, in, "operand too close to pi/2");
    olo = tan(fmax(lo, -1.4)), ohi = tan(fmin(hi, 1.4)), abs_floor = 1;
    abs_out = (1 + fmax(olo * olo, ohi * ohi)) * (ea + er * mx);
    break;
  default:
    rg_mark_bad(bd, &r, in, "no rule");
    return r;
  }
  if (a.special && in->op != CX_OP_EXP && in->op != CX_OP_TANH && in->op != CX_OP_LOGISTIC)
    rg_mark_bad(bd, &r, in, "NaN/inf into a function without a rule for them");
  if (a.special) { /* exp(-inf) = 0, tanh(+-inf) = +-1, logistic(+-inf) = 0 or 1 */
    if (in->op == CX_OP_EXP) olo = 0;
    if (in->op == CX_OP_TANH) olo = -1, ohi = 1;
    if (in->op == CX_OP_LOGISTIC) olo = 0, ohi = 1;
  }
  if (isnan(olo) || isnan(ohi)) olo = -INFINITY, ohi = INFINITY;
  double eps = rg_eps(t);
  r.lo = fmin(olo, ohi), r.hi = fmax(olo, ohi);
  r.err = abs_out + APPROX * eps * abs_floor;
  r.rel = rel_out + APPROX * eps;
  cap_err(&r, gh - gl);
  r = rg_finish(bd, in, r, t);
  r.lo = fmax(r.lo, gl), r.hi = fmin(r.hi, gh);
  return r;
}

/* ---- elementwise ---- */

static int is_discrete_on_float(cx_op op) {
  switch (op) {
  case CX_OP_SIGN: case CX_OP_FLOOR: case CX_OP_CEIL: case CX_OP_ROUND_AFZ: case CX_OP_ROUND_EVEN:
  case CX_OP_IS_FINITE: case CX_OP_COMPARE: case CX_OP_REMAINDER: case CX_OP_POPCNT: case CX_OP_CLZ:
  case CX_OP_NOT: case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR:
    return 1;
  default:
    return 0;
  }
}

rg_val rg_bitwise_range(rg_val a, rg_val b, cxla_type t, cx_op op) {
  rg_val r = rg_hull(a, b);
  r.err = r.rel = 0;
  if (t == CXLA_PRED) { r.lo = 0, r.hi = 1; return r; }
  if (a.lo >= 0 && b.lo >= 0) {
    double m = fmax(a.hi, b.hi), p = 1;
    while (p <= m) p *= 2;
    r.lo = 0;
    r.hi = op == CX_OP_AND ? fmin(a.hi, b.hi) : p - 1;
  } else {
    rg_type_range(t, &r.lo, &r.hi);
  }
  return r;
}

static rg_val corners(rg_val r, const double *c) {
  r.lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3]));
  r.hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
  return r;
}

rg_val rg_elementwise(rg_bounds *bd, const cx_instr *in, const rg_val *o) {
  cxla_type t = in->shape.type, ot = in->nops ? in->ops[0]->shape.type : t;
  int fl = cx_type_is_float(ot);
  double eps = rg_eps(t);
  rg_val a = o[0], b = in->nops > 1 ? o[1] : o[0], r = a;
  r.bad = 0;
  for (int i = 0; i < in->nops; i++) r.bad |= o[i].bad, r.special |= o[i].special;
  if (fl && is_discrete_on_float(in->op))
    for (int i = 0; i < in->nops; i++)
      if (rg_inexact(o[i])) rg_mark_bad(bd, &r, in, "inexact float operand of a discontinuous op");
  double ma = rg_vmag(a), mb = rg_vmag(b);
  switch (in->op) {
  case CX_OP_COPY:
    return r;
  case CX_OP_NEGATE:
    r.lo = -a.hi, r.hi = -a.lo;
    return rg_finish(bd, in, r, t);
  case CX_OP_ABS:
    r.lo = a.lo <= 0 && a.hi >= 0 ? 0 : fmin(fabs(a.lo), fabs(a.hi));
    r.hi = ma;
    if (!fl && a.lo <= -ldexp(1, cx_type_bits(t) - 1)) r.lo = -ldexp(1, cx_type_bits(t) - 1); /* abs(MIN) */
    return rg_finish(bd, in, r, t);
  case CX_OP_SIGN:
    r.lo = a.lo < 0 ? -1 : a.lo > 0 ? 1 : 0, r.hi = a.hi > 0 ? 1 : a.hi < 0 ? -1 : 0;
    return r;
  case CX_OP_FLOOR: case CX_OP_CEIL: case CX_OP_ROUND_AFZ: case CX_OP_ROUND_EVEN:
    r.lo = floor(a.lo), r.hi = ceil(a.hi);
    return r;
  case CX_OP_IS_FINITE:
    r.lo = 0, r.hi = 1, r.err = r.rel = 0, r.special = 0;
    return r;
  case CX_OP_NOT:
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1; return r; }
    if (cx_type_kind(t) == CX_KIND_SINT) { r.lo = -a.hi - 1, r.hi = -a.lo - 1; return rg_finish(bd, in, r, t); }
    rg_type_range(t, &r.lo, &r.hi);
    return r;
  case CX_OP_POPCNT: case CX_OP_CLZ:
    r.lo = 0, r.hi = cx_type_bits(t);
    return r;
  case CX_OP_EXP: case CX_OP_EXPM1: case CX_OP_LOG: case CX_OP_LOG1P: case CX_OP_LOGISTIC: case CX_OP_SQRT:
  case CX_OP_RSQRT: case CX_OP_CBRT: case CX_OP_SIN: case CX_OP_COS: case CX_OP_TAN: case CX_OP_TANH:
  case CX_OP_ERF: {
    rg_val u = rg_unary_math(bd, in, a, t);
    u.bad |= r.bad;
    return u;
  }
  case CX_OP_CONVERT: {
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1, r.err = r.rel = 0, r.special = 0; return r; }
    if (cx_type_is_float(t)) {
      if (fl && rg_inexact(a) && eps > rg_eps(ot)) r.rel += eps; /* narrowing may round either way */
      /* int -> float rounds once, exactly, in every backend, unless it goes through f32 on the
       * way (64-bit integers, or bf16 from integers beyond f32's 24 bits) */
      if (!fl && ma > ldexp(1, 24) && (cx_type_bits(ot) > 32 || t == CXLA_BF16)) r.rel = eps;
      return rg_finish(bd, in, r, t);
    }
    /* to an integer: truncation, saturation, NaN -> 0 */
    double tlo, thi;
    rg_type_range(t, &tlo, &thi);
    r.err = r.rel = 0;
    r.lo = trunc(a.lo), r.hi = trunc(a.hi);
    if (a.special) r.lo = -INFINITY, r.hi = INFINITY; /* inf saturates, NaN gives 0 */
    r.special = 0;
    r.lo = fmax(fmin(r.lo, thi), tlo), r.hi = fmax(fmin(r.hi, thi), tlo);
    return r;
  }
  case CX_OP_STOCHASTIC_CONVERT: { /* to a signed integer: floor or ceil of |x| as the bits say */
    if (rg_inexact(a)) rg_mark_bad(bd, &r, in, "inexact operand of a rounding");
    double tlo, thi;
    rg_type_range(t, &tlo, &thi);
    r.err = r.rel = 0;
    r.lo = floor(a.lo), r.hi = ceil(a.hi);
    if (a.special) r.lo = tlo, r.hi = thi; /* inf saturates, NaN gives 0 */
    r.special = 0;
    r.lo = fmax(fmin(r.lo, thi), tlo), r.hi = fmax(fmin(r.hi, thi), tlo);
    r.bad |= b.bad;
    return r;
  }
  case CX_OP_BITCAST_CONVERT: { /* same width only (the generator's use) */
    if (cx_type_bits(t) != cx_type_bits(ot)) { rg_mark_bad(bd, &r, in, "bitcast between widths has no rule"); return r; }
    /* a float's bits depend on NaN payloads and on every rounding */
    if (fl && (rg_inexact(a) || a.special)) rg_mark_bad(bd, &r, in, "bits of an inexact or NaN float");
    r.err = r.rel = 0, r.special = 0;
    if (!cx_type_is_float(t)) { rg_type_range(t, &r.lo, &r.hi); return r; }
    if (t == CXLA_F32 && a.lo >= 0 && a.hi < ldexp(1, 23)) { /* denormals */
      r.lo = 0, r.hi = a.hi * ldexp(1, -149);
      return r;
    }
    r.lo = -max_finite(t), r.hi = max_finite(t), r.special = 1;
    return r;
  }
  case CX_OP_REDUCE_PRECISION: { /* rounds to mantissa_bits: exact on exact inputs */
    if (rg_inexact(a)) r.rel += ldexp(1, -in->a.mantissa_bits);
    /* fewer exponent bits: large values become inf, tiny ones 0 */
    double emax = ldexp(1, (1 << (in->a.exponent_bits - 1)));
    if (ma >= emax * 0.01) rg_mark_bad(bd, &r, in, "may overflow the reduced exponent");
    if (in->a.exponent_bits < 8 && rg_inexact(a)) r.err += ldexp(1, 2 - (1 << (in->a.exponent_bits - 1)));
    return rg_finish(bd, in, r, t);
  }
  case CX_OP_ADD: case CX_OP_SUBTRACT: {
    int sub = in->op == CX_OP_SUBTRACT;
    if (t == CXLA_PRED) return rg_bitwise_range(a, b, t, CX_OP_OR);
    r.lo = sub ? a.lo - b.hi : a.lo + b.lo;
    r.hi = sub ? a.hi - b.lo : a.hi + b.hi;
    /* terms of one sign cannot cancel: relative errors stay relative */
    int same = sub ? (a.lo >= 0 && b.hi <= 0) || (a.hi <= 0 && b.lo >= 0)
                   : (a.lo >= 0 && b.lo >= 0) || (a.hi <= 0 && b.hi <= 0);
    if (same) r.err = a.err + b.err, r.rel = fmax(a.rel, b.rel) + eps;
    else r.err = rg_abs_err(a) + rg_abs_err(b), r.rel = eps;
    return rg_finish(bd, in, r, t);
  }
  case CX_OP_MULTIPLY: {
    if (t == CXLA_PRED) return rg_bitwise_range(a, b, t, CX_OP_AND);
    double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    r = corners(r, c);
    r.err = a.err * mb * (1 + b.rel) + b.err * ma * (1 + a.rel) + a.err * b.err;
    r.rel = a.rel + b.rel + a.rel * b.rel + eps;
    int square = in->ops[0] == in->ops[1] && fl;
    if (square) r.lo = fmax(r.lo, 0);
    r = rg_finish(bd, in, r, t);
    if (square) r.lo = fmax(r.lo, 0); /* x*x >= 0 in every backend */
    return r;
  }
  case CX_OP_DIVIDE: {
    if (!fl) { /* x/0 = -1 (all ones), MIN/-1 = MIN */
      if (cx_type_kind(t) == CX_KIND_UINT) r.lo = 0, r.hi = fmax(a.hi, b.lo <= 0 ? ldexp(1, cx_type_bits(t)) - 1 : 0);
      else r.lo = -ma - 1, r.hi = ma + 1;
      return rg_finish(bd, in, r, t);
    }
    if (!(b.lo > 0 || b.hi < 0)) {
      rg_mark_bad(bd, &r, in, "divisor range contains 0");
      r.lo = -INFINITY, r.hi = INFINITY, r.err = INFINITY;
      return r;
    }
    double m = fmin(fabs(b.lo), fabs(b.hi));
    double c[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    r = corners(r, c);
    r.err = a.err / m + b.err * ma / (m * m) * 1.01;
    r.rel = a.rel + 2.01 * b.rel + eps;
    if (a.special || b.special) rg_mark_bad(bd, &r, in, "NaN/inf into divide");
    return rg_finish(bd, in, r, t);
  }
  case CX_OP_REMAINDER:
    r.lo = fmin(0, a.lo), r.hi = fmax(0, a.hi);
    if (fl && (b.lo <= 0 && b.hi >= 0)) rg_mark_bad(bd, &r, in, "float remainder by a range containing 0");
    return rg_finish(bd, in, r, t);
  case CX_OP_POWER: { /* a^b, a > 0: relative error b*da/a + ln(a)*db */
    if (!fl) { rg_mark_bad(bd, &r, in, "integer power has no rule"); return r; }
    if (!(a.lo > 0)) rg_mark_bad(bd, &r, in, "base may be <= 0");
    double alo = fmax(a.lo, 1e-300);
    double c[4] = {pow(alo, b.lo), pow(alo, b.hi), pow(a.hi, b.lo), pow(a.hi, b.hi)};
    r = corners(r, c);
    r.err = 0;
    r.rel = mb * (a.rel + a.err / alo) + fmax(fabs(log(alo)), fabs(log(a.hi))) * rg_abs_err(b) + APPROX * eps;
    if (a.special || b.special) rg_mark_bad(bd, &r, in, "NaN/inf into power");
    r = rg_finish(bd, in, r, t);
    r.lo = fmax(r.lo, 0);
    return r;
  }
  case CX_OP_ATAN2: { /* atan2(a, b) with b > 0: no branch cut */
    if (!(b.lo > 0)) rg_mark_bad(bd, &r, in, "x range not > 0");
    double bl = fmax(b.lo, 1e-300);
    r.lo = fmin(atan2(a.lo, bl), atan2(a.lo, b.hi));
    r.hi = fmax(atan2(a.hi, bl), atan2(a.hi, b.hi));
    r.err = a.err / bl + 0.5 * a.rel + b.err * ma / (bl * bl) + 0.5 * b.rel + APPROX * eps;
    r.rel = APPROX * eps;
    if (a.special || b.special) rg_mark_bad(bd, &r, in, "NaN/inf into atan2");
    return rg_finish(bd, in, r, t);
  }
  case CX_OP_MAXIMUM: case CX_OP_MINIMUM: {
    int mx = in->op == CX_OP_MAXIMUM;
    r.lo = mx ? fmax(a.lo, b.lo) : fmin(a.lo, b.lo);
    r.hi = mx ? fmax(a.hi, b.hi) : fmin(a.hi, b.hi);
    r.err = fmax(a.err, b.err), r.rel = fmax(a.rel, b.rel);
    return r;
  }
  case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR: {
    rg_val q = rg_bitwise_range(a, b, t, in->op);
    q.bad = r.bad;
    return q;
  }
  case CX_OP_SHIFT_LEFT: case CX_OP_SHIFT_RIGHT_ARITHMETIC: case CX_OP_SHIFT_RIGHT_LOGICAL:
    rg_type_range(t, &r.lo, &r.hi);
    if (in->op != CX_OP_SHIFT_LEFT && a.lo >= 0) r.lo = 0, r.hi = a.hi; /* x >> n stays in [0, x] */
    return r;
  case CX_OP_COMPARE:
    r.lo = 0, r.hi = 1, r.err = r.rel = 0, r.special = 0;
    return r;
  case CX_OP_SELECT: {
    rg_val q = rg_hull(o[1], o[2]);
    q.bad |= o[0].bad;
    return q;
  }
  case CX_OP_CLAMP: { /* clamp(lo, x, hi) = min(max(x, lo), hi): monotone in every argument */
    rg_val l = o[0], x = o[1], h = o[2];
    r.lo = fmin(fmax(x.lo, l.lo), h.lo);
    r.hi = fmin(fmax(x.hi, l.hi), h.hi);
    r.err = fmax(x.err, fmax(l.err, h.err)), r.rel = fmax(x.rel, fmax(l.rel, h.rel));
    if (!rg_inexact(l) && !rg_inexact(h) && !l.special && !h.special) cap_err(&r, fmax(h.hi - l.lo, 0));
    return r;
  }
  default:
    rg_mark_bad(bd, &r, in, "elementwise op without a rule");
    return r;
  }
}

/* ---- reductions and dots ---- */

rg_val rg_reduce_leaf(rg_bounds *bd, const cx_instr *in, rg_red_kind k, rg_val a, rg_val i, double n, cxla_type t) {
  rg_val r = rg_hull(a, i);
  double eps = rg_eps(t);
  switch (k) {
  case RK_MAX: case RK_MIN:
    return r;
  case RK_SUM: {
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1; return r; }
    /* every term is an operand element or, in padding, the init value */
    r.lo = i.lo + n * fmin(a.lo, i.lo);
    r.hi = i.hi + n * fmax(a.hi, i.hi);
    /* docs/numerics.md: a reduce sums f16/bf16 in f32 and rounds once (the interpreter in
     * double, compiled code in f32 chains); reduce-window rounds each partial sum */
    double acc = in->op == CX_OP_REDUCE && (t == CXLA_F16 || t == CXLA_BF16) ? rg_eps(CXLA_F32) : eps;
    double walk = RED_SLACK * acc * sqrt(n + 1);
    if ((a.lo >= 0 && i.lo >= 0) || (a.hi <= 0 && i.hi <= 0)) { /* no cancellation */
      r.err = n * a.err + i.err;
      r.rel = fmax(a.rel, i.rel) + fmin(n * acc, RED_SLACK_SAME_SIGN * acc * sqrt(n + 1)) + eps;
    } else {
      r.err = n * rg_abs_err(a) + rg_abs_err(i) + walk * (rg_vmag(a) * n + rg_vmag(i));
      r.rel = eps;
    }
    return rg_finish(bd, in, r, t);
  }
  case RK_PROD: {
    double m = fmax(rg_vmag(a), 1e-300), p = pow(m, n) * fmax(rg_vmag(i), 1);
    r.lo = -p, r.hi = p;
    if (a.lo >= 0 && i.lo >= 0) r.lo = 0;
    if (a.lo > 0) r.err = i.err * pow(m, n), r.rel = n * (a.rel + a.err / a.lo) + i.rel + (n + 1) * eps;
    else r.err = (n * pow(m, n - 1) * rg_abs_err(a) + rg_abs_err(i)) * fmax(rg_vmag(i), 1), r.rel = (n + 1) * eps;
    return rg_finish(bd, in, r, t);
  }
  case RK_BITWISE:
    return rg_bitwise_range(a, i, t, CX_OP_OR);
  default:
    rg_mark_bad(bd, &r, in, "reducer without a rule");
    return r;
  }
}

rg_val rg_dot_rule(rg_bounds *bd, const cx_instr *in, rg_val a, rg_val b) {
  double K = 1;
  for (int i = 0; i < in->a.dot.lhs_contract.n; i++) K *= (double)in->ops[0]->shape.dims[in->a.dot.lhs_contract.v[i]];
  cxla_type t = in->shape.type;
  double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  rg_val r = corners(rg_hull(a, b), c);
  r.lo = K * fmin(r.lo, 0), r.hi = K * fmax(r.hi, 0);
  double ma = rg_vmag(a), mb = rg_vmag(b), ea = rg_abs_err(a), eb = rg_abs_err(b), eps = rg_eps(t);
  /* f16/bf16 dots accumulate in f32: the products' rounding is that of f32 */
  double acc = (t == CXLA_F16 || t == CXLA_BF16) ? rg_eps(CXLA_F32) : eps;
  r.err = K * (ea * mb + eb * ma + ea * eb) + RED_SLACK * acc * ma * mb * K * sqrt(K);
  r.rel = eps;
  return rg_finish(bd, in, r, t);
}
