/* elemental_convert.c — convert, bitcast-convert (same and changing widths), reduce-precision,
 * stochastic-convert and rounding to f16/bf16, with the interpreter's rules: float->int
 * truncates and saturates with NaN -> 0 (llvm.fpto[su]i.sat), ->pred is x != 0 (NaN -> true),
 * integers go to f32/f16/bf16 through one correctly rounded int->f32 step, f64 -> f16/bf16
 * through f32 (as cx_round_to_type does), f64 -> f8/f4 rounded once from the double. */
#include <math.h>
#include "codegen/complex.h"
#include "codegen/minifloat_ir.h"
#include "ir/minifloat.h"

LLVMValueRef cx_gen_round(cx_gen *g, cxla_type t, LLVMValueRef v) { return cx_cg_round(g->cg, t, v); }

LLVMValueRef cx_gen_convert(cx_gen *g, cxla_type from, cxla_type to, LLVMValueRef v) {
  cx_cg *cg = g->cg;
  LLVMBuilderRef b = cg->b;
  cx_kind fk = cx_type_kind(from), tk = cx_type_kind(to);
  LLVMTypeRef rt = cx_cg_reg_type(cg, to), vt = LLVMTypeOf(v);
  if (from == to) return v;
  if (tk == CX_KIND_COMPLEX) { /* part by part; a real value's imaginary part is 0 */
    cxla_type fp = cx_type_part(from), tp = cx_type_part(to);
    if (fk != CX_KIND_COMPLEX)
      return cx_gen_complex(g, to, cx_gen_convert(g, from, tp, v), LLVMConstReal(cx_cg_reg_type(cg, tp), 0));
    return cx_gen_complex(g, to, cx_gen_convert(g, fp, tp, cx_gen_part(g, v, 0)),
                          cx_gen_convert(g, fp, tp, cx_gen_part(g, v, 1)));
  }
  if (fk == CX_KIND_COMPLEX) /* the verifier refuses it, as XLA does: the real part */
    return cx_gen_convert(g, cx_type_part(from), to, cx_gen_part(g, v, 0));
  if (tk == CX_KIND_PRED) {
    if (fk == CX_KIND_FLOAT) return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstReal(vt, 0), "");
    return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(vt, 0, 0), "");
  }
  if (tk == CX_KIND_FLOAT) {
    if (fk == CX_KIND_FLOAT) {
      if (to == CXLA_F64) return LLVMBuildFPExt(b, v, cg->t_f64, "");
      if (from == CXLA_F64 && cx_mf_format_of(to)) /* rounded once, from the double */
        return cx_mf_ir_decode(cg->b, to, cx_mf_ir_encode(cg->b, to, v));
      if (from == CXLA_F64) v = LLVMBuildFPTrunc(b, v, cg->t_f32, "");
      return cx_gen_round(g, to, v);
    }
    LLVMTypeRef mid = to == CXLA_F64 ? cg->t_f64 : cg->t_f32;
    v = fk == CX_KIND_SINT ? LLVMBuildSIToFP(b, v, mid, "") : LLVMBuildUIToFP(b, v, mid, "");
    return cx_gen_round(g, to, v);
  }
  /* to an integer type */
  if (fk == CX_KIND_FLOAT) {
    LLVMTypeRef tys[2] = {rt, vt};
    return cx_ir_intrinsic(g, tk == CX_KIND_SINT ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &v, 1);
  }
  unsigned fw = LLVMGetIntTypeWidth(vt), tw = LLVMGetIntTypeWidth(rt);
  if (fw == tw) return v;
  if (fw > tw) return LLVMBuildTrunc(b, v, rt, "");
  return fk == CX_KIND_SINT ? LLVMBuildSExt(b, v, rt, "") : LLVMBuildZExt(b, v, rt, "");
}

static int mem_bits(cxla_type t) { return 8 * (int)cxla_type_size(t); }

