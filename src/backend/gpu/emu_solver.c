/* emu_solver.c — cuSOLVER's dense routines and cuBLAS's geam and trsm on the host for gpu-emu
 * (see solver.h): each call checked as the library would check it (the handle, the sizes,
 * every matrix, workspace and info word inside the emulated device's allocations) and then
 * computed by OpenBLAS's LAPACK or BLAS, column-major as cuSOLVER and cuBLAS are (potrf, getrf,
 * geqrf, orgqr/ungqr, syevd/heevd, gesvd, sytrd/hetrd, ormqr/unmqr, potrfBatched,
 * syevjBatched/heevjBatched as syevd per matrix (the decomposition Jacobi's method converges
 * to, to rounding); trsm, gemm, scal, getrfBatched). The
 * bufferSize calls answer LAPACK's workspace queries, and the routines run in the workspace
 * they are given; LAPACK's integer and real scratch (syevd's iwork, the complex routines'
 * rwork) is host memory of the emulation's own. cuSOLVER's gesvd takes m >= n only, and so
 * does this one. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/emu.h"
#include "backend/gpu/solver.h"

enum { S_OK = 0, S_NOT_INITIALIZED = 1, S_ALLOC_FAILED = 2, S_INVALID_VALUE = 3 };
enum { B_INVALID_VALUE = 7 }; /* cuBLAS's */

/* LAPACK's Fortran entry points (hidden character lengths last), one declaration per shape */
typedef void potrf_f(const char *uplo, const int *n, void *a, const int *lda, int *info, size_t);
typedef void getrf_f(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);
typedef void geqrf_f(const int *m, const int *n, void *a, const int *lda, void *tau, void *work, const int *lwork,
                     int *info);
typedef void orgqr_f(const int *m, const int *n, const int *k, void *a, const int *lda, const void *tau, void *work,
                     const int *lwork, int *info);
typedef void syevd_f(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work,
                     const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);
typedef void heevd_f(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work,
                     const int *lwork, void *rwork, const int *lrwork, int *iwork, const int *liwork, int *info, size_t,
                     size_t);
typedef void gesvd_f(const char *ju, const char *jv, const int *m, const int *n, void *a, const int *lda, void *s,
                     void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *info, size_t,
                     size_t);
typedef void cgesvd_f(const char *ju, const char *jv, const int *m, const int *n, void *a, const int *lda, void *s,
                      void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, void *rwork,
                      int *info, size_t, size_t);
typedef void sytrd_f(const char *uplo, const int *n, void *a, const int *lda, void *d, void *e, void *tau, void *work,
                     const int *lwork, int *info, size_t);
typedef void ormqr_f(const char *side, const char *trans, const int *m, const int *n, const int *k, const void *a,
                     const int *lda, const void *tau, void *c, const int *ldc, void *work, const int *lwork, int *info,
                     size_t, size_t);
sytrd_f ssytrd_, dsytrd_, chetrd_, zhetrd_;
ormqr_f sormqr_, dormqr_, cunmqr_, zunmqr_;
potrf_f spotrf_, dpotrf_, cpotrf_, zpotrf_;
getrf_f sgetrf_, dgetrf_, cgetrf_, zgetrf_;
geqrf_f sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_;
orgqr_f sorgqr_, dorgqr_, cungqr_, zungqr_;
syevd_f ssyevd_, dsyevd_;
heevd_f cheevd_, zheevd_;
gesvd_f sgesvd_, dgesvd_;
cgesvd_f cgesvd_, zgesvd_;

static potrf_f *const k_potrf[4] = {spotrf_, dpotrf_, cpotrf_, zpotrf_};
static getrf_f *const k_getrf[4] = {sgetrf_, dgetrf_, cgetrf_, zgetrf_};
static geqrf_f *const k_geqrf[4] = {sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_};
static orgqr_f *const k_orgqr[4] = {sorgqr_, dorgqr_, cungqr_, zungqr_};

static int g_handle, g_blas_handle, g_syevj_info;
static sytrd_f *const k_sytrd[4] = {ssytrd_, dsytrd_, chetrd_, zhetrd_};
static ormqr_f *const k_ormqr[4] = {sormqr_, dormqr_, cunmqr_, zunmqr_};
static const size_t k_esize[4] = {4, 8, 8, 16};
static size_t real_size(int t) { return t & 1 ? 8 : 4; }

