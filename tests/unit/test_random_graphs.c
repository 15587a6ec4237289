/* test_random_graphs.c — differential testing of the CPU backend against the interpreter on
 * seeded random graphs (tests/unit/randgraph.h). For each seed: generate, print, re-parse in
 * two contexts (fusion on, --fusion=off), run the interpreter and the CPU backend on random
 * inputs (two input sets on the fused executable, so a second execution reuses its arena,
 * then both at once from two threads), and compare every output leaf with the tolerance the
 * analysis derives for it (integers, pred and exactly computed floats bit for bit). Each graph runs in a child process, so a
 * crash or a hang is reported against its seed; a failure is printed with its seed, HLO text,
 * inputs and first differing element, then shrunk (smaller dimensions, then graph cuts) and
 * the minimal module printed, ready for `build/cxla run FILE --backend=cpu`.
 *
 * Environment:
 *   CXLA_RANDGRAPH_N=300 (80 under ASan)  graphs     CXLA_RANDGRAPH_SEED=1   first seed
 *   CXLA_RANDGRAPH_FEATURES=-while,-gather   leave constructs out (see randgraph.h)
 *   CXLA_RANDGRAPH_STEPS=N      ops per graph (default: 5..32 from the seed)
 *   CXLA_RANDGRAPH_BIG=1        every graph starts from a ~100k-element value (multi-threaded kernels)
 *   CXLA_RANDGRAPH_JOBS=<cores> children at once    CXLA_RANDGRAPH_FORK=0   run in-process
 *   CXLA_RANDGRAPH_SHRINK=2     failures to shrink    CXLA_RANDGRAPH_MAXFAIL=5 stop after
 *   CXLA_RANDGRAPH_SAVE=DIR     write each minimal failing module to DIR/seed_<S>.hlo
 *   CXLA_RANDGRAPH_SHOW=<seed>  print that seed's module and exit the test
 *   CXLA_RANDGRAPH_TIMEOUT=120  seconds per graph (child)
 *   CXLA_RANDGRAPH_SHRINK_SECONDS=180, CXLA_RANDGRAPH_SHRINK_TRIES=400   shrinking budget
 *   CXLA_RANDGRAPH_STATS=1      with _SHOW: also the analysis of every value
 * Thousands on demand: CXLA_RANDGRAPH_N=5000 CXLA_RANDGRAPH_SEED=1000 build/cxla_tests random_graph */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "randgraph.h"
#include "runtime/executable.h"
#include "ir/types.h"
#include "test.h"

/* The second configuration: one kernel per op, no LLVM optimisation (also 3x faster to
 * compile than -O2), a thread count that splits ranges unevenly. The first is the default
 * (fusion on, -O2), at -O3 for every 5th seed. */
#define UNFUSED_FLAGS "--fusion=off --opt-level=0 --threads=3"
/* Generated loops run at most a few iterations; shrinking may make one endless. */
#define LOOP_GUARD "--max-loop-iterations=10000"

/* Which runs a check does (shrinking repeats only the one that failed). */
enum { RUN_FUSED0 = 1, RUN_FUSED1 = 2, RUN_UNFUSED = 4, RUN_THREADS = 8, RUN_ALL = 15 };

/* Graphs per run: fewer under the sanitizers (each graph costs about 3x there). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RG_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(RG_SANITIZED)
#define DEFAULT_N 80
#else
#define DEFAULT_N 300
#endif

enum { R_PASS = 0, R_MISMATCH = 1, R_ERROR = 2, R_INVALID = 3, R_CRASH = 4, R_TIMEOUT = 5, R_REFUSED = 6 };
static const char *const result_names[] = {"pass", "mismatch", "backend error", "invalid graph", "crash", "timeout",
                                           "refused by the backend at compile time"};

/* The backend under test: "cpu", or a gpu backend (which refuses, at compile time, what it
 * cannot run yet: such a graph counts as refused, not failed). Forked children inherit it. */
static const char *g_backend = "cpu";

static long env_long(const char *name, long def) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : def;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- one graph, in-process ---- */

