/* object_cache.h — the cpu backend's side of the disk cache (core/disk_cache.h): the object
 * files LLVM made for a module, kept under a key of everything that decides them, and loaded
 * into the JIT instead of running LLVM again.
 *
 * What a hit saves is LLVM's optimisation and code generation, nearly all of a compile. The
 * rest (HLO passes, buffer assignment, emission of the LLVM IR, which also rebuilds the
 * sequencer's tables: trace names, fallbacks, plans, the addresses the code refers to) runs
 * as on a miss; its IR is then discarded. Emission is deterministic for a key, and the entry
 * also records the sizes of those tables, so code that does not fit them is never linked. */
#ifndef CX_CPU_OBJECT_CACHE_H
#define CX_CPU_OBJECT_CACHE_H
#include "backend/cpu/sequencer.h"
#include "codegen/jit.h"
#include "core/flags.h"

typedef struct cx_object_cache {
  char *dir;           /* NULL: off (--cache-dir unset or off, or no key for this compile) */
  char *key;
  size_t klen;
  const char *result;  /* for the compile counts: "off", "hit", "miss", "rejected",
                          "unwritable" (a miss whose entry could not be written) */
  char why[256];       /* why an entry was rejected or could not be written */
} cx_object_cache;

/* Sets oc up for a compile with these flags for the JIT's target on `threads` threads. */
cxla_status cx_object_cache_open(cxla_context *ctx, const cx_flags *f, cx_jit *jit, int threads, cx_object_cache *oc);
/* On a valid entry whose tables match seq's: adds its objects to the JIT and sets *hit. A
 * missing entry or a rejected one leaves *hit 0 (result says which); errors are the JIT's. */
cxla_status cx_object_cache_load(cxla_context *ctx, cx_object_cache *oc, const cx_seq_out *seq, cx_jit *jit, int *hit);
/* Writes the jobs' objects as the entry (best effort: a failure only sets why). */
void cx_object_cache_store(cx_object_cache *oc, const cx_seq_out *seq, const cx_llvm_job *jobs, int n);
void cx_object_cache_close(cx_object_cache *oc);

#endif
