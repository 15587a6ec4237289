/* test_interp_elementwise.c — XLA's scalar semantics through the interpreter's array loops:
 * integer corner cases, NaN and signed-zero rules, comparisons, conversions, bitcasts,
 * reduce-precision, select and clamp. Expected values are worked out by hand (or with C's
 * libm for transcendental functions), never taken from the interpreter. */
#include <stdint.h>
#include <time.h>
#include "test_interp_util.h"

static cxla_literal *un_(cx_op op, cxla_type rt, cxla_literal *a, const char *f, int l) {
  return ti_op_run(op, cx_shape_array(rt, a->shape.rank, a->shape.dims), NULL, 1, &a, f, l);
}
static cxla_literal *bin_(cx_op op, cxla_type rt, cxla_literal *a, cxla_literal *b, const char *f, int l) {
  cxla_literal *args[2] = {a, b};
  const cxla_literal *big = a->shape.rank ? a : b;
  return ti_op_run(op, cx_shape_array(rt, big->shape.rank, big->shape.dims), NULL, 2, args, f, l);
}
static cxla_literal *cmp_(cxla_compare_dir dir, cx_cmp_type ct, cxla_literal *a, cxla_literal *b,
                          const char *f, int l) {
  cx_attrs at = {0};
  at.dir = dir;
  at.cmp_type = ct;
  cxla_literal *args[2] = {a, b};
  return ti_op_run(CX_OP_COMPARE, cx_shape_array(CXLA_PRED, a->shape.rank, a->shape.dims), &at, 2, args, f, l);
}
#define UN(op, rt, a) un_(CX_OP_##op, (rt), (a), __FILE__, __LINE__)
#define BIN(op, rt, a, b) bin_(CX_OP_##op, (rt), (a), (b), __FILE__, __LINE__)
#define CMP(dir, ct, a, b) cmp_(CXLA_##dir, CX_CMP_##ct, (a), (b), __FILE__, __LINE__)

TEST(interp_int_divide_remainder) {
  /* truncation toward zero, x/0 = -1, INT_MIN/-1 = INT_MIN */
  TI_CHECK_I(BIN(DIVIDE, CXLA_S8, TI_I(CXLA_S8, 7, -7, 7, -7, -128, 5, 0), TI_I(CXLA_S8, 2, 2, -2, -2, -1, 0, 0)),
             3, -3, -3, 3, -128, -1, -1);
  /* the dividend's sign, x%0 = x, INT_MIN%-1 = 0 */
  TI_CHECK_I(BIN(REMAINDER, CXLA_S8, TI_I(CXLA_S8, 7, -7, 7, -7, -128, 5, -5), TI_I(CXLA_S8, 2, 2, -2, -2, -1, 0, 0)),
             1, -1, 1, -1, 0, 5, -5);
  TI_CHECK_I(BIN(DIVIDE, CXLA_U8, TI_I(CXLA_U8, 200, 7, 0), TI_I(CXLA_U8, 3, 0, 0)), 66, 255, 255);
  TI_CHECK_I(BIN(REMAINDER, CXLA_U8, TI_I(CXLA_U8, 200, 7, 0), TI_I(CXLA_U8, 3, 0, 0)), 2, 7, 0);
  TI_CHECK_I(BIN(DIVIDE, CXLA_S16, TI_I(CXLA_S16, -32768, 1000), TI_I(CXLA_S16, -1, 0)), -32768, -1);
  TI_CHECK_I(BIN(DIVIDE, CXLA_S32, TI_I(CXLA_S32, INT32_MIN, -9), TI_I(CXLA_S32, -1, 2)), INT32_MIN, -4);
  TI_CHECK_I(BIN(REMAINDER, CXLA_S32, TI_I(CXLA_S32, INT32_MIN, -9), TI_I(CXLA_S32, -1, 2)), 0, -1);
  TI_CHECK_I(BIN(DIVIDE, CXLA_S64, TI_I(CXLA_S64, INT64_MIN, 9, INT64_MIN), TI_I(CXLA_S64, -1, 0, 2)),
             INT64_MIN, -1, INT64_MIN / 2);
  TI_CHECK_I(BIN(REMAINDER, CXLA_S64, TI_I(CXLA_S64, INT64_MIN, 9), TI_I(CXLA_S64, -1, 0)), 0, 9);
  TI_CHECK_I(BIN(DIVIDE, CXLA_U32, TI_I(CXLA_U32, 4000000000, 5), TI_I(CXLA_U32, 2, 0)), 2000000000, 4294967295);
  TI_CHECK_I(BIN(DIVIDE, CXLA_U64, TI_I(CXLA_U64, -2, 5), TI_I(CXLA_U64, 2, 0)), INT64_MAX, -1);
  TI_CHECK_I(BIN(REMAINDER, CXLA_U64, TI_I(CXLA_U64, -1, 5), TI_I(CXLA_U64, 10, 0)), 5, 5); /* 2^64-1 = ...615 */
  TI_CHECK_I(BIN(DIVIDE, CXLA_U16, TI_I(CXLA_U16, 65535), TI_I(CXLA_U16, 0)), 65535);
}

