/* metadata.h — the source of an instruction (op_name, file:line) from its metadata, for traces
 * and messages that map compiled code back to the program that produced it. */
#ifndef CX_METADATA_H
#define CX_METADATA_H
#include "ir/ir.h"

typedef struct cx_origin {
  char op_name[160]; /* "jit(f)/jit(main)/mul" ("" if none) */
  char source[160];  /* "model.py:12" ("" if none) */
} cx_origin;

/* Fills o from in's metadata; 1 if anything was found. */
int cx_instr_origin(const cx_instr *in, cx_origin *o);
/* The same for a kernel: a fusion without metadata of its own takes its root's, else that of
 * the first fused instruction that has some. */
int cx_kernel_origin(const cx_instr *in, cx_origin *o);
/* "file.py:12" for a metadata stack_frame_id through the module's StackFrames tables (the
 * innermost frame); 0 and "" when the module has no such frame. */
int cx_module_frame_source(const cx_module *m, int64_t frame, char *out, size_t n);

#endif
