/* test_train_step.c — cxla_module_train_step with one step per call: the layout of the step
 * module (parameters, result, aliasing), the updates of SGD, SGD with momentum (and nesterov)
 * and Adam (two steps, so that t = 2's bias correction counts) against the formulas worked out
 * in double, narrow float weights, the text round trip, the cpu backend against the
 * interpreter on an MLP, and what is refused. */
#include "train_helpers.h"
#include "util/util.h"

static const char *const k_backends[2] = {"interp", "cpu"};

/* Runs the quadratic model's step `steps` times from (w, b) = (0.5, -0.25, 1, 2, 0.125), data x
 * (changing every step), state starting at zero, and checks loss, weights and state against
 * the reference each time. tol: relative. */
static void quad_steps(const char *type, cxla_type t, const cxla_optimizer *o, int steps, double tol) {
  char text[2048];
  int wrt[2] = {1, 2};
  cxla_module *s = th_step(th_quad_text(text, sizeof text, type), wrt, 2, o);
  if (!s) return;
  int per = o->kind == CXLA_OPTIMIZER_ADAM ? 2 : o->momentum > 0 ? 1 : 0, adam = o->kind == CXLA_OPTIMIZER_ADAM;
  int nparams = 2 + 2 * per + adam + 1;
  CHECK_EQ_INT(cxla_module_num_parameters(s), nparams);
  for (int b = 0; b < 2; b++) {
    th_ref r = {*o, 5, {0.5, -0.25, 1, 2, 0.125}, {0}, {0}, {0}, 0};
    if (o->momentum > 0) /* a velocity already under way */
      for (int i = 0; i < 5; i++) r.s0[i] = 0.25 * (i - 2);
    for (int k = 0; k < steps; k++) {
      double x[4] = {0.25 * k, -1, 0.5, 1.5 + k};
      cxla_literal *args[8] = {th_lit(t, 4, r.w), th_lit(t, -1, &r.w[4])};
      int n = 2;
      for (int j = 0; j < per; j++) {
        double *st = j ? r.s1 : r.s0;
        args[n++] = th_lit(t, 4, st);
        args[n++] = th_lit(t, -1, &st[4]);
      }
      double cnt = r.count;
      if (adam) args[n++] = th_lit(CXLA_S32, -1, &cnt);
      args[n++] = th_lit(t, 4, x);
      /* the reference: gradients at the current weights, then the update */
      double loss = th_quad_grad(&r, x);
      th_ref_update(&r);
      cxla_literal *res = th_run(s, k_backends[b], n, args);
      for (int i = 0; i < n; i++) cxla_literal_destroy(args[i]);
      if (!res) return;
      CHECK_EQ_INT(cxla_literal_tuple_size(res), 1 + 2 + 2 * per + adam);
      char what[96];
      snprintf(what, sizeof what, "%s %s step %d loss", type, k_backends[b], k + 1);
      th_near(what, 0, cxla_literal_get_f64(cxla_literal_tuple_get(res, 0), 0), loss, tol);
      for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "%s %s step %d weight", type, k_backends[b], k + 1);
        double got = cxla_literal_get_f64(cxla_literal_tuple_get(res, 1 + i / 4), i % 4);
        th_near(what, i, got, r.w[i], tol);
        r.w[i] = got; /* go on from what cxla computed, so errors do not compound */
        for (int j = 0; j < per; j++) {
          double *st = j ? r.s1 : r.s0;
          snprintf(what, sizeof what, "%s %s step %d state %d", type, k_backends[b], k + 1, j);
          got = cxla_literal_get_f64(cxla_literal_tuple_get(res, 3 + 2 * j + i / 4), i % 4);
          th_near(what, i, got, st[i], tol);
          st[i] = got;
        }
      }
      if (adam) CHECK_EQ_INT(cxla_literal_get_f64(cxla_literal_tuple_get(res, 3 + 2 * per), 0), r.count);
      cxla_literal_destroy(res);
    }
  }
  cxla_module_destroy(s);
}

TEST(train_step_sgd_by_hand) {
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  o.learning_rate = 0.1;
  quad_steps("f64", CXLA_F64, &o, 2, 1e-15);
}

TEST(train_step_momentum_by_hand) {
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  o.learning_rate = 0.05;
  o.momentum = 0.9;
  quad_steps("f64", CXLA_F64, &o, 3, 1e-15);
  o.nesterov = 1;
  quad_steps("f64", CXLA_F64, &o, 3, 1e-15);
}

