/* sequencer.h — the CPU backend's internal interfaces: the sequencer (one LLVM function that
 * runs the schedule) and the interpreter fallback table. */
#ifndef CX_CPU_SEQUENCER_H
#define CX_CPU_SEQUENCER_H
#include <llvm-c/Core.h>
#include "backend/cpu/kernel_shards.h"
#include "rt/rt.h"
#include "codegen/cg.h"
#include "ir/metadata.h"
#include "passes/buffers.h"
#include "passes/library_lowering.h"

/* One instruction the interpreter runs (cx_rt_interp_op index = position in the table).
 * args: result leaves, then the leaves of each operand in order. */
typedef struct cx_fallback_op {
  const cx_instr *in;
  cx_comp *comp;        /* run on the interpreter: the fused computation, or a one-instruction
                           wrapper computation added to the module for the occasion */
  int nout;             /* result leaves */
  const char *why;      /* why it is not compiled (static or module-arena string) */
} cx_fallback_op;

/* What emission produces besides LLVM IR. */
typedef struct cx_seq_out {
  char **names;         /* trace names by call id (heap strings) */
  int nnames;
  int64_t names_cap;
  cx_origin *origins;   /* by call id: the op_name and file:line of its instruction */
  int64_t origins_cap;
  cx_fallback_op *fallbacks;
  int nfallbacks;
  int64_t fallbacks_cap;
  /* Addresses of this process the code uses (constants' data, plans): symbol k, named
   * CX_SEQ_ADDR_FMT, is addrs[k], defined when the JIT links the code. */
  const void **addrs;
  int naddrs;
  int64_t addrs_cap;
  int nkernels, ngemms, nconvs, ncopies;
  int ngemms_onednn; /* of ngemms, those through oneDNN's sgemm */
  /* Multiply-adds of the GEMM and convolution calls, each call once (a loop body's once): with
   * the machine's GEMM rate, the floor under the time of what the libraries compute. */
  int64_t library_macs;
  int nreused;   /* kernel calls that call an earlier fusion's kernel (kernel_reuse.h) */
  /* The most partial results a split reduction takes (cx_kernel.scratch): memory past the
   * arena's slots, at cx_seq_scratch_offset, which such kernels use one at a time (the
   * sequencer runs one kernel at a time), so an execution's arena is its slots plus this. */
  int64_t scratch_bytes;
} cx_seq_out;

/* Where the split reductions' scratch starts in the arena: past the slots, 64-byte aligned. */
static inline int64_t cx_seq_scratch_offset(const cx_buffers *b) { return (b->arena_size + 63) & ~(int64_t)63; }

void cx_seq_out_free(cx_seq_out *o);
#define CX_SEQ_ADDR_FMT "cx_addr_%d"


/* Emits `void cx_entry(i8 **params, i8 **outputs, i8 *arena, cx_rt *rt)` into g->mod, and the
 * kernels: into the shards' modules (when given) except those called inside while loops,
 * which stay in g->mod. `max_loop_iterations` > 0 stops while loops after that many trips
 * (an error). `onednn` (--cpu-onednn): convolutions and the class of GEMMs oneDNN takes go to it
 * (sequencer_lib.c). */
cxla_status cx_seq_emit(cx_cg *g, cx_shards *shards, const cx_buffers *b, int64_t max_loop_iterations,
                        int onednn, cx_seq_out *out);

/* What OpenBLAS computes natively (sequencer_lib.c): f32, f64, c64, c128; f16/bf16 dots are
 * lowered to f32 ones (passes/library_lowering.h). */
extern const cx_gemm_target cx_cpu_gemm;
/* The target the lowering and the sequencer share for a compile: cx_cpu_gemm, or with oneDNN
 * (--cpu-onednn) the same plus what oneDNN's products read in place. */
const cx_gemm_target *cx_cpu_gemm_target(int onednn);

/* ---- fallback.c ---- */

/* The rt->fallback hook: exe is a cx_fallback_table. */
typedef struct cx_fallback_table {
  cx_module *m;
  const cx_fallback_op *ops;
  int nops;
  int64_t max_loop_iterations;  /* for the message of a while loop that ran too long */
} cx_fallback_table;
int cx_cpu_fallback(void *exe, const struct cx_replica *rep, int32_t index, void **args, char *errmsg, size_t errlen);
/* Index passed to cx_rt_interp_op when while loop number k exceeds --max-loop-iterations. */
#define CX_FALLBACK_LOOP_LIMIT(k) (-1 - (k))

#endif
