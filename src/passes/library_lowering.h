/* library_lowering.h — HLO rewrites that bring dots, ragged dots and convolutions into the
 * forms the GEMM libraries and the emitter take, for any target (dot_lowering.c,
 * ragged_dot_lowering.c, dot_reduce.c), and the GEMM plan both backends call their library
 * with. What differs between targets is one struct: what their GEMM library accepts. */
#ifndef CX_LIBRARY_LOWERING_H
#define CX_LIBRARY_LOWERING_H
#include "ir/ir.h"

/* What a target's GEMM library computes natively. */
typedef struct cx_gemm_target {
  /* f16/bf16 operands and result with f32 accumulation (cuBLASLt). Without it (OpenBLAS)
   * such dots are computed in f32, as XLA's CPU backend does. */
  int half;
  /* A batch in two levels, each with its own operand strides (cx_rt_gemm_batch2): a dot whose
   * batch dims split into two groups that each collapse to one stride is read in place. */
  int batch2;
} cx_gemm_target;

/* A GEMM call that computes a dot in place (operand and result memory as it is). */
typedef struct cx_gemm_plan {
  cxla_type type;
  int trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
  /* batch_inner products per step of stride_a and stride_b; stride_a2 and stride_b2 between
   * them (only with cx_gemm_target.batch2; else batch_inner is 1). C is always contiguous. */
  int64_t batch_inner, stride_a2, stride_b2;
} cx_gemm_plan;

/* 1 and *p if dot `in` maps onto row-major GEMMs of target t with the operands as they are
 * laid out; else 0 and *why. */
int cx_dot_plan(const cx_instr *in, const cx_gemm_target *t, cx_gemm_plan *p, const char **why);

/* The rewrites before buffer assignment: kOutput fusions split into dot + in-place kLoop
 * epilogue, dots of types t's GEMM lacks computed in f32, dot operands that no GEMM layout
 * fits transposed by a kernel, integer dots as reductions, ragged dots in the canonical form
 * the runtime's ragged-dot call takes, and convolutions wrapped in single-op fusions. */
cxla_status cx_lower_library_ops(cx_module *m, const cx_gemm_target *t);

/* The parts of it in files of their own: a ragged-dot in the canonical form cx_rt_ragged_dot
 * takes, with kernels that bring its operands there and its result back (a ragged batch
 * dimension makes it a dot in place); an integer dot as a kInput reduce fusion in its place. */
cxla_status cx_lower_ragged_dot(cx_comp *c, cx_instr *x);
cxla_status cx_int_dot_as_reduce(cx_comp *c, cx_instr *d);

#endif
