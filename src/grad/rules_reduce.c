/* rules_reduce.c — gradients of reduce and reduce-window.
 *
 * reduce: a sum broadcasts the cotangent back over the reduced dims; a maximum or minimum
 * shares it equally among the elements equal to the result (jax's rule). reduce-window: a sum
 * (sum and average pooling) sends it back through the transposed window (pad the cotangent,
 * then sum windows of it); a maximum or minimum sends each window's cotangent to the first
 * extreme element in row-major window order, with select-and-scatter (the rule of XLA's
 * pooling gradients). A product (jnp.prod; jnp.cumprod is a product window) gives each
 * element the product of the others in its reduction or window; that is not y/x where x is
 * 0, so it is built from the product of the non-zero elements and their count of zeros.
 * The init values get no gradient: XLA may apply them any number of times, so reduce-window's
 * padding included, a non-constant init has no single derivative. */
#include <math.h>
#include "grad/grad_int.h"

#define E (&s->e)

static cxla_status init_inactive(gr_state *s, cx_instr *in) {
  for (int k = in->nops / 2; k < in->nops; k++)
    if (gr_wants(s, in, k))
      return gr_refuse(s, in, "its init value depends on a differentiated parameter; init values have no gradient");
  return CXLA_OK;
}

static cxla_status product(gr_state *s, cx_instr *in, cx_instr *g, const int64_t *kept);

cxla_status gr_rule_reduce(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (in->nops != 2) return gr_refuse(s, in, "a reduce of several arrays (such as an argmax) has no gradient rule");
  CX_TRY(init_inactive(s, in));
  int op = gr_reducer_op(in->called[0]);
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  cx_instr *x = gr_x(s, in, 0), *y = gr_y(s, in), *g = ct->v;
  const cx_shape *xs = &x->shape;
  int64_t kept[CXLA_MAX_RANK];
  int nk = 0;
  for (int d = 0; d < xs->rank; d++) {
    int reduced = 0;
    for (int i = 0; i < in->a.dims.n; i++) reduced |= in->a.dims.v[i] == d;
    if (!reduced) kept[nk++] = d;
  }
  if (op == CX_OP_ADD) {
    gr_acc(s, in->ops[0], gr_bcast(E, g, xs->rank, xs->dims, kept));
  } else if (op == CX_OP_MULTIPLY) {
    product(s, in, g, kept);
  } else if (op == CX_OP_MAXIMUM || op == CX_OP_MINIMUM) {
    cx_instr *at = gr_cmp(E, x, gr_bcast(E, y, xs->rank, xs->dims, kept), CXLA_EQ);
    cx_instr *count = gr_reduce(E, gr_convert(E, at, xs->type), in->a.dims.n, in->a.dims.v, CX_OP_ADD);
    cx_instr *share = gr_bcast(E, gr_bin(E, CX_OP_DIVIDE, g, count), xs->rank, xs->dims, kept);
    gr_acc(s, in->ops[0], gr_select(E, at, share, gr_zeros(E, xs)));
  } else {
    return gr_refuse(s, in, "only sum, product, maximum and minimum reductions have a gradient rule; to_apply=%s is none of them",
                     in->called[0]->name);
  }
  return s->e.st;
}

/* 0 for an empty dim, else the extent of its elements spread d apart. */
static int64_t dilated(int64_t n, int64_t d) { return n == 0 ? 0 : 1 + d * (n - 1); }

/* The transpose of in's window sum applied to g (a value of in's result shape): each element
 * of the operand gets the sum of g over the windows it lies in. */
static cx_instr *transposed_window_sum(gr_state *s, cx_instr *in, cx_instr *g) {
  if (!g) return NULL;
  const cx_shape *xs = &in->ops[0]->shape;
  const cx_window *w = &in->a.window;
  int r = xs->rank;
  int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], interior[CXLA_MAX_RANK];
  cx_window_dim back[CXLA_MAX_RANK];
  for (int d = 0; d < r; d++) {
    const cx_window_dim *wd = &w->d[d];
    int64_t in_dil = dilated(xs->dims[d], wd->lhs_dilate), win_dil = dilated(wd->size, wd->rhs_dilate);
    int64_t out_dil = dilated(g->shape.dims[d], wd->stride);
    lo[d] = win_dil - wd->pad_lo - 1;
    hi[d] = in_dil + win_dil - 1 - out_dil - lo[d];
    interior[d] = wd->stride - 1;
    back[d] = (cx_window_dim){wd->size, wd->lhs_dilate, 0, 0, 1, wd->rhs_dilate, 0};
  }
  cx_instr *padded = gr_pad(E, g, gr_scalar(E, g->shape.type, 0), lo, hi, interior);
  cx_comp *add = gr_scalar_comp(s->e.g, CX_OP_ADD, g->shape.type, CXLA_EQ);
  cx_instr *ops[2] = {padded, gr_scalar(E, g->shape.type, 0)};
  cx_instr *rw = gr_new(E, CX_OP_REDUCE_WINDOW, NULL, 2, ops);
  if (rw && (!gr_window(E, &rw->a.window, r, back) || !add || !cx_instr_set_called(rw, 1, &add))) rw = NULL;
  return gr_done(E, rw);
}

