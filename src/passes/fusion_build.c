/* fusion_build.c — cx_fusion_make and cx_fusion_hoist (fusion_build.h) over the fusion passes'
 * own builder. */
#include <stdio.h>
#include <string.h>
#include "ir/clone.h"
#include "ir/edit.h"
#include "passes/fusion_build.h"
#include "passes/fusion_util.h"

cxla_status cx_fusion_make(cx_comp *c, cx_instr *const *parts, int n, cx_instr *out, cx_fusion_kind kind,
                           cx_instr **f) {
  fu_spec s = {.parts = (cx_instr **)parts, .nparts = n, .outs = &out, .nouts = 1, .kind = kind};
  return fu_fuse(c, &s, 0, f);
}

/* Removes x from c and re-sorts c. */
static cxla_status drop(cx_comp *c, const cx_instr *x) {
  int k = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i] != x) c->instrs[k++] = c->instrs[i];
  c->ninstrs = k;
  return cx_comp_resort(c, "fusion hoist");
}

cxla_status cx_fusion_hoist(cx_comp *c, cx_instr *f, cx_instr *inner, cx_fusion_kind kind, cx_instr **outer) {
  cx_module *m = c->module;
  cx_comp *fc = f->called[0];
  *outer = NULL;
  cx_instr *ops[inner->nops ? inner->nops : 1];
  for (int j = 0; j < inner->nops; j++) {
    const cx_instr *p = inner->ops[j];
    if (p->op != CX_OP_PARAMETER || p->a.index < 0 || p->a.index >= f->nops)
      return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: %s reads %s, not a parameter", inner->name, p->name);
    ops[j] = f->ops[p->a.index];
  }
  cx_instr *x = cx_instr_clone(c, inner, ops);
  const char *nm = x ? cx_module_unique_name(m, cx_op_name(inner->op)) : NULL;
  if (!nm) return cx_oom(m->ctx);
  x->name = nm;
  x->loc = f->loc;
  *outer = x;
  if (fc->root == inner) {
    cx_comp_replace_uses(c, f, x);
    return drop(c, f);
  }
  char pname[64];
  snprintf(pname, sizeof pname, "param_%s", cx_op_name(inner->op));
  cx_instr *p = cx_instr_new(fc, CX_OP_PARAMETER, &inner->shape, 0, NULL);
  const char *pn = p ? cx_module_unique_name(m, pname) : NULL;
  cx_instr **nops = pn ? cx_arena_alloc(&m->arena, sizeof *nops * (size_t)(f->nops + 1)) : NULL;
  if (!nops) return cx_oom(m->ctx);
  p->a.index = f->nops;
  p->name = pn;
  cx_comp_replace_uses(fc, inner, p);
  CX_TRY(drop(fc, inner));
  if (!cx_comp_index_params(fc)) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: bad parameters in %s", fc->name);
  memcpy(nops, f->ops, sizeof *nops * (size_t)f->nops);
  nops[f->nops] = x;
  f->ops = nops;
  f->nops++;
  f->a.fusion_kind = kind;
  return cx_comp_resort(c, "fusion hoist"); /* f reads x, which came last */
}
