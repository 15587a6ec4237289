/* fusion_order.h — fresh names and the order of computations and instructions that the
 * fusion passes keep (fusion_order.c). */
#ifndef CX_FUSION_ORDER_H
#define CX_FUSION_ORDER_H
#include "ir/ir.h"

/* Raises m->next_id above every numeric name suffix ("add.12") in m, so that names made
 * from it ("fusion.<id>", "fused_computation.<id>") cannot collide with the module's. Each
 * pass calls it once before editing. */
void fu_reserve_names(cx_module *m);
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

#endif
