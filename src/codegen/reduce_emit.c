/* reduce_emit.c — kernels for kInput fusions (plan in reduce_plan.c). The parallel space is
 * the reduce output's linear index, so one output element is never split between threads.
 *
 * Row reductions (the innermost input dim is reduced): per output element, accumulators in
 * registers (entry-block allocas that mem2reg promotes) over a loop nest on the reduced dims;
 * the combining float ops carry `reassoc` (+ contract), as XLA allows, so the inner loop
 * vectorises into partial sums.
 *
 * Column reductions (the innermost input dim is kept): a chunk of up to T output elements
 * along that dim keeps its accumulators in a stack array; for every position of the reduced
 * dims the chunk's input row is folded in by an inner loop over the chunk, which vectorises
 * without reassociation (each output sums in sequential order). Long float sums arrive here
 * already split into chains (passes/reduce_accumulate.c, docs/numerics.md).
 *
 * After the reduction, the epilogue outputs are generated with the reduces overridden by
 * their accumulators; input-shaped outputs are stored while the input is read.
 *
 * Row fusions (passes/fusion_row.c, softmax) reduce in stages: per row, one pass per stage,
 * whose reduces read the earlier stages' results (overrides) as per-row values, and a last
 * pass that stores the input-shaped outputs computed from them. */
#include <string.h>
#include "codegen/emit.h"
#include "codegen/loops.h"

#define COL_CHUNK 512
#define WARP_COLUMNS_MAX 16384 /* column reductions with at most this many outputs take a warp each */

typedef struct red_state {
  cx_kfn *k;
  const cx_red_plan *p;
  const cx_instr *stash;                    /* p->stash, unless an output shares memory */
  int nval[CX_EMIT_MAX_REDUCES];            /* values of each reduce */
  LLVMValueRef slot[CX_EMIT_MAX_REDUCES][CX_GEN_MAX_VALS];
  LLVMTypeRef ty[CX_EMIT_MAX_REDUCES][CX_GEN_MAX_VALS];
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  LLVMValueRef has;                         /* warp rows: i1, the lane's accumulators hold a value
                                               (only lane 0 starts from the init value, so a
                                               reduction applies it once, as everywhere else) */
} red_state;

/* Address of accumulator v of reduce r for chunk lane j (NULL j: the scalar slot). */
static LLVMValueRef acc_ptr(red_state *s, int r, int v, LLVMValueRef j) {
  if (!j) return s->slot[r][v];
  return LLVMBuildInBoundsGEP2(s->k->cg->b, s->ty[r][v], s->slot[r][v], &j, 1, "");
}

static void store_inits(red_state *s, LLVMValueRef j, int stage) {
  cx_gen *g = &s->k->g;
  cx_idx sc = cx_idx_scalar(g);
  for (int r = 0; r < s->p->nred; r++)
    for (int v = 0; v < s->nval[r] && s->p->stage[r] == stage; v++)
      LLVMBuildStore(g->cg->b, cx_gen1(g, s->p->red[r]->ops[s->nval[r] + v], &sc), acc_ptr(s, r, v, j));
}

/* Folds the input element at idx into the accumulators of one stage's reduces and stores the
 * input-shaped outputs made in that pass (leaf_in == 1 in stage 0; 2 after the last stage). */
