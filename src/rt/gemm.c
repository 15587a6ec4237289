/* gemm.c — GEMM via OpenBLAS (cx_rt_gemm, rt/rt.h): batched, row-major, on f32, f64, c64 and
 * c128; batches of small products split across the pool, big ones on OpenBLAS's threads. */
#include <limits.h>
#include <string.h>
#include <cblas.h>
#include "core/trace.h"
#include "rt/rt.h"
#include "rt/threadpool.h"

/* OpenBLAS runs a GEMM on one thread when m*n*k <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by
 * default, interface/gemm.c); batches of such products are better split across the pool,
 * one single-threaded call per batch element. Bigger ones use OpenBLAS's threads instead. */
#define SMALL_GEMM_MNK 262144.0
/* Work (multiply-adds) a chunk of batched GEMMs should have to be worth a hand-off. */
#define GEMM_CHUNK_MNK 65536

typedef struct gemm_call {
  int32_t type, ta, tb;
  int m, n, k, lda, ldb, ldc;
  const char *a, *b;
  char *c;
  int64_t sa, sb, sc; /* batch strides in bytes */
} gemm_call;

static void gemm_one(const gemm_call *g, int64_t i) {
  enum CBLAS_TRANSPOSE ta = g->ta ? CblasTrans : CblasNoTrans, tb = g->tb ? CblasTrans : CblasNoTrans;
  const void *a = g->a + i * g->sa, *b = g->b + i * g->sb;
  void *c = g->c + i * g->sc;
  static const float one_c[2] = {1, 0}, zero_c[2] = {0, 0};
  static const double one_z[2] = {1, 0}, zero_z[2] = {0, 0};
  switch (g->type) {
  case CXLA_F32: cblas_sgemm(CblasRowMajor, ta, tb, g->m, g->n, g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f, c, g->ldc); break;
  case CXLA_C64: cblas_cgemm(CblasRowMajor, ta, tb, g->m, g->n, g->k, one_c, a, g->lda, b, g->ldb, zero_c, c, g->ldc); break;
  case CXLA_C128: cblas_zgemm(CblasRowMajor, ta, tb, g->m, g->n, g->k, one_z, a, g->lda, b, g->ldb, zero_z, c, g->ldc); break;
  default: cblas_dgemm(CblasRowMajor, ta, tb, g->m, g->n, g->k, 1.0, a, g->lda, b, g->ldb, 0.0, c, g->ldc); break;
  }
}

/* Kernel-ABI adapter: args[0] is the gemm_call, the range is batch elements. */
static void gemm_batch_range(void **args, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) gemm_one(args[0], i);
}

/* Zeroes C when k == 0 (an empty sum); BLAS implementations differ on this corner. */
static void gemm_zero(const gemm_call *g, int64_t batch) {
  size_t es = cxla_type_size((cxla_type)g->type);
  for (int64_t i = 0; i < batch; i++)
    for (int r = 0; r < g->m; r++) memset(g->c + i * g->sc + (size_t)r * (size_t)g->ldc * es, 0, (size_t)g->n * es);
}

void cx_rt_gemm(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, void *c,
                int64_t ldc, int64_t stride_c, int64_t batch, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = cx_rt_name(rt, id, "gemm");
  if (type != CXLA_F32 && type != CXLA_F64 && type != CXLA_C64 && type != CXLA_C128) {
    cx_rt_fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM on %s is not supported (f32, f64, c64 and c128 only)", name,
         cxla_type_name((cxla_type)type) ? cxla_type_name((cxla_type)type) : "an unknown type");
    return;
  }
  /* Row-major leading dimensions: the stored row length of each operand. */
  int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (a_cols > 1 ? a_cols : 1) ||
      ldb < (b_cols > 1 ? b_cols : 1) || ldc < (n > 1 ? n : 1)) {
    cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: bad GEMM arguments m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld batch=%lld",
         name, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
         (long long)batch);
    return;
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
    cx_rt_fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM dimension over %d (OpenBLAS takes 32-bit sizes)", name, INT_MAX);
    return;
  }
  if (m == 0 || n == 0 || batch == 0) return;
  int64_t es = (int64_t)cxla_type_size((cxla_type)type);
  gemm_call g = {type, trans_a != 0, trans_b != 0, (int)m, (int)n, (int)k, (int)lda, (int)ldb, (int)ldc,
                 a, b, c, stride_a * es, stride_b * es, stride_c * es};
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  double mnk = (double)m * (double)n * (double)k;
  if (k == 0) {
    gemm_zero(&g, batch);
  } else if (batch > 1 && rt->pool && mnk <= SMALL_GEMM_MNK && cx_threadpool_size(rt->pool) > 1) {
    void *args[1] = {&g};
    int64_t grain = (int64_t)(GEMM_CHUNK_MNK / mnk);
    cx_threadpool_parallel_for(rt->pool, gemm_batch_range, args, batch, grain > 1 ? grain : 1);
  } else {
    for (int64_t i = 0; i < batch; i++) gemm_one(&g, i);
  }
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 4, ta.key[0] = "m", ta.key[1] = "n", ta.key[2] = "k", ta.key[3] = "batch";
    ta.val[0] = m, ta.val[1] = n, ta.val[2] = k, ta.val[3] = batch;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &ta);
  }
}
