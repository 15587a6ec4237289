/* cufft_lib.h — cuFFT, opened with dlopen when a module has an fft (no link-time dependency),
 * or its host emulation for gpu-emu (emu_cufft.c). Declared with the ABI of the toolkit's
 * cufft.h: a plan is an int handle, data are device pointers. Plans are made without cuFFT's
 * own workspace (cufftSetAutoAllocation 0): cufftMakePlanMany says how much it needs, and the
 * executable gives it device memory of its own (cufftSetWorkArea). */
#ifndef CX_GPU_CUFFT_LIB_H
#define CX_GPU_CUFFT_LIB_H
#include "backend/gpu/cuda.h"

enum { /* cufft.h's values (test_gpu_libs.c checks them) */
  CX_FFT_R2C = 0x2a, CX_FFT_C2R = 0x2c, CX_FFT_C2C = 0x29, /* cufftType */
  CX_FFT_D2Z = 0x6a, CX_FFT_Z2D = 0x6c, CX_FFT_Z2Z = 0x69,
  CX_FFT_FORWARD = -1, CX_FFT_INVERSE = 1,                 /* the exec calls' direction */
};

typedef struct cx_cufft {
  void *lib;
  int (*Create)(int *plan);
  int (*SetAutoAllocation)(int plan, int autoalloc);
  int (*MakePlanMany)(int plan, int rank, int *n, int *inembed, int istride, int idist, int *onembed, int ostride,
                      int odist, int type, int batch, size_t *work_size);
  int (*SetWorkArea)(int plan, void *work);
  int (*SetStream)(int plan, CUstream s);
  int (*Destroy)(int plan);
  int (*ExecC2C)(int plan, void *in, void *out, int direction);
  int (*ExecR2C)(int plan, void *in, void *out);
  int (*ExecC2R)(int plan, void *in, void *out);
  int (*ExecZ2Z)(int plan, void *in, void *out, int direction);
  int (*ExecD2Z)(int plan, void *in, void *out);
  int (*ExecZ2D)(int plan, void *in, void *out);
} cx_cufft;

/* cuFFT for the process, opened on first use: $CXLA_CUFFT when set, else libcufft.so.12,
 * .so.11 (then under /usr/local/cuda/lib64). CXLA_ERR_DEVICE naming it when none loads. */
cxla_status cx_cufft_get(cxla_context *ctx, const cx_cufft **out);
/* The host emulation: FFTW's plans on the emulated device's memory. */
const cx_cufft *cx_cufft_emu(void);
/* "gpu backend: WHAT failed: cuFFT status N" */
cxla_status cx_cufft_error(cxla_context *ctx, int status, const char *what);

#endif
