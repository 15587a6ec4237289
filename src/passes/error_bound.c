/* error_bound.c — a running error analysis of ENTRY, evaluated by the interpreter itself.
 *
 * Two correct backends disagree where docs/numerics.md lets them: a compiled dot or sum
 * accumulates in f32 in a blocked order, the interpreter in double; `|c' - c| <= u|c| +
 * gamma_K * sum_k |a_k b_k|`. A fixed relative tolerance cannot express that: an element that
 * cancels to near zero has a tiny |c| but the same absolute error as its neighbours. So next to
 * every float value x the analysis computes, elementwise and in f64,
 *   A(x) >= the sum of the magnitudes of the terms that make x (A >= |x|), and
 *   E(x) >= |x_backend - x_interp|, the difference that roundings may cause,
 * by instructions added to a copy of the module, which the interpreter then runs on the same
 * inputs:
 *   leaves (parameters, constants, iota): A = |x|, E = 0;
 *   a + b, a - b: A = Aa + Ab, E = Ea + Eb + 2u A; a * b: A = Aa Ab, E = Ea Ab + Aa Eb + Ea Eb + 2u A;
 *   dot and convolution of depth K: A = dot(Aa, Ab), E = dot(Ea, Ab) + dot(Aa, Eb) +
 *     dot(Ea, Eb) + (gamma_K(u_acc) + 2u) A; a sum of n terms: A = sum(A), E = sum(E) +
 *     (L gamma_min(n,32768)(u_acc) + 2u) A with L chains, the worst cases of the policy (u_acc =
 *     2^-24 for 16- and 32-bit floats, which accumulate in f32; 2^-53 for f64);
 *   max, min, clamp, a max or min reduce: the max of the operands' A and E; negate, abs and
 *     moving data (reshape, transpose, slice, pad, gather, ...) move A and E the same way;
 *   a float convert adds one rounding of its result type.
 * Fusions and calls are inlined first, so their insides are followed too, and scaled-dot and
 * batch-norm become the dots and sums they stand for.
 * Anything else starts afresh: A = |x|, E = 0, i.e. no allowance, so the check is never
 * looser than its fixed tolerance there (a transcendental of an inexact value, a loop, a
 * call). Selections need their choice to be the same on both backends: select, gather and
 * dynamic slices bound only when their predicate or indices come from exact values (integer
 * arithmetic on exact inputs); otherwise they start afresh too. */
#include <math.h>
#include <string.h>
#include "ir/clone.h"
#include "ir/edit.h"
#include "passes/error_bound.h"
#include "ir/literal.h"
#include "passes/pass.h"

typedef struct eb {
  cx_module *m;
  cx_comp *c;
  cx_loc loc;
  cx_comp *red[3]; /* f64 add, max, min reducers, made on first use */
  cx_instr **A, **E;
  cx_instr **F;     /* compares of floats: where the two backends may decide differently */
  uint8_t *inexact; /* the value may differ between backends */
} eb;

enum { RED_ADD, RED_MAX, RED_MIN };

static int bounded(cxla_type t) { return t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64; }

/* Unit roundoff of a type, and of the type its sums and dots accumulate in. */
static double unit(cxla_type t) {
  switch (t) {
  case CXLA_F16: return ldexp(1, -11);
  case CXLA_BF16: return ldexp(1, -8);
  case CXLA_F64: return ldexp(1, -53);
  default: return ldexp(1, -24);
  }
}
static double unit_acc(cxla_type t) { return t == CXLA_F64 ? ldexp(1, -53) : ldexp(1, -24); }

/* A transcendental function may be off by APPROX_ULPS units in the last place of the type it
 * computes in (f32 for 16- and 32-bit floats) on each backend (docs/numerics.md: LLVM's and
 * libm's approximations differ), then rounds to its type: the relative allowance. */
