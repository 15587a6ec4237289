/* bench_runtime.c — micro-benchmarks of the CPU runtime: parallel_for overhead, the GEMM
 * wrapper against direct OpenBLAS, batched small GEMMs (pool vs. sequential), and im2col
 * convolution on typical layer shapes. Build and run with bench/bench_runtime.sh.
 * Each number is the best of several repetitions (noise on shared machines only adds time).
 * The conv lines are what the CPU backend compares with its JIT loop-nest convolution. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "rt/rt.h"
#include "rt/threadpool.h"

/* Wall time, or with one thread this thread's CPU time (CPU_TIME=1): on a shared, loaded
 * machine that is what the code would take on an idle one (minus cache interference). */
static clockid_t clock_used = CLOCK_MONOTONIC;
static double now_us(void) {
  struct timespec ts;
  clock_gettime(clock_used, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint64_t rng = 12345;
static float rndf(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

static void nothing(void **a, int64_t b, int64_t e) { (void)a, (void)b, (void)e; }
static void busy(void **a, int64_t b, int64_t e) {
  (void)a;
  double until = now_us() + (double)(e - b) * 0.01; /* 10 ns per iteration */
  while (now_us() < until) {}
}

static void bench_parallel_for(cx_threadpool *p) {
  int T = cx_threadpool_size(p);
  double best_empty = 1e9, best_work = 1e9, cold = 1e9;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now_us();
    for (int i = 0; i < 20000; i++) cx_threadpool_parallel_for(p, nothing, NULL, 1 << 20, 1);
    double t = (now_us() - t0) / 20000;
    if (t < best_empty) best_empty = t;
    t0 = now_us();
    for (int i = 0; i < 2000; i++) cx_threadpool_parallel_for(p, busy, NULL, 4000, 1); /* 40 us of work */
    t = (now_us() - t0) / 2000;
    if (t < best_work) best_work = t;
    usleep(5000); /* workers go to sleep */
    t0 = now_us();
    cx_threadpool_parallel_for(p, busy, NULL, 4000, 1);
    t = now_us() - t0;
    if (t < cold) cold = t;
  }
  double ideal = 40.0 / T;
  printf("parallel_for (%d threads): empty kernel %.2f us/call; 40 us of work: %.2f us/call (ideal %.2f, "
         "overhead %.2f us); from sleep: %.2f us (overhead %.2f us)\n",
         T, best_empty, best_work, ideal, best_work - ideal, cold, cold - ideal);
}

static void bench_gemm(cx_threadpool *p) {
  enum { N = 1024 };
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
  for (int i = 0; i < N * N; i++) a[i] = rndf(), b[i] = rndf();
  cx_rt rt = {.pool = p};
  double bw = 1e18, bd = 1e18;
  for (int rep = 0; rep < 8; rep++) { /* alternate, so both see the same machine state */
    double t0 = now_us();
    cx_rt_gemm(&rt, CXLA_F32, 0, 0, N, N, N, a, N, 0, b, N, 0, c, N, 0, 1, 0);
    double t1 = now_us();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    double t2 = now_us();
    if (t1 - t0 < bw) bw = t1 - t0;
    if (t2 - t1 < bd) bd = t2 - t1;
  }
  double fl = 2.0 * N * N * N;
  printf("sgemm 1024^3: cx_rt_gemm %.1f GFLOP/s, cblas_sgemm %.1f GFLOP/s\n", fl / bw * 1e-3, fl / bd * 1e-3);
  /* batch of small products: the pool splits batches, one single-threaded sgemm each */
  int B = 2048, M = 32;
  float *ba = malloc(sizeof(float) * B * M * M), *bb = malloc(sizeof(float) * B * M * M), *bc = malloc(sizeof(float) * B * M * M);
  for (int i = 0; i < B * M * M; i++) ba[i] = rndf(), bb[i] = rndf();
  double bp = 1e18, bs = 1e18;
  cx_rt seq = {0};
  for (int rep = 0; rep < 8; rep++) {
    double t0 = now_us();
    cx_rt_gemm(&rt, CXLA_F32, 0, 0, M, M, M, ba, M, M * M, bb, M, M * M, bc, M, M * M, B, 0);
    double t1 = now_us();
    cx_rt_gemm(&seq, CXLA_F32, 0, 0, M, M, M, ba, M, M * M, bb, M, M * M, bc, M, M * M, B, 0);
    double t2 = now_us();
    if (t1 - t0 < bp) bp = t1 - t0;
    if (t2 - t1 < bs) bs = t2 - t1;
  }
  fl = 2.0 * M * M * M * B;
  printf("sgemm 2048 x 32^3 batched: on the pool %.1f GFLOP/s, sequential %.1f GFLOP/s\n", fl / bp * 1e-3, fl / bs * 1e-3);
  free(a), free(b), free(c), free(ba), free(bb), free(bc);
}

static void dense_strides(const int64_t dims[4], const int order[4], int64_t st[4]) {
  int64_t s = 1;
  for (int i = 3; i >= 0; i--) st[order[i]] = s, s *= dims[order[i]];
}

typedef struct {
  const char *name;
  int64_t n, c, h, w, o, k, stride, pad, groups;
  int in_order[4], f_order[4], out_order[4];
} conv_shape;

/* Returns the number of shapes whose convolution failed. */
static int bench_conv(cx_threadpool *p) {
  int failed = 0;
  static const conv_shape shapes[] = {
      {"resnet 3x3 NHWC/HWIO", 8, 64, 56, 56, 64, 3, 1, 1, 1, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}},
      {"resnet 3x3 NCHW/OIHW", 8, 64, 56, 56, 64, 3, 1, 1, 1, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}},
      {"1x1 256->64 NHWC", 8, 256, 28, 28, 64, 1, 1, 0, 1, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}},
      {"stem 7x7/2 3->64 NHWC", 8, 3, 224, 224, 64, 7, 2, 3, 1, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}},
      {"depthwise 3x3 128 NHWC", 8, 128, 28, 28, 128, 3, 1, 1, 128, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}},
      {"small 3x3 1x28x28x16", 1, 16, 28, 28, 16, 3, 1, 1, 1, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}},
  };
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    const conv_shape *c = &shapes[s];
    int64_t oh = (c->h + 2 * c->pad - c->k) / c->stride + 1, ow = (c->w + 2 * c->pad - c->k) / c->stride + 1;
    cx_conv2d_desc d = {.batch = c->n, .in_feat = c->c, .in_h = c->h, .in_w = c->w, .out_feat = c->o, .out_h = oh,
                        .out_w = ow, .k_h = c->k, .k_w = c->k, .stride = {c->stride, c->stride},
                        .pad_lo = {c->pad, c->pad}, .lhs_dil = {1, 1}, .rhs_dil = {1, 1}, .groups = c->groups,
                        .batch_groups = 1};
    int64_t id[4] = {c->n, c->c, c->h, c->w}, fd[4] = {c->o, c->c / c->groups, c->k, c->k}, od[4] = {c->n, c->o, oh, ow};
    dense_strides(id, c->in_order, d.in_stride);
    dense_strides(fd, c->f_order, d.filt_stride);
    dense_strides(od, c->out_order, d.out_stride);
    size_t ni = (size_t)(id[0] * id[1] * id[2] * id[3]), nf = (size_t)(fd[0] * fd[1] * fd[2] * fd[3]),
           no = (size_t)(od[0] * od[1] * od[2] * od[3]);
    float *in = malloc(ni * 4), *f = malloc(nf * 4), *out = malloc(no * 4);
    for (size_t i = 0; i < ni; i++) in[i] = rndf();
    for (size_t i = 0; i < nf; i++) f[i] = rndf();
    cx_rt rt = {.pool = p};
    double best = 1e18;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now_us();
      cx_rt_conv_im2col(&rt, CXLA_F32, &d, in, f, out, 0);
      if (now_us() - t0 < best) best = now_us() - t0;
    }
    double fl = 2.0 * (double)no * (double)(c->c / c->groups * c->k * c->k);
    printf("im2col conv %-24s %9.3f ms %7.1f GFLOP/s%s\n", c->name, best / 1e3, fl / best * 1e-3,
           rt.status ? " (FAILED)" : "");
    if (rt.status) fprintf(stderr, "bench_runtime: %s\n", rt.errmsg), failed++;
    free(in), free(f), free(out);
  }
  return failed;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  cx_threadpool *p = cx_rt_pool_create(threads);
  if (!p) return 1;
  const char *cpu_time = getenv("CPU_TIME");
  if (cpu_time && *cpu_time == '1' && cx_threadpool_size(p) == 1) clock_used = CLOCK_THREAD_CPUTIME_ID;
  printf("threads: %d (of %d CPUs), timed by %s\n", cx_threadpool_size(p), cx_threadpool_ncpus(),
         clock_used == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time");
  bench_parallel_for(p);
  bench_gemm(p);
  int failed = bench_conv(p);
  cx_threadpool_destroy(p);
  return failed ? 1 : 0;
}
