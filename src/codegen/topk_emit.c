/* topk_emit.c — top-k along the last dimension as one kernel of rank placement (see cg.h), the
 * thread of element i of a row counting the elements that come before it in XLA's order for
 * TopK: a stable sort by TOTALORDER (NaN > inf > ... > +0 > -0 > ... > -inf > -NaN for
 * largest; the reverse for smallest), ties by index. An element whose rank is below k writes
 * its value and index to that position. As for sort (sort_emit.c), n work a thread.
 *
 * A row too long for that (cg.h's cx_topk_plan) runs as passes over runs of candidate indices
 * (int32, in scratch): rank placement within tiles keeps each tile's best min(k, tile) in
 * order, then merges pair adjacent runs, keep the best min(k, 2 * run) and halve the runs
 * until one is left, whose k entries the last merge writes out as values and indices. The
 * order is total on (key, index), so a merge position is the entry's own place plus a binary
 * search of the other run, with no ties to break. A tile past the row's end is padded with
 * sentinels: the last key of the order and an index past the row, after every real element,
 * so every run is full and none of them reaches the result; so is the merged run of the last
 * run of an odd count (no partner) when runs grow. Sentinels' indices are distinct, so they
 * do not tie either. */
#include "codegen/emit.h"
#include "codegen/loops.h"
#include "ir/custom_call.h"

/* k and largest of a topk instruction or of XLA:CPU's "TopK" custom-call (the largest; k from
 * the values' last dimension); 0 if `in` is neither */
static int topk_params(const cx_instr *in, int64_t *k, int *largest) {
  if (in->op == CX_OP_TOPK) {
    *k = in->a.index;
    *largest = in->a.largest;
    return 1;
  }
  int t = in->op == CX_OP_CUSTOM_CALL ? cx_cc_target_of(in) : -1;
  if (t < 0 || cx_cc_info_of((cx_cc_target)t)->kind != CX_CC_TOPK || in->shape.type != CXLA_TUPLE || in->shape.ntuple != 2)
    return 0;
  const cx_shape *v = &in->shape.tuple[0];
  *k = v->rank ? v->dims[v->rank - 1] : 0;
  *largest = 1;
  return 1;
}

int cx_emit_topk_ok(const cx_instr *in, const char **why) {
  int64_t k;
  int largest;
  if (!topk_params(in, &k, &largest) || in->nops != 1) return *why = "not a top-k", 0;
  const cx_shape *x = &in->ops[0]->shape;
  cx_kind kind = cx_type_kind(x->type);
  if (x->rank < 1) return *why = "a top-k of a scalar", 0;
  if (x->dims[x->rank - 1] > INT32_MAX - 4096) return *why = "rows of 2^31 elements or more (int32 indices)", 0;
  int sized = cxla_type_size(x->type) >= 2 || kind != CX_KIND_FLOAT;
  if (!sized || kind == CX_KIND_COMPLEX || !cx_type_is_array(x->type))
    return *why = "a top-k of complex, 8-bit or 4-bit float values", 0;
  return 1;
}

/* element i of a typed array as an i64 whose signed order is TOTALORDER (floats by their bits,
 * sign-magnitude made two's complement), as the interpreter's order_key */
static LLVMValueRef order_key(cx_cg *cg, cxla_type t, LLVMValueRef base, LLVMValueRef i) {
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef mt = cx_cg_mem_type(cg, t);
  unsigned bits = (unsigned)cxla_type_size(t) * 8;
  LLVMTypeRef it = LLVMIntTypeInContext(cg->llctx, bits);
  LLVMValueRef v = LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, mt, base, &i, 1, ""), "");
  if (LLVMGetTypeKind(mt) != LLVMIntegerTypeKind) v = LLVMBuildBitCast(b, v, it, "");
  switch (cx_type_kind(t)) {
  case CX_KIND_FLOAT: {
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, v, LLVMConstNull(it), "");
    LLVMValueRef flipped = LLVMBuildXor(b, v, LLVMConstInt(it, (1ull << (bits - 1)) - 1, 0), "");
    return LLVMBuildSExt(b, LLVMBuildSelect(b, neg, flipped, v, ""), cg->t_i64, "");
  }
  case CX_KIND_UINT:
    v = LLVMBuildZExt(b, v, cg->t_i64, "");
    return t == CXLA_U64 ? LLVMBuildXor(b, v, cx_cg_i64(cg, INT64_MIN), "") : v;
  default: return t == CXLA_PRED ? LLVMBuildZExt(b, v, cg->t_i64, "") : LLVMBuildSExt(b, v, cg->t_i64, "");
  }
}