/* [p, p + elems elements of type t) in device memory (nothing to check when empty) */
static int dev(const void *p, int64_t elems, size_t esize) {
  return elems <= 0 || cx_emu_device_ok((CUdeviceptr)(uintptr_t)p, (size_t)elems * esize);
}
/* a column-major rows x cols matrix with leading dimension ld in device memory */
static int mat(int t, const void *a, int rows, int cols, int ld) {
  return rows >= 0 && cols >= 0 && ld >= (rows > 1 ? rows : 1) &&
         (!rows || !cols || dev(a, (int64_t)ld * (cols - 1) + rows, k_esize[t]));
}
static int info_ok(const int *info) { return dev(info, 1, sizeof *info); }
static int uplo_char(int uplo) { return uplo == CX_BLAS_FILL_LOWER ? 'L' : uplo == CX_BLAS_FILL_UPPER ? 'U' : 0; }

/* a workspace query's answer, which LAPACK writes as a number of the routine's type */
static int lwork_of(int t, const void *w) {
  double v = t & 1 ? *(const double *)w : *(const float *)w;
  return v < 1 ? 1 : v > 1e9 ? 1000000000 : (int)v;
}

/* ---- the routines, each taking its type index t first ---- */

static int potrf_bs(int t, void *h, int uplo, int n, void *a, int lda, int *lwork) {
  (void)t, (void)a;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (!uplo_char(uplo) || n < 0 || lda < (n > 1 ? n : 1)) return S_INVALID_VALUE;
  *lwork = n > 0 ? n : 1; /* LAPACK's needs none; asking for some checks that the caller gives it */
  return S_OK;
}
static int potrf(int t, void *h, int uplo, int n, void *a, int lda, void *work, int lwork, int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char u = (char)uplo_char(uplo);
  if (!u || !mat(t, a, n, n, lda) || !dev(work, lwork, k_esize[t]) || !info_ok(info)) return S_INVALID_VALUE;
  int r = 0;
  if (n) k_potrf[t](&u, &n, a, &lda, &r, 1);
  *info = r;
  return S_OK;
}

static int getrf_bs(int t, void *h, int m, int n, void *a, int lda, int *lwork) {
  (void)t, (void)a;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1)) return S_INVALID_VALUE;
  *lwork = n > 0 ? n : 1;
  return S_OK;
}
static int getrf(int t, void *h, int m, int n, void *a, int lda, void *work, int *ipiv, int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (!mat(t, a, m, n, lda) || !dev(work, 1, k_esize[t]) || !dev(ipiv, m < n ? m : n, sizeof *ipiv) || !info_ok(info))
    return S_INVALID_VALUE;
  int r = 0;
  if (m && n) k_getrf[t](&m, &n, a, &lda, ipiv, &r);
  *info = r;
  return S_OK;
}

static int geqrf_bs(int t, void *h, int m, int n, void *a, int lda, int *lwork) {
  (void)a;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1)) return S_INVALID_VALUE;
  double w[2] = {1, 0};
  int q = -1, r = 0;
  if (m && n) k_geqrf[t](&m, &n, NULL, &lda, NULL, w, &q, &r);
  *lwork = lwork_of(t, w);
  return S_OK;
}
static int geqrf(int t, void *h, int m, int n, void *a, int lda, void *tau, void *work, int lwork, int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (!mat(t, a, m, n, lda) || !dev(tau, m < n ? m : n, k_esize[t]) || lwork < 1 || !dev(work, lwork, k_esize[t]) ||
      !info_ok(info))
    return S_INVALID_VALUE;
  int r = 0;
  if (m && n) k_geqrf[t](&m, &n, a, &lda, tau, work, &lwork, &r);
  *info = r;
  return S_OK;
}

static int orgqr_bs(int t, void *h, int m, int n, int k, const void *a, int lda, const void *tau, int *lwork) {
  (void)a, (void)tau;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (m < 0 || n < 0 || n > m || k < 0 || k > n || lda < (m > 1 ? m : 1)) return S_INVALID_VALUE;
  double w[2] = {1, 0};
  int q = -1, r = 0;
  if (m && n) k_orgqr[t](&m, &n, &k, NULL, &lda, NULL, w, &q, &r);
  *lwork = lwork_of(t, w);
  return S_OK;
}
static int orgqr(int t, void *h, int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork,
                 int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (n > m || k < 0 || k > n || !mat(t, a, m, n, lda) || !dev(tau, k, k_esize[t]) || lwork < 1 ||
      !dev(work, lwork, k_esize[t]) || !info_ok(info))
    return S_INVALID_VALUE;
  int r = 0;
  if (m && n) k_orgqr[t](&m, &n, &k, a, &lda, tau, work, &lwork, &r);
  *info = r;
  return S_OK;
}

/* syevd and heevd: one call shape for both (rwork and lrwork unused by the real ones) */
static void eig_call(int t, char jobz, char uplo, int n, void *a, int lda, void *w, void *work, int lwork, void *rwork,
                     int lrwork, int *iwork, int liwork, int *info) {
  if (t == 0) ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  if (t == 1) dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  if (t == 2) cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
  if (t == 3) zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}

