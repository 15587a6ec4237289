/* sort_emit.c — sort as one data-parallel kernel of rank placement (see cg.h). The thread of
 * element i of a row counts the elements that go before it under the comparator, stably:
 *   rank(i) = #{j < i : !less(x_i, x_j)} + #{j > i : less(x_j, x_i)}
 * and writes element i of every operand to position rank(i) of its row. No shared memory,
 * barriers or scratch: every thread reads the row (which the cache serves) and the result is
 * the stable sort's, for a comparator that is a strict weak order (XLA's requirement; JAX's
 * comparators order NaNs totally). n comparator calls a thread makes the work n^2 a row, so
 * a long row is sorted in tiles the same way (cx_emit_sort_tiles) and the tiles merged pass by
 * pass (cx_emit_sort_merge: a binary search a thread, log2 of the row passes), between the
 * result and a scratch buffer of the same size. */
#include "codegen/emit.h"
#include "codegen/loops.h"

enum { MAX_OPS = 16 };

int cx_emit_sort_ok(const cx_instr *in, const char **why) {
  if (in->op != CX_OP_SORT || in->nops < 1 || in->nops > MAX_OPS || in->a.dims.n != 1 || in->ncalled != 1)
    return *why = "a sort of more than 16 operands, or along other than one dimension", 0;
  const cx_shape *x = &in->ops[0]->shape;
  int64_t d = in->a.dims.v[0];
  if (d < 0 || d >= x->rank) return *why = "a sort along no dimension", 0;
  for (int k = 0; k < in->nops; k++)
    if (!cx_type_is_array(in->ops[k]->shape.type)) return *why = "a sort of non-array operands", 0;
  return cx_emit_scalar_comp_ok(in->called[0], why);
}

/* loads element `at` of every operand (register form) from ptr[first...] */
static void load_all(cx_kfn *k, const cx_instr *in, int first, LLVMValueRef at, LLVMValueRef *v) {
  int n = in->nops;
  for (int q = 0; q < n; q++) v[q] = cx_cg_load(k->cg, in->ops[q]->shape.type, k->ptr[first + q], at);
}

/* less(swap ? b : a, swap ? a : b) of the comparator as an i1: one inlined call either way */
static LLVMValueRef less(cx_kfn *k, const cx_instr *in, LLVMValueRef swap, const LLVMValueRef *a, const LLVMValueRef *b) {
  cx_cg *cg = k->cg;
  LLVMValueRef args[2 * MAX_OPS], v = NULL;
  for (int q = 0; q < in->nops; q++) {
    args[2 * q] = LLVMBuildSelect(cg->b, swap, b[q], a[q], "");
    args[2 * q + 1] = LLVMBuildSelect(cg->b, swap, a[q], b[q], "");
  }
  if (cx_gen_scalar_comp(&k->g, in->called[0], 2 * in->nops, args, &v) != 1 || !v) {
    if (cg->status == CXLA_OK) cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: the comparator gives not one value", in->name);
    return LLVMConstInt(cg->t_i1, 0, 0);
  }
  return LLVMTypeOf(v) == cg->t_i1 ? v : LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

static LLVMValueRef min64(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, y, ""), x, y, "");
}

/* One pass over every element of every row, reading the operands (ptr[n...]) and writing
 * them (ptr[0...]) permuted within each row:
 *   width 0: rank placement within segments of seg elements (seg >= the row: the row);
 *   width w: runs of w sorted elements merged pairwise into runs of 2w. Element i of the left
 *     run goes after the right run's elements strictly less than it, one of the right run
 *     after the left run's elements not greater (stable); each count is a binary search of
 *     bits steps over the other, sorted run. */
