/* scalar_fn.c — a scalar called computation (sort comparator, scatter combiner, select) as a
 * function of its own that runtime routines call through a pointer:
 *   void name(i8 **p)   p[0 .. nres) the result elements, p[nres ..) the parameters'
 * Each pointer addresses one element in memory form (pred as one byte), so a routine passes
 * the addresses of the elements it compares or combines and copies nothing. The body is the
 * same inlined computation the reduce and map emitters build (cx_gen_scalar_comp), so the
 * values round as theirs do. */
#include <stdio.h>
#include <llvm-c/Analysis.h>
#include "codegen/emit.h"

static int result_types(const cx_comp *c, cxla_type *t, int max) {
  const cx_shape *r = &c->root->shape;
  if (r->type != CXLA_TUPLE) {
    t[0] = r->type;
    return 1;
  }
  if (r->ntuple > max) return -1;
  for (int i = 0; i < r->ntuple; i++) t[i] = r->tuple[i].type;
  return r->ntuple;
}

cxla_status cx_emit_scalar_fn(cx_cg *cg, const cx_comp *c, LLVMValueRef *fn, const char **why) {
  *fn = NULL;
  if (!cx_emit_scalar_comp_ok(c, why)) return CXLA_ERR_UNSUPPORTED;
  cxla_type rt[CX_GEN_MAX_VALS];
  int nres = result_types(c, rt, CX_GEN_MAX_VALS), nargs = c->nparams;
  if (nres < 0 || nargs > CX_GEN_MAX_VALS) return *why = "called computation with too many values", CXLA_ERR_UNSUPPORTED;
  char name[64];
  snprintf(name, sizeof name, "cx_s%d_scalar", cg->nkernels++);
  LLVMTypeRef pt = cg->t_ptr;
  LLVMValueRef f = LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_void, &pt, 1, 0));
  LLVMBuilderRef b = cg->b;
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->llctx, f, "entry"));
  LLVMValueRef p = LLVMGetParam(f, 0), zero = cx_cg_i64(cg, 0);
  LLVMValueRef args[CX_GEN_MAX_VALS], res[CX_GEN_MAX_VALS];
  for (int i = 0; i < nargs; i++) {
    LLVMValueRef at = cx_cg_i64(cg, nres + i);
    LLVMValueRef ptr = LLVMBuildLoad2(b, pt, LLVMBuildGEP2(b, pt, p, &at, 1, ""), "");
    args[i] = cx_cg_load(cg, c->params[i]->shape.type, ptr, zero);
  }
  cx_gen g;
  cx_gen_init(&g, cg, f, name);
  int got = cx_gen_scalar_comp(&g, c, nargs, args, res);
  cx_gen_dispose(&g);
  if (cg->status == CXLA_OK && got != nres)
    cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s gave %d values for %d results", c->name, got, nres);
  if (cg->status == CXLA_OK) {
    for (int i = 0; i < nres; i++) {
      LLVMValueRef at = cx_cg_i64(cg, i);
      LLVMValueRef ptr = LLVMBuildLoad2(b, pt, LLVMBuildGEP2(b, pt, p, &at, 1, ""), "");
      cx_cg_store(cg, rt[i], ptr, zero, res[i]);
    }
    LLVMBuildRetVoid(b);
    if (LLVMVerifyFunction(f, LLVMReturnStatusAction))
      cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: invalid LLVM IR for %s (%s)", name, c->name);
  }
  if (cg->status != CXLA_OK) {
    LLVMDeleteFunction(f);
    return cg->status;
  }
  *fn = f;
  return CXLA_OK;
}