/* LAPACK's answers for (jobz, uplo, n): work, rwork and iwork sizes */
static void eig_query(int t, char jobz, char uplo, int n, int lda, int *lwork, int *lrwork, int *liwork) {
  double w[2] = {1, 0}, rw[1] = {1};
  int iw = 1, r = 0;
  *lwork = *lrwork = *liwork = 1;
  if (!n) return;
  eig_call(t, jobz, uplo, n, NULL, lda, NULL, w, -1, rw, -1, &iw, -1, &r);
  *lwork = lwork_of(t, w);
  *lrwork = t >= 2 ? lwork_of(t & 1, rw) : 1;
  *liwork = iw > 1 ? iw : 1;
}

/* The rwork and iwork an eigendecomposition of (jobz, uplo, n) needs (to free), after checking
 * that the caller's lwork is at least LAPACK's *need for one matrix. */
static int eig_workspaces(int t, char jobz, char uplo, int n, int lda, int lwork, int *need, void **rwork, int *lrwork,
                          int **iwork, int *liwork) {
  *rwork = NULL, *iwork = NULL;
  eig_query(t, jobz, uplo, n, lda, need, lrwork, liwork);
  if (lwork < *need) return S_INVALID_VALUE;
  *rwork = malloc(real_size(t) * (size_t)*lrwork);
  *iwork = malloc(sizeof **iwork * (size_t)*liwork);
  if (*rwork && *iwork) return S_OK;
  free(*rwork), free(*iwork);
  return S_ALLOC_FAILED;
}

static int syevd_bs(int t, void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lwork) {
  (void)a, (void)w;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (!uplo_char(uplo) || (jobz != CX_SOLVER_EIG_NOVECTOR && jobz != CX_SOLVER_EIG_VECTOR) || n < 0 ||
      lda < (n > 1 ? n : 1))
    return S_INVALID_VALUE;
  int lr, li;
  eig_query(t, jobz ? 'V' : 'N', (char)uplo_char(uplo), n, lda, lwork, &lr, &li);
  return S_OK;
}
static int syevd(int t, void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *work, int lwork,
                 int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char j = jobz == CX_SOLVER_EIG_VECTOR ? 'V' : jobz == CX_SOLVER_EIG_NOVECTOR ? 'N' : 0, u = (char)uplo_char(uplo);
  if (!j || !u || !mat(t, a, n, n, lda) || !dev(w, n, real_size(t)) || lwork < 1 || !dev(work, lwork, k_esize[t]) ||
      !info_ok(info))
    return S_INVALID_VALUE;
  int need, lrwork, liwork, r = 0, *iwork;
  void *rwork;
  int st = eig_workspaces(t, j, u, n, lda, lwork, &need, &rwork, &lrwork, &iwork, &liwork);
  if (st != S_OK) return st;
  if (n) eig_call(t, j, u, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, &r);
  free(rwork), free(iwork);
  *info = r;
  return S_OK;
}

static void svd_call(int t, char ju, char jv, int m, int n, void *a, int lda, void *s, void *u, int ldu, void *vt,
                     int ldvt, void *work, int lwork, void *rwork, int *info) {
  if (t == 0) sgesvd_(&ju, &jv, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
  if (t == 1) dgesvd_(&ju, &jv, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);
  if (t == 2) cgesvd_(&ju, &jv, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, 1);
  if (t == 3) zgesvd_(&ju, &jv, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, 1);
}

/* the most any (jobu, jobvt) asks for: LAPACK's query with 'A', 'A' */
static int svd_query(int t, int m, int n) {
  double w[2] = {1, 0};
  int q = -1, r = 0, ld = m > 1 ? m : 1, ldv = n > 1 ? n : 1;
  if (!m || !n) return 1;
  svd_call(t, 'A', 'A', m, n, NULL, ld, NULL, NULL, ld, NULL, ldv, w, q, NULL, &r);
  return lwork_of(t, w);
}

static int gesvd_bs(int t, void *h, int m, int n, int *lwork) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (m < n || n < 0) return S_INVALID_VALUE;
  *lwork = svd_query(t, m, n);
  return S_OK;
}
static int gesvd(int t, void *h, signed char jobu, signed char jobvt, int m, int n, void *a, int lda, void *s, void *u,
                 int ldu, void *vt, int ldvt, void *work, int lwork, void *rwork, int *info) {
  (void)rwork; /* cuSOLVER's: the unconverged superdiagonal, which the caller may leave NULL */
  if (h != &g_handle) return S_NOT_INITIALIZED;
  int ok = m >= n && n >= 0 && strchr("ASN", jobu) && strchr("ASN", jobvt) && jobu && jobvt && mat(t, a, m, n, lda) &&
           dev(s, n, real_size(t)) && lwork >= svd_query(t, m, n) && dev(work, lwork, k_esize[t]) && info_ok(info);
  ok = ok && (jobu == 'N' || mat(t, u, m, jobu == 'A' ? m : n, ldu)) && (jobvt == 'N' || mat(t, vt, n, n, ldvt));
  if (!ok) return S_INVALID_VALUE;
  void *rw = malloc(real_size(t) * (size_t)(5 * n + 1));
  if (!rw) return S_ALLOC_FAILED;
  int r = 0;
  if (m && n) svd_call(t, (char)jobu, (char)jobvt, m, n, a, lda, s, u, ldu > 0 ? ldu : 1, vt, ldvt > 0 ? ldvt : 1, work,
                       lwork, rw, &r);
  free(rw);
  *info = r;
  return S_OK;
}

