/* ops.h — the op enum and table queries, generated from ops.def. */
#ifndef CX_OPS_H
#define CX_OPS_H
#include "cxla.h"

typedef enum cx_op {
#define X(id, ...) CX_OP_##id,
#include "ir/ops.def"
#undef X
  CX_OP_COUNT
} cx_op;

typedef enum {
  CX_CLASS_DATA, CX_CLASS_ELEMENTWISE, CX_CLASS_SHAPE, CX_CLASS_REDUCE,
  CX_CLASS_LIBRARY, CX_CLASS_CONTROL, CX_CLASS_OTHER
} cx_op_class;

const char *cx_op_name(cx_op op);
/* The op with this HLO name, or -1. */
int cx_op_lookup(const char *name, int len);
int cx_op_arity(cx_op op);               /* -1: variadic */
cx_op_class cx_op_class_of(cx_op op);
/* Where an op runs (the table's `runs` column). */
typedef enum { CX_RUNS_NONE, CX_RUNS_COLLECTIVE, CX_RUNS_INTERP, CX_RUNS_EMIT } cx_op_runs;
cx_op_runs cx_op_runs_on(cx_op op);
/* Whether a result shape left out of the text may be inferred (the table's `shape` column):
 * 1, or 0 with *why saying why not. */
int cx_op_shape_inferable(cx_op op, const char **why);
int cx_op_is_expensive(cx_op op);
static inline int cx_op_is_elementwise(cx_op op) { return cx_op_class_of(op) == CX_CLASS_ELEMENTWISE; }
/* Whether an elementwise op (or copy, convert, compare, select, clamp, reduce-precision) is
 * defined on element type t (the on-true type for select, the operand type for
 * compare/convert). The interpreter and the emitter refuse the others instead of computing
 * nonsense. */
int cx_op_valid_for_type(cx_op op, cxla_type t);
/* Whether op exchanges data between devices (all-reduce, all-gather, collective-permute, their
 * -start/-done halves, ...): parsed, printed and verified, refused by every backend because
 * cxla runs one device and has no distributed runtime. */
static inline int cx_op_is_collective(cx_op op) { return cx_op_runs_on(op) == CX_RUNS_COLLECTIVE; }

#endif
