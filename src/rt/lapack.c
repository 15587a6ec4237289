/* lapack.c — the linear-algebra routines JIT code calls (cx_rt_linalg): cholesky and
 * triangular-solve as XLA defines them and the LAPACK custom-calls as jaxlib's kernels run
 * them, through Debian's OpenBLAS (its LAPACK and BLAS), one matrix of the batch at a time,
 * in f32, f64, c64 and c128 (f16 and bf16 cholesky and solves in f32).
 *
 * cxla's buffers are row-major and LAPACK's matrices column-major: a row-major matrix is its
 * transpose in LAPACK's eyes. Cholesky and syevd/heevd read one triangle of a symmetric
 * (Hermitian) matrix, whose transpose is the same (the conjugate) matrix, so they take the
 * other uplo on the memory as it is; trsm goes through CBLAS's row-major entry; the others
 * copy each matrix into a column-major scratch and back. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "core/context.h"
#include "core/trace.h"
#include "ir/types.h"
#include "util/util.h"

/* LAPACK's Fortran entry points (character arguments carry their hidden lengths last); the
 * matrices are void * so that one declaration serves the four types' calls below. The complex
 * eigen and singular value routines take a real workspace (rwork) as well. */
typedef void potrf_fn(const char *uplo, const int *n, void *a, const int *lda, int *info, size_t);
typedef void getrf_fn(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);
typedef void geqrf_fn(const int *m, const int *n, void *a, const int *lda, void *tau, void *work, const int *lwork,
                      int *info);
typedef void orgqr_fn(const int *m, const int *n, const int *k, void *a, const int *lda, const void *tau, void *work,
                      const int *lwork, int *info);
typedef void syevd_fn(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work,
                      const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);
typedef void heevd_fn(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work,
                      const int *lwork, void *rwork, const int *lrwork, int *iwork, const int *liwork, int *info,
                      size_t, size_t);
typedef void gesdd_fn(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u,
                      const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *iwork, int *info,
                      size_t);
typedef void cgesdd_fn(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u,
                       const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, void *rwork, int *iwork,
                       int *info, size_t);
typedef void gesvd_fn(const char *jobu, const char *jobvt, const int *m, const int *n, void *a, const int *lda, void *s,
                      void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *info, size_t,
                      size_t);
typedef void cgesvd_fn(const char *jobu, const char *jobvt, const int *m, const int *n, void *a, const int *lda,
                       void *s, void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork,
                       void *rwork, int *info, size_t, size_t);
typedef void geev_fn(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *wr, void *wi,
                     void *vl, const int *ldvl, void *vr, const int *ldvr, void *work, const int *lwork, int *info,
                     size_t, size_t);
typedef void cgeev_fn(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *w, void *vl,
                      const int *ldvl, void *vr, const int *ldvr, void *work, const int *lwork, void *rwork, int *info,
                      size_t, size_t);
typedef void gtsv_fn(const int *n, const int *nrhs, void *dl, void *d, void *du, void *b, const int *ldb, int *info);
typedef void ormqr_fn(const char *side, const char *trans, const int *m, const int *n, const int *k, const void *a,
                      const int *lda, const void *tau, void *c, const int *ldc, void *work, const int *lwork, int *info,
                      size_t, size_t);
typedef void geqp3_fn(const int *m, const int *n, void *a, const int *lda, int *jpvt, void *tau, void *work,
                      const int *lwork, int *info);
typedef void cgeqp3_fn(const int *m, const int *n, void *a, const int *lda, int *jpvt, void *tau, void *work,
                       const int *lwork, void *rwork, int *info);
geqp3_fn sgeqp3_, dgeqp3_;
cgeqp3_fn cgeqp3_, zgeqp3_;
typedef void gehrd_fn(const int *n, const int *ilo, const int *ihi, void *a, const int *lda, void *tau, void *work,
                      const int *lwork, int *info);
gehrd_fn sgehrd_, dgehrd_, cgehrd_, zgehrd_;
typedef void sytrd_fn(const char *uplo, const int *n, void *a, const int *lda, void *d, void *e, void *tau, void *work,
                      const int *lwork, int *info, size_t);
sytrd_fn ssytrd_, dsytrd_, chetrd_, zhetrd_;
gtsv_fn sgtsv_, dgtsv_, cgtsv_, zgtsv_;
ormqr_fn sormqr_, dormqr_, cunmqr_, zunmqr_;
potrf_fn spotrf_, dpotrf_, cpotrf_, zpotrf_;
potrf_fn spotf2_, dpotf2_, cpotf2_, zpotf2_;
getrf_fn sgetrf_, dgetrf_, cgetrf_, zgetrf_;
geqrf_fn sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_;
orgqr_fn sorgqr_, dorgqr_, cungqr_, zungqr_;
syevd_fn ssyevd_, dsyevd_;
heevd_fn cheevd_, zheevd_;
gesdd_fn sgesdd_, dgesdd_;
cgesdd_fn cgesdd_, zgesdd_;
gesvd_fn sgesvd_, dgesvd_;
cgesvd_fn cgesvd_, zgesvd_;
typedef int gees_select(const void *, const void *);
typedef void gees_fn(const char *jobvs, const char *sort, gees_select *select, const int *n, void *a, const int *lda,
                     int *sdim, void *wr, void *wi, void *vs, const int *ldvs, void *work, const int *lwork, int *bwork,
                     int *info, size_t, size_t);
typedef void cgees_fn(const char *jobvs, const char *sort, gees_select *select, const int *n, void *a, const int *lda,
                      int *sdim, void *w, void *vs, const int *ldvs, void *work, const int *lwork, void *rwork,
                      int *bwork, int *info, size_t, size_t);
gees_fn sgees_, dgees_;
cgees_fn cgees_, zgees_;
geev_fn sgeev_, dgeev_;
cgeev_fn cgeev_, zgeev_;

