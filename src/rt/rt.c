/* rt.c — the functions JIT code calls (rt/rt.h): parallel_for over the pool, GEMM via
 * OpenBLAS, interpreter fallback, trace spans. A failure anywhere sets rt->status once; every
 * later call of that execution then returns at once, so the sequencer needs no error
 * branches and checks rt->status after its entry function returns. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "core/context.h"
#include "core/trace.h"
#include "ir/metadata.h"

/* OpenBLAS's own, declared here too so that a netlib cblas.h alternative still compiles. */
void openblas_set_num_threads(int num_threads);

/* OpenBLAS runs a GEMM on one thread when m*n*k <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by
 * default, interface/gemm.c); batches of such products are better split across the pool,
 * one single-threaded call per batch element. Bigger ones use OpenBLAS's threads instead. */
#define SMALL_GEMM_MNK 262144.0
/* Work (multiply-adds) a chunk of batched GEMMs should have to be worth a hand-off. */
#define GEMM_CHUNK_MNK 65536

cx_threadpool *cx_rt_pool_create(int nthreads) {
  cx_threadpool *p = cx_threadpool_create(nthreads);
  /* Same count for OpenBLAS, so one big GEMM uses the cores a kernel would. The setting is
   * process-wide: with pools of several sizes, the last one created wins. */
  if (p) openblas_set_num_threads(cx_threadpool_size(p));
  return p;
}

static const char *name_of(const cx_rt *rt, int32_t id, const char *dflt) {
  return rt->names && id >= 0 && rt->names[id] ? rt->names[id] : dflt;
}

/* Records the first failure only; later calls see status != OK and return. */
static void fail(cx_rt *rt, cxla_status s, const char *fmt, ...) CX_PRINTF(3, 4);
static void fail(cx_rt *rt, cxla_status s, const char *fmt, ...) {
  if (rt->status != CXLA_OK) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->errmsg, sizeof rt->errmsg, fmt, ap);
  va_end(ap);
  rt->status = s;
}

cx_trace_args cx_rt_origin_args(const cx_rt *rt, int32_t id) {
  cx_trace_args a = {0};
  const cx_origin *o = rt->origins && id >= 0 ? &rt->origins[id] : NULL;
  if (o && o->op_name[0]) a.skey[a.ns] = "op_name", a.sval[a.ns++] = o->op_name;
  if (o && o->source[0]) a.skey[a.ns] = "source", a.sval[a.ns++] = o->source;
  return a;
}

void cx_rt_parallel_for(cx_rt *rt, cx_kernel_fn fn, void **args, int64_t total, int64_t grain, int32_t id) {
  if (rt->status != CXLA_OK) return;
  if (rt->ctx) cx_context_set_activity(rt->ctx, "running", name_of(rt, id, "kernel"));
  if (!rt->trace) {
    cx_threadpool_parallel_for(rt->pool, fn, args, total, grain);
    return;
  }
  int64_t t0 = cx_trace_now();
  const char *name = name_of(rt, id, "kernel");
  cx_trace_args a = cx_rt_origin_args(rt, id);
  int64_t chunks = cx_threadpool_parallel_for_traced(rt->pool, fn, args, total, grain, rt->trace, name, &a);
  a.n = 2, a.key[0] = "iterations", a.val[0] = total, a.key[1] = "chunks", a.val[1] = chunks;
  cx_trace_add(rt->trace, name, "kernel", t0, cx_trace_now(), &a);
}

/* ---- GEMM ---- */

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
  const char *name = name_of(rt, id, "gemm");
  if (type != CXLA_F32 && type != CXLA_F64 && type != CXLA_C64 && type != CXLA_C128) {
    fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM on %s is not supported (f32, f64, c64 and c128 only)", name,
         cxla_type_name((cxla_type)type) ? cxla_type_name((cxla_type)type) : "an unknown type");
    return;
  }
  /* Row-major leading dimensions: the stored row length of each operand. */
  int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (a_cols > 1 ? a_cols : 1) ||
      ldb < (b_cols > 1 ? b_cols : 1) || ldc < (n > 1 ? n : 1)) {
    fail(rt, CXLA_ERR_INTERNAL, "%s: bad GEMM arguments m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld batch=%lld",
         name, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
         (long long)batch);
    return;
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
    fail(rt, CXLA_ERR_UNSUPPORTED, "%s: GEMM dimension over %d (OpenBLAS takes 32-bit sizes)", name, INT_MAX);
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

/* ---- fallback and spans ---- */

void cx_rt_interp_op(cx_rt *rt, int32_t instr_index, void **args, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = name_of(rt, id, "fallback");
  if (!rt->fallback) {
    fail(rt, CXLA_ERR_INTERNAL, "%s: no interpreter fallback was provided for this executable", name);
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  rt->errmsg[0] = 0;
  int r = rt->fallback(rt->exe, rt->rep, instr_index, args, rt->errmsg, sizeof rt->errmsg);
  if (r != 0) {
    /* A cxla_status passes through; any other non-zero value is a runtime error. */
    rt->status = r > 0 && r <= CXLA_ERR_INTERNAL ? (cxla_status)r : CXLA_ERR_RUNTIME;
    if (!rt->errmsg[0]) snprintf(rt->errmsg, sizeof rt->errmsg, "%s: interpreter fallback failed", name);
  }
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 1, ta.key[0] = "instruction", ta.val[0] = instr_index;
    cx_trace_add(rt->trace, name, "fallback", t0, cx_trace_now(), &ta);
  }
}

/* The sequencer brackets copies and control flow; copies are named "copy..." by it. */
void cx_rt_trace_begin(cx_rt *rt, int32_t id) {
  /* Recorded even after a failure, so that begin/end pairs always match. */
  if (!rt->trace) return;
  const char *name = name_of(rt, id, "step");
  cx_trace_begin(rt->trace, name, strncmp(name, "copy", 4) ? "control" : "copy");
}

void cx_rt_trace_end(cx_rt *rt, int32_t id) {
  (void)id;
  if (rt->trace) cx_trace_end(rt->trace);
}
