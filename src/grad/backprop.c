/* backprop.c — differentiating one computation (see grad_int.h): the tables of a state, the
 * forward copy, the reverse sweep through the rule table, cotangent trees, and the vjp
 * computations that call, conditional and while loops use. */
#include <stdarg.h>
#include <string.h>
#include "grad/grad_int.h"

int gr_has_float(const cx_shape *sh) {
  if (sh->type != CXLA_TUPLE) return cx_type_is_float(sh->type);
  for (int i = 0; i < sh->ntuple; i++)
    if (gr_has_float(&sh->tuple[i])) return 1;
  return 0;
}

cxla_status gr_refuse(gr_state *s, const cx_instr *in, const char *fmt, ...) {
  if (s->e.st != CXLA_OK) return s->e.st;
  char why[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  s->e.st = cx_error_at(s->e.g->m, in->loc, CXLA_ERR_UNSUPPORTED, "grad: %s '%s': %s", cx_op_name(in->op),
                        in->name ? in->name : "?", why);
  return s->e.st;
}

/* ---- cotangent trees ---- */

static int ensure(gr_state *s, gr_ct *t, const cx_shape *sh) {
  if (sh->type != CXLA_TUPLE || t->e || !sh->ntuple) return 1;
  t->e = cx_arena_alloc(&s->e.g->arena, sizeof *t->e * (size_t)sh->ntuple);
  if (!t->e) {
    if (s->e.st == CXLA_OK) s->e.st = cx_oom(s->e.g->m->ctx);
    return 0;
  }
  t->n = sh->ntuple;
  return 1;
}

static gr_ct *ct_of(gr_state *s, const cx_instr *x) {
  gr_ct **t = &s->ct[x->id];
  if (!*t && !(*t = cx_arena_alloc(&s->e.g->arena, sizeof **t))) {
    if (s->e.st == CXLA_OK) s->e.st = cx_oom(s->e.g->m->ctx);
    return NULL;
  }
  return ensure(s, *t, &x->shape) ? *t : NULL;
}

static void add_leaf(gr_state *s, gr_ct *t, const cx_shape *sh, cx_instr *v) {
  v = gr_convert(&s->e, v, sh->type); /* a wider cotangent (bf16 dot into f32) comes back narrow */
  if (v && !cx_shape_same_dims(&v->shape, sh) && s->e.st == CXLA_OK) {
    char a[128], b[128];
    s->e.st = cx_error(s->e.g->m->ctx, CXLA_ERR_INTERNAL, "grad: a cotangent %s reached a value of shape %s",
                       cx_shape_str(&v->shape, a, sizeof a), cx_shape_str(sh, b, sizeof b));
  }
  t->v = t->v ? gr_bin(&s->e, CX_OP_ADD, t->v, v) : v;
}

static void acc_value(gr_state *s, gr_ct *t, const cx_shape *sh, cx_instr *v) {
  if (!v || !t) return;
  if (sh->type == CXLA_TUPLE) {
    if (!ensure(s, t, sh)) return;
    for (int i = 0; i < sh->ntuple; i++)
      if (gr_has_float(&sh->tuple[i])) acc_value(s, &t->e[i], &sh->tuple[i], gr_gte(&s->e, v, i));
  } else if (cx_type_is_float(sh->type)) {
    add_leaf(s, t, sh, v);
  }
}

static void acc_tree(gr_state *s, gr_ct *t, const cx_shape *sh, const gr_ct *src) {
  if (!src || !t) return;
  if (sh->type == CXLA_TUPLE) {
    if (!src->e || !ensure(s, t, sh)) return;
    for (int i = 0; i < sh->ntuple; i++) acc_tree(s, &t->e[i], &sh->tuple[i], &src->e[i]);
  } else if (src->v) {
    add_leaf(s, t, sh, src->v);
  }
}

void gr_acc(gr_state *s, const cx_instr *x, cx_instr *v) {
  if (v && s->active[x->id]) acc_value(s, ct_of(s, x), &x->shape, v);
}

void gr_acc_tree(gr_state *s, const cx_instr *x, int index, const gr_ct *t) {
  if (!t || !s->active[x->id]) return;
  gr_ct *root = ct_of(s, x);
  if (!root) return;
  if (index < 0) acc_tree(s, root, &x->shape, t);
  else if (x->shape.type == CXLA_TUPLE && index < x->shape.ntuple)
    acc_tree(s, &root->e[index], &x->shape.tuple[index], t);
}

static int nonzero(const gr_ct *t, const cx_shape *sh) {
  if (!t) return 0;
  if (sh->type != CXLA_TUPLE) return t->v != NULL;
  for (int i = 0; t->e && i < sh->ntuple; i++)
    if (nonzero(&t->e[i], &sh->tuple[i])) return 1;
  return 0;
}

cx_instr *gr_ct_value(gr_em *e, const gr_ct *t, const cx_shape *sh) {
  if (sh->type != CXLA_TUPLE) return t && t->v ? t->v : gr_zeros(e, sh);
  cx_instr **v = cx_calloc((size_t)(sh->ntuple ? sh->ntuple : 1), sizeof *v);
  if (!v) {
    if (e->st == CXLA_OK) e->st = cx_oom(e->g->m->ctx);
    return NULL;
  }
  for (int i = 0; i < sh->ntuple; i++) v[i] = gr_ct_value(e, t && t->e ? &t->e[i] : NULL, &sh->tuple[i]);
  cx_instr *r = gr_tuple(e, sh->ntuple, v);
  cx_free(v);
  return r;
}

/* ---- a state ---- */

cxla_status gr_state_init(gr_state *s, gr_module *g, cx_comp *src, cx_comp *dst, int keep_names) {
  memset(s, 0, sizeof *s);
  s->e = (gr_em){g, dst, {0, 0}, CXLA_OK};
  s->src = src;
  s->keep_names = keep_names;
  int max = 0;
  for (int i = 0; i < src->ninstrs; i++)
    if (src->instrs[i]->id > max) max = src->instrs[i]->id;
  s->nids = max + 1;
  s->prim = cx_calloc((size_t)s->nids, sizeof *s->prim);
  s->ct = cx_calloc((size_t)s->nids, sizeof *s->ct);
  s->active = cx_calloc((size_t)s->nids, 1);
  s->tape = cx_calloc((size_t)s->nids, sizeof *s->tape);
  if (!s->prim || !s->ct || !s->active || !s->tape) return s->e.st = cx_oom(g->m->ctx);
  return CXLA_OK;
}

void gr_state_free(gr_state *s) {
  cx_free(s->prim);
  cx_free(s->ct);
  cx_free(s->active);
  cx_free(s->tape);
}

cxla_status gr_copy_instr(gr_state *s, cx_instr *in) {
  cx_instr **ops = cx_calloc((size_t)(in->nops ? in->nops : 1), sizeof *ops);
  if (!ops) return s->e.st = cx_oom(s->e.g->m->ctx);
  for (int k = 0; k < in->nops; k++) ops[k] = gr_x(s, in, k);
  cx_instr *c = cx_instr_clone(s->e.c, in, ops);
  cx_free(ops);
  if (c && !s->keep_names) c->name = cx_module_unique_name(s->e.g->m, cx_op_name(in->op));
  if (!c || !c->name) return s->e.st = CXLA_ERR_OUT_OF_MEMORY;
  s->prim[in->id] = c;
  return CXLA_OK;
}

/* Copies every instruction but the parameters (which the caller mapped) into the new
 * computation, in order, and marks what depends on an active parameter. */
cxla_status gr_forward(gr_state *s) {
  for (int i = 0; i < s->src->ninstrs; i++) {
    cx_instr *in = s->src->instrs[i];
    if (in->op == CX_OP_PARAMETER) continue;
    int act = 0;
    for (int k = 0; k < in->nops; k++) act |= s->active[in->ops[k]->id];
    s->active[in->id] = act && gr_has_float(&in->shape);
    if (s->active[in->id] && in->op == CX_OP_WHILE) CX_TRY(gr_forward_while(s, in));
    else if (s->active[in->id] && in->op == CX_OP_SORT) CX_TRY(gr_forward_sort(s, in));
    else CX_TRY(gr_copy_instr(s, in));
  }
  return s->e.st;
}

/* Visits the source in reverse; every active instruction holding a cotangent hands it on. */
cxla_status gr_backward(gr_state *s) {
  for (int i = s->src->ninstrs - 1; i >= 0 && s->e.st == CXLA_OK; i--) {
    cx_instr *in = s->src->instrs[i];
    const gr_ct *t = s->ct[in->id];
    if (in->op == CX_OP_PARAMETER || !s->active[in->id] || !nonzero(t, &in->shape)) continue;
    gr_rule rule = gr_rule_of(in->op);
    s->e.loc = in->loc;
    if (!rule) return gr_refuse(s, in, "no gradient rule for %s (docs/grad.md lists the differentiable ops)",
                                cx_op_name(in->op));
    CX_TRY(rule(s, in, t));
  }
  return s->e.st;
}

/* ---- vjp computations ---- */

static cxla_status build_vjp(gr_state *s, cx_instr **root) {
  cx_comp *src = s->src;
  if (!cx_comp_index_params(src))
    return s->e.st = cx_error(s->e.g->m->ctx, CXLA_ERR_INTERNAL, "grad: %s: bad parameter numbers", src->name);
  int n = src->nparams;
  for (int i = 0; i < n; i++) {
    cx_instr *p = src->params[i];
    s->prim[p->id] = gr_param(&s->e, i, &p->shape);
    s->active[p->id] = (uint8_t)gr_has_float(&p->shape);
  }
  CX_TRY(gr_forward(s));
  s->e.loc = src->root->loc;
  gr_acc(s, src->root, gr_param(&s->e, n, &src->root->shape));
  CX_TRY(gr_backward(s));
  cx_instr **v = cx_calloc((size_t)(n ? n : 1), sizeof *v);
  if (!v) return s->e.st = cx_oom(s->e.g->m->ctx);
  for (int i = 0; i < n; i++) v[i] = gr_ct_value(&s->e, s->ct[src->params[i]->id], &src->params[i]->shape);
  *root = gr_tuple(&s->e, n, v);
  cx_free(v);
  return s->e.st;
}

cxla_status gr_vjp_comp(gr_module *g, cx_comp *src, cx_comp **out) {
  if ((*out = gr_cached_vjp(g, src))) return CXLA_OK;
  cx_comp *dst = gr_comp_begin(g, "vjp_", src->name);
  if (!dst) return CXLA_ERR_OUT_OF_MEMORY;
  dst->loc = src->loc;
  gr_state s;
  cx_instr *root = NULL;
  cxla_status st = gr_state_init(&s, g, src, dst, 0);
  if (st == CXLA_OK) st = build_vjp(&s, &root);
  gr_state_free(&s);
  if (st == CXLA_OK) st = gr_comp_end(g, dst, root);
  if (st == CXLA_OK && !gr_remember_vjp(g, src, dst)) st = cx_oom(g->m->ctx);
  if (st == CXLA_OK) *out = dst;
  return st;
}
