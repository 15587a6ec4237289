/* test_host_callbacks.c — cxla_host_callbacks_set and the cxla_host_callback custom-call through
 * the public API, on the interpreter, the cpu backend and the GPU's host step (on gpu-emu,
 * backend/gpu/gpu_host.c): a C dispatcher gets the operands (a
 * token among them) and fills the declared results; a callback whose result nobody reads still
 * runs; a failing callback fails the execution with its message; an id the dispatcher does not
 * know, or no dispatcher at all, is refused when compiling, naming the instruction and the id;
 * a callback in a loop whose trip count is data (on the GPU: the read-back path, no graph).
 * Expected values are worked out by hand. */
#include <stdio.h>
#include <string.h>
#include "test.h"

static const char *const k_backends[] = {"interp", "cpu", "gpu-emu"};
enum { NB = sizeof k_backends / sizeof *k_backends };

typedef struct {
  int calls[5];     /* per id */
  float last_sum;   /* what callback 1 saw */
  int saw_token;    /* callback 2's first operand was a token without data */
} log_t;

/* 1: () = f(x): sums x. 2: (token, y, n) = f(token, x): y = 2x + 1, n = its calls so far.
 * 3: fails. 4: y = f(x): y = x + 1. */
static int dispatch(void *user, uint64_t id, int nargs, const cxla_host_value *args, int nres, cxla_host_value *res,
                    char *err, size_t errlen) {
  log_t *log = user;
  if (id < 5) log->calls[id]++;
  if (id == 1 && nargs == 1 && nres == 0 && args[0].type == CXLA_F32) {
    const float *x = args[0].data;
    log->last_sum = 0;
    for (int64_t i = 0; i < args[0].dims[0]; i++) log->last_sum += x[i];
    return 0;
  }
  if (id == 2 && nargs == 2 && nres == 3 && res[1].type == CXLA_F32 && res[2].type == CXLA_S32 &&
      res[1].nbytes == args[1].nbytes) {
    log->saw_token = args[0].type == CXLA_TOKEN && !args[0].data && res[0].type == CXLA_TOKEN;
    const float *x = args[1].data;
    float *y = res[1].data;
    for (int64_t i = 0; i < args[1].dims[0]; i++) y[i] = 2 * x[i] + 1;
    *(int32_t *)res[2].data = log->calls[2];
    return 0;
  }
  if (id == 4 && nargs == 1 && nres == 1 && res[0].nbytes == args[0].nbytes && args[0].type == CXLA_F32) {
    for (size_t i = 0; i < args[0].nbytes / 4; i++) ((float *)res[0].data)[i] = ((const float *)args[0].data)[i] + 1;
    return 0;
  }
  snprintf(err, errlen, "callback %llu: boom", (unsigned long long)id);
  return 1;
}

static int lookup(void *user, uint64_t id, char *name, size_t n) {
  (void)user;
  if (id >= 1 && id <= 4) snprintf(name, n, "cb%llu", (unsigned long long)id);
  return id >= 1 && id <= 4;
}

static const char *k_module =
    "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  t0 = token[] after-all()\n"
    "  s = () custom-call(x), custom_call_target=\"cxla_host_callback\", custom_call_has_side_effect=true, "
    "api_version=API_VERSION_TYPED_FFI, backend_config={callback_id = 1 : ui64}\n"
    "  c = (token[], f32[3], s32[]) custom-call(t0, x), custom_call_target=\"cxla_host_callback\", "
    "custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={callback_id = 2 : ui64}\n"
    "  y = f32[3] get-tuple-element(c), index=1\n  n = s32[] get-tuple-element(c), index=2\n"
    "  ROOT r = (f32[3], s32[]) tuple(y, n)\n}\n";

static cxla_status compile_on(const char *text, const char *backend, cxla_executable **e) {
  cxla_module *m = NULL;
  *e = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "cb.hlo", &m));
  if (!m) return CXLA_ERR_PARSE;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_status s = cxla_compile(m, &o, e);
  cxla_module_destroy(m);
  return s;
}

static cxla_status run_x(cxla_executable *e, cxla_literal **out) {
  const float xv[3] = {1, -2, 0.5f};
  int64_t d = 3;
  cxla_literal *x = cxla_literal_from_data(test_ctx(), CXLA_F32, 1, &d, xv, sizeof xv);
  cxla_buffer *xb = NULL, *res = NULL;
  *out = NULL;
  cxla_status s = cxla_buffer_from_literal(test_ctx(), NULL, x, &xb);
  if (s == CXLA_OK) s = cxla_executable_execute(e, 1, &xb, &res);
  if (s == CXLA_OK) s = cxla_buffer_to_literal(res, out);
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(xb);
  cxla_literal_destroy(x);
  return s;
}

TEST(host_callbacks_run_on_interp_cpu_and_gpu) {
  for (int b = 0; b < NB; b++) {
    log_t log = {{0}, 0, 0};
    cxla_host_callbacks cb = {dispatch, lookup, &log};
    cxla_host_callbacks_set(&cb);
    cxla_executable *e = NULL;
    CHECK_MSG(compile_on(k_module, k_backends[b], &e) == CXLA_OK, "%s: %s", k_backends[b],
              cxla_context_errmsg(test_ctx()));
    for (int k = 1; e && k <= 2; k++) {
      cxla_literal *r = NULL;
      CHECK_MSG(run_x(e, &r) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
      if (!r) break;
      const float want[3] = {3, -3, 2};
      for (int i = 0; i < 3; i++) CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 0), i), want[i], 0);
      CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 1), 0), k, 0);
      CHECK_EQ_INT(log.calls[1], k); /* its result is read by nobody: it runs all the same */
      CHECK_NEAR(log.last_sum, -0.5, 0);
      CHECK_EQ_INT(log.saw_token, 1);
      cxla_literal_destroy(r);
    }
    cxla_executable_destroy(e);
    cxla_host_callbacks_set(NULL);
  }
}

