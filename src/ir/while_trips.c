/* while_trips.c — cx_while_trip_count (while_trips.h). */
#include "ir/while_trips.h"

/* What x computes, seen through a fusion: x itself, or the fused computation's root with its
 * parameters standing for the fusion's operands (see arg). */
typedef struct seen {
  const cx_instr *in;    /* the instruction, or a fused root */
  const cx_instr *fusion; /* the fusion it is the root of, or NULL */
} seen;

static seen look(const cx_instr *x) {
  if (x->op == CX_OP_FUSION && x->ncalled == 1 && x->called[0]->root) return (seen){x->called[0]->root, x};
  return (seen){x, NULL};
}

/* Operand i of what s computes, as an instruction outside the fusion where it is a fused
 * parameter; a constant inside the fusion is returned as it is. */
static const cx_instr *arg(seen s, int i) {
  const cx_instr *o = s.in->ops[i];
  if (s.fusion && o->op == CX_OP_PARAMETER) {
    int64_t p = o->a.index;
    return p >= 0 && p < s.fusion->nops ? s.fusion->ops[p] : NULL;
  }
  return o;
}

static int const_int(const cx_instr *x, int64_t *v) {
  if (!x) return 0;
  x = look(x).in; /* a fusion that is only a constant */
  if (x->op != CX_OP_CONSTANT || !x->a.literal || x->shape.rank != 0 || !cx_type_is_int(x->shape.type)) return 0;
  *v = cx_load_i64(x->shape.type, x->a.literal->data, 0);
  return 1;
}

/* Which carry element x reads (get-tuple-element of c's parameter), or -1. */
static int carry_index(const cx_comp *c, const cx_instr *x) {
  if (!x || x->op != CX_OP_GET_TUPLE_ELEMENT || x->ops[0]->op != CX_OP_PARAMETER || x->ops[0]->a.index != 0) return -1;
  return x->ops[0]->parent == c ? (int)x->a.index : -1;
}

/* A loop constant read in computation c (the condition or the body): a constant, or a carry
 * element the body passes on unchanged and the loop starts with a constant (JAX's StableHLO
 * carries a fori_loop's bound and step so). */
static int invariant_in(const cx_instr *w, const cx_comp *c, const cx_instr *x, int64_t *v) {
  if (const_int(x, v)) return 1;
  int j = carry_index(c, x);
  const cx_instr *root = w->called[1]->root;
  if (j < 0 || root->op != CX_OP_TUPLE || j >= root->nops || carry_index(w->called[1], root->ops[j]) != j) return 0;
  return const_int(w->ops[0]->ops[j], v);
}

static int bound_of(const cx_instr *w, const cx_instr *x, int64_t *v) { return invariant_in(w, w->called[0], x, v); }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The counter's step: body element k is carry k plus (or minus) a constant. */
static int step_of(const cx_instr *w, int k, int64_t *step) {
  seen n = look(w->called[1]->root->ops[k]);
  if (n.in->nops != 2 || (n.in->op != CX_OP_ADD && n.in->op != CX_OP_SUBTRACT)) return 0;
  const cx_instr *a = arg(n, 0), *b = arg(n, 1);
  if (carry_index(w->called[1], a) == k && invariant_in(w, w->called[1], b, step)) {
    if (n.in->op == CX_OP_SUBTRACT) *step = -*step;
    return 1;
  }
  return n.in->op == CX_OP_ADD && carry_index(w->called[1], b) == k && invariant_in(w, w->called[1], a, step);
}

int cx_while_trip_count(const cx_instr *w, int64_t *trips) {
  if (w->op != CX_OP_WHILE || w->ncalled != 2 || w->nops != 1) return 0;
  const cx_instr *init = w->ops[0], *body = w->called[1]->root;
  seen cond = look(w->called[0]->root);
  if (init->op != CX_OP_TUPLE || body->op != CX_OP_TUPLE || cond.in->op != CX_OP_COMPARE || cond.in->nops != 2) return 0;
  const cx_instr *lhs = arg(cond, 0), *rhs = arg(cond, 1);
  int k = carry_index(w->called[0], lhs);
  cxla_compare_dir dir = cond.in->a.dir;
  int64_t bound, c0, step;
  if (k >= 0) {
    if (!bound_of(w, rhs, &bound)) return 0;
  } else { /* bound OP counter: flip to counter OP' bound */
    k = carry_index(w->called[0], rhs);
    if (k < 0 || !bound_of(w, lhs, &bound)) return 0;
    static const cxla_compare_dir flip[] = {[CXLA_EQ] = CXLA_EQ, [CXLA_NE] = CXLA_NE, [CXLA_LT] = CXLA_GT,
                                            [CXLA_LE] = CXLA_GE, [CXLA_GT] = CXLA_LT, [CXLA_GE] = CXLA_LE};
    dir = flip[dir];
  }
  if (k >= init->nops || k >= body->nops || !const_int(init->ops[k], &c0) || !step_of(w, k, &step) || step == 0) return 0;
  /* normalise to counting up to an exclusive bound */
  if (dir == CXLA_LE) bound += 1, dir = CXLA_LT;
  if (dir == CXLA_GE) bound -= 1, dir = CXLA_GT;
  if (dir == CXLA_LT) {
    if (c0 >= bound) return *trips = 0, 1;
    return step > 0 ? (*trips = ceil_div(bound - c0, step), 1) : 0;
  }
  if (dir == CXLA_GT) {
    if (c0 <= bound) return *trips = 0, 1;
    return step < 0 ? (*trips = ceil_div(c0 - bound, -step), 1) : 0;
  }
  if (dir == CXLA_NE && (bound - c0) % step == 0 && (bound - c0) / step >= 0) return *trips = (bound - c0) / step, 1;
  return 0;
}
