/* train.c — trains softmax regression, an MLP and a LeNet-style CNN on Fashion-MNIST (or MNIST)
 * with cxla's public API alone: each model is built with the builder (train_models.c), turned
 * into a training step — forward, loss, gradients and the optimizer's update in one module —
 * by cxla_module_train_step, and compiled once for the CPU. The weights and optimizer state
 * live in cxla buffers that every execution consumes (donates) and returns updated in place,
 * so a step copies nothing but its batch; the test set runs through the forward model,
 * compiled once as well. Under mpirun -np N (or with --replicas=N, N threads) it trains
 * data-parallel: each device takes 1/N of every batch and the step averages the gradients
 * over the devices (cxla_optimizer.replicas). Options: train --help; docs/train_demo.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "train.h"
#include "train_options.h"

#define MAX_BUFS (3 * MAX_WEIGHTS + 1) /* weights, then at most two state arrays each and a step count */
#define MAX_THREADS 16                 /* --replicas: devices as threads of this process */
#define EVAL_BATCH 500

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int api_fail(cxla_context *ctx, const char *what) {
  fflush(stdout);
  fprintf(stderr, "train: %s: %s\n", what, cxla_context_errmsg(ctx));
  return 0;
}

/* "name=N" from a compile-counts string, or -1. */
static long count_of(const char *counts, const char *name) {
  size_t n = strlen(name);
  for (const char *p = counts; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL)
    if (!strncmp(p, name, n) && p[n] == '=') return strtol(p + n + 1, NULL, 10);
  return -1;
}

/* Images as floats in [0, 1] and labels as s32, for the examples idx[0..n). */
static void fill_batch(const split *s, const int64_t *idx, int64_t n, float *x, int32_t *y) {
  for (int64_t i = 0; i < n; i++) {
    const uint8_t *px = s->pixels + idx[i] * IMG_PIXELS;
    for (int p = 0; p < IMG_PIXELS; p++) x[i * IMG_PIXELS + p] = (float)px[p] * (1.0f / 255.0f);
    if (y) y[i] = s->labels[idx[i]];
  }
}

/* ---- a training run: the compiled steps, the buffers they update, the batch stream ---- */
typedef struct {
  cxla_context *ctx;
  const model_spec *spec;
  schedule sch;
  int K, fused;
  const char *backend;         /* where it trains: cpu, or gpu (the weights and state stay there) */
  int rank, ndev;              /* data-parallel: this process's device and how many share a batch */
  int threads;                 /* devices run as threads here (--replicas), else 1 (mpirun: ranks) */
  int64_t local;               /* examples per batch on one device: batch / ndev */
  cxla_executable *exe;        /* the step, compiled once: the learning rate is its last argument */
  int64_t decay_at;            /* the schedule: lr until this step, lr * sch.decay from it on */
  int nbufs;                   /* weights, then optimizer state: the donated parameters */
  cxla_buffer *bufs[MAX_THREADS][MAX_BUFS]; /* per device of this process; device 0's are read */
  double compile_s;
  rng order;                   /* shuffles the training set each epoch */
  int64_t *perm, pos, ntrain;
  float *x;                    /* K batches of images and labels, per device of this process */
  int32_t *y;
} trainer;

static void trainer_close(trainer *t) {
  cxla_executable_destroy(t->exe);
  for (int d = 0; d < t->threads; d++)
    for (int i = 0; i < t->nbufs; i++) cxla_buffer_destroy(t->bufs[d][i]);
  free(t->perm);
  free(t->x);
  free(t->y);
  memset(t, 0, sizeof *t);
}

static int set_fusion(cxla_context *ctx, int fused) {
  return cxla_context_set_flags(ctx, fused ? "--fusion=on" : "--fusion=off") == CXLA_OK ||
         api_fail(ctx, "setting --fusion");
}

/* A buffer of zeros with the shape of parameter i of m. */
static int zeros_like(cxla_context *ctx, const char *backend, cxla_module *m, int i, cxla_buffer **out) {
  cxla_shape s;
  if (cxla_module_parameter_shape(m, i, &s) != CXLA_OK) return api_fail(ctx, "reading the step's parameters");
  int64_t count = 1;
  for (int d = 0; d < s.rank; d++) count *= s.dims[d];
  size_t nbytes = (size_t)count * cxla_type_size(s.type);
  void *zero = calloc(1, nbytes ? nbytes : 1);
  cxla_status st = zero ? cxla_buffer_from_data(ctx, backend, s.type, s.rank, s.dims, zero, nbytes, out) : CXLA_ERR_OUT_OF_MEMORY;
  free(zero);
  return st == CXLA_OK || api_fail(ctx, "allocating optimizer state");
}

