/* context.h — the cxla_context: flags, last error message, and shared caches. */
#ifndef CX_CONTEXT_H
#define CX_CONTEXT_H
#include <pthread.h>
#include <stdatomic.h>
#include "ir/feeds.h"
#include "runtime/flags.h"

struct cx_threadpool;
struct cx_trace;
struct cx_cache;

#define CX_CONTEXT_MAX_POOLS 4

struct cxla_context {
  cx_errsink err;     /* first: the layers below reach it through a cxla_context * (util.h) */
  cx_flags flags;
  /* Created lazily under rt_mu (executions on several threads may ask at once) and freed by
   * cxla_context_destroy. Nothing that reports an error (which takes mu) runs under rt_mu. */
  pthread_mutex_t rt_mu;
  struct cx_threadpool *pools[CX_CONTEXT_MAX_POOLS]; /* one per distinct thread count */
  int pool_threads[CX_CONTEXT_MAX_POOLS];
  struct cx_trace *trace;   /* when flags.trace was set at first use */
  struct cx_cache *cache;   /* executables by canonical text + backend + flags */
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
  /* The infeed and outfeed queues (ir/feeds.h; cxla.h's host transfers). */
  cx_feeds feeds;
};

/* Sets what the context is doing (phase: a static string; running: NULL or a name that
 * outlives the phase). */
void cx_context_set_activity(cxla_context *ctx, const char *phase, const char *running);
/* Sets the backend an execution runs on (a static name; NULL when none runs): a slow
 * reference run on the interpreter is told apart from a slow compiled kernel. */
void cx_context_set_backend(cxla_context *ctx, const char *backend);

/* The context's thread pool for compiled code using `nthreads` threads in all (0: all
 * cores), created on first use; NULL means "run on the calling thread" (one thread wanted, or
 * no memory for a pool). Also sets OpenBLAS to the same thread count when it creates a pool.
 * Up to CX_CONTEXT_MAX_POOLS sizes get their own pool; beyond that the closest size is
 * shared. Thread safe. */
struct cx_threadpool *cx_context_pool(cxla_context *ctx, int nthreads);
/* The context's trace, created on first use if --trace=FILE is set (later changes of the
 * flag do not move it), else NULL. Thread safe. */
struct cx_trace *cx_context_trace(cxla_context *ctx);
/* Writes the trace file now (if there is a trace with unwritten events); the context also
 * writes it when destroyed, silently. */
cxla_status cx_context_flush_trace(cxla_context *ctx);
/* The executable cache, created on first use; NULL when memory runs out (compile goes on
 * uncached). */
struct cx_cache *cx_context_cache(cxla_context *ctx);
/* The transport of the run this process is part of: the caller's MPI communicator, or
 * MPI_COMM_WORLD under mpirun (MPI initialised on first use), else *out NULL (a run of one
 * device). Thread safe. */
struct cx_transport;
cxla_status cx_context_transport(cxla_context *ctx, struct cx_transport **out);
/* Frees the context's transport (cxla_context_destroy). */
void cx_context_transport_free(cxla_context *ctx);

#endif
