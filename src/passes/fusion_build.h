/* fusion_build.h — the one way code outside the fusion passes (the CPU backend's lowering of
 * library ops) makes or changes fusion instructions: the same builder the fusion passes use,
 * so every fusion has the representation fusion_util.h describes and a kind from the enum. */
#ifndef CX_FUSION_BUILD_H
#define CX_FUSION_BUILD_H
#include "ir/ir.h"

/* Replaces instructions parts[0..n) of control-flow computation c by one fusion of kind `kind`
 * whose value is that of part `out`: operands from outside the parts become its parameters,
 * users of `out` read the fusion, and the parts go (nothing outside them may read a part
 * other than `out`). c is re-sorted (stable: the fusion lands before its first user). *f is
 * the fusion. */
cxla_status cx_fusion_make(cx_comp *c, cx_instr *const *parts, int n, cx_instr *out, cx_fusion_kind kind,
                           cx_instr **f);

/* Computes fused instruction `inner` of fusion f (whose operands are all parameters) outside
 * it: a copy reading f's operands is added to c (named after its op, at f's location), and
 * f reads that copy as a new last operand where the body read `inner`; if `inner` is the
 * body's root, the copy replaces f altogether. f's kind becomes `kind`. *outer is the copy. */
cxla_status cx_fusion_hoist(cx_comp *c, cx_instr *f, cx_instr *inner, cx_fusion_kind kind, cx_instr **outer);

#endif
