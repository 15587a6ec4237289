/* cg.c — the LLVM emission context: types and typed element access. f16 goes through LLVM's
 * half type (hardware conversions where the CPU has them); bf16 is converted with integer
 * ops (round to nearest even, NaN kept quiet), matching src/ir/types.c bit for bit. */
#include <stdio.h>
#include <string.h>
#include "codegen/cg.h"
#include "codegen/minifloat_ir.h"
#include "ir/minifloat.h"

void cx_cg_init(cx_cg *g, cxla_context *ctx, cx_module *m, LLVMContextRef llctx, LLVMModuleRef mod,
                const cx_target *t) {
  memset(g, 0, sizeof *g);
  g->ctx = ctx;
  g->m = m;
  g->llctx = llctx;
  g->mod = mod;
  g->b = LLVMCreateBuilderInContext(llctx);
  g->t_void = LLVMVoidTypeInContext(llctx);
  g->t_i1 = LLVMInt1TypeInContext(llctx);
  g->t_i8 = LLVMInt8TypeInContext(llctx);
  g->t_i16 = LLVMInt16TypeInContext(llctx);
  g->t_i32 = LLVMInt32TypeInContext(llctx);
  g->t_i64 = LLVMInt64TypeInContext(llctx);
  g->t_f32 = LLVMFloatTypeInContext(llctx);
  g->t_f64 = LLVMDoubleTypeInContext(llctx);
  g->t_ptr = LLVMPointerTypeInContext(llctx, t->addrspace_global);
  g->target = t;
  if (t->triple) LLVMSetTarget(mod, t->triple);
  if (t->data_layout) LLVMSetDataLayout(mod, t->data_layout);
}

void cx_cg_dispose(cx_cg *g) {
  if (g->b) LLVMDisposeBuilder(g->b);
  g->b = NULL;
}

cxla_status cx_cg_fail(cx_cg *g, cxla_status code, const char *fmt, ...) {
  if (g->status != CXLA_OK) return g->status;
  va_list ap;
  va_start(ap, fmt);
  cx_verror(g->ctx, code, fmt, ap);
  va_end(ap);
  g->status = code;
  return code;
}

LLVMValueRef cx_cg_i64(cx_cg *g, int64_t v) { return LLVMConstInt(g->t_i64, (unsigned long long)v, 1); }

static const char k_width_key[] = "prefer-vector-width";

void cx_cg_prefer_wide_vectors(cx_cg *g, LLVMValueRef fn) {
  if (g->target->warp_size || g->target->vector_bits < 512) return;
  static const char pv[] = "512";
  if (!fn) fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(g->llctx, k_width_key, sizeof k_width_key - 1, pv, sizeof pv - 1));
}

int cx_cg_prefers_wide_vectors(LLVMValueRef fn) {
  return LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, k_width_key, sizeof k_width_key - 1) != NULL;
}

LLVMTypeRef cx_cg_reg_type(cx_cg *g, cxla_type t) {
  if (cx_mf_format_of(t)) return g->t_f32; /* the 8- and 4-bit floats compute in f32, as f16 does */
  switch (t) {
  case CXLA_PRED: return g->t_i1;
  case CXLA_S8: case CXLA_U8: return g->t_i8;
  case CXLA_S16: case CXLA_U16: return g->t_i16;
  case CXLA_S32: case CXLA_U32: return g->t_i32;
  case CXLA_S64: case CXLA_U64: return g->t_i64;
  case CXLA_F16: case CXLA_BF16: case CXLA_F32: return g->t_f32;
  case CXLA_S4: case CXLA_U4: return LLVMIntTypeInContext(g->llctx, 4); /* LLVM's i4 wraps as s4/u4 do */
  case CXLA_S2: case CXLA_U2: return LLVMIntTypeInContext(g->llctx, 2);
  case CXLA_F64: return g->t_f64;
  case CXLA_C64: case CXLA_C128: { /* {re, im}, as in memory */
    LLVMTypeRef p = t == CXLA_C64 ? g->t_f32 : g->t_f64, parts[2] = {p, p};
    return LLVMStructTypeInContext(g->llctx, parts, 2, 0);
  }
  default: return g->t_i8;
  }
}

