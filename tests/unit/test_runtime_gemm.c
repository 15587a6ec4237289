/* test_runtime_gemm.c — cx_rt_gemm against a naive triple loop: f32/f64, transposes, padded
 * leading dimensions, batches with strides (the sequential path and the parallel-over-batch
 * path), k = 0, error handling, and c64/c128 (cgemm, zgemm); prints GFLOP/s next to a direct
 * cblas_sgemm at 1024³. */
#include <cblas.h>
#include <time.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "core/trace.h"
#include "test.h"
#include "util/util.h"

static uint64_t rng = 88172645463325252ull;
static double rnd(void) { /* xorshift64, uniform in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* Element (r, c) of a logical matrix stored row-major with leading dimension ld, or its
 * transpose when t. */
static double at(const double *x, int t, int64_t ld, int64_t r, int64_t c) { return t ? x[c * ld + r] : x[r * ld + c]; }

typedef struct {
  int ta, tb;
  int64_t m, n, k, pad, batch;
} gcase;

/* Runs one case in type ty through cx_rt_gemm and compares with the naive product. */
static void run_case(cx_rt *rt, int32_t ty, gcase g) {
  int64_t arows = g.ta ? g.k : g.m, acols = g.ta ? g.m : g.k;
  int64_t brows = g.tb ? g.n : g.k, bcols = g.tb ? g.k : g.n;
  int64_t lda = acols + g.pad, ldb = bcols + 2 * g.pad, ldc = g.n + 3 * g.pad;
  int64_t sa = arows * lda + 5, sb = brows * ldb + 1, sc = g.m * ldc + 7; /* strides with gaps */
  int64_t na = sa * g.batch, nb = sb * g.batch, nc = sc * g.batch;
  double *A = malloc((size_t)(na + 1) * 8), *B = malloc((size_t)(nb + 1) * 8), *C = malloc((size_t)(nc + 1) * 8);
  for (int64_t i = 0; i < na; i++) A[i] = rnd();
  for (int64_t i = 0; i < nb; i++) B[i] = rnd();
  size_t es = ty == CXLA_F32 ? 4 : 8;
  char *a = malloc((size_t)(na + 1) * es), *b = malloc((size_t)(nb + 1) * es), *c = malloc((size_t)(nc + 1) * es);
  for (int64_t i = 0; i < na; i++) ty == CXLA_F32 ? (void)(((float *)a)[i] = (float)A[i]) : (void)(((double *)a)[i] = A[i]);
  for (int64_t i = 0; i < nb; i++) ty == CXLA_F32 ? (void)(((float *)b)[i] = (float)B[i]) : (void)(((double *)b)[i] = B[i]);
  if (ty == CXLA_F32) { /* the products must not depend on the rounding of A and B */
    for (int64_t i = 0; i < na; i++) A[i] = ((float *)a)[i];
    for (int64_t i = 0; i < nb; i++) B[i] = ((float *)b)[i];
  }
  for (int64_t i = 0; i < nc; i++) ty == CXLA_F32 ? (void)(((float *)c)[i] = 1e30f) : (void)(((double *)c)[i] = 1e300);
  cx_rt_gemm(rt, ty, g.ta, g.tb, g.m, g.n, g.k, a, lda, sa, b, ldb, sb, c, ldc, sc, g.batch, 0);
  CHECK_MSG(rt->status == CXLA_OK, "status %d: %s", rt->status, rt->errmsg);
  int bad = 0;
  double tol = (ty == CXLA_F32 ? 1e-5 : 1e-12) * (double)(g.k + 1);
  for (int64_t bi = 0; bi < g.batch && !bad; bi++)
    for (int64_t r = 0; r < g.m && !bad; r++)
      for (int64_t col = 0; col < ldc && !bad; col++) {
        int64_t idx = bi * sc + r * ldc + col;
        double got = ty == CXLA_F32 ? ((float *)c)[idx] : ((double *)c)[idx];
        double want = ty == CXLA_F32 ? 1e30f : 1e300; /* padding stays untouched */
        if (col < g.n) {
          want = 0;
          for (int64_t kk = 0; kk < g.k; kk++)
            want += at(A + bi * sa, g.ta, lda, r, kk) * at(B + bi * sb, g.tb, ldb, kk, col);
        }
        if (!(fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1))) {
          test_fail(__FILE__, __LINE__, "%s ta=%d tb=%d m=%lld n=%lld k=%lld batch=%lld: C[%lld][%lld][%lld] = %g, want %g",
                    ty == CXLA_F32 ? "f32" : "f64", g.ta, g.tb, (long long)g.m, (long long)g.n, (long long)g.k,
                    (long long)g.batch, (long long)bi, (long long)r, (long long)col, got, want);
          bad = 1;
        }
      }
  free(A), free(B), free(C), free(a), free(b), free(c);
}

