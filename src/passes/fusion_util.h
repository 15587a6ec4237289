/* fusion_util.h — what the fusion passes share: building a fusion out of a set of
 * instructions (raw ops and existing fusions alike), the driver over control-flow
 * computations, and, from headers of their own below it, the read-only queries
 * (fusion_query.h), the graph index (fusion_index.h) and names and order (fusion_order.h).
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
#include "passes/fusion_index.h"
#include "passes/fusion_order.h"
#include "passes/fusion_query.h"

/* Limits (XLA's CPU fusion has the 5 reduces and 8 concatenate operands; the others bound
 * kernel size and argument count). */
#define FU_MAX_INSTRS 64       /* non-parameter instructions in one fused computation */
#define FU_MAX_REDUCES 5
#define FU_MAX_ARGS 64         /* operands + outputs of one fusion */
#define FU_MAX_CONCAT_OPERANDS 8
#define FU_MAX_EMISSIONS 8     /* times one fused instruction may be emitted (re-indexing) */

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

/* Fuses operand i of fusion cons (producer p = cons->ops[i]) into the fused computation cons
 * already calls, in place (fusion_absorb.c): p's clone replaces the parameters bound to it,
 * p's operands become cons's operands where cons does not read them yet (after its own, which
 * keep their order), p leaves c unless keep_p, and cons keeps its name and position and gets
 * `kind`. Only for a fused computation no other instruction calls, with an index active; *done
 * is 0 (nothing changed) where it does not apply (a multi-output consumer or producer, a
 * get-tuple-element producer, ...): the caller builds a new fusion with fu_fuse instead. */
cxla_status fu_absorb(cx_comp *c, cx_instr *cons, int i, int keep_p, cx_fusion_kind kind, int *done);
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

/* Runs fn on every control-flow computation of m (fu_control_comps) with an index active, after
 * fu_reserve_names: the driver every fusion pass shares. *changed is cleared first. */
cxla_status fu_each_control_comp(cx_module *m, int *changed, cxla_status (*fn)(cx_comp *c, int *changed));
/* Why each remaining producer->consumer edge between kernels was not fused, one line per
 * edge ("fusion.7 <- exponential.3: expensive producer with 2 users is not duplicated"),
 * per control-flow computation. Appends to sb. */
cxla_status cx_fusion_explain(cx_module *m, cx_sb *sb);

#endif
