/* train_options.c — examples/train's command line: --name=value or --name value. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "train_options.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"

/* Each model's default schedule: what `train` runs without options, chosen so that every seed
 * reaches the accuracy docs/train_demo.md promises (measured there). */
static const schedule k_default[MODEL_COUNT] = {
    [MODEL_SOFTMAX] = {CXLA_OPTIMIZER_ADAM, 0.0, 1e-3, 100, 3000, 0.25, 0.1},
    [MODEL_MLP] = {CXLA_OPTIMIZER_ADAM, 0.0, 1e-3, 128, 4000, 0.25, 0.1},
    [MODEL_CNN] = {CXLA_OPTIMIZER_ADAM, 0.0, 1e-3, 64, 2800, 0.25, 0.1},
};
/* The XLA tutorial's softmax regression: plain SGD, learning rate 0.5, batch 100, 1000 steps. */
static const schedule k_tutorial = {CXLA_OPTIMIZER_SGD, 0.0, 0.5, 100, 1000, 0.0, 1.0};

static void usage(FILE *f) {
  fprintf(f,
          "usage: train [options]\n"
          "Trains softmax regression, an MLP and a LeNet-style CNN on Fashion-MNIST (or MNIST) with cxla,\n"
          "then prints each model's test accuracy, compile time and mean step time.\n"
          "\n"
          "  --model=softmax|mlp|cnn|all  models to train, comma-separated (default all)\n"
          "  --data DIR           IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,\n"
          "                       t10k-labels-idx1-ubyte, each plain or .gz (default %s)\n"
          "  --steps=N            training steps (default per model: softmax %lld, mlp %lld, cnn %lld)\n"
          "  --batch=N            examples per step (default: softmax %lld, mlp %lld, cnn %lld)\n"
          "  --optimizer=sgd|momentum|adam  (default adam; momentum is SGD with momentum 0.9)\n"
          "  --lr=X               learning rate (default: adam 0.001; sgd and momentum 0.05)\n"
          "  --decay=F            the last F of the steps at a tenth of the learning rate (default 0.25; 0: none)\n"
          "  --tutorial           softmax as in XLA's tutorial: SGD, lr 0.5, batch 100, 1000 steps\n"
          "  --seed=N             seeds the weights and the order of the examples (default 1)\n"
          "  --jit=on|off|both    off: train op by op (--fusion=off, one kernel per op); both: train with the JIT and\n"
          "                       run the first steps op by op too, one of each in turn, to print both step times\n"
          "                       (default on)\n"
          "  --compare-steps=N    steps --jit=both runs op by op (default 200)\n"
          "  --steps-per-call=K   K training steps per execution, in a loop inside the executable (default 1)\n"
          "  --log-every=N        a progress line every N steps (default: ten per model)\n"
          "  --eval-every=N       the test accuracy every N steps (a multiple of --steps-per-call), with the\n"
          "                       seconds since the program started (default: at the end only)\n"
          "  --target-accuracy=A  stop a model's training at the first evaluation reaching A (0 < A <= 1) and\n"
          "                       print the step and the seconds since start, compile included: time to\n"
          "                       accuracy (evaluates every 200 steps unless --eval-every says otherwise)\n"
          "  --trace=FILE         the Chrome/Perfetto timeline: each model's compile and first steps, run again after\n"
          "                       its training (with --jit=both op by op too) (default timeline.json; --trace= for none)\n"
          "  --trace-steps=N      steps of each model in the timeline (default 20)\n"
          "  --dump-to=DIR        write the modules after every pass, LLVM IR and assembly (cxla's --dump-to)\n"
          "  --save-weights=DIR   write each model's trained weights as DIR/<model>_<weight>.npy (f32)\n"
          "  --replicas=N         data-parallel over N devices as threads of this process (1 to 16), each on 1/N of\n"
          "                       every batch, as mpirun -np N does with processes (default 1)\n"
          "  --backend=NAME       cpu (default), gpu, or gpu-emu (the GPU backend on the emulated GPU, slow): on a GPU\n"
          "                       the weights and optimizer state stay in the GPU's memory for the whole run\n"
          "  --help               this text\n"
          "cxla's own flags (docs/flags.md) come from CXLA_FLAGS, e.g. CXLA_FLAGS=--threads=1.\n"
          "Under mpirun (mpirun -np N train ...) the N processes train data-parallel: each takes 1/N of every batch\n"
          "(--batch a multiple of N), the step averages the gradients over them (docs/train_demo.md); the first prints.\n",
          DEFAULT_DATA, (long long)k_default[0].steps, (long long)k_default[1].steps, (long long)k_default[2].steps,
          (long long)k_default[0].batch, (long long)k_default[1].batch, (long long)k_default[2].batch);
}

