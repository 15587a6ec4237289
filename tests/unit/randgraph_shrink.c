/* randgraph_shrink.c — greedy shrinking of a failing module. Each candidate is the current
 * text with one edit: the ENTRY root tuple cut to one element or one element fewer; an ENTRY
 * instruction made the root (everything after it disappears) or replaced by a new parameter
 * (everything above it disappears); an instruction replaced by an operand of the same shape (a
 * while loop by its initial state, a unary op by its input, a get-tuple-element of a tuple by
 * the element) or by a constant. After an edit dead code, unused parameters and unreachable computations go away.
 * A candidate is kept if it parses, verifies, still analyses as comparable (no bad output)
 * and still fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "randgraph.h"
#include "ir/edit.h"
#include "ir/verify.h"
#include "ir/types.h"

typedef enum { E_ROOT_ONE, E_ROOT_DROP, E_REROOT, E_CUT, E_BYPASS, E_CONST, E_COUNT } edit_kind;

typedef struct edit {
  edit_kind kind;
  int comp, instr, arg; /* arg: root element or operand number */
} edit;

/* Removes ENTRY parameters nothing uses and renumbers the rest; params follows. */
static void drop_unused_params(cx_comp *e, rg_param *params, int *nparams) {
  int n = e->ninstrs, keep = 0;
  uint8_t *drop = cx_calloc((size_t)(n ? n : 1), 1);
  int *used = cx_calloc((size_t)(*nparams + 1), sizeof *used);
  if (!drop || !used) { cx_free(drop); cx_free(used); return; }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < e->instrs[i]->nops; j++)
      if (e->instrs[i]->ops[j]->op == CX_OP_PARAMETER) used[e->instrs[i]->ops[j]->a.index] = 1;
  if (e->root->op == CX_OP_PARAMETER) used[e->root->a.index] = 1;
  int *renum = cx_calloc((size_t)(*nparams + 1), sizeof *renum);
  if (renum) {
    for (int p = 0; p < *nparams; p++) {
      renum[p] = used[p] ? keep : -1;
      if (used[p]) params[keep++] = params[p];
    }
    for (int i = 0; i < n; i++) {
      cx_instr *in = e->instrs[i];
      if (in->op != CX_OP_PARAMETER) continue;
      if (renum[in->a.index] < 0) drop[i] = 1;
      else in->a.index = renum[in->a.index];
    }
    cx_comp_remove_instrs(e, drop);
    *nparams = keep;
  }
  cx_free(renum);
  cx_free(drop);
  cx_free(used);
}

static cx_instr *const_like(cx_comp *c, const cx_instr *in, rg_val v) {
  cxla_type t = in->shape.type;
  double x = v.lo <= 0.5 && v.hi >= 0.5 && cx_type_is_float(t) ? 0.5 : v.lo <= 1 && v.hi >= 1 ? 1 : isfinite(v.lo) ? v.lo : 0;
  cxla_literal *lit = cxla_literal_create(c->module->ctx, t, 0, NULL);
  if (!lit) return NULL;
  cxla_literal_set_f64(lit, 0, x);
  cx_shape s = cx_shape_scalar(t);
  cx_instr *k = cx_instr_add(c, CX_OP_CONSTANT, &s, 0, NULL, in->loc);
  if (!k || !cx_module_own_literal(c->module, lit)) return NULL;
  k->a.literal = lit;
  if (in->shape.rank == 0) return k;
  cx_instr *b = cx_instr_add(c, CX_OP_BROADCAST, &in->shape, 1, &k, in->loc);
  if (!b) return NULL;
  return b;
}

