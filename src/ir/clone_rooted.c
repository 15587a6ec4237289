/* clone_rooted.c — a copy of a module with another ROOT: bisecting a miscompile ("which
 * instruction is the first to differ?") compiles a prefix of ENTRY at a time, each the module
 * with an earlier instruction, or a tuple of several, as its result. */
#include "ir/clone.h"
#include "ir/edit.h"

cx_module *cx_module_clone_rooted(cx_module *src, const int *ids, int n) {
  if (!src->entry || n < 1) {
    cx_error(src->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s: no ENTRY instruction to make the root",
             src->name ? src->name : "?");
    return NULL;
  }
  cx_module *m = cx_module_clone(src);
  if (!m) return NULL;
  cx_comp *e = m->entry;
  cx_instr **roots = cx_calloc((size_t)n, sizeof *roots);
  cx_shape *elems = cx_calloc((size_t)n, sizeof *elems);
  cxla_status s = roots && elems ? CXLA_OK : cx_oom(m->ctx);
  for (int k = 0; k < n && s == CXLA_OK; k++) {
    for (int i = 0; i < e->ninstrs && !roots[k]; i++)
      if (e->instrs[i]->id == ids[k]) roots[k] = e->instrs[i];
    if (!roots[k])
      s = cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "ENTRY %s has no instruction with id %d", e->name, ids[k]);
    else
      elems[k] = roots[k]->shape;
  }
  cx_instr *root = s == CXLA_OK ? roots[0] : NULL;
  if (s == CXLA_OK && n > 1) {
    cx_shape t = {.type = CXLA_TUPLE, .ntuple = n, .tuple = elems};
    cx_loc loc = {0, 0};
    if (!(root = cx_instr_add(e, CX_OP_TUPLE, &t, n, roots, loc))) s = cx_oom(m->ctx);
  }
  cx_free(roots);
  cx_free(elems);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return NULL;
  }
  e->root = root;
  cx_comp_remove_dead(e);
  cx_module_remove_unreachable(m);
  return m;
}