static void leaves_of(cxla_literal *l, cxla_literal **out, int *n, int cap) {
  if (cxla_literal_type(l) != CXLA_TUPLE) {
    if (*n < cap) out[(*n)++] = l;
    return;
  }
  for (int i = 0; i < cxla_literal_tuple_size(l); i++) leaves_of(cxla_literal_tuple_get(l, i), out, n, cap);
}

static void print_literal(cx_sb *rep, const char *what, const cxla_literal *l) {
  if (cxla_literal_type(l) != CXLA_TUPLE && cxla_literal_element_count(l) > 512) {
    cx_sb_printf(rep, "  %s: %s[%lld elements] (regenerate from the seed)\n", what,
                 cxla_type_name(cxla_literal_type(l)), (long long)cxla_literal_element_count(l));
    return;
  }
  char *s = cxla_literal_to_string(l);
  cx_sb_printf(rep, "  %s: %s\n", what, s ? s : "?");
  free(s);
}

typedef struct check_ctx {
  cxla_context *ctx[2]; /* fusion on, fusion off */
} check_ctx;

/* Compares got with want leaf by leaf; describes the first difference in rep. */
static int compare(cxla_literal *got, cxla_literal *want, const rg_val *tol, int ntol, cx_sb *rep) {
  cxla_literal *g[256], *w[256];
  int ng = 0, nw = 0;
  leaves_of(got, g, &ng, 256);
  leaves_of(want, w, &nw, 256);
  if (ng != nw || nw != ntol) {
    cx_sb_printf(rep, "  result has %d leaves, interpreter %d, analysis %d\n", ng, nw, ntol);
    return 0;
  }
  for (int i = 0; i < nw; i++) {
    double rtol, atol;
    rg_tolerance(&tol[i], cxla_literal_type(w[i]), &rtol, &atol);
    cx_sb why;
    cx_sb_init(&why);
    int ok = cx_literal_compare(g[i], w[i], rtol, atol, &why);
    if (!ok)
      cx_sb_printf(rep, "  output leaf %d: %s (rtol %.3g, atol %.3g; analysis range [%.4g, %.4g], err %.3g, rel %.3g)\n",
                   i, why.buf ? why.buf : "?", rtol, atol, tol[i].lo, tol[i].hi, tol[i].err, tol[i].rel);
    cx_sb_free(&why);
    if (!ok) return 0;
  }
  return 1;
}

static int run_exe(cxla_context *ctx, cxla_executable *e, int n, cxla_literal **args, cxla_literal **out) {
  cxla_buffer *bufs[64] = {0}, *res = NULL;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) s = cxla_buffer_from_literal(ctx, "cpu", args[i], &bufs[i]);
  if (s == CXLA_OK) s = cxla_executable_execute(e, n, bufs, &res);
  if (s == CXLA_OK) s = cxla_buffer_to_literal(res, out);
  for (int i = 0; i < n; i++) cxla_buffer_destroy(bufs[i]);
  cxla_buffer_destroy(res);
  return s;
}

/* Both input sets at once on one executable, from two threads (executables are shared). */
typedef struct exec_arg {
  cxla_executable *e;
  int n;
  cxla_buffer **bufs, *res;
  cxla_status s;
} exec_arg;

static void *exec_thread(void *p) {
  exec_arg *a = p;
  a->s = cxla_executable_execute(a->e, a->n, a->bufs, &a->res);
  return NULL;
}

static int run_concurrently(cxla_context *ctx, cxla_executable *e, int n, cxla_literal *args[2][64],
                            cxla_literal *out[2]) {
  cxla_buffer *bufs[2][64] = {{0}};
  exec_arg a[2];
  pthread_t th[2];
  cxla_status s = CXLA_OK;
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < n && s == CXLA_OK; i++) s = cxla_buffer_from_literal(ctx, "cpu", args[t][i], &bufs[t][i]);
    a[t] = (exec_arg){e, n, bufs[t], NULL, CXLA_OK};
  }
  int started[2] = {0, 0};
  for (int t = 0; t < 2 && s == CXLA_OK; t++) started[t] = pthread_create(&th[t], NULL, exec_thread, &a[t]) == 0;
  for (int t = 0; t < 2; t++) {
    if (started[t]) pthread_join(th[t], NULL);
    else if (s == CXLA_OK) exec_thread(&a[t]);
    if (s == CXLA_OK) s = a[t].s;
    if (s == CXLA_OK) s = cxla_buffer_to_literal(a[t].res, &out[t]);
    cxla_buffer_destroy(a[t].res);
    for (int i = 0; i < n; i++) cxla_buffer_destroy(bufs[t][i]);
  }
  return s;
}