/* The devices that share each batch: under mpirun the ranks (this process is device `rank`),
 * with --replicas=N (threads > 1) N threads of this process (devices 0..N-1), else one;
 * each takes batch / ndev examples of every batch. */
static int device_share(cxla_context *ctx, const schedule *sch, int threads, int *rank, int *ndev) {
  if (cxla_context_device(ctx, rank, ndev) != CXLA_OK) return api_fail(ctx, "asking for this process's rank");
  if (threads > 1 && *ndev > 1) {
    fflush(stdout);
    fprintf(stderr, "train: --replicas=%d runs the devices as threads of one process: not under mpirun (%d ranks)\n",
            threads, *ndev);
    return 0;
  }
  if (threads > 1) *ndev = threads;
  if (sch->batch % *ndev == 0) return 1;
  fflush(stdout);
  fprintf(stderr, "train: a batch of %lld does not split evenly among %d %s (--batch=N, a multiple of %d)\n",
          (long long)sch->batch, *ndev, threads > 1 ? "devices" : "processes", *ndev);
  return 0;
}

/* The loss module turned into a training step that takes the learning rate as its last
 * argument (so the schedule's every rate runs through one compile), compiled into *exe; the
 * step module is kept in *keep (its parameters say what state to allocate). */
static int compile_step(trainer *t, cxla_module *loss, cxla_executable **exe, cxla_module **keep) {
  int wrt[MAX_WEIGHTS];
  for (int i = 0; i < t->spec->nweights; i++) wrt[i] = i;
  cxla_optimizer opt;
  cxla_optimizer_init(&opt, t->sch.kind);
  opt.learning_rate_input = 1;
  opt.momentum = t->sch.momentum;
  opt.steps_per_call = t->K;
  opt.replicas = t->ndev; /* > 1: the loss and gradients averaged over the processes inside the step */
  cxla_module *step = NULL;
  if (cxla_module_train_step(loss, wrt, t->spec->nweights, &opt, &step) != CXLA_OK)
    return api_fail(t->ctx, "building the training step");
  int nparams = cxla_module_num_parameters(step), ok = 1;
  t->nbufs = nparams - 3; /* all but the images, the labels and the learning rate */
  if (t->nbufs < t->spec->nweights || t->nbufs > MAX_BUFS) {
    fflush(stdout);
    fprintf(stderr, "train: the training step has %d parameters; expected the weights, the state, a batch and the rate\n",
            nparams);
    ok = 0;
  }
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = t->backend;
  co.donate = ok ? (1ull << t->nbufs) - 1 : 0; /* the module aliases them too; saying so costs nothing */
  if (ok && (ok = set_fusion(t->ctx, t->fused))) {
    double t0 = now_s();
    ok = cxla_compile(step, &co, exe) == CXLA_OK || api_fail(t->ctx, "compiling the training step");
    t->compile_s += now_s() - t0;
  }
  if (ok && keep) *keep = step;
  else cxla_module_destroy(step);
  return ok;
}

