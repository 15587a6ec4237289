/* library_lowering.h — HLO rewrites that bring dots, ragged dots and convolutions into the
 * forms the GEMM libraries and the emitter take, for any target (dot_lowering.c,
 * ragged_dot_lowering.c, dot_reduce.c), and the GEMM plan both backends call their library
 * with. What differs between targets is one struct: what their GEMM library accepts. */
#ifndef CX_LIBRARY_LOWERING_H
#define CX_LIBRARY_LOWERING_H
#include "ir/ir.h"

struct cx_gemm_plan;

/* What a target's GEMM library computes natively. */
typedef struct cx_gemm_target {
  /* f16/bf16 operands and result with f32 accumulation (cuBLASLt). Without it (OpenBLAS)
   * such dots are computed in f32, as XLA's CPU backend does. */
  int half;
  /* A batch in two levels, each with its own operand strides (cx_rt_gemm_batch2): a dot whose
   * batch dims split into two groups that each collapse to one stride is read in place. */
  int batch2;
  /* C written at any strides the plan takes (ldc, two batch levels, C transposed by computing
   * Cᵀ = Bᵀ·Aᵀ): a transpose of a dot's result folds into the dot (cx_fold_dot_out_transposes). */
  int strided_c;
  /* Whether a two-level batch's product (plan p, batch_inner not yet set) may read B
   * transposed in place; NULL: never, B is copied into order first (OpenBLAS's NT form is slow
   * on attention's small products, oneDNN's is not). */
  int (*batch2_bt)(const struct cx_gemm_plan *p);
} cx_gemm_target;

/* A GEMM call that computes a dot in place (operand and result memory as it is). */
typedef struct cx_gemm_plan {
  cxla_type type;
  int trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
  /* batch_inner products per step of stride_a, stride_b and stride_c; stride_a2, stride_b2 and
   * stride_c2 between them (only with cx_gemm_target.batch2; else batch_inner is 1). */
  int64_t batch_inner, stride_a2, stride_b2, stride_c2;
  /* A is the dot's rhs and B its lhs (C is written transposed: only from cx_dot_plan_out) */
  int swap_ab;
} cx_gemm_plan;

/* 1 and *p if dot `in` maps onto row-major GEMMs of target t with the operands as they are
 * laid out and the result row-major; else 0 and *why. */
int cx_dot_plan(const cx_instr *in, const cx_gemm_target *t, cx_gemm_plan *p, const char **why);
/* The same with the result written at element strides cstride[i] for the dot's result dim i
 * (only for targets with strided_c; non-empty dots). */
int cx_dot_plan_out(const cx_instr *in, const int64_t *cstride, const cx_gemm_target *t, cx_gemm_plan *p,
                    const char **why);

/* In c, a kLoop fusion that only transposes (and reshapes) a dot's result, where it is the
 * dot's one user, becomes a kOutput fusion of the dot and its transpose, which the backend
 * computes as one GEMM writing C at the transpose's strides (when cx_dot_plan_out takes them).
 * *folded counts them (their old fused computations are left for the caller to remove). */
cxla_status cx_fold_dot_out_transposes(cx_comp *c, const cx_gemm_target *t, int *folded);
/* The dot of such a fusion, with cstride (CXLA_MAX_RANK) set to where the fusion's output holds
 * each of the dot's result dims; NULL if f is not one. */
const cx_instr *cx_dot_out_fusion(const cx_instr *f, int64_t *cstride);

/* The rewrites before buffer assignment: kOutput fusions split into dot + in-place kLoop
 * epilogue, dots of types t's GEMM lacks computed in f32, dot operands that no GEMM layout
 * fits transposed by a kernel, integer dots as reductions, ragged dots in the canonical form
 * the runtime's ragged-dot call takes, convolutions wrapped in single-op fusions, and (with
 * t->strided_c) transposes of a dot's result folded into its GEMM. */
cxla_status cx_lower_library_ops(cx_module *m, const cx_gemm_target *t);

/* The parts of it in files of their own: a ragged-dot in the canonical form cx_rt_ragged_dot
 * takes, with kernels that bring its operands there and its result back (a ragged batch
 * dimension makes it a dot in place); an integer dot as a kInput reduce fusion in its place. */
cxla_status cx_lower_ragged_dot(cx_comp *c, cx_instr *x);
cxla_status cx_int_dot_as_reduce(cx_comp *c, cx_instr *d);

#endif