/* Runs text on the interpreter and the CPU backend; R_* and a report. */
static int check_text(const char *text, const rg_param *params, int nparams, uint64_t seed, int verbose,
                      int runs, int *failed_run, cx_sb *rep) {
  int result = R_PASS;
  cxla_module *m[2] = {NULL, NULL};
  cxla_executable *exe[2] = {NULL, NULL};
  cxla_literal *args[2][64] = {{0}}, *want[2] = {NULL, NULL};
  rg_val *tol = NULL;
  int ntol = 0;
  check_ctx cc = {{NULL, NULL}};
  /* every 5th seed compiles the fused executable at -O3: undefined behaviour in emitted IR
   * often only shows there */
  int o3 = seed % 5 == 4;
  const char *cfg[2] = {o3 ? "on -O3" : "on", "off -O0"};
  char why[256] = "";
  if (nparams > 64) return R_INVALID;
  for (int k = 0; k < 2; k++) {
    if (cxla_context_create(&cc.ctx[k]) != CXLA_OK || cxla_context_set_flags(cc.ctx[k], LOOP_GUARD) != CXLA_OK ||
        (k == 1 && cxla_context_set_flags(cc.ctx[1], UNFUSED_FLAGS) != CXLA_OK) ||
        (k == 0 && o3 && cxla_context_set_flags(cc.ctx[0], "--opt-level=3") != CXLA_OK)) {
      result = R_INVALID;
      goto done;
    }
    if (cxla_module_parse(cc.ctx[k], text, strlen(text), "random", &m[k]) != CXLA_OK) {
      cx_sb_printf(rep, "  the printed module does not parse: %s\n", cxla_context_errmsg(cc.ctx[k]));
      result = R_INVALID;
      goto done;
    }
  }
  if (cxla_module_num_parameters(m[0]) != nparams) { result = R_INVALID; goto done; }
  tol = rg_analyze(m[0], params, nparams, &ntol, why, sizeof why);
  for (int i = 0; tol && i < ntol; i++)
    if (tol[i].bad) {
      cx_sb_printf(rep, "  output leaf %d is not comparable: %s\n", i, why);
      result = R_INVALID;
      goto done;
    }
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < nparams; i++) {
      args[t][i] = rg_make_input(&m[0]->entry->params[i]->shape, &params[i], seed * 7919 + (uint64_t)t * 131 + (uint64_t)i);
      if (verbose) {
        char what[32];
        snprintf(what, sizeof what, "input %d (set %d)", i, t);
        print_literal(rep, what, args[t][i]);
      }
    }
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    if (cxla_module_run(m[0], &o, nparams, args[t], &want[t]) != CXLA_OK) {
      cx_sb_printf(rep, "  the interpreter fails: %s\n", cxla_context_errmsg(cc.ctx[0]));
      result = R_INVALID;
      goto done;
    }
  }
  for (int k = 0; k < 2; k++) {
    if (!(runs & (k ? RUN_UNFUSED : RUN_FUSED0 | RUN_FUSED1 | RUN_THREADS))) continue;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = g_backend;
    *failed_run = k ? RUN_UNFUSED : RUN_FUSED0;
    if (cxla_compile(m[k], &o, &exe[k]) != CXLA_OK) {
      /* refusals: an op with no GPU code, or f64 math on a machine without CUDA's libdevice */
      const char *why = cxla_context_errmsg(cc.ctx[k]);
      if (strstr(why, "cannot run on the GPU yet") || strstr(why, "needs CUDA's libdevice")) {
        result = R_REFUSED;
        goto done;
      }
      cx_sb_printf(rep, "  %s compile (fusion %s) fails: %s\n", g_backend, cfg[k], cxla_context_errmsg(cc.ctx[k]));
      result = R_ERROR;
      goto done;
    }
    for (int t = 0; t < (k ? 1 : 2); t++) {
      int run = k ? RUN_UNFUSED : t ? RUN_FUSED1 : RUN_FUSED0;
      if (!(runs & run)) continue;
      *failed_run = run;
      cxla_literal *got = NULL;
      if (run_exe(cc.ctx[k], exe[k], nparams, args[t], &got) != CXLA_OK) {
        cx_sb_printf(rep, "  %s execute (fusion %s, input set %d) fails: %s\n", g_backend, cfg[k], t,
                     cxla_context_errmsg(cc.ctx[k]));
        result = R_ERROR;
        goto done;
      }
      cx_sb sub;
      cx_sb_init(&sub);
      int ok = compare(got, want[t], tol, ntol, &sub);
      if (!ok) {
        cx_sb_printf(rep, "  %s (fusion %s, input set %d) differs from the interpreter:\n%s", g_backend, cfg[k], t,
                     sub.buf ? sub.buf : "");
        if (verbose) {
          print_literal(rep, "cpu result", got);
          print_literal(rep, "interpreter result", want[t]);
        }
        result = R_MISMATCH;
      }
      cx_sb_free(&sub);
      cxla_literal_destroy(got);
      if (!ok) goto done;
    }
  }
  if ((runs & RUN_THREADS) && exe[0]) {
    cxla_literal *got[2] = {NULL, NULL};
    *failed_run = RUN_THREADS;
    if (run_concurrently(cc.ctx[0], exe[0], nparams, args, got) != CXLA_OK) {
      cx_sb_printf(rep, "  cpu execute from two threads at once fails: %s\n", cxla_context_errmsg(cc.ctx[0]));
      result = R_ERROR;
    }
    for (int t = 0; t < 2 && result == R_PASS; t++) {
      cx_sb sub;
      cx_sb_init(&sub);
      if (!compare(got[t], want[t], tol, ntol, &sub)) {
        cx_sb_printf(rep, "  cpu (fusion on, input set %d, two threads at once) differs from the interpreter:\n%s", t,
                     sub.buf ? sub.buf : "");
        result = R_MISMATCH;
      }
      cx_sb_free(&sub);
    }
    for (int t = 0; t < 2; t++) cxla_literal_destroy(got[t]);
  }