TEST(host_callback_failure_fails_the_execution) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                     "  ROOT y = f32[3] custom-call(x), custom_call_target=\"cxla_host_callback\", "
                     "api_version=API_VERSION_TYPED_FFI, backend_config={callback_id = 3 : ui64}\n}\n";
  for (int b = 0; b < NB; b++) {
    log_t log = {{0}, 0, 0};
    cxla_host_callbacks cb = {dispatch, lookup, &log};
    cxla_host_callbacks_set(&cb);
    cxla_executable *e = NULL;
    CHECK_OK(compile_on(text, k_backends[b], &e));
    cxla_literal *r = NULL;
    if (e) CHECK_EQ_INT(run_x(e, &r), CXLA_ERR_RUNTIME);
    CHECK(r == NULL);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "custom-call 'y' (host callback 3): callback 3: boom");
    CHECK_EQ_INT(log.calls[3], 1);
    cxla_executable_destroy(e);
    cxla_host_callbacks_set(NULL);
  }
}

TEST(host_callback_unknown_id_is_refused_when_compiling) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                     "  ROOT y = f32[3] custom-call(x), custom_call_target=\"cxla_host_callback\", "
                     "backend_config={callback_id = 99 : ui64}\n}\n";
  const char *no_id = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                      "  ROOT y = f32[3] custom-call(x), custom_call_target=\"cxla_host_callback\"\n}\n";
  for (int b = 0; b < NB; b++) {
    cxla_executable *e = NULL;
    cxla_host_callbacks_set(NULL);
    CHECK_EQ_INT(compile_on(text, k_backends[b], &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()),
                       "cb.hlo:4:8: error: not supported: custom-call 'y' (target cxla_host_callback: callback_id "
                       "99: no host-callback dispatcher is set in this process (cxla_host_callbacks_set))");
    log_t log = {{0}, 0, 0};
    cxla_host_callbacks cb = {dispatch, lookup, &log};
    cxla_host_callbacks_set(&cb);
    CHECK_EQ_INT(compile_on(text, k_backends[b], &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()),
                       "custom-call 'y' (target cxla_host_callback: callback_id 99 is not registered with this "
                       "process's dispatcher)");
    CHECK_EQ_INT(compile_on(no_id, k_backends[b], &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "no callback_id = N in its backend_config");
    CHECK_EQ_INT(log.calls[1] + log.calls[2] + log.calls[3], 0); /* nothing ran */
    cxla_host_callbacks_set(NULL);
  }
}

/* x + 1 by callback 4 each trip of a loop of n trips, n an argument */
static const char *k_loop =
    "HloModule loop\ncond {\n  s = (s32[], s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  s = (s32[], s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  x = f32[3] get-tuple-element(s), index=2\n"
    "  x2 = f32[3] multiply(x, x)\n"
    "  y = f32[3] custom-call(x2), custom_call_target=\"cxla_host_callback\", api_version=API_VERSION_TYPED_FFI, "
    "backend_config={callback_id = 4 : ui64}\n  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], s32[], f32[3]) tuple(i2, n, y)\n}\n"
    "ENTRY e {\n  x = f32[3] parameter(0)\n  n = s32[] parameter(1)\n  z = s32[] constant(0)\n"
    "  w = (s32[], s32[], f32[3]) while((s32[], s32[], f32[3]) tuple(z, n, x)), condition=cond, body=body\n"
    "  ROOT r = f32[3] get-tuple-element(w), index=2\n}\n";

TEST(host_callback_in_a_data_dependent_loop) {
  for (int b = 0; b < NB; b++) {
    log_t log = {{0}, 0, 0};
    cxla_host_callbacks cb = {dispatch, lookup, &log};
    cxla_host_callbacks_set(&cb);
    cxla_executable *e = NULL;
    CHECK_MSG(compile_on(k_loop, k_backends[b], &e) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
    for (int trips = 0; e && trips <= 2; trips++) {
      const float xv[3] = {1, -2, 0.5f};
      int64_t d = 3;
      cxla_literal *x = cxla_literal_from_data(test_ctx(), CXLA_F32, 1, &d, xv, sizeof xv);
      cxla_literal *n = cxla_literal_create(test_ctx(), CXLA_S32, 0, NULL);
      cxla_literal_set_f64(n, 0, trips);
      cxla_buffer *args[2] = {NULL, NULL}, *res = NULL;
      cxla_literal *r = NULL;
      CHECK_OK(cxla_buffer_from_literal(test_ctx(), NULL, x, &args[0]));
      CHECK_OK(cxla_buffer_from_literal(test_ctx(), NULL, n, &args[1]));
      CHECK_MSG(cxla_executable_execute(e, 2, args, &res) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
      if (res) CHECK_OK(cxla_buffer_to_literal(res, &r));
      /* x -> x^2 + 1 per trip: {1, -2, 0.5} -> {2, 5, 1.25} -> {5, 26, 2.5625} */
      static const float want[3][3] = {{1, -2, 0.5f}, {2, 5, 1.25f}, {5, 26, 2.5625f}};
      for (int i = 0; r && i < 3; i++) CHECK_NEAR(cxla_literal_get_f64(r, i), want[trips][i], 0);
      cxla_literal_destroy(r);
      cxla_buffer_destroy(res);
      cxla_buffer_destroy(args[0]);
      cxla_buffer_destroy(args[1]);
      cxla_literal_destroy(x);
      cxla_literal_destroy(n);
    }
    CHECK_EQ_INT(log.calls[4], 0 + 1 + 2);
    cxla_executable_destroy(e);
    cxla_host_callbacks_set(NULL);
  }
}
