/* cuda.c — the CUDA driver through dlopen (see cuda.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/cuda.h"
#include "backend/gpu/dl_table.h"

static cx_cuda g_cu;
static char g_err[512];   /* why the driver could not be used ("" once it can) */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* every entry point and its exported symbol (the _v2 names are the 64-bit ABI cuda.h maps to) */
#define SYM(field, name) {offsetof(cx_cuda, field), name}
static const cx_dl_sym k_syms[] = {
  SYM(Init, "cuInit"), SYM(DriverGetVersion, "cuDriverGetVersion"), SYM(DeviceGetCount, "cuDeviceGetCount"),
  SYM(DeviceGet, "cuDeviceGet"), SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
  SYM(DeviceGetName, "cuDeviceGetName"), SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
  SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"), SYM(CtxPushCurrent, "cuCtxPushCurrent_v2"),
  SYM(CtxPopCurrent, "cuCtxPopCurrent_v2"), SYM(ModuleLoadDataEx, "cuModuleLoadDataEx"),
  SYM(ModuleUnload, "cuModuleUnload"), SYM(ModuleGetFunction, "cuModuleGetFunction"),
  SYM(MemAlloc, "cuMemAlloc_v2"), SYM(MemFree, "cuMemFree_v2"), SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"),
  SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"), SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
  SYM(LaunchKernel, "cuLaunchKernel"), SYM(StreamCreate, "cuStreamCreate"),
  SYM(StreamDestroy, "cuStreamDestroy_v2"), SYM(StreamSynchronize, "cuStreamSynchronize"),
  SYM(GetErrorString, "cuGetErrorString"), SYM(EventCreate, "cuEventCreate"), SYM(EventRecord, "cuEventRecord"),
  SYM(EventElapsedTime, "cuEventElapsedTime"), SYM(EventDestroy, "cuEventDestroy_v2"),
  SYM(MemsetD8Async, "cuMemsetD8Async"), SYM(MemsetD2D32Async, "cuMemsetD2D32Async"),
  SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"), SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
  SYM(MemHostAlloc, "cuMemHostAlloc"), SYM(MemFreeHost, "cuMemFreeHost"),
  SYM(PointerGetAttribute, "cuPointerGetAttribute"), SYM(StreamWaitEvent, "cuStreamWaitEvent"),
  SYM(EventQuery, "cuEventQuery"), SYM(EventSynchronize, "cuEventSynchronize"),
};
/* CUDA graphs: optional (cuda.h) */
static const cx_dl_sym k_graph_syms[] = {
  SYM(GraphCreate, "cuGraphCreate"), SYM(GraphDestroy, "cuGraphDestroy"),
  SYM(GraphInstantiate, "cuGraphInstantiateWithFlags"), SYM(GraphExecDestroy, "cuGraphExecDestroy"),
  SYM(GraphLaunch, "cuGraphLaunch"), SYM(GraphConditionalHandleCreate, "cuGraphConditionalHandleCreate"),
  SYM(GraphAddNode, "cuGraphAddNode_v2"), SYM(StreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph"),
  SYM(StreamEndCapture, "cuStreamEndCapture"), SYM(StreamGetCaptureInfo, "cuStreamGetCaptureInfo_v3"),
  SYM(GraphExecUpdate, "cuGraphExecUpdate_v2"),
};
#undef SYM

int cx_cuda_open(const char *name, cx_cuda *cu, char *err, size_t errlen) {
  memset(cu, 0, sizeof *cu);
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return snprintf(err, errlen, "no CUDA driver (%s not found)", name), -1;
  const char *missing = cx_dl_fill(lib, cu, k_syms, sizeof k_syms / sizeof *k_syms);
  if (missing) {
    snprintf(err, errlen, "%s is not a usable CUDA driver: it has no %s", name, missing);
    dlclose(lib);
    memset(cu, 0, sizeof *cu);
    return -1;
  }
  CUresult r = cu->Init(0);
  if (r != 0) {
    const char *s = NULL;
    if (cu->GetErrorString(r, &s) != 0) s = NULL;
    snprintf(err, errlen, "the CUDA driver found no usable GPU: cuInit failed: CUDA error %d (%s)", r, s ? s : "unknown");
    dlclose(lib);
    memset(cu, 0, sizeof *cu);
    return -1;
  }
  if (cu->DriverGetVersion(&cu->driver_version) != 0) cu->driver_version = 0;
  if (cx_dl_fill(lib, cu, k_graph_syms, sizeof k_graph_syms / sizeof *k_graph_syms)) /* all or none */
    for (size_t i = 0; i < sizeof k_graph_syms / sizeof *k_graph_syms; i++)
      memset((char *)cu + k_graph_syms[i].offset, 0, sizeof(void (*)(void)));
  cu->lib = lib;
  return 0;
}

static void open_driver(void) {
  const char *name = getenv("CXLA_CUDA_DRIVER");
  cx_cuda_open(name && *name ? name : "libcuda.so.1", &g_cu, g_err, sizeof g_err);
}

cxla_status cx_cuda_get(cxla_context *ctx, const cx_cuda **out) {
  pthread_once(&g_once, open_driver);
  *out = NULL;
  if (!g_cu.lib) return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s", g_err);
  *out = &g_cu;
  return CXLA_OK;
}

cxla_status cx_cuda_error(cxla_context *ctx, const cx_cuda *cu, CUresult r, const char *what) {
  const char *s = NULL;
  if (cu->GetErrorString(r, &s) != 0) s = NULL;
  cxla_status code = r == 2 ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_DEVICE; /* 2: CUDA_ERROR_OUT_OF_MEMORY */
  return cx_error(ctx, code, "gpu backend: %s failed: CUDA error %d (%s)", what, r, s ? s : "unknown");
}
