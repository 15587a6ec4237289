/* elemental_complex.c — complex numbers in the element generators. A c64 / c128 register is
 * an LLVM struct {re, im} of two f32 / f64 (cx_cg_reg_type), as in memory. Every op computes
 * in double — a c64 operand's parts widen exactly — with the interpreter's formulas
 * (interp/ew_complex.c: XLA's semantics, its special values for infinities and NaN, and
 * cancellation-free forms where XLA's formulas cancel), calling the target's f64 math
 * functions, and rounds each part once to the component type. So a c64 result is the
 * interpreter's (same double computation, one rounding), up to the last bits of the libm
 * functions; sinh and cosh, which have no op of their own, are built from expm1 and exp.
 *
 * The builders are the `c` column of the op rows in elemental.c and elemental_math.c; convert
 * into and out of complex types is cx_gen_convert's (elemental_convert.c). */
#include <math.h>
#include "codegen/complex.h"

typedef struct zd {
  LLVMValueRef re, im; /* f64 */
} zd;

static LLVMBuilderRef B(cx_gen *g) { return g->cg->b; }
static LLVMValueRef D(cx_gen *g, double v) { return LLVMConstReal(g->cg->t_f64, v); }
static LLVMValueRef add(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFAdd(B(g), x, y, ""); }
static LLVMValueRef sub(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFSub(B(g), x, y, ""); }
static LLVMValueRef mul(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFMul(B(g), x, y, ""); }
static LLVMValueRef dv(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFDiv(B(g), x, y, ""); }
static LLVMValueRef neg(cx_gen *g, LLVMValueRef x) { return LLVMBuildFNeg(B(g), x, ""); }
static LLVMValueRef fabs_(cx_gen *g, LLVMValueRef x) { return cx_ir_intr1(g, "llvm.fabs", x); }
static LLVMValueRef copysign_(cx_gen *g, LLVMValueRef mag, LLVMValueRef sgn) {
  return cx_ir_intr2(g, "llvm.copysign", mag, sgn);
}
static LLVMValueRef cmp(cx_gen *g, LLVMRealPredicate p, LLVMValueRef x, LLVMValueRef y) {
  return LLVMBuildFCmp(B(g), p, x, y, "");
}
static LLVMValueRef sel(cx_gen *g, LLVMValueRef c, LLVMValueRef x, LLVMValueRef y) {
  return LLVMBuildSelect(B(g), c, x, y, "");
}
static LLVMValueRef and_(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildAnd(B(g), x, y, ""); }
static LLVMValueRef or_(cx_gen *g, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildOr(B(g), x, y, ""); }
static LLVMValueRef not_(cx_gen *g, LLVMValueRef x) { return LLVMBuildNot(B(g), x, ""); }
static LLVMValueRef isnan_(cx_gen *g, LLVMValueRef x) { return cmp(g, LLVMRealUNO, x, x); }
static LLVMValueRef isinf_(cx_gen *g, LLVMValueRef x) { return cmp(g, LLVMRealOEQ, fabs_(g, x), D(g, INFINITY)); }
static LLVMValueRef isfinite_(cx_gen *g, LLVMValueRef x) { return cmp(g, LLVMRealOLT, fabs_(g, x), D(g, INFINITY)); }
static LLVMValueRef eq(cx_gen *g, LLVMValueRef x, double v) { return cmp(g, LLVMRealOEQ, x, D(g, v)); }
/* parts of complex values: c128 asks the target for the interpreter's functions */
static LLVMValueRef m1(cx_gen *g, cx_op op, LLVMValueRef x) { return cx_gen_math(g, op, CXLA_C128, 1, &x); }
static LLVMValueRef m2(cx_gen *g, cx_op op, LLVMValueRef x, LLVMValueRef y) {
  return cx_gen_math(g, op, CXLA_C128, 2, (LLVMValueRef[]){x, y});
}
static zd zsel(cx_gen *g, LLVMValueRef c, zd x, zd y) { return (zd){sel(g, c, x.re, y.re), sel(g, c, x.im, y.im)}; }
static zd zk(cx_gen *g, double re, double im) { return (zd){D(g, re), D(g, im)}; }

/* ---- registers ---- */

LLVMValueRef cx_gen_complex(cx_gen *g, cxla_type t, LLVMValueRef re, LLVMValueRef im) {
  LLVMValueRef v = LLVMGetUndef(cx_cg_reg_type(g->cg, t));
  v = LLVMBuildInsertValue(B(g), v, re, 0, "");
  return LLVMBuildInsertValue(B(g), v, im, 1, "");
}

