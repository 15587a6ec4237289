/* scatter_emit.c — scatter as one kernel over the update elements (see cg.h). The result
 * starts as a copy of the operands (the caller's copy, before the kernel); each update element
 * finds its operand element as the interpreter's scatter does (interp/scatter.c: scatter dims
 * index the indices, the index vector sets the window start of scatter_dims_to_operand_dims,
 * batching dims start at their scatter coordinate, a window partly outside the operand is
 * skipped whole) and combines into it:
 *   ATOMIC   one operand whose combiner is add (any integer, f32/f64, c64/c128: an atomic
 *            add on each part) or max/min on integers: a thread per update element, an
 *            atomic read-modify-write;
 *   PARALLEL unique_indices=true: a thread per update element, load, combine, store;
 *   SERIAL   otherwise: one thread applies every update in the interpreter's order (scatter
 *            index major, window minor), so duplicates combine as they do there.
 * The combiner is inlined (cx_gen_scalar_comp). */
#include <string.h>
#include "codegen/emit.h"
#include "codegen/loops.h"

enum { MAX_OPS = 8 };

typedef struct plan {
  int n, orank, nsd, nwd;
  int64_t nidx, ivec_stride, nscatter, nwin;
  int64_t sdims[CXLA_MAX_RANK], wdims[CXLA_MAX_RANK], idx_stride[CXLA_MAX_RANK];
  int64_t upd_sstride[CXLA_MAX_RANK], upd_wstride[CXLA_MAX_RANK], op_wstride[CXLA_MAX_RANK];
  int64_t start_map[CXLA_MAX_RANK], wsize[CXLA_MAX_RANK], ostride[CXLA_MAX_RANK];
  int batching_from[CXLA_MAX_RANK];
  LLVMAtomicRMWBinOp atomic; /* ATOMIC: the operation; otherwise LLVMAtomicRMWBinOpXchg unused */
  enum { ATOMIC, PARALLEL, SERIAL } mode;
} plan;

/* the atomic read-modify-write the combiner is, or 0 */
static int atomic_of(const cx_instr *in, LLVMAtomicRMWBinOp *op) {
  const cx_comp *c = in->ncalled == 1 ? in->called[0] : NULL;
  const cx_instr *r = c ? c->root : NULL;
  cxla_type t = in->ops[0]->shape.type;
  if (!r || r->nops != 2 || r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER ||
      r->ops[0]->a.index + r->ops[1]->a.index != 1 || in->ops[2]->shape.type != t)
    return 0;
  int fl = t == CXLA_F32 || t == CXLA_F64 || t == CXLA_C64 || t == CXLA_C128, sint = t == CXLA_S32 || t == CXLA_S64, uint = t == CXLA_U32 || t == CXLA_U64;
  if (r->op == CX_OP_ADD && (fl || sint || uint)) return *op = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, 1;
  if (r->op == CX_OP_MAXIMUM && (sint || uint)) return *op = sint ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax, 1;
  if (r->op == CX_OP_MINIMUM && (sint || uint)) return *op = sint ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin, 1;
  return 0;
}