/* One line on stderr; 2, the status of a bad command line. */
static int bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "train: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (try --help)\n");
  va_end(ap);
  return 2;
}

static int parse_int(const char *name, const char *v, int64_t lo, int64_t *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (!*v || *end || errno || x < lo) {
    bad("--%s=%s: expected an integer >= %lld", name, v, (long long)lo);
    return 0;
  }
  *out = x;
  return 1;
}

static int parse_models(options *o, const char *v) {
  static const char *names[MODEL_COUNT] = {"softmax", "mlp", "cnn"};
  memset(o->want, 0, sizeof o->want);
  const char *p = v;
  while (*p) {
    size_t n = strcspn(p, ",");
    int found = 0;
    if (n == 3 && !strncmp(p, "all", 3)) {
      for (int k = 0; k < MODEL_COUNT; k++) o->want[k] = 1;
      found = 1;
    }
    for (int k = 0; k < MODEL_COUNT; k++)
      if (strlen(names[k]) == n && !strncmp(p, names[k], n)) o->want[k] = found = 1;
    if (!found) return bad("--model=%s: expected softmax, mlp, cnn or all, comma-separated", v), 0;
    p += n + (p[n] == ',');
  }
  return o->want[0] || o->want[1] || o->want[2] || (bad("--model=%s: no model named", v), 0);
}

