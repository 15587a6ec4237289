/* cli_run.c — `cxla run MODULE.hlo [IN.npy ...]`: parse, load or make inputs, compile, run,
 * then print a summary or write one .npy per result leaf. --repeat=N runs N times after one
 * compile and reports min/median/max execution time; --check and --check-each compare the
 * result with the interpreter's (cli_check.c). A module with collectives runs on several
 * devices with --replicas=N or under mpirun (cli_devices.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "api/tooling.h"

typedef struct {
  const char *module;
  const char **inputs;
  int ninputs;
  const char *backend;
  const char *out_dir;
  int random, stats;
  uint64_t seed;
  int64_t repeat; /* 0: run once, print no timings */
  int check, check_each;
  int bounds;     /* --error-bound=on|off; -1: on unless --rtol or --atol is given */
  double timeout; /* --timeout=S; 0: none */
  cli_tol tol;    /* --rtol, --atol (negative: per element type) */
  int replicas;   /* --replicas=N; 0: none */
  const char *inputs_dir; /* --inputs-per-replica=DIR */
  cli_feed feed;          /* --infeed, --outfeed-out (cli_feed.c) */
} run_args;

/* --rtol=X / --atol=X: a finite number >= 0. */
static int parse_tol(const char *a, size_t prefix, double *out) {
  const char *s = a[prefix - 1] == '=' ? a + prefix : "";
  char *end;
  errno = 0;
  double v = *s ? strtod(s, &end) : -1;
  if (!*s || *end || errno || !isfinite(v) || v < 0)
    return cli_usage_error("run", "%.*s wants a number >= 0, not '%s'", (int)prefix - 1, a, s);
  *out = v;
  return CLI_OK;
}

static int parse_seed(const char *s, uint64_t *seed) {
  char *end;
  errno = 0;
  if (!*s || *s == '-') return 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno) return 0;
  *seed = v;
  return 1;
}