typedef struct lapack {
  potrf_fn *potrf;
  potrf_fn *potf2;       /* the unblocked factorization, never threaded */
  getrf_fn *getrf;
  geqrf_fn *geqrf;
  orgqr_fn *orgqr;
  syevd_fn *syevd;     /* real types */
  heevd_fn *heevd;     /* complex types */
  gesdd_fn *gesdd;
  cgesdd_fn *cgesdd;
  gesvd_fn *gesvd;
  cgesvd_fn *cgesvd;
  geev_fn *geev;
  cgeev_fn *cgeev;
} lapack;
static const lapack k_f32 = {spotrf_, spotf2_, sgetrf_, sgeqrf_, sorgqr_, ssyevd_, NULL, sgesdd_, NULL, sgesvd_, NULL,
                             sgeev_,  NULL};
static const lapack k_f64 = {dpotrf_, dpotf2_, dgetrf_, dgeqrf_, dorgqr_, dsyevd_, NULL, dgesdd_, NULL, dgesvd_, NULL,
                             dgeev_,  NULL};
static const lapack k_c64 = {cpotrf_, cpotf2_, cgetrf_, cgeqrf_, cungqr_, NULL, cheevd_, NULL, cgesdd_, NULL, cgesvd_,
                             NULL,    cgeev_};
static const lapack k_c128 = {zpotrf_, zpotf2_, zgetrf_, zgeqrf_, zungqr_, NULL, zheevd_, NULL, zgesdd_, NULL, zgesvd_,
                              NULL,    zgeev_};

/* One call: the descriptor, its element size and routines, and the failure to report. */
typedef struct la_call {
  cx_rt *rt;
  const cx_la_desc *d;
  const lapack *f;
  size_t es;           /* bytes per element */
  int dbl, cplx;       /* double precision parts; complex */
  int m, n, k;         /* the descriptor's sizes as LAPACK's ints */
  const char *name;
} la_call;

static void fail(la_call *c, cxla_status s, const char *fmt, ...) CX_PRINTF(3, 4);
static void fail(la_call *c, cxla_status s, const char *fmt, ...) {
  if (c->rt->status != CXLA_OK) return;
  int n = snprintf(c->rt->errmsg, sizeof c->rt->errmsg, "%s: ", c->name);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < sizeof c->rt->errmsg) vsnprintf(c->rt->errmsg + n, sizeof c->rt->errmsg - (size_t)n, fmt, ap);
  va_end(ap);
  c->rt->status = s;
}

static void *scratch(la_call *c, size_t bytes) {
  void *p = cx_malloc(bytes ? bytes : 1);
  if (!p) fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory for LAPACK's scratch space");
  return p;
}

/* The real part of element i, and element i set to the real value v (imaginary part 0). */
static double get(const la_call *c, const void *p, int64_t i) {
  int64_t k = c->cplx ? 2 * i : i;
  return c->dbl ? ((const double *)p)[k] : ((const float *)p)[k];
}
static void put(const la_call *c, void *p, int64_t i, double v) {
  int64_t k = c->cplx ? 2 * i : i;
  if (c->dbl) ((double *)p)[k] = v;
  else ((float *)p)[k] = (float)v;
  if (c->cplx && c->dbl) ((double *)p)[k + 1] = 0;
  if (c->cplx && !c->dbl) ((float *)p)[k + 1] = 0;
}

/* dst (cols x rows) = the transpose of src (rows x cols), conjugated when conj: row-major to
 * column-major and back. */
static void transpose_conj(const la_call *c, void *dst, const void *src, int64_t rows, int64_t cols, int conj) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy((char *)dst + (size_t)(j * rows + i) * c->es, (const char *)src + (size_t)(i * cols + j) * c->es, c->es);
  if (!conj || !c->cplx) return;
  for (int64_t i = 0; i < rows * cols; i++) {
    if (c->dbl) ((double *)dst)[2 * i + 1] = -((double *)dst)[2 * i + 1];
    else ((float *)dst)[2 * i + 1] = -((float *)dst)[2 * i + 1];
  }
}
static void transpose(const la_call *c, void *dst, const void *src, int64_t rows, int64_t cols) {
  transpose_conj(c, dst, src, rows, cols, 0);
}

static char *at(const la_call *c, void *base, int64_t b, int64_t per) { return (char *)base + (size_t)(b * per) * c->es; }
static void copy_in(const la_call *c, void *dst, const void *src, int64_t elems) {
  if (dst != src) memmove(dst, src, (size_t)elems * c->es);
}

/* A workspace query's answer (LAPACK returns it as a number of the routine's type). */
static int lwork_of(const la_call *c, const void *w) {
  double v = get(c, w, 0);
  return v < 1 ? 1 : v > INT_MAX ? INT_MAX : (int)v;
}
/* A real workspace query's answer (rwork of the complex routines). */
static int rwork_of(const la_call *c, const void *w) {
  double v = c->dbl ? *(const double *)w : *(const float *)w;
  return v < 1 ? 1 : v > INT_MAX ? INT_MAX : (int)v;
}
static size_t real_size(const la_call *c) { return c->dbl ? 8 : 4; }

/* ---- cholesky and potrf: the lower triangle of a row-major matrix is LAPACK's upper ---- */

/* XLA's rule (interp/linalg.h): the whole matrix NaN when a pivot's square root is NaN; a zero
 * last pivot is NaN (0/0) unless it is alone in its 128-column block (then 0); zeros above. */
static void xla_cholesky_result(const la_call *c, void *l, int info) {
  int64_t n = c->n;
  if (info > 0 && info < n) {
    for (int64_t i = 0; i < n * n; i++) put(c, l, i, NAN);
    return;
  }
  if (info == n) { /* the last pivot, left at its place by potrf */
    double t = get(c, l, n * n - 1);
    if (t != 0) {
      for (int64_t i = 0; i < n * n; i++) put(c, l, i, NAN);
      return;
    }
    put(c, l, n * n - 1, (n - 1) % 128 == 0 ? 0.0 : NAN);
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) put(c, l, i * n + j, 0);
}

