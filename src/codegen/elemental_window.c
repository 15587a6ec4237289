/* elemental_window.c — generators with inner loops: reduce-window (variadic; the window is a
 * loop nest inside the element generator, padding and base-dilation holes skipped) and map
 * (the to_apply computation inlined). Small windows (up to WINDOW_UNROLL_TAPS taps) are
 * emitted tap by tap instead, so the caller's loop over output elements can vectorise: taps
 * outside the operand are read at a clamped index and discarded with a select; an
 * unwindowed dim needs neither. */
#include "codegen/gen.h"
#include "codegen/loops.h"

/* Windows of at most this many taps are emitted unrolled. */
#define WINDOW_UNROLL_TAPS 16

/* A window dimension with 0 stride/dilations read as 1 (as the interpreter does). */
static cx_window_dim norm_window(const cx_window_dim *w) {
  cx_window_dim r = *w;
  if (!r.stride) r.stride = 1;
  if (!r.lhs_dilate) r.lhs_dilate = 1;
  if (!r.rhs_dilate) r.rhs_dilate = 1;
  return r;
}

/* Position of window tap j for output coordinate o along one dimension of an operand of
 * in_size elements: *valid says whether it lands on an element (not padding, not a dilation
 * hole); the returned coordinate is clamped into the operand. */
LLVMValueRef cx_gen_window_tap(cx_gen *g, const cx_window_dim *w, int64_t in_size, LLVMValueRef o,
                               LLVMValueRef j, LLVMValueRef *valid) {
  LLVMBuilderRef b = g->cg->b;
  if (w->size == 1 && w->stride == 1 && w->pad_lo == 0 && w->pad_hi <= 0 && w->lhs_dilate == 1) {
    /* an unwindowed dim (a pooling's channels): the tap is the output coordinate, always on an
     * element (the output is no longer than the operand); no clamp, so the loop over output
     * elements reads consecutive operand elements and vectorises */
    *valid = LLVMConstInt(g->cg->t_i1, 1, 0);
    return o;
  }
  LLVMValueRef p = LLVMBuildMul(b, o, cx_ir_i64(g, w->stride), "");
  p = LLVMBuildSub(b, p, cx_ir_i64(g, w->pad_lo), "");
  p = LLVMBuildAdd(b, p, LLVMBuildMul(b, j, cx_ir_i64(g, w->rhs_dilate), ""), "");
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSGE, p, cx_ir_i64(g, 0), "");
  if (w->lhs_dilate > 1) {
    LLVMValueRef r = LLVMBuildSRem(b, p, cx_ir_i64(g, w->lhs_dilate), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, r, cx_ir_i64(g, 0), ""), "");
    p = LLVMBuildSDiv(b, p, cx_ir_i64(g, w->lhs_dilate), "");
  }
  ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLT, p, cx_ir_i64(g, in_size), ""), "");
  *valid = ok;
  return cx_ir_clamp(g, p, 0, in_size - 1);
}

/* A pooling's few taps (at most WINDOW_UNROLL_TAPS) as straight-line code, tap by tap in the
 * window's row-major order (the loop's order, so a reducer that is not associative gives the
 * same value): each tap's position is the output coordinate plus a constant, so the loop over
 * output elements around it has no inner loop and vectorises. Loop metadata asking LLVM to
 * unroll was not enough: the lean pipeline (llvm_compile.c) has no unroll pass, and LeNet's
 * 2x2 max-pools ran one element at a time. */
