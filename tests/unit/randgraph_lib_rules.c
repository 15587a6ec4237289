/* randgraph_lib_rules.c — the analysis of the library ops randgraph_lib.c builds (see
 * randgraph.h for what a rule computes).
 *  - topk: the values are order statistics of the operand, so they keep its range and error
 *    (the k-th largest moves no more than the elements do); the indices are exact integers in
 *    [0, n) but need exact operands (a tie or a near-tie may resolve differently), and NaN
 *    anywhere makes both leaves undetermined (its sign orders it under TOTALORDER);
 *  - rng-bit-generator: the state and the bits are exact integers over their type's range;
 *  - cholesky and triangular-solve: only of a matrix recognized as add(Gram, c I) (the
 *    generator's construction), whose eigenvalues the ranges bound: [c - n e, c + n m B^2 +
 *    n e] for |A| <= B over m columns and an error e of M's elements. With kappa their ratio,
 *    the factors of two correctly rounded runs differ by at most (first order, Stewart's
 *    bound) kappa * ||dM||_F / sqrt(lambda_min), dM their backward errors plus M's own; a
 *    solve adds ||L^-1|| times the right-hand side's error and the factor's, and n eps
 *    sqrt(kappa) of its result. Anything else is marked bad. */
#include <math.h>
#include "randgraph_lib_rules.h"
#include "randgraph_rules.h"
#include "ir/types.h"

typedef struct spd {
  double lmin, lmax; /* bounds on the eigenvalues of M as computed */
  double dm;         /* ||dM||_F bound: M's error and the factorization's backward error */
  double n;
} spd;

static const rg_val *leaf(rg_bounds *bd, const cx_instr *in) {
  int n;
  return rg_bounds_get(bd, in, &n);
}

/* Whether x is iota compare iota, EQ, over the two last dims (maybe broadcast over a batch). */
static int is_identity_mask(const cx_instr *x) {
  if (x->op == CX_OP_BROADCAST) x = x->ops[0];
  if (x->op != CX_OP_COMPARE || x->a.dir != CXLA_EQ) return 0;
  const cx_instr *p = x->ops[0], *q = x->ops[1];
  return p->op == CX_OP_IOTA && q->op == CX_OP_IOTA && p->shape.rank == 2 && p->a.index != q->a.index;
}

/* A Gram matrix dot(A, A) over A's last dimension, batch dims {0} on both sides if any. */
static int is_gram(const cx_instr *d) {
  if (d->op != CX_OP_DOT || d->ops[0] != d->ops[1]) return 0;
  const cx_dot_dims *dd = &d->a.dot;
  int r = d->ops[0]->shape.rank;
  if (dd->lhs_contract.n != 1 || dd->rhs_contract.n != 1 || dd->lhs_contract.v[0] != r - 1 || dd->rhs_contract.v[0] != r - 1)
    return 0;
  if (dd->lhs_batch.n != r - 2 || dd->rhs_batch.n != r - 2) return 0;
  return r == 2 || (dd->lhs_batch.v[0] == 0 && dd->rhs_batch.v[0] == 0);
}

/* The eigenvalue bounds of M = add(Gram, c I), or 0 when M is not of that form (or not
 * clearly positive definite). */
