/* arena.c — bump allocator; a module's IR lives in one arena so that freeing it (including
 * after a parse error half way through) is a single call.
 * Chunks grow with the arena (each twice the last, 64 KiB to 2 MiB): the passes of
 * a mid-sized training step write 10 MB of instructions (fusion clones each growing fused
 * computation), and in a new process nearly all of that time went to page faults, one per
 * 4 KiB (the LeNet step's fusion pass took 5.7-8.3 ms on pre-faulted memory, 12-18 ms
 * without). 2 MiB chunks are aligned and asked for as huge pages: one fault each (the first
 * HUGE_CHUNKS of them). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "util.h"

#define CHUNK_MIN ((size_t)64 << 10)
#define CHUNK_HUGE ((size_t)2 << 20)
/* Only an arena's first 64 MiB: where the kernel compacts memory for advised regions
 * (transparent_hugepage/defrag = madvise, Debian's default), a fault on a busy machine can wait
 * for it, and a deep model's compile writes hundreds of MB (16 stacked transformer blocks: the
 * passes took 443 ms median and up to 575 with every chunk advised, 209 ms with this cap,
 * under load). A training step of the usual size stays within it. */
#define HUGE_CHUNKS 32

struct cx_arena_chunk {
  cx_arena_chunk *next;
  unsigned char *data; /* 16-byte aligned; 2 MiB aligned in a huge chunk */
};

void cx_arena_init(cx_arena *a) { memset(a, 0, sizeof *a); }

static cx_arena_chunk *chunk_new(size_t cap, int advise) {
  int huge = cap >= CHUNK_HUGE;
  size_t head = (sizeof(cx_arena_chunk) + 15) & ~(size_t)15;
  unsigned char *raw = cx_malloc(head + cap + (huge ? CHUNK_HUGE : 0));
  if (!raw) return NULL;
  cx_arena_chunk *c = (cx_arena_chunk *)raw;
  c->data = raw + head;
  if (huge) {
    c->data = (unsigned char *)(((uintptr_t)c->data + CHUNK_HUGE - 1) & ~(uintptr_t)(CHUNK_HUGE - 1));
#ifdef MADV_HUGEPAGE
    if (advise) madvise(c->data, cap & ~(CHUNK_HUGE - 1), MADV_HUGEPAGE); /* advice: no huge pages is no error */
#endif
  }
  return c;
}

void *cx_arena_alloc(cx_arena *a, size_t n) {
  if (n > SIZE_MAX / 4) return NULL; /* no size that wraps around below */
  n = (n + 15) & ~(size_t)15;
  if (!a->head || a->used + n > a->cap) {
    size_t cap = !a->head ? CHUNK_MIN : a->cap < CHUNK_HUGE / 2 ? 2 * a->cap : CHUNK_HUGE;
    if (cap < n) cap = n;
    int advise = cap >= CHUNK_HUGE && a->nhuge < HUGE_CHUNKS;
    cx_arena_chunk *c = chunk_new(cap, advise);
    if (!c) return NULL;
    a->nhuge += advise;
    c->next = a->head;
    a->head = c;
    a->used = 0;
    a->cap = cap;
  }
  void *p = a->head->data + a->used;
  a->used += n;
  memset(p, 0, n);
  return p;
}

void *cx_arena_memdup(cx_arena *a, const void *p, size_t n) {
  void *d = cx_arena_alloc(a, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *cx_arena_strndup(cx_arena *a, const char *s, size_t n) {
  char *d = cx_arena_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}
char *cx_arena_strdup(cx_arena *a, const char *s) { return cx_arena_strndup(a, s, strlen(s)); }

void cx_arena_free(cx_arena *a) {
  cx_arena_chunk *c = a->head;
  while (c) {
    cx_arena_chunk *n = c->next;
    cx_free(c);
    c = n;
  }
  memset(a, 0, sizeof *a);
}
