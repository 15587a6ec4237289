/* gpu_build.h — a module compiled for an NVIDIA GPU, without touching one: the pass pipeline
 * and fusion both backends run, buffer assignment (slots become device memory), one kernel
 * per kLoop/kInput fusion through the shared emitter and cx_target_nvptx, all of them in one
 * PTX module, and the steps an execution runs (kernel launches and device-to-device copies
 * in schedule order). */
#ifndef CX_GPU_BUILD_H
#define CX_GPU_BUILD_H
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/gpu_conv_plan.h"
#include "codegen/cg.h"
#include "codegen/nvptx.h"
#include "core/flags.h"
#include "passes/buffers.h"
#include "passes/library_lowering.h"
#include "rt/rt.h"

/* LAUNCH: a kernel of the PTX module; COPY: device to device; GEMM: a dot through cuBLASLt
 * (the row-major plan of passes/library_lowering.h, gpu_gemm.c maps it onto column-major
 * cuBLASLt); LINALG: cholesky, triangular-solve or a LAPACK custom-call through cuSOLVER and
 * cuBLAS (the cpu backend's descriptor, rt/rt.h; gpu_linalg.c); FFT: an fft through cuFFT
 * (gpu_fft.c); RAGGED: a ragged-dot in passes/ragged_dot_lowering.c's canonical form, a cuBLAS
 * GEMM per group (gpu_ragged.c); CONV: a convolution fusion through cuDNN (gpu_conv_plan.c
 * maps it, gpu_conv.c calls it); HOST_LA: a LAPACK custom-call no NVIDIA library computes as the
 * target defines it (gees, gehrd, geqp3, geev, gtsv, jaxlib's perturbed tridiagonal solve):
 * its operands copied to the host, the cpu backend's routine (rt/lapack.c), its results copied
 * back (gpu_host_linalg.c); `la` and `slots` as for LINALG.
 * INFEED, OUTFEED: host steps on the context's feed queues
 * (gpu_host.c), their slots the data's array leaves (the infeed's result data, the outfeed's
 * operand); CALLBACK: a cxla_host_callback custom-call run on the host (gpu_host.c), its
 * slots the result's array leaves then the operands'.
 * WHILE and COND own the steps that follow them, up to `end`: a loop's condition steps
 * [i+1, body) then its body [body, end) (ending with the copies of the new loop state); a
 * conditional's branches, branch k being [branch[k], branch[k+1]) with branch[n] = end. The
 * predicate or branch index (one element in slot `sel`) is read back by the host, except for a
 * loop whose trip count is known (ir/while_trips.h): its body is queued that many times; and
 * for a construct marked `graph` (gpu_graph.h), which runs as a CUDA graph that decides on
 * the device. */
typedef enum cx_gpu_step_kind { CX_GPU_LAUNCH, CX_GPU_COPY, CX_GPU_GEMM, CX_GPU_WHILE, CX_GPU_COND, CX_GPU_LINALG,
               CX_GPU_FFT, CX_GPU_RAGGED, CX_GPU_CONV, CX_GPU_HOST_LA, CX_GPU_INFEED, CX_GPU_OUTFEED,
               CX_GPU_CALLBACK } cx_gpu_step_kind;

/* An fft step's transform: batch transforms of rank dims n (row-major, contiguous), each of
 * in_dist input and out_dist output elements; scale 1/prod(n) for the inverse kinds. */
typedef struct cx_gpu_fft {
  int type, f64, rank, n[3];   /* cx_fft_type; double precision */
  int64_t in_dist, out_dist, batch;
  double scale;
} cx_gpu_fft;

typedef struct cx_gpu_step {
  cx_gpu_step_kind kind;
  const cx_instr *in;     /* what it runs (names in logs and traces) */
  int kernel;             /* LAUNCH: index into cx_gpu_prog.kernels */
  int64_t total;          /* LAUNCH: the kernel's iteration space */
  int vec;                /* LAUNCH: elements per thread (total / vec threads) */
  int nargs;              /* LAUNCH: slots of its pointer arguments, outputs then operands;
                             GEMM: 3, the result, lhs and rhs; LINALG: result leaves then
                             operand leaves, as the cpu backend's cx_rt_linalg takes them
                             (HOST_LA likewise);
                             FFT: 2, the result and the operand; INFEED/OUTFEED: the data's
                             array leaves; CALLBACK: as LINALG */
  int *slots;
  cx_gemm_plan gemm;      /* GEMM */
  cx_la_desc la;          /* LINALG, HOST_LA */
  int la_batched;         /* LINALG: one batched library call for the batch (cx_gpu_linalg_batched,
                             and a cholesky's result not in its operand's memory) */
  cx_gpu_fft fft;         /* FFT */
  cx_gpu_conv conv;       /* CONV (nargs 3: result, lhs, rhs) */
  int64_t ragged[7];      /* RAGGED: B, X, R, Y, K, N, G (rt/ragged_dot.c's sizes); `sel`: 1 when
                             contracting, `nbranch`: the element type */
  int dst, src;           /* COPY: slots of the same size */
  int end;                /* WHILE, COND: the first step after the construct */
  int body;               /* WHILE: the first body step */
  int sel;                /* WHILE: the predicate's slot; COND: the branch index's (pred or s32) */
  int64_t trips;          /* WHILE: its trip count when known when compiling (the host then runs
                             the body that many times and reads no predicate back), else -1 */
  int nbranch;            /* COND: branches; branch[] in `slots` (nbranch + 1 entries) */
  int graph;              /* WHILE, COND: 1 when it runs as a CUDA graph with conditional nodes
                             (gpu_graph.h): only kernels, copies, loops and conditionals inside */
  int ctl;                /* WHILE in a graph: its trip counter's word in the control memory */
} cx_gpu_step;

