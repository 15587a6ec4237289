/* fusion_plan.h — what the fusion decision hands to buffer assignment and the emitter about
 * one fusion instruction, so that neither re-derives it (and they cannot disagree): the type
 * only. passes/fusion_plan.c computes it from the fused computation (cx_fusion_plan_module)
 * and keeps it with the instruction (cx_instr.plan); buffers.c and codegen/ read it.
 *
 * A plan is derived data: a clone starts without one, the printer does not write it, and a
 * module read back from text gets its plans when it is compiled, as the one that was fused in
 * the same process does. */
#ifndef CX_IR_FUSION_PLAN_H
#define CX_IR_FUSION_PLAN_H
#include "ir/ir.h"

/* How a fusion reads one of its operands (every parameter bound to that value together). */
typedef struct cx_fusion_use {
  uint8_t elementwise;  /* every path from it ends in an output or a reduce's data operand
                           through ops that read it at their own index (elementwise, reshape) */
  uint8_t reused;       /* some element is read more than once (broadcast, window, twice bound) */
  uint8_t dot_operand;  /* a dot reads it directly */
  uint8_t in_place;     /* an output (any one of a multi-output kLoop fusion's, of the same
                           size) may be written over it: element i of the outputs depends on
                           element i of this operand only. Buffer assignment
                           gives both one buffer only where this is set, and the emitter lets
                           the two pointers alias only where it is set. */
} cx_fusion_use;

typedef struct cx_fusion_plan {
  cx_fusion_kind kind;
  const cx_comp *body;  /* the fused computation and operand count it was made for: a plan */
  int nops;             /* that no longer matches its fusion is stale (cx_fusion_plan_fits) */
  int nreduces;         /* reduces in the body */
  const cx_instr *dot;  /* the body's one dot (a kOutput fusion's GEMM); NULL if none or several */
  int expensive;        /* some fused op is EXPENSIVE in ops.def */
  int relabels;         /* the result is its one operand's bytes under another shape (a reshape
                           or same-size default-layout bitcast of the parameter): it shares
                           the operand's buffer and runs no code */
  cx_fusion_use *use;   /* [nops] */
} cx_fusion_plan;

/* 1 if p is a plan of fusion f as it is now. */
static inline int cx_fusion_plan_fits(const cx_fusion_plan *p, const cx_instr *f) {
  return p && f->op == CX_OP_FUSION && f->ncalled == 1 && p->body == f->called[0] && p->nops == f->nops &&
         p->kind == f->a.fusion_kind;
}

#endif