#define APPROX_ULPS 16
static double approx(const cx_instr *x) {
  return 2 * APPROX_ULPS * unit_acc(x->shape.type) * 2 + 2 * unit(x->shape.type);
}
/* gamma_n = n u / (1 - n u) bounds the relative error of n additions. Two values that each
 * lie within A differ by at most 2A, so a factor never needs to exceed 2. */
static double gamma_n(double n, double u) { return n * u < 0.5 ? fmin(n * u / (1 - n * u), 2) : 2; }
/* A compiled f32 sum goes through chains of at most 32768 terms (passes/reduce_accumulate.c):
 * each term passes L = ceil(log_32768 n) of them. */
static double gamma_sum(double n, double u) {
  if (u < ldexp(1, -30)) return gamma_n(n, u);
  double L = 1, m = n;
  for (; m > 32768; m = ceil(m / 32768)) L++;
  return fmin(L * gamma_n(fmin(n, 32768), u), 2);
}

static int index_of(const cx_instr *x) { return (int)(intptr_t)x->aux - 1; }

static cx_shape f64_like(const cx_instr *x) {
  cx_shape s = x->shape;
  s.type = CXLA_F64;
  return s;
}

static cx_instr *add(eb *b, cx_op op, const cx_shape *s, int nops, cx_instr *const *ops) {
  return cx_instr_add(b->c, op, s, nops, ops, b->loc);
}

static cx_instr *scalar(eb *b, double v) {
  cx_shape s = cx_shape_scalar(CXLA_F64);
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit) return cx_oom(b->m->ctx), NULL;
  memcpy(lit->data, &v, sizeof v);
  if (!cx_module_own_literal(b->m, lit)) return NULL;
  cx_instr *k = add(b, CX_OP_CONSTANT, &s, 0, NULL);
  if (k) k->a.literal = lit;
  return k;
}

/* A scalar broadcast to the dimensions (and layout) of x's f64 companion. */
static cx_instr *splat(eb *b, const cx_instr *x, double v) {
  cx_instr *k = scalar(b, v);
  cx_shape s = f64_like(x);
  return k ? add(b, CX_OP_BROADCAST, &s, 1, &k) : NULL;
}

static cx_instr *binary(eb *b, cx_op op, cx_instr *p, cx_instr *q) {
  if (!p || !q) return NULL;
  cx_instr *ops[2] = {p, q};
  return add(b, op, &p->shape, 2, ops);
}

/* p + k * q: an error plus k times a magnitude. */
static cx_instr *plus_scaled(eb *b, cx_instr *p, double k, cx_instr *q) {
  if (!p || !q) return NULL;
  return binary(b, CX_OP_ADD, p, binary(b, CX_OP_MULTIPLY, q, splat(b, q, k)));
}

static cx_instr *unary(eb *b, cx_op op, cx_instr *p) { return p ? add(b, op, &p->shape, 1, &p) : NULL; }

/* x's value in f64. */
static cx_instr *value(eb *b, cx_instr *x) {
  cx_shape s = f64_like(x);
  return x->shape.type == CXLA_F64 ? x : add(b, CX_OP_CONVERT, &s, 1, &x);
}

static cx_instr *compare(eb *b, cx_instr *p, cx_instr *q, cxla_compare_dir dir) {
  if (!p || !q) return NULL;
  cx_shape s = p->shape;
  s.type = CXLA_PRED;
  cx_instr *ops[2] = {p, q};
  cx_instr *c = add(b, CX_OP_COMPARE, &s, 2, ops);
  if (c) c->a.dir = dir;
  return c;
}

static cx_instr *choose(eb *b, cx_instr *p, cx_instr *t, cx_instr *f) {
  if (!p || !t || !f) return NULL;
  cx_instr *ops[3] = {p, t, f};
  return add(b, CX_OP_SELECT, &t->shape, 3, ops);
}

