/* bench_libs_peers.c — BLIS, libxsmm and oneDNN behind the calls of bench_libs.h (Debian 12's
 * libblis-dev, libxsmm-dev, libdnnl-dev). Built with BLIS's include folder first, so its blis.h
 * finds its own cblas.h; nothing here includes OpenBLAS's. */
#include <blis.h>
#include <libxsmm.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_libs.h"

/* ---- BLIS ---- */

void libs_blis_threads(int n) { bli_thread_set_num_threads(n); }

void libs_blis_sgemm(const bl_gemm *g) {
  float one = 1.0f, zero = 0.0f;
  /* Row-major is BLIS's row stride ld and column stride 1; a transposed operand is the same
   * storage with trans_t set. */
  bli_sgemm(g->ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, g->tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, g->m, g->n, g->k,
            &one, (float *)g->a, g->lda, 1, (float *)g->b, g->ldb, 1, &zero, g->c, g->ldc, 1);
}

/* ---- oneDNN sgemm ---- */

int libs_dnnl_sgemm(const bl_gemm *g) {
  return dnnl_sgemm(g->ta ? 'T' : 'N', g->tb ? 'T' : 'N', g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f,
                    g->c, g->ldc) == dnnl_success;
}

/* ---- libxsmm ---- */

/* libxsmm is column-major: the row-major C = op(A)·op(B) is the column-major
 * C^T = op(B)^T·op(A)^T, so B goes first, and a row-major transpose flag becomes the other
 * operand's. */
