/* randgraph_bounds.c — value ranges and error bounds for every array leaf of a module (see
 * randgraph.h). The rules, per op, in one place:
 *  - a range [lo, hi] bounds the finite elements as ANY correct backend computes them: the
 *    exact-math range widened by `err`, then cut to what the op guarantees (abs >= 0,
 *    tanh in [-1, 1], clamp between its bounds, ...);
 *  - `err` bounds the difference between two correct backends: 0 for ops that are exact in
 *    IEEE arithmetic on exact inputs (negate, max, select, shape ops, conversions, compare);
 *    arithmetic adds one rounding of its result (FMA contraction, f16/bf16 computed in f32,
 *    different association); transcendentals add APPROX ulps (polynomial approximations);
 *    sums and dots add a rounding per accumulated term (the interpreter folds sequentially);
 *    operand errors propagate through a Lipschitz bound of the op on the operand range;
 *  - an op whose result jumps when its inputs move by `err` (compare, floor, sign, convert to
 *    an integer, argmax, remainder) needs exact inputs; log/sqrt/divide need their operand
 *    range away from the singularity; results near overflow are not compared. Such values are
 *    `bad`, and badness flows to every user.
 * Integers and pred are always exact; a range that may wrap becomes the type's full range. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "randgraph.h"
#include "ir/types.h"

#define APPROX 16.0 /* ulps allowed to a transcendental function (relative, and absolute near 0) */
#define RED_SLACK 2.0 /* sums: multiple of the sequential-rounding random walk eps*M*N*sqrt(N) */

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

static void type_range(cxla_type t, double *lo, double *hi) {
  if (t == CXLA_PRED) { *lo = 0; *hi = 1; return; }
  int bits = cx_type_bits(t);
  if (cx_type_kind(t) == CX_KIND_UINT) { *lo = 0; *hi = ldexp(1, bits) - 1; return; }
  if (cx_type_kind(t) == CX_KIND_SINT) { *lo = -ldexp(1, bits - 1); *hi = ldexp(1, bits - 1) - 1; return; }
  *lo = -INFINITY;
  *hi = INFINITY;
}

void rg_tolerance(const rg_val *v, cxla_type t, double *rtol, double *atol) {
  if (!cx_type_is_float(t) || v->err == 0) { *rtol = 0; *atol = 0; return; }
  /* 4x the bound (the bound is not a proof), plus two roundings of the result itself */
  *atol = 4 * v->err;
  *rtol = 2 * rg_eps(t);
}

int rg_leaf_count(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < s->ntuple; i++) n += rg_leaf_count(&s->tuple[i]);
  return n;
}

/* ---- storage ---- */

void rg_bounds_init(rg_bounds *bd, cx_module *m) {
  memset(bd, 0, sizeof *bd);
  bd->m = m;
}

void rg_bounds_free(rg_bounds *bd) {
  for (int i = 0; i < bd->cap; i++) cx_free(bd->slot[i].many);
  cx_free(bd->slot);
  memset(bd, 0, sizeof *bd);
}

const rg_val *rg_bounds_get(rg_bounds *bd, const cx_instr *in, int *n) {
  *n = 0;
  if (in->id < 0 || in->id >= bd->cap || !bd->slot[in->id].n) return NULL;
  rg_slot *s = &bd->slot[in->id];
  *n = s->n;
  return s->n == 1 ? &s->one : s->many;
}

int rg_bounds_set(rg_bounds *bd, const cx_instr *in, const rg_val *v, int n) {
  if (in->id < 0) return 0;
  if (in->id >= bd->cap) {
    int cap = in->id + 64 > 2 * bd->cap ? in->id + 64 : 2 * bd->cap;
    rg_slot *ns = cx_realloc(bd->slot, sizeof *ns * (size_t)cap);
    if (!ns) return 0;
    memset(ns + bd->cap, 0, sizeof *ns * (size_t)(cap - bd->cap));
    bd->slot = ns;
    bd->cap = cap;
  }
  rg_slot *s = &bd->slot[in->id];
  cx_free(s->many);
  s->many = NULL;
  s->n = 0;
  if (n == 1) {
    s->one = v[0];
  } else if (n > 1) {
    if (!(s->many = cx_malloc(sizeof *v * (size_t)n))) return 0;
    memcpy(s->many, v, sizeof *v * (size_t)n);
  }
  s->n = n;
  return 1;
}

/* ---- helpers ---- */

static double mag(rg_val a) { return fmax(fabs(a.lo), fabs(a.hi)); }

static rg_val hull(rg_val a, rg_val b) {
  rg_val r = {fmin(a.lo, b.lo), fmax(a.hi, b.hi), fmax(a.err, b.err), a.special | b.special, a.bad | b.bad};
  return r;
}

static void mark_bad(rg_bounds *bd, rg_val *r, const cx_instr *in, const char *why) {
  if (!r->bad)
    snprintf(bd->why, sizeof bd->why, "%s %s: %s", cx_op_name(in->op), in->name ? in->name : "?", why);
  r->bad = 1;
}

