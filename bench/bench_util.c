/* bench_util.c — see bench_util.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"

const char *bu_bound_peer_spin(char **argv) {
  static char line[160];
  if (!getenv("CXLA_BENCH_SPIN_SET")) {
    setenv("GOMP_SPINCOUNT", "8000", 0);
    setenv("OPENBLAS_THREAD_TIMEOUT", "19", 0);
    setenv("CXLA_BENCH_SPIN_SET", "1", 1);
    execv("/proc/self/exe", argv);
    perror("bench: execv /proc/self/exe (the peers keep their default spin)");
  }
  snprintf(line, sizeof line, "GOMP_SPINCOUNT=%s OPENBLAS_THREAD_TIMEOUT=%s",
           getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "(default)",
           getenv("OPENBLAS_THREAD_TIMEOUT") ? getenv("OPENBLAS_THREAD_TIMEOUT") : "(default)");
  return line;
}

double bu_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double bu_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_us(int us) {
  if (us <= 0) return;
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int dead(const bu_contender *c) { return c->failed || (c->fail_flag && *c->fail_flag); }

static int thread_clock; /* bu_use_thread_clock */

void bu_use_thread_clock(int on) { thread_clock = on; }

/* The calling thread's CPU time: not advanced while other processes hold the core. */
static double thread_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double sample_clock_ms(void) { return thread_clock ? thread_ms() : bu_now_ms(); }

/* k calls, each timed on its own; the after hook runs between them, untimed. */
static void sample(bu_contender *c) {
  for (int i = 0; i < c->k && !dead(c); i++) {
    double t0 = sample_clock_ms();
    c->fn(c->arg);
    double t = sample_clock_ms() - t0;
    if (c->after) c->after(c->arg);
    if (!dead(c)) c->samples[c->n++] = t;
  }
}

void bu_interleave(bu_contender *c, int nc, const bu_opts *o) {
  int rounds = o->rounds < 1 ? 1 : o->rounds;
  for (int i = 0; i < nc; i++) {
    c[i].n = 0;
    c[i].k = 1;
    c[i].samples = NULL;
    if (dead(&c[i])) continue;
    double t0 = bu_now_ms(), one = INFINITY;
    int calls = 0;
    while (!dead(&c[i]) && (calls < 2 || bu_now_ms() - t0 < o->warmup_ms)) {
      double s = bu_now_ms();
      c[i].fn(c[i].arg);
      one = fmin(one, bu_now_ms() - s); /* the fastest call: one slow outlier must not set k */
      if (c[i].after) c[i].after(c[i].arg);
      calls++;
    }
    if (one > 0 && one < o->min_sample_ms && isfinite(one)) c[i].k = (int)ceil(o->min_sample_ms / one);
    if (c[i].k > 10000) c[i].k = 10000;
    if (!(c[i].samples = malloc(sizeof(double) * (size_t)c[i].k * (size_t)rounds))) c[i].failed = 1;
  }
  for (int r = 0; r < rounds; r++)
    for (int j = 0; j < nc; j++) {
      bu_contender *x = &c[(j + r) % nc];
      if (dead(x)) continue;
      sleep_us(o->gap_us);
      sample(x);
    }
  for (int i = 0; i < nc; i++) {
    if (dead(&c[i]) || !c[i].n) {
      c[i].failed = 1;
      c[i].best = c[i].median = c[i].worst = NAN;
      continue;
    }
    int n = c[i].n;
    double *s = malloc(sizeof(double) * (size_t)n);
    if (!s) {
      c[i].failed = 1;
      continue;
    }
    memcpy(s, c[i].samples, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    c[i].best = s[0];
    c[i].worst = s[n - 1];
    c[i].median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
  }
}

void bu_contenders_free(bu_contender *c, int nc) {
  for (int i = 0; i < nc; i++) {
    free(c[i].samples);
    c[i].samples = NULL;
  }
}

/* ---- cxla ---- */

char *bu_read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) { free(buf); fclose(f); return NULL; }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void bu_fill(float *p, int64_t n, uint64_t seed, float lo, float hi) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (int64_t i = 0; i < n; i++) p[i] = lo + (hi - lo) * (float)((double)(splitmix(&s) >> 40) / 16777216.0);
}

cxla_literal *bu_literal(cxla_context *ctx, int rank, const int64_t *dims, uint64_t seed, float lo, float hi) {
  cxla_literal *l = cxla_literal_create(ctx, CXLA_F32, rank, dims);
  if (l) bu_fill(cxla_literal_data(l), cxla_literal_element_count(l), seed, lo, hi);
  return l;
}

double bu_max_err_at(const float *a, const float *b, int64_t n, double atol, double tol, int64_t *where,
                     int64_t *nbad) {
  double worst = 0;
  int64_t at = -1, bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)b[i]) / (atol + fabs((double)b[i]));
    if (!(e <= tol)) bad++;
    if (!(e <= worst)) worst = e, at = i; /* NaN sticks */
  }
  if (where) *where = at;
  if (nbad) *nbad = bad;
  return worst;
}

double bu_max_err(const float *a, const float *b, int64_t n, double atol) {
  return bu_max_err_at(a, b, n, atol, INFINITY, NULL, NULL);
}

