/* fusion_wrap.c — --fusion=off: every op that computes memory becomes its own single-op fusion,
 * so both modes go through the same kernel emitter and differ only in the number of kernels.
 * Scalar constants feeding those ops stay separate (no op is fused with another here). The
 * loop fusion pass uses the same wrapping for the ops nothing fused with. */
#include "passes/pass.h"
#include "ir/edit.h"
#include "passes/fusion_util.h"

cxla_status fu_wrap_all(cx_comp *c, int *changed) {
  int n;
  cx_instr **snap = cx_comp_snapshot(c, &n); /* wrapping edits c->instrs */
  if (!snap) return cx_oom(c->module->ctx);
  cxla_status st = CXLA_OK;
  for (int i = 0; i < n && st == CXLA_OK; i++) {
    cx_instr *x = snap[i], *f;
    if (x->parent != c || !fu_needs_kernel_wrap(x)) continue;
    st = fu_wrap(c, x, &f);
    if (st == CXLA_OK) *changed = 1;
  }
  cx_free(snap);
  return st;
}

cxla_status cx_pass_wrap_singletons(cx_module *m, int *changed) { return fu_each_control_comp(m, changed, fu_wrap_all); }