/* OpenBLAS's potrf runs on its own threads from n = 64 (f64) or 128 (f32) on, and on this
 * class of machine loses to its single-threaded self up to n = 256 and to its unblocked potf2
 * (never threaded) below 128: dpotrf 64x64 22 us on 2 threads, 12 on one, dpotf2 7.5 us;
 * dpotrf 128x128 78 / 51, dpotf2 68 (bench/README.md). So matrices under POTF2_MAX_N go to
 * potf2, and a batch of them runs across the pool, one matrix per call. */
#define POTF2_MAX_N 128
/* Multiply-adds (n^3 / 3 per factorization) a chunk of the batch should hold. */
#define CHOL_CHUNK_WORK 65536

typedef struct chol_job {
  la_call *c;
  void *out;
  int32_t *info;  /* potrf's per-matrix info, or NULL for XLA's cholesky (its NaN rule instead) */
  int small;      /* potf2 rather than potrf */
  _Atomic int oom;
} chol_job;

/* Factors matrices [begin, end) of the batch in place in out. Kernel ABI: args[0] is the job. */
static void chol_range(void **args, int64_t begin, int64_t end) {
  chol_job *j = args[0];
  la_call *c = j->c;
  int64_t per = (int64_t)c->n * c->n;
  /* row-major lower = LAPACK's upper (of the transpose, which for a Hermitian matrix is the
   * conjugate: its factor's transpose is ours); XLA's lower=false factors the upper triangle,
   * whose factor is the transpose of the lower factor of the transpose: done in place */
  char uplo = c->d->lower ? 'U' : 'L';
  potrf_fn *f = j->small ? c->f->potf2 : c->f->potrf;
  void *t = NULL;
  if (!j->info && !c->d->lower && !(t = cx_malloc((size_t)per * c->es + 1))) {
    j->oom = 1;
    return;
  }
  for (int64_t b = begin; b < end; b++) {
    void *x = at(c, j->out, b, per);
    int inf = 0;
    if (c->n) f(&uplo, &c->n, x, &c->n, &inf, 1);
    if (j->info) {
      j->info[b] = inf;
    } else if (t) { /* the upper factor: work on the transpose, as the interpreter does */
      transpose(c, t, x, c->n, c->n);
      xla_cholesky_result(c, t, inf);
      transpose(c, x, t, c->n, c->n);
    } else {
      xla_cholesky_result(c, x, inf);
    }
  }
  cx_free(t);
}

static void run_cholesky(la_call *c, void **bufs, int xla) {
  void *a = bufs[xla ? 1 : 2];
  chol_job j = {.c = c, .out = bufs[0], .info = xla ? NULL : bufs[1], .small = c->n < POTF2_MAX_N};
  int64_t batch = c->d->batch;
  copy_in(c, j.out, a, batch * (int64_t)c->n * c->n);
  void *args[1] = {&j};
  if (j.small && batch > 1 && c->rt->pool && cx_threadpool_size(c->rt->pool) > 1) {
    double work = (double)c->n * c->n * c->n / 3 + 1;
    int64_t grain = (int64_t)(CHOL_CHUNK_WORK / work);
    cx_threadpool_parallel_for(c->rt->pool, chol_range, args, batch, grain > 1 ? grain : 1);
  } else {
    chol_range(args, 0, batch);
  }
  if (j.oom) fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory for LAPACK's scratch space");
}

static void la_cholesky(la_call *c, void **bufs) { run_cholesky(c, bufs, 1); }
static void la_potrf(la_call *c, void **bufs) { run_cholesky(c, bufs, 0); }

/* ---- trsm: CBLAS takes row-major matrices ---- */

static void la_trsm(la_call *c, void **bufs) {
  void *x = bufs[0];
  const void *a = bufs[1], *b = bufs[2];
  const cx_la_desc *d = c->d;
  int64_t bper = (int64_t)c->m * c->n, aper = (int64_t)c->k * c->k;
  copy_in(c, x, b, d->batch * bper);
  enum CBLAS_SIDE side = d->left ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = d->lower ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = d->trans == 2 ? CblasConjTrans : d->trans == 1 ? CblasTrans : CblasNoTrans;
  enum CBLAS_DIAG diag = d->unit ? CblasUnit : CblasNonUnit;
  static const float one_c[2] = {1, 0};
  static const double one_z[2] = {1, 0};
  if (!c->m || !c->n) return;
  for (int64_t i = 0; i < d->batch; i++) {
    const void *ai = (const char *)a + (size_t)(i * aper) * c->es;
    void *xi = at(c, x, i, bper);
    if (c->cplx && c->dbl) cblas_ztrsm(CblasRowMajor, side, uplo, tr, diag, c->m, c->n, one_z, ai, c->k, xi, c->n);
    else if (c->cplx) cblas_ctrsm(CblasRowMajor, side, uplo, tr, diag, c->m, c->n, one_c, ai, c->k, xi, c->n);
    else if (c->dbl) cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, c->m, c->n, 1.0, ai, c->k, xi, c->n);
    else cblas_strsm(CblasRowMajor, side, uplo, tr, diag, c->m, c->n, 1.0f, ai, c->k, xi, c->n);
  }
}

/* ---- getrf, geqrf, orgqr: through a column-major copy ---- */

static void la_getrf(la_call *c, void **bufs) {
  void *lu = bufs[0], *a = bufs[3];
  int32_t *ipiv = bufs[1], *info = bufs[2];
  int64_t per = (int64_t)c->m * c->n, kk = c->m < c->n ? c->m : c->n;
  void *t = scratch(c, (size_t)per * c->es);
  int lda = c->m > 1 ? c->m : 1;
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    int inf = 0;
    if (per) c->f->getrf(&c->m, &c->n, t, &lda, ipiv + b * kk, &inf);
    info[b] = inf;
    transpose(c, at(c, lu, b, per), t, c->n, c->m);
  }
  cx_free(t);
}

