/* sequencer_control.c — while and conditional as LLVM control flow, and the copies that
 * buffer assignment leaves to the sequencer: init operands into loop state, body results back
 * into it, branch results into the conditional's result, `copy` instructions. Buffer
 * assignment guarantees that no copy of a group reads a slot another copy of the same group
 * writes (buffers.c), so each group is a plain sequence of memcpys. */
#include <stddef.h>
#include <stdio.h>
#include "backend/cpu/sequencer_int.h"

/* Copies at least this large get a trace span of their own. */
#define TRACED_COPY_BYTES 4096

cxla_status cx_seq_copy_leaves(cx_seq *s, const cx_instr *to, const cx_instr *from, const char *what) {
  const cx_buffers *b = s->bufs;
  int n = b->nleaves[to->id];
  if (from->id >= b->max_id || b->nleaves[from->id] != n)
    return cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "sequencer: %s %s <- %s: leaf counts differ", what,
                      to->name ? to->name : "?", from->name ? from->name : "?");
  int64_t bytes = 0;
  for (int l = 0; l < n; l++) {
    int d = cx_seq_leaf_slot(s, to, l), f = cx_seq_leaf_slot(s, from, l);
    if (d < 0 || f < 0) return s->g->status;
    if (d != f) bytes += b->slots[d].size;
  }
  if (!bytes) return CXLA_OK; /* every leaf is already in place (or empty) */
  int32_t id = -1;
  if (bytes >= TRACED_COPY_BYTES) {
    char name[256];
    snprintf(name, sizeof name, "copy %s <- %s (%lld bytes)", to->name ? to->name : "?", from->name ? from->name : "?",
             (long long)bytes);
    if ((id = cx_seq_name(s, name)) < 0) return s->g->status;
    cx_seq_trace_begin(s, id);
  }
  for (int l = 0; l < n; l++) {
    int d = cx_buffers_slot(b, to, l), f = cx_buffers_slot(b, from, l);
    if (d == f || !b->slots[d].size) continue;
    if (b->slots[d].size != b->slots[f].size)
      return cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "sequencer: %s %s <- %s: leaf %d sizes differ", what,
                        to->name ? to->name : "?", from->name ? from->name : "?", l);
    LLVMBuildMemCpy(s->b, cx_seq_slot(s, d), 1, cx_seq_slot(s, f), 1, cx_cg_i64(s->g, b->slots[d].size));
    s->out->ncopies++;
  }
  if (id >= 0) cx_seq_trace_end(s, id);
  return CXLA_OK;
}

/* A block in the entry function. */
static LLVMBasicBlockRef block(cx_seq *s, const char *name) {
  return LLVMAppendBasicBlockInContext(s->g->llctx, s->fn, name);
}

/*   init copies; br head
 * head:  if rt->status: exit;  condition;  br pred ? body : exit
 * body:  [iteration limit];  body;  result copies;  br head
 * exit: */
/* ++*rt->loop_trips (relaxed): a watchdog tells a loop that keeps going from a slow kernel. */
static void count_trip(cx_seq *s) {
  cx_cg *g = s->g;
  LLVMValueRef off = cx_cg_i64(g, (int64_t)offsetof(cx_rt, loop_trips));
  LLVMValueRef p = LLVMBuildLoad2(s->b, g->t_ptr, LLVMBuildGEP2(s->b, g->t_i8, s->rt, &off, 1, ""), "trips");
  LLVMBuildAtomicRMW(s->b, LLVMAtomicRMWBinOpAdd, p, cx_cg_i64(g, 1), LLVMAtomicOrderingMonotonic, 0);
}