LLVMTypeRef cx_cg_mem_type(cx_cg *g, cxla_type t) {
  switch (t) {
  case CXLA_PRED: return g->t_i8;
  case CXLA_F16: case CXLA_BF16: return g->t_i16;
  case CXLA_S4: case CXLA_U4: case CXLA_S2: case CXLA_U2: return g->t_i8;
  default: return cx_mf_format_of(t) ? g->t_i8 : cx_cg_reg_type(g, t);
  }
}

static LLVMValueRef bf16_to_f32(cx_cg *g, LLVMValueRef bits16) {
  LLVMValueRef w = LLVMBuildZExt(g->b, bits16, g->t_i32, "");
  w = LLVMBuildShl(g->b, w, LLVMConstInt(g->t_i32, 16, 0), "");
  return LLVMBuildBitCast(g->b, w, g->t_f32, "");
}

static LLVMValueRef f32_to_bf16(cx_cg *g, LLVMValueRef f) {
  LLVMBuilderRef b = g->b;
  LLVMValueRef u = LLVMBuildBitCast(b, f, g->t_i32, "");
  LLVMValueRef one = LLVMConstInt(g->t_i32, 1, 0);
  LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, u, LLVMConstInt(g->t_i32, 16, 0), ""), one, "");
  LLVMValueRef rounded = LLVMBuildAdd(b, u, LLVMBuildAdd(b, LLVMConstInt(g->t_i32, 0x7fff, 0), lsb, ""), "");
  LLVMValueRef quiet = LLVMBuildOr(b, u, LLVMConstInt(g->t_i32, 0x400000, 0), ""); /* sets bit 6 of bf16 */
  LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  LLVMValueRef r = LLVMBuildSelect(b, isnan, quiet, rounded, "");
  return LLVMBuildTrunc(b, LLVMBuildLShr(b, r, LLVMConstInt(g->t_i32, 16, 0), ""), g->t_i16, "");
}

LLVMValueRef cx_cg_from_mem(cx_cg *g, cxla_type t, LLVMValueRef v) {
  switch (t) {
  case CXLA_PRED: return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->t_i8, 0, 0), "");
  case CXLA_F16:
    return LLVMBuildFPExt(g->b, LLVMBuildBitCast(g->b, v, LLVMHalfTypeInContext(g->llctx), ""), g->t_f32, "");
  case CXLA_BF16: return bf16_to_f32(g, v);
  case CXLA_S4: case CXLA_U4: case CXLA_S2: case CXLA_U2: /* the low four (two) bits */
    return LLVMBuildTrunc(g->b, v, cx_cg_reg_type(g, t), "");
  default: return cx_mf_format_of(t) ? cx_mf_ir_decode(g->b, t, v) : v;
  }
}

LLVMValueRef cx_cg_to_mem(cx_cg *g, cxla_type t, LLVMValueRef v) {
  switch (t) {
  case CXLA_PRED: return LLVMBuildZExt(g->b, v, g->t_i8, "");
  case CXLA_F16:
    return LLVMBuildBitCast(g->b, LLVMBuildFPTrunc(g->b, v, LLVMHalfTypeInContext(g->llctx), ""), g->t_i16, "");
  case CXLA_BF16: return f32_to_bf16(g, v);
  case CXLA_S4: case CXLA_U4: case CXLA_S2: case CXLA_U2: /* ml_dtypes' byte: high bits 0 */
    return LLVMBuildZExt(g->b, v, g->t_i8, "");
  default: return cx_mf_format_of(t) ? cx_mf_ir_encode(g->b, t, v) : v;
  }
}

LLVMValueRef cx_cg_round(cx_cg *g, cxla_type t, LLVMValueRef v) {
  if (t != CXLA_F16 && t != CXLA_BF16 && !cx_mf_format_of(t)) return v;
  return cx_cg_from_mem(g, t, cx_cg_to_mem(g, t, v));
}

LLVMValueRef cx_cg_load(cx_cg *g, cxla_type t, LLVMValueRef base, LLVMValueRef index) {
  LLVMTypeRef mt = cx_cg_mem_type(g, t);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, mt, base, &index, 1, "");
  return cx_cg_from_mem(g, t, LLVMBuildLoad2(g->b, mt, p, ""));
}

void cx_cg_store(cx_cg *g, cxla_type t, LLVMValueRef base, LLVMValueRef index, LLVMValueRef v) {
  LLVMTypeRef mt = cx_cg_mem_type(g, t);
  v = cx_cg_to_mem(g, t, v);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, mt, base, &index, 1, "");
  LLVMBuildStore(g->b, v, p);
}
