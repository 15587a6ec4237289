/* test_executable_footprint.c — cxla_executable_footprint: arguments and results counted by
 * their array leaves (tuples, tokens), aliases exactly where the buffer assignment computes a
 * result in a donated parameter's memory, temporaries as the cpu plan packs them (the same
 * figure as the compile counts' temp_bytes) with the reduction scratch, code only where code
 * was generated, and the same on the emulated GPU. (test_pjrt.py checks the PJRT report against
 * JAX's CPU.) */
#include <stdlib.h>
#include <string.h>
#include "runtime/executable.h"
#include "test.h"

static cxla_executable *compile_text(const char *text, const char *backend) {
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "footprint.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse: %s", cxla_context_errmsg(test_ctx()));
  if (s != CXLA_OK) return NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_executable *e = NULL;
  s = cxla_compile(m, &o, &e);
  CHECK_MSG(s == CXLA_OK, "compile (%s): %s", backend, cxla_context_errmsg(test_ctx()));
  cxla_module_destroy(m);
  return e;
}

static int64_t counted_temp_bytes(cxla_executable *e) {
  const char *t = strstr(cxla_executable_compile_counts(e), "temp_bytes=");
  return t ? strtoll(t + 11, NULL, 10) : -1;
}

/* Parameters: f32[64,32] (8192 B), a tuple (f32[8], s32[4]) (48 B) and a token (none); results
 * f32[64,32] and f32[] (8196 B). d = xᵀx has two readers (a product and a reduce) and d2 one
 * product: both are temporaries, live at once. */
static const char leaves_text[] =
    "HloModule leaves\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  x = f32[64,32] parameter(0)\n"
    "  t = (f32[8], s32[4]) parameter(1)\n"
    "  k = token[] parameter(2)\n"
    "  d = f32[32,32] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
    "  d2 = f32[32,32] dot(d, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  e = f32[64,32] dot(x, d2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(d, z), dimensions={0,1}, to_apply=add\n"
    "  ROOT r = (f32[64,32], f32[]) tuple(e, s)\n"
    "}\n";

TEST(executable_footprint_counts_leaves_and_temporaries) {
  const char *backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    cxla_executable *e = compile_text(leaves_text, backends[b]);
    if (!e) continue;
    cxla_footprint f;
    memset(&f, 0x5a, sizeof f);
    CHECK_OK(cxla_executable_footprint(e, &f));
    CHECK_MSG(f.argument_bytes == 8192 + 32 + 16, "%s: argument_bytes %lld", backends[b], (long long)f.argument_bytes);
    CHECK_MSG(f.output_bytes == 8192 + 4, "%s: output_bytes %lld", backends[b], (long long)f.output_bytes);
    CHECK_MSG(f.alias_bytes == 0, "%s: alias_bytes %lld", backends[b], (long long)f.alias_bytes);
    if (b == 0) {
      CHECK_MSG(f.temp_bytes == 0 && f.code_bytes == 0, "interp: temp %lld code %lld", (long long)f.temp_bytes,
                (long long)f.code_bytes);
    } else {
      /* d and d2 (4 KiB each) are live at once: at least 8 KiB; the counts say the same figure */
      CHECK_MSG(f.temp_bytes >= 8192, "cpu: temp_bytes %lld", (long long)f.temp_bytes);
      CHECK_MSG(f.temp_bytes == counted_temp_bytes(e), "cpu: temp_bytes %lld, counts %s", (long long)f.temp_bytes,
                cxla_executable_compile_counts(e));
      CHECK_MSG(f.code_bytes > 1000, "cpu: code_bytes %lld", (long long)f.code_bytes);
    }
    cxla_executable_destroy(e);
  }
}

/* p - 0.1 * g over f32[4096]: with p donated (the header's alias) the result is computed in
 * p's memory, 16 KiB of alias; undonated, none. */
