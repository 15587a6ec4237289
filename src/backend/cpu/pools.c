/* pools.c — the cpu backend's thread pools, kept in the context's CX_SLOT_CPU_POOLS: one per
 * distinct thread count an executable asked for, shared by every executable of the context and
 * destroyed with it (after its cached executables, core/context.h). */
#include <pthread.h>
#include <stdlib.h>
#include "backend/cpu/pools.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "core/context.h"

#define MAX_POOLS 4

typedef struct cpu_pools {
  pthread_mutex_t mu;
  cx_threadpool *pools[MAX_POOLS];
  int threads[MAX_POOLS];
} cpu_pools;

static void *make_pools(void *arg) {
  (void)arg;
  cpu_pools *p = cx_calloc(1, sizeof *p);
  if (p) pthread_mutex_init(&p->mu, NULL);
  return p;
}

static void destroy_pools(void *arg) {
  cpu_pools *p = arg;
  for (int i = 0; i < MAX_POOLS; i++) cx_threadpool_destroy(p->pools[i]);
  pthread_mutex_destroy(&p->mu);
  cx_free(p);
}

cx_threadpool *cx_cpu_pool(cxla_context *ctx, int nthreads) {
  if (!ctx) return NULL;
  if (nthreads <= 0) nthreads = cx_threadpool_ncpus();
  if (nthreads == 1) return NULL;
  cpu_pools *all = cx_context_slot(ctx, CX_SLOT_CPU_POOLS, make_pools, NULL, destroy_pools);
  if (!all) return NULL;
  pthread_mutex_lock(&all->mu);
  cx_threadpool *p = NULL;
  int free_slot = -1, closest = -1;
  for (int i = 0; i < MAX_POOLS && !p; i++) {
    if (!all->pools[i]) {
      if (free_slot < 0) free_slot = i;
    } else if (all->threads[i] == nthreads) {
      p = all->pools[i];
    } else if (closest < 0 || abs(all->threads[i] - nthreads) < abs(all->threads[closest] - nthreads)) {
      closest = i;
    }
  }
  if (!p && free_slot >= 0 && (p = cx_rt_pool_create(nthreads))) {
    all->pools[free_slot] = p;
    all->threads[free_slot] = nthreads;
  }
  if (!p && closest >= 0) p = all->pools[closest];
  pthread_mutex_unlock(&all->mu);
  return p;
}
