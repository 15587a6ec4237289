/* buffers_copy.c — the copies buffer assignment inserts into the program: a result leaf that
 * cannot be its own buffer (an ENTRY output that is a parameter, a constant or a value seen
 * twice; a while-body result sitting in another element's state buffer) is routed through a
 * `copy` instruction, which defines a fresh value. */
#include <string.h>
#include "ir/edit.h"
#include "passes/buffers_int.h"

/* Rebuilds c's root so that the leaves marked in `need` go through a `copy`. */
static cx_instr *rebuild(cx_comp *c, cx_instr *x, const uint8_t *need, int *leaf) {
  if (x->shape.type != CXLA_TUPLE) {
    int l = cx_type_is_array(x->shape.type) ? (*leaf)++ : -1;
    if (l < 0 || !need[l]) return x;
    return cx_instr_add(c, CX_OP_COPY, &x->shape, 1, &x, x->loc);
  }
  int n = x->shape.ntuple;
  cx_instr *stack[16], **el = n <= 16 ? stack : cx_malloc(sizeof *el * (size_t)n);
  if (!el) return NULL;
  int changed = 0, ok = 1;
  for (int i = 0; i < n && ok; i++) {
    int before = *leaf, cnt = cx_shape_leaf_count(&x->shape.tuple[i]), any = 0;
    for (int l = 0; l < cnt; l++) any |= need[before + l];
    if (!any) { /* untouched element: read it without new instructions where possible */
      *leaf += cnt;
      el[i] = NULL;
      continue;
    }
    cx_instr *e = x->op == CX_OP_TUPLE ? x->ops[i] : cx_instr_add(c, CX_OP_GET_TUPLE_ELEMENT, &x->shape.tuple[i], 1, &x, x->loc);
    if (e && e->op == CX_OP_GET_TUPLE_ELEMENT && e->ops[0] == x) e->a.index = i;
    el[i] = e ? rebuild(c, e, need, leaf) : NULL;
    ok = el[i] != NULL;
    changed = 1;
  }
  cx_instr *r = NULL;
  if (ok && changed) {
    for (int i = 0; i < n && ok; i++) {
      if (el[i]) continue;
      if (x->op == CX_OP_TUPLE) el[i] = x->ops[i];
      else if ((el[i] = cx_instr_add(c, CX_OP_GET_TUPLE_ELEMENT, &x->shape.tuple[i], 1, &x, x->loc))) el[i]->a.index = i;
      ok = el[i] != NULL;
    }
    if (ok) r = cx_instr_add(c, CX_OP_TUPLE, &x->shape, n, el, x->loc);
  } else if (ok) {
    r = x;
  }
  if (el != stack) cx_free(el);
  return r;
}

cxla_status cx_buffers_copy_root_leaves(cx_comp *c, const uint8_t *need) {
  int leaf = 0;
  cx_instr *r = rebuild(c, c->root, need, &leaf);
  if (!r) return cx_oom(c->module->ctx);
  c->root = r;
  return CXLA_OK;
}