LLVMValueRef cx_gen_part(cx_gen *g, LLVMValueRef v, int k) { return LLVMBuildExtractValue(B(g), v, (unsigned)k, ""); }

static LLVMValueRef widen(cx_gen *g, cxla_type t, LLVMValueRef x) {
  return cx_type_part(t) == CXLA_F64 ? x : LLVMBuildFPExt(B(g), x, g->cg->t_f64, "");
}
static LLVMValueRef narrow(cx_gen *g, cxla_type part, LLVMValueRef x) {
  return part == CXLA_F64 ? x : LLVMBuildFPTrunc(B(g), x, cx_cg_reg_type(g->cg, part), "");
}
static zd split(cx_gen *g, cxla_type t, LLVMValueRef v) {
  return (zd){widen(g, t, cx_gen_part(g, v, 0)), widen(g, t, cx_gen_part(g, v, 1))};
}
static LLVMValueRef join(cx_gen *g, cxla_type t, zd z) {
  cxla_type p = cx_type_part(t);
  return cx_gen_complex(g, t, narrow(g, p, z.re), narrow(g, p, z.im));
}

/* ---- the formulas, on double parts ---- */

static zd zadd(cx_gen *g, zd a, zd b) { return (zd){add(g, a.re, b.re), add(g, a.im, b.im)}; }
static zd zmul(cx_gen *g, zd a, zd b) {
  return (zd){sub(g, mul(g, a.re, b.re), mul(g, a.im, b.im)), add(g, mul(g, a.re, b.im), mul(g, a.im, b.re))};
}

/* |z| as XLA computes it, max * sqrt(1 + (min/max)^2) (no overflow); 0 at 0, inf where a part
 * is infinite, NaN where one is NaN. */
static LLVMValueRef zabs(cx_gen *g, zd z) {
  LLVMValueRef x = fabs_(g, z.re), y = fabs_(g, z.im);
  LLVMValueRef gt = cmp(g, LLVMRealOGT, x, y), hi = sel(g, gt, x, y), lo = sel(g, gt, y, x);
  LLVMValueRef q = dv(g, lo, hi);
  LLVMValueRef r = mul(g, hi, m1(g, CX_OP_SQRT, add(g, D(g, 1), mul(g, q, q))));
  r = sel(g, eq(g, hi, 0), D(g, 0), r);
  r = sel(g, eq(g, hi, INFINITY), D(g, INFINITY), r);
  return sel(g, or_(g, isnan_(g, z.re), isnan_(g, z.im)), D(g, NAN), r);
}

/* Smith's algorithm and XLA's repairs of a (NaN, NaN) result, as cx_c_div. */
static zd zdiv(cx_gen *g, zd a, zd b) {
  LLVMValueRef lt = cmp(g, LLVMRealOLT, fabs_(g, b.re), fabs_(g, b.im));
  LLVMValueRef r1 = dv(g, b.re, b.im), d1 = add(g, b.im, mul(g, b.re, r1));
  LLVMValueRef r2 = dv(g, b.im, b.re), d2 = add(g, b.re, mul(g, b.im, r2));
  zd c1 = {dv(g, add(g, mul(g, r1, a.re), a.im), d1), dv(g, sub(g, mul(g, r1, a.im), a.re), d1)};
  zd c2 = {dv(g, add(g, mul(g, r2, a.im), a.re), d2), dv(g, sub(g, a.im, mul(g, r2, a.re)), d2)};
  zd c = zsel(g, lt, c1, c2);
  LLVMValueRef zero_den = and_(g, and_(g, eq(g, b.re, 0), eq(g, b.im, 0)),
                               or_(g, not_(g, isnan_(g, a.re)), not_(g, isnan_(g, a.im))));
  LLVMValueRef inf = copysign_(g, D(g, INFINITY), b.re);
  zd zr = {mul(g, inf, a.re), mul(g, inf, a.im)};
  LLVMValueRef x = copysign_(g, sel(g, isinf_(g, a.re), D(g, 1), D(g, 0)), a.re);
  LLVMValueRef y = copysign_(g, sel(g, isinf_(g, a.im), D(g, 1), D(g, 0)), a.im);
  zd ir = {mul(g, D(g, INFINITY), add(g, mul(g, x, b.re), mul(g, y, b.im))),
           mul(g, D(g, INFINITY), sub(g, mul(g, y, b.re), mul(g, x, b.im)))};
  LLVMValueRef inf_num = and_(g, or_(g, isinf_(g, a.re), isinf_(g, a.im)),
                              and_(g, isfinite_(g, b.re), isfinite_(g, b.im)));
  LLVMValueRef x2 = copysign_(g, sel(g, isinf_(g, b.re), D(g, 1), D(g, 0)), b.re);
  LLVMValueRef y2 = copysign_(g, sel(g, isinf_(g, b.im), D(g, 1), D(g, 0)), b.im);
  zd fr = {mul(g, D(g, 0), add(g, mul(g, a.re, x2), mul(g, a.im, y2))),
           mul(g, D(g, 0), sub(g, mul(g, a.im, x2), mul(g, a.re, y2)))};
  LLVMValueRef inf_den = and_(g, or_(g, isinf_(g, b.re), isinf_(g, b.im)),
                              and_(g, isfinite_(g, a.re), isfinite_(g, a.im)));
  zd fix = zsel(g, zero_den, zr, zsel(g, inf_num, ir, zsel(g, inf_den, fr, c)));
  return zsel(g, and_(g, isnan_(g, c.re), isnan_(g, c.im)), fix, c);
}

