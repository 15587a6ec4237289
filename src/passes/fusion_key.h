/* fusion_key.h — when two fusions compute the same thing, so that a backend compiles one
 * kernel for both (codegen/kernel_reuse.h says why that matters).
 *
 * The key is the fused computation's text with each instruction's name replaced by its
 * position, each computation it calls (a reducer) written out the same way in place of its
 * name, and the fusion kind. Nothing else goes into a kernel: the fusion plan is made from the
 * body, and the operands' shapes and layouts are its parameters'. Raw attributes (metadata,
 * sharding, backend_config) stay out: code generation reads none of them. */
#ifndef CX_FUSION_KEY_H
#define CX_FUSION_KEY_H
#include "ir/ir.h"

/* The key of a fusion instruction, with `extra` (what else the backend's kernel depends on:
 * which arguments share memory, ...; may be NULL) on its first line. cx_malloc'd; NULL when
 * out of memory. */
char *cx_fusion_key(const cx_instr *fusion, const char *extra);

#endif
