/* while_tape.c — gradients of while loops whose trip count is known when compiling (XLA's
 * pattern, as jax's fori_loop and scan lower: a counter in the carry goes from a constant by
 * a constant step to a constant bound). Not unrolled: on the way forward the loop is replaced
 * by one that also stores the carry each iteration starts with into stacks (one array of
 * [trips, ...] per carry element); the rule then runs a reverse loop from the last iteration
 * to the first that reads the saved carry back and calls the body's vjp (which recomputes that
 * iteration's forward) to take the carry's cotangent one iteration back. Memory: one copy of
 * the carry per iteration. The carry must be a tuple of arrays. */
#include "grad/grad_int.h"
#include "ir/while_trips.h"

typedef struct gr_tape {
  int64_t trips;
  cx_instr *saver;   /* (carry..., s32 iteration, stacks...) after the saving loop */
} gr_tape;

/* Why a loop has no tape, for the message. */
static const char *why_untaped(const cx_instr *w) {
  int64_t t;
  if (!cx_while_trip_count(w, &t))
    return "its trip count is not known when compiling (cxla differentiates loops whose carry holds a counter "
           "that goes from a constant by a constant step to a constant bound, as fori_loop and scan make)";
  return "its carry must be a tuple of arrays of rank below 16";
}

static int flat_carry(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 0;
  for (int i = 0; i < s->ntuple; i++)
    if (!cx_type_is_array(s->tuple[i].type) || s->tuple[i].rank >= CXLA_MAX_RANK) return 0;
  return 1;
}

/* One saved carry element per iteration: [trips, dims...]. */
static cx_shape stack_shape(const cx_shape *el, int64_t trips) {
  int64_t dims[CXLA_MAX_RANK];
  dims[0] = trips;
  for (int d = 0; d < el->rank; d++) dims[1 + d] = el->dims[d];
  return cx_shape_array(el->type, el->rank + 1, dims);
}

/* (carry..., s32[], stacks...) or (s32[], carry..., stacks...): the loops' carries. */
static cx_shape *loop_shape(gr_module *g, const cx_shape *carry, int64_t trips, int counter_first) {
  int n = carry->ntuple;
  cx_shape *s = cx_arena_alloc(&g->arena, sizeof *s * (size_t)(2 * n + 2));
  if (!s) return NULL;
  cx_shape *el = s + 1;
  el[counter_first ? 0 : n] = cx_shape_scalar(CXLA_S32);
  for (int j = 0; j < n; j++) {
    el[counter_first ? 1 + j : j] = carry->tuple[j];
    el[n + 1 + j] = stack_shape(&carry->tuple[j], trips);
  }
  *s = (cx_shape){.type = CXLA_TUPLE, .ntuple = 2 * n + 1, .tuple = el};
  return s;
}

/* iteration index, then zeros: where carry element j starts in its stack */
static void stack_starts(gr_em *e, cx_instr *i, int rank, cx_instr **starts) {
  starts[0] = i;
  for (int d = 0; d < rank; d++) starts[1 + d] = gr_scalar(e, CXLA_S32, 0);
}

/* Ends computation c built with emitter e; a failure goes to `outer` (the caller's emitter). */
static cx_comp *finish(gr_em *outer, gr_em *e, cx_comp *c, cx_instr *root) {
  cxla_status st = e->st != CXLA_OK ? e->st : gr_comp_end(e->g, c, root);
  if (st == CXLA_OK) return c;
  if (outer->st == CXLA_OK) outer->st = st;
  return NULL;
}

/* cond: the iteration counter (element `at`) compared with a constant */
static cx_comp *counter_cond(gr_em *outer, const cx_shape *ps, int at, cxla_compare_dir dir, int64_t bound) {
  cx_comp *c = gr_comp_begin(outer->g, "grad_cond", "");
  if (!c) return NULL;
  gr_em e = {outer->g, c, outer->loc, CXLA_OK};
  cx_instr *p = gr_param(&e, 0, ps);
  cx_instr *r = gr_cmp(&e, gr_gte(&e, p, at), gr_scalar(&e, CXLA_S32, (double)bound), dir);
  return finish(outer, &e, c, r);
}

