/* gpu_linalg.c — cholesky, triangular-solve and the LAPACK custom-calls (potrf, trsm, getrf,
 * geqrf, orgqr/ungqr, syevd/heevd, gesdd/gesvd, sytrd/hetrd, ormqr/unmqr) on cuSOLVER and
 * cuBLAS, with the results the cpu backend's rt/lapack.c gives (its layouts, info words and
 * XLA's cholesky rule); the other LAPACK targets are gpu_host_linalg.c's host steps.
 *
 * cxla's matrices are row-major and cuSOLVER's column-major: a row-major matrix is, to
 * cuSOLVER, its transpose. Where that is harmless the memory is used as it is: potrf and
 * syevd read one triangle of a Hermitian matrix (the transpose is the conjugate, the other
 * uplo), trsm solves the transposed system (side and uplo swapped, as CBLAS's row-major entry
 * does), and an SVD of a wide matrix is the SVD of its tall transpose with u and vt swapped.
 * Elsewhere cuBLAS's geam transposes each matrix into a column-major scratch and back.
 * Batches run one matrix at a time on the executable's stream, in device scratch sized when
 * the executable is loaded (cuSOLVER's bufferSize answers), except batches of small square
 * matrices for potrf, getrf and syevd with vectors: one call of cuSOLVER's potrfBatched,
 * cuBLAS's getrfBatched (given an array of the matrices' device addresses) or cuSOLVER's
 * syevjBatched (the batch as it lies) for the whole batch (cx_gpu_linalg_batched). XLA's cholesky
 * turns a failed factorization into NaN, which needs its info words on the host: that step
 * waits for the stream. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "backend/gpu/gpu_state.h"

enum { ALIGN = 256 };

static size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int ld(int64_t x) { return x > 1 ? (int)x : 1; }

/* a step's scratch: offsets of the column-major matrix, u, vt, cuSOLVER's workspace, the
 * info words and a batched call's matrix addresses; the whole size */
typedef struct scratch { size_t s, u, vt, work, info, ptrs, size; } scratch;

/* The batched routines are written for batches of small matrices, whose per-call launches
 * would cost more than their arithmetic; 32 and under is where the steps take them (a
 * starting rule: not yet measured on a GPU). */
enum { BATCHED_MAX_N = 32 };

int cx_gpu_linalg_batched(const cx_la_desc *d) {
  int r = (int)d->routine;
  /* cholesky, not potrf: potrfBatched's documentation leaves the other triangle to it as
   * workspace, which the potrf target's result keeps as it was (cholesky zeros it) */
  int chol = r == CX_LA_CHOLESKY, lu = r == CX_LA_GETRF && d->m == d->n;
  /* syevjBatched only with vectors: without them the matrix it leaves behind (a result of the
   * target's) would be Jacobi's, not syevd's */
  int eig = r == CX_LA_SYEVD && d->mode == 'V';
  return (chol || lu || eig) && d->batch >= 2 && d->batch <= INT32_MAX && d->n >= 1 && d->n <= BATCHED_MAX_N;
}

static size_t esize_of(int64_t type) { return (size_t)cxla_type_size((cxla_type)type); }

/* ormqr's a: nq x ka, nq the rows of c (left) or its columns */
static int64_t ormqr_nq(const cx_la_desc *d) { return d->left ? d->m : d->n; }

static scratch layout(const cx_la_desc *d, int batched, int lwork) {
  size_t es = esize_of(d->type), mn = (size_t)(d->m * d->n);
  scratch x = {0};
  int svd = d->routine == CX_LA_GESDD || d->routine == CX_LA_GESVD;
  /* the second matrix: an SVD's u, or ormqr's a in column-major form */
  size_t second = svd ? (size_t)(d->m * d->ucols) : d->routine == CX_LA_ORMQR ? (size_t)(ormqr_nq(d) * d->ucols) : 0;
  x.u = up(mn * es);
  x.vt = x.u + up(second * es);
  x.work = x.vt + (svd ? up((size_t)(d->vrows * d->n) * es) : 0);
  x.info = x.work + up((size_t)lwork * es);
  x.ptrs = x.info + up(sizeof(int32_t) * (size_t)(d->batch > 0 ? d->batch : 1));
  int ptrs = batched && d->routine != CX_LA_SYEVD;
  x.size = x.ptrs + (ptrs ? up(sizeof(CUdeviceptr) * (size_t)d->batch) : 0);
  return x;
}

