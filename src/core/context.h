/* context.h — the cxla_context as the layers above core see it: the error sink, the flags,
 * the trace, the activity a watchdog reads, the transport of a run, and slots where the layers
 * above hang their per-context resources (the executable cache, the cpu backend's thread pools,
 * the host feeds) with a destructor, so that core calls none of them. */
#ifndef CX_CONTEXT_H
#define CX_CONTEXT_H
#include <pthread.h>
#include <stdatomic.h>
#include "core/flags.h"

struct cx_trace;
struct cx_transport;

/* The resources a context may hold for the layers above it; destroyed in this order (the
 * cache's executables may still use the pools, so they go first). */
typedef enum cx_context_slot_id {
  CX_SLOT_CACHE,     /* runtime/cache.c: executables by canonical text + backend + flags */
  CX_SLOT_CPU_POOLS, /* backend/cpu/pools.c: the thread pools of compiled code */
  CX_SLOT_FEEDS,     /* ir/feeds.c: the infeed and outfeed queues */
  CX_SLOT_GPU,       /* backend/gpu/gpu_device.c: the GPU, its stream and memory cache */
  CX_SLOT_GPU_EMU,   /* the same for the emulated GPU */
  CX_SLOT_COUNT
} cx_context_slot_id;

struct cxla_context {
  cx_errsink err;     /* first: the layers below reach it through a cxla_context * (util.h) */
  cx_flags flags;
  /* Slots, the trace and the transport are made lazily under rt_mu (executions on several
   * threads may ask at once). Nothing that reports an error (which takes mu) runs under it. */
  pthread_mutex_t rt_mu;
  struct {
    void *p;
    void (*destroy)(void *p);
  } slots[CX_SLOT_COUNT];
  struct cx_trace *trace;   /* when flags.trace was set at first use */
  /* The run this process is a device of (transport_mpi.c): MPI, made on first use under
   * rt_mu; own_comm when the caller gave the communicator. */
  struct cx_transport *transport;
  int own_comm;
  /* What the context is doing, for a watchdog on another thread (cxla_context_activity):
   * a static phase string, the kernel or instruction running (a name that lives as long as its
   * executable), the backend running it (a static name), and every while-loop iteration run
   * so far. Relaxed atomics: a sample, not a synchronisation. */
  _Atomic(const char *) phase;
  _Atomic(const char *) running;
  _Atomic(const char *) backend;
  _Atomic int64_t loop_trips;
};

/* A new context with default flags (CXLA_FLAGS is read by cxla_context_create, a layer up,
 * where the flags' values can be checked); NULL when memory runs out. */
cxla_context *cx_context_new(void);

/* The resource in `slot`, made by make(arg) on its first use and destroyed by `destroy` with
 * the context; NULL when make returns NULL (out of memory: asked again next time). make runs
 * under the context's lock, so it must not report errors through the context. Thread safe. */
void *cx_context_slot(cxla_context *ctx, cx_context_slot_id slot, void *(*make)(void *arg), void *arg,
                      void (*destroy)(void *p));

/* Sets what the context is doing (phase: a static string; running: NULL or a name that
 * outlives the phase). */
void cx_context_set_activity(cxla_context *ctx, const char *phase, const char *running);
/* Sets the backend an execution runs on (a static name; NULL when none runs): a slow
 * reference run on the interpreter is told apart from a slow compiled kernel. */
void cx_context_set_backend(cxla_context *ctx, const char *backend);

/* The context's trace, created on first use if --trace=FILE is set (later changes of the
 * flag do not move it), else NULL. Thread safe. */
struct cx_trace *cx_context_trace(cxla_context *ctx);
/* Writes the trace file now (if there is a trace with unwritten events); the context also
 * writes it when destroyed, silently. */
cxla_status cx_context_flush_trace(cxla_context *ctx);
/* The transport of the run this process is part of: the caller's MPI communicator, or
 * MPI_COMM_WORLD under mpirun (MPI initialised on first use), else *out NULL (a run of one
 * device). Thread safe. */
cxla_status cx_context_transport(cxla_context *ctx, struct cx_transport **out);

#endif
