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
/* Replaces *m by a copy of what is live in it and frees the old one (unchanged on OOM). A
 * module's arena keeps every instruction ever made in it, and fusion builds each fused body
 * again as it grows, so after the passes most of it is dead clones (9.8 of the 11.4 MB of heap
 * the flax CNN step's cpu executable held); a backend keeping its module calls this after
 * the passes, before anything outside the module points into it. */
cxla_status cx_module_compact(cx_module **m);
/* A deep copy whose ENTRY returns other values: the ENTRY instruction with id ids[0] when n is
 * 1, else a new tuple of the n instructions with those ids (ids as in src). What the new root
 * does not use is dropped, except parameters, so the copy takes the same arguments. NULL with
 * the context's error set: OOM, or CXLA_ERR_INVALID_ARGUMENT for an id that names no ENTRY
 * instruction. */
cx_module *cx_module_clone_rooted(cx_module *src, const int *ids, int n);

#endif