/* |x| in f64 for numbers; 0 for what has no magnitude here (pred, complex, tokens). */
static cx_instr *magnitude(eb *b, cx_instr *x) {
  cxla_type t = x->shape.type;
  if (t == CXLA_TOKEN || x->shape.layout_extra) return NULL;
  cx_shape s = f64_like(x);
  if (!(cx_type_is_float(t) || cx_type_kind(t) == CX_KIND_SINT || cx_type_kind(t) == CX_KIND_UINT))
    return splat(b, x, 0);
  cx_instr *v = t == CXLA_F64 ? x : add(b, CX_OP_CONVERT, &s, 1, &x);
  return v ? add(b, CX_OP_ABS, &s, 1, &v) : NULL;
}

/* Companions of a value the analysis cannot follow: A = |x|, E = 0, leaf by leaf. */
static int fresh(eb *b, cx_instr *x, cx_instr **A, cx_instr **E) {
  if (x->shape.type != CXLA_TUPLE) {
    if (x->shape.type == CXLA_TOKEN || x->shape.layout_extra) {
      cx_instr *z = scalar(b, 0);
      *A = *E = z;
      return z != NULL;
    }
    *A = magnitude(b, x);
    *E = splat(b, x, 0);
    return *A && *E;
  }
  int n = x->shape.ntuple;
  cx_instr *stack[16] = {0}, **a = n <= 8 ? stack : cx_calloc((size_t)(2 * n), sizeof *a);
  if (!a) return cx_oom(b->m->ctx), 0;
  cx_instr **e = a + n;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    cx_instr *g = add(b, CX_OP_GET_TUPLE_ELEMENT, &x->shape.tuple[i], 1, &x);
    if (g) g->a.index = i;
    ok = g && fresh(b, g, &a[i], &e[i]);
  }
  cx_shape ta = {.type = CXLA_TUPLE}, te = {.type = CXLA_TUPLE};
  cx_shape sa[8] = {{0}}, *la = n <= 8 ? sa : NULL;
  if (ok && n > 8 && !(la = cx_calloc((size_t)n, sizeof *la))) ok = (cx_oom(b->m->ctx), 0);
  if (ok) {
    for (int i = 0; i < n; i++) la[i] = a[i]->shape;
    ta.ntuple = n, ta.tuple = la;
    ok = (*A = add(b, CX_OP_TUPLE, &ta, n, a)) != NULL;
    for (int i = 0; i < n && ok; i++) la[i] = e[i]->shape;
    te.ntuple = n, te.tuple = la;
    ok = ok && (*E = add(b, CX_OP_TUPLE, &te, n, e)) != NULL;
  }
  if (la != sa) cx_free(la);
  if (a != stack) cx_free(a);
  return ok;
}

/* An f64 reducer computation of kind k, shared by every reduce added here. */
static cx_comp *reducer(eb *b, int k) {
  if (b->red[k]) return b->red[k];
  static const char *const names[] = {"bound_sum", "bound_max", "bound_min"};
  static const cx_op ops[] = {CX_OP_ADD, CX_OP_MAXIMUM, CX_OP_MINIMUM};
  return b->red[k] = cx_module_add_binary(b->m, names[k], ops[k], CXLA_F64);
}

/* Which of add/max/min a reduce's computation is, or -1. */
static int reducer_kind(const cx_instr *r) {
  const cx_instr *x = cx_comp_binary_of_params(r->ncalled == 1 ? r->called[0] : NULL);
  if (!x) return -1;
  return x->op == CX_OP_ADD ? RED_ADD : x->op == CX_OP_MAXIMUM ? RED_MAX : x->op == CX_OP_MINIMUM ? RED_MIN : -1;
}

/* x's op on other operands, in f64: data movement, dots and reduces keep their attributes. */
static cx_instr *redo(eb *b, const cx_instr *x, cx_instr *const *ops) {
  cx_instr *y = cx_instr_clone(b->c, x, ops);
  if (!y) return NULL;
  y->shape.type = CXLA_F64;
  y->a.nraw = 0; /* metadata, and a dot's precision or algorithm: the bound is in f64 */
  y->a.raw = NULL;
  y->loc = b->loc;
  return (y->name = cx_module_unique_name(b->m, cx_op_name(x->op))) ? y : NULL;
}

