/* test_grad_elementwise.c — every float elementwise op's gradient against central finite
 * differences (random shapes of rank 0..3), including the tie rules of maximum and minimum
 * and of clamp, and select. */
#include "grad_helpers.h"

/* A random array shape of rank 0..3 with dims 1..4. */
static int rand_dims(gh_case *c, int64_t *dims) {
  int r = (int)gh_int(c, 0, 3);
  gh_dims(c, dims, r, 4);
  return r;
}

/* out = x + op(x) for flat ops (so the gradient is 1, not 0 everywhere), op(x) otherwise */
static void unary(gh_case *c, const char *op, double lo, double hi, int flat) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  c->lo[0] = lo, c->hi[0] = hi;
  gh_add(c, "  y = %s %s(x)\n", s, op);
  if (flat) gh_add(c, "  out = %s add(x, y)\n", s);
  gh_end_loss(c, flat ? "out" : "y", d, r);
}

#define U(name, op, lo, hi, flat) \
  static void name(gh_case *c) { unary(c, op, lo, hi, flat); }
U(u_abs, "abs", -1, 1, 0)
U(u_negate, "negate", -1, 1, 0)
U(u_sign, "sign", -1, 1, 1)
U(u_exp, "exponential", -1, 1, 0)
U(u_expm1, "exponential-minus-one", -1, 1, 0)
U(u_log, "log", 0.2, 2, 0)
U(u_log1p, "log-plus-one", -0.5, 2, 0)
U(u_logistic, "logistic", -2, 2, 0)
U(u_sqrt, "sqrt", 0.2, 2, 0)
U(u_rsqrt, "rsqrt", 0.2, 2, 0)
U(u_cbrt, "cbrt", 0.2, 2, 0)
U(u_cbrt_neg, "cbrt", -2, -0.2, 0)
U(u_sin, "sine", -3, 3, 0)
U(u_cos, "cosine", -3, 3, 0)
U(u_tan, "tan", -1.2, 1.2, 0)
U(u_tanh, "tanh", -2, 2, 0)
U(u_floor, "floor", -3, 3, 1)
U(u_ceil, "ceil", -3, 3, 1)
U(u_round_afz, "round-nearest-afz", -3, 3, 1)
U(u_round_even, "round-nearest-even", -3, 3, 1)
U(u_erf, "erf", -2, 2, 0)
U(u_copy, "copy", -1, 1, 0)

/* rounding to f32 on the way: a wider step, and a tolerance for the rounding it sees */
static void u_reduce_precision(gh_case *c) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  gh_add(c, "  y = %s reduce-precision(x), exponent_bits=8, mantissa_bits=23\n", s);
  c->fd_h = 1e-3, c->fd_tol = 300;
  gh_end_loss(c, "y", d, r);
}

/* f64 -> f32 -> f64, and an integer converted to float (which gets nothing) */
static void u_convert(gh_case *c) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r), *s32 = gh_shape(c, "f32", d, r), *si = gh_shape(c, "s32", d, r);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  gh_param(c, "k", si, 0);
  gh_add(c, "  n = %s convert(x)\n  y = %s convert(n)\n  kf = %s convert(k)\n  out = %s multiply(y, kf)\n", s32, s, s, s);
  c->fd_h = 1e-3, c->fd_tol = 300;
  gh_end_loss(c, "out", d, r);
}

static void binary(gh_case *c, const char *op, double alo, double ahi, double blo, double bhi) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "a", s, 1);
  gh_param(c, "b", s, 1);
  c->lo[0] = alo, c->hi[0] = ahi, c->lo[1] = blo, c->hi[1] = bhi;
  gh_add(c, "  y = %s %s(a, b)\n", s, op);
  gh_end_loss(c, "y", d, r);
}

#define B(name, op, alo, ahi, blo, bhi) \
  static void name(gh_case *c) { binary(c, op, alo, ahi, blo, bhi); }
