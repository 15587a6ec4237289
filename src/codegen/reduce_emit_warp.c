/* reduce_emit_warp.c — kInput fusion kernels with a warp per output, for targets with a
 * warp_size (the GPU): each lane folds a strided share of the output's reduced elements, then
 * the lanes combine through warp exchanges in a fixed butterfly, so the result does not depend
 * on timing. The shared steps (fold, finish, accumulators) are reduce_emit.c's. */
#include "codegen/loops.h"
#include "codegen/reduce_emit.h"

/* v exchanged with the lane at this lane's id xor mask: cut into i32 pieces for warp_xor */
static LLVMValueRef warp_swap(cx_kfn *k, const cx_instr *red, LLVMValueRef v, int mask) {
  cx_cg *cg = k->cg;
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef t = LLVMTypeOf(v);
  LLVMTypeKind kind = LLVMGetTypeKind(t);
  if (kind == LLVMStructTypeKind) { /* a complex register {re, im}: each part exchanged on its own */
    LLVMValueRef r = LLVMGetUndef(t);
    for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++)
      r = LLVMBuildInsertValue(b, r, warp_swap(k, red, LLVMBuildExtractValue(b, v, i, ""), mask), i, "");
    return r;
  }
  unsigned bits = kind == LLVMFloatTypeKind ? 32 : kind == LLVMDoubleTypeKind ? 64
                  : kind == LLVMHalfTypeKind || kind == LLVMBFloatTypeKind ? 16
                  : kind == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
  if (!bits || bits > 64) {
    cx_gen_fail(&k->g, red, "no warp exchange for this accumulator type");
    return v;
  }
  LLVMTypeRef it = LLVMIntTypeInContext(cg->llctx, bits);
  LLVMValueRef x = kind == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
  LLVMValueRef r;
  if (bits <= 32) {
    r = cg->target->warp_xor(cg, bits < 32 ? LLVMBuildZExt(b, x, cg->t_i32, "") : x, mask);
    if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
  } else {
    LLVMValueRef lo = cg->target->warp_xor(cg, LLVMBuildTrunc(b, x, cg->t_i32, ""), mask);
    LLVMValueRef hi = cg->target->warp_xor(cg, LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(it, 32, 0), ""), cg->t_i32, ""), mask);
    r = LLVMBuildOr(b, LLVMBuildZExt(b, lo, it, ""), LLVMBuildShl(b, LLVMBuildZExt(b, hi, it, ""), LLVMConstInt(it, 32, 0), ""), "");
  }
  return kind == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

/* After the lanes folded their elements: a butterfly over the warp leaves every lane with the
 * stage's reduction of the whole row (lanes combine in a fixed tree, so the result does not
 * depend on timing). */
