/* emu_math.c — the NVVM math intrinsics and the inline PTX that libdevice's code uses, for the
 * grid emulation (emu.h): each as the host computes the PTX instruction it stands for. Round-to-nearest
 * instructions are exact IEEE operations, so the host gives the same bits; the .approx ones
 * (rcp, rsqrt, ex2, lg2, sin, cos, div) are computed exactly here, which libdevice's code
 * only uses as first guesses it refines or where its error bound allows; .ftz variants flush
 * subnormal inputs and results to zero, keeping the sign. Directed roundings (.rz, .rm) are
 * not here: a kernel using them is refused when the emulation loads it, as is inline PTX not
 * in the second table. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "backend/gpu/emu.h"

static float ftz(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }
static double ftz_d(double x) { return fpclassify(x) == FP_SUBNORMAL ? copysign(0.0, x) : x; }

/* cvt.rni.s32: nearest, ties to even, saturating; NaN is 0 */
static int32_t to_i32(double r) {
  if (isnan(r)) return 0;
  if (r >= 2147483647.0) return INT32_MAX;
  if (r <= -2147483648.0) return INT32_MIN;
  return (int32_t)r;
}

static double fma_rn_d(double a, double b, double c) { return fma(a, b, c); }
static float fma_rn_f(float a, float b, float c) { return fmaf(a, b, c); }
static float fma_rn_ftz_f(float a, float b, float c) { return ftz(fmaf(ftz(a), ftz(b), ftz(c))); }
static double mul_rn_d(double a, double b) { return a * b; }
static float mul_rn_f(float a, float b) { return a * b; }
static float mul_rn_ftz_f(float a, float b) { return ftz(ftz(a) * ftz(b)); }
static double add_rn_d(double a, double b) { return a + b; }
static float add_rn_f(float a, float b) { return a + b; }
static float add_rn_ftz_f(float a, float b) { return ftz(ftz(a) + ftz(b)); }
static double fabs_d(double a) { return fabs(a); }
static float fabs_f(float a) { return fabsf(a); }
static float fabs_ftz_f(float a) { return fabsf(ftz(a)); }
static double fmin_d(double a, double b) { return fmin(a, b); }
static double fmax_d(double a, double b) { return fmax(a, b); }
static float fmin_f(float a, float b) { return fminf(a, b); }
static float fmax_f(float a, float b) { return fmaxf(a, b); }
static float fmin_ftz_f(float a, float b) { return fminf(ftz(a), ftz(b)); }
static float fmax_ftz_f(float a, float b) { return fmaxf(ftz(a), ftz(b)); }
static int32_t d2i_hi(double a) {
  uint64_t u;
  memcpy(&u, &a, 8);
  return (int32_t)(uint32_t)(u >> 32);
}
static int32_t d2i_lo(double a) {
  uint64_t u;
  memcpy(&u, &a, 8);
  return (int32_t)(uint32_t)u;
}
static double lohi_i2d(int32_t lo, int32_t hi) {
  uint64_t u = (uint64_t)(uint32_t)hi << 32 | (uint32_t)lo;
  double d;
  memcpy(&d, &u, 8);
  return d;
}
static int32_t d2i_rn(double a) { return to_i32(nearbyint(a)); }
static int32_t f2i_rn(float a) { return to_i32(nearbyint((double)a)); }
static int32_t f2i_rn_ftz(float a) { return to_i32(nearbyint((double)ftz(a))); }
static int32_t f2i_rz(float a) { return to_i32(trunc((double)a)); }
static double rcp_approx_ftz_d(double a) { return ftz_d(1.0 / ftz_d(a)); }
static double rsqrt_approx_d(double a) { return 1.0 / sqrt(a); }
static float rsqrt_approx_f(float a) { return (float)(1.0 / sqrt((double)a)); }
static float rsqrt_approx_ftz_f(float a) { return ftz((float)(1.0 / sqrt((double)ftz(a)))); }
static float ex2_approx_f(float a) { return exp2f(a); }
static float ex2_approx_ftz_f(float a) { return ftz(exp2f(ftz(a))); }
static float lg2_approx_f(float a) { return log2f(a); }
static float lg2_approx_ftz_f(float a) { return log2f(ftz(a)); }
static float sin_approx_f(float a) { return sinf(a); }
static float sin_approx_ftz_f(float a) { return ftz(sinf(ftz(a))); }
static float cos_approx_f(float a) { return cosf(a); }
static float cos_approx_ftz_f(float a) { return cosf(ftz(a)); }
static float div_approx_f(float a, float b) { return a / b; }
static float div_approx_ftz_f(float a, float b) { return ftz(ftz(a) / ftz(b)); }
static float sqrt_rn_f(float a) { return sqrtf(a); }
static float sqrt_rn_ftz_f(float a) { return ftz(sqrtf(ftz(a))); }
static double sqrt_rn_d(double a) { return sqrt(a); }
static double trunc_d(double a) { return trunc(a); }
static float trunc_f(float a) { return truncf(a); }
static double round_d(double a) { return nearbyint(a); } /* cvt.rni: to the nearest even integer */
static float round_f(float a) { return nearbyintf(a); }
static double floor_d(double a) { return floor(a); }
static float floor_f(float a) { return floorf(a); }
static float floor_ftz_f(float a) { return floorf(ftz(a)); }
static float saturate_f(float a) { return isnan(a) ? 0.0f : a < 0 ? 0.0f : a > 1 ? 1.0f : a; }
static float saturate_ftz_f(float a) { return saturate_f(ftz(a)); }