/* The saving loop's body: the original body on the carry, and carry j stored at row i. */
static cx_comp *saving_body(gr_em *outer, const cx_instr *w, const cx_shape *ps) {
  cx_comp *c = gr_comp_begin(outer->g, "grad_save_", w->called[1]->name);
  if (!c) return NULL;
  gr_em e = {outer->g, c, w->loc, CXLA_OK};
  int n = w->shape.ntuple;
  cx_instr *p = gr_param(&e, 0, ps), *i = gr_gte(&e, p, n);
  cx_instr **v = cx_calloc((size_t)(2 * n + 1), sizeof *v);
  if (!v) return NULL;
  for (int j = 0; j < n; j++) v[j] = gr_gte(&e, p, j);
  cx_instr *next = gr_call(&e, w->called[1], 1, (cx_instr *[]){gr_tuple(&e, n, v)});
  for (int j = 0; j < n; j++) {
    const cx_shape *el = &w->shape.tuple[j];
    cx_shape one = stack_shape(el, 1);
    cx_instr *starts[CXLA_MAX_RANK];
    stack_starts(&e, i, el->rank, starts);
    cx_instr *row = gr_reshape(&e, v[j], one.rank, one.dims);
    v[n + 1 + j] = gr_dynamic_update_slice(&e, gr_gte(&e, p, n + 1 + j), row, starts);
  }
  for (int j = 0; j < n; j++) v[j] = gr_gte(&e, next, j);
  v[n] = gr_bin(&e, CX_OP_ADD, i, gr_scalar(&e, CXLA_S32, 1));
  cx_instr *root = gr_tuple(&e, 2 * n + 1, v);
  cx_free(v);
  return finish(outer, &e, c, root);
}

cxla_status gr_forward_while(gr_state *s, cx_instr *in) {
  int64_t trips;
  gr_module *g = s->e.g;
  if (!cx_while_trip_count(in, &trips) || !flat_carry(&in->shape) || trips >= INT32_MAX) return gr_copy_instr(s, in);
  gr_tape *tp = cx_arena_alloc(&g->arena, sizeof *tp);
  if (!tp) return s->e.st = cx_oom(g->m->ctx);
  tp->trips = trips;
  s->tape[in->id] = tp;
  if (trips == 0) return gr_copy_instr(s, in);
  int n = in->shape.ntuple;
  s->e.loc = in->loc;
  cx_shape *ps = loop_shape(g, &in->shape, trips, 0);
  cx_comp *cond = ps ? counter_cond(&s->e, ps, n, CXLA_LT, trips) : NULL;
  cx_comp *body = cond ? saving_body(&s->e, in, ps) : NULL;
  cx_instr **v = cx_calloc((size_t)(2 * n + 1), sizeof *v);
  if (!body || !v) {
    cx_free(v);
    return s->e.st != CXLA_OK ? s->e.st : (s->e.st = cx_oom(g->m->ctx));
  }
  cx_instr *init = gr_x(s, in, 0);
  for (int j = 0; j < n; j++) {
    v[j] = gr_gte(&s->e, init, j);
    v[n + 1 + j] = gr_zeros(&s->e, &ps->tuple[n + 1 + j]);
  }
  v[n] = gr_scalar(&s->e, CXLA_S32, 0);
  tp->saver = gr_while(&s->e, gr_tuple(&s->e, 2 * n + 1, v), cond, body);
  for (int j = 0; j < n; j++) v[j] = gr_gte(&s->e, tp->saver, j);
  s->prim[in->id] = gr_tuple(&s->e, n, v);
  cx_free(v);
  return s->e.st;
}