/* A complex number's bits: the real part's in the low half, as in (little-endian) memory. */
static LLVMValueRef complex_to_bits(cx_gen *g, cxla_type t, LLVMValueRef v) {
  LLVMBuilderRef b = g->cg->b;
  int w = mem_bits(t);
  LLVMTypeRef it = LLVMIntTypeInContext(g->cg->llctx, (unsigned)w);
  LLVMValueRef re = LLVMBuildZExt(b, cx_gen_to_bits(g, cx_type_part(t), cx_gen_part(g, v, 0)), it, "");
  LLVMValueRef im = LLVMBuildZExt(b, cx_gen_to_bits(g, cx_type_part(t), cx_gen_part(g, v, 1)), it, "");
  return LLVMBuildOr(b, re, LLVMBuildShl(b, im, LLVMConstInt(it, (unsigned long long)(w / 2), 0), ""), "");
}

static LLVMValueRef complex_from_bits(cx_gen *g, cxla_type t, LLVMValueRef bits) {
  LLVMBuilderRef b = g->cg->b;
  int w = mem_bits(t);
  cxla_type p = cx_type_part(t);
  LLVMTypeRef ht = LLVMIntTypeInContext(g->cg->llctx, (unsigned)(w / 2));
  LLVMValueRef hi = LLVMBuildLShr(b, bits, LLVMConstInt(LLVMTypeOf(bits), (unsigned long long)(w / 2), 0), "");
  return cx_gen_complex(g, t, cx_gen_from_bits(g, p, LLVMBuildTrunc(b, bits, ht, "")),
                        cx_gen_from_bits(g, p, LLVMBuildTrunc(b, hi, ht, "")));
}

LLVMValueRef cx_gen_to_bits(cx_gen *g, cxla_type t, LLVMValueRef v) {
  cx_cg *cg = g->cg;
  if (t == CXLA_F32) return LLVMBuildBitCast(cg->b, v, cg->t_i32, "");
  if (t == CXLA_F64) return LLVMBuildBitCast(cg->b, v, cg->t_i64, "");
  if (cx_type_is_complex(t)) return complex_to_bits(g, t, v);
  return cx_cg_to_mem(cg, t, v);
}

LLVMValueRef cx_gen_from_bits(cx_gen *g, cxla_type t, LLVMValueRef bits) {
  cx_cg *cg = g->cg;
  if (t == CXLA_F32) return LLVMBuildBitCast(cg->b, bits, cg->t_f32, "");
  if (t == CXLA_F64) return LLVMBuildBitCast(cg->b, bits, cg->t_f64, "");
  if (cx_type_is_complex(t)) return complex_from_bits(g, t, bits);
  return cx_cg_from_mem(cg, t, bits);
}

/* XLA's EmitReducePrecisionIR (quiet_nans=false) on the raw bits, as
 * cx_reduce_precision_bits does it in the interpreter. */
LLVMValueRef cx_gen_reduce_precision(cx_gen *g, cxla_type t, LLVMValueRef v, int ebits, int mbits) {
  if (cx_mf_format_of(t)) /* f8/f4: on the f32 register (exact), rounded back, as the interpreter */
    return cx_cg_round(g->cg, t, cx_gen_reduce_precision(g, CXLA_F32, v, ebits, mbits));
  LLVMBuilderRef b = g->cg->b;
  int nbits = mem_bits(t);
  int src_mbits = t == CXLA_F64 ? 52 : t == CXLA_F32 ? 23 : t == CXLA_F16 ? 10 : 7;
  int src_ebits = nbits - 1 - src_mbits;
  LLVMValueRef x = cx_gen_to_bits(g, t, v), orig = x;
  LLVMTypeRef it = LLVMTypeOf(x);
#define K(c) LLVMConstInt(it, (unsigned long long)(c), 0)
  uint64_t sign = UINT64_C(1) << (nbits - 1);
  uint64_t expmask = ((UINT64_C(1) << src_ebits) - 1) << src_mbits;
  LLVMValueRef is_nan = LLVMBuildICmp(b, LLVMIntUGT, LLVMBuildAnd(b, x, K(~sign), ""), K(expmask), "");
  if (mbits < src_mbits) {
    int sh = src_mbits - mbits;
    uint64_t last = UINT64_C(1) << sh;
    LLVMValueRef lastbit = LLVMBuildLShr(b, LLVMBuildAnd(b, x, K(last), ""), K(sh), "");
    LLVMValueRef bias = LLVMBuildAdd(b, K((last >> 1) - 1), lastbit, "");
    x = LLVMBuildAnd(b, LLVMBuildAdd(b, x, bias, ""), K(~(last - 1)), "");
  }
  if (ebits < src_ebits) {
    uint64_t bias = (UINT64_C(1) << (src_ebits - 1)) - 1;
    uint64_t rbias = (UINT64_C(1) << (ebits - 1)) - 1;
    LLVMValueRef xe = LLVMBuildAnd(b, x, K(expmask), "");
    LLVMValueRef sbit = LLVMBuildAnd(b, x, K(sign), "");
    LLVMValueRef over = LLVMBuildICmp(b, LLVMIntUGT, xe, K((bias + rbias) << src_mbits), "");
    LLVMValueRef under = LLVMBuildICmp(b, LLVMIntULE, xe, K((bias - rbias) << src_mbits), "");
    x = LLVMBuildSelect(b, over, LLVMBuildOr(b, sbit, K(expmask), ""), x, "");
    x = LLVMBuildSelect(b, under, sbit, x, "");
  }
  x = LLVMBuildSelect(b, is_nan, mbits > 0 ? orig : K(expmask), x, "");
#undef K
  return cx_gen_from_bits(g, t, x);
}

