/* grad.c — cx_grad_module: checks the request, differentiates a copy of the module's ENTRY
 * into a new ENTRY that returns (value, gradients...), and leaves a module that verifies and
 * prints like any other. */
#include <string.h>
#include "grad/grad_int.h"

static cxla_status check_request(cx_module *m, const int *wrt, int nwrt) {
  cxla_context *ctx = m->ctx;
  cx_comp *E = m->entry;
  char buf[256];
  if (!E || !E->root) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "grad: the module has no ENTRY computation");
  const cx_shape *r = &E->root->shape;
  if (r->type == CXLA_TUPLE || r->rank != 0 || !cx_type_is_float(r->type))
    return cx_error_at(m, E->root->loc, CXLA_ERR_INVALID_ARGUMENT,
                       "grad: ENTRY must return a scalar float (f16, bf16, f32 or f64), its ROOT '%s' is %s",
                       E->root->name ? E->root->name : "?", cx_shape_str(r, buf, sizeof buf));
  if (nwrt < 0 || (nwrt > 0 && !wrt))
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "grad: %d parameters to differentiate with respect to%s", nwrt,
                    nwrt < 0 ? "" : ", but the list is NULL");
  if (!cx_comp_index_params(E)) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "grad: ENTRY's parameters are not numbered 0..n-1");
  for (int i = 0; i < nwrt; i++) {
    if (wrt[i] < 0 || wrt[i] >= E->nparams)
      return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "grad: no parameter %d (ENTRY takes %d)", wrt[i], E->nparams);
    const cx_instr *p = E->params[wrt[i]];
    if (p->shape.type == CXLA_TUPLE || !cx_type_is_float(p->shape.type))
      return cx_error_at(m, p->loc, CXLA_ERR_INVALID_ARGUMENT,
                         "grad: parameter %d '%s' is %s: only float arrays have gradients", wrt[i],
                         p->name ? p->name : "?", cx_shape_str(&p->shape, buf, sizeof buf));
  }
  return CXLA_OK;
}

/* The new ENTRY: the old one's instructions (same names), then the reverse sweep. */
static cxla_status build_entry(gr_state *s, const int *wrt, int nwrt, cx_instr **root) {
  cx_comp *E = s->src;
  for (int i = 0; i < E->nparams; i++) {
    cx_instr *p = E->params[i];
    if (!(s->prim[p->id] = cx_instr_clone(s->e.c, p, NULL))) return s->e.st = CXLA_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < nwrt; i++) s->active[E->params[wrt[i]]->id] = 1;
  CX_TRY(gr_forward(s));
  s->e.loc = E->root->loc;
  gr_acc(s, E->root, gr_scalar(&s->e, E->root->shape.type, 1));
  CX_TRY(gr_backward(s));
  cx_instr **v = cx_calloc((size_t)nwrt + 1, sizeof *v);
  if (!v) return s->e.st = cx_oom(s->e.g->m->ctx);
  v[0] = s->prim[E->root->id];
  for (int i = 0; i < nwrt; i++) {
    const cx_instr *p = E->params[wrt[i]];
    v[1 + i] = gr_ct_value(&s->e, s->ct[p->id], &p->shape);
  }
  *root = gr_tuple(&s->e, nwrt + 1, v);
  cx_free(v);
  return s->e.st;
}

/* The header's entry layout and aliasing describe the old ENTRY's result: drop them. */
static void drop_stale_header(cx_module *m) {
  int n = 0;
  for (int i = 0; i < m->nraw; i++)
    if (strcmp(m->raw[i].key, "entry_computation_layout") && strcmp(m->raw[i].key, "input_output_alias"))
      m->raw[n++] = m->raw[i];
  m->nraw = n;
}

/* E2 takes E's place as ENTRY, after every computation made on the way (its callees). */
static cxla_status install_entry(gr_module *g, cx_comp *E, cx_comp *E2, cx_instr *root) {
  cx_module *m = g->m;
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i] != E) m->comps[n++] = m->comps[i];
  m->ncomps = n;
  m->entry = NULL;
  E->is_entry = 0;
  E2->is_entry = 1;
  CX_TRY(gr_comp_end(g, E2, root));
  cx_module_remove_unreachable(m);
  drop_stale_header(m);
  return CXLA_OK;
}

cxla_status cx_grad_module(cx_module *m, const int *wrt, int nwrt, cx_module **out) {
  if (!out) return CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  CX_TRY(check_request(m, wrt, nwrt));
  cx_module *gm = cx_module_clone(m);
  if (!gm) return CXLA_ERR_OUT_OF_MEMORY;
  cx_module_reserve_names(gm);
  gr_module g = {gm, {0}, 0, 0, NULL};
  cx_arena_init(&g.arena);
  cx_comp *E = gm->entry, *E2 = cx_comp_new(gm, E->name);
  cxla_status st = E2 && cx_comp_index_params(E) ? CXLA_OK : cx_oom(gm->ctx);
  cx_instr *root = NULL;
  if (st == CXLA_OK) {
    E2->loc = E->loc;
    gr_state s;
    st = gr_state_init(&s, &g, E, E2, 1);
    if (st == CXLA_OK) st = build_entry(&s, wrt, nwrt, &root);
    gr_state_free(&s);
  }
  if (st == CXLA_OK) st = install_entry(&g, E, E2, root);
  cx_arena_free(&g.arena);
  cx_free(g.cache);
  return gr_module_finish(gm, st, "grad: the gradient module", out);
}

cxla_status gr_module_finish(cx_module *gm, cxla_status st, const char *what, cx_module **out) {
  cxla_status vs = st == CXLA_OK ? cx_verify_module(gm) : CXLA_OK;
  if (vs == CXLA_ERR_OUT_OF_MEMORY) {
    st = vs;
  } else if (vs != CXLA_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cx_errmsg(gm->ctx));
    st = cx_error(gm->ctx, CXLA_ERR_INTERNAL, "%s does not verify (a bug in cxla): %s", what, msg);
  }
  if (st != CXLA_OK) {
    cx_module_free(gm);
    return st;
  }
  *out = gm;
  return CXLA_OK;
}