static void la_geqrf(la_call *c, void **bufs) {
  void *qr = bufs[0], *tau = bufs[1], *a = bufs[2];
  int64_t per = (int64_t)c->m * c->n, kk = c->m < c->n ? c->m : c->n;
  int lda = c->m > 1 ? c->m : 1, q = -1, inf = 0;
  char w0[32];
  if (per) c->f->geqrf(&c->m, &c->n, NULL, &lda, NULL, w0, &q, &inf);
  int lwork = per ? lwork_of(c, w0) : 1;
  void *t = scratch(c, (size_t)(per + lwork) * c->es);
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    if (per) c->f->geqrf(&c->m, &c->n, t, &lda, at(c, tau, b, kk), (char *)t + (size_t)per * c->es, &lwork, &inf);
    transpose(c, at(c, qr, b, per), t, c->n, c->m);
  }
  cx_free(t);
}

static void la_orgqr(la_call *c, void **bufs) {
  void *q = bufs[0], *a = bufs[1], *tau = bufs[2];
  int64_t per = (int64_t)c->m * c->n;
  int lda = c->m > 1 ? c->m : 1, query = -1, inf = 0;
  char w0[32];
  if (per) c->f->orgqr(&c->m, &c->n, &c->k, NULL, &lda, NULL, w0, &query, &inf);
  int lwork = per ? lwork_of(c, w0) : 1;
  void *t = scratch(c, (size_t)(per + lwork) * c->es);
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    if (per)
      c->f->orgqr(&c->m, &c->n, &c->k, t, &lda, at(c, tau, b, c->k), (char *)t + (size_t)per * c->es, &lwork, &inf);
    transpose(c, at(c, q, b, per), t, c->n, c->m);
  }
  cx_free(t);
}

/* ---- syevd and heevd: a Hermitian matrix's transpose is its conjugate, whose eigenvectors
 * are the conjugates: they come back as our vectors' conjugate transpose ---- */

static void la_syevd(la_call *c, void **bufs) {
  void *v = bufs[0], *w = bufs[1], *a = bufs[3];
  int32_t *info = bufs[2];
  int64_t n = c->n, per = n * n;
  char jobz = (char)c->d->mode, uplo = c->d->lower ? 'U' : 'L', w0[32], rw0[16];
  int lda = c->n > 1 ? c->n : 1, q = -1, iq = 0, inf = 0, lrwork = 1;
  copy_in(c, v, a, c->d->batch * per);
  if (n && c->cplx) c->f->heevd(&jobz, &uplo, &c->n, NULL, &lda, NULL, w0, &q, rw0, &q, &iq, &q, &inf, 1, 1);
  if (n && !c->cplx) c->f->syevd(&jobz, &uplo, &c->n, NULL, &lda, NULL, w0, &q, &iq, &q, &inf, 1, 1);
  int lwork = n ? lwork_of(c, w0) : 1, liwork = iq > 1 ? iq : 1;
  if (n && c->cplx) lrwork = rwork_of(c, rw0);
  void *t = scratch(c, (size_t)(lwork + per) * c->es + (size_t)lrwork * real_size(c));
  int *iw = t ? scratch(c, sizeof *iw * (size_t)liwork) : NULL;
  for (int64_t b = 0; iw && b < c->d->batch; b++) {
    void *x = at(c, v, b, per), *wb = (char *)w + (size_t)(b * n) * real_size(c);
    char *work = t, *copy = work + (size_t)lwork * c->es, *rwork = copy + (size_t)per * c->es;
    int r = 0;
    if (n && c->cplx) c->f->heevd(&jobz, &uplo, &c->n, x, &lda, wb, work, &lwork, rwork, &lrwork, iw, &liwork, &r, 1, 1);
    if (n && !c->cplx) c->f->syevd(&jobz, &uplo, &c->n, x, &lda, wb, work, &lwork, iw, &liwork, &r, 1, 1);
    info[b] = r;
    if (jobz == 'V') { /* column j holds vector j (conjugated) in LAPACK's order: row j of ours */
      memcpy(copy, x, (size_t)per * c->es);
      transpose_conj(c, x, copy, n, n, 1);
    }
  }
  cx_free(iw);
  cx_free(t);
}

/* ---- gesdd and gesvd: (a', s, u, vt, info), u and vt back to row-major; with mode 'N'
 * LAPACK writes neither, and they are zeros here ---- */

/* The real workspace the complex routines take (jaxlib's sizes, LAPACK's documented ones). */
static int64_t svd_rwork(const la_call *c, int dc, char mode) {
  int64_t mn = c->m < c->n ? c->m : c->n, mx = c->m < c->n ? c->n : c->m;
  if (!dc) return 5 * mn + 1;
  if (mode == 'N') return 7 * mn + 1;
  int64_t x = 5 * mn * mn + 5 * mn, y = 2 * mx * mn + 2 * mn * mn + mn;
  return (x > y ? x : y) + 1;
}

static void svd_call(la_call *c, int dc, char *mode, void *a, int *lda, void *s, void *u, int *ldu, void *vt, int *ldvt,
                     void *work, int *lwork, void *rwork, int *iw, int *info) {
  if (dc && c->cplx) c->f->cgesdd(mode, &c->m, &c->n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iw, info, 1);
  if (dc && !c->cplx) c->f->gesdd(mode, &c->m, &c->n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iw, info, 1);
  if (!dc && c->cplx) c->f->cgesvd(mode, mode, &c->m, &c->n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, 1, 1);
  if (!dc && !c->cplx) c->f->gesvd(mode, mode, &c->m, &c->n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, 1, 1);
}