#define E(name, fn) {"llvm.nvvm." name, "cx_emu_nvvm_" #fn, (void *)fn}
const cx_emu_math_fn cx_emu_math_fns[] = {
    E("fma.rn.d", fma_rn_d),   E("fma.rn.f", fma_rn_f),     E("fma.rn.ftz.f", fma_rn_ftz_f),
    E("mul.rn.d", mul_rn_d),   E("mul.rn.f", mul_rn_f),     E("mul.rn.ftz.f", mul_rn_ftz_f),
    E("add.rn.d", add_rn_d),   E("add.rn.f", add_rn_f),     E("add.rn.ftz.f", add_rn_ftz_f),
    E("fabs.d", fabs_d),       E("fabs.f", fabs_f),         E("fabs.ftz.f", fabs_ftz_f),
    E("fmin.d", fmin_d),       E("fmax.d", fmax_d),         E("fmin.f", fmin_f),
    E("fmax.f", fmax_f),       E("fmin.ftz.f", fmin_ftz_f), E("fmax.ftz.f", fmax_ftz_f),
    E("d2i.hi", d2i_hi),       E("d2i.lo", d2i_lo),         E("lohi.i2d", lohi_i2d),
    E("d2i.rn", d2i_rn),       E("f2i.rn", f2i_rn),         E("f2i.rn.ftz", f2i_rn_ftz),
    E("f2i.rz", f2i_rz),       E("rcp.approx.ftz.d", rcp_approx_ftz_d),
    E("rsqrt.approx.d", rsqrt_approx_d),                    E("rsqrt.approx.f", rsqrt_approx_f),
    E("rsqrt.approx.ftz.f", rsqrt_approx_ftz_f),            E("ex2.approx.f", ex2_approx_f),
    E("ex2.approx.ftz.f", ex2_approx_ftz_f),                E("lg2.approx.f", lg2_approx_f),
    E("lg2.approx.ftz.f", lg2_approx_ftz_f),                E("sin.approx.f", sin_approx_f),
    E("sin.approx.ftz.f", sin_approx_ftz_f),                E("cos.approx.f", cos_approx_f),
    E("cos.approx.ftz.f", cos_approx_ftz_f),                E("div.approx.f", div_approx_f),
    E("div.approx.ftz.f", div_approx_ftz_f),                E("sqrt.rn.f", sqrt_rn_f),
    E("sqrt.rn.ftz.f", sqrt_rn_ftz_f),                      E("sqrt.rn.d", sqrt_rn_d),
    E("trunc.d", trunc_d),     E("trunc.f", trunc_f),       E("round.d", round_d),
    E("round.f", round_f),     E("floor.d", floor_d),       E("floor.f", floor_f),
    E("floor.ftz.f", floor_ftz_f),                          E("saturate.f", saturate_f),
    E("saturate.ftz.f", saturate_ftz_f),                    {NULL, NULL, NULL},
};
#undef E

/* ---- inline PTX: the pieces libdevice writes in assembly ---- */

typedef struct u128 { uint64_t lo, hi; } u128; /* returned in rax:rdx, as LLVM returns {i64, i64} */
__extension__ typedef unsigned __int128 wide;
static u128 split(wide v) { return (u128){(uint64_t)v, (uint64_t)(v >> 64)}; }
static wide join(uint64_t lo, uint64_t hi) { return (wide)hi << 64 | lo; }

