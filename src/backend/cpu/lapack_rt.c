/* lapack_rt.c — the linear-algebra routines JIT code calls (cx_rt_linalg): cholesky and
 * triangular-solve as XLA defines them and the LAPACK custom-calls as jaxlib's kernels run
 * them, through Debian's OpenBLAS (its LAPACK and BLAS), one matrix of the batch at a time.
 *
 * cxla's buffers are row-major and LAPACK's matrices column-major: a row-major matrix is its
 * transpose in LAPACK's eyes. Cholesky and syevd read one triangle of a symmetric matrix, so
 * they take the other uplo on the memory as it is; trsm goes through CBLAS's row-major entry;
 * the others copy each matrix into a column-major scratch and back. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "backend/cpu/runtime.h"
#include "runtime/context.h"
#include "runtime/trace.h"
#include "util/util.h"

/* LAPACK's Fortran entry points (character arguments carry their hidden lengths last); the
 * matrices are void * so that one declaration serves both precisions' calls below. */
typedef void potrf_fn(const char *uplo, const int *n, void *a, const int *lda, int *info, size_t);
typedef void getrf_fn(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);
typedef void geqrf_fn(const int *m, const int *n, void *a, const int *lda, void *tau, void *work, const int *lwork,
                      int *info);
typedef void orgqr_fn(const int *m, const int *n, const int *k, void *a, const int *lda, const void *tau, void *work,
                      const int *lwork, int *info);
typedef void syevd_fn(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work,
                      const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);
typedef void gesdd_fn(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u,
                      const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *iwork, int *info,
                      size_t);
typedef void gesvd_fn(const char *jobu, const char *jobvt, const int *m, const int *n, void *a, const int *lda, void *s,
                      void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *info, size_t,
                      size_t);
potrf_fn spotrf_, dpotrf_;
getrf_fn sgetrf_, dgetrf_;
geqrf_fn sgeqrf_, dgeqrf_;
orgqr_fn sorgqr_, dorgqr_;
syevd_fn ssyevd_, dsyevd_;
gesdd_fn sgesdd_, dgesdd_;
gesvd_fn sgesvd_, dgesvd_;

typedef struct lapack {
  potrf_fn *potrf;
  getrf_fn *getrf;
  geqrf_fn *geqrf;
  orgqr_fn *orgqr;
  syevd_fn *syevd;
  gesdd_fn *gesdd;
  gesvd_fn *gesvd;
} lapack;
static const lapack k_single = {spotrf_, sgetrf_, sgeqrf_, sorgqr_, ssyevd_, sgesdd_, sgesvd_};
static const lapack k_double = {dpotrf_, dgetrf_, dgeqrf_, dorgqr_, dsyevd_, dgesdd_, dgesvd_};

/* One call: the descriptor, its element size and routines, and the failure to report. */
typedef struct la_call {
  cx_rt *rt;
  const cx_la_desc *d;
  const lapack *f;
  size_t es;
  int dbl;
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

/* Element i as a double and back, in the call's precision. */
static double get(const la_call *c, const void *p, int64_t i) {
  return c->dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}
static void put(const la_call *c, void *p, int64_t i, double v) {
  if (c->dbl) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* dst (cols x rows) = the transpose of src (rows x cols): row-major to column-major and back. */
static void transpose(const la_call *c, void *dst, const void *src, int64_t rows, int64_t cols) {
  if (c->dbl) {
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) ((double *)dst)[j * rows + i] = ((const double *)src)[i * cols + j];
  } else {
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) ((float *)dst)[j * rows + i] = ((const float *)src)[i * cols + j];
  }
}

static char *at(const la_call *c, void *base, int64_t b, int64_t per) { return (char *)base + (size_t)(b * per) * c->es; }
static void copy_in(const la_call *c, void *dst, const void *src, int64_t elems) {
  if (dst != src) memmove(dst, src, (size_t)elems * c->es);
}