static void fold(red_state *s, const cx_idx *idx, LLVMValueRef j, int reassoc, int stage) {
  cx_gen *g = &s->k->g;
  LLVMBuilderRef b = g->cg->b;
  for (int r = 0; r < s->p->nred; r++) {
    if (s->p->stage[r] != stage) continue;
    const cx_instr *red = s->p->red[r];
    int n = s->nval[r];
    LLVMValueRef args[2 * CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
    for (int v = 0; v < n; v++) {
      args[v] = LLVMBuildLoad2(b, s->ty[r][v], acc_ptr(s, r, v, j), "");
      args[n + v] = cx_gen1(g, red->ops[v], idx);
    }
    LLVMFastMathFlags saved = g->fmf;
    if (reassoc) g->fmf = LLVMFastMathAllowContract | LLVMFastMathAllowReassoc;
    int got = cx_gen_scalar_comp(g, red->called[0], 2 * n, args, res);
    g->fmf = saved;
    if (got != n) {
      cx_gen_fail(g, red, "reducer returns %d values, expected %d", got, n);
      return;
    }
    LLVMValueRef has = s->has ? LLVMBuildLoad2(b, g->cg->t_i1, s->has, "") : NULL;
    for (int v = 0; v < n; v++) LLVMBuildStore(b, has ? LLVMBuildSelect(b, has, res[v], args[n + v], "") : res[v], acc_ptr(s, r, v, j));
    if (red->ops[0] == s->stash) /* the value just folded: cached, not computed again */
      cx_cg_store(g->cg, s->leaves[s->p->stash_leaf]->type, s->k->ptr[s->p->stash_leaf], idx->lin,
                  cx_gen1(g, s->stash, idx));
  }
  if (s->has && stage >= 0) LLVMBuildStore(b, LLVMConstInt(g->cg->t_i1, 1, 0), s->has);
  for (int i = 0; i < s->p->nleaves; i++) {
    if (!s->p->leaf_in[i] || (s->p->leaf_in[i] == 1) != (stage == 0) || (s->p->leaf_in[i] == 2) != (stage < 0)) continue;
    LLVMValueRef vals[CX_GEN_MAX_VALS];
    int n = cx_gen_elem(g, s->p->leaf[i], idx, vals);
    if (s->p->leaf_val[i] < n)
      cx_cg_store(g->cg, s->leaves[i]->type, s->k->ptr[i], idx->lin, vals[s->p->leaf_val[i]]);
  }
}

/* Makes one stage's finished accumulators of lane j the values of their reduces for the
 * generators; returns how many overrides were pushed. */
static int push_results(red_state *s, LLVMValueRef j, int stage) {
  cx_gen *g = &s->k->g;
  int pushed = 0;
  for (int r = 0; r < s->p->nred; r++) {
    if (s->p->stage[r] != stage) continue;
    cx_gen_override ov;
    memset(&ov, 0, sizeof ov);
    ov.in = s->p->red[r];
    ov.nvals = s->nval[r];
    for (int v = 0; v < s->nval[r]; v++)
      ov.vals[v] = LLVMBuildLoad2(g->cg->b, s->ty[r][v], acc_ptr(s, r, v, j), "");
    pushed += cx_gen_push_override(g, &ov);
  }
  return pushed;
}

/* Stores the outputs computed from the finished accumulators at output index o (every
 * reduce's result pushed as an override). */
static void finish(red_state *s, LLVMValueRef o) {
  cx_gen *g = &s->k->g;
  cx_gen_mark_t m = cx_gen_mark(g);
  /* every output element is computed before any is stored: an output may share memory with an
   * operand another output reads at the same index (in place, fusion_plan.c) */
  LLVMValueRef out[CX_EMIT_MAX_ARGS] = {NULL};
  for (int i = 0; i < s->p->nleaves && i < CX_EMIT_MAX_ARGS; i++) {
    if (s->p->leaf_in[i]) continue;
    cx_idx oi = cx_idx_from_linear(g, s->leaves[i], o);
    LLVMValueRef vals[CX_GEN_MAX_VALS];
    int n = cx_gen_elem(g, s->p->leaf[i], &oi, vals);
    if (s->p->leaf_val[i] < n) out[i] = vals[s->p->leaf_val[i]];
  }
  for (int i = 0; i < s->p->nleaves && i < CX_EMIT_MAX_ARGS; i++)
    if (out[i]) cx_cg_store(g->cg, s->leaves[i]->type, s->k->ptr[i], o, out[i]);
  cx_gen_restore(g, m);
}

/* Opens loops over the reduced dims (in input order), filling iv[] for them. */
static int open_reduced(red_state *s, cx_loop *loops, LLVMValueRef *iv) {
  int nl = 0;
  for (int d = 0; d < s->p->in.rank; d++) {
    if (!s->p->reduced[d]) continue;
    cx_loop_begin(s->k->cg, &loops[nl], cx_ir_i64(&s->k->g, 0), cx_ir_i64(&s->k->g, s->p->in.dims[d]), "red");
    iv[d] = loops[nl++].iv;
  }
  return nl;
}

static void close_loops(red_state *s, cx_loop *loops, int nl) {
  while (nl--) cx_loop_end(s->k->cg, &loops[nl]);
}

/* Per output element (a row): one pass over its reduced dims per stage, each stage's results
 * then visible to the next; a last pass stores the input-shaped outputs that read them. */
static void emit_row(red_state *s) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  const cx_red_plan *p = s->p;
  cx_loop ol, loops[CXLA_MAX_RANK];
  LLVMValueRef iv[CXLA_MAX_RANK];
  cx_gen_mark_t m0 = cx_gen_mark(g);
  cx_loop_begin(k->cg, &ol, k->begin, k->end, "out");
  cx_idx oi = cx_idx_from_linear(g, &p->out, ol.iv);
  int last_pass = 0, pushed = 0;
  for (int i = 0; i < p->nleaves; i++) last_pass |= p->leaf_in[i] == 2;
  for (int stage = 0; stage <= p->nstages; stage++) {
    if (stage == p->nstages && !last_pass) break;
    int st = stage == p->nstages ? -1 : stage;
    if (st >= 0) store_inits(s, NULL, st);
    cx_gen_override ov = {.in = s->stash, .ptr = st < 0 && s->stash ? k->ptr[p->stash_leaf] : NULL};
    int stashed = ov.ptr && cx_gen_push_override(g, &ov);
    cx_gen_mark_t m = cx_gen_mark(g);
    for (int d = 0, i = 0; d < p->in.rank; d++)
      if (!p->reduced[d]) iv[d] = oi.v[i++];
    int nl = open_reduced(s, loops, iv);
    cx_idx ii = cx_idx_from_multi(g, &p->in, iv);
    fold(s, &ii, NULL, 1, st);
    close_loops(s, loops, nl);
    cx_gen_restore(g, m);
    if (stashed) cx_gen_pop_override(g);
    if (st >= 0) pushed += push_results(s, NULL, st);
  }
  finish(s, ol.iv);
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &ol);
  cx_gen_restore(g, m0);
}

