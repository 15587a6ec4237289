/* use_counts.h — how many times each instruction of a computation is read, for the passes
 * that rewrite a value only where nothing else reads it (dot-transpose, dot-orient). */
#ifndef CX_USE_COUNTS_H
#define CX_USE_COUNTS_H
#include "ir/ir.h"

/* Sets every instruction's aux of c to the number of operand slots in c that read it (a
 * (uintptr_t) count; an operand read twice counts twice), the root one more as the
 * computation's result. The caller clears aux when done. */
void cx_pass_count_uses(cx_comp *c);

#endif