/* A workspace query's answer (LAPACK returns it as a float of the routine's precision). */
static int lwork_of(const la_call *c, const void *w) {
  double v = get(c, w, 0);
  return v < 1 ? 1 : v > INT_MAX ? INT_MAX : (int)v;
}

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

static void run_cholesky(la_call *c, void **bufs, int xla) {
  void *out = bufs[0], *a = bufs[xla ? 1 : 2];
  int32_t *info = xla ? NULL : bufs[1];
  int64_t per = (int64_t)c->n * c->n;
  copy_in(c, out, a, c->d->batch * per);
  /* row-major lower = LAPACK's upper; XLA's lower=false factors the upper triangle, whose
   * lower factor is the transpose of the lower factor of the transpose: done in place */
  char uplo = c->d->lower ? 'U' : 'L';
  for (int64_t b = 0; b < c->d->batch; b++) {
    void *x = at(c, out, b, per);
    int inf = 0;
    if (c->n) c->f->potrf(&uplo, &c->n, x, &c->n, &inf, 1);
    if (info) {
      info[b] = inf;
      continue;
    }
    if (!c->d->lower) { /* the upper factor: work on the transpose, as the interpreter does */
      void *t = scratch(c, (size_t)per * c->es);
      if (!t) return;
      transpose(c, t, x, c->n, c->n);
      xla_cholesky_result(c, t, inf);
      transpose(c, x, t, c->n, c->n);
      cx_free(t);
    } else {
      xla_cholesky_result(c, x, inf);
    }
  }
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
  if (!c->m || !c->n) return;
  for (int64_t i = 0; i < d->batch; i++) {
    const void *ai = (const char *)a + (size_t)(i * aper) * c->es;
    void *xi = at(c, x, i, bper);
    if (c->dbl) cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, c->m, c->n, 1.0, ai, c->k, xi, c->n);
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
  char w0[16];
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
  char w0[16];
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

/* ---- syevd: a symmetric matrix is its own transpose; the vectors come back transposed ---- */

static void la_syevd(la_call *c, void **bufs) {
  void *v = bufs[0], *w = bufs[1], *a = bufs[3];
  int32_t *info = bufs[2];
  int64_t n = c->n, per = n * n;
  char jobz = (char)c->d->mode, uplo = c->d->lower ? 'U' : 'L', w0[16];
  int lda = c->n > 1 ? c->n : 1, q = -1, iq = 0, inf = 0;
  copy_in(c, v, a, c->d->batch * per);
  if (n) c->f->syevd(&jobz, &uplo, &c->n, NULL, &lda, NULL, w0, &q, &iq, &q, &inf, 1, 1);
  int lwork = n ? lwork_of(c, w0) : 1, liwork = iq > 1 ? iq : 1;
  void *t = scratch(c, (size_t)(lwork + per) * c->es);
  int *iw = t ? scratch(c, sizeof *iw * (size_t)liwork) : NULL;
  for (int64_t b = 0; iw && b < c->d->batch; b++) {
    void *x = at(c, v, b, per);
    int r = 0;
    if (n) c->f->syevd(&jobz, &uplo, &c->n, x, &lda, at(c, w, b, n), t, &lwork, iw, &liwork, &r, 1, 1);
    info[b] = r;
    if (jobz == 'V') { /* column j holds vector j in LAPACK's order: row j of ours */
      memcpy((char *)t + (size_t)lwork * c->es, x, (size_t)per * c->es);
      transpose(c, x, (char *)t + (size_t)lwork * c->es, n, n);
    }
  }
  cx_free(iw);
  cx_free(t);
}

/* ---- gesdd and gesvd: (a', s, u, vt, info), u and vt back to row-major; with mode 'N'
 * LAPACK writes neither, and they are zeros here ---- */

static void la_svd(la_call *c, void **bufs, int dc) {
  void *ao = bufs[0], *s = bufs[1], *u = bufs[2], *vt = bufs[3], *a = bufs[5];
  int32_t *info = bufs[4];
  const cx_la_desc *d = c->d;
  int64_t per = (int64_t)c->m * c->n, kk = c->m < c->n ? c->m : c->n;
  int64_t uper = (int64_t)c->m * d->ucols, vper = d->vrows * (int64_t)c->n;
  char mode = (char)d->mode, w0[16];
  int lda = c->m > 1 ? c->m : 1, ldu = lda, ldvt = d->vrows > 1 ? (int)d->vrows : 1, q = -1, inf = 0;
  int want = mode != 'N';
  if (!want) {
    memset(u, 0, (size_t)(d->batch * uper) * c->es);
    memset(vt, 0, (size_t)(d->batch * vper) * c->es);
  }
  int *iw = NULL;
  if (per && dc) c->f->gesdd(&mode, &c->m, &c->n, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, w0, &q, NULL, &inf, 1);
  if (per && !dc)
    c->f->gesvd(&mode, &mode, &c->m, &c->n, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, w0, &q, &inf, 1, 1);
  int lwork = per ? lwork_of(c, w0) : 1;
  char *t = scratch(c, (size_t)(per + uper + vper + lwork) * c->es);
  if (t && dc) iw = scratch(c, sizeof *iw * (size_t)(8 * kk + 1));
  for (int64_t b = 0; t && (iw || !dc) && b < d->batch; b++) {
    char *tu = t + (size_t)per * c->es, *tv = tu + (size_t)uper * c->es, *work = tv + (size_t)vper * c->es;
    transpose(c, t, at(c, a, b, per), c->m, c->n);
    int r = 0;
    if (per && dc)
      c->f->gesdd(&mode, &c->m, &c->n, t, &lda, at(c, s, b, kk), tu, &ldu, tv, &ldvt, work, &lwork, iw, &r, 1);
    if (per && !dc)
      c->f->gesvd(&mode, &mode, &c->m, &c->n, t, &lda, at(c, s, b, kk), tu, &ldu, tv, &ldvt, work, &lwork, &r, 1, 1);
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

/* ---- the entry point ---- */

typedef void (*routine)(la_call *c, void **bufs);
static const routine k_routines[CX_LA_COUNT] = {
    [CX_LA_CHOLESKY] = la_cholesky, [CX_LA_POTRF] = la_potrf, [CX_LA_TRSM] = la_trsm,
    [CX_LA_GETRF] = la_getrf,       [CX_LA_GEQRF] = la_geqrf, [CX_LA_ORGQR] = la_orgqr,
    [CX_LA_SYEVD] = la_syevd,       [CX_LA_GESDD] = la_gesdd, [CX_LA_GESVD] = la_gesvd,
};
static const char *const k_names[CX_LA_COUNT] = {
    [CX_LA_CHOLESKY] = "cholesky", [CX_LA_POTRF] = "potrf", [CX_LA_TRSM] = "trsm",
    [CX_LA_GETRF] = "getrf",       [CX_LA_GEQRF] = "geqrf", [CX_LA_ORGQR] = "orgqr",
    [CX_LA_SYEVD] = "syevd",       [CX_LA_GESDD] = "gesdd", [CX_LA_GESVD] = "gesvd",
};

void cx_rt_linalg(cx_rt *rt, const cx_la_desc *d, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK) return;
  la_call c = {rt, d, d->type == CXLA_F64 ? &k_double : &k_single, d->type == CXLA_F64 ? 8 : 4, d->type == CXLA_F64,
               (int)d->m, (int)d->n, (int)d->k, rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "linalg"};
  if (d->routine < 0 || d->routine >= CX_LA_COUNT || (d->type != CXLA_F32 && d->type != CXLA_F64) || d->batch < 0 ||
      d->m < 0 || d->n < 0 || d->k < 0) {
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