static zd zexp(cx_gen *g, zd z) {
  LLVMValueRef e = m1(g, CX_OP_EXP, z.re);
  return (zd){mul(g, e, m1(g, CX_OP_COS, z.im)), mul(g, e, m1(g, CX_OP_SIN, z.im))};
}

static zd zlog(cx_gen *g, zd z) { return (zd){m1(g, CX_OP_LOG, zabs(g, z)), m2(g, CX_OP_ATAN2, z.im, z.re)}; }

/* the principal root, algebraically (cx_c_sqrt), with XLA's special values */
static zd zsqrt(cx_gen *g, zd z) {
  LLVMValueRef a = z.re, b = z.im;
  LLVMValueRef half = zabs(g, (zd){mul(g, a, D(g, 0.5)), mul(g, b, D(g, 0.5))});
  LLVMValueRef t = m1(g, CX_OP_SQRT, add(g, mul(g, fabs_(g, a), D(g, 0.5)), half));
  LLVMValueRef t2 = mul(g, t, D(g, 2));
  zd pos = {t, dv(g, b, t2)}, negr = {dv(g, fabs_(g, b), t2), copysign_(g, t, b)};
  zd r = zsel(g, cmp(g, LLVMRealOGE, a, D(g, 0)), pos, negr);
  r = zsel(g, and_(g, eq(g, a, 0), eq(g, b, 0)), zk(g, 0, 0), r);
  r = zsel(g, or_(g, isnan_(g, a), isnan_(g, b)), zk(g, NAN, NAN), r);
  zd pinf = {D(g, INFINITY), sel(g, isnan_(g, b), D(g, NAN), copysign_(g, D(g, 0), b))};
  r = zsel(g, eq(g, a, INFINITY), pinf, r);
  zd ninf = {sel(g, isnan_(g, b), D(g, NAN), D(g, 0)), copysign_(g, D(g, INFINITY), b)};
  r = zsel(g, eq(g, a, -INFINITY), ninf, r);
  return zsel(g, isinf_(g, b), (zd){D(g, INFINITY), b}, r);
}

static zd zrsqrt(cx_gen *g, zd z) {
  LLVMValueRef a = z.re, b = z.im;
  zd s = zsqrt(g, z);
  LLVMValueRef m = zabs(g, s);
  zd r = {dv(g, dv(g, s.re, m), m), neg(g, dv(g, dv(g, s.im, m), m))};
  LLVMValueRef nzb = neg(g, copysign_(g, D(g, 0), b));
  r = zsel(g, isinf_(g, b), (zd){D(g, 0), nzb}, r);
  r = zsel(g, or_(g, isinf_(g, a), and_(g, isinf_(g, b), isnan_(g, a))), (zd){copysign_(g, D(g, 0), a), nzb}, r);
  return zsel(g, and_(g, eq(g, a, 0), eq(g, b, 0)), zk(g, INFINITY, NAN), r);
}

static zd zpow(cx_gen *g, zd z, zd w) {
  LLVMValueRef arg = m2(g, CX_OP_ATAN2, z.im, z.re), lr = m1(g, CX_OP_LOG, zabs(g, z));
  LLVMValueRef coeff = m1(g, CX_OP_EXP, sub(g, mul(g, w.re, lr), mul(g, w.im, arg)));
  LLVMValueRef q = add(g, mul(g, w.re, arg), mul(g, w.im, lr));
  zd r = {mul(g, coeff, m1(g, CX_OP_COS, q)), mul(g, coeff, m1(g, CX_OP_SIN, q))};
  LLVMValueRef zero = and_(g, and_(g, eq(g, z.re, 0), eq(g, z.im, 0)),
                           and_(g, eq(g, w.im, 0), cmp(g, LLVMRealOGE, w.re, D(g, 0))));
  zd at0 = {sel(g, eq(g, w.re, 0), D(g, 1), D(g, 0)), D(g, 0)};
  return zsel(g, zero, at0, r);
}

