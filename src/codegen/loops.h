/* loops.h — counted loops (and binary searches over them) and ifs in LLVM IR for the kernel
 * emitters. A loop is
 *   header: iv = phi [lo, pre], [iv+1, latch]; br iv < hi, body, exit
 * which LLVM's loop passes rotate, vectorise and unroll. The builder is left in the body by
 * cx_loop_begin and in the exit block by cx_loop_end; code in between may add blocks. */
#ifndef CX_LOOPS_H
#define CX_LOOPS_H
#include "codegen/cg.h"

typedef struct cx_loop {
  LLVMBasicBlockRef pre, header, body, exit;
  LLVMValueRef backedge;   /* the latch's branch back to the header (set by cx_loop_end) */
  LLVMValueRef iv;   /* i64 induction variable, lo <= iv < hi inside the body */
} cx_loop;

void cx_loop_begin(cx_cg *g, cx_loop *l, LLVMValueRef lo, LLVMValueRef hi, const char *name);
void cx_loop_end(cx_cg *g, cx_loop *l);
/* After cx_loop_end: asks LLVM to unroll the loop completely (llvm.loop.unroll.full), for a
 * loop whose trip count is a small constant. Only a pipeline with an unroll pass reads it: the
 * gpu backend's default<On> (at O2 it is what unrolls a thread's 4 elements into v4 accesses),
 * not the cpu backend's lean pipeline (llvm_compile.c), so cpu emitters must not rely on it. */
void cx_loop_unroll_full(cx_cg *g, cx_loop *l);
/* After cx_loop_end: asks the vectoriser to interleave `count` vector bodies at most
 * (llvm.loop.interleave.count), for a loop whose trip count is small but not constant. */
void cx_loop_interleave(cx_cg *g, cx_loop *l, int count);

/* A binary search over entries [0, n) of a run ordered so that those that "go first" lead: it
 * finds how many do. lo and hi live in the caller's two i64 slots (entry-block allocas, which
 * LLVM promotes). It always runs the steps the longest run (max_n) needs, a step doing
 * nothing once lo == hi: a counted loop of selects, with no exit that depends on the data.
 * Between begin and end the caller works out whether entry s.mid goes first; where s.active
 * is false, mid may lie past the run, so it must read something else. */
typedef struct cx_bsearch {
  LLVMValueRef lo_slot, hi_slot;
  cx_loop loop;
  LLVMValueRef lo, hi;   /* this step's bounds */
  LLVMValueRef active;   /* i1: lo < hi */
  LLVMValueRef mid;      /* (lo + hi) / 2 */
} cx_bsearch;
void cx_bsearch_begin(cx_cg *g, cx_bsearch *s, LLVMValueRef lo_slot, LLVMValueRef hi_slot, LLVMValueRef n,
                      int64_t max_n);
/* Ends the step (goes_first: i1, entry mid goes first) and the loop: the count that go first.
 * The builder is left after the loop, so call it before building what uses the count (not as
 * an argument beside other builder calls, whose order C leaves open). */
LLVMValueRef cx_bsearch_end(cx_cg *g, cx_bsearch *s, LLVMValueRef goes_first);

typedef struct cx_if {
  LLVMBasicBlockRef join; /* where both paths meet (labelled "else": it is the false edge's) */
} cx_if;
/* if (cond) { ... }: the builder is left in the then-block, and after cx_if_end in the join. */
void cx_if_begin(cx_cg *g, cx_if *f, LLVMValueRef cond);
void cx_if_end(cx_cg *g, cx_if *f);

#endif
