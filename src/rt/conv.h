/* conv.h — what the two halves of the convolution routine share: conv_im2col.c (the entry
 * point, and convolutions with more output pixels than patch elements, one patch per row) and
 * conv_wgrad.c (weight-gradient-shaped ones, whose contraction over batch and image is the
 * long side: one patch element per row).
 *
 * Both cut the work into chunks that run on the thread pool. A chunk gathers its slice of the
 * patch matrix into its task's own scratch (a few hundred KiB, so it stays in cache) and
 * multiplies it with one single-threaded GEMM per feature group; no matrix is ever bigger
 * than a chunk, so the time is linear in the batch. OpenBLAS runs a GEMM on its own threads
 * when m*n*k > SMALL_GEMM_MNK; two pool threads doing that at once contend for those threads
 * (about a fifth of the throughput, measured), so while OpenBLAS is threaded a chunk's GEMMs
 * stay under that size, and a convolution too big for that runs as one task ("big mode"):
 * chunks of a few MiB, gathered in parallel, each multiplied by one threaded GEMM. */
#ifndef CX_RT_CONV_H
#define CX_RT_CONV_H
#include <string.h>
#include "rt/rt.h"

/* OpenBLAS runs a GEMM on one thread when m*n*k <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by
 * default, interface/gemm.c); rt/gemm.c relies on the same bound. */
#define CX_CONV_SMALL_GEMM_MNK 262144.0
/* Scratch a pool task gathers a chunk into: well inside a core's L2. */
#define CX_CONV_CHUNK_BYTES (256 << 10)
/* Big mode: the patch-matrix block one threaded GEMM multiplies. */
#define CX_CONV_BLOCK_BYTES (4 << 20)
/* Fewer GEMM rows (or contraction rows) than this per chunk: big mode instead. */
#define CX_CONV_MIN_ROWS 4
/* Rows that make a GEMM with enough work for OpenBLAS's packing to pay, when chunks of a
 * small GEMM (no packing at all: its small-matrix kernels) would have fewer. */
#define CX_CONV_PACKED_ROWS 16
/* Rows of a chunk whose GEMM packs its other operand anew each call (OpenBLAS on one thread,
 * too big for the small-matrix kernels). */
#define CX_CONV_BIG_ROWS 256
/* Chunks per task, so that a task slowed by the OS does not hold the others up. */
#define CX_CONV_CHUNKS_PER_TASK 4

typedef struct cx_conv_plan {
  cx_conv2d_desc d;             /* one batch group's convolution (batch_groups is 1 here) */
  int32_t type;                 /* CXLA_F32 or CXLA_F64 */
  int64_t es;                   /* element size in bytes */
  const char *in, *filt;
  char *out;
  int64_t cg, og, Kg, K, P;     /* features per group in/out, patch length per group and in all, output pixels */
  cx_threadpool *pool;
  int threads;                  /* the pool's threads (1 without one) */
  int blas_threaded;            /* OpenBLAS uses threads of its own for a big GEMM */
} cx_conv_plan;

/* Input coordinate of window offset k at output position o along one spatial dim, or -1
 * when it falls in padding or between dilated input elements. */
static inline int64_t cx_conv_in_coord(int64_t o, int64_t k, int64_t stride, int64_t pad_lo, int64_t ldil,
                                       int64_t rdil, int64_t size) {
  int64_t x = o * stride - pad_lo + k * rdil;
  if (ldil != 1) { /* (divisions are slow: only for base-dilated convolutions) */
    if (x < 0 || x % ldil) return -1;
    x /= ldil;
  }
  return x >= 0 && x < size ? x : -1;
}

/* For the per-element loops: instantiated once per element size (CX_CONV_BY_SIZE), so that
 * the copies below become single moves. */
#define CX_CONV_INLINE static inline __attribute__((always_inline))
/* fn(args, begin, end, es) with es a constant 4 or 8. */
#define CX_CONV_BY_SIZE(fn, es, args, begin, end) \
  ((es) == 4 ? fn(args, begin, end, 4) : fn(args, begin, end, 8))

