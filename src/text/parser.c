/* parser.c — placeholder until the HLO parser lands. */
#include "text/hlo.h"
cxla_status cx_parse_module(cxla_context *ctx, const char *text, size_t len, const char *filename, cx_module **out) {
  (void)text; (void)len; (void)filename; *out = NULL;
  return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "not supported: HLO parser not built yet");
}
cxla_status cx_parse_literal(cxla_context *ctx, const char *text, size_t len, cxla_literal **out) {
  (void)text; (void)len; *out = NULL;
  return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "not supported: literal parser not built yet");
}
cxla_status cxla_literal_parse(cxla_context *ctx, const char *text, cxla_literal **out) {
  return cx_parse_literal(ctx, text, text ? __builtin_strlen(text) : 0, out);
}
