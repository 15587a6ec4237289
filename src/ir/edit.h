/* edit.h — IR edits the HLO-to-HLO passes share: adding named instructions, dropping
 * replaced instructions, removing computations nothing calls any more, and the side-effect
 * facts that decide what DCE keeps and CSE never merges. */
#ifndef CX_EDIT_H
#define CX_EDIT_H
#include "ir/ir.h"

/* Appends a new instruction to c, named "<op>.<N>" (unique in the module) and located at
 * `loc` (the source position of the instruction it stands for, so messages still point at the
 * user's text). The caller re-sorts c (cx_comp_sort) once its edits are done. NULL on OOM. */
cx_instr *cx_instr_add(cx_comp *c, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops,
                       cx_loc loc);

/* A new computation (x, y) -> op(x, y) on scalars of type t, named "<prefix>.<N>", placed
 * first in m->comps (callees come before their callers): a reducer for the reduces a pass
 * adds. NULL on OOM. */
cx_comp *cx_module_add_binary(cx_module *m, const char *prefix, cx_op op, cxla_type t);
/* Raises m->next_id above every numeric name suffix ("add.12") of the module's computations
 * and instructions, so that names made from it afterwards (cx_instr_add,
 * cx_module_unique_name) cannot collide with names the module already has (text written by
 * jax numbers its own). Call it once before adding instructions to a parsed module. */
void cx_module_reserve_names(cx_module *m);

/* cx_comp_sort with a status: CXLA_ERR_OUT_OF_MEMORY, or CXLA_ERR_INTERNAL naming `who`
 * when an operand lives outside c (a bug in the caller's edits). */
cxla_status cx_comp_resort(cx_comp *c, const char *who);

/* Calls rewrite on every instruction of m that match accepts (instructions the rewrites add
 * are not visited), then re-sorts each computation it changed; *changed is set if any did.
 * Stops at the first failing rewrite. */
cxla_status cx_module_rewrite(cx_module *m, const char *who, int (*match)(const cx_instr *),
                              cxla_status (*rewrite)(cx_instr *), int *changed);

/* A copy of c->instrs (its length in *n), for a pass whose edits change c->instrs while it
 * walks them: the walk visits what was there when it began. Free it with cx_free. NULL on OOM
 * (the caller reports it). */
cx_instr **cx_comp_snapshot(const cx_comp *c, int *n);

/* Removes from c->instrs every instruction for which drop[i] is set (i: position in
 * c->instrs), keeping the order of the rest. Returns how many were removed. The caller makes
 * sure no remaining instruction (or the root) still uses a removed one. */
int cx_comp_remove_instrs(cx_comp *c, const uint8_t *drop);

/* Removes the computations that the ENTRY cannot reach through `called` (keeping the order of
 * the rest). Returns how many were removed. A module without ENTRY is left alone. */
int cx_module_remove_unreachable(cx_module *m);


/* Side effects through called computations: marks every computation that contains a
 * side-effecting op, directly or through what it calls, by setting its comp->aux to a non-NULL
 * sentinel (others get NULL). Passes call it, use cx_instr_is_effectful, then clear the marks
 * with cx_module_clear_comp_aux. */
void cx_module_mark_effectful(cx_module *m);
/* Whether `in` has a side effect: its own op, or a called computation marked above. */
int cx_instr_is_effectful(const cx_instr *in);
void cx_module_clear_comp_aux(cx_module *m);

#endif
