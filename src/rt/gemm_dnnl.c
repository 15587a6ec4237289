/* gemm_dnnl.c — the f32 GEMMs for which oneDNN's sgemm beat OpenBLAS (cx_rt_gemm_dnnl).
 *
 * bench/bench_libs.c timed every GEMM the training steps make with OpenBLAS (its SkylakeX
 * kernels), BLIS, libxsmm and oneDNN's dnnl_sgemm (docs/design/cpu-backend.md, "Which library
 * for which shape"). On the small and medium products of the MLP and CNN steps whose C has at
 * least 64 columns, dnnl_sgemm was 1.2-1.4× faster than OpenBLAS on one thread and 1.1-1.6× on
 * two with A as stored (NN, NT); with A transposed (the weight gradients, TN) it was 1.0-1.25×
 * faster in CPU time, and it adds no work when a product is split into row shares, where
 * OpenBLAS adds 2-10% (bench/bench_gemm_pool.c --work). On the 10-column (logits) products and
 * the big squares it was not faster, so those stay with OpenBLAS (cx_rt_gemm). The sequencer
 * picks one or the other when it compiles (cx_rt_gemm_dnnl_suits), unless --cpu-onednn=off.
 *
 * As for convolutions (conv_dnnl.c), oneDNN runs on cxla's pool, not on its OpenMP team: C is
 * split into one share per thread, each computed by a single-threaded dnnl_sgemm. The shares are
 * rows of C, except with B transposed (NT: the input gradients) and C wider than tall, where they
 * are columns: there a row share made dnnl_sgemm transpose all of B for each share, and two row
 * shares of the MLP's 128x512x512 NT product cost 12% more CPU time than one call where two
 * column shares (each transposing its half of B) cost 1-3% (bench/bench_gemm_pool.c --work).
 * With C taller than wide, B is the smaller operand, and a column share read all of A, half of
 * it from the other core's cache, where the kernel before had written it (the pool gives each
 * thread the same rows every time): the transformer's 1024x128x512 NT input gradient took 547
 * us in the step against 422 alone; with row shares the step went 7.87 -> 7.54 ms (cxla run,
 * interleaved), and the MLP, LeNet and flax CNN steps, whose NT products are wider, are as
 * they were. Batched products (attention's heads, at least 32 columns) are oneDNN's too: gemm.c
 * splits the batch over the pool as for OpenBLAS, each product one dnnl_sgemm
 * (cx_rt_dnnl_sgemm_one); there oneDNN reads B transposed in place as fast as OpenBLAS reads a
 * copy of it straight (docs/design/cpu-backend.md). */
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdatomic.h>
#include "core/trace.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "util/util.h"

/* OpenMP's runtime (libgomp, which Debian's oneDNN runs on), declared here: omp.h belongs to
 * the compiler, and clang has none without libomp-dev. */
int omp_get_max_threads(void);
void omp_set_num_threads(int n);

/* The class: f32, one product, C at least MIN_N wide, at most MAX_MNK multiply-adds (the
 * training steps' products are up to 5e7; the 1024² and 4096² squares, where OpenBLAS was as
 * fast or faster, are above); with both operands transposed (TT), at least TT_MIN_M rows of C:
 * oneDNN's TT products with 128 or 256 rows ran at 0.45-0.8x OpenBLAS's, those with 512 to
 * 1568 at 1.0-1.15x (bench/bench_gemm_pool.c --work --only=TT, docs/design/cpu-backend.md). */
#define DNNL_MIN_N 64
/* Batched products (attention's heads) with C at least this wide: there each batch element is
 * one single-threaded call on the pool (gemm.c), with the batch's operands read in place. */
#define DNNL_BATCHED_MIN_N 32
#define DNNL_MAX_MNK (1 << 26)
#define DNNL_TT_MIN_M 512
/* Rows (or columns) of C a pool share should have at least. */
#define DNNL_MIN_SHARE 16
/* Multiply-adds a share should have at least (as gemm.c's chunks): smaller products run whole on
 * the calling thread. */
#define DNNL_SHARE_MNK 262144.0

int cx_rt_gemm_dnnl_suits(int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch) {
  return type == CXLA_F32 && batch >= 1 && n >= (batch > 1 ? DNNL_BATCHED_MIN_N : DNNL_MIN_N) && m > 0 && k > 0 &&
         (double)m * (double)n * (double)k <= DNNL_MAX_MNK && !(trans_a && trans_b && m < DNNL_TT_MIN_M);
}

int cx_rt_dnnl_one_thread(void) {
  int was = omp_get_max_threads();
  omp_set_num_threads(1);
  return was;
}

void cx_rt_dnnl_threads_restore(int was) { omp_set_num_threads(was); }

