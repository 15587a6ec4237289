/* fusion_query.h — the read-only questions the fusion passes ask (fusion_query.c): fusion
 * kinds and outputs, op classes and costs as fusion sees them, how a fused computation reads
 * each parameter, which computations are control-flow ones, and counting kernels. Below the
 * passes that edit (fusion_util.h gathers it with the rest). */
#ifndef CX_FUSION_QUERY_H
#define CX_FUSION_QUERY_H
#include "ir/ir.h"

/* The kind of a fusion these passes can extend; CX_FUSION_NONE for anything else (other
 * instructions, kCustom fusions: another tool's, left as they are). */
cx_fusion_kind fu_kind_of(const cx_instr *in);
/* Number of outputs: tuple elements of a multi-output fusion, else 1. */
int fu_nouts(const cx_instr *in);
int fu_is_multi_output(const cx_instr *in);

/* ---- op classes as fusion sees them ---- */
/* Re-indexing ops fusion handles (elementwise ops aside): broadcast, reshape, bitcast,
 * transpose, slice, pad, concatenate, reverse, iota, dynamic-slice. */
int fu_is_fusible_shape_op(cx_op op);
/* Elementwise or a fusible re-indexing op with an array result. */
int fu_is_loop_op(const cx_instr *in);
/* A single-output reduce (variadic reduces stay unfused). */
int fu_is_simple_reduce(const cx_instr *in);
/* A window op that fuses into a consumer as a producer (never as a consumer): the op table says
 * DISJOINT and its windows are (a max-pool's gradient with stride = size). */
int fu_is_window_producer(const cx_instr *in);
/* A single-output reduce-window whose windows are disjoint: it reads each operand element
 * once, so it fuses producers as a consumer (never as a producer). */
int fu_is_pooling(const cx_instr *in);
/* pred(in), or for a fusion whether pred holds for an instruction of its body. */
int fu_body_any(const cx_instr *in, int (*pred)(const cx_instr *));
/* An array constant with one element (fused and duplicated freely). */
int fu_is_scalar_constant(const cx_instr *in);
/* A scalar constant equal to x already in fused computation fc, or NULL (duplicated producers
 * bring the same constant many times; one immediate is enough). */
cx_instr *fu_same_constant(const cx_comp *fc, const cx_instr *x);
/* ops.def cost column; for a fusion: any fused instruction is expensive. */
int fu_is_expensive(const cx_instr *in);
/* Non-parameter instructions a fusion or raw instruction brings into a fusion. */
int fu_size(const cx_instr *in);
int fu_count_reduces(const cx_instr *in);
/* The first reduce inside (in itself if it is one), or NULL. */
const cx_instr *fu_first_reduce(const cx_instr *in);
/* 1 if every reduce in a and b (raw or fused) is single-output with the same input dims and
 * reduced dimensions, i.e. they can share one loop nest. */
int fu_reduces_compatible(const cx_instr *a, const cx_instr *b);
/* Ops that take memory of their own and become singleton fusions when nothing fuses with
 * them (everything except plumbing, library calls, control flow, OTHER, existing fusions). */
int fu_needs_kernel_wrap(const cx_instr *in);

/* ---- analysis of how a fused computation uses one of its parameters ---- */
typedef struct fu_param_use {
  int emissions;      /* times the parameter's element generator is emitted (re-indexing) */
  int reused;         /* some element is read more than once (broadcast, window, ...) */
  int elementwise;    /* every use path is elementwise ops (or reshapes) at the same index,
                         ending in the root (or a root tuple element) or a reduce's data
                         operand */
  int to_reduce;      /* some path ends in a reduce's data operand */
  int to_root;        /* some path ends in the root */
  int dot_operand;    /* used by a dot directly */
} fu_param_use;
/* Fills u for parameter `p` of fused computation `body`. Returns 0 on OOM. */
int fu_analyze_param(const cx_comp *body, int p, fu_param_use *u);
/* How consumer `in` (raw op or fusion) uses its operand `i` (every parameter bound to it). */
int fu_analyze_operand(const cx_instr *in, int i, fu_param_use *u);
/* The same for every operand of fusion f at once (u has f->nops entries): one analysis of the
 * body. Returns 0 on OOM. */
int fu_analyze_operands(const cx_instr *f, fu_param_use *u);
/* Largest emission count of any instruction in a fusion's body (1 for a raw op). */
int fu_max_emissions(const cx_instr *in);

/* Control-flow computations (ENTRY, while bodies/conditions, conditional branches, call
 * targets) that no embedded use (reducers, comparators, fused computations) shares, in
 * m->comps order. Heap array, caller frees; CXLA_ERR_OUT_OF_MEMORY on OOM. */
cxla_status fu_control_comps(cx_module *m, cx_comp ***out, int *n);

/* Number of kernels (fusions, dots, convolutions and other ops that need a kernel or library
 * call of their own; not parameter/constant/tuple/get-tuple-element/bitcast/opt-barrier or
 * control flow itself) in the ENTRY computation and the control-flow computations it calls,
 * each computation counted once. -1 for a NULL module or one without ENTRY. */
int cx_count_kernels(const cx_module *m);

#endif