TEST(interp_int_shifts) {
  /* amounts are unsigned: -1 is 255 for s8, so >= the width */
  TI_CHECK_I(BIN(SHIFT_LEFT, CXLA_S8, TI_I(CXLA_S8, 1, 1, 1, -1, 3), TI_I(CXLA_S8, 7, 8, -1, 1, 100)), -128, 0, 0, -2, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_LOGICAL, CXLA_S8, TI_I(CXLA_S8, -128, -1, 64, -1), TI_I(CXLA_S8, 7, 8, 1, -1)), 1, 0, 32, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_ARITHMETIC, CXLA_S8, TI_I(CXLA_S8, -128, -1, 64, -128, 100), TI_I(CXLA_S8, 7, 8, 1, -1, 9)),
             -1, -1, 32, -1, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_ARITHMETIC, CXLA_U8, TI_I(CXLA_U8, 0x80, 0x40, 0x80), TI_I(CXLA_U8, 1, 8, 8)), 0xC0, 0, 0xFF);
  TI_CHECK_I(BIN(SHIFT_LEFT, CXLA_S32, TI_I(CXLA_S32, 1, 1, 5), TI_I(CXLA_S32, 31, 32, 33)), INT32_MIN, 0, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_LOGICAL, CXLA_S32, TI_I(CXLA_S32, -1, -1), TI_I(CXLA_S32, 28, 32)), 15, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_ARITHMETIC, CXLA_S32, TI_I(CXLA_S32, -16, -16, 16), TI_I(CXLA_S32, 2, 40, 40)), -4, -1, 0);
  TI_CHECK_I(BIN(SHIFT_LEFT, CXLA_U64, TI_I(CXLA_U64, 1, 1, 1), TI_I(CXLA_U64, 63, 64, -1)), INT64_MIN, 0, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_ARITHMETIC, CXLA_S64, TI_I(CXLA_S64, INT64_MIN, INT64_MIN, 7), TI_I(CXLA_S64, 63, 64, 64)),
             -1, -1, 0);
  TI_CHECK_I(BIN(SHIFT_RIGHT_LOGICAL, CXLA_U16, TI_I(CXLA_U16, 0x8000, 0x8000), TI_I(CXLA_U16, 15, 16)), 1, 0);
}

TEST(interp_int_unary) {
  TI_CHECK_I(UN(ABS, CXLA_S8, TI_I(CXLA_S8, -128, -5, 5, 0)), -128, 5, 5, 0);
  TI_CHECK_I(UN(NEGATE, CXLA_S8, TI_I(CXLA_S8, -128, 5, 0, 127)), -128, -5, 0, -127);
  TI_CHECK_I(UN(ABS, CXLA_S64, TI_I(CXLA_S64, INT64_MIN, -3)), INT64_MIN, 3);
  TI_CHECK_I(UN(NEGATE, CXLA_S32, TI_I(CXLA_S32, INT32_MIN, 7)), INT32_MIN, -7);
  TI_CHECK_I(UN(NEGATE, CXLA_U8, TI_I(CXLA_U8, 1, 0)), 255, 0);
  TI_CHECK_I(UN(SIGN, CXLA_S32, TI_I(CXLA_S32, -5, 0, 7, INT32_MIN)), -1, 0, 1, -1);
  TI_CHECK_I(UN(NOT, CXLA_S32, TI_I(CXLA_S32, 0, 5)), -1, -6);
  TI_CHECK_I(UN(NOT, CXLA_U8, TI_I(CXLA_U8, 0x0F)), 0xF0);
  TI_CHECK_I(UN(NOT, CXLA_PRED, TI_I(CXLA_PRED, 1, 0)), 0, 1);
  TI_CHECK_I(UN(POPCNT, CXLA_S8, TI_I(CXLA_S8, -1, 0, 0x55)), 8, 0, 4);
  TI_CHECK_I(UN(POPCNT, CXLA_S16, TI_I(CXLA_S16, -1)), 16);
  TI_CHECK_I(UN(POPCNT, CXLA_S32, TI_I(CXLA_S32, -1, INT32_MIN)), 32, 1);
  TI_CHECK_I(UN(POPCNT, CXLA_S64, TI_I(CXLA_S64, -1)), 64);
  TI_CHECK_I(UN(POPCNT, CXLA_U8, TI_I(CXLA_U8, 0xF0)), 4);
  TI_CHECK_I(UN(CLZ, CXLA_S8, TI_I(CXLA_S8, 1, 0, -1, 16)), 7, 8, 0, 3);
  TI_CHECK_I(UN(CLZ, CXLA_S16, TI_I(CXLA_S16, 1, 0)), 15, 16);
  TI_CHECK_I(UN(CLZ, CXLA_S32, TI_I(CXLA_S32, 1, 0, -1)), 31, 32, 0);
  TI_CHECK_I(UN(CLZ, CXLA_S64, TI_I(CXLA_S64, 1, 0)), 63, 64);
  TI_CHECK_I(UN(CLZ, CXLA_U16, TI_I(CXLA_U16, 0x00FF)), 8);
  TI_CHECK_I(UN(CLZ, CXLA_U32, TI_I(CXLA_U32, 0)), 32);
  TI_CHECK_I(UN(CLZ, CXLA_U64, TI_I(CXLA_U64, 0, -1)), 64, 0);
  TI_CHECK_I(UN(COPY, CXLA_S16, TI_I(CXLA_S16, -3, 4)), -3, 4);
}

