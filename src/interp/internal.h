/* internal.h — helpers shared by the interpreter's driver, scalar, elementwise, shape and
 * control files (not part of the interp.h contract). The float kernels are inline so the
 * elementwise loops can inline them with the op switch hoisted by the compiler. */
#ifndef CX_INTERP_INTERNAL_H
#define CX_INTERP_INTERNAL_H
#include <math.h>
#include "interp/interp.h"

/* Nesting limit for computation calls: each level costs a few hundred bytes of C stack, so
 * this stays far from any stack limit while no real module nests this deep. */
#define CX_INTERP_MAX_DEPTH 256

/* A zero-filled array literal of s's type and dims (layout dropped: literals are row-major),
 * for instruction in. Fails on OOM or on a shape that is not a valid array. */
cxla_status cx_interp_new_array(cx_interp *st, cx_instr *in, const cx_shape *s, cxla_literal **out);
/* An ill-formed instruction the verifier should have caught: CXLA_ERR_VERIFY at in->loc. */
cxla_status cx_interp_bad(cx_interp *st, cx_instr *in, const char *fmt, ...) CX_PRINTF(3, 4);

/* async-start, async-update, async-done, copy-start, copy-done (async.c). */
cxla_status cx_interp_async(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);

/* Copies a box of n[0] x ... x n[rank-1] elements of esize bytes: for every index i < n,
 * dst[dbase + sum i_k*dstr_k] = src[sbase + sum i_k*sstr_k] (offsets in elements; strides may
 * be 0 or negative). Every re-indexing op is one or two of these. */
void cx_box_copy(void *dst, const void *src, size_t esize, int rank, const int64_t *n,
                 int64_t dbase, const int64_t *dstr, int64_t sbase, const int64_t *sstr);


/* reduce-precision on the raw bits of a float with nbits total and src_mbits mantissa bits,
 * exactly as XLA's EmitReducePrecisionIR with quiet_nans=false. */
uint64_t cx_reduce_precision_bits(uint64_t x, int nbits, int src_mbits, int ebits, int mbits);

/* XLA maximum/minimum on floats (llvm.maximum/minimum): NaN if either is NaN, and -0 < +0. */
static inline double cx_fmax_xla(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a > b) return a;
  if (b > a) return b;
  return signbit(a) ? b : a; /* equal: only +0/-0 can differ */
}
static inline double cx_fmin_xla(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a < b) return a;
  if (b < a) return b;
  return signbit(a) ? a : b;
}

/* Unary float ops in double, not yet rounded to the element type. is-finite is not here (its
 * result is pred). */
static inline double cx_float_unary(cx_op op, double x) {
  switch (op) {
  case CX_OP_ABS: return fabs(x);
  case CX_OP_NEGATE: return -x;
  case CX_OP_SIGN: return (isnan(x) || x == 0) ? x : copysign(1.0, x);
  case CX_OP_EXP: return exp(x);
  case CX_OP_EXPM1: return expm1(x);
  case CX_OP_LOG: return log(x);
  case CX_OP_LOG1P: return log1p(x);
  case CX_OP_LOGISTIC: return 1.0 / (1.0 + exp(-x));
  case CX_OP_SQRT: return sqrt(x);
  case CX_OP_RSQRT: return 1.0 / sqrt(x);
  case CX_OP_CBRT: return cbrt(x);
  case CX_OP_SIN: return sin(x);
  case CX_OP_COS: return cos(x);
  case CX_OP_TAN: return tan(x);
  case CX_OP_TANH: return tanh(x);
  case CX_OP_FLOOR: return floor(x);
  case CX_OP_CEIL: return ceil(x);
  case CX_OP_ROUND_AFZ: return round(x);
  case CX_OP_ROUND_EVEN: return nearbyint(x); /* the default rounding mode: ties to even */
  case CX_OP_ERF: return erf(x);
  default: return x; /* copy */
  }
}

/* Binary float ops in double, not yet rounded. pow follows C's pow, which already gives
 * XLA's 1^y = 1 and x^0 = 1 (NaN included). */
static inline double cx_float_binary(cx_op op, double a, double b) {
  switch (op) {
  case CX_OP_ADD: return a + b;
  case CX_OP_SUBTRACT: return a - b;
  case CX_OP_MULTIPLY: return a * b;
  case CX_OP_DIVIDE: return a / b;
  case CX_OP_REMAINDER: return fmod(a, b);
  case CX_OP_POWER: return pow(a, b);
  case CX_OP_ATAN2: return atan2(a, b);
  case CX_OP_MAXIMUM: return cx_fmax_xla(a, b);
  case CX_OP_MINIMUM: return cx_fmin_xla(a, b);
  default: return NAN;
  }
}

/* Sign-extends / zero-extends the low bits of v as a width-`bits` integer. */
static inline int64_t cx_sext(int bits, int64_t v) {
  switch (bits) {
  case 8: return (int8_t)v;
  case 16: return (int16_t)v;
  case 32: return (int32_t)v;
  default: return v;
  }
}
static inline uint64_t cx_zext(int bits, int64_t v) {
  return bits >= 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << bits) - 1);
}

#endif
