/* blaslt.c — cuBLASLt through dlopen (see blaslt.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/blaslt.h"
#include "backend/gpu/dl_table.h"

static cx_blaslt g_lt;
static char g_err[768];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define SYM(field, name) {offsetof(cx_blaslt, field), name}
static const cx_dl_sym k_syms[] = {
  SYM(Create, "cublasLtCreate"), SYM(Destroy, "cublasLtDestroy"), SYM(MatmulDescCreate, "cublasLtMatmulDescCreate"),
  SYM(MatmulDescDestroy, "cublasLtMatmulDescDestroy"), SYM(MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute"),
  SYM(MatrixLayoutCreate, "cublasLtMatrixLayoutCreate"), SYM(MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy"),
  SYM(MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute"),
  SYM(MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate"),
  SYM(MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy"),
  SYM(MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute"),
  SYM(MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic"), SYM(Matmul, "cublasLtMatmul"),
  SYM(GetStatusString, "cublasLtGetStatusString"),
};
#undef SYM

static int try_open(const char *name) {
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 0;
  const char *missing = cx_dl_fill(lib, &g_lt, k_syms, sizeof k_syms / sizeof *k_syms);
  if (missing) {
    snprintf(g_err, sizeof g_err, "%s is not a usable cuBLASLt: it has no %s", name, missing);
    dlclose(lib);
    memset(&g_lt, 0, sizeof g_lt);
    return -1;
  }
  g_lt.lib = lib;
  return 1;
}

static void open_lt(void) {
  const char *env = getenv("CXLA_CUBLASLT");
  if (env && *env) {
    if (!try_open(env) && !g_err[0]) snprintf(g_err, sizeof g_err, "cuBLASLt not found: CXLA_CUBLASLT=%s does not load", env);
    return;
  }
  static const char *const k_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13",
                                        "/usr/local/cuda/lib64/libcublasLt.so.12"};
  for (size_t i = 0; i < sizeof k_names / sizeof *k_names; i++)
    if (try_open(k_names[i]) != 0) return;
  snprintf(g_err, sizeof g_err,
           "cuBLASLt not found (tried libcublasLt.so.13, .so.12 and /usr/local/cuda/lib64): dots on the GPU need it; "
           "install the CUDA toolkit's cuBLAS or set CXLA_CUBLASLT=PATH");
}

cxla_status cx_blaslt_get(cxla_context *ctx, const cx_blaslt **out) {
  pthread_once(&g_once, open_lt);
  *out = NULL;
  if (!g_lt.lib) return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s", g_err);
  *out = &g_lt;
  return CXLA_OK;
}

cxla_status cx_blaslt_error(cxla_context *ctx, const cx_blaslt *lt, int status, const char *what) {
  const char *s = lt->GetStatusString ? lt->GetStatusString(status) : NULL;
  return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s failed: cuBLASLt status %d (%s)", what, status, s ? s : "unknown");
}
