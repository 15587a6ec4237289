/* clone.h — deep copies of attributes, instructions and modules. */
#ifndef CX_CLONE_H
#define CX_CLONE_H
#include "ir/ir.h"

/* Copies attributes into m's arena (literal cloned and owned by m). */
int cx_attrs_copy(cx_module *m, cx_attrs *to, const cx_attrs *from);
/* A copy of src appended to dst with the given operands; called computations are kept as
 * they are (the caller remaps them if dst is in another module). NULL on OOM. */
cx_instr *cx_instr_clone(cx_comp *dst, const cx_instr *src, cx_instr *const *ops);
/* A deep copy of a module (ids and names preserved). NULL on OOM. */
cx_module *cx_module_clone(cx_module *src);

#endif
