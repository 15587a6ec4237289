/* blaslt.c — cuBLASLt through dlopen (see blaslt.h). */
#include <pthread.h>
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

static void open_lt(void) {
  static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13",
                                      "/usr/local/cuda/lib64/libcublasLt.so.12"};
  g_lt.lib = cx_dl_open_first("CXLA_CUBLASLT", names, 4, &g_lt, k_syms, sizeof k_syms / sizeof *k_syms, "cuBLASLt",
                              "dots on the GPU need it: install the CUDA toolkit's cuBLAS or set CXLA_CUBLASLT=PATH", g_err,
                              sizeof g_err);
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
