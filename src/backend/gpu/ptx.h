/* ptx.h — LLVM IR of GPU kernels to PTX text through LLVM's NVPTX backend (in process: no
 * ptxas or nvcc at run time; the CUDA driver JIT-compiles the PTX for the GPU that is there). */
#ifndef CX_GPU_PTX_H
#define CX_GPU_PTX_H
#include <llvm-c/Core.h>
#include "codegen/nvptx.h"

/* Optimises mod (default<O0..3>, opt_level) and prints it as PTX for arch into *ptx (a
 * cx_malloc'd NUL-terminated string). Refuses (CXLA_ERR_UNSUPPORTED) a module that calls a
 * function that is neither defined in it nor an LLVM intrinsic: a GPU has no libm. */
cxla_status cx_ptx_emit(cxla_context *ctx, LLVMModuleRef mod, const cx_nvptx_arch *arch, int opt_level, char **ptx);
/* The same optimisation for arch, then the module as LLVM IR text instead of PTX: the image
 * the grid emulation (emu_module.c) loads, so that it runs the very IR the PTX comes from. */
cxla_status cx_ptx_emit_llvm(cxla_context *ctx, LLVMModuleRef mod, const cx_nvptx_arch *arch, int opt_level,
                             char **ir);

#endif
