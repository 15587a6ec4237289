/* backend.h — what a backend is to the runtime above it: a name and four calls (compile a
 * verified clone of a module, execute it, execute it as one device of a run, destroy it). The
 * backends (backend/cpu, backend/gpu, and the interpreter's in runtime/backend_interp.c)
 * implement it; runtime/ keeps the registry and the executables that hold a backend's state.
 * Declared here, below both, so that no backend includes the runtime. */
#ifndef CX_BACKEND_H
#define CX_BACKEND_H
#include "core/flags.h"
#include "ir/ir.h"

struct cx_replica; /* core/transport.h */

/* What a compile reports: wall-clock phases as "name=ms " pairs in `times` (each a real span,
 * never a sum over threads), and numbers as "name=N " pairs in `counts`. */
typedef struct cx_stats {
  cx_sb times, counts;
} cx_stats;

typedef struct cx_backend {
  const char *name;     /* "interp", "cpu", "gpu" */
  /* Takes ownership of m (a verified clone). Appends its phases and counts to stats, and
   * records its phases as spans in the context's trace when there is one. */
  cxla_status (*compile)(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state,
                         cx_stats *stats);
  /* args are borrowed host literals, one per ENTRY parameter, already checked against the
   * parameter shapes; *out is a new literal. Thread safe. */
  cxla_status (*execute)(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args,
                         cxla_literal **out);
  void (*destroy)(void *state);
  /* Runs only on a machine with its device (gpu: an NVIDIA GPU and its driver); elsewhere
   * compile fails with CXLA_ERR_DEVICE. Tests that run every backend leave such a backend
   * to its own suite. */
  int needs_device;
  /* execute as device rep->device of a run of several (core/transport.h): what modules with
   * collectives, replica-id or partition-id need. NULL: the backend does not run them. */
  cxla_status (*execute_on)(void *state, cxla_context *ctx, const struct cx_replica *rep, int nargs,
                            cxla_literal *const *args, cxla_literal **out);
  /* The compiled code as an entry of the disk cache's format (core/disk_cache.h), when the
   * compile kept it (cx_flags.keep_code); 0 when it did not. NULL: the backend keeps none. */
  int (*code)(void *state, const unsigned char **bytes, size_t *n);
} cx_backend;

#endif
