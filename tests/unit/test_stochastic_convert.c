/* test_stochastic_convert.c — stochastic-convert: the verifier's rule (XLA's
 * InferStochasticConvertShape, signed results only), and the emitter against the interpreter
 * bit for bit on every float type and signed result width, with inputs at the rounding
 * boundary (random bits equal to the scaled fraction and one below), at and around the
 * result type's limits, and NaN and infinities. Hand-computed values are in
 * tests/hlo/ops/stochastic_convert.hlo. */
#include <math.h>
#include "codegen_harness.h"
#include "text/hlo.h"
#include "verify_helpers.h"

TEST(stochastic_convert_verifier) {
  vt_begin();
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[2,3]"), *r = vt_param(1, "r", "u32[2,3]");
  cx_instr *h = vt_param(2, "h", "f16[2,3]"), *rs = vt_param(3, "rs", "s32[2,3]");
  cx_instr *r16 = vt_param(4, "r16", "u16[2,3]"), *rflat = vt_param(5, "rflat", "u32[6]");
  cx_instr *i = vt_param(6, "i", "s32[2,3]");
  CHECK_INFER(vt_op(CX_OP_STOCHASTIC_CONVERT, "a", "s8[2,3]", 2, x, r), "s8[2,3]");
  CHECK_INFER(vt_op(CX_OP_STOCHASTIC_CONVERT, "b", "s64[2,3]", 2, h, r16), "s64[2,3]");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "c", "s32[2,3]", 2, x, rs),
                  "random numbers must be unsigned integers, got s32[2,3]");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "d", "s32[2,3]", 2, h, r),
                  "random numbers u32[2,3] must have the operand's bit width (16), got 32 bits");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "f", "s32[2,3]", 2, x, rflat),
                  "operand f32[2,3] and random numbers u32[6] must have the same dimensions");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "g", "s32[2,3]", 2, i, r),
                  "operand 0 has element type s32 but stochastic-convert needs a floating-point type");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "k", "f32[2,3]", 2, x, r),
                  "converts to signed integer types only (as XLA does), not to f32");
  CHECK_INFER_ERR(vt_op(CX_OP_STOCHASTIC_CONVERT, "l", "u32[2,3]", 2, x, r), "not to u32");
  vt_end();
}

TEST(stochastic_convert_result_shape_cannot_be_left_out) {
  /* XLA's parser requires it too (CanInferShape): the result type says what to convert to */
  cx_module *m = NULL;
  const char *text = "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  r = u32[2] parameter(1)\n"
                     "  ROOT s = stochastic-convert(x, r)\n}\n";
  CHECK(cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m) != CXLA_OK);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot be left out");
  cx_module_free(m);
}

/* Operand 0 (the floats) around the result type's limits and integers, and operand 1 (the
 * random bits) uniform, or equal to (or one below) the scaled fraction of the same element:
 * the comparison's boundary. */
typedef struct {
  int result_bits;
  const cxla_literal *x;
  uint64_t state;
} sc_fill;

static void fill(cxla_literal *lit, int k, void *user) {
  sc_fill *f = user;
  cxla_type t = lit->shape.type;
  int64_t n = cx_shape_elems(&lit->shape);
  double lim = ldexp(1, f->result_bits - 1);
  static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 65504, -65504, 1e30};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = cgt_rand(&f->state);
    if (k == 0) {
      double v;
      switch (r % 8) {
      case 0: v = special[(r >> 8) % CX_ARRAY_LEN(special)]; break;
      case 1: case 2: v = ((r >> 8) & 1 ? -1 : 1) * (lim + (double)((int64_t)((r >> 9) % 5) - 2) + ldexp((double)(r >> 40), -24)); break;
      default: v = ((r >> 8) & 1 ? -1 : 1) * ldexp((double)(r >> 11), -53) * ldexp(1, (int)((r >> 3) % 12)); break;
      }
      cx_store_f64(t, lit->data, i, v);
      continue;
    }
    uint64_t bits = (uint64_t)cgt_rand(&f->state);
    int rb = cx_type_bits(t);
    double a = fabs(cx_load_f64(f->x->shape.type, f->x->data, i));
    if (r % 3 && isfinite(a)) {
      uint64_t fixed = (uint64_t)ldexp(a - floor(a), rb);
      bits = fixed - (r % 3 == 1 && fixed > 0);
    }
    cx_store_i64(t, lit->data, i, (int64_t)bits);
  }
  if (k == 0) f->x = lit;
}

TEST(stochastic_convert_codegen_matches_interpreter) {
  static const char *floats[][2] = {{"f16", "u16"}, {"bf16", "u16"}, {"f32", "u32"}, {"f64", "u64"}};
  static const char *ints[] = {"s8", "s16", "s32", "s64"};
  for (size_t fi = 0; fi < CX_ARRAY_LEN(floats); fi++)
    for (size_t ii = 0; ii < CX_ARRAY_LEN(ints); ii++) {
      char text[512];
      snprintf(text, sizeof text,
               "HloModule sc\nENTRY e {\n  x = %s[1031] parameter(0)\n  r = %s[1031] parameter(1)\n"
               "  ROOT s = %s[1031] stochastic-convert(x, r)\n}\n",
               floats[fi][0], floats[fi][1], ints[ii]);
      sc_fill f = {.result_bits = 8 << ii, .state = 77 + fi * 4 + ii};
      cgt_opts o = {.fusion_pass = 1, .fill = fill, .user = &f};
      CHECK_MSG(!CGT(text, &o), "%s -> %s", floats[fi][0], ints[ii]);
      CHECK_EQ_INT(o.nfusions, 1);
    }
}
