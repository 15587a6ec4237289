/* train_step.c — cx_train_step_module: checks the request, differentiates the module
 * (cx_grad_module), then edits the gradient module's ENTRY into the step (train_int.h): the
 * parameters renumbered as cxla.h lays them out, the optimizer state (and the learning rate,
 * when it is a parameter) added, the update of
 * every weight appended (optimizer.c), the ROOT (loss, new weights..., new state...), every
 * weight and state parameter aliased to its new value in the header, and for K > 1 the loop
 * around it (train_loop.c). */
#include <math.h>
#include <string.h>
#include "grad/train_int.h"

static cxla_status bad(cx_module *m, const char *fmt, double v) {
  return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, fmt, v);
}

static cxla_status check_optimizer(cx_module *m, const cxla_optimizer *o) {
  if (!o) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: the optimizer is NULL");
  if (o->kind != CXLA_OPTIMIZER_SGD && o->kind != CXLA_OPTIMIZER_ADAM)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: unknown optimizer kind %d (0: SGD, 1: Adam)", (int)o->kind);
  if (o->learning_rate_input != 0 && o->learning_rate_input != 1)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "train-step: learning_rate_input %d: expected 0 (a constant) or 1 (the last parameter)",
                    o->learning_rate_input);
  if (!o->learning_rate_input && (!isfinite(o->learning_rate) || o->learning_rate < 0))
    return bad(m, "train-step: learning rate %g: expected a finite number >= 0", o->learning_rate);
  if (o->steps_per_call < 1)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: %d steps per call: expected K >= 1", o->steps_per_call);
  if (o->replicas < 0 || o->replicas > 1024)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "train-step: %d replicas: expected 0 to 1024 (0 or 1: not data-parallel)", o->replicas);
  if (o->kind == CXLA_OPTIMIZER_SGD) {
    if (!isfinite(o->momentum) || o->momentum < 0)
      return bad(m, "train-step: momentum %g: expected a finite number >= 0 (0: none)", o->momentum);
    if (o->nesterov && o->momentum == 0)
      return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: nesterov needs a momentum > 0");
    return CXLA_OK;
  }
  if (!(o->beta1 >= 0 && o->beta1 < 1)) return bad(m, "train-step: Adam's beta1 %g: expected 0 <= beta1 < 1", o->beta1);
  if (!(o->beta2 >= 0 && o->beta2 < 1)) return bad(m, "train-step: Adam's beta2 %g: expected 0 <= beta2 < 1", o->beta2);
  if (!isfinite(o->epsilon) || o->epsilon < 0)
    return bad(m, "train-step: Adam's epsilon %g: expected a finite number >= 0", o->epsilon);
  return CXLA_OK;
}

/* What cx_grad_module would also refuse, said for a step; plus repeats and the batch's shape. */
static cxla_status check_request(cx_module *m, const int *wrt, int nwrt, const cxla_optimizer *o) {
  CX_TRY(check_optimizer(m, o));
  cx_comp *E = m->entry;
  char buf[256];
  if (!E || !E->root) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: the module has no ENTRY computation");
  if (!cx_comp_index_params(E))
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: ENTRY's parameters are not numbered 0..n-1");
  if (nwrt < 1 || !wrt)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: %d weights%s: expected at least one parameter to train",
                    nwrt, nwrt > 0 ? " in a NULL list" : "");
  for (int i = 0; i < nwrt; i++) {
    if (wrt[i] < 0 || wrt[i] >= E->nparams)
      return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: no parameter %d (ENTRY takes %d)", wrt[i], E->nparams);
    for (int j = 0; j < i; j++)
      if (wrt[j] == wrt[i])
        return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "train-step: parameter %d is listed twice among the weights", wrt[i]);
    const cx_instr *p = E->params[wrt[i]];
    if (p->shape.type == CXLA_TUPLE || !cx_type_is_float(p->shape.type))
      return cx_error_at(m, p->loc, CXLA_ERR_INVALID_ARGUMENT,
                         "train-step: parameter %d '%s' is %s: only float arrays can be trained", wrt[i],
                         p->name ? p->name : "?", cx_shape_str(&p->shape, buf, sizeof buf));
  }
  if (o->steps_per_call == 1) return CXLA_OK;
  for (int i = 0; i < E->nparams; i++) {
    const cx_instr *p = E->params[i];
    int is_weight = 0;
    for (int j = 0; j < nwrt; j++) is_weight |= wrt[j] == i;
    if (!is_weight && (!cx_type_is_array(p->shape.type) || p->shape.rank >= CXLA_MAX_RANK))
      return cx_error_at(m, p->loc, CXLA_ERR_INVALID_ARGUMENT,
                         "train-step: parameter %d '%s' is %s: with %d steps per call every batch parameter gets a "
                         "leading dimension, so it must be an array of rank < %d",
                         i, p->name ? p->name : "?", cx_shape_str(&p->shape, buf, sizeof buf), o->steps_per_call,
                         CXLA_MAX_RANK);
  }
  return CXLA_OK;
}