/* Returns CLI_OK, or an exit status (help printed: -1 means "exit 0 now"). */
static int parse_args(cxla_context *ctx, int argc, char **argv, run_args *r) {
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (only_positional || a[0] != '-' || !a[1]) {
      if (!r->module) r->module = a;
      else r->inputs[r->ninputs++] = a;
    } else if (!strcmp(a, "--")) {
      only_positional = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cli_print_usage(stdout, "run");
      return -1;
    } else if (!strncmp(a, "--backend=", 10) || !strcmp(a, "--backend")) {
      if (!a[9] && i + 1 >= argc) return cli_usage_error("run", "--backend needs a NAME");
      r->backend = a[9] ? a + 10 : argv[++i];
      if (!*r->backend) return cli_usage_error("run", "--backend needs a NAME");
    } else if (!strncmp(a, "--out=", 6) || !strcmp(a, "--out")) {
      if (!a[5] && i + 1 >= argc) return cli_usage_error("run", "--out needs a DIR");
      r->out_dir = a[5] ? a + 6 : argv[++i];
      if (!*r->out_dir) return cli_usage_error("run", "--out needs a DIR");
    } else if (!strcmp(a, "--random-inputs")) {
      r->random = 1;
    } else if (!strncmp(a, "--random-inputs=", 16)) {
      r->random = 1;
      if (!parse_seed(a + 16, &r->seed))
        return cli_usage_error("run", "--random-inputs=SEED wants a non-negative integer, not '%s'", a + 16);
    } else if (!strncmp(a, "--timeout=", 10) || !strcmp(a, "--timeout")) {
      char *end;
      errno = 0;
      double v = a[9] ? strtod(a + 10, &end) : -1;
      if (!a[9] || !a[10] || *end || errno || !isfinite(v) || v <= 0 || v > 1e7)
        return cli_usage_error("run", "--timeout=SECONDS wants a number of seconds > 0, not '%s'", a[9] ? a + 10 : "");
      r->timeout = v;
    } else if (!strcmp(a, "--stats")) {
      r->stats = 1;
    } else if (!strcmp(a, "--check")) {
      r->check = 1;
    } else if (!strcmp(a, "--check-each")) {
      r->check = r->check_each = 1;
    } else if (!strcmp(a, "--error-bound=on") || !strcmp(a, "--error-bound=off")) {
      r->bounds = a[15] == 'n';
    } else if (!strncmp(a, "--error-bound", 13)) {
      return cli_usage_error("run", "--error-bound wants on or off, not '%s'", a[13] == '=' ? a + 14 : "");
    } else if (!strncmp(a, "--rtol=", 7) || !strcmp(a, "--rtol")) {
      if (parse_tol(a, 7, &r->tol.rtol) != CLI_OK) return CLI_USAGE;
    } else if (!strncmp(a, "--atol=", 7) || !strcmp(a, "--atol")) {
      if (parse_tol(a, 7, &r->tol.atol) != CLI_OK) return CLI_USAGE;
    } else if (!strncmp(a, "--repeat=", 9) || !strcmp(a, "--repeat")) {
      uint64_t n = 0;
      if (!a[8] || !parse_seed(a + 9, &n) || n < 1 || n > 1000000000)
        return cli_usage_error("run", "--repeat=N wants a count from 1 to 1000000000, not '%s'", a[8] ? a + 9 : "");
      r->repeat = (int64_t)n;
    } else if (!strncmp(a, "--replicas=", 11) || !strcmp(a, "--replicas")) {
      uint64_t n = 0;
      if (!a[10] || !parse_seed(a + 11, &n) || n < 1 || n > 1024)
        return cli_usage_error("run", "--replicas=N wants a count from 1 to 1024, not '%s'", a[10] ? a + 11 : "");
      r->replicas = (int)n;
    } else if (!strncmp(a, "--inputs-per-replica=", 21) || !strcmp(a, "--inputs-per-replica")) {
      if (!a[20] && i + 1 >= argc) return cli_usage_error("run", "--inputs-per-replica needs a DIR");
      r->inputs_dir = a[20] ? a + 21 : argv[++i];
      if (!*r->inputs_dir) return cli_usage_error("run", "--inputs-per-replica needs a DIR");
    } else if (!strncmp(a, "--infeed=", 9) || !strcmp(a, "--infeed")) {
      if (!a[8] && i + 1 >= argc) return cli_usage_error("run", "--infeed needs A.npy[,B.npy...]");
      const char *v = a[8] ? a + 9 : argv[++i];
      if (!*v) return cli_usage_error("run", "--infeed needs A.npy[,B.npy...]");
      r->feed.infeeds[r->feed.ninfeeds++] = v;
    } else if (!strncmp(a, "--outfeed-out=", 14) || !strcmp(a, "--outfeed-out")) {
      if (!a[13] && i + 1 >= argc) return cli_usage_error("run", "--outfeed-out needs a DIR");
      r->feed.outfeed_dir = a[13] ? a + 14 : argv[++i];
      if (!*r->feed.outfeed_dir) return cli_usage_error("run", "--outfeed-out needs a DIR");
    } else if (!strcmp(a, "--cache-dir")) {
      int rc = cli_apply_flag_words(ctx, "run", argc, argv, &i);
      if (rc != CLI_OK) return rc;
    } else if (cx_flags_is_flag(a)) {
      int rc = cli_apply_flag(ctx, "run", a);
      if (rc != CLI_OK) return rc;
    } else {
      return cli_usage_error("run", "unknown option '%s'", a);
    }
  }
  if (!r->module) return cli_usage_error("run", "missing MODULE.hlo");
  if (r->random && r->ninputs)
    return cli_usage_error("run", "--random-inputs makes every input; do not also give .npy files");
  if ((r->tol.rtol >= 0 || r->tol.atol >= 0) && !r->check)
    return cli_usage_error("run", "--rtol and --atol are tolerances of --check and --check-each");
  if (r->bounds >= 0 && !r->check) return cli_usage_error("run", "--error-bound is part of --check");
  /* tolerances given by hand are taken as they are, unless the bound is asked for too */
  if (r->bounds < 0) r->bounds = r->tol.rtol < 0 && r->tol.atol < 0;
  if (r->inputs_dir && (r->random || r->ninputs))
    return cli_usage_error("run", "--inputs-per-replica names every input; do not also give .npy files or --random-inputs");
  if ((r->replicas || r->inputs_dir) && (r->feed.ninfeeds || r->feed.outfeed_dir))
    return cli_usage_error("run", "--infeed and --outfeed-out run one device");
  if ((r->replicas || r->inputs_dir) && (r->check || r->repeat))
    return cli_usage_error("run", "--check and --repeat run one device; run the backends with --out and compare");
  if (r->check && (!r->backend || !strcmp(r->backend, "interp")))
    return cli_usage_error("run", "--check%s compares a backend with the interpreter: give --backend=cpu",
                           r->check_each ? "-each" : "");
  return CLI_OK;
}

