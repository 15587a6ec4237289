/* elemental_conv.c — direct ("loop nest") convolution as an element generator: each output
 * element is a sum over the window taps and the input features of its group, with the
 * interpreter's semantics (src/interp/convolution.c): dim_labels, strides, padding (also
 * negative), base and window dilation, window reversal, feature_group_count and
 * batch_group_count; operands are converted to the result type first. Taps in padding or
 * dilation holes are skipped with a branch around the feature loop, which is the hot loop
 * (a reduction, vectorised: float sums may be reassociated, as XLA allows). */
#include "codegen/gen.h"
#include "codegen/loops.h"

LLVMValueRef cx_gen_convolution(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_instr *lhs = in->ops[0], *rhs = in->ops[1];
  const cx_shape *ls = &lhs->shape, *ks = &rhs->shape;
  const cx_conv_dims *cd = in->a.conv;
  cxla_type rt = in->shape.type;
  if (!cd) return cx_gen_fail(g, in, "convolution without dim_labels");
  int ns = cd->nspatial;
  if (ns + 2 != ls->rank || ks->rank != ls->rank || in->a.window.rank != ns ||
      rt == CXLA_PRED)
    return cx_gen_fail(g, in, "malformed or unsupported convolution");
  int64_t N = ls->dims[cd->in_batch], KI = ks->dims[cd->k_in], KO = ks->dims[cd->k_out];
  int64_t G = in->a.feature_group_count > 0 ? in->a.feature_group_count : 1;
  int64_t BG = in->a.batch_group_count > 0 ? in->a.batch_group_count : 1;
  if (KO % G || KO % BG || N % BG) return cx_gen_fail(g, in, "group counts do not divide the sizes");
  LLVMTypeRef acct = cx_cg_reg_type(g->cg, rt);
  int isf = cx_type_is_float(rt);
  LLVMValueRef slot = cx_gen_alloca(g, acct, 1);
  LLVMBuildStore(b, isf ? LLVMConstReal(acct, 0) : LLVMConstInt(acct, 0, 0), slot);
  if (cx_shape_elems(ls) == 0 || cx_shape_elems(ks) == 0) return cx_gen_round(g, rt, LLVMBuildLoad2(b, acct, slot, ""));

  LLVMValueRef of = idx->v[cd->out_feature], ob = idx->v[cd->out_batch];
  LLVMValueRef grp = LLVMBuildUDiv(b, of, cx_ir_i64(g, KO / G), "");
  LLVMValueRef bgrp = LLVMBuildUDiv(b, of, cx_ir_i64(g, KO / BG), "");
  LLVMValueRef ib = LLVMBuildAdd(b, LLVMBuildMul(b, bgrp, cx_ir_i64(g, N / BG), ""), ob, "");
  LLVMValueRef fbase = LLVMBuildMul(b, grp, cx_ir_i64(g, KI), "");

  cx_gen_mark_t mark = cx_gen_mark(g);
  LLVMFastMathFlags saved = g->fmf;
  g->fmf = LLVMFastMathAllowContract | LLVMFastMathAllowReassoc;
  cx_loop loops[CXLA_MAX_RANK];
  LLVMValueRef valid = LLVMConstInt(g->cg->t_i1, 1, 0), iv[CXLA_MAX_RANK], kv[CXLA_MAX_RANK];
  for (int d = 0; d < ns; d++) {
    cx_window_dim w = in->a.window.d[d];
    if (!w.stride) w.stride = 1;
    if (!w.lhs_dilate) w.lhs_dilate = 1;
    if (!w.rhs_dilate) w.rhs_dilate = 1;
    cx_loop_begin(g->cg, &loops[d], cx_ir_i64(g, 0), cx_ir_i64(g, w.size), "tap");
    LLVMValueRef ok, j = loops[d].iv;
    iv[cd->in_spatial[d]] = cx_gen_window_tap(g, &w, ls->dims[cd->in_spatial[d]], idx->v[cd->out_spatial[d]], j, &ok);
    kv[cd->k_spatial[d]] = w.reversal ? LLVMBuildSub(b, cx_ir_i64(g, w.size - 1), j, "") : j;
    valid = LLVMBuildAnd(b, valid, ok, "");
  }
  cx_if f;
  cx_if_begin(g->cg, &f, valid);
  cx_loop kl;
  cx_loop_begin(g->cg, &kl, cx_ir_i64(g, 0), cx_ir_i64(g, KI), "ki");
  iv[cd->in_batch] = ib;
  iv[cd->in_feature] = LLVMBuildAdd(b, fbase, kl.iv, "");
  kv[cd->k_out] = of;
  kv[cd->k_in] = kl.iv;
  cx_idx li = cx_idx_from_multi(g, ls, iv), ki = cx_idx_from_multi(g, ks, kv);
  LLVMValueRef x = cx_gen_convert(g, ls->type, rt, cx_gen1(g, lhs, &li));
  LLVMValueRef w = cx_gen_convert(g, ks->type, rt, cx_gen1(g, rhs, &ki));
  LLVMValueRef acc = LLVMBuildLoad2(b, acct, slot, "");
  LLVMValueRef sum = isf ? cx_ir_fmf(LLVMBuildFAdd(b, acc, cx_ir_fmf(LLVMBuildFMul(b, x, w, ""), g->fmf), ""), g->fmf)
                         : LLVMBuildAdd(b, acc, LLVMBuildMul(b, x, w, ""), "");
  LLVMBuildStore(b, sum, slot);
  cx_loop_end(g->cg, &kl);
  cx_if_end(g->cg, &f);
  for (int d = ns - 1; d >= 0; d--) cx_loop_end(g->cg, &loops[d]);
  g->fmf = saved;
  cx_gen_restore(g, mark);
  return cx_gen_round(g, rt, LLVMBuildLoad2(b, acct, slot, ""));
}