/* Finishes a result of type t: widens the range by err, keeps it within what the type holds
 * (ranges that wrap become the full range), and checks overflow. */
static rg_val finish(rg_bounds *bd, const cx_instr *in, rg_val r, cxla_type t) {
  if (isnan(r.err) || isnan(r.lo) || isnan(r.hi)) {
    mark_bad(bd, &r, in, "range lost (NaN bound)");
    r.lo = -INFINITY;
    r.hi = INFINITY;
    r.err = INFINITY;
    return r;
  }
  double tlo, thi;
  type_range(t, &tlo, &thi);
  if (cx_type_is_float(t)) {
    if (r.err > 0) {
      r.lo -= r.err;
      r.hi += r.err;
    }
    /* far from overflow: a value that may round to inf in one backend and not in another
     * cannot be compared */
    if (mag(r) > 0.01 * max_finite(t)) mark_bad(bd, &r, in, "may overflow");
  } else {
    r.err = 0;
    if (r.lo < tlo || r.hi > thi) { /* wraps */
      r.lo = tlo;
      r.hi = thi;
    }
  }
  return r;
}

static int leaf_offset(const cx_shape *s, int64_t index) {
  int off = 0;
  for (int64_t i = 0; i < index && i < s->ntuple; i++) off += rg_leaf_count(&s->tuple[i]);
  return off;
}

/* ---- elementwise ---- */

/* A unary function of the operand range: value range at the ends (monotone functions),
 * Lipschitz bound L on the widened range, and its approximation error. */
static rg_val unary_math(rg_bounds *bd, const cx_instr *in, rg_val a, cxla_type t) {
  double lo = a.lo, hi = a.hi, L = 1, olo = -INFINITY, ohi = INFINITY, abs_floor = 0, prop = -1;
  double d0 = lo > 0 ? lo : hi < 0 ? -hi : 0; /* distance of the operand range from 0 */
  double gl = -INFINITY, gh = INFINITY; /* guaranteed bounds */
  rg_val r = a;
  switch (in->op) {
  case CX_OP_EXP:
    olo = exp(lo), ohi = exp(hi), L = ohi, gl = 0;
    break;
  case CX_OP_EXPM1:
    olo = expm1(lo), ohi = expm1(hi), L = exp(hi), gl = -1, abs_floor = 1;
    break;
  case CX_OP_LOG:
    if (!(lo > 0)) mark_bad(bd, &r, in, "operand may be <= 0");
    olo = log(lo), ohi = log(hi), L = 1 / lo, abs_floor = 1;
    break;
  case CX_OP_LOG1P:
    if (!(lo > -1)) mark_bad(bd, &r, in, "operand may be <= -1");
    olo = log1p(lo), ohi = log1p(hi), L = 1 / (1 + lo), abs_floor = 1;
    break;
  case CX_OP_LOGISTIC: /* these flatten away from 0: the slope at the point nearest 0 bounds them */
    olo = 1 / (1 + exp(-lo)), ohi = 1 / (1 + exp(-hi)), gl = 0, gh = 1, abs_floor = 1;
    L = exp(-d0) / ((1 + exp(-d0)) * (1 + exp(-d0)));
    break;
  case CX_OP_TANH:
    olo = tanh(lo), ohi = tanh(hi), gl = -1, gh = 1, abs_floor = 1;
    L = 1 - tanh(d0) * tanh(d0);
    break;
  case CX_OP_ERF:
    olo = erf(lo), ohi = erf(hi), gl = -1, gh = 1, abs_floor = 1;
    L = 1.1284 * exp(-d0 * d0);
    break;
  case CX_OP_SQRT:
    if (!(lo >= 0)) mark_bad(bd, &r, in, "operand may be < 0");
    olo = sqrt(fmax(lo, 0)), ohi = sqrt(fmax(hi, 0)), gl = 0;
    /* near 0 sqrt is not Lipschitz: |sqrt(x+e) - sqrt(x)| <= sqrt(e) */
    if (lo > 0) L = 0.5 / sqrt(lo);
    else prop = sqrt(a.err);
    break;
  case CX_OP_RSQRT:
    if (!(lo > 0)) mark_bad(bd, &r, in, "operand may be <= 0");
    olo = 1 / sqrt(hi), ohi = 1 / sqrt(lo), L = 0.5 * pow(lo, -1.5), gl = 0;
    break;
  case CX_OP_CBRT:
    olo = cbrt(lo), ohi = cbrt(hi);
    if (lo > 0 || hi < 0) L = pow(fmin(fabs(lo), fabs(hi)), -2.0 / 3) / 3;
    else prop = 2 * cbrt(a.err); /* |cbrt(x+e) - cbrt(x)| <= 2 cbrt(e) */
    break;
  case CX_OP_SIN:
  case CX_OP_COS:
    olo = -1, ohi = 1, gl = -1, gh = 1, abs_floor = fmax(1, mag(a));
    if (in->op == CX_OP_SIN && lo >= -1.5 && hi <= 1.5) olo = sin(lo), ohi = sin(hi);
    break;
  case CX_OP_TAN:
    if (!(lo >= -1.4 && hi <= 1.4)) mark_bad(bd, &r, in, "operand too close to pi/2");
    olo = tan(fmax(lo, -1.4)), ohi = tan(fmin(hi, 1.4));
    L = 1 + fmax(olo * olo, ohi * ohi), abs_floor = 1;
    break;
  default:
    mark_bad(bd, &r, in, "no rule");
    return r;
  }
  if (a.special && (in->op != CX_OP_EXP && in->op != CX_OP_TANH && in->op != CX_OP_LOGISTIC))
    mark_bad(bd, &r, in, "NaN/inf into a function without a rule for them");
  if (a.special) { /* exp(-inf) = 0, tanh(+-inf) = +-1, logistic(+-inf) = 0 or 1 */
    if (in->op == CX_OP_EXP) olo = 0;
    if (in->op == CX_OP_TANH) olo = -1, ohi = 1;
    if (in->op == CX_OP_LOGISTIC) olo = 0, ohi = 1;
  }
  if (isnan(olo) || isnan(ohi)) olo = -INFINITY, ohi = INFINITY;
  r.lo = fmin(olo, ohi);
  r.hi = fmax(olo, ohi);
  double eps = rg_eps(t);
  r.err = (prop >= 0 ? prop : L * a.err) + APPROX * eps * fmax(mag(r), abs_floor);
  /* both backends land in [gl, gh]: they cannot differ by more than its width */
  if (r.err > gh - gl) r.err = gh - gl;
  r = finish(bd, in, r, t);
  r.lo = fmax(r.lo, gl);
  r.hi = fmin(r.hi, gh);
  return r;
}

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

