/* emit.h — what the kernel emitters share (internal to src/codegen/): the kernel function
 * scaffold, the analysis of kInput fusions, and the checks cx_emit_supported runs. */
#ifndef CX_EMIT_H
#define CX_EMIT_H
#include "codegen/gen.h"

#define CX_EMIT_MAX_ARGS 128    /* outputs + operands of one kernel */
#define CX_EMIT_MAX_REDUCES 16

/* One kernel being emitted: the target's entry function `name` (cx_target_cpu: `void name(i8
 * **args, i64 begin, i64 end)` loads the pointers) calls an internal, always-inlined
 * `name.body(ptr noalias p0, ..., i64 begin, i64 end)`, so the pointers carry noalias (the
 * inliner turns it into alias scopes) except those the caller says may alias. */
typedef struct cx_kfn {
  cx_cg *cg;
  cx_gen g;
  LLVMValueRef outer, inner;
  LLVMValueRef begin, end;      /* i64 parameters of the body */
  int nargs;
  LLVMValueRef ptr[CX_EMIT_MAX_ARGS];
  char name[64];
} cx_kfn;

/* Creates both functions and leaves the builder in the body's entry block. alias (NULL: none):
 * a marked args[i] may share memory with another argument (no noalias), unless `shared` says
 * the pairs are exact and each marked operand is read through its output's pointer. */
cxla_status cx_kfn_begin(cx_kfn *k, cx_cg *cg, const cx_instr *fusion, int nargs, const cx_kalias *alias,
                         int shared);
/* Finishes the body (ret), verifies both functions; on any error deletes them. */
cxla_status cx_kfn_end(cx_kfn *k, cx_kernel *out, int64_t total, int64_t grain, int nout, int nin);
/* Binds the fused computation's parameters to ptr[first + p]. */
int cx_kfn_bind_params(cx_kfn *k, const cx_comp *body, int first);

/* Array leaves of a fusion's result in DFS order (flat tuples only); -1 if unsupported. */
int cx_emit_out_leaves(const cx_shape *s, const cx_shape **leaves, int max);

/* ---- kInput fusions ---- */
typedef struct cx_red_plan {
  int nred;
  const cx_instr *red[CX_EMIT_MAX_REDUCES];
  cx_shape in;                  /* the reduces' input dims (type unused) */
  cx_shape out;                 /* their output dims */
  int reduced[CXLA_MAX_RANK];   /* per input dim */
  int row;                      /* the innermost non-trivial input dim is reduced */
  int inner;                    /* that dim (-1: every dim has size 1) */
  int nleaves;
  const cx_instr *leaf[CX_EMIT_MAX_ARGS];
  int leaf_val[CX_EMIT_MAX_ARGS];   /* which value of a multi-value instruction */
  int leaf_in[CX_EMIT_MAX_ARGS];    /* 1: input-shaped (stored while reading the input);
                                       2: input-shaped, read per-row reduce results (stored
                                       in a last pass over the row) */
  int stage[CX_EMIT_MAX_REDUCES];   /* row fusion: 0, or 1 + the stage of the reduces whose
                                       per-row results its input reads */
  int nstages;
  /* Row fusion: the last stage's input (softmax's exp) is kept in output leaf stash_leaf
   * while that stage reads it, and the last pass reads it back instead of computing it again
   * (NULL: none). Only where no output shares memory with an operand. */
  const cx_instr *stash;
  int stash_leaf;
  /* Column reduction split over blocks of its reduced positions (cx_red_plan_split; 0: not
   * split): `blocks` blocks of `block_rows` positions (the last may have fewer), partial results
   * in `scratch` bytes, partial phase chunks of at least parts_grain blocks. */
  int64_t blocks, block_rows, scratch, parts_grain;
} cx_red_plan;

/* Analyses a fusion containing reduces; 0 with a reason if the emitter cannot do it. */
int cx_red_plan_make(const cx_instr *fusion, cx_red_plan *p, const char **why);
/* Decides whether a column reduction on the cpu is split over blocks of its reduced positions
 * (reduce_plan.c), filling p->blocks and the rest. */
void cx_red_plan_split(cx_red_plan *p);
/* Emits the kInput kernel body (args = outputs, operands). */
cxla_status cx_emit_reduce_body(cx_kfn *k, const cx_instr *fusion, const cx_red_plan *p, uint64_t may_alias,
                                int64_t *total, int64_t *grain);

/* 1 if every path from x to `target` (a reduce or dot) goes through ops that read their
 * operand at the same linear index (elementwise ops, reshapes, bitcasts) with `count`
 * elements, so an override of target ignoring the index is exact. */
int cx_emit_reads_at_same_index(const cx_instr *x, const cx_instr *target, int64_t count);
int cx_emit_depends_on(const cx_instr *x, const cx_instr *target);
/* 1 if v is provably <= 0 or NaN for every input (value_sign.c: x - broadcast(reduce_max(x))). */
int cx_emit_nonpositive(const cx_instr *v);
/* 1 if b = broadcast(r), r a reduce, puts each reduced set's result back on every element of
 * the set it came from (value_sign.c). */
int cx_emit_broadcasts_back(const cx_instr *b, const cx_instr *r);
/* 1 if r reduces one array with maximum(p0, p1) (value_sign.c). */
int cx_emit_is_max_reduce(const cx_instr *r);

/* Checks a single instruction of a fused or scalar computation (op, types, layouts). */
int cx_emit_instr_ok(const cx_instr *in, int scalar_comp, const char **why);
/* Thread-local message buffer for `why` strings. */
const char *cx_emit_why(const char *fmt, ...) CX_PRINTF(1, 2);

/* ---- instructions that are kernels of their own (cg.h's cx_instr_kernel; instr_kernels.c) ---- */
cxla_status cx_emit_sort_kernel(cx_cg *g, cx_instr *sort, cx_kernel *out);
int cx_emit_sort_ok(const cx_instr *sort, const char **why);
cxla_status cx_emit_topk_kernel(cx_cg *g, cx_instr *topk, cx_kernel *out);
int cx_emit_topk_ok(const cx_instr *topk, const char **why);
cxla_status cx_emit_scatter_kernel(cx_cg *g, cx_instr *scatter, cx_kernel *out);
int cx_emit_scatter_ok(const cx_instr *scatter, const char **why);
cxla_status cx_emit_select_scatter_kernel(cx_cg *g, cx_instr *sas, cx_kernel *out);
int cx_emit_select_scatter_ok(const cx_instr *sas, const char **why);
/* ... and inside a fusion: its windows disjoint and small (cx_gen_select_and_scatter). */
int cx_emit_select_scatter_fused_ok(const cx_instr *sas, const char **why);
cxla_status cx_emit_rng_bits_kernel(cx_cg *g, cx_instr *rng, cx_kernel *out);
int cx_emit_rng_bits_ok(const cx_instr *rng, const char **why);
/* Philox4x32-10 of the 128-bit counter (lo, hi) (i64 values) with key words k0, k1 (i32): the
 * four i32 words into o (rng_bits_emit.c) */
void cx_emit_philox(cx_cg *cg, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef *o);

#endif