/* Ready to run up to `steps` steps of the schedule. */
static int trainer_open(trainer *t, cxla_context *ctx, const char *backend, const model_spec *spec,
                        const schedule *sch, int K, int fused, int threads, uint64_t seed, const split *train) {
  memset(t, 0, sizeof *t);
  t->ctx = ctx, t->spec = spec, t->sch = *sch, t->K = K, t->fused = fused, t->ntrain = train->n;
  t->backend = backend;
  t->threads = threads > 1 ? threads : 1;
  if (!device_share(ctx, sch, threads, &t->rank, &t->ndev)) return 0;
  t->local = sch->batch / t->ndev;
  int64_t decayed = (int64_t)((double)sch->steps * sch->decay_frac + 0.5);
  t->decay_at = sch->decay_frac > 0 ? (sch->steps - decayed) / K * K : sch->steps;
  char err[1024];
  cxla_module *loss = model_build(ctx, spec, t->local, 1, err, sizeof err), *step = NULL;
  if (!loss) return fflush(stdout), fprintf(stderr, "train: %s\n", err), 0;
  int ok = compile_step(t, loss, &t->exe, &step);
  cxla_module_destroy(loss);
  for (int d = 0; d < t->threads; d++) { /* every device starts from the same weights */
    rng init = {seed};
    for (int i = 0; ok && i < spec->nweights; i++) {
      int64_t count = model_weight_count(spec, i);
      float *w = malloc(sizeof *w * (size_t)count);
      if (w) model_init_weight(spec, i, &init, w);
      ok = w && (cxla_buffer_from_data(ctx, backend, CXLA_F32, spec->rank[i], spec->dims[i], w,
                                       sizeof *w * (size_t)count, &t->bufs[d][i]) == CXLA_OK ||
                 api_fail(ctx, "allocating the weights"));
      free(w);
    }
    for (int i = spec->nweights; ok && i < t->nbufs; i++) ok = zeros_like(ctx, backend, step, i, &t->bufs[d][i]);
  }
  cxla_module_destroy(step);
  t->order.s = seed ^ 0x5deece66dull;
  t->perm = malloc(sizeof *t->perm * (size_t)train->n);
  t->x = malloc(sizeof *t->x * (size_t)(t->threads * K * t->local * IMG_PIXELS));
  t->y = malloc(sizeof *t->y * (size_t)(t->threads * K * t->local));
  if (ok && (!t->perm || !t->x || !t->y)) ok = 0, fprintf(stderr, "train: out of memory for batches\n");
  if (!ok) return trainer_close(t), 0;
  t->pos = train->n; /* shuffle before the first batch */
  return 1;
}

/* The next batch of the epoch; a new shuffle when fewer than a batch remain. */
static const int64_t *next_batch(trainer *t) {
  if (t->pos + t->sch.batch > t->ntrain) {
    for (int64_t i = 0; i < t->ntrain; i++) t->perm[i] = i;
    for (int64_t i = t->ntrain - 1; i > 0; i--) {
      int64_t j = (int64_t)(rng_next(&t->order) % (uint64_t)(i + 1)), v = t->perm[i];
      t->perm[i] = t->perm[j], t->perm[j] = v;
    }
    t->pos = 0;
  }
  t->pos += t->sch.batch;
  return t->perm + t->pos - t->sch.batch;
}

/* --replicas: the devices' batches as buffers over t->x and t->y, and the learning rate over
 * *lr, then one execution per device on threads; results[d] gets device d's. */
static cxla_status run_threads(trainer *t, cxla_executable *exe, const int64_t *xd, const int64_t *yd, int lead,
                               float *lr, cxla_buffer **results) {
  int64_t B = t->local, K = t->K;
  int na = t->nbufs + 3;
  cxla_buffer *args[MAX_THREADS * (MAX_BUFS + 2)];
  memset(args, 0, sizeof args);
  cxla_status st = CXLA_OK;
  for (int d = 0; d < t->threads; d++) {
    for (int i = 0; i < t->nbufs; i++) args[d * na + i] = t->bufs[d][i];
    if (st == CXLA_OK)
      st = cxla_buffer_wrap(t->ctx, "cpu", CXLA_F32, 2 + lead, xd + !lead, t->x + d * K * B * IMG_PIXELS,
                            sizeof *t->x * (size_t)(K * B * IMG_PIXELS), &args[d * na + t->nbufs]);
    if (st == CXLA_OK)
      st = cxla_buffer_wrap(t->ctx, "cpu", CXLA_S32, 1 + lead, yd + !lead, t->y + d * K * B,
                            sizeof *t->y * (size_t)(K * B), &args[d * na + t->nbufs + 1]);
    if (st == CXLA_OK) st = cxla_buffer_wrap(t->ctx, "cpu", CXLA_F32, 0, xd, lr, sizeof *lr, &args[d * na + t->nbufs + 2]);
  }
  if (st == CXLA_OK) st = cxla_executable_execute_replicas(exe, t->threads, na, args, results);
  for (int d = 0; d < t->threads; d++) {
    cxla_buffer_destroy(args[d * na + t->nbufs]);
    cxla_buffer_destroy(args[d * na + t->nbufs + 1]);
    cxla_buffer_destroy(args[d * na + t->nbufs + 2]);
  }
  return st;
}

/* One execution of the step: K steps at learning rate lr (on each device of this process).
 * losses[K] receives their losses; *exec_s the time in cxla. */
