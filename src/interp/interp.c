/* interp.c — placeholder until the interpreter driver lands. */
#include "interp/interp.h"
void cx_interp_init(cx_interp *st, cx_module *m) { st->m = m; st->ctx = m->ctx; st->max_loop_iterations = 0; st->depth = 0; }
cxla_status cx_interp_unsupported(cx_interp *st, cx_instr *in, const char *why) {
  return cx_error_at(st->m, in->loc, CXLA_ERR_UNSUPPORTED, "not supported: %s: %s", cx_op_name(in->op), why);
}
cxla_status cx_interp_run(cx_module *m, int nargs, cxla_literal *const *args, cxla_literal **out) {
  (void)nargs; (void)args; *out = NULL;
  return cx_error(m->ctx, CXLA_ERR_UNSUPPORTED, "not supported: interpreter not built yet");
}
cxla_status cx_interp_call(cx_interp *st, cx_comp *c, int nargs, cxla_literal *const *args, cxla_literal **out) {
  (void)c; (void)nargs; (void)args; *out = NULL;
  return cx_error(st->ctx, CXLA_ERR_UNSUPPORTED, "not supported: interpreter not built yet");
}
cxla_status cx_interp_call_scalar(cx_interp *st, cx_comp *c, int nargs, const cx_scalar *args, int nouts, cx_scalar *outs) {
  (void)c; (void)nargs; (void)args; (void)nouts; (void)outs;
  return cx_error(st->ctx, CXLA_ERR_UNSUPPORTED, "not supported: interpreter not built yet");
}