/* Applies e to m; returns 0 if it does not apply. */
static int apply(cx_module *m, rg_bounds *bd, edit e, rg_param **params, int *nparams) {
  if (e.comp >= m->ncomps) return 0;
  cx_comp *c = m->comps[e.comp];
  cx_comp *entry = m->entry;
  if (e.kind == E_ROOT_ONE || e.kind == E_ROOT_DROP) {
    cx_instr *r = entry->root;
    if (c != entry || r->op != CX_OP_TUPLE || e.arg >= r->nops || (e.kind == E_ROOT_DROP && r->nops < 2)) return 0;
    if (r->ops[e.arg]->shape.type == CXLA_TUPLE) return 0;
    if (e.kind == E_ROOT_ONE) {
      entry->root = r->ops[e.arg];
      return 1;
    }
    cx_instr *ops[64];
    if (r->nops > 64) return 0;
    int n = 0;
    for (int i = 0; i < r->nops; i++)
      if (i != e.arg) ops[n++] = r->ops[i];
    cx_shape s;
    memset(&s, 0, sizeof s);
    cx_instr *t = cx_instr_add(entry, CX_OP_TUPLE, &s, n, ops, r->loc);
    if (!t || cx_infer_shape(t, &t->shape) != CXLA_OK) return 0;
    entry->root = t;
    return 1;
  }
  if (e.instr >= c->ninstrs) return 0;
  cx_instr *in = c->instrs[e.instr];
  if (e.kind == E_REROOT) { /* everything after `in` goes */
    if (c != entry || in == c->root || in->op == CX_OP_PARAMETER || in->op == CX_OP_CONSTANT) return 0;
    c->root = in;
    return 1;
  }
  if (in->op == CX_OP_PARAMETER || (in == c->root && e.kind != E_BYPASS)) return 0;
  if (in->shape.type == CXLA_TUPLE && e.kind != E_BYPASS) return 0;
  int nl;
  const rg_val *v = rg_bounds_get(bd, in, &nl);
  switch (e.kind) {
  case E_CUT: {
    if (c != entry || in->op == CX_OP_CONSTANT || !v) return 0;
    rg_param *np = cx_realloc(*params, sizeof *np * (size_t)(*nparams + 1));
    if (!np) return 0;
    *params = np;
    rg_param p = {v[0]};
    p.v.err = 0, p.v.rel = 0, p.v.bad = 0;
    if (!isfinite(p.v.lo) || !isfinite(p.v.hi)) p.v.lo = -1, p.v.hi = 1;
    if (cx_type_is_float(in->shape.type)) p.v.lo = fmax(p.v.lo, -1e6), p.v.hi = fmin(p.v.hi, 1e6);
    cx_instr *q = cx_instr_add(entry, CX_OP_PARAMETER, &in->shape, 0, NULL, in->loc);
    if (!q) return 0;
    q->a.index = *nparams;
    np[(*nparams)++] = p;
    cx_comp_replace_uses(entry, in, q);
    return 1;
  }
  case E_BYPASS: {
    if (e.arg >= in->nops || in->op == CX_OP_PARAMETER) return 0;
    cx_instr *o = in->ops[e.arg];
    if (in->op == CX_OP_GET_TUPLE_ELEMENT && o->op == CX_OP_TUPLE) o = o->ops[in->a.index]; /* forward */
    if (!cx_shape_equal(&o->shape, &in->shape)) return 0;
    cx_comp_replace_uses(c, in, o);
    return 1;
  }
  case E_CONST: {
    if (in->op == CX_OP_CONSTANT || in->op == CX_OP_BROADCAST || !v) return 0;
    cx_instr *k = const_like(c, in, v[0]);
    if (!k) return 0;
    cx_comp_replace_uses(c, in, k);
    return 1;
  }
  default:
    return 0;
  }
}

/* Parses text, applies e, cleans up, verifies and prints. NULL if e does not apply. */
static char *candidate(cxla_context *ctx, const char *text, const rg_param *params, int nparams, edit e,
                       rg_param **out_params, int *out_n) {
  cx_module *m = NULL;
  if (cxla_module_parse(ctx, text, strlen(text), "shrink", &m) != CXLA_OK) return NULL;
  rg_bounds bd;
  rg_bounds_init(&bd, m);
  const rg_val **args = cx_malloc(sizeof *args * (size_t)(nparams + 1));
  int *nl = cx_malloc(sizeof *nl * (size_t)(nparams + 1));
  rg_param *np = cx_malloc(sizeof *np * (size_t)(nparams + 1));
  char *res = NULL;
  int n = nparams;
  if (args && nl && np) {
    for (int i = 0; i < nparams; i++) args[i] = &params[i].v, nl[i] = 1, np[i] = params[i];
    rg_bounds_comp(&bd, m->entry, nparams, args, nl);
    if (apply(m, &bd, e, &np, &n)) {
      for (int k = 0; k < m->ncomps; k++) cx_comp_remove_dead(m->comps[k]);
      drop_unused_params(m->entry, np, &n);
      cx_module_remove_unreachable(m);
      int ok = 1;
      for (int k = 0; k < m->ncomps && ok; k++) ok = cx_comp_resort(m->comps[k], "shrink") == CXLA_OK;
      if (ok && cx_comp_index_params(m->entry) && cx_verify_module(m) == CXLA_OK) res = cxla_module_to_string(m);
    }
  }
  rg_bounds_free(&bd);
  cx_free(args);
  cx_free(nl);
  cxla_module_destroy(m);
  if (res) {
    *out_params = np;
    *out_n = n;
  } else {
    cx_free(np);
  }
  return res;
}