/* Three steps: t = 1, 2, 3 each with its own bias correction. */
TEST(train_step_adam_by_hand) {
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
  o.learning_rate = 0.01;
  quad_steps("f64", CXLA_F64, &o, 3, 1e-14);
  o.beta1 = 0.5, o.beta2 = 0.75, o.epsilon = 0.125; /* terms that matter at every step */
  quad_steps("f64", CXLA_F64, &o, 3, 1e-14);
}

/* f32 weights in f32; f16 and bf16 weights (and state) updated in f32 and rounded once: within
 * a rounding of the type of the result worked out in double (the inputs are dyadic, so the
 * model's own narrow arithmetic is exact). */
TEST(train_step_narrow_floats) {
  static const struct { const char *name; cxla_type t; double tol; } types[] = {
      {"f32", CXLA_F32, 1e-6}, {"f16", CXLA_F16, 1.0 / 1024}, {"bf16", CXLA_BF16, 1.0 / 128}};
  for (int i = 0; i < 3; i++) {
    cxla_optimizer o;
    cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
    o.learning_rate = 0.0625;
    quad_steps(types[i].name, types[i].t, &o, 1, types[i].tol);
    cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
    o.learning_rate = 0.0625;
    o.momentum = 0.5;
    quad_steps(types[i].name, types[i].t, &o, 1, types[i].tol);
  }
}

/* Parameters (weights, state, data), the result and the aliasing, as cxla.h lays them out. */
TEST(train_step_layout) {
  char text[2048];
  int wrt[2] = {2, 1}; /* b before w: the step takes them in wrt's order */
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
  cxla_module *s = th_step(th_quad_text(text, sizeof text, "f32"), wrt, 2, &o);
  if (!s) return;
  static const struct { int rank; cxla_type t; } want[] = {
      {0, CXLA_F32}, {1, CXLA_F32}, {0, CXLA_F32}, {1, CXLA_F32}, {0, CXLA_F32}, {1, CXLA_F32}, {0, CXLA_S32}, {1, CXLA_F32}};
  CHECK_EQ_INT(cxla_module_num_parameters(s), 8);
  for (int i = 0; i < 8 && i < cxla_module_num_parameters(s); i++) {
    cxla_shape sh;
    CHECK_OK(cxla_module_parameter_shape(s, i, &sh));
    CHECK_MSG(sh.rank == want[i].rank && sh.type == want[i].t, "parameter %d: rank %d type %s", i, sh.rank,
              cxla_type_name(sh.type));
  }
  CHECK_STR_CONTAINS(cxla_module_parameter_name(s, 0), "b");
  CHECK_STR_CONTAINS(cxla_module_parameter_name(s, 2), "adam_mu");
  CHECK_STR_CONTAINS(cxla_module_parameter_name(s, 4), "adam_nu");
  CHECK_STR_CONTAINS(cxla_module_parameter_name(s, 6), "adam_count");
  CHECK_STR_CONTAINS(cxla_module_parameter_name(s, 7), "x");
  cxla_shape r;
  CHECK_OK(cxla_module_result_shape(s, &r));
  CHECK(r.type == CXLA_TUPLE && r.ntuple == 8);
  char *t = cxla_module_to_string(s);
  CHECK_STR_CONTAINS(t, "input_output_alias={ {1}: (0, {}, may-alias), {2}: (1, {}, may-alias), {3}: (2, {}, "
                        "may-alias), {4}: (3, {}, may-alias), {5}: (4, {}, may-alias), {6}: (5, {}, may-alias), {7}: "
                        "(6, {}, may-alias) }");
  /* the text parses back to the same module */
  cxla_module *back = t ? th_parse(t) : NULL;
  char *t2 = back ? cxla_module_to_string(back) : NULL;
  CHECK_MSG(t && t2 && !strcmp(t, t2), "the step module does not print the same after parsing it back");
  free(t);
  free(t2);
  cxla_module_destroy(back);
  /* plain SGD keeps no state */
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  cxla_module_destroy(s);
  s = th_step(th_quad_text(text, sizeof text, "f32"), wrt, 2, &o);
  if (s) CHECK_EQ_INT(cxla_module_num_parameters(s), 3);
  cxla_module_destroy(s);
}

