/* backend.h — what a backend is to the runtime above it: a name and four calls (compile a
 * verified clone of a module, execute it, execute it as one device of a run, destroy it). The
 * backends (backend/cpu, backend/gpu, and the interpreter's in runtime/backend_interp.c)
 * implement it; runtime/ keeps the registry and the executables that hold a backend's state.
 * A backend with a device of its own (gpu) also keeps buffers there (cx_device_mem).
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

/* ---- device memory, for a backend whose buffers live on its device (gpu) ---- */

/* A value in a device's memory: the array leaves of `shape`, depth first. */
typedef struct cx_dev_value {
  cx_shape shape;                 /* heap copy */
  int nleaves;
  unsigned long long *addr;       /* per leaf: its device address (0: no bytes, or moved out) */
  size_t *size;                   /* per leaf: the allocation's size (the allocator's class) */
  void *device;                   /* the backend's device object; the value holds a reference */
  const struct cx_device_mem *mem;
} cx_dev_value;

/* A value of shape with its leaves' arrays zeroed (no memory yet; no reference on device
 * taken), or NULL when memory ran out; cx_dev_value_free frees that shell (dev_value.c). */
cx_dev_value *cx_dev_value_new(const cx_shape *shape, void *device, const struct cx_device_mem *mem);
void cx_dev_value_free(cx_dev_value *v);

/* An argument of cx_device_mem.execute: a value on this device, or else a host literal. */
typedef struct cx_dev_arg {
  cx_dev_value *dev;
  const cxla_literal *host;
} cx_dev_arg;

/* What cxla_context_memory_stats reports (the allocator of a context's device). */
typedef struct cx_mem_stats {
  int64_t in_use, peak, cached, driver_allocs, driver_frees;
  /* transfers (cxla_memory_stats' fields of the same names) */
  int64_t pinned, pinned_allocs, pinned_hits, staged_bytes, direct_bytes, upload_waits;
} cx_mem_stats;

typedef struct cx_device_mem {
  /* The context's device (made on first use, one per context, living as long as the context);
   * CXLA_ERR_DEVICE without one. */
  cxla_status (*device)(cxla_context *ctx, void **out);
  /* A device copy of a host value. */
  cxla_status (*upload)(cxla_context *ctx, void *device, const cxla_literal *host, cx_dev_value **out);
  /* Copies v into out, a host literal of v's shape (waits for the work that makes v). */
  cxla_status (*download)(cxla_context *ctx, const cx_dev_value *v, cxla_literal *out);
  /* One more reference on a device (a value made here holds one). */
  void (*retain)(void *device);
  /* A copy of v on its device (device to device). */
  cxla_status (*clone)(cxla_context *ctx, const cx_dev_value *v, cx_dev_value **out);
  /* Gives v's leaves back to the allocator and frees v. */
  void (*release)(cx_dev_value *v);
  /* The executable's device (what an argument must be on to be read in place). */
  void *(*device_of)(void *state);
  /* Runs with the result left on the device. A result leaf computed in a donated parameter's
   * memory takes that leaf over (the argument's addr[k] becomes 0). Thread safe. */
  cxla_status (*execute)(void *state, cxla_context *ctx, int nargs, const cx_dev_arg *args, cx_dev_value **out);
  cxla_status (*stats)(cxla_context *ctx, cx_mem_stats *out);
} cx_device_mem;

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
  /* Fills out's temp_bytes, alias_bytes and code_bytes (cxla_executable_footprint). NULL: the
   * backend plans none of them (0). */
  void (*footprint)(void *state, cxla_footprint *out);
  /* The module as the backend runs it, after its passes (cxla_executable_cost's bytes). NULL:
   * the module as compiled (interp runs it unchanged). */
  const cx_module *(*compiled)(void *state);
  /* Buffers live in the device's memory (NULL: host memory, as interp and cpu). */
  const cx_device_mem *mem;
} cx_backend;

#endif
