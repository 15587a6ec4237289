/* kernel_reuse.h — one kernel for the fusions of an executable whose fused computations are
 * the same but for instruction names.
 *
 * A training step applies its optimizer's arithmetic to every weight, and jax writes one fused
 * computation per weight: the transformer block of bench/ has five f32[128,128] Adam updates
 * and six f32[128] ones, and the same transposes of q, k and v. Each became its own LLVM
 * function, optimised and compiled again; LLVM is nearly all of the compile time. The key is
 * the fused computation's text with each instruction's name replaced by its position (and each
 * called computation, a reducer, written out the same way in place of its name), the fusion
 * kind, and which arguments share memory with which. Nothing else goes into the kernel: the fusion
 * plan is made from the body, and the operands' shapes and layouts are its parameters'. */
#ifndef CX_CPU_KERNEL_REUSE_H
#define CX_CPU_KERNEL_REUSE_H
#include "codegen/cg.h"

typedef struct cx_kreuse_entry {
  char *key;
  cx_kernel k;   /* k.fn belongs to the module it was emitted into: callers look it up by name */
} cx_kreuse_entry;

typedef struct cx_kreuse {
  cx_kreuse_entry *e;
  int64_t n, cap;
} cx_kreuse;

/* The key of a kLoop/kInput fusion (cx_malloc'd; NULL when out of memory). */
char *cx_kreuse_key(const cx_instr *fusion, const cx_kalias *alias);
/* The kernel emitted for `key`, or NULL. */
const cx_kernel *cx_kreuse_find(const cx_kreuse *r, const char *key);
/* Records k under key (taking key); 0 when out of memory (key is then freed). */
int cx_kreuse_add(cx_kreuse *r, char *key, const cx_kernel *k);
void cx_kreuse_free(cx_kreuse *r);

#endif
