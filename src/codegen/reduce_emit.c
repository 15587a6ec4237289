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
 * already split into chains (passes/reduce_accumulate.c, docs/numerics.md). On the cpu, few
 * outputs over many rows are split over blocks of rows (cx_red_plan_split): each block sums
 * into partial results, which are then added in block order (emit_column_parts).
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
#include "codegen/reduce_emit.h"

#define COL_CHUNK 512
#define NT_MIN_BYTES ((int64_t)8 << 20) /* outputs at least this large are stored non-temporally */
#define NT_SCRATCH_MAX ((int64_t)64 << 10) /* the most stack a stashed row may take */
#define NT_BLOCK_LINES 4 /* 64-byte lines computed, then stored non-temporally, at a time */
#define WARP_COLUMNS_MAX 16384 /* column reductions with at most this many outputs take a warp each */


/* A column reduction's lanes (W of them: the innermost kept dim) in 512-bit vectors: a multiple
 * of 16 f32 (8 f64), or enough that the remainder is small. Such kernels loop over the reduced
 * positions with W lanes each: with 16 channels, 256-bit vectors made two trips of an inner loop
 * whose set-up (masks of each position's window) cost as much as they did. The max-pool
 * gradients of the LeNet step (a bias-gradient sum over f32[64,28,28,16] and [64,14,14,32],
 * fused with the pooling's select-and-scatter): 347 -> 318 and 128 -> 104 us; the step 2.54 ->
 * 2.44 ms, the flax CNN step 4.75 -> 4.58 ms (cxla run, interleaved); others unchanged. */
static int wide_columns(int64_t W) { return W % 16 == 0 || W >= 128; }

LLVMValueRef cx_red_acc_ptr(cx_red_state *s, int r, int v, LLVMValueRef j) {
  if (!j) return s->slot[r][v];
  return LLVMBuildInBoundsGEP2(s->k->cg->b, s->ty[r][v], s->slot[r][v], &j, 1, "");
}

void cx_red_store_inits(cx_red_state *s, LLVMValueRef j, int stage) {
  cx_gen *g = &s->k->g;
  cx_idx sc = cx_idx_scalar(g);
  for (int r = 0; r < s->p->nred; r++)
    for (int v = 0; v < s->nval[r] && s->p->stage[r] == stage; v++)
      LLVMBuildStore(g->cg->b, cx_gen1(g, s->p->red[r]->ops[s->nval[r] + v], &sc), cx_red_acc_ptr(s, r, v, j));
}

static void set_nontemporal(cx_cg *cg, LLVMValueRef store) {
  LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(cg->t_i32, 1, 0));
  LLVMSetMetadata(store, LLVMGetMDKindIDInContext(cg->llctx, "nontemporal", 11),
                  LLVMMetadataAsValue(cg->llctx, LLVMMDNodeInContext2(cg->llctx, &one, 1)));
}