static int unrolled(cx_gen *g, const cx_instr *in, const cx_idx *idx, int n, int64_t taps, LLVMValueRef *out) {
  LLVMBuilderRef b = g->cg->b;
  const cx_shape *xs = &in->ops[0]->shape;
  int rank = xs->rank;
  cx_idx s = cx_idx_scalar(g);
  LLVMValueRef acc[CX_GEN_MAX_VALS];
  for (int k = 0; k < n; k++) acc[k] = cx_gen1(g, in->ops[n + k], &s);
  for (int64_t t = 0; t < taps; t++) {
    LLVMValueRef valid = LLVMConstInt(g->cg->t_i1, 1, 0), pv[CXLA_MAX_RANK];
    int64_t rest = t;
    int64_t j[CXLA_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
      int64_t size = in->a.window.d[d].size > 0 ? in->a.window.d[d].size : 1;
      j[d] = rest % size;
      rest /= size;
    }
    for (int d = 0; d < rank; d++) {
      cx_window_dim w = norm_window(&in->a.window.d[d]);
      LLVMValueRef ok;
      pv[d] = cx_gen_window_tap(g, &w, xs->dims[d], idx->v[d], cx_ir_i64(g, j[d]), &ok);
      valid = LLVMBuildAnd(b, valid, ok, "");
    }
    cx_idx oi = cx_idx_from_multi(g, xs, pv);
    LLVMValueRef args[2 * CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
    for (int k = 0; k < n; k++) {
      args[k] = acc[k];
      args[n + k] = cx_gen1(g, in->ops[k], &oi);
    }
    int got = cx_gen_scalar_comp(g, in->called[0], 2 * n, args, res);
    if (got != n) {
      out[0] = cx_gen_fail(g, in, "reducer returns %d values, expected %d", got, n);
      return 1;
    }
    for (int k = 0; k < n; k++) acc[k] = LLVMBuildSelect(b, valid, res[k], acc[k], "");
  }
  for (int k = 0; k < n; k++) out[k] = acc[k];
  return n;
}

int cx_gen_reduce_window(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  LLVMBuilderRef b = g->cg->b;
  int n = in->nops / 2;
  if (n < 1 || in->nops != 2 * n || n > CX_GEN_MAX_VALS || in->ncalled != 1) {
    out[0] = cx_gen_fail(g, in, "expects N operands, N init values and a reducer");
    return 1;
  }
  const cx_shape *xs = &in->ops[0]->shape;
  int rank = xs->rank;
  if (in->a.window.rank != rank) {
    out[0] = cx_gen_fail(g, in, "window rank differs from the operand's");
    return 1;
  }
  int64_t taps = 1;
  for (int d = 0; d < rank; d++) taps *= in->a.window.d[d].size > 0 ? in->a.window.d[d].size : 1;
  if (cx_shape_elems(xs) > 0 && taps <= WINDOW_UNROLL_TAPS) return unrolled(g, in, idx, n, taps, out);
  LLVMValueRef slot[CX_GEN_MAX_VALS];
  cx_idx s = cx_idx_scalar(g);
  for (int k = 0; k < n; k++) {
    LLVMValueRef init = cx_gen1(g, in->ops[n + k], &s);
    slot[k] = cx_gen_alloca(g, LLVMTypeOf(init), 1);
    LLVMBuildStore(b, init, slot[k]);
  }
  if (cx_shape_elems(xs) > 0) {
    cx_gen_mark_t mark = cx_gen_mark(g);
    cx_loop loops[CXLA_MAX_RANK];
    LLVMValueRef valid = LLVMConstInt(g->cg->t_i1, 1, 0), pv[CXLA_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      cx_window_dim w = norm_window(&in->a.window.d[d]);
      cx_loop_begin(g->cg, &loops[d], cx_ir_i64(g, 0), cx_ir_i64(g, w.size), "win");
      LLVMValueRef ok;
      pv[d] = cx_gen_window_tap(g, &w, xs->dims[d], idx->v[d], loops[d].iv, &ok);
      valid = LLVMBuildAnd(b, valid, ok, "");
    }
    cx_idx oi = cx_idx_from_multi(g, xs, pv);
    LLVMValueRef args[2 * CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
    for (int k = 0; k < n; k++) {
      args[k] = LLVMBuildLoad2(b, cx_cg_reg_type(g->cg, in->ops[n + k]->shape.type), slot[k], "");
      args[n + k] = cx_gen1(g, in->ops[k], &oi);
    }
    int got = cx_gen_scalar_comp(g, in->called[0], 2 * n, args, res);
    if (got != n) cx_gen_fail(g, in, "reducer returns %d values, expected %d", got, n);
    for (int k = 0; k < n && k < got; k++) LLVMBuildStore(b, LLVMBuildSelect(b, valid, res[k], args[k], ""), slot[k]);
    for (int d = rank - 1; d >= 0; d--) cx_loop_end(g->cg, &loops[d]);
    cx_gen_restore(g, mark);
  }
  for (int k = 0; k < n; k++)
    out[k] = LLVMBuildLoad2(b, cx_cg_reg_type(g->cg, in->ops[n + k]->shape.type), slot[k], "");
  return n;
}

LLVMValueRef cx_gen_map(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMValueRef args[CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
  if (in->nops > CX_GEN_MAX_VALS || in->ncalled != 1) return cx_gen_fail(g, in, "bad map");
  for (int k = 0; k < in->nops; k++) args[k] = cx_gen_operand(g, in, k, idx);
  int n = cx_gen_scalar_comp(g, in->called[0], in->nops, args, res);
  if (n != 1) return cx_gen_fail(g, in, "to_apply must return one scalar");
  return res[0];
}
