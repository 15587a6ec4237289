/* bench_vecmath_f64.c — cxla's f64 sin, cos, tan, pow, atan2, cbrt, erf, tanh, expm1 and log1p
 * on the cpu backend with --cpu-libmvec=on (glibc's libmvec in the vectorised loops, the
 * default) against --cpu-libmvec=off (scalar libm, the code before), one thread each, in one
 * run: the median (best) time over interleaved rounds on N elements, and the max error in ulps
 * of f64 of both and of libm called directly, against long double libm (x87, 11 more bits: the
 * reference is good to about 1/1000 ulp). Errors over three sweeps of N points: uniform on the
 * function's range, random bit patterns (every exponent; NaN and inf must match the
 * reference's class), and dense. Exits 1 if cxla is above docs/numerics.md's bound (4 ulp) or
 * a special value differs. Built by bench/build.sh (x86_64 with AVX2 only).
 * Usage: bench_vecmath_f64 [N (default 4194304)] [rounds (default 5)] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cxla.h"

typedef struct op {
  const char *name, *hlo_op;
  double (*f1)(double);
  double (*f2)(double, double);
  long double (*l1)(long double);
  long double (*l2)(long double, long double);
  double lo, hi, ylo, yhi; /* the uniform sweep's x (and y) range */
} op;

static const op k_ops[] = {
  {"sin", "sine", sin, NULL, sinl, NULL, -100, 100, 0, 0},
  {"cos", "cosine", cos, NULL, cosl, NULL, -100, 100, 0, 0},
  {"tan", "tan", tan, NULL, tanl, NULL, -100, 100, 0, 0},
  {"pow", "power", NULL, pow, NULL, powl, 0, 16, -40, 40},
  {"atan2", "atan2", NULL, atan2, NULL, atan2l, -10, 10, -10, 10},
  {"cbrt", "cbrt", cbrt, NULL, cbrtl, NULL, -1000, 1000, 0, 0},
  {"erf", "erf", erf, NULL, erfl, NULL, -6, 6, 0, 0},
  {"tanh", "tanh", tanh, NULL, tanhl, NULL, -20, 20, 0, 0},
  {"expm1", "exponential-minus-one", expm1, NULL, expm1l, NULL, -40, 700, 0, 0},
  {"log1p", "log-plus-one", log1p, NULL, log1pl, NULL, -1, 100, 0, 0},
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static uint64_t g_rng = 88172645463325252ull;
static uint64_t next(void) { /* xorshift64 */
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return g_rng;
}
static double unit(void) { return (double)(next() >> 11) * 0x1p-53; }

/* |got - ref| in ulps of f64 at ref; non-finite results must be the reference's */
static double ulps(double got, long double ref) {
  double r = (double)ref;
  if (isnan(r) || isnan(got)) return isnan(r) && isnan(got) ? 0 : INFINITY;
  if (isinf(r) || isinf(got)) return got == r ? 0 : INFINITY;
  if (got == 0 && r == 0) return signbit(got) == signbit(r) ? 0 : INFINITY;
  int e;
  frexpl(ref, &e);
  if (e - 53 < -1074) e = -1074 + 53; /* denormal results: the ulp is 2^-1074 */
  return (double)(fabsl((long double)got - ref) / ldexpl(1.0L, e - 53));
}

typedef struct cx_run {
  cxla_executable *e;
  cxla_buffer *args[2];
  int nargs;
} cx_run;

static int cx_prepare(cxla_context *ctx, const op *o, const char *flags, long n, cx_run *r) {
  char text[512], second[64] = "";
  int bin = o->f2 != NULL;
  if (bin) snprintf(second, sizeof second, " b = f64[%ld] parameter(1)\n", n);
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f64[%ld] parameter(0)\n%s ROOT r = f64[%ld] %s(a%s)\n}\n", n,
           second, n, o->hlo_op, bin ? ", b" : "");
  cxla_module *m = NULL;
  cxla_compile_options opts;
  cxla_compile_options_init(&opts);
  opts.backend = "cpu";
  opts.threads = 1;
  r->nargs = 1 + bin;
  int bad = cxla_context_set_flags(ctx, flags) != CXLA_OK ||
            cxla_module_parse(ctx, text, strlen(text), "bench_vecmath_f64", &m) != CXLA_OK ||
            cxla_compile(m, &opts, &r->e) != CXLA_OK;
  cxla_module_destroy(m);
  if (bad) fprintf(stderr, "bench_vecmath_f64: %s: %s\n", o->name, cxla_context_errmsg(ctx));
  return bad ? -1 : 0;
}

/* the inputs of the next calls */
static int cx_set(cxla_context *ctx, cx_run *r, const double *x, const double *y, long n) {
  int64_t dims[1] = {n};
  for (int i = 0; i < r->nargs; i++) {
    if (r->args[i]) cxla_buffer_destroy(r->args[i]);
    r->args[i] = NULL;
    if (cxla_buffer_from_data(ctx, "cpu", CXLA_F64, 1, dims, i ? y : x, (size_t)n * 8, &r->args[i]) != CXLA_OK) return -1;
  }
  return 0;
}