static rg_val bitwise_range(rg_val a, rg_val b, cxla_type t, cx_op op) {
  rg_val r = hull(a, b);
  double tlo, thi;
  type_range(t, &tlo, &thi);
  if (t == CXLA_PRED) { r.lo = 0; r.hi = 1; return r; }
  if (a.lo >= 0 && b.lo >= 0) {
    double m = fmax(a.hi, b.hi), p = 1;
    while (p <= m) p *= 2;
    r.lo = 0;
    r.hi = op == CX_OP_AND ? fmin(a.hi, b.hi) : p - 1;
  } else {
    r.lo = tlo;
    r.hi = thi;
  }
  return r;
}

static rg_val elementwise(rg_bounds *bd, const cx_instr *in, const rg_val *o) {
  cxla_type t = in->shape.type, ot = in->nops ? in->ops[0]->shape.type : t;
  int fl = cx_type_is_float(ot);
  double eps = rg_eps(t);
  rg_val a = o[0], b = in->nops > 1 ? o[1] : o[0], r = a;
  r.bad = 0;
  for (int i = 0; i < in->nops; i++) r.bad |= o[i].bad, r.special |= o[i].special;
  if (fl && is_discrete_on_float(in->op))
    for (int i = 0; i < in->nops; i++)
      if (o[i].err > 0) mark_bad(bd, &r, in, "inexact float operand of a discontinuous op");
  switch (in->op) {
  case CX_OP_COPY:
    return r;
  case CX_OP_NEGATE:
    r.lo = -a.hi, r.hi = -a.lo;
    return finish(bd, in, r, t);
  case CX_OP_ABS:
    r.lo = a.lo <= 0 && a.hi >= 0 ? 0 : fmin(fabs(a.lo), fabs(a.hi));
    r.hi = mag(a);
    if (!fl && a.lo <= -ldexp(1, cx_type_bits(t) - 1)) r.lo = -ldexp(1, cx_type_bits(t) - 1); /* abs(MIN) */
    return finish(bd, in, r, t);
  case CX_OP_SIGN:
    r.lo = a.lo < 0 ? -1 : a.lo > 0 ? 1 : 0, r.hi = a.hi > 0 ? 1 : a.hi < 0 ? -1 : 0;
    return r;
  case CX_OP_FLOOR: case CX_OP_CEIL: case CX_OP_ROUND_AFZ: case CX_OP_ROUND_EVEN:
    r.lo = floor(a.lo), r.hi = ceil(a.hi);
    return r;
  case CX_OP_IS_FINITE:
    r.lo = 0, r.hi = 1, r.err = 0, r.special = 0;
    return r;
  case CX_OP_NOT:
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1; return r; }
    if (cx_type_kind(t) == CX_KIND_SINT) { r.lo = -a.hi - 1, r.hi = -a.lo - 1; return finish(bd, in, r, t); }
    type_range(t, &r.lo, &r.hi);
    return r;
  case CX_OP_POPCNT: case CX_OP_CLZ:
    r.lo = 0, r.hi = cx_type_bits(t);
    return r;
  case CX_OP_EXP: case CX_OP_EXPM1: case CX_OP_LOG: case CX_OP_LOG1P: case CX_OP_LOGISTIC: case CX_OP_SQRT:
  case CX_OP_RSQRT: case CX_OP_CBRT: case CX_OP_SIN: case CX_OP_COS: case CX_OP_TAN: case CX_OP_TANH:
  case CX_OP_ERF: {
    rg_val u = unary_math(bd, in, a, t);
    u.bad |= r.bad;
    return u;
  }
  case CX_OP_CONVERT: {
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1, r.err = 0, r.special = 0; return r; }
    if (cx_type_is_float(t)) {
      if (fl && a.err > 0) r.err = a.err + eps * mag(a); /* rounding may go either way */
      /* int -> float rounds once, exactly, in every backend, unless it goes through f32 on the
       * way (64-bit integers, or bf16 from integers beyond f32's 24 bits) */
      if (!fl && mag(a) > ldexp(1, 24) && (cx_type_bits(ot) > 32 || t == CXLA_BF16)) r.err = eps * mag(a);
      return finish(bd, in, r, t);
    }
    /* to an integer: truncation, saturation, NaN -> 0 */
    r.err = 0;
    r.lo = trunc(a.lo), r.hi = trunc(a.hi);
    if (a.special) r.lo = -INFINITY, r.hi = INFINITY; /* inf saturates, NaN gives 0 */
    r.special = 0;
    double tlo, thi;
    type_range(t, &tlo, &thi);
    r.lo = fmax(fmin(r.lo, thi), tlo), r.hi = fmax(fmin(r.hi, thi), tlo);
    return r;
  }
  case CX_OP_ADD: case CX_OP_SUBTRACT: {
    int sub = in->op == CX_OP_SUBTRACT;
    if (t == CXLA_PRED) return bitwise_range(a, b, t, CX_OP_OR);
    r.lo = sub ? a.lo - b.hi : a.lo + b.lo;
    r.hi = sub ? a.hi - b.lo : a.hi + b.hi;
    r.err = a.err + b.err + eps * fmax(fabs(r.lo), fabs(r.hi));
    return finish(bd, in, r, t);
  }
  case CX_OP_MULTIPLY: {
    if (t == CXLA_PRED) return bitwise_range(a, b, t, CX_OP_AND);
    double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    r.lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3]));
    r.hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
    if (in->ops[0] == in->ops[1] && fl) r.lo = fmax(r.lo, 0);
    r.err = a.err * mag(b) + b.err * mag(a) + a.err * b.err + eps * fmax(fabs(r.lo), fabs(r.hi));
    r = finish(bd, in, r, t);
    if (in->ops[0] == in->ops[1] && fl) r.lo = fmax(r.lo, 0); /* x*x >= 0 in every backend */
    return r;
  }
  case CX_OP_DIVIDE: {
    if (!fl) { /* x/0 = -1 (all ones), MIN/-1 = MIN */
      if (cx_type_kind(t) == CX_KIND_UINT) { r.lo = 0, r.hi = fmax(a.hi, b.lo <= 0 ? ldexp(1, cx_type_bits(t)) - 1 : 0); }
      else { r.lo = -mag(a) - 1, r.hi = mag(a) + 1; }
      return finish(bd, in, r, t);
    }
    if (!(b.lo > 0 || b.hi < 0)) {
      mark_bad(bd, &r, in, "divisor range contains 0");
      r.lo = -INFINITY, r.hi = INFINITY, r.err = INFINITY;
      return r;
    }
    double mb = fmin(fabs(b.lo), fabs(b.hi));
    double c[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    r.lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3]));
    r.hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
    r.err = a.err / mb + b.err * mag(a) / (mb * mb) + eps * fmax(fabs(r.lo), fabs(r.hi));
    if (a.special || b.special) mark_bad(bd, &r, in, "NaN/inf into divide");
    return finish(bd, in, r, t);
  }
  case CX_OP_REMAINDER:
    r.lo = fmin(0, a.lo), r.hi = fmax(0, a.hi);
    if (fl && (b.lo <= 0 && b.hi >= 0)) mark_bad(bd, &r, in, "float remainder by a range containing 0");
    return finish(bd, in, r, t);
  case CX_OP_POWER: {
    if (!fl) { mark_bad(bd, &r, in, "integer power has no rule"); return r; }
    if (!(a.lo > 0)) mark_bad(bd, &r, in, "base may be <= 0");
    double alo = fmax(a.lo, 1e-300), c[4] = {pow(alo, b.lo), pow(alo, b.hi), pow(a.hi, b.lo), pow(a.hi, b.hi)};
    r.lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3]));
    r.hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
    double la = mag(b) * fmax(fmax(pow(alo, b.lo - 1), pow(alo, b.hi - 1)), fmax(pow(a.hi, b.lo - 1), pow(a.hi, b.hi - 1)));
    double lb = r.hi * fmax(fabs(log(alo)), fabs(log(a.hi)));
    r.err = la * a.err + lb * b.err + APPROX * eps * fmax(r.hi, 1);
    if (a.special || b.special) mark_bad(bd, &r, in, "NaN/inf into power");
    r = finish(bd, in, r, t);
    r.lo = fmax(r.lo, 0);
    return r;
  }
  case CX_OP_ATAN2: { /* atan2(a, b) with b > 0: no branch cut */
    if (!(b.lo > 0)) mark_bad(bd, &r, in, "x range not > 0");
    double bl = fmax(b.lo, 1e-300);
    r.lo = atan2(a.lo, bl) < atan2(a.lo, b.hi) ? atan2(a.lo, bl) : atan2(a.lo, b.hi);
    r.hi = atan2(a.hi, bl) > atan2(a.hi, b.hi) ? atan2(a.hi, bl) : atan2(a.hi, b.hi);
    r.err = a.err / bl + b.err * mag(a) / (bl * bl) + APPROX * eps * fmax(mag(r), 1);
    if (a.special || b.special) mark_bad(bd, &r, in, "NaN/inf into atan2");
    return finish(bd, in, r, t);
  }
  case CX_OP_MAXIMUM: case CX_OP_MINIMUM: {
    int mx = in->op == CX_OP_MAXIMUM;
    r.lo = mx ? fmax(a.lo, b.lo) : fmin(a.lo, b.lo);
    r.hi = mx ? fmax(a.hi, b.hi) : fmin(a.hi, b.hi);
    r.err = fmax(a.err, b.err);
    return r;
  }
  case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR: {
    rg_val q = bitwise_range(a, b, t, in->op);
    q.bad = r.bad;
    q.err = 0;
    return q;
  }
  case CX_OP_SHIFT_LEFT: case CX_OP_SHIFT_RIGHT_ARITHMETIC: case CX_OP_SHIFT_RIGHT_LOGICAL:
    type_range(t, &r.lo, &r.hi);
    if (in->op != CX_OP_SHIFT_LEFT && a.lo >= 0) r.lo = 0, r.hi = a.hi; /* x >> n stays in [0, x] */
    return r;
  case CX_OP_COMPARE:
    r.lo = 0, r.hi = 1, r.err = 0, r.special = 0;
    return r;
  case CX_OP_SELECT: {
    rg_val q = hull(o[1], o[2]);
    q.bad |= o[0].bad;
    return q;
  }
  case CX_OP_CLAMP: { /* clamp(lo, x, hi) = min(max(x, lo), hi): monotone in every argument */
    rg_val l = o[0], x = o[1], h = o[2];
    r.lo = fmin(fmax(x.lo, l.lo), h.lo);
    r.hi = fmin(fmax(x.hi, l.hi), h.hi);
    r.err = fmax(x.err, fmax(l.err, h.err));
    if (l.err == 0 && h.err == 0 && !l.special && !h.special && r.err > h.hi - l.lo) r.err = fmax(h.hi - l.lo, 0);
    r.special = x.special | l.special | h.special;
    return r;
  }
  default:
    mark_bad(bd, &r, in, "elementwise op without a rule");
    return r;
  }
}