/* syevjBatched (heevjBatched): batch n x n matrices one after another (lda x n each), n at
 * most 32 as the library takes; the workspace is syevd's for one matrix times the batch */
static int syevj_batched_bs(int t, void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lwork,
                            void *params, int batch) {
  (void)a, (void)w;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  if (params != &g_syevj_info || !uplo_char(uplo) || (jobz != CX_SOLVER_EIG_NOVECTOR && jobz != CX_SOLVER_EIG_VECTOR) ||
      n < 0 || n > 32 || lda < (n > 1 ? n : 1) || batch < 0)
    return S_INVALID_VALUE;
  int one, lr, li;
  eig_query(t, jobz ? 'V' : 'N', (char)uplo_char(uplo), n, lda, &one, &lr, &li);
  *lwork = one * (batch > 0 ? batch : 1);
  return S_OK;
}
static int syevj_batched(int t, void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *work, int lwork,
                         int *info, void *params, int batch) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char j = jobz == CX_SOLVER_EIG_VECTOR ? 'V' : jobz == CX_SOLVER_EIG_NOVECTOR ? 'N' : 0, u = (char)uplo_char(uplo);
  if (params != &g_syevj_info || !j || !u || n < 0 || n > 32 || batch < 0 || lda < (n > 1 ? n : 1) ||
      !dev(a, (int64_t)lda * n * batch, k_esize[t]) || !dev(w, (int64_t)n * batch, real_size(t)) ||
      !dev(info, batch, sizeof *info) || lwork < 1 || !dev(work, lwork, k_esize[t]))
    return S_INVALID_VALUE;
  int one, lrwork, liwork, *iwork;
  void *rwork;
  int st = eig_workspaces(t, j, u, n, lda, lwork, &one, &rwork, &lrwork, &iwork, &liwork);
  if (st != S_OK) return st;
  for (int b = 0; b < batch; b++) {
    int r = 0;
    char *ab = (char *)a + (size_t)b * (size_t)lda * (size_t)n * k_esize[t];
    if (n) eig_call(t, j, u, n, ab, lda, (char *)w + (size_t)b * (size_t)n * real_size(t), work, one, rwork, lrwork, iwork,
                    liwork, &r);
    info[b] = r;
  }
  free(rwork), free(iwork);
  return S_OK;
}

/* potrfBatched: batch matrices whose device addresses are an array in device memory, each
 * factored as potrf does, info per matrix */
static int potrf_batched(int t, void *h, int uplo, int n, void **a, int lda, int *info, int batch) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char u = (char)uplo_char(uplo);
  if (!u || n < 0 || batch < 0 || lda < (n > 1 ? n : 1) || !dev(a, batch, sizeof *a) || !dev(info, batch, sizeof *info))
    return S_INVALID_VALUE;
  for (int b = 0; b < batch; b++)
    if (!mat(t, a[b], n, n, lda)) return S_INVALID_VALUE;
  for (int b = 0; b < batch; b++) {
    int r = 0;
    if (n) k_potrf[t](&u, &n, a[b], &lda, &r, 1);
    info[b] = r;
  }
  return S_OK;
}

/* sytrd (hetrd): d and e real, tau n - 1 long */
static int sytrd_bs(int t, void *h, int uplo, int n, const void *a, int lda, const void *d, const void *e,
                    const void *tau, int *lwork) {
  (void)a, (void)d, (void)e, (void)tau;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char u = (char)uplo_char(uplo);
  if (!u || n < 0 || lda < (n > 1 ? n : 1)) return S_INVALID_VALUE;
  double w[2] = {1, 0};
  int q = -1, r = 0;
  if (n) k_sytrd[t](&u, &n, NULL, &lda, NULL, NULL, NULL, w, &q, &r, 1);
  *lwork = lwork_of(t, w);
  return S_OK;
}
static int sytrd(int t, void *h, int uplo, int n, void *a, int lda, void *d, void *e, void *tau, void *work, int lwork,
                 int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char u = (char)uplo_char(uplo);
  int nt = n > 0 ? n - 1 : 0;
  if (!u || !mat(t, a, n, n, lda) || !dev(d, n, real_size(t)) || !dev(e, nt, real_size(t)) || !dev(tau, nt, k_esize[t]) ||
      lwork < 1 || !dev(work, lwork, k_esize[t]) || !info_ok(info))
    return S_INVALID_VALUE;
  int r = 0;
  if (n) k_sytrd[t](&u, &n, a, &lda, d, e, tau, work, &lwork, &r, 1);
  *info = r;
  return S_OK;
}