/* The plan from the shapes (the verifier checked the dimension numbers). */
static int make_plan(const cx_instr *in, plan *p, const char **why) {
  memset(p, 0, sizeof *p);
  if (in->op != CX_OP_SCATTER || in->nops < 3 || in->nops % 2 == 0 || in->nops / 2 > MAX_OPS || in->ncalled != 1)
    return *why = "a scatter of more than 8 operands", 0;
  p->n = in->nops / 2;
  const cx_scatter_dims *sd = &in->a.scatter;
  const cx_shape *os = &in->ops[0]->shape, *is = &in->ops[p->n]->shape, *us = &in->ops[p->n + 1]->shape;
  for (int k = 0; k < in->nops; k++)
    if (!cx_type_is_array(in->ops[k]->shape.type)) return *why = "a scatter of non-array values", 0;
  int64_t ivd = sd->index_vector_dim;
  p->orank = os->rank;
  p->nidx = ivd < is->rank ? is->dims[ivd] : 1;
  int64_t ist[CXLA_MAX_RANK], ust[CXLA_MAX_RANK];
  cx_shape_strides(is, ist);
  cx_shape_strides(us, ust);
  cx_shape_strides(os, p->ostride);
  p->ivec_stride = ivd < is->rank ? ist[ivd] : 0;
  for (int k = 0; k < sd->scatter_dims_to_operand_dims.n && k < CXLA_MAX_RANK; k++)
    p->start_map[k] = sd->scatter_dims_to_operand_dims.v[k];
  int j = 0, w = 0, od = 0;
  for (int d = 0; d < os->rank; d++) p->wsize[d] = 1, p->batching_from[d] = -1;
  for (int u = 0; u < us->rank; u++) {
    if (cx_ints_has(&sd->update_window_dims, u)) {
      while (od < os->rank && (cx_ints_has(&sd->inserted_window_dims, od) || cx_ints_has(&sd->input_batching_dims, od))) od++;
      if (od >= os->rank) return *why = "update window dims that do not fit the operand", 0;
      p->wdims[w] = us->dims[u], p->upd_wstride[w] = ust[u], p->op_wstride[w] = p->ostride[od];
      p->wsize[od] = us->dims[u];
      w++, od++;
    } else {
      int idim = j < ivd ? j : j + 1;
      p->sdims[j] = us->dims[u], p->upd_sstride[j] = ust[u], p->idx_stride[j] = ist[idim];
      j++;
    }
  }
  p->nsd = j, p->nwd = w;
  for (int i = 0; i < sd->input_batching_dims.n; i++) {
    int64_t sdim = sd->scatter_indices_batching_dims.v[i];
    p->batching_from[sd->input_batching_dims.v[i]] = (int)(sdim < ivd ? sdim : sdim - 1);
  }
  p->nscatter = p->nwin = 1;
  for (int q = 0; q < p->nsd; q++) p->nscatter *= p->sdims[q];
  for (int q = 0; q < p->nwd; q++) p->nwin *= p->wdims[q];
  p->mode = p->n == 1 && atomic_of(in, &p->atomic) ? ATOMIC : sd->unique_indices ? PARALLEL : SERIAL;
  return cx_emit_scalar_comp_ok(in->called[0], why);
}

int cx_emit_scatter_ok(const cx_instr *in, const char **why) {
  plan p;
  return make_plan(in, &p, why);
}

/* digits of v in a row-major space of dims (constants), into out */
static void split(cx_cg *cg, LLVMValueRef v, int rank, const int64_t *dims, LLVMValueRef *out) {
  for (int d = rank - 1; d >= 0; d--) {
    LLVMValueRef n = cx_cg_i64(cg, dims[d]);
    out[d] = LLVMBuildURem(cg->b, v, n, "");
    v = LLVMBuildUDiv(cg->b, v, n, "");
  }
}

/* update e (scatter index major, window minor): its combine, skipped when its window leaves
 * the operand */
