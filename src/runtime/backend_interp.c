/* backend_interp.c — the reference backend: "compiling" keeps the verified module clone, and
 * each execution runs the interpreter on it. The interpreter keeps all per-run state in its
 * own cx_interp and only reads the module, so one executable serves many threads at once. */
#include "interp/interp.h"
#include "runtime/executable.h"

static cxla_status interp_compile(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state,
                                  cx_stats *stats) {
  (void)ctx;
  (void)flags; /* threads, opt-level and fusion mean nothing to the interpreter */
  (void)stats; /* no phases of its own: the clone is what it runs */
  *state = NULL;
  cxla_status s = cx_interp_check_module(m); /* refused now, not when it runs */
  if (s != CXLA_OK) {
    cx_module_free(m); /* the clone is ours, also on failure */
    return s;
  }
  *state = m;
  return CXLA_OK;
}

static cxla_status interp_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args,
                                  cxla_literal **out) {
  (void)ctx; /* the module's context is the executable's */
  return cx_interp_run((cx_module *)state, nargs, args, out);
}

static void interp_destroy(void *state) { cx_module_free((cx_module *)state); }

const cx_backend cx_backend_interp = {"interp", interp_compile, interp_execute, interp_destroy};