static int cx_call(cx_run *r, double *out, long n) {
  cxla_buffer *res = NULL;
  if (cxla_executable_execute(r->e, r->nargs, r->args, &res) != CXLA_OK) return -1;
  memcpy(out, cxla_buffer_data(res), (size_t)n * 8);
  cxla_buffer_destroy(res);
  return 0;
}

static void fill(const op *o, int sweep, double *x, double *y, long n) {
  for (long i = 0; i < n; i++) {
    if (sweep == 0) {
      x[i] = o->lo + (o->hi - o->lo) * unit(), y[i] = o->ylo + (o->yhi - o->ylo) * unit();
    } else if (sweep == 1) {
      uint64_t u = next(), v = next();
      memcpy(&x[i], &u, 8), memcpy(&y[i], &v, 8);
    } else {
      x[i] = o->lo + (o->hi - o->lo) * (double)i / (double)n, y[i] = o->ylo + (o->yhi - o->ylo) * (double)(i % 997) / 997;
    }
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4194304;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 8 || rounds < 1) {
    fprintf(stderr, "usage: bench_vecmath_f64 [N >= 8] [rounds >= 1]\n");
    return 2;
  }
  double *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8), *out = malloc((size_t)n * 8);
  cxla_context *ctx = NULL;
  if (!x || !y || !out || cxla_context_create(&ctx) != CXLA_OK) return 2;
  int bad = 0;
  printf("%ld f64 elements, one thread each, %d rounds; time median (best) ms; max error in ulps vs long double\n", n, rounds);
  printf("%-6s %22s %22s %9s  %10s %10s %10s\n", "op", "cxla libmvec (after)", "cxla libm (before)", "ratio", "ulp after",
         "ulp before", "ulp libm");
  for (size_t k = 0; k < sizeof k_ops / sizeof *k_ops; k++) {
    const op *o = &k_ops[k];
    cx_run on = {0}, off = {0};
    if (cx_prepare(ctx, o, "--cpu-libmvec=on", n, &on) || cx_prepare(ctx, o, "--cpu-libmvec=off", n, &off)) return 1;
    double err[3] = {0, 0, 0};
    for (int sweep = 0; sweep < 3; sweep++) {
      fill(o, sweep, x, y, n);
      for (int c = 0; c < 3; c++) {
        if (c < 2 && (cx_set(ctx, c ? &off : &on, x, y, n) || cx_call(c ? &off : &on, out, n))) {
          fprintf(stderr, "bench_vecmath_f64: %s: %s\n", o->name, cxla_context_errmsg(ctx));
          return 1;
        }
        for (long i = 0; i < n; i++) {
          if (c == 2) out[i] = o->f2 ? o->f2(x[i], y[i]) : o->f1(x[i]);
          long double ref = o->l2 ? o->l2(x[i], y[i]) : o->l1(x[i]);
          double e = ulps(out[i], ref);
          if (!(e <= err[c])) err[c] = e;
        }
      }
    }
    /* timing on the first sweep's kind of inputs */
    fill(o, 0, x, y, n);
    if (cx_set(ctx, &on, x, y, n) || cx_set(ctx, &off, x, y, n)) return 1;
    double *t[2];
    for (int c = 0; c < 2; c++) t[c] = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++)
      for (int c = 0; c < 2; c++) {
        int who = (c + r) % 2;
        double t0 = now_ms();
        if (cx_call(who ? &off : &on, out, n)) return 1;
        t[who][r] = now_ms() - t0;
      }
    double med[2], best[2];
    for (int c = 0; c < 2; c++) {
      qsort(t[c], (size_t)rounds, sizeof(double), cmp_d);
      med[c] = t[c][rounds / 2], best[c] = t[c][0];
      free(t[c]);
    }
    printf("%-6s %10.2f (%8.2f) %10.2f (%8.2f) %4.2f (%4.2f) %10.3g %10.3g %10.3g\n", o->name, med[0], best[0], med[1],
           best[1], med[1] / med[0], best[1] / best[0], err[0], err[1], err[2]);
    if (!(err[0] <= 4)) {
      fprintf(stderr, "bench_vecmath_f64: %s: cxla is %g ulps off, docs/numerics.md says at most 4\n", o->name, err[0]);
      bad = 1;
    }
    for (int c = 0; c < 2; c++) {
      cx_run *r = c ? &off : &on;
      for (int i = 0; i < r->nargs; i++)
        if (r->args[i]) cxla_buffer_destroy(r->args[i]);
      cxla_executable_destroy(r->e);
    }
  }
  cxla_context_destroy(ctx);
  free(x), free(y), free(out);
  return bad;
}
