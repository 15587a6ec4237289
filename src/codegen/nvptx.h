/* nvptx.h — NVIDIA GPUs as a codegen target: the NVPTX kernel ABI and math lowering
 * (cx_target_nvptx), and the choice of the PTX target (sm_XX and PTX ISA version) that cxla
 * emits for a GPU of a given compute capability under a given driver. */
#ifndef CX_CODEGEN_NVPTX_H
#define CX_CODEGEN_NVPTX_H
#include "codegen/target.h"

/* Kernels `void k(ptr addrspace(1) p0, ..., i64 total)` marked as PTX entries, their buffers
 * 16-byte aligned; thread i = ctaid.x * ntid.x + tid.x computes elements [i*V, i*V+V) of the
 * kernel's iteration space, V = cg->elems_per_thread at emission (1 unless set; it divides
 * total), threads past total / V doing nothing, so a launch needs ceil(total / V / block)
 * blocks of `block` threads.
 * Math: codegen's own inline code (math*.c: every f32 function, f64 exp, log and logistic),
 * llvm.sqrt (the correctly rounded sqrt.rn), and calls of CUDA's libdevice (__nv_sin, ...) for
 * the other f64 functions, which the gpu backend links in (backend/gpu/libdevice.h). */
extern const cx_target cx_target_nvptx;
/* 1 if ops.def's gpu column lets every instruction of the fusion (and of the computations it
 * calls) be emitted on cx_target_nvptx for its types; otherwise 0 with *why (thread-local)
 * naming the first that is not and the column's reason. */
int cx_nvptx_supports(const cx_instr *fusion, const char **why);

#define CX_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* A PTX target: what LLVM's NVPTX backend is asked for and what the .target/.version lines of
 * the PTX say. */
typedef struct cx_nvptx_arch {
  const char *sm;      /* "sm_80" (the LLVM CPU name and PTX .target) */
  int cc;              /* the compute capability it is for, major*10+minor (90 for sm_90a) */
  int ptx;             /* PTX ISA version, major*10+minor (85: 8.5) */
  char features[16];   /* LLVM feature string: "+ptx85" */
} cx_nvptx_arch;

/* The newest PTX target cxla knows (sm_75 ... sm_90a, PTX ISA <= 8.5) that a GPU of compute
 * capability major.minor can run under a driver of version `driver` (cuDriverGetVersion's
 * 1000*major + 10*minor; 0: unknown, assume new enough). PTX for sm_XX runs, through the
 * driver's JIT, on every GPU of capability >= XX; sm_90a only on 9.0 itself. The PTX ISA
 * version is the newest the driver accepts (at most 8.5) and at least what the target needs;
 * where the driver is too old for a target, an older one is taken. Returns 0, or -1 (with
 * *why set) when nothing fits: capability below 7.5 or a driver older than CUDA 10.0. */
int cx_nvptx_pick(int major, int minor, int driver, cx_nvptx_arch *out, const char **why);
/* The PTX target named sm ("sm_75", "sm_90a", ...) with the newest PTX ISA cxla emits;
 * -1 if cxla does not know it. */
int cx_nvptx_arch_named(const char *sm, cx_nvptx_arch *out);
/* The newest PTX ISA version (major*10+minor) a driver of this version accepts; 0 if none. */
int cx_nvptx_driver_ptx(int driver);

#endif