TEST(interp_int_binary) {
  TI_CHECK_I(BIN(ADD, CXLA_S8, TI_I(CXLA_S8, 127, -128), TI_I(CXLA_S8, 1, -1)), -128, 127);
  TI_CHECK_I(BIN(ADD, CXLA_U8, TI_I(CXLA_U8, 255), TI_I(CXLA_U8, 1)), 0);
  TI_CHECK_I(BIN(SUBTRACT, CXLA_U32, TI_I(CXLA_U32, 0), TI_I(CXLA_U32, 1)), 4294967295);
  TI_CHECK_I(BIN(MULTIPLY, CXLA_S32, TI_I(CXLA_S32, 65536, -3), TI_I(CXLA_S32, 65536, 5)), 0, -15);
  TI_CHECK_I(BIN(MULTIPLY, CXLA_S16, TI_I(CXLA_S16, 300), TI_I(CXLA_S16, 300)), 24464); /* 90000 mod 2^16 */
  TI_CHECK_I(BIN(MULTIPLY, CXLA_S64, TI_I(CXLA_S64, INT64_MAX), TI_I(CXLA_S64, 2)), -2);
  TI_CHECK_I(BIN(MAXIMUM, CXLA_S8, TI_I(CXLA_S8, -1, 5), TI_I(CXLA_S8, 1, -5)), 1, 5);
  TI_CHECK_I(BIN(MAXIMUM, CXLA_U8, TI_I(CXLA_U8, 255), TI_I(CXLA_U8, 1)), 255);
  TI_CHECK_I(BIN(MAXIMUM, CXLA_U64, TI_I(CXLA_U64, -1), TI_I(CXLA_U64, 1)), -1);
  TI_CHECK_I(BIN(MINIMUM, CXLA_U64, TI_I(CXLA_U64, -1), TI_I(CXLA_U64, 1)), 1);
  TI_CHECK_I(BIN(MINIMUM, CXLA_S64, TI_I(CXLA_S64, -1), TI_I(CXLA_S64, 1)), -1);
  TI_CHECK_I(BIN(AND, CXLA_U8, TI_I(CXLA_U8, 0xF0), TI_I(CXLA_U8, 0x3C)), 0x30);
  TI_CHECK_I(BIN(OR, CXLA_U8, TI_I(CXLA_U8, 0xF0), TI_I(CXLA_U8, 0x3C)), 0xFC);
  TI_CHECK_I(BIN(XOR, CXLA_U8, TI_I(CXLA_U8, 0xF0), TI_I(CXLA_U8, 0x3C)), 0xCC);
  TI_CHECK_I(BIN(AND, CXLA_PRED, TI_I(CXLA_PRED, 1, 1, 0), TI_I(CXLA_PRED, 0, 1, 0)), 0, 1, 0);
  TI_CHECK_I(BIN(OR, CXLA_PRED, TI_I(CXLA_PRED, 1, 0, 0), TI_I(CXLA_PRED, 0, 0, 1)), 1, 0, 1);
  TI_CHECK_I(BIN(XOR, CXLA_PRED, TI_I(CXLA_PRED, 1, 1, 0), TI_I(CXLA_PRED, 1, 0, 0)), 0, 1, 0);
  /* pred arithmetic is int8 arithmetic read back as != 0 */
  TI_CHECK_I(BIN(ADD, CXLA_PRED, TI_I(CXLA_PRED, 1, 0, 1), TI_I(CXLA_PRED, 1, 0, 0)), 1, 0, 1);
  TI_CHECK_I(BIN(MULTIPLY, CXLA_PRED, TI_I(CXLA_PRED, 1, 0, 1), TI_I(CXLA_PRED, 1, 1, 0)), 1, 0, 0);
}

TEST(interp_int_power) {
  /* exact, wrapping; 1^y = x^0 = 1; negative exponents give 0 unless the base is 1 */
  TI_CHECK_I(BIN(POWER, CXLA_S32, TI_I(CXLA_S32, 3, 2, 2, -2, 2, 1, -1, 0, 5, 3, 7, -1),
                 TI_I(CXLA_S32, 4, 31, 32, 3, -1, -5, -1, 0, 0, 40, 13, 3)),
             81, INT32_MIN, 0, -8, 0, 1, 0, 1, 1, 689956897, -1895237401, -1);
  TI_CHECK_I(BIN(POWER, CXLA_U8, TI_I(CXLA_U8, 3, 2, 0, 1), TI_I(CXLA_U8, 5, 8, 0, 255)), 243, 0, 1, 1);
  TI_CHECK_I(BIN(POWER, CXLA_S64, TI_I(CXLA_S64, 2, 3), TI_I(CXLA_S64, 62, 39)), (int64_t)1 << 62, 4052555153018976267LL);
  TI_CHECK_I(BIN(POWER, CXLA_U32, TI_I(CXLA_U32, 3), TI_I(CXLA_U32, 4000000000u)), 1818370049); /* 3^4e9 mod 2^32 */
}

TEST(interp_float_max_min) {
  static const cxla_type types[] = {CXLA_F32, CXLA_F64, CXLA_F16, CXLA_BF16};
  for (int k = 0; k < 4; k++) {
    cxla_type t = types[k];
    /* NaN propagates from either side; +0 is above -0 whatever the order */
    TI_CHECK_F(BIN(MAXIMUM, t, TI_F(t, NAN, 1, -0.0, 0.0, 2, -3), TI_F(t, 1, NAN, 0.0, -0.0, 1, -4)), -1,
               NAN, NAN, 0.0, 0.0, 2, -3);
    TI_CHECK_F(BIN(MINIMUM, t, TI_F(t, NAN, 1, -0.0, 0.0, 2, -3), TI_F(t, 1, NAN, 0.0, -0.0, 1, -4)), -1,
               NAN, NAN, -0.0, -0.0, 1, -4);
  }
}

TEST(interp_idempotent_ops_keep_their_operand) {
  /* ops.def's IDEMPOTENT flag lets each row block of a split column reduction start from the
   * init value (codegen/reduce_plan.c): op(a, a) must be a, whatever a is */
  int n = 0;
  for (int op = 0; op < CX_OP_COUNT; op++) {
    if (!cx_op_is_idempotent((cx_op)op)) continue;
    n++;
    TI_CHECK_I(bin_((cx_op)op, CXLA_S32, TI_I(CXLA_S32, -5, 0, 7, INT32_MIN, INT32_MAX),
                    TI_I(CXLA_S32, -5, 0, 7, INT32_MIN, INT32_MAX), __FILE__, __LINE__),
               -5, 0, 7, INT32_MIN, INT32_MAX);
  }
  CHECK_EQ_INT(n, 4); /* maximum, minimum, and, or */
  CHECK(!cx_op_is_idempotent(CX_OP_ADD) && !cx_op_is_idempotent(CX_OP_MULTIPLY));
}

