/* test_api.c — modules, compile, execute and buffers through the public API: argument checks,
 * backend selection, compile stats, executables outliving their module, and one executable
 * run from 8 threads at once. Expected values are worked out by hand. */
#include <pthread.h>
#include <unistd.h>
#include "test.h"
#include "util/util.h"

static const int64_t D23[2] = {2, 3}, D32[2] = {3, 2};

/* ENTRY main(x: f32[2,3], y: f32[2,3]) = (x + y) * 2 */
static cxla_module *build_axpy(void) {
  cxla_module *m = cxla_module_create(test_ctx(), "axpy");
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_shape s = {CXLA_F32, 2, D23, 0, NULL};
  cxla_op x = cxla_builder_parameter(b, 0, &s, "x"), y = cxla_builder_parameter(b, 1, &s, "y");
  cxla_op two = cxla_builder_broadcast(b, cxla_builder_constant_scalar(b, CXLA_F32, 2), 2, D23, NULL);
  cxla_status st = cxla_builder_finish(b, cxla_builder_mul(b, cxla_builder_add(b, x, y), two), 1, NULL);
  CHECK_MSG(st == CXLA_OK, "build: %s", cxla_context_errmsg(test_ctx()));
  return m;
}

static cxla_buffer *buffer_f32(const int64_t *dims, const float *v, size_t nbytes) {
  cxla_literal *l = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, dims, v, nbytes);
  cxla_buffer *b = NULL;
  CHECK_OK(cxla_buffer_from_literal(test_ctx(), NULL, l, &b));
  cxla_literal_destroy(l);
  return b;
}

TEST(api_compile_execute_buffers) {
  cxla_module *m = build_axpy();
  cxla_executable *e = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  CHECK(o.backend && !strcmp(o.backend, "interp") && o.opt_level == -1 && o.threads == 0);
  CHECK_OK(cxla_compile(m, &o, &e));
  /* The executable keeps its own copy: the module can go. */
  cxla_module_destroy(m);
  if (!e) return;
  const char *stats = cxla_executable_compile_stats(e);
  CHECK_STR_CONTAINS(stats, "verify=");
  CHECK_STR_CONTAINS(stats, "clone=");
  CHECK(strstr(stats, "parse=") == NULL); /* built, not parsed */
  float xv[6] = {1, 2, 3, 4, 5, 6}, yv[6] = {0.5f, -2, 0, 1, 1, -6};
  cxla_buffer *args[2] = {buffer_f32(D23, xv, sizeof xv), buffer_f32(D23, yv, sizeof yv)};
  cxla_buffer *res = NULL;
  CHECK_OK(cxla_executable_execute(e, 2, args, &res));
  cxla_literal *out = NULL;
  if (res) CHECK_OK(cxla_buffer_to_literal(res, &out));
  if (out) {
    const double want[6] = {3, 0, 6, 10, 12, 0};
    CHECK_EQ_INT(cxla_literal_type(out), CXLA_F32);
    CHECK_EQ_INT(cxla_literal_rank(out), 2);
    for (int i = 0; i < 6; i++) CHECK_NEAR(cxla_literal_get_f64(out, i), want[i], 0);
  }
  /* to_literal copies: changing the copy leaves the buffer alone. */
  cxla_literal *again = NULL;
  if (out && res) {
    cxla_literal_set_f64(out, 0, 99);
    CHECK_OK(cxla_buffer_to_literal(res, &again));
    if (again) CHECK_NEAR(cxla_literal_get_f64(again, 0), 3, 0);
  }
  cxla_literal_destroy(again);
  cxla_literal_destroy(out);
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(args[0]);
  cxla_buffer_destroy(args[1]);
  cxla_executable_destroy(e);
}

