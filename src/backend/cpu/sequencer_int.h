/* sequencer_int.h — state shared by the sequencer's files (sequencer.c: setup, dispatch,
 * kernels, fallbacks; sequencer_control.c: while, conditional, call, copies;
 * sequencer_lib.c: GEMM and convolution library calls). */
#ifndef CX_CPU_SEQUENCER_INT_H
#define CX_CPU_SEQUENCER_INT_H
#include "backend/cpu/sequencer.h"
#include "codegen/kernel_reuse.h"

typedef struct cx_seq {
  cx_cg *g;
  cx_shards *shards;            /* where kernels outside loops go (NULL: g's module) */
  const cx_buffers *bufs;
  cx_seq_out *out;
  LLVMBuilderRef b;             /* the sequencer's own builder (the emitter uses g->b) */
  int64_t max_loop_iterations;
  int onednn;                   /* --cpu-onednn: convolutions and the GEMM class oneDNN takes go to it */
  int nloops;                   /* while loops emitted (for loop-limit messages) */
  int loop_depth;               /* while loops around the current emission point */
  cx_kreuse reuse;              /* kernels emitted outside loops, by fused computation */
  LLVMValueRef fn;              /* cx_entry */
  LLVMValueRef params, outputs, arena, rt;
  LLVMBasicBlockRef entry_bb;   /* allocas go here, before its terminator */
  LLVMValueRef entry_term;
  LLVMValueRef tracing;         /* i1: rt->trace != NULL (read once on entry) */
  LLVMValueRef *slot_ptr;       /* PARAM / OUTPUT / CONST slot addresses, loaded once on entry */
  int *param_base;              /* flat leaf index of each ENTRY parameter's first leaf */
  /* runtime entry points */
  LLVMTypeRef t_kernel, t_pfor, t_parts, t_gemm, t_gemm2, t_interp, t_trace, t_conv;
  LLVMValueRef f_pfor, f_parts, f_gemm, f_gemm2, f_gemm_dnnl, f_gemm2_dnnl, f_interp, f_tbegin, f_tend, f_conv, f_conv_dnnl;
} cx_seq;

/* Address of a slot (i8*) at the current insertion point. */
LLVMValueRef cx_seq_slot(cx_seq *s, int slot);
/* Slot of leaf `leaf` of `in`; reports an internal error (and returns -1) if it has none. */
int cx_seq_leaf_slot(cx_seq *s, const cx_instr *in, int leaf);
/* The address p as a pointer value the object code may keep across processes (a symbol
 * defined when the JIT links it: cx_seq_out's addrs). */
LLVMValueRef cx_seq_addr(cx_seq *s, const void *p);
/* A fresh call id named `name` (copied); -1 on OOM (error recorded). */
int32_t cx_seq_name(cx_seq *s, const char *name);
/* An [n x ptr] array in the entry block, filled at the current point with the slot addresses. */
LLVMValueRef cx_seq_args(cx_seq *s, const int *slots, int n);
/* The same with `room` more pointers after them, left for the callee to fill. */
LLVMValueRef cx_seq_args_room(cx_seq *s, const int *slots, int n, int room);
/* Emits the instructions of a computation in schedule order. */
cxla_status cx_seq_emit_comp(cx_seq *s, cx_comp *c);
/* Sends `in` to the interpreter (adds a fallback-table entry). */
cxla_status cx_seq_fallback(cx_seq *s, const cx_instr *in, const char *why);
/* i32 rt->status != 0 at the current point. */
LLVMValueRef cx_seq_failed(cx_seq *s);
void cx_seq_trace_begin(cx_seq *s, int32_t id);
void cx_seq_trace_end(cx_seq *s, int32_t id);

/* sequencer_control.c */
cxla_status cx_seq_while(cx_seq *s, const cx_instr *in);
cxla_status cx_seq_conditional(cx_seq *s, const cx_instr *in);
/* memcpy of every leaf whose slots differ: dst leaves of `to` from src leaves of `from`. */
cxla_status cx_seq_copy_leaves(cx_seq *s, const cx_instr *to, const cx_instr *from, const char *what);

/* sequencer_lib.c: 1 if handled (emitted), 0 if the caller should fall back (why set). */
int cx_seq_dot(cx_seq *s, const cx_instr *in, const char **why);
/* A kOutput fusion of a dot and a transpose of its result (cx_dot_out_fusion): one GEMM
 * writing the fusion's output at the transpose's strides. */
int cx_seq_dot_out(cx_seq *s, const cx_instr *fusion, const char **why);
/* direct_ok: the emitter can run this convolution as a loop nest (preferred when small). */
int cx_seq_conv(cx_seq *s, const cx_instr *fusion, const cx_instr *conv, int direct_ok, const char **why);
/* sequencer_linalg.c: cholesky, triangular-solve and the custom-calls cxla knows, as library
 * calls (a target without a cpu hook goes to the interpreter). */
cxla_status cx_seq_cholesky(cx_seq *s, cx_instr *in);
cxla_status cx_seq_triangular_solve(cx_seq *s, cx_instr *in);
cxla_status cx_seq_custom_call(cx_seq *s, cx_instr *in);
/* fft.c: fft as a cx_rt_fft call with a plan made now (the interpreter runs the transforms
 * FFTW cannot plan). */
cxla_status cx_seq_fft(cx_seq *s, cx_instr *in);
/* topk.c: topk as a cx_rt_topk call. */
cxla_status cx_seq_topk(cx_seq *s, cx_instr *in);
cxla_status cx_seq_topk_custom_call(cx_seq *s, cx_instr *in); /* XLA:CPU's "TopK" */
/* ragged_dot.c: a canonical ragged-dot (passes/ragged_dot_lowering.c) as a cx_rt_ragged_dot call. */
cxla_status cx_seq_ragged_dot(cx_seq *s, cx_instr *in);
/* rng_bits.c: rng-bit-generator as a cx_rt_rng_bits call. */
cxla_status cx_seq_rng_bit_generator(cx_seq *s, cx_instr *in);
/* rng_bits.c: rng as a cx_rt_rng call, with its run counter in cx_entry's frame. */
cxla_status cx_seq_rng(cx_seq *s, cx_instr *in);

#endif