/* x's op with operand i replaced by its companion in comp[] (others kept). */
static cx_instr *redo_on(eb *b, const cx_instr *x, cx_instr **comp, const uint8_t *use) {
  cx_instr *stack[8] = {0}, **ops = x->nops <= 8 ? stack : cx_calloc((size_t)x->nops, sizeof *ops);
  if (!ops) return cx_oom(b->m->ctx), NULL;
  for (int i = 0; i < x->nops; i++) ops[i] = use[i] ? comp[index_of(x->ops[i])] : x->ops[i];
  cx_instr *y = redo(b, x, ops);
  if (ops != stack) cx_free(ops);
  return y;
}

/* dot(p, q) or convolution(p, q) with x's attributes. */
static cx_instr *redo2(eb *b, const cx_instr *x, cx_instr *p, cx_instr *q) {
  cx_instr *ops[2] = {p, q};
  return p && q ? redo(b, x, ops) : NULL;
}

static int64_t dot_depth(const cx_instr *x) {
  if (x->op == CX_OP_DOT) {
    int64_t k = 1;
    for (int i = 0; i < x->a.dot.lhs_contract.n; i++) k *= x->ops[0]->shape.dims[x->a.dot.lhs_contract.v[i]];
    return k;
  }
  const cx_shape *w = &x->ops[1]->shape;
  int64_t out = x->a.conv ? w->dims[x->a.conv->k_out] : 1;
  return out > 0 ? cx_shape_elems(w) / out : 0;
}

/* Each operand's place: 1 where its companion is used, 0 where the instruction reads the
 * operand itself (indices, predicates), which then has to be exact. Returns 0 when an operand
 * in a companion place is not a float of a bounded type or a read one is inexact. */
static int data_places(eb *b, const cx_instr *x, uint8_t *use) {
  for (int i = 0; i < x->nops; i++) {
    int data = 1;
    switch (x->op) {
    case CX_OP_SELECT: data = i > 0; break;
    case CX_OP_DYNAMIC_SLICE: data = i == 0; break;
    case CX_OP_DYNAMIC_UPDATE_SLICE: data = i < 2; break;
    case CX_OP_GATHER: data = i == 0; break;
    default: break;
    }
    use[i] = (uint8_t)data;
    /* a companion that is a placeholder (tiled layouts, tokens) has another rank */
    if (data && (!bounded(x->ops[i]->shape.type) || b->A[index_of(x->ops[i])]->shape.rank != x->ops[i]->shape.rank))
      return 0;
    if (!data && b->inexact[index_of(x->ops[i])]) return 0;
  }
  return 1;
}

/* An op that only moves values (the op table's shape class; iota makes new ones). */
static int moves_data(cx_op op) { return cx_op_class_of(op) == CX_CLASS_SHAPE && op != CX_OP_IOTA; }

