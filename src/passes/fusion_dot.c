/* fusion_dot.c — dot epilogue (kOutput) fusion: a dot followed by elementwise ops on its
 * result (bias add through a broadcast, relu as maximum with a broadcast 0, scaling, tanh,
 * ...) becomes one fusion. The backend calls GEMM into the fusion's output buffer and then
 * runs the epilogue over it in one pass, instead of writing and re-reading a temporary.
 *
 * Conditions: the dot is f32/f64 and has no users outside the fusion; the epilogue ops are
 * elementwise at the dot's dims; exactly one of them (the root) is used outside, and it has the
 * dot's element type, so it can be computed in place; their other operands do not depend on
 * the dot (no cycles); broadcasts and scalar constants feeding the epilogue are fused in (a
 * broadcast is duplicated when it has other users), anything else is read as an operand.
 * The pass works on raw ops (when it runs before loop fusion) and also takes a kLoop fusion
 * that is the dot's only user and reads it at the same index (when it runs after). */
#include <string.h>
#include "passes/pass.h"
#include "ir/edit.h"
#include "passes/fusion_util.h"

typedef struct epi {
  cx_instr **v;     /* members: the dot, then epilogue ops in the order they were added */
  int n, cap;
} epi;

static int member(const epi *e, int upto, const cx_instr *x) {
  for (int i = 0; i < upto; i++)
    if (e->v[i] == x) return 1;
  return 0;
}

static int absorbable(const cx_instr *o) {
  return (o->op == CX_OP_BROADCAST && cx_type_is_array(o->shape.type)) || fu_is_scalar_constant(o);
}

/* Operand o of a candidate epilogue op: a member, or something that does not depend on the
 * dot. -1 on OOM. */
static int operand_ok(cx_comp *c, const epi *e, const cx_instr *o) {
  if (member(e, e->n, o)) return 1;
  const cx_instr *src = o->op == CX_OP_BROADCAST ? o->ops[0] : o;
  int dep = fu_reaches(c, e->v[0], src);
  return dep < 0 ? -1 : !dep;
}

/* A user of the members that can join: elementwise at the dot's dims. -1 on OOM. */
static int candidate(cx_comp *c, const epi *e, cx_instr **out) {
  const cx_instr *d = e->v[0];
  for (int m = 0; m < e->n; m++) {
    cx_instr **users;
    int nu = fu_users(c, e->v[m], &users), found = 0;
    if (nu < 0) return -1;
    for (int i = 0; i < nu && !found; i++) {
      cx_instr *u = users[i];
      if (member(e, e->n, u) || !cx_op_is_elementwise(u->op) || !cx_type_is_array(u->shape.type) ||
          !cx_shape_same_dims(&u->shape, &d->shape))
        continue;
      int ok = 1;
      for (int j = 0; j < u->nops && ok > 0; j++) ok = operand_ok(c, e, u->ops[j]);
      if (ok < 0) { cx_free(users); return -1; }
      if (ok) { *out = u; found = 1; }
    }
    cx_free(users);
    if (found) return 1;
  }
  return 0;
}

/* x is the root or has a user outside the first n members. -1 on OOM. */
static int used_outside(const cx_comp *c, const epi *e, int n, const cx_instr *x) {
  if (c->root == x) return 1;
  cx_instr **users;
  int nu = fu_users(c, x, &users), outside = nu < 0 ? -1 : 0;
  for (int i = 0; i < nu && !outside; i++) outside = !member(e, n, users[i]);
  cx_free(users);
  return outside;
}

/* With the first n members: the one member used outside (or NULL if none or several). */
static cx_instr *single_exit(const cx_comp *c, const epi *e, int n) {
  cx_instr *exit = NULL;
  for (int k = 0; k < n; k++) {
    int outside = used_outside(c, e, n, e->v[k]);
    if (outside < 0) return NULL; /* OOM: no fusion (the next allocation reports it) */
    if (!outside) continue;
    if (exit) return NULL;
    exit = e->v[k];
  }
  return exit;
}

static int push(epi *e, cx_instr *x) {
  if (e->n >= e->cap) {
    int nc = e->cap ? 2 * e->cap : 8;
    cx_instr **v = cx_realloc(e->v, sizeof *v * (size_t)nc);
    if (!v) return 0;
    e->v = v;
    e->cap = nc;
  }
  e->v[e->n++] = x;
  return 1;
}

/* Whether every part comes before `exit` in c: then the fusion can take the exit's place
 * (its operands are operands of the parts, its users the exit's), and c needs no re-sort.
 * A bias broadcast computed early made the re-sorted stretch reach back to it: a dot
 * epilogue's fusion cost time in proportion to the whole program. */
static int exit_is_last(const cx_comp *c, cx_instr *const *parts, int n, const cx_instr *exit) {
  int last = fu_index_pos(c, exit), lo, hi;
  return last >= 0 && fu_index_span(c, parts, n, &lo, &hi) && hi <= last;
}

