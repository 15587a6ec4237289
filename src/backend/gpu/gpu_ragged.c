/* gpu_ragged.c — ragged-dot on cuBLAS: the canonical form passes/ragged_dot_lowering.c gives
 * (rt/ragged_dot.c's sizes and rules: a group is [start, start + size) clipped to the ragged
 * dimension, rows in no group stay zero or add nothing), one GEMM per group accumulated into
 * the zeroed result. The groups' extents are data: the step reads group_sizes back to the
 * host (it waits for the stream) and then issues the GEMMs. A row-major C (m x n) += op(A) B
 * is cuBLAS's column-major C^T += B^T op(A)^T: its A is our B, its B our A. */
#include <limits.h>
#include "backend/gpu/gpu_state.h"

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

/* group g's rows [*lo, *hi) of the ragged dimension (r of them) in one group_sizes row */
static int range(const int64_t *row, int64_t g, int64_t r, int64_t *lo, int64_t *hi) {
  int64_t start = 0;
  for (int64_t i = 0; i < g; i++) start = sat_add(start, row[i]);
  int64_t end = sat_add(start, row[g]);
  *lo = start < 0 ? 0 : start;
  *hi = end > r ? r : end;
  return *lo < *hi;
}

typedef struct rcall {
  gpu_state *st;
  int t;
  size_t es;
  const char *name;
  cxla_context *ctx;
} rcall;

/* c (m x n row-major) += op(a) b, a m x k or (ta) k x m, b k x n */
static cxla_status gemm(const rcall *c, int ta, int64_t m, int64_t n, int64_t k, CUdeviceptr a, CUdeviceptr b,
                        CUdeviceptr out) {
  static const double one_d[2] = {1, 0};
  static const float one_f[2] = {1, 0};
  if (!m || !n) return CXLA_OK;
  const void *one = (c->t & 1) ? (const void *)one_d : one_f;
  int r = c->st->sv->gemm[c->t](c->st->blas_handle, CX_BLAS_OP_N, ta ? CX_BLAS_OP_T : CX_BLAS_OP_N, (int)n, (int)m,
                                (int)k, one, (void *)(uintptr_t)b, (int)n, (void *)(uintptr_t)a,
                                (int)(ta ? m : (k > 1 ? k : 1)), one, (void *)(uintptr_t)out, (int)n);
  return r ? cx_solver_error(c->ctx, r, c->name) : CXLA_OK;
}

cxla_status cx_gpu_ragged_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *p) {
  const cx_gpu_step *s = &st->prog.steps[step];
  const int64_t *z = s->ragged;
  int64_t B = z[0], X = z[1], R = z[2], Y = z[3], K = z[4], N = z[5], G = z[6];
  rcall c = {.st = st, .t = cx_solver_type((cxla_type)s->nbranch), .es = (size_t)cxla_type_size((cxla_type)s->nbranch),
             .name = s->in->name ? s->in->name : "ragged-dot", .ctx = ctx};
  int64_t nout = s->sel ? G * B * K * N : B * X * R * Y * N;
  const cx_cuda *cu = st->cu;
  CUresult e = nout ? cu->MemsetD8Async(p[0], 0, (size_t)nout * c.es, stream) : 0;
  if (e) return cx_cuda_error(ctx, cu, e, "cuMemsetD8Async");
  if (!B || !X || !G) return CXLA_OK;
  int r = st->sv->BlasSetStream(st->blas_handle, stream);
  if (r) return cx_solver_error(ctx, r, "cublasSetStream");
  int64_t *gs = cx_malloc(sizeof *gs * (size_t)(B * X * G));
  if (!gs) return cx_oom(ctx);
  if ((e = cu->StreamSynchronize(stream)) || (e = cu->MemcpyDtoH(gs, p[3], sizeof *gs * (size_t)(B * X * G)))) {
    cx_free(gs);
    return cx_cuda_error(ctx, cu, e, "reading a ragged-dot's group sizes");
  }
  cxla_status res = CXLA_OK;
  int64_t lo, hi;
  if (!s->sel) { /* rows of group g times rhs[g, b] */
    for (int64_t bx = 0; bx < B * X && res == CXLA_OK; bx++)
      for (int64_t g = 0; g < G && res == CXLA_OK; g++) {
        if (!range(gs + bx * G, g, R, &lo, &hi)) continue;
        int64_t off = (bx * R + lo) * Y;
        res = gemm(&c, 0, (hi - lo) * Y, N, K, p[1] + (CUdeviceptr)((size_t)(off * K) * c.es),
                   p[2] + (CUdeviceptr)((size_t)((g * B + bx / X) * K * N) * c.es),
                   p[0] + (CUdeviceptr)((size_t)(off * N) * c.es));
      }
  } else { /* result[g, b] sums group g's stretch of every X block of batch b */
    for (int64_t blk = 0; blk < G * B && res == CXLA_OK; blk++) {
      int64_t g = blk / B, b = blk % B;
      for (int64_t x = 0; x < X && res == CXLA_OK; x++) {
        int64_t bx = b * X + x;
        if (!range(gs + bx * G, g, R, &lo, &hi)) continue;
        int64_t off = (bx * R + lo) * Y;
        res = gemm(&c, 1, K, N, (hi - lo) * Y, p[1] + (CUdeviceptr)((size_t)(off * K) * c.es),
                   p[2] + (CUdeviceptr)((size_t)(off * N) * c.es), p[0] + (CUdeviceptr)((size_t)(blk * K * N) * c.es));
      }
    }
  }
  cx_free(gs);
  return res;
}
