/* fusion_util.h — what the fusion passes share: fusion kinds, graph queries (users,
 * reachability), per-parameter analysis of fused computations, building a fusion out of a set
 * of instructions (raw ops and existing fusions alike), and counting kernels.
 *
 * Representation (as XLA prints it): a fusion is a CX_OP_FUSION instruction in a control-flow
 * computation with a.fusion_kind kLoop | kInput | kOutput (CX_FUSION_*) and called[0] a computation
 * "fused_computation.N" placed in m->comps before its caller. The fused computation's
 * parameters are the fusion's operands in order; a multi-output fusion has a tuple root and
 * tuple shape, and its users are get-tuple-elements.
 *
 * What the emitter may rely on:
 *   kLoop   every output has the same dims (the iteration space); any loop-fusible ops.
 *   kInput  all reduces are single-output and share input dims and reduced dimensions (one
 *           loop nest). A reduce's result is read only at the same index — by elementwise ops,
 *           or reshapes (which keep the row-major linear index) — ("epilogue", e.g.
 *           log(sum(x)), sum(x)/N, the [N]->[N,1] of keepdims) or by the root tuple, never
 *           through re-indexing. Outputs have the reduce output's element count (same linear
 *           index) or, in multi-output fusions, the reduce input dims (values stored while
 *           the input is read, e.g. exp in softmax).
 *   kOutput one dot whose result is read only by elementwise ops (or reshapes) at the same
 *           index; the root has the dot's dims and element type, so the epilogue can run in
 *           the GEMM output. */
#ifndef CX_FUSION_UTIL_H
#define CX_FUSION_UTIL_H
#include "ir/ir.h"

/* Limits (XLA's CPU fusion has the 5 reduces and 8 concatenate operands; the others bound
 * kernel size and argument count). */
#define FU_MAX_INSTRS 64       /* non-parameter instructions in one fused computation */
#define FU_MAX_REDUCES 5
#define FU_MAX_ARGS 64         /* operands + outputs of one fusion */
#define FU_MAX_CONCAT_OPERANDS 8
#define FU_MAX_EMISSIONS 8     /* times one fused instruction may be emitted (re-indexing) */

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
/* An array constant with one element (fused and duplicated freely). */
int fu_is_scalar_constant(const cx_instr *in);
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

/* ---- graph queries inside one computation (fusion_index.c) ----
 * A pass brackets its work on computation c with fu_index_begin(c) / fu_index_end(): the
 * queries then use an index (users in in->users/nusers, positions in c->instrs) that fu_fuse
 * keeps up to date; without one they scan c. While an index is active, c->instrs may hold
 * removed instructions (parent != c: skip them); fu_index_end compacts. Instructions of c
 * have aux == NULL between edits. One index per thread at a time. */
cxla_status fu_index_begin(cx_comp *c);
/* Compacts c->instrs and puts m->comps in order (see fu_index_drop_comp). OOM possible. */
cxla_status fu_index_end(void);
int fu_index_active(const cx_comp *c);
/* Edits for fu_fuse: user lists, positions (-1 if unknown), renumbering after a re-sort.
 * The int-returning ones return 0 on OOM. */
int fu_index_add_user(const cx_comp *c, cx_instr *x, cx_instr *u);
void fu_index_remove_user(const cx_comp *c, cx_instr *x, const cx_instr *u);
int fu_index_pos(const cx_comp *c, const cx_instr *x);
int fu_index_place(const cx_comp *c, cx_instr *x, int pos);
/* A fused computation no fusion calls any more: while an index is active it stays in m->comps
 * until fu_index_end (new ones are appended; fu_index_end restores callee-before-caller
 * order). Returns 0 when there is no index (or on OOM): the caller removes it itself. */
int fu_index_drop_comp(const cx_comp *c, cx_comp *fc);
/* After c->instrs was re-sorted: lays it out again with spare slots; 0 on OOM. */
int fu_index_relayout(const cx_comp *c);
/* Distinct users of x in c; the computation root counts as one extra user. */
int fu_nusers(const cx_comp *c, const cx_instr *x);
/* 1 if x is not the root and every user of x is u. */
int fu_only_user_is(const cx_comp *c, const cx_instr *x, const cx_instr *u);
/* Users of x in c as a heap array (caller frees); -1 on OOM. Does not list the root. */
int fu_users(const cx_comp *c, const cx_instr *x, cx_instr ***out);
/* 1 if `from` is `to` or an operand path leads from `to` back to `from` (to depends on from);
 * -1 on OOM. */
int fu_reaches(const cx_comp *c, const cx_instr *from, const cx_instr *to);

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

