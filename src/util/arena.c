/* arena.c — bump allocator; a module's IR lives in one arena so that freeing it (including
 * after a parse error half way through) is a single call. */
#include <string.h>
#include "util.h"

struct cx_arena_chunk {
  cx_arena_chunk *next;
  size_t cap;
  _Alignas(16) unsigned char data[];
};

void cx_arena_init(cx_arena *a) { memset(a, 0, sizeof *a); }

void *cx_arena_alloc(cx_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!a->head || a->used + n > a->cap) {
    size_t cap = n > 64 * 1024 ? n : 64 * 1024;
    cx_arena_chunk *c = cx_malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
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
