/* backend_interp.c — the reference backend: "compiling" keeps the verified module clone, and
 * each execution runs the interpreter on it (as one device of a run, for collectives). The
 * interpreter keeps all per-run state in its own cx_interp and only reads the module, so one
 * executable serves many threads at once. */
#include "core/transport.h"
#include "interp/interp.h"
#include "ir/groups.h"
#include "backend/backend.h"

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

/* One device of a run: the collectives exchange through rep's transport. */
static cxla_status interp_execute_on(void *state, cxla_context *ctx, const cx_replica *rep, int nargs,
                                     cxla_literal *const *args, cxla_literal **out) {
  (void)ctx;
  CX_TRY(cx_module_check_run((cx_module *)state, rep->dv));
  return cx_interp_run_on((cx_module *)state, rep, nargs, args, out);
}

static void interp_destroy(void *state) { cx_module_free((cx_module *)state); }

const cx_backend cx_backend_interp = {.name = "interp", .compile = interp_compile, .execute = interp_execute,
                                      .destroy = interp_destroy, .execute_on = interp_execute_on};