static int same_dims(const cxla_shape *s, cxla_literal *lit) {
  if (s->type == CXLA_TUPLE || cxla_literal_type(lit) == CXLA_TUPLE || s->rank != cxla_literal_rank(lit)) return 0;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] != cxla_literal_dims(lit)[d]) return 0;
  return 1;
}

int cli_load_input(cxla_context *ctx, cxla_module *m, int i, const char *path, cxla_literal **out) {
  cxla_shape want;
  char ws[512], gs[512];
  if (cxla_module_parameter_shape(m, i, &want) != CXLA_OK) return cli_lib_error(ctx);
  const char *pname = cxla_module_parameter_name(m, i);
  if (want.type == CXLA_TUPLE || want.type == CXLA_TOKEN)
    return cli_error("parameter %d '%s' has shape %s, which a .npy file cannot hold (use --random-inputs)", i,
                     pname, cli_shape_str(&want, ws, sizeof ws));
  cxla_literal *lit;
  if (cxla_literal_read_npy(ctx, path, &lit) != CXLA_OK) return cli_lib_error(ctx);
  cxla_shape got = {cxla_literal_type(lit), cxla_literal_rank(lit), cxla_literal_dims(lit), 0, NULL};
  /* numpy has no bf16, 8- or 4-bit float (ml_dtypes saves them as raw bytes) or 4-bit integer:
   * they come widened, as cxla writes them (f4 for the floats, i1/u1 for s4/u4) */
  cxla_type wide = want.type == CXLA_S4 || want.type == CXLA_S2   ? CXLA_S8
                   : want.type == CXLA_U4 || want.type == CXLA_U2 ? CXLA_U8
                   : want.type == CXLA_BF16 || (cxla_type_size(want.type) == 1 && cxla_type_name(want.type)[0] == 'f')
                       ? CXLA_F32 : CXLA_INVALID;
  if (wide != CXLA_INVALID && got.type == wide && same_dims(&want, lit)) {
    cxla_literal *conv = cxla_literal_create(ctx, want.type, want.rank, want.dims);
    if (!conv) { cxla_literal_destroy(lit); return cli_lib_error(ctx); }
    int64_t n = cxla_literal_element_count(lit);
    for (int64_t k = 0; k < n; k++) cxla_literal_set_f64(conv, k, cxla_literal_get_f64(lit, k));
    cxla_literal_destroy(lit);
    lit = conv;
  } else if (got.type != want.type || !same_dims(&want, lit)) {
    cli_error("parameter %d '%s' (%s): expected %s, got %s", i, pname, path, cli_shape_str(&want, ws, sizeof ws),
              cli_shape_str(&got, gs, sizeof gs));
    cxla_literal_destroy(lit);
    return CLI_FAIL;
  }
  *out = lit;
  return CLI_OK;
}

