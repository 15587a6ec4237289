/* test_train_loop.c — steps_per_call K > 1 (K steps in one while loop over a stream of K
 * batches) against K calls of the one-step module, the loop staying native on the cpu, and the
 * weights and optimizer state donated through the API: consumed by each execution, updated in
 * the memory they came in (the large ones, whose update is an elementwise kernel), and fed
 * back into the next execution. */
#include "train_helpers.h"

enum { K = 3, NW = 4 };
static const int k_wrt[NW] = {0, 1, 2, 3};

static void init_opt(cxla_optimizer *o, int which, int steps) {
  cxla_optimizer_init(o, which == 2 ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
  o->learning_rate = which == 2 ? 0.01 : 0.1;
  if (which == 1) o->momentum = 0.9, o->nesterov = 1;
  o->steps_per_call = steps;
}

/* Batch k's x (seeded) and one-hot labels into x[6,16] and y[6,4] literals, or stacked into
 * [K,6,16] and [K,6,4] when stacked. */
static void batch(cxla_literal **x, cxla_literal **y, int stacked, int k0) {
  int nb = stacked ? K : 1;
  int64_t dx[3] = {K, TH_MLP_BATCH, 16}, dy[3] = {K, TH_MLP_BATCH, 4};
  *x = cxla_literal_create(test_ctx(), CXLA_F32, stacked ? 3 : 2, stacked ? dx : dx + 1);
  *y = cxla_literal_create(test_ctx(), CXLA_F32, stacked ? 3 : 2, stacked ? dy : dy + 1);
  for (int b = 0; *x && *y && b < nb; b++) {
    int k = k0 + b;
    uint64_t s = 77 + (uint64_t)k;
    for (int i = 0; i < TH_MLP_BATCH * 16; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      cxla_literal_set_f64(*x, b * TH_MLP_BATCH * 16 + i, (double)(s >> 40) / (double)(1 << 24) * 2 - 1);
    }
    for (int r = 0; r < TH_MLP_BATCH; r++)
      for (int c = 0; c < 4; c++) cxla_literal_set_f64(*y, (b * TH_MLP_BATCH + r) * 4 + c, c == (r + k) % 4);
  }
}

/* The weights and the optimizer state of step module s at its start (zero state). */
static int start_carry(cxla_module *s, cxla_literal **carry) {
  int n = cxla_module_num_parameters(s) - 2;
  for (int i = 0; i < n; i++) carry[i] = th_param_lit(s, i, (uint64_t)i + 5, i >= NW);
  return n;
}

/* a and b the same bit for bit (exact), or within rel 1e-5 + abs 1e-6 elementwise */
static int same(cxla_literal *a, cxla_literal *b, int exact) {
  size_t n = cxla_literal_size_bytes(a);
  if (n != cxla_literal_size_bytes(b)) return 0;
  if (exact) return !memcmp(cxla_literal_data(a), cxla_literal_data(b), n);
  for (int64_t i = 0; i < cxla_literal_element_count(a); i++) {
    double x = cxla_literal_get_f64(a, i), y = cxla_literal_get_f64(b, i);
    if (!(fabs(x - y) <= 1e-6 + 1e-5 * fabs(y))) return 0;
  }
  return 1;
}

/* K steps in one call against K calls of one step, from the same start. The interpreter
 * evaluates the same computation either way: every loss, weight and state element the same,
 * bit for bit. The cpu compiles the loop body apart from the one-step ENTRY (the batch comes
 * from a slice of the stream, kernels fuse and vectorise their sums differently), so there
 * the results agree to rounding (docs/train.md). */
TEST(train_loop_matches_single_steps) {
  for (int which = 0; which < 3; which++) {
    for (int b = 0; b < 2; b++) {
      const char *backend = b ? "cpu" : "interp";
      cxla_optimizer o1, ok;
      init_opt(&o1, which, 1);
      init_opt(&ok, which, K);
      cxla_module *s1 = th_step(th_mlp_text, k_wrt, NW, &o1), *sk = th_step(th_mlp_text, k_wrt, NW, &ok);
      cxla_literal *carry[32] = {0}, *args[34] = {0}, *rk = NULL;
      int n = s1 && sk ? start_carry(s1, carry) : 0;
      if (!n) goto done;
      /* K steps at once */
      for (int i = 0; i < n; i++) args[i] = carry[i];
      batch(&args[n], &args[n + 1], 1, 0);
      rk = th_run(sk, backend, n + 2, args);
      cxla_literal_destroy(args[n]);
      cxla_literal_destroy(args[n + 1]);
      if (!rk) goto done;
      cxla_literal *losses = cxla_literal_tuple_get(rk, 0);
      CHECK(cxla_literal_rank(losses) == 1 && cxla_literal_dims(losses)[0] == K);
      /* one step at a time */
      for (int k = 0; k < K; k++) {
        for (int i = 0; i < n; i++) args[i] = carry[i];
        batch(&args[n], &args[n + 1], 0, k);
        cxla_literal *r1 = th_run(s1, backend, n + 2, args);
        cxla_literal_destroy(args[n]);
        cxla_literal_destroy(args[n + 1]);
        if (!r1) goto done;
        double l1 = cxla_literal_get_f64(cxla_literal_tuple_get(r1, 0), 0), lk = cxla_literal_get_f64(losses, k);
        CHECK_MSG(b ? fabs(l1 - lk) <= 1e-6 + 1e-5 * fabs(l1) : l1 == lk,
                  "optimizer %d %s: loss of step %d: %.9g in one call, %.9g in steps", which, backend, k, lk, l1);
        for (int i = 0; i < n; i++) {
          cxla_literal_destroy(carry[i]);
          carry[i] = cxla_literal_clone(test_ctx(), cxla_literal_tuple_get(r1, 1 + i));
        }
        cxla_literal_destroy(r1);
      }
      for (int i = 0; i < n; i++)
        CHECK_MSG(same(cxla_literal_tuple_get(rk, 1 + i), carry[i], !b), "optimizer %d %s: result %d differs", which,
                  backend, 1 + i);
    done:
      cxla_literal_destroy(rk);
      for (int i = 0; i < n; i++) cxla_literal_destroy(carry[i]);
      cxla_module_destroy(s1);
      cxla_module_destroy(sk);
    }
  }
}

/* The loop's trip count is known: the cpu runs it natively, no instruction on the interpreter. */
TEST(train_loop_native_on_cpu) {
  for (int which = 0; which < 3; which++) {
    cxla_optimizer o;
    init_opt(&o, which, 5);
    cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
    cxla_compile_options co;
    cxla_compile_options_init(&co);
    co.backend = "cpu";
    cxla_executable *e = NULL;
    if (s) CHECK_OK(cxla_compile(s, &co, &e));
    if (e) {
      const char *c = cxla_executable_compile_counts(e);
      CHECK_STR_CONTAINS(c, "fallbacks=0 ");
      CHECK_EQ_INT(cxla_executable_donated_parameters(e), (1ull << (cxla_module_num_parameters(s) - 2)) - 1);
    }
    cxla_executable_destroy(e);
    cxla_module_destroy(s);
  }
}

/* The loop's parameters: the carry as it is, each batch parameter with a leading K. */
TEST(train_loop_layout) {
  cxla_optimizer o;
  init_opt(&o, 2, 7);
  cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
  if (!s) return;
  int n = cxla_module_num_parameters(s);
  CHECK_EQ_INT(n, 4 * 3 + 1 + 2);
  cxla_shape x, y, w1, r;
  CHECK_OK(cxla_module_parameter_shape(s, n - 2, &x));
  CHECK_OK(cxla_module_parameter_shape(s, n - 1, &y));
  CHECK_OK(cxla_module_parameter_shape(s, 0, &w1));
  CHECK(x.rank == 3 && x.dims[0] == 7 && x.dims[1] == TH_MLP_BATCH && x.dims[2] == 16);
  CHECK(y.rank == 3 && y.dims[0] == 7 && y.dims[2] == 4);
  CHECK(w1.rank == 2 && w1.dims[0] == 16 && w1.dims[1] == 8);
  CHECK_OK(cxla_module_result_shape(s, &r));
  CHECK(r.type == CXLA_TUPLE && r.ntuple == n - 1 && r.elems[0].rank == 1 && r.elems[0].dims[0] == 7);
  /* prints as text that parses back and prints the same */
  char *t = cxla_module_to_string(s);
  cxla_module *back = t ? th_parse(t) : NULL;
  char *t2 = back ? cxla_module_to_string(back) : NULL;
  CHECK_MSG(t && t2 && !strcmp(t, t2), "the loop module does not print the same after parsing it back");
  CHECK_STR_CONTAINS(t, "while(");
  free(t);
  free(t2);
  cxla_module_destroy(back);
  cxla_module_destroy(s);
}

/* A batch parameter that cannot take a leading dimension (a tuple). */
TEST(train_loop_refuses_tuple_batch) {
  static const char text[] =
      "HloModule m\n\nENTRY e {\n  w = f32[] parameter(0)\n  p = (f32[], f32[]) parameter(1)\n"
      "  a = f32[] get-tuple-element(p), index=0\n  ROOT r = f32[] multiply(w, a)\n}\n";
  cxla_module *m = th_parse(text), *s = NULL;
  cxla_optimizer o;
  init_opt(&o, 0, 2);
  int w0 = 0;
  if (m) CHECK_EQ_INT(cxla_module_train_step(m, &w0, 1, &o, &s), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(s == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "parameter 1 'p' is (f32[], f32[]): with 2 steps per call");
  o.steps_per_call = 1; /* one step takes it as it is */
  if (m) CHECK_OK(cxla_module_train_step(m, &w0, 1, &o, &s));
  cxla_module_destroy(s);
  cxla_module_destroy(m);
}

/* Weights and state as buffers through five executions on the cpu, each execution's results
 * the next one's arguments: every carried argument is consumed, the weight matrices and their
 * state come back in the memory they were given in, and the values follow the interpreter's. */
static void donated_run(int which, int steps) {
  cxla_optimizer o;
  init_opt(&o, which, steps);
  cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = "cpu";
  cxla_executable *e = NULL;
  if (s) CHECK_OK(cxla_compile(s, &co, &e));
  cxla_literal *carry[32] = {0}, *x = NULL, *y = NULL;
  cxla_buffer *buf[34] = {0};
  int n = e ? start_carry(s, carry) : 0, nres = n + 1;
  if (!n) goto done;
  batch(&x, &y, steps > 1, 0);
  for (int i = 0; i < n; i++) CHECK_OK(cxla_buffer_from_literal(test_ctx(), "cpu", carry[i], &buf[i]));
  CHECK_OK(cxla_buffer_from_literal(test_ctx(), "cpu", x, &buf[n]));
  CHECK_OK(cxla_buffer_from_literal(test_ctx(), "cpu", y, &buf[n + 1]));
  for (int call = 0; call < 5; call++) {
    /* the reference: the interpreter on literals */
    cxla_literal *args[34];
    for (int i = 0; i < n; i++) args[i] = carry[i];
    args[n] = x, args[n + 1] = y;
    cxla_literal *want = th_run(s, "interp", n + 2, args);
    void *mem[32];
    for (int i = 0; i < n; i++) mem[i] = cxla_buffer_data(buf[i]);
    cxla_buffer *r = NULL, *el[33] = {0};
    CHECK_OK(cxla_executable_execute(e, n + 2, buf, &r));
    if (r) CHECK_OK(cxla_buffer_untuple(r, nres, el));
    cxla_buffer_destroy(r);
    for (int i = 0; i < n; i++) {
      cxla_literal *l = NULL;
      CHECK(cxla_buffer_to_literal(buf[i], &l) == CXLA_ERR_INVALID_ARGUMENT && !l); /* consumed */
      cxla_buffer_destroy(buf[i]);
      buf[i] = el[1 + i];
    }
    /* the weight matrices (0, 2) and their state are updated where they were */
    for (int i = 0; i < n && el[1 + i]; i++)
      if (i % 2 == 0 && i < n - (which == 2))
        CHECK_MSG(cxla_buffer_data(el[1 + i]) == mem[i], "optimizer %d, %d steps: call %d: carried value %d moved", which,
                  steps, call, i);
    for (int i = 0; want && i < nres && el[i]; i++) {
      cxla_literal *got = NULL;
      CHECK_OK(cxla_buffer_to_literal(el[i], &got));
      cxla_literal *w = cxla_literal_tuple_get(want, i);
      for (int64_t k = 0; got && k < cxla_literal_element_count(w); k++) {
        char what[64];
        snprintf(what, sizeof what, "optimizer %d call %d result %d", which, call, i);
        th_near(what, (int)k, cxla_literal_get_f64(got, k), cxla_literal_get_f64(w, k), 1e-5);
      }
      if (i > 0) {
        cxla_literal_destroy(carry[i - 1]);
        carry[i - 1] = got; /* the interpreter goes on from the cpu's values */
      } else {
        cxla_literal_destroy(got);
      }
    }
    cxla_buffer_destroy(el[0]);
    cxla_literal_destroy(want);
  }
done:
  for (int i = 0; i < n + 2; i++) cxla_buffer_destroy(buf[i]);
  for (int i = 0; i < n; i++) cxla_literal_destroy(carry[i]);
  cxla_literal_destroy(x);
  cxla_literal_destroy(y);
  cxla_executable_destroy(e);
  cxla_module_destroy(s);
}

TEST(train_step_donated_in_place) {
  for (int which = 0; which < 3; which++) {
    donated_run(which, 1);
    donated_run(which, K);
  }
}