done:
  for (int k = 0; k < 2; k++) {
    cxla_executable_destroy(exe[k]);
    cxla_literal_destroy(want[k]);
    for (int i = 0; i < nparams; i++) cxla_literal_destroy(args[k][i]);
    cxla_module_destroy(m[k]);
    cxla_context_destroy(cc.ctx[k]);
  }
  cx_free(tol);
  return result;
}

/* ---- one graph in a child process ---- */

typedef struct job {
  int runs, failed_run;
  pid_t pid;
  FILE *out;
  uint64_t seed;
  rg_graph g;
  double start;
} job;

#define EXIT_BASE 140 /* child exit statuses 156..251: a result and the run that failed */

static unsigned child_timeout; /* seconds; 0: CXLA_RANDGRAPH_TIMEOUT or 120 */

static int use_fork(void) { return env_long("CXLA_RANDGRAPH_FORK", 1) != 0; }

static int start_job(job *j, int verbose) {
  fflush(stdout);
  fflush(stderr);
  j->out = tmpfile();
  j->start = now_s();
  if (!j->out) return 0;
  j->pid = fork();
  if (j->pid < 0) { fclose(j->out); j->out = NULL; return 0; }
  if (j->pid == 0) {
    int fd = fileno(j->out);
    dup2(fd, 1);
    dup2(fd, 2);
    alarm(child_timeout ? child_timeout : (unsigned)env_long("CXLA_RANDGRAPH_TIMEOUT", 120));
    cx_sb rep;
    cx_sb_init(&rep);
    int run = 0;
    int r = check_text(j->g.text, j->g.params, j->g.nparams, j->seed, verbose, j->runs ? j->runs : RUN_ALL, &run, &rep);
    if (rep.buf) fputs(rep.buf, stdout);
    fflush(stdout);
    /* 0, or EXIT_BASE + the result and the run that failed: any other status (LLVM's fatal
     * errors exit(1), abort()) is a crash */
    _exit(r == R_PASS ? 0 : EXIT_BASE + r * 16 + run);
  }
  return 1;
}

