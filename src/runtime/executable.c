/* executable.c — cxla_compile, executables and buffers. Compile verifies the caller's module,
 * clones it and hands the clone to the chosen backend, so the executable never depends on the
 * caller's module again. Execute checks arguments against the ENTRY signature before any
 * backend sees them; the backend's execute is thread safe, and so is everything here that
 * runs per call (it only reads the executable). */
#include <string.h>
#include "ir/clone.h"
#include "ir/verify.h"
#include "runtime/context.h"
#include "runtime/executable.h"
#include "util/file.h"

void cxla_compile_options_init(cxla_compile_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->backend = "interp";
  o->opt_level = -1;
  o->threads = 0;
}

void cxla_executable_destroy(cxla_executable *e) {
  if (!e) return;
  if (e->backend && e->state) e->backend->destroy(e->state);
  for (int i = 0; i < e->nparams; i++) {
    if (e->param_shapes) cx_shape_free_heap(&e->param_shapes[i]);
    if (e->param_names) cx_free(e->param_names[i]);
  }
  cx_free(e->param_shapes);
  cx_free(e->param_names);
  cx_shape_free_heap(&e->result_shape);
  cx_free(e->stats);
  cx_free(e);
}

/* Copies the ENTRY signature of m into e (heap copies: the backend owns m). */
static cxla_status copy_signature(cxla_executable *e, cx_module *m) {
  cx_comp *c = m->entry;
  e->param_shapes = cx_calloc((size_t)(c->nparams ? c->nparams : 1), sizeof *e->param_shapes);
  e->param_names = cx_calloc((size_t)(c->nparams ? c->nparams : 1), sizeof *e->param_names);
  if (!e->param_shapes || !e->param_names) return cx_oom(e->ctx);
  for (int i = 0; i < c->nparams; i++) {
    if (!cx_shape_copy(&e->param_shapes[i], &c->params[i]->shape, NULL)) return cx_oom(e->ctx);
    e->nparams = i + 1;
    if (!(e->param_names[i] = cx_strdup(c->params[i]->name ? c->params[i]->name : "?"))) return cx_oom(e->ctx);
  }
  if (!cx_shape_copy(&e->result_shape, &c->root->shape, NULL)) return cx_oom(e->ctx);
  return CXLA_OK;
}

/* Context flags with the per-compile overrides from opts. */
static cxla_status compile_flags(cxla_context *ctx, const cxla_compile_options *o, cx_flags *f) {
  CX_TRY(cx_flags_copy(ctx, f, &ctx->flags));
  if (o->opt_level >= 0) {
    if (o->opt_level > 3) {
      cx_flags_free(f);
      return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "opt_level %d out of range [0, 3] (-1: from flags)", o->opt_level);
    }
    f->opt_level = o->opt_level;
  }
  if (o->threads < 0) {
    cx_flags_free(f);
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "threads %d is negative (0: from flags)", o->threads);
  }
  if (o->threads > 0) f->threads = o->threads;
  return CXLA_OK;
}

static cxla_status compile(cx_module *m, const cxla_compile_options *o, cxla_executable *e) {
  cxla_context *ctx = m->ctx;
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, o->backend, &be));
  cx_sb stats;
  cx_sb_init(&stats);
  if (m->parse_ms > 0) cx_sb_printf(&stats, "parse=%.3f ", m->parse_ms);
  double t0 = cx_now_ms();
  cxla_status s = cx_verify_module(m);
  cx_comp *entry = NULL;
  if (s == CXLA_OK && !(entry = m->entry))
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s has no ENTRY computation", m->name);
  if (s == CXLA_OK && !entry->root)
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s: ENTRY computation %s has no ROOT", m->name, entry->name);
  double t1 = cx_now_ms();
  cx_sb_printf(&stats, "verify=%.3f ", t1 - t0);
  cx_module *clone = s == CXLA_OK ? cx_module_clone(m) : NULL;
  if (s == CXLA_OK && !clone) s = cx_oom(ctx);
  if (s == CXLA_OK && (!clone->entry || !cx_comp_index_params(clone->entry)))
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s: ENTRY parameters are not numbered 0..n-1", m->name);
  cx_sb_printf(&stats, "clone=%.3f ", cx_now_ms() - t1);
  if (s == CXLA_OK) s = copy_signature(e, clone);
  cx_flags flags;
  if (s == CXLA_OK && (s = compile_flags(ctx, o, &flags)) == CXLA_OK) {
    e->backend = be;
    s = be->compile(ctx, clone, &flags, &e->state, &stats); /* takes clone, also on failure */
    clone = NULL;
    cx_flags_free(&flags);
  }
  cx_module_free(clone);
  if (s == CXLA_OK && stats.len && stats.buf[stats.len - 1] == ' ') stats.buf[--stats.len] = 0;
  if (s == CXLA_OK && !(e->stats = cx_sb_take(&stats))) s = cx_oom(ctx);
  cx_sb_free(&stats);
  return s;
}

cxla_status cxla_compile(cxla_module *m, const cxla_compile_options *opts, cxla_executable **out) {
  if (!out) return m ? cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_compile: out is NULL") : CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  if (opts) o = *opts;
  cxla_executable *e = cx_calloc(1, sizeof *e);
  if (!e) return cx_oom(m->ctx);
  e->ctx = m->ctx;
  cxla_status s = compile(m, &o, e);
  if (s != CXLA_OK) {
    cxla_executable_destroy(e);
    return s;
  }
  *out = e;
  return CXLA_OK;
}

