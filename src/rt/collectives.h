/* collectives.h — the collectives' run-time routines (rt/collectives.c, docs/collectives.md)
 * and the plan they run, which the sequencer makes for each collective when compiling
 * (backend/cpu/collectives_plan.c) and keeps in the module arena for the executable's life. */
#ifndef CX_RT_COLLECTIVES_H
#define CX_RT_COLLECTIVES_H
#include "ir/ir.h"
#include "rt/rt.h"

#define COLL_MAX_OPS 64

typedef enum coll_kind {
  COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_ALL_TO_ALL, COLL_PERMUTE, COLL_BROADCAST
} coll_kind;

/* How the fold combines two elements: the compiled to_apply, or a loop for one add. */
typedef enum coll_fast { COLL_CALL, COLL_ADD_F32, COLL_ADD_F64, COLL_ADD_S32, COLL_ADD_S64 } coll_fast;

typedef struct coll_desc {
  const cx_instr *in;       /* the module lives as long as the executable */
  const char *file;         /* for located errors */
  int kind, nops, fast;
  int d;                    /* dimensions[0]; -1: none (all-to-all's tuple form) */
  int64_t elems[COLL_MAX_OPS];  /* operand i: elements, */
  size_t es[COLL_MAX_OPS];      /* element bytes, */
  int64_t outer[COLL_MAX_OPS], dim[COLL_MAX_OPS], inner[COLL_MAX_OPS]; /* rows before d, its size, bytes after */
} coll_desc;

/* all-reduce and reduce-scatter (fn: the compiled to_apply) and the others; bufs: the result
 * leaves, then the operands'. */
void cx_rt_collective_reduce(cx_rt *rt, const void *desc, cx_scalar_fn fn, void **bufs, int32_t id);
void cx_rt_collective(cx_rt *rt, const void *desc, void **bufs, int32_t id);
/* replica-id (partition 0) or partition-id (1) of this execution's device. */
void cx_rt_device_id(cx_rt *rt, int32_t partition, uint32_t *out);

#endif