TEST(interp_float_unary) {
  cxla_type t = CXLA_F32;
  TI_CHECK_F(UN(SIGN, t, TI_F(t, -2, -0.0, 0.0, 3, NAN, -INFINITY)), -1, -1, -0.0, 0.0, 1, NAN, -1);
  TI_CHECK_F(UN(SIGN, CXLA_F16, TI_F(CXLA_F16, -0.5, -0.0)), -1, -1, -0.0);
  TI_CHECK_F(UN(ROUND_AFZ, t, TI_F(t, 0.5, 1.5, 2.5, -0.5, -2.5, 2.4)), -1, 1, 2, 3, -1, -3, 2);
  TI_CHECK_F(UN(ROUND_EVEN, t, TI_F(t, 0.5, 1.5, 2.5, -0.5, -2.5, 2.6)), -1, 0, 2, 2, -0.0, -2, 3);
  TI_CHECK_F(UN(FLOOR, t, TI_F(t, -1.5, 1.5, -0.0)), -1, -2, 1, -0.0);
  TI_CHECK_F(UN(CEIL, t, TI_F(t, -1.5, 1.5, -0.5)), -1, -1, 2, -0.0);
  TI_CHECK_F(UN(ABS, t, TI_F(t, -1.5, -0.0, -INFINITY)), -1, 1.5, 0.0, INFINITY);
  TI_CHECK_F(UN(NEGATE, t, TI_F(t, 1.5, 0.0)), -1, -1.5, -0.0);
  TI_CHECK_I(UN(IS_FINITE, CXLA_PRED, TI_F(t, 1, INFINITY, -INFINITY, NAN, -0.0)), 1, 0, 0, 0, 1);
  TI_CHECK_I(UN(IS_FINITE, CXLA_PRED, TI_F(CXLA_F16, 65504, INFINITY)), 1, 0);
  TI_CHECK_F(UN(LOGISTIC, t, TI_F(t, 0, -1000, 1000, 1)), 1e-7, 0.5, 0, 1, 1 / (1 + exp(-1.0)));
  TI_CHECK_F(UN(RSQRT, t, TI_F(t, 4, 0, -1)), -1, 0.5, INFINITY, NAN);
  TI_CHECK_F(UN(CBRT, t, TI_F(t, -27, 8)), 1e-7, -3, 2);
  TI_CHECK_F(UN(EXPM1, t, TI_F(t, 1e-10, 1)), 1e-7, 1e-10, expm1(1.0));
  TI_CHECK_F(UN(LOG1P, t, TI_F(t, 1e-10, -1)), 1e-7, 1e-10, -INFINITY);
  TI_CHECK_F(UN(EXP, t, TI_F(t, 0, 1, -1, 100, -200)), 1e-7, 1, exp(1.0), exp(-1.0), INFINITY, 0);
  TI_CHECK_F(UN(LOG, t, TI_F(t, 1, 2, 0, -1)), 1e-7, 0, log(2.0), -INFINITY, NAN);
  TI_CHECK_F(UN(SQRT, t, TI_F(t, 2, -0.0, -1)), 1e-7, sqrt(2.0), -0.0, NAN);
  TI_CHECK_F(UN(TANH, t, TI_F(t, 0.5, -20)), 1e-7, tanh(0.5), -1);
  TI_CHECK_F(UN(TAN, t, TI_F(t, 0.5)), 1e-7, tan(0.5));
  TI_CHECK_F(UN(SIN, t, TI_F(t, 0.5)), 1e-7, sin(0.5));
  TI_CHECK_F(UN(COS, t, TI_F(t, 0.5)), 1e-7, cos(0.5));
  TI_CHECK_F(UN(ERF, t, TI_F(t, 0.5, -3)), 1e-7, erf(0.5), erf(-3.0));
  TI_CHECK_F(UN(EXP, CXLA_F64, TI_F(CXLA_F64, 1, 0.5)), 1e-15, exp(1.0), exp(0.5));
  TI_CHECK_F(UN(LOG, CXLA_BF16, TI_F(CXLA_BF16, 2)), 1e-2, log(2.0));
  /* f16 results are rounded to f16: exp(1) = 2.71875 in f16 (2.718281... -> 0x4170) */
  TI_CHECK_F(UN(EXP, CXLA_F16, TI_F(CXLA_F16, 1)), -1, 2.71875);
}

TEST(interp_float_binary) {
  cxla_type t = CXLA_F32;
  TI_CHECK_F(BIN(REMAINDER, t, TI_F(t, 5.5, -5.5, 5.5, -0.0), TI_F(t, 2, 2, -2, 1)), -1, 1.5, -1.5, 1.5, -0.0);
  TI_CHECK_F(BIN(DIVIDE, t, TI_F(t, 1, -1, 0, 1), TI_F(t, 0, 0, 0, -0.0)), -1, INFINITY, -INFINITY, NAN, -INFINITY);
  TI_CHECK_F(BIN(POWER, t, TI_F(t, 2, 0, NAN, 1, -8, 2), TI_F(t, 10, 0, 0, NAN, 1.0 / 3, -1)), -1,
             1024, 1, 1, 1, NAN, 0.5);
  TI_CHECK_F(BIN(ATAN2, t, TI_F(t, 1, 1, -0.0, 0.0), TI_F(t, 1, -1, -1, 1)), 1e-7, M_PI / 4, 3 * M_PI / 4, -M_PI, 0);
  TI_CHECK_F(BIN(ADD, CXLA_F64, TI_F(CXLA_F64, 0.1), TI_F(CXLA_F64, 0.2)), -1, 0.1 + 0.2);
  /* f32 rounds after each op: 16777216 + 1 is 16777216 */
  TI_CHECK_F(BIN(ADD, t, TI_F(t, 16777216, 1e20), TI_F(t, 1, 1)), -1, 16777216, (double)1e20f);
  /* f16: 0.1 + 0.2 = 4914 * 2^-14 exactly, a tie at f16 precision -> even: 0.2998046875 */
  TI_CHECK_F(BIN(ADD, CXLA_F16, TI_F(CXLA_F16, 0.1), TI_F(CXLA_F16, 0.2)), -1, 0.2998046875);
  TI_CHECK_F(BIN(ADD, CXLA_F16, TI_F(CXLA_F16, 1, 65504), TI_F(CXLA_F16, 0x1p-11, 16)), -1, 1, INFINITY);
  /* bf16: ulp at 1 is 2^-7; 1 + 1.5 ulp ties to the even 1 + 2^-6 */
  TI_CHECK_F(BIN(ADD, CXLA_BF16, TI_F(CXLA_BF16, 1, 1), TI_F(CXLA_BF16, 0x1p-8, 0x1p-7 + 0x1p-8)), -1, 1, 1.015625);
  TI_CHECK_F(BIN(MULTIPLY, CXLA_BF16, TI_F(CXLA_BF16, 3), TI_F(CXLA_BF16, 1.0 / 3)), -1, 1);
  /* a scalar operand broadcasts */
  TI_CHECK_F(BIN(SUBTRACT, t, TI_F(t, 1, 2, 3), ti_scalar_f(t, 1)), -1, 0, 1, 2);
}

