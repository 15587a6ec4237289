/* hello.c — a user's program, built against an installed cxla through pkg-config alone
 * (tests/package/install_test.sh): it sees only cxla.h and the library. */
#include <cxla.h>
#include <stdio.h>
#include <string.h>

static const char *k_module =
    "HloModule hello\n"
    "ENTRY e {\n"
    "  x = f32[3] parameter(0)\n"
    "  ROOT y = f32[3] multiply(x, x)\n"
    "}\n";

int main(void) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", CXLA_VERSION_MAJOR, CXLA_VERSION_MINOR, CXLA_VERSION_PATCH);
  if (strcmp(cxla_version(), want)) {
    fprintf(stderr, "hello: header says %s, library says %s\n", want, cxla_version());
    return 1;
  }
  cxla_context *ctx;
  if (cxla_context_create(&ctx) != CXLA_OK) return 1;
  cxla_module *m;
  if (cxla_module_parse(ctx, k_module, strlen(k_module), "hello.hlo", &m) != CXLA_OK) {
    fprintf(stderr, "hello: %s\n", cxla_context_errmsg(ctx));
    return 1;
  }
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  int64_t dims[1] = {3};
  float x[3] = {1, 2, 3};
  cxla_literal *in = cxla_literal_from_data(ctx, CXLA_F32, 1, dims, x, sizeof x), *out = NULL;
  if (!in || cxla_module_run(m, &o, 1, &in, &out) != CXLA_OK) {
    fprintf(stderr, "hello: %s\n", cxla_context_errmsg(ctx));
    return 1;
  }
  const float *y = cxla_literal_data(out);
  int ok = y[0] == 1 && y[1] == 4 && y[2] == 9;
  printf("cxla %s: %g %g %g\n", cxla_version(), y[0], y[1], y[2]);
  cxla_literal_destroy(in);
  cxla_literal_destroy(out);
  cxla_module_destroy(m);
  cxla_context_destroy(ctx);
  return ok ? 0 : 1;
}