static void la_svd(la_call *c, void **bufs, int dc) {
  void *ao = bufs[0], *s = bufs[1], *u = bufs[2], *vt = bufs[3], *a = bufs[5];
  int32_t *info = bufs[4];
  const cx_la_desc *d = c->d;
  int64_t per = (int64_t)c->m * c->n, kk = c->m < c->n ? c->m : c->n;
  int64_t uper = (int64_t)c->m * d->ucols, vper = d->vrows * (int64_t)c->n;
  char mode = (char)d->mode, w0[32];
  int lda = c->m > 1 ? c->m : 1, ldu = lda, ldvt = d->vrows > 1 ? (int)d->vrows : 1, q = -1, inf = 0;
  int want = mode != 'N';
  if (!want) {
    memset(u, 0, (size_t)(d->batch * uper) * c->es);
    memset(vt, 0, (size_t)(d->batch * vper) * c->es);
  }
  int64_t nrw = c->cplx ? svd_rwork(c, dc, mode) : 0;
  int *iw = NULL;
  if (per) svd_call(c, dc, &mode, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, w0, &q, NULL, NULL, &inf);
  int lwork = per ? lwork_of(c, w0) : 1;
  char *t = scratch(c, (size_t)(per + uper + vper + lwork) * c->es + (size_t)nrw * real_size(c));
  if (t && dc) iw = scratch(c, sizeof *iw * (size_t)(8 * kk + 1));
  for (int64_t b = 0; t && (iw || !dc) && b < d->batch; b++) {
    char *tu = t + (size_t)per * c->es, *tv = tu + (size_t)uper * c->es, *work = tv + (size_t)vper * c->es;
    char *rwork = work + (size_t)lwork * c->es;
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    int r = 0;
    if (per)
      svd_call(c, dc, &mode, t, &lda, (char *)s + (size_t)(b * kk) * real_size(c), tu, &ldu, tv, &ldvt, work, &lwork,
               rwork, iw, &r);
    info[b] = r;
    transpose(c, at(c, ao, b, per), t, c->n, c->m);
    if (want) {
      transpose(c, at(c, u, b, uper), tu, d->ucols, c->m);
      transpose(c, at(c, vt, b, vper), tv, c->n, d->vrows);
    }
  }
  cx_free(iw);
  cx_free(t);
}

static void la_gesdd(la_call *c, void **bufs) { la_svd(c, bufs, 1); }
static void la_gesvd(la_call *c, void **bufs) { la_svd(c, bufs, 0); }

/* ---- geev: eigenvalues and left and right eigenvectors of a general matrix, through a
 * column-major copy. The real routines pack the vectors of a complex pair (w_j, conj w_j) in
 * two real columns (re, im of the first): unpacked to complex columns here, as jaxlib does. A
 * matrix with a non-finite entry is not decomposed (info -4, jaxlib's rule); after a failure
 * (info != 0) the eigenvalues and vectors are NaN, and a side not asked for is zeros ---- */

static double part(const la_call *c, const void *p, int64_t i) {
  return c->dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}
static void set_part(const la_call *c, void *p, int64_t i, double v) {
  if (c->dbl) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}
static int all_finite(const la_call *c, const void *a, int64_t parts) {
  for (int64_t i = 0; i < parts; i++)
    if (!isfinite(part(c, a, i))) return 0;
  return 1;
}

/* LAPACK's n x n real column-major vectors into the row-major complex out (column j: vector j). */
static void unpack_vectors(const la_call *c, const void *wi, const void *packed, void *out) {
  int64_t n = c->n;
  for (int64_t j = 0; j < n; j++) {
    double im = part(c, wi, j);
    int pair = im != 0 && !isnan(im) && j + 1 < n;
    for (int64_t i = 0; i < n; i++) {
      double re = part(c, packed, j * n + i), vi = pair ? part(c, packed, (j + 1) * n + i) : 0;
      set_part(c, out, 2 * (i * n + j), re);
      set_part(c, out, 2 * (i * n + j) + 1, vi);
      if (pair) {
        set_part(c, out, 2 * (i * n + j + 1), re);
        set_part(c, out, 2 * (i * n + j + 1) + 1, -vi);
      }
    }
    j += pair;
  }
}

static void geev_call(la_call *c, char *jl, char *jr, void *a, int *ld, void *w, void *wi, void *vl, void *vr,
                      void *work, int *lwork, void *rwork, int *info) {
  if (c->cplx) c->f->cgeev(jl, jr, &c->n, a, ld, w, vl, ld, vr, ld, work, lwork, rwork, info, 1, 1);
  else c->f->geev(jl, jr, &c->n, a, ld, w, wi, vl, ld, vr, ld, work, lwork, info, 1, 1);
}