/* The companions of array x of a bounded float type; 0 to start afresh. */
static int follow(eb *b, cx_instr *x, cx_instr **A, cx_instr **E) {
  uint8_t stack_use[8], *use = x->nops <= 8 ? stack_use : NULL;
  if (!use || x->shape.layout_extra || !data_places(b, x, use)) return 0;
  double u = unit(x->shape.type);
  cx_instr **a = b->A, **e = b->E;
  if (moves_data(x->op)) { /* the op table's shape ops: A and E move as the values do */
    *A = redo_on(b, x, a, use);
    *E = redo_on(b, x, e, use);
    return 1;
  }
#define OPA(i) a[index_of(x->ops[i])]
#define OPE(i) e[index_of(x->ops[i])]
  switch (x->op) {
  case CX_OP_ADD:
  case CX_OP_SUBTRACT:
    *A = binary(b, CX_OP_ADD, OPA(0), OPA(1));
    *E = plus_scaled(b, binary(b, CX_OP_ADD, OPE(0), OPE(1)), 2 * u, *A);
    return 1;
  case CX_OP_MULTIPLY: {
    *A = binary(b, CX_OP_MULTIPLY, OPA(0), OPA(1));
    cx_instr *t = binary(b, CX_OP_ADD, binary(b, CX_OP_MULTIPLY, OPE(0), OPA(1)),
                         binary(b, CX_OP_MULTIPLY, OPA(0), OPE(1)));
    *E = plus_scaled(b, binary(b, CX_OP_ADD, t, binary(b, CX_OP_MULTIPLY, OPE(0), OPE(1))), 2 * u, *A);
    return 1;
  }
  case CX_OP_NEGATE:
  case CX_OP_ABS:
    *A = OPA(0), *E = OPE(0);
    return 1;
  /* Functions of an inexact value: its error through the function's slope over the interval
   * [x - E, x + E], plus the function's own error on each backend (APPROX_ULPS). */
  case CX_OP_TANH: case CX_OP_SIN: case CX_OP_COS: case CX_OP_ERF: case CX_OP_LOGISTIC: {
    double slope = x->op == CX_OP_ERF ? 1.1284 : x->op == CX_OP_LOGISTIC ? 0.25 : 1;
    *A = magnitude(b, x);
    *E = plus_scaled(b, binary(b, CX_OP_MULTIPLY, OPE(0), splat(b, x, slope)), approx(x), *A);
    return 1;
  }
  case CX_OP_EXP: {
    /* exp(y + e) - exp(y), in f64 from the operand y: not |exp(x)| expm1(e) with exp(x) the
     * rounded result, which is 0 below -103.9 (f32) although y + e may reach values whose
     * exp is representable (that product was 0, or 0 * inf = NaN once e passed 709) */
    cx_instr *y = value(b, x->ops[0]);
    *A = magnitude(b, x);
    cx_instr *d = binary(b, CX_OP_SUBTRACT, unary(b, CX_OP_EXP, binary(b, CX_OP_ADD, y, OPE(0))), unary(b, CX_OP_EXP, y));
    *E = plus_scaled(b, d, approx(x), *A);
    return 1;
  }
  case CX_OP_LOG:
  case CX_OP_SQRT:
  case CX_OP_RSQRT: {
    /* steepest at the low end, x - e, which has to be above 0 (else no allowance) */
    cx_instr *y = value(b, x->ops[0]), *e0 = OPE(0), *low = binary(b, CX_OP_SUBTRACT, y, e0), *d;
    if (x->op == CX_OP_LOG) /* log(y) - log(y - e) = -log1p(-e / y) */
      d = unary(b, CX_OP_NEGATE, unary(b, CX_OP_LOG1P, unary(b, CX_OP_NEGATE, binary(b, CX_OP_DIVIDE, e0, y))));
    else if (x->op == CX_OP_SQRT) /* sqrt(y) - sqrt(y - e) <= e / sqrt(y - e) */
      d = binary(b, CX_OP_DIVIDE, e0, unary(b, CX_OP_SQRT, low));
    else
      d = binary(b, CX_OP_SUBTRACT, unary(b, CX_OP_RSQRT, low), unary(b, CX_OP_RSQRT, y));
    *A = magnitude(b, x);
    *E = plus_scaled(b, choose(b, compare(b, low, splat(b, x, 0), CXLA_GT), d, splat(b, x, 0)), approx(x), *A);
    return 1;
  }
  case CX_OP_DIVIDE: {
    /* |a'/b' - a/b| <= (Ea + |a/b| Eb) / (|b| - Eb) while |b| > Eb (else no allowance) */
    cx_instr *bb = unary(b, CX_OP_ABS, value(b, x->ops[1])), *room = binary(b, CX_OP_SUBTRACT, bb, OPE(1));
    *A = magnitude(b, x);
    cx_instr *d = binary(b, CX_OP_DIVIDE, binary(b, CX_OP_ADD, OPE(0), binary(b, CX_OP_MULTIPLY, *A, OPE(1))), room);
    *E = plus_scaled(b, choose(b, compare(b, room, splat(b, x, 0), CXLA_GT), d, splat(b, x, 0)), 2 * u, *A);
    return 1;
  }
  case CX_OP_MAXIMUM:
  case CX_OP_MINIMUM:
    *A = binary(b, CX_OP_MAXIMUM, OPA(0), OPA(1));
    *E = binary(b, CX_OP_MAXIMUM, OPE(0), OPE(1));
    return 1;
  case CX_OP_CLAMP:
    if (x->ops[0]->shape.rank != x->shape.rank || x->ops[2]->shape.rank != x->shape.rank) return 0;
    *A = binary(b, CX_OP_MAXIMUM, binary(b, CX_OP_MAXIMUM, OPA(0), OPA(1)), OPA(2));
    *E = binary(b, CX_OP_MAXIMUM, binary(b, CX_OP_MAXIMUM, OPE(0), OPE(1)), OPE(2));
    return 1;
  case CX_OP_CONVERT:
    *A = OPA(0);
    *E = plus_scaled(b, OPE(0), 2 * u, *A);
    return 1;
  case CX_OP_COPY:
  case CX_OP_SELECT:
    *A = redo_on(b, x, a, use);
    *E = redo_on(b, x, e, use);
    return 1;
  case CX_OP_DOT:
  case CX_OP_CONVOLUTION: {
    if (x->nops != 2) return 0;
    *A = redo2(b, x, OPA(0), OPA(1));
    cx_instr *t = binary(b, CX_OP_ADD, redo2(b, x, OPE(0), OPA(1)), redo2(b, x, OPA(0), OPE(1)));
    t = binary(b, CX_OP_ADD, t, redo2(b, x, OPE(0), OPE(1)));
    *E = plus_scaled(b, t, gamma_n((double)dot_depth(x), unit_acc(x->shape.type)) + 2 * u, *A);
    return 1;
  }
  case CX_OP_REDUCE: {
    int k = reducer_kind(x);
    cx_comp *f = k >= 0 && x->nops == 2 ? reducer(b, k) : NULL;
    if (!f) return 0;
    cx_instr *pa[2] = {OPA(0), OPA(1)}, *pe[2] = {OPE(0), OPE(1)};
    *A = redo(b, x, pa);
    *E = redo(b, x, pe);
    if (!*A || !*E) return 1;
    (*A)->called[0] = (*E)->called[0] = f;
    if (k == RED_ADD) {
      double n = 1;
      for (int i = 0; i < x->a.dims.n; i++) n *= (double)x->ops[0]->shape.dims[x->a.dims.v[i]];
      *E = plus_scaled(b, *E, gamma_sum(n, unit_acc(x->shape.type)) + 2 * u, *A);
    }
    return 1;
  }
  default:
    return 0;
  }
#undef OPA
#undef OPE
}

