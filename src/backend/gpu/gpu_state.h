/* gpu_state.h — a module loaded on the GPU (the GPU backend's executable state). */
#ifndef CX_GPU_STATE_H
#define CX_GPU_STATE_H
#include <pthread.h>
#include "backend/gpu/blaslt.h"
#include "backend/gpu/cuda.h"
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/cufft_lib.h"
#include "backend/gpu/solver.h"
#include "backend/gpu/gpu_build.h"
#include "backend/gpu/gpu_device.h"

/* A GEMM step's cuBLASLt objects, made once when the executable is loaded. */
typedef struct cx_gpu_gemm_rt {
  void *desc;             /* the matmul descriptor (compute type, transposes) */
  void *a, *b, *c;        /* layouts of cuBLASLt's A (the dot's rhs), B (its lhs), C = D */
  cx_lt_algo algo;        /* the heuristic's first choice */
} cx_gpu_gemm_rt;

/* A CONV step's cuDNN descriptors and algorithm, made once when the executable is loaded. */
typedef struct cx_gpu_conv_rt {
  void *x, *y;            /* tensor descriptors of the forward input and output */
  void *w;                /* the filter descriptor (packed) */
  void *w_buf, *w_packed; /* the filter as its buffer lays it out and packed (repacked filters) */
  void *conv;
  int algo;               /* the heuristics' first choice */
  size_t ws;              /* its workspace in bytes */
} cx_gpu_conv_rt;

typedef struct gpu_state {
  cx_gpu_prog prog;
  const cx_cuda *cu;      /* libcuda, or the grid emulation's driver (emu.h) */
  unsigned build_mode;    /* cx_gpu_build's: CX_GPU_LLVM_IMAGE for the emulation */
  cx_gpu_device *device;  /* the context's GPU: its context, stream and memory (referenced) */
  CUmodule mod;           /* the PTX, JIT-compiled by the driver */
  CUfunction *fns;        /* per prog.kernels */
  /* An executable's own device memory comes from the device's caching allocator (cx_gpu_alloc)
   * as its buffers' does, so the device's counters (cxla_context_memory_stats, JAX's
   * device.memory_stats()) hold all of it: each *_got is the block's size, for cx_gpu_free. */
  CUdeviceptr *consts;    /* per slot: CONST slots' device copies (0 elsewhere) */
  size_t *consts_got;
  CUdeviceptr arena;      /* temporaries; reused by every execution (under mu) */
  CUdeviceptr scratch;    /* prog.scratch_size bytes (long sorts' merge passes), likewise */
  size_t arena_got, scratch_got;
  pthread_mutex_t mu;     /* one execution at a time */
  const cx_blaslt *lt;    /* cuBLASLt or its emulation; NULL when the module has no dot */
  void *lt_handle;
  cx_gpu_gemm_rt *gemms;  /* per step (used by GEMM steps) */
  CUdeviceptr lt_workspace;
  size_t lt_workspace_size, lt_workspace_got;
  const cx_solver *sv;    /* cuSOLVER and cuBLAS or their emulation; NULL when nothing needs them */
  void *sv_handle, *blas_handle;
  void *syevj_params;     /* syevjBatched's syevjInfo_t (defaults), made when a step needs it */
  CUdeviceptr la_ws;      /* the linear-algebra steps' scratch: column-major copies, cuSOLVER's
                             workspace, info words (the largest step's; steps run one at a time) */
  size_t la_ws_size, la_ws_got;
  int *la_lwork;          /* per step: cuSOLVER's workspace in elements (LINALG steps) */
  int32_t *la_info;       /* host copy of a cholesky's info words (the largest batch) */
  CUdeviceptr *la_ptrs;   /* a batched call's matrix addresses, copied to the device (the largest batch) */
  void *host_la;          /* HOST_LA steps' copies of their operands and results (the largest step's) */
  size_t host_la_size;
  const cx_cufft *fft;    /* cuFFT or its emulation; NULL when the module has no fft */
  int *fft_plans;         /* per step: the FFT steps' plans (-1 elsewhere) */
  CUdeviceptr fft_ws;     /* cuFFT's work area, then the c2r input's copy */
  size_t fft_ws_size, fft_work_size, fft_ws_got;
  const cx_cudnn *dnn;    /* cuDNN or its emulation (the build's choice); NULL without CONV steps */
  void *dnn_handle;
  cx_gpu_conv_rt *convs;  /* per step (used by CONV steps) */
  CUdeviceptr dnn_ws;     /* the largest step's algorithm workspace, then its repacked filter:
                             from the device's caching allocator (dnn_ws_got bytes) */
  size_t dnn_ws_size, dnn_ws_got, dnn_algo_ws;
  int tf32;               /* --gpu-tf32: f32 GEMMs on cuBLASLt's FAST_TF32 compute type */
  int64_t max_loop_iterations; /* --max-loop-iterations (0: none) */
  struct cx_gpu_graphs *graphs; /* gpu_graph.c's instantiated graphs and control memory (NULL:
                                   none, or the driver runs no conditional nodes) */
  int nparam_leaves;
  int *param_base;        /* [p]: parameter p's first leaf among all parameter leaves */
} gpu_state;

/* gpu_gemm.c: the GEMM steps' cuBLASLt objects (with the module's context current), one GEMM
 * on a stream, and their release. */
cxla_status cx_gpu_gemm_load(cxla_context *ctx, gpu_state *st);
cxla_status cx_gpu_gemm_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, CUdeviceptr out,
                            CUdeviceptr lhs, CUdeviceptr rhs);
void cx_gpu_gemm_unload(gpu_state *st);

/* gpu_linalg.c: the LINALG steps' libraries, handles and scratch; one step; their release. */
cxla_status cx_gpu_linalg_load(cxla_context *ctx, gpu_state *st);
cxla_status cx_gpu_linalg_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs);
void cx_gpu_linalg_unload(gpu_state *st);
/* gpu_host_linalg.c: the HOST_LA steps' host memory; one step (it waits for the stream); its release. */
cxla_status cx_gpu_host_linalg_load(cxla_context *ctx, gpu_state *st);
cxla_status cx_gpu_host_linalg_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs);
void cx_gpu_host_linalg_unload(gpu_state *st);
/* gpu_ragged.c: a ragged-dot step (cuBLAS, opened by cx_gpu_linalg_load) */
cxla_status cx_gpu_ragged_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs);
/* gpu_fft.c: the same for the FFT steps (cuFFT plans, made when loading). */
cxla_status cx_gpu_fft_load(cxla_context *ctx, gpu_state *st);
cxla_status cx_gpu_fft_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, CUdeviceptr out,
                           CUdeviceptr in);
void cx_gpu_fft_unload(gpu_state *st);

/* gpu_conv.c: the CONV steps' cuDNN handle, descriptors and workspace; one step; their release. */
cxla_status cx_gpu_conv_load(cxla_context *ctx, gpu_state *st);
cxla_status cx_gpu_conv_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs);
void cx_gpu_conv_unload(gpu_state *st);

/* gpu_exec.c: an execution with arguments on the device or the host and its results left on
 * the device (cx_device_mem.execute), and the same from host literals to a host literal. */
cxla_status cx_gpu_execute_dev(void *state, cxla_context *ctx, int nargs, const cx_dev_arg *args, cx_dev_value **out);
cxla_status cx_gpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args, cxla_literal **out);

#endif