TEST(interp_compare_float) {
  cxla_type t = CXLA_F32;
  TI_CHECK_I(CMP(EQ, FLOAT, TI_F(t, 1, NAN, NAN, 2, -0.0), TI_F(t, 1, 1, NAN, 3, 0.0)), 1, 0, 0, 0, 1);
  TI_CHECK_I(CMP(NE, FLOAT, TI_F(t, 1, NAN, NAN, 2), TI_F(t, 1, 1, NAN, 3)), 0, 1, 1, 1);
  TI_CHECK_I(CMP(LT, FLOAT, TI_F(t, 1, NAN, NAN, 2), TI_F(t, 1, 1, NAN, 3)), 0, 0, 0, 1);
  TI_CHECK_I(CMP(GE, DEFAULT, TI_F(t, 1, NAN, NAN, 2), TI_F(t, 1, 1, NAN, 3)), 1, 0, 0, 0);
  TI_CHECK_I(CMP(LE, DEFAULT, TI_F(CXLA_F16, 1, NAN), TI_F(CXLA_F16, 1, 1)), 1, 0);
  /* TOTALORDER: -NaN < -inf < -0 < +0 < +inf < +NaN; equal NaNs are equal */
  static const cxla_type types[] = {CXLA_F32, CXLA_F64, CXLA_F16, CXLA_BF16};
  for (int k = 0; k < 4; k++) {
    t = types[k];
    TI_CHECK_I(CMP(LT, TOTALORDER, TI_F(t, -0.0, NAN, -NAN, -INFINITY, 1, NAN, 0.0),
                   TI_F(t, 0.0, INFINITY, -INFINITY, -NAN, 1, NAN, -0.0)),
               1, 0, 1, 0, 0, 0, 0);
    TI_CHECK_I(CMP(EQ, TOTALORDER, TI_F(t, -0.0, NAN, -NAN, 1), TI_F(t, 0.0, NAN, NAN, 1)), 0, 1, 0, 1);
    TI_CHECK_I(CMP(GT, TOTALORDER, TI_F(t, NAN, INFINITY), TI_F(t, INFINITY, 1e3)), 1, 1);
  }
}

TEST(interp_compare_int) {
  TI_CHECK_I(CMP(LT, DEFAULT, TI_I(CXLA_S8, -1, 5, -128), TI_I(CXLA_S8, 1, 5, 127)), 1, 0, 1);
  TI_CHECK_I(CMP(GT, DEFAULT, TI_I(CXLA_U8, 255, 1), TI_I(CXLA_U8, 1, 1)), 1, 0);
  TI_CHECK_I(CMP(GT, UNSIGNED, TI_I(CXLA_U64, -1, 0), TI_I(CXLA_U64, 1, 0)), 1, 0);
  TI_CHECK_I(CMP(LT, SIGNED, TI_I(CXLA_S64, INT64_MIN, 3), TI_I(CXLA_S64, INT64_MAX, 3)), 1, 0);
  TI_CHECK_I(CMP(LE, SIGNED, TI_I(CXLA_S32, 3, 4), TI_I(CXLA_S32, 3, 3)), 1, 0);
  TI_CHECK_I(CMP(NE, DEFAULT, TI_I(CXLA_U32, 4000000000u, 7), TI_I(CXLA_U32, 4000000000u, 8)), 0, 1);
  TI_CHECK_I(CMP(GT, DEFAULT, TI_I(CXLA_PRED, 1, 0, 1), TI_I(CXLA_PRED, 0, 0, 1)), 1, 0, 0);
}

TEST(interp_convert_float_to_int) {
  cxla_type t = CXLA_F32;
  /* truncation toward zero, saturation, NaN -> 0 */
  TI_CHECK_I(UN(CONVERT, CXLA_S8, TI_F(t, 300, -300, NAN, 2.9, -2.9, INFINITY, -INFINITY)), 127, -128, 0, 2, -2, 127, -128);
  TI_CHECK_I(UN(CONVERT, CXLA_U8, TI_F(t, -5, 300, 255.9, -0.9)), 0, 255, 255, 0);
  TI_CHECK_I(UN(CONVERT, CXLA_S32, TI_F(t, 3e9, -3e9, -2147483648.0)), INT32_MAX, INT32_MIN, INT32_MIN);
  TI_CHECK_I(UN(CONVERT, CXLA_S64, TI_F(CXLA_F64, 1e19, -1e19, NAN, -12.75)), INT64_MAX, INT64_MIN, 0, -12);
  TI_CHECK_I(UN(CONVERT, CXLA_U64, TI_F(t, -1, 2e19, 0x1p63)), 0, -1, INT64_MIN); /* 2^63 as a bit pattern */
  TI_CHECK_I(UN(CONVERT, CXLA_U16, TI_F(CXLA_F16, 65504, -1)), 65504, 0);
  /* ->pred is x != 0, so NaN is true */
  TI_CHECK_I(UN(CONVERT, CXLA_PRED, TI_F(t, 0, -0.0, 0.5, NAN)), 0, 0, 1, 1);
  TI_CHECK_I(UN(CONVERT, CXLA_PRED, TI_I(CXLA_S32, 0, -7)), 0, 1);
}

