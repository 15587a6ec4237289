/* cli.h — pieces of the `cxla` command-line tool shared by its files.
 * Exit status everywhere: 0 success, 1 an error while doing the work (one line on stderr),
 * 2 a bad command line (the message, then the command's usage, on stderr). */
#ifndef CXLA_CLI_H
#define CXLA_CLI_H
#include <stdint.h>
#include <stdio.h>
#include "cxla.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Commands: argv[0] is the command name. */
int cli_run(cxla_context *ctx, int argc, char **argv);
int cli_fmt(cxla_context *ctx, int argc, char **argv);
int cli_compile(cxla_context *ctx, int argc, char **argv); /* cli_compile.c */
/* `compile --emit-ptx=FILE` (cli_ptx.c): the PTX for GPU target sm into FILE ("-": stdout). */
int cli_emit_ptx(cxla_context *ctx, const char *path, const char *sm, const char *out);
int cli_grad(cxla_context *ctx, int argc, char **argv);    /* cli_grad.c */
int cli_train_step(cxla_context *ctx, int argc, char **argv); /* cli_train.c */
/* --wrt=N[,N...]'s list: "0,2" -> {0, 2} (*out malloc'd); 0 if malformed (cli_grad.c). */
int cli_parse_wrt(const char *s, int **out, int *n);
/* "850.0 us", "12.34 ms", "1.234 s" into buf. */
const char *cli_format_ms(double ms, char *buf, size_t n);

/* Usage texts (one per command; "" for the overview). */
void cli_print_usage(FILE *f, const char *command);
/* Prints "cxla CMD: <message>" and the command's usage on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the library's last message on stderr as one line: located messages
 * ("FILE:LINE:COL: error: ...") as they are, others as "cxla: error: ...". Returns CLI_FAIL. */
int cli_lib_error(cxla_context *ctx);
/* Prints "cxla: error: <message>" on stderr; returns CLI_FAIL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Applies a CXLA flag given on the command line; returns CLI_OK or CLI_USAGE after a message. */
int cli_apply_flag(cxla_context *ctx, const char *command, const char *arg);
/* A cxla flag given as two words ("--cache-dir DIR", argv[*i] and the next, *i moved past
 * it), applied as "--cache-dir=DIR". */
int cli_apply_flag_words(cxla_context *ctx, const char *command, int argc, char **argv, int *i);

/* --timeout=SECONDS (cli_watchdog.c): after that long, names what was running (a compile
 * phase, a while loop still iterating, or a slow kernel) on stderr and exits 1. */
int cli_watchdog_start(cxla_context *ctx, double seconds);
void cli_watchdog_stop(void);

/* ---- cli_run.c's pieces the device runs share ---- */
/* Loads input i of m from path, checked against the parameter (bf16 takes f32 files). */
int cli_load_input(cxla_context *ctx, cxla_module *m, int i, const char *path, cxla_literal **out);
/* mkdir -p; 0 or an errno. */
int cli_make_dirs(const char *dir);
/* The result's leaves: written to dir/i.npy (dir not NULL), else printed (after `title` when
 * not NULL). */
int cli_emit_result(cxla_context *ctx, const char *dir, const char *title, cxla_literal *result);

/* ---- host transfers of `cxla run` (cli_feed.c) ---- */
typedef struct cli_feed {
  const char **infeeds;   /* --infeed=A.npy[,B.npy...], one value each, in order */
  int ninfeeds;
  const char *outfeed_dir; /* --outfeed-out=DIR */
  int random;              /* --random-inputs: draw the infeed values the queue lacks */
  uint64_t seed, state;
  cxla_context *ctx;
  cxla_literal **values;   /* the --infeed values, loaded */
} cli_feed;
/* Loads the --infeed files. */
int cli_feed_load(cxla_context *ctx, cli_feed *f);
/* Before a run: empties both queues, pushes the --infeed values and restarts the random ones. */
int cli_feed_start(cli_feed *f);
/* The outfeed values of the run, in order, as a tuple (*out; the queue is emptied). */
int cli_feed_take_outfeeds(cli_feed *f, cxla_literal **out);
/* Prints them ("outfeed k:" then its leaves) or writes them to --outfeed-out. */
int cli_feed_emit(cli_feed *f, cxla_literal *outfeeds);
void cli_feed_free(cli_feed *f);
/* --check: takes the interpreter's outfeed values and compares them with the backend's
 * (`got`, from cli_feed_take_outfeeds), value by value; prints a line when there are any.
 * CLI_FAIL after a message when they differ in count or beyond tolerance. */