TEST(api_execute_checks_arguments) {
  cxla_module *m = build_axpy();
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, NULL, &e));
  cxla_module_destroy(m);
  if (!e) return;
  float v[6] = {0};
  cxla_buffer *good = buffer_f32(D23, v, sizeof v), *bad = buffer_f32(D32, v, sizeof v);
  cxla_buffer *res = (cxla_buffer *)1;
  cxla_buffer *one[1] = {good};
  CHECK_EQ_INT(cxla_executable_execute(e, 1, one, &res), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "expected 2 arguments (one per ENTRY parameter), got 1");
  CHECK(res == NULL);
  cxla_buffer *wrong[2] = {good, bad};
  CHECK_EQ_INT(cxla_executable_execute(e, 2, wrong, &res), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "argument 1 (parameter 'y'): expected f32[2,3], got f32[3,2]");
  cxla_buffer *null_arg[2] = {good, NULL};
  CHECK_EQ_INT(cxla_executable_execute(e, 2, null_arg, &res), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "argument 1 (parameter 'y') is NULL");
  CHECK_EQ_INT(cxla_executable_execute(e, 2, NULL, &res), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cxla_executable_execute(e, 2, wrong, NULL), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cxla_executable_execute(NULL, 0, NULL, &res), CXLA_ERR_INVALID_ARGUMENT);
  cxla_buffer_destroy(good);
  cxla_buffer_destroy(bad);
  cxla_executable_destroy(e);
}

TEST(api_backend_selection) {
  cxla_module *m = build_axpy();
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  cxla_executable *e = (cxla_executable *)1;
  o.backend = "cpu"; /* built in since the CPU backend landed */
  CHECK_OK(cxla_compile(m, &o, &e));
  cxla_executable_destroy(e);
  e = (cxla_executable *)1;
  o.backend = "gpu-emu"; /* the gpu backend, its grid emulated on the host */
  CHECK_OK(cxla_compile(m, &o, &e));
  cxla_executable_destroy(e);
  o.backend = "tpu";
  CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "unknown backend 'tpu' (known: interp");
  o.backend = "interp";
  o.opt_level = 7;
  CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "opt_level 7");
  o.opt_level = -1;
  o.threads = -2;
  CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_INVALID_ARGUMENT);
  o.threads = 0;
  o.backend = NULL; /* NULL means interp */
  CHECK_OK(cxla_compile(m, &o, &e));
  cxla_executable_destroy(e);
  int64_t d = 2;
  cxla_literal *l = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d);
  cxla_buffer *buf = (cxla_buffer *)1;
  CHECK_EQ_INT(cxla_buffer_from_literal(test_ctx(), "tpu", l, &buf), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(buf == NULL);
  CHECK_EQ_INT(cxla_buffer_from_literal(test_ctx(), "interp", NULL, &buf), CXLA_ERR_INVALID_ARGUMENT);
  cxla_literal_destroy(l);
  cxla_module_destroy(m);
}

TEST(api_compile_needs_entry) {
  cxla_module *m = cxla_module_create(test_ctx(), "empty");
  cxla_executable *e = (cxla_executable *)1;
  CHECK(cxla_compile(m, NULL, &e) != CXLA_OK);
  CHECK(e == NULL);
  CHECK_EQ_INT(cxla_module_num_parameters(m), -1);
  cxla_shape s;
  CHECK(cxla_module_result_shape(m, &s) != CXLA_OK);
  CHECK(cxla_module_parameter_name(m, 0) == NULL);
  cxla_module_destroy(m);
  CHECK(cxla_module_create(test_ctx(), "has space") == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "not a valid HLO name");
}

TEST(api_module_run_and_signature) {
  cxla_module *m = build_axpy();
  CHECK_EQ_INT(cxla_module_num_parameters(m), 2);
  cxla_shape s;
  CHECK_OK(cxla_module_parameter_shape(m, 1, &s));
  CHECK(s.type == CXLA_F32 && s.rank == 2 && s.dims[0] == 2 && s.dims[1] == 3);
  CHECK_EQ_INT(cxla_module_parameter_shape(m, 2, &s), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_OK(cxla_module_result_shape(m, &s));
  CHECK(s.type == CXLA_F32 && s.rank == 2);
  CHECK(cxla_module_parameter_name(m, 0) && !strcmp(cxla_module_parameter_name(m, 0), "x"));
  float xv[6] = {1, 1, 1, 1, 1, 1}, yv[6] = {0, 1, 2, 3, 4, 5};
  cxla_literal *args[2] = {cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, xv, sizeof xv),
                           cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, yv, sizeof yv)};
  cxla_literal *out = NULL;
  CHECK_OK(cxla_module_run(m, NULL, 2, args, &out));
  for (int i = 0; out && i < 6; i++) CHECK_NEAR(cxla_literal_get_f64(out, i), 2 * (1 + i), 0);
  cxla_literal_destroy(out);
  CHECK_EQ_INT(cxla_module_run(m, NULL, 1, args, &out), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(out == NULL);
  for (int i = 0; i < 2; i++) cxla_literal_destroy(args[i]);
  cxla_module_destroy(m);
}

