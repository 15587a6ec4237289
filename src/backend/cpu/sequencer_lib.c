/* sequencer_lib.c — library calls in the schedule: dot as batched GEMM (cx_rt_gemm with the
 * plan from passes/dot_lowering.c; cx_rt_gemm_dnnl, or cx_rt_gemm_batch2_dnnl, for the class
 * where oneDNN's sgemm is the faster, unless --cpu-onednn=off), and convolutions of up to two spatial dimensions as library
 * calls when they are big enough for that to beat a direct loop nest: through oneDNN
 * (cx_rt_conv_dnnl: f32 and bf16, unless --cpu-onednn=off) where it applies, else f32/f64 as
 * im2col + GEMM (cx_rt_conv_im2col). The choice is made here, at compile time. */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/sequencer_int.h"

const cx_gemm_target cx_cpu_gemm = {.half = 0, .batch2 = 1, .strided_c = 1};

static int dnnl_takes(const cx_gemm_plan *p) {
  return cx_rt_gemm_dnnl_suits(p->type, p->trans_a, p->trans_b, p->m, p->n, p->k, p->batch);
}

/* With oneDNN, the heads of attention's q·kᵀ are read in place: its NT products were as fast as
 * OpenBLAS's NN ones without the copy of k (the transformer step on one thread: 330 + 74 us for
 * the copy and OpenBLAS's product, 382 us for oneDNN's in place; docs/design/cpu-backend.md). */
static const cx_gemm_target cpu_gemm_onednn = {.half = 0, .batch2 = 1, .strided_c = 1, .batch2_bt = dnnl_takes};

const cx_gemm_target *cx_cpu_gemm_target(int onednn) { return onednn ? &cpu_gemm_onednn : &cx_cpu_gemm; }

/* The GEMM of dot d whose operands and result are those of instruction `in` (d itself, or a
 * kOutput fusion whose parameters d reads); cst: the result's strides, NULL for row-major. */
