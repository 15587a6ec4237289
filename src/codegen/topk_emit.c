/* topk_emit.c — top-k along the last dimension as one kernel of rank placement (see cg.h), the
 * thread of element i of a row counting the elements that come before it in XLA's order for
 * TopK: a stable sort by TOTALORDER (NaN > inf > ... > +0 > -0 > ... > -inf > -NaN for
 * largest; the reverse for smallest), ties by index. An element whose rank is below k writes
 * its value and index to that position. As for sort (sort_emit.c), n work a thread. */
#include "codegen/emit.h"
#include "codegen/loops.h"
#include "ir/custom_call.h"

enum { MAX_ROW = 16384 };

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
  if (x->dims[x->rank - 1] > MAX_ROW) return *why = "rows longer than 16384 elements need a merge sort, not there yet", 0;
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
