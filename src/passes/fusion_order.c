/* fusion_order.c — names and order for the fusion passes: fresh names that cannot collide,
 * computations inserted before their callers, and topological re-sorting of a computation. */
#include <string.h>
#include "ir/edit.h"
#include "passes/fusion_order.h"

/* Names made here are "prefix.<next id>"; fu_reserve_names put the id counter above every
 * numeric suffix in the module, so they are new. */
const char *fu_comp_name(cx_module *m, const char *prefix) {
  return cx_module_unique_name(m, prefix);
}

void fu_reserve_names(cx_module *m) { cx_module_reserve_names(m); }

/* "exponential.3" -> a fresh "exponential.N" for a duplicated copy. */
const char *fu_fresh_name(cx_module *m, const char *name) {
  char base[128];
  size_t n = strlen(name ? name : "");
  if (n >= sizeof base) n = sizeof base - 1;
  memcpy(base, name ? name : "", n);
  base[n] = 0;
  char *dot = strrchr(base, '.');
  if (dot && dot[1]) {
    char *p = dot + 1;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) *dot = 0;
  }
  return cx_module_unique_name(m, base[0] ? base : "instr");
}

int fu_insert_comp_before(cx_module *m, cx_comp *fc, cx_comp *before) {
  if (!cx_module_add_comp(m, fc)) return 0;
  int at = cx_module_comp_index(m, before);
  if (at < 0) return 1;
  memmove(m->comps + at + 1, m->comps + at, sizeof *m->comps * (size_t)(m->ncomps - 1 - at));
  m->comps[at] = fc;
  return 1;
}

void fu_remove_comp(cx_module *m, cx_comp *c) {
  int at = cx_module_comp_index(m, c);
  if (at < 0) return;
  memmove(m->comps + at, m->comps + at + 1, sizeof *m->comps * (size_t)(m->ncomps - 1 - at));
  m->ncomps--;
}

int fu_sort(cx_comp *c) {
  int live = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->parent == c) c->instrs[live++] = c->instrs[i];
  c->ninstrs = live;
  return cx_comp_sort(c);
}

