/* sequencer_linalg.c — cholesky, triangular-solve and the LAPACK custom-calls in the schedule:
 * one cx_rt_linalg call each (rt/lapack.c), its descriptor a constant the JIT code passes.
 * LAPACK has f32, f64, c64 and c128 (the ops' f16 and bf16 are computed in f32); a custom-call
 * kind without a routine here runs on the interpreter (a counted fallback). */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/sequencer_int.h"
#include "ir/custom_call.h"

/* The batch of matrices in the two minor dims of s: count. */
static int64_t batch_of(const cx_shape *s) {
  int64_t b = 1;
  for (int d = 0; d + 2 < s->rank; d++) b *= s->dims[d];
  return b;
}

/* Emits cx_rt_linalg(rt, &desc, {result leaves, operand leaves}, id). */
static cxla_status call(cx_seq *s, cx_instr *in, const cx_la_desc *d, const char *what) {
  int nout = s->bufs->nleaves[in->id], n = nout;
  for (int j = 0; j < in->nops; j++) n += s->bufs->nleaves[in->ops[j]->id];
  int *slots = cx_malloc(sizeof *slots * (size_t)(n ? n : 1));
  if (!slots) return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  int k = 0;
  for (int l = 0; l < nout; l++) slots[k++] = cx_seq_leaf_slot(s, in, l);
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < s->bufs->nleaves[in->ops[j]->id]; l++) slots[k++] = cx_seq_leaf_slot(s, in->ops[j], l);
  for (int i = 0; i < n; i++)
    if (slots[i] < 0) {
      cx_free(slots);
      return s->g->status;
    }
  char name[256];
  snprintf(name, sizeof name, "%s [%s %lldx%lld%s]", in->name ? in->name : what, what, (long long)d->m, (long long)d->n,
           d->batch > 1 ? " batched" : "");
  int32_t id = cx_seq_name(s, name);
  LLVMValueRef args = id < 0 ? NULL : cx_seq_args(s, slots, n);
  cx_free(slots);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  enum { NF = sizeof(cx_la_desc) / sizeof(int64_t) };
  LLVMValueRef v[NF];
  const int64_t *f = (const int64_t *)d;
  for (int i = 0; i < NF; i++) v[i] = cx_cg_i64(g, f[i]);
  LLVMValueRef gv = LLVMAddGlobal(g->mod, LLVMArrayType(g->t_i64, NF), "la_desc");
  LLVMSetInitializer(gv, LLVMConstArray(g->t_i64, v, NF));
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMPrivateLinkage);
  LLVMTypeRef ps[4] = {g->t_ptr, g->t_ptr, g->t_ptr, g->t_i32};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 4, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, "cx_rt_linalg");
  if (!fn) fn = LLVMAddFunction(g->mod, "cx_rt_linalg", ft);
  LLVMValueRef a[4] = {s->rt, gv, args, LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, fn, a, 4, "");
  return s->g->status;
}

_Static_assert(sizeof(cx_la_desc) == 14 * sizeof(int64_t), "the JIT passes the descriptor as [14 x i64]");

static int lapack_type(cxla_type t) { return t == CXLA_F32 || t == CXLA_F64 || t == CXLA_C64 || t == CXLA_C128; }
/* the ops' 16-bit floats run in f32 (rt/lapack.c widens them) */
static int op_type(cxla_type t) { return lapack_type(t) || t == CXLA_F16 || t == CXLA_BF16; }

cxla_status cx_seq_cholesky(cx_seq *s, cx_instr *in) {
  const cx_shape *a = &in->ops[0]->shape;
  if (!op_type(a->type)) return cx_seq_fallback(s, in, "LAPACK factors floats and complex numbers only");
  int64_t n = a->dims[a->rank - 1];
  cx_la_desc d = {.routine = CX_LA_CHOLESKY, .type = a->type, .batch = batch_of(a), .m = n, .n = n, .k = n,
                  .lower = in->a.lower != 0};
  return call(s, in, &d, "cholesky");
}

cxla_status cx_seq_triangular_solve(cx_seq *s, cx_instr *in) {
  const cx_shape *a = &in->ops[0]->shape, *b = &in->ops[1]->shape;
  if (!op_type(a->type)) return cx_seq_fallback(s, in, "BLAS solves floats and complex numbers only");
  int t = in->a.transpose_a;
  cx_la_desc d = {.routine = CX_LA_TRSM, .type = a->type, .batch = batch_of(b), .m = b->dims[b->rank - 2],
                  .n = b->dims[b->rank - 1], .k = a->dims[a->rank - 1], .lower = in->a.lower != 0,
                  .left = in->a.left_side != 0, .trans = t == CX_TRANSPOSE_ADJOINT ? 2 : t == CX_TRANSPOSE_YES,
                  .unit = in->a.unit_diagonal != 0};
  return call(s, in, &d, "trsm");
}

