/* cli_feed.c — `cxla run`'s host transfers: --infeed=A.npy[,B.npy...] pushes one infeed value
 * per option (a tuple of the arrays when several are named), --random-inputs draws every
 * infeed value the program asks for from a seeded generator (the context's infeed source), and
 * the outfeed values a run puts are printed after the result, or written with
 * --outfeed-out=DIR as DIR/<k>.npy (DIR/<k>_<j>.npy for the leaves of a tuple). Before each
 * run both queues start over, so --check and --repeat give every run the same infeed values. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "api/tooling.h"

/* A source of random infeed values: the state starts from the seed at every run. */
static cxla_status random_source(void *user, const cxla_shape *shape, cxla_literal **out) {
  cli_feed *f = user;
  *out = cli_random_literal(f->ctx, shape, &f->state);
  return *out ? CXLA_OK : CXLA_ERR_INVALID_ARGUMENT;
}

/* One --infeed value: a .npy file, or a tuple of several comma-separated ones. */
static int load_value(cxla_context *ctx, const char *spec, cxla_literal **out) {
  char *copy = strdup(spec);
  if (!copy) return cli_error("out of memory");
  int n = 1;
  for (const char *c = spec; *c; c++) n += *c == ',';
  cxla_literal **el = calloc((size_t)n, sizeof *el);
  int rc = el ? CLI_OK : cli_error("out of memory"), k = 0;
  for (char *save = NULL, *p = strtok_r(copy, ",", &save); p && rc == CLI_OK; p = strtok_r(NULL, ",", &save))
    if (cxla_literal_read_npy(ctx, p, &el[k++]) != CXLA_OK) rc = cli_lib_error(ctx);
  if (rc == CLI_OK && k == 0) rc = cli_error("--infeed= names no .npy file");
  if (rc == CLI_OK && n == 1) {
    *out = el[0];
  } else if (rc == CLI_OK) {
    *out = cxla_literal_tuple(ctx, k, el); /* owns the elements even when it fails */
    k = 0;
    if (!*out) rc = cli_lib_error(ctx);
  }
  if (rc != CLI_OK)
    for (int i = 0; i < k; i++) cxla_literal_destroy(el[i]);
  free(el);
  free(copy);
  return rc;
}

int cli_feed_load(cxla_context *ctx, cli_feed *f) {
  f->ctx = ctx;
  if (f->ninfeeds && !(f->values = calloc((size_t)f->ninfeeds, sizeof *f->values))) return cli_error("out of memory");
  for (int i = 0; i < f->ninfeeds; i++) {
    int rc = load_value(ctx, f->infeeds[i], &f->values[i]);
    if (rc != CLI_OK) return rc;
  }
  return CLI_OK;
}

static cxla_status restart(void *user) {
  cli_feed *f = user;
  return cli_feed_start(f) == CLI_OK ? CXLA_OK : CXLA_ERR_RUNTIME;
}

int cli_feed_start(cli_feed *f) {
  cli_execute_set_hook(restart, f);
  cxla_feeds_clear(f->ctx);
  f->state = f->seed ^ 0x9e3779b97f4a7c15ull; /* not the parameters' sequence */
  cxla_infeed_set_source(f->ctx, f->random ? random_source : NULL, f);
  for (int i = 0; i < f->ninfeeds; i++)
    if (cxla_infeed_push(f->ctx, f->values[i]) != CXLA_OK) return cli_lib_error(f->ctx);
  return CLI_OK;
}

int cli_feed_take_outfeeds(cli_feed *f, cxla_literal **out) {
  int64_t n = cxla_outfeed_count(f->ctx);
  *out = NULL;
  if (n > 1000000) return cli_error("%lld outfeed values: too many to show", (long long)n);
  cxla_literal **el = calloc((size_t)(n ? n : 1), sizeof *el);
  if (!el) return cli_error("out of memory");
  for (int64_t i = 0; i < n; i++)
    if (cxla_outfeed_pop(f->ctx, &el[i]) != CXLA_OK) {
      for (int64_t j = 0; j < i; j++) cxla_literal_destroy(el[j]);
      free(el);
      return cli_lib_error(f->ctx);
    }
  *out = cxla_literal_tuple(f->ctx, (int)n, el);
  free(el);
  return *out ? CLI_OK : cli_lib_error(f->ctx);
}

