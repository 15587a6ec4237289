/* cost.h — what a module computes, counted as XLA's HloCostAnalysis counts it (the numbers
 * JAX's compiled.cost_analysis() reports): flops, transcendentals and bytes accessed. */
#ifndef CX_IR_COST_H
#define CX_IR_COST_H
#include "ir/ir.h"

typedef struct cx_cost {
  double flops;           /* 2 per multiply-add of dot and convolution, 1 per element of other arithmetic */
  double transcendentals; /* elements of the ops the op table marks TRANSCENDENTAL */
  double bytes;           /* each instruction's operand and result bytes */
} cx_cost;

/* The cost of m's ENTRY computation, callees included (a while loop's body and condition
 * times its trip count where cx_while_trip_count knows it, else once; a conditional's
 * costliest branch). */
void cx_module_cost(const cx_module *m, cx_cost *out);

#endif