/* ormqr's trans: jax asks for Q^T (real) or Q^H (complex) */
static int ormqr_op(const cx_la_desc *d) {
  return d->trans == 2 ? CX_BLAS_OP_C : d->trans == 1 ? CX_BLAS_OP_T : CX_BLAS_OP_N;
}

/* cuSOLVER's workspace for the step, in elements */
static int workspace(const cx_solver *sv, void *h, void *params, const cx_la_desc *d, int batched, int *lwork) {
  int t = cx_solver_type((cxla_type)d->type), m = (int)d->m, n = (int)d->n, k = (int)d->k;
  int uplo = d->lower ? CX_BLAS_FILL_UPPER : CX_BLAS_FILL_LOWER;
  *lwork = 1;
  if (!d->m || !d->n) return 0;
  switch ((cx_la_routine)d->routine) {
  case CX_LA_CHOLESKY: case CX_LA_POTRF: return sv->potrf_bs[t](h, uplo, n, NULL, ld(n), lwork);
  case CX_LA_GETRF: return sv->getrf_bs[t](h, m, n, NULL, ld(m), lwork);
  case CX_LA_GEQRF: return sv->geqrf_bs[t](h, m, n, NULL, ld(m), lwork);
  case CX_LA_ORGQR: return sv->orgqr_bs[t](h, m, n, k, NULL, ld(m), NULL, lwork);
  case CX_LA_SYEVD:
    if (batched)
      return sv->syevj_batched_bs[t](h, CX_SOLVER_EIG_VECTOR, uplo, n, NULL, n, NULL, lwork, params, (int)d->batch);
    return sv->syevd_bs[t](h, d->mode == 'V' ? CX_SOLVER_EIG_VECTOR : CX_SOLVER_EIG_NOVECTOR, uplo, n, NULL, ld(n), NULL,
                           lwork);
  case CX_LA_GESDD: case CX_LA_GESVD:
    return sv->gesvd_bs[t](h, (int)(m > n ? m : n), (int)(m < n ? m : n), lwork);
  case CX_LA_SYTRD: /* on a column-major copy: uplo as the target says */
    return sv->sytrd_bs[t](h, d->lower ? CX_BLAS_FILL_LOWER : CX_BLAS_FILL_UPPER, n, NULL, ld(n), NULL, NULL, NULL, lwork);
  case CX_LA_ORMQR:
    if (!k) return 0;
    return sv->ormqr_bs[t](h, d->left ? CX_BLAS_SIDE_LEFT : CX_BLAS_SIDE_RIGHT, ormqr_op(d), m, n, k, NULL,
                           ld(ormqr_nq(d)), NULL, NULL, ld(m), lwork);
  default: return 0;
  }
}

static int needs_blas(const cx_gpu_prog *p) {
  for (int i = 0; i < p->nsteps; i++)
    if (p->steps[i].kind == CX_GPU_LINALG || p->steps[i].kind == CX_GPU_RAGGED ||
        (p->steps[i].kind == CX_GPU_FFT && p->steps[i].fft.scale != 1))
      return 1;
  return 0;
}