/* ---- reductions ---- */

typedef enum { RK_UNKNOWN, RK_SUM, RK_PROD, RK_MAX, RK_MIN, RK_BITWISE, RK_VARIADIC } red_kind;

static red_kind reducer_kind(const cx_comp *c) {
  const cx_instr *r = c->root;
  if (!r) return RK_UNKNOWN;
  if (r->op == CX_OP_TUPLE) return RK_VARIADIC;
  if (r->nops != 2 || r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER ||
      r->ops[0] == r->ops[1])
    return RK_UNKNOWN;
  switch (r->op) {
  case CX_OP_ADD: return RK_SUM;
  case CX_OP_MULTIPLY: return RK_PROD;
  case CX_OP_MAXIMUM: return RK_MAX;
  case CX_OP_MINIMUM: return RK_MIN;
  case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR: return RK_BITWISE;
  default: return RK_UNKNOWN;
  }
}

/* One reduced leaf: n elements of range a folded with init i by a reducer of kind k. */
static rg_val reduce_leaf(rg_bounds *bd, const cx_instr *in, red_kind k, rg_val a, rg_val i, double n,
                          cxla_type t) {
  rg_val r = hull(a, i);
  double eps = rg_eps(t);
  switch (k) {
  case RK_MAX: case RK_MIN:
    return r;
  case RK_SUM:
    if (t == CXLA_PRED) { r.lo = 0, r.hi = 1; return r; }
    /* every term is an operand element or, in padding, the init value */
    r.lo = i.lo + n * fmin(a.lo, i.lo);
    r.hi = i.hi + n * fmax(a.hi, i.hi);
    r.err = n * a.err + i.err + RED_SLACK * eps * (mag(a) * n * sqrt(n) + mag(i)) + eps * fmax(fabs(r.lo), fabs(r.hi));
    return finish(bd, in, r, t);
  case RK_PROD: {
    double m = fmax(mag(a), 1e-300), p = pow(m, n) * fmax(mag(i), 1);
    r.lo = -p, r.hi = p;
    if (a.lo >= 0 && i.lo >= 0) r.lo = 0;
    r.err = (n * pow(m, n - 1) * a.err + i.err) * fmax(mag(i), 1) + (n + 1) * eps * p;
    return finish(bd, in, r, t);
  }
  case RK_BITWISE:
    return bitwise_range(a, i, t, CX_OP_OR);
  default:
    mark_bad(bd, &r, in, "reducer without a rule");
    return r;
  }
}