/* Whether x's value may differ between backends given its operands'. */
static int inexact(eb *b, const cx_instr *x) {
  int any = 0;
  for (int i = 0; i < x->nops; i++) any |= b->inexact[index_of(x->ops[i])];
  if (cx_op_class_of(x->op) == CX_CLASS_SHAPE) return any; /* iota: no operands, exact */
  switch (x->op) {
  case CX_OP_PARAMETER: case CX_OP_CONSTANT: case CX_OP_COPY: case CX_OP_SELECT: case CX_OP_TUPLE:
  case CX_OP_GET_TUPLE_ELEMENT: case CX_OP_NEGATE: case CX_OP_ABS: case CX_OP_MAXIMUM: case CX_OP_MINIMUM:
  case CX_OP_CLAMP: case CX_OP_CONVERT: case CX_OP_COMPARE:
    return any;
  case CX_OP_ADD: case CX_OP_SUBTRACT: case CX_OP_MULTIPLY: case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR:
    return any || !(cx_type_kind(x->shape.type) == CX_KIND_SINT || cx_type_kind(x->shape.type) == CX_KIND_UINT ||
                    x->shape.type == CXLA_PRED);
  default:
    return 1;
  }
}

/* Whether a companion is a real one: a placeholder (tiled layouts, tokens) has another rank. */
static int followed(eb *b, const cx_instr *x) {
  return bounded(x->shape.type) && !x->shape.layout_extra && b->A[index_of(x)]->shape.rank == x->shape.rank;
}

