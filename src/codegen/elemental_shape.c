/* elemental_shape.c — re-indexing ops as index maps: the result element at idx is the operand
 * element at a computed index (broadcast, reshape, bitcast, transpose, slice, reverse, iota,
 * pad, concatenate). Ops that choose between sources compute every candidate at a clamped,
 * in-bounds index and select, unless a candidate is expensive (then they branch). */
#include "codegen/gen.h"

LLVMValueRef cx_gen_choose(cx_gen *g, const cx_instr *in, const cx_idx *idx, int n,
                           LLVMValueRef which, int branch, cx_gen_alt_fn f, void *ctx) {
  LLVMBuilderRef b = g->cg->b;
  if (n == 1) return f(g, in, idx, 0, ctx);
  if (!branch) {
    LLVMValueRef v = f(g, in, idx, 0, ctx);
    for (int k = 1; k < n; k++) {
      LLVMValueRef c = LLVMBuildICmp(b, LLVMIntEQ, which, cx_ir_i64(g, k), "");
      v = LLVMBuildSelect(b, c, f(g, in, idx, k, ctx), v, "");
    }
    return v;
  }
  /* a switch; the value leaves through an entry-block alloca that mem2reg turns into a phi */
  LLVMValueRef slot = cx_gen_alloca(g, cx_cg_reg_type(g->cg, in->shape.type), 1);
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->cg->llctx, g->fn, "choose.end");
  LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(g->cg->llctx, g->fn, "choose.0");
  LLVMValueRef sw = LLVMBuildSwitch(b, which, first, (unsigned)n - 1);
  for (int k = 0; k < n; k++) {
    LLVMBasicBlockRef bb = first;
    if (k) {
      bb = LLVMAppendBasicBlockInContext(g->cg->llctx, g->fn, "choose.k");
      LLVMAddCase(sw, cx_ir_i64(g, k), bb);
    }
    LLVMPositionBuilderAtEnd(b, bb);
    cx_gen_mark_t m = cx_gen_mark(g);
    LLVMBuildStore(b, f(g, in, idx, k, ctx), slot);
    cx_gen_restore(g, m);
    LLVMBuildBr(b, merge);
  }
  LLVMPositionBuilderAtEnd(b, merge);
  return LLVMBuildLoad2(b, cx_cg_reg_type(g->cg, in->shape.type), slot, "");
}

/* ---- pad ---- */

typedef struct pad_ctx {
  LLVMValueRef v[CXLA_MAX_RANK]; /* operand index (clamped) */
} pad_ctx;

static LLVMValueRef pad_alt(cx_gen *g, const cx_instr *in, const cx_idx *idx, int k, void *ctx) {
  (void)idx;
  if (k == 0) {
    cx_idx s = cx_idx_scalar(g);
    return cx_gen1(g, in->ops[1], &s);
  }
  pad_ctx *p = ctx;
  cx_idx oi = cx_idx_from_multi(g, &in->ops[0]->shape, p->v);
  return cx_gen1(g, in->ops[0], &oi);
}

LLVMValueRef cx_gen_pad(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_shape *xs = &in->ops[0]->shape;
  const cx_attrs *a = &in->a;
  pad_ctx p;
  LLVMValueRef valid = LLVMConstInt(g->cg->t_i1, 1, 0);
  if (a->pad_lo.n != xs->rank || a->pad_hi.n != xs->rank || (a->pad_interior.n && a->pad_interior.n != xs->rank))
    return cx_gen_fail(g, in, "padding does not match the operand rank");
  if (cx_shape_elems(xs) == 0) return pad_alt(g, in, idx, 0, NULL);
  for (int d = 0; d < xs->rank; d++) {
    int64_t lo = a->pad_lo.v[d], step = (a->pad_interior.n ? a->pad_interior.v[d] : 0) + 1, len = xs->dims[d];
    LLVMValueRef q = LLVMBuildSub(b, idx->v[d], cx_ir_i64(g, lo), "");
    LLVMValueRef j = q;
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSGE, q, cx_ir_i64(g, 0), "");
    if (step > 1) {
      LLVMValueRef r = LLVMBuildSRem(b, q, cx_ir_i64(g, step), "");
      ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, r, cx_ir_i64(g, 0), ""), "");
      j = LLVMBuildSDiv(b, q, cx_ir_i64(g, step), "");
    }
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLT, j, cx_ir_i64(g, len), ""), "");
    valid = LLVMBuildAnd(b, valid, ok, "");
    p.v[d] = cx_ir_clamp(g, j, 0, len - 1);
  }
  LLVMValueRef which = LLVMBuildZExt(b, valid, g->cg->t_i64, "");
  return cx_gen_choose(g, in, idx, 2, which, cx_gen_subtree_expensive(in->ops[0]), pad_alt, &p);
}

/* ---- concatenate ---- */

typedef struct cat_ctx {
  int64_t dim;
  int ops[64];          /* non-empty operands */
  int64_t off[64];
} cat_ctx;

