/* cufft_lib.c — cuFFT through dlopen (see cufft_lib.h). */
#include <pthread.h>
#include "backend/gpu/cufft_lib.h"
#include "backend/gpu/dl_table.h"

static cx_cufft g_fft;
static char g_err[768];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define SYM(field, name) {offsetof(cx_cufft, field), name}
static const cx_dl_sym k_syms[] = {
  SYM(Create, "cufftCreate"), SYM(SetAutoAllocation, "cufftSetAutoAllocation"),
  SYM(MakePlanMany, "cufftMakePlanMany"), SYM(SetWorkArea, "cufftSetWorkArea"), SYM(SetStream, "cufftSetStream"),
  SYM(Destroy, "cufftDestroy"), SYM(ExecC2C, "cufftExecC2C"), SYM(ExecR2C, "cufftExecR2C"),
  SYM(ExecC2R, "cufftExecC2R"), SYM(ExecZ2Z, "cufftExecZ2Z"), SYM(ExecD2Z, "cufftExecD2Z"),
  SYM(ExecZ2D, "cufftExecZ2D"),
};
#undef SYM

static void open_lib(void) {
  static const char *const names[] = {"libcufft.so.12", "libcufft.so.11", "/usr/local/cuda/lib64/libcufft.so.12",
                                      "/usr/local/cuda/lib64/libcufft.so.11"};
  g_fft.lib = cx_dl_open_first("CXLA_CUFFT", names, 4, &g_fft, k_syms, sizeof k_syms / sizeof *k_syms, "cuFFT",
                               "ffts on the GPU need it: install the CUDA toolkit's cuFFT or set CXLA_CUFFT=PATH", g_err,
                               sizeof g_err);
}

cxla_status cx_cufft_get(cxla_context *ctx, const cx_cufft **out) {
  pthread_once(&g_once, open_lib);
  *out = NULL;
  if (!g_fft.lib) return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s", g_err);
  *out = &g_fft;
  return CXLA_OK;
}

cxla_status cx_cufft_error(cxla_context *ctx, int status, const char *what) {
  return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s failed: cuFFT status %d", what, status);
}
