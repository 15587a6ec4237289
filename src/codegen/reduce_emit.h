/* reduce_emit.h — what the kernels of kInput fusions (reduce_emit.c) share with their
 * warp-per-row form for the GPU (reduce_emit_warp.c): the emitter's state for one fusion and
 * the steps every strategy is made of. Internal to codegen. */
#ifndef CX_REDUCE_EMIT_H
#define CX_REDUCE_EMIT_H
#include "codegen/emit.h"

typedef struct cx_red_state {
  cx_kfn *k;
  const cx_red_plan *p;
  const cx_instr *stash;                    /* p->stash, unless an output shares memory */
  int nval[CX_EMIT_MAX_REDUCES];            /* values of each reduce */
  LLVMValueRef slot[CX_EMIT_MAX_REDUCES][CX_GEN_MAX_VALS];
  LLVMTypeRef ty[CX_EMIT_MAX_REDUCES][CX_GEN_MAX_VALS];
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int out_stage;                            /* the pass that stores the input-shaped outputs that
                                               read reduce results: -1, a pass of its own after
                                               the last stage, or the last stage's when none of
                                               them reads that stage's reduces */
  int nt_leaf;                              /* the input-shaped output stored with non-temporal
                                               stores (large row fusions on the cpu), else -1 */
  LLVMValueRef stash_buf;                   /* with nt_leaf: a row-sized scratch that holds the
                                               stash, so the output is written once */
  LLVMValueRef row_off;                     /* linear index of the current row's first element */
  LLVMValueRef out_buf, nt_idx;             /* with nt_leaf: the block buffer of last_pass_nt, and
                                               the index into it while a block is computed */
  int nt_dim;                               /* with nt_leaf: the one reduced input dim */
  const cx_instr *fusion;
  int nin;                                  /* the fusion's operands (ptr[p->nleaves + i]) */
  int64_t row_len, nt_esize;                /* its length; nt_leaf's element size in bytes */
  int max_stage, max_r, max_arg;            /* plan_fast_max: the stage whose one reduce max_r
                                               is a max over operand max_arg's rows, else -1 */
  const cx_instr *div;                      /* plan_fast_div's divide, else NULL */
  int div_r;                                /* with div: the reduce its divisor broadcasts */
  LLVMValueRef emin;                        /* with div: i32, the smallest bits of its nonzero
                                               dividends over the row, minus one (the stage of
                                               div_r folds them in) */
  LLVMValueRef has;                         /* warp rows: i1, the lane's accumulators hold a value
                                               (only lane 0 starts from the init value, so a
                                               reduction applies it once, as everywhere else) */
  LLVMValueRef part[CX_EMIT_MAX_REDUCES];   /* split column reductions: each reduce's partial
                                               results in the scratch, [block][output] */
} cx_red_state;

/* Address of accumulator v of reduce r for chunk lane j (NULL j: the scalar slot). */
LLVMValueRef cx_red_acc_ptr(cx_red_state *s, int r, int v, LLVMValueRef j);
/* Sets lane j's accumulators of one stage's reduces to their init values. */
void cx_red_store_inits(cx_red_state *s, LLVMValueRef j, int stage);
/* Folds the input element at idx into the accumulators of one stage's reduces and stores the
 * input-shaped outputs made in that pass (leaf_in == 1 in stage 0; 2 in out_stage's pass). */
void cx_red_fold(cx_red_state *s, const cx_idx *idx, LLVMValueRef j, int reassoc, int stage);
/* Makes one stage's finished accumulators of lane j the values of their reduces for the
 * generators; returns how many overrides were pushed. */
int cx_red_push_results(cx_red_state *s, LLVMValueRef j, int stage);
/* Stores the outputs computed from the finished accumulators at output index o (every
 * reduce's result pushed as an override). */
void cx_red_finish(cx_red_state *s, LLVMValueRef o);
/* Row reductions (and narrow column ones) with a warp per output, on targets with warp_size. */
void cx_red_emit_row_warp(cx_red_state *s);

#endif
