/* bench_gemm_pool.c — the flax MLP step's GEMMs split over cxla's pool against the libraries'
 * own threading (issue 20).
 *
 * The flax MLP (784-512-512-10, batch 128; bench/jax_plugin.py) Adam step makes eight f32
 * GEMMs, as cxla's plan calls them (its --trace): forward NN, input gradients NT, weight
 * gradients TN (and, to check a change there, the TN weight gradients of the LeNet, flax CNN and
 * transformer steps of bench/jax_plugin.py). For each, on 2 threads, in interleaved turns (bench_util.c):
 *   cxla       what the step runs: cx_rt_gemm_dnnl or cx_rt_gemm, as the sequencer picks;
 *   OB/pool M  OpenBLAS, C's rows split in two over the pool, one single-threaded call each;
 *   OB/pool N  the same, C's columns;
 *   DN/pool M, DN/pool N  oneDNN's dnnl_sgemm, likewise;
 *   OB/own     OpenBLAS on its own 2 threads (openblas_set_num_threads(2) for the call);
 *   DN/own     dnnl_sgemm on its own OpenMP team of 2;
 *   cxla, idle as cxla, each call after 0.5 ms idle (the pool's workers asleep, as at a step's start);
 *   MM/pool M  oneDNN's matmul primitive (made once per share shape, as a cache would keep it),
 *              C's rows split in two over the pool, each share's operands dense: A's rows as
 *              stored, or (A transposed) its block of columns copied dense first; B whole. A
 *              primitive makes only its own shape's kernels, where dnnl_sgemm makes all of its
 *              on a process's first call (30-45 ms of one core), but oneDNN 2.6's brgemm matmul
 *              takes dense operands only (others go to its gemm:jit, which is dnnl_sgemm);
 * and OpenBLAS and oneDNN on one thread. Prints GFLOP/s of the median (best) call; results are
 * checked against single-threaded OpenBLAS's. --work runs each split's two shares one after the
 * other on the calling thread and times the thread's CPU time: the work a split adds over one
 * call (packing a shared operand twice, smaller blocks), robust to other processes on the
 * cores, which the 2-thread wall-clock figures are not.
 *   build/bench-bin/bench_gemm_pool [--rounds=N] [--sample-ms=MS] [--only=WHERE (a substring)] [--work] [--smoke] */
#include <cblas.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_util.h"
#include "rt/rt.h"
#include "rt/threadpool.h"

int omp_get_max_threads(void);
void omp_set_num_threads(int n);
void openblas_set_num_threads(int n);

typedef struct shape {
  const char *where;
  int m, n, k, ta, tb;
} shape;

static const shape k_shapes[] = {
    {"fwd layer 1", 128, 512, 784, 0, 0}, {"fwd layer 2", 128, 512, 512, 0, 0},
    {"fwd logits", 128, 10, 512, 0, 0},   {"dx logits", 128, 512, 10, 0, 1},
    {"dx layer 2", 128, 512, 512, 0, 1},  {"dW layer 1", 784, 512, 128, 1, 0},
    {"dW layer 2", 512, 512, 128, 1, 0},  {"dW logits", 512, 10, 128, 1, 0},
    /* other steps' weight gradients (TN, C at least 64 wide), to check a change of library there */
    {"LeNet dW", 1568, 128, 64, 1, 0},    {"CNN dW", 1568, 128, 128, 1, 0},
    {"tfm dW up", 128, 512, 1024, 1, 0},  {"tfm dW down", 512, 128, 1024, 1, 0},
    {"tfm dW qkv", 128, 384, 1024, 1, 0},
    /* both operands transposed (TT), at the steps' shapes with C at least 64 wide: no step
     * makes one (dot-orient turns transpose(dot) of that form into NN), but a dot written so
     * does, and it was of oneDNN's class unmeasured (docs/design/cpu-backend.md) */
    {"TT fwd layer 1", 128, 512, 784, 1, 1}, {"TT fwd layer 2", 128, 512, 512, 1, 1},
    {"TT dW layer 1", 784, 512, 128, 1, 1},  {"TT dW layer 2", 512, 512, 128, 1, 1},
    {"TT m=256", 256, 512, 512, 1, 1},       {"TT LeNet dW", 1568, 128, 64, 1, 1},
    {"TT CNN dx", 128, 1568, 128, 1, 1},     {"TT tfm up", 1024, 512, 128, 1, 1},
    {"TT tfm proj", 1024, 128, 128, 1, 1},   {"TT tfm dW up", 128, 512, 1024, 1, 1},
};

