/* object_cache.h — the cpu backend's side of the disk cache (core/disk_cache.h): the object
 * files LLVM made for a module, kept under a key of everything that decides them, and loaded
 * into the JIT instead of running LLVM again. The same entries travel in memory too: a
 * compile may be handed one (cxla_compile_options.code, the PJRT plugin's serialized
 * executables) and may keep its own (keep_code, for cxla_executable_code).
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
  char *dir;           /* NULL: no --cache-dir (or no key for this compile) */
  char *key;           /* NULL: off (neither a disk cache, nor code given or kept) */
  size_t klen;
  const unsigned char *given; /* cxla_compile_options.code (borrowed), tried first */
  size_t given_len;
  int keep;            /* keep the entry of this compile in entry */
  unsigned char *entry; /* the kept entry (heap; cx_object_cache_take_entry hands it over) */
  size_t entry_len;
  const char *result;  /* for the compile counts: "off", "hit", "miss", "rejected",
                          "unwritable" (a miss whose entry could not be written) */
  const char *source;  /* of a hit: "disk" or "given" */
  char why[256];       /* why an entry was rejected or could not be written */
} cx_object_cache;

/* Sets oc up for a compile with these flags for the JIT's target on `threads` threads. */
cxla_status cx_object_cache_open(cxla_context *ctx, const cx_flags *f, cx_jit *jit, int threads, cx_object_cache *oc);
/* On a valid entry (the given one, else the disk's) whose tables match seq's: adds its
 * objects to the JIT and sets *hit. A missing or rejected entry leaves *hit 0 (result says
 * which); errors are the JIT's. */
cxla_status cx_object_cache_load(cxla_context *ctx, cx_object_cache *oc, const cx_seq_out *seq, cx_jit *jit, int *hit);
/* Makes the jobs' objects the entry: written to disk (best effort: a failure only sets why)
 * and kept when asked. */
void cx_object_cache_store(cx_object_cache *oc, const cx_seq_out *seq, const cx_llvm_job *jobs, int n);
/* The kept entry (heap, the caller's; NULL when none was kept). */
unsigned char *cx_object_cache_take_entry(cx_object_cache *oc, size_t *n);
void cx_object_cache_close(cx_object_cache *oc);

#endif
