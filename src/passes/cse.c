/* cse.c — common subexpression elimination: within one computation, an instruction identical
 * to an earlier one (same op, operands, shape with layout, attributes, literal bits and called
 * computations) is replaced by it. Instructions are visited in order with operands already
 * redirected, so whole identical trees merge in one sweep; a hash table keeps it linear.
 * Never merged: parameters, ops with side effects or that backends do not model (the OTHER
 * class: rng, custom-call, infeed, after-all, collectives, ...), and calls/loops whose
 * computations have side effects. */
#include "ir/attrs.h"
#include "ir/edit.h"
#include "passes/pass.h"

static uint64_t hash_instr(const cx_instr *in) {
  uint64_t h = cx_hash_mix((uint64_t)in->op, (uint64_t)in->shape.type);
  for (int i = 0; i < in->shape.rank; i++) h = cx_hash_mix(h, (uint64_t)in->shape.dims[i]);
  for (int j = 0; j < in->nops; j++) h = cx_hash_mix(h, (uint64_t)(uintptr_t)in->ops[j]);
  for (int k = 0; k < in->ncalled; k++) h = cx_hash_mix(h, (uint64_t)(uintptr_t)in->called[k]);
  return cx_attrs_hash(h, &in->a);
}

static int shapes_eq(const cx_shape *a, const cx_shape *b) {
  if (!cx_shape_equal(a, b) || a->dynamic != b->dynamic || !cx_shape_same_layout(a, b)) return 0;
  if (a->type == CXLA_TUPLE) {
    for (int i = 0; i < a->ntuple; i++)
      if (!shapes_eq(&a->tuple[i], &b->tuple[i])) return 0;
  }
  return 1;
}

static int instr_eq(const cx_instr *a, const cx_instr *b) {
  if (a->op != b->op || a->nops != b->nops || a->ncalled != b->ncalled || !shapes_eq(&a->shape, &b->shape)) return 0;
  for (int j = 0; j < a->nops; j++)
    if (a->ops[j] != b->ops[j]) return 0;
  for (int k = 0; k < a->ncalled; k++)
    if (a->called[k] != b->called[k]) return 0;
  return cx_attrs_equal(&a->a, &b->a);
}

static int mergeable(const cx_instr *in) {
  return in->op != CX_OP_PARAMETER && cx_op_class_of(in->op) != CX_CLASS_OTHER && !cx_instr_is_effectful(in);
}

static cxla_status cse_comp(cx_comp *c, int *changed) {
  size_t cap = 16;
  while (cap < 2 * (size_t)c->ninstrs) cap *= 2;
  cx_instr **table = cx_calloc(cap, sizeof *table);
  if (!table) return cx_oom(c->module->ctx);
  int merged = 0;
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    for (int j = 0; j < in->nops; j++)
      if (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux; /* representatives are never replaced */
    if (!mergeable(in)) continue;
    size_t h = (size_t)hash_instr(in) & (cap - 1);
    while (table[h] && !instr_eq(table[h], in)) h = (h + 1) & (cap - 1);
    if (table[h]) {
      in->aux = table[h];
      merged++;
    } else {
      table[h] = in;
    }
  }
  cx_free(table);
  if (merged) {
    /* the representative comes earlier than every instruction it replaces, so the order
     * stays topological once the replaced ones are gone */
    if (c->root && c->root->aux) c->root = c->root->aux;
    int n = 0;
    for (int i = 0; i < c->ninstrs; i++)
      if (!c->instrs[i]->aux) c->instrs[n++] = c->instrs[i];
    c->ninstrs = n;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  *changed += merged;
  return CXLA_OK;
}

cxla_status cx_pass_cse(cx_module *m, int *changed) {
  *changed = 0;
  cx_module_mark_effectful(m);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) s = cse_comp(m->comps[i], changed);
  cx_module_clear_comp_aux(m);
  return s;
}