cxla_status cx_seq_while(cx_seq *s, const cx_instr *in) {
  cx_cg *g = s->g;
  cx_comp *cond = in->called[0], *body = in->called[1];
  int loop = s->nloops++;
  cxla_status st;
  char name[256];
  snprintf(name, sizeof name, "%s [while]", in->name ? in->name : "while");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return g->status;
  cx_seq_trace_begin(s, id);
  CX_TRY(cx_seq_copy_leaves(s, in, in->ops[0], "loop init"));
  LLVMValueRef counter = NULL;
  if (s->max_loop_iterations > 0) {
    LLVMBuilderRef eb = LLVMCreateBuilderInContext(g->llctx);
    LLVMPositionBuilderBefore(eb, s->entry_term);
    counter = LLVMBuildAlloca(eb, g->t_i64, "trips");
    LLVMDisposeBuilder(eb);
    LLVMBuildStore(s->b, cx_cg_i64(g, 0), counter);
  }
  LLVMBasicBlockRef head = block(s, "while.head"), go = block(s, "while.cond"), exit = block(s, "while.exit");
  LLVMBuildBr(s->b, head);
  /* a failed runtime call may have left the predicate unwritten: stop instead of spinning */
  LLVMPositionBuilderAtEnd(s->b, head);
  LLVMBuildCondBr(s->b, cx_seq_failed(s), exit, go);
  LLVMPositionBuilderAtEnd(s->b, go);
  s->loop_depth++;
  st = cx_seq_emit_comp(s, cond);
  s->loop_depth--;
  CX_TRY(st);
  int ps = cx_seq_leaf_slot(s, cond->root, 0);
  if (ps < 0) return g->status;
  LLVMValueRef pv = LLVMBuildLoad2(s->b, g->t_i8, cx_seq_slot(s, ps), "pred");
  LLVMValueRef taken = LLVMBuildICmp(s->b, LLVMIntNE, pv, LLVMConstInt(g->t_i8, 0, 0), "");
  LLVMBasicBlockRef bb = block(s, "while.body");
  LLVMBuildCondBr(s->b, taken, bb, exit);
  LLVMPositionBuilderAtEnd(s->b, bb);
  count_trip(s);
  if (counter) { /* the interpreter's rule: the body may run max times, the next trip fails */
    LLVMValueRef n = LLVMBuildLoad2(s->b, g->t_i64, counter, "");
    LLVMBasicBlockRef over = block(s, "while.limit"), ok = block(s, "while.run");
    LLVMBuildCondBr(s->b, LLVMBuildICmp(s->b, LLVMIntSGE, n, cx_cg_i64(g, s->max_loop_iterations), ""), over, ok);
    LLVMPositionBuilderAtEnd(s->b, over);
    LLVMValueRef a[4] = {s->rt, LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)CX_FALLBACK_LOOP_LIMIT(loop), 1),
                         LLVMConstNull(g->t_ptr), LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
    LLVMBuildCall2(s->b, s->t_interp, s->f_interp, a, 4, "");
    LLVMBuildBr(s->b, exit);
    LLVMPositionBuilderAtEnd(s->b, ok);
    LLVMBuildStore(s->b, LLVMBuildAdd(s->b, n, cx_cg_i64(g, 1), ""), counter);
  }
  s->loop_depth++;
  st = cx_seq_emit_comp(s, body);
  s->loop_depth--;
  CX_TRY(st);
  CX_TRY(cx_seq_copy_leaves(s, in, body->root, "loop state"));
  LLVMBuildBr(s->b, head);
  LLVMPositionBuilderAtEnd(s->b, exit);
  cx_seq_trace_end(s, id);
  return g->status;
}

/* pred: true runs branch 0, false branch 1; s32: out of range runs the last branch. */
cxla_status cx_seq_conditional(cx_seq *s, const cx_instr *in) {
  cx_cg *g = s->g;
  int n = in->ncalled;
  if (n < 1 || in->nops != n + 1) return cx_cg_fail(g, CXLA_ERR_INTERNAL, "conditional %s: %d branches, %d operands", in->name, n, in->nops);
  int is = cx_seq_leaf_slot(s, in->ops[0], 0);
  if (is < 0) return g->status;
  char name[256];
  snprintf(name, sizeof name, "%s [conditional]", in->name ? in->name : "conditional");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return g->status;
  cx_seq_trace_begin(s, id);
  LLVMValueRef idx;
  if (in->ops[0]->shape.type == CXLA_PRED) {
    LLVMValueRef v = LLVMBuildLoad2(s->b, g->t_i8, cx_seq_slot(s, is), "pred");
    LLVMValueRef t = LLVMBuildICmp(s->b, LLVMIntNE, v, LLVMConstInt(g->t_i8, 0, 0), "");
    idx = LLVMBuildSelect(s->b, t, LLVMConstInt(g->t_i32, 0, 0), LLVMConstInt(g->t_i32, 1, 0), "branch");
  } else if (in->ops[0]->shape.type == CXLA_S32) {
    LLVMValueRef v = LLVMBuildLoad2(s->b, g->t_i32, cx_seq_slot(s, is), "index");
    LLVMValueRef inr = LLVMBuildICmp(s->b, LLVMIntULT, v, LLVMConstInt(g->t_i32, (unsigned long long)n, 0), "");
    idx = LLVMBuildSelect(s->b, inr, v, LLVMConstInt(g->t_i32, (unsigned long long)(n - 1), 0), "branch");
  } else {
    return cx_cg_fail(g, CXLA_ERR_INTERNAL, "conditional %s: branch index must be pred or s32", in->name);
  }
  LLVMBasicBlockRef merge = block(s, "cond.merge");
  LLVMBasicBlockRef *bbs = cx_calloc((size_t)n, sizeof *bbs);
  if (!bbs) return cx_cg_fail(g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < n; k++) bbs[k] = block(s, "cond.branch");
  LLVMValueRef sw = LLVMBuildSwitch(s->b, idx, bbs[n - 1], (unsigned)(n - 1));
  for (int k = 0; k < n - 1; k++) LLVMAddCase(sw, LLVMConstInt(g->t_i32, (unsigned long long)k, 0), bbs[k]);
  cxla_status st = CXLA_OK;
  for (int k = 0; k < n && st == CXLA_OK; k++) {
    LLVMPositionBuilderAtEnd(s->b, bbs[k]);
    st = cx_seq_emit_comp(s, in->called[k]);
    if (st == CXLA_OK) st = cx_seq_copy_leaves(s, in, in->called[k]->root, "branch result");
    if (st == CXLA_OK) LLVMBuildBr(s->b, merge);
  }
  cx_free(bbs);
  CX_TRY(st);
  LLVMPositionBuilderAtEnd(s->b, merge);
  cx_seq_trace_end(s, id);
  return g->status;
}