void cx_red_fold(cx_red_state *s, const cx_idx *idx, LLVMValueRef j, int reassoc, int stage) {
  cx_gen *g = &s->k->g;
  LLVMBuilderRef b = g->cg->b;
  for (int r = 0; r < s->p->nred; r++) {
    if (s->p->stage[r] != stage) continue;
    const cx_instr *red = s->p->red[r];
    int n = s->nval[r];
    LLVMValueRef args[2 * CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
    for (int v = 0; v < n; v++) {
      args[v] = LLVMBuildLoad2(b, s->ty[r][v], cx_red_acc_ptr(s, r, v, j), "");
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
    for (int v = 0; v < n; v++) LLVMBuildStore(b, has ? LLVMBuildSelect(b, has, res[v], args[n + v], "") : res[v], cx_red_acc_ptr(s, r, v, j));
    if (s->div && r == s->div_r) {
      /* a non-negative float's bits order as the float does; minus one, unsigned, a zero (a
       * masked score's exp) ranks above every other value: it divides exactly either way */
      LLVMValueRef bits = LLVMBuildBitCast(b, args[n], g->cg->t_i32, "");
      bits = LLVMBuildSub(b, bits, LLVMConstInt(g->cg->t_i32, 1, 0), "");
      LLVMBuildStore(b, cx_ir_intr2(g, "llvm.umin", LLVMBuildLoad2(b, g->cg->t_i32, s->emin, ""), bits), s->emin);
    }
    if (red->ops[0] == s->stash && s->stash_buf) /* the value just folded: cached, not computed again */
      cx_cg_store(g->cg, s->leaves[s->p->stash_leaf]->type, s->stash_buf, LLVMBuildSub(b, idx->lin, s->row_off, ""),
                  cx_gen1(g, s->stash, idx));
    else if (red->ops[0] == s->stash)
      cx_cg_store(g->cg, s->leaves[s->p->stash_leaf]->type, s->k->ptr[s->p->stash_leaf], idx->lin,
                  cx_gen1(g, s->stash, idx));
  }
  if (s->has && stage >= 0) LLVMBuildStore(b, LLVMConstInt(g->cg->t_i1, 1, 0), s->has);
  for (int i = 0; i < s->p->nleaves; i++) {
    if (!s->p->leaf_in[i] || (s->p->leaf_in[i] == 1) != (stage == 0) || (s->p->leaf_in[i] == 2) != (stage == s->out_stage))
      continue;
    LLVMValueRef vals[CX_GEN_MAX_VALS];
    int n = cx_gen_elem(g, s->p->leaf[i], idx, vals);
    if (s->p->leaf_val[i] < n && i == s->nt_leaf && s->nt_idx) /* to the block last_pass_nt stores */
      cx_cg_store(g->cg, s->leaves[i]->type, s->out_buf, s->nt_idx, vals[s->p->leaf_val[i]]);
    else if (s->p->leaf_val[i] < n)
      cx_cg_store(g->cg, s->leaves[i]->type, s->k->ptr[i], idx->lin, vals[s->p->leaf_val[i]]);
  }
}

int cx_red_push_results(cx_red_state *s, LLVMValueRef j, int stage) {
  cx_gen *g = &s->k->g;
  int pushed = 0;
  for (int r = 0; r < s->p->nred; r++) {
    if (s->p->stage[r] != stage) continue;
    cx_gen_override ov;
    memset(&ov, 0, sizeof ov);
    ov.in = s->p->red[r];
    ov.nvals = s->nval[r];
    for (int v = 0; v < s->nval[r]; v++)
      ov.vals[v] = LLVMBuildLoad2(g->cg->b, s->ty[r][v], cx_red_acc_ptr(s, r, v, j), "");
    pushed += cx_gen_push_override(g, &ov);
  }
  return pushed;
}

void cx_red_finish(cx_red_state *s, LLVMValueRef o) {
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
static int open_reduced(cx_red_state *s, cx_loop *loops, LLVMValueRef *iv) {
  int nl = 0;
  for (int d = 0; d < s->p->in.rank; d++) {
    if (!s->p->reduced[d]) continue;
    cx_loop_begin(s->k->cg, &loops[nl], cx_ir_i64(&s->k->g, 0), cx_ir_i64(&s->k->g, s->p->in.dims[d]), "red");
    iv[d] = loops[nl++].iv;
  }
  return nl;
}

static void close_loops(cx_red_state *s, cx_loop *loops, int nl) {
  while (nl--) cx_loop_end(s->k->cg, &loops[nl]);
}

/* One loop of the last pass over elements [lo, hi) of the row (the one reduced dim). */
static void last_pass_loop(cx_red_state *s, LLVMValueRef *iv, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
  int stage = s->out_stage;
  cx_gen *g = &s->k->g;
  cx_loop l;
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_loop_begin(s->k->cg, &l, lo, hi, name);
  iv[s->nt_dim] = l.iv;
  cx_idx ii = cx_idx_from_multi(g, &s->p->in, iv);
  cx_red_fold(s, &ii, NULL, 1, stage);
  cx_loop_end(s->k->cg, &l);
  cx_gen_restore(g, m);
}

/* Prefetches, for every input read in rows, the lines of the next row that elements [first,
 * first + count) of this one occupy: the row's first pass then finds them in cache instead of
 * waiting for memory while no arithmetic runs (the hardware prefetcher stops at each 4 KiB page
 * and does not run ahead across rows). Past the last row it prefetches harmlessly. Into L2
 * (locality 2, prefetcht1), not L1: a row stays in L2 between its passes anyway, and a prefetch
 * into L1 holds one of its few fill buffers until the line arrives, which the last pass's own
 * loads and streaming stores then wait for (the cross-entropy 4096², one core, interleaved with
 * the triad: 11.2-11.9 -> 9.6-10.3 ms; prefetchnta 14.6 ms). */
static void prefetch_next_row(cx_red_state *s, LLVMValueRef first, int64_t count) {
  cx_kfn *k = s->k;
  LLVMBuilderRef b = k->cg->b;
  for (int i = 0; i < s->nin && s->nt_leaf >= 0; i++) {
    const cx_shape *in = &s->fusion->ops[i]->shape;
    int64_t elems = cx_shape_elems(in), bytes = cx_shape_bytes(in);
    if (!cx_shape_same_dims(in, &s->p->in) || elems <= 0 || bytes < elems || bytes % elems) continue;
    int64_t esize = bytes / elems, per_line = 64 / esize > 0 ? 64 / esize : 1;
    LLVMTypeRef mt = cx_cg_mem_type(k->cg, in->type);
    LLVMValueRef next = LLVMBuildAdd(b, LLVMBuildAdd(b, s->row_off, cx_ir_i64(&k->g, s->row_len), ""), first, "");
    for (int64_t e = 0; e < count; e += per_line) {
      LLVMValueRef at = LLVMBuildAdd(b, next, cx_ir_i64(&k->g, e), "");
      LLVMValueRef args[4] = {LLVMBuildGEP2(b, mt, k->ptr[s->p->nleaves + i], &at, 1, ""), LLVMConstInt(k->cg->t_i32, 0, 0),
                              LLVMConstInt(k->cg->t_i32, 2, 0), LLVMConstInt(k->cg->t_i32, 1, 0)};
      LLVMTypeRef pt = k->cg->t_ptr;
      cx_ir_intrinsic(&k->g, "llvm.prefetch", &pt, 1, args, 4);
    }
  }
}

/* The last pass of a row whose output nt_leaf is stored non-temporally. The elements before the
 * output row's first 64-byte boundary and after its last whole block take ordinary stores; in
 * between, blocks of NT_BLOCK_LINES 64-byte lines are computed into a small buffer (the loop
 * vectorises as any other) and then stored as aligned 64-byte vectors with non-temporal stores.
 * Explicit vectors, because LLVM's loop vectoriser refuses a non-temporal store it cannot prove
 * aligned (and x86 splits an under-aligned one into scalar stores); blocks, because storing
 * while computing keeps the stores streaming out (a separate copy pass after the row was
 * computed measured 15% slower). */
static void last_pass_nt(cx_red_state *s, LLVMValueRef *iv) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  cxla_type t = s->leaves[s->nt_leaf]->type;
  LLVMTypeRef mt = cx_cg_mem_type(k->cg, t);
  int64_t n = s->row_len, esize = s->nt_esize, V = 64 / esize, blk = V * NT_BLOCK_LINES;
  LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)V);
  LLVMValueRef row = LLVMBuildInBoundsGEP2(b, mt, k->ptr[s->nt_leaf], &s->row_off, 1, "");
  LLVMValueRef gap = LLVMBuildAnd(b, LLVMBuildNeg(b, LLVMBuildPtrToInt(b, row, k->cg->t_i64, ""), ""), cx_ir_i64(g, 63), "");
  /* a buffer not aligned to its element size never reaches a 64-byte boundary: no blocks */
  LLVMValueRef whole = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, gap, cx_ir_i64(g, esize), ""), cx_ir_i64(g, 0), "");
  LLVMValueRef head = cx_ir_smin(g, LLVMBuildUDiv(b, gap, cx_ir_i64(g, esize), ""), cx_ir_i64(g, n));
  LLVMValueRef nblk = LLVMBuildSelect(b, whole, LLVMBuildSDiv(b, LLVMBuildSub(b, cx_ir_i64(g, n), head, ""), cx_ir_i64(g, blk), ""),
                                      cx_ir_i64(g, 0), "nblk");
  head = LLVMBuildSelect(b, whole, head, cx_ir_i64(g, n), "head");
  LLVMValueRef tail = LLVMBuildAdd(b, head, LLVMBuildMul(b, nblk, cx_ir_i64(g, blk), ""), "tail");
  last_pass_loop(s, iv, cx_ir_i64(g, 0), head, "nt_head");
  LLVMTypeRef ty[2] = {k->cg->t_ptr, k->cg->t_i64};
  LLVMValueRef args[2] = {LLVMBuildInBoundsGEP2(b, mt, row, &head, 1, ""), cx_ir_i64(g, -64)};
  LLVMValueRef dst = cx_ir_intrinsic(g, "llvm.ptrmask", ty, 2, args, 2); /* the same address */
  cx_loop bl, l;
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_loop_begin(k->cg, &bl, cx_ir_i64(g, 0), nblk, "nt_block");
  LLVMValueRef first = LLVMBuildAdd(b, head, LLVMBuildMul(b, bl.iv, cx_ir_i64(g, blk), ""), "");
  cx_loop_begin(k->cg, &l, cx_ir_i64(g, 0), cx_ir_i64(g, blk), "nt_elem");
  iv[s->nt_dim] = LLVMBuildAdd(b, first, l.iv, "");
  s->nt_idx = l.iv;
  cx_idx ii = cx_idx_from_multi(g, &s->p->in, iv);
  cx_red_fold(s, &ii, NULL, 1, s->out_stage);
  cx_loop_end(k->cg, &l);
  s->nt_idx = NULL;
  LLVMValueRef out = LLVMBuildInBoundsGEP2(b, vt, dst, (LLVMValueRef[]){LLVMBuildMul(b, bl.iv, cx_ir_i64(g, NT_BLOCK_LINES), "")}, 1, "");
  for (int q = 0; q < NT_BLOCK_LINES; q++) {
    LLVMValueRef qi = cx_ir_i64(g, q);
    LLVMValueRef v = LLVMBuildLoad2(b, vt, LLVMBuildInBoundsGEP2(b, vt, s->out_buf, &qi, 1, ""), "");
    LLVMSetAlignment(v, 64);
    LLVMValueRef st = LLVMBuildStore(b, v, LLVMBuildInBoundsGEP2(b, vt, out, &qi, 1, ""));
    LLVMSetAlignment(st, 64);
    set_nontemporal(k->cg, st);
  }
  prefetch_next_row(s, first, blk);
  cx_loop_end(k->cg, &bl);
  cx_gen_restore(g, m);
  last_pass_loop(s, iv, tail, cx_ir_i64(g, n), "nt_tail");
}

