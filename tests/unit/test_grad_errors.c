/* test_grad_errors.c — what grad refuses and how it says so (the op, its name and FILE:LINE:COL;
 * bad arguments), what it accepts without a rule (ops off the differentiated path, integer
 * paths with zero gradient), the gradient module as text that runs, and that the per-op tests
 * together reach every op that has a gradient rule. */
#include <string.h>
#include "grad/grad.h"
#include "grad_helpers.h"
#include "util/util.h"

static const char *const k_head =
    "HloModule m\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n"
    "mul {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] multiply(a, b)\n}\n\n"
    "less {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n";

/* grad of head + body with wrt: the status, and the message in *msg */
static cxla_status try_grad(const char *body, const int *wrt, int nwrt, char *msg, size_t n) {
  char text[4096];
  snprintf(text, sizeof text, "%s%s", k_head, body);
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL, *g = NULL;
  cxla_status s = cxla_module_parse(ctx, text, strlen(text), "bad.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse: %s", cxla_context_errmsg(ctx));
  if (s == CXLA_OK) s = cxla_module_grad(m, wrt, nwrt, &g);
  snprintf(msg, n, "%s", cxla_context_errmsg(ctx));
  CHECK(s == CXLA_OK ? g != NULL : g == NULL);
  cxla_module_destroy(g);
  cxla_module_destroy(m);
  return s;
}

