/* rules_elementwise.c — gradients of the float elementwise ops. g is the result's cotangent,
 * x, a, b the operands' forward values and y the result's (reused where the derivative is
 * written in terms of the result, as for exp and tanh). Ties of maximum and minimum split
 * the gradient equally between the operands that equal the result (jax's rule). */
#include <math.h>
#include "grad/grad_int.h"

#define E (&s->e)

static cxla_status to_x(gr_state *s, cx_instr *in, cx_instr *d) {
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], d);
  return s->e.st;
}

/* g * f'(x), with f'(x) computed only when x needs it */
#define UNARY(name, expr)                                                   \
  cxla_status gr_rule_##name(gr_state *s, cx_instr *in, const gr_ct *ct) { \
    if (!gr_wants(s, in, 0)) return CXLA_OK;                                \
    cx_instr *g = ct->v, *x = gr_x(s, in, 0), *y = gr_y(s, in);             \
    (void)x, (void)y;                                                       \
    return to_x(s, in, (expr));                                             \
  }

static cx_instr *mul(gr_state *s, cx_instr *a, cx_instr *b) { return gr_bin(E, CX_OP_MULTIPLY, a, b); }
static cx_instr *k(gr_state *s, cx_instr *like, double v) { return gr_like(E, like, v); }

UNARY(abs, mul(s, g, gr_un(E, CX_OP_SIGN, x)))
UNARY(negate, gr_un(E, CX_OP_NEGATE, g))
UNARY(exp, mul(s, g, y))
UNARY(expm1, mul(s, g, gr_bin(E, CX_OP_ADD, y, k(s, y, 1))))
UNARY(log, gr_bin(E, CX_OP_DIVIDE, g, x))
UNARY(log1p, gr_bin(E, CX_OP_DIVIDE, g, gr_bin(E, CX_OP_ADD, x, k(s, x, 1))))
UNARY(logistic, mul(s, g, mul(s, y, gr_bin(E, CX_OP_SUBTRACT, k(s, y, 1), y))))
UNARY(sqrt, gr_bin(E, CX_OP_DIVIDE, g, mul(s, y, k(s, y, 2))))
/* d rsqrt(x) = -rsqrt(x) / (2x) */
UNARY(rsqrt, mul(s, g, mul(s, gr_bin(E, CX_OP_DIVIDE, y, x), k(s, x, -0.5))))
/* d cbrt(x) = 1 / (3 cbrt(x)^2) */
UNARY(cbrt, gr_bin(E, CX_OP_DIVIDE, g, mul(s, mul(s, y, y), k(s, y, 3))))
UNARY(sin, mul(s, g, gr_un(E, CX_OP_COS, x)))
UNARY(cos, gr_un(E, CX_OP_NEGATE, mul(s, g, gr_un(E, CX_OP_SIN, x))))
UNARY(tan, mul(s, g, gr_bin(E, CX_OP_ADD, k(s, y, 1), mul(s, y, y))))
UNARY(tanh, mul(s, g, gr_bin(E, CX_OP_SUBTRACT, k(s, y, 1), mul(s, y, y))))
UNARY(erf, mul(s, g, mul(s, k(s, x, 2 / sqrt(M_PI)), gr_un(E, CX_OP_EXP, gr_un(E, CX_OP_NEGATE, mul(s, x, x))))))
UNARY(copy, g)
/* rounding the cotangent the same way keeps the pair linear, as jax does */
UNARY(reduce_precision, gr_reduce_precision(E, g, in->a.exponent_bits, in->a.mantissa_bits))
/* a float operand gets the cotangent back in its own type; integers get nothing */
UNARY(convert, cx_type_is_float(in->ops[0]->shape.type) ? gr_convert(E, g, in->ops[0]->shape.type) : NULL)

/* sign, floor, ceil, round-*: piecewise constant */
cxla_status gr_rule_flat(gr_state *s, cx_instr *in, const gr_ct *ct) {
  (void)in, (void)ct;
  return s->e.st;
}

/* ---- binary ---- */

static cxla_status to_ab(gr_state *s, cx_instr *in, cx_instr *da, cx_instr *db) {
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], da);
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], db);
  return s->e.st;
}

/* da and db are only built for the operands that need them */
#define BINARY(name, da, db)                                                \
  cxla_status gr_rule_##name(gr_state *s, cx_instr *in, const gr_ct *ct) { \
    cx_instr *g = ct->v, *a = gr_x(s, in, 0), *b = gr_x(s, in, 1), *y = gr_y(s, in); \
    (void)a, (void)b, (void)y;                                              \
    cx_instr *ga = gr_wants(s, in, 0) ? (da) : NULL;                        \
    cx_instr *gb = gr_wants(s, in, 1) ? (db) : NULL;                        \
    return to_ab(s, in, ga, gb);                                            \
  }

BINARY(add, g, g)
BINARY(subtract, g, gr_un(E, CX_OP_NEGATE, g))
BINARY(multiply, mul(s, g, b), mul(s, g, a))
/* d(a/b)/db = -(a/b)/b */
BINARY(divide, gr_bin(E, CX_OP_DIVIDE, g, b),
       gr_un(E, CX_OP_NEGATE, mul(s, gr_bin(E, CX_OP_DIVIDE, g, b), y)))