/* ormqr (unmqr): Q from k reflectors (a's columns, nq = m or n rows) applied to the m x n c;
 * trans T on the real types, C on the complex ones, as cuSOLVER takes them */
static int ormqr_args(int t, int side, int trans, int m, int n, int k, int lda, int ldc, char *sd, char *tr) {
  int nq = side == CX_BLAS_SIDE_LEFT ? m : n;
  *sd = side == CX_BLAS_SIDE_LEFT ? 'L' : side == CX_BLAS_SIDE_RIGHT ? 'R' : 0;
  *tr = trans == CX_BLAS_OP_N ? 'N' : trans == (t < 2 ? CX_BLAS_OP_T : CX_BLAS_OP_C) ? (t < 2 ? 'T' : 'C') : 0;
  return *sd && *tr && m >= 0 && n >= 0 && k >= 0 && k <= nq && lda >= (nq > 1 ? nq : 1) && ldc >= (m > 1 ? m : 1);
}
static int ormqr_bs(int t, void *h, int side, int trans, int m, int n, int k, const void *a, int lda, const void *tau,
                    const void *c, int ldc, int *lwork) {
  (void)a, (void)tau, (void)c;
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char sd, tr;
  if (!ormqr_args(t, side, trans, m, n, k, lda, ldc, &sd, &tr)) return S_INVALID_VALUE;
  double w[2] = {1, 0};
  int q = -1, r = 0;
  if (m && n && k) k_ormqr[t](&sd, &tr, &m, &n, &k, NULL, &lda, NULL, NULL, &ldc, w, &q, &r, 1, 1);
  *lwork = lwork_of(t, w);
  return S_OK;
}
static int ormqr(int t, void *h, int side, int trans, int m, int n, int k, const void *a, int lda, const void *tau,
                 void *c, int ldc, void *work, int lwork, int *info) {
  if (h != &g_handle) return S_NOT_INITIALIZED;
  char sd, tr;
  int nq = side == CX_BLAS_SIDE_LEFT ? m : n;
  if (!ormqr_args(t, side, trans, m, n, k, lda, ldc, &sd, &tr) || !mat(t, a, nq, k, lda) || !dev(tau, k, k_esize[t]) ||
      !mat(t, c, m, n, ldc) || lwork < 1 || !dev(work, lwork, k_esize[t]) || !info_ok(info))
    return S_INVALID_VALUE;
  int r = 0;
  if (m && n && k) k_ormqr[t](&sd, &tr, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &r, 1, 1);
  *info = r;
  return S_OK;
}

/* ---- cuBLAS ---- */

/* a number of any of the four types as (re, im), im 0 for the real ones: arithmetic on the
 * parts, so that alpha 1 and beta 0 copy every value exactly (inf and NaN parts included) */
typedef struct num { double re, im; } num;