static void one_update(cx_kfn *k, const cx_instr *in, const plan *p, LLVMValueRef e) {
  cx_cg *cg = k->cg;
  LLVMBuilderRef b = cg->b;
  int n = p->n;
  LLVMValueRef sidx[CXLA_MAX_RANK], widx[CXLA_MAX_RANK], start[CXLA_MAX_RANK];
  LLVMValueRef c_win = cx_cg_i64(cg, p->nwin);
  split(cg, LLVMBuildUDiv(b, e, c_win, ""), p->nsd, p->sdims, sidx);
  split(cg, LLVMBuildURem(b, e, c_win, ""), p->nwd, p->wdims, widx);
  LLVMValueRef ibase = cx_cg_i64(cg, 0), uo = cx_cg_i64(cg, 0), oo = cx_cg_i64(cg, 0), skip = LLVMConstInt(cg->t_i1, 0, 0);
  for (int j = 0; j < p->nsd; j++) {
    ibase = LLVMBuildAdd(b, ibase, LLVMBuildMul(b, sidx[j], cx_cg_i64(cg, p->idx_stride[j]), ""), "");
    uo = LLVMBuildAdd(b, uo, LLVMBuildMul(b, sidx[j], cx_cg_i64(cg, p->upd_sstride[j]), ""), "");
  }
  for (int d = 0; d < p->orank; d++) start[d] = cx_cg_i64(cg, 0);
  cxla_type it = in->ops[n]->shape.type;
  for (int64_t q = 0; q < p->nidx; q++) {
    LLVMValueRef at = LLVMBuildAdd(b, ibase, cx_cg_i64(cg, q * p->ivec_stride), "");
    start[p->start_map[q]] = cx_ir_index_i64(&k->g, it, cx_cg_load(cg, it, k->ptr[2 * n], at));
  }
  for (int d = 0; d < p->orank; d++) {
    if (p->batching_from[d] >= 0) start[d] = sidx[p->batching_from[d]];
    LLVMValueRef lo = LLVMBuildICmp(b, LLVMIntSLT, start[d], cx_cg_i64(cg, 0), "");
    LLVMValueRef hi = LLVMBuildICmp(b, LLVMIntSGT, start[d], cx_cg_i64(cg, in->ops[0]->shape.dims[d] - p->wsize[d]), "");
    skip = LLVMBuildOr(b, skip, LLVMBuildOr(b, lo, hi, ""), "");
    oo = LLVMBuildAdd(b, oo, LLVMBuildMul(b, start[d], cx_cg_i64(cg, p->ostride[d]), ""), "");
  }
  for (int j = 0; j < p->nwd; j++) {
    oo = LLVMBuildAdd(b, oo, LLVMBuildMul(b, widx[j], cx_cg_i64(cg, p->op_wstride[j]), ""), "");
    uo = LLVMBuildAdd(b, uo, LLVMBuildMul(b, widx[j], cx_cg_i64(cg, p->upd_wstride[j]), ""), "");
  }
  cx_if fits;
  cx_if_begin(cg, &fits, LLVMBuildNot(b, skip, ""));
  if (p->mode == ATOMIC && cx_type_is_complex(in->ops[0]->shape.type)) { /* a complex sum: part by part */
    cxla_type t = in->ops[0]->shape.type;
    LLVMTypeRef pt = t == CXLA_C64 ? cg->t_f32 : cg->t_f64;
    LLVMValueRef u = cx_cg_load(cg, t, k->ptr[2 * n + 1], uo);
    for (unsigned part = 0; part < 2; part++) {
      LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, oo, cx_cg_i64(cg, 2), ""), cx_cg_i64(cg, part), "");
      LLVMValueRef ptr = LLVMBuildGEP2(b, pt, k->ptr[0], &at, 1, "");
      LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpFAdd, ptr, LLVMBuildExtractValue(b, u, part, ""), LLVMAtomicOrderingMonotonic, 0);
    }
  } else if (p->mode == ATOMIC) {
    cxla_type t = in->ops[0]->shape.type;
    LLVMTypeRef mt = cx_cg_mem_type(cg, t);
    LLVMValueRef ptr = LLVMBuildGEP2(b, mt, k->ptr[0], &oo, 1, "");
    LLVMValueRef u = cx_cg_to_mem(cg, t, cx_cg_load(cg, t, k->ptr[2 * n + 1], uo));
    LLVMBuildAtomicRMW(b, p->atomic, ptr, u, LLVMAtomicOrderingMonotonic, 0);
  } else {
    LLVMValueRef args[2 * MAX_OPS], res[MAX_OPS];
    for (int q = 0; q < n; q++) {
      args[q] = cx_cg_load(cg, in->ops[q]->shape.type, k->ptr[q], oo);
      args[n + q] = cx_cg_load(cg, in->ops[n + 1 + q]->shape.type, k->ptr[2 * n + 1 + q], uo);
    }
    int got = cx_gen_scalar_comp(&k->g, in->called[0], 2 * n, args, res);
    if (got != n && cg->status == CXLA_OK)
      cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: the combiner gives %d values for %d operands", in->name, got, n);
    for (int q = 0; q < n && cg->status == CXLA_OK; q++) cx_cg_store(cg, in->ops[q]->shape.type, k->ptr[q], oo, res[q]);
  }
  cx_if_end(cg, &fits);
}

cxla_status cx_emit_scatter_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const char *why = NULL;
  plan p;
  if (!make_plan(in, &p, &why)) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why);
  int n = p.n;
  int64_t updates = p.nscatter * p.nwin;
  cx_kfn k;
  /* args: the n results, then the operands (not read: the results start as their copies), the
   * indices and the n updates */
  CX_TRY(cx_kfn_begin(&k, cg, in, n + in->nops, 0, 0));
  cx_loop e;
  if (p.mode == SERIAL) {
    cx_loop_begin(cg, &e, k.begin, k.end, "one");
    cx_loop u;
    cx_loop_begin(cg, &u, cx_cg_i64(cg, 0), cx_cg_i64(cg, updates), "update");
    one_update(&k, in, &p, u.iv);
    cx_loop_end(cg, &u);
    cx_loop_end(cg, &e);
  } else {
    cx_loop_begin(cg, &e, k.begin, k.end, "update");
    one_update(&k, in, &p, e.iv);
    cx_loop_end(cg, &e);
  }
  return cx_kfn_end(&k, out, p.mode == SERIAL ? 1 : updates, 1, n, in->nops);
}