typedef struct cx_gpu_prog {
  cx_module *m;           /* owned */
  cx_buffers bufs;
  cx_nvptx_arch arch;
  int nsteps;
  cx_gpu_step *steps;
  int nkernels, ngemms, nlinalg, nffts, nragged;
  int nreused;            /* LAUNCH steps of a kernel an earlier fusion's step launches too */
  int nlinalg_batched;    /* LINALG steps making one batched call (cx_gpu_linalg_batched) */
  int nhost_linalg;       /* HOST_LA steps: LAPACK custom-calls run by the cpu's routine */
  int nconvs_dnn;         /* convolutions on cuDNN */
  int nconv_fallbacks;    /* convolutions left to the emitter's kernels: cuDNN declined them */
  const char *conv_fallback; /* ... and why the first one was (static or in m's arena) */
  const cx_cudnn *dnn;    /* the cuDNN CONV steps call: the library, or gpu-emu's emulation */
  int nloops_known;       /* WHILE steps whose trip count is known (no read-back per trip) */
  int nloops_graph, nconds_graph; /* WHILE / COND steps in CUDA graphs (gpu_graph.h) */
  int graph_kernel;       /* the graphs' control kernel among `kernels` (-1: none) */
  /* Scratch memory of the executable (a long sort's merge passes): a LAUNCH slot number
   * bufs.nslots + k is scratch_off[k] bytes into it. */
  int nscratch;
  int64_t *scratch_off, scratch_size;
  int64_t rng_off, rng_bytes; /* the rng run counters in the scratch memory, zeroed by every execution */
  char (*kernels)[64];    /* the .entry names in the PTX */
  char *ptx;              /* what the driver loads: PTX, or LLVM IR text (CX_GPU_LLVM_IMAGE) */
  int nskipped;           /* lenient builds: instructions left out (see cx_gpu_build) */
  const char *first_skip; /* ... and why the first one was (in m's arena) */
} cx_gpu_prog;

/* cx_gpu_build's mode bits */
enum {
  CX_GPU_LENIENT = 1,     /* leave out (and count) what the GPU cannot run instead of refusing */
  CX_GPU_LLVM_IMAGE = 2,  /* prog.ptx holds the optimised kernel IR as text, not PTX (gpu-emu) */
  CX_GPU_GRAPHS = 4,      /* the driver runs CUDA graphs with conditional nodes: plan them (gpu_graph.h) */
};

/* Takes ownership of m (a verified clone). An instruction the GPU cannot run yet (an op
 * ops.def's gpu column refuses, such as sort, or has in a kernel only on types it is not of;
 * a fusion the emitter refuses) is refused with CXLA_ERR_UNSUPPORTED naming it and the
 * column's reason, or, with CX_GPU_LENIENT in mode (offline PTX
 * checks of modules that are only partly GPU-ready), left out and counted. */
cxla_status cx_gpu_build(cxla_context *ctx, cx_module *m, const cx_flags *flags, const cx_nvptx_arch *arch,
                         unsigned mode, cx_gpu_prog *out);
void cx_gpu_prog_free(cx_gpu_prog *p);

/* Why LAPACK custom-call kind `kind` (a cx_cc_kind) runs as a HOST_LA step: NULL when it runs on
 * cuSOLVER, "" when it is no LAPACK kind. */
const char *cx_gpu_lapack_host_reason(int kind);

/* 1 when a LINALG step of descriptor d may make one batched library call for its whole batch
 * (potrfBatched, getrfBatched, syevjBatched: batches of small square matrices; gpu_linalg.c). */
int cx_gpu_linalg_batched(const cx_la_desc *d);

/* The launch configuration of a step: threads per block and blocks (x only). */
void cx_gpu_grid(int64_t total, unsigned *block, unsigned *grid);

#endif