static int trainer_call(trainer *t, double lr, const split *train, float *losses, double *exec_s) {
  cxla_executable *exe = t->exe;
  float rate = (float)lr;
  int64_t B = t->local, K = t->K;
  for (int64_t k = 0; k < K; k++) { /* every device draws the same global batch and takes its share */
    const int64_t *idx = next_batch(t);
    for (int d = 0; d < t->threads; d++)
      fill_batch(train, idx + (t->rank + d) * B, B, t->x + (d * K + k) * B * IMG_PIXELS, t->y + d * K * B + k * B);
  }
  int64_t xd[3] = {K, B, IMG_PIXELS}, yd[2] = {K, B};
  int lead = K > 1; /* K > 1: a stream of K batches, one more leading dimension */
  cxla_buffer *result[MAX_THREADS] = {NULL}, *parts[1 + MAX_BUFS];
  cxla_status st;
  double t0 = now_s();
  if (t->threads > 1) {
    st = run_threads(t, exe, xd, yd, lead, &rate, result);
  } else {
    cxla_arg args[MAX_BUFS + 3];
    memset(args, 0, sizeof args);
    for (int i = 0; i < t->nbufs; i++) args[i].buffer = t->bufs[0][i];
    args[t->nbufs] = (cxla_arg){NULL, t->x, sizeof *t->x * (size_t)(K * B * IMG_PIXELS), CXLA_F32, 2 + lead, xd + !lead};
    args[t->nbufs + 1] = (cxla_arg){NULL, t->y, sizeof *t->y * (size_t)(K * B), CXLA_S32, 1 + lead, yd + !lead};
    args[t->nbufs + 2] = (cxla_arg){NULL, &rate, sizeof rate, CXLA_F32, 0, xd};
    st = cxla_executable_execute_args(exe, t->nbufs + 3, args, &result[0]);
  }
  *exec_s = now_s() - t0;
  /* The donated buffers were consumed, even by a failed call: their new values come back. */
  for (int d = 0; d < t->threads; d++)
    for (int i = 0; i < t->nbufs; i++) cxla_buffer_destroy(t->bufs[d][i]), t->bufs[d][i] = NULL;
  for (int d = 0; d < t->threads; d++) {
    if (st == CXLA_OK) st = cxla_buffer_untuple(result[d], 1 + t->nbufs, parts);
    cxla_buffer_destroy(result[d]);
    if (st != CXLA_OK) continue;
    if (d == 0) memcpy(losses, cxla_buffer_data(parts[0]), sizeof *losses * (size_t)K);
    cxla_buffer_destroy(parts[0]);
    for (int i = 0; i < t->nbufs; i++) t->bufs[d][i] = parts[1 + i];
  }
  return st == CXLA_OK || api_fail(t->ctx, "running the training step");
}

static void print_counts(const char *what, cxla_executable *exe, double compile_s, int rates) {
  const char *c = cxla_executable_compile_counts(exe);
  printf("  compiled the %s%s in %.2f s: kernels %ld (GEMMs %ld", what,
         rates > 1 ? " once for both learning rates (the rate is an argument)" : "", compile_s, count_of(c, "kernels"),
         count_of(c, "gemms"));
  /* the gpu backend's convolutions are kernels, and it has no interpreter to fall back on */
  if (count_of(c, "convolutions") >= 0) printf(", convolutions %ld", count_of(c, "convolutions"));
  printf(")");
  if (count_of(c, "fallbacks") >= 0) printf(", interpreter fallbacks %ld", count_of(c, "fallbacks"));
  printf("\n");
}

/* Accuracy on the test set through the forward model (logits), compiled once per training
 * run, EVAL_BATCH images per execution; the last batch is padded with copies of image 0 and
 * those ignored. */
typedef struct {
  cxla_context *ctx;
  const model_spec *spec;
  cxla_executable *exe;
  float *x;
  double compile_s;
} evaluator;

static void evaluator_close(evaluator *e) {
  cxla_executable_destroy(e->exe);
  free(e->x);
  memset(e, 0, sizeof *e);
}

static int evaluator_open(evaluator *e, cxla_context *ctx, const char *backend, const model_spec *spec, int fused) {
  char err[1024];
  memset(e, 0, sizeof *e);
  e->ctx = ctx, e->spec = spec;
  cxla_module *m = model_build(ctx, spec, EVAL_BATCH, 0, err, sizeof err);
  if (!m) return fflush(stdout), fprintf(stderr, "train: %s\n", err), 0;
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = backend;
  double t0 = now_s();
  int ok = set_fusion(ctx, fused) && (cxla_compile(m, &co, &e->exe) == CXLA_OK || api_fail(ctx, "compiling the forward model"));
  e->compile_s = now_s() - t0;
  cxla_module_destroy(m);
  if (ok) print_counts("forward model", e->exe, e->compile_s, 0);
  if (ok && !(e->x = malloc(sizeof *e->x * EVAL_BATCH * IMG_PIXELS))) ok = 0, fprintf(stderr, "train: out of memory\n");
  if (!ok) evaluator_close(e);
  return ok;
}