static u128 add_u128(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi) { return split(join(alo, ahi) + join(blo, bhi)); }
static u128 sub_u128(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi) { return split(join(alo, ahi) - join(blo, bhi)); }
static u128 mad_u64_wide(uint64_t a, uint64_t b, uint64_t c) { return split((wide)a * b + c); }
static u128 mul_u64_wide(uint64_t a, uint64_t b) { return split((wide)a * b); }
/* setp.equ (equal or unordered) then selp */
static double sel_equ(double a, double b, double x, double y) { return a == b || isnan(a) || isnan(b) ? x : y; }
static float rcp_approx_ftz_f32(float a) { return ftz(1.0f / ftz(a)); }
static double rsqrt_approx_ftz_f64(double a) { return ftz_d(1.0 / sqrt(ftz_d(a))); }
static float sub_rn_f32(float a, float b) { return a - b; }
static float sub_rn_ftz_f32(float a, float b) { return ftz(ftz(a) - ftz(b)); }
static double sub_rn_f64(double a, double b) { return a - b; }

/* the assembly text with its whitespace taken out (cx_emu_asm_key) */
#define A(text, fn) {text, "cx_emu_asm_" #fn, (void *)fn}
const cx_emu_math_fn cx_emu_asm_fns[] = {
    A("{.reg.u32r0,r1,r2,r3,a0,a1,a2,a3,b0,b1,b2,b3;mov.b64{a0,a1},$2;mov.b64{a2,a3},$3;mov.b64{b0,b1},$4;"
      "mov.b64{b2,b3},$5;add.cc.u32r0,a0,b0;addc.cc.u32r1,a1,b1;addc.cc.u32r2,a2,b2;addc.u32r3,a3,b3;"
      "mov.b64$0,{r0,r1};mov.b64$1,{r2,r3};}",
      add_u128),
    A("{.reg.u32r0,r1,r2,r3,a0,a1,a2,a3,b0,b1,b2,b3;mov.b64{a0,a1},$2;mov.b64{a2,a3},$3;mov.b64{b0,b1},$4;"
      "mov.b64{b2,b3},$5;sub.cc.u32r0,a0,b0;subc.cc.u32r1,a1,b1;subc.cc.u32r2,a2,b2;subc.u32r3,a3,b3;"
      "mov.b64$0,{r0,r1};mov.b64$1,{r2,r3};}",
      sub_u128),
    A("{.reg.u32r0,r1,r2,r3,alo,ahi,blo,bhi,clo,chi;mov.b64{alo,ahi},$2;mov.b64{blo,bhi},$3;mov.b64{clo,chi},$4;"
      "mad.lo.cc.u32r0,alo,blo,clo;madc.hi.cc.u32r1,alo,blo,chi;madc.hi.u32r2,alo,bhi,0;mad.lo.cc.u32r1,alo,bhi,r1;"
      "madc.hi.cc.u32r2,ahi,blo,r2;madc.hi.u32r3,ahi,bhi,0;mad.lo.cc.u32r1,ahi,blo,r1;madc.lo.cc.u32r2,ahi,bhi,r2;"
      "addc.u32r3,r3,0;mov.b64$0,{r0,r1};mov.b64$1,{r2,r3};}",
      mad_u64_wide),
    A("{.reg.u32r0,r1,r2,r3,alo,ahi,blo,bhi;mov.b64{alo,ahi},$2;mov.b64{blo,bhi},$3;mul.lo.u32r0,alo,blo;"
      "mul.hi.u32r1,alo,blo;mad.lo.cc.u32r1,alo,bhi,r1;madc.hi.u32r2,alo,bhi,0;mad.lo.cc.u32r1,ahi,blo,r1;"
      "madc.hi.cc.u32r2,ahi,blo,r2;madc.hi.u32r3,ahi,bhi,0;mad.lo.cc.u32r2,ahi,bhi,r2;addc.u32r3,r3,0;"
      "mov.b64$0,{r0,r1};mov.b64$1,{r2,r3};}",
      mul_u64_wide),
    A("{.reg.pred__$$temp3;setp.equ.f64__$$temp3,$1,$2;selp.f64$0,$3,$4,__$$temp3;}", sel_equ),
    A("rcp.approx.ftz.f32$0,$1;", rcp_approx_ftz_f32),
    A("rsqrt.approx.ftz.f64$0,$1;", rsqrt_approx_ftz_f64),
    A("sub.rn.f32$0,$1,$2;", sub_rn_f32),
    A("sub.rn.ftz.f32$0,$1,$2;", sub_rn_ftz_f32),
    A("sub.rn.f64$0,$1,$2;", sub_rn_f64),
    {NULL, NULL, NULL},
};
#undef A

void cx_emu_asm_key(const char *text, size_t n, char *key, size_t keylen) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < keylen; i++)
    if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n') key[k++] = text[i];
  key[k] = 0;
}
