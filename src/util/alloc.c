/* alloc.c — the single allocation gate, with deterministic failure injection for tests. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static _Atomic int64_t fail_after = -1; /* allocations left before failing; -1: never fail */
static _Atomic int64_t failures = 0;

void cx_alloc_fail_after(int64_t n) { atomic_store(&fail_after, n); atomic_store(&failures, 0); }
int64_t cx_alloc_failures(void) { return atomic_load(&failures); }

static int should_fail(void) {
  int64_t left = atomic_load(&fail_after);
  while (left >= 0) {
    if (left == 0) { atomic_fetch_add(&failures, 1); return 1; }
    if (atomic_compare_exchange_weak(&fail_after, &left, left - 1)) return 0;
  }
  return 0;
}

void *cx_malloc(size_t n) { return should_fail() ? NULL : malloc(n ? n : 1); }
void *cx_calloc(size_t c, size_t s) { return should_fail() ? NULL : calloc(c ? c : 1, s ? s : 1); }
void *cx_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n ? n : 1); }
void cx_free(void *p) { free(p); }

char *cx_strndup(const char *s, size_t n) {
  char *d = cx_malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}
char *cx_strdup(const char *s) { return cx_strndup(s, strlen(s)); }

int cx_vec_reserve(void **v, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return 1;
  int64_t nc = *cap ? *cap * 2 : 8;
  while (nc < need) nc *= 2;
  void *p = cx_realloc(*v, (size_t)nc * elem);
  if (!p) return 0;
  *v = p;
  *cap = nc;
  return 1;
}
