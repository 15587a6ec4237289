/* rt.h — the run-time routines: functions that JIT-compiled code calls while it runs, and the
 * per-execution state they receive. Everything here has C linkage and is resolved by the JIT
 * by name; the code that emits the calls is in backend/cpu (the sequencer), and nothing in
 * src/rt/ uses LLVM or calls above util, core and ir. */
#ifndef CX_RT_H
#define CX_RT_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "cxla.h"
#include "rt/threadpool.h"

/* A called computation (comparator, combiner, reducer) compiled as a scalar function
 * (cx_emit_scalar_fn): p holds the result addresses, then the parameters'. */
typedef void (*cx_scalar_fn)(void **p);

typedef struct cx_trace cx_trace;

/* Per-execution state passed to the sequencer function. */
typedef struct cx_rt {
  cx_threadpool *pool;        /* NULL: run everything on the calling thread */
  cx_trace *trace;            /* NULL unless --trace */
  const char *const *names;   /* kernel / call names by id, for traces */
  const struct cx_origin *origins; /* and their op_name and source line (may be NULL) */
  cxla_context *ctx;          /* told which kernel runs (cxla_context_activity); may be NULL */
  _Atomic int64_t *loop_trips; /* every while-loop iteration adds 1 (never NULL when cx_entry runs) */
  void *exe;                  /* the backend's compiled state, passed to `fallback` */
  /* The device this execution is on and how it reaches the others (core/transport.h). */
  const struct cx_replica *rep;
  /* Runs fallback instruction `index` on the interpreter (provided by the backend) as device
   * rep: operands read from args[nout..], results written to args[0..nout). Returns 0 or sets
   * errmsg. */
  int (*fallback)(void *exe, const struct cx_replica *rep, int32_t index, void **args, char *errmsg, size_t errlen);
  cxla_status status;         /* first failure inside a runtime call (checked after entry) */
  char errmsg[512];
} cx_rt;

/* Runs fn over [0, total) in chunks of at least `grain` on the pool. */
void cx_rt_parallel_for(cx_rt *rt, cx_kernel_fn fn, void **args, int64_t total, int64_t grain,
                        int32_t id);
/* A split reduction's kernel (codegen/cg.h, cx_kernel.parts), its scratch for the partial
 * results already among args (the sequencer's, past the arena's slots): runs fn over
 * [0, parts) in chunks of at least parts_grain, then over [parts, parts + total) in chunks of
 * at least `grain`; traced as one kernel. */
void cx_rt_parallel_parts(cx_rt *rt, cx_kernel_fn fn, void **args, int64_t parts, int64_t parts_grain,
                          int64_t total, int64_t grain, int32_t id);
/* Row-major GEMM on f32/f64/c64/c128 (type: CXLA_F32 ... CXLA_C128; cgemm and zgemm for the
 * complex types: trans means transposed, not conjugated), `batch` times with element strides
 * between batches: C[b] = A[b] (M×K, or K×M if trans_a) · B[b] (K×N, or N×K if trans_b). */
void cx_rt_gemm(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                int64_t k, const void *a, int64_t lda, int64_t stride_a, const void *b,
                int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c,
                int64_t batch, int32_t id);
/* The same over a batch with two levels (a dot whose batch dims do not collapse into one
 * stride, such as attention's heads read in place from [batch, tokens, heads, dh], or written
 * in place into [batch, tokens, heads, dh]): product i reads A at (i / inner) * stride_a +
 * (i % inner) * stride_a2, B likewise, and writes C at (i / inner) * stride_c +
 * (i % inner) * stride_c2. `batch` is a multiple of `inner`. */
void cx_rt_gemm_batch2(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                       const void *a, int64_t lda, int64_t stride_a, int64_t stride_a2, const void *b, int64_t ldb,
                       int64_t stride_b, int64_t stride_b2, void *c, int64_t ldc, int64_t stride_c,
                       int64_t stride_c2, int64_t batch, int64_t inner, int32_t id);
