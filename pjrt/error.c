/* error.c — PJRT_Error: a code and cxla's message, reachable through PJRT_Api and through the
 * error's own function table (the ABI lets a client use either since 0.107). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

static void tbl_destroy(PJRT_Error *e) { cx_pjrt_error_free(e); }
static void tbl_message(const PJRT_Error *e, const char **msg, size_t *n) {
  *msg = e ? e->msg : "";
  *n = e ? e->len : 0;
}
static PJRT_Error_Code tbl_code(const PJRT_Error *e) { return e ? e->code : PJRT_Error_Code_OK; }
/* cxla errors carry no payloads. */
static void tbl_payloads(const PJRT_Error *e, PJRT_Error_PayloadVisitor v, void *arg) {
  (void)e, (void)v, (void)arg;
}

static const PJRT_Error_FunctionTable k_table = {
    .struct_size = sizeof(PJRT_Error_FunctionTable),
    .instance_size = sizeof(PJRT_Error),
    .destroy = tbl_destroy,
    .message = tbl_message,
    .get_code = tbl_code,
    .for_each_payload = tbl_payloads,
};

/* What a caller gets when even the error cannot be allocated: static, never freed. */
#define OOM_TEXT "cxla pjrt: out of memory making an error"
static PJRT_Error k_oom = {&k_table, PJRT_Error_Code_RESOURCE_EXHAUSTED, sizeof OOM_TEXT - 1, OOM_TEXT};

static PJRT_Error *error_new(PJRT_Error_Code code, const char *text, size_t len) {
  PJRT_Error *e = malloc(sizeof(PJRT_Error) + len + 1);
  if (!e) return &k_oom;
  char *copy = (char *)(e + 1);
  memcpy(copy, text, len);
  copy[len] = 0;
  e->vtable = &k_table;
  e->code = code;
  e->len = len;
  e->msg = copy;
  return e;
}

PJRT_Error *cx_pjrt_error(PJRT_Error_Code code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
  return error_new(code, buf, (size_t)n);
}

PJRT_Error *cx_pjrt_error_cxla(cxla_context *ctx, cxla_status s, const char *what) {
  PJRT_Error_Code code = PJRT_Error_Code_INTERNAL;
  switch (s) {
  case CXLA_OK: code = PJRT_Error_Code_OK; break;
  case CXLA_ERR_INVALID_ARGUMENT:
  case CXLA_ERR_PARSE:
  case CXLA_ERR_VERIFY: code = PJRT_Error_Code_INVALID_ARGUMENT; break;
  case CXLA_ERR_UNSUPPORTED: code = PJRT_Error_Code_UNIMPLEMENTED; break;
  case CXLA_ERR_OUT_OF_MEMORY: code = PJRT_Error_Code_RESOURCE_EXHAUSTED; break;
  case CXLA_ERR_IO: code = PJRT_Error_Code_DATA_LOSS; break;
  case CXLA_ERR_DEVICE: code = PJRT_Error_Code_UNAVAILABLE; break;
  case CXLA_ERR_COMPILE:
  case CXLA_ERR_INTERNAL: code = PJRT_Error_Code_INTERNAL; break;
  case CXLA_ERR_RUNTIME: code = PJRT_Error_Code_ABORTED; break;
  }
  const char *m = ctx ? cxla_context_errmsg(ctx) : "";
  return cx_pjrt_error(code, "%s: %s%s%s", what, cxla_status_str(s), *m ? ": " : "", m);
}

PJRT_Error *cx_pjrt_error_copy(const PJRT_Error *e) {
  return e ? error_new(e->code, e->msg, e->len) : NULL;
}

void cx_pjrt_error_free(PJRT_Error *e) {
  if (e && e != &k_oom) free(e);
}
