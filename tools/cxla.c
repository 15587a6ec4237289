/* cxla.c — the `cxla` command-line tool: command dispatch, help texts, error reporting and the
 * `fmt` command. `run` lives in cli_run.c, `compile` in cli_compile.c. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "api/tooling.h"

typedef struct {
  const char *name;
  int (*fn)(cxla_context *ctx, int argc, char **argv);
  const char *summary; /* one line in the overview */
} command;

static const command commands[] = {
    {"run", cli_run, "run a module on .npy inputs, print or save the result"},
    {"compile", cli_compile, "compile a module without running it, print phase timings"},
    {"fmt", cli_fmt, "print a module in canonical HLO text"},
    {"grad", cli_grad, "print the gradient module (value and gradients) as HLO text"},
    {"train-step", cli_train_step, "print a training step (loss, gradients, update) as HLO text"},
};

/* Commands cxla will have but this build does not. */
static const char *const planned_commands[] = {"dump", "bench"};

static void print_flags_and_backends(FILE *f) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_flags_help(&sb, 2);
  fprintf(f, "\ncxla flags (any command; also read from the CXLA_FLAGS environment variable, which\n"
             "the command line overrides):\n%s", sb.buf ? sb.buf : "");
  cx_sb_free(&sb);
  fprintf(f, "\nbackends built in:");
  const cx_backend *const *b = cx_backend_list();
  for (int i = 0; b[i]; i++) fprintf(f, " %s", b[i]->name);
  const char *later[] = {"cpu", "gpu"};
  int nlater = 0;
  for (int i = 0; i < CX_ARRAY_LEN(later); i++)
    if (cx_backend_is_planned(later[i])) fprintf(f, "%s%s", nlater++ ? " and " : " (", later[i]);
  fprintf(f, "%s\n", nlater ? (nlater > 1 ? " are not built into this cxla yet)" : " is not built into this cxla yet)") : "");
}