static num load(int t, const void *p, int64_t i) {
  switch (t) {
  case 0: return (num){((const float *)p)[i], 0};
  case 1: return (num){((const double *)p)[i], 0};
  case 2: return (num){((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]};
  default: return (num){((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]};
  }
}
static void store(int t, void *p, int64_t i, num v) {
  switch (t) {
  case 0: ((float *)p)[i] = (float)v.re; break;
  case 1: ((double *)p)[i] = v.re; break;
  case 2: ((float *)p)[2 * i] = (float)v.re, ((float *)p)[2 * i + 1] = (float)v.im; break;
  default: ((double *)p)[2 * i] = v.re, ((double *)p)[2 * i + 1] = v.im; break;
  }
}
static int is_zero(num a) { return a.re == 0 && a.im == 0; }
static int is_one(num a) { return a.re == 1 && a.im == 0; }
/* a b; for the real types (t < 2) the real product alone (no 0 * inf in a missing part) */
static num mul(int t, num a, num b) {
  return t >= 2 ? (num){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re} : (num){a.re * b.re, 0};
}

/* op(X)(i, j) of a column-major X with leading dimension ld */
static num op_at(int t, int op, const void *x, int ld, int i, int j) {
  if (op == CX_BLAS_OP_N) return load(t, x, i + (int64_t)j * ld);
  num v = load(t, x, j + (int64_t)i * ld);
  if (op == CX_BLAS_OP_C) v.im = -v.im;
  return v;
}

/* C = alpha op(A) + beta op(B), m x n; B is not read when beta is 0. Computed into scratch
 * first, so that C may be A or B as cuBLAS allows. */
static int geam(int t, void *h, int ta, int tb, int m, int n, const void *alpha, const void *a, int lda,
                const void *beta, const void *b, int ldb, void *c, int ldc) {
  if (h != &g_blas_handle) return S_NOT_INITIALIZED;
  num al = load(t, alpha, 0), be = load(t, beta, 0);
  int ok = ta >= 0 && ta <= 2 && tb >= 0 && tb <= 2 && mat(t, c, m, n, ldc);
  ok = ok && (ta == CX_BLAS_OP_N ? mat(t, a, m, n, lda) : mat(t, a, n, m, lda));
  ok = ok && (is_zero(be) || (tb == CX_BLAS_OP_N ? mat(t, b, m, n, ldb) : mat(t, b, n, m, ldb)));
  if (!ok) return B_INVALID_VALUE;
  void *tmp = malloc(k_esize[t] * (size_t)((int64_t)m * n + 1));
  if (!tmp) return S_ALLOC_FAILED;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      num v = op_at(t, ta, a, lda, i, j);
      if (!is_one(al)) v = mul(t, al, v);
      if (!is_zero(be)) {
        num w = mul(t, be, op_at(t, tb, b, ldb, i, j));
        v.re += w.re, v.im += w.im;
      }
      store(t, tmp, i + (int64_t)j * m, v);
    }
  for (int j = 0; j < n; j++)
    memcpy((char *)c + (size_t)j * (size_t)ldc * k_esize[t], (char *)tmp + (size_t)j * (size_t)m * k_esize[t],
           (size_t)m * k_esize[t]);
  free(tmp);
  return S_OK;
}

static int trsm(int t, void *h, int side, int uplo, int trans, int diag, int m, int n, const void *alpha,
                const void *a, int lda, void *b, int ldb) {
  if (h != &g_blas_handle) return S_NOT_INITIALIZED;
  int k = side == CX_BLAS_SIDE_LEFT ? m : n;
  if ((side != CX_BLAS_SIDE_LEFT && side != CX_BLAS_SIDE_RIGHT) || !uplo_char(uplo) || trans < 0 || trans > 2 ||
      (diag != CX_BLAS_DIAG_UNIT && diag != CX_BLAS_DIAG_NON_UNIT) || !mat(t, a, k, k, lda) || !mat(t, b, m, n, ldb))
    return B_INVALID_VALUE;
  if (!m || !n) return S_OK;
  enum CBLAS_SIDE s = side == CX_BLAS_SIDE_LEFT ? CblasLeft : CblasRight;
  enum CBLAS_UPLO u = uplo == CX_BLAS_FILL_LOWER ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = trans == CX_BLAS_OP_C ? CblasConjTrans : trans == CX_BLAS_OP_T ? CblasTrans : CblasNoTrans;
  enum CBLAS_DIAG d = diag == CX_BLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit;
  if (t == 0) cblas_strsm(CblasColMajor, s, u, tr, d, m, n, *(const float *)alpha, a, lda, b, ldb);
  if (t == 1) cblas_dtrsm(CblasColMajor, s, u, tr, d, m, n, *(const double *)alpha, a, lda, b, ldb);
  if (t == 2) cblas_ctrsm(CblasColMajor, s, u, tr, d, m, n, alpha, a, lda, b, ldb);
  if (t == 3) cblas_ztrsm(CblasColMajor, s, u, tr, d, m, n, alpha, a, lda, b, ldb);
  return S_OK;
}

/* C = alpha op(A) op(B) + beta C, column-major, op N or T */
static int gemm(int t, void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int lda,
                const void *b, int ldb, const void *beta, void *c, int ldc) {
  if (h != &g_blas_handle) return S_NOT_INITIALIZED;
  if ((ta != CX_BLAS_OP_N && ta != CX_BLAS_OP_T) || (tb != CX_BLAS_OP_N && tb != CX_BLAS_OP_T) || k < 0 ||
      !mat(t, c, m, n, ldc) || !(ta == CX_BLAS_OP_N ? mat(t, a, m, k, lda) : mat(t, a, k, m, lda)) ||
      !(tb == CX_BLAS_OP_N ? mat(t, b, k, n, ldb) : mat(t, b, n, k, ldb)))
    return B_INVALID_VALUE;
  if (!m || !n) return S_OK;
  enum CBLAS_TRANSPOSE x = ta == CX_BLAS_OP_T ? CblasTrans : CblasNoTrans, y = tb == CX_BLAS_OP_T ? CblasTrans : CblasNoTrans;
  if (t == 0) cblas_sgemm(CblasColMajor, x, y, m, n, k, *(const float *)alpha, a, lda, b, ldb, *(const float *)beta, c, ldc);
  if (t == 1) cblas_dgemm(CblasColMajor, x, y, m, n, k, *(const double *)alpha, a, lda, b, ldb, *(const double *)beta, c, ldc);
  if (t == 2) cblas_cgemm(CblasColMajor, x, y, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (t == 3) cblas_zgemm(CblasColMajor, x, y, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return S_OK;
}

/* getrfBatched (cuBLAS): square matrices by an array of device addresses, the pivots of
 * matrix b at ipiv + b n (1-based, as LAPACK's), info per matrix */
static int getrf_batched(int t, void *h, int n, void **a, int lda, int *ipiv, int *info, int batch) {
  if (h != &g_blas_handle) return S_NOT_INITIALIZED;
  if (n < 0 || batch < 0 || lda < (n > 1 ? n : 1) || !dev(a, batch, sizeof *a) ||
      !dev(ipiv, (int64_t)n * batch, sizeof *ipiv) || !dev(info, batch, sizeof *info))
    return B_INVALID_VALUE;
  for (int b = 0; b < batch; b++)
    if (!mat(t, a[b], n, n, lda)) return B_INVALID_VALUE;
  for (int b = 0; b < batch; b++) {
    int r = 0;
    if (n) k_getrf[t](&n, &n, a[b], &lda, ipiv + (int64_t)b * n, &r);
    info[b] = r;
  }
  return S_OK;
}

static int scal(int t, void *h, int n, const void *alpha, void *x, int incx) {
  if (h != &g_blas_handle) return S_NOT_INITIALIZED;
  if (n < 0 || incx < 1 || (n && !dev(x, (int64_t)(n - 1) * incx + 1, k_esize[t]))) return B_INVALID_VALUE;
  if (t == 0) cblas_sscal(n, *(const float *)alpha, x, incx);
  else cblas_dscal(n, *(const double *)alpha, x, incx);
  return S_OK;
}
static int scal_0(void *h, int n, const void *alpha, void *x, int incx) { return scal(0, h, n, alpha, x, incx); }
static int scal_1(void *h, int n, const void *alpha, void *x, int incx) { return scal(1, h, n, alpha, x, incx); }

/* ---- the table: four entries per routine, each calling it with its type index ---- */

#define T4(R, P, A) \
  static int R##_0 P { const int t = 0; return R A; } \
  static int R##_1 P { const int t = 1; return R A; } \
  static int R##_2 P { const int t = 2; return R A; } \
  static int R##_3 P { const int t = 3; return R A; }
T4(potrf_bs, (void *h, int uplo, int n, void *a, int lda, int *lw), (t, h, uplo, n, a, lda, lw))
T4(potrf, (void *h, int uplo, int n, void *a, int lda, void *w, int lw, int *info), (t, h, uplo, n, a, lda, w, lw, info))
T4(getrf_bs, (void *h, int m, int n, void *a, int lda, int *lw), (t, h, m, n, a, lda, lw))
T4(getrf, (void *h, int m, int n, void *a, int lda, void *w, int *ipiv, int *info), (t, h, m, n, a, lda, w, ipiv, info))
T4(geqrf_bs, (void *h, int m, int n, void *a, int lda, int *lw), (t, h, m, n, a, lda, lw))
T4(geqrf, (void *h, int m, int n, void *a, int lda, void *tau, void *w, int lw, int *info),
   (t, h, m, n, a, lda, tau, w, lw, info))
T4(orgqr_bs, (void *h, int m, int n, int k, const void *a, int lda, const void *tau, int *lw),
   (t, h, m, n, k, a, lda, tau, lw))
T4(orgqr, (void *h, int m, int n, int k, void *a, int lda, const void *tau, void *w, int lw, int *info),
   (t, h, m, n, k, a, lda, tau, w, lw, info))
T4(syevd_bs, (void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lw),
   (t, h, jobz, uplo, n, a, lda, w, lw))
T4(syevd, (void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *wk, int lw, int *info),
   (t, h, jobz, uplo, n, a, lda, w, wk, lw, info))
T4(gesvd_bs, (void *h, int m, int n, int *lw), (t, h, m, n, lw))
T4(gesvd, (void *h, signed char ju, signed char jv, int m, int n, void *a, int lda, void *s, void *u, int ldu, void *vt,
           int ldvt, void *w, int lw, void *rw, int *info),
   (t, h, ju, jv, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, rw, info))
T4(sytrd_bs, (void *h, int uplo, int n, const void *a, int lda, const void *d, const void *e, const void *tau, int *lw),
   (t, h, uplo, n, a, lda, d, e, tau, lw))
T4(sytrd, (void *h, int uplo, int n, void *a, int lda, void *d, void *e, void *tau, void *w, int lw, int *info),
   (t, h, uplo, n, a, lda, d, e, tau, w, lw, info))
T4(ormqr_bs, (void *h, int side, int tr, int m, int n, int k, const void *a, int lda, const void *tau, const void *c,
              int ldc, int *lw),
   (t, h, side, tr, m, n, k, a, lda, tau, c, ldc, lw))
T4(ormqr, (void *h, int side, int tr, int m, int n, int k, const void *a, int lda, const void *tau, void *c, int ldc,
           void *w, int lw, int *info),
   (t, h, side, tr, m, n, k, a, lda, tau, c, ldc, w, lw, info))
T4(syevj_batched_bs, (void *h, int jobz, int uplo, int n, const void *a, int lda, const void *w, int *lw, void *pr, int bt),
   (t, h, jobz, uplo, n, a, lda, w, lw, pr, bt))
T4(syevj_batched, (void *h, int jobz, int uplo, int n, void *a, int lda, void *w, void *wk, int lw, int *info, void *pr,
                   int bt),
   (t, h, jobz, uplo, n, a, lda, w, wk, lw, info, pr, bt))
T4(potrf_batched, (void *h, int uplo, int n, void **a, int lda, int *info, int batch),
   (t, h, uplo, n, a, lda, info, batch))
T4(getrf_batched, (void *h, int n, void **a, int lda, int *ipiv, int *info, int batch),
   (t, h, n, a, lda, ipiv, info, batch))
T4(geam, (void *h, int ta, int tb, int m, int n, const void *al, const void *a, int lda, const void *be, const void *b,
          int ldb, void *c, int ldc),
   (t, h, ta, tb, m, n, al, a, lda, be, b, ldb, c, ldc))
T4(trsm, (void *h, int side, int uplo, int tr, int diag, int m, int n, const void *al, const void *a, int lda, void *b,
          int ldb),
   (t, h, side, uplo, tr, diag, m, n, al, a, lda, b, ldb))
T4(gemm, (void *h, int ta, int tb, int m, int n, int k, const void *al, const void *a, int lda, const void *b, int ldb,
          const void *be, void *c, int ldc),
   (t, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc))
#undef T4

static int create(void **h) { return *h = &g_handle, S_OK; }
static int destroy(void *h) { return h == &g_handle ? S_OK : S_NOT_INITIALIZED; }
static int set_stream(void *h, CUstream s) { return h == &g_handle && s ? S_OK : S_NOT_INITIALIZED; }
static int syevj_info_create(void **p) { return *p = &g_syevj_info, S_OK; }
static int syevj_info_destroy(void *p) { return p == &g_syevj_info ? S_OK : S_INVALID_VALUE; }
static int blas_create(void **h) { return *h = &g_blas_handle, S_OK; }
static int blas_destroy(void *h) { return h == &g_blas_handle ? S_OK : S_NOT_INITIALIZED; }
static int blas_set_stream(void *h, CUstream s) { return h == &g_blas_handle && s ? S_OK : S_NOT_INITIALIZED; }

#define ALL4(R) {R##_0, R##_1, R##_2, R##_3}
static const cx_solver g_emu = {
  .lib = (void *)&g_emu, .blas_lib = (void *)&g_emu, .Create = create, .Destroy = destroy, .SetStream = set_stream,
  .potrf_bs = ALL4(potrf_bs), .potrf = ALL4(potrf), .getrf_bs = ALL4(getrf_bs), .getrf = ALL4(getrf),
  .geqrf_bs = ALL4(geqrf_bs), .geqrf = ALL4(geqrf), .orgqr_bs = ALL4(orgqr_bs), .orgqr = ALL4(orgqr),
  .syevd_bs = ALL4(syevd_bs), .syevd = ALL4(syevd), .gesvd_bs = ALL4(gesvd_bs), .gesvd = ALL4(gesvd),
  .sytrd_bs = ALL4(sytrd_bs), .sytrd = ALL4(sytrd), .ormqr_bs = ALL4(ormqr_bs), .ormqr = ALL4(ormqr),
  .potrf_batched = ALL4(potrf_batched), .getrf_batched = ALL4(getrf_batched),
  .CreateSyevjInfo = syevj_info_create, .DestroySyevjInfo = syevj_info_destroy,
  .syevj_batched_bs = ALL4(syevj_batched_bs), .syevj_batched = ALL4(syevj_batched),
  .BlasCreate = blas_create, .BlasDestroy = blas_destroy, .BlasSetStream = blas_set_stream, .geam = ALL4(geam),
  .trsm = ALL4(trsm), .scal = {scal_0, scal_1}, .gemm = ALL4(gemm),
};
#undef ALL4

const cx_solver *cx_solver_emu(void) { return &g_emu; }
