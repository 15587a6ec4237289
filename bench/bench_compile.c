/* bench_compile.c — compile time of every benchmark module: wall clock around cxla_compile
 * (parse excluded) in a fresh context each time, so the executable cache never answers, plus
 * the phase breakdown from cxla_executable_compile_stats; then the LLVM opt-level effect. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_main.h"

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