enum { C_CXLA, C_OB1, C_DN1, C_OBM, C_OBN, C_DNM, C_DNN, C_OBOWN, C_DNOWN, C_COLD, C_MMM, NC };
static const char *const k_names[NC] = {"cxla", "OB 1thr", "DN 1thr", "OB/pool M", "OB/pool N",
                                        "DN/pool M", "DN/pool N", "OB/own", "DN/own", "cxla, idle",
                                        "MM/pool M"};

/* A matmul primitive for one share of rows (its scratchpad and, with A transposed, the dense
 * copy of A's block beside it). */
typedef struct mm_share {
  dnnl_primitive_t prim;
  dnnl_memory_desc_t a, b, c;
  const dnnl_memory_desc_t *scr_md;
  dnnl_primitive_desc_t pd;
  void *scr;
  float *adense;
} mm_share;

typedef struct gcall {
  int kind, dnnl; /* dnnl: oneDNN (else OpenBLAS); kind: contender */
  int m, n, k, ta, tb, lda, ldb, ldc;
  const float *a, *b;
  float *c;
  cx_threadpool *pool;
  cx_rt *rt;
  mm_share mm[2]; /* MM/pool M */
} gcall;

static dnnl_engine_t g_eng;

static int mm_setup(mm_share *q, const gcall *g, int rows) {
  dnnl_dims_t da = {rows, g->k}, db = {g->k, g->n}, dc = {rows, g->n};
  dnnl_dims_t sa = {g->ta ? 1 : g->k, g->ta ? rows : 1}, sb = {g->tb ? 1 : g->ldb, g->tb ? g->ldb : 1}, sc = {g->n, 1};
  dnnl_primitive_attr_t at = NULL;
  dnnl_matmul_desc_t md;
  int ok = (g_eng || dnnl_engine_create(&g_eng, dnnl_cpu, 0) == dnnl_success) &&
           dnnl_memory_desc_init_by_strides(&q->a, 2, da, dnnl_f32, sa) == dnnl_success &&
           dnnl_memory_desc_init_by_strides(&q->b, 2, db, dnnl_f32, sb) == dnnl_success &&
           dnnl_memory_desc_init_by_strides(&q->c, 2, dc, dnnl_f32, sc) == dnnl_success &&
           dnnl_matmul_desc_init(&md, &q->a, &q->b, NULL, &q->c) == dnnl_success &&
           dnnl_primitive_attr_create(&at) == dnnl_success &&
           dnnl_primitive_attr_set_scratchpad_mode(at, dnnl_scratchpad_mode_user) == dnnl_success &&
           dnnl_primitive_desc_create(&q->pd, &md, at, g_eng, NULL) == dnnl_success &&
           dnnl_primitive_create(&q->prim, q->pd) == dnnl_success;
  if (at) dnnl_primitive_attr_destroy(at);
  if (!ok) return 0;
  q->scr_md = dnnl_primitive_desc_query_md(q->pd, dnnl_query_scratchpad_md, 0);
  size_t ss = q->scr_md ? dnnl_memory_desc_get_size(q->scr_md) : 0;
  q->scr = malloc(ss ? ss : 1);
  q->adense = g->ta ? malloc(sizeof(float) * (size_t)rows * g->k) : NULL;
  return q->scr && (!g->ta || q->adense);
}

static void mm_free(mm_share *q) {
  if (q->prim) dnnl_primitive_destroy(q->prim);
  if (q->pd) dnnl_primitive_desc_destroy(q->pd);
  free(q->scr);
  free(q->adense);
}

/* Rows [r0, r1) of C by q's primitive on this thread. */
static void mm_part(const gcall *g, mm_share *q, int r0, int r1) {
  const float *a = g->a + (int64_t)r0 * g->lda;
  if (g->ta) { /* A's columns r0..r1, stored [k, m]: copied to a dense [k, rows] block */
    for (int kk = 0; kk < g->k; kk++)
      memcpy(q->adense + (int64_t)kk * (r1 - r0), g->a + (int64_t)kk * g->lda + r0, sizeof(float) * (size_t)(r1 - r0));
    a = q->adense;
  }
  dnnl_stream_t st;
  dnnl_memory_t ma, mb, mc, ms = NULL;
  if (dnnl_stream_create(&st, g_eng, dnnl_stream_default_flags) != dnnl_success) return;
  dnnl_memory_create(&ma, &q->a, g_eng, (void *)a);
  dnnl_memory_create(&mb, &q->b, g_eng, (void *)g->b);
  dnnl_memory_create(&mc, &q->c, g_eng, g->c + (int64_t)r0 * g->ldc);
  if (q->scr_md) dnnl_memory_create(&ms, q->scr_md, g_eng, q->scr);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, ms}};
  dnnl_primitive_execute(q->prim, st, ms ? 4 : 3, args);
  dnnl_stream_wait(st);
  dnnl_memory_destroy(ma), dnnl_memory_destroy(mb), dnnl_memory_destroy(mc);
  if (ms) dnnl_memory_destroy(ms);
  dnnl_stream_destroy(st);
}

