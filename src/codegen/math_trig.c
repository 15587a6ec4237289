/* math_trig.c — f32 sin, cos and tan as inline IR that vectorises (see math.h for the
 * measured accuracy). The argument is widened to double (exact) and reduced modulo pi/2 in
 * double: three-part Cody-Waite below 2^24, and above it a Payne-Hanek reduction in 64-bit
 * integers against 2/pi's bits, windowed with funnel shifts (no table, so no gathers). Both
 * reductions run on every lane and a select picks one, so the loop stays straight-line.
 * The reduced |r| <= pi/4 goes through Taylor polynomials in double (truncation below 2^-37
 * relative), so the f32 result is the double result rounded once: within 1 ulp. */
#include "codegen/math_ir.h"

#define SHIFT52 0x1.8p52 /* adding it rounds to an integer held in the low mantissa bits */
/* pi/2 = P1 + P2 + P3 + O(2^-142); P1 has 29 significant bits, so n*P1 is exact for n < 2^24 */
#define PIO2_1 0x1.921fb54p+0
#define PIO2_2 0x1.10b4611a62633p-30
#define PIO2_3 0x1.45c06e0e68948p-86
/* bits 0..255 of 2/pi, most significant first (bit 0, of weight 1, is 0) */
static const uint64_t INV_PIO2_BITS[4] = {0x517cc1b727220a94ull, 0xfe13abe8fa9a6ee0ull,
                                          0x6db14acc9e21c820ull, 0xff28b1d5ef5de2b0ull};

/* |x| < 2^24: x = n pi/2 + r; n mod 4 as i64 */
static LLVMValueRef reduce_small(tb *m, LLVMValueRef x, LLVMValueRef *q) {
  LLVMValueRef t = fma3(m, x, D(m, 0x1.45f306dc9c883p-1), D(m, SHIFT52));
  LLVMValueRef n = LLVMBuildFSub(m->b, t, D(m, SHIFT52), "");
  *q = iand(m, LLVMBuildBitCast(m->b, t, m->l, ""), 3);
  LLVMValueRef nn = LLVMBuildFNeg(m->b, n, "");
  LLVMValueRef r = fma3(m, nn, D(m, PIO2_1), x); /* exact */
  r = fma3(m, nn, D(m, PIO2_2), r);
  return fma3(m, nn, D(m, PIO2_3), r);
}

/* The 64 bits of 2/pi starting at bit j (0 <= j < 128), from two words chosen by j/64. */
static LLVMValueRef window64(tb *m, LLVMValueRef j, int first) {
  LLVMValueRef hi2 = ieq(m, lshr(m, j, 6), L(m, 1));
  LLVMValueRef a = sel(m, hi2, L(m, INV_PIO2_BITS[first + 1]), L(m, INV_PIO2_BITS[first]));
  LLVMValueRef b = sel(m, hi2, L(m, INV_PIO2_BITS[first + 2]), L(m, INV_PIO2_BITS[first + 1]));
  LLVMValueRef args[3] = {a, b, iand(m, j, 63)};
  return cx_ir_intrinsic(m->g, "llvm.fshl", &m->l, 1, args, 3);
}

/* Finite |x| >= 2^24 (other lanes compute garbage that is not used): x = mu 2^E with mu a
 * 24-bit integer; x 2/pi mod 4 needs only the 96 bits of 2/pi from bit j0 = E-1 on (those
 * above contribute multiples of 4 to mu 2^E 2/pi; those below, less than 2^-70). */
static LLVMValueRef reduce_large(tb *m, LLVMValueRef xi32, LLVMValueRef *q) {
  LLVMValueRef xi = LLVMBuildZExt(m->b, xi32, m->l, "");
  LLVMValueRef e = iand(m, lshr(m, xi, 23), 0xff);
  LLVMValueRef j0 = LLVMBuildSub(m->b, e, L(m, 151), "");
  j0 = sel(m, LLVMBuildICmp(m->b, LLVMIntSLT, j0, L(m, 0), ""), L(m, 0), j0);
  LLVMValueRef w01 = window64(m, j0, 0), w2 = lshr(m, window64(m, j0, 1), 32);
  LLVMValueRef mu = LLVMBuildOr(m->b, iand(m, xi, 0x7fffff), L(m, 0x800000), "");
  /* mu * (w0:w1:w2) mod 2^96, as v = its top 64 bits and lo = its low 32 */
  LLVMValueRef p0 = imul(m, mu, w2), p1 = imul(m, mu, iand(m, w01, 0xffffffffull));
  LLVMValueRef p2 = imul(m, mu, lshr(m, w01, 32));
  LLVMValueRef v = iadd(m, iadd(m, shl(m, p2, 32), p1), lshr(m, p0, 32));
  /* v / 2^62 is x 2/pi mod 4: n = its nearest integer, f = the rest as a signed fraction */
  LLVMValueRef f = LLVMBuildAShr(m->b, shl(m, v, 2), L(m, 2), "");
  *q = lshr(m, LLVMBuildSub(m->b, v, f, ""), 62);
  LLVMValueRef y = fma3(m, LLVMBuildUIToFP(m->b, iand(m, p0, 0xffffffffull), m->d, ""), D(m, 0x1p-94),
                        mul(m, LLVMBuildSIToFP(m->b, f, m->d, ""), D(m, 0x1p-62)));
  return mul(m, y, D(m, 0x1.921fb54442d18p+0));
}