static const gcase cases[] = {
    {0, 0, 3, 4, 5, 0, 1},   {1, 0, 3, 4, 5, 0, 1},   {0, 1, 3, 4, 5, 0, 1},  {1, 1, 3, 4, 5, 0, 1},
    {0, 0, 1, 1, 1, 0, 1},   {0, 0, 17, 9, 33, 3, 1}, {1, 1, 17, 9, 33, 2, 1}, {0, 1, 64, 70, 3, 1, 2},
    {1, 0, 5, 6, 7, 1, 3},   {0, 0, 8, 8, 8, 0, 37},  {1, 1, 4, 3, 9, 2, 41},  {0, 1, 2, 130, 2, 0, 100},
    {0, 0, 100, 110, 120, 4, 2},
};

TEST(runtime_gemm_matches_naive) {
  cx_rt rt = {0};
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < CX_ARRAY_LEN(cases); i++) run_case(&rt, t ? CXLA_F64 : CXLA_F32, cases[i]);
}

/* The same with a pool: small batched products are spread over it. */
TEST(runtime_gemm_batched_on_pool) {
  cx_rt rt = {0};
  rt.pool = cx_threadpool_create(4);
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < CX_ARRAY_LEN(cases); i++) run_case(&rt, t ? CXLA_F64 : CXLA_F32, cases[i]);
  run_case(&rt, CXLA_F32, (gcase){0, 1, 16, 16, 16, 1, 513});
  cx_threadpool_destroy(rt.pool);
}

/* Products split into shares of C's rows (taller than wide) or columns (wider than tall) on
 * the pool (cx_rt_gemm_shares): every transpose, padded leading dimensions, and a batch smaller
 * than the pool (each element split too). */
TEST(runtime_gemm_split_on_pool) {
  static const gcase split[] = {
      {0, 0, 200, 40, 100, 0, 1}, {1, 0, 200, 40, 100, 3, 1}, {0, 1, 203, 41, 99, 1, 1}, {1, 1, 200, 40, 100, 2, 1},
      {0, 0, 40, 300, 100, 0, 1}, {1, 0, 41, 301, 97, 2, 1},  {0, 1, 40, 300, 100, 1, 1}, {1, 1, 40, 300, 100, 3, 1},
      {0, 1, 150, 60, 120, 1, 2}, {1, 0, 60, 150, 120, 2, 2},
  };
  for (int threads = 2; threads <= 4; threads += 2) {
    cx_rt rt = {0};
    rt.pool = cx_threadpool_create(threads);
    for (int t = 0; t < 2; t++)
      for (int i = 0; i < CX_ARRAY_LEN(split); i++) {
        const gcase *g = &split[i];
        CHECK_MSG(g->batch >= threads || cx_rt_gemm_shares(g->m, g->n, g->k, g->batch, threads) > 1,
                  "case %d is not split on %d threads", i, threads);
        run_case(&rt, t ? CXLA_F64 : CXLA_F32, *g);
      }
    cx_threadpool_destroy(rt.pool);
  }
}

