/* verify.c — module and computation structure: one ENTRY, non-empty computations with a ROOT,
 * parameters numbered 0..n-1, operands defined earlier in the same computation, called
 * computations inside the module and no recursion, well-formed declared shapes; then every
 * instruction's declared shape against shape inference. Linear in the module size. */
#include <stdint.h>
#include <string.h>
#include "ir/infer.h"

typedef struct vstate {
  cx_module *m;
  int32_t *stamp;   /* by instruction id - base: the stamp of the computation defining it */
  int64_t base, nstamp;
  cx_arena scratch; /* inferred tuple shapes, dropped when verification ends */
  int all_indexed;  /* every computation's parameters are indexed (module verification) */
} vstate;

/* Whether `in` was already defined in the computation stamped cs. */
static int seen(const vstate *vs, const cx_instr *in, int32_t cs) {
  int64_t k = (int64_t)in->id - vs->base;
  if (k < 0 || k >= vs->nstamp) return 0;
  return vs->stamp[k] == cs;
}

static cx_infer infer_for(vstate *vs, cx_instr *in) {
  cx_infer ic;
  memset(&ic, 0, sizeof ic);
  ic.in = in;
  ic.m = vs->m;
  ic.arena = &vs->scratch;
  ic.callees_indexed = vs->all_indexed;
  return ic;
}

static cxla_status comp_fail(vstate *vs, cx_comp *c, const char *what, const char *detail) {
  return cx_error_at(vs->m, c->loc, CXLA_ERR_VERIFY, "computation %s: %s%s", c->name ? c->name : "?", what,
                     detail ? detail : "");
}

/* Parameters numbered 0..n-1 exactly once; then c->params is filled. */
static cxla_status check_params(vstate *vs, cx_comp *c) {
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) n += c->instrs[i]->op == CX_OP_PARAMETER;
  cx_instr **by = n ? cx_calloc((size_t)n, sizeof *by) : NULL;
  if (n && !by) return cx_oom(vs->m->ctx);
  cxla_status st = CXLA_OK;
  for (int i = 0; i < c->ninstrs && st == CXLA_OK; i++) {
    cx_instr *p = c->instrs[i];
    if (p->op != CX_OP_PARAMETER) continue;
    cx_infer ic = infer_for(vs, p);
    if (p->a.index < 0 || p->a.index >= n)
      st = cx_vfail(&ic, "parameter number %lld is out of range: computation %s has %d parameter%s (expected 0..%d)",
                    (long long)p->a.index, c->name, n, n == 1 ? "" : "s", n - 1);
    else if (by[p->a.index])
      st = cx_vfail(&ic, "parameter number %lld is also used by %s (each number 0..%d must appear once)",
                    (long long)p->a.index, by[p->a.index]->name ? by[p->a.index]->name : "?", n - 1);
    else
      by[p->a.index] = p;
  }
  cx_free(by);
  if (st != CXLA_OK) return st;
  return cx_comp_index_params(c) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* Everything inference relies on: links, definition order, declared shapes. */
static cxla_status check_instr(vstate *vs, cx_comp *c, cx_instr *in, int32_t cs, int standalone) {
  cx_infer ic = infer_for(vs, in);
  char buf[256];
  if ((unsigned)in->op >= CX_OP_COUNT)
    return cx_error_at(vs->m, in->loc, CXLA_ERR_VERIFY, "instruction %s has an unknown opcode %d",
                       in->name ? in->name : "?", (int)in->op);
  if (in->parent != c) return cx_vfail(&ic, "listed in computation %s but belongs to another", c->name);
  if (seen(vs, in, cs)) return cx_vfail(&ic, "listed twice in %s (or shares its id %d)", c->name, in->id);
  if (in->nops < 0 || (in->nops > 0 && !in->ops)) return cx_vfail(&ic, "operands are missing");
  for (int i = 0; i < in->nops; i++) {
    cx_instr *o = in->ops[i];
    if (!o) return cx_vfail(&ic, "operand %d is missing", i);
    const char *on = o->name ? o->name : "?";
    if (o->parent != c)
      return cx_vfail(&ic, "operand %d (%s) belongs to computation %s, not %s", i, on,
                      o->parent && o->parent->name ? o->parent->name : "?", c->name);
    if (!seen(vs, o, cs))
      return cx_vfail(&ic, "operand %d (%s) is used before it is defined (expected operands before their users)", i, on);
  }
  if (in->ncalled < 0 || (in->ncalled > 0 && !in->called)) return cx_vfail(&ic, "called computations are missing");
  for (int i = 0; i < in->ncalled; i++) {
    cx_comp *k = in->called[i];
    if (!k) return cx_vfail(&ic, "called computation %d is missing", i);
    if (k == c) return cx_vfail(&ic, "calls its own computation %s (recursion is not allowed)", c->name);
    if (standalone && cx_module_comp_index(vs->m, k) < 0)
      return cx_vfail(&ic, "calls computation %s, which is not in the module", k->name ? k->name : "?");
  }
  const char *p = cx_shape_problem(&in->shape, buf, sizeof buf);
  if (p) return cx_vfail(&ic, "declared shape has %s", p);
  vs->stamp[in->id - vs->base] = cs;
  return CXLA_OK;
}

