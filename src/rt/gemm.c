/* gemm.c — GEMM via OpenBLAS (cx_rt_gemm, rt/rt.h): batched, row-major, on f32, f64, c64 and
 * c128, every OpenBLAS call single-threaded and the work split over cxla's pool.
 *
 * OpenBLAS runs on one thread (cx_rt_pool_create, rt.c): with its own threads as well as the
 * pool's, a 2-core machine had four threads for two cores, and OpenBLAS's idle workers spin in
 * sched_yield for a long while after each GEMM (perf on the MLP training step: 45% of the
 * process's CPU time in sched_yield, while the pool's kernels waited for a core). So cxla splits
 * a product itself: batch elements across the pool, or, with fewer elements than threads, C's
 * rows (or columns, when C is wider than tall) into shares, each one single-threaded call. A
 * product too small for a hand-off to pay runs on the calling thread (cx_rt_gemm_shares).
 * Batched f32 products of oneDNN's class (gemm_dnnl.c) take the same split, each share a
 * single-threaded dnnl_sgemm (cx_rt_dnnl_sgemm_one) instead. */
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <cblas.h>
#include "core/trace.h"
#include "rt/rt.h"
#include "rt/threadpool.h"

/* Multiply-adds a pool chunk should have at least: about 4 us on one core, against the ~1 us a
 * hand-off to a spinning worker costs (it is also where OpenBLAS itself starts to thread:
 * 65536 * GEMM_MULTITHREAD_THRESHOLD, interface/gemm.c). */
#define GEMM_CHUNK_MNK 262144.0
/* Rows (or columns) of C a share has at least: a few of OpenBLAS's micro-tiles. */
#define GEMM_SHARE_MIN 16

int64_t cx_rt_gemm_shares(int64_t m, int64_t n, int64_t k, int64_t batch, int threads) {
  if (threads <= 1 || batch >= threads || m <= 0 || n <= 0 || k <= 0) return 1;
  double by_work = (double)m * (double)n * (double)k / GEMM_CHUNK_MNK;
  int64_t by_dim = (m >= n ? m : n) / GEMM_SHARE_MIN, s = threads / (batch > 0 ? batch : 1);
  if (s > by_dim) s = by_dim;
  if ((double)s > by_work) s = (int64_t)by_work;
  return s > 1 ? s : 1;
}

typedef struct gemm_call {
  int32_t type, ta, tb;
  int m, n, k, lda, ldb, ldc;
  const char *a, *b;
  char *c;
  int64_t sa, sb, sc; /* batch strides in bytes */
  int64_t es, shares; /* element size; shares per product */
  int64_t inner, sa2, sb2, sc2; /* batch elements per outer step and A's, B's and C's strides
                                   between them (bytes): product i reads A at
                                   (i / inner) * sa + (i % inner) * sa2 */
  int dnnl;                     /* f32 shares through oneDNN's sgemm */
  _Atomic int failed;           /* a oneDNN share failed */
} gemm_call;

/* Share `share` of product i: rows of C [m*share/shares, ...) when C is at least as tall as it
 * is wide, else columns. */
static void gemm_one(gemm_call *g, int64_t i, int64_t share) {
  enum CBLAS_TRANSPOSE ta = g->ta ? CblasTrans : CblasNoTrans, tb = g->tb ? CblasTrans : CblasNoTrans;
  int64_t io = i / g->inner, ii = i % g->inner;
  const char *a = g->a + io * g->sa + ii * g->sa2, *b = g->b + io * g->sb + ii * g->sb2;
  char *c = g->c + io * g->sc + ii * g->sc2;
  int m = g->m, n = g->n;
  if (g->shares > 1 && m >= n) {
    int r0 = (int)((int64_t)g->m * share / g->shares), r1 = (int)((int64_t)g->m * (share + 1) / g->shares);
    a += (g->ta ? (int64_t)r0 : (int64_t)r0 * g->lda) * g->es; /* op(A)'s rows: A's columns when transposed */
    c += (int64_t)r0 * g->ldc * g->es;
    m = r1 - r0;
  } else if (g->shares > 1) {
    int c0 = (int)((int64_t)g->n * share / g->shares), c1 = (int)((int64_t)g->n * (share + 1) / g->shares);
    b += (g->tb ? (int64_t)c0 * g->ldb : (int64_t)c0) * g->es; /* op(B)'s columns: B's rows when transposed */
    c += (int64_t)c0 * g->es;
    n = c1 - c0;
  }
  static const float one_c[2] = {1, 0}, zero_c[2] = {0, 0};
  static const double one_z[2] = {1, 0}, zero_z[2] = {0, 0};
  if (g->dnnl) {
    if (!cx_rt_dnnl_sgemm_one(g->ta, g->tb, m, n, g->k, (const float *)a, g->lda, (const float *)b, g->ldb,
                              (float *)c, g->ldc))
      atomic_store(&g->failed, 1);
    return;
  }
  switch (g->type) {
  case CXLA_F32: cblas_sgemm(CblasRowMajor, ta, tb, m, n, g->k, 1.0f, (const float *)a, g->lda, (const float *)b, g->ldb, 0.0f, (float *)c, g->ldc); break;
  case CXLA_C64: cblas_cgemm(CblasRowMajor, ta, tb, m, n, g->k, one_c, a, g->lda, b, g->ldb, zero_c, c, g->ldc); break;
  case CXLA_C128: cblas_zgemm(CblasRowMajor, ta, tb, m, n, g->k, one_z, a, g->lda, b, g->ldb, zero_z, c, g->ldc); break;
  default: cblas_dgemm(CblasRowMajor, ta, tb, m, n, g->k, 1.0, (const double *)a, g->lda, (const double *)b, g->ldb, 0.0, (double *)c, g->ldc); break;
  }
}

