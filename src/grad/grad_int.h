/* grad_int.h — private to src/grad: the emitter that adds shape-checked instructions, the
 * state of one computation being differentiated, cotangent trees, and the rules' signature.
 *
 * How a computation is differentiated (backprop.c): its instructions are first copied in
 * order into a new computation (the "forward": prim[] maps each source instruction to its
 * copy), then the source instructions are visited in reverse and each one holding a cotangent
 * hands it to its operands through its op's rule, adding instructions to the same new
 * computation. Rules read forward values through prim[], never the source instructions
 * themselves, so the same code serves the ENTRY and every called computation. */
#ifndef CX_GRAD_INT_H
#define CX_GRAD_INT_H
#include <stdio.h>
#include "grad/grad.h"
#include "ir/clone.h"
#include "ir/edit.h"
#include "ir/verify.h"

/* ---- what one cx_grad_module call shares ---- */
typedef struct gr_cache_entry {
  cx_comp *src, *made;
  int kind;
} gr_cache_entry;

typedef struct gr_module {
  cx_module *m;
  cx_arena arena;         /* cotangent trees and per-computation tables */
  int ncache;
  int64_t cap;
  gr_cache_entry *cache;  /* computations made once and shared (reducers, vjps) */
} gr_module;

/* ---- the emitter: adds instructions to one computation, shapes from the verifier's own
 * inference. Every helper returns NULL once something failed (an operand is NULL, memory ran
 * out, or inference refused what a rule built: a bug, reported as CXLA_ERR_INTERNAL), and the
 * first failure stays in st, so rules chain calls and check st once. ---- */
typedef struct gr_em {
  gr_module *g;
  cx_comp *c;
  cx_loc loc;             /* new instructions point at the source instruction they stand for */
  cxla_status st;
} gr_em;

cx_instr *gr_param(gr_em *e, int index, const cx_shape *shape);
cx_instr *gr_scalar(gr_em *e, cxla_type t, double v);
/* v broadcast to an array shape (dims of s, type t). */
cx_instr *gr_full(gr_em *e, cxla_type t, const cx_shape *s, double v);
/* v in the shape and type of x. */
static inline cx_instr *gr_like(gr_em *e, const cx_instr *x, double v) {
  return x ? gr_full(e, x->shape.type, &x->shape, v) : NULL;
}
/* Zeros of any shape (tuples as tuples of zeros). */
cx_instr *gr_zeros(gr_em *e, const cx_shape *s);
cx_instr *gr_un(gr_em *e, cx_op op, cx_instr *x);
cx_instr *gr_bin(gr_em *e, cx_op op, cx_instr *a, cx_instr *b);
cx_instr *gr_cmp(gr_em *e, cx_instr *a, cx_instr *b, cxla_compare_dir dir);
cx_instr *gr_select(gr_em *e, cx_instr *p, cx_instr *t, cx_instr *f);
cx_instr *gr_convert(gr_em *e, cx_instr *x, cxla_type t);
cx_instr *gr_reduce_precision(gr_em *e, cx_instr *x, int exponent_bits, int mantissa_bits);
cx_instr *gr_bcast(gr_em *e, cx_instr *x, int rank, const int64_t *dims, const int64_t *map);
cx_instr *gr_reshape(gr_em *e, cx_instr *x, int rank, const int64_t *dims);
cx_instr *gr_transpose(gr_em *e, cx_instr *x, const int64_t *perm);
cx_instr *gr_slice(gr_em *e, cx_instr *x, const int64_t *start, const int64_t *limit, const int64_t *stride);
cx_instr *gr_pad(gr_em *e, cx_instr *x, cx_instr *v, const int64_t *lo, const int64_t *hi, const int64_t *interior);
cx_instr *gr_reverse(gr_em *e, cx_instr *x, int n, const int64_t *dims);
cx_instr *gr_dynamic_slice(gr_em *e, cx_instr *x, cx_instr *const *starts, const int64_t *sizes);
cx_instr *gr_dynamic_update_slice(gr_em *e, cx_instr *x, cx_instr *u, cx_instr *const *starts);
/* Reduces x over dims with a scalar op (add, maximum, minimum, multiply, and, or) and its identity. */
cx_instr *gr_reduce(gr_em *e, cx_instr *x, int n, const int64_t *dims, cx_op op);
cx_instr *gr_sum_all(gr_em *e, cx_instr *x);
cx_instr *gr_tuple(gr_em *e, int n, cx_instr *const *ops);
cx_instr *gr_gte(gr_em *e, cx_instr *t, int64_t index);
cx_instr *gr_call(gr_em *e, cx_comp *c, int n, cx_instr *const *ops);
cx_instr *gr_while(gr_em *e, cx_instr *init, cx_comp *cond, cx_comp *body);
/* An instruction of op with operands whose attributes the caller copies from `like` (dot,
 * convolution, gather, scatter, windows: the attributes a rule changes it sets after) — then
 * gr_done infers its shape (declared: the type or shape inference needs, may be NULL). */
