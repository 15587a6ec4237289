/* context.c — context lifetime and the last-error message (SQLite's errmsg pattern). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/context.h"

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
  pthread_mutex_init(&c->mu, NULL);
  cx_flags_init(&c->flags);
  *out = c;
  /* Like sqlite3_open: on a bad CXLA_FLAGS the context is still returned so that the caller
   * can read the message, then destroy it. */
  const char *env = getenv("CXLA_FLAGS");
  if (env && cx_flags_parse(c, &c->flags, env) != CXLA_OK) {
    char tmp[sizeof c->msg];
    memcpy(tmp, c->msg, sizeof tmp);
    return cx_error(c, CXLA_ERR_INVALID_ARGUMENT, "CXLA_FLAGS: %s", tmp);
  }
  return CXLA_OK;
}

void cxla_context_destroy(cxla_context *c) {
  if (!c) return;
  cx_flags_free(&c->flags);
  pthread_mutex_destroy(&c->mu);
  cx_free(c);
}

cxla_status cxla_context_set_flags(cxla_context *c, const char *flags) {
  if (!c) return CXLA_ERR_INVALID_ARGUMENT;
  return cx_flags_parse(c, &c->flags, flags);
}

const char *cxla_context_errmsg(cxla_context *c) {
  static _Thread_local char copy[4096];
  if (!c) return "no context";
  pthread_mutex_lock(&c->mu);
  snprintf(copy, sizeof copy, "%s", c->msg);
  pthread_mutex_unlock(&c->mu);
  return copy;
}

cxla_status cx_verror(cxla_context *c, cxla_status code, const char *fmt, va_list ap) {
  if (!c) return code;
  pthread_mutex_lock(&c->mu);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  pthread_mutex_unlock(&c->mu);
  return code;
}

cxla_status cx_error(cxla_context *c, cxla_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cx_verror(c, code, fmt, ap);
  va_end(ap);
  return code;
}

cxla_status cx_oom(cxla_context *c) { return cx_error(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory"); }
