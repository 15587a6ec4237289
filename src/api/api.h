/* api.h — internals shared by the public API files (modules, builder). */
#ifndef CX_API_H
#define CX_API_H
#include "ir/ir.h"

/* 1 if s is a name HLO text can carry unquoted ([A-Za-z_][A-Za-z0-9_.-]*). */
int cx_api_valid_name(const char *s);
/* The ENTRY computation with its parameters indexed, or an error. */
cxla_status cx_api_entry(cx_module *m, cx_comp **out);

/* ---- builder ---------------------------------------------------------------------------------
 * A cxla_op id is (tag << CX_OP_INDEX_BITS) | (index + 1): index is the instruction's position
 * in the builder's computation, tag a small number drawn per builder so that an op handed to
 * the wrong builder is caught (best effort: tags repeat after 1023 builders). */
#define CX_OP_INDEX_BITS 21
#define CX_OP_INDEX_MASK ((1 << CX_OP_INDEX_BITS) - 1)

struct cxla_builder {
  cx_module *m;
  cx_comp *c;
  char *name;          /* heap copy, for messages */
  int32_t tag;
  cxla_status status;  /* first error (sticky) */
  char *msg;           /* its message, re-set in the context by status/finish */
};

/* Records the first error of b ("builder NAME: OP: message") and returns the invalid op. Does
 * nothing if b already holds an error. */
cxla_op cx_b_fail(cxla_builder *b, const char *op, cxla_status code, const char *fmt, ...) CX_PRINTF(4, 5);
/* 1 if b can take another call (no sticky error). */
int cx_b_ok(cxla_builder *b);
/* The instruction behind x (NULL after recording an error naming `op` and operand `i`). */
cx_instr *cx_b_get(cxla_builder *b, cxla_op x, const char *op, int i);
/* Resolves n handles into ins[] (NULL-checks xs); returns 0 after recording an error. */
int cx_b_get_n(cxla_builder *b, int n, const cxla_op *xs, cx_instr **ins, const char *op, int first);
/* Checks that a called computation is finished and belongs to b's module. */
int cx_b_check_comp(cxla_builder *b, cxla_computation *c, const char *op, const char *role);
/* Appends an instruction of `op` with its operands. `declared` is the result shape for ops
 * whose result is not implied by the operands (NULL: a placeholder the verifier replaces).
 * Returns NULL after recording an error. */
cx_instr *cx_b_new(cxla_builder *b, cx_op op, int nops, cx_instr *const *ops, const cx_shape *declared);
/* Names the instruction, infers its shape (the verifier's rules) and returns its handle. On
 * failure the instruction is removed and the verifier's message becomes the sticky error. */
cxla_op cx_b_done(cxla_builder *b, cx_instr *in);
/* Drops the last instruction and records an out-of-memory error for `op`. */
cxla_op cx_b_oom(cxla_builder *b, cx_instr *in);
/* Copies n integers into an attribute list (0 after recording an error). */
int cx_b_ints(cxla_builder *b, cx_instr *in, cx_ints *dst, int n, const int64_t *v);
/* Converts a public window (one entry per dimension; 0 stride/dilation means 1). */
int cx_b_window(cxla_builder *b, cx_instr *in, int rank, const cxla_window_dim *w);
/* A generic elementwise op by enum (used by the named wrappers and by_name calls). */
cxla_op cx_b_elementwise(cxla_builder *b, cx_op op, int n, const cxla_op *xs);

#endif