static void reduce_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  int n = in->nops / 2, nl;
  red_kind k = in->ncalled ? reducer_kind(in->called[0]) : RK_UNKNOWN;
  double cnt = 1;
  if (in->op == CX_OP_REDUCE) {
    for (int d = 0; d < in->a.dims.n; d++) cnt *= (double)in->ops[0]->shape.dims[in->a.dims.v[d]];
  } else {
    for (int d = 0; d < in->a.window.rank; d++) cnt *= (double)in->a.window.d[d].size;
  }
  int any_bad = 0, inexact = 0, special = 0;
  for (int j = 0; j < in->nops; j++) {
    const rg_val *v = rg_bounds_get(bd, in->ops[j], &nl);
    if (v) any_bad |= v->bad, inexact |= v->err > 0, special |= v->special;
  }
  for (int j = 0; j < nout && j < n; j++) {
    const rg_val *a = rg_bounds_get(bd, in->ops[j], &nl), *i = rg_bounds_get(bd, in->ops[n + j], &nl);
    cxla_type t = in->shape.type == CXLA_TUPLE ? in->shape.tuple[j].type : in->shape.type;
    out[j] = k == RK_VARIADIC ? hull(*a, *i) : reduce_leaf(bd, in, k, *a, *i, cnt, t);
    out[j].bad |= any_bad;
    /* a multi-operand reducer (argmax) chooses by comparing: it needs exact, finite inputs */
    if (k == RK_VARIADIC && (inexact || special)) mark_bad(bd, &out[j], in, "variadic reduce of inexact or NaN values");
  }
}

