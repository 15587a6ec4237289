/* annotations.c — removes the custom-calls that only annotate a value for a compiler of
 * several devices (custom_calls.def's ANNOTATION kind: Sharding, SPMDFullToShardShape,
 * SPMDShardToFullShape, MoveToHost, MoveToDevice), as XLA's ShardingRemover does when there
 * is one partition: every use of one (the root included) uses its operand instead, and the
 * annotation goes. A custom-call has side effects to DCE (an unknown target may do anything),
 * so this pass drops them itself. One that changes the shape is a program partitioned over
 * devices, which the compile-time check has already refused. A sink (jax's dce_sink) computes
 * nothing: one whose empty result nothing reads goes too, and what only it kept alive is then
 * dead, as XLA's DCE leaves it once the program no longer needs it. */
#include "ir/custom_call.h"
#include "ir/edit.h"
#include "passes/pass.h"

static int same_shape(const cx_shape *x, const cx_shape *y) {
  if (x->type == CXLA_TUPLE) return cx_shape_equal(x, y);
  return x->type == y->type && cx_shape_same_dims(x, y);
}

static int is_annotation(const cx_instr *in) {
  int t = cx_cc_target_of(in);
  if (t < 0 || cx_cc_info_of((cx_cc_target)t)->kind != CX_CC_ANNOTATION || in->nops < 1) return 0;
  if (in->nops == 1) return same_shape(&in->ops[0]->shape, &in->shape);
  if (in->shape.type != CXLA_TUPLE || in->shape.ntuple != in->nops) return 0;
  for (int i = 0; i < in->nops; i++)
    if (!same_shape(&in->ops[i]->shape, &in->shape.tuple[i])) return 0;
  return 1;
}

static int is_unused_sink(const cx_comp *c, const cx_instr *in) {
  int t = cx_cc_target_of(in);
  if (t < 0 || cx_cc_info_of((cx_cc_target)t)->kind != CX_CC_SINK || c->root == in) return 0;
  for (int i = 0; i < c->ninstrs; i++)
    for (int k = 0; k < c->instrs[i]->nops; k++)
      if (c->instrs[i]->ops[k] == in) return 0;
  return 1;
}

/* One of several operands becomes the tuple of them (get-tuple-element of a tuple folds). */
static cxla_status remove_in(cx_comp *c, int *changed) {
  int n = c->ninstrs, found = 0, added = 0;
  uint8_t *drop = cx_calloc((size_t)(2 * n + 1), 1); /* each may add a tuple, at the end */
  if (!drop) return cx_oom(c->module->ctx);
  for (int i = 0; i < n; i++) { /* operands first: a chain of them ends at the first's operand */
    cx_instr *a = c->instrs[i], *by;
    if (is_unused_sink(c, a)) {
      drop[i] = 1;
      found++;
      continue;
    }
    if (!is_annotation(a)) continue;
    by = a->nops == 1 ? a->ops[0] : cx_instr_add(c, CX_OP_TUPLE, &a->shape, a->nops, a->ops, a->loc);
    if (!by) {
      cx_free(drop);
      return cx_oom(c->module->ctx);
    }
    added += a->nops > 1;
    cx_comp_replace_uses(c, a, by);
    drop[i] = 1;
    found++;
  }
  if (found) *changed += cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  return added ? cx_comp_resort(c, "remove-annotations") : CXLA_OK;
}

cxla_status cx_pass_remove_annotations(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(remove_in(m->comps[i], changed));
  return CXLA_OK;
}