/* The parameter instructions first, in number order (the printed ENTRY lists them so); the
 * rest keep their order. */
static cxla_status params_first(cx_comp *c) {
  cx_instr **v = cx_malloc(sizeof *v * (size_t)(c->ninstrs ? c->ninstrs : 1));
  if (!v) return cx_oom(c->module->ctx);
  int n = 0;
  for (int i = 0; i < c->nparams; i++) v[n++] = c->params[i];
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op != CX_OP_PARAMETER) v[n++] = c->instrs[i];
  memcpy(c->instrs, v, sizeof *v * (size_t)n);
  c->ninstrs = n;
  cx_free(v);
  return CXLA_OK;
}

/* A state parameter like weight w (or s32[] for count), named "<prefix>.<N>". */
static cx_instr *state_param(gr_em *e, int index, const cx_shape *s, const char *prefix) {
  cx_instr *p = gr_param(e, index, s);
  const char *name = p ? cx_module_unique_name(e->c->module, prefix) : NULL;
  if (p && (!name || !cx_instr_set_name(p, name))) {
    e->st = CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return p;
}

/* E (the gradient ENTRY, ROOT (loss, gradients...)) becomes the step. */
static cxla_status build_step(gr_module *g, const int *wrt, int nwrt, const cxla_optimizer *o, int *ncarry) {
  cx_comp *E = g->m->entry;
  cx_instr *root = E->root;
  int np = E->nparams, per = tr_state_per_weight(o), nscal = tr_state_scalars(o);
  int nstate = nwrt * per + nscal, nout = 1 + nwrt + nstate;
  cx_instr **old = cx_calloc((size_t)np + 1, sizeof *old), **state = cx_calloc((size_t)nstate + 1, sizeof *state);
  cx_instr **out = cx_calloc((size_t)nout, sizeof *out);
  gr_em e = {g, E, E->root->loc, CXLA_OK};
  *ncarry = nwrt + nstate;
  if (!old || !state || !out) {
    e.st = cx_oom(g->m->ctx);
    goto done;
  }
  for (int i = 0; i < np; i++) old[i] = E->params[i];
  /* weights first, in wrt's order; the batch after the state, in its order */
  int next = nwrt + nstate;
  for (int i = 0; i < np; i++) {
    int w = -1;
    for (int j = 0; j < nwrt; j++)
      if (wrt[j] == i) w = j;
    old[i]->a.index = w >= 0 ? w : next++;
  }
  static const char *const prefix[2][2] = {{"velocity", ""}, {"adam_mu", "adam_nu"}};
  int adam = o->kind == CXLA_OPTIMIZER_ADAM;
  for (int k = 0; k < per; k++)
    for (int i = 0; i < nwrt; i++)
      state[k * nwrt + i] = state_param(&e, nwrt + k * nwrt + i, &old[wrt[i]]->shape, prefix[adam][k]);
  tr_opt t = {&e, o, NULL, NULL, NULL, {{NULL}}};
  if (o->learning_rate_input) { /* last, after the batch: f64 when a weight is f64 */
    int f64 = 0;
    for (int i = 0; i < nwrt; i++) f64 |= old[wrt[i]]->shape.type == CXLA_F64;
    cx_shape s = cx_shape_scalar(f64 ? CXLA_F64 : CXLA_F32);
    t.learning_rate = state_param(&e, np + nstate, &s, "learning_rate");
  }
  if (nscal) {
    cx_shape s32 = cx_shape_scalar(CXLA_S32);
    t.count = state[nstate - 1] = state_param(&e, nwrt + nwrt * per, &s32, "adam_count");
    t.next_count = gr_bin(&e, CX_OP_ADD, t.count, gr_scalar(&e, CXLA_S32, 1));
    out[nout - 1] = t.next_count;
  }
  /* the loss and the gradients, replaced by their mean over the replicas when data-parallel;
   * out[0..nwrt] holds them until the update, which writes the new weights over them */
  for (int i = 0; i <= nwrt; i++) out[i] = root->ops[i];
  if (e.st == CXLA_OK) tr_replica_mean(&e, 1 + nwrt, out, o->replicas);
  for (int i = 0; e.st == CXLA_OK && i < nwrt; i++) {
    cx_instr *cur[2] = {NULL, NULL}, *upd[2] = {NULL, NULL};
    for (int k = 0; k < per; k++) cur[k] = state[k * nwrt + i];
    tr_update(&t, old[wrt[i]], out[1 + i], cur, &out[1 + i], upd);
    for (int k = 0; k < per; k++) out[1 + nwrt + k * nwrt + i] = upd[k];
  }
  cx_instr *r = e.st == CXLA_OK ? gr_tuple(&e, nout, out) : NULL;
  if (r) {
    E->root = r;
    cx_comp_remove_dead(E);
    if (!cx_comp_index_params(E)) e.st = cx_error(g->m->ctx, CXLA_ERR_INTERNAL, "train-step: bad parameter numbers");
  }
  if (e.st == CXLA_OK) e.st = params_first(E);
  if (e.st == CXLA_OK) e.st = cx_comp_resort(E, "train-step");
done:
  cx_free(old);
  cx_free(state);
  cx_free(out);
  return e.st;
}

/* input_output_alias={ {1}: (0, {}, may-alias), ... }: result element 1 + i is parameter i's
 * new value. */
static cxla_status alias_header(cx_module *m, int ncarry) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "{ ");
  for (int i = 0; i < ncarry; i++) cx_sb_printf(&sb, "%s{%d}: (%d, {}, may-alias)", i ? ", " : "", 1 + i, i);
  cx_sb_puts(&sb, " }");
  char *v = cx_sb_take(&sb);
  int ok = v && cx_attr_add_raw(m, &m->nraw, &m->raw, "input_output_alias", v);
  cx_free(v);
  return ok ? CXLA_OK : cx_oom(m->ctx);
}

