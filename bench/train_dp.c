/* train_dp.c — scaling of the data-parallel MLP training step (examples/train's MLP
 * 784-128-64-10, Adam, docs/train.md) from one process to N under mpirun, at the same global
 * batch B (bench/train_dp.sh builds and runs it). Four contenders, each step timed on its own,
 * in turns (the order rotated every round), so all see the machine in the same state:
 *   dp      every rank runs the step on its B/N examples with replicas = N (the all-reduce of
 *           the gradients inside), on one thread (--threads=1);
 *   half    every rank runs the step on B/N examples without the all-reduce: dp's compute
 *           alone, so dp - half is what the all-reduce and the wait for the slower rank cost;
 *   one/1   rank 0 alone runs the step on all B examples on one thread, the others asleep;
 *   one/T   the same on T threads (--threads=T, T = N: the cores the N ranks use).
 * The step time is rank 0's, from the call to its return (for dp: until the all-reduce has
 * every rank's part). The batch is random: the speed of a step does not depend on the values. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "train.h"

enum { DP, HALF, ONE1, ONET, NKIND, MAXB = 3 * MAX_WEIGHTS + 1 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void fail(cxla_context *ctx, const char *what) {
  fprintf(stderr, "train_dp: %s: %s\n", what, ctx ? cxla_context_errmsg(ctx) : "");
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

/* One contender: its step executable and the weights and Adam state it updates. */
typedef struct {
  cxla_context *ctx;
  cxla_executable *e;
  int nbufs;
  int64_t batch;
  cxla_buffer *bufs[MAXB];
  double *t;
} runner;

static void open_runner(runner *r, const char *flags, int64_t batch, int replicas, int rounds, int comm) {
  const model_spec *spec = model_get(MODEL_MLP);
  char err[512];
  memset(r, 0, sizeof *r);
  r->batch = batch;
  if (cxla_context_create(&r->ctx) != CXLA_OK || cxla_context_set_flags(r->ctx, flags) != CXLA_OK) fail(r->ctx, flags);
  MPI_Comm world = MPI_COMM_WORLD;
  if (comm && cxla_context_set_communicator(r->ctx, &world) != CXLA_OK) fail(r->ctx, "communicator");
  cxla_module *loss = model_build(r->ctx, spec, batch, 1, err, sizeof err), *step = NULL;
  if (!loss) fail(NULL, err);
  int wrt[MAX_WEIGHTS];
  for (int i = 0; i < spec->nweights; i++) wrt[i] = i;
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
  o.replicas = replicas;
  if (cxla_module_train_step(loss, wrt, spec->nweights, &o, &step) != CXLA_OK) fail(r->ctx, "train step");
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = "cpu";
  if (cxla_compile(step, &co, &r->e) != CXLA_OK) fail(r->ctx, "compile");
  r->nbufs = cxla_module_num_parameters(step) - 2;
  rng g = {7};
  for (int i = 0; i < r->nbufs; i++) {
    cxla_shape s;
    cxla_module_parameter_shape(step, i, &s);
    int64_t n = 1;
    for (int d = 0; d < s.rank; d++) n *= s.dims[d];
    void *v = calloc((size_t)n, cxla_type_size(s.type) ? cxla_type_size(s.type) : 1);
    if (i < spec->nweights) model_init_weight(spec, i, &g, v);
    if (cxla_buffer_from_data(r->ctx, "cpu", s.type, s.rank, s.dims, v, (size_t)n * cxla_type_size(s.type),
                              &r->bufs[i]) != CXLA_OK)
      fail(r->ctx, "weights");
    free(v);
  }
  r->t = calloc((size_t)rounds, sizeof *r->t);
  cxla_module_destroy(step);
  cxla_module_destroy(loss);
}