static cxla_status check_structure(vstate *vs, cx_comp *c, int32_t cs, int standalone) {
  if (c->ninstrs <= 0 || !c->instrs) return comp_fail(vs, c, "is empty (expected at least a ROOT instruction)", NULL);
  for (int i = 0; i < c->ninstrs; i++)
    if (!c->instrs[i]) return comp_fail(vs, c, "has a missing instruction", NULL);
  for (int i = 0; i < c->ninstrs; i++) CX_TRY(check_instr(vs, c, c->instrs[i], cs, standalone));
  if (!c->root) return comp_fail(vs, c, "has no ROOT instruction", NULL);
  if (c->root->parent != c || !seen(vs, c->root, cs))
    return comp_fail(vs, c, "ROOT is not an instruction of this computation", NULL);
  return check_params(vs, c);
}

/* Compare's type= defaults by element type, as XLA fills it. */
static void fill_compare_default(cx_instr *in) {
  if (in->op != CX_OP_COMPARE || in->a.cmp_type != CX_CMP_DEFAULT) return;
  cx_kind k = cx_type_kind(in->ops[0]->shape.type);
  in->a.cmp_type = k == CX_KIND_FLOAT || k == CX_KIND_COMPLEX ? CX_CMP_FLOAT
                   : k == CX_KIND_SINT                        ? CX_CMP_SIGNED
                                                              : CX_CMP_UNSIGNED;
}

static cxla_status check_shapes(vstate *vs, cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    cx_infer ic = infer_for(vs, in);
    cx_shape s;
    CX_TRY(cx_infer_run(&ic, &s));
    if (!cx_shape_equal(&in->shape, &s))
      return cx_vfail(&ic, "declared shape %s does not match inferred shape %s", cx_vshape(&ic, &in->shape),
                      cx_vshape(&ic, &s));
    fill_compare_default(in);
  }
  return CXLA_OK;
}

/* Stamps cover the id range of the instructions being verified (one computation's range when
 * the builder verifies computations one by one, so that stays linear too). */
static cxla_status vstate_init(vstate *vs, cx_module *m, cx_comp *const *comps, int ncomps) {
  memset(vs, 0, sizeof *vs);
  vs->m = m;
  cx_arena_init(&vs->scratch);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int k = 0; k < ncomps; k++)
    for (int i = 0; comps[k] && comps[k]->instrs && i < comps[k]->ninstrs; i++) {
      const cx_instr *in = comps[k]->instrs[i];
      if (!in) continue;
      if (in->id < lo) lo = in->id;
      if (in->id > hi) hi = in->id;
    }
  if (lo > hi) lo = hi = 0;
  vs->base = lo;
  vs->nstamp = hi - lo + 1;
  vs->stamp = cx_calloc((size_t)vs->nstamp, sizeof *vs->stamp);
  return vs->stamp ? CXLA_OK : cx_oom(m->ctx);
}

static void vstate_free(vstate *vs) {
  cx_free(vs->stamp);
  cx_arena_free(&vs->scratch);
}

cxla_status cx_verify_comp(cx_comp *c) {
  if (!c || !c->module) return CXLA_ERR_INVALID_ARGUMENT;
  vstate vs;
  CX_TRY(vstate_init(&vs, c->module, &c, 1));
  cxla_status st = check_structure(&vs, c, 1, 1);
  if (st == CXLA_OK) st = check_shapes(&vs, c);
  vstate_free(&vs);
  return st;
}

/* ---- module level ---- */

typedef struct comp_info {
  cx_comp *c;
  void *saved_aux;
  int color; /* call-graph walk: 0 unseen, 1 on the current path, 2 done */
} comp_info;

static comp_info *info_of(comp_info *info, int n, cx_comp *k) {
  uintptr_t p = (uintptr_t)k->aux, lo = (uintptr_t)info, hi = (uintptr_t)(info + n);
  if (p < lo || p >= hi || (p - lo) % sizeof *info) return NULL;
  comp_info *ci = (comp_info *)k->aux;
  return ci->c == k ? ci : NULL;
}

