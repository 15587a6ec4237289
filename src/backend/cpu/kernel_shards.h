/* kernel_shards.h — kernels spread over several LLVM modules, each in its own LLVMContext,
 * so that LLVM compiles them on every core at once (llvm_compile.h). A kernel goes to the
 * module with the fewest instructions so far; the sequencer declares it in its own module and
 * the JIT links the objects. */
#ifndef CX_CPU_KERNEL_SHARDS_H
#define CX_CPU_KERNEL_SHARDS_H
#include "codegen/cg.h"

#define CX_MAX_SHARDS 16

typedef struct cx_shard {
  cx_cg cg;
  LLVMModuleRef mod;   /* NULL once handed on (cx_shards_take) */
  size_t weight;       /* instructions emitted into it */
} cx_shard;

typedef struct cx_shards {
  const cx_cg *main;   /* context, module, flags and vector width to copy */
  int max, n;
  cx_shard s[CX_MAX_SHARDS];
} cx_shards;

/* Up to max (1..CX_MAX_SHARDS) modules, made as kernels arrive. */
void cx_shards_init(cx_shards *sh, const cx_cg *main, int max);
/* The emitter for the next kernel: its kernel counter continues main's. NULL (error recorded
 * in main) when out of memory. */
cx_cg *cx_shards_pick(cx_shards *sh, cx_cg *main);
/* After a kernel was emitted into cg (picked above): counts its instructions, carries the
 * kernel counter and any error back to main. */
void cx_shards_done(cx_shards *sh, cx_cg *cg, cx_cg *main, const char *kernel_name);
/* Disposes what was not handed on. */
void cx_shards_free(cx_shards *sh);

#endif