/* One pass over the row's reduced dims for stage st (-1: the last pass). */
static void emit_pass(cx_red_state *s, int st, LLVMValueRef *iv, cx_loop *loops) {
  cx_gen *g = &s->k->g;
  cx_gen_mark_t m = cx_gen_mark(g);
  if (st == s->out_stage && s->nt_leaf >= 0) {
    last_pass_nt(s, iv);
  } else {
    int nl = open_reduced(s, loops, iv);
    cx_idx ii = cx_idx_from_multi(g, &s->p->in, iv);
    cx_red_fold(s, &ii, NULL, 1, st);
    close_loops(s, loops, nl);
  }
  cx_gen_restore(g, m);
}

#define MAX_LANES 16 /* f32 lanes per vector of the fast max pass */
#define MAX_ACCS 4   /* independent accumulators: vmaxps's latency over its throughput */

/* A row's max as explicit vectors (plan_fast_max). Per vector, select(x > acc, x, acc) is one
 * vmaxps: exact on ordered values but for the sign of a zero, and blind to a NaN in x, so a
 * NaN flag (an unordered compare, or-ed) rides along; LLVM's own lowering of the
 * NaN-propagating llvm.maximum takes six instructions per vector. When the flag is clear and
 * the maximum is not zero it is llvm.maximum's answer exactly (a nonzero value's bits are
 * unique); else the row runs the ordinary pass. The result joins the accumulator (the init). */