/* ---- library ops ---- */

static rg_val dot_op(rg_bounds *bd, cx_instr *in, rg_val a, rg_val b) {
  double K = 1;
  for (int i = 0; i < in->a.dot.lhs_contract.n; i++) K *= (double)in->ops[0]->shape.dims[in->a.dot.lhs_contract.v[i]];
  cxla_type t = in->shape.type;
  double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  rg_val r = hull(a, b);
  r.lo = K * fmin(fmin(fmin(c[0], c[1]), fmin(c[2], c[3])), 0);
  r.hi = K * fmax(fmax(fmax(c[0], c[1]), fmax(c[2], c[3])), 0);
  double ma = mag(a), mb = mag(b), eps = rg_eps(t);
  /* f16/bf16 dots accumulate in f32: the products' rounding is that of f32 */
  double acc_eps = (t == CXLA_F16 || t == CXLA_BF16) ? rg_eps(CXLA_F32) : eps;
  r.err = K * (a.err * mb + b.err * ma + a.err * b.err) + RED_SLACK * acc_eps * ma * mb * K * sqrt(K) +
          eps * fmax(fabs(r.lo), fabs(r.hi));
  return finish(bd, in, r, t);
}

/* ---- control flow ---- */

static int comp_leaves(rg_bounds *bd, cx_comp *c, int nargs, const rg_val *const *args, const int *nleaves,
                       rg_val *out, int nout) {
  if (bd->depth > 16) return 0;
  bd->depth++;
  int ok = rg_bounds_comp(bd, c, nargs, args, nleaves);
  bd->depth--;
  int n;
  const rg_val *r = ok ? rg_bounds_get(bd, c->root, &n) : NULL;
  if (!r || n != nout) return 0;
  memcpy(out, r, sizeof *out * (size_t)nout);
  return 1;
}

/* Trip count bound of a while loop from a condition like compare(gte(p, k), c) LT; 16 when
 * the pattern is not there. */
