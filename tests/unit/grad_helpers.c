/* grad_helpers.c — see grad_helpers.h. Uses the public API only. */
#include <stdarg.h>
#include <string.h>
#include "grad_helpers.h"

static uint64_t next(gh_case *c) {
  uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *state, double lo, double hi) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);
}

void gh_init(gh_case *c, uint64_t seed) {
  memset(c, 0, sizeof *c);
  c->rng = seed * 7919 + 17;
  c->fd_h = 1e-6;
  c->fd_tol = 1;
  for (int i = 0; i < GH_MAX_PARAMS; i++) c->lo[i] = -1, c->hi[i] = 1;
}

int64_t gh_int(gh_case *c, int64_t lo, int64_t hi) { return lo + (int64_t)(next(c) % (uint64_t)(hi - lo + 1)); }

void gh_add(gh_case *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(c->text + c->len, sizeof c->text - (size_t)c->len, fmt, ap);
  va_end(ap);
  if (n > 0) c->len += n;
  if (c->len >= (int)sizeof c->text) c->len = (int)sizeof c->text - 1;
}

const char *gh_shape(gh_case *c, const char *type, const int64_t *dims, int rank) {
  char *b = c->sbuf[c->sidx++ % 8];
  int k = snprintf(b, 96, "%s[", type);
  for (int i = 0; i < rank; i++) k += snprintf(b + k, (size_t)(96 - k), "%s%lld", i ? "," : "", (long long)dims[i]);
  snprintf(b + k, (size_t)(96 - k), "]");
  return b;
}

const char *gh_list(gh_case *c, const int64_t *v, int n) {
  char *b = c->sbuf[c->sidx++ % 8];
  int k = snprintf(b, 96, "{");
  for (int i = 0; i < n; i++) k += snprintf(b + k, (size_t)(96 - k), "%s%lld", i ? "," : "", (long long)v[i]);
  snprintf(b + k, (size_t)(96 - k), "}");
  return b;
}

void gh_dims(gh_case *c, int64_t *dims, int r, int max) {
  for (int i = 0; i < r; i++) dims[i] = gh_int(c, 1, max);
}

void gh_perm(gh_case *c, int64_t *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)gh_int(c, 0, i);
    int64_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

void gh_begin(gh_case *c) {
  gh_add(c, "HloModule grad_case\n\n");
  static const char *const ops[][2] = {{"add", "add"}, {"max", "maximum"}, {"min", "minimum"}, {"mul", "multiply"}};
  for (int i = 0; i < 4; i++)
    gh_add(c, "%s {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] %s(a, b)\n}\n\n", ops[i][0],
           ops[i][1]);
  gh_add(c, "ENTRY e {\n");
}

void gh_param(gh_case *c, const char *name, const char *shape, int wrt) {
  int k = c->nparams++;
  gh_add(c, "  %s = %s parameter(%d)\n", name, shape, k);
  c->is_int[k] = shape[0] == 's' || shape[0] == 'u';
  if (c->is_int[k]) c->lo[k] = 0, c->hi[k] = 3;
  if (wrt) c->wrt[c->nwrt++] = k;
}

void gh_end_loss(gh_case *c, const char *out, const int64_t *dims, int rank) {
  const char *s = gh_shape(c, "f64", dims, rank);
  gh_param(c, "loss_w", s, 0);
  int64_t all[16];
  for (int i = 0; i < rank; i++) all[i] = i;
  gh_add(c, "  loss_m = %s multiply(%s, loss_w)\n  loss_z = f64[] constant(0)\n", s, out);
  gh_add(c, "  ROOT loss = f64[] reduce(loss_m, loss_z), dimensions=%s, to_apply=add\n}\n", gh_list(c, all, rank));
}

void gh_end_scalar(gh_case *c, const char *out) { gh_add(c, "  ROOT loss = f64[] copy(%s)\n}\n", out); }

/* ---- running ---- */

static cxla_literal *run(cxla_executable *e, const char *backend, int n, cxla_literal *const *args) {
  cxla_context *ctx = test_ctx();
  cxla_buffer *b[GH_MAX_PARAMS] = {0}, *out = NULL;
  cxla_literal *r = NULL;
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= cxla_buffer_from_literal(ctx, backend, args[i], &b[i]) == CXLA_OK;
  if (ok && cxla_executable_execute(e, n, b, &out) == CXLA_OK) cxla_buffer_to_literal(out, &r);
  for (int i = 0; i < n; i++) cxla_buffer_destroy(b[i]);
  cxla_buffer_destroy(out);
  return r;
}

static cxla_executable *compile(cxla_module *m, const char *backend) {
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_executable *e = NULL;
  return cxla_compile(m, &o, &e) == CXLA_OK ? e : NULL;
}

static cxla_literal *random_input(cxla_module *m, const gh_case *c, int i, uint64_t *state) {
  cxla_shape s;
  if (cxla_module_parameter_shape(m, i, &s) != CXLA_OK) return NULL;
  cxla_literal *l = cxla_literal_create(test_ctx(), s.type, s.rank, s.dims);
  int64_t n = l ? cxla_literal_element_count(l) : 0;
  for (int64_t k = 0; k < n; k++) {
    double v = uniform(state, c->lo[i], c->hi[i] + (c->is_int[i] ? 1 : 0));
    if (c->zero_share[i] > 0 && uniform(state, 0, 1) < c->zero_share[i]) v = 0;
    cxla_literal_set_f64(l, k, c->is_int[i] ? floor(v) : v);
  }
  return l;
}