/* Kernel-ABI adapter: args[0] is the gemm_call, the range is (batch element, share) pairs. */
static void gemm_range(void **args, int64_t begin, int64_t end) {
  gemm_call *g = args[0];
  int omp_was = g->dnnl ? cx_rt_dnnl_one_thread() : 0;
  for (int64_t i = begin; i < end; i++) gemm_one(g, i / g->shares, i % g->shares);
  if (g->dnnl) cx_rt_dnnl_threads_restore(omp_was);
}

/* Zeroes C when k == 0 (an empty sum); BLAS implementations differ on this corner. */
static void gemm_zero(const gemm_call *g, int64_t batch) {
  size_t es = cxla_type_size((cxla_type)g->type);
  for (int64_t i = 0; i < batch; i++)
    for (int r = 0; r < g->m; r++)
      memset(g->c + (i / g->inner) * g->sc + (i % g->inner) * g->sc2 + (size_t)r * (size_t)g->ldc * es, 0,
             (size_t)g->n * es);
}

/* Both entry points: `batch` products, `inner` of them per step of the outer strides. */
static void gemm_run(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                     void *c, int64_t ldc, int64_t stride_c, int64_t batch, int64_t inner, int64_t stride_a2,
                     int64_t stride_b2, int64_t stride_c2, int dnnl, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = cx_rt_name(rt, id, "gemm");
  if (type != CXLA_F32 && type != CXLA_F64 && type != CXLA_C64 && type != CXLA_C128) {
    cx_rt_fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM on %s is not supported (f32, f64, c64 and c128 only)", name,
         cxla_type_name((cxla_type)type) ? cxla_type_name((cxla_type)type) : "an unknown type");
    return;
  }
  /* Row-major leading dimensions: the stored row length of each operand. */
  int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || inner < 1 || batch % inner || lda < (a_cols > 1 ? a_cols : 1) ||
      ldb < (b_cols > 1 ? b_cols : 1) || ldc < (n > 1 ? n : 1)) {
    cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: bad GEMM arguments m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld batch=%lld inner=%lld",
         name, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
         (long long)batch, (long long)inner);
    return;
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
    cx_rt_fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM dimension over %d (OpenBLAS takes 32-bit sizes)", name, INT_MAX);
    return;
  }
  if (m == 0 || n == 0 || batch == 0) return;
  int64_t es = (int64_t)cxla_type_size((cxla_type)type);
  int threads = cx_threadpool_size(rt->pool);
  gemm_call g = {type, trans_a != 0, trans_b != 0, (int)m, (int)n, (int)k, (int)lda, (int)ldb, (int)ldc,
                 a, b, c, stride_a * es, stride_b * es, stride_c * es, es, cx_rt_gemm_shares(m, n, k, batch, threads),
                 inner, stride_a2 * es, stride_b2 * es, stride_c2 * es, dnnl && type == CXLA_F32, 0};
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  if (k == 0) {
    gemm_zero(&g, batch);
  } else {
    /* chunks of at least GEMM_CHUNK_MNK multiply-adds; a single chunk runs on this thread */
    double item = (double)m * (double)n * (double)k / (double)g.shares;
    int64_t grain = item >= GEMM_CHUNK_MNK ? 1 : (int64_t)(GEMM_CHUNK_MNK / item);
    void *args[1] = {&g};
    cx_threadpool_parallel_for(rt->pool, gemm_range, args, batch * g.shares, grain);
    if (atomic_load(&g.failed)) cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: oneDNN's sgemm failed", name);
  }
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    /* four numbers at most: one product says into how many shares it was split */
    ta.n = 4, ta.key[0] = "m", ta.key[1] = "n", ta.key[2] = "k", ta.key[3] = batch > 1 ? "batch" : "shares";
    ta.val[0] = m, ta.val[1] = n, ta.val[2] = k, ta.val[3] = batch > 1 ? batch : g.shares;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &ta);
  }
}

void cx_rt_gemm(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, void *c,
                int64_t ldc, int64_t stride_c, int64_t batch, int32_t id) {
  gemm_run(rt, type, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch, 1, 0, 0,
           0, 0, id);
}

void cx_rt_gemm_batch2(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                       const void *a, int64_t lda, int64_t stride_a, int64_t stride_a2, const void *b, int64_t ldb,
                       int64_t stride_b, int64_t stride_b2, void *c, int64_t ldc, int64_t stride_c,
                       int64_t stride_c2, int64_t batch, int64_t inner, int32_t id) {
  gemm_run(rt, type, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch, inner,
           stride_a2, stride_b2, stride_c2, 0, id);
}

void cx_rt_gemm_batch2_dnnl(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                            int64_t k, const void *a, int64_t lda, int64_t stride_a, int64_t stride_a2, const void *b,
                            int64_t ldb, int64_t stride_b, int64_t stride_b2, void *c, int64_t ldc, int64_t stride_c,
                            int64_t stride_c2, int64_t batch, int64_t inner, int32_t id) {
  gemm_run(rt, type, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch, inner,
           stride_a2, stride_b2, stride_c2, cx_rt_gemm_dnnl_suits(type, trans_a, trans_b, m, n, k, batch), id);
}
