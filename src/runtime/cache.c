/* cache.c — a small LRU map from key text to reference-counted values (see cache.h). With at
 * most a few dozen entries a linear scan over hashes beats any index, and eviction is a scan
 * for the oldest use stamp. */
#include <pthread.h>
#include <string.h>
#include "runtime/cache.h"

typedef struct entry {
  char *key; /* NULL: free slot */
  size_t len;
  uint64_t hash, used; /* used: use stamp, larger is more recent */
  void *value;
} entry;

struct cx_cache {
  pthread_mutex_t mu;
  entry *e;
  int cap;
  uint64_t clock;
  int64_t hits, misses, evictions;
  void (*ref)(void *);
  void (*unref)(void *);
};

cx_cache *cx_cache_create(int capacity, void (*ref)(void *), void (*unref)(void *)) {
  if (capacity < 1) capacity = 1;
  cx_cache *c = cx_calloc(1, sizeof *c);
  if (!c) return NULL;
  if (!(c->e = cx_calloc((size_t)capacity, sizeof *c->e))) {
    cx_free(c);
    return NULL;
  }
  c->cap = capacity;
  c->ref = ref;
  c->unref = unref;
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

void cx_cache_clear(cx_cache *c) {
  if (!c) return;
  for (;;) { /* unref outside the lock: releasing a value may take a while (backend state) */
    void *v = NULL;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->cap && !v; i++) {
      if (!c->e[i].key) continue;
      v = c->e[i].value;
      cx_free(c->e[i].key);
      memset(&c->e[i], 0, sizeof c->e[i]);
    }
    pthread_mutex_unlock(&c->mu);
    if (!v) return;
    c->unref(v);
  }
}

void cx_cache_destroy(cx_cache *c) {
  if (!c) return;
  cx_cache_clear(c);
  cx_free(c->e);
  pthread_mutex_destroy(&c->mu);
  cx_free(c);
}

uint64_t cx_cache_hash(const char *key, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
  return h;
}

/* Under the mutex. */
static entry *find(cx_cache *c, const char *key, size_t len, uint64_t hash) {
  for (int i = 0; i < c->cap; i++) {
    entry *e = &c->e[i];
    if (e->key && e->hash == hash && e->len == len && !memcmp(e->key, key, len)) return e;
  }
  return NULL;
}

void *cx_cache_lookup(cx_cache *c, const char *key, size_t len, uint64_t hash) {
  if (!c) return NULL;
  pthread_mutex_lock(&c->mu);
  entry *e = find(c, key, len, hash);
  void *v = NULL;
  if (e) {
    e->used = ++c->clock;
    v = e->value;
    c->ref(v); /* before unlocking: an eviction right after cannot free it under us */
    c->hits++;
  } else {
    c->misses++;
  }
  pthread_mutex_unlock(&c->mu);
  return v;
}

int cx_cache_insert(cx_cache *c, const char *key, size_t len, uint64_t hash, void *value) {
  if (!c) return 0;
  char *k = cx_malloc(len + 1);
  if (!k) return 0;
  memcpy(k, key, len);
  k[len] = 0;
  void *old = NULL;
  pthread_mutex_lock(&c->mu);
  entry *e = find(c, key, len, hash);
  if (!e) { /* a free slot, or the least recently used one */
    e = &c->e[0];
    for (int i = 0; i < c->cap && e->key; i++)
      if (!c->e[i].key || c->e[i].used < e->used) e = &c->e[i];
    if (e->key) c->evictions++;
  }
  if (e->key) {
    old = e->value;
    cx_free(e->key);
  }
  c->ref(value);
  *e = (entry){k, len, hash, ++c->clock, value};
  pthread_mutex_unlock(&c->mu);
  if (old) c->unref(old);
  return 1;
}

cx_cache_stats cx_cache_get_stats(cx_cache *c) {
  cx_cache_stats s = {0};
  if (!c) return s;
  pthread_mutex_lock(&c->mu);
  s.hits = c->hits;
  s.misses = c->misses;
  s.evictions = c->evictions;
  s.capacity = c->cap;
  for (int i = 0; i < c->cap; i++) s.size += c->e[i].key != NULL;
  pthread_mutex_unlock(&c->mu);
  return s;
}
