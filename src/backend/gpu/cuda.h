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
/* CUDA graphs (gpu_graph.c: loops and conditionals without a read-back per trip) */
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef unsigned long long CUgraphConditionalHandle;

/* CUgraphNodeParams with its CU_GRAPH_NODE_TYPE_CONDITIONAL member (cuda.h's layout: 256
 * bytes, the union padded to 29 long longs; unused bytes must be zero) */
typedef struct cx_cu_graph_node_params {
  int type;                         /* CX_CU_GRAPH_NODE_CONDITIONAL */
  int reserved0[3];
  union {
    long long reserved1[29];
    struct {
      CUgraphConditionalHandle handle;
      int type;                     /* CX_CU_COND_IF, _WHILE, _SWITCH */
      unsigned size;                /* body graphs: 1 for WHILE, 1 or 2 for IF */
      CUgraph *graphs_out;          /* the driver's array of the (empty) body graphs */
      CUcontext ctx;
    } cond;
  };
  long long reserved2;
} cx_cu_graph_node_params;

/* CUgraphExecUpdateResultInfo (cuGraphExecUpdate_v2's out-parameter) */
typedef struct cx_cu_graph_update_info {
  int result;                       /* CUgraphExecUpdateResult: 0 success */
  CUgraphNode error_node, error_from_node;
} cx_cu_graph_update_info;

enum {
  CX_CU_ATTR_CC_MAJOR = 75,        /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  CX_CU_ATTR_CC_MINOR = 76,        /* ..._MINOR */
  CX_CU_JIT_INFO_LOG_BUFFER = 3,   /* CU_JIT_INFO_LOG_BUFFER */
  CX_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CX_CU_JIT_ERROR_LOG_BUFFER = 5,
  CX_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CX_CU_GRAPH_NODE_CONDITIONAL = 13, /* CU_GRAPH_NODE_TYPE_CONDITIONAL */
  CX_CU_COND_IF = 0, CX_CU_COND_WHILE = 1, CX_CU_COND_SWITCH = 2, /* CUgraphConditionalNodeType */
  CX_CU_CAPTURE_THREAD_LOCAL = 1,  /* CU_STREAM_CAPTURE_MODE_THREAD_LOCAL */
  CX_CU_CAPTURE_ACTIVE = 1,        /* CU_STREAM_CAPTURE_STATUS_ACTIVE */
  CX_CU_STREAM_NON_BLOCKING = 1,   /* CU_STREAM_NON_BLOCKING */
  CX_CU_EVENT_DISABLE_TIMING = 2,  /* CU_EVENT_DISABLE_TIMING */
  CX_CU_POINTER_MEMORY_TYPE = 2,   /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */
  CX_CU_MEMORYTYPE_HOST = 1, CX_CU_MEMORYTYPE_DEVICE = 2, /* CUmemorytype */
  CX_CU_NOT_READY = 600,           /* CUDA_ERROR_NOT_READY */
  /* conditional nodes, capture into a given graph and cuGraphAddNode_v2 came with CUDA 12.3;
   * cxla asks for 12.4, a margin over the first release of conditional nodes (not yet tried
   * on a real driver of either) */
  CX_CU_GRAPHS_DRIVER = 12040,
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
  /* height rows of width 32-bit words of value, pitch bytes apart (the linear-algebra steps'
   * NaN fills: the real part of each element) */
  CUresult (*MemsetD2D32Async)(CUdeviceptr dst, size_t pitch, unsigned value, size_t width, size_t height, CUstream s);
  /* buffers' transfers, ordered on the device's stream */
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
  CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
  /* asynchronous transfers (gpu_staging.c): pinned host staging, uploads on a second stream
   * that the compute stream waits for with an event */
  CUresult (*MemHostAlloc)(void **p, size_t bytes, unsigned flags);
  CUresult (*MemFreeHost)(void *p);
  CUresult (*PointerGetAttribute)(void *data, int attr, CUdeviceptr p);
  CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned flags);
  CUresult (*EventQuery)(CUevent e);
  CUresult (*EventSynchronize)(CUevent e);
  /* CUDA graphs with conditional nodes (gpu_graph.c). Optional: NULL, all of them, when the
   * driver lacks one (older than CX_CU_GRAPHS_DRIVER), and loops then read predicates back. */
  CUresult (*GraphCreate)(CUgraph *g, unsigned flags);
  CUresult (*GraphDestroy)(CUgraph g);
  CUresult (*GraphInstantiate)(CUgraphExec *e, CUgraph g, unsigned long long flags);
  CUresult (*GraphExecDestroy)(CUgraphExec e);
  CUresult (*GraphLaunch)(CUgraphExec e, CUstream s);
  CUresult (*GraphConditionalHandleCreate)(CUgraphConditionalHandle *h, CUgraph g, CUcontext c, unsigned dflt,
                                           unsigned flags);
  CUresult (*GraphAddNode)(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, const void *edge_data, size_t ndeps,
                           cx_cu_graph_node_params *params);
  CUresult (*StreamBeginCaptureToGraph)(CUstream s, CUgraph g, const CUgraphNode *deps, const void *edge_data,
                                        size_t ndeps, int mode);
  CUresult (*StreamEndCapture)(CUstream s, CUgraph *g);
  CUresult (*StreamGetCaptureInfo)(CUstream s, int *status, unsigned long long *id, CUgraph *g,
                                   const CUgraphNode **deps, const void **edge_data, size_t *ndeps);
  /* an instantiated graph given a topologically identical graph's parameters (a construct
   * captured again because its buffers moved): cheaper than instantiating it */
  CUresult (*GraphExecUpdate)(CUgraphExec x, CUgraph g, cx_cu_graph_update_info *info);
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