static LLVMValueRef convert(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  return cx_gen_convert(g, t, in->shape.type, a[0]);
}

static LLVMValueRef reduce_precision(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  if (in->a.exponent_bits < 1 || in->a.mantissa_bits < 0)
    return cx_gen_fail(g, in, "needs a float operand, exponent_bits >= 1, mantissa_bits >= 0");
  return cx_gen_reduce_precision(g, t, a[0], in->a.exponent_bits, in->a.mantissa_bits);
}

/* stochastic-convert with the interpreter's rule (ew_rules.c): floor(|x|), plus one where the
 * random bits are below the fraction scaled to their width (exact: a power of two, and f16's
 * 2^16 fits the f32 register), the sign back (the +1 and the negation wrap, as XLA's
 * decomposer's do), then x at or beyond the limits t rounds them to saturates. The
 * saturating conversions give NaN 0. */
static LLVMValueRef stochastic_convert(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a) {
  LLVMBuilderRef b = g->cg->b;
  cxla_type to = in->shape.type;
  int bits = cx_type_bits(to), rbits = cx_type_bits(in->ops[1]->shape.type);
  int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1, min = -max - 1;
  LLVMValueRef x = a[0], rnd = a[1];
  LLVMTypeRef ft = LLVMTypeOf(x), it = cx_cg_reg_type(g->cg, to), ut = LLVMTypeOf(rnd);
  LLVMValueRef mag = cx_ir_intr1(g, "llvm.fabs", x), whole = cx_ir_intr1(g, "llvm.floor", mag);
  LLVMValueRef scaled = LLVMBuildFMul(b, LLVMBuildFSub(b, mag, whole, ""), LLVMConstReal(ft, ldexp(1, rbits)), "");
  LLVMTypeRef tys[2] = {ut, ft};
  LLVMValueRef fixed = cx_ir_intrinsic(g, "llvm.fptoui.sat", tys, 2, &scaled, 1);
  tys[0] = it;
  LLVMValueRef n = cx_ir_intrinsic(g, "llvm.fptosi.sat", tys, 2, &whole, 1);
  LLVMValueRef up = LLVMBuildICmp(b, LLVMIntULT, rnd, fixed, "");
  n = LLVMBuildSelect(b, up, LLVMBuildAdd(b, n, LLVMConstInt(it, 1, 0), ""), n, "");
  LLVMValueRef neg = LLVMBuildFCmp(b, LLVMRealOLT, x, LLVMConstReal(ft, 0), "");
  n = LLVMBuildSelect(b, neg, LLVMBuildSub(b, LLVMConstInt(it, 0, 0), n, ""), n, "");
  LLVMValueRef lo = LLVMConstReal(ft, cx_round_to_type(t, (double)min));
  LLVMValueRef hi = LLVMConstReal(ft, cx_round_to_type(t, (double)max));
  n = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLE, x, lo, ""), LLVMConstInt(it, (unsigned long long)min, 1), n, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, x, hi, ""), LLVMConstInt(it, (unsigned long long)max, 1), n, "");
}

