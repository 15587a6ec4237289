/* train_options.h — examples/train's command line and each model's default schedule. */
#ifndef TRAIN_OPTIONS_H
#define TRAIN_OPTIONS_H
#include "train.h"

typedef struct {
  cxla_optimizer_kind kind;
  double momentum; /* SGD only */
  double lr;
  int64_t batch, steps;
  double decay_frac; /* the last decay_frac of the steps run at lr * decay (0: none) */
  double decay;
} schedule;

typedef enum { JIT_ON, JIT_OFF, JIT_BOTH } jit_mode;

typedef struct {
  const char *data;     /* IDX directory */
  int want[MODEL_COUNT];
  int64_t steps, batch; /* 0: the model's default */
  double lr;            /* 0: the model's default */
  double decay_frac;    /* -1: the model's default */
  int optimizer;        /* -1: the model's default; else an OPT_* below */
  int tutorial;         /* softmax with the XLA tutorial's settings */
  uint64_t seed;
  jit_mode jit;
  int steps_per_call;
  int replicas;         /* --replicas: data-parallel devices as threads (1: none) */
  int64_t log_every;    /* 0: ten progress lines per model */
  int64_t compare_steps; /* --jit=both: op-by-op steps timed */
  const char *trace;    /* "": none */
  int64_t trace_steps;  /* steps the timeline records */
  const char *dump_to;
  const char *save_weights; /* NULL: the weights are not written */
  const char *backend;  /* --backend: cpu (default), gpu or gpu-emu */
  int64_t eval_every;   /* test accuracy every N steps during training (0: at the end only) */
  double target;        /* --target-accuracy: stop once an evaluation reaches it (0: none) */
} options;

enum { OPT_SGD, OPT_MOMENTUM, OPT_ADAM };

/* Parses the command line into o: -1 to go on, else the exit status (0 after --help, 2 for a
 * bad command line, with one line on stderr). */
int options_parse(options *o, int argc, char **argv);
/* The schedule model `kind` trains with: its default, the tutorial's, then the options. */
schedule options_schedule(const options *o, model_kind kind);
/* "Adam lr 0.001", "SGD lr 0.5 momentum 0.9, lr x0.1 for the last 25% of steps" (static
 * storage). */
const char *schedule_name(const schedule *s);

#endif