/* The reverse loop's body on (i, carry cotangent..., stacks...): read carry i back, run the
 * body's vjp on it, step i down. */
static cx_comp *reverse_body(gr_em *outer, const cx_instr *w, const cx_shape *ps, cx_comp *vjp) {
  cx_comp *c = gr_comp_begin(outer->g, "grad_reverse_", w->called[1]->name);
  if (!c) return NULL;
  gr_em e = {outer->g, c, w->loc, CXLA_OK};
  int n = w->shape.ntuple;
  cx_instr *p = gr_param(&e, 0, ps), *i = gr_gte(&e, p, 0);
  cx_instr **carry = cx_calloc((size_t)(4 * n + 2), sizeof *carry);
  if (!carry) return NULL;
  cx_instr **ct = carry + n, **v = ct + n;
  for (int j = 0; j < n; j++) {
    const cx_shape *el = &w->shape.tuple[j];
    cx_shape one = stack_shape(el, 1);
    cx_instr *starts[CXLA_MAX_RANK];
    stack_starts(&e, i, el->rank, starts);
    carry[j] = gr_reshape(&e, gr_dynamic_slice(&e, gr_gte(&e, p, n + 1 + j), starts, one.dims), el->rank, el->dims);
    ct[j] = gr_gte(&e, p, 1 + j);
  }
  cx_instr *args[2] = {gr_tuple(&e, n, carry), gr_tuple(&e, n, ct)};
  cx_instr *back = gr_gte(&e, gr_call(&e, vjp, 2, args), 0);
  v[0] = gr_bin(&e, CX_OP_SUBTRACT, i, gr_scalar(&e, CXLA_S32, 1));
  for (int j = 0; j < n; j++) {
    v[1 + j] = gr_gte(&e, back, j);
    v[n + 1 + j] = gr_gte(&e, p, n + 1 + j);
  }
  cx_instr *root = gr_tuple(&e, 2 * n + 1, v);
  cx_free(carry);
  return finish(outer, &e, c, root);
}

cxla_status gr_rule_while(gr_state *s, cx_instr *in, const gr_ct *ct) {
  gr_tape *tp = s->tape[in->id];
  if (!tp) return gr_refuse(s, in, "%s", why_untaped(in));
  gr_em *e = &s->e;
  cx_instr *ctv = gr_ct_value(e, ct, &in->shape);
  if (tp->trips == 0) {
    gr_acc(s, in->ops[0], ctv);
    return e->st;
  }
  gr_module *g = e->g;
  int n = in->shape.ntuple;
  cx_comp *vjp;
  cxla_status st = gr_vjp_comp(g, in->called[1], &vjp);
  if (st != CXLA_OK) return e->st = st;
  cx_shape *ps = loop_shape(g, &in->shape, tp->trips, 1);
  cx_comp *cond = ps ? counter_cond(e, ps, 0, CXLA_GE, 0) : NULL;
  cx_comp *body = cond ? reverse_body(e, in, ps, vjp) : NULL;
  cx_instr **v = cx_calloc((size_t)(2 * n + 1), sizeof *v);
  if (!body || !v) {
    cx_free(v);
    return e->st != CXLA_OK ? e->st : (e->st = cx_oom(g->m->ctx));
  }
  v[0] = gr_scalar(e, CXLA_S32, (double)(tp->trips - 1));
  for (int j = 0; j < n; j++) {
    v[1 + j] = gr_gte(e, ctv, j);
    v[n + 1 + j] = gr_gte(e, tp->saver, n + 1 + j);
  }
  cx_instr *back = gr_while(e, gr_tuple(e, 2 * n + 1, v), cond, body);
  for (int j = 0; j < n; j++) v[j] = gr_gte(e, back, 1 + j);
  gr_acc(s, in->ops[0], gr_tuple(e, n, v));
  cx_free(v);
  return e->st;
}