TEST(grad_refuses_ops_without_rule) {
  char msg[1024];
  int w0 = 0;
  /* a map on the path: line 23, column 3 is where 's' is defined */
  CHECK_EQ_INT(try_grad("ENTRY e {\n  x = f64[4] parameter(0)\n  s = f64[4] map(x, x), dimensions={0}, to_apply=add\n"
                        "  z = f64[] constant(0)\n  ROOT r = f64[] reduce(s, z), dimensions={0}, to_apply=add\n}\n",
                        &w0, 1, msg, sizeof msg),
               CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(msg, "bad.hlo:23:3: error: grad: map 's': no gradient rule for map");
  /* a reduction that subtracts (its computation after ENTRY keeps the line numbers) */
  CHECK_EQ_INT(try_grad("ENTRY e {\n  x = f64[4] parameter(0)\n  z = f64[] constant(1)\n"
                        "  ROOT r = f64[] reduce(x, z), dimensions={0}, to_apply=sub\n}\n\n"
                        "sub {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] subtract(a, b)\n}\n",
                        &w0, 1, msg, sizeof msg),
               CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(msg, "bad.hlo:24:8: error: grad: reduce 'r': only sum, product, maximum and minimum reductions");
  /* a scatter that multiplies */
  CHECK_EQ_INT(try_grad("ENTRY e {\n  x = f64[4] parameter(0)\n  i = s32[2] parameter(1)\n  u = f64[2] parameter(2)\n"
                        "  s = f64[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
                        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul\n"
                        "  z = f64[] constant(0)\n  ROOT r = f64[] reduce(s, z), dimensions={0}, to_apply=add\n}\n",
                        &w0, 1, msg, sizeof msg),
               CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(msg, "grad: scatter 's': only a scatter that adds");
}

/* a loop whose bound moves with the carry: no trip count known when compiling */
TEST(grad_refuses_unknown_trip_count) {
  static const char *const body =
      "cond {\n  p = (f64[], f64[]) parameter(0)\n  a = f64[] get-tuple-element(p), index=0\n"
      "  b = f64[] get-tuple-element(p), index=1\n  ROOT lt = pred[] compare(a, b), direction=LT\n}\n\n"
      "body {\n  p = (f64[], f64[]) parameter(0)\n  a = f64[] get-tuple-element(p), index=0\n"
      "  b = f64[] get-tuple-element(p), index=1\n  one = f64[] constant(1)\n  na = f64[] add(a, one)\n"
      "  ROOT t = (f64[], f64[]) tuple(na, b)\n}\n\n"
      "ENTRY e {\n  x = f64[] parameter(0)\n  z = f64[] constant(0)\n  t = (f64[], f64[]) tuple(z, x)\n"
      "  w = (f64[], f64[]) while(t), condition=cond, body=body\n  ROOT r = f64[] get-tuple-element(w), index=0\n}\n";
  char msg[1024];
  int w0 = 0;
  CHECK_EQ_INT(try_grad(body, &w0, 1, msg, sizeof msg), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(msg, "bad.hlo:41:3: error: grad: while 'w': its trip count is not known when compiling");
}

TEST(grad_refuses_bad_arguments) {
  static const char *const vec = "ENTRY e {\n  x = f64[4] parameter(0)\n  k = s32[] parameter(1)\n  ROOT y = f64[4] sine(x)\n}\n";
  static const char *const scalar =
      "ENTRY e {\n  x = f64[4] parameter(0)\n  k = s32[] parameter(1)\n  z = f64[] constant(0)\n"
      "  ROOT r = f64[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  char msg[1024];
  int w0 = 0, w1 = 1, w5 = 5;
  CHECK_EQ_INT(try_grad(vec, &w0, 1, msg, sizeof msg), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(msg, "grad: ENTRY must return a scalar float (f16, bf16, f32 or f64), its ROOT 'y' is f64[4]");
  CHECK_EQ_INT(try_grad(scalar, &w1, 1, msg, sizeof msg), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(msg, "bad.hlo:23:3: error: grad: parameter 1 'k' is s32[]: only float arrays have gradients");
  CHECK_EQ_INT(try_grad(scalar, &w5, 1, msg, sizeof msg), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(msg, "grad: no parameter 5 (ENTRY takes 2)");
  CHECK_EQ_INT(try_grad(scalar, NULL, 1, msg, sizeof msg), CXLA_ERR_INVALID_ARGUMENT);
  cxla_module *out = (cxla_module *)&out;
  CHECK_EQ_INT(cxla_module_grad(NULL, &w0, 1, &out), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(out == NULL);
}

/* ops without rules are fine off the path; an integer path and an unused parameter give zero */
TEST(grad_integer_paths_and_unused_parameters) {
  static gh_case c;
  gh_init(&c, 3);
  gh_begin(&c);
  gh_add(&c, "  x = f64[4] parameter(0)\n  y = f64[4] parameter(1)\n  u = f64[2] parameter(2)\n  q = f64[4] parameter(3)\n");
  c.nparams = 4, c.nwrt = 3, c.wrt[0] = 0, c.wrt[1] = 1, c.wrt[2] = 2;
  c.lo[1] = -3, c.hi[1] = 3;
  gh_add(&c, "  sq = f64[4] map(q, q), dimensions={0}, to_apply=add\n"   /* no rule, but off the path */
             "  ky = s32[4] convert(y)\n  fy = f64[4] convert(ky)\n"  /* an integer path: zero */
             "  a = f64[4] multiply(x, sq)\n  b = f64[4] add(a, fy)\n  z = f64[] constant(0)\n"
             "  ROOT r = f64[] reduce(b, z), dimensions={0}, to_apply=add\n}\n");
  gh_check(&c, "integer path", 1);
}

/* what `cxla grad` prints is what cxla_module_to_string gives: it parses, and runs */
TEST(grad_module_text_runs) {
  static const char *const text =
      "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
      "ENTRY e {\n  x = f32[3] parameter(0)\n  w = f32[3] parameter(1)\n  m = f32[3] multiply(x, w)\n"
      "  s = f32[3] multiply(m, x)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add\n}\n";
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL, *g = NULL, *back = NULL;
  int wrt[2] = {0, 1};
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "m.hlo", &m));
  CHECK_OK(cxla_module_grad(m, wrt, 2, &g));
  char *t = g ? cxla_module_to_string(g) : NULL;
  CHECK(t != NULL);
  if (t) CHECK_OK(cxla_module_parse(ctx, t, strlen(t), "grad.hlo", &back));
  free(t);
  /* f = sum(w x^2): df/dx = 2 w x, df/dw = x^2 */
  float xv[3] = {1, 2, -3}, wv[3] = {0.5f, -1, 2};
  int64_t n = 3;
  cxla_literal *args[2] = {cxla_literal_from_data(ctx, CXLA_F32, 1, &n, xv, sizeof xv),
                           cxla_literal_from_data(ctx, CXLA_F32, 1, &n, wv, sizeof wv)};
  const char *backends[2] = {"interp", "cpu"};
  for (int b = 0; back && b < 2; b++) {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_literal *r = NULL;
    CHECK_OK(cxla_module_run(back, &o, 2, args, &r));
    if (!r) continue;
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 0), 0), 0.5 * 1 - 4 + 18, 1e-5);
    for (int i = 0; i < 3; i++) {
      CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 1), i), 2 * wv[i] * xv[i], 1e-5);
      CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 2), i), xv[i] * xv[i], 1e-5);
    }
    cxla_literal_destroy(r);
  }
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cxla_module_destroy(back);
  cxla_module_destroy(g);
  cxla_module_destroy(m);
}

/* ---- coverage: every op with a rule appears in some case's differentiated computations ---- */

static void mark_comp(const cx_comp *c, uint8_t *seen, int depth) {
  if (depth > 8) return;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *in = c->instrs[i];
    seen[in->op] = 1;
    /* computations a gradient goes through: not reducers or comparators */
    cx_op_calls k = cx_op_calls_of(in->op);
    if (k == CX_CALLS_COND_BODY || k == CX_CALLS_BRANCHES || k == CX_CALLS_CALLS || in->op == CX_OP_CALL)
      for (int j = 0; j < in->ncalled; j++) mark_comp(in->called[j], seen, depth + 1);
  }
}