cxla_status cx_gpu_linalg_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  if (!needs_blas(p)) return CXLA_OK;
  if (st->build_mode & CX_GPU_LLVM_IMAGE) st->sv = cx_solver_emu();
  else CX_TRY(cx_solver_get(ctx, &st->sv));
  const cx_solver *sv = st->sv;
  int r = sv->Create(&st->sv_handle);
  if (r) return st->sv_handle = NULL, cx_solver_error(ctx, r, "cusolverDnCreate");
  if ((r = sv->BlasCreate(&st->blas_handle))) return st->blas_handle = NULL, cx_solver_error(ctx, r, "cublasCreate");
  if (!(st->la_lwork = cx_calloc((size_t)p->nsteps + 1, sizeof *st->la_lwork))) return cx_oom(ctx);
  int64_t max_batch = 1, max_ptrs = 1;
  for (int i = 0; i < p->nsteps; i++) {
    const cx_gpu_step *s = &p->steps[i];
    if (s->kind != CX_GPU_LINALG) continue;
    if (s->la.routine == CX_LA_SYEVD && s->la_batched && !st->syevj_params &&
        (r = sv->CreateSyevjInfo(&st->syevj_params)))
      return st->syevj_params = NULL, cx_solver_error(ctx, r, "cusolverDnCreateSyevjInfo");
    if ((r = workspace(sv, st->sv_handle, st->syevj_params, &s->la, s->la_batched, &st->la_lwork[i])))
      return cx_solver_error(ctx, r, s->in->name);
    size_t need = layout(&s->la, s->la_batched, st->la_lwork[i]).size;
    if (need > st->la_ws_size) st->la_ws_size = need;
    if (s->la.routine == CX_LA_CHOLESKY && s->la.batch > max_batch) max_batch = s->la.batch;
    if (s->la_batched && s->la.batch > max_ptrs) max_ptrs = s->la.batch;
  }
  if (!(st->la_info = cx_calloc((size_t)max_batch, sizeof *st->la_info))) return cx_oom(ctx);
  if (!(st->la_ptrs = cx_calloc((size_t)max_ptrs, sizeof *st->la_ptrs))) return cx_oom(ctx);
  return st->la_ws_size ? cx_gpu_alloc(ctx, st->device, st->la_ws_size, &st->la_ws, &st->la_ws_got) : CXLA_OK;
}

void cx_gpu_linalg_unload(gpu_state *st) {
  cx_gpu_free(st->device, st->la_ws, st->la_ws_got);
  if (st->syevj_params) st->sv->DestroySyevjInfo(st->syevj_params);
  st->syevj_params = NULL;
  if (st->sv_handle) st->sv->Destroy(st->sv_handle);
  if (st->blas_handle) st->sv->BlasDestroy(st->blas_handle);
  cx_free(st->la_lwork);
  cx_free(st->la_info);
  cx_free(st->la_ptrs);
  st->la_ptrs = NULL;
  st->la_ws = 0, st->la_ws_size = 0, st->sv_handle = st->blas_handle = NULL, st->la_lwork = NULL, st->la_info = NULL;
}

/* ---- one step ---- */

typedef struct call {
  cxla_context *ctx;
  gpu_state *st;
  const cx_solver *sv;
  const cx_cuda *cu;
  const cx_gpu_step *s;
  const cx_la_desc *d;
  CUstream stream;
  int t, lwork;
  size_t es;
  scratch x;
} call;

static void *dp(CUdeviceptr p) { return (void *)(uintptr_t)p; }
static CUdeviceptr at(const call *c, CUdeviceptr base, int64_t b, int64_t elems) {
  return base + (CUdeviceptr)((size_t)(b * elems) * c->es);
}
static CUdeviceptr ws(const call *c, size_t off) { return c->st->la_ws + off; }

static cxla_status lib(call *c, int r, const char *what) {
  if (!r) return CXLA_OK;
  char m[300];
  snprintf(m, sizeof m, "%s (%s)", c->s->in->name ? c->s->in->name : "?", what);
  return cx_solver_error(c->ctx, r, m);
}
static cxla_status drv(call *c, CUresult e, const char *what) { return e ? cx_cuda_error(c->ctx, c->cu, e, what) : CXLA_OK; }

static cxla_status copy(call *c, CUdeviceptr dst, CUdeviceptr src, int64_t elems) {
  if (dst == src || elems <= 0) return CXLA_OK;
  return drv(c, c->cu->MemcpyDtoDAsync(dst, src, (size_t)elems * c->es, c->stream), "cuMemcpyDtoDAsync");
}

/* dst (q x p, column-major, leading dimension q) = op(src), src p x q column-major: a
 * row-major matrix to its column-major copy and back */
static cxla_status transpose(call *c, CUdeviceptr dst, CUdeviceptr src, int64_t p, int64_t q, int op) {
  static const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  static const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
  if (!p || !q) return CXLA_OK;
  int dbl = c->t & 1;
  int r = c->sv->geam[c->t](c->st->blas_handle, op, CX_BLAS_OP_N, (int)q, (int)p, dbl ? (const void *)one_d : one_f,
                            dp(src), (int)p, dbl ? (const void *)zero_d : zero_f, dp(dst), (int)q, dp(dst), (int)q);
  return lib(c, r, "cublas geam");
}

/* ---- XLA's cholesky rule (interp/linalg.h): zeros in the other triangle; the whole matrix
 * NaN when a pivot's square root is NaN; a zero last pivot NaN (0/0) unless alone in its
 * 128-column block (then 0). NaN is written into each element's real part (its imaginary
 * part 0), as the cpu backend does. ---- */