static int stable(cxla_context *ctx, const char *text, const rg_param *params, int nparams) {
  cx_module *m = NULL;
  if (cxla_module_parse(ctx, text, strlen(text), "shrink", &m) != CXLA_OK) return 0;
  int n = 0, ok = 0;
  rg_val *r = rg_analyze(m, params, nparams, &n, NULL, 0);
  if (r) {
    ok = 1;
    for (int i = 0; i < n; i++) ok &= !r[i].bad;
  }
  cx_free(r);
  cxla_module_destroy(m);
  return ok;
}

/* Every edit of the current text, the big cuts (near the root) first. */
static int list_edits(cxla_context *ctx, const char *text, edit **out) {
  cx_module *m = NULL;
  *out = NULL;
  if (cxla_module_parse(ctx, text, strlen(text), "shrink", &m) != CXLA_OK) return 0;
  int n = 0, cap = 64;
  edit *v = cx_malloc(sizeof *v * (size_t)cap);
  int ei = cx_module_comp_index(m, m->entry);
  cx_instr *r = m->entry->root;
#define PUSH(K, C, I, A)                                                        \
  do {                                                                          \
    if (n == cap) {                                                             \
      edit *nv = cx_realloc(v, sizeof *v * (size_t)(cap *= 2));                 \
      if (!nv) goto done;                                                       \
      v = nv;                                                                   \
    }                                                                           \
    v[n++] = (edit){K, C, I, A};                                                \
  } while (0)
  if (!v) goto done;
  if (r->op == CX_OP_TUPLE) {
    for (int j = 0; j < r->nops; j++) PUSH(E_ROOT_ONE, ei, 0, j);
    for (int j = 0; j < r->nops; j++) PUSH(E_ROOT_DROP, ei, 0, j);
  }
  for (int i = 0; i < m->entry->ninstrs; i++) PUSH(E_REROOT, ei, i, 0);
  for (int i = m->entry->ninstrs - 1; i >= 0; i--) {
    PUSH(E_CUT, ei, i, 0);
    for (int j = 0; j < m->entry->instrs[i]->nops; j++) PUSH(E_BYPASS, ei, i, j);
    PUSH(E_CONST, ei, i, 0);
  }
  for (int k = m->ncomps - 1; k >= 0; k--) {
    if (k == ei) continue;
    for (int i = m->comps[k]->ninstrs - 1; i >= 0; i--) {
      PUSH(E_CONST, k, i, 0);
      for (int j = 0; j < m->comps[k]->instrs[i]->nops; j++) PUSH(E_BYPASS, k, i, j);
    }
  }
#undef PUSH
done:
  cxla_module_destroy(m);
  *out = v;
  return v ? n : 0;
}

char *rg_shrink(cxla_context *ctx, const char *text, rg_param **params, int *nparams, rg_fails_fn fails,
                void *user, int max_tries, int *tries_out) {
  char *cur = cx_strdup(text);
  int tries = 0, progress = 1;
  while (cur && progress && tries < max_tries) {
    progress = 0;
    edit *ed;
    int ne = list_edits(ctx, cur, &ed);
    for (int i = 0; i < ne && tries < max_tries; i++) {
      rg_param *np = NULL;
      int nn = 0;
      char *c = candidate(ctx, cur, *params, *nparams, ed[i], &np, &nn);
      if (!c || !strcmp(c, cur) || strlen(c) > strlen(cur) + 64 || !stable(ctx, c, np, nn)) {
        free(c);
        cx_free(np);
        continue;
      }
      tries++;
      if (fails(user, c, np, nn)) {
        free(cur);
        cur = c;
        cx_free(*params);
        *params = np;
        *nparams = nn;
        progress = 1;
        break; /* the positions changed: list the edits again */
      }
      free(c);
      cx_free(np);
    }
    cx_free(ed);
  }
  if (tries_out) *tries_out = tries;
  if (!cur) return NULL;
  char *r = strdup(cur);
  cx_free(cur);
  return r;
}
