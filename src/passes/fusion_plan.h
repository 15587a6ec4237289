/* fusion_plan.h — plans of fusion instructions (the type is ir/fusion_plan.h): the one place
 * that decides what buffer assignment and the emitter read about a fusion. */
#ifndef CX_PASSES_FUSION_PLAN_H
#define CX_PASSES_FUSION_PLAN_H
#include "ir/fusion_plan.h"

/* f's plan: kept in f->plan (module arena), made now if f has none or a stale one. NULL for
 * an instruction that is not a fusion with one fused computation, or on OOM (error set). */
const cx_fusion_plan *cx_fusion_plan_get(cx_instr *f);
/* Plans every fusion instruction of m that lacks a fitting plan. The backend calls it once its
 * fusions are final, before buffer assignment and code generation; buffer assignment calls it
 * again for the fusions it cloned (flattening the call graph). */
cxla_status cx_fusion_plan_module(cx_module *m);

/* 1 if a raw instruction's value is its operand's bytes (reshape, opt-barrier, bitcast between
 * default layouts of the same size): it gets its operand's slot and needs no code. (A fusion
 * says the same through its plan's relabels.) Buffer assignment gives it its operand's slot;
 * the plans use it for the fusions that only re-label. */
int cx_buffers_instr_is_alias(const cx_instr *in);

#endif
