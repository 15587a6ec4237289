/* conv_chunks.c — what both convolution paths (conv_im2col.c, conv_wgrad.c) share: the GEMM
 * call, chunks of rows handed to tasks that each own a scratch block, and the chunk size that
 * keeps a chunk's rows in cache yet gives every thread work (rt/conv.h). */
#include <cblas.h>
#include "rt/conv.h"
#include "rt/threadpool.h"

void cx_conv_gemm(const cx_conv_plan *pl, int trans_a, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *b, int64_t ldb, int accumulate, void *c, int64_t ldc) {
  CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  if (pl->type == CXLA_F32)
    cblas_sgemm(CblasRowMajor, ta, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb,
                accumulate ? 1.0f : 0.0f, c, (int)ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)lda, b, (int)ldb,
                accumulate ? 1.0 : 0.0, c, (int)ldc);
}

typedef struct chunk_job {
  cx_conv_chunk_fn fn;
  const void *st;
  int64_t nchunks, scratch_bytes;
  char *scratch;
  void (*init)(const void *st, char *scratch);
  atomic_llong next; /* the next chunk nobody has taken */
} chunk_job;

static void run_tasks(void **args, int64_t begin, int64_t end) {
  chunk_job *j = args[0];
  for (int64_t t = begin; t < end; t++) {
    char *s = j->scratch ? j->scratch + t * j->scratch_bytes : NULL; /* (a 1×1 in place needs none) */
    if (j->init) j->init(j->st, s);
    for (;;) {
      int64_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
      if (c >= j->nchunks) break;
      j->fn(j->st, c, s);
    }
  }
}

void cx_conv_run_chunks(const cx_conv_plan *pl, int tasks, cx_conv_chunk_fn fn, const void *st, int64_t nchunks,
                        char *scratch, int64_t scratch_bytes, void (*init)(const void *st, char *scratch)) {
  chunk_job j = {.fn = fn, .st = st, .nchunks = nchunks, .scratch_bytes = scratch_bytes, .scratch = scratch,
                 .init = init};
  atomic_init(&j.next, 0);
  void *args[1] = {&j};
  cx_threadpool_parallel_for(tasks > 1 ? pl->pool : NULL, run_tasks, args, tasks, 1);
}

int64_t cx_conv_chunk_rows(const cx_conv_plan *pl, double row_mnk, int64_t row_bytes, int64_t total) {
  double small = CX_CONV_SMALL_GEMM_MNK / row_mnk;
  int64_t cache = row_bytes ? CX_CONV_CHUNK_BYTES / row_bytes : total, rows;
  if (cache < CX_CONV_PACKED_ROWS) cache = CX_CONV_PACKED_ROWS;
  if (small >= CX_CONV_PACKED_ROWS || (small >= CX_CONV_MIN_ROWS && pl->blas_threaded)) {
    rows = (int64_t)small < cache ? (int64_t)small : cache;
  } else if (!pl->blas_threaded) {
    /* Packed GEMMs, each packing the other operand (the filter, or W's rows) anew: at least
     * CX_CONV_BIG_ROWS rows to amortise that, as many as a big-mode block when the rows are
     * long (a 3×3×512 filter packed per 16 rows took 2.8 times as long as per block). */
    int64_t block = row_bytes ? CX_CONV_BLOCK_BYTES / row_bytes : total;
    rows = cache > CX_CONV_BIG_ROWS ? cache : block < CX_CONV_BIG_ROWS ? block : CX_CONV_BIG_ROWS;
  } else {
    return 0;
  }
  int64_t balance = (total + pl->threads * CX_CONV_CHUNKS_PER_TASK - 1) / (pl->threads * CX_CONV_CHUNKS_PER_TASK);
  rows = rows < balance ? rows : balance;
  return rows > 1 ? rows : 1;
}

void cx_conv_rows(const cx_conv_plan *pl, int parallel, cx_kernel_fn fn, void **args, int64_t n, int64_t grain) {
  cx_threadpool_parallel_for(parallel ? pl->pool : NULL, fn, args, n, grain > 1 ? grain : 1);
}
