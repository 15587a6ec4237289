/* cli_compile.c — `cxla compile MODULE.hlo`: parse and compile without running, then print
 * how long each compile phase took (from cxla_executable_compile_stats), the compile's counts,
 * the executable's cost (cxla_executable_cost) and an execution's memory (cxla_executable_footprint).
 * With --dump-to=DIR
 * the passes' dumps land in DIR; with --trace=FILE the phases are also in a Chrome trace.
 * `cxla compile --list-passes` prints the pipeline's passes (the names --disable-pass takes).
 * With --emit-ptx=FILE (gpu backend) it writes the PTX instead, without a GPU (cli_ptx.c). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "api/tooling.h"

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const char *cli_format_ms(double ms, char *buf, size_t n) {
  if (ms < 1) snprintf(buf, n, "%.1f us", ms * 1e3);
  else if (ms < 1000) snprintf(buf, n, "%.2f ms", ms);
  else snprintf(buf, n, "%.3f s", ms / 1e3);
  return buf;
}

/* One line per "name=value" pair of stats: numbers are milliseconds, other values (such as
 * cache=hit) are printed as they are; a quoted value (gpu="NVIDIA H200", a reason) may hold
 * spaces. */
static void print_phases(FILE *f, const char *stats) {
  const char *p = stats;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    size_t len = strcspn(p, " ");
    const char *eq = memchr(p, '=', len);
    if (eq && eq[1] == '"' && !memchr(eq + 2, '"', len - (size_t)(eq + 2 - p))) { /* to the closing quote */
      const char *q = strchr(eq + 2, '"');
      if (q) len = (size_t)(q + 1 - p);
    }
    if (eq) {
      char *end;
      double v = strtod(eq + 1, &end);
      char buf[32];
      /* counts are integers; times (ms) always carry a decimal point */
      if (end == p + len && end != eq + 1 && memchr(eq + 1, '.', (size_t)(end - eq - 1)))
        fprintf(f, "  %-24.*s %12s\n", (int)(eq - p), p, cli_format_ms(v, buf, sizeof buf));
      else
        fprintf(f, "  %-24.*s %12.*s\n", (int)(eq - p), p, (int)(len - (size_t)(eq + 1 - p)), eq + 1);
    }
    p += len;
  }
}

/* One line per step of the pipeline, in the order they run. */
static int list_passes(void) {
  static const char *const when[] = {[CX_STEP_ONCE] = "once", [CX_STEP_FIXPOINT] = "fixpoint",
                                     [CX_STEP_FUSION] = "fusion=on"};
  int n;
  const cx_pipeline_step *st = cx_pipeline_steps(&n);
  for (int i = 0; i < n; i++) {
    char tag[64];
    snprintf(tag, sizeof tag, "%s%s", when[st[i].kind], st[i].required ? ", required" : "");
    printf("%-20s %-20s %s\n", st[i].pass.name, tag, st[i].desc);
  }
  return fflush(stdout) != 0 ? cli_error("cannot write to stdout") : CLI_OK;
}

int cli_compile(cxla_context *ctx, int argc, char **argv) {
  const char *path = NULL, *backend = NULL, *ptx = NULL, *arch = NULL;
  int only_positional = 0, list = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (only_positional || a[0] != '-' || !a[1]) {
      if (path) return cli_usage_error("compile", "expected one MODULE.hlo, got '%s' as well", a);
      path = a;
    } else if (!strcmp(a, "--")) {
      only_positional = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cli_print_usage(stdout, "compile");
      return CLI_OK;
    } else if (!strcmp(a, "--list-passes")) {
      list = 1;
    } else if (!strncmp(a, "--backend=", 10) || !strcmp(a, "--backend")) {
      if (!a[9] && i + 1 >= argc) return cli_usage_error("compile", "--backend needs a NAME");
      backend = a[9] ? a + 10 : argv[++i];
      if (!*backend) return cli_usage_error("compile", "--backend needs a NAME");
    } else if (!strncmp(a, "--emit-ptx=", 11) || !strncmp(a, "--gpu-arch=", 11)) {
      if (!a[11]) return cli_usage_error("compile", "%.10s needs a value", a);
      *(a[2] == 'e' ? &ptx : &arch) = a + 11;
    } else if (!strcmp(a, "--cache-dir")) {
      int rc = cli_apply_flag_words(ctx, "compile", argc, argv, &i);
      if (rc != CLI_OK) return rc;
    } else if (cx_flags_is_flag(a)) {
      int rc = cli_apply_flag(ctx, "compile", a);
      if (rc != CLI_OK) return rc;
    } else {
      return cli_usage_error("compile", "unknown option '%s'", a);
    }
  }
  if (list) {
    if (path) return cli_usage_error("compile", "--list-passes takes no MODULE.hlo");
    return list_passes();
  }
  if (!path) return cli_usage_error("compile", "missing MODULE.hlo");
  if ((ptx || arch) && (!backend || strcmp(backend, "gpu")))
    return cli_usage_error("compile", "--emit-ptx and --gpu-arch are for --backend=gpu");
  if (arch && !ptx) return cli_usage_error("compile", "--gpu-arch=%s without --emit-ptx=FILE (a GPU's own target is "
                                           "picked from the GPU)", arch);
  if (ptx) return cli_emit_ptx(ctx, path, arch ? arch : "sm_75", ptx);
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  if (cxla_module_parse_file(ctx, path, &m) != CXLA_OK) return cli_lib_error(ctx);
  cxla_compile_options opts;
  cxla_compile_options_init(&opts);
  if (backend) opts.backend = backend;
  double t0 = wall_ms();
  cxla_status s = cxla_compile(m, &opts, &e);
  double t1 = wall_ms();
  int rc = CLI_OK;
  if (s != CXLA_OK) {
    rc = cli_lib_error(ctx);
  } else {
    char buf[32];
    printf("compiled %s for %s in %s (parse not included)\n", path, opts.backend, cli_format_ms(t1 - t0, buf, sizeof buf));
    print_phases(stdout, cxla_executable_compile_stats(e));
    print_phases(stdout, cxla_executable_compile_counts(e));
    cxla_cost c;
    if (cxla_executable_cost(e, &c) != CXLA_OK) {
      rc = cli_lib_error(ctx);
    } else {
      printf("cost (XLA's HloCostAnalysis rules; bytes as the backend's kernels move them):\n");
      printf("  %-24s %12.0f\n  %-24s %12.0f\n  %-24s %12.0f\n", "flops", c.flops, "transcendentals",
             c.transcendentals, "bytes_accessed", c.bytes_accessed);
    }
    cxla_footprint f;
    if (rc == CLI_OK && cxla_executable_footprint(e, &f) == CXLA_OK) {
      printf("memory (bytes, XLA's CompiledMemoryStats; an execution holds at least their sum, less the aliased):\n");
      printf("  %-24s %12lld\n  %-24s %12lld\n  %-24s %12lld\n  %-24s %12lld\n  %-24s %12lld\n", "arguments",
             (long long)f.argument_bytes, "outputs", (long long)f.output_bytes, "aliased", (long long)f.alias_bytes,
             "temporaries", (long long)f.temp_bytes, "code", (long long)f.code_bytes);
    }
    if (fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
  }
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return rc;
}
