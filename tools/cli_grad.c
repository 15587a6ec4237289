/* cli_grad.c — `cxla grad MODULE.hlo --wrt=0,2`: the gradient module (cxla_module_grad) as
 * HLO text on stdout, which `cxla run` runs like any module. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "api/tooling.h"

int cli_parse_wrt(const char *s, int **out, int *n) {
  int cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  int *v = malloc(sizeof *v * (size_t)cap);
  if (!v) return 0;
  *n = 0;
  for (const char *p = s;;) {
    char *end;
    long x = strtol(p, &end, 10);
    if (end == p || x < 0 || x > 1000000 || (*end && *end != ',')) {
      free(v);
      return 0;
    }
    v[(*n)++] = (int)x;
    if (!*end) break;
    p = end + 1;
  }
  *out = v;
  return 1;
}

int cli_grad(cxla_context *ctx, int argc, char **argv) {
  const char *path = NULL, *wrt_arg = NULL;
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_positional && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
      cli_print_usage(stdout, "grad");
      return CLI_OK;
    } else if (!only_positional && !strcmp(a, "--")) {
      only_positional = 1;
    } else if (!only_positional && !strncmp(a, "--wrt=", 6)) {
      wrt_arg = a + 6;
    } else if (!only_positional && cx_flags_is_flag(a)) {
      int r = cli_apply_flag(ctx, "grad", a);
      if (r != CLI_OK) return r;
    } else if (!only_positional && a[0] == '-' && a[1]) {
      return cli_usage_error("grad", "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      return cli_usage_error("grad", "expected one MODULE.hlo, got '%s' as well", a);
    }
  }
  if (!path) return cli_usage_error("grad", "missing MODULE.hlo");
  if (!wrt_arg) return cli_usage_error("grad", "missing --wrt=N[,N...] (the parameters to differentiate with respect to)");
  int *wrt = NULL, nwrt = 0;
  if (!cli_parse_wrt(wrt_arg, &wrt, &nwrt))
    return cli_usage_error("grad", "--wrt=%s: expected parameter numbers separated by commas, e.g. --wrt=0,2", wrt_arg);
  cxla_module *m = NULL, *g = NULL;
  int rc = CLI_OK;
  if (cxla_module_parse_file(ctx, path, &m) != CXLA_OK || cxla_module_grad(m, wrt, nwrt, &g) != CXLA_OK) {
    rc = cli_lib_error(ctx);
  } else {
    char *text = cxla_module_to_string(g);
    if (!text) rc = cli_lib_error(ctx);
    else {
      fputs(text, stdout);
      if (fflush(stdout) != 0) rc = cli_error("cannot write to stdout");
    }
    free(text);
  }
  cxla_module_destroy(g);
  cxla_module_destroy(m);
  free(wrt);
  return rc;
}
