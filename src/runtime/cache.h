/* cache.h — the per-context executable cache: compiled executables keyed by canonical module
 * text + backend + the flags that affect compilation, so compiling the same thing again is a
 * lookup. Values are reference counted by the owner (executable.c passes its ref/unref); the
 * cache holds one reference per entry. Bounded (least recently used entry evicted) and
 * mutex-protected, so executables may be released from any thread. */
#ifndef CX_CACHE_H
#define CX_CACHE_H
#include <stdint.h>
#include "util/util.h"

typedef struct cx_cache cx_cache;

#define CX_CACHE_DEFAULT_CAPACITY 64

typedef struct cx_cache_stats {
  int64_t hits, misses, evictions;
  int size, capacity;
} cx_cache_stats;

/* NULL when memory runs out. ref/unref add and drop one reference to a value. */
cx_cache *cx_cache_create(int capacity, void (*ref)(void *), void (*unref)(void *));
/* Drops the cache's references (values still referenced elsewhere live on). */
void cx_cache_destroy(cx_cache *c);
/* Drops every entry. */
void cx_cache_clear(cx_cache *c);

/* 64-bit FNV-1a of a key. */
uint64_t cx_cache_hash(const char *key, size_t len);
/* The value stored under key with a new reference (the caller unrefs it), or NULL (a miss). */
void *cx_cache_lookup(cx_cache *c, const char *key, size_t len, uint64_t hash);
/* Stores value under key (copied) with a new reference, replacing any value already there and
 * evicting the least recently used entry when full. Returns 0 (cache unchanged) on OOM. */
int cx_cache_insert(cx_cache *c, const char *key, size_t len, uint64_t hash, void *value);
cx_cache_stats cx_cache_get_stats(cx_cache *c);

/* The context's executable cache (runtime/executable.c), made on first use in its slot; NULL
 * when memory runs out (compile goes on uncached). */
cx_cache *cx_context_cache(cxla_context *ctx);

#endif