/* sinh and cosh without cancellation near 0: (expm1(x) - expm1(-x)) / 2, (e^x + e^-x) / 2 */
static LLVMValueRef zsinh(cx_gen *g, LLVMValueRef x) {
  return mul(g, sub(g, m1(g, CX_OP_EXPM1, x), m1(g, CX_OP_EXPM1, neg(g, x))), D(g, 0.5));
}
static LLVMValueRef zcosh(cx_gen *g, LLVMValueRef x) {
  return mul(g, add(g, m1(g, CX_OP_EXP, x), m1(g, CX_OP_EXP, neg(g, x))), D(g, 0.5));
}

/* (sinh a cosh a + i sin b cos b) / (sinh²a + cos²b) and XLA's special values (cx_c_tanh) */
static zd ztanh(cx_gen *g, zd z) {
  LLVMValueRef a = z.re, b = z.im;
  LLVMValueRef sb = m1(g, CX_OP_SIN, b), cb = m1(g, CX_OP_COS, b), sa = zsinh(g, a);
  LLVMValueRef d = add(g, mul(g, sa, sa), mul(g, cb, cb));
  zd r = {dv(g, mul(g, sa, zcosh(g, a)), d), dv(g, mul(g, sb, cb), d)};
  LLVMValueRef one = copysign_(g, D(g, 1), a), zsign = copysign_(g, D(g, 0), mul(g, sb, cb));
  r = zsel(g, cmp(g, LLVMRealOGT, fabs_(g, a), D(g, 20)), (zd){one, zsign}, r);
  r = zsel(g, not_(g, isfinite_(g, b)), zk(g, NAN, NAN), r);
  r = zsel(g, isinf_(g, a), (zd){one, sel(g, isfinite_(g, b), zsign, D(g, 0))}, r);
  return zsel(g, isnan_(g, a), (zd){D(g, NAN), sel(g, eq(g, b, 0), D(g, 0), D(g, NAN))}, r);
}

/* ---- builders ---- */

#define BUILDER(name) LLVMValueRef name(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a)
#define UNUSED (void)g, (void)in, (void)t, (void)a

BUILDER(cx_cgen_neg) {
  UNUSED;
  zd x = split(g, t, a[0]);
  return join(g, t, (zd){neg(g, x.re), neg(g, x.im)});
}
BUILDER(cx_cgen_add) { UNUSED; return join(g, t, zadd(g, split(g, t, a[0]), split(g, t, a[1]))); }
BUILDER(cx_cgen_sub) {
  UNUSED;
  zd x = split(g, t, a[0]), y = split(g, t, a[1]);
  return join(g, t, (zd){sub(g, x.re, y.re), sub(g, x.im, y.im)});
}
BUILDER(cx_cgen_mul) { UNUSED; return join(g, t, zmul(g, split(g, t, a[0]), split(g, t, a[1]))); }
BUILDER(cx_cgen_div) { UNUSED; return join(g, t, zdiv(g, split(g, t, a[0]), split(g, t, a[1]))); }
BUILDER(cx_cgen_pow) { UNUSED; return join(g, t, zpow(g, split(g, t, a[0]), split(g, t, a[1]))); }
BUILDER(cx_cgen_abs) { UNUSED; return narrow(g, cx_type_part(t), zabs(g, split(g, t, a[0]))); }
BUILDER(cx_cgen_real) { UNUSED; return cx_gen_part(g, a[0], 0); }
BUILDER(cx_cgen_imag) { UNUSED; return cx_gen_part(g, a[0], 1); }
BUILDER(cx_cgen_imag_of_real) { UNUSED; return LLVMConstReal(LLVMTypeOf(a[0]), 0); } /* imag(x) = 0, NaN's too */
BUILDER(cx_cgen_compose) { UNUSED; return cx_gen_complex(g, in->shape.type, a[0], a[1]); }

BUILDER(cx_cgen_sign) {
  UNUSED;
  zd z = split(g, t, a[0]);
  LLVMValueRef r = zabs(g, z);
  return join(g, t, zsel(g, eq(g, r, 0), zk(g, 0, 0), (zd){dv(g, z.re, r), dv(g, z.im, r)}));
}

BUILDER(cx_cgen_exp) { UNUSED; return join(g, t, zexp(g, split(g, t, a[0]))); }