static void la_geev(la_call *c, void **bufs) {
  int cx = c->cplx;
  void *w = bufs[0], *wi = cx ? NULL : bufs[1], *a = bufs[cx ? 4 : 5];
  void *vec[2] = {bufs[cx ? 1 : 2], bufs[cx ? 2 : 3]};
  int32_t *info = bufs[cx ? 3 : 4];
  int64_t n = c->n, per = n * n, vparts = 2 * per, wparts = cx ? 2 * n : n;
  char job[2] = {(char)c->d->mode_left, (char)c->d->mode}, w0[32], rw0[16];
  int ld = c->n > 1 ? c->n : 1, q = -1, inf = 0;
  if (n) geev_call(c, &job[0], &job[1], NULL, &ld, NULL, NULL, NULL, NULL, w0, &q, rw0, &inf);
  int lwork = n ? lwork_of(c, w0) : 1;
  char *t = scratch(c, (size_t)(3 * per + lwork) * c->es + (size_t)(2 * n + 1) * real_size(c));
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    char *x = t, *tv[2] = {x + (size_t)per * c->es, x + (size_t)(2 * per) * c->es};
    char *work = x + (size_t)(3 * per) * c->es, *rwork = work + (size_t)lwork * c->es;
    void *wb = at(c, w, b, n), *wib = cx ? NULL : at(c, wi, b, n);
    const void *ab = at(c, a, b, per);
    int r = -4;
    if (all_finite(c, ab, cx ? 2 * per : per)) {
      transpose(c, x, ab, n, n);
      r = 0;
      if (n) geev_call(c, &job[0], &job[1], x, &ld, wb, wib, tv[0], tv[1], work, &lwork, rwork, &r);
    }
    info[b] = r;
    for (int side = 0; side < 2; side++) {
      void *vb = (char *)vec[side] + (size_t)(b * vparts) * real_size(c);
      if (job[side] != 'V') memset(vb, 0, (size_t)vparts * real_size(c));
      else if (r != 0) for (int64_t i = 0; i < vparts; i++) set_part(c, vb, i, NAN);
      else if (cx) transpose(c, vb, tv[side], n, n);
      else unpack_vectors(c, wib, tv[side], vb);
    }
    for (int64_t i = 0; r != 0 && i < wparts; i++) {
      set_part(c, wb, i, NAN);
      if (!cx) set_part(c, wib, i, NAN);
    }
  }
  cx_free(t);
}

/* ---- gees: the Schur form A = Z T Z^H through a column-major copy, unsorted (jax passes sort
 * 'N', so select and bwork are never read); with mode 'N' LAPACK leaves vs alone and z is
 * zeros. T, Z and the eigenvalues are what LAPACK leaves, info != 0 included (jax's lowering
 * makes T and Z NaN then). ---- */

static void gees_call(la_call *c, char *job, void *a, int *ld, int *sdim, void *w, void *wi, void *vs, void *work,
                      int *lwork, void *rwork, int *bwork, int *info) {
  char sort = 'N';
  if (c->cplx)
    (c->dbl ? zgees_ : cgees_)(job, &sort, NULL, &c->n, a, ld, sdim, w, vs, ld, work, lwork, rwork, bwork, info, 1, 1);
  else (c->dbl ? dgees_ : sgees_)(job, &sort, NULL, &c->n, a, ld, sdim, w, wi, vs, ld, work, lwork, bwork, info, 1, 1);
}

static void la_gees(la_call *c, void **bufs) {
  int cx = c->cplx, nw = cx ? 1 : 2;
  void *t = bufs[0], *z = bufs[1], *w = bufs[2], *wi = cx ? NULL : bufs[3], *a = bufs[4 + nw];
  int32_t *sdim = bufs[2 + nw], *info = bufs[3 + nw];
  int64_t n = c->n, per = n * n;
  char job = (char)c->d->mode, w0[32];
  int ld = c->n > 1 ? c->n : 1, q = -1, inf = 0, sd = 0, bw = 0, lwork = 1;
  if (n) {
    gees_call(c, &job, NULL, &ld, &sd, NULL, NULL, NULL, w0, &q, NULL, &bw, &inf);
    lwork = lwork_of(c, w0);
  }
  char *x = scratch(c, (size_t)(2 * per + lwork) * c->es + (size_t)(n + 1) * real_size(c));
  for (int64_t b = 0; x && b < c->d->batch; b++) {
    char *vs = x + (size_t)per * c->es, *work = vs + (size_t)per * c->es, *rwork = work + (size_t)lwork * c->es;
    transpose(c, x, at(c, a, b, per), c->n, c->n);
    int r = 0, s = 0;
    if (n) gees_call(c, &job, x, &ld, &s, at(c, w, b, n), cx ? NULL : at(c, wi, b, n), vs, work, &lwork, rwork, &bw, &r);
    sdim[b] = s, info[b] = r;
    transpose(c, at(c, t, b, per), x, c->n, c->n);
    if (job == 'V') transpose(c, at(c, z, b, per), vs, c->n, c->n);
    else memset(at(c, z, b, per), 0, (size_t)per * c->es);
  }
  cx_free(x);
}

/* jaxlib's own kernel, not LAPACK's (rt/gtsv_perturbed.c): (x, dl, d, du, b), b's m rows. */
static void la_gtsv_perturbed(la_call *c, void **bufs) {
  if (cx_rt_gtsv_perturbed(c->d->type, c->d->batch, c->d->m, c->d->n, bufs))
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory for the tridiagonal solve's scratch space");
}

/* ---- geqp3, gtsv and ormqr/unmqr: routines picked by type here, the matrices through
 * column-major copies ---- */

static void geqp3_call(const la_call *c, void *a, int *jpvt, void *tau, void *work, int *lwork, void *rwork, int *info) {
  int lda = c->m > 1 ? c->m : 1;
  if (c->cplx) (c->dbl ? zgeqp3_ : cgeqp3_)(&c->m, &c->n, a, &lda, jpvt, tau, work, lwork, rwork, info);
  else (c->dbl ? dgeqp3_ : sgeqp3_)(&c->m, &c->n, a, &lda, jpvt, tau, work, lwork, info);
}

static void la_geqp3(la_call *c, void **bufs) {
  void *qr = bufs[0], *tau = bufs[2], *a = bufs[3];
  int32_t *jpvt = bufs[1];
  int64_t per = (int64_t)c->m * c->n, kk = c->m < c->n ? c->m : c->n;
  int q = -1, inf = 0, lwork = 1;
  char w0[32];
  if (jpvt != bufs[4]) memmove(jpvt, bufs[4], sizeof *jpvt * (size_t)(c->d->batch * c->n)); /* LAPACK's int: 32 bits */
  if (per) {
    geqp3_call(c, NULL, NULL, NULL, w0, &q, NULL, &inf);
    lwork = lwork_of(c, w0);
  }
  char *t = scratch(c, (size_t)(per + lwork) * c->es + (size_t)(2 * c->n + 1) * real_size(c));
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    char *work = t + (size_t)per * c->es, *rwork = work + (size_t)lwork * c->es;
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    if (per) geqp3_call(c, t, jpvt + b * c->n, at(c, tau, b, kk), work, &lwork, rwork, &inf);
    transpose(c, at(c, qr, b, per), t, c->n, c->m);
  }
  cx_free(t);
}