static void warp_combine(cx_red_state *s, int stage) {
  cx_gen *g = &s->k->g;
  LLVMBuilderRef b = g->cg->b;
  for (int mask = s->k->cg->target->warp_size / 2; mask >= 1; mask /= 2) {
    LLVMValueRef has = LLVMBuildLoad2(b, g->cg->t_i1, s->has, "");
    LLVMValueRef other_has = warp_swap(s->k, s->p->red[0], has, mask);
    LLVMValueRef both = LLVMBuildAnd(b, has, other_has, "");
    for (int r = 0; r < s->p->nred; r++) {
      if (s->p->stage[r] != stage) continue;
      const cx_instr *red = s->p->red[r];
      int n = s->nval[r];
      LLVMValueRef args[2 * CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
      for (int v = 0; v < n; v++) args[v] = LLVMBuildLoad2(b, s->ty[r][v], cx_red_acc_ptr(s, r, v, NULL), "");
      for (int v = 0; v < n; v++) args[n + v] = warp_swap(s->k, red, args[v], mask);
      LLVMFastMathFlags saved = g->fmf;
      g->fmf = LLVMFastMathAllowContract | LLVMFastMathAllowReassoc;
      int got = cx_gen_scalar_comp(g, red->called[0], 2 * n, args, res);
      g->fmf = saved;
      if (got != n) {
        cx_gen_fail(g, red, "reducer returns %d values, expected %d", got, n);
        return;
      }
      for (int v = 0; v < n; v++) /* a lane without a value takes the other's as it is */
        LLVMBuildStore(b, LLVMBuildSelect(b, both, res[v], LLVMBuildSelect(b, has, args[v], args[n + v], ""), ""),
                       cx_red_acc_ptr(s, r, v, NULL));
    }
    LLVMBuildStore(b, LLVMBuildOr(b, has, other_has, ""), s->has);
  }
}

/* Thread t works on output t / W as lane t % W: per stage it folds that output's reduced
 * elements lane, lane + W, ... (for a row, coalesced loads across the warp; for a column, rows
 * apart, but its neighbours' warps read the rest of each line), then the warp combines; the
 * last pass stores input-shaped outputs the same way, and lane 0 stores the reduced outputs. */
void cx_red_emit_row_warp(cx_red_state *s) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  const cx_red_plan *p = s->p;
  int64_t W = k->cg->target->warp_size, per = 1, rdims[CXLA_MAX_RANK];
  int nr = 0;
  for (int d = 0; d < p->in.rank; d++)
    if (p->reduced[d]) per *= p->in.dims[d], rdims[nr++] = p->in.dims[d];
  cx_shape rshape = cx_shape_array(CXLA_F32, nr, rdims);
  cx_loop ol, jl;
  cx_gen_mark_t m0 = cx_gen_mark(g);
  cx_loop_begin(k->cg, &ol, k->begin, k->end, "thread");
  LLVMValueRef row = LLVMBuildSDiv(b, ol.iv, cx_ir_i64(g, W), "row");
  LLVMValueRef lane = LLVMBuildSRem(b, ol.iv, cx_ir_i64(g, W), "lane");
  /* elements lane, lane + W, ... < per: ceil((per - lane) / W) of them, a constant when W
   * divides the row (LLVM then unrolls, keeping several loads of each lane in flight) */
  LLVMValueRef count = per % W == 0 ? cx_ir_i64(g, per / W)
                       : LLVMBuildSDiv(b, LLVMBuildAdd(b, LLVMBuildSub(b, cx_ir_i64(g, per), lane, ""), cx_ir_i64(g, W - 1), ""),
                                       cx_ir_i64(g, W), "");
  cx_idx oi = cx_idx_from_linear(g, &p->out, row);
  int last_pass = 0, pushed = 0;
  for (int i = 0; i < p->nleaves; i++) last_pass |= p->leaf_in[i] == 2;
  for (int stage = 0; stage <= p->nstages; stage++) {
    if (stage == p->nstages && !last_pass) break;
    int st = stage == p->nstages ? -1 : stage;
    if (st >= 0) {
      cx_red_store_inits(s, NULL, st);
      LLVMBuildStore(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cx_ir_i64(g, 0), ""), s->has);
    }
    cx_gen_override ov = {.in = s->stash, .ptr = st < 0 && s->stash ? k->ptr[p->stash_leaf] : NULL};
    int stashed = ov.ptr && cx_gen_push_override(g, &ov);
    cx_gen_mark_t m = cx_gen_mark(g);
    cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), count, "elem");
    LLVMValueRef j = LLVMBuildAdd(b, lane, LLVMBuildMul(b, jl.iv, cx_ir_i64(g, W), ""), "");
    cx_idx ri = cx_idx_from_linear(g, &rshape, j);
    LLVMValueRef iv[CXLA_MAX_RANK];
    for (int d = 0, i = 0, r = 0; d < p->in.rank; d++) iv[d] = p->reduced[d] ? ri.v[r++] : oi.v[i++];
    cx_idx ii = cx_idx_from_multi(g, &p->in, iv);
    cx_red_fold(s, &ii, NULL, 1, st);
    cx_loop_end(k->cg, &jl);
    cx_gen_restore(g, m);
    if (stashed) cx_gen_pop_override(g);
    if (st >= 0) {
      warp_combine(s, st);
      pushed += cx_red_push_results(s, NULL, st);
    }
  }
  cx_if first;
  cx_if_begin(k->cg, &first, LLVMBuildICmp(b, LLVMIntEQ, lane, cx_ir_i64(g, 0), ""));
  cx_red_finish(s, row);
  cx_if_end(k->cg, &first);
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &ol);
  cx_gen_restore(g, m0);
}