/* in's own window (or reduction) applied to x with init and a scalar op. */
static cx_instr *same_reduction(gr_state *s, cx_instr *in, cx_instr *x, cx_instr *init, cx_op op) {
  cx_comp *f = gr_scalar_comp(s->e.g, op, x ? x->shape.type : CXLA_F32, CXLA_EQ);
  cx_instr *ops[2] = {x, init};
  cx_instr *r = gr_new(E, in->op, NULL, 2, ops);
  int ok = r && f && cx_instr_set_called(r, 1, &f);
  if (ok && in->op == CX_OP_REDUCE) ok = gr_ints(E, &r->a.dims, in->a.dims.n, in->a.dims.v);
  if (ok && in->op == CX_OP_REDUCE_WINDOW) ok = gr_window(E, &r->a.window, in->a.window.rank, in->a.window.d);
  if (!ok && s->e.st == CXLA_OK) s->e.st = cx_oom(s->e.g->m->ctx);
  return ok ? gr_done(E, r) : NULL;
}

/* A product's gradient: for element x of a reduction (or window) whose non-zero elements'
 * product (init included) is p and which holds c zeros, the product of the others is p/x
 * where c = 0, p at the zero where c = 1, and 0 otherwise. The shares are summed back over
 * the reduced dims (kept: the dims a reduce keeps) or the windows (kept NULL). */
static cxla_status product(gr_state *s, cx_instr *in, cx_instr *g, const int64_t *kept) {
  cx_instr *x = gr_x(s, in, 0), *init = gr_x(s, in, 1);
  cxla_type t = x->shape.type;
  cx_instr *zero = gr_cmp(E, x, gr_like(E, x, 0), CXLA_EQ);
  cx_instr *nonzero = gr_select(E, zero, gr_like(E, x, 1), x);
  cx_instr *zeros = gr_convert(E, zero, t);
  cx_instr *count = same_reduction(s, in, zeros, gr_scalar(E, t, 0), CX_OP_ADD);
  cx_instr *p = same_reduction(s, in, nonzero, init, CX_OP_MULTIPLY);
  cx_instr *gp = gr_bin(E, CX_OP_MULTIPLY, g, p), *none = gr_like(E, gp, 0);
  cx_instr *all_nonzero = gr_select(E, gr_cmp(E, count, gr_like(E, count, 0), CXLA_EQ), gp, none);
  cx_instr *one_zero = gr_select(E, gr_cmp(E, count, gr_like(E, count, 1), CXLA_EQ), gp, none);
  const cx_shape *xs = &x->shape;
  cx_instr *a = kept ? gr_bcast(E, all_nonzero, xs->rank, xs->dims, kept) : transposed_window_sum(s, in, all_nonzero);
  cx_instr *b = kept ? gr_bcast(E, one_zero, xs->rank, xs->dims, kept) : transposed_window_sum(s, in, one_zero);
  gr_acc(s, in->ops[0], gr_select(E, zero, b, gr_bin(E, CX_OP_DIVIDE, a, nonzero)));
  return s->e.st;
}

static cxla_status window_extreme(gr_state *s, cx_instr *in, cx_instr *g, int op) {
  const cx_window *w = &in->a.window;
  for (int d = 0; d < w->rank; d++)
    if (w->d[d].lhs_dilate != 1 || w->d[d].rhs_dilate != 1)
      return gr_refuse(s, in, "a %s window with dilation has no gradient rule (select-and-scatter takes none)",
                       op == CX_OP_MAXIMUM ? "maximum" : "minimum");
  cx_instr *x = gr_x(s, in, 0), *y = gr_y(s, in), *init = gr_x(s, in, 1);
  cxla_type t = x->shape.type;
  /* where the init (or padding) won, no element of x did */
  int ident = init->op == CX_OP_CONSTANT && cx_load_f64(t, init->a.literal->data, 0) ==
                                                (op == CX_OP_MAXIMUM ? -INFINITY : INFINITY);
  if (!ident) {
    cx_instr *won = gr_cmp(E, y, gr_bcast(E, init, y->shape.rank, y->shape.dims, NULL), CXLA_NE);
    g = gr_select(E, won, g, gr_zeros(E, &g->shape));
  }
  cx_comp *sel = gr_scalar_comp(s->e.g, CX_OP_COMPARE, t, op == CX_OP_MAXIMUM ? CXLA_GE : CXLA_LE);
  cx_comp *add = gr_scalar_comp(s->e.g, CX_OP_ADD, t, CXLA_EQ);
  cx_instr *ops[3] = {x, g, gr_scalar(E, t, 0)};
  cx_instr *sas = gr_new(E, CX_OP_SELECT_AND_SCATTER, &x->shape, 3, ops);
  cx_comp *called[2] = {sel, add};
  if (sas && (!sel || !add || !gr_window(E, &sas->a.window, w->rank, w->d) || !cx_instr_set_called(sas, 2, called)))
    sas = NULL;
  gr_acc(s, in->ops[0], gr_done(E, sas));
  return s->e.st;
}

cxla_status gr_rule_reduce_window(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (in->nops != 2) return gr_refuse(s, in, "a reduce-window of several arrays has no gradient rule");
  CX_TRY(init_inactive(s, in));
  for (int d = 0; d < in->a.window.rank; d++)
    if (in->a.window.d[d].reversal) return gr_refuse(s, in, "window reversal has no gradient rule");
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  int op = gr_reducer_op(in->called[0]);
  if (op == CX_OP_ADD) {
    gr_acc(s, in->ops[0], transposed_window_sum(s, in, ct->v));
    return s->e.st;
  }
  if (op == CX_OP_MAXIMUM || op == CX_OP_MINIMUM) return window_extreme(s, in, ct->v, op);
  if (op == CX_OP_MULTIPLY) return product(s, in, ct->v, NULL);
  return gr_refuse(s, in, "only sum, product, maximum and minimum windows have a gradient rule; to_apply=%s is none of them",
                   in->called[0]->name);
}
