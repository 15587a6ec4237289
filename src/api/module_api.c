/* module_api.c — the public module calls: parse (text or file), create, verify, print, and
 * the ENTRY signature queries. A public cxla_module is the internal cx_module. */
#include <string.h>
#include "api/api.h"
#include "ir/cost.h"
#include "ir/verify.h"
#include "util/fpenv.h"
#include "stablehlo/translate.h"
#include "text/hlo.h"
#include "util/file.h"

/* MLIR bytecode's magic number: a StableHLO portable artifact (or other MLIR bytecode). */
static int is_mlir_bytecode(const char *bytes, size_t len) {
  return bytes && len >= 4 && !memcmp(bytes, "ML\xefR", 4);
}

static cxla_status parse_stablehlo(cxla_context *ctx, const void *bytes, size_t len, const char *filename,
                                   cxla_module **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse_stablehlo: out is NULL");
  *out = NULL;
  if (!bytes && len) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse_stablehlo: bytes is NULL");
  double t0 = cx_now_ms();
  cx_module *m = NULL;
  cxla_status s = cx_stablehlo_parse_module(ctx, bytes ? bytes : "", len, filename ? filename : "<bytecode>", &m);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  if (!m) return cx_error(ctx, CXLA_ERR_INTERNAL, "cxla_module_parse_stablehlo: translation returned no module");
  m->parse_ms = cx_now_ms() - t0;
  if ((s = cx_verify_module(m)) != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  *out = m;
  return CXLA_OK;
}

static cxla_status parse_text(cxla_context *ctx, const char *text, size_t len, const char *filename,
                              cxla_module **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse: out is NULL");
  *out = NULL;
  if (!text && len) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse: text is NULL");
  if (is_mlir_bytecode(text, len)) return parse_stablehlo(ctx, text, len, filename, out);
  double t0 = cx_now_ms();
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(ctx, text ? text : "", len, filename ? filename : "<text>", &m);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  if (!m) return cx_error(ctx, CXLA_ERR_INTERNAL, "cxla_module_parse: parser returned no module");
  m->parse_ms = cx_now_ms() - t0;
  if ((s = cx_verify_module(m)) != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  *out = m;
  return CXLA_OK;
}

/* The parsers read constants through float conversions: IEEE ones (util/fpenv.h). */
static cxla_status parse_ieee(cxla_context *ctx, const void *bytes, size_t len, const char *filename, int bytecode,
                              cxla_module **out) {
  unsigned env = cx_fpenv_enter(0);
  cxla_status s = bytecode ? parse_stablehlo(ctx, bytes, len, filename, out) : parse_text(ctx, bytes, len, filename, out);
  cx_fpenv_leave(env);
  return s;
}

cxla_status cxla_module_parse_stablehlo(cxla_context *ctx, const void *bytes, size_t len, const char *filename,
                                        cxla_module **out) {
  return parse_ieee(ctx, bytes, len, filename, 1, out);
}

cxla_status cxla_module_parse(cxla_context *ctx, const char *text, size_t len, const char *filename,
                              cxla_module **out) {
  return parse_ieee(ctx, text, len, filename, 0, out);
}

cxla_status cxla_module_parse_file(cxla_context *ctx, const char *path, cxla_module **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse_file: out is NULL");
  *out = NULL;
  if (!path) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_parse_file: path is NULL");
  unsigned char *buf;
  size_t len;
  CX_TRY(cx_read_file(ctx, path, &buf, &len));
  cxla_status s = cxla_module_parse(ctx, (const char *)buf, len, path, out);
  cx_free(buf);
  return s;
}

cxla_module *cxla_module_create(cxla_context *ctx, const char *name) {
  if (name && !cx_api_valid_name(name)) {
    cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT,
             "cxla_module_create: '%s' is not a valid HLO name (letters, digits, '_', '.', '-')", name);
    return NULL;
  }
  return cx_module_new(ctx, name ? name : "module");
}

void cxla_module_destroy(cxla_module *m) { cx_module_free(m); }

cxla_status cxla_module_verify(cxla_module *m) {
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  return cx_verify_module(m);
}

char *cxla_module_to_string(cxla_module *m) {
  if (!m) return NULL;
  cx_print_opts o = cx_print_opts_canonical();
  cx_sb sb;
  cx_sb_init(&sb);
  unsigned env = cx_fpenv_enter(0); /* a denormal constant prints as itself (util/fpenv.h) */
  cx_print_module(&sb, m, &o);
  cx_fpenv_leave(env);
  char *s = cx_sb_take(&sb);
  if (!s) cx_oom(m->ctx);
  return s;
}

cxla_status cx_api_entry(cx_module *m, cx_comp **out) {
  *out = NULL;
  if (!m->entry) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s has no ENTRY computation", m->name);
  cx_comp *c = m->entry;
  /* The parser may leave params unindexed until verification; index on first use. */
  int nparams = 0;
  for (int i = 0; i < c->ninstrs; i++) nparams += c->instrs[i]->op == CX_OP_PARAMETER;
  if ((nparams != c->nparams || (nparams && !c->params)) && !cx_comp_index_params(c))
    return cx_error(m->ctx, CXLA_ERR_VERIFY, "module %s: ENTRY parameters are not numbered 0..%d", m->name,
                    nparams - 1);
  if (!c->root) return cx_error(m->ctx, CXLA_ERR_VERIFY, "module %s: ENTRY computation has no ROOT", m->name);
  *out = c;
  return CXLA_OK;
}

int cxla_module_num_parameters(cxla_module *m) {
  cx_comp *c;
  if (!m || cx_api_entry(m, &c) != CXLA_OK) return -1;
  return c->nparams;
}

cxla_status cxla_module_parameter_shape(cxla_module *m, int i, cxla_shape *out) {
  if (!m || !out) return CXLA_ERR_INVALID_ARGUMENT;
  cx_comp *c;
  CX_TRY(cx_api_entry(m, &c));
  if (i < 0 || i >= c->nparams)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "parameter %d out of range (ENTRY has %d)", i, c->nparams);
  cx_shape_to_public(&c->params[i]->shape, out, &m->arena);
  return CXLA_OK;
}

cxla_status cxla_module_result_shape(cxla_module *m, cxla_shape *out) {
  if (!m || !out) return CXLA_ERR_INVALID_ARGUMENT;
  cx_comp *c;
  CX_TRY(cx_api_entry(m, &c));
  cx_shape_to_public(&c->root->shape, out, &m->arena);
  return CXLA_OK;
}

cxla_status cxla_module_cost(cxla_module *m, cxla_cost *out) {
  if (!m || !out) return CXLA_ERR_INVALID_ARGUMENT;
  cx_comp *c;
  CX_TRY(cx_api_entry(m, &c));
  CX_TRY(cxla_module_verify(m));
  cx_cost k;
  cx_module_cost(m, &k);
  out->flops = k.flops, out->transcendentals = k.transcendentals, out->bytes_accessed = k.bytes;
  return CXLA_OK;
}

int cx_api_valid_name(const char *s) {
  if (!s || !*s) return 0;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
  for (const char *p = s + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
          *p == '.' || *p == '-'))
      return 0;
  return 1;
}

const char *cxla_module_parameter_name(cxla_module *m, int i) {
  cx_comp *c;
  if (!m || cx_api_entry(m, &c) != CXLA_OK || i < 0 || i >= c->nparams) return NULL;
  return c->params[i]->name ? c->params[i]->name : "";
}