static int evaluate(evaluator *e, cxla_buffer *const *weights, const split *test, double *accuracy) {
  int64_t idx[EVAL_BATCH], correct = 0;
  int ok = 1;
  for (int64_t start = 0; ok && start < test->n; start += EVAL_BATCH) {
    int64_t n = test->n - start < EVAL_BATCH ? test->n - start : EVAL_BATCH;
    for (int64_t i = 0; i < EVAL_BATCH; i++) idx[i] = i < n ? start + i : 0;
    fill_batch(test, idx, EVAL_BATCH, e->x, NULL);
    cxla_arg args[MAX_WEIGHTS + 1];
    memset(args, 0, sizeof args);
    for (int i = 0; i < e->spec->nweights; i++) args[i].buffer = weights[i];
    int64_t xd[2] = {EVAL_BATCH, IMG_PIXELS};
    args[e->spec->nweights] = (cxla_arg){NULL, e->x, sizeof *e->x * EVAL_BATCH * IMG_PIXELS, CXLA_F32, 2, xd};
    cxla_buffer *logits = NULL;
    if (!(ok = cxla_executable_execute_args(e->exe, e->spec->nweights + 1, args, &logits) == CXLA_OK ||
               api_fail(e->ctx, "running the forward model")))
      break;
    const float *z = cxla_buffer_data(logits);
    for (int64_t i = 0; i < n; i++) {
      int best = 0;
      for (int k = 1; k < NUM_CLASSES; k++)
        if (z[i * NUM_CLASSES + k] > z[i * NUM_CLASSES + best]) best = k;
      correct += best == test->labels[start + i];
    }
    cxla_buffer_destroy(logits);
  }
  *accuracy = test->n ? (double)correct / (double)test->n : 0;
  return ok;
}

/* Seconds per execution, one entry per call of K steps, for the mean and the median step
 * time; the first call (page faults, thread start-up) is left out when there are others. */
typedef struct {
  double *s;
  int64_t n;
} timings;

static double per_step(const timings *t, int K, int median) {
  int64_t first = t->n > 1, n = t->n - first;
  if (n <= 0) return 0;
  double sum = 0, *v = t->s + first;
  if (!median) {
    for (int64_t i = 0; i < n; i++) sum += v[i];
    return sum / (double)n / K;
  }
  for (int64_t i = 1; i < n; i++) /* insertion sort: a few thousand entries, once */
    for (int64_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double x = v[j];
      v[j] = v[j - 1], v[j - 1] = x;
    }
  return (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) / K;
}

/* A second training run stepped in alternation with the first, for its first `steps` steps
 * (op by op beside the JIT: both see the machine in the same state, however busy it is). */
typedef struct {
  trainer *t;
  int64_t steps;
  float *losses;        /* its losses, steps of them */
  timings own, main;    /* its executions, and the main run's over the same steps */
} shadow_run;

/* The schedule's learning rate at step `step`. */
static double rate_at(const trainer *t, int64_t step) {
  return step >= t->decay_at ? t->sch.lr * t->sch.decay : t->sch.lr;
}

/* --eval-every and --target-accuracy: the test accuracy during training, timed from the
 * program's start, so that compile and data loading count in the time to accuracy. */
typedef struct {
  evaluator *ev;
  const split *test;
  int64_t every;
  double target;       /* 0: none */
  int64_t reached_at;  /* the step where the target was first met; 0: not met */
  double reached_s;    /* seconds since start then */
} progress;

static double g_start; /* the program's start (main's first line) */

/* Evaluates after `step` steps when due: 0 on failure, else 1 with *stop set once the target is
 * met. */
