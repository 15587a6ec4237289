/* solver.h — cuSOLVER's dense routines and the few cuBLAS calls around them (transposes
 * through geam, triangular solves), opened with dlopen when a module has a linear-algebra op
 * (no link-time dependency), or their host emulation for gpu-emu (emu_solver.c). Declared
 * with the ABI of the toolkit's cusolverDn.h and cublas_api.h: handles are opaque pointers,
 * device pointers void *, the enums ints. Each routine has four entries, one per element type
 * in the order of cx_solver_type (S, D, C, Z), so that one call site serves them all. */
#ifndef CX_GPU_SOLVER_H
#define CX_GPU_SOLVER_H
#include "backend/gpu/cuda.h"

enum { /* cublas_api.h's and cusolver_common.h's values (test_gpu_libs.c checks them) */
  CX_BLAS_FILL_LOWER = 0, CX_BLAS_FILL_UPPER = 1,     /* cublasFillMode_t */
  CX_BLAS_OP_N = 0, CX_BLAS_OP_T = 1, CX_BLAS_OP_C = 2, /* cublasOperation_t */
  CX_BLAS_SIDE_LEFT = 0, CX_BLAS_SIDE_RIGHT = 1,       /* cublasSideMode_t */
  CX_BLAS_DIAG_NON_UNIT = 0, CX_BLAS_DIAG_UNIT = 1,    /* cublasDiagType_t */
  CX_SOLVER_EIG_NOVECTOR = 0, CX_SOLVER_EIG_VECTOR = 1, /* cusolverEigMode_t */
};

/* the index of a routine's entry: f32, f64, c64, c128 (-1 for another type) */
int cx_solver_type(cxla_type t);

typedef struct cx_solver {
  void *lib, *blas_lib;
  /* cuSOLVER (cusolverDn) */
  int (*Create)(void **handle);
  int (*Destroy)(void *handle);
  int (*SetStream)(void *handle, CUstream s);
  int (*potrf_bs[4])(void *h, int uplo, int n, void *a, int lda, int *lwork);
  int (*potrf[4])(void *h, int uplo, int n, void *a, int lda, void *work, int lwork, int *info);
  int (*getrf_bs[4])(void *h, int m, int n, void *a, int lda, int *lwork);
  int (*getrf[4])(void *h, int m, int n, void *a, int lda, void *work, int *ipiv, int *info);
  int (*geqrf_bs[4])(void *h, int m, int n, void *a, int lda, int *lwork);
  int (*geqrf[4])(void *h, int m, int n, void *a, int lda, void *tau, void *work, int lwork, int *info);
  int (*orgqr_bs[4])(void *h, int m, int n, int k, const void *a, int lda, const void *tau, int *lwork); /* ungqr */
  int (*orgqr[4])(void *h, int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork, int *info);
  int (*syevd_bs[4])(void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lwork); /* heevd */
  int (*syevd[4])(void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *work, int lwork, int *info);
  int (*gesvd_bs[4])(void *h, int m, int n, int *lwork);
  int (*gesvd[4])(void *h, signed char jobu, signed char jobvt, int m, int n, void *a, int lda, void *s, void *u,
                  int ldu, void *vt, int ldvt, void *work, int lwork, void *rwork, int *info);
  int (*sytrd_bs[4])(void *h, int uplo, int n, const void *a, int lda, const void *d, const void *e, const void *tau,
                     int *lwork); /* hetrd */
  int (*sytrd[4])(void *h, int uplo, int n, void *a, int lda, void *d, void *e, void *tau, void *work, int lwork,
                  int *info);
  int (*ormqr_bs[4])(void *h, int side, int trans, int m, int n, int k, const void *a, int lda, const void *tau,
                     const void *c, int ldc, int *lwork); /* unmqr */
  int (*ormqr[4])(void *h, int side, int trans, int m, int n, int k, const void *a, int lda, const void *tau, void *c,
                  int ldc, void *work, int lwork, int *info);
  /* a batch of small matrices in one call: A an array (in device memory) of device pointers */
  int (*potrf_batched[4])(void *h, int uplo, int n, void **a, int lda, int *info, int batch);
  /* syevjBatched / heevjBatched: batch contiguous n x n matrices (n <= 32), Jacobi's method
   * under a syevjInfo_t of CreateSyevjInfo's (its default tolerance, sweeps and sorting) */
  int (*CreateSyevjInfo)(void **info);
  int (*DestroySyevjInfo)(void *info);
  int (*syevj_batched_bs[4])(void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lwork,
                             void *params, int batch);
  int (*syevj_batched[4])(void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *work, int lwork,
                          int *info, void *params, int batch);
  /* cuBLAS (its v2 API; scalars by host pointer, the default pointer mode) */
  int (*BlasCreate)(void **handle);
  int (*BlasDestroy)(void *handle);
  int (*BlasSetStream)(void *handle, CUstream s);
  int (*geam[4])(void *h, int transa, int transb, int m, int n, const void *alpha, const void *a, int lda,
                 const void *beta, const void *b, int ldb, void *c, int ldc);
  int (*trsm[4])(void *h, int side, int uplo, int trans, int diag, int m, int n, const void *alpha, const void *a,
                 int lda, void *b, int ldb);
  int (*getrf_batched[4])(void *h, int n, void **a, int lda, int *ipiv, int *info, int batch); /* square */
  int (*scal[2])(void *h, int n, const void *alpha, void *x, int incx); /* S and D: the inverse ffts' 1/N */
  int (*gemm[4])(void *h, int transa, int transb, int m, int n, int k, const void *alpha, const void *a, int lda,
                 const void *b, int ldb, const void *beta, void *c, int ldc); /* ragged-dot's GEMM per group */
} cx_solver;

/* cuSOLVER and cuBLAS for the process, opened on first use: $CXLA_CUSOLVER and $CXLA_CUBLAS
 * when set, else libcusolver.so.12, .so.11 and libcublas.so.13, .so.12 (then the same under
 * /usr/local/cuda/lib64). CXLA_ERR_DEVICE naming the library when one does not load. */
cxla_status cx_solver_get(cxla_context *ctx, const cx_solver **out);
/* The host emulation: each routine computed by OpenBLAS's LAPACK and BLAS on the emulated
 * device's memory, every matrix checked against its allocations. */
const cx_solver *cx_solver_emu(void);
/* "gpu backend: WHAT failed: cuSOLVER status N" */
cxla_status cx_solver_error(cxla_context *ctx, int status, const char *what);

#endif