TEST(executable_footprint_alias_is_where_the_result_lands) {
  static const char body[] =
      "ENTRY main {\n"
      "  p = f32[4096] parameter(0)\n"
      "  g = f32[4096] parameter(1)\n"
      "  c = f32[] constant(0.1)\n"
      "  cb = f32[4096] broadcast(c), dimensions={}\n"
      "  m = f32[4096] multiply(g, cb)\n"
      "  ROOT r = f32[4096] subtract(p, m)\n"
      "}\n";
  char donated[512], plain[512];
  snprintf(donated, sizeof donated, "HloModule sgd, input_output_alias={ {}: (0, {}, may-alias) }\n%s", body);
  snprintf(plain, sizeof plain, "HloModule sgd\n%s", body);
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(k ? donated : plain, "cpu");
    if (!e) continue;
    cxla_footprint f;
    CHECK_OK(cxla_executable_footprint(e, &f));
    CHECK_MSG(f.alias_bytes == (k ? 16384 : 0), "donated %d: alias_bytes %lld", k, (long long)f.alias_bytes);
    CHECK_MSG(f.argument_bytes == 32768 && f.output_bytes == 16384, "donated %d: %lld %lld", k,
              (long long)f.argument_bytes, (long long)f.output_bytes);
    CHECK_MSG(f.temp_bytes == 0, "donated %d: temp_bytes %lld (one fused kernel needs none)", k, (long long)f.temp_bytes);
    /* what the footprint says happens, happens: the result is in p's memory */
    if (k) {
      int64_t dims[1] = {4096};
      cxla_literal *lp = cxla_literal_create(test_ctx(), CXLA_F32, 1, dims);
      cxla_literal *lg = cxla_literal_create(test_ctx(), CXLA_F32, 1, dims);
      cxla_buffer *args[2] = {NULL, NULL}, *r = NULL;
      if (lp && lg) {
        for (int i = 0; i < 4096; i++) ((float *)cxla_literal_data(lp))[i] = (float)i, ((float *)cxla_literal_data(lg))[i] = 1;
        CHECK_OK(cxla_buffer_from_literal(test_ctx(), "cpu", lp, &args[0]));
        CHECK_OK(cxla_buffer_from_literal(test_ctx(), "cpu", lg, &args[1]));
      }
      if (args[0] && args[1]) {
        void *mem = args[0]->host->data;
        CHECK_OK(cxla_executable_execute(e, 2, args, &r));
        if (r) {
          CHECK_MSG(r->host->data == mem, "the result is not in p's memory");
          CHECK_NEAR(cxla_literal_get_f64(r->host, 100), 99.9, 1e-4);
        }
      }
      cxla_literal_destroy(lp);
      cxla_literal_destroy(lg);
      cxla_buffer_destroy(r);
      cxla_buffer_destroy(args[0]);
      cxla_buffer_destroy(args[1]);
    }
    cxla_executable_destroy(e);
  }
}

/* The emulated GPU reports its own plan: the arena that its kernels' temporaries take and the
 * kernels' code as the driver was given it. */
TEST(executable_footprint_on_the_emulated_gpu) {
  static const char text[] =
      "HloModule two\n"
      "ENTRY main {\n"
      "  x = f32[64,32] parameter(0)\n"
      "  d = f32[32,32] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
      "  e = f32[64,32] dot(x, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  ROOT n = f32[64,32] negate(e)\n"
      "}\n";
  cxla_executable *e = compile_text(text, "gpu-emu");
  if (!e) return;
  cxla_footprint f;
  CHECK_OK(cxla_executable_footprint(e, &f));
  CHECK_MSG(f.argument_bytes == 8192 && f.output_bytes == 8192 && f.alias_bytes == 0, "%lld %lld %lld",
            (long long)f.argument_bytes, (long long)f.output_bytes, (long long)f.alias_bytes);
  CHECK_MSG(f.temp_bytes >= 4096, "temp_bytes %lld (d lives between the two products)", (long long)f.temp_bytes);
  CHECK_MSG(f.code_bytes > 0, "code_bytes %lld", (long long)f.code_bytes);
  cxla_executable_destroy(e);
}

TEST(executable_footprint_bad_arguments) {
  cxla_footprint f;
  CHECK(cxla_executable_footprint(NULL, &f) == CXLA_ERR_INVALID_ARGUMENT);
  cxla_executable *e = compile_text("HloModule one\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n",
                                    "cpu");
  if (!e) return;
  CHECK(cxla_executable_footprint(e, NULL) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cxla_executable_footprint: NULL argument");
  cxla_executable_destroy(e);
}
