/* allreduce.c — all-reduce bus bandwidth of cxla's cpu backend against MPI_Allreduce called
 * directly, across message sizes, on the ranks of one MPI job (bench/allreduce.sh builds and
 * runs it under mpirun). Both sum the same f32 array in place of a fresh result; the two run in
 * turns (cxla, MPI, cxla, ...) after a warm-up, each call timed on its own, the median of each
 * kept; bus bandwidth is 2(n-1)/n * bytes / time, the measure NCCL's tests use. cxla runs on
 * the application's communicator (cxla_context_set_communicator), as an application that
 * already uses MPI would embed it. Its result is checked against MPI's (the order MPI sums in
 * is not cxla's, so to a tolerance; cxla's is the same on every rank bit for bit). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cxla.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(cxla_context *ctx, const char *what) {
  fprintf(stderr, "allreduce: %s: %s\n", what, cxla_context_errmsg(ctx));
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 15, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cxla_context *ctx;
  if (cxla_context_create(&ctx) != CXLA_OK) return fail(ctx, "context");
  MPI_Comm comm = MPI_COMM_WORLD;
  if (cxla_context_set_communicator(ctx, &comm) != CXLA_OK) return fail(ctx, "communicator");
  if (rank == 0)
    printf("| bytes | cxla | MPI_Allreduce | cxla / MPI (bus bandwidth) | max diff / max |\n|---|---|---|---|---|\n");
  for (long bytes = 4096; bytes <= (16l << 20); bytes *= 4) {
    long n = bytes / 4;
    char text[512];
    snprintf(text, sizeof text,
             "HloModule ar\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
             "ENTRY e {\n  x = f32[%ld] parameter(0)\n  ROOT r = f32[%ld] all-reduce(x), replica_groups={}, to_apply=sum\n}\n",
             n, n);
    cxla_module *m;
    cxla_executable *e;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = "cpu";
    if (cxla_module_parse(ctx, text, strlen(text), "ar.hlo", &m) != CXLA_OK) return fail(ctx, "parse");
    if (cxla_compile(m, &o, &e) != CXLA_OK) return fail(ctx, "compile");
    float *x = malloc((size_t)bytes), *y = malloc((size_t)bytes);
    for (long i = 0; i < n; i++) x[i] = (float)sin(0.001 * (double)i * (rank + 1));
    int64_t dims[1] = {n};
    cxla_buffer *arg;
    if (cxla_buffer_wrap(ctx, "cpu", CXLA_F32, 1, dims, x, (size_t)bytes, &arg) != CXLA_OK) return fail(ctx, "wrap");
    double tc[64], tm[64];
    int r = rounds > 64 ? 64 : rounds;
    double diff = 0;
    for (int k = -2; k < r; k++) { /* two warm-up rounds */
      cxla_buffer *res = NULL;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_s();
      if (cxla_executable_execute(e, 1, &arg, &res) != CXLA_OK) return fail(ctx, "execute");
      double t1 = now_s();
      MPI_Barrier(MPI_COMM_WORLD);
      double t2 = now_s();
      MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t3 = now_s();
      if (k >= 0) tc[k] = t1 - t0, tm[k] = t3 - t2;
      const float *got = cxla_buffer_data(res);
      double big = 1e-30; /* norm-wise: sums that cancel to near 0 differ relatively a lot */
      for (long i = 0; k == r - 1 && i < n; i++) big = fmax(big, fabs((double)y[i]));
      for (long i = 0; k == r - 1 && i < n; i++) diff = fmax(diff, fabs((double)got[i] - y[i]) / big);
      cxla_buffer_destroy(res);
    }
    qsort(tc, (size_t)r, sizeof *tc, cmp);
    qsort(tm, (size_t)r, sizeof *tm, cmp);
    double bus = 2.0 * (size - 1) / size * (double)bytes;
    if (rank == 0)
      printf("| %ld | %.1f us, %.2f GB/s | %.1f us, %.2f GB/s | %.2f | %.1e |\n", bytes, tc[r / 2] * 1e6,
             bus / tc[r / 2] / 1e9, tm[r / 2] * 1e6, bus / tm[r / 2] / 1e9, tm[r / 2] / tc[r / 2], diff);
    if (!(diff <= 1e-5)) wrong = 1, fprintf(stderr, "allreduce: %ld bytes: cxla differs from MPI_Allreduce by %.1e\n", bytes, diff);
    cxla_buffer_destroy(arg);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
    free(x);
    free(y);
  }
  cxla_context_destroy(ctx);
  MPI_Finalize();
  return wrong;
}