static void la_gehrd(la_call *c, void **bufs) {
  gehrd_fn *f = c->cplx ? (c->dbl ? zgehrd_ : cgehrd_) : (c->dbl ? dgehrd_ : sgehrd_);
  void *h = bufs[0], *tau = bufs[1], *a = bufs[3];
  int32_t *info = bufs[2];
  int64_t n = c->n, per = n * n, nt = n > 0 ? n - 1 : 0;
  int lo = (int)c->d->ucols, hi = (int)c->d->vrows, lda = c->n > 1 ? c->n : 1, q = -1, inf = 0, lwork = 1;
  char w0[32];
  if (n) {
    f(&c->n, &lo, &hi, NULL, &lda, NULL, w0, &q, &inf);
    lwork = lwork_of(c, w0);
  }
  char *t = scratch(c, (size_t)(per + lwork) * c->es);
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, a, b, per), c->n, c->n);
    int r = 0;
    if (n) f(&c->n, &lo, &hi, t, &lda, at(c, tau, b, nt), t + (size_t)per * c->es, &lwork, &r);
    info[b] = r;
    transpose(c, at(c, h, b, per), t, c->n, c->n);
  }
  cx_free(t);
}

/* The matrix goes over column-major, so uplo keeps its meaning; d and e are real. */
static void la_sytrd(la_call *c, void **bufs) {
  sytrd_fn *f = c->cplx ? (c->dbl ? zhetrd_ : chetrd_) : (c->dbl ? dsytrd_ : ssytrd_);
  void *h = bufs[0], *dg = bufs[1], *e = bufs[2], *tau = bufs[3], *a = bufs[5];
  int32_t *info = bufs[4];
  int64_t n = c->n, per = n * n, nt = n > 0 ? n - 1 : 0;
  char uplo = c->d->lower ? 'L' : 'U', w0[32];
  int lda = c->n > 1 ? c->n : 1, q = -1, inf = 0, lwork = 1;
  if (n) {
    f(&uplo, &c->n, NULL, &lda, NULL, NULL, NULL, w0, &q, &inf, 1);
    lwork = lwork_of(c, w0);
  }
  char *t = scratch(c, (size_t)(per + lwork) * c->es);
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, a, b, per), c->n, c->n);
    int r = 0;
    if (n)
      f(&uplo, &c->n, t, &lda, (char *)dg + (size_t)(b * n) * real_size(c), (char *)e + (size_t)(b * nt) * real_size(c),
        at(c, tau, b, nt), t + (size_t)per * c->es, &lwork, &r, 1);
    info[b] = r;
    transpose(c, at(c, h, b, per), t, c->n, c->n);
  }
  cx_free(t);
}

static void la_gtsv(la_call *c, void **bufs) {
  gtsv_fn *f = c->cplx ? (c->dbl ? zgtsv_ : cgtsv_) : (c->dbl ? dgtsv_ : sgtsv_);
  int64_t n = c->m, per = n * c->n;
  int32_t *info = bufs[4];
  for (int i = 0; i < 3; i++) copy_in(c, bufs[i], bufs[5 + i], c->d->batch * n);
  int ldb = c->m > 1 ? c->m : 1;
  void *t = scratch(c, (size_t)per * c->es);
  for (int64_t b = 0; t && b < c->d->batch; b++) {
    transpose(c, t, at(c, bufs[8], b, per), c->m, c->n);
    int inf = 0; /* jaxlib passes dl from its second element: dl[0] is not the matrix's */
    if (n) f(&c->m, &c->n, at(c, bufs[0], b, n) + c->es, at(c, bufs[1], b, n), at(c, bufs[2], b, n), t, &ldb, &inf);
    info[b] = inf;
    transpose(c, at(c, bufs[3], b, per), t, c->n, c->m);
  }
  cx_free(t);
}

static void la_ormqr(la_call *c, void **bufs) {
  ormqr_fn *f = c->cplx ? (c->dbl ? zunmqr_ : cunmqr_) : (c->dbl ? dormqr_ : sormqr_);
  const cx_la_desc *d = c->d;
  void *out = bufs[0], *a = bufs[1], *tau = bufs[2], *x = bufs[3];
  int nq = d->left ? c->m : c->n, ka = (int)d->ucols, lda = nq > 1 ? nq : 1, ldc = c->m > 1 ? c->m : 1;
  int64_t per = (int64_t)c->m * c->n, aper = (int64_t)nq * ka;
  char side = d->left ? 'L' : 'R', trans = d->trans == 2 ? 'C' : d->trans == 1 ? 'T' : 'N', w0[32];
  int q = -1, inf = 0, lwork = 1;
  if (per && c->k) {
    f(&side, &trans, &c->m, &c->n, &c->k, NULL, &lda, NULL, NULL, &ldc, w0, &q, &inf, 1, 1);
    lwork = lwork_of(c, w0);
  }
  char *t = scratch(c, (size_t)(per + aper + lwork) * c->es);
  for (int64_t b = 0; t && b < d->batch; b++) {
    char *ta = t + (size_t)per * c->es, *work = ta + (size_t)aper * c->es;
    transpose(c, t, at(c, x, b, per), c->m, c->n);
    transpose(c, ta, at(c, a, b, aper), nq, ka);
    if (per && c->k) f(&side, &trans, &c->m, &c->n, &c->k, ta, &lda, at(c, tau, b, c->k), t, &ldc, work, &lwork, &inf, 1, 1);
    transpose(c, at(c, out, b, per), t, c->n, c->m);
  }
  cx_free(t);
}

