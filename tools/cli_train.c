/* cli_train.c — `cxla train-step MODULE.hlo --wrt=0,1 --optimizer=sgd|adam --lr=X|--lr-input ...`: the
 * training step (cxla_module_train_step, docs/train.md) as HLO text on stdout, which `cxla run`
 * runs like any module. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "api/tooling.h"

/* The hyper-parameter options: name, where the value goes, which optimizer takes it. */
typedef struct {
  const char *name;
  size_t off;
  int adam; /* 0: SGD only, 1: Adam only, -1: both */
} hyper;

static const hyper k_hypers[] = {
    {"--lr=", offsetof(cxla_optimizer, learning_rate), -1},
    {"--momentum=", offsetof(cxla_optimizer, momentum), 0},
    {"--beta1=", offsetof(cxla_optimizer, beta1), 1},
    {"--beta2=", offsetof(cxla_optimizer, beta2), 1},
    {"--epsilon=", offsetof(cxla_optimizer, epsilon), 1},
};

/* Options given, applied once --optimizer is known. */
typedef struct {
  const char *value[CX_ARRAY_LEN(k_hypers)];
  const char *kind, *steps, *replicas;
  int nesterov, lr_input;
} given;

/* A whole-string number; 0 after a usage message. */
static int number(const char *opt, const char *s, double *v) {
  char *end;
  *v = strtod(s, &end);
  if (end == s || *end) {
    cli_usage_error("train-step", "%s%s: expected a number", opt, s);
    return 0;
  }
  return 1;
}

static int apply(const given *g, cxla_optimizer *o) {
  if (g->kind && strcmp(g->kind, "sgd") && strcmp(g->kind, "adam"))
    return cli_usage_error("train-step", "--optimizer=%s: expected sgd or adam", g->kind);
  int adam = g->kind && !strcmp(g->kind, "adam");
  cxla_optimizer_init(o, adam ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
  for (int i = 0; i < CX_ARRAY_LEN(k_hypers); i++) {
    if (!g->value[i]) continue;
    if (k_hypers[i].adam >= 0 && k_hypers[i].adam != adam)
      return cli_usage_error("train-step", "%.*s is an option of --optimizer=%s", (int)strlen(k_hypers[i].name) - 1,
                             k_hypers[i].name, adam ? "sgd" : "adam");
    double v;
    if (!number(k_hypers[i].name, g->value[i], &v)) return CLI_USAGE;
    *(double *)((char *)o + k_hypers[i].off) = v;
  }
  if (g->nesterov) {
    if (adam) return cli_usage_error("train-step", "--nesterov is an option of --optimizer=sgd");
    o->nesterov = 1;
  }
  o->learning_rate_input = g->lr_input;
  if (g->steps) {
    char *end;
    long k = strtol(g->steps, &end, 10);
    if (end == g->steps || *end || k < -1000000000L || k > 1000000000L)
      return cli_usage_error("train-step", "--steps-per-call=%s: expected a whole number of steps", g->steps);
    o->steps_per_call = (int)k;
  }
  if (g->replicas) {
    char *end;
    long n = strtol(g->replicas, &end, 10);
    if (end == g->replicas || *end || n < 1 || n > 1024)
      return cli_usage_error("train-step", "--replicas=%s: expected a count from 1 to 1024", g->replicas);
    o->replicas = (int)n;
  }
  return CLI_OK;
}

int cli_train_step(cxla_context *ctx, int argc, char **argv) {
  const char *path = NULL, *wrt_arg = NULL;
  given g = {{NULL}, NULL, NULL, NULL, 0, 0};
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int hyper_at = -1;
    for (int k = 0; k < CX_ARRAY_LEN(k_hypers); k++)
      if (!strncmp(a, k_hypers[k].name, strlen(k_hypers[k].name))) hyper_at = k;
    if (only_positional) {
      if (path) return cli_usage_error("train-step", "expected one MODULE.hlo, got '%s' as well", a);
      path = a;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cli_print_usage(stdout, "train-step");
      return CLI_OK;
    } else if (!strcmp(a, "--")) {
      only_positional = 1;
    } else if (!strncmp(a, "--wrt=", 6)) {
      wrt_arg = a + 6;
    } else if (!strncmp(a, "--optimizer=", 12)) {
      g.kind = a + 12;
    } else if (!strncmp(a, "--steps-per-call=", 17)) {
      g.steps = a + 17;
    } else if (!strncmp(a, "--replicas=", 11)) {
      g.replicas = a + 11;
    } else if (!strcmp(a, "--nesterov")) {
      g.nesterov = 1;
    } else if (!strcmp(a, "--lr-input")) {
      g.lr_input = 1;
    } else if (hyper_at >= 0) {
      g.value[hyper_at] = a + strlen(k_hypers[hyper_at].name);
    } else if (cx_flags_is_flag(a)) {
      int r = cli_apply_flag(ctx, "train-step", a);
      if (r != CLI_OK) return r;
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("train-step", "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage_error("train-step", "expected one MODULE.hlo, got '%s' as well", a);
    }
  }
  if (!path) return cli_usage_error("train-step", "missing MODULE.hlo");
  if (!wrt_arg) return cli_usage_error("train-step", "missing --wrt=N[,N...] (the weights to train)");
  cxla_optimizer o;
  int rc = apply(&g, &o);
  if (rc != CLI_OK) return rc;
  int *wrt = NULL, nwrt = 0;
  if (!cli_parse_wrt(wrt_arg, &wrt, &nwrt))
    return cli_usage_error("train-step", "--wrt=%s: expected parameter numbers separated by commas, e.g. --wrt=0,2",
                           wrt_arg);
  cxla_module *m = NULL, *s = NULL;
  if (cxla_module_parse_file(ctx, path, &m) != CXLA_OK || cxla_module_train_step(m, wrt, nwrt, &o, &s) != CXLA_OK) {
    rc = cli_lib_error(ctx);
  } else {
    char *text = cxla_module_to_string(s);
    if (!text) rc = cli_lib_error(ctx);
    else {
      fputs(text, stdout);
      if (fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
    }
    free(text);
  }
  cxla_module_destroy(s);
  cxla_module_destroy(m);
  free(wrt);
  return rc;
}