B(b_add, "add", -1, 1, -1, 1)
B(b_subtract, "subtract", -1, 1, -1, 1)
B(b_multiply, "multiply", -1, 1, -1, 1)
B(b_divide, "divide", -1, 1, 0.5, 2)
B(b_divide_neg, "divide", -1, 1, -2, -0.5)
B(b_remainder, "remainder", -3, 3, 0.7, 1.3)
B(b_power, "power", 0.5, 2, -1.5, 1.5)
B(b_atan2, "atan2", -1, 1, -1, 1)
B(b_maximum, "maximum", -1, 1, -1, 1)
B(b_minimum, "minimum", -1, 1, -1, 1)

/* maximum(x, x) and minimum(x, x): the tie shares g, so together x gets it all */
static void tie(gh_case *c, const char *op) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  gh_add(c, "  y = %s %s(x, x)\n", s, op);
  gh_end_loss(c, "y", d, r);
}
static void b_max_tie(gh_case *c) { tie(c, "maximum"); }
static void b_min_tie(gh_case *c) { tie(c, "minimum"); }

/* select on a comparison of two other parameters */
static void t_select(gh_case *c) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r), *ps = gh_shape(c, "pred", d, r);
  gh_begin(c);
  gh_param(c, "a", s, 1);
  gh_param(c, "b", s, 1);
  gh_param(c, "p", s, 0);
  gh_param(c, "q", s, 0);
  gh_add(c, "  c = %s compare(p, q), direction=LT\n  y = %s select(c, a, b)\n", ps, s);
  gh_end_loss(c, "y", d, r);
}

/* select with a scalar predicate */
static void t_select_scalar(gh_case *c) {
  int64_t d[4];
  int r = rand_dims(c, d);
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "a", s, 1);
  gh_param(c, "b", s, 1);
  gh_param(c, "p", "f64[]", 0);
  gh_add(c, "  z = f64[] constant(0)\n  c = pred[] compare(p, z), direction=GT\n  y = %s select(c, a, b)\n", s);
  gh_end_loss(c, "y", d, r);
}

/* clamp with array bounds and with scalar bounds, x sometimes inside, sometimes out */
static void t_clamp(gh_case *c) {
  int64_t d[4];
  int r = rand_dims(c, d), scalar = (int)gh_int(c, 0, 1);
  const char *s = gh_shape(c, "f64", d, r), *bs = scalar ? "f64[]" : s;
  gh_begin(c);
  gh_param(c, "lo", bs, 1);
  gh_param(c, "x", s, 1);
  gh_param(c, "hi", bs, 1);
  c->lo[0] = -1, c->hi[0] = -0.3, c->lo[1] = -2, c->hi[1] = 2, c->lo[2] = 0.3, c->hi[2] = 1;
  gh_add(c, "  y = %s clamp(lo, x, hi)\n", s);
  gh_end_loss(c, "y", d, r);
}

const gh_entry gh_elementwise_cases[] = {
  {"abs", u_abs}, {"negate", u_negate}, {"sign", u_sign}, {"exponential", u_exp}, {"expm1", u_expm1},
  {"log", u_log}, {"log1p", u_log1p}, {"logistic", u_logistic}, {"sqrt", u_sqrt}, {"rsqrt", u_rsqrt},
  {"cbrt", u_cbrt}, {"cbrt<0", u_cbrt_neg}, {"sine", u_sin}, {"cosine", u_cos}, {"tan", u_tan}, {"tanh", u_tanh},
  {"floor", u_floor}, {"ceil", u_ceil}, {"round-afz", u_round_afz}, {"round-even", u_round_even}, {"erf", u_erf},
  {"copy", u_copy}, {"reduce-precision", u_reduce_precision}, {"convert", u_convert},
  {"add", b_add}, {"subtract", b_subtract}, {"multiply", b_multiply}, {"divide", b_divide},
  {"divide<0", b_divide_neg}, {"remainder", b_remainder}, {"power", b_power}, {"atan2", b_atan2},
  {"maximum", b_maximum}, {"minimum", b_minimum}, {"maximum tie", b_max_tie}, {"minimum tie", b_min_tie},
  {"select", t_select}, {"select scalar", t_select_scalar}, {"clamp", t_clamp},
};
const int gh_elementwise_ncases = GH_LEN(gh_elementwise_cases);

TEST(grad_elementwise) { gh_run_table(gh_elementwise_cases, gh_elementwise_ncases, 3); }
