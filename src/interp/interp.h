/* interp.h — the reference interpreter: evaluates a module's computations on host literals.
 * It judges every compiled backend, so it favours obvious correctness over speed: floats are
 * computed in double and rounded to the element type after every op. */
#ifndef CX_INTERP_H
#define CX_INTERP_H
#include "ir/ir.h"

typedef struct cx_interp {
  cx_module *m;
  cxla_context *ctx;
  int64_t max_loop_iterations; /* 0: unlimited */
  int depth;                   /* nesting of computation calls (guards runaway recursion) */
  /* how many times each rng instruction has run in this run (rng.c; freed by cx_interp_run) */
  struct cx_rng_count *rng_counts;
  int nrng_counts;
  /* the device this run is on and how it reaches the others (core/transport.h); NULL: a
   * run of one device (collectives then only take part with themselves) */
  const struct cx_replica *rep;
} cx_interp;

/* One scalar value: floats in f (already rounded to the element type), integers and pred
 * in i (u64 as its bit pattern, narrower types sign/zero-extended), complex numbers with the
 * real part in f and the imaginary part in im (each rounded to the component type). */
typedef struct cx_scalar {
  union {
    double f;
    int64_t i;
  };
  double im;
} cx_scalar;

void cx_interp_init(cx_interp *st, cx_module *m);
/* Runs the ENTRY computation. args are borrowed; *out is a new literal. */
cxla_status cx_interp_run(cx_module *m, int nargs, cxla_literal *const *args, cxla_literal **out);
/* The same as device rep->device of a run of several (rep NULL: of one). */
cxla_status cx_interp_run_on(cx_module *m, const struct cx_replica *rep, int nargs, cxla_literal *const *args,
                             cxla_literal **out);
/* Evaluates computation c on args (borrowed); *out is new. */
cxla_status cx_interp_call(cx_interp *st, cx_comp *c, int nargs, cxla_literal *const *args,
                           cxla_literal **out);
/* Evaluates a computation whose parameters and result are scalars (or a tuple of scalars),
 * as reducers, comparators and scatter combiners are, without allocating literals when the
 * body only uses elementwise ops, constants, tuples and get-tuple-element. */
cxla_status cx_interp_call_scalar(cx_interp *st, cx_comp *c, int nargs, const cx_scalar *args,
                                  int nouts, cx_scalar *outs);

/* Scalar semantics of the elementwise ops (XLA's rules: integer division truncates, x/0 = -1
 * for integers, remainder takes the dividend's sign, shifts past the width give 0 or the sign,
 * max/min propagate NaN, ...). `type` is the operand element type; the result type is the
 * instruction's (pred for compare and is-finite). cx_scalar_unary and cx_scalar_binary compute
 * the ops whose operands share one type and that have no attributes (cx_scalar_eval computes
 * compare, convert, bitcast-convert, reduce-precision, select and clamp); on a type the op is
 * not defined on (cx_op_valid_for_type) they give 0. */
cx_scalar cx_scalar_unary(cx_op op, cxla_type type, cx_scalar x);
cx_scalar cx_scalar_binary(cx_op op, cxla_type type, cx_scalar a, cx_scalar b);
int cx_scalar_compare(cxla_compare_dir dir, cx_cmp_type ct, cxla_type type, cx_scalar a, cx_scalar b);
cx_scalar cx_scalar_convert(cxla_type from, cxla_type to, cx_scalar x);
cx_scalar cx_scalar_load(cxla_type t, const void *base, int64_t i);
void cx_scalar_store(cxla_type t, void *base, int64_t i, cx_scalar v);
/* reduce-precision of one value of float type t (XLA's bit-exact algorithm). */
cx_scalar cx_scalar_reduce_precision(cxla_type t, cx_scalar x, int exponent_bits, int mantissa_bits);
/* bitcast-convert of one value between types of equal width. */
cx_scalar cx_scalar_bitcast(cxla_type from, cxla_type to, cx_scalar x);

/* Evaluators of one instruction (eval_table.c says which evaluates which op; these are the
 * ones the tests call directly). ops are the operand values (borrowed); *out is new. Each
 * returns CXLA_ERR_UNSUPPORTED "not supported: <op> ..." for cases it does not handle. */
typedef cxla_status (*cx_interp_fn)(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                                    cxla_literal **out);
cxla_status cx_interp_elementwise(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_reduce(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_reduce_window(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_select_and_scatter(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_map(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_sort(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_dot(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_convolution(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_gather(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);
cxla_status cx_interp_scatter(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out);

/* Whether the interpreter has an evaluator for op: a hook in its table (eval_table.c), or a
 * scalar rule for an elementwise op (ew_rules.c). */
int cx_interp_has_evaluator(cx_op op);
/* Whether the interpreter evaluates op at all: it has an evaluator and ops.def's `runs` column
 * says it runs; every instruction of another op is refused with "not supported". Particular
 * cases of an op it runs can still be refused (dynamic shapes, window reversal, map over a
 * subset of dimensions, types the op is not defined on). */
int cx_interp_runs_op(cx_op op);
/* Why the interpreter would refuse `in` (those particular cases included), or NULL; buf holds
 * a message that needs formatting. */
const char *cx_interp_cannot_run(const cx_instr *in, char *buf, size_t n);
/* Every backend's compile-time check: CXLA_ERR_UNSUPPORTED "FILE:LINE:COL: error: not
 * supported: OP 'NAME' (why)" for the one instruction the ENTRY reaches that cxla cannot run,
 * or "...: not supported: N instructions: FILE:LINE:COL OP 'NAME' (why), ..." listing every
 * one in file order (at the first); a custom-call's why starts with its target. */
cxla_status cx_interp_check_module(cx_module *m);

/* Error helpers: "FILE:LINE:COL: error: not supported: <op>: <why>". */
cxla_status cx_interp_unsupported(cx_interp *st, cx_instr *in, const char *why);

#endif