void cli_print_usage(FILE *f, const char *cmd) {
  if (cmd && !strcmp(cmd, "run")) {
    fprintf(f,
            "usage: cxla run MODULE.hlo [IN.npy ...] [options] [cxla flags]\n\n"
            "Runs the ENTRY computation of MODULE.hlo (HLO text, or a StableHLO portable artifact:\n"
            "MLIR bytecode as jax.export writes it). Give one .npy file per ENTRY parameter, in\n"
            "parameter order, or --random-inputs. Without --out, prints a summary of each result\n"
            "leaf (a tuple result is flattened depth-first): its shape and values (all of them for\n"
            "small arrays; the first few plus min/max/mean for large ones).\n\n"
            "options:\n"
            "  --backend=NAME               backend to compile for (default: interp)\n"
            "  --out DIR, --out=DIR         write leaf i of the result to DIR/i.npy (DIR is created)\n"
            "  --cache-dir DIR              the cxla flag --cache-dir=DIR as two words: compiled cpu\n"
            "                               code is kept in DIR and loaded, not compiled, next time\n"
            "                               (DIR default: $XDG_CACHE_HOME/cxla or ~/.cache/cxla;\n"
            "                               without the flag the disk cache is off)\n"
            "  --random-inputs[=SEED]       fill every parameter with seeded random values: floats\n"
            "                               uniform in [-1, 1) (both parts of complex numbers),\n"
            "                               signed ints in [-8, 8), unsigned ints in [0, 16),\n"
            "                               pred 0/1 (SEED: default 0)\n"
            "  --stats                      print compile phase timings (ms) and counts on stderr,\n"
            "                               and after the run the process's peak RSS against the\n"
            "                               data size (inputs + outputs + temp_bytes) and their ratio\n"
            "  --timeout=SECONDS            after that long, name what is running and exit 1: a\n"
            "                               compile phase, a while loop that keeps iterating (an\n"
            "                               endless loop? --max-loop-iterations=N stops it), or a\n"
            "                               slow kernel\n"
            "  --repeat=N                   compile once, execute N times, and print the compile\n"
            "                               time, the execution times (min, median, max) and the\n"
            "                               rate at the median (GFLOP/s and GB/s by XLA's cost rules:\n"
            "                               the module's flops, the bytes its kernels move) on\n"
            "                               stderr; the result of the last run is printed\n"
            "  --check                      also run the reference interpreter (backend interp)\n"
            "                               on the same inputs and compare (--backend must name\n"
            "                               another backend). Instead of the summary, prints one\n"
            "                               line per result leaf (max abs and rel error, the first\n"
            "                               element beyond tolerance as [i,j,...] with both values)\n"
            "                               and a summary line (--out still writes the files); exit\n"
            "                               1 if an element has |got - want| > atol + rtol*|want|\n"
            "  --check-each                 --check, then make each instruction of ENTRY that the\n"
            "                               ROOT uses (parameters, constants, tuple and\n"
            "                               get-tuple-element aside) the ROOT of a copy of the\n"
            "                               module, in program order, and name the first whose value\n"
            "                               differs beyond tolerance and its error bound, as\n"
            "                               --check judges (exit 1 if one does). Compiles one\n"
            "                               module per instruction: large modules take a while\n"
            "  --rtol=X, --atol=X           tolerances for float leaves (default per element type:\n"
            "                               f64 1e-12 and 1e-13, f32 1e-5 and 1e-6, f16 1e-2 and\n"
            "                               1e-3, bf16 4e-2 and 1e-2); integers and pred compare\n"
            "                               exactly, NaN matches NaN, infinities only themselves\n"
            "  --error-bound=on|off         a float leaf beyond rtol/atol is judged again with each\n"
            "                               element's error bound added: what docs/numerics.md lets\n"
            "                               two backends differ by in its sums and dots (on unless\n"
            "                               --rtol or --atol is given)\n"
            "  --replicas=N                 run N devices as threads of this process, for modules\n"
            "                               with collectives (docs/collectives.md); device r reads\n"
            "                               the inputs (or draws --random-inputs from SEED + r) and\n"
            "                               writes DIR/rank<r>/i.npy with --out. Under mpirun each\n"
            "                               process is one device and writes DIR/rank<r>/ instead\n"
            "  --inputs-per-replica=DIR     device r reads DIR/rank<r>/in0.npy, in1.npy, ...\n"
            "                               instead of the same IN.npy files\n"
            "  --infeed=A.npy[,B.npy...]    one value for the module's infeed queue (several\n"
            "                               files: a tuple of them); repeat for the next\n"
            "                               values, taken in order. With --random-inputs, an\n"
            "                               infeed finding the queue empty gets random values\n"
            "                               of its shape (the same for every run of --check)\n"
            "  --outfeed-out=DIR            write outfeed value k to DIR/k.npy (a tuple's leaves\n"
            "                               to DIR/k_j.npy); without it they are printed after\n"
            "                               the result. --check compares them with interp's\n"
            "  -h, --help                   show this help\n\n"
            "A bf16, f8 or f4 parameter accepts an f4 .npy of its shape, an s4 (u4) one an i1\n"
            "(u1) .npy (numpy has none of them); such results are written so. With\n"
            "--trace=FILE (a cxla flag) a Chrome trace of the compile phases and of every\n"
            "execution is written to FILE at exit.\n");
  } else if (cmd && !strcmp(cmd, "compile")) {
    fprintf(f,
            "usage: cxla compile MODULE.hlo [options] [cxla flags]\n"
            "       cxla compile --list-passes\n\n"
            "Parses and compiles MODULE.hlo without running it, then prints the time of each\n"
            "compile phase, the compile's counts, the cost as XLA's cost analysis counts it\n"
            "(the module's flops and transcendentals, the bytes the compiled kernels move), and\n"
            "the memory an execution holds (arguments, outputs, aliased, temporaries, code:\n"
            "XLA's CompiledMemoryStats). With --dump-to=DIR the module is written after each\n"
            "pass (HLO text and GraphViz); with --trace=FILE the phases also go to a Chrome trace\n"
            "(open it in https://ui.perfetto.dev or chrome://tracing).\n\n"
            "options:\n"
            "  --backend=NAME               backend to compile for (default: interp)\n"
            "  --emit-ptx=FILE              with --backend=gpu: write the module's PTX to FILE (-:\n"
            "                               stdout) without a GPU; dots are cuBLASLt calls, not PTX,\n"
            "                               convolutions cuDNN calls where it is found (CXLA_CUDNN)\n"
            "  --gpu-arch=sm_XX             the PTX target for --emit-ptx: sm_75 (default, runs on\n"
            "                               every GPU cxla supports), sm_80, sm_86, sm_87, sm_89,\n"
            "                               sm_90, sm_90a\n"
            "  --cache-dir DIR              the cxla flag --cache-dir=DIR as two words (see cxla run)\n"
            "  --list-passes                print the compiled pipeline's passes in order, one per\n"
            "                               line: name, when it runs (once; fixpoint: repeated with\n"
            "                               its fixpoint neighbours until nothing changes;\n"
            "                               fusion=on: only with --fusion=on; required: cannot be\n"
            "                               disabled) and what it does. --disable-pass=NAME[,NAME]\n"
            "                               (a cxla flag) skips passes by these names\n"
            "  -h, --help                   show this help\n");
  } else if (cmd && !strcmp(cmd, "fmt")) {
    fprintf(f,
            "usage: cxla fmt MODULE.hlo [--check] [cxla flags]\n\n"
            "Parses and verifies MODULE.hlo and prints it in canonical HLO text (a StableHLO\n"
            "portable artifact: the HLO cxla translates it to).\n\n"
            "options:\n"
            "  --check                      print nothing; exit 0 if the file is already canonical,\n"
            "                               1 (with a message naming it) if not\n"
            "  -h, --help                   show this help\n");
  } else if (cmd && !strcmp(cmd, "grad")) {
    fprintf(f,
            "usage: cxla grad MODULE.hlo --wrt=N[,N...] [cxla flags]\n\n"
            "Prints, as HLO text, a module with the same parameters whose ENTRY returns the tuple\n"
            "(value, gradient with respect to each parameter listed): reverse-mode gradients of\n"
            "MODULE.hlo, whose ENTRY must return a scalar float. 'cxla run' runs the result like\n"
            "any module. docs/grad.md lists the differentiable ops.\n\n"
            "options:\n"
            "  --wrt=N[,N...]               ENTRY parameter numbers (from 0; float arrays) to\n"
            "                               differentiate with respect to, in the order the\n"
            "                               gradients are returned (required)\n"
            "  -h, --help                   show this help\n");
  } else if (cmd && !strcmp(cmd, "train-step")) {
    fprintf(f,
            "usage: cxla train-step MODULE.hlo --wrt=N[,N...] [--optimizer=sgd|adam] [options]\n"
            "                       [cxla flags]\n\n"
            "Prints, as HLO text, one training step of MODULE.hlo, whose ENTRY returns a scalar\n"
            "float loss: its ENTRY takes the weights (in --wrt's order), the optimizer state (SGD\n"
            "with momentum: a velocity per weight; Adam: a first moment per weight, a second\n"
            "moment per weight, the step count s32[]; all starting at zero) and the other\n"
            "parameters (the batch), and returns (loss, new weights..., new state...), every\n"
            "weight and state parameter aliased to its new value. 'cxla run' runs the result\n"
            "like any module. docs/train.md states the layout and the update math.\n\n"
            "options:\n"
            "  --wrt=N[,N...]               ENTRY parameter numbers (from 0; float arrays) of\n"
            "                               the weights to train (required)\n"
            "  --optimizer=sgd|adam         the update (default: sgd)\n"
            "  --lr=X                       learning rate (default: sgd 0.01, adam 0.001)\n"
            "  --lr-input                   the learning rate is the step's last parameter (a\n"
            "                               scalar given at each run), not a constant: one\n"
            "                               compiled step serves a whole schedule\n"
            "  --momentum=X                 sgd: momentum (default 0: no velocity kept)\n"
            "  --nesterov                   sgd with momentum: Nesterov's update\n"
            "  --beta1=X, --beta2=X         adam: moment decay rates (default 0.9, 0.999)\n"
            "  --epsilon=X                  adam: added to the root of the second moment\n"
            "                               (default 1e-8)\n"
            "  --steps-per-call=K           K steps in one execution, in a while loop over a\n"
            "                               stream of K batches: every batch parameter gets a\n"
            "                               leading dimension K and the loss becomes the K\n"
            "                               losses (default 1)\n"
            "  --replicas=N                 data-parallel over N devices (cxla run --replicas=N,\n"
            "                               or mpirun -np N), each given its share of the batch:\n"
            "                               the loss and gradients are averaged over them by an\n"
            "                               all-reduce before the update (default 1: none)\n"
            "  -h, --help                   show this help\n");
  } else {
    fprintf(f, "usage: cxla <command> [options]\n\ncommands:\n");
    for (int i = 0; i < CX_ARRAY_LEN(commands); i++) fprintf(f, "  %-28s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-28s %s\n", "help [COMMAND]", "show this help, or a command's");
    fprintf(f, "  %-28s %s\n", "--version", "print the version");
    fprintf(f, "\nRun 'cxla COMMAND --help' for a command's options.\n");
  }
  print_flags_and_backends(f);
  fprintf(f, "\nexit status: 0 success; 1 error (one line on stderr); 2 bad command line\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "cxla%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  fputs("\n\n", stderr);
  va_end(ap);
  cli_print_usage(stderr, cmd);
  return CLI_USAGE;
}

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cxla: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_FAIL;
}

