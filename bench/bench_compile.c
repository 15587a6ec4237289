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

/* Where a new process's time goes, in ms from just before its spawn: to the start of its
 * compile (loading the CLI with LLVM and OpenBLAS, reading the module), the compile, from there
 * to the end of its first step (making the inputs, the execution), and to its exit. */
typedef struct proc_times {
  double load, compile, run, step, exit;
} proc_times;

/* The spans of a trace that `cxla run --trace` wrote: ts and dur in CLOCK_MONOTONIC
 * microseconds, the clock bu_now_ms reads. The outer "compile MODULE" span and the first
 * "execute" one, in ms; 0 when either is missing. */
static int trace_spans(const char *trace, double *c0, double *c1, double *x1) {
  FILE *f = fopen(trace, "r");
  if (!f) return 0;
  char line[4096];
  int have_c = 0, have_x = 0;
  while ((!have_c || !have_x) && fgets(line, sizeof line, f)) {
    const char *ts = strstr(line, "\"ts\":"), *dur = strstr(line, "\"dur\":");
    if (!ts || !dur) continue;
    double t = strtod(ts + 5, NULL) / 1e3, d = strtod(dur + 6, NULL) / 1e3;
    if (!have_c && strstr(line, "\"name\":\"compile ") && strstr(line, "\"cat\":\"compile\"")) {
      *c0 = t, *c1 = t + d, have_c = 1;
    } else if (!have_x && strstr(line, "\"cat\":\"execute\"")) {
      *x1 = t + d, have_x = 1;
    }
  }
  fclose(f);
  return have_c && have_x;
}

/* A whole new process: the cxla CLI next to this benchmark's build (BUILD/cxla) running one
 * step of file, timed by this process from just before the spawn, its phases from its --trace.
 * Returns 0 when there is no CLI or it fails. */
