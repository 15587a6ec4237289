/* kernel_reuse.h — one kernel for the fusions of an executable that compute the same thing.
 *
 * A training step applies its optimizer's arithmetic to every weight, and jax writes one fused
 * computation per weight: the transformer block of bench/ has five f32[128,128] Adam updates
 * and six f32[128] ones, and the same transposes of q, k and v; a stack of such blocks repeats
 * every kernel of a block once per layer. Each became its own LLVM function, optimised and
 * compiled again (on the GPU, its own PTX entry, which the driver compiles again); LLVM is
 * nearly all of the compile time. A backend keys each fusion by passes/fusion_key.h's text,
 * with what its own kernel depends on besides (cx_kalias_describe), and calls the kernel
 * recorded under an equal key instead of emitting another. */
#ifndef CX_KERNEL_REUSE_H
#define CX_KERNEL_REUSE_H
#include "codegen/cg.h"

typedef struct cx_kreuse_entry {
  char *key;
  cx_kernel k;   /* k.fn belongs to the module it was emitted into: callers look it up by name */
  int64_t index; /* the backend's own number for the kernel */
} cx_kreuse_entry;

typedef struct cx_kreuse {
  cx_kreuse_entry *e;
  int64_t n, cap;
} cx_kreuse;

/* Which arguments share memory, as text for a key: the same mask with other pairs reads other
 * pointers in place. Writes at most CX_KALIAS_TEXT bytes. */
#define CX_KALIAS_TEXT 1024
void cx_kalias_describe(const cx_kalias *a, char *out);
/* The entry recorded under `key`, or NULL. */
const cx_kreuse_entry *cx_kreuse_find(const cx_kreuse *r, const char *key);
/* Records k under key (taking key); 0 when out of memory (key is then freed). */
int cx_kreuse_add(cx_kreuse *r, char *key, const cx_kernel *k, int64_t index);
void cx_kreuse_free(cx_kreuse *r);

#endif
