/* ragged_dot.c — the ragged-dot routine compiled code calls (cx_rt_ragged_dot) for a
 * ragged-dot in the canonical form passes/ragged_dot_lowering.c gives it (backend/cpu/ragged_dot.c
 * emits the call): one GEMM per group through OpenBLAS, accumulated into a zeroed result,
 * over the contiguous rows the group covers. A group is [start, start + size) with start the
 * sum of the sizes before it, clipped to the ragged dimension, as the interpreter reads it;
 * rows in no group stay zero (non-contracting) or add nothing (contracting). Integers (as s64)
 * are summed by plain loops, wrapping as the interpreter's do. The pool runs independent result
 * blocks at once: each (batch, X) block (non-contracting), each (group, batch) one (contracting). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "core/trace.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "util/util.h"

typedef struct rd_job {
  int32_t type, contracting;
  int64_t B, X, R, Y, K, N, G;
  const char *a, *b;
  const int64_t *gs;
  char *c;
  size_t es;
} rd_job;

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Group g's rows [*lo, *hi) of the ragged dimension (R of them) in one group_sizes row. */
static int range(const rd_job *j, const int64_t *row, int64_t g, int64_t *lo, int64_t *hi) {
  int64_t start = 0;
  for (int64_t i = 0; i < g; i++) start = sat_add(start, row[i]);
  int64_t end = sat_add(start, row[g]);
  *lo = start < 0 ? 0 : start;
  *hi = end > j->R ? j->R : end;
  return *lo < *hi;
}

/* C (m x n, ldc n) += op(A) B: A is m x k (lda k), or with ta k x m (lda m); B is k x n. */
static void gemm(const rd_job *j, int ta, int64_t m, int64_t n, int64_t k, const char *a, const char *b, char *c) {
  enum CBLAS_TRANSPOSE t = ta ? CblasTrans : CblasNoTrans;
  int lda = (int)(ta ? m : k);
  static const float one_c[2] = {1, 0};
  static const double one_z[2] = {1, 0};
  switch (j->type) {
  case CXLA_F32: cblas_sgemm(CblasRowMajor, t, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, (const float *)a, lda, (const float *)b, (int)n, 1.0f, (float *)c, (int)n); return;
  case CXLA_F64: cblas_dgemm(CblasRowMajor, t, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, (const double *)a, lda, (const double *)b, (int)n, 1.0, (double *)c, (int)n); return;
  case CXLA_C64: cblas_cgemm(CblasRowMajor, t, CblasNoTrans, (int)m, (int)n, (int)k, one_c, a, lda, b, (int)n, one_c, c, (int)n); return;
  case CXLA_C128: cblas_zgemm(CblasRowMajor, t, CblasNoTrans, (int)m, (int)n, (int)k, one_z, a, lda, b, (int)n, one_z, c, (int)n); return;
  default: break;
  }
  /* s64: two's complement sums without undefined behaviour */
  const uint64_t *A = (const uint64_t *)a, *Bm = (const uint64_t *)b;
  uint64_t *C = (uint64_t *)c;
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      uint64_t av = ta ? A[p * m + i] : A[i * k + p];
      for (int64_t q = 0; q < n; q++) C[i * n + q] += av * Bm[p * n + q];
    }
}

/* Kernel ABI: args[0] is the job; the range is (batch, X) blocks or (group, batch) blocks. */
static void blocks(void **args, int64_t begin, int64_t end) {
  const rd_job *j = args[0];
  size_t es = j->es;
  for (int64_t blk = begin; blk < end; blk++) {
    int64_t lo, hi;
    if (!j->contracting) { /* rows of group g times rhs[g, b] */
      int64_t b = blk / j->X, bx = blk;
      const int64_t *row = j->gs + bx * j->G;
      for (int64_t g = 0; g < j->G; g++) {
        if (!range(j, row, g, &lo, &hi)) continue;
        int64_t off = (bx * j->R + lo) * j->Y;
        gemm(j, 0, (hi - lo) * j->Y, j->N, j->K, j->a + (size_t)(off * j->K) * es,
             j->b + (size_t)((g * j->B + b) * j->K * j->N) * es, j->c + (size_t)(off * j->N) * es);
      }
    } else { /* result[g, b] sums group g's stretch of every X block of batch b */
      int64_t g = blk / j->B, b = blk % j->B;
      char *c = j->c + (size_t)(blk * j->K * j->N) * es;
      for (int64_t x = 0; x < j->X; x++) {
        int64_t bx = b * j->X + x;
        if (!range(j, j->gs + bx * j->G, g, &lo, &hi)) continue;
        int64_t off = (bx * j->R + lo) * j->Y;
        gemm(j, 1, j->K, j->N, (hi - lo) * j->Y, j->a + (size_t)(off * j->K) * es, j->b + (size_t)(off * j->N) * es, c);
      }
    }
  }
}

void cx_rt_ragged_dot(cx_rt *rt, int32_t type, int32_t contracting, const int64_t *sizes, const void *lhs,
                      const void *rhs, const void *group_sizes, void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "ragged-dot";
  rd_job j = {.type = type, .contracting = contracting, .B = sizes[0], .X = sizes[1], .R = sizes[2], .Y = sizes[3],
              .K = sizes[4], .N = sizes[5], .G = sizes[6], .a = lhs, .b = rhs, .gs = group_sizes, .c = out,
              .es = cxla_type_size((cxla_type)type)};
  int64_t rows = 0, nout = 0, nblocks = contracting ? j.G * j.B : j.B * j.X;
  int big = __builtin_mul_overflow(j.R, j.Y, &rows) || rows > INT_MAX || j.K > INT_MAX || j.N > INT_MAX ||
            __builtin_mul_overflow(contracting ? j.G * j.B * j.K : j.B * j.X * rows, j.N, &nout);
  if (big) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: a group's GEMM is larger than BLAS's int sizes", name);
    rt->status = CXLA_ERR_UNSUPPORTED;
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  memset(out, 0, (size_t)nout * j.es);
  void *args[1] = {&j};
  if (nblocks > 0) cx_threadpool_parallel_for(rt->pool, blocks, args, nblocks, 1);
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 2, a.key[0] = "groups", a.key[1] = "blocks";
    a.val[0] = j.G, a.val[1] = nblocks;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
