/* trace.c — the Chrome trace recorder and writer (see trace.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/trace.h"

typedef struct event {
  const char *name; /* interned in the trace */
  const char *cat;  /* static */
  int64_t t0, t1;   /* ns */
  int32_t tid;
  cx_trace_args args;
} event;

struct cx_trace {
  pthread_mutex_t mu;
  char *path;
  event *ev;
  int64_t nev, cap, dropped;
  int dirty;
  char **names;     /* open-addressing set of interned names */
  int64_t nnames, names_cap;
};

/* Small thread ids: a per-process counter handed out on a thread's first event. */
static atomic_int next_tid = 1;
static _Thread_local int32_t my_tid;

int32_t cx_trace_thread_id(void) {
  if (!my_tid) my_tid = (int32_t)atomic_fetch_add(&next_tid, 1);
  return my_tid;
}

int64_t cx_trace_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

cx_trace *cx_trace_create(const char *path) {
  cx_trace *t = cx_calloc(1, sizeof *t);
  if (!t) return NULL;
  if (!(t->path = cx_strdup(path ? path : ""))) {
    cx_free(t);
    return NULL;
  }
  pthread_mutex_init(&t->mu, NULL);
  return t;
}

void cx_trace_destroy(cx_trace *t) {
  if (!t) return;
  for (int64_t i = 0; i < t->names_cap; i++) cx_free(t->names[i]);
  cx_free(t->names);
  cx_free(t->ev);
  cx_free(t->path);
  pthread_mutex_destroy(&t->mu);
  cx_free(t);
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Under the mutex. Returns the interned copy of name, or NULL when memory runs out. */
static const char *intern(cx_trace *t, const char *name) {
  if (t->nnames * 2 >= t->names_cap) {
    int64_t ncap = t->names_cap ? t->names_cap * 2 : 64;
    char **nn = cx_calloc((size_t)ncap, sizeof *nn);
    if (!nn) return NULL;
    for (int64_t i = 0; i < t->names_cap; i++) {
      if (!t->names[i]) continue;
      uint64_t h = hash_str(t->names[i]) & (uint64_t)(ncap - 1);
      while (nn[h]) h = (h + 1) & (uint64_t)(ncap - 1);
      nn[h] = t->names[i];
    }
    cx_free(t->names);
    t->names = nn;
    t->names_cap = ncap;
  }
  uint64_t mask = (uint64_t)(t->names_cap - 1), h = hash_str(name) & mask;
  while (t->names[h]) {
    if (!strcmp(t->names[h], name)) return t->names[h];
    h = (h + 1) & mask;
  }
  if (!(t->names[h] = cx_strdup(name))) return NULL;
  t->nnames++;
  return t->names[h];
}

void cx_trace_add_on(cx_trace *t, int32_t tid, const char *name, const char *cat, int64_t t0, int64_t t1,
                     const cx_trace_args *args) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  t->dirty = 1;
  const char *iname = NULL;
  cx_trace_args a = {0};
  if (args) a = *args;
  if (a.ns > 2) a.ns = 2;
  int ok = 1;
  for (int i = 0; i < a.ns && ok; i++) ok = (a.sval[i] = intern(t, a.sval[i] ? a.sval[i] : "")) != NULL;
  /* An event that cannot be stored (cap, or no memory) is counted, never fatal: tracing must
   * not change whether a program runs. */
  if (!ok || t->nev >= CX_TRACE_MAX_EVENTS || !cx_vec_reserve((void **)&t->ev, &t->cap, t->nev + 1, sizeof *t->ev) ||
      !(iname = intern(t, name ? name : "?"))) {
    t->dropped++;
  } else {
    event *e = &t->ev[t->nev++];
    e->name = iname;
    e->cat = cat ? cat : "";
    e->t0 = t0;
    e->t1 = t1 > t0 ? t1 : t0;
    e->tid = tid;
    e->args = a;
  }
  pthread_mutex_unlock(&t->mu);
}

void cx_trace_add(cx_trace *t, const char *name, const char *cat, int64_t t0, int64_t t1,
                  const cx_trace_args *args) {
  if (t) cx_trace_add_on(t, cx_trace_thread_id(), name, cat, t0, t1, args);
}

