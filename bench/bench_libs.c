/* bench_libs.c — which library for which GEMM and convolution shape (issue 22, item 3).
 *
 * GEMMs: every f32 product the training steps and benchmarks make (their m×n×k and transposes
 * as cxla's GEMM plan calls them; see docs/design/cpu-backend.md), with OpenBLAS (its SkylakeX
 * kernels, as cx_rt_blas_tune picks them; its own threads, as cx_rt_gemm calls it), BLIS
 * (typed API, its own threads), libxsmm (JIT kernels) and oneDNN's dnnl_sgemm, these two as
 * cxla would call them: rows of C split over cxla's thread pool, one single-threaded call per
 * share. Batched products run one single-threaded call per batch element on the pool, for all.
 * Convolutions: the LeNet (batch 64) and flax CNN (batch 128) layers, forward and both
 * gradients, f32 and bf16, through cxla's public API (a one-convolution module, its current
 * path) against oneDNN's primitives on the same NHWC/HWIO memory.
 *
 * Training steps: LeNet's, the flax CNN's and MLP's Adam steps and the MLP forward (bench/hlo,
 * bench/mem: run from the source root) with --cpu-onednn=off against on.
 * Every contender of a shape runs in interleaved turns (bench_util.c), each result is checked
 * against the first contender's, and the table gives for each peer the ratio of the first
 * contender's median (best) call to the peer's: above 1, the peer is faster. Run on 1 and 2
 * threads (--threads=1,2 by default); bench/build.sh builds it when the peers are installed:
 *   build/bench-bin/bench_libs [--threads=1,2] [--rounds=N] [--only=gemm|conv|steps] [--smoke] */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_libs.h"
#include "bench_util.h"
#include "rt/rt.h"
#include "rt/threadpool.h"

char *openblas_get_corename(void);

static int g_rounds = 9, g_smoke, g_bad; /* g_bad: results that disagree (the exit status) */
static double g_sample_ms = 5;

static float *falloc(int64_t n) {
  float *p = calloc((size_t)n, sizeof *p);
  if (!p) {
    fprintf(stderr, "bench_libs: out of memory\n");
    exit(1);
  }
  return p;
}

/* ---- GEMM ---- */

typedef struct gshape {
  const char *where;
  int m, n, k, ta, tb, batch;
} gshape;

/* m×n×k as cxla's plan calls cx_rt_gemm (the --dump-to IR of each step): forward NN, the
 * weight gradient TN (x^T·dy), the input gradient NT (dy·W^T). */
static const gshape k_gemms[] = {
    {"MLP 784-128-64-10 b128 fwd", 128, 128, 784, 0, 0, 1},
    {"MLP fwd", 128, 64, 128, 0, 0, 1},
    {"MLP fwd", 128, 10, 64, 0, 0, 1},
    {"MLP dW1", 784, 128, 128, 1, 0, 1},
    {"MLP dW2", 128, 64, 128, 1, 0, 1},
    {"MLP dW3", 64, 10, 128, 1, 0, 1},
    {"MLP dx2", 128, 128, 64, 0, 1, 1},
    {"MLP dx3", 128, 64, 10, 0, 1, 1},
    {"flax MLP 784-512-512-10 fwd", 128, 512, 784, 0, 0, 1},
    {"flax MLP fwd", 128, 512, 512, 0, 0, 1},
    {"flax MLP fwd", 128, 10, 512, 0, 0, 1},
    {"flax MLP dx", 128, 512, 512, 0, 1, 1},
    {"flax MLP dx", 128, 512, 10, 0, 1, 1},
    {"flax MLP dW1", 784, 512, 128, 1, 0, 1},
    {"flax MLP dW2", 512, 512, 128, 1, 0, 1},
    {"flax MLP dW3", 512, 10, 128, 1, 0, 1},
    {"LeNet b64 dense fwd", 64, 128, 1568, 0, 0, 1},
    {"LeNet dense fwd", 64, 10, 128, 0, 0, 1},
    {"LeNet dx", 64, 1568, 128, 0, 1, 1},
    {"LeNet dx", 64, 128, 10, 0, 1, 1},
    {"LeNet dW", 1568, 128, 64, 1, 0, 1},
    {"LeNet dW", 128, 10, 64, 1, 0, 1},
    {"flax CNN b128 dense fwd", 128, 128, 1568, 0, 0, 1},
    {"flax CNN fwd", 128, 10, 128, 0, 0, 1},
    {"flax CNN dx", 128, 1568, 128, 0, 1, 1},
    {"flax CNN dx", 128, 128, 10, 0, 1, 1},
    {"flax CNN dW", 1568, 128, 128, 1, 0, 1},
    {"transformer d256 ff1024, 1024 tok: qkv", 1024, 768, 256, 0, 0, 1},
    {"transformer ff up", 1024, 1024, 256, 0, 0, 1},
    {"transformer ff down", 1024, 256, 1024, 0, 0, 1},
    {"transformer dx ff up", 1024, 256, 1024, 0, 1, 1},
    {"transformer dW ff up", 256, 1024, 1024, 1, 0, 1},
    {"transformer scores, 32 heads*batch", 128, 128, 64, 0, 1, 32},
    {"transformer attn x V", 128, 64, 128, 0, 0, 32},
    {"train_peers transformer (4 heads of 32, batch 8): scores", 128, 128, 32, 0, 1, 32},
    {"train_peers transformer: P x V, dQ", 128, 32, 128, 0, 0, 32},
    {"train_peers transformer: dV, dK", 128, 32, 128, 1, 0, 32},
    {"square 1024 (gemm bench)", 1024, 1024, 1024, 0, 0, 1},
    {"square 4096", 4096, 4096, 4096, 0, 0, 1},
};

