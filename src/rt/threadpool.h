/* threadpool.h — the worker threads that run JIT kernels in parallel.
 *
 * A pool runs "jobs": fn over [0, total) split into chunks. Several jobs may be in flight at
 * once (several user threads executing on one context, or a kernel that itself calls
 * parallel_for): each job deals its chunks out in a contiguous range per thread (the same
 * thread gets the same part of the same iteration space every time, and of the next kernel's
 * when it has the same size, so its data stay in that core's cache), idle workers help
 * whichever job is oldest, and the thread that posted a job always works on it too, so a job finishes even if
 * every worker is busy elsewhere — no job ever waits for pool capacity, hence no deadlock. */
#ifndef CX_THREADPOOL_H
#define CX_THREADPOOL_H
#include <stdint.h>
#include "core/trace.h"

/* A kernel: runs its iterations [begin, end) with its arguments. */
typedef void (*cx_kernel_fn)(void **args, int64_t begin, int64_t end);
typedef struct cx_threadpool cx_threadpool;

/* A pool whose parallel_for uses `nthreads` threads in all: the caller plus nthreads - 1
 * workers (0: one per online CPU). If the system refuses some threads the pool has fewer
 * (cx_threadpool_size says how many); a pool of size 1 runs everything inline. NULL only when
 * memory runs out. */
cx_threadpool *cx_threadpool_create(int nthreads);
/* Joins the workers. No parallel_for may be running on the pool. NULL is a no-op. */
void cx_threadpool_destroy(cx_threadpool *p);
/* Threads that run a job: workers + the caller (1 for NULL). */
int cx_threadpool_size(const cx_threadpool *p);
/* How long an idle worker spins for the next job before it sleeps (ns; 200 us at creation).
 * Longer keeps back-to-back calls from waiting on a woken thread; shorter gives the cores back
 * sooner. Takes effect at a worker's next idle spell. NULL is a no-op. */
void cx_threadpool_set_idle_spin(cx_threadpool *p, int64_t ns);
/* on = 1: an execution has begun on the pool, 0: one has ended (calls pair up). While any is in
 * progress, an idle worker spins up to 5 ms (or the idle spin, if longer) before it sleeps, so
 * that one waits for no wake-up at the next kernel after a stretch the executing thread runs
 * alone (a while loop of small kernels, a library call); an idle spin of 0 still sleeps at
 * once. NULL is a no-op. */
void cx_threadpool_hold(cx_threadpool *p, int on);
/* Workers asleep now, waiting for a job (0 for NULL). */
int cx_threadpool_sleepers(cx_threadpool *p);

/* Runs fn(args, begin, end) over disjoint chunks that cover [0, total) exactly once and
 * returns when all have run. Every chunk has at least `grain` iterations (grain <= 0 means 1);
 * when total < 2 * grain, or p is NULL or has one thread, fn runs once, inline, on [0, total).
 * Returns the number of chunks it was split into (0 when total <= 0). Thread safe. */
int64_t cx_threadpool_parallel_for(cx_threadpool *p, cx_kernel_fn fn, void **args, int64_t total,
                                   int64_t grain);

/* The same; with a trace, every thread that ran chunks of the job records one "chunks" event
 * on its own track (name, the chunks and iterations it ran, and targs' string arguments). */
int64_t cx_threadpool_parallel_for_traced(cx_threadpool *p, cx_kernel_fn fn, void **args, int64_t total,
                                          int64_t grain, cx_trace *trace, const char *name,
                                          const cx_trace_args *targs);

/* cx_threadpool_create, then sets OpenBLAS to one thread (rt/rt.c: cxla splits GEMMs over the
 * pool itself, rt/gemm.c); the
 * first one also lets OpenBLAS choose its kernels again where it fell back to pre-AVX2 ones on
 * a CPU it does not know (cx_rt_blas_tune, rt/blas_core.c). */
cx_threadpool *cx_rt_pool_create(int nthreads);
/* OpenBLAS's kernels, once per process, and OpenBLAS on one thread, every call; see
 * rt/blas_core.c. */
void cx_rt_blas_tune(void);

/* Online CPUs (at least 1). */
int cx_threadpool_ncpus(void);

#endif
