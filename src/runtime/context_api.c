/* context_api.c — the public calls that make a context and set its flags: here, above passes/,
 * because some flag values are the passes' to check (pass names, dump formats). The context
 * itself, its slots and its activity are core/context.c. */
#include <stdlib.h>
#include <string.h>
#include "core/context.h"
#include "passes/pass_opts.h"

/* Parses `text` into a copy of the context's flags and checks it whole; the context keeps its
 * old flags unless every option is good. */
static cxla_status set_flags(cxla_context *c, const char *text) {
  cx_flags f;
  CX_TRY(cx_flags_copy(c, &f, &c->flags));
  cxla_status s = cx_flags_parse(c, &f, text);
  if (s == CXLA_OK) s = cx_pass_check_flags(c, &f);
  if (s != CXLA_OK) {
    cx_flags_free(&f);
    return s;
  }
  cx_flags_free(&c->flags);
  c->flags = f;
  return CXLA_OK;
}

cxla_status cxla_context_create(cxla_context **out) {
  if (!out) return CXLA_ERR_INVALID_ARGUMENT;
  cxla_context *c = *out = cx_context_new();
  if (!c) return CXLA_ERR_OUT_OF_MEMORY;
  /* Like sqlite3_open: on a bad CXLA_FLAGS the context is still returned so that the caller
   * can read the message, then destroy it. */
  const char *env = getenv("CXLA_FLAGS");
  if (env && set_flags(c, env) != CXLA_OK) {
    char tmp[sizeof c->err.msg];
    memcpy(tmp, c->err.msg, sizeof tmp);
    return cx_error(c, CXLA_ERR_INVALID_ARGUMENT, "CXLA_FLAGS: %s", tmp);
  }
  return CXLA_OK;
}

cxla_status cxla_context_set_flags(cxla_context *c, const char *flags) {
  if (!c) return CXLA_ERR_INVALID_ARGUMENT;
  return set_flags(c, flags);
}

cxla_status cxla_context_get_flag(cxla_context *c, const char *name, char *buf, size_t n) {
  if (!c) return CXLA_ERR_INVALID_ARGUMENT;
  if (!buf || !n) return cx_error(c, CXLA_ERR_INVALID_ARGUMENT, "cxla_context_get_flag: no room for the value");
  buf[0] = 0;
  cx_sb sb;
  cx_sb_init(&sb);
  cxla_status s = cx_flags_get(c, &c->flags, name, &sb);
  size_t len = sb.buf ? strlen(sb.buf) : 0;
  if (s == CXLA_OK && len >= n)
    s = cx_error(c, CXLA_ERR_INVALID_ARGUMENT, "cxla_context_get_flag: --%s's value takes %zu bytes, the buffer %zu",
                 name, len + 1, n);
  if (s == CXLA_OK && len) memcpy(buf, sb.buf, len + 1);
  cx_sb_free(&sb);
  return s;
}
