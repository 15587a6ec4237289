/* elementwise.c — placeholder until elementwise semantics land. */
#include "interp/interp.h"
cx_scalar cx_scalar_unary(cx_op op, cxla_type type, cx_scalar x) { (void)op; (void)type; return x; }
cx_scalar cx_scalar_binary(cx_op op, cxla_type type, cx_scalar a, cx_scalar b) { (void)op; (void)type; (void)b; return a; }
int cx_scalar_compare(cxla_compare_dir dir, cx_cmp_type ct, cxla_type type, cx_scalar a, cx_scalar b) { (void)dir; (void)ct; (void)type; (void)a; (void)b; return 0; }
cx_scalar cx_scalar_convert(cxla_type from, cxla_type to, cx_scalar x) { (void)from; (void)to; return x; }
cx_scalar cx_scalar_load(cxla_type t, const void *base, int64_t i) { cx_scalar s; if (cx_type_is_float(t)) s.f = cx_load_f64(t, base, i); else s.i = cx_load_i64(t, base, i); return s; }
void cx_scalar_store(cxla_type t, void *base, int64_t i, cx_scalar v) { if (cx_type_is_float(t)) cx_store_f64(t, base, i, v.f); else cx_store_i64(t, base, i, v.i); }
cxla_status cx_interp_elementwise(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) { (void)ops; *out = NULL; return cx_interp_unsupported(st, in, "not built yet"); }