/* The same through oneDNN's sgemm where cx_rt_gemm_dnnl_suits takes the product (else as
 * cx_rt_gemm_batch2): each product (or its share of C) one single-threaded call on the pool. */
void cx_rt_gemm_batch2_dnnl(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                            int64_t k, const void *a, int64_t lda, int64_t stride_a, int64_t stride_a2, const void *b,
                            int64_t ldb, int64_t stride_b, int64_t stride_b2, void *c, int64_t ldc, int64_t stride_c,
                            int64_t stride_c2, int64_t batch, int64_t inner, int32_t id);
/* Shares one product of a batch of `batch` is split into on a pool of `threads` (gemm.c): 1 (the
 * whole product on one thread) with one thread, at least as many batch elements as threads, or
 * too little work for a hand-off to pay (about 2^18 multiply-adds a share); else up to
 * threads / batch, each at least 16 rows (or columns) of C. */
int64_t cx_rt_gemm_shares(int64_t m, int64_t n, int64_t k, int64_t batch, int threads);
/* The same through oneDNN's sgemm on the pool (gemm_dnnl.c), for the class of products where it
 * measured faster than OpenBLAS: cx_rt_gemm_dnnl_suits (f32; C at least 64 wide, or 32 in a
 * batch; at most 2^26 multiply-adds a product; when both A and B are transposed, at least 512
 * rows of C). Anything else is handed to cx_rt_gemm. */
int cx_rt_gemm_dnnl_suits(int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch);
void cx_rt_gemm_dnnl(cx_rt *rt, int32_t type, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, void *c,
                     int64_t ldc, int64_t stride_c, int64_t batch, int32_t id);
/* oneDNN's sgemm sets itself up (its kernels, made by its JIT) on the first product of a
 * process, about 20 ms of one core: cx_rt_gemm_dnnl_warm starts that on a background thread
 * once per process (a compile that will call cx_rt_gemm_dnnl asks, so that the set-up runs
 * while it compiles); cx_rt_gemm_dnnl_settle waits for that thread (called before an
 * executable is freed, and before a fork: the thread must not outlive the program's use of the
 * library, nor be missing in a child halfway through the set-up). */
void cx_rt_gemm_dnnl_warm(void);
/* One row-major dnnl_sgemm (C = op(A)·op(B)) on the calling thread: 1 on success. Between
 * cx_rt_dnnl_one_thread (which returns the thread's OpenMP setting) and
 * cx_rt_dnnl_threads_restore, oneDNN runs on this thread alone. */
int cx_rt_dnnl_sgemm_one(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float *c, int64_t ldc);
int cx_rt_dnnl_one_thread(void);
void cx_rt_dnnl_threads_restore(int was);
void cx_rt_gemm_dnnl_settle(void);
/* fft through FFTW (rt/fft.c): `plan` (made when compiling) applied to each of `batch`
 * transforms, the i-th reading in + i * (its input size) and writing out + i * (its output
 * size). Traced as a "library" event. */
void cx_rt_fft(cx_rt *rt, const void *plan, int64_t batch, const void *in, void *out, int32_t id);
/* Runs rt->fallback (traced); a failure sets rt->status / rt->errmsg, and later runtime calls
 * of this execution do nothing, so the sequencer needs no error branches. */
void cx_rt_interp_op(cx_rt *rt, int32_t instr_index, void **args, int32_t id);

