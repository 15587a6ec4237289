/* util.h — allocation (with failure injection), arenas, string buffers, and error reporting
 * shared by every part of cxla. Internal names use the cx_ prefix. */
#ifndef CX_UTIL_H
#define CX_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "cxla.h"

#if defined(__GNUC__)
#define CX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CX_PRINTF(a, b)
#endif

/* ---- allocation: every heap allocation in cxla goes through these, so tests can make the
 * N-th allocation fail (cx_alloc_fail_after) and check that errors propagate without leaks. */
void *cx_malloc(size_t n);
void *cx_calloc(size_t count, size_t size);
void *cx_realloc(void *p, size_t n);
void cx_free(void *p);
char *cx_strdup(const char *s);
char *cx_strndup(const char *s, size_t n);
/* After `n` more successful allocations every allocation fails; n < 0 turns injection off. */
void cx_alloc_fail_after(int64_t n);
/* Number of injected failures so far (tests use it to know a failure was hit). */
int64_t cx_alloc_failures(void);

/* Large blocks (>= CX_BLOCK_MIN bytes) are recycled: freed blocks are kept (bounded, LRU) and
 * returned by a later allocation of the same size, so repeated executions do not fault fresh
 * pages in. Contents of a returned block are undefined. Smaller sizes are plain cx_malloc. */
#define CX_BLOCK_MIN ((size_t)1 << 20)
void *cx_block_alloc(size_t n);
void cx_block_free(void *p, size_t n);

/* Grows a vector `*v` of `*cap` elements of `elem` bytes so that it holds at least `need`. */
int cx_vec_reserve(void **v, int64_t *cap, int64_t need, size_t elem);

/* ---- arena: bump allocation freed all at once (modules own one). Returns NULL on OOM. ---- */
typedef struct cx_arena_chunk cx_arena_chunk;
typedef struct cx_arena {
  cx_arena_chunk *head;
  size_t used, cap;
  int nhuge;      /* chunks asked for as huge pages (arena.c: only the first few are) */
} cx_arena;
void cx_arena_init(cx_arena *a);
void *cx_arena_alloc(cx_arena *a, size_t n);      /* zeroed, 16-byte aligned */
char *cx_arena_strdup(cx_arena *a, const char *s);
char *cx_arena_strndup(cx_arena *a, const char *s, size_t n);
void *cx_arena_memdup(cx_arena *a, const void *p, size_t n);
void cx_arena_free(cx_arena *a);

/* ---- string buffer: appends never fail loudly; on OOM `oom` is set and appends stop. ---- */
typedef struct cx_sb {
  char *buf;
  size_t len, cap;
  int oom;
} cx_sb;
void cx_sb_init(cx_sb *sb);
void cx_sb_free(cx_sb *sb);
void cx_sb_putc(cx_sb *sb, char c);
void cx_sb_puts(cx_sb *sb, const char *s);
void cx_sb_putn(cx_sb *sb, const char *s, size_t n);
void cx_sb_printf(cx_sb *sb, const char *fmt, ...) CX_PRINTF(2, 3);
void cx_sb_vprintf(cx_sb *sb, const char *fmt, va_list ap);
/* Returns the buffer (caller frees) or NULL if an allocation failed; resets sb. */
char *cx_sb_take(cx_sb *sb);
/* Prints a float value in the shortest form that parses back to the same value of its type
 * ("1", "0.1", "inf", "-inf", "nan"); is_f32 judges round-tripping at float precision. */
void cx_sb_put_double(cx_sb *sb, double v, int is_f32);

/* ---- errors: the context keeps the last message; every failing path sets it. ----
 * The message lives in an error sink that a cxla_context holds as its first member
 * (core/context.h), so every layer reports through a cxla_context * without depending on
 * the runtime that defines the context (error.c). */
typedef struct cx_errsink {
  pthread_mutex_t mu;
  char msg[2048]; /* fixed size, so that reporting out-of-memory cannot fail */
} cx_errsink;
void cx_errsink_init(cx_errsink *s);
void cx_errsink_free(cx_errsink *s);
/* A copy of ctx's message, valid in the calling thread until its next call ("no context"
 * for NULL). */
const char *cx_errmsg(cxla_context *ctx);
cxla_status cx_error(cxla_context *ctx, cxla_status code, const char *fmt, ...) CX_PRINTF(3, 4);
cxla_status cx_verror(cxla_context *ctx, cxla_status code, const char *fmt, va_list ap);
/* Shorthand for an allocation failure. */
cxla_status cx_oom(cxla_context *ctx);

#define CX_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define CX_TRY(expr)                       \
  do {                                     \
    cxla_status cx_try_s_ = (expr);        \
    if (cx_try_s_ != CXLA_OK) return cx_try_s_; \
  } while (0)

#endif