static void fast_max_pass(cx_red_state *s, LLVMValueRef row, LLVMValueRef *iv, cx_loop *loops, int st) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  LLVMTypeRef f = k->cg->t_f32, vt = LLVMVectorType(f, MAX_LANES), bt = LLVMVectorType(k->cg->t_i1, MAX_LANES);
  int64_t n = s->p->in.dims[s->p->in.rank - 1];
  LLVMValueRef base = LLVMBuildInBoundsGEP2(b, f, k->ptr[s->p->nleaves + s->max_arg],
                                            (LLVMValueRef[]){LLVMBuildMul(b, row, cx_ir_i64(g, n), "")}, 1, "");
  LLVMValueRef acc[MAX_ACCS], nan = cx_gen_alloca(g, bt, 1);
  for (int a = 0; a < MAX_ACCS; a++) acc[a] = cx_gen_alloca(g, vt, 1);
  LLVMValueRef ninf[MAX_LANES];
  for (int i = 0; i < MAX_LANES; i++) ninf[i] = LLVMConstReal(f, -__builtin_inf());
  for (int a = 0; a < MAX_ACCS; a++) LLVMBuildStore(b, LLVMConstVector(ninf, MAX_LANES), acc[a]);
  LLVMBuildStore(b, LLVMConstNull(bt), nan);
  cx_loop l;
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_loop_begin(k->cg, &l, cx_ir_i64(g, 0), cx_ir_i64(g, n / (MAX_LANES * MAX_ACCS)), "max_vec");
  LLVMValueRef any = LLVMBuildLoad2(b, bt, nan, "");
  for (int a = 0; a < MAX_ACCS; a++) {
    LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, l.iv, cx_ir_i64(g, MAX_LANES * MAX_ACCS), ""), cx_ir_i64(g, a * MAX_LANES), "");
    LLVMValueRef x = LLVMBuildLoad2(b, vt, LLVMBuildInBoundsGEP2(b, f, base, &at, 1, ""), "");
    LLVMSetAlignment(x, 4);
    LLVMValueRef cur = LLVMBuildLoad2(b, vt, acc[a], "");
    LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, cur, ""), x, cur, ""), acc[a]);
    any = LLVMBuildOr(b, any, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), "");
  }
  LLVMBuildStore(b, any, nan);
  cx_loop_end(k->cg, &l);
  cx_gen_restore(g, m);
  LLVMValueRef v = LLVMBuildLoad2(b, vt, acc[0], "");
  for (int a = 1; a < MAX_ACCS; a++) v = cx_ir_intr2(g, "llvm.maximum", v, LLVMBuildLoad2(b, vt, acc[a], ""));
  LLVMValueRef mx = cx_ir_intrinsic(g, "llvm.vector.reduce.fmaximum", &vt, 1, &v, 1);
  LLVMValueRef flags = LLVMBuildLoad2(b, bt, nan, "");
  LLVMValueRef bad = LLVMBuildOr(b, cx_ir_intrinsic(g, "llvm.vector.reduce.or", &bt, 1, &flags, 1),
                                 LLVMBuildFCmp(b, LLVMRealOEQ, mx, LLVMConstReal(f, 0), ""), "max_slow");
  cx_if fi;
  cx_if_begin(k->cg, &fi, LLVMBuildNot(b, bad, ""));
  LLVMValueRef slot = cx_red_acc_ptr(s, s->max_r, 0, NULL);
  LLVMBuildStore(b, cx_ir_intr2(g, "llvm.maximum", LLVMBuildLoad2(b, f, slot, ""), mx), slot);
  cx_if_end(k->cg, &fi);
  cx_if_begin(k->cg, &fi, bad);
  emit_pass(s, st, iv, loops);
  cx_if_end(k->cg, &fi);
}

/* The bounds under which f_div's fast form is the correctly rounded quotient (plan_fast_div):
 * every dividend of the row zero or at least 2^-60 (it is at most 1: an exp of a value <= 0)
 * and the divisor in [1, 2^24], so each nonzero quotient is at least 2^-84: a normal number,
 * whose remainder a - q0·b is exact (and 0 gives +0, as the divide). Otherwise (a NaN, a tiny
 * exp, a row of -inf) the divide. */
static LLVMValueRef fast_div_ok(cx_red_state *s) {
  cx_gen *g = &s->k->g;
  LLVMBuilderRef b = g->cg->b;
  cx_idx sc = cx_idx_scalar(g);
  LLVMValueRef sum = cx_gen1(g, s->p->red[s->div_r], &sc);
  LLVMTypeRef f = g->cg->t_f32;
  LLVMValueRef lo = LLVMBuildICmp(b, LLVMIntUGE, LLVMBuildLoad2(b, g->cg->t_i32, s->emin, ""),
                                  LLVMConstInt(g->cg->t_i32, 0x21800000 - 1, 0) /* 2^-60 */, "");
  LLVMValueRef s1 = LLVMBuildFCmp(b, LLVMRealOGE, sum, LLVMConstReal(f, 1), "");
  LLVMValueRef s2 = LLVMBuildFCmp(b, LLVMRealOLE, sum, LLVMConstReal(f, 0x1p24), "");
  return LLVMBuildAnd(b, lo, LLVMBuildAnd(b, s1, s2, ""), "fast_div");
}

/* Per output element (a row): one pass over its reduced dims per stage, each stage's results
 * then visible to the next; a last pass stores the input-shaped outputs that read them. */
