/* npy.c — placeholder until .npy support lands. */
#include "text/npy.h"
cxla_status cx_npy_decode(cxla_context *ctx, const unsigned char *buf, size_t len, const char *name, cxla_literal **out) { (void)buf; (void)len; (void)name; *out = NULL; return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "npy not built yet"); }
cxla_status cx_npy_encode(cxla_context *ctx, const cxla_literal *lit, unsigned char **out, size_t *len) { (void)lit; *out = NULL; *len = 0; return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "npy not built yet"); }