static cxla_status nan_fill(call *c, CUdeviceptr p, int64_t elems) {
  CX_TRY(drv(c, c->cu->MemsetD8Async(p, 0, (size_t)elems * c->es, c->stream), "cuMemsetD8Async"));
  /* 0x7ff80000 is an f32 NaN, and twice over (0x7ff800007ff80000) an f64 one */
  size_t words = (c->t & 1) ? 2 : 1;
  return drv(c, c->cu->MemsetD2D32Async(p, c->es, 0x7ff80000u, words, (size_t)elems, c->stream), "cuMemsetD2D32Async");
}

static cxla_status zero_other_triangle(call *c, CUdeviceptr p, int64_t n, int lower) {
  for (int64_t i = 0; i < n; i++) { /* row i: after the diagonal (lower) or before it (upper) */
    int64_t first = lower ? i * n + i + 1 : i * n, count = lower ? n - 1 - i : i;
    if (count > 0)
      CX_TRY(drv(c, c->cu->MemsetD8Async(p + (CUdeviceptr)((size_t)first * c->es), 0, (size_t)count * c->es, c->stream),
                 "cuMemsetD8Async"));
  }
  return CXLA_OK;
}

static cxla_status xla_rule(call *c, CUdeviceptr l, int info) {
  int64_t n = c->d->n;
  if (info > 0 && info < n) return nan_fill(c, l, n * n);
  if (info == n) { /* the last pivot, left in its place by potrf */
    CUdeviceptr last = l + (CUdeviceptr)((size_t)(n * n - 1) * c->es);
    double t = 0;
    float tf = 0;
    CX_TRY(drv(c, c->cu->StreamSynchronize(c->stream), "cuStreamSynchronize"));
    CX_TRY(drv(c, c->cu->MemcpyDtoH((c->t & 1) ? (void *)&t : (void *)&tf, last, (c->t & 1) ? 8 : 4), "cuMemcpyDtoH"));
    if (!(c->t & 1)) t = tf;
    if (t != 0) return nan_fill(c, l, n * n);
    if ((n - 1) % 128) CX_TRY(nan_fill(c, last, 1));
    else CX_TRY(drv(c, c->cu->MemsetD8Async(last, 0, c->es, c->stream), "cuMemsetD8Async"));
  }
  return zero_other_triangle(c, l, n, (int)c->d->lower);
}

/* the batch's matrix addresses (base + b * per elements) into the scratch's array, from the
 * host array of the executable's (pageable: the copy returns once the bytes are staged) */
static cxla_status addresses(call *c, CUdeviceptr base, int64_t per) {
  for (int64_t b = 0; b < c->d->batch; b++) c->st->la_ptrs[b] = at(c, base, b, per);
  return drv(c, c->cu->MemcpyHtoDAsync(ws(c, c->x.ptrs), c->st->la_ptrs, sizeof(CUdeviceptr) * (size_t)c->d->batch,
                                       c->stream), "cuMemcpyHtoDAsync");
}

/* getrf of a batch of small square matrices: each into column-major form in the result's own
 * memory (through the scratch, so that a result that is its operand's memory works too), one
 * getrfBatched call (pivots and info words straight into the results), and back. bufs: lu,
 * ipiv, info, a */
static cxla_status getrf_batched(call *c, const CUdeviceptr *p) {
  int64_t n = c->d->n, per = n * n;
  CUdeviceptr s = ws(c, c->x.s);
  for (int64_t b = 0; b < c->d->batch; b++) {
    CX_TRY(transpose(c, s, at(c, p[3], b, per), n, n, CX_BLAS_OP_T));
    CX_TRY(copy(c, at(c, p[0], b, per), s, per));
  }
  CX_TRY(addresses(c, p[0], per));
  CX_TRY(lib(c, c->sv->getrf_batched[c->t](c->st->blas_handle, (int)n, dp(ws(c, c->x.ptrs)), (int)n, (int *)dp(p[1]),
                                           (int *)dp(p[2]), (int)c->d->batch), "cublas getrfBatched"));
  for (int64_t b = 0; b < c->d->batch; b++) {
    CX_TRY(transpose(c, s, at(c, p[0], b, per), n, n, CX_BLAS_OP_T));
    CX_TRY(copy(c, at(c, p[0], b, per), s, per));
  }
  return CXLA_OK;
}