/* rem(a, b) = a - b * trunc(a/b) */
static cx_instr *trunc_div(gr_state *s, cx_instr *a, cx_instr *b) {
  cx_instr *q = gr_bin(E, CX_OP_DIVIDE, a, b);
  return mul(s, gr_un(E, CX_OP_SIGN, q), gr_un(E, CX_OP_FLOOR, gr_un(E, CX_OP_ABS, q)));
}
BINARY(remainder, g, gr_un(E, CX_OP_NEGATE, mul(s, g, trunc_div(s, a, b))))
/* d(a^b)/da = b a^(b-1), taken as 0 where b == 0 (so 0^0 does not give 0 * inf);
 * d(a^b)/db = log(a) a^b, with log(1) where a == 0 (the limit for b > 0) */
static cx_instr *pow_da(gr_state *s, cx_instr *g, cx_instr *a, cx_instr *b) {
  cx_instr *d = mul(s, b, gr_bin(E, CX_OP_POWER, a, gr_bin(E, CX_OP_SUBTRACT, b, k(s, b, 1))));
  return mul(s, g, gr_select(E, gr_cmp(E, b, k(s, b, 0), CXLA_EQ), k(s, b, 0), d));
}
static cx_instr *pow_db(gr_state *s, cx_instr *g, cx_instr *a, cx_instr *y) {
  cx_instr *safe = gr_select(E, gr_cmp(E, a, k(s, a, 0), CXLA_EQ), k(s, a, 1), a);
  return mul(s, g, mul(s, gr_un(E, CX_OP_LOG, safe), y));
}
BINARY(power, pow_da(s, g, a, b), pow_db(s, g, a, y))
/* atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2) */
static cx_instr *atan2_over(gr_state *s, cx_instr *g, cx_instr *a, cx_instr *b) {
  return gr_bin(E, CX_OP_DIVIDE, g, gr_bin(E, CX_OP_ADD, mul(s, a, a), mul(s, b, b)));
}
BINARY(atan2, mul(s, atan2_over(s, g, a, b), b), gr_un(E, CX_OP_NEGATE, mul(s, atan2_over(s, g, a, b), a)))

/* maximum/minimum: the operand equal to the result takes g; both equal: g/2 each */
static cx_instr *minmax_share(gr_state *s, cx_instr *g, cx_instr *mine, cx_instr *other, cx_instr *y) {
  cx_instr *eq = gr_cmp(E, mine, y, CXLA_EQ), *tie = gr_cmp(E, other, y, CXLA_EQ);
  cx_instr *half = mul(s, g, k(s, g, 0.5));
  return gr_select(E, eq, gr_select(E, tie, half, g), k(s, g, 0));
}
BINARY(minmax, minmax_share(s, g, a, b, y), minmax_share(s, g, b, a, y))

/* ---- ternary ---- */

/* select(p, t, f): t takes g where p holds, f where it does not (p has none) */
cxla_status gr_rule_select(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (ct->v == NULL) return CXLA_OK;
  if (in->shape.type == CXLA_TUPLE) return gr_refuse(s, in, "selecting between tuples has no gradient rule");
  cx_instr *g = ct->v, *p = gr_x(s, in, 0), *zero = gr_wants(s, in, 1) || gr_wants(s, in, 2) ? k(s, g, 0) : NULL;
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], gr_select(E, p, g, zero));
  if (gr_wants(s, in, 2)) gr_acc(s, in->ops[2], gr_select(E, p, zero, g));
  return s->e.st;
}

/* clamp(lo, x, hi) = min(max(x, lo), hi) with ties going to x: x takes g where lo <= x <= hi,
 * lo where x < lo (and lo <= hi), hi where max(x, lo) > hi. A scalar bound sums its share. */
cxla_status gr_rule_clamp(gr_state *s, cx_instr *in, const gr_ct *ct) {
  cx_instr *g = ct->v, *x = gr_x(s, in, 1), *zero = k(s, g, 0);
  cx_instr *lo = gr_x(s, in, 0), *hi = gr_x(s, in, 2);
  const cx_shape *xs = &x->shape;
  if (lo->shape.rank != xs->rank) lo = gr_bcast(E, lo, xs->rank, xs->dims, NULL);
  if (hi->shape.rank != xs->rank) hi = gr_bcast(E, hi, xs->rank, xs->dims, NULL);
  cx_instr *m = gr_bin(E, CX_OP_MAXIMUM, x, lo);
  cx_instr *below_hi = gr_cmp(E, m, hi, CXLA_LE), *above_lo = gr_cmp(E, x, lo, CXLA_GE);
  cx_instr *gm = gr_select(E, below_hi, g, zero);
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], gr_select(E, above_lo, gm, zero));
  for (int i = 0; i < 3; i += 2) {
    if (!gr_wants(s, in, i)) continue;
    cx_instr *d = i == 0 ? gr_select(E, above_lo, zero, gm) : gr_select(E, below_hi, zero, g);
    gr_acc(s, in->ops[i], in->ops[i]->shape.rank == xs->rank ? d : gr_sum_all(E, d));
  }
  return s->e.st;
}