/* ---- row reductions with a warp per row (targets with warp_size, the GPU) ---- */

/* v exchanged with the lane at this lane's id xor mask: cut into i32 pieces for warp_xor */
static LLVMValueRef warp_swap(cx_kfn *k, const cx_instr *red, LLVMValueRef v, int mask) {
  cx_cg *cg = k->cg;
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef t = LLVMTypeOf(v);
  LLVMTypeKind kind = LLVMGetTypeKind(t);
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
static void warp_combine(red_state *s, int stage) {
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
      for (int v = 0; v < n; v++) args[v] = LLVMBuildLoad2(b, s->ty[r][v], acc_ptr(s, r, v, NULL), "");
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
                       acc_ptr(s, r, v, NULL));
    }
    LLVMBuildStore(b, LLVMBuildOr(b, has, other_has, ""), s->has);
  }
}

/* Thread t works on output t / W as lane t % W: per stage it folds that output's reduced
 * elements lane, lane + W, ... (for a row, coalesced loads across the warp; for a column, rows
 * apart, but its neighbours' warps read the rest of each line), then the warp combines; the
 * last pass stores input-shaped outputs the same way, and lane 0 stores the reduced outputs. */
static void emit_row_warp(red_state *s) {
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
      store_inits(s, NULL, st);
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
    fold(s, &ii, NULL, 1, st);
    cx_loop_end(k->cg, &jl);
    cx_gen_restore(g, m);
    if (stashed) cx_gen_pop_override(g);
    if (st >= 0) {
      warp_combine(s, st);
      pushed += push_results(s, NULL, st);
    }
  }
  cx_if first;
  cx_if_begin(k->cg, &first, LLVMBuildICmp(b, LLVMIntEQ, lane, cx_ir_i64(g, 0), ""));
  finish(s, row);
  cx_if_end(k->cg, &first);
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &ol);
  cx_gen_restore(g, m0);
}

