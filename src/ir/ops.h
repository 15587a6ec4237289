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
typedef enum { CX_RUNS_NONE, CX_RUNS_INTERP, CX_RUNS_LIBRARY, CX_RUNS_EMIT } cx_op_runs;
cx_op_runs cx_op_runs_on(cx_op op);
/* Whether a result shape left out of the text may be inferred (the table's `shape` column):
 * 1, or 0 with *why saying why not. */
int cx_op_shape_inferable(cx_op op, const char **why);
int cx_op_is_expensive(cx_op op);
/* An elementwise op cost analysis counts as a transcendental (exp, log, tanh, sin, power, ...). */
int cx_op_is_transcendental(cx_op op);
/* An elementwise op that moves data and computes nothing (copy, bitcast-convert). */
int cx_op_moves_only(cx_op op);
int cx_op_is_commutative(cx_op op);
/* op(a, a) == a (maximum, minimum, and, or): a reduction by it may start any part from the
 * same init value and combine the parts, whatever that value is. */
int cx_op_is_idempotent(cx_op op);
/* Whether an instruction of this op must stay even when its result is unused and must not be
 * merged with an identical one: unknown custom-calls, rng, infeed/outfeed, collectives. */
int cx_op_has_side_effect(cx_op op);
/* The called computations an op takes (the table's `called` column). */
typedef enum {
  CX_CALLS_NOCALL, CX_CALLS_TO_APPLY, CX_CALLS_COMPARATOR, CX_CALLS_CALLS, CX_CALLS_COND_BODY,
  CX_CALLS_SELECT_SCATTER, CX_CALLS_BRANCHES, CX_CALLS_ANYCALL
} cx_op_calls;
cx_op_calls cx_op_calls_of(cx_op op);
/* How a loop kernel reads the op's operands (the `index` column). */
typedef enum { CX_INDEX_MULTI, CX_INDEX_LINEAR, CX_INDEX_SAME_RANK } cx_op_index;
cx_op_index cx_op_index_of(cx_op op);
/* A re-indexing op that loop fusions compute in place (the `fuse` column). */
int cx_op_fuses_as_reindex(cx_op op);
/* A window op that fuses into its consumer where its windows are disjoint (the `fuse` column;
 * cx_window_disjoint says when). */
int cx_op_fuses_when_disjoint(cx_op op);
/* An in-place update of its operand 0 that fuses the producers of its other operands (the
 * `fuse` column). */
int cx_op_fuses_as_update(cx_op op);
/* Whether the result may share its operand's bytes (the `alias` column). */
typedef enum { CX_ALIAS_NEVER, CX_ALIAS_ALWAYS, CX_ALIAS_SAME_BYTES } cx_op_alias;
cx_op_alias cx_op_alias_of(cx_op op);
/* What the gpu backend does with an op (the `gpu` column; its meanings in ops.def). */
typedef enum {
  CX_GPU_NONE, CX_GPU_REFUSED, CX_GPU_REWRITTEN, CX_GPU_HOST, CX_GPU_LIBRARY, CX_GPU_EMIT_F32, CX_GPU_EMIT
} cx_op_gpu;
cx_op_gpu cx_op_gpu_of(cx_op op);
/* Why the gpu backend refuses op, in words, for messages: the row's REFUSED reason, or what
 * NONE, REWRITTEN and (for f64 and complex) EMIT_F32 mean; NULL for the other values. */
const char *cx_op_gpu_why(cx_op op);
/* How many it takes (-1: any number) and the role of the k-th ("to_apply", "body", ...). */
int cx_op_called_count(cx_op op);
const char *cx_op_called_role(cx_op op, int k);
static inline int cx_op_is_elementwise(cx_op op) { return cx_op_class_of(op) == CX_CLASS_ELEMENTWISE; }
/* Whether an elementwise op (or copy, convert, compare, select, clamp, reduce-precision) is
 * defined on element type t (the on-true type for select, the operand type for
 * compare/convert): the table's `types` column, XLA's rule. The verifier, the interpreter and
 * the emitter all ask this one predicate. */
int cx_op_valid_for_type(cx_op op, cxla_type t);
/* What cx_op_valid_for_type accepts, in words ("a floating-point type"), for messages. */
const char *cx_op_types_accepted(cx_op op);
/* Whether op exchanges data between the devices of a run (all-reduce, all-gather,
 * collective-permute, their -start/-done halves, ...; the table's COLLECTIVE flag): every
 * device must run it, so it is never removed, merged or folded (docs/collectives.md). */
int cx_op_is_collective(cx_op op);

#endif