/* potrf of matrix b of out, its info word at info + 4 b */
static cxla_status potrf_one(call *c, CUdeviceptr out, int64_t b, CUdeviceptr info, int uplo) {
  int n = (int)c->d->n;
  return lib(c, c->sv->potrf[c->t](c->st->sv_handle, uplo, n, dp(at(c, out, b, (int64_t)n * n)), n, dp(ws(c, c->x.work)),
                                   c->lwork, (int *)dp(info + (CUdeviceptr)(4 * b))), "cusolverDn potrf");
}

/* potrf on the memory as it is (row-major lower is column-major upper); bufs: out, [info,] a */
static cxla_status cholesky(call *c, const CUdeviceptr *p, int xla) {
  const cx_la_desc *d = c->d;
  int64_t per = d->n * d->n;
  CUdeviceptr out = p[0], a = p[xla ? 1 : 2], info = xla ? ws(c, c->x.info) : p[1];
  int n = (int)d->n, uplo = d->lower ? CX_BLAS_FILL_UPPER : CX_BLAS_FILL_LOWER;
  CX_TRY(copy(c, out, a, d->batch * per));
  if (!n) return CXLA_OK;
  if (c->s->la_batched) {
    CX_TRY(addresses(c, out, per));
    CX_TRY(lib(c, c->sv->potrf_batched[c->t](c->st->sv_handle, uplo, n, dp(ws(c, c->x.ptrs)), n, (int *)dp(info),
                                             (int)d->batch), "cusolverDn potrfBatched"));
  }
  for (int64_t b = 0; !c->s->la_batched && b < d->batch; b++)
    CX_TRY(potrf_one(c, out, b, info, uplo));
  if (!xla) return CXLA_OK;
  CX_TRY(drv(c, c->cu->StreamSynchronize(c->stream), "cuStreamSynchronize"));
  CX_TRY(drv(c, c->cu->MemcpyDtoH(c->st->la_info, info, sizeof(int32_t) * (size_t)d->batch), "cuMemcpyDtoH"));
  /* XLA's rule reads a zero last pivot where potrf leaves it, which potrfBatched's
   * documentation does not promise: such a matrix is factored again alone (its input is still
   * there: a batched cholesky's result is never its operand's memory, gpu_build.c) */
  for (int64_t b = 0; c->s->la_batched && b < d->batch; b++)
    if (c->st->la_info[b] == n) {
      CX_TRY(copy(c, at(c, out, b, per), at(c, a, b, per), per));
      CX_TRY(potrf_one(c, out, b, info, uplo));
      CX_TRY(drv(c, c->cu->StreamSynchronize(c->stream), "cuStreamSynchronize"));
      CX_TRY(drv(c, c->cu->MemcpyDtoH(&c->st->la_info[b], info + (CUdeviceptr)(4 * b), sizeof(int32_t)), "cuMemcpyDtoH"));
    }
  for (int64_t b = 0; b < d->batch; b++) CX_TRY(xla_rule(c, at(c, out, b, per), c->st->la_info[b]));
  return CXLA_OK;
}

/* row-major op(A) X = B (left) is column-major X^T op(A)^T = B^T: side and uplo swap */
static cxla_status trsm(call *c, const CUdeviceptr *p) {
  static const double one_d[2] = {1, 0};
  static const float one_f[2] = {1, 0};
  const cx_la_desc *d = c->d;
  int64_t per = d->m * d->n, aper = d->k * d->k;
  CX_TRY(copy(c, p[0], p[2], d->batch * per));
  if (!per) return CXLA_OK;
  int side = d->left ? CX_BLAS_SIDE_RIGHT : CX_BLAS_SIDE_LEFT, uplo = d->lower ? CX_BLAS_FILL_UPPER : CX_BLAS_FILL_LOWER;
  int op = d->trans == 2 ? CX_BLAS_OP_C : d->trans == 1 ? CX_BLAS_OP_T : CX_BLAS_OP_N;
  int diag = d->unit ? CX_BLAS_DIAG_UNIT : CX_BLAS_DIAG_NON_UNIT;
  for (int64_t b = 0; b < d->batch; b++)
    CX_TRY(lib(c, c->sv->trsm[c->t](c->st->blas_handle, side, uplo, op, diag, (int)d->n, (int)d->m,
                                    (c->t & 1) ? (const void *)one_d : one_f, dp(at(c, p[1], b, aper)), ld(d->k),
                                    dp(at(c, p[0], b, per)), ld(d->n)),
               "cublas trsm"));
  return CXLA_OK;
}

