/* randgraph_rules.h — the analysis rules (randgraph_rules.c) that randgraph_bounds.c applies
 * per instruction, and the small helpers both share. */
#ifndef RANDGRAPH_RULES_H
#define RANDGRAPH_RULES_H
#include "randgraph.h"

typedef enum { RK_UNKNOWN, RK_SUM, RK_PROD, RK_MAX, RK_MIN, RK_BITWISE, RK_VARIADIC } rg_red_kind;

void rg_type_range(cxla_type t, double *lo, double *hi);
double rg_vmag(rg_val a);      /* max |x| over the range */
double rg_abs_err(rg_val a);   /* err + rel * max |x| */
int rg_inexact(rg_val a);
rg_val rg_hull(rg_val a, rg_val b);
void rg_mark_bad(rg_bounds *bd, rg_val *r, const cx_instr *in, const char *why);
/* Widens a result of type t by its error, wraps integer ranges, checks overflow. */
rg_val rg_finish(rg_bounds *bd, const cx_instr *in, rg_val r, cxla_type t);
rg_val rg_bitwise_range(rg_val a, rg_val b, cxla_type t, cx_op op);

/* An elementwise instruction from its operands' first leaves o[0..nops). */
rg_val rg_elementwise(rg_bounds *bd, const cx_instr *in, const rg_val *o);
rg_val rg_unary_math(rg_bounds *bd, const cx_instr *in, rg_val a, cxla_type t);
/* n elements of range a folded with init i by a reducer of kind k. */
rg_val rg_reduce_leaf(rg_bounds *bd, const cx_instr *in, rg_red_kind k, rg_val a, rg_val i, double n, cxla_type t);
rg_val rg_dot_rule(rg_bounds *bd, const cx_instr *in, rg_val a, rg_val b);

#endif
