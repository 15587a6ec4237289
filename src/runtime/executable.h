/* executable.h — the backend registry and the executables behind cxla_compile /
 * cxla_executable_execute (the backend interface is backend/backend.h). A backend compiles a
 * private clone of the module once; execute may then run from many threads at once. */
#ifndef CX_EXECUTABLE_H
#define CX_EXECUTABLE_H
#include "backend/backend.h"

/* The backends built into this cxla. Adding one is one entry in the table in backends.c. */
extern const cx_backend cx_backend_interp;

/* The backend with this name, or NULL. */
const cx_backend *cx_backend_find(const char *name);
/* Registered backends, NULL-terminated (for --help and error messages). */
const cx_backend *const *cx_backend_list(void);

/* 1 if `name` is a backend cxla knows of but this build lacks ("cpu", "gpu"). */
int cx_backend_is_planned(const char *name);
/* Looks up `name` (NULL: "interp"); on failure sets CXLA_ERR_INVALID_ARGUMENT for an unknown
 * name (listing the known ones) or CXLA_ERR_UNSUPPORTED for a known one not built in. */
cxla_status cx_backend_get(cxla_context *ctx, const char *name, const cx_backend **out);

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
  uint64_t donate;          /* parameters each execute consumes */
  char *counts;             /* the backend's counts from the compile (kernels, fallbacks, ...) */
  int devices;              /* the module has collectives, replica-id or partition-id */
  int64_t replica_count, num_partitions; /* its header's (0: not given) */
} cx_exe_core;

void cx_exe_core_ref(void *core);
void cx_exe_core_unref(void *core); /* frees it (and the backend state) at zero */

struct cxla_executable {
  cxla_context *ctx;
  cx_exe_core *core;
  char *stats;              /* this compile's phases: a cache hit has its own, short, stats */
  char *counts;             /* the core's counts and "cache=hit|miss|off" */
};

struct cxla_buffer {
  cxla_context *ctx;
  const cx_backend *backend; /* where it lives (every backend so far is host-resident) */
  cxla_literal *host;       /* host-resident value (interp and cpu keep buffers on the host);
                               NULL once untupled */
  /* Consumed by an execute that it was donated to: holds no value. host is kept until the
   * buffer is destroyed, so memory the caller read in place is never freed under it. */
  int donated;
  int wrapped;              /* host->data is the caller's (cxla_buffer_wrap): never freed */
  _Atomic(cxla_shape *) pub; /* cxla_buffer_shape's tuple element shapes, made on first use */
};

/* cxla_executable_execute as device rep->device of a run (rep NULL: the context's run, MPI
 * under mpirun, else one device). */
cxla_status cx_execute(cxla_executable *e, const struct cx_replica *rep, int nargs, cxla_buffer *const *args,
                       cxla_buffer **result);

/* A buffer owning host (which may be NULL: filled by the caller); NULL when memory ran out. */
cxla_buffer *cx_buffer_new(cxla_context *ctx, const cx_backend *be, cxla_literal *host);
/* A buffer that takes lit over (no copy); on failure lit stays the caller's. For a caller that
 * has no further use for the literal (the CLI's inputs), where cxla_buffer_from_literal copies. */
cxla_status cx_buffer_adopt_literal(cxla_context *ctx, const char *backend, cxla_literal *lit, cxla_buffer **out);
/* Moves the buffer's value out into *out (no copy; a wrapped buffer's is copied, the caller's
 * memory staying theirs); the buffer then holds no value, as after cxla_buffer_untuple. */
cxla_status cx_buffer_take_literal(cxla_buffer *buf, cxla_literal **out);
/* Checks the caller's array as cxla_buffer_wrap does (errors start with `fn`) and fills *out,
 * an array literal over data that owns nothing on the heap. */
cxla_status cx_buffer_wrap_literal(cxla_context *ctx, const char *fn, cxla_type type, int rank, const int64_t *dims,
                                   const void *data, size_t nbytes, cxla_literal *out);

#endif