/* Depth-first over called computations: every callee must be in the module and no path may
 * come back to a computation on it. Each call edge is followed once. */
static cxla_status check_call_graph(vstate *vs, comp_info *info, int n) {
  typedef struct { int comp, instr, call; } frame;
  frame *st = cx_malloc(sizeof *st * (size_t)n);
  if (!st) return cx_oom(vs->m->ctx);
  cxla_status res = CXLA_OK;
  for (int s = 0; s < n && res == CXLA_OK; s++) {
    if (info[s].color) continue;
    int sp = 0;
    st[sp++] = (frame){s, 0, 0};
    info[s].color = 1;
    while (sp && res == CXLA_OK) {
      frame *f = &st[sp - 1];
      cx_comp *c = info[f->comp].c;
      if (f->instr >= c->ninstrs) { info[f->comp].color = 2; sp--; continue; }
      cx_instr *in = c->instrs[f->instr];
      if (f->call >= in->ncalled) { f->instr++; f->call = 0; continue; }
      cx_comp *k = in->called[f->call++];
      comp_info *ki = info_of(info, n, k);
      cx_infer ic = infer_for(vs, in);
      if (!ki) res = cx_vfail(&ic, "calls computation %s, which is not in the module", k->name ? k->name : "?");
      else if (ki->color == 1)
        res = cx_vfail(&ic, "calls %s, which leads back to %s (recursion is not allowed)", k->name, c->name);
      else if (ki->color == 0) {
        ki->color = 1;
        st[sp++] = (frame){(int)(ki - info), 0, 0};
      }
    }
  }
  cx_free(st);
  return res;
}

static cxla_status check_entry(cx_module *m) {
  cx_loc none = {0, 0};
  int n = 0;
  cx_comp *first = NULL, *second = NULL;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i]->is_entry) {
      if (n == 0) first = m->comps[i];
      else if (n == 1) second = m->comps[i];
      n++;
    }
  if (n == 0 || !m->entry)
    return cx_error_at(m, none, CXLA_ERR_VERIFY, "module %s: no ENTRY computation (expected exactly one)", m->name);
  if (n > 1)
    return cx_error_at(m, second->loc, CXLA_ERR_VERIFY, "module %s: %d ENTRY computations (%s and %s); expected exactly one",
                       m->name, n, first->name, second->name);
  if (m->entry != first)
    return cx_error_at(m, none, CXLA_ERR_VERIFY, "module %s: the ENTRY computation is not %s, the one marked ENTRY",
                       m->name, first->name);
  return CXLA_OK;
}

cxla_status cx_verify_module(cx_module *m) {
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  cx_loc none = {0, 0};
  if (m->ncomps <= 0 || !m->comps)
    return cx_error_at(m, none, CXLA_ERR_VERIFY, "module %s: no computations (expected an ENTRY computation)", m->name);
  for (int i = 0; i < m->ncomps; i++)
    if (!m->comps[i] || m->comps[i]->module != m)
      return cx_error_at(m, none, CXLA_ERR_VERIFY, "module %s: computation %d does not belong to it", m->name, i);
  CX_TRY(check_entry(m));
  int n = m->ncomps;
  comp_info *info = cx_calloc((size_t)n, sizeof *info);
  if (!info) return cx_oom(m->ctx);
  vstate vs;
  cxla_status st = vstate_init(&vs, m, m->comps, n);
  if (st != CXLA_OK) { cx_free(info); return st; }
  /* aux points each computation at its info so membership checks stay O(1); restored below */
  for (int i = 0; i < n; i++) {
    info[i].c = m->comps[i];
    info[i].saved_aux = m->comps[i]->aux;
  }
  for (int i = 0; i < n && st == CXLA_OK; i++) {
    if (info_of(info, n, m->comps[i]))
      st = comp_fail(&vs, m->comps[i], "appears twice in the module", NULL);
    m->comps[i]->aux = &info[i];
  }
  for (int i = 0; i < n && st == CXLA_OK; i++) st = check_structure(&vs, m->comps[i], i + 1, 0);
  if (st == CXLA_OK) st = check_call_graph(&vs, info, n);
  vs.all_indexed = 1;
  for (int i = 0; i < n && st == CXLA_OK; i++) st = check_shapes(&vs, m->comps[i]);
  for (int i = n - 1; i >= 0; i--) m->comps[i]->aux = info[i].saved_aux;
  vstate_free(&vs);
  cx_free(info);
  return st;
}