struct cli_tol;
int cli_feed_check(cli_feed *f, const char *backend, cxla_literal *got, const struct cli_tol *tol);

/* ---- one module on several devices (cli_devices.c) ---- */
typedef struct cli_devices_args {
  const char *backend, *out_dir, *inputs_dir;
  const char **inputs; /* the same files for every device, when no inputs_dir */
  int random;
  uint64_t seed;
  int replicas;        /* threads of this process; 0: this process is device `device` of an MPI job */
  int device, ndevices;
} cli_devices_args;
/* Runs e (compiled from m) on its devices and writes or prints each device's result. */
int cli_run_devices(cxla_context *ctx, cxla_module *m, cxla_executable *e, const cli_devices_args *a);

/* ---- values (cli_values.c) ---- */
/* "f32[2,3]" or "(f32[2], s32[])" into buf. */
const char *cli_shape_str(const cxla_shape *s, char *buf, size_t n);
/* A literal of shape s filled from a seeded generator (floats uniform in [-1, 1), both parts
 * of complex numbers too, signed integers in [-8, 8), unsigned in [0, 16), pred 0/1); *state
 * advances. NULL on error. */
cxla_literal *cli_random_literal(cxla_context *ctx, const cxla_shape *s, uint64_t *state);
/* Array leaves of lit, depth-first (tuples flattened). Returns the count; fills up to max. */
int cli_leaves(cxla_literal *lit, cxla_literal **out, int max);
/* Prints one leaf: all values when small, else the first few and min/max/mean. */
void cli_print_leaf(FILE *f, int index, cxla_literal *leaf);

/* ---- --check and --check-each (cli_check.c) ---- */
/* Float tolerance given on the command line; a negative value means the element type's
 * default (cx_diff_default_tol). Integers and pred always compare exactly. */
typedef struct cli_tol {
  double rtol, atol;
} cli_tol;
/* The hook every cli_execute calls first (NULL: none): `run` starts the infeed and outfeed
 * queues over with it (cli_feed.c), so every reference run sees the same infeed values. */
void cli_execute_set_hook(cxla_status (*before)(void *user), void *user);
/* Compiles m for backend and runs it once on copies of args; *out is the result. */
cxla_status cli_execute(cxla_context *ctx, cxla_module *m, const char *backend, int nargs, cxla_literal *const *args,
                        cxla_literal **out);
/* Prints one line per result leaf of got (from backend) against want (the interpreter's, from
 * module m on args): max abs and rel error, the first element beyond tolerance and both
 * values, then a summary line. With `bounds`, a leaf beyond the fixed tolerance is judged again
 * with each element's error bound added (passes/error_bound.h: what docs/numerics.md lets two
 * backends differ by in sums and dots). Returns the number of leaves beyond tolerance
 * (*nleaves: all leaves), or -1 after printing an error. */
int cli_check(cxla_context *ctx, cxla_module *m, int nargs, cxla_literal *const *args, const char *backend,
              cxla_literal *got, cxla_literal *want, const cli_tol *tol, int bounds, int *nleaves);
/* Compiles each instruction that the ROOT of ENTRY depends on as the ROOT of a copy of m, in
 * program order, runs it on backend and on the interpreter, and reports the first whose value
 * is beyond tolerance (its name goes to `first`; "" if none), with `bounds` judged as
 * cli_check judges the result. root_differs: the whole result already differs (the ROOT itself
 * is then named when nothing before it differs). Returns CLI_OK, or CLI_FAIL after printing an
 * error. */
int cli_check_each(cxla_context *ctx, cxla_module *m, const char *backend, int nargs, cxla_literal *const *args,
                   const cli_tol *tol, int bounds, int root_differs, char *first, size_t nfirst);

#endif