/* One step on x[batch, 784], y[batch]; its time into r->t[k] (k >= 0). */
static void step(runner *r, const float *x, const int32_t *y, int k) {
  cxla_arg a[MAXB + 2];
  memset(a, 0, sizeof a);
  for (int i = 0; i < r->nbufs; i++) a[i].buffer = r->bufs[i];
  int64_t xd[2] = {r->batch, IMG_PIXELS};
  a[r->nbufs] = (cxla_arg){NULL, x, sizeof *x * (size_t)(r->batch * IMG_PIXELS), CXLA_F32, 2, xd};
  a[r->nbufs + 1] = (cxla_arg){NULL, y, sizeof *y * (size_t)r->batch, CXLA_S32, 1, xd};
  cxla_buffer *res = NULL, *parts[MAXB + 1];
  double t0 = now_s();
  cxla_status st = cxla_executable_execute_args(r->e, r->nbufs + 2, a, &res);
  double t1 = now_s();
  if (st != CXLA_OK || cxla_buffer_untuple(res, 1 + r->nbufs, parts) != CXLA_OK) fail(r->ctx, "step");
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(parts[0]);
  for (int i = 0; i < r->nbufs; i++) r->bufs[i] = parts[1 + i];
  if (k >= 0) r->t[k] = t1 - t0;
}

/* Every rank waits here without spinning (an idle rank must not take a core from rank 0). */
static void rest(void) {
  MPI_Request q;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &q);
  struct timespec ts = {0, 100000};
  while (MPI_Test(&q, &done, MPI_STATUS_IGNORE), !done) nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  int64_t B = argc > 2 ? atoll(argv[2]) : 128, local = B / n;
  if (rounds < 1 || B < n || B % n) {
    if (!rank) fprintf(stderr, "usage: train_dp [ROUNDS] [BATCH, a multiple of the ranks]\n");
    MPI_Finalize();
    return 2;
  }
  char tflags[32];
  snprintf(tflags, sizeof tflags, "--threads=%d", n);
  runner r[NKIND];
  open_runner(&r[DP], "--threads=1", local, n, rounds, 1);
  open_runner(&r[HALF], "--threads=1", local, 1, rounds, 0);
  if (rank == 0) {
    open_runner(&r[ONE1], "--threads=1", B, 1, rounds, 0);
    open_runner(&r[ONET], tflags, B, 1, rounds, 0);
  }
  float *x = malloc(sizeof *x * (size_t)(B * IMG_PIXELS));
  int32_t *y = malloc(sizeof *y * (size_t)B);
  rng g = {11};
  for (int64_t i = 0; i < B * IMG_PIXELS; i++) x[i] = (float)rng_uniform(&g);
  for (int64_t i = 0; i < B; i++) y[i] = (int32_t)(rng_next(&g) % NUM_CLASSES);
  const float *mine = x + rank * local * IMG_PIXELS; /* this rank's share of the batch */
  for (int k = -3; k < rounds; k++) { /* three warm-up rounds */
    for (int j = 0; j < NKIND; j++) {
      int c = (j + (k < 0 ? 0 : k)) % NKIND;
      rest();
      if (c == DP || c == HALF) step(&r[c], mine, y + rank * local, k);
      else if (rank == 0) step(&r[c], x, y, k);
    }
  }
  rest();
  if (rank == 0) {
    double med[NKIND];
    for (int c = 0; c < NKIND; c++) {
      qsort(r[c].t, (size_t)rounds, sizeof *r[c].t, cmp);
      med[c] = r[c].t[rounds / 2];
    }
    printf("MLP 784-128-64-10, Adam, global batch %lld: %d ranks x %lld examples; median of %d steps each, in turns\n\n",
           (long long)B, n, (long long)local, rounds);
    printf("| contender | step (ms) | steps/s | images/s | dp speed-up over it |\n|---|---|---|---|---|\n");
    static const char *const what[NKIND] = {
        "dp: %d ranks, 1 thread each, all-reduce in the step", "half: %d ranks, 1 thread each, no all-reduce",
        "one/1: 1 process, 1 thread (%d idle)", "one/T: 1 process, %d threads"};
    for (int c = 0; c < NKIND; c++) {
      char label[128];
      snprintf(label, sizeof label, what[c], c == ONE1 ? n - 1 : n);
      printf("| %s | %.3f | %.0f | %.0f | %.2fx |\n", label, 1e3 * med[c], 1 / med[c], (double)B / med[c],
             med[c] / med[DP]);
    }
    printf("\nthe all-reduce and the wait for the slower rank: dp - half = %.3f ms a step\n", 1e3 * (med[DP] - med[HALF]));
  }
  for (int c = 0; c < NKIND; c++) {
    if ((c == ONE1 || c == ONET) && rank) continue;
    for (int i = 0; i < r[c].nbufs; i++) cxla_buffer_destroy(r[c].bufs[i]);
    cxla_executable_destroy(r[c].e);
    cxla_context_destroy(r[c].ctx);
    free(r[c].t);
  }
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