int options_parse(options *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->data = DEFAULT_DATA;
  o->optimizer = -1;
  o->decay_frac = -1;
  o->seed = 1;
  o->steps_per_call = 1;
  o->replicas = 1;
  o->compare_steps = 200;
  o->trace_steps = 20;
  o->trace = "timeline.json";
  o->backend = "cpu";
  for (int k = 0; k < MODEL_COUNT; k++) o->want[k] = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), 0;
    if (!strcmp(a, "--tutorial")) {
      o->tutorial = 1;
      continue;
    }
    if (strncmp(a, "--", 2)) return bad("unexpected argument '%s'", a);
    char name[32];
    const char *eq = strchr(a, '='), *v;
    size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (n >= sizeof name) return bad("unknown option '%s'", a);
    memcpy(name, a + 2, n);
    name[n] = 0;
    if (eq) v = eq + 1;
    else if (i + 1 < argc) v = argv[++i];
    else return bad("--%s needs a value", name);
    int64_t x;
    if (!strcmp(name, "model")) {
      if (!parse_models(o, v)) return 2;
    } else if (!strcmp(name, "data")) {
      o->data = v;
    } else if (!strcmp(name, "steps")) {
      if (!parse_int(name, v, 1, &o->steps)) return 2;
    } else if (!strcmp(name, "batch")) {
      if (!parse_int(name, v, 1, &o->batch)) return 2;
    } else if (!strcmp(name, "seed")) {
      if (!parse_int(name, v, 0, &x)) return 2;
      o->seed = (uint64_t)x;
    } else if (!strcmp(name, "steps-per-call")) {
      if (!parse_int(name, v, 1, &x)) return 2;
      if (x > 100000) return bad("--%s=%s: at most 100000", name, v);
      o->steps_per_call = (int)x;
    } else if (!strcmp(name, "log-every")) {
      if (!parse_int(name, v, 1, &o->log_every)) return 2;
    } else if (!strcmp(name, "eval-every")) {
      if (!parse_int(name, v, 1, &o->eval_every)) return 2;
    } else if (!strcmp(name, "target-accuracy")) {
      char *end;
      o->target = strtod(v, &end);
      if (!*v || *end || !(o->target > 0 && o->target <= 1)) return bad("--target-accuracy=%s: expected 0 < A <= 1", v);
    } else if (!strcmp(name, "trace-steps")) {
      if (!parse_int(name, v, 1, &o->trace_steps)) return 2;
    } else if (!strcmp(name, "compare-steps")) {
      if (!parse_int(name, v, 1, &o->compare_steps)) return 2;
    } else if (!strcmp(name, "lr")) {
      char *end;
      o->lr = strtod(v, &end);
      if (!*v || *end || !(o->lr > 0) || o->lr > 1e6) return bad("--lr=%s: expected a positive number", v);
    } else if (!strcmp(name, "decay")) {
      char *end;
      o->decay_frac = strtod(v, &end);
      if (!*v || *end || !(o->decay_frac >= 0 && o->decay_frac < 1)) return bad("--decay=%s: expected 0 <= F < 1", v);
    } else if (!strcmp(name, "optimizer")) {
      if (!strcmp(v, "sgd")) o->optimizer = OPT_SGD;
      else if (!strcmp(v, "momentum")) o->optimizer = OPT_MOMENTUM;
      else if (!strcmp(v, "adam")) o->optimizer = OPT_ADAM;
      else return bad("--optimizer=%s: expected sgd, momentum or adam", v);
    } else if (!strcmp(name, "jit")) {
      if (!strcmp(v, "on")) o->jit = JIT_ON;
      else if (!strcmp(v, "off")) o->jit = JIT_OFF;
      else if (!strcmp(v, "both")) o->jit = JIT_BOTH;
      else return bad("--jit=%s: expected on, off or both", v);
    } else if (!strcmp(name, "trace")) {
      o->trace = v;
    } else if (!strcmp(name, "dump-to")) {
      o->dump_to = v;
    } else if (!strcmp(name, "save-weights")) {
      o->save_weights = v;
    } else if (!strcmp(name, "backend")) {
      if (strcmp(v, "cpu") && strcmp(v, "gpu") && strcmp(v, "gpu-emu"))
        return bad("--backend=%s: expected cpu, gpu or gpu-emu", v);
      o->backend = v;
    } else if (!strcmp(name, "replicas")) {
      if (!parse_int(name, v, 1, &x)) return 2;
      if (x > 16) return bad("--%s=%s: at most 16", name, v);
      o->replicas = (int)x;
    } else {
      return bad("unknown option '--%s'", name);
    }
  }
  if (o->target > 0 && !o->eval_every) o->eval_every = 200;
  if (o->eval_every % o->steps_per_call)
    return bad("--eval-every=%lld is not a multiple of --steps-per-call=%d", (long long)o->eval_every,
               o->steps_per_call);
  for (int k = 0; k < MODEL_COUNT; k++) {
    schedule s = options_schedule(o, (model_kind)k);
    if (o->want[k] && s.steps % o->steps_per_call)
      return bad("%s: %lld steps is not a multiple of --steps-per-call=%d", model_get((model_kind)k)->name,
                 (long long)s.steps, o->steps_per_call);
  }
  return -1;
}

schedule options_schedule(const options *o, model_kind kind) {
  schedule s = o->tutorial && kind == MODEL_SOFTMAX ? k_tutorial : k_default[kind];
  if (o->optimizer >= 0) {
    cxla_optimizer_kind was = s.kind;
    s.kind = o->optimizer == OPT_ADAM ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD;
    s.momentum = o->optimizer == OPT_MOMENTUM ? 0.9 : 0.0;
    if (s.kind != was) s.lr = s.kind == CXLA_OPTIMIZER_ADAM ? 1e-3 : 0.05;
  }
  if (o->lr > 0) s.lr = o->lr;
  if (o->decay_frac >= 0) s.decay_frac = o->decay_frac, s.decay = 0.1;
  if (o->steps) s.steps = o->steps;
  if (o->batch) s.batch = o->batch;
  return s;
}

const char *schedule_name(const schedule *s) {
  static char buf[160];
  int n;
  if (s->kind == CXLA_OPTIMIZER_ADAM)
    n = snprintf(buf, sizeof buf, "Adam lr %g", s->lr);
  else if (s->momentum > 0)
    n = snprintf(buf, sizeof buf, "SGD lr %g momentum %g", s->lr, s->momentum);
  else
    n = snprintf(buf, sizeof buf, "SGD lr %g", s->lr);
  if (s->decay_frac > 0)
    snprintf(buf + n, sizeof buf - (size_t)n, " (%g for the last %g%% of the steps)", s->lr * s->decay, 100 * s->decay_frac);
  return buf;
}