/* The MLP's step on the cpu against the interpreter, every optimizer, from the same inputs. */
TEST(train_step_mlp_cpu_matches_interp) {
  int wrt[4] = {0, 1, 2, 3};
  for (int k = 0; k < 3; k++) {
    cxla_optimizer o;
    cxla_optimizer_init(&o, k == 2 ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
    if (k == 1) o.momentum = 0.9, o.nesterov = 1;
    cxla_module *s = th_step(th_mlp_text, wrt, 4, &o);
    if (!s) continue;
    int n = cxla_module_num_parameters(s);
    cxla_literal *args[16] = {0};
    for (int i = 0; i < n && i < 16; i++) {
      int state = i >= 4 && i < n - 2;
      args[i] = th_param_lit(s, i, (uint64_t)i + 1, state && k != 1);
    }
    /* one-hot labels: class (b * 3) % 4 */
    for (int64_t b = 0; b < TH_MLP_BATCH; b++)
      for (int64_t c = 0; c < 4; c++) cxla_literal_set_f64(args[n - 1], b * 4 + c, c == (b * 3) % 4);
    if (k == 2) cxla_literal_set_f64(args[n - 3], 0, 3); /* Adam: 3 steps taken already */
    cxla_literal *want = th_run(s, "interp", n, args), *got = th_run(s, "cpu", n, args);
    for (int i = 0; want && got && i < cxla_literal_tuple_size(want); i++) {
      cxla_literal *a = cxla_literal_tuple_get(got, i), *b = cxla_literal_tuple_get(want, i);
      for (int64_t e = 0; e < cxla_literal_element_count(b); e++) {
        char what[64];
        snprintf(what, sizeof what, "optimizer %d result %d", k, i);
        th_near(what, (int)e, cxla_literal_get_f64(a, e), cxla_literal_get_f64(b, e), 1e-5);
      }
    }
    cxla_literal_destroy(want);
    cxla_literal_destroy(got);
    for (int i = 0; i < n && i < 16; i++) cxla_literal_destroy(args[i]);
    cxla_module_destroy(s);
  }
}

static cxla_status try_step(const char *text, const int *wrt, int nwrt, const cxla_optimizer *o, const char *msg) {
  cxla_module *m = th_parse(text), *s = NULL;
  if (!m) return CXLA_ERR_INTERNAL;
  cxla_status st = cxla_module_train_step(m, wrt, nwrt, o, &s);
  CHECK(s == NULL);
  if (msg) CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), msg);
  cxla_module_destroy(s);
  cxla_module_destroy(m);
  return st;
}