/* Builds the kOutput fusion of the first n members with `exit` as root. */
static cxla_status build(cx_comp *c, epi *e, int n, cx_instr *exit) {
  cx_module *m = c->module;
  int cap = n;
  for (int k = 0; k < n; k++) cap += e->v[k]->nops;
  cx_instr **parts = cx_malloc(sizeof *parts * (size_t)cap);
  int *keep = cx_calloc((size_t)cap, sizeof *keep);
  if (!parts || !keep) { cx_free(parts); cx_free(keep); return cx_oom(m->ctx); }
  int np = 0;
  for (int k = 0; k < n; k++) parts[np++] = e->v[k];
  for (int k = 1; k < n; k++)
    for (int j = 0; j < e->v[k]->nops; j++) {
      cx_instr *o = e->v[k]->ops[j];
      int seen = 0;
      for (int q = 0; q < np; q++) seen |= parts[q] == o;
      if (seen || !absorbable(o)) continue;
      /* Duplicate it when anything outside the members reads it. */
      int outside = used_outside(c, e, n, o);
      if (outside < 0) { cx_free(parts); cx_free(keep); return cx_oom(m->ctx); }
      keep[np] = outside;
      parts[np++] = o;
    }
  cx_instr *f;
  fu_spec s = {.parts = parts, .nparts = np, .keep = keep, .outs = &exit, .nouts = 1, .kind = CX_FUSION_OUTPUT};
  cxla_status st = fu_fuse(c, &s, exit_is_last(c, parts, np, exit), &f);
  int ch = 0;
  if (st == CXLA_OK) st = fu_absorb_constants(c, &f, &ch); /* e.g. the 0 of relu's broadcast */
  cx_free(parts);
  cx_free(keep);
  return st;
}

/* Grows an epilogue over raw elementwise users of dot d. *done: a fusion was made. */
static cxla_status raw_epilogue(cx_comp *c, cx_instr *d, int *done) {
  epi e = {0};
  cxla_status st = CXLA_OK;
  int best = 0;
  cx_instr *best_exit = NULL;
  if (!push(&e, d)) return cx_oom(c->module->ctx);
  while (e.n < FU_MAX_INSTRS) {
    cx_instr *u;
    int r = candidate(c, &e, &u);
    if (r < 0) { st = cx_oom(c->module->ctx); break; }
    if (!r || !push(&e, u)) { if (r) st = cx_oom(c->module->ctx); break; }
    cx_instr *exit = single_exit(c, &e, e.n);
    if (exit && exit != d && exit->shape.type == d->shape.type) { best = e.n; best_exit = exit; }
  }
  if (st == CXLA_OK && best > 1) {
    st = build(c, &e, best, best_exit);
    *done = st == CXLA_OK;
  }
  cx_free(e.v);
  return st;
}

/* The dot's only user is a kLoop fusion that reads it at the same index. */
static cxla_status loop_epilogue(cx_comp *c, cx_instr *d, int *done) {
  cx_instr **users;
  int nu = fu_users(c, d, &users);
  if (nu < 0) return cx_oom(c->module->ctx);
  cx_instr *l = nu == 1 ? users[0] : NULL;
  cx_free(users);
  if (!l || c->root == d || fu_kind_of(l) != CX_FUSION_LOOP || fu_is_multi_output(l)) return CXLA_OK;
  if (!cx_shape_same_dims(&l->shape, &d->shape) || l->shape.type != d->shape.type) return CXLA_OK;
  if (fu_size(l) + 1 > FU_MAX_INSTRS) return CXLA_OK;
  for (int j = 0; j < l->nops; j++) {
    if (l->ops[j] == d) {
      fu_param_use u;
      if (!fu_analyze_operand(l, j, &u)) return cx_oom(c->module->ctx);
      if (!u.elementwise || u.reused || u.to_reduce) return CXLA_OK;
      continue;
    }
    int dep = fu_reaches(c, d, l->ops[j]);
    if (dep) return dep < 0 ? cx_oom(c->module->ctx) : CXLA_OK;
  }
  cx_instr *parts[2] = {d, l}, *f;
  fu_spec s = {.parts = parts, .nparts = 2, .outs = &l, .nouts = 1, .kind = CX_FUSION_OUTPUT};
  CX_TRY(fu_fuse(c, &s, 1, &f));
  *done = 1;
  return CXLA_OK;
}

cxla_status fu_dot_epilogues(cx_comp *c, int *changed) {
  int n;
  cx_instr **snap = cx_comp_snapshot(c, &n);
  if (!snap) return cx_oom(c->module->ctx);
  cxla_status st = CXLA_OK;
  for (int i = 0; i < n && st == CXLA_OK; i++) {
    cx_instr *d = snap[i];
    if (d->parent != c || d->op != CX_OP_DOT || (d->shape.type != CXLA_F32 && d->shape.type != CXLA_F64)) continue;
    int done = 0;
    st = raw_epilogue(c, d, &done);
    if (st == CXLA_OK && !done) st = loop_epilogue(c, d, &done);
    if (done) *changed = 1;
  }
  cx_free(snap);
  return st;
}

cxla_status cx_pass_dot_epilogue_fusion(cx_module *m, int *changed) { return fu_each_control_comp(m, changed, fu_dot_epilogues); }