/* getrf, geqrf, orgqr: each matrix through a column-major copy */
static cxla_status factor(call *c, const CUdeviceptr *p) {
  const cx_la_desc *d = c->d;
  int64_t m = d->m, n = d->n, per = m * n, kk = min64(m, n);
  int r = (int)d->routine;
  if (c->s->la_batched) return getrf_batched(c, p);
  CUdeviceptr a = r == CX_LA_GETRF ? p[3] : r == CX_LA_GEQRF ? p[2] : p[1], s = ws(c, c->x.s);
  void *work = dp(ws(c, c->x.work)), *h = c->st->sv_handle;
  for (int64_t b = 0; b < d->batch; b++) {
    CX_TRY(transpose(c, s, at(c, a, b, per), n, m, CX_BLAS_OP_T));
    int *info = (int *)dp(ws(c, c->x.info));
    if (per && r == CX_LA_GETRF) {
      info = (int *)dp(p[2] + (CUdeviceptr)(4 * b));
      CX_TRY(lib(c, c->sv->getrf[c->t](h, (int)m, (int)n, dp(s), ld(m), work, (int *)dp(p[1] + (CUdeviceptr)(4 * b * kk)), info),
                 "cusolverDn getrf"));
    } else if (per && r == CX_LA_GEQRF) {
      CX_TRY(lib(c, c->sv->geqrf[c->t](h, (int)m, (int)n, dp(s), ld(m), dp(at(c, p[1], b, kk)), work, c->lwork, info),
                 "cusolverDn geqrf"));
    } else if (per) {
      CX_TRY(lib(c, c->sv->orgqr[c->t](h, (int)m, (int)n, (int)d->k, dp(s), ld(m), dp(at(c, p[2], b, d->k)), work,
                                       c->lwork, info), "cusolverDn orgqr"));
    }
    CX_TRY(transpose(c, at(c, p[0], b, per), s, m, n, CX_BLAS_OP_T));
  }
  if (!per && r == CX_LA_GETRF) /* no matrix to factor: info 0 */
    CX_TRY(drv(c, c->cu->MemsetD8Async(p[2], 0, sizeof(int32_t) * (size_t)d->batch, c->stream), "cuMemsetD8Async"));
  return CXLA_OK;
}

/* syevd on the memory as it is (the conjugate: the other uplo); its eigenvectors come back
 * conjugated in columns, our vectors' conjugate transpose. bufs: v, w, info, a */
static cxla_status syevd(call *c, const CUdeviceptr *p) {
  const cx_la_desc *d = c->d;
  int64_t n = d->n, per = n * n;
  int jobz = d->mode == 'V' ? CX_SOLVER_EIG_VECTOR : CX_SOLVER_EIG_NOVECTOR;
  int uplo = d->lower ? CX_BLAS_FILL_UPPER : CX_BLAS_FILL_LOWER;
  size_t rs = (c->t & 1) ? 8 : 4;
  CUdeviceptr s = ws(c, c->x.s);
  if (!n) return CXLA_OK;
  if (c->s->la_batched) { /* Jacobi on the whole batch in v's memory, then each conjugate-transposed */
    CX_TRY(copy(c, p[0], p[3], d->batch * per));
    CX_TRY(lib(c, c->sv->syevj_batched[c->t](c->st->sv_handle, jobz, uplo, (int)n, dp(p[0]), (int)n, dp(p[1]),
                                             dp(ws(c, c->x.work)), c->lwork, (int *)dp(p[2]), c->st->syevj_params,
                                             (int)d->batch), "cusolverDn syevjBatched"));
    for (int64_t b = 0; b < d->batch; b++) {
      CX_TRY(transpose(c, s, at(c, p[0], b, per), n, n, CX_BLAS_OP_C));
      CX_TRY(copy(c, at(c, p[0], b, per), s, per));
    }
    return CXLA_OK;
  }
  for (int64_t b = 0; b < d->batch; b++) {
    CX_TRY(copy(c, s, at(c, p[3], b, per), per));
    CX_TRY(lib(c, c->sv->syevd[c->t](c->st->sv_handle, jobz, uplo, (int)n, dp(s), (int)n,
                                     dp(p[1] + (CUdeviceptr)((size_t)(b * n) * rs)), dp(ws(c, c->x.work)), c->lwork,
                                     (int *)dp(p[2] + (CUdeviceptr)(4 * b))), "cusolverDn syevd"));
    if (jobz == CX_SOLVER_EIG_VECTOR) CX_TRY(transpose(c, at(c, p[0], b, per), s, n, n, CX_BLAS_OP_C));
    else CX_TRY(copy(c, at(c, p[0], b, per), s, per));
  }
  return CXLA_OK;
}

