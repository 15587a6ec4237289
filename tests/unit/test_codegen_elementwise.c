/* test_codegen_elementwise.c — every elementwise op on every type class through the emitter,
 * compared with the interpreter: bit for bit (the sign of zero included; any NaN matches any
 * NaN) except the f32 approximations of math.c and the f64 functions through libmvec (few
 * ulps). Inputs mix NaN, +-inf, +-0, denormals, integer extremes and ordinary values. */
#include "codegen_harness.h"

#define LEN 257

typedef struct ewop {
  const char *op;
  int nops;           /* 1, 2, 3; 4: select (pred, a, b) */
  const char *attrs;
  int pred_result;
} ewop;

/* ENTRY with parameters a, b, c of type t and a pred p, one instruction per op, and a tuple of
 * all of them as the result; every op becomes its own fusion. */
static char *module_for(const char *t, const ewop *ops, int n) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "HloModule ew\nENTRY e {\n  a = %s[%d] parameter(0)\n  b = %s[%d] parameter(1)\n"
                    "  c = %s[%d] parameter(2)\n  p = pred[%d] parameter(3)\n", t, LEN, t, LEN, t, LEN, LEN);
  for (int i = 0; i < n; i++) {
    const char *args = ops[i].nops == 1 ? "a" : ops[i].nops == 2 ? "a, b" : ops[i].nops == 3 ? "a, b, c" : "p, a, b";
    cx_sb_printf(&sb, "  r%d = %s[%d] %s(%s)%s\n", i, ops[i].pred_result ? "pred" : t, LEN, ops[i].op, args,
                 ops[i].attrs ? ops[i].attrs : "");
  }
  cx_sb_puts(&sb, "  ROOT out = (");
  for (int i = 0; i < n; i++) cx_sb_printf(&sb, "%s%s[%d]", i ? ", " : "", ops[i].pred_result ? "pred" : t, LEN);
  cx_sb_puts(&sb, ") tuple(");
  for (int i = 0; i < n; i++) cx_sb_printf(&sb, "%sr%d", i ? ", " : "", i);
  cx_sb_puts(&sb, ")\n}\n");
  return cx_sb_take(&sb);
}

static void run_ops(const char *t, const ewop *ops, int n, double ulps, int libm_only, int seeds, const char *file,
                    int line) {
  char *text = module_for(t, ops, n);
  for (int s = 1; s <= seeds; s++) {
    cgt_opts o = {.fusion_pass = 1, .ulps = ulps, .libm_only = libm_only, .seed = (uint64_t)s * 7919};
    int fails = cgt_check(text, &o, file, line);
    if (fails) test_fail(file, line, "type %s, seed %d: %d failures", t, s, fails);
    if (o.nfusions != n) test_fail(file, line, "type %s: %d fusions run, expected %d", t, o.nfusions, n);
    if (fails) break;
  }
  cx_free(text);
}
#define RUN_OPS(t, ops, ulps) run_ops((t), (ops), CX_ARRAY_LEN(ops), (ulps), 0, 3, __FILE__, __LINE__)
/* f64 math through scalar libm only (--cpu-libmvec=off): bit for bit the interpreter's */
#define RUN_OPS_LIBM(t, ops) run_ops((t), (ops), CX_ARRAY_LEN(ops), 0, 1, 3, __FILE__, __LINE__)

#define CMPS(type)                                                                              \
  {"compare", 2, ", direction=EQ" type, 1}, {"compare", 2, ", direction=NE" type, 1},          \
  {"compare", 2, ", direction=LT" type, 1}, {"compare", 2, ", direction=LE" type, 1},          \
  {"compare", 2, ", direction=GT" type, 1}, {"compare", 2, ", direction=GE" type, 1}

/* f32 sin, cos, tan, cbrt, power and atan2 are cxla's own code in double (math_trig.c & co.,
 * documented within 1 ulp): on these inputs they round exactly as libm does. */
static const ewop float_exact[] = {
  {"abs", 1}, {"negate", 1}, {"sign", 1}, {"floor", 1}, {"ceil", 1}, {"round-nearest-afz", 1},
  {"round-nearest-even", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"cbrt", 1}, {"sine", 1}, {"cosine", 1},
  {"tan", 1}, {"copy", 1}, {"is-finite", 1, NULL, 1},
  {"add", 2}, {"subtract", 2}, {"multiply", 2}, {"divide", 2}, {"remainder", 2}, {"power", 2},
  {"atan2", 2}, {"maximum", 2}, {"minimum", 2}, {"select", 4}, {"clamp", 3},
  CMPS(""), CMPS(", type=TOTALORDER"),
};

