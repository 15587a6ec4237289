/* solver.c — cuSOLVER and cuBLAS through dlopen (see solver.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "backend/gpu/dl_table.h"
#include "backend/gpu/solver.h"

static cx_solver g_sv;
static char g_err[1024];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

int cx_solver_type(cxla_type t) {
  return t == CXLA_F32 ? 0 : t == CXLA_F64 ? 1 : t == CXLA_C64 ? 2 : t == CXLA_C128 ? 3 : -1;
}

/* a routine's four symbols: the format's %c is the type letter, its %s the routine's name
 * for real types or for complex ones (orgqr / ungqr, syevd / heevd) */
typedef struct per_type { size_t offset; const char *fmt, *real, *cplx; } per_type;
#define F(field, fmt, real, cplx) {offsetof(cx_solver, field), fmt, real, cplx}
static const per_type k_solver[] = {
  F(potrf_bs, "cusolverDn%c%s_bufferSize", "potrf", "potrf"), F(potrf, "cusolverDn%c%s", "potrf", "potrf"),
  F(getrf_bs, "cusolverDn%c%s_bufferSize", "getrf", "getrf"), F(getrf, "cusolverDn%c%s", "getrf", "getrf"),
  F(geqrf_bs, "cusolverDn%c%s_bufferSize", "geqrf", "geqrf"), F(geqrf, "cusolverDn%c%s", "geqrf", "geqrf"),
  F(orgqr_bs, "cusolverDn%c%s_bufferSize", "orgqr", "ungqr"), F(orgqr, "cusolverDn%c%s", "orgqr", "ungqr"),
  F(syevd_bs, "cusolverDn%c%s_bufferSize", "syevd", "heevd"), F(syevd, "cusolverDn%c%s", "syevd", "heevd"),
  F(gesvd_bs, "cusolverDn%c%s_bufferSize", "gesvd", "gesvd"), F(gesvd, "cusolverDn%c%s", "gesvd", "gesvd"),
  F(sytrd_bs, "cusolverDn%c%s_bufferSize", "sytrd", "hetrd"), F(sytrd, "cusolverDn%c%s", "sytrd", "hetrd"),
  F(ormqr_bs, "cusolverDn%c%s_bufferSize", "ormqr", "unmqr"), F(ormqr, "cusolverDn%c%s", "ormqr", "unmqr"),
  F(potrf_batched, "cusolverDn%c%s", "potrfBatched", "potrfBatched"),
  F(syevj_batched_bs, "cusolverDn%c%s_bufferSize", "syevjBatched", "heevjBatched"),
  F(syevj_batched, "cusolverDn%c%s", "syevjBatched", "heevjBatched"),
};
static const per_type k_blas[] = {
  F(geam, "cublas%c%s", "geam", "geam"), F(trsm, "cublas%c%s", "trsm_v2", "trsm_v2"),
  F(gemm, "cublas%c%s", "gemm_v2", "gemm_v2"), F(getrf_batched, "cublas%c%s", "getrfBatched", "getrfBatched"),
};
#undef F
#define SYM(field, name) {offsetof(cx_solver, field), name}
static const cx_dl_sym k_solver_one[] = {
  SYM(Create, "cusolverDnCreate"), SYM(Destroy, "cusolverDnDestroy"), SYM(SetStream, "cusolverDnSetStream"),
  SYM(CreateSyevjInfo, "cusolverDnCreateSyevjInfo"), SYM(DestroySyevjInfo, "cusolverDnDestroySyevjInfo")};
static const cx_dl_sym k_blas_one[] = {
  SYM(BlasCreate, "cublasCreate_v2"), SYM(BlasDestroy, "cublasDestroy_v2"), SYM(BlasSetStream, "cublasSetStream_v2"),
  SYM(scal[0], "cublasSscal_v2"), SYM(scal[1], "cublasDscal_v2")};
#undef SYM

enum { MAX_SYMS = 96 }; /* cuSOLVER's: 5 + 4 per routine (19 routines) */
typedef struct sym_list { cx_dl_sym s[MAX_SYMS]; char names[MAX_SYMS][48]; size_t n; } sym_list;

static void expand(sym_list *l, const cx_dl_sym *one, size_t none, const per_type *pt, size_t npt) {
  _Static_assert(sizeof k_solver_one / sizeof *k_solver_one + 4 * (sizeof k_solver / sizeof *k_solver) <= MAX_SYMS,
                 "MAX_SYMS holds cuSOLVER's table");
  l->n = 0;
  for (size_t i = 0; i < none; i++) l->s[l->n++] = one[i];
  for (size_t i = 0; i < npt; i++)
    for (int t = 0; t < 4; t++) {
      snprintf(l->names[l->n], sizeof l->names[0], pt[i].fmt, "SDCZ"[t], t < 2 ? pt[i].real : pt[i].cplx);
      l->s[l->n] = (cx_dl_sym){pt[i].offset + (size_t)t * sizeof(void (*)(void)), l->names[l->n]};
      l->n++;
    }
}

static void open_libs(void) {
  static sym_list l;
  static const char *const solver_names[] = {"libcusolver.so.12", "libcusolver.so.11",
                                             "/usr/local/cuda/lib64/libcusolver.so.12",
                                             "/usr/local/cuda/lib64/libcusolver.so.11"};
  static const char *const blas_names[] = {"libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
                                           "/usr/local/cuda/lib64/libcublas.so.12"};
  expand(&l, k_solver_one, sizeof k_solver_one / sizeof *k_solver_one, k_solver, sizeof k_solver / sizeof *k_solver);
  g_sv.lib = cx_dl_open_first("CXLA_CUSOLVER", solver_names, 4, &g_sv, l.s, l.n, "cuSOLVER",
                              "linear algebra on the GPU needs it: install the CUDA toolkit's cuSOLVER or set "
                              "CXLA_CUSOLVER=PATH", g_err, sizeof g_err);
  if (!g_sv.lib) return;
  expand(&l, k_blas_one, sizeof k_blas_one / sizeof *k_blas_one, k_blas, sizeof k_blas / sizeof *k_blas);
  g_sv.blas_lib = cx_dl_open_first("CXLA_CUBLAS", blas_names, 4, &g_sv, l.s, l.n, "cuBLAS",
                                   "linear algebra on the GPU needs it: install the CUDA toolkit's cuBLAS or set "
                                   "CXLA_CUBLAS=PATH", g_err, sizeof g_err);
  if (!g_sv.blas_lib) {
    dlclose(g_sv.lib);
    memset(&g_sv, 0, sizeof g_sv);
  }
}

cxla_status cx_solver_get(cxla_context *ctx, const cx_solver **out) {
  pthread_once(&g_once, open_libs);
  *out = NULL;
  if (!g_sv.lib) return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s", g_err);
  *out = &g_sv;
  return CXLA_OK;
}

cxla_status cx_solver_error(cxla_context *ctx, int status, const char *what) {
  return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s failed: cuSOLVER/cuBLAS status %d", what, status);
}
