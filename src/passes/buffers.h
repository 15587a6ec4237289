/* buffers.h — schedule and buffer assignment for a fused module. Every array leaf of every
 * value gets a slot; tuples, get-tuple-element, parameters and bitcasts alias slots. */
#ifndef CX_BUFFERS_H
#define CX_BUFFERS_H
#include "ir/ir.h"
#include "passes/fusion_plan.h" /* cx_buffers_instr_is_alias */

typedef enum cx_slot_kind {
  CX_SLOT_TEMP,    /* offset into the per-execution arena */
  CX_SLOT_PARAM,   /* ENTRY parameter `param`, leaf `leaf` (caller memory, read-only unless donated) */
  CX_SLOT_OUTPUT,  /* ENTRY result leaf `leaf` (memory handed in by the executable) */
  CX_SLOT_CONST    /* a constant's literal data, owned by the executable's module */
} cx_slot_kind;

typedef struct cx_slot {
  cx_slot_kind kind;
  int64_t offset;        /* TEMP: arena offset (64-byte aligned) */
  int64_t size;          /* bytes */
  int param, leaf;       /* PARAM / OUTPUT */
  int out_leaf;          /* PARAM of a donated parameter: the ENTRY result leaf computed in
                            it (the result takes over the parameter's memory), or -1 */
  const cxla_literal *constant; /* CONST (the array leaf) */
} cx_slot;

typedef struct cx_buffers {
  int nslots;
  cx_slot *slots;
  int64_t arena_size;
  int max_id;            /* instruction ids are < max_id */
  int **leaf_slots;      /* [instr id] -> slot index per leaf (DFS order), NULL if none */
  int *nleaves;          /* [instr id] -> number of leaves */
  int noutputs;          /* ENTRY result leaves */
  cx_shape *output_shapes; /* their shapes (heap) */
} cx_buffers;

/* Assigns slots for every computation reachable from ENTRY through control flow (embedded
 * computations such as fused computations and reducers get no slots). */
cxla_status cx_buffers_assign(cx_module *m, cx_buffers *out);
/* The same where ENTRY parameter p is donated (p < ndonated and donated[p]): its leaves'
 * memory may be written once they are dead, like a temporary's, and may hold a result leaf. */
cxla_status cx_buffers_assign_donated(cx_module *m, const uint8_t *donated, int ndonated, cx_buffers *out);
void cx_buffers_free(cx_buffers *b);
/* Bytes of the donated parameters' leaves that hold a result leaf (XLA's alias size). */
int64_t cx_buffers_alias_bytes(const cx_buffers *b);
/* Slot of leaf `leaf` of instruction `in` (-1 if none). */
int cx_buffers_slot(const cx_buffers *b, const cx_instr *in, int leaf);
/* Writes a human-readable assignment (for --dump-to). */
void cx_buffers_print(cx_sb *sb, const cx_module *m, const cx_buffers *b);


#endif
