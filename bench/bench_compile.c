/* bench_compile.c — compile time of every benchmark module: wall clock around cxla_compile
 * (parse excluded) in a fresh context each time, so the executable cache never answers, plus
 * the phase breakdown from cxla_executable_compile_stats; then the LLVM opt-level effect. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_main.h"

extern char **environ;

#define REPS 3

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Compiles `file` reps times at `opt` (-1: default); min and median in ms, the stats of the
 * last compile. Returns nonzero when it does not compile. */
static int time_compile(const char *file, int opt, int reps, double *min, double *med, double *cpu_med, char *stats,
                        size_t n) {
  double t[16], c[16];
  reps = reps > 16 ? 16 : reps;
  for (int r = 0; r < reps; r++) {
    cxla_context *ctx = new_context();
    if (!ctx) return 1;
    bu_cxla b;
    /* Inputs are made but never used: a few MB at most, outside the timed region. */
    int bad = bu_cxla_open(&b, ctx, file, NULL, cfg.threads, opt, NULL);
    if (!bad) {
      t[r] = b.compile_ms;
      c[r] = b.compile_cpu_ms;
      if (stats) snprintf(stats, n, "%s", b.stats);
    }
    bu_cxla_close(&b);
    cxla_context_destroy(ctx);
    if (bad) return 1;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  qsort(c, (size_t)reps, sizeof *c, cmp_double);
  *min = t[0];
  *med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
  if (cpu_med) *cpu_med = reps % 2 ? c[reps / 2] : (c[reps / 2 - 1] + c[reps / 2]) / 2;
  return 0;
}

/* ---- the disk cache (--cache-dir): what a new process pays for its first step ---- */

/* Milliseconds from a fresh context to the end of the first execution of `file` (parse,
 * compile, one step on zero inputs), with cxla flags `flags`; the compile counts in counts.
 * Negative when it fails. */
static double first_step_ms(const char *file, const char *flags, char *counts, size_t n, double *compile_ms) {
  double t0 = bu_now_ms();
  cxla_context *ctx = new_context();
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *args[BU_MAX_ARGS] = {0}, *out = NULL;
  int nargs = 0;
  cxla_status s = ctx ? cxla_context_set_flags(ctx, flags) : CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = cxla_module_parse_file(ctx, file, &m);
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  o.threads = cfg.threads;
  double c0 = bu_now_ms();
  if (s == CXLA_OK) s = cxla_compile(m, &o, &e);
  *compile_ms = bu_now_ms() - c0;
  if (s == CXLA_OK && (nargs = cxla_module_num_parameters(m)) > BU_MAX_ARGS) s = CXLA_ERR_UNSUPPORTED;
  for (int i = 0; s == CXLA_OK && i < nargs; i++) {
    cxla_shape sh;
    s = cxla_module_parameter_shape(m, i, &sh);
    cxla_literal *l = s == CXLA_OK ? cxla_literal_create(ctx, sh.type, sh.rank, sh.dims) : NULL;
    if (s == CXLA_OK) s = l ? cxla_buffer_from_literal(ctx, "cpu", l, &args[i]) : CXLA_ERR_OUT_OF_MEMORY;
    cxla_literal_destroy(l);
  }
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, args, &out);
  double t = bu_now_ms() - t0;
  if (s == CXLA_OK) snprintf(counts, n, "%s", cxla_executable_compile_counts(e));
  else fprintf(stderr, "bench: %s: %s\n", file, ctx ? cxla_context_errmsg(ctx) : "no context");
  cxla_buffer_destroy(out);
  for (int i = 0; i < nargs && i < BU_MAX_ARGS; i++) cxla_buffer_destroy(args[i]);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  cxla_context_destroy(ctx);
  return s == CXLA_OK ? t : -1;
}

/* The end of the first execution in a trace that `cxla run --trace` wrote (its "execute" span:
 * ts + dur, CLOCK_MONOTONIC microseconds, the clock bu_now_ms reads), in ms; negative if none. */
static double first_execute_end_ms(const char *trace) {
  FILE *f = fopen(trace, "r");
  if (!f) return -1;
  char line[4096];
  double end = -1;
  while (end < 0 && fgets(line, sizeof line, f)) {
    const char *ts = strstr(line, "\"cat\":\"execute\"") ? strstr(line, "\"ts\":") : NULL;
    const char *dur = ts ? strstr(line, "\"dur\":") : NULL;
    if (dur) end = (strtod(ts + 5, NULL) + strtod(dur + 6, NULL)) / 1e3;
  }
  fclose(f);
  return end;
}

/* A whole new process: the cxla CLI next to this benchmark's build (BUILD/cxla) running one
 * step of file, timed by this process from just before the spawn. *step_ms: to the end of the
 * child's first execution (from its --trace, whose clock is this one's); returns the time to
 * its exit (after printing the results and tearing down), negative when there is no CLI or it
 * fails. */