/* One call on this thread: rows [r0, r1) and columns [c0, c1) of C. */
static void part(const gcall *g, int r0, int r1, int c0, int c1) {
  const float *a = g->a + (g->ta ? r0 : (int64_t)r0 * g->lda);
  const float *b = g->b + (g->tb ? (int64_t)c0 * g->ldb : c0);
  float *c = g->c + (int64_t)r0 * g->ldc + c0;
  if (g->dnnl)
    dnnl_sgemm(g->ta ? 'T' : 'N', g->tb ? 'T' : 'N', r1 - r0, c1 - c0, g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f, c,
               g->ldc);
  else
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans, r1 - r0, c1 - c0,
                g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f, c, g->ldc);
}

/* Pool task: share s of 2, by rows (args[1] NULL) or columns. */
static void share(void **args, int64_t begin, int64_t end) {
  const gcall *g = args[0];
  omp_set_num_threads(1);
  for (int64_t s = begin; s < end; s++) {
    if (g->kind == C_MMM) mm_part(g, (mm_share *)&g->mm[s], (int)(g->m * s / 2), (int)(g->m * (s + 1) / 2));
    else if (!args[1]) part(g, (int)(g->m * s / 2), (int)(g->m * (s + 1) / 2), 0, g->n);
    else part(g, 0, g->m, (int)(g->n * s / 2), (int)(g->n * (s + 1) / 2));
  }
}

static int g_work; /* --work: each contender's CPU time on one thread */

/* After each call of "cxla, idle": the pool's workers stop spinning (200 us, --cpu-idle-spin-us)
 * and sleep, as they do when the caller's framework takes longer than that between two steps. */
static void idle(void *arg) {
  (void)arg;
  usleep(500); /* longer than the spin */
}

static void run(void *arg) {
  gcall *g = arg;
  void *args[2] = {g, NULL};
  switch (g->kind) {
  case C_CXLA: case C_COLD:
    if (cx_rt_gemm_dnnl_suits(CXLA_F32, g->ta, g->tb, g->m, g->n, g->k, 1))
      cx_rt_gemm_dnnl(g->rt, CXLA_F32, g->ta, g->tb, g->m, g->n, g->k, g->a, g->lda, 0, g->b, g->ldb, 0, g->c, g->ldc,
                      0, 1, 0);
    else
      cx_rt_gemm(g->rt, CXLA_F32, g->ta, g->tb, g->m, g->n, g->k, g->a, g->lda, 0, g->b, g->ldb, 0, g->c, g->ldc, 0, 1,
                 0);
    break;
  case C_OB1: case C_DN1: omp_set_num_threads(1), part(g, 0, g->m, 0, g->n); break;
  case C_OBN: case C_DNN: args[1] = g; /* fall through */
  case C_OBM: case C_DNM: case C_MMM:
    if (g_work) share(args, 0, 2); /* both shares on this thread: their CPU time */
    else cx_threadpool_parallel_for(g->pool, share, args, 2, 1);
    break;
  case C_OBOWN:
    openblas_set_num_threads(2);
    part(g, 0, g->m, 0, g->n);
    openblas_set_num_threads(1);
    break;
  default: omp_set_num_threads(2), part(g, 0, g->m, 0, g->n), omp_set_num_threads(1); break;
  }
}

static float *fill(int64_t n, uint64_t seed) {
  float *p = malloc((size_t)n * sizeof *p);
  if (!p) {
    fprintf(stderr, "bench_gemm_pool: out of memory\n");
    exit(1);
  }
  bu_fill(p, n, seed, -1, 1);
  return p;
}

