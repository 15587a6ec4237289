/* cuda.h — the CUDA driver API, opened with dlopen at run time: cxla never links to CUDA, so
 * it builds and runs (every other backend) on machines without it. Only the calls and types
 * the GPU backend uses, declared as the driver's cuda.h has them (ABI: the v2 entry points). */
#ifndef CX_GPU_CUDA_H
#define CX_GPU_CUDA_H
#include <stddef.h>
#include "ir/ir.h"

typedef int CUresult;               /* 0: CUDA_SUCCESS */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
  CX_CU_ATTR_CC_MAJOR = 75,        /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  CX_CU_ATTR_CC_MINOR = 76,        /* ..._MINOR */
  CX_CU_JIT_INFO_LOG_BUFFER = 3,   /* CU_JIT_INFO_LOG_BUFFER */
  CX_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CX_CU_JIT_ERROR_LOG_BUFFER = 5,
  CX_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

typedef struct cx_cuda {
  void *lib;
  int driver_version;               /* cuDriverGetVersion: 1000*major + 10*minor */
  CUresult (*Init)(unsigned flags);
  CUresult (*DriverGetVersion)(int *v);
  CUresult (*DeviceGetCount)(int *n);
  CUresult (*DeviceGet)(CUdevice *d, int ordinal);
  CUresult (*DeviceGetAttribute)(int *v, int attr, CUdevice d);
  CUresult (*DeviceGetName)(char *name, int len, CUdevice d);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *c, CUdevice d);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice d);
  CUresult (*CtxPushCurrent)(CUcontext c);
  CUresult (*CtxPopCurrent)(CUcontext *c);
  CUresult (*ModuleLoadDataEx)(CUmodule *m, const void *image, unsigned n, int *options, void **values);
  CUresult (*ModuleUnload)(CUmodule m);
  CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
  CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
  CUresult (*MemFree)(CUdeviceptr p);
  CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
  CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, CUstream s, void **params, void **extra);
  CUresult (*StreamCreate)(CUstream *s, unsigned flags);
  CUresult (*StreamDestroy)(CUstream s);
  CUresult (*StreamSynchronize)(CUstream s);
  CUresult (*GetErrorString)(CUresult r, const char **s);
  /* kernel times for traces: events recorded on the stream around each step */
  CUresult (*EventCreate)(CUevent *e, unsigned flags);
  CUresult (*EventRecord)(CUevent e, CUstream s);
  CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*EventDestroy)(CUevent e);
  CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t n, CUstream s);
  /* buffers' transfers, ordered on the device's stream */
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
  CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
} cx_cuda;

/* The driver, opened once per process (thread safe); its library name comes from
 * $CXLA_CUDA_DRIVER when set (tests point it at a missing file or a library that is not the
 * driver), else libcuda.so.1. Errors: CXLA_ERR_UNSUPPORTED "no CUDA driver (libcuda.so.1 not
 * found)" (CXLA_ERR_DEVICE), a library without the driver's symbols, or cuInit failing (no GPU). */
cxla_status cx_cuda_get(cxla_context *ctx, const cx_cuda **out);
/* Opens the driver library `name` into *cu and calls cuInit; -1 with the reason in err
 * (the messages above) when it cannot be used. cx_cuda_get keeps one for the process. */
int cx_cuda_open(const char *name, cx_cuda *cu, char *err, size_t errlen);
/* An error for a failed driver call: "gpu backend: WHAT failed: CUDA error N (its string)". */
cxla_status cx_cuda_error(cxla_context *ctx, const cx_cuda *cu, CUresult r, const char *what);

#endif
