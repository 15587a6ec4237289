/* verify.h — shape inference and module verification. */
#ifndef CX_VERIFY_H
#define CX_VERIFY_H
#include "ir/ir.h"

/* Infers the result shape of `in` from its operands' shapes, its attributes and its called
 * computations. Ops whose result is not determined by operands (parameter, constant, reshape,
 * broadcast, iota, convert and bitcast-convert (element type), custom-call, rng, ...) take the
 * missing facts from in->shape (the declared shape) and validate them. On success *out holds
 * the inferred shape (tuple elements allocated in the module arena). On failure the module's
 * context holds "FILE:LINE:COL: error: <op>: <what was expected>" for in->loc. */
cxla_status cx_infer_shape(cx_instr *in, cx_shape *out);

/* Verifies one computation (its instructions' shapes against inference, operand counts,
 * attribute ranges, called computations' signatures, exactly one root). */
cxla_status cx_verify_comp(cx_comp *c);

/* Verifies a module: exactly one ENTRY, each computation well formed, parameters numbered
 * 0..n-1, no instruction using a value from another computation, and every declared shape
 * equal to the inferred one. Also fills defaults that depend on types (e.g. compare type). */
cxla_status cx_verify_module(cx_module *m);

/* Whether an async-start or async-update has bound all of its computation's parameters and
 * the whole result (element {1} is the result's shape): the first op of a chain for which this
 * holds runs the computation; later ones pass its result on (XLA's IsFirstFullyBound). */
int cx_async_fully_bound(const cx_instr *in);

#endif