int main(int argc, char **argv) {
  const char *spin = bu_bound_peer_spin(argv);
  int rounds = 15;
  double sample_ms = 5;
  const char *only = NULL;
  double warmup_ms = 100;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "--rounds=", 9)) rounds = atoi(argv[i] + 9);
    else if (!strncmp(argv[i], "--sample-ms=", 12)) sample_ms = atof(argv[i] + 12);
    else if (!strncmp(argv[i], "--only=", 7)) only = argv[i] + 7;
    else if (!strcmp(argv[i], "--work")) g_work = 1;
    else if (!strcmp(argv[i], "--smoke")) rounds = 1, sample_ms = 0.1, warmup_ms = 0; /* tests/bench/smoke.sh */
    else {
      fprintf(stderr, "usage: bench_gemm_pool [--rounds=N] [--sample-ms=MS] [--only=WHERE] [--work] [--smoke]\n");
      return 2;
    }
  }
  cx_threadpool *pool = cx_rt_pool_create(2); /* also OpenBLAS on one thread */
  if (!pool || cx_threadpool_size(pool) != 2) {
    fprintf(stderr, "bench_gemm_pool: no pool of 2 threads\n");
    return 1;
  }
  cx_rt rt = {.pool = pool};
  bu_use_thread_clock(g_work);
  int bad = 0;
  printf("flax MLP step GEMMs, %s, GFLOP/s of the median call (best in brackets); peers' idle spin: %s\n%-12s %-14s",
         g_work ? "one thread's CPU time (--work)" : "2 threads", spin, "where", "m x n x k op");
  for (int c = 0; c < NC; c++) printf(" %-15s", k_names[c]);
  printf("\n");
  double total_ms[NC] = {0};
  for (size_t s = 0; s < sizeof k_shapes / sizeof *k_shapes; s++) {
    const shape *sh = &k_shapes[s];
    if (only && !strstr(sh->where, only)) continue;
    int ar = sh->ta ? sh->k : sh->m, ac = sh->ta ? sh->m : sh->k, br = sh->tb ? sh->n : sh->k,
        bc = sh->tb ? sh->k : sh->n;
    float *a = fill((int64_t)ar * ac, 1 + s), *b = fill((int64_t)br * bc, 100 + s), *cs[NC];
    gcall g[NC];
    bu_contender ct[NC];
    memset(ct, 0, sizeof ct);
    for (int c = 0; c < NC; c++) {
      cs[c] = calloc((size_t)sh->m * sh->n, sizeof(float));
      if (!cs[c]) return 1;
      g[c] = (gcall){c, c == C_DN1 || c == C_DNM || c == C_DNN || c == C_DNOWN, sh->m, sh->n, sh->k, sh->ta, sh->tb,
                     ac, bc, sh->n, a, b, cs[c], pool, &rt};
      ct[c] = (bu_contender){.name = k_names[c], .fn = run, .after = c == C_COLD ? idle : NULL, .arg = &g[c]};
      if (c == C_MMM && !(mm_setup(&g[c].mm[0], &g[c], sh->m / 2) && mm_setup(&g[c].mm[1], &g[c], sh->m - sh->m / 2))) {
        fprintf(stderr, "bench_gemm_pool: no oneDNN matmul for %s\n", sh->where);
        bad = 1;
        ct[c].failed = 1;
      }
      /* --work: the splits' shares one after the other, against one call, in thread CPU time */
      ct[c].failed = ct[c].failed || (g_work && (c == C_CXLA || c == C_OBOWN || c == C_DNOWN || c == C_COLD));
    }
    bu_opts o = {rounds, warmup_ms, sample_ms, warmup_ms > 0 ? 1000 : 0};
    bu_interleave(ct, NC, &o);
    double fl = 2.0 * sh->m * sh->n * sh->k;
    printf("%-12s %4dx%3dx%3d %c%c", sh->where, sh->m, sh->n, sh->k, sh->ta ? 'T' : 'N', sh->tb ? 'T' : 'N');
    for (int c = 0; c < NC; c++) {
      double err = 0;
      for (int64_t i = 0; i < (int64_t)sh->m * sh->n; i++) err = fmax(err, fabs(cs[c][i] - cs[C_OB1][i]));
      if (!ct[c].failed && (err > 1e-5 * sh->k || rt.status != CXLA_OK)) bad = 1;
      if (ct[c].failed) printf(" %6s (%6s)", "-", "-");
      else printf(" %6.0f (%6.0f)", fl / ct[c].median * 1e-6, fl / ct[c].best * 1e-6);
      if (!ct[c].failed) total_ms[c] += ct[c].median;
    }
    printf("\n");
    bu_contenders_free(ct, NC);
    for (int q = 0; q < 2; q++) mm_free(&g[C_MMM].mm[q]);
    for (int c = 0; c < NC; c++) free(cs[c]);
    free(a), free(b);
  }
  printf("%-27s", "sum of medians (us)");
  for (int c = 0; c < NC; c++) {
    if (total_ms[c] > 0) printf(" %-15.0f", total_ms[c] * 1e3);
    else printf(" %-15s", "-"); /* not run (--work) */
  }
  printf("\n");
  cx_threadpool_destroy(pool);
  if (bad) fprintf(stderr, "bench_gemm_pool: a result disagrees with OpenBLAS's\n");
  return bad;
}
