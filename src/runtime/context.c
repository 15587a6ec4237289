/* context.c — context lifetime, its pools, trace, cache and activity (the error sink it owns
 * is util/error.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/threadpool.h"
#include "runtime/cache.h"
#include "runtime/context.h"
#include "runtime/executable.h"
#include "runtime/trace.h"

static const char *const status_names[] = {
    "ok", "invalid argument", "parse error", "verification error", "not supported",
    "out of memory", "i/o error", "device error", "compile error", "runtime error",
    "internal error"};

const char *cxla_status_str(cxla_status s) {
  return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "unknown status";
}

cxla_status cxla_context_create(cxla_context **out) {
  if (!out) return CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  cxla_context *c = cx_calloc(1, sizeof *c);
  if (!c) return CXLA_ERR_OUT_OF_MEMORY;
  cx_errsink_init(&c->err);
  pthread_mutex_init(&c->rt_mu, NULL);
  cx_feeds_init(&c->feeds);
  cx_flags_init(&c->flags);
  *out = c;
  /* Like sqlite3_open: on a bad CXLA_FLAGS the context is still returned so that the caller
   * can read the message, then destroy it. */
  const char *env = getenv("CXLA_FLAGS");
  if (env && cx_flags_parse(c, &c->flags, env) != CXLA_OK) {
    char tmp[sizeof c->err.msg];
    memcpy(tmp, c->err.msg, sizeof tmp);
    return cx_error(c, CXLA_ERR_INVALID_ARGUMENT, "CXLA_FLAGS: %s", tmp);
  }
  return CXLA_OK;
}

void cxla_context_destroy(cxla_context *c) {
  if (!c) return;
  /* Cached executables first (their backend state may use the pools); then the trace, which
   * has every event by now; nobody can still be running on the pools. */
  cx_cache_destroy(c->cache);
  if (c->trace && cx_trace_dirty(c->trace)) cx_trace_write(c->trace, c);
  cx_trace_destroy(c->trace);
  for (int i = 0; i < CX_CONTEXT_MAX_POOLS; i++) cx_threadpool_destroy(c->pools[i]);
  cx_context_transport_free(c);
  cx_flags_free(&c->flags);
  cx_feeds_free(&c->feeds);
  pthread_mutex_destroy(&c->rt_mu);
  cx_errsink_free(&c->err);
  cx_free(c);
}

struct cx_threadpool *cx_context_pool(cxla_context *c, int nthreads) {
  if (!c) return NULL;
  if (nthreads <= 0) nthreads = cx_threadpool_ncpus();
  if (nthreads == 1) return NULL;
  pthread_mutex_lock(&c->rt_mu);
  struct cx_threadpool *p = NULL;
  int free_slot = -1, closest = -1;
  for (int i = 0; i < CX_CONTEXT_MAX_POOLS && !p; i++) {
    if (!c->pools[i]) {
      if (free_slot < 0) free_slot = i;
    } else if (c->pool_threads[i] == nthreads) {
      p = c->pools[i];
    } else if (closest < 0 || abs(c->pool_threads[i] - nthreads) < abs(c->pool_threads[closest] - nthreads)) {
      closest = i;
    }
  }
  if (!p && free_slot >= 0 && (p = cx_rt_pool_create(nthreads))) {
    c->pools[free_slot] = p;
    c->pool_threads[free_slot] = nthreads;
  }
  if (!p && closest >= 0) p = c->pools[closest];
  pthread_mutex_unlock(&c->rt_mu);
  return p;
}

struct cx_trace *cx_context_trace(cxla_context *c) {
  if (!c) return NULL;
  pthread_mutex_lock(&c->rt_mu);
  if (!c->trace && c->flags.trace && c->flags.trace[0]) c->trace = cx_trace_create(c->flags.trace);
  struct cx_trace *t = c->trace;
  pthread_mutex_unlock(&c->rt_mu);
  return t;
}

cxla_status cx_context_flush_trace(cxla_context *c) {
  if (!c) return CXLA_OK;
  pthread_mutex_lock(&c->rt_mu);
  struct cx_trace *t = c->trace;
  pthread_mutex_unlock(&c->rt_mu);
  return t && cx_trace_dirty(t) ? cx_trace_write(t, c) : CXLA_OK;
}

struct cx_cache *cx_context_cache(cxla_context *c) {
  if (!c) return NULL;
  pthread_mutex_lock(&c->rt_mu);
  if (!c->cache) c->cache = cx_cache_create(CX_CACHE_DEFAULT_CAPACITY, cx_exe_core_ref, cx_exe_core_unref);
  struct cx_cache *k = c->cache;
  pthread_mutex_unlock(&c->rt_mu);
  return k;
}

cxla_status cxla_context_set_flags(cxla_context *c, const char *flags) {
  if (!c) return CXLA_ERR_INVALID_ARGUMENT;
  return cx_flags_parse(c, &c->flags, flags);
}

const char *cxla_context_errmsg(cxla_context *c) { return cx_errmsg(c); }

void cx_context_set_activity(cxla_context *ctx, const char *phase, const char *running) {
  if (!ctx) return;
  atomic_store_explicit(&ctx->running, running, memory_order_relaxed);
  atomic_store_explicit(&ctx->phase, phase, memory_order_relaxed);
}

void cx_context_set_backend(cxla_context *ctx, const char *backend) {
  if (ctx) atomic_store_explicit(&ctx->backend, backend, memory_order_relaxed);
}

void cxla_context_activity(cxla_context *ctx, char *buf, size_t n, int64_t *loop_iterations) {
  if (loop_iterations) *loop_iterations = ctx ? atomic_load_explicit(&ctx->loop_trips, memory_order_relaxed) : 0;
  if (!buf || !n) return;
  const char *phase = ctx ? atomic_load_explicit(&ctx->phase, memory_order_relaxed) : NULL;
  const char *running = ctx ? atomic_load_explicit(&ctx->running, memory_order_relaxed) : NULL;
  const char *backend = ctx ? atomic_load_explicit(&ctx->backend, memory_order_relaxed) : NULL;
  snprintf(buf, n, "%s%s%s%s%s", phase ? phase : "idle", running ? " " : "", running ? running : "",
           phase && backend ? " on " : "", phase && backend ? backend : "");
}