/* ---- the entry point ---- */

typedef void (*routine)(la_call *c, void **bufs);
static const routine k_routines[CX_LA_COUNT] = {
    [CX_LA_CHOLESKY] = la_cholesky, [CX_LA_POTRF] = la_potrf, [CX_LA_TRSM] = la_trsm,
    [CX_LA_GETRF] = la_getrf,       [CX_LA_GEQRF] = la_geqrf, [CX_LA_ORGQR] = la_orgqr,
    [CX_LA_SYEVD] = la_syevd,       [CX_LA_GESDD] = la_gesdd, [CX_LA_GESVD] = la_gesvd,
    [CX_LA_GEEV] = la_geev,
    [CX_LA_GTSV] = la_gtsv,         [CX_LA_ORMQR] = la_ormqr, [CX_LA_GEQP3] = la_geqp3,
    [CX_LA_GEHRD] = la_gehrd,       [CX_LA_SYTRD] = la_sytrd, [CX_LA_GEES] = la_gees,
    [CX_LA_GTSV_PERTURBED] = la_gtsv_perturbed,
};
static const char *const k_names[CX_LA_COUNT] = {
    [CX_LA_CHOLESKY] = "cholesky", [CX_LA_POTRF] = "potrf", [CX_LA_TRSM] = "trsm",
    [CX_LA_GETRF] = "getrf",       [CX_LA_GEQRF] = "geqrf", [CX_LA_ORGQR] = "orgqr",
    [CX_LA_SYEVD] = "syevd",       [CX_LA_GESDD] = "gesdd", [CX_LA_GESVD] = "gesvd",
    [CX_LA_GEEV] = "geev",
    [CX_LA_GTSV] = "gtsv",         [CX_LA_ORMQR] = "ormqr", [CX_LA_GEQP3] = "geqp3",
    [CX_LA_GEHRD] = "gehrd",       [CX_LA_SYTRD] = "sytrd", [CX_LA_GEES] = "gees",
    [CX_LA_GTSV_PERTURBED] = "tridiagonal_solve_perturbed",
};

static const lapack *routines_of(int64_t type) {
  return type == CXLA_F32    ? &k_f32
         : type == CXLA_F64  ? &k_f64
         : type == CXLA_C64  ? &k_c64
         : type == CXLA_C128 ? &k_c128
                             : NULL;
}

/* cholesky and triangular-solve of f16/bf16 (LAPACK has no 16-bit routines): computed in f32
 * on widened copies, the result rounded once to the type. Returns 0 when it does not apply. */
static int narrow_float(cx_rt *rt, const cx_la_desc *d, void **bufs, int32_t id) {
  if ((d->type != CXLA_F16 && d->type != CXLA_BF16) || (d->routine != CX_LA_CHOLESKY && d->routine != CX_LA_TRSM))
    return 0;
  int trsm = d->routine == CX_LA_TRSM, nb = trsm ? 3 : 2;
  /* elements of the result, then of each operand: cholesky (l, a), trsm (x, a, b) */
  int64_t mn = d->m * d->n, n[3] = {d->batch * mn, trsm ? d->batch * d->k * d->k : d->batch * mn, d->batch * mn};
  void *w[3] = {NULL, NULL, NULL};
  int ok = 1;
  for (int i = 0; i < nb && ok; i++) ok = (w[i] = cx_malloc(sizeof(float) * (size_t)(n[i] + 1))) != NULL;
  if (ok) {
    for (int i = 1; i < nb; i++)
      for (int64_t j = 0; j < n[i]; j++) ((float *)w[i])[j] = (float)cx_load_f64((cxla_type)d->type, bufs[i], j);
    cx_la_desc f = *d;
    f.type = CXLA_F32;
    cx_rt_linalg(rt, &f, w, id);
    for (int64_t j = 0; j < n[0] && rt->status == CXLA_OK; j++) cx_store_f64((cxla_type)d->type, bufs[0], j, ((float *)w[0])[j]);
  } else if (rt->status == CXLA_OK) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "out of memory widening a 16-bit matrix to f32");
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < nb; i++) cx_free(w[i]);
  return 1;
}

void cx_rt_linalg(cx_rt *rt, const cx_la_desc *d, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK || narrow_float(rt, d, bufs, id)) return;
  const lapack *f = routines_of(d->type);
  int cplx = d->type == CXLA_C64 || d->type == CXLA_C128, dbl = d->type == CXLA_F64 || d->type == CXLA_C128;
  la_call c = {rt, d, f, (size_t)(dbl ? 8 : 4) * (cplx ? 2 : 1), dbl, cplx, (int)d->m, (int)d->n, (int)d->k,
               rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "linalg"};
  if (d->routine < 0 || d->routine >= CX_LA_COUNT || !f || d->batch < 0 || d->m < 0 || d->n < 0 || d->k < 0) {
    fail(&c, CXLA_ERR_INTERNAL, "bad linear-algebra call (routine %lld, type %lld)", (long long)d->routine,
         (long long)d->type);
    return;
  }
  if (d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX || d->ucols > INT_MAX || d->vrows > INT_MAX) {
    fail(&c, CXLA_ERR_UNSUPPORTED, "matrix dimension over %d (LAPACK takes 32-bit sizes)", INT_MAX);
    return;
  }
  if (rt->ctx) cx_context_set_activity(rt->ctx, "running", c.name);
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  k_routines[d->routine](&c, bufs);
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 3, ta.key[0] = "batch", ta.key[1] = "m", ta.key[2] = "n";
    ta.val[0] = d->batch, ta.val[1] = d->m, ta.val[2] = d->n;
    ta.skey[ta.ns] = "routine", ta.sval[ta.ns++] = k_names[d->routine];
    cx_trace_add(rt->trace, c.name, "library", t0, cx_trace_now(), &ta);
  }
}