static void emit_column(red_state *s) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  const cx_red_plan *p = s->p;
  int ro = p->out.rank, oinner = 0;
  int kept[CXLA_MAX_RANK];
  for (int d = 0, i = 0; d < p->in.rank; d++)
    if (!p->reduced[d]) {
      if (d == p->inner) oinner = i;
      kept[i++] = d;
    }
  int64_t W = p->in.dims[p->inner];
  LLVMValueRef w = cx_ir_i64(g, W), T = cx_ir_i64(g, COL_CHUNK);
  cx_loop rl, ql, jl, loops[CXLA_MAX_RANK];
  cx_gen_mark_t m0 = cx_gen_mark(g);
  LLVMValueRef r0 = LLVMBuildSDiv(b, k->begin, w, "");
  LLVMValueRef r1 = LLVMBuildSDiv(b, LLVMBuildAdd(b, k->end, cx_ir_i64(g, W - 1), ""), w, "");
  cx_loop_begin(k->cg, &rl, r0, r1, "orow");
  LLVMValueRef rb = LLVMBuildMul(b, rl.iv, w, "");
  LLVMValueRef c0 = cx_ir_smax(g, LLVMBuildSub(b, k->begin, rb, ""), cx_ir_i64(g, 0));
  LLVMValueRef c1 = cx_ir_smin(g, LLVMBuildSub(b, k->end, rb, ""), w);
  cx_shape outer = cx_shape_array(CXLA_F32, oinner, p->out.dims);
  cx_idx oo = cx_idx_from_linear(g, &outer, rl.iv);
  LLVMValueRef span = LLVMBuildSub(b, c1, c0, "");
  LLVMValueRef nq = LLVMBuildSDiv(b, LLVMBuildAdd(b, span, cx_ir_i64(g, COL_CHUNK - 1), ""), T, "");
  cx_loop_begin(k->cg, &ql, cx_ir_i64(g, 0), nq, "chunk");
  LLVMValueRef cc = LLVMBuildAdd(b, c0, LLVMBuildMul(b, ql.iv, T, ""), "");
  LLVMValueRef len = cx_ir_smin(g, LLVMBuildSub(b, c1, cc, ""), T);
  /* lanes start at the init values */
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "init");
  store_inits(s, jl.iv, 0);
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m);
  /* fold every reduced position into the lanes */
  LLVMValueRef iv[CXLA_MAX_RANK];
  int nl = open_reduced(s, loops, iv);
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "lane");
  for (int i = 0; i < ro; i++)
    iv[kept[i]] = i < oinner ? oo.v[i] : i == oinner ? LLVMBuildAdd(b, cc, jl.iv, "") : cx_ir_i64(g, 0);
  cx_idx ii = cx_idx_from_multi(g, &p->in, iv);
  fold(s, &ii, jl.iv, 0, 0);
  cx_loop_end(k->cg, &jl);
  close_loops(s, loops, nl);
  cx_gen_restore(g, m);
  /* epilogue per lane */
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "fin");
  LLVMValueRef o = LLVMBuildAdd(b, rb, LLVMBuildAdd(b, cc, jl.iv, ""), "");
  int pushed = push_results(s, jl.iv, 0);
  finish(s, o);
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m);
  cx_loop_end(k->cg, &ql);
  cx_loop_end(k->cg, &rl);
  cx_gen_restore(g, m0);
}

cxla_status cx_emit_reduce_body(cx_kfn *k, const cx_instr *fusion, const cx_red_plan *p, uint64_t may_alias,
                                int64_t *total, int64_t *grain) {
  red_state s;
  memset(&s, 0, sizeof s);
  s.k = k;
  s.p = p;
  s.stash = may_alias ? NULL : p->stash; /* stores into an output that is also read would clobber it */
  if (k->cg->target->warp_size > 0) s.stash = NULL; /* a warp's row is in cache: recomputing beats a store
                                                        and a load of the whole row */
  cx_emit_out_leaves(&fusion->shape, s.leaves, CX_EMIT_MAX_ARGS);
  int64_t lanes = p->row ? 1 : COL_CHUNK;
  for (int r = 0; r < p->nred; r++) {
    s.nval[r] = p->red[r]->nops / 2;
    for (int v = 0; v < s.nval[r]; v++) {
      s.ty[r][v] = cx_cg_reg_type(k->cg, p->red[r]->ops[s.nval[r] + v]->shape.type);
      s.slot[r][v] = cx_gen_alloca(&k->g, s.ty[r][v], lanes);
    }
  }
  *total = cx_shape_elems(&p->out);
  int64_t per_out = cx_shape_elems(&p->in) / (*total > 0 ? *total : 1);
  /* a warp per output: every row reduction, and column reductions too few to fill the GPU with
   * a thread per column (a bias gradient's 128 sums over a batch of 4096) */
  int warp = k->cg->target->warp_size > 0 && (p->row || (*total <= WARP_COLUMNS_MAX && per_out >= 64));
  if (warp) {
    *total *= k->cg->target->warp_size; /* a warp per row */
    s.has = cx_gen_alloca(&k->g, k->cg->t_i1, 1);
  }
  int64_t per = 1;
  for (int d = 0; d < p->in.rank; d++)
    if (p->reduced[d]) per *= p->in.dims[d] ? p->in.dims[d] : 1;
  /* ~32 KiB of input (4-byte elements) per chunk */
  *grain = 8192 / (per ? per : 1);
  if (*grain < 1) *grain = 1;
  if (!p->row && *grain < 64) *grain = 64;
  if (*total > 0) {
    if (warp) emit_row_warp(&s);
    else if (p->row) emit_row(&s);
    else emit_column(&s);
  }
  return k->cg->status;
}
