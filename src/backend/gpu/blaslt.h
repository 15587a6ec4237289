/* blaslt.h — cuBLASLt, opened with dlopen when a module has a dot (no link-time dependency),
 * or its host emulation for gpu-emu (emu_blaslt.c). Only the calls the gpu backend makes,
 * declared with the ABI of the toolkit's cublasLt.h (handles and descriptors are opaque
 * pointers; device pointers are passed as void *). */
#ifndef CX_GPU_BLASLT_H
#define CX_GPU_BLASLT_H
#include <stddef.h>
#include <stdint.h>
#include "backend/gpu/cuda.h"

enum { /* cublasLt.h's values */
  CX_LT_OP_N = 0, CX_LT_OP_T = 1,                     /* cublasOperation_t */
  CX_LT_R_32F = 0, CX_LT_R_64F = 1, CX_LT_R_16F = 2, CX_LT_R_16BF = 14, /* cudaDataType */
  CX_LT_C_32F = 4, CX_LT_C_64F = 5,
  CX_LT_COMPUTE_32F = 68, CX_LT_COMPUTE_64F = 70, CX_LT_COMPUTE_32F_FAST_TF32 = 77,
  CX_LT_DESC_TRANSA = 3, CX_LT_DESC_TRANSB = 4,       /* cublasLtMatmulDescAttributes_t (int32) */
  CX_LT_LAYOUT_BATCH_COUNT = 5,                       /* int32 */
  CX_LT_LAYOUT_STRIDED_BATCH_OFFSET = 6,              /* int64, in elements */
  CX_LT_PREF_MAX_WORKSPACE_BYTES = 1,                 /* uint64 */
};

typedef struct cx_lt_algo { uint64_t data[8]; } cx_lt_algo;
typedef struct cx_lt_heuristic { /* cublasLtMatmulHeuristicResult_t */
  cx_lt_algo algo;
  size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
} cx_lt_heuristic;

typedef struct cx_blaslt {
  void *lib;
  int (*Create)(void **handle);
  int (*Destroy)(void *handle);
  int (*MatmulDescCreate)(void **desc, int compute_type, int scale_type);
  int (*MatmulDescDestroy)(void *desc);
  int (*MatmulDescSetAttribute)(void *desc, int attr, const void *buf, size_t size);
  int (*MatrixLayoutCreate)(void **layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
  int (*MatrixLayoutDestroy)(void *layout);
  int (*MatrixLayoutSetAttribute)(void *layout, int attr, const void *buf, size_t size);
  int (*MatmulPreferenceCreate)(void **pref);
  int (*MatmulPreferenceDestroy)(void *pref);
  int (*MatmulPreferenceSetAttribute)(void *pref, int attr, const void *buf, size_t size);
  int (*MatmulAlgoGetHeuristic)(void *handle, void *desc, void *a, void *b, void *c, void *d, void *pref, int want,
                                cx_lt_heuristic *results, int *got);
  int (*Matmul)(void *handle, void *desc, const void *alpha, const void *a, void *adesc, const void *b, void *bdesc,
                const void *beta, const void *c, void *cdesc, void *d, void *ddesc, const cx_lt_algo *algo,
                void *workspace, size_t workspace_size, CUstream stream);
  const char *(*GetStatusString)(int status);
} cx_blaslt;

/* cuBLASLt for the process, opened on first use: $CXLA_CUBLASLT when set, else
 * libcublasLt.so.13, .so.12, then the same under /usr/local/cuda/lib64. CXLA_ERR_DEVICE with
 * a message naming what was tried when none loads. */
cxla_status cx_blaslt_get(cxla_context *ctx, const cx_blaslt **out);
/* The host emulation: column-major GEMMs with cuBLASLt's transposes, leading dimensions and
 * strided batches, every access checked against the emulated device's allocations. */
const cx_blaslt *cx_blaslt_emu(void);
/* "gpu backend: WHAT failed: cuBLASLt status N (its string)" */
cxla_status cx_blaslt_error(cxla_context *ctx, const cx_blaslt *lt, int status, const char *what);

#endif
