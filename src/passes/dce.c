/* dce.c — dead code elimination: in every computation, keeps what the root needs, the
 * parameters (a computation's signature never changes), and every instruction with a side
 * effect (directly, or through a computation it calls) together with what it needs; drops the
 * rest. Then drops the computations the ENTRY no longer reaches. */
#include "ir/edit.h"
#include "passes/pass.h"

static char live;

static cxla_status dce_comp(cx_comp *c, int *changed) {
  int n = c->ninstrs;
  cx_instr **stack = cx_malloc(sizeof *stack * (size_t)(n ? n : 1));
  if (!stack) return cx_oom(c->module->ctx);
  int sp = 0;
  for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  /* seeds: root, parameters, side effects; then everything they use (iteratively: chains of
   * thousands of instructions must not exhaust the C stack) */
  for (int i = 0; i < n; i++) {
    cx_instr *in = c->instrs[i];
    if (in == c->root || in->op == CX_OP_PARAMETER || cx_instr_is_effectful(in)) {
      in->aux = &live;
      stack[sp++] = in;
    }
  }
  while (sp) {
    cx_instr *in = stack[--sp];
    for (int j = 0; j < in->nops; j++) {
      cx_instr *o = in->ops[j];
      if (o->aux || o->parent != c) continue; /* an operand from elsewhere is the verifier's business */
      o->aux = &live;
      stack[sp++] = o; /* each instruction is pushed once, so n slots suffice */
    }
  }
  cx_free(stack);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (c->instrs[i]->aux) c->instrs[k++] = c->instrs[i];
  c->ninstrs = k;
  for (int i = 0; i < k; i++) c->instrs[i]->aux = NULL;
  *changed += n - k;
  return CXLA_OK;
}

cxla_status cx_pass_dce(cx_module *m, int *changed) {
  *changed = 0;
  cx_module_mark_effectful(m); /* comp->aux: which computations have side effects */
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) s = dce_comp(m->comps[i], changed);
  cx_module_clear_comp_aux(m);
  if (s == CXLA_OK) *changed += cx_module_remove_unreachable(m);
  return s;
}