int cx_rt_dnnl_sgemm_one(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float *c, int64_t ldc) {
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) ==
         dnnl_success;
}

/* ---- the set-up in the background ----
 * dnnl_sgemm makes its kernels once per process, under its own once-only guard, on the first
 * product past its small-size path (8x8x8 takes it; 1x1x1 does not): about 20 ms of one core
 * on the development machines (Zen 4, oneDNN 2.6), which was half of a new process's first
 * LeNet step with a warm disk cache. A concurrent caller waits on that guard, so a product
 * that comes while the thread is still at it costs no more than it would have. */
static pthread_mutex_t warm_mu = PTHREAD_MUTEX_INITIALIZER;
static enum { WARM_NEVER, WARM_RUNNING, WARM_DONE } warm_state;
static pthread_t warm_thread;

static void *warm_main(void *arg) {
  (void)arg;
  omp_set_num_threads(1); /* this thread's setting only: no OpenMP team for 8x8x8 */
  float a[64] = {0}, b[64] = {0}, c[64];
  dnnl_sgemm('N', 'N', 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8);
  return NULL;
}

void cx_rt_gemm_dnnl_warm(void) {
  pthread_mutex_lock(&warm_mu);
  if (warm_state == WARM_NEVER) {
    /* a fork waits for the set-up first: a child forked halfway through it would find oneDNN's
     * once-only guard held by a thread it does not have, and its first product would hang */
    warm_state = WARM_DONE;
    if (pthread_atfork(cx_rt_gemm_dnnl_settle, NULL, NULL) == 0 &&
        pthread_create(&warm_thread, NULL, warm_main, NULL) == 0)
      warm_state = WARM_RUNNING;
  }
  pthread_mutex_unlock(&warm_mu);
}

void cx_rt_gemm_dnnl_settle(void) {
  pthread_mutex_lock(&warm_mu);
  if (warm_state == WARM_RUNNING) {
    pthread_join(warm_thread, NULL);
    warm_state = WARM_DONE;
  }
  pthread_mutex_unlock(&warm_mu);
}

typedef struct dn_gemm {
  char ta, tb;
  int64_t m, n, k, lda, ldb, ldc, shares;
  int by_cols; /* shares are columns of C (else rows) */
  int by_k;    /* shares are slices of the contraction, share s > 0 into part (contraction_shares) */
  const float *a, *b;
  float *c, *part;
  _Atomic int failed;
} dn_gemm;

/* Share s of the contraction: rows [k*s/S, k*(s+1)/S) of op(A)'s columns and op(B)'s rows,
 * into C (s = 0) or its partial product (contraction_shares). */
static dnnl_status_t k_share(const dn_gemm *g, int64_t s) {
  int64_t k0 = g->k * s / g->shares, k1 = g->k * (s + 1) / g->shares;
  const float *a = g->a + (g->ta == 'T' ? k0 * g->lda : k0), *b = g->b + (g->tb == 'T' ? k0 : k0 * g->ldb);
  float *c = s ? g->part + (s - 1) * g->m * g->n : g->c;
  return dnnl_sgemm(g->ta, g->tb, g->m, g->n, k1 - k0, 1.0f, a, g->lda, b, g->ldb, 0.0f, c, s ? g->n : g->ldc);
}

/* Share s of C: its rows, or its columns (by_cols). */
static dnnl_status_t c_share(const dn_gemm *g, int64_t s) {
  int64_t len = g->by_cols ? g->n : g->m, i0 = len * s / g->shares, i1 = len * (s + 1) / g->shares;
  int64_t r0 = g->by_cols ? 0 : i0, r1 = g->by_cols ? g->m : i1, c0 = g->by_cols ? i0 : 0, c1 = g->by_cols ? i1 : g->n;
  /* op(A)'s rows r0..r1: A's columns when it is transposed (stored [k, m]); op(B)'s columns
   * c0..c1: B's rows when it is transposed (stored [n, k]) */
  const float *a = g->a + (g->ta == 'T' ? r0 : r0 * g->lda);
  const float *b = g->b + (g->tb == 'T' ? c0 * g->ldb : c0);
  return dnnl_sgemm(g->ta, g->tb, r1 - r0, c1 - c0, g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f, g->c + r0 * g->ldc + c0,
                    g->ldc);
}

/* Kernel-ABI adapter: args[0] is the dn_gemm, the range is its shares. */
static void dn_gemm_shares(void **args, int64_t begin, int64_t end) {
  dn_gemm *g = args[0];
  /* dnnl_sgemm on this thread alone; the thread may be the user's: its OpenMP setting is put back */
  int omp_was = cx_rt_dnnl_one_thread();
  for (int64_t s = begin; s < end; s++)
    if ((g->by_k ? k_share(g, s) : c_share(g, s)) != dnnl_success) atomic_store(&g->failed, 1);
  cx_rt_dnnl_threads_restore(omp_was);
}