cxla_status cx_emit_topk_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const char *why = NULL;
  int64_t k;
  int largest;
  if (!cx_emit_topk_ok(in, &why) || !topk_params(in, &k, &largest))
    return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why ? why : "not a top-k");
  const cx_shape *x = &in->ops[0]->shape;
  cxla_type t = x->type;
  int64_t n = x->dims[x->rank - 1], total = cx_shape_elems(x);
  cx_kfn kf;
  CX_TRY(cx_kfn_begin(&kf, cg, in, 3, 0, 0));
  LLVMBuilderRef b = cg->b;
  LLVMValueRef c_n = cx_cg_i64(cg, n), rank_slot = cx_gen_alloca(&kf.g, cg->t_i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, kf.begin, kf.end, "elem");
  LLVMValueRef i = LLVMBuildURem(b, e.iv, c_n, ""), row = LLVMBuildUDiv(b, e.iv, c_n, "");
  LLVMValueRef base = LLVMBuildMul(b, row, c_n, ""), key_i = order_key(cg, t, kf.ptr[2], e.iv);
  LLVMBuildStore(b, cx_cg_i64(cg, 0), rank_slot);
  cx_loop j;
  cx_loop_begin(cg, &j, cx_cg_i64(cg, 0), c_n, "other");
  LLVMValueRef key_j = order_key(cg, t, kf.ptr[2], LLVMBuildAdd(b, base, j.iv, ""));
  LLVMValueRef ahead = LLVMBuildICmp(b, largest ? LLVMIntSGT : LLVMIntSLT, key_j, key_i, "");
  LLVMValueRef tie_before = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, key_j, key_i, ""),
                                         LLVMBuildICmp(b, LLVMIntULT, j.iv, i, ""), "");
  LLVMValueRef rk = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, rk, LLVMBuildZExt(b, LLVMBuildOr(b, ahead, tie_before, ""), cg->t_i64, ""), ""),
                 rank_slot);
  cx_loop_end(cg, &j);
  LLVMValueRef rank = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
  cx_if kept;
  cx_if_begin(cg, &kept, LLVMBuildICmp(b, LLVMIntSLT, rank, cx_cg_i64(cg, k), ""));
  LLVMValueRef to = LLVMBuildAdd(b, LLVMBuildMul(b, row, cx_cg_i64(cg, k), ""), rank, "");
  cx_cg_store(cg, t, kf.ptr[0], to, cx_cg_load(cg, t, kf.ptr[2], e.iv));
  cx_cg_store(cg, CXLA_S32, kf.ptr[1], to, LLVMBuildTrunc(b, i, cg->t_i32, ""));
  cx_if_end(cg, &kept);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&kf, out, total, n, 2, 1);
}

/* ---- long rows: tiles, then merges of candidate runs ---- */

int cx_emit_topk_plan(const cx_instr *in, int64_t tile, cx_topk_plan *p) {
  int largest;
  const char *why;
  if (!cx_emit_topk_ok(in, &why) || !topk_params(in, &p->k, &largest) || tile < 1) return 0;
  const cx_shape *x = &in->ops[0]->shape;
  p->n = x->dims[x->rank - 1];
  p->rows = p->n ? cx_shape_elems(x) / p->n : 0;
  p->tile = tile;
  p->ntiles = (p->n + tile - 1) / tile;
  p->cap0 = p->k < tile ? p->k : tile;
  /* indices are int32: the tiles' sentinels and the merges' (padding a lone run) too */
  return p->ntiles * tile + (p->ntiles + 1) * p->k < INT32_MAX;
}

/* the key of the row's element idx, or past the row's end (idx >= n) the sentinel's: the last
 * key of the order (its index, past n, puts it after a real element of the same key) */
static LLVMValueRef key_at(cx_cg *cg, cxla_type t, LLVMValueRef x, LLVMValueRef rowbase, LLVMValueRef idx, int64_t n,
                           int largest) {
  LLVMBuilderRef b = cg->b;
  LLVMValueRef in_row = LLVMBuildICmp(b, LLVMIntSLT, idx, cx_cg_i64(cg, n), "");
  LLVMValueRef safe = LLVMBuildSelect(b, in_row, idx, cx_cg_i64(cg, 0), ""); /* a sentinel reads nothing */
  LLVMValueRef key = order_key(cg, t, x, LLVMBuildAdd(b, rowbase, safe, ""));
  return LLVMBuildSelect(b, in_row, key, cx_cg_i64(cg, largest ? INT64_MIN : INT64_MAX), "");
}