/* cuSOLVER's gesvd takes tall matrices (m >= n). A tall row-major matrix goes through a
 * column-major copy; a wide one is, as it lies, the column-major tall A^T = U2 S V2^H, whose
 * U2 read row-major is our vt and whose V2^H read row-major is our u (for complex matrices
 * too). bufs: a', s, u, vt, info, a */
static cxla_status svd(call *c, const CUdeviceptr *p) {
  const cx_la_desc *d = c->d;
  int64_t m = d->m, n = d->n, per = m * n, uper = m * d->ucols, vper = d->vrows * n, kk = min64(m, n);
  size_t rs = (c->t & 1) ? 8 : 4;
  signed char job = (signed char)d->mode;
  int want = job != 'N', tall = m >= n;
  CUdeviceptr s = ws(c, c->x.s), su = ws(c, c->x.u), svt = ws(c, c->x.vt);
  if (!want || !per) {
    CX_TRY(drv(c, c->cu->MemsetD8Async(p[2], 0, (size_t)(d->batch * uper) * c->es, c->stream), "cuMemsetD8Async"));
    CX_TRY(drv(c, c->cu->MemsetD8Async(p[3], 0, (size_t)(d->batch * vper) * c->es, c->stream), "cuMemsetD8Async"));
  }
  if (!per)
    return drv(c, c->cu->MemsetD8Async(p[4], 0, sizeof(int32_t) * (size_t)d->batch, c->stream), "cuMemsetD8Async");
  for (int64_t b = 0; b < d->batch; b++) {
    CUdeviceptr ub = at(c, p[2], b, uper), vb = at(c, p[3], b, vper);
    if (tall) CX_TRY(transpose(c, s, at(c, p[5], b, per), n, m, CX_BLAS_OP_T));
    else CX_TRY(copy(c, s, at(c, p[5], b, per), per));
    int64_t rows = tall ? m : n, cols = tall ? n : m;
    /* tall: u and vt into scratch, transposed after; wide: U2 is vt and V2^H is u as they are */
    CUdeviceptr U = tall ? su : vb, VT = tall ? svt : ub;
    int ldvt = (int)(job == 'A' ? cols : kk);
    CX_TRY(lib(c, c->sv->gesvd[c->t](c->st->sv_handle, job, job, (int)rows, (int)cols, dp(s), ld(rows),
                                     dp(p[1] + (CUdeviceptr)((size_t)(b * kk) * rs)), want ? dp(U) : NULL, ld(rows),
                                     want ? dp(VT) : NULL, ld(want ? ldvt : 1), dp(ws(c, c->x.work)), c->lwork, NULL,
                                     (int *)dp(p[4] + (CUdeviceptr)(4 * b))), "cusolverDn gesvd"));
    if (tall) CX_TRY(transpose(c, at(c, p[0], b, per), s, m, n, CX_BLAS_OP_T));
    else CX_TRY(copy(c, at(c, p[0], b, per), s, per));
    if (want && tall) {
      CX_TRY(transpose(c, ub, su, m, d->ucols, CX_BLAS_OP_T));
      CX_TRY(transpose(c, vb, svt, d->vrows, n, CX_BLAS_OP_T));
    }
  }
  return CXLA_OK;
}

/* sytrd/hetrd through a column-major copy (uplo keeps its meaning, as on the cpu); d and e
 * real. bufs: a', d, e, tau, info, a */