static void emit_row(cx_red_state *s) {
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
  if (s->out_stage >= 0) last_pass = 0; /* the outputs are stored in the last stage's pass */
  if (s->nt_leaf >= 0) s->row_off = LLVMBuildMul(k->cg->b, ol.iv, cx_ir_i64(g, s->row_len), "row_off");
  for (int stage = 0; stage <= p->nstages; stage++) {
    if (stage == p->nstages && !last_pass) break;
    int st = stage == p->nstages ? -1 : stage;
    if (st >= 0) cx_red_store_inits(s, NULL, st);
    cx_gen_override ov = {.in = s->stash, .ptr = st < 0 && s->stash ? (s->stash_buf ? s->stash_buf : k->ptr[p->stash_leaf]) : NULL,
                          .lin_off = s->stash_buf ? s->row_off : NULL};
    int stashed = ov.ptr && cx_gen_push_override(g, &ov);
    for (int d = 0, i = 0; d < p->in.rank; d++)
      if (!p->reduced[d]) iv[d] = oi.v[i++];
    if (s->div && st >= 0 && st == p->stage[s->div_r])
      LLVMBuildStore(k->cg->b, LLVMConstInt(k->cg->t_i32, 0xffffffffu, 0), s->emin);
    if (s->div && st < 0) {
      /* the row takes the divide's fast form when its bounds hold, else the divide */
      LLVMValueRef fast = fast_div_ok(s);
      cx_if f;
      cx_if_begin(k->cg, &f, fast);
      g->fast_div = s->div;
      emit_pass(s, st, iv, loops);
      g->fast_div = NULL;
      cx_if_end(k->cg, &f);
      cx_if_begin(k->cg, &f, LLVMBuildNot(k->cg->b, fast, ""));
      emit_pass(s, st, iv, loops);
      cx_if_end(k->cg, &f);
    } else if (st >= 0 && st == s->max_stage) {
      fast_max_pass(s, ol.iv, iv, loops, st);
    } else {
      emit_pass(s, st, iv, loops);
    }
    if (stashed) cx_gen_pop_override(g);
    if (st >= 0) pushed += cx_red_push_results(s, NULL, st);
  }
  cx_red_finish(s, ol.iv);
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &ol);
  /* non-temporal stores are weakly ordered: drain them before the chunk counts as done */
  if (s->nt_leaf >= 0) LLVMBuildFence(k->cg->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
  cx_gen_restore(g, m0);
}

/* Column reduction of outputs [begin, end): a chunk of lanes along the innermost kept dim at a
 * time, every reduced position folded into them, then per lane the outputs (block NULL), or,
 * for block b of a split reduction, only the reduced positions of block b folded and the lanes
 * stored as its partial results. */
static void emit_column(cx_red_state *s, LLVMValueRef begin, LLVMValueRef end, LLVMValueRef block) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  const cx_red_plan *p = s->p;
  int ro = p->out.rank, oinner = 0, nr = 0;
  int kept[CXLA_MAX_RANK];
  int64_t rdims[CXLA_MAX_RANK], rows = 1, outs = cx_shape_elems(&p->out);
  for (int d = 0, i = 0; d < p->in.rank; d++)
    if (!p->reduced[d]) {
      if (d == p->inner) oinner = i;
      kept[i++] = d;
    } else {
      rdims[nr++] = p->in.dims[d];
      rows *= p->in.dims[d];
    }
  int64_t W = p->in.dims[p->inner];
  LLVMValueRef w = cx_ir_i64(g, W), T = cx_ir_i64(g, COL_CHUNK);
  cx_loop rl, ql, jl, loops[CXLA_MAX_RANK];
  cx_gen_mark_t m0 = cx_gen_mark(g);
  LLVMValueRef r0 = LLVMBuildSDiv(b, begin, w, "");
  LLVMValueRef r1 = LLVMBuildSDiv(b, LLVMBuildAdd(b, end, cx_ir_i64(g, W - 1), ""), w, "");
  cx_loop_begin(k->cg, &rl, r0, r1, "orow");
  LLVMValueRef rb = LLVMBuildMul(b, rl.iv, w, "");
  LLVMValueRef c0 = cx_ir_smax(g, LLVMBuildSub(b, begin, rb, ""), cx_ir_i64(g, 0));
  LLVMValueRef c1 = cx_ir_smin(g, LLVMBuildSub(b, end, rb, ""), w);
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
  cx_red_store_inits(s, jl.iv, 0);
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m);
  /* fold every reduced position (of the block) into the lanes */
  LLVMValueRef iv[CXLA_MAX_RANK];
  int nl = 0;
  if (!block) {
    nl = open_reduced(s, loops, iv);
  } else {
    /* blocks of whole runs of the innermost reduced dim (cx_red_plan_split) loop over the runs,
     * then along the run: positions come without a division each */
    int64_t run = rdims[nr - 1], per = p->block_rows % run == 0 ? run : 1;
    cx_shape rshape = cx_shape_array(CXLA_F32, per > 1 ? nr - 1 : nr, rdims);
    LLVMValueRef lo = LLVMBuildMul(b, block, cx_ir_i64(g, p->block_rows / per), "");
    LLVMValueRef hi = cx_ir_smin(g, LLVMBuildAdd(b, lo, cx_ir_i64(g, p->block_rows / per), ""), cx_ir_i64(g, rows / per));
    cx_loop_begin(k->cg, &loops[nl++], lo, hi, "red");
    cx_idx ri = cx_idx_from_linear(g, &rshape, loops[0].iv);
    int last = -1;
    for (int d = 0, r = 0; d < p->in.rank; d++)
      if (p->reduced[d]) last = d, iv[d] = r < rshape.rank ? ri.v[r++] : NULL;
    if (per > 1) {
      cx_loop_begin(k->cg, &loops[nl++], cx_ir_i64(g, 0), cx_ir_i64(g, run), "run");
      iv[last] = loops[1].iv;
    }
  }
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "lane");
  for (int i = 0; i < ro; i++)
    iv[kept[i]] = i < oinner ? oo.v[i] : i == oinner ? LLVMBuildAdd(b, cc, jl.iv, "") : cx_ir_i64(g, 0);
  cx_idx ii = cx_idx_from_multi(g, &p->in, iv);
  cx_red_fold(s, &ii, jl.iv, 0, 0);
  cx_loop_end(k->cg, &jl);
  close_loops(s, loops, nl);
  cx_gen_restore(g, m);
  /* epilogue per lane, or the block's partial results */
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "fin");
  LLVMValueRef o = LLVMBuildAdd(b, rb, LLVMBuildAdd(b, cc, jl.iv, ""), "");
  if (block) {
    LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, block, cx_ir_i64(g, outs), ""), o, "");
    for (int r = 0; r < p->nred; r++)
      cx_cg_store(k->cg, p->red[r]->shape.type, s->part[r], at, LLVMBuildLoad2(b, s->ty[r][0], cx_red_acc_ptr(s, r, 0, jl.iv), ""));
  } else {
    int pushed = cx_red_push_results(s, jl.iv, 0);
    cx_red_finish(s, o);
    while (pushed--) cx_gen_pop_override(g);
  }
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m);
  cx_loop_end(k->cg, &ql);
  cx_loop_end(k->cg, &rl);
  cx_gen_restore(g, m0);
}