TEST(interp_convert_int_to_float) {
  /* round to nearest even: 2^24+1 -> 2^24, 2^24+3 -> 2^24+4 */
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_I(CXLA_S32, 16777217, 16777219, -3)), -1, 16777216, 16777220, -3);
  /* one rounding, not two via double: 2^60 + 2^36 + 1 -> 2^60 + 2^37 */
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_I(CXLA_S64, 1152921573326323713LL)), -1, 1152921642045800448.0);
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_I(CXLA_U64, -1)), -1, 18446744073709551616.0);
  TI_CHECK_F(UN(CONVERT, CXLA_F64, TI_I(CXLA_U64, -1, 3)), -1, 18446744073709551616.0, 3);
  TI_CHECK_F(UN(CONVERT, CXLA_F64, TI_I(CXLA_S64, INT64_MIN)), -1, -9223372036854775808.0);
  /* f16: 2049 ties to 2048, 2051 to 2052, 65519 -> 65504, 65520 -> inf */
  TI_CHECK_F(UN(CONVERT, CXLA_F16, TI_I(CXLA_S32, 2049, 2051, 65519, 65520, -70000)), -1, 2048, 2052, 65504, INFINITY,
             -INFINITY);
  /* bf16: ulp 2 at 256 */
  TI_CHECK_F(UN(CONVERT, CXLA_BF16, TI_I(CXLA_S32, 257, 259)), -1, 256, 260);
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_I(CXLA_PRED, 1, 0)), -1, 1, 0);
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_I(CXLA_U8, 255)), -1, 255);
}

TEST(interp_convert_int_float_float) {
  TI_CHECK_I(UN(CONVERT, CXLA_S8, TI_I(CXLA_S32, 300, -129, 127)), 44, 127, 127);
  TI_CHECK_I(UN(CONVERT, CXLA_S32, TI_I(CXLA_U32, 4294967295u)), -1);
  TI_CHECK_I(UN(CONVERT, CXLA_U32, TI_I(CXLA_S8, -1)), 4294967295u);
  TI_CHECK_I(UN(CONVERT, CXLA_S64, TI_I(CXLA_S8, -1)), -1);
  TI_CHECK_I(UN(CONVERT, CXLA_U64, TI_I(CXLA_S64, -1)), -1);
  TI_CHECK_I(UN(CONVERT, CXLA_S32, TI_I(CXLA_PRED, 1, 0)), 1, 0);
  /* f32 -> f16: overflow to inf at 65520, 65519 -> 65504, underflow to 0 or the smallest subnormal */
  TI_CHECK_F(UN(CONVERT, CXLA_F16, TI_F(CXLA_F32, 65520, 65519, 1e-8, 3e-8, -0.0)), -1, INFINITY, 65504, 0, 0x1p-24, -0.0);
  TI_CHECK_F(UN(CONVERT, CXLA_BF16, TI_F(CXLA_F32, 3.14159265)), -1, 3.140625);
  TI_CHECK_F(UN(CONVERT, CXLA_F32, TI_F(CXLA_F64, 0.1, 1e300, NAN)), -1, (double)0.1f, INFINITY, NAN);
  TI_CHECK_F(UN(CONVERT, CXLA_F64, TI_F(CXLA_F16, 0.1)), -1, 0.0999755859375);
  TI_CHECK_F(UN(CONVERT, CXLA_F16, TI_F(CXLA_BF16, 1.0 / 3)), -1, 0.333984375); /* bf16 1/3 is exact in f16 */
}

TEST(interp_bitcast_convert) {
  TI_CHECK_I(UN(BITCAST_CONVERT, CXLA_S32, TI_F(CXLA_F32, 1.0, -0.0)), 0x3F800000, INT32_MIN);
  TI_CHECK_F(UN(BITCAST_CONVERT, CXLA_F32, TI_I(CXLA_S32, 0x40490FDB)), -1, 3.1415927410125732);
  TI_CHECK_I(UN(BITCAST_CONVERT, CXLA_U16, TI_F(CXLA_F16, 1.0)), 0x3C00);
  TI_CHECK_I(UN(BITCAST_CONVERT, CXLA_U16, TI_F(CXLA_BF16, -2.0)), 0xC000);
  TI_CHECK_I(UN(BITCAST_CONVERT, CXLA_S64, TI_F(CXLA_F64, 1.0)), 0x3FF0000000000000LL);
  /* a wider input grows a trailing dimension of its bytes (little-endian) */
  cxla_literal *x = TI_F(CXLA_F32, 1.0, -2.0);
  cxla_literal *r = ti_op_run(CX_OP_BITCAST_CONVERT, ti_sh(CXLA_U8, 2, 2, 4), NULL, 1, &x, __FILE__, __LINE__);
  CHECK(r && r->shape.rank == 2 && r->shape.dims[1] == 4);
  TI_CHECK_I(r, 0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0);
  /* a narrower input drops it */
  x = ti_lit_i(CXLA_U8, ti_sh(CXLA_U8, 1, 4), (int64_t[]){0, 0, 0x80, 0x3F});
  r = ti_op_run(CX_OP_BITCAST_CONVERT, ti_sh(CXLA_F32, 0), NULL, 1, &x, __FILE__, __LINE__);
  CHECK(r && r->shape.rank == 0);
  TI_CHECK_F(r, -1, 1.0);
}

static cxla_literal *rp_(cxla_literal *x, int e, int m, const char *f, int l) {
  cx_attrs at = {0};
  at.exponent_bits = e;
  at.mantissa_bits = m;
  return ti_op_run(CX_OP_REDUCE_PRECISION, cx_shape_array(x->shape.type, x->shape.rank, x->shape.dims), &at, 1, &x, f, l);
}
#define RP(x, e, m) rp_((x), (e), (m), __FILE__, __LINE__)

