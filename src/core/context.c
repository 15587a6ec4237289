/* context.c — context lifetime, its slots, trace and activity (the error sink it owns is
 * util/error.c; cxla_context_create, which reads CXLA_FLAGS, is runtime/context_api.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/context.h"
#include "core/trace.h"
#include "core/transport.h"

static const char *const status_names[] = {
    "ok", "invalid argument", "parse error", "verification error", "not supported",
    "out of memory", "i/o error", "device error", "compile error", "runtime error",
    "internal error"};

const char *cxla_status_str(cxla_status s) {
  return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "unknown status";
}

cxla_context *cx_context_new(void) {
  cxla_context *c = cx_calloc(1, sizeof *c);
  if (!c) return NULL;
  cx_errsink_init(&c->err);
  pthread_mutex_init(&c->rt_mu, NULL);
  cx_flags_init(&c->flags);
  return c;
}

void cxla_context_destroy(cxla_context *c) {
  if (!c) return;
  /* The slots in their order (cached executables before the pools they may use); then the
   * trace, which has every event by now; nobody can still be running on the pools. */
  for (int i = 0; i < CX_SLOT_COUNT; i++)
    if (c->slots[i].p) c->slots[i].destroy(c->slots[i].p);
  if (c->trace && cx_trace_dirty(c->trace)) cx_trace_write(c->trace, c);
  cx_trace_destroy(c->trace);
  if (c->transport && c->transport->ops->destroy) c->transport->ops->destroy(c->transport);
  cx_flags_free(&c->flags);
  pthread_mutex_destroy(&c->rt_mu);
  cx_errsink_free(&c->err);
  cx_free(c);
}

void *cx_context_slot(cxla_context *c, cx_context_slot_id slot, void *(*make)(void *arg), void *arg,
                      void (*destroy)(void *p)) {
  if (!c || (unsigned)slot >= CX_SLOT_COUNT) return NULL;
  pthread_mutex_lock(&c->rt_mu);
  if (!c->slots[slot].p && (c->slots[slot].p = make(arg))) c->slots[slot].destroy = destroy;
  void *p = c->slots[slot].p;
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