void *libs_xsmm_kernel(const bl_gemm *g, int rows) {
  static int inited;
  if (!inited) libxsmm_init(), inited = 1;
  libxsmm_blasint lda = g->ldb, ldb = g->lda, ldc = g->ldc;
  float alpha = 1.0f, beta = 0.0f;
  int flags = (g->tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (g->ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  int prefetch = LIBXSMM_PREFETCH_NONE;
  libxsmm_smmfunction f = libxsmm_smmdispatch(g->n, rows, g->k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  return f ? (void *)f : NULL;
}

void libs_xsmm_run(void *kernel, const bl_gemm *g, int r0) {
  libxsmm_smmfunction f = (libxsmm_smmfunction)kernel;
  /* Rows r0.. of C: rows of A (A stored m×k), or its columns (stored k×m, trans_a). */
  const float *a = g->ta ? g->a + r0 : g->a + (int64_t)r0 * g->lda;
  f(g->b, a, g->c + (int64_t)r0 * g->ldc);
}

/* ---- oneDNN convolution ---- */

struct libs_dnnl_conv {
  dnnl_engine_t eng;
  dnnl_stream_t st;
  dnnl_primitive_t conv, reorder; /* reorder: HWIO filter to the primitive's (NULL: same) */
  dnnl_memory_t m_in0, m_in1, m_out, m_wt; /* m_wt: the reordered filter, or NULL */
  int kind;
  const char *impl;
};

const char *libs_dnnl_version(void) {
  static char buf[64];
  const dnnl_version_t *v = dnnl_version();
  snprintf(buf, sizeof buf, "%d.%d.%d (%s)", v->major, v->minor, v->patch, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other runtime");
  return buf;
}

void libs_dnnl_conv_free(libs_dnnl_conv *p) {
  if (!p) return;
  if (p->conv) dnnl_primitive_destroy(p->conv);
  if (p->reorder) dnnl_primitive_destroy(p->reorder);
  dnnl_memory_t ms[4] = {p->m_in0, p->m_in1, p->m_out, p->m_wt};
  for (int i = 0; i < 4; i++)
    if (ms[i]) dnnl_memory_destroy(ms[i]);
  if (p->st) dnnl_stream_destroy(p->st);
  if (p->eng) dnnl_engine_destroy(p->eng);
  free(p);
}

#define DN(call, what)                                           \
  do {                                                           \
    dnnl_status_t s_ = (call);                                   \
    if (s_ != dnnl_success) {                                    \
      snprintf(why, (size_t)why_len, "%s: oneDNN status %d", what, (int)s_); \
      goto fail;                                                 \
    }                                                            \
  } while (0)

libs_dnnl_conv *libs_dnnl_conv_make(const libs_conv *cv, const void *in0, const void *in1, void *out, char *why,
                                    int why_len) {
  libs_dnnl_conv *p = calloc(1, sizeof *p);
  dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL, rpd = NULL;
  if (!p) {
    snprintf(why, (size_t)why_len, "out of memory");
    return NULL;
  }
  p->kind = cv->kind;
  dnnl_data_type_t dt = cv->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_dims_t xd = {cv->n, cv->c, cv->h, cv->w}, yd = {cv->n, cv->o, cv->h, cv->w}, wd = {cv->o, cv->c, 3, 3};
  dnnl_dims_t strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t x_md, y_md, w_user, w_any;
  DN(dnnl_engine_create(&p->eng, dnnl_cpu, 0), "engine");
  DN(dnnl_stream_create(&p->st, p->eng, dnnl_stream_default_flags), "stream");
  DN(dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dt, dnnl_nhwc), "md");
  DN(dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dt, dnnl_nhwc), "md");
  DN(dnnl_memory_desc_init_by_tag(&w_user, 4, wd, dt, dnnl_hwio), "md");
  DN(dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dt, dnnl_format_tag_any), "md");
  dnnl_convolution_desc_t fd, bd;
  DN(dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &x_md, &w_any, NULL,
                                        &y_md, strides, pad, pad),
     "forward desc");
  DN(dnnl_primitive_desc_create(&fwd_pd, &fd, NULL, p->eng, NULL), "forward pd");
  if (cv->kind == 0) {
    pd = fwd_pd, fwd_pd = NULL;
  } else if (cv->kind == 1) {
    DN(dnnl_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &x_md, &w_any, &y_md, strides, pad, pad),
       "backward-data desc");
    DN(dnnl_primitive_desc_create(&pd, &bd, NULL, p->eng, fwd_pd), "backward-data pd");
  } else {
    DN(dnnl_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &x_md, &w_any, NULL, &y_md, strides,
                                                   pad, pad),
       "backward-weights desc");
    DN(dnnl_primitive_desc_create(&pd, &bd, NULL, p->eng, fwd_pd), "backward-weights pd");
  }
  DN(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &p->impl), "impl");
  const dnnl_memory_desc_t *w_prim =
      dnnl_primitive_desc_query_md(pd, cv->kind == 2 ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
  int same = dnnl_memory_desc_equal(w_prim, &w_user);
  /* The user's memory: in0/in1/out as bench_libs.c hands them over. */
  const dnnl_memory_desc_t *md0 = cv->kind == 1 ? &y_md : &x_md, *md1 = cv->kind == 2 ? &y_md : &w_user,
                           *mdo = cv->kind == 0 ? &y_md : cv->kind == 1 ? &x_md : &w_user;
  DN(dnnl_memory_create(&p->m_in0, md0, p->eng, (void *)in0), "memory");
  DN(dnnl_memory_create(&p->m_in1, md1, p->eng, (void *)in1), "memory");
  DN(dnnl_memory_create(&p->m_out, mdo, p->eng, out), "memory");
  if (!same) {
    DN(dnnl_memory_create(&p->m_wt, w_prim, p->eng, DNNL_MEMORY_ALLOCATE), "memory");
    if (cv->kind == 2) DN(dnnl_reorder_primitive_desc_create(&rpd, w_prim, p->eng, &w_user, p->eng, NULL), "reorder pd");
    else DN(dnnl_reorder_primitive_desc_create(&rpd, &w_user, p->eng, w_prim, p->eng, NULL), "reorder pd");
    DN(dnnl_primitive_create(&p->reorder, rpd), "reorder");
  }
  DN(dnnl_primitive_create(&p->conv, pd), "convolution");
  dnnl_primitive_desc_destroy(pd);
  if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  return p;
fail:
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  libs_dnnl_conv_free(p);
  return NULL;
}

const char *libs_dnnl_conv_impl(const libs_dnnl_conv *p) { return p->impl; }

void libs_dnnl_conv_run(libs_dnnl_conv *p) {
  dnnl_memory_t w = p->m_wt ? p->m_wt : p->kind == 2 ? p->m_out : p->m_in1;
  if (p->reorder && p->kind != 2) {
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, p->m_in1}, {DNNL_ARG_TO, p->m_wt}};
    dnnl_primitive_execute(p->reorder, p->st, 2, ra);
  }
  dnnl_exec_arg_t a[3];
  if (p->kind == 0) {
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, p->m_in0};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, p->m_out};
  } else if (p->kind == 1) {
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, p->m_in0};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, w};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, p->m_out};
  } else {
    a[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, p->m_in0};
    a[1] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, p->m_in1};
    a[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_WEIGHTS, w};
  }
  dnnl_primitive_execute(p->conv, p->st, 3, a);
  if (p->reorder && p->kind == 2) {
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, p->m_wt}, {DNNL_ARG_TO, p->m_out}};
    dnnl_primitive_execute(p->reorder, p->st, 2, ra);
  }
  dnnl_stream_wait(p->st);
}
