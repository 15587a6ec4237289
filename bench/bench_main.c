/* bench_main.c — cxla's CPU backend against its peers, ratios taken in one process.
 *
 * Each group compiles its modules (bench/hlo/NAME.hlo) through the public API, then times cxla
 * and its baselines interleaved (bench_util.c: warm-up, then rounds of one sample each, the
 * order rotated every round, a short sleep before each sample so that the previous
 * contender's spinning threads go idle). Ratios are cxla's throughput over the baseline's
 * (higher is better for cxla), from the best samples and from the medians. Every cxla result
 * is checked against the baseline's before it is reported.
 *
 * usage: bench_main [--threads=N] [--rounds=N] [--gap-us=N] [--only=a,b] [--hlo=DIR] [--label=TEXT] [--smoke]
 *                   [--clock=thread-cpu]  (with --threads=1: each call timed by the thread's CPU time)
 *   groups: chain9 softmax gemm dense mlp scaling alloc compile
 * --smoke runs every group once at tiny sizes and exits non-zero when a cxla result is wrong or
 * missing: `make test` runs it so that the benchmarks cannot rot (their numbers mean nothing). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "baselines.h"
#include "bench_main.h"

void openblas_set_num_threads(int n);
char *openblas_get_config(void);

bench_cfg cfg = {0, 15, 2000, "bench/hlo", NULL, NULL, 0};
static int nfailures;
static bench_row rows[64];
static int nrows;

/* ---- table ---- */

void add_row(const char *bench, const char *cx, const char *base, double rb, double rm, const char *goal,
             double goal_ratio, const char *check) {
  if (nrows >= (int)(sizeof rows / sizeof rows[0])) return;
  bench_row *r = &rows[nrows++];
  snprintf(r->bench, sizeof r->bench, "%s", bench);
  snprintf(r->cx, sizeof r->cx, "%s", cx);
  snprintf(r->base, sizeof r->base, "%s", base);
  snprintf(r->goal, sizeof r->goal, "%s", goal ? goal : "");
  snprintf(r->check, sizeof r->check, "%s", check ? check : "");
  r->ratio_best = rb;
  r->ratio_median = rm;
  if (!goal || isnan(goal_ratio)) r->met = "";
  else if (isnan(rb)) r->met = "no (did not run)";
  else if (rb >= goal_ratio && rm >= goal_ratio) r->met = "yes";
  else if (rb >= goal_ratio) r->met = "best only";
  else if (rm >= goal_ratio) r->met = "median only";
  else r->met = "no";
}

void bench_row_set_met(const char *met) {
  if (nrows) rows[nrows - 1].met = met;
}

static void fmt_ratio(char *out, size_t n, double r) {
  if (isnan(r)) snprintf(out, n, "—");
  else snprintf(out, n, "%.2f", r);
}

static void print_table(void) {
  if (cfg.label) printf("\n%s", cfg.label);
  printf("\n| benchmark | cxla | baseline | ratio (best) | ratio (median) | goal | met? | check |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nrows; i++) {
    char a[32], b[32];
    fmt_ratio(a, sizeof a, rows[i].ratio_best);
    fmt_ratio(b, sizeof b, rows[i].ratio_median);
    printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", rows[i].bench, rows[i].cx, rows[i].base, a, b,
           rows[i].goal, rows[i].met, rows[i].check);
  }
}

/* ---- shared helpers ---- */

void print_contenders(const char *group, bu_contender *c, int nc, double units_per_call, const char *unit) {
  printf("\n[%s] per call: best / median / worst of every call timed (%d interleaved rounds)", group, cfg.rounds);
  if (unit) printf("; %s from the best and the median", unit);
  printf("\n");
  for (int i = 0; i < nc; i++) {
    if (c[i].failed) {
      printf("  %-46s did not run\n", c[i].name);
      continue;
    }
    printf("  %-46s %9.3f / %9.3f / %9.3f ms  (%d calls/round)", c[i].name, c[i].best, c[i].median, c[i].worst,
           c[i].k);
    if (unit) printf("  %8.2f / %8.2f %s", units_per_call / c[i].best / 1e6, units_per_call / c[i].median / 1e6, unit);
    printf("\n");
  }
  fflush(stdout);
}

/* A value with its unit for the table, from a time in ms: "27.1 GB/s" etc. */
void fmt_rate(char *out, size_t n, const bu_contender *c, double units_per_call, const char *unit) {
  if (c->failed) snprintf(out, n, "did not run");
  else if (units_per_call > 0) snprintf(out, n, "%.1f %s", units_per_call / c->median / 1e6, unit);
  else if (c->median < 1) snprintf(out, n, "%.1f µs", c->median * 1e3);
  else snprintf(out, n, "%.2f ms", c->median);
}

