/* executable.h — the executables behind cxla_compile / cxla_executable_execute (the backend
 * interface is backend/backend.h; the registry runtime/backends.h, buffers runtime/buffer.h).
 * A backend compiles a private clone of the module once; execute may then run from many
 * threads at once. */
#ifndef CX_EXECUTABLE_H
#define CX_EXECUTABLE_H
#include "backend/backend.h"
#include "runtime/backends.h"
#include "runtime/buffer.h"
#include "ir/cost.h"

/* What a compile produces, shared by every executable handle compiled from the same
 * module + backend + flags in one context (the executable cache hands out new handles to it).
 * Reference counted: each handle and each cache entry holds one reference. */
typedef struct cx_exe_core {
  _Atomic int refs;
  cxla_context *ctx;
  const cx_backend *backend;
  void *state;
  char *name;               /* module name (trace events) */
  int nparams;
  cx_shape *param_shapes;   /* heap copies, to check arguments */
  char **param_names;       /* heap copies, for argument error messages */
  cx_shape result_shape;
  uint8_t *donated;         /* donated[p]: each execute consumes parameter p (nparams entries) */
  char *counts;             /* the backend's counts from the compile (kernels, fallbacks, ...) */
  cx_cost cost;             /* cx_module_cost of the module before the backend's passes */
  int devices;              /* the module has collectives, replica-id or partition-id */
  int64_t replica_count, num_partitions; /* its header's (0: not given) */
} cx_exe_core;

/* Whether each execute of c consumes parameter p. */
static inline int cx_exe_donates(const cx_exe_core *c, int p) {
  return p >= 0 && p < c->nparams && c->donated && c->donated[p];
}

void cx_exe_core_ref(void *core);
void cx_exe_core_unref(void *core); /* frees it (and the backend state) at zero */

struct cxla_executable {
  cxla_context *ctx;
  cx_exe_core *core;
  char *stats;              /* this compile's phases: a cache hit has its own, short, stats */
  char *counts;             /* the core's counts and "cache=hit|miss|off" */
};

/* cxla_executable_execute as device rep->device of a run (rep NULL: the context's run, MPI
 * under mpirun, else one device). */
cxla_status cx_execute(cxla_executable *e, const struct cx_replica *rep, int nargs, cxla_buffer *const *args,
                       cxla_buffer **result);

#endif
