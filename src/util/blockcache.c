/* blockcache.c — recycles large host blocks (result buffers, literals). A fresh multi-MiB
 * allocation is a new mmap whose pages fault in one by one as a kernel writes them, which costs
 * more than the kernel itself on a memory-bound op (bench/README.md). Repeated executions free
 * and allocate the same sizes, so freed large blocks are kept (bounded) and handed out again. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/util.h"

#define CACHE_SLOTS 32

typedef struct {
  void *p;
  size_t n;
  uint64_t stamp; /* last use, for LRU eviction */
} cached_block;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cached_block cache[CACHE_SLOTS];
static size_t cached_bytes;
static uint64_t clock_;

/* At most an eighth of physical memory (and 4 GiB) sits in the cache. */
static size_t cache_limit(void) {
  static size_t limit;
  if (!limit) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t phys = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : ((size_t)1 << 32);
    limit = phys / 8 < ((size_t)4 << 30) ? phys / 8 : ((size_t)4 << 30);
  }
  return limit;
}

void *cx_block_alloc(size_t n) {
  if (n < CX_BLOCK_MIN) return cx_malloc(n ? n : 1);
  pthread_mutex_lock(&mu);
  for (int i = 0; i < CACHE_SLOTS; i++) {
    if (cache[i].p && cache[i].n == n) {
      void *p = cache[i].p;
      cache[i].p = NULL;
      cached_bytes -= n;
      pthread_mutex_unlock(&mu);
      return p;
    }
  }
  pthread_mutex_unlock(&mu);
  void *p = cx_malloc(n);
#ifdef MADV_HUGEPAGE
  /* Fewer, larger page faults the first time a fresh block is written. */
  if (p) madvise((void *)(((uintptr_t)p + 4095) & ~(uintptr_t)4095), n > 4096 ? n - 4096 : 0, MADV_HUGEPAGE);
#endif
  return p;
}

void cx_block_free(void *p, size_t n) {
  if (!p) return;
  if (n < CX_BLOCK_MIN || n > cache_limit()) { cx_free(p); return; }
  void *evict[CACHE_SLOTS];
  int nevict = 0;
  pthread_mutex_lock(&mu);
  /* Make room: evict least recently cached blocks until the new one fits. */
  while (cached_bytes + n > cache_limit() || nevict == 0) {
    int victim = -1, empty = -1;
    for (int i = 0; i < CACHE_SLOTS; i++) {
      if (!cache[i].p) { if (empty < 0) empty = i; continue; }
      if (victim < 0 || cache[i].stamp < cache[victim].stamp) victim = i;
    }
    if (empty >= 0 && cached_bytes + n <= cache_limit()) {
      cache[empty] = (cached_block){p, n, ++clock_};
      cached_bytes += n;
      p = NULL;
      break;
    }
    if (victim < 0) break;
    evict[nevict++] = cache[victim].p;
    cached_bytes -= cache[victim].n;
    cache[victim].p = NULL;
  }
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < nevict; i++) cx_free(evict[i]);
  cx_free(p);
}
