/* test_cpu_helpers.c — see test_cpu_helpers.h. */
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "ir/verify.h"
#include "text/hlo.h"
#include "test_cpu_helpers.h"

cx_module *cpu_parse(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "test.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  CHECK_MSG(s == CXLA_OK, "module does not parse/verify: %s", cxla_context_errmsg(test_ctx()));
  if (s != CXLA_OK) {
    cx_module_free(m);
    return NULL;
  }
  return m;
}

cxla_literal *cpu_lit(const char *text) {
  cxla_literal *l = NULL;
  CHECK_OK(cx_parse_literal(test_ctx(), text, strlen(text), &l));
  return l;
}

cx_instr *cpu_find(cx_module *m, const char *name) {
  for (int c = 0; m && c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (m->comps[c]->instrs[i]->name && !strcmp(m->comps[c]->instrs[i]->name, name)) return m->comps[c]->instrs[i];
  return NULL;
}

char *cpu_ramp(const char *type, int n, int mod, double scale, double offset) {
  size_t cap = 64 + (size_t)n * 32;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t k = (size_t)snprintf(s, cap, "%s[%d] {", type, n);
  for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%.17g", i ? "," : "", (i % mod) * scale + offset);
  snprintf(s + k, cap - k, "}");
  return s;
}

static void ramp_rec(cx_sb *sb, const int64_t *dims, int rank, int d, int64_t *i, int mod, double scale, double off) {
  if (d == rank) {
    cx_sb_printf(sb, "%.17g", (double)(*i % mod) * scale + off);
    (*i)++;
    return;
  }
  cx_sb_putc(sb, '{');
  for (int64_t k = 0; k < dims[d]; k++) {
    if (k) cx_sb_putc(sb, ',');
    ramp_rec(sb, dims, rank, d + 1, i, mod, scale, off);
  }
  cx_sb_putc(sb, '}');
}

char *cpu_ramp_nd(const char *type, const int64_t *dims, int rank, int mod, double scale, double offset) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s[", type);
  for (int d = 0; d < rank; d++) cx_sb_printf(&sb, "%s%lld", d ? "," : "", (long long)dims[d]);
  cx_sb_puts(&sb, "] ");
  int64_t i = 0;
  ramp_rec(&sb, dims, rank, 0, &i, mod, scale, offset);
  char *r = cx_sb_take(&sb);
  char *out = r ? strdup(r) : NULL;
  cx_free(r);
  return out;
}

int cpu_fallbacks(const char *stats) {
  const char *p = stats ? strstr(stats, "fallbacks=") : NULL;
  return p ? atoi(p + 10) : -1;
}

int cpu_check(const char *text, int nargs, const char *const *inputs, const char *flags, double rtol, double atol,
              char **stats, cxla_literal **got) {
  cxla_context *ctx = test_ctx();
  if (stats) *stats = NULL;
  if (got) *got = NULL;
  if (flags) CHECK_OK(cxla_context_set_flags(ctx, flags));
  cxla_module *m = NULL;
  cxla_literal *args[CPU_CHECK_MAX_ARGS] = {0}, *want = NULL, *res = NULL;
  cxla_executable *e = NULL;
  int ok = 0;
  if (cxla_module_parse(ctx, text, strlen(text), "test.hlo", &m) != CXLA_OK) {
    CHECK_MSG(0, "parse: %s", cxla_context_errmsg(ctx));
    goto done;
  }
  if (nargs > CPU_CHECK_MAX_ARGS) {
    CHECK_MSG(0, "%d inputs, at most %d", nargs, CPU_CHECK_MAX_ARGS);
    goto done;
  }
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = cpu_lit(inputs[i]))) goto done;
  if (cx_interp_run(m, nargs, args, &want) != CXLA_OK) {
    CHECK_MSG(0, "interp: %s", cxla_context_errmsg(ctx));
    goto done;
  }
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  if (cxla_compile(m, &o, &e) != CXLA_OK) {
    CHECK_MSG(0, "cpu compile: %s", cxla_context_errmsg(ctx));
    goto done;
  }
  if (stats) { /* the phases, then the counts */
    const char *t = cxla_executable_compile_stats(e), *c = cxla_executable_compile_counts(e);
    if ((*stats = malloc(strlen(t) + strlen(c) + 4))) sprintf(*stats, "%s | %s", t, c);
  }
  cxla_buffer *bufs[CPU_CHECK_MAX_ARGS] = {0}, *out = NULL;
  int bok = 1;
  for (int i = 0; i < nargs; i++) bok &= cxla_buffer_from_literal(ctx, "cpu", args[i], &bufs[i]) == CXLA_OK;
  cxla_status s = bok ? cxla_executable_execute(e, nargs, bufs, &out) : CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = cxla_buffer_to_literal(out, &res);
  for (int i = 0; i < nargs; i++) cxla_buffer_destroy(bufs[i]);
  cxla_buffer_destroy(out);
  if (s != CXLA_OK) {
    CHECK_MSG(0, "cpu execute: %s", cxla_context_errmsg(ctx));
    goto done;
  }
  cx_sb why;
  cx_sb_init(&why);
  ok = cx_literal_compare(res, want, rtol, atol, &why);
  CHECK_MSG(ok, "cpu differs from interp: %s", why.buf ? why.buf : "?");
  cx_sb_free(&why);
done:
  if (flags) cxla_context_set_flags(ctx, "--fusion=on --opt-level=2 --threads=0 --max-loop-iterations=0");
  if (got && ok) {
    *got = res;
    res = NULL;
  }
  for (int i = 0; i < CPU_CHECK_MAX_ARGS; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(want);
  cxla_literal_destroy(res);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return ok;
}
