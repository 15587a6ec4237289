/* test_train_lr_input.c — the learning rate as the training step's last parameter
 * (cxla_optimizer.learning_rate_input): its place and type, and one compiled step run at
 * several rates giving what a step compiled with each rate as a constant gives (SGD, SGD
 * with momentum, Adam; one step per call and a loop of K steps; cpu and the interpreter). */
#include <math.h>
#include "train_helpers.h"

enum { NW = 4, K = 3, NRATES = 3 };
static const int k_wrt[NW] = {0, 1, 2, 3};
static const double k_rates[NRATES] = {0.05, 0.2, 0.0125};

static void init_opt(cxla_optimizer *o, int which, int steps, int input, double lr) {
  cxla_optimizer_init(o, which == 2 ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
  if (which == 1) o->momentum = 0.9;
  o->steps_per_call = steps;
  o->learning_rate_input = input;
  o->learning_rate = lr;
}

static cxla_executable *compile_on(cxla_module *m, const char *backend) {
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = backend;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, &co, &e));
  return e;
}

/* Runs e on literals (no donation: the same arguments serve every run). */
static cxla_literal *run_exe(cxla_executable *e, const char *backend, int n, cxla_literal *const *args) {
  cxla_buffer *b[40] = {0}, *res = NULL;
  cxla_literal *out = NULL;
  cxla_status st = CXLA_OK;
  for (int i = 0; i < n && st == CXLA_OK; i++) st = cxla_buffer_from_literal(test_ctx(), backend, args[i], &b[i]);
  if (st == CXLA_OK) st = cxla_executable_execute(e, n, b, &res);
  if (st == CXLA_OK) st = cxla_buffer_to_literal(res, &out);
  CHECK_MSG(st == CXLA_OK, "running: %s", cxla_context_errmsg(test_ctx()));
  for (int i = 0; i < n; i++) cxla_buffer_destroy(b[i]);
  cxla_buffer_destroy(res);
  return out;
}

/* Every element of every result equal. */
static void same_results(const char *what, cxla_literal *a, cxla_literal *b) {
  int n = cxla_literal_tuple_size(a);
  CHECK_EQ_INT(cxla_literal_tuple_size(b), n);
  if (cxla_literal_tuple_size(b) != n) return;
  for (int i = 0; i < n; i++) {
    cxla_literal *x = cxla_literal_tuple_get(a, i), *y = cxla_literal_tuple_get(b, i);
    int64_t m = cxla_literal_element_count(x);
    CHECK_EQ_INT((int)cxla_literal_element_count(y), (int)m);
    for (int64_t k = 0; k < m; k++) {
      double u = cxla_literal_get_f64(x, k), v = cxla_literal_get_f64(y, k);
      if (u != v) {
        CHECK_MSG(0, "%s: result %d element %lld: %.9g with the rate as a parameter, %.9g as a constant", what, i,
                  (long long)k, u, v);
        return;
      }
    }
  }
}

TEST(train_lr_input_matches_constant_rates) {
  for (int which = 0; which < 3; which++)
    for (int steps = 1; steps <= K; steps += K - 1)
      for (int b = 0; b < 2; b++) {
        const char *backend = b ? "cpu" : "interp";
        cxla_optimizer oi;
        init_opt(&oi, which, steps, 1, NAN); /* the constant is unused: NaN would show */
        cxla_module *si = th_step(th_mlp_text, k_wrt, NW, &oi);
        cxla_executable *ei = si ? compile_on(si, backend) : NULL; /* one compile for every rate */
        int n = si ? cxla_module_num_parameters(si) : 0;
        cxla_literal *args[40] = {0};
        for (int i = 0; ei && i < n - 1; i++) args[i] = th_param_lit(si, i, 7 + (uint64_t)i, i >= NW && i < n - 3);
        for (int r = 0; ei && r < NRATES; r++) {
          cxla_optimizer oc;
          init_opt(&oc, which, steps, 0, k_rates[r]);
          cxla_module *sc = th_step(th_mlp_text, k_wrt, NW, &oc);
          cxla_executable *ec = sc ? compile_on(sc, backend) : NULL;
          args[n - 1] = th_lit(CXLA_F32, -1, &k_rates[r]);
          cxla_literal *ri = run_exe(ei, backend, n, args), *rc = ec ? run_exe(ec, backend, n - 1, args) : NULL;
          char what[96];
          snprintf(what, sizeof what, "optimizer %d, %d steps per call, %s, rate %g", which, steps, backend, k_rates[r]);
          if (ri && rc) same_results(what, ri, rc);
          cxla_literal_destroy(ri);
          cxla_literal_destroy(rc);
          cxla_literal_destroy(args[n - 1]);
          args[n - 1] = NULL;
          cxla_executable_destroy(ec);
          cxla_module_destroy(sc);
        }
        for (int i = 0; i < n; i++) cxla_literal_destroy(args[i]);
        cxla_executable_destroy(ei);
        cxla_module_destroy(si);
      }
}

/* The rate is the last parameter, after the batch (the batch keeps its leading K, the rate
 * does not), f32[] for f32 weights and f64[] when a weight is f64; a bad flag is refused. */
TEST(train_lr_input_layout) {
  cxla_optimizer o;
  init_opt(&o, 2, K, 1, 0.001);
  cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
  if (s) {
    int n = cxla_module_num_parameters(s);
    CHECK_EQ_INT(n, 4 * 3 + 1 + 2 + 1);
    cxla_shape lr, x;
    CHECK_OK(cxla_module_parameter_shape(s, n - 1, &lr));
    CHECK_OK(cxla_module_parameter_shape(s, n - 3, &x));
    CHECK(lr.type == CXLA_F32 && lr.rank == 0);
    CHECK(x.rank == 3 && x.dims[0] == K);
  }
  cxla_module_destroy(s);
  char text[2048];
  int wrt[2] = {1, 2};
  init_opt(&o, 0, 1, 1, 0.01);
  s = th_step(th_quad_text(text, sizeof text, "f64"), wrt, 2, &o);
  if (s) {
    cxla_shape lr;
    CHECK_OK(cxla_module_parameter_shape(s, cxla_module_num_parameters(s) - 1, &lr));
    CHECK(lr.type == CXLA_F64 && lr.rank == 0);
  }
  cxla_module_destroy(s);
  cxla_module *m = th_parse(text), *bad = NULL;
  o.learning_rate_input = 2;
  if (m) CHECK_EQ_INT(cxla_module_train_step(m, wrt, 2, &o, &bad), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(bad == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "learning_rate_input 2");
  cxla_module_destroy(m);
}