static const char axpy_text[] =
    "HloModule axpy\n\n"
    "ENTRY main {\n"
    "  x = f32[2,3]{1,0} parameter(0)\n"
    "  y = f32[2,3]{1,0} parameter(1)\n"
    "  add.1 = f32[2,3]{1,0} add(x, y)\n"
    "  c = f32[] constant(2)\n"
    "  b = f32[2,3]{1,0} broadcast(c), dimensions={}\n"
    "  ROOT m = f32[2,3]{1,0} multiply(add.1, b)\n"
    "}\n";

TEST(api_parse_text_and_files) {
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), axpy_text, sizeof axpy_text - 1, "axpy.hlo", &m));
  if (m) {
    CHECK_EQ_INT(cxla_module_num_parameters(m), 2);
    CHECK(cxla_module_parameter_name(m, 1) && !strcmp(cxla_module_parameter_name(m, 1), "y"));
    char *text = cxla_module_to_string(m);
    CHECK_STR_CONTAINS(text, "ENTRY main");
    /* Canonical text parses back to the same text. */
    cxla_module *m2 = NULL;
    if (text) CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "again.hlo", &m2));
    char *text2 = m2 ? cxla_module_to_string(m2) : NULL;
    CHECK(text && text2 && !strcmp(text, text2));
    free(text);
    free(text2);
    cxla_module_destroy(m2);
    cxla_executable *e = NULL;
    CHECK_OK(cxla_compile(m, NULL, &e));
    CHECK_STR_CONTAINS(cxla_executable_compile_stats(e), "parse=");
    cxla_executable_destroy(e);
  }
  cxla_module_destroy(m);
  char path[256];
  snprintf(path, sizeof path, "/tmp/cxla_test_api_%d.hlo", (int)getpid());
  FILE *f = fopen(path, "w");
  if (f) { fputs(axpy_text, f); fclose(f); }
  m = NULL;
  CHECK_OK(cxla_module_parse_file(test_ctx(), path, &m));
  cxla_module_destroy(m);
  unlink(path);
  m = (cxla_module *)1;
  CHECK_EQ_INT(cxla_module_parse_file(test_ctx(), "/nonexistent/m.hlo", &m), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot open /nonexistent/m.hlo: No such file or directory");
  CHECK(m == NULL);
  /* A syntax error names the file, line and column. */
  static const char bad[] = "HloModule bad\n\nENTRY main {\n  ROOT x = f32[2] parameter(0\n}\n";
  CHECK_EQ_INT(cxla_module_parse(test_ctx(), bad, sizeof bad - 1, "bad.hlo", &m), CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "bad.hlo:5:1: error: ");
  /* Well-formed text with a shape error fails verification. */
  static const char ill[] =
      "HloModule ill\n\nENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n"
      "  ROOT a = f32[2] add(x, y)\n}\n";
  CHECK_EQ_INT(cxla_module_parse(test_ctx(), ill, sizeof ill - 1, "ill.hlo", &m), CXLA_ERR_VERIFY);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "ill.hlo:6:");
}

/* ---- one executable, 8 threads ---------------------------------------------------------------- */

typedef struct {
  cxla_executable *e;
  int id;
  int failures;
} worker;

static void *work(void *p) {
  worker *w = p;
  for (int iter = 0; iter < 20; iter++) {
    float xv[6], yv[6];
    for (int i = 0; i < 6; i++) { xv[i] = (float)(w->id * 10 + i); yv[i] = (float)iter; }
    cxla_literal *lx = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, xv, sizeof xv);
    cxla_literal *ly = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, yv, sizeof yv);
    cxla_buffer *args[2] = {NULL, NULL}, *res = NULL;
    cxla_literal *out = NULL;
    int ok = lx && ly && cxla_buffer_from_literal(test_ctx(), NULL, lx, &args[0]) == CXLA_OK &&
             cxla_buffer_from_literal(test_ctx(), NULL, ly, &args[1]) == CXLA_OK &&
             cxla_executable_execute(w->e, 2, args, &res) == CXLA_OK && cxla_buffer_to_literal(res, &out) == CXLA_OK;
    for (int i = 0; ok && i < 6; i++) ok = cxla_literal_get_f64(out, i) == 2.0 * (w->id * 10 + i + iter);
    w->failures += !ok;
    cxla_literal_destroy(out);
    cxla_buffer_destroy(res);
    cxla_buffer_destroy(args[0]);
    cxla_buffer_destroy(args[1]);
    cxla_literal_destroy(lx);
    cxla_literal_destroy(ly);
  }
  return NULL;
}

