/* gen_ir.c — small LLVM IR helpers for the generators: constants, intrinsics, math calls,
 * index arithmetic and entry-block allocas. */
#include <string.h>
#include "codegen/gen.h"

LLVMValueRef cx_ir_i64(cx_gen *g, int64_t v) { return LLVMConstInt(g->cg->t_i64, (unsigned long long)v, 1); }

LLVMValueRef cx_ir_fmf(LLVMValueRef v, LLVMFastMathFlags f) {
  if (f && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v)) LLVMSetFastMathFlags(v, f);
  return v;
}

LLVMValueRef cx_ir_intrinsic(cx_gen *g, const char *name, LLVMTypeRef *types, int ntypes,
                             LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    cx_cg_fail(g->cg, CXLA_ERR_INTERNAL, "codegen: no LLVM intrinsic %s", name);
    return LLVMGetUndef(nargs ? LLVMTypeOf(args[0]) : g->cg->t_i64);
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->cg->mod, id, types, (size_t)ntypes);
  LLVMTypeRef ft = LLVMIntrinsicGetType(g->cg->llctx, id, types, (size_t)ntypes);
  return LLVMBuildCall2(g->cg->b, ft, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cx_ir_intr1(cx_gen *g, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return cx_ir_intrinsic(g, name, &t, 1, &x, 1);
}

LLVMValueRef cx_ir_intr2(cx_gen *g, const char *name, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef a[2] = {x, y};
  return cx_ir_intrinsic(g, name, &t, 1, a, 2);
}

LLVMValueRef cx_ir_call(cx_gen *g, const char *name, int nargs, LLVMValueRef *args) {
  cx_cg *cg = g->cg;
  LLVMTypeRef t = LLVMTypeOf(args[0]), pt[2] = {t, t};
  LLVMTypeRef ft = LLVMFunctionType(t, pt, (unsigned)(nargs < 2 ? nargs : 2), 0);
  LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
  if (!fn) {
    fn = LLVMAddFunction(cg->mod, name, ft);
    /* math functions set errno at most; calls can be moved and deleted like arithmetic */
    unsigned nu = LLVMGetEnumAttributeKindForName("nounwind", 8);
    unsigned wr = LLVMGetEnumAttributeKindForName("willreturn", 10);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->llctx, nu, 0));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->llctx, wr, 0));
  }
  return LLVMBuildCall2(cg->b, ft, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cx_ir_smin(cx_gen *g, LLVMValueRef a, LLVMValueRef b) { return cx_ir_intr2(g, "llvm.smin", a, b); }
LLVMValueRef cx_ir_smax(cx_gen *g, LLVMValueRef a, LLVMValueRef b) { return cx_ir_intr2(g, "llvm.smax", a, b); }

LLVMValueRef cx_ir_clamp(cx_gen *g, LLVMValueRef v, int64_t lo, int64_t hi) {
  return cx_ir_smin(g, cx_ir_smax(g, v, cx_ir_i64(g, lo)), cx_ir_i64(g, hi));
}

LLVMValueRef cx_ir_index_i64(cx_gen *g, cxla_type t, LLVMValueRef v) {
  LLVMBuilderRef b = g->cg->b;
  if (t == CXLA_U64) /* above INT64_MAX: reads as INT64_MAX */
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, cx_ir_i64(g, 0), ""),
                           cx_ir_i64(g, INT64_MAX), v, "");
  if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64) return v;
  if (cx_type_kind(t) == CX_KIND_SINT) return LLVMBuildSExt(b, v, g->cg->t_i64, "");
  return LLVMBuildZExt(b, v, g->cg->t_i64, "");
}

LLVMValueRef cx_gen_alloca(cx_gen *g, LLVMTypeRef t, int64_t count) {
  LLVMBuilderRef b = g->cg->b;
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(g->fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef a = count > 1 ? LLVMBuildArrayAlloca(b, t, cx_ir_i64(g, count), "acc")
                             : LLVMBuildAlloca(b, t, "acc");
  if (count > 1) LLVMSetAlignment(a, 64);
  LLVMPositionBuilderAtEnd(b, cur); /* generators always append at the end of a block */
  return a;
}

/* ---- indices ---- */

cx_idx cx_idx_scalar(cx_gen *g) {
  cx_idx r;
  memset(&r, 0, sizeof r);
  r.lin = cx_ir_i64(g, 0);
  return r;
}

cx_idx cx_idx_both(const cx_shape *s, const LLVMValueRef *v, LLVMValueRef lin) {
  cx_idx r;
  memset(&r, 0, sizeof r);
  r.rank = s->rank;
  for (int d = 0; d < s->rank; d++) r.v[d] = v[d];
  r.lin = lin;
  return r;
}

/* Indices are non-negative and products of dims stay below 2^62, so nsw/nuw are true and
 * let LLVM's SCEV see affine accesses. */
static LLVMValueRef mul_nw(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef r = LLVMBuildMul(b, x, y, "");
  if (LLVMIsAInstruction(r)) { LLVMSetNSW(r, 1); LLVMSetNUW(r, 1); }
  return r;
}
static LLVMValueRef add_nw(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef r = LLVMBuildAdd(b, x, y, "");
  if (LLVMIsAInstruction(r)) { LLVMSetNSW(r, 1); LLVMSetNUW(r, 1); }
  return r;
}

cx_idx cx_idx_from_multi(cx_gen *g, const cx_shape *s, const LLVMValueRef *v) {
  LLVMBuilderRef b = g->cg->b;
  LLVMValueRef lin = cx_ir_i64(g, 0);
  int64_t stride = 1;
  for (int d = s->rank - 1; d >= 0; d--) {
    if (s->dims[d] != 1) lin = add_nw(b, lin, stride == 1 ? v[d] : mul_nw(b, v[d], cx_ir_i64(g, stride)));
    stride *= s->dims[d] ? s->dims[d] : 1;
  }
  return cx_idx_both(s, v, lin);
}

cx_idx cx_idx_from_linear(cx_gen *g, const cx_shape *s, LLVMValueRef lin) {
  LLVMBuilderRef b = g->cg->b;
  LLVMValueRef v[CXLA_MAX_RANK], q = lin;
  int outer = 0; /* the outermost dim with size != 1 takes the quotient without a urem */
  while (outer < s->rank && s->dims[outer] == 1) outer++;
  for (int d = s->rank - 1; d >= 0; d--) {
    if (s->dims[d] == 1 || d < outer) { v[d] = cx_ir_i64(g, 0); continue; }
    if (d == outer) { v[d] = q; continue; }
    LLVMValueRef n = cx_ir_i64(g, s->dims[d]);
    v[d] = LLVMBuildURem(b, q, n, "");
    q = LLVMBuildUDiv(b, q, n, "");
  }
  return cx_idx_both(s, v, lin);
}