/* ---- building ---- */
/* What to fuse: parts are instructions of c (raw ops or single/multi-output fusions); an
 * operand of a part that is not a part becomes a parameter. outs are the parts whose values
 * leave the fusion, in output order (a multi-output part contributes all its outputs; a
 * get-tuple-element part of a multi-output part stands for that output). keep[i]
 * marks parts that stay in c for other users (duplicated into the fusion). */
typedef struct fu_spec {
  cx_instr **parts;
  int nparts;
  const int *keep;   /* may be NULL: nothing kept */
  cx_instr **outs;
  int nouts;
  cx_fusion_kind kind;
} fu_spec;

/* Builds the fused computation and the fusion instruction and puts the fusion in place of the
 * parts: users of outputs read the fusion (through new get-tuple-elements when it has several
 * outputs), parts that are not kept are removed (their parent set to NULL, their fused
 * computations dropped from m->comps), and the new computation goes before c in m->comps
 * (with an index active: at fu_index_end). `*out` is the new fusion. `topo_ok`: the caller
 * guarantees that placing the fusion at the last part's position keeps c topologically
 * ordered (one output, the last part); otherwise the stretch of c between the parts (or all
 * of c) is re-sorted. */
cxla_status fu_fuse(cx_comp *c, const fu_spec *s, int topo_ok, cx_instr **out);

/* Single-op fusion of `in` (kInput for a reduce, else kLoop). */
cxla_status fu_wrap(cx_comp *c, cx_instr *in, cx_instr **out);
/* Wraps every instruction of c that needs a kernel (fu_needs_kernel_wrap) and is not in a
 * fusion yet into its own single-op fusion (fusion_wrap.c). */
cxla_status fu_wrap_all(cx_comp *c, int *changed);
/* Dot epilogue (kOutput) fusion in one computation (fusion_dot.c); the loop fusion pass runs
 * it first so that elementwise consumers of a dot are not taken by loop fusion. */
cxla_status fu_dot_epilogues(cx_comp *c, int *changed);
/* Fuses every one-element constant operand of fusion f into it (duplicated when it has other
 * users). *f is updated. */
cxla_status fu_absorb_constants(cx_comp *c, cx_instr **f, int *changed);

/* Raises m->next_id above every numeric name suffix ("add.12") in m, so that names made
 * from it ("fusion.<id>", "fused_computation.<id>") cannot collide with the module's. Each
 * pass calls it once before editing. */
void fu_reserve_names(cx_module *m);
/* Runs fn on every control-flow computation of m (fu_control_comps) with an index active, after
 * fu_reserve_names: the driver every fusion pass shares. *changed is cleared first. */
cxla_status fu_each_control_comp(cx_module *m, int *changed, cxla_status (*fn)(cx_comp *c, int *changed));
/* Control-flow computations (ENTRY, while bodies/conditions, conditional branches, call
 * targets) that no embedded use (reducers, comparators, fused computations) shares, in
 * m->comps order. Heap array, caller frees; CXLA_ERR_OUT_OF_MEMORY on OOM. */
cxla_status fu_control_comps(cx_module *m, cx_comp ***out, int *n);

/* ---- names and order (fusion_order.c) ---- */
/* "prefix.<id>": new after fu_reserve_names. NULL on OOM. */
const char *fu_comp_name(cx_module *m, const char *prefix);
/* "exponential.3" -> a fresh "exponential.<id>" for a copy. NULL on OOM. */
const char *fu_fresh_name(cx_module *m, const char *name);
/* Adds fc to m->comps right before `before` (callees before callers). 0 on OOM. */
int fu_insert_comp_before(cx_module *m, cx_comp *fc, cx_comp *before);
void fu_remove_comp(cx_module *m, cx_comp *c);
/* Stable topological re-sort of c->instrs in place (operands first), dropping removed
 * instructions (parent != c). 1 on success, 0 if an operand is not in c, -1 on OOM. */
int fu_sort(cx_comp *c);

/* Number of kernels (fusions, dots, convolutions and other ops that need a kernel or library
 * call of their own; not parameter/constant/tuple/get-tuple-element/bitcast/opt-barrier or
 * control flow itself) in the ENTRY computation and the control-flow computations it calls,
 * each computation counted once. -1 for a NULL module or one without ENTRY. */
int cx_count_kernels(const cx_module *m);

/* Why each remaining producer->consumer edge between kernels was not fused, one line per
 * edge ("fusion.7 <- exponential.3: expensive producer with 2 users is not duplicated"),
 * per control-flow computation. Appends to sb. */
cxla_status cx_fusion_explain(cx_module *m, cx_sb *sb);

#endif