static double value_of(cxla_literal *r) { return r ? cxla_literal_get_f64(r, 0) : NAN; }

void gh_check(const gh_case *c, const char *what, int on_cpu) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL, *g = NULL;
  cxla_executable *em = NULL, *eg = NULL, *ec = NULL;
  cxla_literal *args[GH_MAX_PARAMS] = {0}, *res = NULL, *cres = NULL;
  if (cxla_module_parse(ctx, c->text, (size_t)c->len, "case.hlo", &m) != CXLA_OK) {
    CHECK_MSG(0, "%s: the case does not parse: %s\n%s", what, cxla_context_errmsg(ctx), c->text);
    return;
  }
  if (cxla_module_grad(m, c->wrt, c->nwrt, &g) != CXLA_OK) {
    CHECK_MSG(0, "%s: grad: %s", what, cxla_context_errmsg(ctx));
    goto done;
  }
  /* what grad made must also read back from its text */
  char *text = cxla_module_to_string(g);
  cxla_module *back = NULL;
  CHECK_MSG(text && cxla_module_parse(ctx, text, strlen(text), "grad.hlo", &back) == CXLA_OK,
            "%s: the gradient module does not parse back: %s", what, cxla_context_errmsg(ctx));
  free(text);
  cxla_module_destroy(back);
  if (!(em = compile(m, "interp")) || !(eg = compile(g, "interp"))) {
    CHECK_MSG(0, "%s: compile: %s", what, cxla_context_errmsg(ctx));
    goto done;
  }
  uint64_t state = c->rng ^ 0x5151;
  for (int i = 0; i < c->nparams; i++) args[i] = random_input(m, c, i, &state);
  res = run(eg, "interp", c->nparams, args);
  if (!res || cxla_literal_tuple_size(res) != c->nwrt + 1) {
    CHECK_MSG(0, "%s: running the gradient module: %s", what, cxla_context_errmsg(ctx));
    goto done;
  }
  cxla_literal *f0 = run(em, "interp", c->nparams, args);
  CHECK_MSG(fabs(value_of(f0) - value_of(cxla_literal_tuple_get(res, 0))) <= 1e-12 * (1 + fabs(value_of(f0))),
            "%s: value %.17g, the module gives %.17g", what, value_of(cxla_literal_tuple_get(res, 0)), value_of(f0));
  cxla_literal_destroy(f0);
  int bad = 0;
  for (int w = 0; w < c->nwrt && bad < 3; w++) {
    cxla_literal *x = args[c->wrt[w]], *gw = cxla_literal_tuple_get(res, 1 + w);
    int64_t n = cxla_literal_element_count(x);
    for (int64_t i = 0; i < n && bad < 3; i++) {
      double x0 = cxla_literal_get_f64(x, i), h = c->fd_h * (1 + fabs(x0));
      cxla_literal_set_f64(x, i, x0 + h);
      cxla_literal *fp = run(em, "interp", c->nparams, args);
      cxla_literal_set_f64(x, i, x0 - h);
      cxla_literal *fm = run(em, "interp", c->nparams, args);
      cxla_literal_set_f64(x, i, x0);
      double fd = (value_of(fp) - value_of(fm)) / (2 * h), got = cxla_literal_get_f64(gw, i);
      cxla_literal_destroy(fp);
      cxla_literal_destroy(fm);
      if (!(fabs(got - fd) <= c->fd_tol * 1e-6 * (1 + fabs(fd)))) {
        CHECK_MSG(0, "%s: d/d parameter %d [%lld] = %.12g, finite difference %.12g", what, c->wrt[w], (long long)i, got,
                  fd);
        bad++;
      }
    }
  }
  if (bad) fprintf(stdout, "    the case:\n%s", c->text);
  if (on_cpu) {
    if (!(ec = compile(g, "cpu"))) {
      CHECK_MSG(0, "%s: cpu compile: %s", what, cxla_context_errmsg(ctx));
      goto done;
    }
    cres = run(ec, "cpu", c->nparams, args);
    CHECK_MSG(cres, "%s: cpu run: %s", what, cxla_context_errmsg(ctx));
    for (int w = 0; cres && w <= c->nwrt; w++) {
      cxla_literal *a = cxla_literal_tuple_get(cres, w), *b = cxla_literal_tuple_get(res, w);
      int64_t n = cxla_literal_element_count(b);
      for (int64_t i = 0; i < n; i++) {
        double u = cxla_literal_get_f64(a, i), v = cxla_literal_get_f64(b, i);
        if (!(fabs(u - v) <= 1e-9 * (1 + fabs(v)))) {
          CHECK_MSG(0, "%s: cpu gives %.17g for element %lld of result %d, the interpreter %.17g", what, u, (long long)i,
                    w, v);
          break;
        }
      }
    }
  }
done:
  for (int i = 0; i < GH_MAX_PARAMS; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(res);
  cxla_literal_destroy(cres);
  cxla_executable_destroy(em);
  cxla_executable_destroy(eg);
  cxla_executable_destroy(ec);
  cxla_module_destroy(g);
  cxla_module_destroy(m);
}

void gh_run_table(const gh_entry *t, int n, int seeds) {
  static gh_case c; /* 32 KiB of text: not on the stack */
  for (int i = 0; i < n; i++)
    for (int s = 0; s < seeds; s++) {
      char what[128];
      snprintf(what, sizeof what, "%s (seed %d)", t[i].name, s);
      gh_init(&c, (uint64_t)s + 1);
      t[i].gen(&c);
      gh_check(&c, what, s == 0);
    }
}