/* Result of a finished child (status from waitpid); its output goes to *report (malloc'd). */
static int finish_job(job *j, int status, char **report) {
  int r;
  cx_sb sb;
  cx_sb_init(&sb);
  if (WIFSIGNALED(status)) r = WTERMSIG(status) == SIGALRM ? R_TIMEOUT : R_CRASH;
  else {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int ok = code == 0 || (code >= EXIT_BASE + 16 && code < EXIT_BASE + 16 * (R_REFUSED + 1));
    r = !ok ? R_CRASH : code == 0 ? R_PASS : (code - EXIT_BASE) / 16;
    j->failed_run = ok && code ? (code - EXIT_BASE) % 16 : 0;
    if (!ok && WIFEXITED(status)) cx_sb_printf(&sb, "  exited with status %d (not the checker's own)\n", code);
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) != SIGALRM) cx_sb_printf(&sb, "  killed by signal %d\n", WTERMSIG(status));
  if (j->out) {
    char buf[4096];
    size_t n;
    rewind(j->out);
    while ((n = fread(buf, 1, sizeof buf, j->out)) > 0) cx_sb_putn(&sb, buf, n);
    fclose(j->out);
    j->out = NULL;
  }
  *report = cx_sb_take(&sb);
  return r;
}

/* Checks one text, in a child unless CXLA_RANDGRAPH_FORK=0. */
static int check_once(const char *text, const rg_param *params, int nparams, uint64_t seed, int verbose, int *runs,
                      char **report) {
  if (!use_fork()) {
    cx_sb rep;
    cx_sb_init(&rep);
    int run = 0;
    int r = check_text(text, params, nparams, seed, verbose, *runs ? *runs : RUN_ALL, &run, &rep);
    *report = cx_sb_take(&rep);
    if (r != R_PASS) *runs = run;
    return r;
  }
  job j;
  memset(&j, 0, sizeof j);
  j.runs = *runs;
  j.seed = seed;
  j.g.text = (char *)text;
  j.g.params = (rg_param *)params;
  j.g.nparams = nparams;
  if (!start_job(&j, verbose)) { *report = NULL; return R_INVALID; }
  int status = 0;
  while (waitpid(j.pid, &status, 0) < 0 && errno == EINTR) {}
  int r = finish_job(&j, status, report);
  if (r != R_PASS && j.failed_run) *runs = j.failed_run;
  return r;
}

/* ---- shrinking ---- */

typedef struct shrink_user {
  int kind, runs;
  uint64_t seed;
  double deadline;
} shrink_user;

static int still_fails(void *user, const char *text, const rg_param *params, int nparams) {
  shrink_user *u = user;
  if (now_s() > u->deadline) return 0; /* out of time: keep what we have */
  char *rep = NULL;
  int runs = u->runs;
  int r = check_once(text, params, nparams, u->seed, 0, &runs, &rep);
  free(rep);
  return r == u->kind;
}

static int count_instrs(cxla_context *ctx, const char *text) {
  cxla_module *m = NULL;
  int n = 0;
  if (cxla_module_parse(ctx, text, strlen(text), "count", &m) != CXLA_OK) return -1;
  for (int k = 0; k < m->ncomps; k++) n += m->comps[k]->ninstrs;
  cxla_module_destroy(m);
  return n;
}

static void save_failure(uint64_t seed, const char *text, const char *report, int kind) {
  const char *dir = getenv("CXLA_RANDGRAPH_SAVE");
  if (!dir || !*dir) return;
  mkdir(dir, 0777);
  char path[4096];
  snprintf(path, sizeof path, "%s/seed_%llu.hlo", dir, (unsigned long long)seed);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "// random graph seed %llu (%s), minimised; cpu vs interp:\n", (unsigned long long)seed, result_names[kind]);
  for (const char *p = report; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    fprintf(f, "//%.*s\n", (int)n, p);
    p = e ? e + 1 : p + n;
  }
  fputs(text, f);
  fclose(f);
  printf("    saved %s\n", path);
}