/* Linear algebra on a batch of matrices (rt/lapack.c, through OpenBLAS's LAPACK and BLAS):
 * cholesky and triangular-solve as XLA defines them (f16/bf16 computed in f32), and the LAPACK
 * custom-calls jax emits, as jaxlib's kernels run them. bufs holds the result leaves, then the
 * operands': cholesky (l, a); potrf (a', info, a); trsm (x, a, b); getrf (lu, ipiv, info, a);
 * geqrf (qr, tau, a); orgqr (q, a, tau); syevd (v, w, info, a); gesdd and gesvd (a', s, u, vt,
 * info, a); geev (wr, wi, vl, vr, info, a) for f32/f64, (w, vl, vr, info, a) for c64/c128;
 * gtsv (dl', d', du', x, info, dl, d, du, b); ormqr (c', a, tau, c); geqp3 (qr, jpvt', tau, a,
 * jpvt); gehrd (a', tau, info, a); sytrd (a', d, e, tau, info, a); gees (t, z, wr, wi, sdim,
 * info, a) for f32/f64, (t, z, w, sdim, info, a) for c64/c128; jaxlib's perturbed tridiagonal
 * solve (x, dl, d, du, b; rt/gtsv_perturbed.c). All fields are int64, so JIT code passes a
 * constant [14 x i64]. */
typedef enum cx_la_routine {
  CX_LA_CHOLESKY, CX_LA_POTRF, CX_LA_TRSM, CX_LA_GETRF, CX_LA_GEQRF, CX_LA_ORGQR, CX_LA_SYEVD, CX_LA_GESDD,
  CX_LA_GESVD, CX_LA_GEEV, CX_LA_GTSV, CX_LA_ORMQR, CX_LA_GEQP3, CX_LA_GEHRD, CX_LA_SYTRD, CX_LA_GEES,
  CX_LA_GTSV_PERTURBED, CX_LA_COUNT
} cx_la_routine;
typedef struct cx_la_desc {
  int64_t routine, type;      /* cx_la_routine; a cxla_type */
  int64_t batch, m, n, k;     /* matrices m x n (trsm, gtsv, gtsv_perturbed: b's; a is k x k; orgqr, ormqr:
                               * k reflectors) */
  int64_t lower, left, trans, unit; /* uplo 'L', side 'L', 0 N / 1 T / 2 C, diag 'U' */
  int64_t mode;               /* syevd jobz, gesdd/gesvd mode, geev jobvr, gees jobvs: LAPACK's character */
  int64_t ucols, vrows;       /* gesdd/gesvd: u is m x ucols, vt vrows x n; ormqr: a's columns in ucols;
                               * gehrd: ilo and ihi (1-based) in ucols and vrows */
  int64_t mode_left;          /* geev jobvl */
} cx_la_desc;
void cx_rt_linalg(cx_rt *rt, const cx_la_desc *d, void **bufs, int32_t id);
/* jax's tridiagonal solve with perturb_singular (rt/gtsv_perturbed.c): bufs (x, dl, d, du, b) of
 * batch systems of n rows and nrhs right-hand sides, of type f32, f64, c64 or c128. Returns 0,
 * or -1 when out of memory. */
int cx_rt_gtsv_perturbed(int64_t type, int64_t batch, int64_t n, int64_t nrhs, void **bufs);
/* The name of call id for messages and traces (dflt when there is none). */
const char *cx_rt_name(const cx_rt *rt, int32_t id, const char *dflt);
/* Records the first failure of the execution (status and printf-style message) only; every
 * later call sees status != CXLA_OK and returns. */