/* Complex numbers, part by part: both compute in double with the same formulas, in the same
 * order, with the same libm functions, and round once, so they agree bit for bit. */
static const ewop complex_ops[] = {
  {"negate", 1}, {"sign", 1}, {"exponential", 1}, {"exponential-minus-one", 1}, {"log", 1},
  {"log-plus-one", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"cbrt", 1}, {"sine", 1}, {"cosine", 1},
  {"tanh", 1}, {"logistic", 1}, {"copy", 1}, {"add", 2}, {"subtract", 2}, {"multiply", 2},
  {"divide", 2}, {"power", 2}, {"select", 4},
  {"compare", 2, ", direction=EQ", 1}, {"compare", 2, ", direction=NE", 1},
};

static const ewop float_approx[] = {
  {"exponential", 1}, {"exponential-minus-one", 1}, {"log", 1}, {"log-plus-one", 1},
  {"logistic", 1}, {"tanh", 1}, {"erf", 1},
};

TEST(codegen_ew_f32_exact) { RUN_OPS("f32", float_exact, 0); }
/* f64: the functions with libmvec variants (libmvec.c) are within 4 ulps of libm; with scalar
 * libm only, every op is bit for bit the interpreter's */
static const ewop f64_libmvec[] = {
  {"cbrt", 1}, {"sine", 1}, {"cosine", 1}, {"tan", 1}, {"power", 2}, {"atan2", 2},
  {"exponential-minus-one", 1}, {"log-plus-one", 1}, {"tanh", 1}, {"erf", 1},
};
TEST(codegen_ew_f64_exact) { RUN_OPS_LIBM("f64", float_exact); }
TEST(codegen_ew_f64_libmvec) { RUN_OPS("f64", f64_libmvec, 4); }
TEST(codegen_ew_f16_exact) { RUN_OPS("f16", float_exact, 0); }
TEST(codegen_ew_bf16_exact) { RUN_OPS("bf16", float_exact, 0); }
TEST(codegen_ew_c64) { RUN_OPS("c64", complex_ops, 0); }
TEST(codegen_ew_c128) { RUN_OPS("c128", complex_ops, 0); }

/* the other f64 transcendentals call the same libm as the interpreter (with libmvec off) */
static const ewop f64_libm[] = {
  {"exponential-minus-one", 1}, {"log-plus-one", 1}, {"tanh", 1}, {"erf", 1},
};
/* f64 exp and log are cxla's own (math_f64.c, within 1 ulp of libm); logistic uses that exp */
static const ewop f64_own[] = {{"exponential", 1}, {"log", 1}, {"logistic", 1}};
TEST(codegen_ew_f64_transcendental_exact) { RUN_OPS_LIBM("f64", f64_libm); }
TEST(codegen_ew_f64_transcendental) { RUN_OPS("f64", f64_own, 2); }
TEST(codegen_ew_f32_transcendental) { RUN_OPS("f32", float_approx, 2); }
/* f16/bf16 round an f32 result: at most one unit of the narrow type apart */
TEST(codegen_ew_f16_transcendental) { RUN_OPS("f16", float_approx, 1); }
TEST(codegen_ew_bf16_transcendental) { RUN_OPS("bf16", float_approx, 1); }

#define UNSIGNED_OPS                                                                            \
  {"negate", 1}, {"not", 1}, {"popcnt", 1}, {"count-leading-zeros", 1}, \
  {"copy", 1}, {"add", 2}, {"subtract", 2}, {"multiply", 2}, {"divide", 2}, {"remainder", 2},      \
  {"power", 2}, {"maximum", 2}, {"minimum", 2}, {"and", 2}, {"or", 2}, {"xor", 2},        \
  {"shift-left", 2}, {"shift-right-arithmetic", 2}, {"shift-right-logical", 2}, {"select", 4}, \
  {"clamp", 3}, CMPS("")

static const ewop uint_ops[] = {UNSIGNED_OPS};
static const ewop int_ops[] = {{"abs", 1}, {"sign", 1}, UNSIGNED_OPS};

TEST(codegen_ew_signed_ints) {
  RUN_OPS("s8", int_ops, 0);
  RUN_OPS("s16", int_ops, 0);
  RUN_OPS("s32", int_ops, 0);
  RUN_OPS("s64", int_ops, 0);
}

TEST(codegen_ew_unsigned_ints) {
  RUN_OPS("u8", uint_ops, 0);
  RUN_OPS("u16", uint_ops, 0);
  RUN_OPS("u32", uint_ops, 0);
  RUN_OPS("u64", uint_ops, 0);
}