/* The combine of a split reduction, outputs [c0, c1), in chunks of lanes as emit_column: the
 * lanes start at the init values and fold the partial results in block order (the same for any
 * chunking, any thread count), one vectorised loop over the lanes per block; then the outputs. */
static void combine_parts(cx_red_state *s, LLVMValueRef c0, LLVMValueRef c1) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  const cx_red_plan *p = s->p;
  LLVMValueRef T = cx_ir_i64(g, COL_CHUNK);
  cx_loop ql, bl, jl;
  cx_gen_mark_t m = cx_gen_mark(g);
  LLVMValueRef span = cx_ir_smax(g, LLVMBuildSub(b, c1, c0, ""), cx_ir_i64(g, 0));
  LLVMValueRef nq = LLVMBuildSDiv(b, LLVMBuildAdd(b, span, cx_ir_i64(g, COL_CHUNK - 1), ""), T, "");
  cx_loop_begin(k->cg, &ql, cx_ir_i64(g, 0), nq, "chunk");
  LLVMValueRef cc = LLVMBuildAdd(b, c0, LLVMBuildMul(b, ql.iv, T, ""), "");
  LLVMValueRef len = cx_ir_smin(g, LLVMBuildSub(b, c1, cc, ""), T);
  cx_gen_mark_t m1 = cx_gen_mark(g); /* values made inside a loop stay there */
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "init");
  cx_red_store_inits(s, jl.iv, 0);
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m1);
  cx_loop_begin(k->cg, &bl, cx_ir_i64(g, 0), cx_ir_i64(g, p->blocks), "part");
  LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, bl.iv, cx_ir_i64(g, cx_shape_elems(&p->out)), ""), cc, "");
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "lane");
  LLVMValueRef at = LLVMBuildAdd(b, row, jl.iv, "");
  for (int r = 0; r < p->nred && k->cg->status == CXLA_OK; r++) {
    LLVMValueRef acc = cx_red_acc_ptr(s, r, 0, jl.iv), res[CX_GEN_MAX_VALS];
    LLVMValueRef args[2] = {LLVMBuildLoad2(b, s->ty[r][0], acc, ""), cx_cg_load(k->cg, p->red[r]->shape.type, s->part[r], at)};
    if (cx_gen_scalar_comp(g, p->red[r]->called[0], 2, args, res) != 1) {
      cx_gen_fail(g, p->red[r], "reducer does not return one value");
      break;
    }
    LLVMBuildStore(b, res[0], acc);
  }
  cx_loop_end(k->cg, &jl);
  cx_loop_end(k->cg, &bl);
  cx_gen_restore(g, m1);
  cx_loop_begin(k->cg, &jl, cx_ir_i64(g, 0), len, "fin");
  int pushed = cx_red_push_results(s, jl.iv, 0);
  cx_red_finish(s, LLVMBuildAdd(b, cc, jl.iv, ""));
  while (pushed--) cx_gen_pop_override(g);
  cx_loop_end(k->cg, &jl);
  cx_gen_restore(g, m1);
  cx_loop_end(k->cg, &ql);
  cx_gen_restore(g, m);
}

/* A split column reduction (cx_red_plan_split): iterations [0, blocks) fold block b's reduced
 * positions into partial results in the scratch (the last argument), [blocks, blocks + outputs)
 * combine them; the caller runs the second range only once the first has run. */
