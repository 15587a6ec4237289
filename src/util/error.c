/* error.c — the error sink (util.h): SQLite's errmsg pattern, one message per context. */
#include <stdio.h>
#include "util/util.h"

/* A context starts with its sink; a pointer to a struct converts to one to its first member. */
static cx_errsink *sink(cxla_context *ctx) { return (cx_errsink *)(void *)ctx; }

void cx_errsink_init(cx_errsink *s) {
  pthread_mutex_init(&s->mu, NULL);
  s->msg[0] = 0;
}

void cx_errsink_free(cx_errsink *s) { pthread_mutex_destroy(&s->mu); }

const char *cx_errmsg(cxla_context *ctx) {
  static _Thread_local char copy[4096];
  if (!ctx) return "no context";
  cx_errsink *s = sink(ctx);
  pthread_mutex_lock(&s->mu);
  snprintf(copy, sizeof copy, "%s", s->msg);
  pthread_mutex_unlock(&s->mu);
  return copy;
}

cxla_status cx_verror(cxla_context *ctx, cxla_status code, const char *fmt, va_list ap) {
  if (!ctx) return code;
  cx_errsink *s = sink(ctx);
  pthread_mutex_lock(&s->mu);
  vsnprintf(s->msg, sizeof s->msg, fmt, ap);
  pthread_mutex_unlock(&s->mu);
  return code;
}

cxla_status cx_error(cxla_context *ctx, cxla_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cx_verror(ctx, code, fmt, ap);
  va_end(ap);
  return code;
}

cxla_status cx_oom(cxla_context *ctx) { return cx_error(ctx, CXLA_ERR_OUT_OF_MEMORY, "out of memory"); }