static LLVMValueRef cat_alt(cx_gen *g, const cx_instr *in, const cx_idx *idx, int k, void *ctx) {
  cat_ctx *c = ctx;
  const cx_instr *x = in->ops[c->ops[k]];
  LLVMValueRef v[CXLA_MAX_RANK];
  for (int d = 0; d < in->shape.rank; d++) v[d] = idx->v[d];
  LLVMValueRef j = LLVMBuildSub(g->cg->b, idx->v[c->dim], cx_ir_i64(g, c->off[k]), "");
  v[c->dim] = cx_ir_clamp(g, j, 0, x->shape.dims[c->dim] - 1);
  cx_idx oi = cx_idx_from_multi(g, &x->shape, v);
  return cx_gen1(g, x, &oi);
}

LLVMValueRef cx_gen_concatenate(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  cat_ctx c;
  int n = 0, branch = 0;
  int64_t off = 0;
  if (in->a.dims.n != 1 || in->a.dims.v[0] < 0 || in->a.dims.v[0] >= in->shape.rank || in->nops > 64)
    return cx_gen_fail(g, in, "bad concatenate dimension");
  c.dim = in->a.dims.v[0];
  for (int k = 0; k < in->nops; k++) {
    int64_t sz = in->ops[k]->shape.dims[c.dim];
    if (sz > 0) {
      c.ops[n] = k;
      c.off[n++] = off;
      branch |= cx_gen_subtree_expensive(in->ops[k]);
    }
    off += sz;
  }
  if (!n) return cx_gen_fail(g, in, "all operands are empty");
  LLVMValueRef which = cx_ir_i64(g, 0);
  for (int k = 1; k < n; k++) {
    LLVMValueRef ge = LLVMBuildICmp(b, LLVMIntSGE, idx->v[c.dim], cx_ir_i64(g, c.off[k]), "");
    which = LLVMBuildAdd(b, which, LLVMBuildZExt(b, ge, g->cg->t_i64, ""), "");
  }
  return cx_gen_choose(g, in, idx, n, which, branch, cat_alt, &c);
}

/* ---- the plain index maps ---- */

/* operand x's element at multi-index v */
static LLVMValueRef read_at(cx_gen *g, const cx_instr *x, const LLVMValueRef *v) {
  cx_idx oi = cx_idx_from_multi(g, &x->shape, v);
  return cx_gen1(g, x, &oi);
}

LLVMValueRef cx_gen_iota(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  int64_t d = in->a.index;
  if (d < 0 || d >= in->shape.rank) return cx_gen_fail(g, in, "iota_dimension out of range");
  return cx_gen_convert(g, CXLA_S64, in->shape.type, idx->v[d]);
}

/* reshape and bitcast: default layouts, so the row-major linear index */
LLVMValueRef cx_gen_reshape(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const cx_instr *x = in->ops[0];
  cx_idx oi = cx_idx_from_linear(g, &x->shape, idx->lin);
  LLVMValueRef r = cx_gen1(g, x, &oi);
  if (x->shape.type == in->shape.type) return r;
  return cx_gen_from_bits(g, in->shape.type, cx_gen_to_bits(g, x->shape.type, r));
}

LLVMValueRef cx_gen_broadcast(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const cx_instr *x = in->ops[0];
  LLVMValueRef v[CXLA_MAX_RANK];
  if (in->a.dims.n != x->shape.rank) return cx_gen_fail(g, in, "dimensions do not match the operand");
  for (int i = 0; i < x->shape.rank; i++)
    v[i] = x->shape.dims[i] == 1 ? cx_ir_i64(g, 0) : idx->v[in->a.dims.v[i]];
  return read_at(g, x, v);
}

LLVMValueRef cx_gen_transpose(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const cx_instr *x = in->ops[0];
  LLVMValueRef v[CXLA_MAX_RANK];
  if (in->a.dims.n != x->shape.rank) return cx_gen_fail(g, in, "dimensions do not match the operand");
  for (int i = 0; i < in->shape.rank; i++) v[in->a.dims.v[i]] = idx->v[i];
  return read_at(g, x, v);
}

LLVMValueRef cx_gen_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_instr *x = in->ops[0];
  LLVMValueRef v[CXLA_MAX_RANK];
  if (in->a.slice_start.n != x->shape.rank) return cx_gen_fail(g, in, "slice does not match the operand");
  for (int d = 0; d < x->shape.rank; d++) {
    int64_t st = in->a.slice_start.v[d], stride = in->a.slice_stride.n ? in->a.slice_stride.v[d] : 1;
    LLVMValueRef s = stride == 1 ? idx->v[d] : LLVMBuildMul(b, idx->v[d], cx_ir_i64(g, stride), "");
    v[d] = st ? LLVMBuildAdd(b, s, cx_ir_i64(g, st), "") : s;
  }
  return read_at(g, x, v);
}

LLVMValueRef cx_gen_reverse(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMValueRef v[CXLA_MAX_RANK];
  for (int d = 0; d < in->shape.rank; d++) v[d] = idx->v[d];
  for (int i = 0; i < in->a.dims.n; i++) {
    int64_t d = in->a.dims.v[i];
    if (d < 0 || d >= in->shape.rank) return cx_gen_fail(g, in, "bad dimension");
    v[d] = LLVMBuildSub(g->cg->b, cx_ir_i64(g, in->shape.dims[d] - 1), idx->v[d], "");
  }
  return read_at(g, in->ops[0], v);
}