TEST(api_execute_from_8_threads) {
  cxla_module *m = build_axpy();
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, NULL, &e));
  cxla_module_destroy(m);
  if (!e) return;
  pthread_t th[8];
  worker w[8];
  for (int i = 0; i < 8; i++) {
    w[i] = (worker){e, i, 0};
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %d wrong results (%s)", i, w[i].failures,
                                        cxla_context_errmsg(test_ctx()));
  cxla_executable_destroy(e);
}

/* Every allocation in compile, buffers and execute may fail: the result is OUT_OF_MEMORY (or
 * success), never a crash or a leak (ASan builds check the leaks). */
TEST(api_out_of_memory_never_crashes) {
  cxla_module *m = build_axpy();
  float xv[6] = {1, 2, 3, 4, 5, 6};
  cxla_literal *x = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, xv, sizeof xv);
  cxla_literal *args[2] = {x, x};
  int ok_seen = 0;
  for (int k = 0; k < 200 && !ok_seen; k++) {
    cxla_literal *out = NULL;
    cx_alloc_fail_after(k);
    cxla_status s = cxla_module_run(m, NULL, 2, args, &out);
    cx_alloc_fail_after(-1);
    CHECK_MSG(s == CXLA_OK || s == CXLA_ERR_OUT_OF_MEMORY, "k=%d: %s", k, cxla_context_errmsg(test_ctx()));
    if (s == CXLA_OK) {
      ok_seen = 1;
      CHECK(out && cxla_literal_get_f64(out, 5) == 24);
    }
    cxla_literal_destroy(out);
  }
  CHECK(ok_seen);
  cxla_literal_destroy(x);
  cxla_module_destroy(m);
}

/* cxla_context_get_flag reads back what CXLA_FLAGS / cxla_context_set_flags set, as written;
 * --pjrt-gpu takes auto, emu or off only. */
TEST(api_context_get_flag) {
  cxla_context *ctx = test_ctx();
  char v[64];
  CHECK_OK(cxla_context_set_flags(ctx, "--threads=3 --fusion=off --pjrt-gpu=emu --max-loop-iterations=123456789012"));
  CHECK_OK(cxla_context_get_flag(ctx, "threads", v, sizeof v));
  CHECK(!strcmp(v, "3"));
  CHECK_OK(cxla_context_get_flag(ctx, "fusion", v, sizeof v));
  CHECK(!strcmp(v, "off"));
  CHECK_OK(cxla_context_get_flag(ctx, "pjrt-gpu", v, sizeof v));
  CHECK(!strcmp(v, "emu"));
  CHECK_OK(cxla_context_get_flag(ctx, "max-loop-iterations", v, sizeof v));
  CHECK(!strcmp(v, "123456789012"));
  CHECK_OK(cxla_context_get_flag(ctx, "cache-dir", v, sizeof v));
  CHECK(!strcmp(v, "")); /* a text flag not set */
  CHECK_EQ_INT(cxla_context_get_flag(ctx, "bogus", v, sizeof v), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "no flag '--bogus'");
  CHECK_EQ_INT(cxla_context_get_flag(ctx, "pjrt-gpu", v, 3), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "--pjrt-gpu's value takes 4 bytes, the buffer 3");
  CHECK(v[0] == 0);
  CHECK_EQ_INT(cxla_context_get_flag(ctx, "threads", NULL, 0), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cxla_context_set_flags(ctx, "--pjrt-gpu=cuda"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "flag --pjrt-gpu wants one of auto|emu|off, not 'cuda'");
  CHECK_OK(cxla_context_get_flag(ctx, "pjrt-gpu", v, sizeof v));
  CHECK(!strcmp(v, "emu")); /* the bad value changed nothing */
}
