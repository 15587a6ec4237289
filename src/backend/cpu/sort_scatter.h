/* sort_scatter.h — native sort, scatter and select-and-scatter on the cpu (training runs them
 * every step: argsort and top-k metrics, embedding gradients, max-pool gradients). The
 * sequencer hands each such instruction to a routine here; its called computations
 * (comparator, combiner, select) are emitted as scalar functions (cx_emit_scalar_fn) that the
 * routines call through a pointer, `void f(void **p)` with p = result addresses, then the
 * parameters'. Shapes are planned at compile time into a descriptor kept in the module's
 * arena, which lives as long as the executable. A called computation the emitter cannot
 * compile sends the instruction to the interpreter, as before (counted in fallbacks=). */
#ifndef CX_CPU_SORT_SCATTER_H
#define CX_CPU_SORT_SCATTER_H
#include "rt/rt.h"
#include "backend/cpu/sequencer_int.h"

/* sort_rt.c */
cxla_status cx_seq_sort(cx_seq *s, cx_instr *in);
void cx_rt_sort(cx_rt *rt, const void *desc, cx_scalar_fn cmp, void **bufs, int32_t id);
/* scatter_rt.c */
cxla_status cx_seq_scatter(cx_seq *s, cx_instr *in);
void cx_rt_scatter(cx_rt *rt, const void *desc, cx_scalar_fn comb, void **bufs, int32_t id);
/* select_scatter_rt.c */
cxla_status cx_seq_select_and_scatter(cx_seq *s, cx_instr *in);
void cx_rt_select_and_scatter(cx_rt *rt, const void *desc, cx_scalar_fn sel, cx_scalar_fn sct, void **bufs,
                              int32_t id);

/* The call the three share: `routine(rt, desc, fns..., bufs, id)` where bufs holds the
 * instruction's result leaves then its operands' (sequencer.c's order). 0 if the called
 * computations cannot be compiled (the caller falls back; why set). */
int cx_seq_native_call(cx_seq *s, cx_instr *in, const char *routine, const void *desc, int nfns, const char **why);

#endif