double ratio_best(const bu_contender *cx, const bu_contender *base) {
  return cx->failed || base->failed ? NAN : base->best / cx->best;
}
double ratio_median(const bu_contender *cx, const bu_contender *base) {
  return cx->failed || base->failed ? NAN : base->median / cx->median;
}

/* "err 3e-07" or "WRONG: err ...": the largest |cxla - reference| over the largest |reference|
 * (a norm-wise error: elements that cancel to nearly 0 make element-wise ratios meaningless). */
void check_result(char *out, size_t n, bu_cxla *b, const float *ref, int64_t count, double tol) {
  check_result_leaf(out, n, b, -1, ref, count, tol);
}

void check_result_leaf(char *out, size_t n, bu_cxla *b, int leaf, const float *ref, int64_t count, double tol) {
  cxla_literal *hold = NULL;
  const float *got = bu_cxla_result_leaf_f32(b, leaf, &hold);
  if (!got) snprintf(out, n, "no result"), bench_fail(b->path);
  else {
    double scale = 0, e = 0;
    int64_t at = -1, bad = 0;
    for (int64_t i = 0; i < count; i++) scale = fmax(scale, fabs((double)ref[i]));
    if (scale == 0) scale = 1;
    for (int64_t i = 0; i < count; i++) {
      double d = fabs((double)got[i] - (double)ref[i]) / scale;
      if (!(d <= tol)) bad++;
      if (!(d <= e)) e = d, at = i; /* NaN sticks */
    }
    snprintf(out, n, "%s%.1e", e <= tol ? "err " : "WRONG: err ", e);
    if (!(e <= tol)) bench_fail(b->path);
    if (!(e <= tol))
      fprintf(stderr, "bench: %s: %lld of %lld elements off, worst at %lld: got %g, want %g\n", b->path,
              (long long)bad, (long long)count, (long long)at, at >= 0 ? got[at] : 0.0, at >= 0 ? ref[at] : 0.0);
  }
  cxla_literal_destroy(hold);
  bu_cxla_release(b);
}

bu_opts opts_for(double min_sample_ms) {
  bu_opts o = {cfg.rounds, 200, min_sample_ms, cfg.gap_us};
  return o;
}

void set_all_threads(int n) {
  bl_set_threads(n);
  openblas_set_num_threads(n);
}

long bench_elems(void) { return cfg.smoke ? 256L * 256 : 4096L * 4096; }
int bench_softmax_side(void) { return cfg.smoke ? 256 : 4096; }
int bench_gemm_side(void) { return cfg.smoke ? 64 : 1024; }

void bench_fail(const char *what) {
  nfailures++;
  fprintf(stderr, "bench: FAILED: %s\n", what);
}

/* Under --smoke a module's sizes are rewritten to the tiny ones: each listed size, as a whole
 * number, becomes its small counterpart (the files' other numbers never equal these). */
static const struct { const char *file, *from, *to; } k_smoke_sizes[] = {
    {"chain9.hlo", "16777216", "65536"},     {"softmax.hlo", "4096", "256"},
    {"gemm_1024.hlo", "1024", "64"},         {"dense_relu_1024.hlo", "1024", "64"},
    {"softmax_1024.hlo", "1024", "64"},      {"layernorm.hlo", "4096", "256"},
    {"softmax_xent.hlo", "4096", "256"},
};

static char smoke_dir[64];

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Writes the rewritten copy of dir/name into smoke_dir; returns its path, or NULL. */
static const char *smoke_copy(const char *dir, const char *name, char *out, size_t n) {
  if (!smoke_dir[0]) {
    snprintf(smoke_dir, sizeof smoke_dir, "/tmp/cxla-bench-smoke.XXXXXX");
    if (!mkdtemp(smoke_dir)) return smoke_dir[0] = 0, NULL;
  }
  char src[512];
  snprintf(src, sizeof src, "%s/%s", dir, name);
  size_t len;
  char *text = bu_read_text(src, &len);
  if (!text) return NULL;
  snprintf(out, n, "%s/%s", smoke_dir, name);
  FILE *f = fopen(out, "w");
  if (!f) return free(text), NULL;
  for (size_t i = 0; i < len;) {
    const char *to = NULL;
    size_t fl = 0;
    for (size_t k = 0; !to && k < sizeof k_smoke_sizes / sizeof k_smoke_sizes[0]; k++) {
      fl = strlen(k_smoke_sizes[k].from);
      if (!strcmp(k_smoke_sizes[k].file, name) && !strncmp(text + i, k_smoke_sizes[k].from, fl) &&
          (i == 0 || !is_digit(text[i - 1])) && !is_digit(text[i + fl]))
        to = k_smoke_sizes[k].to;
    }
    if (to) fputs(to, f), i += fl;
    else fputc(text[i++], f);
  }
  free(text);
  return fclose(f) ? NULL : out;
}