cx_instr *gr_new(gr_em *e, cx_op op, const cx_shape *declared, int nops, cx_instr *const *ops);
cx_instr *gr_done(gr_em *e, cx_instr *in);
/* in->a.<list> = v[0..n) in the module arena (0 and the emitter's error on OOM). */
int gr_ints(gr_em *e, cx_ints *dst, int n, const int64_t *v);
/* A copy of a window in the arena with every dimension's fields from w. */
int gr_window(gr_em *e, cx_window *dst, int rank, const cx_window_dim *w);

/* ---- computations grad makes: new ones are added to the module when finished, so callees
 * come before callers ---- */
cx_comp *gr_comp_begin(gr_module *g, const char *prefix, const char *base);
cxla_status gr_comp_end(gr_module *g, cx_comp *c, cx_instr *root);
/* The scalar computation (T, T) -> op(p0, p1) (add, maximum, minimum, and, or) or
 * (T, T) -> compare(p0, p1, dir) for op == CX_OP_COMPARE; made once per module. */
cx_comp *gr_scalar_comp(gr_module *g, cx_op op, cxla_type t, cxla_compare_dir dir);
/* The vjp computations made so far (gr_vjp_comp's cache). */
cx_comp *gr_cached_vjp(gr_module *g, cx_comp *src);
int gr_remember_vjp(gr_module *g, cx_comp *src, cx_comp *vjp);
/* Which of add/maximum/minimum/multiply/and/or a reducer computes on its two parameters, or
 * -1 (anything else). */
int gr_reducer_op(const cx_comp *c);

/* ---- cotangents: for an array value the accumulated cotangent (NULL: zero so far); for a
 * tuple one tree per element (e NULL until something arrives) ---- */
typedef struct gr_ct {
  cx_instr *v;
  int n;
  struct gr_ct *e;
} gr_ct;

/* ---- one computation being differentiated ---- */
typedef struct gr_state {
  gr_em e;                /* adds to the new computation */
  cx_comp *src;
  int nids;               /* the tables below are indexed by source instruction id */
  cx_instr **prim;        /* the forward copy of each source instruction */
  gr_ct **ct;
  uint8_t *active;        /* depends on a differentiated parameter, and has float values */
  void **tape;            /* what the forward saved for a rule (while loops) */
  int keep_names;         /* the ENTRY keeps its names; called computations' copies get new ones */
} gr_state;

cxla_status gr_state_init(gr_state *s, gr_module *g, cx_comp *src, cx_comp *dst, int keep_names);
void gr_state_free(gr_state *s);

/* The end of building a module gm (st: how building went): verifies it — a module that does
 * not verify is cxla's bug, reported as CXLA_ERR_INTERNAL naming `what` — then hands it to *out,
 * or frees it on any error. */