static double process_ms(const char *file, const char *cache_flag, const char *trace, double *step_ms) {
  char exe[PATH_MAX], cli[PATH_MAX + 16];
  *step_ms = -1;
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k <= 0) return -1;
  exe[k] = 0;
  for (int up = 0; up < 2; up++) { /* BUILD/bench/bench_main -> BUILD */
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
  }
  snprintf(cli, sizeof cli, "%s/cxla", exe);
  if (access(cli, X_OK)) return -1;
  char threads[32], tr[PATH_MAX + 16];
  snprintf(threads, sizeof threads, "--threads=%d", cfg.threads);
  snprintf(tr, sizeof tr, "--trace=%s", trace);
  char *argv[] = {cli, "run", (char *)file, "--backend=cpu", "--random-inputs", threads, (char *)cache_flag, tr, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  unlink(trace);
  double t0 = bu_now_ms();
  pid_t pid;
  int status = 1;
  if (posix_spawn(&pid, cli, &fa, NULL, argv, environ) == 0) waitpid(pid, &status, 0);
  double t = bu_now_ms() - t0;
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  double end = first_execute_end_ms(trace);
  if (end >= t0) *step_ms = end - t0;
  return t;
}

void group_disk_cache(void) {
  const char *name = "lenet_train_step.hlo";
  char dir[] = "/tmp/cxla_bench_cache_XXXXXX", flags[128], off[160], counts[1024];
  if (!mkdtemp(dir)) {
    bench_fail("disk cache: mkdtemp");
    return;
  }
  snprintf(flags, sizeof flags, "--cache-dir=%s", dir);
  snprintf(off, sizeof off, "--cache-dir=off");
  const char *file = hlo_path(name);
  int reps = cfg.smoke ? 1 : REPS;
  printf("\n[compile] disk cache (--cache-dir), %s: fresh context -> end of the first step\n"
         "  (parse, compile, one execution on zeros; median of %d)\n", name, reps);
  double cold[16], warm[16], ccold[16], cwarm[16], pcold[16], pwarm[16], scold[16], swarm[16], dummy;
  int bad = 0, np = 0;
  for (int r = 0; r < reps && !bad; r++) { /* cold: each compile into an empty cache */
    char sub[200];
    snprintf(sub, sizeof sub, "--cache-dir=%s/cold%d", dir, r);
    cold[r] = first_step_ms(file, sub, counts, sizeof counts, &ccold[r]);
    bad |= cold[r] < 0 || !strstr(counts, "disk_cache=miss");
  }
  if (!bad && first_step_ms(file, flags, counts, sizeof counts, &dummy) < 0) bad = 1; /* fills the cache */
  for (int r = 0; r < reps && !bad; r++) {
    warm[r] = first_step_ms(file, flags, counts, sizeof counts, &cwarm[r]);
    bad |= warm[r] < 0 || !strstr(counts, "disk_cache=hit");
  }
  if (bad) {
    printf("  fails (%s)\n", counts);
    bench_fail("disk cache");
    return;
  }
  /* whole processes: the CLI, LLVM and OpenBLAS loaded from scratch (more of them: each is short
   * and a new process's time varies more) */
  char trace[sizeof dir + 16];
  snprintf(trace, sizeof trace, "%s/trace.json", dir);
  int preps = cfg.smoke ? 1 : 3 * REPS;
  for (int r = 0; r < preps; r++) {
    pcold[np] = process_ms(file, off, trace, &scold[np]);
    pwarm[np] = process_ms(file, flags, trace, &swarm[np]);
    if (pcold[np] >= 0 && pwarm[np] >= 0 && scold[np] >= 0 && swarm[np] >= 0) np++;
  }
  qsort(cold, (size_t)reps, sizeof *cold, cmp_double);
  qsort(warm, (size_t)reps, sizeof *warm, cmp_double);
  qsort(ccold, (size_t)reps, sizeof *ccold, cmp_double);
  qsort(cwarm, (size_t)reps, sizeof *cwarm, cmp_double);
  double c = cold[reps / 2], w = warm[reps / 2];
  printf("  cold (compiles, writes the entry) %8.1f ms, of which cxla_compile %8.1f ms\n"
         "  warm (loads the entry)            %8.1f ms, of which cxla_compile %8.1f ms  (%.1fx, compile %.1fx)\n",
         c, ccold[reps / 2], w, cwarm[reps / 2], c / w, ccold[reps / 2] / cwarm[reps / 2]);
  char cc[96];
  snprintf(cc, sizeof cc, "%.1f ms (cold %.1f ms, %.1fx)", cwarm[reps / 2], ccold[reps / 2],
           ccold[reps / 2] / cwarm[reps / 2]);
  add_row("LeNet step: cxla_compile, warm disk cache (fresh context)", cc, "—", NAN, NAN, "—", NAN, NULL);
  char a[96];
  snprintf(a, sizeof a, "%.1f ms (cold %.1f ms, %.1fx)", w, c, c / w);
  add_row("LeNet step: fresh context to first step, warm disk cache", a, "—", NAN, NAN, "< 50 ms", NAN, NULL);
  bench_row_set_met(w < 50 ? "yes" : "no");
  if (np) {
    qsort(pcold, (size_t)np, sizeof *pcold, cmp_double);
    qsort(pwarm, (size_t)np, sizeof *pwarm, cmp_double);
    qsort(scold, (size_t)np, sizeof *scold, cmp_double);
    qsort(swarm, (size_t)np, sizeof *swarm, cmp_double);
    printf("  new process (cxla run, timed from the spawn; median of %d):\n"
           "    to the end of its first step: no cache %.1f ms, warm cache %.1f ms (%.1fx; best %.1f ms)\n"
           "    to its exit:                  no cache %.1f ms, warm cache %.1f ms (%.1fx)\n",
           np, scold[np / 2], swarm[np / 2], scold[np / 2] / swarm[np / 2], swarm[0], pcold[np / 2], pwarm[np / 2],
           pcold[np / 2] / pwarm[np / 2]);
    snprintf(a, sizeof a, "%.1f ms (best %.1f, no cache %.1f ms)", swarm[np / 2], swarm[0], scold[np / 2]);
    add_row("LeNet step: new process (cxla run) start to first step done, warm disk cache", a, "—", NAN, NAN,
            "< 50 ms", NAN, NULL);
    bench_row_set_met(swarm[np / 2] < 50 ? "yes" : swarm[0] < 50 ? "best only" : "no");
    snprintf(a, sizeof a, "%.1f ms (no cache %.1f ms)", pwarm[np / 2], pcold[np / 2]);
    add_row("LeNet step: new process (cxla run) start to exit, warm disk cache", a, "—", NAN, NAN, "(info)", NAN, NULL);
  } else {
    printf("  new process: no cxla CLI next to the benchmark (BUILD/cxla); not measured\n");
  }
  /* remove the entries made here */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
  fflush(stdout);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void group_compile(void) {
  /* The first compile in the process also initialises LLVM's targets: time it on its own. */
  double cold, dummy;
  char stats[1024];
  printf("\n[compile] wall clock around cxla_compile, fresh context each time (no cache hits), %d runs;\n"
         "  CPU: process CPU time over the same span (median), less inflated when other jobs share the cores\n", REPS);
  if (time_compile(hlo_path("mlp.hlo"), -1, 1, &cold, &dummy, NULL, NULL, 0) == 0)
    printf("  first compile in this process (mlp.hlo, LLVM cold): %.1f ms\n", cold);

  char *files[64];
  int nf = 0;
  DIR *d = opendir(cfg.hlo_dir);
  for (struct dirent *e; d && (e = readdir(d)) && nf < 64;) {
    size_t l = strlen(e->d_name);
    if (l > 4 && !strcmp(e->d_name + l - 4, ".hlo")) files[nf++] = strdup(e->d_name);
  }
  if (d) closedir(d);
  qsort(files, (size_t)nf, sizeof *files, cmp_str);
  for (int i = 0; i < nf; i++) {
    double mn, md, cpu;
    if (!files[i] || time_compile(hlo_path(files[i]), -1, cfg.smoke ? 1 : REPS, &mn, &md, &cpu, stats, sizeof stats)) {
      printf("  %-34s does not compile\n", files[i] ? files[i] : "?");
      bench_fail(files[i] ? files[i] : "out of memory");
      continue;
    }
    printf("  %-34s min %7.1f  median %7.1f ms  (CPU %7.1f ms)  [%s]\n", files[i], mn, md, cpu, stats);
    if (!strcmp(files[i], "mlp.hlo")) {
      char a[64], row[96];
      snprintf(a, sizeof a, "%.1f ms (min %.1f, CPU %.1f)", md, mn, cpu);
      snprintf(row, sizeof row, "compile mlp.hlo (median of %d, fresh context)", REPS);
      add_row(row, a, "—", NAN, NAN, "< 50 ms", NAN, NULL);
      bench_row_set_met(md < 50 ? "yes" : mn < 50 ? "min only" : "no");
    }
  }
  fflush(stdout);

  const char *by_opt[] = {"chain9.hlo", "softmax.hlo", "mlp.hlo"};
  printf("\n[compile] LLVM --opt-level effect (min of 2 compiles, ms; run time at O0 is not measured here)\n");
  printf("  %-34s %8s %8s %8s %8s\n", "module", "O0", "O1", "O2", "O3");
  for (size_t i = 0; i < sizeof by_opt / sizeof by_opt[0]; i++) {
    printf("  %-34s", by_opt[i]);
    for (int opt = 0; opt <= 3; opt++) {
      double mn, md;
      if (time_compile(hlo_path(by_opt[i]), opt, cfg.smoke ? 1 : 2, &mn, &md, NULL, NULL, 0)) printf(" %8s", "fails"), bench_fail(by_opt[i]);
      else printf(" %8.1f", mn);
    }
    printf("\n");
  }
  for (int i = 0; i < nf; i++) free(files[i]);
  fflush(stdout);
}
