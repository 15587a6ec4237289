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