/* e^a cos b - 1 = expm1(a) cos b - 2 sin²(b/2) */
BUILDER(cx_cgen_expm1) {
  UNUSED;
  zd z = split(g, t, a[0]);
  LLVMValueRef h = m1(g, CX_OP_SIN, mul(g, z.im, D(g, 0.5)));
  LLVMValueRef re = sub(g, mul(g, m1(g, CX_OP_EXPM1, z.re), m1(g, CX_OP_COS, z.im)), mul(g, mul(g, D(g, 2), h), h));
  return join(g, t, (zd){re, mul(g, m1(g, CX_OP_EXP, z.re), m1(g, CX_OP_SIN, z.im))});
}

BUILDER(cx_cgen_log) { UNUSED; return join(g, t, zlog(g, split(g, t, a[0]))); }

/* 0.5 log1p(a² + 2a + b²) + i atan2(b, a + 1) */
BUILDER(cx_cgen_log1p) {
  UNUSED;
  zd z = split(g, t, a[0]);
  LLVMValueRef s = add(g, add(g, mul(g, z.re, z.re), mul(g, D(g, 2), z.re)), mul(g, z.im, z.im));
  return join(g, t, (zd){mul(g, D(g, 0.5), m1(g, CX_OP_LOG1P, s)), m2(g, CX_OP_ATAN2, z.im, add(g, z.re, D(g, 1)))});
}

BUILDER(cx_cgen_sqrt) { UNUSED; return join(g, t, zsqrt(g, split(g, t, a[0]))); }
BUILDER(cx_cgen_rsqrt) { UNUSED; return join(g, t, zrsqrt(g, split(g, t, a[0]))); }
BUILDER(cx_cgen_cbrt) { UNUSED; return join(g, t, zpow(g, split(g, t, a[0]), zk(g, 1.0 / 3.0, 0))); }

BUILDER(cx_cgen_cos) {
  UNUSED;
  zd z = split(g, t, a[0]);
  return join(g, t, (zd){mul(g, m1(g, CX_OP_COS, z.re), zcosh(g, z.im)), neg(g, mul(g, m1(g, CX_OP_SIN, z.re), zsinh(g, z.im)))});
}

BUILDER(cx_cgen_sin) {
  UNUSED;
  zd z = split(g, t, a[0]);
  return join(g, t, (zd){mul(g, m1(g, CX_OP_SIN, z.re), zcosh(g, z.im)), mul(g, m1(g, CX_OP_COS, z.re), zsinh(g, z.im))});
}

BUILDER(cx_cgen_tanh) { UNUSED; return join(g, t, ztanh(g, split(g, t, a[0]))); }

/* tan(a+bi) = -i tanh(-b + ai) (cx_c_tan) */
BUILDER(cx_cgen_tan) {
  UNUSED;
  zd z = split(g, t, a[0]), h = ztanh(g, (zd){neg(g, z.im), z.re});
  return join(g, t, (zd){h.im, neg(g, h.re)});
}

/* atan2(y, x) = -i log((x + iy) / sqrt(x² + y²)) (cx_c_atan2) */
BUILDER(cx_cgen_atan2) {
  UNUSED;
  zd y = split(g, t, a[0]), x = split(g, t, a[1]);
  zd r = zsqrt(g, zadd(g, zmul(g, x, x), zmul(g, y, y)));
  zd l = zlog(g, zdiv(g, zadd(g, x, zmul(g, zk(g, 0, 1), y)), r));
  return join(g, t, (zd){l.im, neg(g, l.re)});
}

/* 1 / (1 + e^-z) */
BUILDER(cx_cgen_logistic) {
  UNUSED;
  zd z = split(g, t, a[0]), e = zexp(g, (zd){neg(g, z.re), neg(g, z.im)});
  return join(g, t, zdiv(g, zk(g, 1, 0), (zd){add(g, D(g, 1), e.re), e.im}));
}

/* EQ and NE (the verifier's rule), part by part: NE is true where either part is unordered */
BUILDER(cx_cgen_compare) {
  UNUSED;
  int ne = in->a.dir == CXLA_NE;
  if (!ne && in->a.dir != CXLA_EQ) return cx_gen_fail(g, in, "complex numbers compare for EQ or NE only");
  LLVMRealPredicate p = ne ? LLVMRealUNE : LLVMRealOEQ;
  LLVMValueRef re = cmp(g, p, cx_gen_part(g, a[0], 0), cx_gen_part(g, a[1], 0));
  LLVMValueRef im = cmp(g, p, cx_gen_part(g, a[0], 1), cx_gen_part(g, a[1], 1));
  return ne ? or_(g, re, im) : and_(g, re, im);
}