enum { L_OPENBLAS, L_BLIS, L_XSMM, L_DNNL, NLIB };
static const char *const k_lib[NLIB] = {"OpenBLAS", "BLIS", "libxsmm", "oneDNN"};

typedef struct gjob {
  int lib, threads, batch;
  int64_t sa, sb, sc; /* batch strides (elements) */
  bl_gemm g;
  void *xk[2];       /* libxsmm kernels: rows of one thread's share, and of the last share */
  int rows;          /* libxsmm: rows per thread */
} gjob;

static bl_gemm at_batch(const gjob *j, int i) {
  bl_gemm g = j->g;
  g.a += i * j->sa, g.b += i * j->sb, g.c += i * j->sc;
  return g;
}

static void one_call(int lib, const bl_gemm *g, const gjob *j) {
  switch (lib) {
  case L_OPENBLAS:
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans, g->m, g->n, g->k,
                1.0f, g->a, g->lda, g->b, g->ldb, 0.0f, g->c, g->ldc);
    break;
  case L_BLIS: libs_blis_sgemm(g); break;
  case L_DNNL: libs_dnnl_sgemm(g); break;
  default: /* libxsmm: whole product on one thread (batched) */
    libs_xsmm_run(j->xk[0], g, 0);
    break;
  }
}

static cx_threadpool *g_pool; /* cxla's own pool of the thread count being measured */

/* Pool tasks: batch elements (args[1]: 1) or row shares of C (0), one single-threaded call each. */
static void gjob_range(void **args, int64_t begin, int64_t end) {
  gjob *j = args[0];
  omp_set_num_threads(1); /* oneDNN on this thread alone */
  for (int64_t i = begin; i < end; i++) {
    if (args[1]) {
      bl_gemm g = at_batch(j, (int)i);
      one_call(j->lib, &g, j);
      continue;
    }
    int r0 = (int)i * j->rows, rows = j->g.m - r0 < j->rows ? j->g.m - r0 : j->rows;
    if (rows <= 0) continue;
    if (j->lib == L_XSMM) {
      libs_xsmm_run(rows == j->rows ? j->xk[0] : j->xk[1], &j->g, r0);
      continue;
    }
    bl_gemm g = j->g;
    g.m = rows, g.a = g.ta ? g.a + r0 : g.a + (int64_t)r0 * g.lda, g.c += (int64_t)r0 * g.ldc;
    one_call(j->lib, &g, j);
  }
}

/* OpenBLAS and BLIS on their own threads (as cxla calls OpenBLAS); libxsmm (no threads of its
 * own) and oneDNN's sgemm (OpenMP) as cxla would call them: rows of C split over cxla's pool,
 * each share single-threaded. Batched products: one single-threaded call per element on the
 * pool for every library, as cx_rt_gemm does. */