int cli_lib_error(cxla_context *ctx) {
  const char *msg = cxla_context_errmsg(ctx);
  if (strstr(msg, ": error: ")) fprintf(stderr, "%s\n", msg);
  else fprintf(stderr, "cxla: error: %s\n", *msg ? msg : "unknown error");
  return CLI_FAIL;
}

int cli_apply_flag(cxla_context *ctx, const char *cmd, const char *arg) {
  if (cxla_context_set_flags(ctx, arg) == CXLA_OK) return CLI_OK;
  return cli_usage_error(cmd, "%s", cxla_context_errmsg(ctx));
}

int cli_apply_flag_words(cxla_context *ctx, const char *cmd, int argc, char **argv, int *i) {
  const char *name = argv[*i];
  if (*i + 1 >= argc || !*argv[*i + 1]) return cli_usage_error(cmd, "%s needs a value", name);
  char arg[4096];
  if (snprintf(arg, sizeof arg, "%s=%s", name, argv[++*i]) >= (int)sizeof arg)
    return cli_usage_error(cmd, "%s: value too long", name);
  return cli_apply_flag(ctx, cmd, arg);
}

/* ---- fmt ---------------------------------------------------------------------------------- */

int cli_fmt(cxla_context *ctx, int argc, char **argv) {
  const char *path = NULL;
  int check = 0, only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_positional && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
      cli_print_usage(stdout, "fmt");
      return CLI_OK;
    } else if (!only_positional && !strcmp(a, "--")) {
      only_positional = 1;
    } else if (!only_positional && !strcmp(a, "--check")) {
      check = 1;
    } else if (!only_positional && cx_flags_is_flag(a)) {
      int r = cli_apply_flag(ctx, "fmt", a);
      if (r != CLI_OK) return r;
    } else if (!only_positional && a[0] == '-' && a[1]) {
      return cli_usage_error("fmt", "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage_error("fmt", "expected one MODULE.hlo, got '%s' as well", a);
    }
  }
  if (!path) return cli_usage_error("fmt", "missing MODULE.hlo");
  unsigned char *text;
  size_t len;
  if (cx_read_file(ctx, path, &text, &len) != CXLA_OK) return cli_lib_error(ctx);
  cxla_module *m;
  cxla_status s = cxla_module_parse(ctx, (const char *)text, len, path, &m);
  if (s != CXLA_OK) {
    cx_free(text);
    return cli_lib_error(ctx);
  }
  char *out = cxla_module_to_string(m);
  cxla_module_destroy(m);
  if (!out) {
    cx_free(text);
    return cli_lib_error(ctx);
  }
  int rc = CLI_OK;
  if (check) {
    if (strlen(out) != len || memcmp(out, text, len)) {
      fprintf(stderr, "cxla: %s is not in canonical form (run 'cxla fmt %s' to see it)\n", path, path);
      rc = CLI_FAIL;
    }
  } else {
    fputs(out, stdout);
    if (fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
  }
  cx_free(out);
  cx_free(text);
  return rc;
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
  if (argc < 2) return cli_usage_error(NULL, "missing command");
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    cli_print_usage(stdout, NULL);
    return CLI_OK;
  }
  if (!strcmp(cmd, "--version")) {
    printf("cxla %s\n", cxla_version());
    return CLI_OK;
  }
  if (!strcmp(cmd, "help")) {
    const char *topic = argc > 2 ? argv[2] : NULL;
    int known = !topic;
    for (int i = 0; topic && i < CX_ARRAY_LEN(commands); i++) known |= !strcmp(topic, commands[i].name);
    if (!known) return cli_usage_error(NULL, "no help for unknown command '%s'", topic);
    cli_print_usage(stdout, topic);
    return CLI_OK;
  }
  const command *c = NULL;
  for (int i = 0; i < CX_ARRAY_LEN(commands); i++)
    if (!strcmp(cmd, commands[i].name)) c = &commands[i];
  if (!c) {
    for (int i = 0; i < CX_ARRAY_LEN(planned_commands); i++)
      if (!strcmp(cmd, planned_commands[i]))
        return cli_usage_error(NULL, "command '%s' is not built into this cxla yet", cmd);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
  }
  cxla_context *ctx = NULL;
  cxla_status s = cxla_context_create(&ctx);
  if (!ctx) return cli_error("out of memory");
  int rc = s == CXLA_OK ? c->fn(ctx, argc - 1, argv + 1) : cli_lib_error(ctx);
  /* The context would write the --trace file when destroyed, but silently: write it here so
   * that a failure is reported (and a failed command still leaves its trace). */
  if (cx_context_flush_trace(ctx) != CXLA_OK && rc == CLI_OK) rc = cli_lib_error(ctx);
  cxla_context_destroy(ctx);
  return rc;
}