const char *cxla_executable_compile_stats(cxla_executable *e) { return e && e->stats ? e->stats : ""; }

cxla_status cxla_executable_execute(cxla_executable *e, int nargs, cxla_buffer *const *args, cxla_buffer **result) {
  if (!e) return CXLA_ERR_INVALID_ARGUMENT;
  if (!result) return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute: result is NULL");
  *result = NULL;
  if (nargs != e->nparams)
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "expected %d argument%s (one per ENTRY parameter), got %d",
                    e->nparams, e->nparams == 1 ? "" : "s", nargs);
  if (nargs && !args) return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute: args is NULL");
  cxla_literal *stack_lits[16] = {0};
  cxla_literal **lits = nargs <= 16 ? stack_lits : cx_calloc((size_t)nargs, sizeof *lits);
  if (!lits) return cx_oom(e->ctx);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < nargs && s == CXLA_OK; i++) {
    char want[256], got[256];
    if (!args[i] || !args[i]->host) {
      s = cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "argument %d (parameter '%s') is NULL", i, e->param_names[i]);
    } else if (!cx_shape_equal(&args[i]->host->shape, &e->param_shapes[i])) {
      s = cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "argument %d (parameter '%s'): expected %s, got %s", i,
                   e->param_names[i], cx_shape_str(&e->param_shapes[i], want, sizeof want),
                   cx_shape_str(&args[i]->host->shape, got, sizeof got));
    }
    if (s == CXLA_OK) lits[i] = args[i]->host;
  }
  cxla_literal *out = NULL;
  if (s == CXLA_OK) s = e->backend->execute(e->state, e->ctx, nargs, lits, &out);
  if (lits != stack_lits) cx_free(lits);
  if (s == CXLA_OK && (!out || !cx_shape_equal(&out->shape, &e->result_shape))) {
    char want[256], got[256];
    s = cx_error(e->ctx, CXLA_ERR_INTERNAL, "backend %s returned %s for a result of shape %s", e->backend->name,
                 out ? cx_shape_str(&out->shape, got, sizeof got) : "nothing",
                 cx_shape_str(&e->result_shape, want, sizeof want));
  }
  cxla_buffer *buf = s == CXLA_OK ? cx_calloc(1, sizeof *buf) : NULL;
  if (s == CXLA_OK && !buf) s = cx_oom(e->ctx);
  if (s != CXLA_OK) {
    cxla_literal_destroy(out);
    return s;
  }
  buf->ctx = e->ctx;
  buf->backend = e->backend;
  buf->host = out;
  *result = buf;
  return CXLA_OK;
}

cxla_status cxla_buffer_from_literal(cxla_context *ctx, const char *backend, const cxla_literal *lit,
                                     cxla_buffer **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_literal: out is NULL");
  *out = NULL;
  if (!lit) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_literal: literal is NULL");
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  cxla_buffer *b = cx_calloc(1, sizeof *b);
  if (!b) return cx_oom(ctx);
  b->ctx = ctx;
  b->backend = be;
  if (!(b->host = cxla_literal_clone(ctx, lit))) {
    cx_free(b);
    return cx_oom(ctx);
  }
  *out = b;
  return CXLA_OK;
}

cxla_status cxla_buffer_to_literal(cxla_buffer *buf, cxla_literal **out) {
  if (!buf || !out) return CXLA_ERR_INVALID_ARGUMENT;
  *out = cxla_literal_clone(buf->ctx, buf->host);
  return *out ? CXLA_OK : cx_oom(buf->ctx);
}

void cxla_buffer_destroy(cxla_buffer *buf) {
  if (!buf) return;
  cxla_literal_destroy(buf->host);
  cx_free(buf);
}

cxla_status cxla_module_run(cxla_module *m, const cxla_compile_options *opts, int nargs, cxla_literal *const *args,
                            cxla_literal **result) {
  if (!m || !result) return m ? cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_run: result is NULL")
                              : CXLA_ERR_INVALID_ARGUMENT;
  *result = NULL;
  if (nargs < 0 || (nargs && !args))
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_run: bad argument list");
  cxla_executable *e;
  CX_TRY(cxla_compile(m, opts, &e));
  /* Arguments are only read during execution, so borrowed literals are wrapped in temporary
   * buffers instead of being copied. */
  cxla_buffer *bufs = cx_calloc((size_t)(nargs ? nargs : 1), sizeof *bufs);
  cxla_buffer **ptrs = cx_calloc((size_t)(nargs ? nargs : 1), sizeof *ptrs);
  cxla_status s = bufs && ptrs ? CXLA_OK : cx_oom(m->ctx);
  for (int i = 0; i < nargs && s == CXLA_OK; i++) {
    bufs[i].ctx = m->ctx;
    bufs[i].backend = e->backend;
    bufs[i].host = args[i];
    ptrs[i] = &bufs[i];
  }
  cxla_buffer *res = NULL;
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, ptrs, &res);
  if (s == CXLA_OK) {
    /* The result buffer is ours alone: hand its literal over instead of copying it. */
    *result = res->host;
    res->host = NULL;
  }
  cxla_buffer_destroy(res);
  cx_free(bufs);
  cx_free(ptrs);
  cxla_executable_destroy(e);
  return s;
}
