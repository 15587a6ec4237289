/* sort_scatter.h — native sort, scatter and select-and-scatter on the cpu: the sequencer's
 * side (sort_scatter_plan.c plans each instruction into its descriptor, native_call.c emits
 * the call) of the run-time routines of rt/sort_scatter.h. Its called computations
 * (comparator, combiner, select) are emitted as scalar functions (cx_emit_scalar_fn) that the
 * routines call through a pointer, `void f(void **p)` with p = result addresses, then the
 * parameters'. A called computation the emitter cannot compile sends the instruction to the
 * interpreter, as before (counted in fallbacks=). */
#ifndef CX_CPU_SORT_SCATTER_H
#define CX_CPU_SORT_SCATTER_H
#include "backend/cpu/sequencer_int.h"
#include "rt/sort_scatter.h"

/* sort_scatter_plan.c */
cxla_status cx_seq_sort(cx_seq *s, cx_instr *in);
cxla_status cx_seq_scatter(cx_seq *s, cx_instr *in);
cxla_status cx_seq_select_and_scatter(cx_seq *s, cx_instr *in);

/* The call the three share: `routine(rt, desc, fns..., bufs, id)` where bufs holds the
 * instruction's result leaves then its operands' (sequencer.c's order). 0 if the called
 * computations cannot be compiled (the caller falls back; why set). */
int cx_seq_native_call(cx_seq *s, cx_instr *in, const char *routine, const void *desc, int nfns, const char **why);

#endif