static int check_progress(progress *pg, trainer *t, int64_t step, int *stop) {
  double acc;
  if (!pg || !pg->every || step % pg->every) return 1;
  if (!evaluate(pg->ev, t->bufs[0], pg->test, &acc)) return 0;
  double since = now_s() - g_start;
  printf("  step %6lld  test accuracy %.4f  %.2f s since start\n", (long long)step, acc, since);
  if (pg->target > 0 && acc >= pg->target) {
    pg->reached_at = step, pg->reached_s = since, *stop = 1;
    printf("  reached test accuracy %.2f at step %lld, %.2f s after the program started (compile included)\n",
           pg->target, (long long)step, since);
  }
  fflush(stdout);
  return 1;
}

/* Trains for `steps` steps (a multiple of K), fewer when pg's target is met: losses[steps] if
 * not NULL, the time of each execution in *times (malloc'd). */
static int trainer_run(trainer *t, const split *train, int64_t steps, int64_t log_every, float *losses,
                       timings *times, shadow_run *sh, progress *pg) {
  int64_t interval_steps = 0, calls = steps / t->K, sh_calls = sh ? sh->steps / t->K : 0;
  float *l = malloc(sizeof *l * (size_t)t->K);
  times->n = 0;
  times->s = malloc(sizeof *times->s * (size_t)(calls ? calls : 1));
  if (sh) {
    sh->own.n = sh->main.n = 0;
    sh->own.s = malloc(sizeof *sh->own.s * (size_t)(sh_calls ? sh_calls : 1));
    sh->main.s = malloc(sizeof *sh->main.s * (size_t)(sh_calls ? sh_calls : 1));
  }
  double interval_t0 = now_s(), loss_sum = 0;
  int ok = l && times->s && (!sh || (sh->own.s && sh->main.s));
  for (int64_t c = 0; ok && c < calls; c++) {
    double exec_s, sh_s;
    if (!(ok = trainer_call(t, rate_at(t, c * t->K), train, l, &exec_s))) break;
    times->s[times->n++] = exec_s;
    if (c < sh_calls) {
      if (!(ok = trainer_call(sh->t, rate_at(sh->t, c * t->K), train, sh->losses + c * t->K, &sh_s))) break;
      sh->own.s[sh->own.n++] = sh_s;
      sh->main.s[sh->main.n++] = exec_s;
    }
    for (int k = 0; k < t->K; k++) {
      int64_t step = c * t->K + k + 1;
      if (losses) losses[step - 1] = l[k];
      loss_sum += l[k];
      interval_steps++;
      if (log_every > 0 && (step % log_every == 0 || step == steps)) {
        double dt = now_s() - interval_t0;
        printf("  step %6lld/%lld  loss %.4f  %.0f examples/s\n", (long long)step, (long long)steps,
               loss_sum / (double)interval_steps, (double)(interval_steps * t->sch.batch) / (dt > 0 ? dt : 1e-9));
        fflush(stdout);
        interval_t0 = now_s(), loss_sum = 0, interval_steps = 0;
      }
    }
    int stop = 0;
    if (ok && !(ok = check_progress(pg, t, (c + 1) * t->K, &stop))) break;
    if (stop) break;
  }
  free(l);
  return ok;
}

/* Each weight of the model as DIR/<model>_<weight>.npy (f32, C order). */
static int save_weights(const char *dir, const model_spec *spec, cxla_buffer *const *weights) {
  char path[4200], err[4400];
  for (int i = 0; i < spec->nweights; i++) {
    snprintf(path, sizeof path, "%s/%s_%s.npy", dir, spec->name, spec->weight_name[i]);
    if (!npy_write_f32(path, cxla_buffer_data(weights[i]), spec->rank[i], spec->dims[i], err, sizeof err))
      return fflush(stdout), fprintf(stderr, "train: %s\n", err), 0;
  }
  printf("  weights: %d arrays in %s/%s_*.npy\n", spec->nweights, dir, spec->name);
  return 1;
}

/* The first n steps of the training again, from the same weights over the same batches, in
 * ctx (where they are traced), fused or op by op. */
static int replay(cxla_context *ctx, const char *backend, const model_spec *spec, const schedule *sch, int K, int fused, int threads, uint64_t seed,
                  const split *train, int64_t n) {
  trainer t;
  if (!trainer_open(&t, ctx, backend, spec, sch, K, fused, threads, seed, train)) return 0;
  timings unused = {NULL, 0};
  int ok = trainer_run(&t, train, n, 0, NULL, &unused, NULL, NULL);
  free(unused.s);
  trainer_close(&t);
  return ok;
}

/* Trains one model as the options say and prints its figures; with traced (a context writing
 * a timeline) the first steps run there once more, so the timeline stays small. */