int cli_feed_emit(cli_feed *f, cxla_literal *outfeeds) {
  int n = cxla_literal_tuple_size(outfeeds);
  int rc = CLI_OK;
  if (f->outfeed_dir) {
    int err = cli_make_dirs(f->outfeed_dir);
    if (err) return cli_error("cannot create directory %s: %s", f->outfeed_dir, strerror(err));
  }
  for (int k = 0; k < n && rc == CLI_OK; k++) {
    cxla_literal *v = cxla_literal_tuple_get(outfeeds, k);
    int nl = cli_leaves(v, NULL, 0);
    cxla_literal **leaves = calloc((size_t)(nl ? nl : 1), sizeof *leaves);
    if (!leaves) return cli_error("out of memory");
    cli_leaves(v, leaves, nl);
    if (!f->outfeed_dir) printf("outfeed %d:\n", k);
    for (int j = 0; j < nl && rc == CLI_OK; j++) {
      if (!f->outfeed_dir) {
        cli_print_leaf(stdout, j, leaves[j]);
        continue;
      }
      char path[4096];
      if (cxla_literal_tuple_size(v) < 0) snprintf(path, sizeof path, "%s/%d.npy", f->outfeed_dir, k);
      else snprintf(path, sizeof path, "%s/%d_%d.npy", f->outfeed_dir, k, j);
      if (cxla_literal_write_npy(f->ctx, leaves[j], path) != CXLA_OK) rc = cli_lib_error(f->ctx);
      else printf("wrote %s (outfeed %d)\n", path, k);
    }
    free(leaves);
  }
  return rc;
}

void cli_feed_free(cli_feed *f) {
  cli_execute_set_hook(NULL, NULL);
  for (int i = 0; f->values && i < f->ninfeeds; i++) cxla_literal_destroy(f->values[i]);
  free(f->values);
  if (f->ctx) {
    cxla_infeed_set_source(f->ctx, NULL, NULL);
    cxla_feeds_clear(f->ctx);
  }
}

int cli_feed_check(cli_feed *f, const char *backend, cxla_literal *got, const struct cli_tol *tol) {
  cxla_literal *want = NULL;
  int rc = cli_feed_take_outfeeds(f, &want);
  if (rc != CLI_OK) return rc;
  int n = cli_leaves(want, NULL, 0), ng = got ? cli_leaves(got, NULL, 0) : 0;
  int nv = cxla_literal_tuple_size(want), ngv = got ? cxla_literal_tuple_size(got) : 0;
  if (nv != ngv || n != ng) {
    cxla_literal_destroy(want);
    return cli_error("%s put %d outfeed value%s (%d leaves), interp %d (%d leaves)", backend, ngv, ngv == 1 ? "" : "s",
                     ng, nv, n);
  }
  cxla_literal **w = calloc((size_t)(2 * n + 1), sizeof *w);
  if (!w) {
    cxla_literal_destroy(want);
    return cli_error("out of memory");
  }
  cli_leaves(want, w, n);
  if (got) cli_leaves(got, w + n, n);
  int bad = -1;
  cx_sb why;
  cx_sb_init(&why);
  for (int i = 0; i < n && bad < 0; i++) {
    double rtol, atol;
    cx_diff_default_tol(w[i]->shape.type, &rtol, &atol);
    if (cx_type_is_float(w[i]->shape.type) || cx_type_is_complex(w[i]->shape.type)) {
      if (tol->rtol >= 0) rtol = tol->rtol;
      if (tol->atol >= 0) atol = tol->atol;
    }
    if (!cx_literal_compare(w[n + i], w[i], rtol, atol, &why)) bad = i;
  }
  if (bad >= 0) rc = cli_error("outfeed leaf %d of %d differs from interp beyond tolerance: %s", bad, n, why.buf ? why.buf : "");
  else if (nv) printf("outfeeds: ok: %d value%s (%d leaves) match interp\n", nv, nv == 1 ? "" : "s", n);
  cx_sb_free(&why);
  free(w);
  cxla_literal_destroy(want);
  return rc;
}
