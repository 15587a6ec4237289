/* select_scatter_emit.c — select-and-scatter (max-pooling's gradient) as one kernel with a
 * thread per result element (see cg.h), gathering instead of scattering: the thread of result
 * element o visits, in row-major order, the source positions whose windows cover o; for each
 * it walks the window's in-bounds taps as the interpreter does (interp/select_and_scatter.c:
 * the first tap is the selection, a later one replaces it when select(selected, current) is
 * false) and, when the selection is o, folds the source value in: acc = scatter(acc, source).
 * acc starts at init_value. No atomics and no races: the result is the interpreter's, order
 * included, for any select and scatter computation. A thread does about
 * (size / stride)^rank windows of size^rank taps: pooling windows are small. */
#include "codegen/emit.h"
#include "codegen/loops.h"

int cx_emit_select_scatter_ok(const cx_instr *in, const char **why) {
  if (in->op != CX_OP_SELECT_AND_SCATTER || in->nops != 3 || in->ncalled != 2)
    return *why = "not a select-and-scatter", 0;
  const cx_shape *x = &in->ops[0]->shape;
  if (in->a.window.rank != x->rank || !cx_type_is_array(x->type) || cx_type_is_complex(x->type) ||
      cx_type_is_complex(in->ops[1]->shape.type))
    return *why = "a select-and-scatter of complex values or without a window per dimension", 0;
  int64_t taps = 1;
  for (int d = 0; d < x->rank; d++) {
    const cx_window_dim *w = &in->a.window.d[d];
    if (w->lhs_dilate != 1 || w->rhs_dilate != 1 || w->reversal || w->stride < 1 || w->size < 1)
      return *why = "a select-and-scatter with dilated or reversed windows", 0;
    taps *= w->size;
  }
  if (taps > 4096) return *why = "windows of more than 4096 elements", 0;
  return cx_emit_scalar_comp_ok(in->called[0], why) && cx_emit_scalar_comp_ok(in->called[1], why);
}

static LLVMValueRef c64(cx_cg *cg, int64_t v) { return cx_cg_i64(cg, v); }