/* Seeded values in [-1, 1) for a parameter of any array type (integers get 0..3: a step's
 * optimizer count); f32 ones are exactly bu_literal's. */
static cxla_literal *typed_literal(cxla_context *ctx, const cxla_shape *sh, uint64_t seed) {
  if (sh->type == CXLA_F32) return bu_literal(ctx, sh->rank, sh->dims, seed, -1, 1);
  cxla_literal *l = cxla_literal_create(ctx, sh->type, sh->rank, sh->dims);
  if (!l) return NULL;
  int64_t n = cxla_literal_element_count(l);
  float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (!v) {
    cxla_literal_destroy(l);
    return NULL;
  }
  bu_fill(v, n, seed, -1, 1);
  int fl = sh->type == CXLA_F16 || sh->type == CXLA_BF16 || sh->type == CXLA_F64;
  for (int64_t i = 0; i < n; i++) cxla_literal_set_f64(l, i, fl ? v[i] : floor(((double)v[i] + 1) * 2));
  free(v);
  return l;
}

int bu_cxla_open(bu_cxla *b, cxla_context *ctx, const char *path, const char *flags, int threads, int opt_level,
                 cxla_literal *const *inputs) {
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  b->failed = 1;
  snprintf(b->path, sizeof b->path, "%s", path);
  size_t len;
  char *text = bu_read_text(path, &len);
  if (!text) {
    fprintf(stderr, "bench: cannot read %s\n", path);
    return 1;
  }
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse(ctx, text, len, path, &m);
  free(text);
  if (s == CXLA_OK && flags) s = cxla_context_set_flags(ctx, flags);
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  o.threads = threads;
  o.opt_level = opt_level;
  if (s == CXLA_OK) {
    double t0 = bu_now_ms(), c0 = bu_cpu_ms();
    s = cxla_compile(m, &o, &b->e);
    b->compile_ms = bu_now_ms() - t0;
    b->compile_cpu_ms = bu_cpu_ms() - c0;
  }
  if (s == CXLA_OK) snprintf(b->stats, sizeof b->stats, "%s", cxla_executable_compile_stats(b->e));
  if (s == CXLA_OK) {
    b->nargs = cxla_module_num_parameters(m);
    if (b->nargs > BU_MAX_ARGS) s = CXLA_ERR_UNSUPPORTED;
  }
  for (int i = 0; s == CXLA_OK && i < b->nargs; i++) {
    cxla_shape sh;
    s = cxla_module_parameter_shape(m, i, &sh);
    cxla_literal *lit = NULL;
    if (s == CXLA_OK) lit = inputs && inputs[i] ? inputs[i] : typed_literal(ctx, &sh, 1000 + (uint64_t)i);
    if (s == CXLA_OK && !lit) s = CXLA_ERR_OUT_OF_MEMORY;
    if (s == CXLA_OK) s = cxla_buffer_from_literal(ctx, "cpu", lit, &b->args[i]);
    if (lit && !(inputs && inputs[i])) cxla_literal_destroy(lit);
  }
  cxla_module_destroy(m);
  if (s != CXLA_OK) {
    fprintf(stderr, "bench: %s: %s: %s\n", path, cxla_status_str(s), cxla_context_errmsg(ctx));
    bu_cxla_close(b);
    b->failed = 1;
    return 1;
  }
  b->failed = 0;
  return 0;
}

void bu_cxla_close(bu_cxla *b) {
  cxla_buffer_destroy(b->result);
  for (int i = 0; i < b->nargs && i < BU_MAX_ARGS; i++) cxla_buffer_destroy(b->args[i]);
  cxla_executable_destroy(b->e);
  memset(b->args, 0, sizeof b->args);
  b->result = NULL;
  b->e = NULL;
}

void bu_cxla_call(void *p) {
  bu_cxla *b = p;
  if (b->failed) return;
  cxla_buffer_destroy(b->result);
  b->result = NULL;
  cxla_status s = cxla_executable_execute(b->e, b->nargs, b->args, &b->result);
  if (s != CXLA_OK) {
    fprintf(stderr, "bench: execute: %s: %s\n", cxla_status_str(s), cxla_context_errmsg(b->ctx));
    b->failed = 1;
  }
}

void bu_cxla_release(void *p) {
  bu_cxla *b = p;
  cxla_buffer_destroy(b->result);
  b->result = NULL;
}

const float *bu_cxla_result_f32(bu_cxla *b, cxla_literal **hold) { return bu_cxla_result_leaf_f32(b, -1, hold); }

const float *bu_cxla_result_leaf_f32(bu_cxla *b, int leaf, cxla_literal **hold) {
  *hold = NULL;
  if (b->failed) return NULL;
  if (!b->result) bu_cxla_call(b);
  if (!b->result || cxla_buffer_to_literal(b->result, hold) != CXLA_OK) return NULL;
  cxla_literal *l = leaf < 0 ? *hold : leaf < cxla_literal_tuple_size(*hold) ? cxla_literal_tuple_get(*hold, leaf) : NULL;
  if (!l || cxla_literal_type(l) != CXLA_F32) return NULL;
  return cxla_literal_data(l);
}