static const ewop pred_ops[] = {
  {"not", 1}, {"copy", 1}, {"and", 2}, {"or", 2}, {"xor", 2}, {"add", 2},
  {"multiply", 2}, {"maximum", 2}, {"minimum", 2}, {"select", 4}, CMPS(""),
};

TEST(codegen_ew_pred) { RUN_OPS("pred", pred_ops, 0); }

/* Integer corner cases the random inputs might miss, spelled out: x/0 = -1, INT_MIN/-1 =
 * INT_MIN, x%0 = x, INT_MIN%-1 = 0, remainder sign, shifts by >= width and negative amounts. */
static void fill_corners(cxla_literal *lit, int k, void *user) {
  (void)user;
  static const int64_t av[] = {7, -7, 7, -7, INT32_MIN, INT32_MIN, 5, -5, 0, 1, -1, 123, -123, 1, -1, 2, 3, 0};
  static const int64_t bv[] = {0, 0, 2, 2, -1, 1, -3, 3, 0, 31, 31, 32, 33, 40, -1, 1, 2, 0};
  int64_t n = cx_shape_elems(&lit->shape);
  for (int64_t i = 0; i < n; i++) {
    int64_t j = i % CX_ARRAY_LEN(av);
    cx_store_i64(lit->shape.type, lit->data, i, k == 0 ? av[j] : k == 1 ? bv[j] : (i & 1));
  }
}

TEST(codegen_ew_int_corner_cases) {
  static const char *types[] = {"s32", "u32", "s8", "u64"};
  for (int t = 0; t < 4; t++) {
    int u = types[t][0] == 'u';
    char *text = module_for(types[t], u ? uint_ops : int_ops, u ? CX_ARRAY_LEN(uint_ops) : CX_ARRAY_LEN(int_ops));
    cgt_opts o = {.fusion_pass = 1, .fill = fill_corners};
    CHECK_MSG(CGT(text, &o) == 0, "type %s", types[t]);
    cx_free(text);
  }
}

/* ---- convert: every pair of types ---- */

static const char *all_types[] = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                                  "f16", "bf16", "f32", "f64"};

static char *convert_module(const char *from) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "HloModule cv\nENTRY e {\n  a = %s[%d] parameter(0)\n", from, LEN);
  int n = CX_ARRAY_LEN(all_types);
  for (int i = 0; i < n; i++) cx_sb_printf(&sb, "  r%d = %s[%d] convert(a)\n", i, all_types[i], LEN);
  cx_sb_puts(&sb, "  ROOT out = (");
  for (int i = 0; i < n; i++) cx_sb_printf(&sb, "%s%s[%d]", i ? ", " : "", all_types[i], LEN);
  cx_sb_puts(&sb, ") tuple(");
  for (int i = 0; i < n; i++) cx_sb_printf(&sb, "%sr%d", i ? ", " : "", i);
  cx_sb_puts(&sb, ")\n}\n");
  return cx_sb_take(&sb);
}

TEST(codegen_ew_convert_all_pairs) {
  for (int f = 0; f < CX_ARRAY_LEN(all_types); f++) {
    char *text = convert_module(all_types[f]);
    for (int s = 1; s <= 3; s++) {
      /* wide float ranges so float->int conversions saturate too */
      cgt_opts o = {.fusion_pass = 1, .seed = (uint64_t)s, .lo = -1e10, .hi = 1e10};
      if (s == 2) o.lo = -300, o.hi = 300;
      CHECK_MSG(CGT(text, &o) == 0, "from %s seed %d", all_types[f], s);
    }
    cx_free(text);
  }
}

TEST(codegen_ew_bitcast_convert) {
  cgt_opts o = {.fusion_pass = 1};
  CHECK_EQ_INT(CGT("HloModule b\nENTRY e {\n a = f32[100] parameter(0)\n h = f16[100] parameter(1)\n"
                   " d = f64[100] parameter(2)\n q = u8[100,4] parameter(3)\n p = s32[100] parameter(4)\n"
                   " w = s16[100,2] parameter(5)\n"
                   " r0 = s32[100] bitcast-convert(a)\n r1 = u32[100] bitcast-convert(a)\n"
                   " r2 = bf16[100] bitcast-convert(h)\n r3 = s16[100] bitcast-convert(h)\n"
                   " r4 = u64[100] bitcast-convert(d)\n r5 = u8[100,4] bitcast-convert(a)\n"
                   " r6 = f32[100] bitcast-convert(q)\n r7 = s8[100,4] bitcast-convert(r5)\n"
                   " r8 = f32[100,2] bitcast-convert(d)\n r9 = s32[100] bitcast-convert(w)\n"
                   " r10 = u8[100,2] bitcast-convert(h)\n"
                   " ROOT out = (s32[100], u32[100], bf16[100], s16[100], u64[100], u8[100,4], f32[100], s8[100,4],"
                   " f32[100,2], s32[100], u8[100,2]) tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10)\n}\n", &o), 0);
  CHECK_EQ_INT(o.nfusions, 11);
}