static void emit_column_parts(cx_red_state *s) {
  cx_kfn *k = s->k;
  cx_gen *g = &k->g;
  LLVMBuilderRef b = k->cg->b;
  const cx_red_plan *p = s->p;
  int64_t outs = cx_shape_elems(&p->out), off = 0;
  for (int r = 0; r < p->nred; r++) {
    LLVMValueRef at = cx_ir_i64(g, off);
    s->part[r] = LLVMBuildInBoundsGEP2(b, k->cg->t_i8, k->ptr[k->nargs - 1], &at, 1, "");
    off += (p->blocks * outs * (int64_t)cxla_type_size(p->red[r]->shape.type) + 63) / 64 * 64;
  }
  LLVMValueRef nb = cx_ir_i64(g, p->blocks);
  cx_loop bl;
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_loop_begin(k->cg, &bl, cx_ir_smin(g, k->begin, nb), cx_ir_smin(g, k->end, nb), "block");
  emit_column(s, cx_ir_i64(g, 0), cx_ir_i64(g, outs), bl.iv);
  cx_loop_end(k->cg, &bl);
  cx_gen_restore(g, m);
  combine_parts(s, LLVMBuildSub(b, cx_ir_smax(g, k->begin, nb), nb, ""), LLVMBuildSub(b, cx_ir_smax(g, k->end, nb), nb, ""));
}

/* The input-shaped outputs that read reduce results are stored in the last stage's pass
 * instead of a pass of their own when none of them reads that stage's reduces (log-softmax
 * cross-entropy: the output x - max - log(sum) needs the first two stages, the third sums the
 * label's log-probability): one pass over each row fewer. There is then nothing to stash. */
static void plan_out_stage(cx_red_state *s) {
  const cx_red_plan *p = s->p;
  int any = 0;
  if (p->nstages < 2) return;
  for (int i = 0; i < p->nleaves; i++) {
    if (p->leaf_in[i] != 2) continue;
    any = 1;
    for (int r = 0; r < p->nred; r++)
      if (p->stage[r] == p->nstages - 1 && cx_emit_depends_on(p->leaf[i], p->red[r])) return;
  }
  if (!any) return;
  s->out_stage = p->nstages - 1;
  s->stash = NULL;
}

/* A row fusion on the cpu whose one input-shaped output is large stores it with non-temporal
 * stores: it is written once, never read back by this kernel, and far larger than the caches,
 * so reading each line in before overwriting it (a third of the traffic) and evicting the rows
 * being worked on buy nothing. A stash then lives in a row-sized scratch on the stack instead
 * of in the output (a non-temporal store over a line this kernel just wrote would write it
 * twice). Smaller outputs keep ordinary stores: their consumer likely finds them in cache. */
static void plan_nt(cx_red_state *s) {
  const cx_red_plan *p = s->p;
  int leaf = -1, nred = 0;
  for (int i = 0; i < p->nleaves; i++) {
    if (p->leaf_in[i] == 1) return;
    if (p->leaf_in[i] == 2) {
      if (leaf >= 0) return;
      leaf = i;
    }
  }
  for (int d = 0; d < p->in.rank; d++)
    if (p->reduced[d]) nred++, s->nt_dim = d;
  if (leaf < 0 || nred != 1) return;
  const cx_shape *o = s->leaves[leaf];
  int64_t elems = cx_shape_elems(o), bytes = cx_shape_bytes(o);
  if (elems <= 0 || bytes < NT_MIN_BYTES || bytes < elems || bytes % elems) return; /* whole bytes each */
  s->nt_esize = bytes / elems;
  s->row_len = p->in.dims[s->nt_dim];
  if (s->nt_esize > 16 || 64 % s->nt_esize) return;
  const cx_shape *sl = s->stash ? s->leaves[p->stash_leaf] : NULL;
  int64_t sb = sl && cx_shape_elems(sl) > 0 ? cx_shape_bytes(sl) / cx_shape_elems(sl) : 0;
  if (sl && (sb <= 0 || sb * s->row_len > NT_SCRATCH_MAX)) return;
  LLVMValueRef blkbuf = cx_gen_alloca(&s->k->g, cx_cg_mem_type(s->k->cg, o->type), 64 / s->nt_esize * NT_BLOCK_LINES);
  s->out_buf = blkbuf;
  if (sl) s->stash_buf = cx_gen_alloca(&s->k->g, cx_cg_mem_type(s->k->cg, sl->type), s->row_len);
  s->nt_leaf = leaf;
}

/* A stage with one reduce, an f32 max over the rows of a fused operand (softmax's first pass),
 * rows of whole multiples of MAX_ACCS vectors along the last dim, storing nothing else: its
 * pass becomes fast_max_pass. */
static void plan_fast_max(cx_red_state *s) {
  const cx_red_plan *p = s->p;
  int rank = p->in.rank, nred = 0;
  s->max_stage = -1;
  for (int d = 0; d < rank; d++) nred += p->reduced[d] != 0;
  if (rank < 1 || nred != 1 || !p->reduced[rank - 1] || p->in.dims[rank - 1] % (MAX_LANES * MAX_ACCS)) return;
  for (int i = 0; i < p->nleaves; i++)
    if (p->leaf_in[i] == 1) return;
  for (int r = 0; r < p->nred; r++) {
    const cx_instr *red = p->red[r], *x = red->ops[0];
    int alone = 1;
    for (int q = 0; q < p->nred; q++) alone &= q == r || p->stage[q] != p->stage[r];
    if (!alone || !cx_emit_is_max_reduce(red) || red->shape.type != CXLA_F32 || x->op != CX_OP_PARAMETER ||
        x->shape.type != CXLA_F32 || !cx_shape_same_dims(&x->shape, &p->in) || x == s->stash || x->a.index < 0 ||
        x->a.index >= s->nin)
      continue;
    s->max_stage = p->stage[r];
    s->max_r = r;
    s->max_arg = (int)x->a.index;
    return;
  }
}