static void gjob_call(void *p) {
  gjob *j = p;
  void *args[2] = {j, NULL};
  if (j->batch > 1) {
    openblas_set_num_threads(1);
    libs_blis_threads(1);
    args[1] = j;
    cx_threadpool_parallel_for(g_pool, gjob_range, args, j->batch, 1);
    return;
  }
  openblas_set_num_threads(j->threads);
  libs_blis_threads(j->threads);
  if (j->lib == L_XSMM || j->lib == L_DNNL) {
    if (j->threads == 1) gjob_range(args, 0, 1);
    else cx_threadpool_parallel_for(g_pool, gjob_range, args, j->threads, 1);
    return;
  }
  one_call(j->lib, &j->g, j);
}

static void fmt_ratio(char *buf, size_t n, const bu_contender *base, const bu_contender *c) {
  if (c->failed || base->failed) snprintf(buf, n, "%14s", "n/a");
  else snprintf(buf, n, "%6.2f (%5.2f)", base->median / c->median, base->best / c->best);
}

static void gemm_shape(const gshape *s, int T) {
  int m = s->m, n = s->n, k = s->k, B = s->batch;
  if (g_smoke) m = m > 64 ? 64 : m, n = n > 64 ? 64 : n, k = k > 64 ? 64 : k, B = B > 2 ? 2 : B;
  int64_t sa = (int64_t)m * k, sb = (int64_t)k * n, sc = (int64_t)m * n;
  float *a = falloc(sa * B), *b = falloc(sb * B), *c[NLIB];
  bu_fill(a, sa * B, 1, -1, 1);
  bu_fill(b, sb * B, 2, -1, 1);
  gjob j[NLIB];
  bu_contender ct[NLIB];
  memset(ct, 0, sizeof ct);
  for (int l = 0; l < NLIB; l++) {
    c[l] = falloc(sc * B);
    bl_gemm g = {m, n, k, s->ta, s->tb, s->ta ? m : k, s->tb ? k : n, n, a, b, c[l]};
    j[l] = (gjob){.lib = l, .threads = T, .batch = B, .sa = sa, .sb = sb, .sc = sc, .g = g};
    ct[l].name = k_lib[l];
    ct[l].fn = gjob_call;
    ct[l].arg = &j[l];
  }
  /* libxsmm: kernels for a thread's rows (batched: the whole product per call). */
  for (int l = 0; l < NLIB; l++) j[l].rows = B > 1 ? m : (m + T - 1) / T;
  gjob *x = &j[L_XSMM];
  x->xk[0] = libs_xsmm_kernel(&x->g, x->rows);
  x->xk[1] = B > 1 ? x->xk[0] : libs_xsmm_kernel(&x->g, m - (T - 1) * x->rows > 0 ? m - (T - 1) * x->rows : x->rows);
  if (!x->xk[0] || !x->xk[1]) ct[L_XSMM].failed = 1;
  double big = 2.0 * m * n * (double)k * B;
  bu_opts o = {big > 1e10 ? 3 : g_rounds, big > 1e10 ? 0 : 100, g_sample_ms, 2000};
  if (g_smoke) o.rounds = 1, o.warmup_ms = 0, o.min_sample_ms = 0;
  bu_interleave(ct, NLIB, &o);
  /* Check: every peer against OpenBLAS. */
  double err = 0;
  for (int l = 1; l < NLIB; l++)
    if (!ct[l].failed) {
      double e = bu_max_err(c[l], c[L_OPENBLAS], sc * B, 1.0); /* |C| ~ sqrt(k)/3: atol 1 */
      if (e > err) err = e;
      if (!(e < 1e-3)) printf("  (%s differs from OpenBLAS: %.2g)\n", k_lib[l], e), g_bad++; /* k up to 4096 */
    }
  char r[NLIB][32], shape[48];
  for (int l = 1; l < NLIB; l++) fmt_ratio(r[l], sizeof r[l], &ct[L_OPENBLAS], &ct[l]);
  snprintf(shape, sizeof shape, "%dx%dx%d %s%s%s", m, n, k, s->ta ? "T" : "N", s->tb ? "T" : "N",
           B > 1 ? " batched" : "");
  int win = L_OPENBLAS;
  for (int l = 1; l < NLIB; l++)
    if (!ct[l].failed && ct[l].median < ct[win].median) win = l;
  printf("| %-26s | %-34s | %8.1f | %7.1f | %s | %s | %s | %-8s | %.0e |\n", shape, s->where, ct[0].median * 1e3,
         big / (ct[0].median * 1e6), r[L_BLIS], r[L_XSMM], r[L_DNNL], k_lib[win], err);
  fflush(stdout);
  bu_contenders_free(ct, NLIB);
  for (int l = 0; l < NLIB; l++) free(c[l]);
  free(a);
  free(b);
}