TEST(codegen_ew_reduce_precision) {
  cgt_opts o = {.fusion_pass = 1, .lo = -1e5, .hi = 1e5};
  CHECK_EQ_INT(CGT("HloModule rp\nENTRY e {\n a = f32[300] parameter(0)\n h = f16[300] parameter(1)\n"
                   " d = f64[300] parameter(2)\n bb = bf16[300] parameter(3)\n"
                   " r0 = f32[300] reduce-precision(a), exponent_bits=8, mantissa_bits=7\n"
                   " r1 = f32[300] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n"
                   " r2 = f32[300] reduce-precision(a), exponent_bits=3, mantissa_bits=1\n"
                   " r3 = f32[300] reduce-precision(a), exponent_bits=5, mantissa_bits=0\n"
                   " r4 = f16[300] reduce-precision(h), exponent_bits=4, mantissa_bits=3\n"
                   " r5 = f64[300] reduce-precision(d), exponent_bits=8, mantissa_bits=23\n"
                   " r6 = bf16[300] reduce-precision(bb), exponent_bits=5, mantissa_bits=2\n"
                   " r7 = f32[300] reduce-precision(a), exponent_bits=8, mantissa_bits=23\n"
                   " ROOT out = (f32[300], f32[300], f32[300], f32[300], f16[300], f64[300], bf16[300], f32[300])"
                   " tuple(r0, r1, r2, r3, r4, r5, r6, r7)\n}\n", &o), 0);
}

/* f16 chains round after every op, like the interpreter; scalar operands of elementwise ops
 * (select's pred, clamp's bounds) broadcast. */
TEST(codegen_ew_chains_and_scalar_operands) {
  cgt_opts o = {.fusion_pass = 2};
  CHECK_EQ_INT(CGT("HloModule c\nENTRY e {\n a = f16[500] parameter(0)\n b = f16[500] parameter(1)\n"
                   " m = f16[500] multiply(a, b)\n s = f16[500] add(m, a)\n d = f16[500] divide(s, b)\n"
                   " ROOT r = f16[500] subtract(d, m)\n}\n", &o), 0);
  CHECK_EQ_INT(o.nfusions, 1);
  o = (cgt_opts){.fusion_pass = 1};
  CHECK_EQ_INT(CGT("HloModule c\nENTRY e {\n a = f32[500] parameter(0)\n lo = f32[] parameter(1)\n"
                   " hi = f32[] parameter(2)\n p = pred[] parameter(3)\n b = f32[500] parameter(4)\n"
                   " c = f32[500] clamp(lo, a, hi)\n s = f32[500] select(p, a, b)\n"
                   " ROOT t = (f32[500], f32[500]) tuple(c, s)\n}\n", &o), 0);
  CHECK_EQ_INT(o.nfusions, 2);
}

/* Every pair of special values (NaN, +-inf, +-0, +-1, a denormal) for the binary float ops
 * where NaN and signed-zero rules matter. */
static void fill_pairs(cxla_literal *lit, int k, void *user) {
  (void)user;
  static const double sp[] = {0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0, -0.0, 1, -1, 0x1p-20, -2.5};
  int64_t n = cx_shape_elems(&lit->shape);
  for (int64_t i = 0; i < n; i++)
    cx_store_f64(lit->shape.type, lit->data, i, k == 0 ? sp[i % 9] : k == 1 ? sp[(i / 9) % 9] : sp[(i / 81) % 9]);
}

static const ewop special_ops[] = {
  {"maximum", 2}, {"minimum", 2}, {"add", 2}, {"subtract", 2}, {"multiply", 2}, {"divide", 2},
  {"remainder", 2}, {"power", 2}, {"atan2", 2}, {"clamp", 3}, {"sign", 1}, CMPS(""), CMPS(", type=TOTALORDER"),
};

TEST(codegen_ew_special_value_pairs) {
  static const char *types[] = {"f16", "bf16", "f32", "f64"};
  for (int t = 0; t < 4; t++) {
    char *text = module_for(types[t], special_ops, CX_ARRAY_LEN(special_ops));
    cgt_opts o = {.fusion_pass = 1, .fill = fill_pairs};
    CHECK_MSG(CGT(text, &o) == 0, "type %s", types[t]);
    cx_free(text);
  }
}
