/* collectives.h — the collectives on the cpu (docs/collectives.md): the sequencer's side, a
 * plan for each (collectives_plan.c) and a call of the run-time routine that runs it
 * (rt/collectives.c, rt/collectives.h). */
#ifndef CX_CPU_COLLECTIVES_H
#define CX_CPU_COLLECTIVES_H
#include "backend/cpu/sort_scatter.h"
#include "rt/collectives.h"

/* The sequencer's call for replica-id, partition-id and every collective (its -start/-done
 * halves the async pass made into the collective itself). */
cxla_status cx_seq_device_id(cx_seq *s, cx_instr *in);
cxla_status cx_seq_collective(cx_seq *s, cx_instr *in);

#endif