char *hlo_path(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  if (!cfg.smoke || !smoke_copy(cfg.hlo_dir, name, p, 512)) snprintf(p, 512, "%s/%s", cfg.hlo_dir, name);
  return p;
}

static void smoke_cleanup(void) {
  if (!smoke_dir[0]) return;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", smoke_dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", smoke_dir);
}

cxla_context *new_context(void) {
  cxla_context *ctx = NULL;
  if (cxla_context_create(&ctx) != CXLA_OK) {
    fprintf(stderr, "bench: cannot create a context%s%s\n", ctx ? ": " : "", ctx ? cxla_context_errmsg(ctx) : "");
    cxla_context_destroy(ctx);
    return NULL;
  }
  return ctx;
}

/* The 1-minute load average: other processes on this shared machine take cores from both sides. */
static double loadavg(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

static int wanted(const char *group) {
  if (!cfg.only) return 1;
  size_t n = strlen(group);
  for (const char *p = cfg.only; (p = strstr(p, group)); p += n)
    if ((p == cfg.only || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *spin = bu_bound_peer_spin(argv);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "--threads=", 10)) cfg.threads = atoi(a + 10);
    else if (!strncmp(a, "--rounds=", 9)) cfg.rounds = atoi(a + 9);
    else if (!strncmp(a, "--gap-us=", 9)) cfg.gap_us = atoi(a + 9);
    else if (!strncmp(a, "--only=", 7)) cfg.only = a + 7;
    else if (!strncmp(a, "--hlo=", 6)) cfg.hlo_dir = a + 6;
    else if (!strncmp(a, "--label=", 8)) cfg.label = a + 8;
    else if (!strcmp(a, "--smoke")) cfg.smoke = 1;
    else if (!strcmp(a, "--clock=thread-cpu")) cfg.thread_clock = 1;
    else {
      fprintf(stderr, "usage: bench_main [--threads=N] [--rounds=N] [--gap-us=N] [--only=GROUP,...] [--hlo=DIR] [--label=TEXT] [--smoke]\n"
                      "                  [--clock=thread-cpu (with --threads=1)]\n"
                      "groups: chain9 softmax gemm dense mlp scaling alloc compile\n");
      return 2;
    }
  }
  if (cfg.threads <= 0) cfg.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (cfg.thread_clock && cfg.threads != 1) {
    fprintf(stderr, "bench_main: --clock=thread-cpu times the calling thread only: it needs --threads=1\n");
    return 2;
  }
  bu_use_thread_clock(cfg.thread_clock);
  if (cfg.smoke) cfg.rounds = 3;
  if (cfg.rounds < 3) cfg.rounds = 3;
  if (cfg.rounds > 256) cfg.rounds = 256;
  set_all_threads(cfg.threads);

  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  printf("cxla benchmarks, %s; %d thread%s for cxla, OpenMP and OpenBLAS (%ld CPUs online); %d rounds, %d us gap%s\n",
         date, cfg.threads, cfg.threads == 1 ? "" : "s", sysconf(_SC_NPROCESSORS_ONLN), cfg.rounds, cfg.gap_us,
         cfg.thread_clock ? "; calls timed by the thread's CPU time" : "");
  printf("OpenBLAS: %s\npeers' idle spin: %s\nload average at start: %.2f\n", openblas_get_config(), spin, loadavg());
  fflush(stdout);

  struct { const char *name; void (*fn)(void); } groups[] = {
      {"chain9", group_chain9}, {"softmax", group_softmax}, {"gemm", group_gemm}, {"dense", group_dense},
      {"mlp", group_mlp},       {"scaling", group_scaling}, {"alloc", group_alloc},     {"compile", group_compile},
      {"diskcache", group_disk_cache},
  };
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
    if (!wanted(groups[i].name)) continue;
    int before = nfailures;
    groups[i].fn();
    if (nfailures == before) passed++;
    else failed++;
    if (cfg.smoke) printf("%s %s (smoke)\n", nfailures == before ? "ok  " : "FAIL", groups[i].name);
  }
  printf("\nload average at end: %.2f (1-minute; %d CPUs)\n", loadavg(), (int)sysconf(_SC_NPROCESSORS_ONLN));
  print_table();
  smoke_cleanup();
  if (cfg.smoke) printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