cxla_status cx_emit_select_scatter_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const char *why = NULL;
  if (!cx_emit_select_scatter_ok(in, &why)) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why);
  const cx_shape *x = &in->ops[0]->shape, *src = &in->ops[1]->shape;
  cxla_type xt = x->type, st = src->type, rt = in->shape.type;
  int rank = x->rank;
  int64_t xstride[CXLA_MAX_RANK], sstride[CXLA_MAX_RANK], span[CXLA_MAX_RANK], nwin = 1, ntaps = 1;
  cx_shape_strides(x, xstride);
  cx_shape_strides(src, sstride);
  for (int d = 0; d < rank; d++) {
    const cx_window_dim *w = &in->a.window.d[d];
    span[d] = (w->size + w->stride - 1) / w->stride; /* windows covering one element, at most */
    nwin *= span[d];
    ntaps *= w->size;
  }
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, in, 4, 0, 0)); /* result, operand, source, init */
  LLVMBuilderRef b = cg->b;
  LLVMTypeRef xr = cx_cg_reg_type(cg, xt), rr = cx_cg_reg_type(cg, rt);
  LLVMValueRef acc = cx_gen_alloca(&k.g, rr, 1), best = cx_gen_alloca(&k.g, xr, 1);
  LLVMValueRef best_at = cx_gen_alloca(&k.g, cg->t_i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, k.begin, k.end, "elem");
  LLVMValueRef o[CXLA_MAX_RANK], v = e.iv;
  for (int d = rank - 1; d >= 0; d--) {
    o[d] = LLVMBuildURem(b, v, c64(cg, x->dims[d]), "");
    v = LLVMBuildUDiv(b, v, c64(cg, x->dims[d]), "");
  }
  LLVMBuildStore(b, cx_cg_load(cg, rt, k.ptr[3], c64(cg, 0)), acc);
  /* first source position whose window reaches o_d: ceil((o_d + pad_lo - size + 1) / stride),
   * at least 0 (computed on a value shifted to be non-negative) */
  LLVMValueRef s_lo[CXLA_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    const cx_window_dim *w = &in->a.window.d[d];
    int64_t shift = ((w->pad_lo < 0 ? -w->pad_lo : w->pad_lo) + w->size) / w->stride + 1; /* numerator >= 0 */
    LLVMValueRef num = LLVMBuildAdd(b, o[d], c64(cg, w->pad_lo - w->size + 1 + w->stride - 1 + shift * w->stride), "");
    LLVMValueRef q = LLVMBuildSub(b, LLVMBuildSDiv(b, num, c64(cg, w->stride), ""), c64(cg, shift), "");
    s_lo[d] = cx_ir_smax(&k.g, q, c64(cg, 0));
  }
  cx_loop c;
  cx_loop_begin(cg, &c, c64(cg, 0), c64(cg, nwin), "window");
  LLVMValueRef s[CXLA_MAX_RANK], ok = LLVMConstInt(cg->t_i1, 1, 0), soff = c64(cg, 0);
  v = c.iv;
  for (int d = rank - 1; d >= 0; d--) {
    const cx_window_dim *w = &in->a.window.d[d];
    s[d] = LLVMBuildAdd(b, s_lo[d], LLVMBuildURem(b, v, c64(cg, span[d]), ""), "");
    v = LLVMBuildUDiv(b, v, c64(cg, span[d]), "");
    /* the window of s_d starts at s_d * stride - pad_lo and must still cover o_d */
    LLVMValueRef first = LLVMBuildSub(b, LLVMBuildMul(b, s[d], c64(cg, w->stride), ""), c64(cg, w->pad_lo), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLT, s[d], c64(cg, src->dims[d]), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLE, first, o[d], ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGT, LLVMBuildAdd(b, first, c64(cg, w->size), ""), o[d], ""), "");
  }
  for (int d = 0; d < rank; d++) soff = LLVMBuildAdd(b, soff, LLVMBuildMul(b, s[d], c64(cg, sstride[d]), ""), "");
  cx_if covers;
  cx_if_begin(cg, &covers, ok);
  LLVMBuildStore(b, c64(cg, -1), best_at);
  cx_loop t;
  cx_loop_begin(cg, &t, c64(cg, 0), c64(cg, ntaps), "tap");
  LLVMValueRef inb = LLVMConstInt(cg->t_i1, 1, 0), xoff = c64(cg, 0);
  v = t.iv;
  for (int d = rank - 1; d >= 0; d--) {
    const cx_window_dim *w = &in->a.window.d[d];
    LLVMValueRef kd = LLVMBuildURem(b, v, c64(cg, w->size), "");
    v = LLVMBuildUDiv(b, v, c64(cg, w->size), "");
    LLVMValueRef xd = LLVMBuildAdd(b, LLVMBuildSub(b, LLVMBuildMul(b, s[d], c64(cg, w->stride), ""), c64(cg, w->pad_lo), ""), kd, "");
    inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSGE, xd, c64(cg, 0), ""), "");
    inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSLT, xd, c64(cg, x->dims[d]), ""), "");
    xoff = LLVMBuildAdd(b, xoff, LLVMBuildMul(b, xd, c64(cg, xstride[d]), ""), "");
  }
  cx_if tap;
  cx_if_begin(cg, &tap, inb);
  LLVMValueRef cur = cx_cg_load(cg, xt, k.ptr[1], xoff), sel;
  LLVMValueRef cur_best = LLVMBuildLoad2(b, xr, best, "");
  LLVMValueRef none = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildLoad2(b, cg->t_i64, best_at, ""), c64(cg, 0), "");
  if (cx_gen_scalar_comp(&k.g, in->called[0], 2, (LLVMValueRef[]){cur_best, cur}, &sel) != 1 && cg->status == CXLA_OK)
    cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: select gives not one value", in->name);
  if (cg->status == CXLA_OK) {
    LLVMValueRef keep = LLVMTypeOf(sel) == cg->t_i1 ? sel : LLVMBuildICmp(b, LLVMIntNE, sel, LLVMConstNull(LLVMTypeOf(sel)), "");
    LLVMValueRef take = LLVMBuildOr(b, none, LLVMBuildNot(b, keep, ""), "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, cur, cur_best, ""), best);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, xoff, LLVMBuildLoad2(b, cg->t_i64, best_at, ""), ""), best_at);
  }
  cx_if_end(cg, &tap);
  cx_loop_end(cg, &t);
  cx_if mine;
  cx_if_begin(cg, &mine, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildLoad2(b, cg->t_i64, best_at, ""), e.iv, ""));
  LLVMValueRef folded;
  LLVMValueRef sargs[2] = {LLVMBuildLoad2(b, rr, acc, ""), cx_cg_load(cg, st, k.ptr[2], soff)};
  if (cx_gen_scalar_comp(&k.g, in->called[1], 2, sargs, &folded) != 1 && cg->status == CXLA_OK)
    cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: scatter gives not one value", in->name);
  if (cg->status == CXLA_OK) LLVMBuildStore(b, folded, acc);
  cx_if_end(cg, &mine);
  cx_if_end(cg, &covers);
  cx_loop_end(cg, &c);
  cx_cg_store(cg, rt, k.ptr[0], e.iv, LLVMBuildLoad2(b, rr, acc, ""));
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, cx_shape_elems(x), 1, 1, 3);
}