void cx_rt_fail(cx_rt *rt, cxla_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The op_name and source line of call id as string arguments of its trace events (the
 * integer arguments are left for the caller). */
struct cx_trace_args cx_rt_origin_args(const cx_rt *rt, int32_t id);
/* Trace spans around sequencer steps that are not kernels (copies, loops). */
void cx_rt_trace_begin(cx_rt *rt, int32_t id);
void cx_rt_trace_end(cx_rt *rt, int32_t id);

/* A 2-D convolution as XLA defines it, in any dim_labels order: every tensor is described by
 * the element strides of its logical dims, so the sequencer passes the layout it has. All
 * fields are int64, in this order, so JIT code can pass a constant [33 x i64] array. */
typedef struct cx_conv2d_desc {
  int64_t batch, in_feat, in_h, in_w;  /* input (lhs) logical dims */
  int64_t out_feat, out_h, out_w;      /* output; out_feat = filter's output-feature dim */
  int64_t k_h, k_w;                    /* filter spatial dims */
  int64_t stride[2], pad_lo[2];        /* window stride, low padding (high follows from out) */
  int64_t lhs_dil[2], rhs_dil[2];      /* base (input) and window dilation, 1 = none */
  int64_t reverse[2];                  /* window_reversal: 1 flips that filter dim */
  int64_t groups;                      /* feature_group_count */
  int64_t batch_groups;                /* batch_group_count (one of the two counts is 1) */
  int64_t in_stride[4];                /* element strides of input dims b, f, 0, 1 */
  int64_t filt_stride[4];              /* of filter dims o, i, 0, 1 (i has in_feat/groups) */
  int64_t out_stride[4];               /* of output dims b, f, 0, 1 */
} cx_conv2d_desc;
/* out = conv(in, filt) for f32 and f64 (type CXLA_F32 or CXLA_F64; anything else sets
 * CXLA_ERR_UNSUPPORTED): input patches gathered chunk by chunk into cache-sized scratch, each
 * chunk multiplied by one GEMM per feature group, chunks in parallel on the pool; as one patch
 * per output pixel, or for weight-gradient shapes one patch element per row (rt/conv.h).
 * Traced as a "library" event. */
void cx_rt_conv_im2col(cx_rt *rt, int32_t type, const cx_conv2d_desc *d, const void *in,
                       const void *filt, void *out, int32_t id);
/* The same convolution through oneDNN (conv_dnnl.c), f32 and bf16: what the sequencer calls
 * instead where cx_rt_conv_dnnl_applies (no base dilation, window reversal or groups, and an
 * optimised oneDNN implementation for it; else 0 and *why). Same arguments and trace event. */
int cx_rt_conv_dnnl_applies(int32_t type, const cx_conv2d_desc *d, const char **why);
void cx_rt_conv_dnnl(cx_rt *rt, int32_t type, const cx_conv2d_desc *d, const void *in, const void *filt,
                     void *out, int32_t id);

/* topk along the last dimension: `rows` rows of n elements of `type` in `in` give the k first
 * in XLA's order (TOTALORDER, largest or smallest first, equal elements by index) into
 * values (rows x k of `type`) and indices (rows x k s32); parallel over rows (topk.c). */
void cx_rt_topk(cx_rt *rt, int32_t type, int32_t largest, int64_t rows, int64_t n, int64_t k, const void *in,
                void *values, void *indices, int32_t id);
/* ragged-dot in its canonical form (passes/ragged_dot_lowering.c): sizes = {B, X, R, Y, K, N, G} of
 * lhs [B,X,R,Y,K], rhs [G,B,K,N] (contracting: [B,X,R,Y,N]), s64 group_sizes [B,X,G], into out
 * [B,X,R,Y,N] (contracting: [G,B,K,N]), of `type` f32, f64, c64, c128 or s64 (ragged_dot.c). */
void cx_rt_ragged_dot(cx_rt *rt, int32_t type, int32_t contracting, const int64_t *sizes, const void *lhs,
                      const void *rhs, const void *group_sizes, void *out, int32_t id);
/* rng-bit-generator (rng_bits.c): `width`-byte elements of XLA's Threefry (algorithm 1) or
 * Philox (0, 2) bits into out, outer x d x inner of them (d: the dimension XLA splits a narrow
 * Threefry result along), from the u64 state[nstate], and the state after into new_state. */
void cx_rt_rng_bits(cx_rt *rt, int32_t algorithm, int32_t width, int64_t outer, int64_t d, int64_t inner,
                    const uint64_t *state, int64_t nstate, uint64_t *new_state, void *out, int32_t id);
/* rng (rng_bits.c): n elements of `type` from the distribution (1 uniform, 2 normal) with
 * parameters *a, *b into out, as interp/rng.c defines them for the instruction whose name
 * hashes to key, on its run *runs (then counted). */
void cx_rt_rng(cx_rt *rt, int32_t distribution, int32_t type, int64_t n, const void *a, const void *b, uint64_t key,
               int64_t *runs, void *out, int32_t id);

#endif