/* Prints a failure, shrinks it and prints the minimal module. */
static void report_failure(uint64_t seed, const rg_config *cfg, rg_graph *g, int kind, int failed_run,
                           const char *report, int shrink) {
  printf("  seed %llu: %s\n%s", (unsigned long long)seed, result_names[kind], report ? report : "");
  char *full = NULL;
  int runs = failed_run;
  check_once(g->text, g->params, g->nparams, seed, 1, &runs, &full); /* again, with inputs */
  printf("  module:\n%s  details:\n%s", g->text, full ? full : "");
  free(full);
  printf("  replay: CXLA_RANDGRAPH_SEED=%llu CXLA_RANDGRAPH_N=1 cxla_tests random_graph\n", (unsigned long long)seed);
  fflush(stdout);
  if (!shrink || kind == R_INVALID) return;
  double deadline = now_s() + (double)env_long("CXLA_RANDGRAPH_SHRINK_SECONDS", 180);
  child_timeout = 30; /* candidates that hang are not the failure we look for */
  /* smaller dimensions first: the same seed with a cap on every dimension */
  char *text = strdup(g->text);
  int np = g->nparams;
  rg_param *params = cx_malloc(sizeof *params * (size_t)(np + 1));
  memcpy(params, g->params, sizeof *params * (size_t)np);
  for (int cap = 8; cap >= 1; cap /= 2) {
    rg_config c = *cfg;
    c.max_dim = cap;
    rg_graph small;
    if (rg_generate(test_ctx(), seed, &c, &small) != CXLA_OK) continue;
    shrink_user u = {kind, failed_run, seed, deadline};
    if (still_fails(&u, small.text, small.params, small.nparams)) {
      free(text);
      cx_free(params);
      text = strdup(small.text);
      np = small.nparams;
      params = cx_malloc(sizeof *params * (size_t)(np + 1));
      memcpy(params, small.params, sizeof *params * (size_t)np);
    }
    rg_graph_free(&small);
  }
  shrink_user u = {kind, failed_run, seed, deadline};
  int tries = 0, before = count_instrs(test_ctx(), g->text);
  double t0 = now_s();
  char *min = rg_shrink(test_ctx(), text, &params, &np, still_fails, &u, (int)env_long("CXLA_RANDGRAPH_SHRINK_TRIES", 400), &tries);
  if (min) {
    char *rep = NULL;
    runs = failed_run;
    check_once(min, params, np, seed, 1, &runs, &rep);
    printf("  shrunk from %d to %d instructions (%d candidates, %.1f s); minimal module:\n%s  its failure:\n%s", before,
           count_instrs(test_ctx(), min), tries, now_s() - t0, min, rep ? rep : "");
    save_failure(seed, min, rep, kind);
    free(rep);
  }
  free(min);
  free(text);
  cx_free(params);
  child_timeout = 0;
  fflush(stdout);
}

/* ---- the tests ---- */

static void config_from_env(rg_config *cfg) {
  rg_config_default(cfg);
  cfg->steps = (int)env_long("CXLA_RANDGRAPH_STEPS", 0);
  cfg->big = env_long("CXLA_RANDGRAPH_BIG", 0) != 0;
  const char *f = getenv("CXLA_RANDGRAPH_FEATURES");
  if (f && rg_parse_features(f, &cfg->features) != 0) printf("    CXLA_RANDGRAPH_FEATURES: unknown feature in '%s'\n", f);
}