static int process_times(const char *file, const char *cache_flag, const char *trace, proc_times *pt) {
  char exe[PATH_MAX], cli[PATH_MAX + 16];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k <= 0) return 0;
  exe[k] = 0;
  for (int up = 0; up < 2; up++) { /* BUILD/bench/bench_main -> BUILD */
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = 0;
  }
  snprintf(cli, sizeof cli, "%s/cxla", exe);
  if (access(cli, X_OK)) return 0;
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
  double t9 = bu_now_ms();
  posix_spawn_file_actions_destroy(&fa);
  double c0 = 0, c1 = 0, x1 = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !trace_spans(trace, &c0, &c1, &x1) || c0 < t0) return 0;
  *pt = (proc_times){c0 - t0, c1 - c0, x1 - c1, x1 - t0, t9 - t0};
  return 1;
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The medians of each phase over n processes (each phase on its own). */
static proc_times median_times(const proc_times *p, int n) {
  double v[5][16];
  for (int i = 0; i < n; i++) {
    v[0][i] = p[i].load, v[1][i] = p[i].compile, v[2][i] = p[i].run, v[3][i] = p[i].step, v[4][i] = p[i].exit;
  }
  return (proc_times){median_of(v[0], n), median_of(v[1], n), median_of(v[2], n), median_of(v[3], n),
                      median_of(v[4], n)};
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
  double cold[16], warm[16], ccold[16], cwarm[16], dummy;
  proc_times pcold[16], pwarm[16];
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
  /* The entries written above are this program's (the version in an entry names the file the
   * library was loaded from): the CLI replaces them with its own once, here, untimed. */
  proc_times prime;
  process_times(file, flags, trace, &prime);
  for (int r = 0; r < preps; r++) {
    int ok = process_times(file, off, trace, &pcold[np]);
    if (ok && process_times(file, flags, trace, &pwarm[np])) np++;
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
    double best = pwarm[0].step;
    for (int i = 1; i < np; i++) best = pwarm[i].step < best ? pwarm[i].step : best;
    proc_times pc = median_times(pcold, np), pw = median_times(pwarm, np);
    printf("  new process (cxla run, timed from the spawn; its phases from its --trace; medians of %d):\n"
           "                 load+read  compile  inputs+first step  = first step done   exit\n"
           "    no cache    %8.1f  %8.1f  %8.1f           %8.1f         %8.1f ms\n"
           "    warm cache  %8.1f  %8.1f  %8.1f           %8.1f         %8.1f ms  (first step %.1fx sooner; best %.1f ms)\n",
           np, pc.load, pc.compile, pc.run, pc.step, pc.exit, pw.load, pw.compile, pw.run, pw.step, pw.exit,
           pc.step / pw.step, best);
    snprintf(a, sizeof a, "%.1f ms (best %.1f, no cache %.1f ms)", pw.step, best, pc.step);
    add_row("LeNet step: new process (cxla run) start to first step done, warm disk cache", a, "—", NAN, NAN,
            "< 50 ms", NAN, NULL);
    bench_row_set_met(pw.step < 50 ? "yes" : best < 50 ? "best only" : "no");
    snprintf(a, sizeof a, "%.1f ms (no cache %.1f ms)", pw.exit, pc.exit);
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

/* A chain of n ops over f32[64,256]: elementwise ones, every fourth a row reduction subtracted
 * back (a row fusion each, with a reducer of its own: kernels alike but for its name), every eighth a dot with a bias added through one broadcast at the
 * top (a dot epilogue each, whose duplicated broadcast lies far back), every multiply reading
 * the one parameter: n/4 fusions that all read it (as every layer of a deep model reads a
 * shared input). Written to a temporary file; 0 when it cannot be. */
static int write_chain(char *path, int n) {
  int fd = mkstemps(path, 4);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
  if (!f) return 0;
  fprintf(f, "HloModule chain_%d\n\n", n);
  /* one reducer per reduce, all the same add, as jax writes them */
  for (int i = 0; i < n; i++)
    if (i % 8 != 7 && i % 4 == 2)
      fprintf(f, "region_%d {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n", i);
  fprintf(f, "ENTRY main {\n  p0 = f32[64,256] parameter(0)\n  w = f32[256,256] parameter(1)\n"
             "  bias = f32[256] parameter(2)\n  bb = f32[64,256] broadcast(bias), dimensions={1}\n"
             "  z = f32[] constant(0)\n");
  for (int i = 0; i < n; i++) {
    char prev[16];
    snprintf(prev, sizeof prev, i ? "e%d" : "p0", i - 1);
    switch (i % 8 == 7 ? 4 : i % 4) {
    case 0: fprintf(f, "  e%d = f32[64,256] exponential(%s)\n", i, prev); break;
    case 1: fprintf(f, "  e%d = f32[64,256] multiply(%s, p0)\n", i, prev); break;
    case 2:
      fprintf(f, "  r%d = f32[64] reduce(%s, z), dimensions={1}, to_apply=region_%d\n", i, prev, i);
      fprintf(f, "  b%d = f32[64,256] broadcast(r%d), dimensions={0}\n", i, i);
      fprintf(f, "  e%d = f32[64,256] subtract(%s, b%d)\n", i, prev, i);
      break;
    case 3: fprintf(f, "  e%d = f32[64,256] tanh(%s)\n", i, prev); break;
    default:
      fprintf(f, "  d%d = f32[64,256] dot(%s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", i, prev);
      fprintf(f, "  e%d = f32[64,256] add(d%d, bb)\n", i, i);
    }
  }
  fprintf(f, "  ROOT out = f32[64,256] add(e%d, p0)\n}\n", n - 1);
  return fclose(f) == 0;
}

/* Compile time against module size: doubling the chain should about double it. */
static void compile_growth(void) {
  printf("\n[compile] growth with module size: a chain of N ops, N/4 of them row reductions and N/8 dots,\n"
         "  one parameter read by every fourth op (min of %d compiles; ratio: to the chain half as long)\n", cfg.smoke ? 1 : 2);
  double last = NAN;
  for (int n = cfg.smoke ? 250 : 1000; n <= (cfg.smoke ? 500 : 4000); n *= 2) {
    char path[] = "/tmp/cxla_chain_XXXXXX.hlo", stats[1024];
    double mn, md;
    int bad = !write_chain(path, n) || time_compile(path, -1, cfg.smoke ? 1 : 2, &mn, &md, NULL, stats, sizeof stats);
    unlink(path);
    if (bad) {
      printf("  chain of %-5d does not compile\n", n);
      bench_fail("compile growth chain");
      return;
    }
    const char *passes = strstr(stats, "passes=");
    char ratio[16] = "    -";
    if (isfinite(last)) snprintf(ratio, sizeof ratio, "%5.2f", mn / last);
    printf("  chain of %-5d min %8.1f ms  ratio %s  [%.*s]\n", n, mn, ratio, passes ? (int)strcspn(passes, " ") : 0,
           passes ? passes : "");
    last = mn;
  }
  fflush(stdout);
}

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
  compile_growth();
}
