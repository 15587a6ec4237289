/* custom_call.c — custom-calls on the interpreter: the hook of each kind of target cxla knows
 * (ir/custom_calls.def), in a table indexed by kind. A target without a hook is refused when
 * compiling (check.c asks cx_interp_runs_custom_call). */
#include "interp/internal.h"
#include "ir/custom_call.h"

static const cx_interp_fn k_kinds[CX_CC_KIND_COUNT] = {
  [CX_CC_POTRF] = cx_interp_lapack_potrf,
  [CX_CC_TRSM] = cx_interp_lapack_trsm,
  [CX_CC_GETRF] = cx_interp_lapack_getrf,
  [CX_CC_GEQRF] = cx_interp_lapack_geqrf,
  [CX_CC_ORGQR] = cx_interp_lapack_orgqr,
  [CX_CC_SYEVD] = cx_interp_lapack_syevd,
  [CX_CC_GESDD] = cx_interp_lapack_gesvd,
  [CX_CC_GESVD] = cx_interp_lapack_gesvd,
};

static cx_interp_fn hook_of(const cx_instr *in) {
  int t = cx_cc_target_of(in);
  return t < 0 ? NULL : k_kinds[cx_cc_info_of((cx_cc_target)t)->kind];
}

int cx_interp_runs_custom_call(const cx_instr *in) { return hook_of(in) != NULL; }

CX_INTERP_EVALUATOR(cx_interp_custom_call) {
  cx_interp_fn f = hook_of(in);
  if (!f)
    return cx_error_at(st->m, in->loc, CXLA_ERR_UNSUPPORTED, "not supported: custom-call '%s' (target \"%s\")",
                       in->name ? in->name : "?", in->a.custom_call_target ? in->a.custom_call_target : "");
  return f(st, in, ops, out);
}