cxla_status gr_module_finish(cx_module *gm, cxla_status st, const char *what, cx_module **out);
/* The forward: copies every source instruction but the parameters (mapped by the caller). */
cxla_status gr_forward(gr_state *s);
/* Copies one source instruction into the forward, operands mapped through prim. */
cxla_status gr_copy_instr(gr_state *s, cx_instr *in);
/* The reverse sweep: hands every cotangent to the operands through the op's rule. */
cxla_status gr_backward(gr_state *s);

static inline cx_instr *gr_x(gr_state *s, const cx_instr *in, int k) { return s->prim[in->ops[k]->id]; }
static inline cx_instr *gr_y(gr_state *s, const cx_instr *in) { return s->prim[in->id]; }
static inline int gr_wants(gr_state *s, const cx_instr *in, int k) { return s->active[in->ops[k]->id]; }
/* Adds value v (an array, or a tuple whose elements are added one by one) to the cotangent of
 * the source instruction x; nothing for an inactive x or a NULL v. */
void gr_acc(gr_state *s, const cx_instr *x, cx_instr *v);
/* Adds a cotangent tree to the cotangent of x, or to element `index` of it (index -1: all). */
void gr_acc_tree(gr_state *s, const cx_instr *x, int index, const gr_ct *t);
/* The cotangent as a value of shape sh: zeros where nothing arrived. */
cx_instr *gr_ct_value(gr_em *e, const gr_ct *t, const cx_shape *sh);
/* Whether sh has a float element somewhere (a cotangent can be non-zero). */
int gr_has_float(const cx_shape *sh);
/* CXLA_ERR_UNSUPPORTED naming in and its location: "grad: <op> '<name>': <why>". */
cxla_status gr_refuse(gr_state *s, const cx_instr *in, const char *fmt, ...) CX_PRINTF(3, 4);

/* A computation's vjp: parameters (its parameters..., cotangent of its result), result the
 * tuple of its parameters' cotangents. The forward is recomputed inside. Made once per
 * module. */
cxla_status gr_vjp_comp(gr_module *g, cx_comp *src, cx_comp **out);

/* ---- while loops (while_tape.c): on the way forward, a loop whose trip count is known is
 * replaced by one that also saves every iteration's carry; its rule runs a reverse loop over
 * the saved carries. */
/* Copies while `in` into s's forward (saving carries when a gradient may reach it). */
cxla_status gr_forward_while(gr_state *s, cx_instr *in);

/* ---- sort (rules_sort.c): on the way forward an active sort also sorts an iota, and saves
 * the permutation for its rule. */
cxla_status gr_forward_sort(gr_state *s, cx_instr *in);

/* ---- rules: one per op, in the table of rules.c ---- */
typedef cxla_status (*gr_rule)(gr_state *s, cx_instr *in, const gr_ct *ct);
gr_rule gr_rule_of(cx_op op);

#define GR_RULES(X)                                                                                     \
  X(abs) X(negate) X(exp) X(expm1) X(log) X(log1p) X(logistic) X(sqrt) X(rsqrt) X(cbrt) X(sin) X(cos) \
  X(tan) X(tanh) X(erf) X(flat) X(copy) X(reduce_precision) X(convert)                                \
  X(add) X(subtract) X(multiply) X(divide) X(remainder) X(power) X(atan2) X(minmax) X(select)         \
  X(clamp)                                                                                             \
  X(broadcast) X(reshape) X(transpose) X(slice) X(pad) X(concatenate) X(reverse) X(dynamic_slice)      \
  X(dynamic_update_slice) X(gather) X(scatter)                                                         \
  X(reduce) X(reduce_window) X(sort) X(topk)                                                          \
  X(dot) X(convolution)                                                                                \
  X(tuple) X(get_tuple_element) X(call) X(conditional) X(while) X(opt_barrier)
#define GR_DECLARE(name) cxla_status gr_rule_##name(gr_state *s, cx_instr *in, const gr_ct *ct);
GR_RULES(GR_DECLARE)
#undef GR_DECLARE

#endif
