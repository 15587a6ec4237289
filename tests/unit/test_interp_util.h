/* test_interp_util.h — building small modules with the IR API for the interpreter tests
 * (until HLO text can be parsed in tests), making literals and checking results. */
#ifndef TEST_INTERP_UTIL_H
#define TEST_INTERP_UTIL_H
#include "interp/interp.h"
#include "test.h"

/* Shapes: ti_sh(CXLA_F32, 2, 3, 4) is f32[3,4]. */
cx_shape ti_sh(cxla_type t, int rank, ...);
cx_shape ti_tuple_sh(int n, cx_shape *elems); /* elems must outlive its use */

cx_module *ti_module(void);
cx_comp *ti_comp(cx_module *m, const char *name);
cx_instr *ti_param(cx_comp *c, int index, cx_shape s);
/* A constant owning lit. */
cx_instr *ti_const(cx_comp *c, cxla_literal *lit);
cx_instr *ti_cscalar(cx_comp *c, cxla_type t, double v);
/* An instruction with n operands. */
cx_instr *ti_op(cx_comp *c, cx_op op, cx_shape s, int n, ...);
void ti_ints(cx_comp *c, cx_ints *dst, int n, ...);
/* Sets the root, numbers the parameters and adds c to m (as ENTRY if entry). */
cx_comp *ti_finish(cx_module *m, cx_comp *c, cx_instr *root, int entry);

/* Literals from double or int64 values (stored with convert semantics / wrapped). */
cxla_literal *ti_lit_f(cxla_type t, cx_shape s, const double *v);
cxla_literal *ti_lit_i(cxla_type t, cx_shape s, const int64_t *v);
cxla_literal *ti_scalar_f(cxla_type t, double v);
cxla_literal *ti_scalar_i(cxla_type t, int64_t v);

/* Runs m's ENTRY on args (borrowed) and returns the result, or NULL after recording a test
 * failure. */
cxla_literal *ti_run(cx_module *m, int nargs, cxla_literal **args, const char *file, int line);
#define TI_RUN(m, n, args) ti_run((m), (n), (args), __FILE__, __LINE__)

/* Runs one elementwise op with result shape rs on n arguments (each a parameter); attrs (may be
 * NULL) is copied into the instruction. Frees the arguments. */
cxla_literal *ti_op_run(cx_op op, cx_shape rs, const cx_attrs *attrs, int n, cxla_literal **args,
                        const char *file, int line);
#define TI_OP(op, rs, attrs, n, ...) \
  ti_op_run((op), (rs), (attrs), (n), (cxla_literal *[]){__VA_ARGS__}, __FILE__, __LINE__)

/* Checks every element: floats within tol (tol < 0: exactly, the sign of zero included; NaN
 * matches NaN), integers exactly (u64 as bit patterns). Destroys l. */
void ti_check_f(cxla_literal *l, int n, const double *want, double tol, const char *file, int line);
void ti_check_i(cxla_literal *l, int n, const int64_t *want, const char *file, int line);
#define TI_CHECK_F(l, tol, ...)                                                           \
  ti_check_f((l), (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__}, \
             (tol), __FILE__, __LINE__)
#define TI_CHECK_I(l, ...)                                                                 \
  ti_check_i((l), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),             \
             (int64_t[]){__VA_ARGS__}, __FILE__, __LINE__)
#define TI_F(t, ...) \
  ti_lit_f((t), ti_sh((t), 1, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double))), (double[]){__VA_ARGS__})
#define TI_I(t, ...) \
  ti_lit_i((t), ti_sh((t), 1, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))), (int64_t[]){__VA_ARGS__})

#endif