/* n_default graphs (or $n_env) on backend against the interpreter */
static void random_graphs(const char *backend, const char *n_env, long n_default) {
  if (!cx_backend_find(backend)) {
    printf("    ok (%s backend not built)\n", backend);
    return;
  }
  g_backend = backend;
  rg_config cfg;
  config_from_env(&cfg);
  uint64_t first = (uint64_t)env_long("CXLA_RANDGRAPH_SEED", 1);
  long n = env_long(n_env, n_default), maxfail = env_long("CXLA_RANDGRAPH_MAXFAIL", 5);
  long shrink = env_long("CXLA_RANDGRAPH_SHRINK", 2);
  long jobs = use_fork() ? env_long("CXLA_RANDGRAPH_JOBS", sysconf(_SC_NPROCESSORS_ONLN)) : 1;
  if (jobs < 1) jobs = 1;
  if (jobs > 16) jobs = 16;
  if (getenv("CXLA_RANDGRAPH_SHOW")) {
    rg_graph g;
    if (rg_generate(test_ctx(), (uint64_t)env_long("CXLA_RANDGRAPH_SHOW", 1), &cfg, &g) == CXLA_OK) {
      printf("%s", g.text);
      if (getenv("CXLA_RANDGRAPH_STATS")) { /* and what the analysis thinks of each value */
        cx_sb sb;
        cx_sb_init(&sb);
        rg_bounds_print(g.m, g.params, g.nparams, &sb);
        printf("%s", sb.buf ? sb.buf : "");
        cx_sb_free(&sb);
      }
    }
    rg_graph_free(&g);
    return;
  }
  double t0 = now_s();
  long counts[7] = {0}, failures = 0, done = 0, next = 0;
  job slots[16];
  memset(slots, 0, sizeof slots);
  int running = 0;
  while ((next < n && failures < maxfail) || running) {
    /* start graphs while there are free slots */
    while (next < n && failures < maxfail && running < jobs) {
      job *j = NULL;
      for (int k = 0; k < jobs; k++)
        if (!slots[k].pid) { j = &slots[k]; break; }
      uint64_t seed = first + (uint64_t)next++;
      rg_graph g;
      if (rg_generate(test_ctx(), seed, &cfg, &g) != CXLA_OK) {
        CHECK_MSG(0, "seed %llu: the generator failed: %s", (unsigned long long)seed, cxla_context_errmsg(test_ctx()));
        failures++;
        counts[R_INVALID]++;
        continue;
      }
      if (!use_fork()) {
        char *rep = NULL;
        int runs = RUN_ALL;
        int r = check_once(g.text, g.params, g.nparams, seed, 0, &runs, &rep);
        counts[r]++;
        done++;
        if (r != R_PASS && r != R_REFUSED) {
          failures++;
          CHECK_MSG(0, "seed %llu: %s", (unsigned long long)seed, result_names[r]);
          report_failure(seed, &cfg, &g, r, runs, rep, failures <= shrink);
        }
        free(rep);
        rg_graph_free(&g);
        continue;
      }
      j->seed = seed;
      j->g = g;
      if (!start_job(j, 0)) {
        CHECK_MSG(0, "seed %llu: cannot fork", (unsigned long long)seed);
        rg_graph_free(&j->g);
        memset(j, 0, sizeof *j);
        failures++;
        continue;
      }
      running++;
    }
    if (!running) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < jobs; k++) {
      job *j = &slots[k];
      if (j->pid != pid) continue;
      char *rep = NULL;
      int r = finish_job(j, status, &rep);
      counts[r]++;
      done++;
      running--;
      if (r != R_PASS && r != R_REFUSED) {
        failures++;
        CHECK_MSG(0, "seed %llu: %s", (unsigned long long)j->seed, result_names[r]);
        /* shrink with the other children still running: fine, they are independent */
        report_failure(j->seed, &cfg, &j->g, r, j->failed_run ? j->failed_run : RUN_ALL, rep, failures <= shrink);
      }
      free(rep);
      rg_graph_free(&j->g);
      memset(j, 0, sizeof *j);
    }
  }
  printf("    random graphs on %s: seeds %llu..%llu, %ld run in %.1f s (%ld jobs): %ld passed, %ld mismatches, "
         "%ld %s errors, %ld invalid, %ld crashes, %ld timeouts, %ld refused at compile time\n", backend,
         (unsigned long long)first, (unsigned long long)(first + (uint64_t)next - 1), done, now_s() - t0, jobs,
         counts[R_PASS], counts[R_MISMATCH], counts[R_ERROR], backend, counts[R_INVALID], counts[R_CRASH],
         counts[R_TIMEOUT], counts[R_REFUSED]);
  g_backend = "cpu";
}

TEST(random_graph_cpu_matches_interp) { random_graphs("cpu", "CXLA_RANDGRAPH_N", DEFAULT_N); }

/* The same graphs on the gpu backend: emulated on the CPU, or the real GPU under `make
 * test-gpu` (CXLA_TEST_GPU_BACKEND=gpu). Most of what it refuses is dots and control flow. */
TEST(random_graph_gpu_matches_interp) {
  const char *b = getenv("CXLA_TEST_GPU_BACKEND");
  random_graphs(b && *b ? b : "gpu-emu", "CXLA_RANDGRAPH_GPU_N", DEFAULT_N / 2);
}
