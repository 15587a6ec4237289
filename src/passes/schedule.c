/* schedule.c — the order the CPU backend runs instructions in, and the timeline buffer
 * assignment measures liveness on (see buffers_int.h). The schedule is each computation's
 * instruction order, which is topological; control-flow computations are flattened first so
 * that each has exactly one call site. */
#include <string.h>
#include "ir/clone.h"
#include "passes/buffers_int.h"

/* ---- flattening ---- */

static int is_control(const cx_instr *in) {
  return in->op == CX_OP_WHILE || in->op == CX_OP_CONDITIONAL || in->op == CX_OP_CALL;
}

/* A copy of c (fresh ids and names) placed right after it in m->comps, which keeps callees
 * before callers: c precedes every computation that calls it. */
static cx_comp *clone_comp(cx_module *m, cx_comp *c) {
  const char *name = cx_module_unique_name(m, c->name);
  cx_comp *d = name ? cx_comp_new(m, name) : NULL;
  if (!d) return NULL;
  d->loc = c->loc;
  cx_instr **map = cx_calloc((size_t)c->ninstrs + 1, sizeof *map);
  cx_instr **ops = NULL;
  int64_t cap = 0;
  if (!map) { cx_oom(m->ctx); return NULL; }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = (void *)(intptr_t)(i + 1);
  int ok = 1;
  for (int i = 0; i < c->ninstrs && ok; i++) {
    cx_instr *s = c->instrs[i];
    if (!cx_vec_reserve((void **)&ops, &cap, s->nops + 1, sizeof *ops)) { cx_oom(m->ctx); ok = 0; break; }
    for (int j = 0; j < s->nops; j++) ops[j] = map[(intptr_t)s->ops[j]->aux - 1];
    cx_instr *x = cx_instr_clone(d, s, ops);
    const char *nm = x ? cx_module_unique_name(m, s->op == CX_OP_PARAMETER ? "param" : cx_op_name(s->op)) : NULL;
    if (!x || !nm) { ok = 0; break; }
    x->name = nm;
    map[i] = x;
    if (s == c->root) d->root = x;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  cx_free(map);
  cx_free(ops);
  if (!ok) return NULL;
  if (!cx_comp_index_params(d)) {
    cx_error(m->ctx, CXLA_ERR_INTERNAL, "clone of %s: parameters are not numbered 0..n-1", c->name);
    return NULL;
  }
  if (!cx_module_add_comp(m, d)) return NULL;
  int at = cx_module_comp_index(m, c);
  if (at >= 0) {
    memmove(m->comps + at + 2, m->comps + at + 1, sizeof *m->comps * (size_t)(m->ncomps - 2 - at));
    m->comps[at + 1] = d;
  }
  return d;
}

/* comp->aux marks "already has a call site" during the walk. */
static cxla_status flatten(cx_module *m, cx_comp *c, int depth) {
  if (depth > 256) return cx_error(m->ctx, CXLA_ERR_UNSUPPORTED, "control flow nested deeper than 256 levels");
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (!is_control(in)) continue;
    for (int k = 0; k < in->ncalled; k++) {
      cx_comp *callee = in->called[k];
      if (callee->aux) {
        callee = clone_comp(m, callee);
        if (!callee) return CXLA_ERR_OUT_OF_MEMORY;
        in->called[k] = callee;
      }
      callee->aux = (void *)1;
      CX_TRY(flatten(m, callee, depth + 1));
    }
  }
  return CXLA_OK;
}

cxla_status cx_sched_flatten(cx_module *m) {
  if (!m->entry) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s has no ENTRY computation", m->name);
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  m->entry->aux = (void *)1;
  cxla_status s = flatten(m, m->entry, 0);
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  return s;
}

/* ---- timeline ---- */

typedef struct walker {
  cx_sched *s;
  cx_module *m;
  int64_t now;
  int64_t cap;
} walker;

static cxla_status walk(walker *w, cx_comp *c);

static cxla_status walk_callee(walker *w, cx_comp *c) {
  CX_TRY(walk(w, c));
  int at = -1;
  for (int i = w->s->ncomps - 1; i >= 0; i--)
    if (w->s->comps[i] == c) { at = i; break; }
  if (at >= 0) w->s->ret[at] = w->now;
  w->now++;
  return CXLA_OK;
}

static cxla_status walk(walker *w, cx_comp *c) {
  cx_sched *s = w->s;
  if (!cx_vec_reserve((void **)&s->comps, &w->cap, s->ncomps + 1, sizeof *s->comps)) return cx_oom(w->m->ctx);
  s->comps[s->ncomps++] = c;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->id < 0 || in->id >= s->max_id)
      return cx_error(w->m->ctx, CXLA_ERR_INTERNAL, "instruction %s has id %d outside [0, %d)", in->name, in->id, s->max_id);
    s->t0[in->id] = w->now++;
    if (is_control(in))
      for (int k = 0; k < in->ncalled; k++) CX_TRY(walk_callee(w, in->called[k]));
    s->t1[in->id] = is_control(in) ? w->now++ : s->t0[in->id];
  }
  return CXLA_OK;
}

static int count_comps(cx_comp *c) {
  int n = 1;
  for (int i = 0; i < c->ninstrs; i++)
    if (is_control(c->instrs[i]))
      for (int k = 0; k < c->instrs[i]->ncalled; k++) n += count_comps(c->instrs[i]->called[k]);
  return n;
}

cxla_status cx_sched_build(cx_module *m, cx_sched *s) {
  memset(s, 0, sizeof *s);
  if (!m->entry) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s has no ENTRY computation", m->name);
  s->max_id = m->next_id + 1;
  int n = count_comps(m->entry);
  s->t0 = cx_malloc(sizeof *s->t0 * (size_t)s->max_id);
  s->t1 = cx_malloc(sizeof *s->t1 * (size_t)s->max_id);
  s->ret = cx_malloc(sizeof *s->ret * (size_t)n);
  if (!s->t0 || !s->t1 || !s->ret) {
    cx_sched_free(s);
    return cx_oom(m->ctx);
  }
  for (int i = 0; i < s->max_id; i++) s->t0[i] = s->t1[i] = -1;
  for (int i = 0; i < n; i++) s->ret[i] = -1;
  walker w = {s, m, 0, 0};
  /* comps grows inside walk; ret was sized by count_comps, which visits the same tree */
  cxla_status st = walk(&w, m->entry);
  if (st == CXLA_OK) {
    s->ret[0] = w.now++;
    s->end = w.now;
  } else {
    cx_sched_free(s);
  }
  return st;
}

void cx_sched_free(cx_sched *s) {
  cx_free(s->t0);
  cx_free(s->t1);
  cx_free(s->ret);
  cx_free(s->comps);
  memset(s, 0, sizeof *s);
}

int64_t cx_sched_ret(const cx_sched *s, const cx_comp *c) {
  for (int i = 0; i < s->ncomps; i++)
    if (s->comps[i] == c) return s->ret[i];
  return -1;
}