/* The ENTRY leaves the module's list so that the loop can make it a body. */
static cx_comp *detach_entry(cx_module *m) {
  cx_comp *E = m->entry;
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i] != E) m->comps[n++] = m->comps[i];
  m->ncomps = n;
  m->entry = NULL;
  E->is_entry = 0;
  return E;
}

/* The ENTRY last again, after the reducers the step added (callees come before callers). */
static void entry_last(cx_module *m) {
  for (int i = 0; i + 1 < m->ncomps; i++)
    if (m->comps[i] == m->entry) {
      memmove(m->comps + i, m->comps + i + 1, sizeof *m->comps * (size_t)(m->ncomps - i - 1));
      m->comps[m->ncomps - 1] = m->entry;
      return;
    }
}

cxla_status cx_train_step_module(cx_module *m, const int *wrt, int nwrt, const cxla_optimizer *o, cx_module **out) {
  if (!out) return CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  CX_TRY(check_request(m, wrt, nwrt, o));
  cx_module *gm = NULL;
  CX_TRY(cx_grad_module(m, wrt, nwrt, &gm));
  gr_module g = {gm, {0}, 0, 0, NULL};
  cx_arena_init(&g.arena);
  int ncarry = 0;
  cxla_status st = build_step(&g, wrt, nwrt, o, &ncarry);
  if (st == CXLA_OK) entry_last(gm);
  if (st == CXLA_OK && o->steps_per_call > 1)
    st = tr_loop(&g, detach_entry(gm), ncarry, o->learning_rate_input, o->steps_per_call);
  if (st == CXLA_OK) st = alias_header(gm, ncarry);
  cx_arena_free(&g.arena);
  cx_free(g.cache);
  return gr_module_finish(gm, st, "train-step: the step module", out);
}
