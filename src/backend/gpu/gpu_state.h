/* gpu_state.h — a module loaded on the GPU (the GPU backend's executable state). */
#ifndef CX_GPU_STATE_H
#define CX_GPU_STATE_H
#include <pthread.h>
#include "backend/gpu/cuda.h"
#include "backend/gpu/gpu_build.h"

typedef struct gpu_state {
  cx_gpu_prog prog;
  const cx_cuda *cu;      /* libcuda, or the grid emulation's driver (emu.h) */
  unsigned build_mode;    /* cx_gpu_build's: CX_GPU_LLVM_IMAGE for the emulation */
  CUdevice dev;
  CUcontext cuctx;        /* the device's primary context (retained) */
  CUmodule mod;           /* the PTX, JIT-compiled by the driver */
  CUfunction *fns;        /* per prog.kernels */
  CUdeviceptr *consts;    /* per slot: CONST slots' device copies (0 elsewhere) */
  CUdeviceptr arena;      /* temporaries; reused by every execution (under mu) */
  pthread_mutex_t mu;     /* one execution at a time */
  int nparam_leaves;
  int *param_base;        /* [p]: parameter p's first leaf among all parameter leaves */
} gpu_state;

cxla_status cx_gpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args, cxla_literal **out);

#endif
