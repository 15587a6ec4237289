/* llvm_compile.h — LLVM IR modules to host object code, on several threads at once: the
 * optimisation pipeline for an opt level and native code generation, one target machine per
 * thread. The JIT (jit.h) links the objects. */
#ifndef CX_LLVM_COMPILE_H
#define CX_LLVM_COMPILE_H
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdint.h>

/* Where and how to compile (host triple, CPU name and features, 0..3). */
typedef struct cx_llvm_target {
  const char *triple, *cpu, *features;
  int opt_level;
} cx_llvm_target;

/* One module to compile. The job disposes the module (and its context when own_context) and
 * leaves an object file, or an error message. Dump strings (LLVM-allocated; free with
 * LLVMDisposeMessage) are only made when asked for. */
typedef struct cx_llvm_job {
  LLVMModuleRef mod;
  int own_context;
  size_t weight;                 /* instructions: bigger jobs start first */
  int fast_codegen;              /* code generation at LLVM's None level (FastISel, the fast
                                    register allocator) whatever the opt level: for a module of
                                    calls only (the sequencer), whose code speed is the calls' */
  LLVMMemoryBufferRef obj;
  char *ir_before, *ir_after, *asm_text;
  double opt_ms, codegen_ms;             /* wall clock */
  double opt_cpu_ms, codegen_cpu_ms;     /* the compiling thread's CPU time (not stretched by load) */
  double opt_start_ms, codegen_start_ms; /* CLOCK_MONOTONIC, for the trace */
  int32_t tid;                           /* the thread that compiled it (cx_trace_thread_id) */
  char err[512];
} cx_llvm_job;

/* Runs every job on up to `threads` threads (the caller's included); falls back to fewer if a
 * thread cannot be started. With dumps, each job also prints its IR before and after the
 * pipeline and the assembly. Returns the number of failed jobs (their err says why). Nothing
 * here calls cxla's allocator or context, so workers need no locks. */
/* The optimisation pipeline (LLVMRunPasses text) the backends run at an opt level. */
const char *cx_llvm_pipeline(int opt_level);
int cx_llvm_compile(const cx_llvm_target *t, cx_llvm_job *jobs, int n, int threads, int dumps);

/* Frees what a job still holds (module and context, object, dump strings). */
void cx_llvm_job_dispose(cx_llvm_job *job);
/* The LLVM code generation level for an opt level (also the JIT's own target machine's). */
LLVMCodeGenOptLevel cx_llvm_codegen_level(int opt_level);
/* Instructions in a module (the weight of a job). */
size_t cx_llvm_module_size(LLVMModuleRef mod);
/* Sets process-wide LLVM options cxla's code wants (once; see llvm_compile.c). */
void cx_llvm_set_global_options(void);

#endif