static cxla_status sort_pass(cx_cg *cg, cx_instr *in, int64_t seg, int64_t width, cx_kernel *out) {
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
  LLVMTypeRef i64 = cg->t_i64;
  LLVMValueRef c_inner = cx_cg_i64(cg, inner), c_len = cx_cg_i64(cg, len), zero = cx_cg_i64(cg, 0);
  LLVMValueRef count_slot = cx_gen_alloca(&k.g, i64, 1), lo_slot = cx_gen_alloca(&k.g, i64, 1),
               hi_slot = cx_gen_alloca(&k.g, i64, 1);
  cx_loop e;
  cx_loop_begin(cg, &e, k.begin, k.end, "elem");
  /* element e = (o * len + i) * inner + r: row base o * len * inner + r, stride inner */
  LLVMValueRef r = LLVMBuildURem(b, e.iv, c_inner, "");
  LLVMValueRef oi = LLVMBuildUDiv(b, e.iv, c_inner, "");
  LLVMValueRef i = LLVMBuildURem(b, oi, c_len, "");
  LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildSub(b, oi, i, ""), c_inner, ""), r, "");
  LLVMValueRef xi[MAX_OPS], xj[MAX_OPS], pos;
  load_all(&k, in, n, e.iv, xi);
  if (width == 0) {
    LLVMValueRef c_seg = cx_cg_i64(cg, seg < len ? seg : len);
    LLVMValueRef ts = LLVMBuildMul(b, LLVMBuildUDiv(b, i, c_seg, ""), c_seg, "");
    LLVMValueRef tl = min64(b, c_seg, LLVMBuildSub(b, c_len, ts, ""));
    LLVMBuildStore(b, zero, count_slot);
    cx_loop j;
    cx_loop_begin(cg, &j, zero, tl, "other");
    LLVMValueRef at = LLVMBuildAdd(b, ts, j.iv, "");
    load_all(&k, in, n, LLVMBuildAdd(b, base, LLVMBuildMul(b, at, c_inner, ""), ""), xj);
    /* before i: x_j stays ahead unless x_i is strictly less; after i: x_j goes ahead if less */
    LLVMValueRef before = LLVMBuildICmp(b, LLVMIntULT, at, i, "");
    LLVMValueRef lt = less(&k, in, LLVMBuildNot(b, before, ""), xi, xj); /* before: less(x_i, x_j), after: less(x_j, x_i) */
    LLVMValueRef counts = LLVMBuildSelect(b, before, LLVMBuildNot(b, lt, ""), lt, "");
    counts = LLVMBuildAnd(b, counts, LLVMBuildICmp(b, LLVMIntNE, at, i, ""), "");
    LLVMValueRef c = LLVMBuildLoad2(b, i64, count_slot, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, c, LLVMBuildZExt(b, counts, i64, ""), ""), count_slot);
    cx_loop_end(cg, &j);
    pos = LLVMBuildAdd(b, ts, LLVMBuildLoad2(b, i64, count_slot, ""), "");
  } else {
    LLVMValueRef c_w = cx_cg_i64(cg, width);
    LLVMValueRef q = LLVMBuildUDiv(b, i, c_w, "");
    LLVMValueRef left = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, q, cx_cg_i64(cg, 1), ""), zero, "");
    LLVMValueRef ps = LLVMBuildMul(b, LLVMBuildAnd(b, q, cx_cg_i64(cg, ~(int64_t)1), ""), c_w, "");
    LLVMValueRef bs = LLVMBuildAdd(b, ps, c_w, "");
    /* the right run's length: 0 to w (bs may be past the row's end) */
    LLVMValueRef blen = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, bs, c_len, ""),
                                        min64(b, c_w, LLVMBuildSub(b, c_len, bs, "")), zero, "");
    LLVMValueRef own = LLVMBuildSub(b, i, LLVMBuildMul(b, q, c_w, ""), "");
    LLVMValueRef ostart = LLVMBuildSelect(b, left, bs, ps, ""), olen = LLVMBuildSelect(b, left, blen, c_w, "");
    cx_bsearch t;
    cx_bsearch_begin(cg, &t, lo_slot, hi_slot, olen, width);
    /* an idle step reads element i itself: always in the row */
    LLVMValueRef at = LLVMBuildSelect(b, t.active, LLVMBuildAdd(b, ostart, t.mid, ""), i, "");
    load_all(&k, in, n, LLVMBuildAdd(b, base, LLVMBuildMul(b, at, c_inner, ""), ""), xj);
    /* left: count the right run's x_j < x_i; right: the left run's x_j <= x_i, !(x_i < x_j) */
    LLVMValueRef lt = less(&k, in, left, xi, xj); /* left: less(x_j, x_i); right: less(x_i, x_j) */
    LLVMValueRef goes_first = LLVMBuildSelect(b, left, lt, LLVMBuildNot(b, lt, ""), "");
    LLVMValueRef ahead = cx_bsearch_end(cg, &t, goes_first); /* ends the loop: the adds follow it */
    pos = LLVMBuildAdd(b, LLVMBuildAdd(b, ps, own, ""), ahead, "");
  }
  LLVMValueRef to = LLVMBuildAdd(b, base, LLVMBuildMul(b, pos, c_inner, ""), "");
  for (int q = 0; q < n; q++) cx_cg_store(cg, in->ops[q]->shape.type, k.ptr[q], to, xi[q]);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, total, len, n, n);
}

cxla_status cx_emit_sort_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const cx_shape *x = &in->ops[0]->shape;
  int64_t d = in->a.dims.n == 1 ? in->a.dims.v[0] : 0;
  int64_t len = d >= 0 && d < x->rank ? x->dims[d] : 1;
  return sort_pass(cg, in, len, 0, out);
}

cxla_status cx_emit_sort_tiles(cx_cg *cg, cx_instr *in, int64_t tile, cx_kernel *out) {
  return sort_pass(cg, in, tile, 0, out);
}

cxla_status cx_emit_sort_merge(cx_cg *cg, cx_instr *in, int64_t width, cx_kernel *out) {
  return sort_pass(cg, in, 0, width, out);
}
