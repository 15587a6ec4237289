/* cudnn_lib.h — cuDNN's legacy convolution API (cudnnConvolutionForward / BackwardData /
 * BackwardFilter with tensor, filter and convolution descriptors: deprecated in cuDNN 9 but
 * present), opened with dlopen when a module has a convolution cuDNN takes (no link-time
 * dependency), or its host emulation for gpu-emu (emu_cudnn.c). Declared with the ABI of the
 * toolkit's cudnn_graph_v9.h, cudnn_ops_v9.h and cudnn_cnn_v9.h: handles and descriptors are
 * opaque pointers, the enums ints, data device pointers, alpha and beta host pointers (float
 * for f32, f16 and bf16 data, double for f64). The three algorithm-perf structs of
 * cudnn_cnn_v9.h have one layout, cx_dnn_perf. */
#ifndef CX_GPU_CUDNN_LIB_H
#define CX_GPU_CUDNN_LIB_H
#include "backend/gpu/cuda.h"

enum { /* the headers' values (test_gpu_libs.c checks them) */
  CX_DNN_STATUS_SUCCESS = 0, CX_DNN_STATUS_NOT_INITIALIZED = 1001, CX_DNN_STATUS_BAD_PARAM = 2000,
  CX_DNN_STATUS_NOT_SUPPORTED = 3000,                                       /* cudnnStatus_t */
  CX_DNN_DATA_FLOAT = 0, CX_DNN_DATA_DOUBLE = 1, CX_DNN_DATA_HALF = 2, CX_DNN_DATA_BFLOAT16 = 9, /* cudnnDataType_t */
  CX_DNN_TENSOR_NCHW = 0, CX_DNN_TENSOR_NHWC = 1,                           /* cudnnTensorFormat_t */
  CX_DNN_CONVOLUTION = 0, CX_DNN_CROSS_CORRELATION = 1,                     /* cudnnConvolutionMode_t */
  CX_DNN_DEFAULT_MATH = 0, CX_DNN_TENSOR_OP_MATH = 1, CX_DNN_FMA_MATH = 3,  /* cudnnMathType_t */
};

/* cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t */
typedef struct cx_dnn_perf {
  int algo, status;
  float time;
  size_t memory;
  int determinism, math_type;
  int reserved[3];
} cx_dnn_perf;

typedef struct cx_cudnn {
  void *lib;
  int (*Create)(void **handle);
  int (*Destroy)(void *handle);
  int (*SetStream)(void *handle, CUstream s);
  const char *(*GetErrorString)(int status);
  int (*CreateTensorDescriptor)(void **d);
  int (*SetTensorNdDescriptor)(void *d, int type, int nb, const int *dims, const int *strides);
  int (*DestroyTensorDescriptor)(void *d);
  int (*CreateFilterDescriptor)(void **d);
  int (*SetFilterNdDescriptor)(void *d, int type, int format, int nb, const int *dims);
  int (*DestroyFilterDescriptor)(void *d);
  int (*CreateConvolutionDescriptor)(void **d);
  int (*SetConvolutionNdDescriptor)(void *d, int n, const int *pad, const int *stride, const int *dilation, int mode,
                                    int compute_type);
  int (*SetConvolutionGroupCount)(void *d, int groups);
  int (*SetConvolutionMathType)(void *d, int math);
  int (*DestroyConvolutionDescriptor)(void *d);
  /* the heuristics' algorithms, best first */
  int (*GetForwardAlgorithm)(void *h, void *x, void *w, void *conv, void *y, int want, int *got, cx_dnn_perf *p);
  int (*GetBackwardDataAlgorithm)(void *h, void *w, void *dy, void *conv, void *dx, int want, int *got, cx_dnn_perf *p);
  int (*GetBackwardFilterAlgorithm)(void *h, void *x, void *dy, void *conv, void *dw, int want, int *got,
                                    cx_dnn_perf *p);
  int (*GetForwardWorkspaceSize)(void *h, void *x, void *w, void *conv, void *y, int algo, size_t *bytes);
  int (*GetBackwardDataWorkspaceSize)(void *h, void *w, void *dy, void *conv, void *dx, int algo, size_t *bytes);
  int (*GetBackwardFilterWorkspaceSize)(void *h, void *x, void *dy, void *conv, void *dw, int algo, size_t *bytes);
  int (*Forward)(void *h, const void *alpha, void *xd, const void *x, void *wd, const void *w, void *conv, int algo,
                 void *ws, size_t ws_bytes, const void *beta, void *yd, void *y);
  int (*BackwardData)(void *h, const void *alpha, void *wd, const void *w, void *dyd, const void *dy, void *conv,
                      int algo, void *ws, size_t ws_bytes, const void *beta, void *dxd, void *dx);
  int (*BackwardFilter)(void *h, const void *alpha, void *xd, const void *x, void *dyd, const void *dy, void *conv,
                        int algo, void *ws, size_t ws_bytes, const void *beta, void *dwd, void *dw);
  /* y = alpha x + beta y between two tensors of the same dims and any strides (a filter's
   * transpose into or out of the packed layout a filter descriptor has) */
  int (*TransformTensor)(void *h, const void *alpha, void *xd, const void *x, const void *beta, void *yd, void *y);
} cx_cudnn;

/* Opens cuDNN from `path` (a file name or path), or when path is NULL or empty the first of
 * libcudnn.so.9, /usr/local/cuda/lib64/libcudnn.so.9 that loads, filling *out: 1, or 0 with
 * why in err (what was tried, or the symbol a library lacks). Not cached: cx_cudnn_get is. */
int cx_cudnn_open(const char *path, cx_cudnn *out, char *err, size_t errlen);
/* cuDNN for the process: the one at `path` (what $CXLA_CUDNN says, docs/flags.md), or with
 * path NULL or empty the default names', each opened once and kept. NULL with why in err (a
 * message of cx_cudnn_open's; a path that fails is tried again next time). */
const cx_cudnn *cx_cudnn_get(const char *path, char *err, size_t errlen);
/* The host emulation: cuDNN's definitions computed in plain loops on the emulated device's
 * memory, every tensor checked against its allocations. */
const cx_cudnn *cx_cudnn_emu(void);
/* "gpu backend: WHAT failed: cuDNN status N (its name)" */
cxla_status cx_cudnn_error(cxla_context *ctx, const cx_cudnn *dnn, int status, const char *what);

#endif
