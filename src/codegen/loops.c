/* loops.c — see loops.h. */
#include <llvm-c/DebugInfo.h>
#include "codegen/loops.h"

static LLVMValueRef cur_fn(cx_cg *g) { return LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b)); }

void cx_loop_begin(cx_cg *g, cx_loop *l, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
  LLVMValueRef fn = cur_fn(g);
  l->pre = LLVMGetInsertBlock(g->b);
  l->header = LLVMAppendBasicBlockInContext(g->llctx, fn, name);
  l->body = LLVMAppendBasicBlockInContext(g->llctx, fn, "body");
  l->exit = LLVMAppendBasicBlockInContext(g->llctx, fn, "exit");
  LLVMBuildBr(g->b, l->header);
  LLVMPositionBuilderAtEnd(g->b, l->header);
  l->iv = LLVMBuildPhi(g->b, g->t_i64, "i");
  LLVMAddIncoming(l->iv, &lo, &l->pre, 1);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, l->iv, hi, ""), l->body, l->exit);
  LLVMPositionBuilderAtEnd(g->b, l->body);
}

void cx_loop_end(cx_cg *g, cx_loop *l) {
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMValueRef next = LLVMBuildAdd(g->b, l->iv, LLVMConstInt(g->t_i64, 1, 0), "");
  LLVMSetNSW(next, 1);
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  l->backedge = LLVMBuildBr(g->b, l->header);
  LLVMPositionBuilderAtEnd(g->b, l->exit);
}

/* Puts the hint `node` on l's back edge as its !llvm.loop, distinct !{self, node}: LLVM finds a
 * loop's hints on its latch branch, and the self reference keeps the node distinct per loop. */
static void set_loop_hint(cx_cg *g, cx_loop *l, LLVMMetadataRef node) {
  LLVMMetadataRef ops[2] = {NULL, node};
  LLVMMetadataRef self = LLVMTemporaryMDNode(g->llctx, ops + 1, 1);
  ops[0] = self;
  LLVMMetadataRef loop = LLVMMDNodeInContext2(g->llctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, loop);
  unsigned kind = LLVMGetMDKindIDInContext(g->llctx, "llvm.loop", 9);
  LLVMSetMetadata(l->backedge, kind, LLVMMetadataAsValue(g->llctx, loop));
}

void cx_loop_unroll_full(cx_cg *g, cx_loop *l) {
  LLVMMetadataRef hint = LLVMMDStringInContext2(g->llctx, "llvm.loop.unroll.full", 21);
  set_loop_hint(g, l, LLVMMDNodeInContext2(g->llctx, &hint, 1));
}

void cx_loop_interleave(cx_cg *g, cx_loop *l, int count) {
  LLVMMetadataRef hint[2] = {LLVMMDStringInContext2(g->llctx, "llvm.loop.interleave.count", 26),
                             LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(g->llctx), (unsigned)count, 0))};
  set_loop_hint(g, l, LLVMMDNodeInContext2(g->llctx, hint, 2));
}

void cx_bsearch_begin(cx_cg *g, cx_bsearch *s, LLVMValueRef lo_slot, LLVMValueRef hi_slot, LLVMValueRef n,
                      int64_t max_n) {
  LLVMBuilderRef b = g->b;
  LLVMValueRef zero = LLVMConstInt(g->t_i64, 0, 0), one = LLVMConstInt(g->t_i64, 1, 0);
  s->lo_slot = lo_slot, s->hi_slot = hi_slot;
  LLVMBuildStore(b, zero, lo_slot);
  LLVMBuildStore(b, n, hi_slot);
  int bits = 1; /* each step halves hi - lo at least: bits steps bring any n <= max_n to 0 */
  while (((int64_t)1 << bits) <= max_n) bits++;
  cx_loop_begin(g, &s->loop, zero, LLVMConstInt(g->t_i64, (unsigned long long)bits, 0), "search");
  s->lo = LLVMBuildLoad2(b, g->t_i64, lo_slot, "");
  s->hi = LLVMBuildLoad2(b, g->t_i64, hi_slot, "");
  s->active = LLVMBuildICmp(b, LLVMIntSLT, s->lo, s->hi, "");
  s->mid = LLVMBuildLShr(b, LLVMBuildAdd(b, s->lo, s->hi, ""), one, "");
}

LLVMValueRef cx_bsearch_end(cx_cg *g, cx_bsearch *s, LLVMValueRef goes_first) {
  LLVMBuilderRef b = g->b;
  LLVMValueRef one = LLVMConstInt(g->t_i64, 1, 0);
  LLVMValueRef up = LLVMBuildAnd(b, s->active, goes_first, "");
  LLVMValueRef down = LLVMBuildAnd(b, s->active, LLVMBuildNot(b, goes_first, ""), "");
  LLVMBuildStore(b, LLVMBuildSelect(b, up, LLVMBuildAdd(b, s->mid, one, ""), s->lo, ""), s->lo_slot);
  LLVMBuildStore(b, LLVMBuildSelect(b, down, s->mid, s->hi, ""), s->hi_slot);
  cx_loop_end(g, &s->loop);
  return LLVMBuildLoad2(b, g->t_i64, s->lo_slot, "");
}

void cx_if_begin(cx_cg *g, cx_if *f, LLVMValueRef cond) {
  LLVMValueRef fn = cur_fn(g);
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->llctx, fn, "then");
  f->join = LLVMAppendBasicBlockInContext(g->llctx, fn, "else");
  LLVMBuildCondBr(g->b, cond, then, f->join);
  LLVMPositionBuilderAtEnd(g->b, then);
}

void cx_if_end(cx_cg *g, cx_if *f) {
  LLVMBuildBr(g->b, f->join);
  LLVMPositionBuilderAtEnd(g->b, f->join);
}
