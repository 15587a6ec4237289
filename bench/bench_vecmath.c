/* bench_vecmath.c — cxla's vectorised f32 sin, cos, tan and pow against glibc's libmvec (the
 * AVX2 variants _ZGVdN8v_sinf & co., the vector math library gcc calls under -ffast-math) and
 * against scalar libm in double rounded to f32 (the interpreter's value, and cxla's code before
 * issue 22), on the same inputs, one thread each, in one run. For each: the best and median
 * time over interleaved rounds and the max error in ulps of the f32 result, measured against
 * libm in double (0.5: correctly rounded). Exits 1 if cxla's error exceeds docs/numerics.md's
 * bound (1 ulp) or a result disagrees. Built by bench/build.sh (x86_64 with AVX2 only).
 * Usage: bench_vecmath [N (default 4194304)] [rounds (default 7)] */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cxla.h"

__m256 _ZGVdN8v_sinf(__m256 x);
__m256 _ZGVdN8v_cosf(__m256 x);
__m256 _ZGVdN8v_tanf(__m256 x);
__m256 _ZGVdN8vv_powf(__m256 x, __m256 y);

typedef struct op {
  const char *name, *hlo_op;
  int binary;
  double (*ref)(double);
  double (*ref2)(double, double);
  __m256 (*mvec)(__m256);
  __m256 (*mvec2)(__m256, __m256);
} op;

static const op k_ops[] = {
  {"sin", "sine", 0, sin, NULL, _ZGVdN8v_sinf, NULL},
  {"cos", "cosine", 0, cos, NULL, _ZGVdN8v_cosf, NULL},
  {"tan", "tan", 0, tan, NULL, _ZGVdN8v_tanf, NULL},
  {"pow", "power", 1, NULL, pow, NULL, _ZGVdN8vv_powf},
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double ref_of(const op *o, float x, float y) {
  return o->binary ? o->ref2(x, y) : o->ref(x);
}

/* |got - want| in ulps of want rounded to f32; non-finite results must match */
static double ulps(float got, double want) {
  float w = (float)want;
  if (!isfinite(w)) return (got == w || (isnan(got) && isnan(w))) ? 0 : INFINITY;
  double ulp = nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return fabs((double)got - want) / ulp;
}

static void run_libm(const op *o, const float *x, const float *y, float *out, long n) {
  for (long i = 0; i < n; i++) out[i] = (float)ref_of(o, x[i], y[i]);
}

static void run_mvec(const op *o, const float *x, const float *y, float *out, long n) {
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 a = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(out + i, o->binary ? o->mvec2(a, _mm256_loadu_ps(y + i)) : o->mvec(a));
  }
  for (; i < n; i++) out[i] = (float)ref_of(o, x[i], y[i]);
}

typedef struct cx_run {
  cxla_executable *e;
  cxla_buffer *args[2];
  int nargs;
} cx_run;

static int cx_prepare(cxla_context *ctx, const op *o, const float *x, const float *y, long n, cx_run *r) {
  char text[512], second[64] = "";
  if (o->binary) snprintf(second, sizeof second, " b = f32[%ld] parameter(1)\n", n);
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f32[%ld] parameter(0)\n%s ROOT r = f32[%ld] %s(a%s)\n}\n",
           n, second, n, o->hlo_op, o->binary ? ", b" : "");
  cxla_module *m = NULL;
  cxla_compile_options opts;
  cxla_compile_options_init(&opts);
  opts.backend = "cpu";
  opts.threads = 1;
  int64_t dims[1] = {n};
  r->nargs = 1 + o->binary;
  if (cxla_module_parse(ctx, text, strlen(text), "bench_vecmath", &m) != CXLA_OK || cxla_compile(m, &opts, &r->e) != CXLA_OK ||
      cxla_buffer_from_data(ctx, "cpu", CXLA_F32, 1, dims, x, (size_t)n * 4, &r->args[0]) != CXLA_OK ||
      (o->binary && cxla_buffer_from_data(ctx, "cpu", CXLA_F32, 1, dims, y, (size_t)n * 4, &r->args[1]) != CXLA_OK)) {
    fprintf(stderr, "bench_vecmath: %s: %s\n", o->name, cxla_context_errmsg(ctx));
    cxla_module_destroy(m);
    return -1;
  }
  cxla_module_destroy(m);
  return 0;
}

