/* buffers_int.h — what buffers.c and its helpers (buffers_copy.c, buffers_heap.c,
 * buffers_print.c, schedule.c) share (not part of the buffers.h contract); it includes
 * nothing of buffers.h, so the helpers sit below buffers.c.
 *
 * The whole program is laid out on one timeline: ENTRY's instructions in order, with the
 * computations a control-flow instruction runs placed inside its [t0, t1] interval:
 *   while:       t0 (init copies) | condition | tick | body | tick (result copies) | t1
 *   conditional: t0 (index read)  | branch 0 | tick | branch 1 | tick ... | t1 (result copies)
 *   call:        t0 | callee | tick | t1
 * A computation's root is read at its closing tick ("ret"). Liveness intervals on this one
 * timeline let one best-fit heap place every temporary of every control-flow computation, and
 * a value that a loop reads but did not define stays live until the loop ends. */
#ifndef CX_BUFFERS_INT_H
#define CX_BUFFERS_INT_H
#include "ir/ir.h"

typedef struct cx_sched {
  int max_id;           /* arrays below are indexed by instruction id < max_id */
  int64_t *t0, *t1;     /* -1 for instructions outside control-flow computations */
  int ncomps;
  cx_comp **comps;      /* control-flow computations, in walk order (ENTRY first) */
  int64_t *ret;         /* [position in comps] time the computation's root is read */
  int64_t end;          /* after everything: when ENTRY's result is read */
} cx_sched;

/* Gives every control-flow computation exactly one call site by cloning the ones called from
 * several places (XLA's FlattenCallGraph), so each instruction has one slot assignment. */
cxla_status cx_sched_flatten(cx_module *m);
/* Lays the program out on the timeline (after flattening). */
cxla_status cx_sched_build(cx_module *m, cx_sched *s);
void cx_sched_free(cx_sched *s);
/* ret time of a control-flow computation, or -1. */
int64_t cx_sched_ret(const cx_sched *s, const cx_comp *c);

/* Arena offsets, and the sizes the heap reserves, are multiples of 64 bytes. */
#define CX_HEAP_ALIGN 64
static inline int64_t cx_heap_align_up(int64_t x) { return (x + CX_HEAP_ALIGN - 1) / CX_HEAP_ALIGN * CX_HEAP_ALIGN; }

/* A TEMP buffer to place: [start, end] on the timeline (inclusive), size in bytes. */
typedef struct cx_heap_item {
  int64_t start, end, size, offset;
} cx_heap_item;
/* Greedy best-fit by decreasing size (XLA's GlobalDecreasingSizeBestFit): items whose
 * intervals overlap never share bytes; offsets are 64-byte aligned. Returns the arena size or
 * -1 on OOM. */
int64_t cx_heap_place(cx_heap_item *items, int n);

/* Rebuilds c's root so that the leaves marked in need[] (DFS leaf order) go through a
 * `copy`; untouched elements are reused, not rebuilt (buffers_copy.c). */
cxla_status cx_buffers_copy_root_leaves(cx_comp *c, const uint8_t *need);

#endif