static int seq_gemm(cx_seq *s, const cx_instr *in, const cx_instr *d, const int64_t *cst, const char **why) {
  cx_gemm_plan p;
  const cx_gemm_target *t = cx_cpu_gemm_target(s->onednn);
  if (!(cst ? cx_dot_plan_out(d, cst, t, &p, why) : cx_dot_plan(d, t, &p, why))) return 0;
  const cx_instr *lhs = d->ops[0], *rhs = d->ops[1];
  if (in != d) lhs = in->ops[lhs->a.index], rhs = in->ops[rhs->a.index];
  if (p.swap_ab) { const cx_instr *x = lhs; lhs = rhs, rhs = x; }
  int a = cx_seq_leaf_slot(s, lhs, 0), b = cx_seq_leaf_slot(s, rhs, 0), c = cx_seq_leaf_slot(s, in, 0);
  if (a < 0 || b < 0 || c < 0) return 1; /* error recorded */
  /* The library for this shape class, chosen now (rt/gemm_dnnl.c says which won where). */
  int dnnl = s->onednn && cx_rt_gemm_dnnl_suits(p.type, p.trans_a, p.trans_b, p.m, p.n, p.k, p.batch);
  if (dnnl) cx_rt_gemm_dnnl_warm(); /* its set-up runs while the compile goes on */
  char name[256];
  snprintf(name, sizeof name, "%s [gemm %lldx%lldx%lld%s%s%s]", in->name ? in->name : "dot", (long long)p.m,
           (long long)p.n, (long long)p.k, p.batch > 1 ? " batched" : "", cst ? " strided C" : "",
           dnnl ? " oneDNN" : "");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return 1;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  LLVMValueRef I32[3] = {LLVMConstInt(g->t_i32, (unsigned long long)p.type, 0), LLVMConstInt(g->t_i32, (unsigned long long)p.trans_a, 0),
                         LLVMConstInt(g->t_i32, (unsigned long long)p.trans_b, 0)};
  LLVMValueRef args[18] = {s->rt, I32[0], I32[1], I32[2], cx_cg_i64(g, p.m), cx_cg_i64(g, p.n), cx_cg_i64(g, p.k),
                           cx_seq_slot(s, a), cx_cg_i64(g, p.lda), cx_cg_i64(g, p.stride_a),
                           cx_seq_slot(s, b), cx_cg_i64(g, p.ldb), cx_cg_i64(g, p.stride_b),
                           cx_seq_slot(s, c), cx_cg_i64(g, p.ldc), cx_cg_i64(g, p.stride_c),
                           cx_cg_i64(g, p.batch), LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
  if (p.batch_inner > 1) { /* two batch levels */
    LLVMValueRef args2[22] = {s->rt, I32[0], I32[1], I32[2], cx_cg_i64(g, p.m), cx_cg_i64(g, p.n), cx_cg_i64(g, p.k),
                              cx_seq_slot(s, a), cx_cg_i64(g, p.lda), cx_cg_i64(g, p.stride_a), cx_cg_i64(g, p.stride_a2),
                              cx_seq_slot(s, b), cx_cg_i64(g, p.ldb), cx_cg_i64(g, p.stride_b), cx_cg_i64(g, p.stride_b2),
                              cx_seq_slot(s, c), cx_cg_i64(g, p.ldc), cx_cg_i64(g, p.stride_c), cx_cg_i64(g, p.stride_c2),
                              cx_cg_i64(g, p.batch), cx_cg_i64(g, p.batch_inner),
                              LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
    LLVMBuildCall2(s->b, s->t_gemm2, dnnl ? s->f_gemm2_dnnl : s->f_gemm2, args2, 22, "");
  } else {
    LLVMBuildCall2(s->b, s->t_gemm, dnnl ? s->f_gemm_dnnl : s->f_gemm, args, 18, "");
  }
  s->out->ngemms++;
  s->out->ngemms_onednn += dnnl;
  s->out->library_macs += p.m * p.n * p.k * p.batch;
  return 1;
}

int cx_seq_dot(cx_seq *s, const cx_instr *in, const char **why) { return seq_gemm(s, in, in, NULL, why); }

int cx_seq_dot_out(cx_seq *s, const cx_instr *fusion, const char **why) {
  int64_t cst[CXLA_MAX_RANK];
  const cx_instr *d = cx_dot_out_fusion(fusion, cst);
  if (!d) return *why = "not a dot with a strided result", 0;
  return seq_gemm(s, fusion, d, cst, why);
}

/* Below this many multiply-adds the emitter's direct loop nest is as good (no patch matrix,
 * no filter repacking); it is also the only way when im2col does not apply. */
#define IM2COL_MIN_MACS 65536

/* Fills the runtime's descriptor; 0 (and why) when im2col does not apply. */
static int conv_desc(const cx_instr *conv, cx_conv2d_desc *d, int64_t *macs, const char **why) {
  const cx_shape *is = &conv->ops[0]->shape, *ks = &conv->ops[1]->shape, *os = &conv->shape;
  const cx_attrs *a = &conv->a;
  const cx_conv_dims *cd = a->conv;
  if ((os->type != CXLA_F32 && os->type != CXLA_F64 && os->type != CXLA_BF16) || is->type != os->type ||
      ks->type != os->type) {
    *why = "library convolutions are f32, f64 (im2col) and bf16 (oneDNN) only";
    return 0;
  }
  if (!cd || cd->nspatial > 2 || a->window.rank != cd->nspatial) { *why = "im2col takes 0-2 spatial dims"; return 0; }
  if (a->batch_group_count < 1 || a->feature_group_count < 1) { *why = "bad group counts"; return 0; }
  int64_t ist[CXLA_MAX_RANK], kst[CXLA_MAX_RANK], ost[CXLA_MAX_RANK];
  cx_shape_strides(is, ist);
  cx_shape_strides(ks, kst);
  cx_shape_strides(os, ost);
  memset(d, 0, sizeof *d);
  d->batch = is->dims[cd->in_batch];
  d->in_feat = is->dims[cd->in_feature];
  d->out_feat = os->dims[cd->out_feature];
  d->groups = a->feature_group_count;
  d->batch_groups = a->batch_group_count;
  d->in_stride[0] = ist[cd->in_batch];
  d->in_stride[1] = ist[cd->in_feature];
  d->filt_stride[0] = kst[cd->k_out];
  d->filt_stride[1] = kst[cd->k_in];
  d->out_stride[0] = ost[cd->out_batch];
  d->out_stride[1] = ost[cd->out_feature];
  /* spatial dims fill desc dims h, w from the right; a missing one is a 1-element dim */
  int64_t *in_sz[2] = {&d->in_h, &d->in_w}, *k_sz[2] = {&d->k_h, &d->k_w}, *o_sz[2] = {&d->out_h, &d->out_w};
  for (int j = 0; j < 2; j++) {
    int sp = j - (2 - cd->nspatial); /* spatial index, or < 0 for a padded dim */
    if (sp < 0) {
      *in_sz[j] = *k_sz[j] = *o_sz[j] = 1;
      d->stride[j] = d->lhs_dil[j] = d->rhs_dil[j] = 1;
      continue;
    }
    const cx_window_dim *w = &a->window.d[sp];
    *in_sz[j] = is->dims[cd->in_spatial[sp]];
    *k_sz[j] = ks->dims[cd->k_spatial[sp]];
    *o_sz[j] = os->dims[cd->out_spatial[sp]];
    d->stride[j] = w->stride > 0 ? w->stride : 1;
    d->pad_lo[j] = w->pad_lo;
    d->lhs_dil[j] = w->lhs_dilate > 0 ? w->lhs_dilate : 1;
    d->rhs_dil[j] = w->rhs_dilate > 0 ? w->rhs_dilate : 1;
    d->reverse[j] = w->reversal != 0;
    d->in_stride[2 + j] = ist[cd->in_spatial[sp]];
    d->filt_stride[2 + j] = kst[cd->k_spatial[sp]];
    d->out_stride[2 + j] = ost[cd->out_spatial[sp]];
  }
  *macs = d->batch / d->batch_groups * d->out_feat * d->out_h * d->out_w * (d->in_feat / d->groups) * d->k_h * d->k_w;
  return 1;
}

#define DESC_WORDS 33
_Static_assert(sizeof(cx_conv2d_desc) == DESC_WORDS * sizeof(int64_t), "the JIT passes the descriptor as i64s");

int cx_seq_conv(cx_seq *s, const cx_instr *fusion, const cx_instr *conv, int direct_ok, const char **why) {
  cx_conv2d_desc d;
  int64_t macs = 0;
  if (!conv_desc(conv, &d, &macs, why)) return 0;
  if (direct_ok && macs < IM2COL_MIN_MACS) { *why = "small: direct loop nest"; return 0; }
  const char *dnnl_why = "--cpu-onednn=off";
  int dnnl = s->onednn && cx_rt_conv_dnnl_applies(conv->shape.type, &d, &dnnl_why);
  if (!dnnl && conv->shape.type == CXLA_BF16) { /* im2col has no bf16 */
    *why = dnnl_why;
    return 0;
  }
  int in = cx_seq_leaf_slot(s, fusion->ops[conv->ops[0]->a.index], 0);
  int filt = cx_seq_leaf_slot(s, fusion->ops[conv->ops[1]->a.index], 0);
  int out = cx_seq_leaf_slot(s, fusion, 0);
  if (in < 0 || filt < 0 || out < 0) return 1;
  cx_cg *g = s->g;
  LLVMValueRef v[DESC_WORDS];
  const int64_t *f = (const int64_t *)&d;
  for (int i = 0; i < DESC_WORDS; i++) v[i] = cx_cg_i64(g, f[i]);
  LLVMTypeRef at = LLVMArrayType(g->t_i64, DESC_WORDS);
  LLVMValueRef gv = LLVMAddGlobal(g->mod, at, "conv_desc");
  LLVMSetInitializer(gv, LLVMConstArray(g->t_i64, v, DESC_WORDS));
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMPrivateLinkage);
  char name[256];
  snprintf(name, sizeof name, "%s [convolution %s]", fusion->name ? fusion->name : "convolution",
           dnnl ? "oneDNN" : "im2col");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return 1;
  cx_kernel_origin(fusion, &s->out->origins[id]);
  LLVMValueRef args[7] = {s->rt, LLVMConstInt(g->t_i32, (unsigned long long)conv->shape.type, 0), gv, cx_seq_slot(s, in), cx_seq_slot(s, filt),
                          cx_seq_slot(s, out), LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, s->t_conv, dnnl ? s->f_conv_dnnl : s->f_conv, args, 7, "");
  s->out->nconvs++;
  s->out->library_macs += macs;
  return 1;
}