static int trip_bound(rg_bounds *bd, cx_instr *w, const rg_val *init) {
  const cx_instr *r = w->called[0]->root;
  if (r->op != CX_OP_COMPARE) return 16;
  const cx_instr *x = r->ops[0], *y = r->ops[1];
  if (x->op != CX_OP_GET_TUPLE_ELEMENT || x->ops[0]->op != CX_OP_PARAMETER || y->op != CX_OP_CONSTANT) return 16;
  int nl;
  const rg_val *c = rg_bounds_get(bd, y, &nl);
  double start = init[leaf_offset(&w->shape, x->a.index)].lo;
  if (!c || !isfinite(c->hi) || !isfinite(start)) return 16;
  double n = c->hi - start + 2;
  return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static int while_op(rg_bounds *bd, cx_instr *w, rg_val *out, int nout) {
  int nl;
  const rg_val *init = rg_bounds_get(bd, w->ops[0], &nl);
  if (!init || nl != nout) return 0;
  rg_val *state = cx_malloc(sizeof *state * (size_t)nout * 2);
  if (!state) return 0;
  rg_val *next = state + nout;
  memcpy(state, init, sizeof *state * (size_t)nout);
  int trips = trip_bound(bd, w, init), ok = 1;
  for (int it = 0; it < trips && ok; it++) {
    const rg_val *args[1] = {state};
    ok = comp_leaves(bd, w->called[1], 1, args, &nout, next, nout);
    int grew = 0;
    for (int i = 0; ok && i < nout; i++) {
      rg_val h = hull(state[i], next[i]);
      grew |= memcmp(&h, &state[i], sizeof h) != 0;
      state[i] = h;
    }
    if (!grew) break;
  }
  /* the condition decides on the state: it must be exact */
  rg_val cond;
  const rg_val *args[1] = {state};
  if (ok && comp_leaves(bd, w->called[0], 1, args, &nout, &cond, 1) && cond.bad)
    for (int i = 0; i < nout; i++) mark_bad(bd, &state[i], w, "loop condition not determined");
  if (ok) memcpy(out, state, sizeof *out * (size_t)nout);
  cx_free(state);
  return ok;
}

static int conditional_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  int nl, ok = 1;
  const rg_val *idx = rg_bounds_get(bd, in->ops[0], &nl);
  rg_val *tmp = cx_malloc(sizeof *tmp * (size_t)nout);
  if (!tmp || !idx) { cx_free(tmp); return 0; }
  for (int k = 0; k < in->ncalled && ok; k++) {
    int n;
    const rg_val *arg = rg_bounds_get(bd, in->ops[1 + k], &n);
    const rg_val *args[1] = {arg};
    ok = arg && comp_leaves(bd, in->called[k], 1, args, &n, tmp, nout);
    for (int i = 0; ok && i < nout; i++) out[i] = k ? hull(out[i], tmp[i]) : tmp[i];
  }
  for (int i = 0; ok && i < nout; i++) out[i].bad |= idx->bad;
  cx_free(tmp);
  return ok;
}

static int call_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  const rg_val *args[64];
  int nls[64];
  if (in->nops > 64) return 0;
  for (int i = 0; i < in->nops; i++)
    if (!(args[i] = rg_bounds_get(bd, in->ops[i], &nls[i]))) return 0;
  return comp_leaves(bd, in->called[0], in->nops, args, nls, out, nout);
}

/* ---- one instruction ---- */

static rg_val constant_range(const cx_instr *in) {
  rg_val r = {INFINITY, -INFINITY, 0, 0, 0};
  const cxla_literal *l = in->a.literal;
  int64_t n = cx_shape_elems(&l->shape);
  for (int64_t i = 0; i < n; i++) {
    double v = cx_load_f64(l->shape.type, l->data, i);
    if (!isfinite(v)) { r.special = 1; continue; }
    r.lo = fmin(r.lo, v), r.hi = fmax(r.hi, v);
  }
  if (r.lo > r.hi) r.lo = r.hi = 0;
  return r;
}

