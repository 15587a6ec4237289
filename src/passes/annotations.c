/* annotations.c — removes the custom-calls that only annotate a value for a compiler of
 * several devices (custom_calls.def's ANNOTATION kind: Sharding, SPMDFullToShardShape,
 * SPMDShardToFullShape, MoveToHost, MoveToDevice), as XLA's ShardingRemover does when there
 * is one partition: every use of one (the root included) uses its operand instead, and the
 * annotation goes. A custom-call has side effects to DCE (an unknown target may do anything),
 * so this pass drops them itself. One that changes the shape is a program partitioned over
 * devices, which the compile-time check has already refused. */
#include "ir/custom_call.h"
#include "ir/edit.h"
#include "passes/pass.h"

static int is_annotation(const cx_instr *in) {
  int t = cx_cc_target_of(in);
  if (t < 0 || cx_cc_info_of((cx_cc_target)t)->kind != CX_CC_ANNOTATION || in->nops != 1) return 0;
  const cx_shape *x = &in->ops[0]->shape;
  if (x->type == CXLA_TUPLE) return cx_shape_equal(x, &in->shape);
  return x->type == in->shape.type && cx_shape_same_dims(x, &in->shape);
}

static cxla_status remove_in(cx_comp *c, int *changed) {
  int n = c->ninstrs, found = 0;
  uint8_t *drop = cx_calloc((size_t)(n ? n : 1), 1);
  if (!drop) return cx_oom(c->module->ctx);
  for (int i = 0; i < n; i++) { /* operands first: a chain of them ends at the first's operand */
    cx_instr *a = c->instrs[i];
    if (!is_annotation(a)) continue;
    cx_comp_replace_uses(c, a, a->ops[0]);
    drop[i] = 1;
    found++;
  }
  if (found) *changed += cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  return CXLA_OK;
}

cxla_status cx_pass_remove_annotations(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(remove_in(m->comps[i], changed));
  return CXLA_OK;
}
