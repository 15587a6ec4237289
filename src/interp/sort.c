/* sort.c — placeholder until it lands. */
#include "interp/interp.h"
cxla_status cx_interp_sort(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) { (void)ops; *out = NULL; return cx_interp_unsupported(st, in, "not built yet"); }