TEST(interp_reduce_precision) {
  cxla_type t = CXLA_F32;
  /* bf16-like (8, 7): ties to even; FLT_MAX rounds up to inf; NaN stays NaN */
  TI_CHECK_F(RP(TI_F(t, 1 + 0x1p-8, 1 + 0x1p-7 + 0x1p-8, 1 + 0x1p-8 + 0x1p-20, NAN, -INFINITY, 3.4028234663852886e38, -1.5),
                8, 7), -1,
             1, 1 + 0x1p-6, 1 + 0x1p-7, NAN, -INFINITY, INFINITY, -1.5);
  /* f16-like (5, 10): overflow to inf, values below the smallest normal (2^-14) flush to 0 */
  TI_CHECK_F(RP(TI_F(t, 65504, 65520, 65519, 1e-5, -1e-5, 0x1p-14, 1.0 / 3, 1e6, -1e6, NAN), 5, 10), -1,
             65504, INFINITY, 65504, 0, -0.0, 0x1p-14, 0.333251953125, INFINITY, -INFINITY, NAN);
  /* no mantissa bits: rounds to a power of two (ties to the even exponent); NaN -> inf */
  TI_CHECK_F(RP(TI_F(t, 3, 5, 6, NAN), 8, 0), -1, 2, 4, 8, INFINITY);
  TI_CHECK_F(RP(TI_F(CXLA_F64, 0.1, 1e300, 0.1), 8, 23), -1, (double)0.1f, INFINITY, (double)0.1f);
  TI_CHECK_F(RP(TI_F(CXLA_F64, 0.1), 11, 52), -1, 0.1);
  /* f16 to (5, 2): 1 + 2^-3 + 2^-4 rounds up to 1.25 */
  TI_CHECK_F(RP(TI_F(CXLA_F16, 1.1875, 6e-5), 5, 2), -1, 1.25, 0x1p-14);
  TI_CHECK_F(RP(TI_F(CXLA_BF16, 1.0 + 0x1p-7), 8, 3), -1, 1);
}

TEST(interp_select_clamp) {
  cxla_literal *args[3] = {TI_I(CXLA_PRED, 1, 0, 1), TI_F(CXLA_F32, 1, 2, 3), TI_F(CXLA_F32, -1, -2, -3)};
  TI_CHECK_F(ti_op_run(CX_OP_SELECT, ti_sh(CXLA_F32, 1, 3), NULL, 3, args, __FILE__, __LINE__), -1, 1, -2, 3);
  cxla_literal *args2[3] = {ti_scalar_i(CXLA_PRED, 0), TI_I(CXLA_S8, 1, 2), TI_I(CXLA_S8, -1, -2)};
  TI_CHECK_I(ti_op_run(CX_OP_SELECT, ti_sh(CXLA_S8, 1, 2), NULL, 3, args2, __FILE__, __LINE__), -1, -2);
  /* clamp(lo, x, hi) = min(max(x, lo), hi); NaN anywhere gives NaN; -0 is below +0 */
  cxla_literal *args3[3] = {ti_scalar_f(CXLA_F32, 0), TI_F(CXLA_F32, -1, 0.5, 2, NAN, -0.0), ti_scalar_f(CXLA_F32, 1)};
  TI_CHECK_F(ti_op_run(CX_OP_CLAMP, ti_sh(CXLA_F32, 1, 5), NULL, 3, args3, __FILE__, __LINE__), -1, 0, 0.5, 1, NAN, 0.0);
  cxla_literal *args4[3] = {TI_F(CXLA_F64, NAN, 0, 5), TI_F(CXLA_F64, 1, 1, 1), TI_F(CXLA_F64, 2, NAN, 6)};
  TI_CHECK_F(ti_op_run(CX_OP_CLAMP, ti_sh(CXLA_F64, 1, 3), NULL, 3, args4, __FILE__, __LINE__), -1, NAN, NAN, 5);
  cxla_literal *args5[3] = {ti_scalar_i(CXLA_S32, -5), TI_I(CXLA_S32, -10, 0, 10), ti_scalar_i(CXLA_S32, 5)};
  TI_CHECK_I(ti_op_run(CX_OP_CLAMP, ti_sh(CXLA_S32, 1, 3), NULL, 3, args5, __FILE__, __LINE__), -5, 0, 5);
  cxla_literal *args6[3] = {ti_scalar_i(CXLA_U8, 10), TI_I(CXLA_U8, 255, 0, 20), ti_scalar_i(CXLA_U8, 200)};
  TI_CHECK_I(ti_op_run(CX_OP_CLAMP, ti_sh(CXLA_U8, 1, 3), NULL, 3, args6, __FILE__, __LINE__), 200, 10, 20);
}

static void check_refused(cx_op op, cxla_type t, const char *msg) {
  cxla_literal *x = TI_I(t, 1);
  cx_module *m = ti_module();
  cx_comp *c = ti_comp(m, "main");
  cx_instr *p = ti_param(c, 0, x->shape);
  ti_finish(m, c, ti_op(c, op, x->shape, 1, p), 1);
  cxla_literal *out = NULL;
  CHECK_EQ_INT(cx_interp_run(m, 1, &x, &out), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), msg);
  CHECK(out == NULL);
  cxla_literal_destroy(x);
  cx_module_free(m);
}

TEST(interp_elementwise_type_refused) {
  /* an op on a type XLA does not define it for is refused rather than computed: a float-only op
   * on integers, sign and abs on unsigned integers (ops.def's `types` column) */
  check_refused(CX_OP_EXP, CXLA_S32, "not supported: exponential");
  check_refused(CX_OP_SIGN, CXLA_U8, "not supported: sign");
  check_refused(CX_OP_ABS, CXLA_U32, "not supported: abs");
}

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