static int train_model(cxla_context *ctx, cxla_context *traced, const options *o, model_kind kind, const split *train,
                       const split *test) {
  const model_spec *spec = model_get(kind);
  schedule sch = options_schedule(o, kind);
  int K = o->steps_per_call, fused = o->jit != JIT_OFF;
  printf("== %s: %s\n   %s, batch %lld, %lld steps (%.1f epochs), seed %llu, %s%s\n", spec->name, spec->description,
         schedule_name(&sch), (long long)sch.batch, (long long)sch.steps,
         (double)(sch.steps * sch.batch) / (double)train->n, (unsigned long long)o->seed,
         fused ? "JIT on (fused kernels)" : "JIT off (--fusion=off: one kernel per op)",
         K > 1 ? ", several steps per execution" : "");
  trainer t, off;
  if (!trainer_open(&t, ctx, o->backend, spec, &sch, K, fused, o->replicas, o->seed, train)) return 0;
  if (t.ndev > 1)
    printf("   data-parallel over %d %s: each takes %lld examples of every batch; the step averages their\n"
           "   losses and gradients with an all-reduce before the update, so every %s keeps the same weights\n",
           t.ndev, t.threads > 1 ? "threads (--replicas)" : "processes", (long long)t.local,
           t.threads > 1 ? "device" : "process");
  print_counts(K > 1 ? "training loop" : "training step", t.exe, t.compile_s, t.decay_at < sch.steps ? 2 : 1);
  /* --jit=both: the first steps once more op by op, from the same weights over the same
   * batches, one step of each in turn. */
  shadow_run sh = {&off, o->compare_steps < sch.steps ? o->compare_steps / K * K : sch.steps, NULL, {NULL, 0}, {NULL, 0}};
  int both = o->jit == JIT_BOTH && sh.steps > 0;
  float *jit_losses = malloc(sizeof *jit_losses * (size_t)sch.steps);
  int ok = jit_losses != NULL;
  if (ok && both) {
    ok = (sh.losses = malloc(sizeof *sh.losses * (size_t)sh.steps)) &&
         trainer_open(&off, ctx, o->backend, spec, &sch, K, 0, o->replicas, o->seed, train);
    if (ok) printf("  and op by op (--fusion=off) in %.2f s, to run its first %lld steps in turn with the JIT's\n",
                   off.compile_s, (long long)sh.steps);
  }
  double acc = 0;
  timings times = {NULL, 0};
  int64_t log_every = o->log_every ? o->log_every : (sch.steps >= 10 ? sch.steps / 10 : 1);
  /* The weights are the same on every process: the first alone saves them, and prints; all
   * evaluate during training (--eval-every), so that all stop at the same step. */
  evaluator ev = {0};
  progress pg = {&ev, test, o->eval_every, o->target, 0, 0};
  ok = ok && (t.rank && !o->eval_every ? 1 : evaluator_open(&ev, ctx, o->backend, spec, fused)) &&
       trainer_run(&t, train, sch.steps, log_every, jit_losses, &times, both ? &sh : NULL, &pg) &&
       (t.rank || (evaluate(&ev, t.bufs[0], test, &acc) &&
                   (!o->save_weights || save_weights(o->save_weights, spec, t.bufs[0]))));
  double compile_s = t.compile_s, eval_compile_s = ev.compile_s;
  evaluator_close(&ev);
  if (ok && o->target > 0 && !pg.reached_at)
    printf("  did not reach test accuracy %.2f in %lld steps\n", o->target, (long long)sch.steps);
  trainer_close(&t);
  if (both && sh.losses) trainer_close(&off);
  if (ok) {
    printf("test accuracy %.4f  (%s, %lld test images)\n", acc, spec->name, (long long)test->n);
    printf("  compile time %.2f s (training step %.2f s, forward model %.2f s)\n", compile_s + eval_compile_s, compile_s,
           eval_compile_s);
    printf("  mean step time %.3f ms (median %.3f ms) %s\n", 1e3 * per_step(&times, K, 0), 1e3 * per_step(&times, K, 1),
           fused ? "with the JIT" : "op by op (--jit=off)");
  }
  if (ok && both) {
    double jit_s = per_step(&sh.main, K, 1), off_s = per_step(&sh.own, K, 1);
    double ratio = jit_s > 0 && off_s > 0 ? off_s / jit_s : 1;
    printf("  median step time over the first %lld steps, one of each in turn: %.3f ms with the JIT, %.3f ms op by op "
           "(--jit=off): the JIT is %.1fx %s\n",
           (long long)sh.steps, 1e3 * jit_s, 1e3 * off_s, ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "faster" : "slower");
    printf("  loss after step %lld: %.5f op by op, %.5f with the JIT (the same training)\n", (long long)sh.steps,
           sh.losses[sh.steps - 1], jit_losses[sh.steps - 1]);
  }
  free(sh.losses);
  free(sh.own.s);
  free(sh.main.s);
  free(times.s);
  if (ok && traced) {
    int64_t n = o->trace_steps < sch.steps ? o->trace_steps : sch.steps;
    n -= n % K;
    ok = replay(traced, o->backend, spec, &sch, K, fused, o->replicas, o->seed, train, n) &&
         (o->jit != JIT_BOTH || replay(traced, o->backend, spec, &sch, K, 0, o->replicas, o->seed, train, n));
    if (ok)
      printf("  timeline: the compile and %lld steps%s, again, into %s\n", (long long)n,
             o->jit == JIT_BOTH ? " with the JIT, then op by op" : "", o->trace);
  }
  free(jit_losses);
  fflush(stdout);
  return ok;
}