TEST(grad_every_rule_has_a_case) {
  struct { const gh_entry *t; int n; } tables[] = {
    {gh_elementwise_cases, gh_elementwise_ncases}, {gh_shape_cases, gh_shape_ncases}, {gh_index_cases, gh_index_ncases},
    {gh_reduce_cases, gh_reduce_ncases}, {gh_dot_conv_cases, gh_dot_conv_ncases}, {gh_control_cases, gh_control_ncases},
    {gh_model_cases, gh_model_ncases},
  };
  uint8_t seen[CX_OP_COUNT] = {0};
  static gh_case c;
  for (int t = 0; t < GH_LEN(tables); t++)
    for (int i = 0; i < tables[t].n; i++) {
      gh_init(&c, 1);
      tables[t].t[i].gen(&c);
      cxla_module *m = NULL;
      if (cxla_module_parse(test_ctx(), c.text, (size_t)c.len, "case.hlo", &m) == CXLA_OK) mark_comp(m->entry, seen, 0);
      cxla_module_destroy(m);
    }
  int rules = 0;
  for (int op = 0; op < CX_OP_COUNT; op++) {
    if (!cx_grad_has_rule((cx_op)op)) continue;
    rules++;
    CHECK_MSG(seen[op], "%s has a gradient rule but no finite-difference case", cx_op_name((cx_op)op));
  }
  CHECK(rules >= 50);
}

/* bf16 operands with an f32 result: the gradients come back in bf16 */
TEST(grad_mixed_precision) {
  static const char *const text =
      "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
      "ENTRY e {\n  a = bf16[1,2] parameter(0)\n  b = bf16[2,1] parameter(1)\n"
      "  d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  t = f32[1,1] tanh(d)\n"
      "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(t, z), dimensions={0,1}, to_apply=add\n}\n";
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL, *g = NULL;
  int wrt[2] = {0, 1};
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "m.hlo", &m));
  CHECK_OK(cxla_module_grad(m, wrt, 2, &g));
  cxla_literal *args[2] = {NULL, NULL};
  CHECK_OK(cxla_literal_parse(ctx, "bf16[1,2] {{0.25, 0.5}}", &args[0]));
  CHECK_OK(cxla_literal_parse(ctx, "bf16[2,1] {{0.75}, {-0.5}}", &args[1]));
  const char *backends[2] = {"interp", "cpu"};
  for (int b = 0; g && b < 2; b++) {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_literal *r = NULL;
    CHECK_OK(cxla_module_run(g, &o, 2, args, &r));
    if (!r) continue;
    /* d = 0.25*0.75 - 0.5*0.5 = -0.0625; tanh' = 1 - tanh(d)^2 */
    double t = 1 - tanh(-0.0625) * tanh(-0.0625);
    CHECK_EQ_INT(cxla_literal_type(cxla_literal_tuple_get(r, 1)), CXLA_BF16);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 1), 0), 0.75 * t, 1e-2);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 1), 1), -0.5 * t, 1e-2);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 2), 0), 0.25 * t, 1e-2);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(r, 2), 1), 0.5 * t, 1e-2);
    cxla_literal_destroy(r);
  }
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cxla_module_destroy(g);
  cxla_module_destroy(m);
}

/* Allocation failures anywhere in grad (n = 0, 1, 2, ... until one run needs no failure) end
 * in CXLA_ERR_OUT_OF_MEMORY and no module, never a crash; ASan checks the paths for leaks. */
TEST(grad_allocation_failures) {
  const gh_entry *cases[3] = {&gh_control_cases[gh_control_ncases - 1], &gh_control_cases[4], &gh_model_cases[1]};
  static gh_case c;
  for (int k = 0; k < 3; k++) {
    gh_init(&c, 1);
    cases[k]->gen(&c);
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), c.text, (size_t)c.len, "case.hlo", &m));
    int done = 0;
    for (int64_t n = 0; m && !done && n < 100000; n++) {
      cxla_module *g = NULL;
      cx_alloc_fail_after(n); /* also counts failures from 0 */
      cxla_status s = cxla_module_grad(m, c.wrt, c.nwrt, &g);
      done = cx_alloc_failures() == 0;
      cx_alloc_fail_after(-1);
      if (done) CHECK_MSG(s == CXLA_OK && g, "%s: %s", cases[k]->name, cxla_context_errmsg(test_ctx()));
      else CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY && !g, "%s, failing after %lld allocations: status %s: %s", cases[k]->name,
                     (long long)n, cxla_status_str(s), cxla_context_errmsg(test_ctx()));
      cxla_module_destroy(g);
    }
    CHECK(done);
    cxla_module_destroy(m);
  }
}