const cx_elem_hooks cx_elem_convert[CX_OP_COUNT] = {
  /*                          float             integer  pred     complex */
  [CX_OP_CONVERT] =          {convert,          convert, convert, convert},
  [CX_OP_REDUCE_PRECISION] = {reduce_precision, NULL,    NULL},
  [CX_OP_STOCHASTIC_CONVERT] = {stochastic_convert, NULL, NULL},
};

/* An element's bits at its width as bitcast-convert counts it: a sub-byte type (s4, u4, s2,
 * u2, f4e2m1fn) has its logical bits, the low ones of the byte it is stored in. */
static LLVMValueRef width_bits(cx_gen *g, cxla_type t, LLVMValueRef v) {
  LLVMValueRef m = cx_gen_to_bits(g, t, v);
  int w = cx_type_bits(t);
  return w < mem_bits(t) ? LLVMBuildTrunc(g->cg->b, m, LLVMIntTypeInContext(g->cg->llctx, (unsigned)w), "") : m;
}

static LLVMValueRef from_width_bits(cx_gen *g, cxla_type t, LLVMValueRef bits) {
  int w = cx_type_bits(t), mw = mem_bits(t);
  if (w < mw) bits = LLVMBuildZExt(g->cg->b, bits, LLVMIntTypeInContext(g->cg->llctx, (unsigned)mw), "");
  return cx_gen_from_bits(g, t, bits);
}

/* bitcast-convert (its own generator, not an elementwise builder: a width-changing one
 * re-indexes): same width is elementwise; a narrower result has an extra trailing
 * dimension holding the operand's little-endian pieces; a wider one consumes the operand's
 * trailing dimension. Widths are XLA's bit widths: s4 to s8 packs two elements in one. */
LLVMValueRef cx_gen_bitcast_convert(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMBuilderRef b = g->cg->b;
  const cx_instr *x = in->ops[0];
  cxla_type ft = x->shape.type, tt = in->shape.type;
  int wf = cx_type_bits(ft), wt = cx_type_bits(tt);
  if (wf == wt) {
    LLVMValueRef v = cx_gen_operand(g, in, 0, idx);
    return from_width_bits(g, tt, width_bits(g, ft, v));
  }
  if (wf > wt) {
    if (in->shape.rank != x->shape.rank + 1 || in->shape.dims[in->shape.rank - 1] != wf / wt)
      return cx_gen_fail(g, in, "result must add a trailing dimension of %d", wf / wt);
    cx_idx oi = cx_idx_from_multi(g, &x->shape, idx->v);
    LLVMValueRef bits = width_bits(g, ft, cx_gen1(g, x, &oi));
    LLVMTypeRef it = LLVMTypeOf(bits);
    LLVMValueRef j = idx->v[in->shape.rank - 1];
    LLVMValueRef sh = LLVMBuildMul(b, j, cx_ir_i64(g, wt), "");
    sh = wf == 64 ? sh : LLVMBuildTrunc(b, sh, it, "");
    LLVMValueRef part = LLVMBuildTrunc(b, LLVMBuildLShr(b, bits, sh, ""), LLVMIntTypeInContext(g->cg->llctx, (unsigned)wt), "");
    return from_width_bits(g, tt, part);
  }
  int k = wt / wf;
  if (x->shape.rank != in->shape.rank + 1 || x->shape.dims[x->shape.rank - 1] != k)
    return cx_gen_fail(g, in, "operand must have a trailing dimension of %d", k);
  LLVMTypeRef it = LLVMIntTypeInContext(g->cg->llctx, (unsigned)wt);
  LLVMValueRef acc = LLVMConstInt(it, 0, 0), v[CXLA_MAX_RANK];
  for (int d = 0; d < in->shape.rank; d++) v[d] = idx->v[d];
  for (int j = 0; j < k; j++) {
    v[in->shape.rank] = cx_ir_i64(g, j);
    cx_idx oi = cx_idx_from_multi(g, &x->shape, v);
    LLVMValueRef bits = LLVMBuildZExt(b, width_bits(g, ft, cx_gen1(g, x, &oi)), it, "");
    acc = LLVMBuildOr(b, acc, LLVMBuildShl(b, bits, LLVMConstInt(it, (unsigned long long)(j * wf), 0), ""), "");
  }
  return from_width_bits(g, tt, acc);
}