/* ---- custom-calls: a hook per kind of target ---- */

static cxla_status lapack(cx_seq *s, cx_instr *in, cx_la_routine r) {
  cx_lapack_call c;
  if (!cx_lapack_call_of(in, &c)) return cx_seq_fallback(s, in, "not a LAPACK call cxla knows");
  if (!lapack_type(c.type)) return cx_seq_fallback(s, in, "LAPACK routine of a type the cpu backend does not call");
  cx_la_desc d = {.routine = r, .type = c.type, .batch = c.batch, .m = c.m, .n = c.n, .k = c.k, .lower = c.lower,
                  .left = c.left, .trans = c.trans, .unit = c.unit_diag, .mode = c.mode,
                  .mode_left = c.mode_left};
  if (r == CX_LA_GESDD || r == CX_LA_GESVD) {
    const cx_shape *u = &in->shape.tuple[2], *vt = &in->shape.tuple[3];
    d.ucols = u->dims[u->rank - 1];
    d.vrows = vt->dims[vt->rank - 2];
  }
  if (r == CX_LA_ORMQR) d.ucols = c.acols;
  if (r == CX_LA_GEHRD) d.ucols = c.ilo, d.vrows = c.ihi;
  return call(s, in, &d, in->a.custom_call_target);
}

/* rt/topk.c's routine for XLA:CPU's "TopK". */
static cxla_status topk(cx_seq *s, cx_instr *in, cx_la_routine r) {
  (void)r;
  return cx_seq_topk_custom_call(s, in);
}

/* A sharding or memory-space mark the pipeline did not remove (--disable-pass): a copy; one
 * of several operands (a tuple of them) runs on the interpreter. */
static cxla_status annotation(cx_seq *s, cx_instr *in, cx_la_routine r) {
  (void)r;
  if (in->nops != 1) return cx_seq_fallback(s, in, "an annotation of several operands");
  return cx_seq_copy_leaves(s, in, in->ops[0], "copy");
}

typedef cxla_status (*cc_hook)(cx_seq *s, cx_instr *in, cx_la_routine r);
static const struct {
  cc_hook hook;
  cx_la_routine routine;
} k_kinds[CX_CC_KIND_COUNT] = {
    [CX_CC_POTRF] = {lapack, CX_LA_POTRF}, [CX_CC_TRSM] = {lapack, CX_LA_TRSM},   [CX_CC_GETRF] = {lapack, CX_LA_GETRF},
    [CX_CC_GEQRF] = {lapack, CX_LA_GEQRF}, [CX_CC_ORGQR] = {lapack, CX_LA_ORGQR}, [CX_CC_SYEVD] = {lapack, CX_LA_SYEVD},
    [CX_CC_GESDD] = {lapack, CX_LA_GESDD}, [CX_CC_GESVD] = {lapack, CX_LA_GESVD}, [CX_CC_GEEV] = {lapack, CX_LA_GEEV},
    [CX_CC_TOPK] = {topk, 0},               [CX_CC_ANNOTATION] = {annotation, 0},
    [CX_CC_GTSV] = {lapack, CX_LA_GTSV},    [CX_CC_ORMQR] = {lapack, CX_LA_ORMQR}, [CX_CC_GEQP3] = {lapack, CX_LA_GEQP3},
    [CX_CC_GEHRD] = {lapack, CX_LA_GEHRD}, [CX_CC_SYTRD] = {lapack, CX_LA_SYTRD}, [CX_CC_GEES] = {lapack, CX_LA_GEES},
    [CX_CC_GTSV_PERTURBED] = {lapack, CX_LA_GTSV_PERTURBED},
};

cxla_status cx_seq_custom_call(cx_seq *s, cx_instr *in) {
  int t = cx_cc_target_of(in);
  cx_cc_kind k = t < 0 ? CX_CC_KIND_COUNT : cx_cc_info_of((cx_cc_target)t)->kind;
  if (k == CX_CC_KIND_COUNT || !k_kinds[k].hook) return cx_seq_fallback(s, in, "custom-call target without a cpu routine");
  return k_kinds[k].hook(s, in, k_kinds[k].routine);
}