/* One element of size es (4 or 8) from src to dst (fixed-size copies compile to moves). */
static inline void cx_conv_put(char *dst, const char *src, int64_t es) {
  if (es == 4) {
    uint32_t v;
    memcpy(&v, src, 4);
    memcpy(dst, &v, 4);
  } else {
    uint64_t v;
    memcpy(&v, src, 8);
    memcpy(dst, &v, 8);
  }
}

/* n elements from src, sst elements apart, to dst (dense). */
static inline void cx_conv_copy(char *dst, const char *src, int64_t n, int64_t sst, int64_t es) {
  if (sst == 1 && n * es > 64) {
    memcpy(dst, src, (size_t)(n * es));
    return;
  }
  for (int64_t i = 0; i < n; i++) cx_conv_put(dst + i * es, src + i * sst * es, es);
}

static inline void cx_conv_zero(char *dst, int64_t n, int64_t es) {
  if (n * es > 64) memset(dst, 0, (size_t)(n * es));
  else
    for (int64_t i = 0; i < n * es; i += 4) memset(dst + i, 0, 4);
}

/* dst[i] = row[(x0 + i) * st] for i < n where 0 <= x0 + i < size, zero elsewhere: a run of
 * consecutive input coordinates, the padding around it zero-filled. */
static inline void cx_conv_run(char *dst, const char *row, int64_t x0, int64_t n, int64_t size, int64_t st,
                               int64_t es) {
  int64_t lo = x0 < 0 ? -x0 : 0, hi = size - x0;
  if (lo > n) lo = n;
  if (hi > n) hi = n;
  if (hi < lo) hi = lo;
  cx_conv_zero(dst, lo, es);
  cx_conv_copy(dst + lo * es, row + (x0 + lo) * st * es, hi - lo, st, es);
  cx_conv_zero(dst + hi * es, n - hi, es);
}

/* C (m×n, ldc) = op(A)·B, plus C when accumulate; op(A) is A (m×k, lda) or, with trans_a,
 * the transpose of A (k×m, lda). Row-major, element type pl->type. */
void cx_conv_gemm(const cx_conv_plan *pl, int trans_a, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *b, int64_t ldb, int accumulate, void *c, int64_t ldc);

/* A chunk of work: chunk index, and the scratch of the task running it. */
typedef void (*cx_conv_chunk_fn)(const void *st, int64_t chunk, char *scratch);
/* Runs fn on chunks [0, nchunks) with `tasks` tasks on the pool (1: on this thread), each
 * taking the next chunk until none is left; task t's scratch is scratch + t * scratch_bytes,
 * and before its first chunk it calls init (if any) on it. */
void cx_conv_run_chunks(const cx_conv_plan *pl, int tasks, cx_conv_chunk_fn fn, const void *st, int64_t nchunks,
                        char *scratch, int64_t scratch_bytes, void (*init)(const void *st, char *scratch));
/* Rows per chunk of `total` rows whose GEMM does row_mnk multiply-adds and whose scratch
 * takes row_bytes per row: GEMMs under SMALL_GEMM_MNK (they run on one thread, and OpenBLAS's
 * small-matrix kernels skip packing: measured a third faster here than cache-sized chunks),
 * scratch within CHUNK_BYTES, enough chunks for every task. When a row's GEMM is too big for
 * that and OpenBLAS runs on one thread, at least BIG_ROWS (up to a BLOCK_BYTES block). 0: big
 * mode. */
int64_t cx_conv_chunk_rows(const cx_conv_plan *pl, double row_mnk, int64_t row_bytes, int64_t total);
/* fn(args, 0, n) in parallel on the pool when `parallel`, else inline on this thread. */
void cx_conv_rows(const cx_conv_plan *pl, int parallel, cx_kernel_fn fn, void **args, int64_t n, int64_t grain);

/* The convolution with contraction rows (conv_wgrad.c): 0, or the error it met (rt->errmsg
 * set by the caller from `why`). */
cxla_status cx_conv_wgrad(const cx_conv_plan *pl, const char **why);

#endif
