/* simplify.h — private to the algebraic simplifier (simplify*.c): constant matching, builders
 * for replacement instructions, and the per-op rule functions.
 *
 * A rule looks at one instruction whose operands are already simplified and either leaves
 * *out NULL (no rewrite) or sets it to an instruction of exactly the same shape that computes
 * the same values bit for bit (NaN payloads aside), -0, infinities and integer wrap-around
 * included. New instructions are appended to the computation (the driver re-sorts it); a rule
 * creates them only when it will return one of them, so a sweep never leaves garbage. */
#ifndef CX_SIMPLIFY_H
#define CX_SIMPLIFY_H
#include "ir/edit.h"
#include "interp/interp.h"

/* x's elements are all one value (x is a constant with equal elements, or a broadcast of
 * one); *v gets it (floats in .f, integers and pred in .i). Empty arrays never match. */
int cx_simp_uniform(const cx_instr *x, cx_scalar *v);
/* Integer or pred x whose every element is k (k wraps to the type, so -1 is "all ones"). */
int cx_simp_is_int(const cx_instr *x, int64_t k);
/* Float x whose every element is f, with the same sign for zeros (so -0 and +0 differ). */
int cx_simp_is_float(const cx_instr *x, double f);
/* The integer type's smallest / largest value as loaded by cx_scalar_load. */
int64_t cx_simp_int_min(cxla_type t);
int64_t cx_simp_int_max(cxla_type t);

/* New instructions placed next to `at` (its computation and source location); NULL on OOM. */
cx_instr *cx_simp_new(cx_instr *at, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops);
/* Every element v, shaped `shape`: a scalar constant, broadcast unless shape is a scalar
 * (broadcasts of scalar constants are what fusion inlines best). */
cx_instr *cx_simp_splat(cx_instr *at, const cx_shape *shape, cx_scalar v);
/* x reshaped to shape's dims (x itself when the dims already match). */
cx_instr *cx_simp_reshape(cx_instr *at, cx_instr *x, const cx_shape *shape);

/* The rules, found by op through simplify.c's table; each returns CXLA_OK with *out =
 * replacement or NULL. */
cxla_status cx_simp_add(cx_instr *in, cx_instr **out);
cxla_status cx_simp_subtract(cx_instr *in, cx_instr **out);
cxla_status cx_simp_multiply(cx_instr *in, cx_instr **out);
cxla_status cx_simp_divide(cx_instr *in, cx_instr **out);
cxla_status cx_simp_power(cx_instr *in, cx_instr **out);
cxla_status cx_simp_minmax(cx_instr *in, cx_instr **out);
cxla_status cx_simp_and(cx_instr *in, cx_instr **out);
cxla_status cx_simp_or(cx_instr *in, cx_instr **out);
cxla_status cx_simp_xor(cx_instr *in, cx_instr **out);
cxla_status cx_simp_shift(cx_instr *in, cx_instr **out);
cxla_status cx_simp_compare(cx_instr *in, cx_instr **out);
cxla_status cx_simp_involution(cx_instr *in, cx_instr **out);
cxla_status cx_simp_abs(cx_instr *in, cx_instr **out);
cxla_status cx_simp_same_layout(cx_instr *in, cx_instr **out);
cxla_status cx_simp_bitcast_convert(cx_instr *in, cx_instr **out);
cxla_status cx_simp_convert(cx_instr *in, cx_instr **out);
cxla_status cx_simp_reduce_precision(cx_instr *in, cx_instr **out);
cxla_status cx_simp_select(cx_instr *in, cx_instr **out);
cxla_status cx_simp_reshape_op(cx_instr *in, cx_instr **out);
cxla_status cx_simp_transpose(cx_instr *in, cx_instr **out);
cxla_status cx_simp_broadcast(cx_instr *in, cx_instr **out);
cxla_status cx_simp_slice(cx_instr *in, cx_instr **out);
cxla_status cx_simp_dynamic_slice(cx_instr *in, cx_instr **out);
cxla_status cx_simp_dynamic_update_slice(cx_instr *in, cx_instr **out);
cxla_status cx_simp_pad(cx_instr *in, cx_instr **out);
cxla_status cx_simp_concatenate(cx_instr *in, cx_instr **out);
cxla_status cx_simp_reverse(cx_instr *in, cx_instr **out);
cxla_status cx_simp_reduce(cx_instr *in, cx_instr **out);
cxla_status cx_simp_map(cx_instr *in, cx_instr **out);
cxla_status cx_simp_scatter(cx_instr *in, cx_instr **out);

#endif