/* A product whose partial products are no bigger than its operands is split over the
 * contraction where that keeps each thread on the rows the kernels before it wrote on that
 * thread (the pool gives a thread the same rows every time): share s multiplies rows
 * [k*s/S, k*(s+1)/S) of B (and of A, or its columns) into a partial C, and the partials are
 * added in share order. A row share of C read all of B, half of it from the other core's cache.
 *  - A weight gradient (TN: A and B stored [k, m] and [k, n], k the batch or the tokens): the
 *    transformer step's seven TN products (k = 1024 tokens) 1748 -> 1590 us (cxla run --trace);
 *    the MLP's and CNNs' (C as big as the operands, k = the batch) keep row shares.
 *  - A forward product whose B (the weights, [k, n], updated in place by the optimizer over
 *    the same rows) is wider than C is tall (NN, n > m): the flax MLP step's two layers; their
 *    GEMMs were as fast, but the Adam updates after found the weights' rows in their own core's
 *    cache (185 -> 163 and 127 -> 109 us), the step 1.92 -> 1.85 ms (interleaved). */
static int contraction_shares(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k, int64_t threads) {
  return !trans_b && (trans_a || n > m) && threads > 1 && k >= 64 * threads &&
         (double)threads * (double)m * (double)n <= (double)(m + n) * (double)k;
}

/* Rows [begin, end) of C += the other shares' partial products, in share order. */
static void dn_sum_parts(void **args, int64_t begin, int64_t end) {
  dn_gemm *g = args[0];
  for (int64_t i = begin; i < end; i++) {
    float *c = g->c + i * g->ldc;
    for (int64_t s = 1; s < g->shares; s++) {
      const float *p = g->part + (s - 1) * g->m * g->n + i * g->n;
      for (int64_t j = 0; j < g->n; j++) c[j] += p[j];
    }
  }
}

void cx_rt_gemm_dnnl(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, void *c,
                     int64_t ldc, int64_t stride_c, int64_t batch, int32_t id) {
  if (rt->status != CXLA_OK) return;
  if (batch > 1) { /* one single-threaded call per product, on the pool (gemm.c) */
    cx_rt_gemm_batch2_dnnl(rt, type, trans_a, trans_b, m, n, k, a, lda, stride_a, 0, b, ldb, stride_b, 0, c, ldc,
                           stride_c, 0, batch, 1, id);
    return;
  }
  /* The arguments are checked as cx_rt_gemm checks them (leading dimensions, sizes). */
  int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  if (!cx_rt_gemm_dnnl_suits(type, trans_a, trans_b, m, n, k, batch) || lda < (a_cols > 1 ? a_cols : 1) ||
      ldb < (b_cols > 1 ? b_cols : 1) || ldc < n) { /* not its class (or malformed): OpenBLAS's path, which reports bad arguments */
    cx_rt_gemm(rt, type, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch, id);
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  int by_cols = trans_b && n > m;
  int64_t threads = cx_threadpool_size(rt->pool), by_size = (by_cols ? n : m) / DNNL_MIN_SHARE;
  int64_t by_work = (int64_t)((double)m * (double)n * (double)k / DNNL_SHARE_MNK);
  dn_gemm g = {trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, lda, ldb, ldc, threads < by_size ? threads : by_size,
               by_cols, 0, a, b, c};
  if (g.shares > by_work) g.shares = by_work;
  if (g.shares < 1) g.shares = 1;
  void *args[1] = {&g};
  if (by_work >= threads && contraction_shares(trans_a, trans_b, m, n, k, threads) &&
      (g.part = cx_malloc(sizeof(float) * (size_t)((threads - 1) * m * n)))) { /* else row shares */
    g.by_k = 1, g.shares = threads;
    cx_threadpool_parallel_for(rt->pool, dn_gemm_shares, args, g.shares, 1);
    cx_threadpool_parallel_for(rt->pool, dn_sum_parts, args, m, 16);
    cx_free(g.part);
  } else if (g.shares > 1) cx_threadpool_parallel_for(rt->pool, dn_gemm_shares, args, g.shares, 1);
  else dn_gemm_shares(args, 0, 1);
  const char *name = cx_rt_name(rt, id, "gemm");
  if (atomic_load(&g.failed)) cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: oneDNN's sgemm failed", name);
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 4, ta.key[0] = "m", ta.key[1] = "n", ta.key[2] = "k", ta.key[3] = "shares";
    ta.val[0] = m, ta.val[1] = n, ta.val[2] = k, ta.val[3] = g.shares;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &ta);
  }
}