static void group_gemms(int T) {
  g_pool = cx_threadpool_create(T);
  printf("\nGEMM, %d thread%s: OpenBLAS's median call (us, GFLOP/s), and each peer's speed relative to it "
         "(OpenBLAS median / peer median, best calls in brackets; > 1: the peer is faster)\n\n",
         T, T == 1 ? "" : "s");
  printf("| m x n x k op     | where                              | OpenBLAS us | GFLOP/s | BLIS | libxsmm | "
         "oneDNN sgemm | fastest | max rel err |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof k_gemms / sizeof k_gemms[0]; i++) gemm_shape(&k_gemms[i], T);
  cx_threadpool_destroy(g_pool);
  g_pool = NULL;
}

/* ---- convolutions ---- */

typedef struct cshape {
  const char *where;
  libs_conv cv;
} cshape;

static const cshape k_convs[] = {
    {"LeNet b64 conv1 fwd", {0, 0, 64, 28, 28, 1, 16}},
    {"LeNet conv1 dW", {2, 0, 64, 28, 28, 1, 16}},
    {"LeNet conv2 fwd", {0, 0, 64, 14, 14, 16, 32}},
    {"LeNet conv2 dx", {1, 0, 64, 14, 14, 16, 32}},
    {"LeNet conv2 dW", {2, 0, 64, 14, 14, 16, 32}},
    {"flax CNN b128 conv1 fwd", {0, 0, 128, 28, 28, 1, 16}},
    {"flax CNN conv1 dW", {2, 0, 128, 28, 28, 1, 16}},
    {"flax CNN conv2 fwd", {0, 0, 128, 14, 14, 16, 32}},
    {"flax CNN conv2 dx", {1, 0, 128, 14, 14, 16, 32}},
    {"flax CNN conv2 dW", {2, 0, 128, 14, 14, 16, 32}},
};

/* The one-convolution module, in the form jax lowers each (bench/hlo/lenet_train_step.hlo). */
static int conv_module(const libs_conv *cv, char *path, size_t np) {
  const char *t = cv->bf16 ? "bf16" : "f32";
  char x[64], y[64], w[64];
  snprintf(x, sizeof x, "%s[%d,%d,%d,%d]", t, cv->n, cv->h, cv->w, cv->c);
  snprintf(y, sizeof y, "%s[%d,%d,%d,%d]", t, cv->n, cv->h, cv->w, cv->o);
  snprintf(w, sizeof w, "%s[3,3,%d,%d]", t, cv->c, cv->o);
  snprintf(path, np, "/tmp/bench_libs_%d_XXXXXX.hlo", (int)getpid());
  int fd = mkstemps(path, 4);
  if (fd < 0) return 1;
  FILE *f = fdopen(fd, "w");
  if (!f) return 1;
  fprintf(f, "HloModule conv\n\nENTRY main {\n");
  if (cv->kind == 0)
    fprintf(f, "  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT c = %s convolution(a, b), window={size=3x3 pad=1_1x1_1}, "
               "dim_labels=b01f_01io->b01f\n", x, w, y);
  else if (cv->kind == 1)
    fprintf(f, "  a = %s parameter(0)\n  b = %s parameter(1)\n  r = %s reverse(b), dimensions={0,1}\n"
               "  ROOT c = %s convolution(a, r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f\n", y, w, w, x);
  else
    fprintf(f, "  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT c = %s convolution(a, b), window={size=%dx%d pad=1_1x1_1}, "
               "dim_labels=f01b_i01o->01bf\n", x, y, w, cv->h, cv->w);
  fprintf(f, "}\n");
  return fclose(f) != 0;
}

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f32_to_bf16(float f) { /* round to nearest even (finite values only here) */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static cxla_literal *conv_input(cxla_context *ctx, int bf16, const int64_t *dims, uint64_t seed) {
  cxla_literal *l = cxla_literal_create(ctx, bf16 ? CXLA_BF16 : CXLA_F32, 4, dims);
  if (!l) return NULL;
  int64_t n = cxla_literal_element_count(l);
  float *v = falloc(n);
  bu_fill(v, n, seed, -1, 1);
  if (bf16)
    for (int64_t i = 0; i < n; i++) ((uint16_t *)cxla_literal_data(l))[i] = f32_to_bf16(v[i]);
  else memcpy(cxla_literal_data(l), v, (size_t)n * 4);
  free(v);
  return l;
}

typedef struct dnnl_job {
  libs_dnnl_conv *p;
  int threads;
} dnnl_job;

static void dnnl_call(void *p) {
  dnnl_job *j = p;
  omp_set_num_threads(j->threads);
  libs_dnnl_conv_run(j->p);
}

static void conv_shape(cxla_context *ctx, const cshape *s, int bf16, int T) {
  libs_conv cv = s->cv;
  cv.bf16 = bf16;
  if (g_smoke) cv.n = 2;
  int64_t xd[4] = {cv.n, cv.h, cv.w, cv.c}, yd[4] = {cv.n, cv.h, cv.w, cv.o}, wd[4] = {3, 3, cv.c, cv.o};
  const int64_t *d0 = cv.kind == 1 ? yd : xd, *d1 = cv.kind == 2 ? yd : wd, *dout = cv.kind == 0 ? yd : cv.kind == 1 ? xd : wd;
  cxla_literal *in[2] = {conv_input(ctx, bf16, d0, 7), conv_input(ctx, bf16, d1, 8)};
  char path[96], why[160] = "";
  bu_cxla cx, old;
  memset(&cx, 0, sizeof cx);
  memset(&old, 0, sizeof old);
  cx.failed = old.failed = 1;
  if (!in[0] || !in[1] || conv_module(&cv, path, sizeof path)) {
    fprintf(stderr, "bench_libs: cannot make the convolution's module\n");
  } else {
    bu_cxla_open(&old, ctx, path, "--cpu-onednn=off", T, -1, in);
    bu_cxla_open(&cx, ctx, path, "--cpu-onednn=on", T, -1, in);
    unlink(path);
  }
  int64_t nout = dout[0] * dout[1] * dout[2] * dout[3];
  void *dout_mem = falloc(nout);
  dnnl_job dj = {libs_dnnl_conv_make(&cv, cxla_literal_data(in[0]), cxla_literal_data(in[1]), dout_mem, why, sizeof why), T};
  bu_contender ct[3] = {
      {.name = "cxla --cpu-onednn=off", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &old, .fail_flag = &old.failed},
      {.name = "cxla", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &cx, .fail_flag = &cx.failed},
      {.name = "oneDNN", .fn = dnnl_call, .arg = &dj, .failed = !dj.p},
  };
  bu_opts o = {g_rounds, 100, g_sample_ms, 2000};
  if (g_smoke) o.rounds = 1, o.warmup_ms = 0, o.min_sample_ms = 0;
  bu_interleave(ct, 3, &o);
  /* Check both cxla results against oneDNN's (in f32; bf16 results are rounded twice). */
  double err = 0, tol = bf16 ? 0.05 : 2e-3; /* f32 weight gradients sum 1e5 products */
  bu_cxla *mine[2] = {&old, &cx};
  for (int v = 0; v < 2 && dj.p; v++) {
    cxla_literal *hold = NULL;
    double e = NAN;
    if (!mine[v]->failed && !mine[v]->result) bu_cxla_call(mine[v]);
    if (mine[v]->result && cxla_buffer_to_literal(mine[v]->result, &hold) == CXLA_OK) {
      float *ours = falloc(nout), *theirs = falloc(nout);
      for (int64_t i = 0; i < nout; i++) {
        ours[i] = bf16 ? bf16_to_f32(((uint16_t *)cxla_literal_data(hold))[i]) : ((float *)cxla_literal_data(hold))[i];
        theirs[i] = bf16 ? bf16_to_f32(((uint16_t *)dout_mem)[i]) : ((float *)dout_mem)[i];
      }
      e = bu_max_err(ours, theirs, nout, 1.0); /* outputs ~ sqrt(patch)/3: atol 1 */
      free(ours);
      free(theirs);
    }
    cxla_literal_destroy(hold);
    if (!(e <= tol)) printf("  (%s differs from oneDNN: %.2g)\n", ct[v].name, e), g_bad++;
    if (!(e <= err)) err = e;
  }
  double macs = (double)cv.n * cv.h * cv.w * cv.c * cv.o * 9;
  char r1[32], r2[32];
  fmt_ratio(r1, sizeof r1, &ct[0], &ct[1]);
  fmt_ratio(r2, sizeof r2, &ct[0], &ct[2]);
  const char *kinds[3] = {"fwd", "dx", "dW"};
  printf("| %-4s %-3s %3dx%2dx%2dx%2d->%2d | %-24s | %9.1f | %6.1f | %s | %s | %-30s | %.0e |\n", bf16 ? "bf16" : "f32",
         kinds[cv.kind], cv.n, cv.h, cv.w, cv.c, cv.o, s->where, ct[0].median * 1e3, 2 * macs / (ct[0].median * 1e6), r1,
         r2, dj.p ? libs_dnnl_conv_impl(dj.p) : why, err);
  fflush(stdout);
  bu_contenders_free(ct, 3);
  libs_dnnl_conv_free(dj.p);
  free(dout_mem);
  bu_cxla_close(&cx);
  bu_cxla_close(&old);
  for (int i = 0; i < 2; i++) cxla_literal_destroy(in[i]);
}

static void group_convs(int T) {
  cxla_context *ctx = NULL;
  if (cxla_context_create(&ctx) != CXLA_OK) return;
  printf("\nConvolutions (NHWC, HWIO, 3x3 SAME), %d thread%s: cxla's old path (--cpu-onednn=off: im2col + OpenBLAS "
         "for f32, the emitter's loop nest for bf16), its median call (us, GFLOP/s), and the speed of cxla now (oneDNN "
         "on cxla's pool) and of oneDNN called directly (its OpenMP threads) relative to it (old median / median, "
         "best in brackets; > 1: faster)\n\n",
         T, T == 1 ? "" : "s");
  printf("| conv                  | where                    | old cxla us | GFLOP/s | cxla now | oneDNN direct | "
         "oneDNN impl | max rel err |\n|---|---|---|---|---|---|---|---|\n");
  for (int bf16 = 0; bf16 < 2; bf16++)
    for (size_t i = 0; i < sizeof k_convs / sizeof k_convs[0]; i++) conv_shape(ctx, &k_convs[i], bf16, T);
  cxla_context_destroy(ctx);
}

/* ---- training steps: the whole step with oneDNN's convolutions against without ---- */

/* Largest relative difference over every float leaf of two results (tuples walked). */
static double leaf_diff(cxla_literal *a, cxla_literal *b) {
  int n = cxla_literal_tuple_size(a);
  if (n >= 0) {
    double w = 0;
    for (int i = 0; i < n; i++) {
      double e = leaf_diff(cxla_literal_tuple_get(a, i), cxla_literal_tuple_get(b, i));
      if (!(e <= w)) w = e;
    }
    return w;
  }
  double w = 0;
  int64_t cnt = cxla_literal_element_count(a);
  for (int64_t i = 0; i < cnt; i++) {
    double x = cxla_literal_get_f64(a, i), y = cxla_literal_get_f64(b, i), e = fabs(x - y) / (1e-2 + fabs(y));
    if (isnan(x) && isnan(y)) continue; /* random moments: sqrt of a negative v in both */
    if (!(e <= w)) w = e;
  }
  return w;
}

/* A copy of the module at `path` without its input_output_alias (the steps donate their
 * weights; here each call runs on the same inputs), in a temporary file; 0 on success. */
static int undonated(const char *path, char *out, size_t n) {
  size_t len;
  char *t = bu_read_text(path, &len);
  if (!t) return 1;
  char *a = strstr(t, "input_output_alias={");
  if (a) {
    char *p = a + strlen("input_output_alias={");
    for (int depth = 1; *p && depth; p++) depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
    if (*p == ',') p++; /* another attribute follows: drop this one's comma */
    else
      while (a > t && (a[-1] == ' ' || a[-1] == ',')) a--; /* the last one: drop the comma before it */
    memmove(a, p, strlen(p) + 1);
  }
  snprintf(out, n, "/tmp/bench_libs_%d_XXXXXX.hlo", (int)getpid());
  int fd = mkstemps(out, 4);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  int bad = !f || fputs(t, f) < 0;
  if (f && fclose(f) != 0) bad = 1;
  free(t);
  return bad;
}

static void group_steps(int T) {
  static const char *const steps[][2] = {{"bench/hlo/lenet_train_step.hlo", "LeNet Adam step, batch 64"},
                                         {"bench/mem/jax_cnn_step.hlo", "flax CNN Adam step, batch 128 (jax's HLO)"},
                                         {"bench/mem/jax_mlp_step.hlo", "flax MLP 784-512-512-10 Adam step, batch 128"},
                                         {"bench/hlo/mlp.hlo", "MLP 784-128-64-10 forward, batch 128"}};
  cxla_context *ctx = NULL;
  if (cxla_context_create(&ctx) != CXLA_OK) return;
  printf("\nTraining steps, %d thread%s: cxla --cpu-onednn=off (median ms) against on (off median / on median, best "
         "in brackets)\n\n| step | off ms | on, speed-up | max rel diff |\n|---|---|---|---|\n", T, T == 1 ? "" : "s");
  for (int i = 0; i < 4; i++) {
    bu_cxla off, on;
    char path[96];
    if (undonated(steps[i][0], path, sizeof path)) {
      fprintf(stderr, "bench_libs: cannot read %s\n", steps[i][0]);
      g_bad++;
      continue;
    }
    int bad = bu_cxla_open(&off, ctx, path, "--cpu-onednn=off", T, -1, NULL);
    bad |= bu_cxla_open(&on, ctx, path, "--cpu-onednn=on", T, -1, NULL);
    unlink(path);
    if (bad) {
      bu_cxla_close(&off);
      bu_cxla_close(&on);
      g_bad++;
      continue;
    }
    bu_contender ct[2] = {
        {.name = "off", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &off, .fail_flag = &off.failed},
        {.name = "on", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &on, .fail_flag = &on.failed},
    };
    bu_opts o = {g_rounds, 200, 20, 2000};
    if (g_smoke) o.rounds = 1, o.warmup_ms = 0, o.min_sample_ms = 0;
    bu_interleave(ct, 2, &o);
    cxla_literal *la = NULL, *lb = NULL;
    double e = NAN;
    bu_cxla_call(&off);
    bu_cxla_call(&on);
    if (off.result && on.result && cxla_buffer_to_literal(off.result, &la) == CXLA_OK &&
        cxla_buffer_to_literal(on.result, &lb) == CXLA_OK)
      e = leaf_diff(lb, la);
    if (!(e <= 1e-2)) g_bad++; /* Adam divides by sqrt(v): the sums' rounding differences grow */
    char r[32];
    fmt_ratio(r, sizeof r, &ct[0], &ct[1]);
    printf("| %s | %.3f | %s | %.0e |\n", steps[i][1], ct[0].median, r, e);
    fflush(stdout);
    cxla_literal_destroy(la);
    cxla_literal_destroy(lb);
    bu_contenders_free(ct, 2);
    bu_cxla_close(&off);
    bu_cxla_close(&on);
  }
  cxla_context_destroy(ctx);
}

int main(int argc, char **argv) {
  const char *spin = bu_bound_peer_spin(argv);
  const char *threads = "1,2", *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "--threads=", 10)) threads = argv[i] + 10;
    else if (!strncmp(argv[i], "--rounds=", 9)) g_rounds = atoi(argv[i] + 9);
    else if (!strncmp(argv[i], "--only=", 7)) only = argv[i] + 7;
    else if (!strcmp(argv[i], "--smoke")) g_smoke = 1, threads = "2"; /* (before --threads to override) */
    else {
      fprintf(stderr, "usage: %s [--threads=1,2] [--rounds=N] [--only=gemm|conv|steps] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  if (g_rounds < 1) g_rounds = 1;
  cx_rt_blas_tune(); /* the kernels cxla's thread pool would pick (SkylakeX where Debian's picks Prescott) */
  printf("bench_libs: OpenBLAS %s (kernels %s), oneDNN %s, BLIS and libxsmm from Debian; %ld CPUs online, %d rounds; "
         "peers' idle spin: %s\n",
         openblas_get_config(), openblas_get_corename(), libs_dnnl_version(), sysconf(_SC_NPROCESSORS_ONLN), g_rounds, spin);
  for (const char *t = threads; *t;) {
    int T = atoi(t);
    if (T < 1) T = 1;
    if (!only || !strcmp(only, "gemm")) group_gemms(T);
    if (!only || !strcmp(only, "conv")) group_convs(T);
    if (!only || !strcmp(only, "steps")) group_steps(T);
    t = strchr(t, ',');
    if (!t) break;
    t++;
  }
  if (g_bad) fprintf(stderr, "bench_libs: %d results disagree\n", g_bad);
  return g_bad != 0;
}