/* When a product is split: only with threads to spare, enough work per share (2^18
 * multiply-adds) and at least 16 rows or columns per share. The MLP step's products on 2
 * threads: 784x128x128 and 128x64x128 split in two, the 10-column logits products not. */
TEST(runtime_gemm_shares_threshold) {
  CHECK_EQ_INT(cx_rt_gemm_shares(784, 128, 128, 1, 2), 2);
  CHECK_EQ_INT(cx_rt_gemm_shares(128, 64, 128, 1, 2), 2);
  CHECK_EQ_INT(cx_rt_gemm_shares(128, 10, 64, 1, 2), 1);   /* 81920 multiply-adds */
  CHECK_EQ_INT(cx_rt_gemm_shares(64, 10, 128, 1, 2), 1);
  CHECK_EQ_INT(cx_rt_gemm_shares(784, 128, 128, 1, 1), 1); /* no pool */
  CHECK_EQ_INT(cx_rt_gemm_shares(784, 128, 128, 2, 2), 1); /* one batch element per thread */
  CHECK_EQ_INT(cx_rt_gemm_shares(784, 128, 128, 2, 8), 4); /* 8 threads, 2 elements */
  CHECK_EQ_INT(cx_rt_gemm_shares(64, 64, 128, 1, 8), 2);   /* 524288 multiply-adds: two shares */
  CHECK_EQ_INT(cx_rt_gemm_shares(40, 20, 4096, 1, 8), 2);  /* 40 rows: two shares of 20 */
  CHECK_EQ_INT(cx_rt_gemm_shares(20, 8, 100000, 1, 8), 1); /* fewer than 32 rows and columns */
  CHECK_EQ_INT(cx_rt_gemm_shares(0, 128, 128, 1, 2), 1);
}

/* cgemm and zgemm: C = A B with complex products (transposes are not conjugates), a batch
 * of 2 with gapped strides, against the naive complex sum; k = 0 zeroes 16-byte elements. */
TEST(runtime_gemm_complex) {
  enum { M = 3, N = 4, K = 5, BATCH = 2, SA = M * K + 3, SB = K * N + 1, SC = M * N + 2 };
  double A[2 * SA * BATCH], B[2 * SB * BATCH];
  for (int i = 0; i < 2 * SA * BATCH; i++) A[i] = rnd();
  for (int i = 0; i < 2 * SB * BATCH; i++) B[i] = rnd();
  for (int t = 0; t < 2; t++)
    for (int ta = 0; ta < 2; ta++) {
      cxla_type ty = t ? CXLA_C128 : CXLA_C64;
      cx_rt rt = {0};
      float af[2 * SA * BATCH], bf[2 * SB * BATCH], cf[2 * SC * BATCH];
      double cd[2 * SC * BATCH];
      for (int i = 0; i < 2 * SA * BATCH; i++) af[i] = (float)A[i];
      for (int i = 0; i < 2 * SB * BATCH; i++) bf[i] = (float)B[i];
      const void *a = t ? (const void *)A : af, *b = t ? (const void *)B : bf;
      void *c = t ? (void *)cd : cf;
      /* A[b] is M x K (ld K), or stored K x M (ld M) when transposed */
      cx_rt_gemm(&rt, ty, ta, 0, M, N, K, a, ta ? M : K, SA, b, N, SB, c, N, SC, BATCH, 0);
      CHECK_MSG(rt.status == CXLA_OK, "status %d: %s", rt.status, rt.errmsg);
      for (int bi = 0; bi < BATCH; bi++)
        for (int r = 0; r < M; r++)
          for (int col = 0; col < N; col++) {
            double wr = 0, wi = 0;
            for (int k = 0; k < K; k++) {
              int ia = bi * SA + (ta ? k * M + r : r * K + k), ib = bi * SB + k * N + col;
              double ar = t ? A[2 * ia] : af[2 * ia], ai = t ? A[2 * ia + 1] : af[2 * ia + 1];
              double br = t ? B[2 * ib] : bf[2 * ib], bim = t ? B[2 * ib + 1] : bf[2 * ib + 1];
              wr += ar * br - ai * bim;
              wi += ar * bim + ai * br;
            }
            int ic = bi * SC + r * N + col;
            double gr = t ? cd[2 * ic] : cf[2 * ic], gi = t ? cd[2 * ic + 1] : cf[2 * ic + 1];
            double tol = t ? 1e-13 : 1e-5;
            CHECK_MSG(fabs(gr - wr) <= tol && fabs(gi - wi) <= tol, "%s ta=%d [%d,%d,%d]: (%g, %g), want (%g, %g)",
                      cxla_type_name(ty), ta, bi, r, col, gr, gi, wr, wi);
          }
    }
  cx_rt rt = {0};
  double z[8] = {1, 2, 3, 4, 5, 6, 7, 8}, one[2] = {1, 1};
  cx_rt_gemm(&rt, CXLA_C128, 0, 0, 2, 2, 0, one, 1, 0, one, 2, 0, z, 2, 0, 1, 0);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  for (int i = 0; i < 8; i++) CHECK_NEAR(z[i], 0, 0);
}