TEST(interp_elementwise_speed) {
  /* 1M-element f32 add and exp: a few tens of ms in an optimised build; the bound leaves room
   * for sanitizer builds while still catching a per-element allocation or dispatch blowup. */
  int64_t n = 1 << 20;
  cx_shape s = ti_sh(CXLA_F32, 1, (int)n);
  cx_module *m = ti_module();
  cx_comp *c = ti_comp(m, "main");
  cx_instr *a = ti_param(c, 0, s), *b = ti_param(c, 1, s);
  ti_finish(m, c, ti_op(c, CX_OP_EXP, s, 1, ti_op(c, CX_OP_ADD, s, 2, a, b)), 1);
  cxla_literal *x = cx_literal_new(&s), *y = cx_literal_new(&s), *args[2] = {x, y};
  for (int64_t i = 0; i < n; i++) {
    ((float *)x->data)[i] = (float)(i % 7) * 0.25f;
    ((float *)y->data)[i] = -1.0f;
  }
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cxla_literal *r = TI_RUN(m, 2, args);
  double ms = ms_since(&t0);
  CHECK_MSG(ms < 1000, "1M-element add+exp took %.1f ms", ms);
  if (r) {
    CHECK_NEAR(((float *)r->data)[5], exp(5 * 0.25 - 1), 1e-6);
    CHECK_NEAR(((float *)r->data)[n - 1], exp((double)((n - 1) % 7) * 0.25 - 1), 1e-6);
  }
  cxla_literal_destroy(r);
  cxla_literal_destroy(x);
  cxla_literal_destroy(y);
  cx_module_free(m);
}

/* The scalar API that reducers and comparators use, directly. */
static cx_scalar F(double v) { cx_scalar s; s.f = v; return s; }
static cx_scalar I(int64_t v) { cx_scalar s; s.i = v; return s; }

TEST(interp_scalar_api) {
  CHECK(cx_scalar_compare(CXLA_LT, CX_CMP_TOTALORDER, CXLA_F32, F(-0.0), F(0.0)));
  CHECK(!cx_scalar_compare(CXLA_EQ, CX_CMP_TOTALORDER, CXLA_F32, F(-0.0), F(0.0)));
  CHECK(cx_scalar_compare(CXLA_LT, CX_CMP_TOTALORDER, CXLA_F64, F(INFINITY), F(NAN)));
  CHECK(cx_scalar_compare(CXLA_LT, CX_CMP_TOTALORDER, CXLA_BF16, F(-NAN), F(-INFINITY)));
  CHECK(cx_scalar_compare(CXLA_EQ, CX_CMP_TOTALORDER, CXLA_F16, F(NAN), F(NAN)));
  CHECK(!cx_scalar_compare(CXLA_EQ, CX_CMP_FLOAT, CXLA_F64, F(NAN), F(NAN)));
  CHECK(cx_scalar_compare(CXLA_NE, CX_CMP_DEFAULT, CXLA_F64, F(NAN), F(NAN)));
  CHECK(!cx_scalar_compare(CXLA_GE, CX_CMP_DEFAULT, CXLA_F32, F(NAN), F(1)));
  CHECK(cx_scalar_compare(CXLA_EQ, CX_CMP_FLOAT, CXLA_F32, F(-0.0), F(0.0)));
  CHECK(!cx_scalar_compare(CXLA_LT, CX_CMP_DEFAULT, CXLA_U64, I(-1), I(1)));  /* 2^64-1 > 1 */
  CHECK(cx_scalar_compare(CXLA_LT, CX_CMP_DEFAULT, CXLA_S64, I(-1), I(1)));
  CHECK(cx_scalar_compare(CXLA_GT, CX_CMP_UNSIGNED, CXLA_U32, I(4000000000u), I(1)));
  CHECK(cx_scalar_compare(CXLA_LT, CX_CMP_SIGNED, CXLA_S8, I(-128), I(127)));

  cx_scalar r = cx_scalar_binary(CX_OP_MAXIMUM, CXLA_F32, F(-0.0), F(0.0));
  CHECK(r.f == 0 && !signbit(r.f));
  r = cx_scalar_binary(CX_OP_MINIMUM, CXLA_F64, F(0.0), F(-0.0));
  CHECK(r.f == 0 && signbit(r.f));
  CHECK(isnan(cx_scalar_binary(CX_OP_MAXIMUM, CXLA_BF16, F(1), F(NAN)).f));
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_DIVIDE, CXLA_S64, I(INT64_MIN), I(-1)).i, INT64_MIN);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_REMAINDER, CXLA_S64, I(INT64_MIN), I(-1)).i, 0);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_DIVIDE, CXLA_U32, I(7), I(0)).i, 4294967295u);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_ADD, CXLA_U8, I(200), I(100)).i, 44);
  CHECK_NEAR(cx_scalar_binary(CX_OP_ADD, CXLA_F32, F(16777216), F(1)).f, 16777216, 0);
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_NEGATE, CXLA_S16, I(-32768)).i, -32768);
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_IS_FINITE, CXLA_F32, F(INFINITY)).i, 0);

  CHECK(isinf(cx_scalar_reduce_precision(CXLA_F32, F(65520), 5, 10).f));
  CHECK_NEAR(cx_scalar_reduce_precision(CXLA_F64, F(1 + 0x1p-8), 8, 7).f, 1, 0);
  CHECK_NEAR(cx_scalar_convert(CXLA_U64, CXLA_F32, I(-1)).f, 18446744073709551616.0, 0);
  CHECK_EQ_INT(cx_scalar_convert(CXLA_F32, CXLA_S8, F(-1000)).i, -128);
  CHECK_EQ_INT(cx_scalar_convert(CXLA_F64, CXLA_PRED, F(NAN)).i, 1);
  CHECK_EQ_INT(cx_scalar_bitcast(CXLA_F32, CXLA_S32, F(1.0)).i, 0x3F800000);
  CHECK_NEAR(cx_scalar_bitcast(CXLA_U16, CXLA_BF16, I(0x3F80)).f, 1, 0);
}
