/* train_loop.c — K training steps in one execution (steps_per_call K > 1): the step becomes
 * the body of a while loop over the state
 *   (k: s32[], carried arrays (weights, optimizer state)..., batch streams..., losses: T[K])
 * whose trip k reads slice k of every stream (dynamic-slice at k, leading dimension dropped),
 * runs the step on it, and writes its loss at k (dynamic-update-slice). The counter starts
 * at the constant 0, steps by 1 and is compared LT with the constant K: the pattern whose trip
 * count is known when compiling, so backends keep the loop native. The streams pass through
 * the loop unchanged, so the batch stays where the caller put it; so does a learning rate
 * given as a parameter, which every trip reads whole. */
#include "grad/train_int.h"

/* p's parameters (ENTRY of the new module): clones of S's, a stream with a leading dim K. */
static cx_instr *entry_param(gr_em *e, cx_instr *src, int stream, int64_t K) {
  cx_instr *p = cx_instr_clone(e->c, src, NULL);
  if (!p) {
    e->st = CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  if (stream) {
    int64_t dims[CXLA_MAX_RANK];
    dims[0] = K;
    for (int d = 0; d < src->shape.rank; d++) dims[1 + d] = src->shape.dims[d];
    p->shape = cx_shape_array(src->shape.type, src->shape.rank + 1, dims);
  }
  return p;
}

/* The loop's condition: k < K. */
static cxla_status make_cond(gr_module *g, const cx_shape *state, int64_t K, cx_comp **out) {
  cx_comp *c = gr_comp_begin(g, "train_loop_cond", "");
  if (!c) return CXLA_ERR_OUT_OF_MEMORY;
  gr_em e = {g, c, {0, 0}, CXLA_OK};
  cx_instr *p = gr_param(&e, 0, state);
  cx_instr *lt = gr_cmp(&e, gr_gte(&e, p, 0), gr_scalar(&e, CXLA_S32, (double)K), CXLA_LT);
  CX_TRY(e.st);
  *out = c;
  return gr_comp_end(g, c, lt);
}

/* S's parameters become elements of the loop state p; its ROOT the next state. */
static cxla_status make_body(gr_module *g, cx_comp *S, cx_instr *const *old, int np, int ncarry, int nfixed,
                             const cx_shape *state) {
  gr_em e = {g, S, S->loc, CXLA_OK};
  cx_instr *p = gr_param(&e, 0, state), *k = gr_gte(&e, p, 0);
  cx_instr **next = cx_calloc((size_t)np + 2, sizeof *next);
  uint8_t *drop = NULL;
  if (!next) e.st = cx_oom(g->m->ctx);
  cx_instr *zero = gr_scalar(&e, CXLA_S32, 0);
  for (int i = 0; e.st == CXLA_OK && i < np; i++) {
    cx_instr *v = gr_gte(&e, p, 1 + i);
    if (i >= np - nfixed) {
      next[1 + i] = v; /* passed on unchanged */
    } else if (i >= ncarry) { /* slice k of the stream, without its leading dimension */
      next[1 + i] = v;
      const cx_shape *s = &old[i]->shape;
      cx_instr *starts[CXLA_MAX_RANK];
      int64_t sizes[CXLA_MAX_RANK];
      starts[0] = k;
      sizes[0] = 1;
      for (int d = 0; d < s->rank; d++) {
        starts[1 + d] = zero;
        sizes[1 + d] = s->dims[d];
      }
      v = gr_reshape(&e, gr_dynamic_slice(&e, v, starts, sizes), s->rank, s->dims);
    }
    if (v) cx_comp_replace_uses(S, old[i], v);
  }
  cx_instr *root = S->root;
  if (e.st == CXLA_OK && !(drop = cx_calloc((size_t)S->ninstrs, 1))) e.st = cx_oom(g->m->ctx);
  if (e.st == CXLA_OK) {
    for (int i = 0; i < S->ninstrs; i++) drop[i] = S->instrs[i]->op == CX_OP_PARAMETER && S->instrs[i] != p;
    cx_comp_remove_instrs(S, drop);
    next[0] = gr_bin(&e, CX_OP_ADD, k, gr_scalar(&e, CXLA_S32, 1));
    for (int i = 0; i < ncarry; i++) next[1 + i] = root->ops[1 + i];
    cx_instr *loss = root->ops[0];
    int64_t one = 1;
    cx_instr *at = k;
    next[1 + np] = gr_dynamic_update_slice(&e, gr_gte(&e, p, 1 + np), gr_reshape(&e, loss, 1, &one), &at);
  }
  cx_instr *r = e.st == CXLA_OK ? gr_tuple(&e, np + 2, next) : NULL;
  cx_free(next);
  cx_free(drop);
  CX_TRY(e.st);
  S->root = r;
  cx_comp_remove_dead(S);
  return gr_comp_end(g, S, r);
}

cxla_status tr_loop(gr_module *g, cx_comp *S, int ncarry, int nfixed, int64_t K) {
  cx_module *m = g->m;
  int np = S->nparams;
  cx_instr **old = cx_calloc((size_t)np + 1, sizeof *old), **init = cx_calloc((size_t)np + 2, sizeof *init);
  cx_instr **res = cx_calloc((size_t)ncarry + 1, sizeof *res);
  const char *name = S->name, *body_name = cx_module_unique_name(m, "train_step");
  cx_comp *E = cx_comp_new(m, name), *cond = NULL;
  gr_em e = {g, E, S->loc, CXLA_OK};
  if (!old || !init || !res || !body_name || !E) e.st = cx_oom(m->ctx);
  cx_instr *loss = S->root->ops[0];
  for (int i = 0; e.st == CXLA_OK && i < np; i++) {
    old[i] = S->params[i];
    init[1 + i] = entry_param(&e, old[i], i >= ncarry && i < np - nfixed, K);
  }
  if (e.st == CXLA_OK) {
    E->loc = S->loc;
    S->name = body_name;
    init[0] = gr_scalar(&e, CXLA_S32, 0);
    cx_shape ls = cx_shape_array(loss->shape.type, 1, &K);
    init[1 + np] = gr_zeros(&e, &ls);
  }
  cx_instr *state = e.st == CXLA_OK ? gr_tuple(&e, np + 2, init) : NULL;
  if (state) e.st = make_cond(g, &state->shape, K, &cond);
  if (e.st == CXLA_OK) e.st = make_body(g, S, old, np, ncarry, nfixed, &state->shape);
  cx_instr *w = e.st == CXLA_OK ? gr_while(&e, state, cond, S) : NULL;
  if (w) {
    res[0] = gr_gte(&e, w, 1 + np);
    for (int i = 0; i < ncarry; i++) res[1 + i] = gr_gte(&e, w, 1 + i);
  }
  cx_instr *root = w ? gr_tuple(&e, ncarry + 1, res) : NULL;
  cx_free(old);
  cx_free(init);
  cx_free(res);
  CX_TRY(e.st);
  E->is_entry = 1;
  return gr_comp_end(g, E, root);
}