int rg_bounds_instr(rg_bounds *bd, cx_instr *in) {
  int nout = rg_leaf_count(&in->shape), nl;
  rg_val stack[8], *out = nout <= 8 ? stack : cx_malloc(sizeof *out * (size_t)nout);
  if (!out) return 0;
  int ok = 1;
  rg_val o[4], first = {0, 0, 0, 0, 0};
  for (int i = 0; i < in->nops; i++) {
    const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
    if (!v) { ok = 0; break; }
    if (i < 4) o[i] = v[0];
    if (i == 0) first = v[0];
  }
  for (int i = 0; ok && i < nout; i++) out[i] = first;
  switch (ok ? cx_op_class_of(in->op) : CX_CLASS_OTHER) {
  case CX_CLASS_ELEMENTWISE:
    out[0] = elementwise(bd, in, o);
    break;
  case CX_CLASS_DATA:
    if (in->op == CX_OP_CONSTANT) {
      out[0] = constant_range(in);
    } else if (in->op == CX_OP_TUPLE) {
      for (int i = 0, k = 0; i < in->nops; i++) {
        const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
        memcpy(out + k, v, sizeof *out * (size_t)nl);
        k += nl;
      }
    } else if (in->op == CX_OP_GET_TUPLE_ELEMENT) {
      const rg_val *v = rg_bounds_get(bd, in->ops[0], &nl);
      memcpy(out, v + leaf_offset(&in->ops[0]->shape, in->a.index), sizeof *out * (size_t)nout);
    } else {
      ok = 0; /* parameters are set by the caller */
    }
    break;
  case CX_CLASS_SHAPE: {
    if (in->op == CX_OP_IOTA) {
      rg_val r = {0, (double)(in->shape.dims[in->a.index] - 1), 0, 0, 0};
      if (r.hi < 0) r.hi = 0;
      out[0] = r;
      break;
    }
    int ndata = in->op == CX_OP_DYNAMIC_SLICE || in->op == CX_OP_GATHER ? 1
                : in->op == CX_OP_DYNAMIC_UPDATE_SLICE                   ? 2
                                                                         : in->nops;
    rg_val r = first;
    for (int i = 1; i < in->nops; i++) {
      const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
      if (i < ndata) r = hull(r, *v);
      else r.bad |= v->bad; /* indices are integers: exact */
    }
    out[0] = r;
    break;
  }
  case CX_CLASS_REDUCE:
    if (in->op == CX_OP_REDUCE || in->op == CX_OP_REDUCE_WINDOW) {
      reduce_op(bd, in, out, nout);
    } else {
      for (int i = 0; i < nout; i++) mark_bad(bd, &out[i], in, "op not analysed");
    }
    break;
  case CX_CLASS_LIBRARY:
    if (in->op == CX_OP_DOT) out[0] = dot_op(bd, in, o[0], o[1]);
    else mark_bad(bd, &out[0], in, "op not analysed");
    break;
  case CX_CLASS_CONTROL:
    if (in->op == CX_OP_WHILE) ok = while_op(bd, in, out, nout);
    else if (in->op == CX_OP_CONDITIONAL) ok = conditional_op(bd, in, out, nout);
    else ok = call_op(bd, in, out, nout); /* call, fusion */
    break;
  default:
    if (ok)
      for (int i = 0; i < nout; i++) mark_bad(bd, &out[i], in, "op not analysed");
    break;
  }
  if (ok) ok = rg_bounds_set(bd, in, out, nout);
  if (out != stack) cx_free(out);
  return ok;
}

int rg_bounds_comp(rg_bounds *bd, cx_comp *c, int nargs, const rg_val *const *args, const int *nleaves) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->op == CX_OP_PARAMETER) {
      int64_t p = in->a.index;
      if (p < 0 || p >= nargs || nleaves[p] != rg_leaf_count(&in->shape)) return 0;
      if (!rg_bounds_set(bd, in, args[p], nleaves[p])) return 0;
    } else if (!rg_bounds_instr(bd, in)) {
      return 0;
    }
  }
  return 1;
}

rg_val *rg_analyze(cx_module *m, const rg_param *params, int nparams, int *n, char *why, size_t whylen) {
  rg_bounds bd;
  rg_bounds_init(&bd, m);
  *n = 0;
  cx_comp *e = m->entry;
  const rg_val **args = cx_malloc(sizeof *args * (size_t)(nparams + 1));
  int *nl = cx_malloc(sizeof *nl * (size_t)(nparams + 1));
  rg_val *res = NULL;
  if (args && nl) {
    for (int i = 0; i < nparams; i++) args[i] = &params[i].v, nl[i] = 1;
    int k;
    const rg_val *r = rg_bounds_comp(&bd, e, nparams, args, nl) ? rg_bounds_get(&bd, e->root, &k) : NULL;
    if (r && (res = cx_malloc(sizeof *res * (size_t)k))) {
      memcpy(res, r, sizeof *res * (size_t)k);
      *n = k;
    }
  }
  if (why && whylen) snprintf(why, whylen, "%s", bd.why);
  cx_free(args);
  cx_free(nl);
  rg_bounds_free(&bd);
  return res;
}

void rg_bounds_print(cx_module *m, const rg_param *params, int nparams, cx_sb *sb) {
  rg_bounds bd;
  rg_bounds_init(&bd, m);
  const rg_val **args = cx_malloc(sizeof *args * (size_t)(nparams + 1));
  int *nl = cx_malloc(sizeof *nl * (size_t)(nparams + 1));
  if (args && nl) {
    for (int i = 0; i < nparams; i++) args[i] = &params[i].v, nl[i] = 1;
    rg_bounds_comp(&bd, m->entry, nparams, args, nl);
    for (int i = 0; i < m->entry->ninstrs; i++) {
      const cx_instr *in = m->entry->instrs[i];
      int n;
      const rg_val *v = rg_bounds_get(&bd, in, &n);
      cx_sb_printf(sb, "  %-28s", in->name ? in->name : "?");
      for (int k = 0; v && k < n && k < 4; k++)
        cx_sb_printf(sb, " [%.4g, %.4g] err %.3g%s%s", v[k].lo, v[k].hi, v[k].err, v[k].special ? " nan/inf" : "",
                     v[k].bad ? " BAD" : "");
      cx_sb_putc(sb, '\n');
    }
  }
  cx_free(args);
  cx_free(nl);
  rg_bounds_free(&bd);
}