TEST(runtime_gemm_k0_zeroes_and_errors_stick) {
  cx_rt rt = {0};
  float c[6] = {1, 2, 3, 4, 5, 6}, a[1] = {0}, b[1] = {0};
  cx_rt_gemm(&rt, CXLA_F32, 0, 0, 2, 3, 0, a, 1, 0, b, 3, 0, c, 3, 0, 1, 0);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  for (int i = 0; i < 6; i++) CHECK_NEAR(c[i], 0, 0);
  c[0] = 7;
  cx_rt_gemm(&rt, CXLA_F32, 0, 0, 0, 3, 4, a, 4, 0, b, 3, 0, c, 3, 0, 1, 0); /* m = 0: nothing */
  CHECK_NEAR(c[0], 7, 0);
  const char *names[] = {"dot.3"};
  rt.names = names;
  cx_rt_gemm(&rt, CXLA_S32, 0, 0, 2, 3, 1, a, 1, 0, b, 3, 0, c, 3, 0, 1, 0);
  CHECK_EQ_INT(rt.status, CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(rt.errmsg, "dot.3: GEMM on s32 is not supported");
  /* Later calls of the same execution do nothing. */
  cx_rt_gemm(&rt, CXLA_F32, 0, 0, 2, 3, 0, a, 1, 0, b, 3, 0, c, 3, 0, 1, 0);
  CHECK_NEAR(c[0], 7, 0);
  cx_rt bad = {0};
  cx_rt_gemm(&bad, CXLA_F32, 0, 0, 2, 3, 4, a, 2 /* < k */, 0, b, 3, 0, c, 3, 0, 1, 0);
  CHECK_EQ_INT(bad.status, CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(bad.errmsg, "bad GEMM arguments");
}

TEST(runtime_gemm_is_traced) {
  cx_trace *t = cx_trace_create("/dev/null");
  cx_rt rt = {0};
  rt.trace = t;
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
  cx_rt_gemm(&rt, CXLA_F32, 0, 0, 2, 2, 2, a, 2, 0, b, 2, 0, c, 2, 0, 1, 0);
  CHECK_EQ_INT(cx_trace_count(t, NULL), 1);
  CHECK_NEAR(c[3], 4, 0);
  cx_trace_destroy(t);
}

static double secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Printed for the record: the wrapper must cost nothing next to OpenBLAS itself. */
TEST(runtime_gemm_speed_1024) {
  enum { N = 1024 };
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
  for (int i = 0; i < N * N; i++) a[i] = (float)rnd(), b[i] = (float)rnd();
  cx_rt rt = {0};
  double best_w = 1e9, best_d = 1e9;
  for (int rep = 0; rep < 4; rep++) {
    double t0 = secs();
    cx_rt_gemm(&rt, CXLA_F32, 0, 0, N, N, N, a, N, 0, b, N, 0, c, N, 0, 1, 0);
    double t1 = secs();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    double t2 = secs();
    if (t1 - t0 < best_w) best_w = t1 - t0;
    if (t2 - t1 < best_d) best_d = t2 - t1;
  }
  double fl = 2.0 * N * N * N;
  printf("    sgemm 1024^3: cx_rt_gemm %.1f GFLOP/s, cblas_sgemm %.1f GFLOP/s (best of 4)\n", fl / best_w * 1e-9,
         fl / best_d * 1e-9);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  free(a), free(b), free(c);
}

/* OpenBLAS's fallback to pre-AVX2 kernels on a CPU it does not know (rt/blas_core.c): after the
 * first pool, the kernels it runs use AVX2 wherever the CPU has it. */
char *openblas_get_corename(void);
int openblas_get_num_threads(void);
TEST(runtime_blas_kernels_fit_the_cpu) {
  cx_threadpool *p = cx_rt_pool_create(1);
  const char *core = openblas_get_corename();
  __builtin_cpu_init();
  int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && !getenv("OPENBLAS_CORETYPE")) {
    static const char *const old[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge", NULL};
    for (int i = 0; old[i]; i++) CHECK_MSG(strcasecmp(core, old[i]) != 0, "OpenBLAS runs %s kernels on an AVX2 CPU", core);
  }
  printf("    OpenBLAS kernels: %s\n", core);
  cx_threadpool_destroy(p);
  /* and it runs them on one thread: cxla's pool splits the products (gemm.c) */
  p = cx_rt_pool_create(2);
  CHECK_EQ_INT(openblas_get_num_threads(), 1);
  cx_threadpool_destroy(p);
}

/* Two batch levels read and written in place: A is [2 outer, 3 rows, 2 inner, 2 cols]
 * (attention's [b, t, h, dh]), product (o, i) takes rows r at o*12 + r*4 + i*2; B is one 2x2
 * matrix per product, contiguous in product order through the outer stride (inner count 2: 8,
 * 4); C is laid out as A is (rows 4 apart, products at o*12 + i*2). With k = 0 the same
 * elements are zeroed and no others touched. A batch that is not a multiple of the inner count
 * is refused. */
TEST(runtime_gemm_two_batch_levels) {
  float a[24], b[16], c[24];
  for (int i = 0; i < 24; i++) a[i] = (float)(i % 7) - 3;
  for (int i = 0; i < 16; i++) b[i] = (float)(i % 5) - 2;
  cx_rt rt = {0};
  cx_rt_gemm_batch2(&rt, CXLA_F32, 0, 0, 3, 2, 2, a, 4, 12, 2, b, 2, 8, 4, c, 4, 12, 2, 4, 2, 0);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  for (int o = 0; o < 2; o++)
    for (int in = 0; in < 2; in++)
      for (int r = 0; r < 3; r++)
        for (int col = 0; col < 2; col++) {
          float want = 0;
          for (int k = 0; k < 2; k++) want += a[o * 12 + r * 4 + in * 2 + k] * b[o * 8 + in * 4 + k * 2 + col];
          CHECK_NEAR(c[o * 12 + r * 4 + in * 2 + col], want, 0);
        }
  /* only one inner product per outer step, k = 0: C's elements (o, r, 0, col) are zeroed */
  for (int i = 0; i < 24; i++) c[i] = 7;
  cx_rt_gemm_batch2(&rt, CXLA_F32, 0, 0, 3, 2, 0, a, 4, 12, 2, b, 2, 8, 4, c, 4, 12, 2, 2, 1, 0);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  for (int i = 0; i < 24; i++) CHECK_NEAR(c[i], (i % 4) < 2 ? 0 : 7, 0);
  cx_rt bad = {0};
  cx_rt_gemm_batch2(&bad, CXLA_F32, 0, 0, 3, 2, 2, a, 4, 12, 2, b, 2, 8, 4, c, 2, 6, 0, 3, 2, 0);
  CHECK_EQ_INT(bad.status, CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(bad.errmsg, "inner=2");
}