static cxla_status sytrd(call *c, const CUdeviceptr *p) {
  const cx_la_desc *d = c->d;
  int64_t n = d->n, per = n * n, nt = n > 0 ? n - 1 : 0;
  size_t rs = (c->t & 1) ? 8 : 4;
  CUdeviceptr s = ws(c, c->x.s);
  if (!n) return drv(c, c->cu->MemsetD8Async(p[4], 0, sizeof(int32_t) * (size_t)d->batch, c->stream), "cuMemsetD8Async");
  for (int64_t b = 0; b < d->batch; b++) {
    CX_TRY(transpose(c, s, at(c, p[5], b, per), n, n, CX_BLAS_OP_T));
    CX_TRY(lib(c, c->sv->sytrd[c->t](c->st->sv_handle, d->lower ? CX_BLAS_FILL_LOWER : CX_BLAS_FILL_UPPER, (int)n, dp(s),
                                     (int)n, dp(p[1] + (CUdeviceptr)((size_t)(b * n) * rs)),
                                     dp(p[2] + (CUdeviceptr)((size_t)(b * nt) * rs)), dp(at(c, p[3], b, nt)),
                                     dp(ws(c, c->x.work)), c->lwork, (int *)dp(p[4] + (CUdeviceptr)(4 * b))),
               "cusolverDn sytrd"));
    CX_TRY(transpose(c, at(c, p[0], b, per), s, n, n, CX_BLAS_OP_T));
  }
  return CXLA_OK;
}

/* ormqr/unmqr: c and a through column-major copies. bufs: c', a, tau, c */
static cxla_status ormqr(call *c, const CUdeviceptr *p) {
  const cx_la_desc *d = c->d;
  int64_t m = d->m, n = d->n, per = m * n, nq = ormqr_nq(d), ka = d->ucols, aper = nq * ka;
  CUdeviceptr s = ws(c, c->x.s), sa = ws(c, c->x.u);
  if (!per) return CXLA_OK;
  if (!d->k) return copy(c, p[0], p[3], d->batch * per); /* no reflector: Q = I */
  for (int64_t b = 0; b < d->batch; b++) {
    CX_TRY(transpose(c, s, at(c, p[3], b, per), n, m, CX_BLAS_OP_T));
    CX_TRY(transpose(c, sa, at(c, p[1], b, aper), ka, nq, CX_BLAS_OP_T));
    CX_TRY(lib(c, c->sv->ormqr[c->t](c->st->sv_handle, d->left ? CX_BLAS_SIDE_LEFT : CX_BLAS_SIDE_RIGHT, ormqr_op(d),
                                     (int)m, (int)n, (int)d->k, dp(sa), ld(nq), dp(at(c, p[2], b, d->k)), dp(s), ld(m),
                                     dp(ws(c, c->x.work)), c->lwork, (int *)dp(ws(c, c->x.info))),
               "cusolverDn ormqr"));
    CX_TRY(transpose(c, at(c, p[0], b, per), s, m, n, CX_BLAS_OP_T));
  }
  return CXLA_OK;
}

cxla_status cx_gpu_linalg_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs) {
  const cx_gpu_step *s = &st->prog.steps[step];
  call c = {.ctx = ctx, .st = st, .sv = st->sv, .cu = st->cu, .s = s, .d = &s->la, .stream = stream,
            .t = cx_solver_type((cxla_type)s->la.type), .lwork = st->la_lwork[step], .es = esize_of(s->la.type)};
  c.x = layout(c.d, s->la_batched, c.lwork);
  if (c.t < 0) return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: no cuSOLVER type", s->in->name);
  int r = st->sv->SetStream(st->sv_handle, stream);
  if (!r) r = st->sv->BlasSetStream(st->blas_handle, stream);
  if (r) return lib(&c, r, "setting the stream");
  switch ((cx_la_routine)s->la.routine) {
  case CX_LA_CHOLESKY: return cholesky(&c, ptrs, 1);
  case CX_LA_POTRF: return cholesky(&c, ptrs, 0);
  case CX_LA_TRSM: return trsm(&c, ptrs);
  case CX_LA_GETRF: case CX_LA_GEQRF: case CX_LA_ORGQR: return factor(&c, ptrs);
  case CX_LA_SYEVD: return syevd(&c, ptrs);
  case CX_LA_GESDD: case CX_LA_GESVD: return svd(&c, ptrs);
  case CX_LA_SYTRD: return sytrd(&c, ptrs);
  case CX_LA_ORMQR: return ormqr(&c, ptrs);
  default: return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: no cuSOLVER routine", s->in->name);
  }
}