static int make_inputs(cxla_context *ctx, cxla_module *m, const run_args *r, cxla_literal **args, int nparams) {
  uint64_t state = r->seed;
  for (int i = 0; i < nparams; i++) {
    if (r->random) {
      cxla_shape s;
      char buf[512];
      if (cxla_module_parameter_shape(m, i, &s) != CXLA_OK) return cli_lib_error(ctx);
      if (!(args[i] = cli_random_literal(ctx, &s, &state)))
        return cli_error("parameter %d '%s': cannot make random values of shape %s", i,
                         cxla_module_parameter_name(m, i), cli_shape_str(&s, buf, sizeof buf));
    } else {
      int rc = cli_load_input(ctx, m, i, r->inputs[i], &args[i]);
      if (rc != CLI_OK) return rc;
    }
  }
  return CLI_OK;
}

int cli_make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (!p) return ENOMEM;
  int err = 0;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || !*s) {
      char c = *s;
      *s = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST) { err = errno; break; }
      *s = c;
      if (!c) break;
    }
  }
  struct stat st;
  if (!err && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) err = ENOTDIR;
  free(p);
  return err;
}

int cli_emit_result(cxla_context *ctx, const char *dir, const char *title, cxla_literal *result) {
  int n = cli_leaves(result, NULL, 0);
  cxla_literal **leaves = calloc((size_t)(n ? n : 1), sizeof *leaves);
  if (!leaves) return cli_error("out of memory");
  cli_leaves(result, leaves, n);
  int rc = CLI_OK;
  if (dir) {
    int err = cli_make_dirs(dir);
    if (err) rc = cli_error("cannot create directory %s: %s", dir, strerror(err));
    for (int i = 0; i < n && rc == CLI_OK; i++) {
      if (cxla_literal_type(leaves[i]) == CXLA_TOKEN) { /* no value: .npy has nothing to hold */
        printf("leaf %d is a token: nothing written\n", i);
        continue;
      }
      size_t len = strlen(dir) + 32;
      char *path = malloc(len);
      if (!path) { rc = cli_error("out of memory"); break; }
      snprintf(path, len, "%s/%d.npy", dir, i);
      if (cxla_literal_write_npy(ctx, leaves[i], path) != CXLA_OK) rc = cli_lib_error(ctx);
      else {
        cxla_shape s = {cxla_literal_type(leaves[i]), cxla_literal_rank(leaves[i]), cxla_literal_dims(leaves[i]), 0, NULL};
        char buf[512];
        printf("wrote %s %s\n", path, cli_shape_str(&s, buf, sizeof buf));
      }
      free(path);
    }
  } else {
    if (title) printf("%s\n", title);
    for (int i = 0; i < n; i++) cli_print_leaf(stdout, i, leaves[i]);
    if (!n) printf("result: () (an empty tuple)\n");
  }
  free(leaves);
  if (rc == CLI_OK && fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
  return rc;
}

/* --check: the interpreter on the same inputs, leaf by leaf; --check-each then looks for the
 * first instruction that differs. Exit 1 with one line on stderr when anything differs. */
static int check(cxla_context *ctx, cxla_module *m, run_args *r, const char *backend, cxla_literal **args,
                 int nparams, cxla_literal *result, cxla_literal *outfeeds) {
  cxla_literal *want = NULL;
  if (cli_execute(ctx, m, "interp", nparams, args, &want) != CXLA_OK) return cli_lib_error(ctx); /* feeds restarted */
  if (cli_feed_check(&r->feed, backend, outfeeds, &r->tol) != CLI_OK) {
    cxla_literal_destroy(want);
    return CLI_FAIL;
  }
  int nleaves = 0, nbad = cli_check(ctx, m, nparams, args, backend, result, want, &r->tol, r->bounds, &nleaves);
  cxla_literal_destroy(want);
  if (nbad < 0) return CLI_FAIL;
  char first[256] = "";
  fflush(stdout);
  if (r->check_each && cli_check_each(ctx, m, backend, nparams, args, &r->tol, r->bounds, nbad > 0, first, sizeof first) != CLI_OK)
    return CLI_FAIL;
  if (fflush(stdout) != 0) return cli_error("cannot write to stdout");
  if (nbad)
    return cli_error("%s differs from interp beyond tolerance in %d of %d result lea%s%s%s%s", backend, nbad, nleaves,
                     nleaves == 1 ? "f" : "ves", first[0] ? " (first differing instruction: " : "", first,
                     first[0] ? ")" : "");
  if (first[0]) return cli_error("%s differs from interp beyond tolerance at instruction %s", backend, first);
  return CLI_OK;
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A run consumes its donated arguments (a training step's weights): each repetition after the
 * first gets them afresh from the inputs, outside the timed call, so every run computes the
 * same thing from the same values. */
static cxla_status refill_donated(cxla_context *ctx, const char *backend, cxla_executable *e, int nparams,
                                  cxla_literal **args, cxla_buffer **bufs) {
  cxla_status s = CXLA_OK;
  for (int p = 0; p < nparams && s == CXLA_OK; p++) {
    if (!cxla_executable_parameter_donated(e, p)) continue;
    cxla_buffer_destroy(bufs[p]);
    bufs[p] = NULL;
    s = cxla_buffer_from_literal(ctx, backend, args[p], &bufs[p]);
  }
  return s;
}

/* Bytes of a literal's array leaves. */
static int64_t literal_bytes(cxla_literal *lit) {
  int n = lit ? cxla_literal_tuple_size(lit) : 0;
  if (n < 0) return (int64_t)cxla_literal_size_bytes(lit);
  int64_t b = 0;
  for (int i = 0; i < n; i++) b += literal_bytes(cxla_literal_tuple_get(lit, i));
  return b;
}

/* Argument buffers without copies where the executable allows: an array parameter is read in
 * place (wrapped), a donated one, which the run consumes, takes its literal over unless `keep`
 * (args[i] is then NULL). What neither fits (tuples, tokens, donated and kept) is copied. */
static cxla_status make_buffers(cxla_context *ctx, const char *backend, cxla_executable *e, int nparams,
                                cxla_literal **args, cxla_buffer **bufs, int keep) {
  cxla_status s = CXLA_OK;
  for (int i = 0; i < nparams && s == CXLA_OK; i++) {
    cxla_literal *a = args[i];
    int give = cxla_executable_parameter_donated(e, i);
    if (give && !keep) {
      if ((s = cx_buffer_adopt_literal(ctx, backend, a, &bufs[i])) == CXLA_OK) args[i] = NULL;
    } else if (!give && cxla_literal_tuple_size(a) < 0 && cxla_literal_type(a) != CXLA_TOKEN) {
      s = cxla_buffer_wrap(ctx, backend, cxla_literal_type(a), cxla_literal_rank(a), cxla_literal_dims(a),
                           cxla_literal_data(a), cxla_literal_size_bytes(a), &bufs[i]);
    } else {
      s = cxla_buffer_from_literal(ctx, backend, a, &bufs[i]);
    }
  }
  return s;
}

/* --stats: the process's peak resident memory against the data a run needs (its inputs, its
 * outputs, and the backend's largest set of live temporaries where it reports one). */
static void print_memory(cxla_executable *e, int64_t in_bytes, int64_t out_bytes) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return;
  int64_t peak = (int64_t)ru.ru_maxrss * 1024; /* Linux: kilobytes */
  const char *t = strstr(cxla_executable_compile_counts(e), "temp_bytes=");
  int64_t temp = t ? strtoll(t + 11, NULL, 10) : 0;
  int64_t data = in_bytes + out_bytes + temp;
  char ratio[32] = "n/a", temps[32] = "n/a"; /* n/a: no data, or a backend that does not say */
  if (data > 0) snprintf(ratio, sizeof ratio, "%.3f", (double)peak / (double)data);
  if (t) snprintf(temps, sizeof temps, "%lld", (long long)temp);
  fprintf(stderr, "memory: peak_rss_bytes=%lld data_bytes=%lld inputs_bytes=%lld outputs_bytes=%lld temp_bytes=%s ratio=%s\n",
          (long long)peak, (long long)data, (long long)in_bytes, (long long)out_bytes, temps, ratio);
}

/* Runs e once, or `repeat` times printing the timings on stderr; *res is the last result. */
static cxla_status execute_timed(cxla_context *ctx, const char *backend, cxla_executable *e, int nparams,
                                 cxla_literal **args, cxla_buffer **bufs, cxla_buffer **res, int64_t repeat,
                                 double compile_ms, cli_feed *feed, const cxla_cost *cost) {
  if (repeat <= 0) return cxla_executable_execute(e, nparams, bufs, res);
  double *ms = malloc((size_t)repeat * sizeof *ms);
  if (!ms) return cxla_executable_execute(e, nparams, bufs, res); /* untimed, rather than fail */
  cxla_status s = CXLA_OK;
  for (int64_t i = 0; i < repeat && s == CXLA_OK; i++) {
    cxla_buffer_destroy(*res);
    *res = NULL;
    if (i > 0 && (s = refill_donated(ctx, backend, e, nparams, args, bufs)) != CXLA_OK) break;
    if (i > 0 && cli_feed_start(feed) != CLI_OK) { s = CXLA_ERR_RUNTIME; break; }
    double t0 = wall_ms();
    s = cxla_executable_execute(e, nparams, bufs, res);
    ms[i] = wall_ms() - t0;
  }
  if (s == CXLA_OK) {
    qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
    double med = repeat % 2 ? ms[repeat / 2] : (ms[repeat / 2 - 1] + ms[repeat / 2]) / 2;
    char a[32], b[32], c[32], d[32];
    fprintf(stderr, "compile: %s\n", cli_format_ms(compile_ms, d, sizeof d));
    fprintf(stderr, "execute: min %s, median %s, max %s (%lld run%s)\n", cli_format_ms(ms[0], a, sizeof a),
            cli_format_ms(med, b, sizeof b), cli_format_ms(ms[repeat - 1], c, sizeof c), (long long)repeat,
            repeat == 1 ? "" : "s");
    /* what the module computes (XLA's cost rules) per second of the median run */
    if (cost && med > 0 && (cost->flops > 0 || cost->bytes_accessed > 0))
      fprintf(stderr, "rate: %.2f GFLOP/s, %.2f GB/s accessed at the median (%.0f flops, %.0f bytes a run)\n",
              cost->flops / med / 1e6, cost->bytes_accessed / med / 1e6, cost->flops, cost->bytes_accessed);
  }
  free(ms);
  return s;
}

int cli_run(cxla_context *ctx, int argc, char **argv) {
  run_args r;
  memset(&r, 0, sizeof r);
  r.tol.rtol = r.tol.atol = -1;
  r.bounds = -1;
  r.inputs = calloc((size_t)argc, sizeof *r.inputs);
  r.feed.infeeds = calloc((size_t)argc, sizeof *r.feed.infeeds);
  if (!r.inputs || !r.feed.infeeds) {
    free(r.inputs);
    free(r.feed.infeeds);
    return cli_error("out of memory");
  }
  int rc = parse_args(ctx, argc, argv, &r);
  if (rc != CLI_OK || (r.timeout > 0 && (rc = cli_watchdog_start(ctx, r.timeout)) != CLI_OK)) {
    free(r.inputs);
    free(r.feed.infeeds);
    return rc < 0 ? CLI_OK : rc;
  }
  r.feed.random = r.random;
  r.feed.seed = r.seed;
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_literal **args = NULL, *result = NULL, *outfeeds = NULL;
  int nparams = 0;
  cxla_compile_options opts;
  cxla_compile_options_init(&opts);
  if (r.backend) opts.backend = r.backend;
  if (cxla_module_parse_file(ctx, r.module, &m) != CXLA_OK) { rc = cli_lib_error(ctx); goto done; }
  nparams = cxla_module_num_parameters(m);
  if (nparams < 0) { rc = cli_lib_error(ctx); goto done; }
  if (!r.random && !r.inputs_dir && r.ninputs != nparams) {
    rc = cli_error("expected %d input%s (one .npy per ENTRY parameter), got %d", nparams, nparams == 1 ? "" : "s",
                   r.ninputs);
    goto done;
  }
  /* Compile before loading inputs: a missing backend should not wait on large files. */
  double t0 = wall_ms();
  if (cxla_compile(m, &opts, &e) != CXLA_OK) { rc = cli_lib_error(ctx); goto done; }
  double compile_ms = wall_ms() - t0;
  if (r.stats)
    fprintf(stderr, "compile: %s\ncounts: %s\n", cxla_executable_compile_stats(e), cxla_executable_compile_counts(e));
  int device = 0, ndevices = 1;
  if (cxla_context_device(ctx, &device, &ndevices) != CXLA_OK) { rc = cli_lib_error(ctx); goto done; }
  if (r.replicas && ndevices > 1) {
    rc = cli_usage_error("run", "--replicas runs the devices as threads of one process; under mpirun (%d processes) "
                         "each process is already one device", ndevices);
    goto done;
  }
  if (r.replicas || r.inputs_dir || ndevices > 1) {
    if (ndevices > 1 && (r.check || r.repeat)) {
      rc = cli_usage_error("run", "--check and --repeat run one device; run the backends with --out and compare");
      goto done;
    }
    cli_devices_args da = {opts.backend, r.out_dir, r.inputs_dir, r.inputs, r.random, r.seed, r.replicas, device, ndevices};
    rc = cli_run_devices(ctx, m, e, &da);
    goto done;
  }
  if (!(args = calloc((size_t)(nparams ? nparams : 1), sizeof *args))) { rc = cli_error("out of memory"); goto done; }
  if ((rc = make_inputs(ctx, m, &r, args, nparams)) != CLI_OK) goto done;
  if ((rc = cli_feed_load(ctx, &r.feed)) != CLI_OK || (rc = cli_feed_start(&r.feed)) != CLI_OK) goto done;
  cxla_buffer **bufs = calloc((size_t)(nparams ? nparams : 1), sizeof *bufs);
  if (!bufs) { rc = cli_error("out of memory"); goto done; }
  int64_t in_bytes = 0;
  for (int i = 0; i < nparams; i++) in_bytes += literal_bytes(args[i]);
  /* --repeat refills donated arguments and --check reruns on them: only then are they kept */
  cxla_status s = make_buffers(ctx, opts.backend, e, nparams, args, bufs, r.repeat || r.check);
  cxla_buffer *res = NULL;
  cxla_cost cost;
  int have_cost = r.repeat > 0 && cxla_executable_cost(e, &cost) == CXLA_OK;
  if (s == CXLA_OK)
    s = execute_timed(ctx, opts.backend, e, nparams, args, bufs, &res, r.repeat, compile_ms, &r.feed,
                      have_cost ? &cost : NULL);
  if (s == CXLA_OK) s = cx_buffer_take_literal(res, &result); /* the result's memory, not a copy */
  if (s != CXLA_OK) rc = cli_lib_error(ctx);
  cxla_buffer_destroy(res);
  for (int i = 0; i < nparams; i++) cxla_buffer_destroy(bufs[i]);
  free(bufs);
  if (rc == CLI_OK) rc = cli_feed_take_outfeeds(&r.feed, &outfeeds);
  if (rc == CLI_OK && (r.out_dir || !r.check)) rc = cli_emit_result(ctx, r.out_dir, NULL, result);
  if (rc == CLI_OK && (r.feed.outfeed_dir || !r.check)) rc = cli_feed_emit(&r.feed, outfeeds);
  if (rc == CLI_OK && r.check) rc = check(ctx, m, &r, opts.backend, args, nparams, result, outfeeds);
  if (rc == CLI_OK && r.stats) print_memory(e, in_bytes, literal_bytes(result));
done:
  cli_watchdog_stop();
  cxla_literal_destroy(result);
  cxla_literal_destroy(outfeeds);
  cli_feed_free(&r.feed);
  free(r.feed.infeeds);
  for (int i = 0; args && i < nparams; i++) cxla_literal_destroy(args[i]);
  free(args);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  free(r.inputs);
  return rc;
}