/* A compare of inexact floats may come out differently on the two backends where its operands
 * are within their errors of each other: F = |x - y| <= Ex + Ey. 0 on OOM. */
static int flip_mask(eb *b, cx_instr *c) {
  cx_instr *x = c->ops[0], *y = c->ops[1];
  if (!followed(b, x) || !followed(b, y) || x->shape.rank != c->shape.rank) return 1; /* no mask */
  cx_instr *gap = unary(b, CX_OP_ABS, binary(b, CX_OP_SUBTRACT, value(b, x), value(b, y)));
  cx_instr *err = binary(b, CX_OP_ADD, b->E[index_of(x)], b->E[index_of(y)]);
  return (b->F[index_of(c)] = compare(b, gap, err, CXLA_LE)) != NULL;
}

/* select(p, a, b) whose predicate is such a compare: where it may flip, the other operand may
 * be chosen, E = select(p, Ea, Eb) + (F ? |a - b| + Ea + Eb : 0) and A = max(Aa, Ab). 1 done,
 * 0 not applicable, -1 OOM. */
static int select_flipping(eb *b, cx_instr *x, cx_instr **A, cx_instr **E) {
  cx_instr *p = x->ops[0], *t = x->ops[1], *f = x->ops[2];
  cx_instr *flip = b->F[index_of(p)];
  if (!flip || p->shape.rank != x->shape.rank || !followed(b, t) || !followed(b, f)) return 0;
  cx_instr *Et = b->E[index_of(t)], *Ef = b->E[index_of(f)];
  cx_instr *gap = unary(b, CX_OP_ABS, binary(b, CX_OP_SUBTRACT, value(b, t), value(b, f)));
  cx_instr *other = binary(b, CX_OP_ADD, gap, binary(b, CX_OP_ADD, Et, Ef));
  *A = binary(b, CX_OP_MAXIMUM, b->A[index_of(t)], b->A[index_of(f)]);
  *E = binary(b, CX_OP_ADD, choose(b, p, Et, Ef), choose(b, flip, other, splat(b, x, 0)));
  return *A && *E ? 1 : -1;
}

static int companion(eb *b, cx_instr *x) {
  int i = index_of(x);
  b->inexact[i] = (uint8_t)inexact(b, x);
  b->loc = x->loc;
  if (x->op == CX_OP_TUPLE || x->op == CX_OP_GET_TUPLE_ELEMENT) {
    /* tuples mirror their elements' companions */
    int n = x->nops;
    if (x->op == CX_OP_GET_TUPLE_ELEMENT) {
      cx_instr *ta = b->A[index_of(x->ops[0])], *te = b->E[index_of(x->ops[0])];
      if (ta->shape.type != CXLA_TUPLE) return fresh(b, x, &b->A[i], &b->E[i]);
      b->A[i] = add(b, CX_OP_GET_TUPLE_ELEMENT, &ta->shape.tuple[x->a.index], 1, &ta);
      b->E[i] = add(b, CX_OP_GET_TUPLE_ELEMENT, &te->shape.tuple[x->a.index], 1, &te);
      if (!b->A[i] || !b->E[i]) return 0;
      b->A[i]->a.index = b->E[i]->a.index = x->a.index;
      return 1;
    }
    cx_instr **ops = cx_calloc((size_t)(2 * n + 1), sizeof *ops);
    cx_shape *sh = cx_calloc((size_t)(n + 1), sizeof *sh);
    int ok = ops && sh;
    if (!ok) cx_oom(b->m->ctx);
    for (int k = 0; k < 2 && ok; k++) {
      cx_instr **src = k ? b->E : b->A;
      for (int j = 0; j < n; j++) ops[j] = src[index_of(x->ops[j])], sh[j] = ops[j]->shape;
      cx_shape t = {.type = CXLA_TUPLE, .ntuple = n, .tuple = sh};
      ok = ((k ? b->E : b->A)[i] = add(b, CX_OP_TUPLE, &t, n, ops)) != NULL;
    }
    cx_free(ops);
    cx_free(sh);
    return ok;
  }
  if (x->op == CX_OP_COMPARE && !flip_mask(b, x)) return 0;
  if (x->op == CX_OP_SELECT && b->inexact[index_of(x->ops[0])] && bounded(x->shape.type)) {
    int r = select_flipping(b, x, &b->A[i], &b->E[i]);
    if (r) return r > 0 && b->A[i] && b->E[i];
  }
  if (x->shape.type != CXLA_TUPLE && bounded(x->shape.type) && follow(b, x, &b->A[i], &b->E[i]))
    return b->A[i] && b->E[i];
  return fresh(b, x, &b->A[i], &b->E[i]);
}

