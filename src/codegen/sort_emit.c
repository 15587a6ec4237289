/* sort_emit.c — sort as one data-parallel kernel of rank placement (see cg.h). The thread of
 * element i of a row counts the elements that go before it under the comparator, stably:
 *   rank(i) = #{j < i : !less(x_i, x_j)} + #{j > i : less(x_j, x_i)}
 * and writes element i of every operand to position rank(i) of its row. No shared memory,
 * barriers or scratch: every thread reads the row (which the cache serves) and the result is
 * the stable sort's, for a comparator that is a strict weak order (XLA's requirement; JAX's
 * comparators order NaNs totally). n comparator calls a thread makes the work n^2 a row, so
 * long rows are left to a merge path (cx_emit_sort_ok says which). */
#include "codegen/emit.h"
#include "codegen/loops.h"

enum { MAX_ROW = 16384, MAX_OPS = 16 };

int cx_emit_sort_ok(const cx_instr *in, const char **why) {
  if (in->op != CX_OP_SORT || in->nops < 1 || in->nops > MAX_OPS || in->a.dims.n != 1 || in->ncalled != 1)
    return *why = "a sort of more than 16 operands, or along other than one dimension", 0;
  const cx_shape *x = &in->ops[0]->shape;
  int64_t d = in->a.dims.v[0];
  if (d < 0 || d >= x->rank) return *why = "a sort along no dimension", 0;
  if (x->dims[d] > MAX_ROW) return *why = "rows longer than 16384 elements need a merge sort, not there yet", 0;
  for (int k = 0; k < in->nops; k++)
    if (!cx_type_is_array(in->ops[k]->shape.type) || cx_type_is_complex(in->ops[k]->shape.type))
      return *why = "a sort of complex or non-array operands", 0;
  return cx_emit_scalar_comp_ok(in->called[0], why);
}

/* loads element `at` of every operand (register form) */
static void load_all(cx_kfn *k, const cx_instr *in, LLVMValueRef at, LLVMValueRef *v) {
  int n = in->nops;
  for (int q = 0; q < n; q++) v[q] = cx_cg_load(k->cg, in->ops[q]->shape.type, k->ptr[n + q], at);
}

cxla_status cx_emit_sort_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const char *why = NULL;
  if (!cx_emit_sort_ok(in, &why)) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why);
  int n = in->nops;
  const cx_shape *x = &in->ops[0]->shape;
  int d = (int)in->a.dims.v[0];
  int64_t len = x->dims[d], inner = 1, total = cx_shape_elems(x);
  for (int q = d + 1; q < x->rank; q++) inner *= x->dims[q];
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, in, 2 * n, 0, 0));
  LLVMBuilderRef b = cg->b;
  LLVMValueRef c_inner = cx_cg_i64(cg, inner), c_len = cx_cg_i64(cg, len);
  LLVMValueRef rank_slot = cx_gen_alloca(&k.g, cg->t_i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, k.begin, k.end, "elem");
  /* element e = (o * len + i) * inner + r: row base o * len * inner + r, stride inner */
  LLVMValueRef r = LLVMBuildURem(b, e.iv, c_inner, "");
  LLVMValueRef oi = LLVMBuildUDiv(b, e.iv, c_inner, "");
  LLVMValueRef i = LLVMBuildURem(b, oi, c_len, "");
  LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildSub(b, oi, i, ""), c_inner, ""), r, "");
  LLVMValueRef xi[MAX_OPS], xj[MAX_OPS], args[2 * MAX_OPS], less;
  load_all(&k, in, e.iv, xi);
  LLVMBuildStore(b, cx_cg_i64(cg, 0), rank_slot);
  cx_loop j;
  cx_loop_begin(cg, &j, cx_cg_i64(cg, 0), c_len, "other");
  load_all(&k, in, LLVMBuildAdd(b, base, LLVMBuildMul(b, j.iv, c_inner, ""), ""), xj);
  /* before i: less(x_i, x_j) keeps x_j ahead unless x_i is strictly less; after i: less(x_j, x_i) */
  LLVMValueRef before = LLVMBuildICmp(b, LLVMIntULT, j.iv, i, "");
  for (int q = 0; q < n; q++) {
    args[2 * q] = LLVMBuildSelect(b, before, xi[q], xj[q], "");
    args[2 * q + 1] = LLVMBuildSelect(b, before, xj[q], xi[q], "");
  }
  if (cx_gen_scalar_comp(&k.g, in->called[0], 2 * n, args, &less) != 1 && cg->status == CXLA_OK)
    cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: the comparator gives not one value", in->name);
  if (cg->status == CXLA_OK) {
    LLVMValueRef lt = LLVMTypeOf(less) == cg->t_i1 ? less : LLVMBuildICmp(b, LLVMIntNE, less, LLVMConstNull(LLVMTypeOf(less)), "");
    LLVMValueRef counts = LLVMBuildSelect(b, before, LLVMBuildNot(b, lt, ""), lt, "");
    counts = LLVMBuildAnd(b, counts, LLVMBuildICmp(b, LLVMIntNE, j.iv, i, ""), "");
    LLVMValueRef rk = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, rk, LLVMBuildZExt(b, counts, cg->t_i64, ""), ""), rank_slot);
  }
  cx_loop_end(cg, &j);
  LLVMValueRef rank = LLVMBuildLoad2(b, cg->t_i64, rank_slot, "");
  LLVMValueRef to = LLVMBuildAdd(b, base, LLVMBuildMul(b, rank, c_inner, ""), "");
  for (int q = 0; q < n; q++) cx_cg_store(cg, in->ops[q]->shape.type, k.ptr[q], to, xi[q]);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, total, len, n, n);
}