/* sin(r) / r - 1 and (cos(r) - 1) / r^2 as polynomials in r^2 (Taylor; |r| <= pi/4) */
static const double SIN_P[6] = {0x1.6124613a86d09p-33, -0x1.ae64567f544e4p-26, 0x1.71de3a556c734p-19,
                                -0x1.a01a01a01a01ap-13, 0x1.1111111111111p-7, -0x1.5555555555555p-3};
static const double COS_P[6] = {-0x1.93974a8c07c9dp-37, 0x1.1eed8eff8d898p-29, -0x1.27e4fb7789f5cp-22,
                                0x1.a01a01a01a01ap-16, -0x1.6c16c16c16c17p-10, 0x1.5555555555555p-5};

typedef enum { TRIG_SIN, TRIG_COS, TRIG_TAN } trig_fn;

static LLVMValueRef trig(cx_gen *g, LLVMValueRef x, trig_fn fn) {
  tb m0 = tb_make(g), *m = &m0;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f = g->cg->t_f32;
  LLVMValueRef xd = LLVMBuildFPExt(b, x, m->d, ""), ax = cx_ir_intr1(g, "llvm.fabs", xd);
  LLVMValueRef small = fcmp(m, LLVMRealOLT, ax, D(m, 0x1p24)); /* false for NaN */
  LLVMValueRef qs, rs = reduce_small(m, sel(m, small, xd, D(m, 0)), &qs);
  LLVMValueRef ql, rl = reduce_large(m, LLVMBuildBitCast(b, x, g->cg->t_i32, ""), &ql);
  LLVMValueRef neg = fcmp(m, LLVMRealOLT, xd, D(m, 0));
  rl = sel(m, neg, LLVMBuildFNeg(b, rl, ""), rl);
  ql = sel(m, neg, LLVMBuildNeg(b, ql, ""), ql);
  LLVMValueRef r = sel(m, small, rs, rl), q = iand(m, sel(m, small, qs, ql), 3);
  LLVMValueRef z = mul(m, r, r);
  LLVMValueRef s = fma3(m, mul(m, r, z), horner(m, z, SIN_P, 6), r);
  LLVMValueRef c = fma3(m, z, fma3(m, z, horner(m, z, COS_P, 6), D(m, -0.5)), D(m, 1));
  if (fn == TRIG_COS) q = iadd(m, q, L(m, 1)); /* cos is sin one quadrant on */
  LLVMValueRef odd = ieq(m, iand(m, q, 1), L(m, 1)), res;
  if (fn == TRIG_TAN) {
    res = LLVMBuildFDiv(b, sel(m, odd, LLVMBuildFNeg(b, c, ""), s), sel(m, odd, s, c), "");
  } else {
    /* s, c, -s, -c by quadrant */
    res = sel(m, odd, c, s);
    res = sel(m, ieq(m, iand(m, q, 2), L(m, 2)), LLVMBuildFNeg(b, res, ""), res);
  }
  LLVMValueRef out = LLVMBuildFPTrunc(b, res, f, "");
  if (fn != TRIG_COS) /* r loses the sign of -0 */
    out = sel(m, fcmp(m, LLVMRealOEQ, x, LLVMConstReal(f, 0)), x, out);
  /* sin/cos/tan of +-inf are NaN, of NaN its NaN */
  LLVMValueRef fin = fcmp(m, LLVMRealONE, ax, D(m, __builtin_inf()));
  out = sel(m, fin, out, LLVMConstReal(f, __builtin_nan("")));
  return sel(m, fcmp(m, LLVMRealUNO, x, x), x, out);
}

LLVMValueRef cx_math_sin_f32(cx_gen *g, LLVMValueRef x) { return trig(g, x, TRIG_SIN); }
LLVMValueRef cx_math_cos_f32(cx_gen *g, LLVMValueRef x) { return trig(g, x, TRIG_COS); }
LLVMValueRef cx_math_tan_f32(cx_gen *g, LLVMValueRef x) { return trig(g, x, TRIG_TAN); }
