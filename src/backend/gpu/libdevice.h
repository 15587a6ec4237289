/* libdevice.h — CUDA's libdevice (the toolkit's math library for GPUs, shipped as LLVM
 * bitcode) linked into a kernel module, as XLA and clang do: the f64 math functions the
 * NVPTX target lowers to calls of __nv_* (codegen/target_nvptx.c) become code of the PTX. */
#ifndef CX_GPU_LIBDEVICE_H
#define CX_GPU_LIBDEVICE_H
#include <llvm-c/Core.h>
#include "util/util.h"

/* Links libdevice into mod when mod calls one of its functions, and makes everything but the
 * kernels internal, so that only what is called survives the optimiser. path: the
 * --gpu-libdevice flag (NULL: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, Debian's
 * /usr/lib/nvidia-cuda-toolkit). Not found or not bitcode: CXLA_ERR_UNSUPPORTED naming the
 * function that needs it and where it looked (at compile time). */
cxla_status cx_libdevice_link(cxla_context *ctx, LLVMModuleRef mod, const char *path);

#endif