void cx_trace_add_ms(cx_trace *t, const char *name, const char *cat, double t0_ms, double t1_ms) {
  cx_trace_add(t, name, cat, (int64_t)(t0_ms * 1e6), (int64_t)(t1_ms * 1e6), NULL);
}

/* ---- begin/end pairs: a per-thread stack ---- */
#define STACK_DEPTH 64
typedef struct {
  cx_trace *t;
  const char *name, *cat;
  int64_t t0;
} open_span;
static _Thread_local open_span stack[STACK_DEPTH];
static _Thread_local int depth, overflow;

void cx_trace_begin(cx_trace *t, const char *name, const char *cat) {
  if (!t) return;
  if (depth >= STACK_DEPTH) { /* too deep: the matching end is ignored too */
    overflow++;
    return;
  }
  stack[depth++] = (open_span){t, name, cat, cx_trace_now()};
}

void cx_trace_end(cx_trace *t) {
  if (!t) return;
  if (overflow) {
    overflow--;
    return;
  }
  if (!depth || stack[depth - 1].t != t) return; /* unmatched end */
  open_span s = stack[--depth];
  cx_trace_add(t, s.name, s.cat, s.t0, cx_trace_now(), NULL);
}

int64_t cx_trace_count(cx_trace *t, int64_t *dropped) {
  if (!t) return 0;
  pthread_mutex_lock(&t->mu);
  int64_t n = t->nev;
  if (dropped) *dropped = t->dropped;
  pthread_mutex_unlock(&t->mu);
  return n;
}

int cx_trace_dirty(cx_trace *t) {
  if (!t) return 0;
  pthread_mutex_lock(&t->mu);
  int d = t->dirty;
  pthread_mutex_unlock(&t->mu);
  return d;
}

static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* ns as microseconds with three decimals, without going through a double. */
static void put_us(FILE *f, int64_t ns) {
  if (ns < 0) {
    fputc('-', f);
    ns = -ns;
  }
  fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

cxla_status cx_trace_write(cx_trace *t, cxla_context *ctx) {
  if (!t) return CXLA_OK;
  FILE *f = fopen(t->path, "w");
  if (!f) return cx_error(ctx, CXLA_ERR_IO, "cannot write trace %s: %s", t->path, strerror(errno));
  pthread_mutex_lock(&t->mu);
  long pid = (long)getpid();
  fprintf(f, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":0,"
             "\"args\":{\"name\":\"cxla\"}}", pid);
  for (int64_t i = 0; i < t->nev; i++) {
    const event *e = &t->ev[i];
    fputs(",\n{\"name\":", f);
    put_json_string(f, e->name);
    fputs(",\"cat\":", f);
    put_json_string(f, e->cat);
    fputs(",\"ph\":\"X\",\"ts\":", f);
    put_us(f, e->t0);
    fputs(",\"dur\":", f);
    put_us(f, e->t1 - e->t0);
    fprintf(f, ",\"pid\":%ld,\"tid\":%d,\"args\":{", pid, (int)e->tid);
    int k = 0;
    for (int a = 0; a < e->args.n && a < 4; a++, k++) {
      if (k) fputc(',', f);
      put_json_string(f, e->args.key[a] ? e->args.key[a] : "?");
      fprintf(f, ":%lld", (long long)e->args.val[a]);
    }
    for (int a = 0; a < e->args.ns; a++, k++) {
      if (k) fputc(',', f);
      put_json_string(f, e->args.skey[a] ? e->args.skey[a] : "?");
      fputc(':', f);
      put_json_string(f, e->args.sval[a]);
    }
    fputs("}}", f);
  }
  fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped_events\":%lld}}\n", (long long)t->dropped);
  int64_t written = t->nev;
  pthread_mutex_unlock(&t->mu);
  int err = ferror(f) ? (errno ? errno : EIO) : 0;
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  if (err) return cx_error(ctx, CXLA_ERR_IO, "cannot write trace %s: %s", t->path, strerror(err));
  pthread_mutex_lock(&t->mu);
  if (t->nev == written) t->dirty = 0;
  pthread_mutex_unlock(&t->mu);
  return CXLA_OK;
}