int main(int argc, char **argv) {
  g_start = now_s();
  options o;
  int rc = options_parse(&o, argc, argv);
  if (rc >= 0) return rc;
  /* Under mpirun every process trains its share of each batch (data-parallel); the first
   * speaks for all: the others print nothing but errors, dump nothing, and write their
   * timelines beside its own (FILE.rank<r>). */
  cxla_context *ctx = NULL, *traced = NULL;
  int rank = 0, ndev = 1;
  if (cxla_context_create(&ctx) != CXLA_OK || cxla_context_device(ctx, &rank, &ndev) != CXLA_OK)
    return api_fail(ctx, "CXLA_FLAGS"), cxla_context_destroy(ctx), 1;
  if (rank > 0 && !freopen("/dev/null", "w", stdout))
    return fprintf(stderr, "train: /dev/null: %s\n", strerror(errno)), cxla_context_destroy(ctx), 1;
  char trace[4200];
  snprintf(trace, sizeof trace, rank > 0 && *o.trace ? "%s.rank%d" : "%s", o.trace, rank);
  if (rank > 0) o.dump_to = NULL;
  split train, test;
  char err[4096];
  double t0 = now_s();
  if (!idx_load(o.data, &train, &test, err, sizeof err)) {
    fprintf(stderr, "train: %s\n", err);
    cxla_context_destroy(ctx);
    return 1;
  }
  FILE *f = *trace ? fopen(trace, "w") : NULL; /* cxla writes it at the end: fail now rather than then */
  if (*trace && !f) {
    fprintf(stderr, "train: cannot write the timeline %s: %s (--trace=FILE elsewhere, or --trace= for none)\n", trace,
            strerror(errno));
    split_free(&train);
    split_free(&test);
    cxla_context_destroy(ctx);
    return 1;
  }
  if (f) fclose(f);
  printf("data: %s: %lld training and %lld test images (%.1f s to read)\n", o.data, (long long)train.n,
         (long long)test.n, now_s() - t0);
  int ok = 1;
  char flags[4300];
  if (*trace) {
    /* A context of its own: a trace records everything its context runs from then on. */
    snprintf(flags, sizeof flags, "--trace=%s", trace);
    ok = (cxla_context_create(&traced) == CXLA_OK || api_fail(traced, "CXLA_FLAGS")) &&
         (cxla_context_set_flags(traced, flags) == CXLA_OK || api_fail(traced, "--trace"));
  }
  if (ok && o.dump_to) {
    snprintf(flags, sizeof flags, "--dump-to=%s", o.dump_to);
    ok = cxla_context_set_flags(ctx, flags) == CXLA_OK || api_fail(ctx, "--dump-to");
  }
  for (int k = 0; ok && k < MODEL_COUNT; k++)
    if (o.want[k]) ok = train_model(ctx, traced, &o, (model_kind)k, &train, &test);
  cxla_context_destroy(ctx);
  cxla_context_destroy(traced); /* writes the timeline */
  if (ok && *trace) printf("timeline: %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", trace);
  if (ok && o.dump_to) printf("dumps: %s (the modules after every pass, LLVM IR, assembly)\n", o.dump_to);
  split_free(&train);
  split_free(&test);
  return ok ? 0 : 1;
}
