/* pools.h — the thread pools compiled code runs on, one per thread count, owned by the context. */
#ifndef CX_CPU_POOLS_H
#define CX_CPU_POOLS_H
#include "util/util.h"

struct cx_threadpool;

/* The context's thread pool for compiled code using `nthreads` threads in all (0: all cores),
 * created on first use; NULL means "run on the calling thread" (one thread wanted, or no
 * memory for a pool). Also sets OpenBLAS to the same thread count when it creates a pool. Up
 * to 4 sizes get their own pool; beyond that the closest size is shared. Thread safe. */
struct cx_threadpool *cx_cpu_pool(cxla_context *ctx, int nthreads);

#endif