static int cx_call(cx_run *r, float *out, long n) {
  cxla_buffer *res = NULL;
  if (cxla_executable_execute(r->e, r->nargs, r->args, &res) != CXLA_OK) return -1;
  memcpy(out, cxla_buffer_data(res), (size_t)n * 4);
  cxla_buffer_destroy(res);
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4194304;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  if (n < 8 || rounds < 1) {
    fprintf(stderr, "usage: bench_vecmath [N >= 8] [rounds >= 1]\n");
    return 2;
  }
  float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
  cxla_context *ctx = NULL;
  if (!x || !y || !out || cxla_context_create(&ctx) != CXLA_OK) return 2;
  srand(1);
  int bad = 0;
  printf("%ld f32 elements, one thread each, %d rounds; time median (best), error in ulps vs libm in double\n", n, rounds);
  printf("%-4s %26s %26s %26s   libmvec/cxla  libm/cxla\n", "op", "cxla", "libmvec AVX2", "libm (double)");
  for (size_t k = 0; k < sizeof k_ops / sizeof *k_ops; k++) {
    const op *o = &k_ops[k];
    for (long i = 0; i < n; i++) {
      double u = rand() / (double)RAND_MAX;
      x[i] = o->binary ? (float)(10.0 * u) : (float)(200.0 * u - 100.0);
      y[i] = (float)(16.0 * (rand() / (double)RAND_MAX) - 8.0);
    }
    cx_run cr = {0};
    if (cx_prepare(ctx, o, x, y, n, &cr)) return 1;
    double *t[3], err[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) t[c] = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
      for (int c = 0; c < 3; c++) {
        int who = (c + r) % 3; /* rotate the order */
        double t0 = now_ms();
        if (who == 0 && cx_call(&cr, out, n)) {
          fprintf(stderr, "bench_vecmath: %s: %s\n", o->name, cxla_context_errmsg(ctx));
          return 1;
        }
        if (who == 1) run_mvec(o, x, y, out, n);
        if (who == 2) run_libm(o, x, y, out, n);
        t[who][r] = now_ms() - t0;
        if (r == 0)
          for (long i = 0; i < n; i++) {
            double e = ulps(out[i], ref_of(o, x[i], y[i]));
            if (!(e <= err[who])) err[who] = e;
          }
      }
    }
    double med[3], best[3];
    for (int c = 0; c < 3; c++) {
      qsort(t[c], (size_t)rounds, sizeof(double), cmp_d);
      med[c] = t[c][rounds / 2], best[c] = t[c][0];
    }
    printf("%-4s", o->name);
    for (int c = 0; c < 3; c++) printf("  %7.2f ms (%6.2f) %5.3g ulp", med[c], best[c], err[c]);
    printf("   %6.2f (%4.2f)  %5.2f (%4.2f)\n", med[1] / med[0], best[1] / best[0], med[2] / med[0], best[2] / best[0]);
    if (!(err[0] <= 1)) {
      fprintf(stderr, "bench_vecmath: %s: cxla is %g ulps off, docs/numerics.md says at most 1\n", o->name, err[0]);
      bad = 1;
    }
    for (int c = 0; c < 3; c++) free(t[c]);
    cxla_buffer_destroy(cr.args[0]);
    if (cr.args[1]) cxla_buffer_destroy(cr.args[1]);
    cxla_executable_destroy(cr.e);
  }
  cxla_context_destroy(ctx);
  free(x), free(y), free(out);
  return bad;
}