static int spd_of(rg_bounds *bd, const cx_instr *m, spd *out) {
  if (m->op != CX_OP_ADD || m->shape.rank < 2 || m->shape.rank > 3) return 0;
  const cx_instr *gram = m->ops[0], *id = m->ops[1];
  if (!is_gram(gram)) gram = m->ops[1], id = m->ops[0];
  if (!is_gram(gram) || id->op != CX_OP_SELECT || !is_identity_mask(id->ops[0])) return 0;
  const rg_val *a = leaf(bd, gram->ops[0]), *c = leaf(bd, id->ops[1]), *z = leaf(bd, id->ops[2]), *mv = leaf(bd, m);
  if (!a || !c || !z || !mv || mv->bad || mv->special || a->special) return 0;
  if (c->lo != c->hi || rg_inexact(*c) || c->lo <= 0 || z->lo != 0 || z->hi != 0 || rg_inexact(*z)) return 0;
  const cx_shape *as = &gram->ops[0]->shape;
  double n = (double)m->shape.dims[m->shape.rank - 1], cols = (double)as->dims[as->rank - 1], B = rg_vmag(*a);
  double e = rg_abs_err(*mv), eps = rg_eps(m->shape.type);
  out->lmin = c->lo - n * e;
  out->lmax = c->lo + n * cols * B * B + n * e;
  out->dm = n * (e + (n + 2) * eps * out->lmax);
  out->n = n;
  return out->lmin > 0.5 * c->lo;
}

/* The error bound of the factor of M (first order, doubled for the second). */
static double factor_err(const spd *s) { return 2 * (s->lmax / s->lmin) * s->dm / sqrt(s->lmin); }

static void cholesky_rule(rg_bounds *bd, const cx_instr *in, rg_val *r) {
  spd s;
  if (!spd_of(bd, in->ops[0], &s)) {
    rg_mark_bad(bd, r, in, "not a matrix known to be positive definite");
    return;
  }
  r->lo = -sqrt(s.lmax), r->hi = sqrt(s.lmax);
  r->err = factor_err(&s), r->rel = 0, r->special = 0;
  *r = rg_finish(bd, in, *r, in->shape.type);
}

static void solve_rule(rg_bounds *bd, const cx_instr *in, rg_val *r) {
  const cx_instr *l = in->ops[0];
  const rg_val *b = leaf(bd, in->ops[1]);
  spd s;
  if (l->op != CX_OP_CHOLESKY || l->a.lower != in->a.lower || in->a.unit_diagonal || !b || b->special ||
      !spd_of(bd, l->ops[0], &s)) {
    rg_mark_bad(bd, r, in, "not a solve with the factor of a matrix known to be positive definite");
    return;
  }
  double inv = 1 / sqrt(s.lmin); /* ||L^-1||_2 */
  double xmag = sqrt(s.n) * rg_vmag(*b) * inv, kappa = s.lmax / s.lmin;
  r->lo = -xmag, r->hi = xmag;
  r->err = (sqrt(s.n) * rg_abs_err(*b) + s.n * factor_err(&s) * xmag) * inv +
           4 * s.n * rg_eps(in->shape.type) * sqrt(kappa) * xmag;
  r->rel = 0, r->special = 0, r->bad = b->bad;
  *r = rg_finish(bd, in, *r, in->shape.type);
}

int rg_library_rule(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  const rg_val *a = in->nops ? leaf(bd, in->ops[0]) : NULL;
  if (!a) return 0;
  switch (in->op) {
  case CX_OP_TOPK: {
    if (nout != 2) return 0;
    out[0] = *a;
    out[1] = (rg_val){0, (double)(in->ops[0]->shape.dims[in->ops[0]->shape.rank - 1] - 1), 0, 0, a->bad};
    if (a->special) rg_mark_bad(bd, &out[0], in, "NaN among the values (ordered by its sign)");
    if (a->special || rg_inexact(*a)) rg_mark_bad(bd, &out[1], in, "indices of inexact or NaN values");
    return 1;
  }
  case CX_OP_RNG_BIT_GENERATOR:
    if (nout != 2) return 0;
    for (int i = 0; i < 2; i++) {
      out[i] = (rg_val){0, 0, 0, 0, a->bad};
      rg_type_range(in->shape.tuple[i].type, &out[i].lo, &out[i].hi);
    }
    return 1;
  case CX_OP_CHOLESKY:
    out[0] = *a;
    cholesky_rule(bd, in, &out[0]);
    return 1;
  case CX_OP_TRIANGULAR_SOLVE:
    out[0] = *a;
    solve_rule(bd, in, &out[0]);
    return 1;
  default:
    return 0;
  }
}
