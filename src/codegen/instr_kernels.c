/* instr_kernels.c — which instructions are kernels of their own (see cg.h). */
#include "codegen/emit.h"
#include "ir/custom_call.h"

static const cx_instr_kernel k_sort = {cx_emit_sort_ok, cx_emit_sort_kernel};
static const cx_instr_kernel k_topk = {cx_emit_topk_ok, cx_emit_topk_kernel};
static const cx_instr_kernel k_scatter = {cx_emit_scatter_ok, cx_emit_scatter_kernel};
static const cx_instr_kernel k_select_scatter = {cx_emit_select_scatter_ok, cx_emit_select_scatter_kernel};
static const cx_instr_kernel k_rng_bits = {cx_emit_rng_bits_ok, cx_emit_rng_bits_kernel};

static const cx_instr_kernel *const k_kernels[CX_OP_COUNT] = {
    [CX_OP_SORT] = &k_sort, [CX_OP_TOPK] = &k_topk, [CX_OP_SCATTER] = &k_scatter,
    [CX_OP_SELECT_AND_SCATTER] = &k_select_scatter, [CX_OP_RNG_BIT_GENERATOR] = &k_rng_bits,
};

const cx_instr_kernel *cx_emit_instr_kernel(const cx_instr *in) {
  if ((unsigned)in->op >= CX_OP_COUNT) return NULL;
  if (in->op == CX_OP_CUSTOM_CALL) { /* XLA:CPU's TopK */
    int t = cx_cc_target_of(in);
    return t >= 0 && cx_cc_info_of((cx_cc_target)t)->kind == CX_CC_TOPK ? &k_topk : NULL;
  }
  return k_kernels[in->op];
}