/* Softmax's normalisation divide(E, broadcast(sum(E))) with E = exp(x - max(x)) in [0, 1], in
 * the last pass of an f32 row fusion on the cpu: the divide is a quarter of the in-cache
 * kernel (a vdivps per 16 elements), and with the divisor fixed per row its fast form (f_div)
 * is three fused ops. emit_row checks the bounds per row at run time (fast_div_ok). */
static void plan_fast_div(cx_red_state *s, int64_t row_elems) {
  const cx_red_plan *p = s->p;
  const cx_comp *c = s->fusion->ncalled == 1 ? s->fusion->called[0] : NULL;
  if (!c || s->out_stage >= 0 || row_elems > ((int64_t)1 << 24)) return;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *d = c->instrs[i];
    if (d->op != CX_OP_DIVIDE || d->nops != 2 || d->shape.type != CXLA_F32) continue;
    const cx_instr *e = d->ops[0], *bc = d->ops[1];
    if (e->op != CX_OP_EXP || e->nops != 1 || !cx_emit_nonpositive(e->ops[0])) continue;
    if (bc->op != CX_OP_BROADCAST || bc->nops != 1) continue;
    for (int r = 0; r < p->nred; r++) {
      const cx_instr *red = p->red[r];
      const cx_comp *rc = red->ncalled == 1 ? red->called[0] : NULL;
      if (red != bc->ops[0] || red->nops != 2 || red->ops[0] != e || !rc || !rc->root || rc->root->op != CX_OP_ADD ||
          !cx_emit_broadcasts_back(bc, red))
        continue;
      s->div = d;
      s->div_r = r;
      s->emin = cx_gen_alloca(&s->k->g, s->k->cg->t_i32, 1);
      return;
    }
  }
}

cxla_status cx_emit_reduce_body(cx_kfn *k, const cx_instr *fusion, const cx_red_plan *p, uint64_t may_alias,
                                int64_t *total, int64_t *grain) {
  cx_red_state s;
  memset(&s, 0, sizeof s);
  s.k = k;
  s.p = p;
  s.fusion = fusion;
  s.nin = fusion->nops < CX_EMIT_MAX_ARGS - p->nleaves ? fusion->nops : CX_EMIT_MAX_ARGS - p->nleaves;
  s.stash = may_alias ? NULL : p->stash; /* stores into an output that is also read would clobber it */
  if (k->cg->target->warp_size > 0) s.stash = NULL; /* a warp's row is in cache: recomputing beats a store
                                                        and a load of the whole row */
  cx_emit_out_leaves(&fusion->shape, s.leaves, CX_EMIT_MAX_ARGS);
  s.out_stage = -1;
  if (!k->cg->target->warp_size && p->row) plan_out_stage(&s);
  s.nt_leaf = -1;
  if (!k->cg->target->warp_size && p->row && !may_alias) plan_nt(&s);
  int64_t lanes = p->row ? 1 : COL_CHUNK;
  for (int r = 0; r < p->nred; r++) {
    s.nval[r] = p->red[r]->nops / 2;
    for (int v = 0; v < s.nval[r]; v++) {
      s.ty[r][v] = cx_cg_reg_type(k->cg, p->red[r]->ops[s.nval[r] + v]->shape.type);
      s.slot[r][v] = cx_gen_alloca(&k->g, s.ty[r][v], lanes);
    }
  }
  /* Row kernels are bound by their arithmetic (softmax's exp and divide) once their traffic is
   * the minimum, and LLVM prefers 256-bit vectors on AVX-512 CPUs: 512-bit ones took the
   * in-cache softmax from 180 to 138 us (f32[64,4096], bench/README.md), and the attention's
   * rows of 128 (f32[8,4,128,128] max/exp/sum, one core) from 285 to 266 us. Shorter rows keep
   * 256: a 16-lane loop leaves more of them to the scalar remainder. Column reductions too,
   * where their lanes (the innermost kept dim) fill 512-bit vectors (wide_columns). */
  int64_t row_elems = cx_shape_elems(&p->in) / (cx_shape_elems(&p->out) > 0 ? cx_shape_elems(&p->out) : 1);
  if (!k->cg->target->warp_size && p->row) plan_fast_div(&s, row_elems);
  s.max_stage = -1;
  if (!k->cg->target->warp_size && p->row) plan_fast_max(&s);
  if (!k->cg->target->warp_size && k->cg->target->vector_bits >= 512 &&
      (p->row ? row_elems >= 128 : wide_columns(p->in.dims[p->inner])))
    cx_cg_prefer_wide_vectors(k->cg, k->outer);
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
  if (p->blocks) { /* the combine's chunks: ~128 KiB of partial results, outputs and operands */
    int64_t bytes = 0;
    for (int r = 0; r < p->nred; r++) bytes += p->blocks * (int64_t)cxla_type_size(p->red[r]->shape.type);
    for (int i = 0; i < p->nleaves; i++) bytes += p->leaf_in[i] ? 0 : (int64_t)cxla_type_size(s.leaves[i]->type);
    for (int i = 0; i < fusion->nops; i++)
      if (cx_shape_elems(&fusion->ops[i]->shape) == *total) bytes += (int64_t)cxla_type_size(fusion->ops[i]->shape.type);
    *grain = 131072 / (bytes > 0 ? bytes : 1);
    if (*grain < 64) *grain = 64;
  }
  if (*total > 0) {
    if (warp) cx_red_emit_row_warp(&s);
    else if (p->row) emit_row(&s);
    else if (p->blocks) emit_column_parts(&s);
    else emit_column(&s, k->begin, k->end, NULL);
  }
  return k->cg->status;
}