/* ---- inside a fusion: one element from its one window ----
 * Where the windows are disjoint (cx_window_disjoint: a max-pool's gradient with stride =
 * size), the fusion pass fuses the op into its consumer, and element o is computed where the
 * consumer reads it: the one window holding o is found by division and walked tap by tap,
 * unrolled, in the interpreter's order (taps in padding skipped); o's value is
 * scatter(init, source[window]) when the walk selects o, else init. An unwindowed dimension
 * (size 1, stride 1: a pooling's batch and channels) is the element's own coordinate, so the
 * consumer's loop over it reads consecutive elements and vectorises. */
int cx_emit_select_scatter_fused_ok(const cx_instr *in, const char **why) {
  if (!cx_emit_select_scatter_ok(in, why)) return 0;
  if (!cx_window_fusible(&in->a.window, in->ops[0]->shape.rank))
    return *why = cx_emit_why("a fused select-and-scatter whose windows overlap or have more than %d elements",
                              CX_FUSED_WINDOW_TAPS), 0;
  return 1;
}

static LLVMValueRef as_i1(cx_gen *g, LLVMValueRef v) {
  return LLVMTypeOf(v) == g->cg->t_i1 ? v : LLVMBuildICmp(g->cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

LLVMValueRef cx_gen_select_and_scatter(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const char *why = NULL;
  if (!cx_emit_select_scatter_fused_ok(in, &why)) return cx_gen_fail(g, in, "%s", why);
  LLVMBuilderRef b = g->cg->b;
  const cx_shape *x = &in->ops[0]->shape, *src = &in->ops[1]->shape;
  int rank = x->rank;
  cx_idx none = cx_idx_scalar(g);
  LLVMValueRef init = cx_gen1(g, in->ops[2], &none);
  if (cx_shape_elems(src) == 0 || cx_shape_elems(x) == 0) return init; /* no window: nothing scatters */
  LLVMValueRef yes = LLVMConstInt(g->cg->t_i1, 1, 0);
  LLVMValueRef s[CXLA_MAX_RANK], j[CXLA_MAX_RANK], inwin = yes;
  int plain[CXLA_MAX_RANK], exact[CXLA_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    const cx_window_dim *w = &in->a.window.d[d];
    LLVMValueRef o = idx->v[d];
    plain[d] = w->size == 1 && w->stride == 1 && w->pad_lo == 0;
    if (plain[d]) {
      s[d] = o, j[d] = cx_ir_i64(g, 0), exact[d] = 1;
      if (src->dims[d] < x->dims[d]) /* a negative high padding leaves the last elements out */
        inwin = LLVMBuildAnd(b, inwin, LLVMBuildICmp(b, LLVMIntSLT, o, cx_ir_i64(g, src->dims[d]), ""), "");
      continue;
    }
    LLVMValueRef p = LLVMBuildAdd(b, o, cx_ir_i64(g, w->pad_lo), ""); /* >= 0: pad_lo >= 0 */
    LLVMValueRef q = LLVMBuildUDiv(b, p, cx_ir_i64(g, w->stride), "");
    j[d] = LLVMBuildSub(b, p, LLVMBuildMul(b, q, cx_ir_i64(g, w->stride), ""), "");
    /* the checks and clamps that can fail for some element of this shape (a pooling that
     * tiles the operand exactly needs none: the loop body is index arithmetic on the
     * consumer's vectors, and there is little else in it) */
    if (w->stride > w->size)
      inwin = LLVMBuildAnd(b, inwin, LLVMBuildICmp(b, LLVMIntULT, j[d], cx_ir_i64(g, w->size), ""), "");
    int64_t q_max = (x->dims[d] - 1 + w->pad_lo) / w->stride;
    s[d] = q;
    if (q_max >= src->dims[d]) {
      inwin = LLVMBuildAnd(b, inwin, LLVMBuildICmp(b, LLVMIntULT, q, cx_ir_i64(g, src->dims[d]), ""), "");
      s[d] = cx_ir_clamp(g, q, 0, src->dims[d] - 1); /* read in bounds; discarded when !inwin */
    }
    /* every tap of every window on an element: no padding, no window past the end */
    exact[d] = w->pad_lo == 0 && (src->dims[d] - 1) * w->stride + w->size <= x->dims[d];
  }
  int64_t taps = cx_window_elems(&in->a.window);
  LLVMValueRef have = NULL, best = NULL, mine = NULL;
  for (int64_t t = 0; t < taps && g->cg->status == CXLA_OK; t++) {
    int64_t jt[CXLA_MAX_RANK], rest = t;
    for (int d = rank - 1; d >= 0; d--) {
      jt[d] = rest % in->a.window.d[d].size;
      rest /= in->a.window.d[d].size;
    }
    LLVMValueRef valid = yes, is_o = yes, q[CXLA_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      const cx_window_dim *w = &in->a.window.d[d];
      if (plain[d]) {
        q[d] = s[d];
        continue;
      }
      LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, s[d], cx_ir_i64(g, w->stride), ""), cx_ir_i64(g, jt[d] - w->pad_lo), "");
      q[d] = at;
      if (!exact[d]) {
        valid = LLVMBuildAnd(b, valid, LLVMBuildICmp(b, LLVMIntSGE, at, cx_ir_i64(g, 0), ""), "");
        valid = LLVMBuildAnd(b, valid, LLVMBuildICmp(b, LLVMIntSLT, at, cx_ir_i64(g, x->dims[d]), ""), "");
        q[d] = cx_ir_clamp(g, at, 0, x->dims[d] - 1);
      }
      is_o = LLVMBuildAnd(b, is_o, LLVMBuildICmp(b, LLVMIntEQ, j[d], cx_ir_i64(g, jt[d]), ""), "");
    }
    cx_idx qi = cx_idx_from_multi(g, x, q);
    LLVMValueRef cur = cx_gen1(g, in->ops[0], &qi);
    if (!have) { /* the first tap: the selection if it is on an element */
      have = valid, best = cur, mine = LLVMBuildAnd(b, valid, is_o, "");
      continue;
    }
    LLVMValueRef keep;
    if (cx_gen_scalar_comp(g, in->called[0], 2, (LLVMValueRef[]){best, cur}, &keep) != 1)
      return cx_gen_fail(g, in, "select gives not one value");
    /* a later tap on an element replaces the selection when there is none yet or select says so */
    LLVMValueRef take = LLVMBuildAnd(b, valid, LLVMBuildSelect(b, have, LLVMBuildNot(b, as_i1(g, keep), ""), yes, ""), "");
    best = LLVMBuildSelect(b, take, cur, best, "");
    mine = LLVMBuildSelect(b, take, is_o, mine, "");
    have = LLVMBuildOr(b, have, valid, "");
  }
  cx_idx si = cx_idx_from_multi(g, src, s);
  LLVMValueRef folded, args[2] = {init, cx_gen1(g, in->ops[1], &si)};
  if (cx_gen_scalar_comp(g, in->called[1], 2, args, &folded) != 1) return cx_gen_fail(g, in, "scatter gives not one value");
  return LLVMBuildSelect(b, LLVMBuildAnd(b, inwin, mine, ""), folded, init, "");
}
