/* cli_devices.c — `cxla run` of a module on several devices (docs/collectives.md): N threads
 * of this process with --replicas=N, or this process as one rank of an MPI job. Device r reads
 * the same IN.npy files as every other device, or DIR/rank<r>/in<i>.npy with
 * --inputs-per-replica=DIR, or draws --random-inputs from SEED + r; with --out DIR it writes
 * DIR/rank<r>/<i>.npy, else it prints its result under a "device r:" line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* Device d's arguments into args[0..nparams). */
static int device_inputs(cxla_context *ctx, cxla_module *m, const cli_devices_args *a, int d, int nparams,
                         cxla_literal **args) {
  uint64_t state = a->seed + (uint64_t)d;
  for (int i = 0; i < nparams; i++) {
    int rc = CLI_OK;
    if (a->random) {
      cxla_shape s;
      char buf[512];
      if (cxla_module_parameter_shape(m, i, &s) != CXLA_OK) return cli_lib_error(ctx);
      if (!(args[i] = cli_random_literal(ctx, &s, &state)))
        return cli_error("parameter %d '%s': cannot make random values of shape %s", i, cxla_module_parameter_name(m, i),
                         cli_shape_str(&s, buf, sizeof buf));
    } else if (a->inputs_dir) {
      size_t len = strlen(a->inputs_dir) + 64;
      char *path = malloc(len);
      if (!path) return cli_error("out of memory");
      snprintf(path, len, "%s/rank%d/in%d.npy", a->inputs_dir, d, i);
      rc = cli_load_input(ctx, m, i, path, &args[i]);
      free(path);
    } else {
      rc = cli_load_input(ctx, m, i, a->inputs[i], &args[i]);
    }
    if (rc != CLI_OK) return rc;
  }
  return CLI_OK;
}

/* Device d's result: DIR/rank<d>/ or printed under "device d:". */
static int device_output(cxla_context *ctx, const cli_devices_args *a, int d, cxla_buffer *res) {
  cxla_literal *lit = NULL;
  if (cxla_buffer_to_literal(res, &lit) != CXLA_OK) return cli_lib_error(ctx);
  char title[48], *dir = NULL;
  snprintf(title, sizeof title, "device %d:", d);
  if (a->out_dir) {
    size_t len = strlen(a->out_dir) + 32;
    if (!(dir = malloc(len))) {
      cxla_literal_destroy(lit);
      return cli_error("out of memory");
    }
    snprintf(dir, len, "%s/rank%d", a->out_dir, d);
  }
  int rc = cli_emit_result(ctx, dir, title, lit);
  free(dir);
  cxla_literal_destroy(lit);
  return rc;
}

int cli_run_devices(cxla_context *ctx, cxla_module *m, cxla_executable *e, const cli_devices_args *a) {
  int nparams = cxla_module_num_parameters(m);
  int n = a->replicas ? a->replicas : 1, first = a->replicas ? 0 : a->device;
  cxla_literal **lits = calloc((size_t)(n * nparams + 1), sizeof *lits);
  cxla_buffer **bufs = calloc((size_t)(n * nparams + 1), sizeof *bufs), **res = calloc((size_t)n, sizeof *res);
  int rc = lits && bufs && res ? CLI_OK : cli_error("out of memory");
  for (int d = 0; d < n && rc == CLI_OK; d++) rc = device_inputs(ctx, m, a, first + d, nparams, lits + d * nparams);
  for (int k = 0; k < n * nparams && rc == CLI_OK; k++)
    if (cxla_buffer_from_literal(ctx, a->backend, lits[k], &bufs[k]) != CXLA_OK) rc = cli_lib_error(ctx);
  if (rc == CLI_OK) {
    cxla_status s = a->replicas ? cxla_executable_execute_replicas(e, n, nparams, bufs, res)
                                : cxla_executable_execute(e, nparams, bufs, &res[0]);
    if (s != CXLA_OK) rc = cli_lib_error(ctx);
  }
  for (int d = 0; d < n && rc == CLI_OK; d++) rc = device_output(ctx, a, first + d, res[d]);
  if (rc == CLI_OK && fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
  for (int k = 0; k < n * nparams; k++) {
    if (bufs) cxla_buffer_destroy(bufs[k]);
    if (lits) cxla_literal_destroy(lits[k]);
  }
  for (int d = 0; res && d < n; d++) cxla_buffer_destroy(res[d]);
  free(lits);
  free(bufs);
  free(res);
  return rc;
}
