/* while_trips.h — the trip count of a while loop, when it is known before it runs: a counter
 * in the carry goes from a constant by a constant step to a constant bound (XLA's pattern, as
 * jax's fori_loop and scan lower). Read through single-instruction fusions, so it holds before
 * and after fusion. Used by the gradient of loops (grad/while_tape.c) and by the gpu backend,
 * which runs such a loop without reading its predicate back. */
#ifndef CX_IR_WHILE_TRIPS_H
#define CX_IR_WHILE_TRIPS_H
#include "ir/ir.h"

/* 1 and *trips when w's trip count is known, else 0. */
int cx_while_trip_count(const cx_instr *w, int64_t *trips);

#endif
