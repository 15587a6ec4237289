/* edit.c — IR edits shared by the HLO-to-HLO passes (see edit.h). */
#include <string.h>
#include "ir/edit.h"

cx_instr *cx_instr_add(cx_comp *c, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops,
                       cx_loc loc) {
  cx_instr *in = cx_instr_new(c, op, shape, nops, ops);
  if (!in) return NULL;
  const char *name = cx_module_unique_name(c->module, cx_op_name(op));
  if (!name) return NULL;
  in->name = name;
  in->loc = loc;
  return in;
}

static int64_t name_suffix(const char *s) {
  const char *dot = s ? strrchr(s, '.') : NULL;
  if (!dot || !dot[1]) return -1;
  int64_t v = 0;
  for (const char *p = dot + 1; *p; p++) {
    if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

void cx_module_reserve_names(cx_module *m) {
  int64_t mx = m->next_id;
  for (int i = 0; i < m->ncomps; i++) {
    const cx_comp *c = m->comps[i];
    int64_t v = name_suffix(c->name);
    if (v > mx) mx = v;
    for (int k = 0; k < c->ninstrs; k++)
      if ((v = name_suffix(c->instrs[k]->name)) > mx) mx = v;
  }
  if (mx < INT32_MAX) m->next_id = (int)mx;
}

cxla_status cx_comp_resort(cx_comp *c, const char *who) {
  for (int i = 0; i < c->ninstrs; i++)
    for (int j = 0; j < c->instrs[i]->nops; j++)
      if (c->instrs[i]->ops[j]->parent != c)
        return cx_error(c->module->ctx, CXLA_ERR_INTERNAL, "%s: %s uses %s from another computation", who,
                        c->instrs[i]->name ? c->instrs[i]->name : "?",
                        c->instrs[i]->ops[j]->name ? c->instrs[i]->ops[j]->name : "?");
  /* with every operand inside c, sorting can only fail for memory */
  return cx_comp_sort(c) > 0 ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

cx_instr **cx_comp_snapshot(const cx_comp *c, int *n) {
  *n = c->ninstrs;
  cx_instr **snap = cx_malloc(sizeof *snap * (size_t)(*n ? *n : 1));
  if (snap && *n) memcpy(snap, c->instrs, sizeof *snap * (size_t)*n);
  return snap;
}

int cx_comp_remove_instrs(cx_comp *c, const uint8_t *drop) {
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (!drop[i]) c->instrs[n++] = c->instrs[i];
  int removed = c->ninstrs - n;
  c->ninstrs = n;
  return removed;
}

/* Marks with a sentinel in comp->aux; aux is scratch that only the running pass uses. */
static char reach_mark, effect_mark;

static void mark_reachable(cx_comp *c) {
  if (c->aux) return;
  c->aux = &reach_mark;
  for (int i = 0; i < c->ninstrs; i++)
    for (int k = 0; k < c->instrs[i]->ncalled; k++)
      if (c->instrs[i]->called[k]) mark_reachable(c->instrs[i]->called[k]);
}

int cx_module_remove_unreachable(cx_module *m) {
  if (!m->entry) return 0;
  cx_module_clear_comp_aux(m);
  mark_reachable(m->entry);
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i]->aux) m->comps[n++] = m->comps[i];
  int removed = m->ncomps - n;
  m->ncomps = n;
  cx_module_clear_comp_aux(m);
  return removed;
}

int cx_instr_is_effectful(const cx_instr *in) {
  if (cx_op_has_side_effect(in->op)) return 1;
  for (int k = 0; k < in->ncalled; k++)
    if (in->called[k] && in->called[k]->aux == &effect_mark) return 1;
  return 0;
}

void cx_module_mark_effectful(cx_module *m) {
  cx_module_clear_comp_aux(m);
  /* Callees normally come before callers, so one sweep settles it; repeating until nothing
   * changes keeps it right for any order without recursion. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < m->ncomps; i++) {
      cx_comp *c = m->comps[i];
      if (c->aux) continue;
      for (int j = 0; j < c->ninstrs; j++)
        if (cx_instr_is_effectful(c->instrs[j])) {
          c->aux = &effect_mark;
          changed = 1;
          break;
        }
    }
  }
}

void cx_module_clear_comp_aux(cx_module *m) {
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
}

cxla_status cx_module_rewrite(cx_module *m, const char *who, int (*match)(const cx_instr *),
                              cxla_status (*rewrite)(cx_instr *), int *changed) {
  for (int i = 0; i < m->ncomps; i++) {
    cx_comp *c = m->comps[i];
    int n0 = c->ninstrs, ch = 0;
    for (int k = 0; k < n0; k++) {
      if (!match(c->instrs[k])) continue;
      CX_TRY(rewrite(c->instrs[k]));
      ch = 1;
    }
    if (ch) CX_TRY(cx_comp_resort(c, who));
    *changed |= ch;
  }
  return CXLA_OK;
}

cx_comp *cx_module_add_binary(cx_module *m, const char *prefix, cx_op op, cxla_type t) {
  const char *name = cx_module_unique_name(m, prefix);
  cx_comp *c = name ? cx_comp_new(m, name) : NULL;
  if (!c) return NULL;
  cx_shape s = cx_shape_scalar(t);
  cx_instr *p[2];
  for (int i = 0; i < 2; i++) {
    if (!(p[i] = cx_instr_add(c, CX_OP_PARAMETER, &s, 0, NULL, c->loc))) return NULL;
    p[i]->a.index = i;
  }
  if (!(c->root = cx_instr_add(c, op, &s, 2, p, c->loc)) || !cx_comp_index_params(c)) return NULL;
  if (!cx_module_add_comp(m, c)) return NULL;
  memmove(m->comps + 1, m->comps, sizeof *m->comps * (size_t)(m->ncomps - 1));
  m->comps[0] = c;
  return c;
}