TEST(train_step_refuses_bad_arguments) {
  char text[2048];
  th_quad_text(text, sizeof text, "f32");
  int w12[2] = {1, 2}, w11[2] = {1, 1}, w0[1] = {0}, w9[1] = {9}, wneg[1] = {-1};
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  CHECK_EQ_INT(try_step(text, w11, 2, &o, "train-step: parameter 1 is listed twice among the weights"),
               CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(try_step(text, w9, 1, &o, "train-step: no parameter 9 (ENTRY takes 3)"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(try_step(text, wneg, 1, &o, "train-step: no parameter -1"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(try_step(text, w12, 0, &o, "expected at least one parameter to train"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(try_step(text, NULL, 2, &o, "expected at least one parameter to train"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(try_step(text, w12, 2, NULL, "the optimizer is NULL"), CXLA_ERR_INVALID_ARGUMENT);
  /* a non-float weight */
  static const char ints[] =
      "HloModule m\n\nENTRY e {\n  x = f32[] parameter(0)\n  k = s32[] parameter(1)\n  c = f32[] convert(k)\n"
      "  ROOT r = f32[] multiply(x, c)\n}\n";
  int w01[2] = {0, 1};
  CHECK_EQ_INT(try_step(ints, w01, 2, &o, "train.hlo:5:3: error: train-step: parameter 1 'k' is s32[]: only float arrays can be trained"),
               CXLA_ERR_INVALID_ARGUMENT);
  /* a loss that is not a scalar float */
  static const char vec[] = "HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] sine(x)\n}\n";
  CHECK_EQ_INT(try_step(vec, w0, 1, &o, "must return a scalar float"), CXLA_ERR_INVALID_ARGUMENT);
  /* hyper-parameters */
  static const struct { int kind; double lr, mu, b1, b2, eps; int nesterov, k; const char *msg; } bad[] = {
      {0, -0.1, 0, 0.9, 0.999, 1e-8, 0, 1, "learning rate -0.1: expected a finite number >= 0"},
      {0, NAN, 0, 0.9, 0.999, 1e-8, 0, 1, "learning rate nan"},
      {1, INFINITY, 0, 0.9, 0.999, 1e-8, 0, 1, "learning rate inf"},
      {0, 0.1, 0, 0.9, 0.999, 1e-8, 0, 0, "0 steps per call: expected K >= 1"},
      {1, 0.1, 0, 0.9, 0.999, 1e-8, 0, -2, "-2 steps per call"},
      {0, 0.1, -0.5, 0.9, 0.999, 1e-8, 0, 1, "momentum -0.5"},
      {0, 0.1, NAN, 0.9, 0.999, 1e-8, 0, 1, "momentum nan"},
      {0, 0.1, 0, 0.9, 0.999, 1e-8, 1, 1, "nesterov needs a momentum > 0"},
      {1, 0.1, 0, 1, 0.999, 1e-8, 0, 1, "Adam's beta1 1: expected 0 <= beta1 < 1"},
      {1, 0.1, 0, 0.9, -0.1, 1e-8, 0, 1, "Adam's beta2 -0.1"},
      {1, 0.1, 0, 0.9, NAN, 1e-8, 0, 1, "Adam's beta2 nan"},
      {1, 0.1, 0, 0.9, 0.999, -1e-8, 0, 1, "Adam's epsilon -1e-08"},
      {7, 0.1, 0, 0.9, 0.999, 1e-8, 0, 1, "unknown optimizer kind 7"},
  };
  for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
    cxla_optimizer_init(&o, bad[i].kind == 1 ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
    o.kind = (cxla_optimizer_kind)bad[i].kind;
    o.learning_rate = bad[i].lr, o.momentum = bad[i].mu, o.beta1 = bad[i].b1, o.beta2 = bad[i].b2;
    o.epsilon = bad[i].eps, o.nesterov = bad[i].nesterov, o.steps_per_call = bad[i].k;
    CHECK_EQ_INT(try_step(text, w12, 2, &o, bad[i].msg), CXLA_ERR_INVALID_ARGUMENT);
  }
  cxla_module *m = th_parse(text), *s = (cxla_module *)&o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  CHECK(cxla_module_train_step(NULL, w12, 2, &o, &s) == CXLA_ERR_INVALID_ARGUMENT && s == NULL);
  CHECK(cxla_module_train_step(m, w12, 2, &o, NULL) == CXLA_ERR_INVALID_ARGUMENT);
  cxla_module_destroy(m);
}

/* A loss through an op without a gradient rule: what cxla_module_grad says. */
TEST(train_step_refuses_op_without_gradient) {
  static const char text[] =
      "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
      "less {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n"
      "ENTRY e {\n  w = f32[4] parameter(0)\n  s = f32[4] map(w, w), dimensions={0}, to_apply=add\n"
      "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add\n}\n";
  int w0 = 0;
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
  CHECK_EQ_INT(try_step(text, &w0, 1, &o, "train.hlo:17:3: error: grad: map 's': no gradient rule for map"),
               CXLA_ERR_UNSUPPORTED);
  o.steps_per_call = 4;
  CHECK_EQ_INT(try_step(text, &w0, 1, &o, "no gradient rule for map"), CXLA_ERR_UNSUPPORTED);
}

TEST(train_step_optimizer_defaults) {
  cxla_optimizer o;
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_SGD);
  CHECK(o.kind == CXLA_OPTIMIZER_SGD && o.learning_rate == 0.01 && o.momentum == 0 && !o.nesterov && o.steps_per_call == 1);
  cxla_optimizer_init(&o, CXLA_OPTIMIZER_ADAM);
  CHECK(o.kind == CXLA_OPTIMIZER_ADAM && o.learning_rate == 0.001 && o.beta1 == 0.9 && o.beta2 == 0.999 &&
        o.epsilon == 1e-8 && o.steps_per_call == 1);
  cxla_optimizer_init(NULL, CXLA_OPTIMIZER_SGD); /* nothing to fill: no crash */
}

/* Allocation failures anywhere in building a step (n = 0, 1, 2, ... until one run needs no
 * failure) end in CXLA_ERR_OUT_OF_MEMORY and no module, never a crash; ASan checks the paths for
 * leaks. One step with momentum, and an Adam loop. */
TEST(train_step_allocation_failures) {
  int wrt[4] = {0, 1, 2, 3};
  cxla_module *m = th_parse(th_mlp_text);
  for (int k = 0; m && k < 2; k++) {
    cxla_optimizer o;
    cxla_optimizer_init(&o, k ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
    if (k) o.steps_per_call = 3;
    else o.momentum = 0.5;
    int done = 0;
    for (int64_t n = 0; !done && n < 100000; n++) {
      cxla_module *s = NULL;
      cx_alloc_fail_after(n);
      cxla_status st = cxla_module_train_step(m, wrt, 4, &o, &s);
      done = cx_alloc_failures() == 0;
      cx_alloc_fail_after(-1);
      if (done) CHECK_MSG(st == CXLA_OK && s, "%s", cxla_context_errmsg(test_ctx()));
      else CHECK_MSG(st == CXLA_ERR_OUT_OF_MEMORY && !s, "failing after %lld allocations: status %s: %s", (long long)n,
                     cxla_status_str(st), cxla_context_errmsg(test_ctx()));
      cxla_module_destroy(s);
    }
    CHECK(done);
  }
  cxla_module_destroy(m);
}