/* Fusions and calls are seen through: each becomes a call, and calls are inlined. Ops that
 * stand for a dot or sums (scaled-dot, batch-norm) become them, so their accumulation gets
 * its allowance; the reference values still come from the module as written. */
static cxla_status flatten(cx_module *m) {
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (m->comps[i]->instrs[j]->op == CX_OP_FUSION) m->comps[i]->instrs[j]->op = CX_OP_CALL;
  int changed = 0;
  CX_TRY(cx_pass_scaled_dot_expand(m, &changed));
  CX_TRY(cx_pass_batchnorm_expand(m, &changed));
  return cx_pass_inline_calls(m, &changed);
}

cx_module *cx_module_error_bound(cx_module *src) {
  cx_module *m = cx_module_clone(src);
  if (!m) return NULL;
  cx_module_reserve_names(m);
  if (flatten(m) != CXLA_OK) {
    cx_module_free(m);
    return NULL;
  }
  eb b = {.m = m, .c = m->entry};
  int n = b.c ? b.c->ninstrs : 0;
  if (!b.c || !b.c->root) goto fail;
  b.A = cx_calloc((size_t)(3 * n + 1), sizeof *b.A);
  b.inexact = cx_calloc((size_t)(n + 1), 1);
  if (!b.A || !b.inexact) { cx_oom(m->ctx); goto fail; }
  b.E = b.A + n;
  b.F = b.A + 2 * n;
  cx_instr **orig = b.c->instrs; /* appended to below: keep the first n by position */
  cx_instr **list = cx_calloc((size_t)(n + 1), sizeof *list);
  if (!list) { cx_oom(m->ctx); goto fail; }
  memcpy(list, orig, sizeof *list * (size_t)n);
  for (int i = 0; i < n; i++) list[i]->aux = (void *)(intptr_t)(i + 1);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = companion(&b, list[i]);
  cx_instr *root = b.c->root;
  if (ok) {
    cx_instr *pair[2] = {root, b.E[index_of(root)]};
    cx_shape sh[2] = {root->shape, pair[1]->shape};
    cx_shape t = {.type = CXLA_TUPLE, .ntuple = 2, .tuple = sh};
    ok = (b.c->root = add(&b, CX_OP_TUPLE, &t, 2, pair)) != NULL;
  }
  for (int i = 0; i < n; i++) list[i]->aux = NULL;
  cx_free(list);
  if (!ok || cx_comp_resort(b.c, "error bound") != CXLA_OK) goto fail;
  cx_free(b.A);
  cx_free(b.inexact);
  return m;
fail:
  cx_free(b.A);
  cx_free(b.inexact);
  cx_module_free(m);
  return NULL;
}
