/* instr_kernels.c — which instructions are kernels of their own (see cg.h). */
#include "codegen/emit.h"
#include "ir/custom_call.h"

static const cx_instr_kernel k_sort = {cx_emit_sort_ok, cx_emit_sort_kernel};
static const cx_instr_kernel k_topk = {cx_emit_topk_ok, cx_emit_topk_kernel};
static const cx_instr_kernel k_scatter = {cx_emit_scatter_ok, cx_emit_scatter_kernel};
static const cx_instr_kernel k_select_scatter = {cx_emit_select_scatter_ok, cx_emit_select_scatter_kernel};
static const cx_instr_kernel k_rng_bits = {cx_emit_rng_bits_ok, cx_emit_rng_bits_kernel};

const cx_instr_kernel *cx_emit_instr_kernel(const cx_instr *in) {
  switch (in->op) {
  case CX_OP_SORT: return &k_sort;
  case CX_OP_TOPK: return &k_topk;
  case CX_OP_SCATTER: return &k_scatter;
  case CX_OP_SELECT_AND_SCATTER: return &k_select_scatter;
  case CX_OP_RNG_BIT_GENERATOR: return &k_rng_bits;
  case CX_OP_CUSTOM_CALL: { /* XLA:CPU's TopK */
    int t = cx_cc_target_of(in);
    return t >= 0 && cx_cc_info_of((cx_cc_target)t)->kind == CX_CC_TOPK ? &k_topk : NULL;
  }
  default: return NULL;
  }
}
