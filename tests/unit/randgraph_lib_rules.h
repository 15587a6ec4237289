/* randgraph_lib_rules.h — the analysis of the library ops (randgraph_lib_rules.c), which
 * randgraph_bounds.c applies to the LIBRARY class beyond dot. */
#ifndef RANDGRAPH_LIB_RULES_H
#define RANDGRAPH_LIB_RULES_H
#include "randgraph.h"

/* Sets the nout leaves of `in` (topk, rng-bit-generator, cholesky, triangular-solve) from its
 * analysed operands; 0 when the op has no rule here. */
int rg_library_rule(rg_bounds *bd, cx_instr *in, rg_val *out, int nout);

#endif