/* (ka, ia) goes before (kb, ib): its key ahead, or the same key and a lower index */
static LLVMValueRef goes_before(cx_cg *cg, int largest, LLVMValueRef ka, LLVMValueRef ia, LLVMValueRef kb,
                                LLVMValueRef ib) {
  LLVMBuilderRef b = cg->b;
  LLVMValueRef ahead = LLVMBuildICmp(b, largest ? LLVMIntSGT : LLVMIntSLT, ka, kb, "");
  LLVMValueRef tie = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, ka, kb, ""), LLVMBuildICmp(b, LLVMIntSLT, ia, ib, ""), "");
  return LLVMBuildOr(b, ahead, tie, "");
}

static LLVMValueRef load_index(cx_cg *cg, LLVMValueRef runs, LLVMValueRef at) {
  return LLVMBuildSExt(cg->b, cx_cg_load(cg, CXLA_S32, runs, at), cg->t_i64, "");
}

cxla_status cx_emit_topk_tiles(cx_cg *cg, cx_instr *in, const cx_topk_plan *p, cx_kernel *out) {
  int64_t k;
  int largest;
  if (!topk_params(in, &k, &largest)) return cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: not a top-k", in->name);
  cxla_type t = in->ops[0]->shape.type;
  int64_t padded = p->ntiles * p->tile;
  cx_kfn kf; /* runs (int32), x */
  CX_TRY(cx_kfn_begin(&kf, cg, in, 2, 0, 0));
  LLVMBuilderRef b = cg->b;
  LLVMValueRef c_tile = cx_cg_i64(cg, p->tile), rank_slot = cx_gen_alloca(&kf.g, cg->t_i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, kf.begin, kf.end, "elem");
  LLVMValueRef row = LLVMBuildUDiv(b, e.iv, cx_cg_i64(cg, padded), ""), i = LLVMBuildURem(b, e.iv, cx_cg_i64(cg, padded), "");
  LLVMValueRef tile = LLVMBuildUDiv(b, i, c_tile, ""), ts = LLVMBuildMul(b, tile, c_tile, "");
  LLVMValueRef rowbase = LLVMBuildMul(b, row, cx_cg_i64(cg, p->n), "");
  LLVMValueRef key_i = key_at(cg, t, kf.ptr[1], rowbase, i, p->n, largest);
  LLVMBuildStore(b, cx_cg_i64(cg, 0), rank_slot);
  cx_loop j;
  cx_loop_begin(cg, &j, cx_cg_i64(cg, 0), c_tile, "other");
  LLVMValueRef q = LLVMBuildAdd(b, ts, j.iv, "");
  LLVMValueRef ahead = goes_before(cg, largest, key_at(cg, t, kf.ptr[1], rowbase, q, p->n, largest), q, key_i, i);
  LLVMValueRef rk = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, rk, LLVMBuildZExt(b, ahead, cg->t_i64, ""), ""), rank_slot);
  cx_loop_end(cg, &j);
  LLVMValueRef rank = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
  cx_if kept;
  cx_if_begin(cg, &kept, LLVMBuildICmp(b, LLVMIntSLT, rank, cx_cg_i64(cg, p->cap0), ""));
  LLVMValueRef run = LLVMBuildAdd(b, LLVMBuildMul(b, row, cx_cg_i64(cg, p->ntiles), ""), tile, "");
  LLVMValueRef to = LLVMBuildAdd(b, LLVMBuildMul(b, run, cx_cg_i64(cg, p->cap0), ""), rank, "");
  cx_cg_store(cg, CXLA_S32, kf.ptr[0], to, LLVMBuildTrunc(b, i, cg->t_i32, ""));
  cx_if_end(cg, &kept);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&kf, out, p->rows * padded, p->tile, 1, 1);
}

