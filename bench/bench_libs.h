/* bench_libs.h — the peers bench_libs.c times against OpenBLAS, each behind a small C call so
 * that their headers stay in bench_libs_peers.c: BLIS's blis.h brings its own cblas.h, which
 * must not meet OpenBLAS's in one translation unit. */
#ifndef BENCH_LIBS_H
#define BENCH_LIBS_H
#include <stdint.h>

/* Row-major C (m×n, ldc) = op(A)·op(B), op(A) m×k; trans_a: A is stored k×m (and B n×k). */
typedef struct bl_gemm {
  int m, n, k, ta, tb, lda, ldb, ldc;
  const float *a, *b;
  float *c;
} bl_gemm;

/* BLIS's typed API (bli_sgemm), on BLIS's own threads (set by libs_blis_threads). */
void libs_blis_threads(int n);
void libs_blis_sgemm(const bl_gemm *g);
/* oneDNN's dnnl_sgemm (row-major), on OpenMP's threads. */
int libs_dnnl_sgemm(const bl_gemm *g);

/* libxsmm: a JIT kernel for g's shape with rows [0, rows) of C, or NULL when libxsmm makes
 * none (too big, or a transpose its JIT lacks). libs_xsmm_run runs it on rows [r0, r0 + rows). */
void *libs_xsmm_kernel(const bl_gemm *g, int rows);
void libs_xsmm_run(void *kernel, const bl_gemm *g, int r0);

/* A 2-D convolution as the training steps have them: NHWC activations, HWIO filters, 3×3
 * window, stride 1, padding 1 ("SAME"). kind 0: forward (x, w -> y), 1: the input gradient
 * (dy, w -> dx), 2: the weight gradient (x, dy -> dw). bf16: every tensor bf16, else f32. */
typedef struct libs_conv {
  int kind, bf16;
  int n, h, w, c, o; /* batch, image, input and output features */
} libs_conv;

/* A oneDNN primitive for the convolution with plain NHWC / HWIO memory at the given pointers
 * (the filter reordered from HWIO to oneDNN's preferred format inside each call when that
 * differs: the cost a framework with HWIO filters pays). NULL and a message on failure. */
typedef struct libs_dnnl_conv libs_dnnl_conv;
libs_dnnl_conv *libs_dnnl_conv_make(const libs_conv *cv, const void *in0, const void *in1, void *out, char *why,
                                    int why_len);
void libs_dnnl_conv_run(libs_dnnl_conv *p);
const char *libs_dnnl_conv_impl(const libs_dnnl_conv *p);
void libs_dnnl_conv_free(libs_dnnl_conv *p);
const char *libs_dnnl_version(void);

#endif