cxla_status cx_emit_topk_merge(cx_cg *cg, cx_instr *in, const cx_topk_plan *p, int64_t m_in, int64_t cap_in,
                               int64_t cap_out, cx_kernel *out) {
  int64_t k;
  int largest;
  if (!topk_params(in, &k, &largest)) return cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: not a top-k", in->name);
  cxla_type t = in->ops[0]->shape.type;
  int64_t m_out = (m_in + 1) / 2;
  int final = m_out == 1, nout = final ? 2 : 1;
  cx_kfn kf; /* final: values, indices, x, runs in; else: runs out, x, runs in */
  CX_TRY(cx_kfn_begin(&kf, cg, in, nout + 2, 0, 0));
  LLVMValueRef x = kf.ptr[nout], runs = kf.ptr[nout + 1];
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef i64 = cg->t_i64;
  LLVMValueRef zero = cx_cg_i64(cg, 0), one = cx_cg_i64(cg, 1), c_cap = cx_cg_i64(cg, cap_in);
  LLVMValueRef lo_slot = cx_gen_alloca(&kf.g, i64, 1), hi_slot = cx_gen_alloca(&kf.g, i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, kf.begin, kf.end, "entry");
  LLVMValueRef per_row = cx_cg_i64(cg, m_in * cap_in);
  LLVMValueRef row = LLVMBuildUDiv(b, e.iv, per_row, ""), rem = LLVMBuildURem(b, e.iv, per_row, "");
  LLVMValueRef q = LLVMBuildUDiv(b, rem, c_cap, ""), j = LLVMBuildURem(b, rem, c_cap, "");
  LLVMValueRef rowbase = LLVMBuildMul(b, row, cx_cg_i64(cg, p->n), "");
  LLVMValueRef mine = load_index(cg, runs, e.iv), key = key_at(cg, t, x, rowbase, mine, p->n, largest);
  /* the other run of the pair (none for the last of an odd count: the entry keeps its place) */
  LLVMValueRef partner = LLVMBuildXor(b, q, one, "");
  LLVMValueRef has = LLVMBuildICmp(b, LLVMIntSLT, partner, cx_cg_i64(cg, m_in), "");
  LLVMValueRef pbase = LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildMul(b, row, cx_cg_i64(cg, m_in), ""), partner, ""), c_cap, "");
  cx_bsearch s;
  cx_bsearch_begin(cg, &s, lo_slot, hi_slot, LLVMBuildSelect(b, has, c_cap, zero, ""), cap_in);
  /* an idle step reads the entry itself: always there */
  LLVMValueRef at = LLVMBuildSelect(b, s.active, LLVMBuildAdd(b, pbase, s.mid, ""), e.iv, "");
  LLVMValueRef other = load_index(cg, runs, at);
  LLVMValueRef first = goes_before(cg, largest, key_at(cg, t, x, rowbase, other, p->n, largest), other, key, mine);
  LLVMValueRef ahead = cx_bsearch_end(cg, &s, first); /* ends the loop: the add follows it */
  LLVMValueRef pos = LLVMBuildAdd(b, j, ahead, "");
  LLVMValueRef run_out = LLVMBuildAdd(b, LLVMBuildMul(b, row, cx_cg_i64(cg, m_out), ""), LLVMBuildLShr(b, q, one, ""), "");
  cx_if kept;
  cx_if_begin(cg, &kept, LLVMBuildICmp(b, LLVMIntSLT, pos, cx_cg_i64(cg, cap_out), ""));
  if (final) { /* the first k of the row: real elements, ahead of every sentinel */
    LLVMValueRef to = LLVMBuildAdd(b, LLVMBuildMul(b, row, cx_cg_i64(cg, k), ""), pos, "");
    cx_cg_store(cg, t, kf.ptr[0], to, cx_cg_load(cg, t, x, LLVMBuildAdd(b, rowbase, mine, "")));
    cx_cg_store(cg, CXLA_S32, kf.ptr[1], to, LLVMBuildTrunc(b, mine, cg->t_i32, ""));
  } else {
    LLVMValueRef to = LLVMBuildAdd(b, LLVMBuildMul(b, run_out, cx_cg_i64(cg, cap_out), ""), pos, "");
    cx_cg_store(cg, CXLA_S32, kf.ptr[0], to, LLVMBuildTrunc(b, mine, cg->t_i32, ""));
  }
  cx_if_end(cg, &kept);
  if (!final && cap_out > cap_in) {
    /* the last run of an odd count has no partner: its run out is cap_in entries long, and
     * the rest are sentinels (indices past the tiles', distinct per level: ntiles * tile +
     * m_in * k + j) */
    cx_if pad;
    LLVMValueRef short_by = cx_cg_i64(cg, cap_out - cap_in);
    cx_if_begin(cg, &pad, LLVMBuildAnd(b, LLVMBuildNot(b, has, ""), LLVMBuildICmp(b, LLVMIntSLT, j, short_by, ""), ""));
    LLVMValueRef to = LLVMBuildAdd(b, LLVMBuildMul(b, run_out, cx_cg_i64(cg, cap_out), ""),
                                   LLVMBuildAdd(b, cx_cg_i64(cg, cap_in), j, ""), "");
    LLVMValueRef sentinel = LLVMBuildAdd(b, cx_cg_i64(cg, p->ntiles * p->tile + m_in * k), j, "");
    cx_cg_store(cg, CXLA_S32, kf.ptr[0], to, LLVMBuildTrunc(b, sentinel, cg->t_i32, ""));
    cx_if_end(cg, &pad);
  }
  cx_loop_end(cg, &e);
  return cx_kfn_end(&kf, out, p->rows * m_in * cap_in, cap_in, nout, 2);
}
