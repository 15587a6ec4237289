/* test_api_donation.c — parameter donation through the public API: a donated argument is
 * consumed by the execution (both backends), its memory holds the result where buffer
 * assignment allows (cpu: the result's data pointer is the argument's), the module header's
 * input_output_alias donates too, and misuse is an error rather than a wrong answer. */
#include <math.h>
#include <stdlib.h>
#include "runtime/executable.h"
#include "test.h"

#define N 4096

static const char ew_text[] = /* r = exp(x) + y: one kLoop fusion that may run in place over x */
    "HloModule ew\n"
    "ENTRY main {\n"
    "  x = f32[4096] parameter(0)\n"
    "  y = f32[4096] parameter(1)\n"
    "  e = f32[4096] exponential(x)\n"
    "  ROOT r = f32[4096] add(e, y)\n"
    "}\n";

static const char loop_text[] = /* x halved 5 times in a while loop whose state starts as x */
    "HloModule halve, input_output_alias={ {}: (0, {}, may-alias) }\n"
    "cond {\n"
    "  s = (s32[], f32[4096]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(5)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[4096]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[4096] get-tuple-element(s), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  h = f32[] constant(0.5)\n"
    "  hb = f32[4096] broadcast(h), dimensions={}\n"
    "  v1 = f32[4096] multiply(v, hb)\n"
    "  ROOT t = (s32[], f32[4096]) tuple(i1, v1)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[4096] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  t = (s32[], f32[4096]) tuple(z, x)\n"
    "  w = (s32[], f32[4096]) while(t), condition=cond, body=body\n"
    "  ROOT r = f32[4096] get-tuple-element(w), index=1\n"
    "}\n";

static cxla_module *parse(const char *text) {
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "donation.hlo", &m));
  return m;
}

static cxla_buffer *ramp_buffer(const char *backend, double scale) {
  int64_t dims[1] = {N};
  cxla_literal *l = cxla_literal_create(test_ctx(), CXLA_F32, 1, dims);
  for (int64_t i = 0; l && i < N; i++) cxla_literal_set_f64(l, i, scale * (double)(i % 97) / 97.0);
  cxla_buffer *b = NULL;
  if (l) CHECK_OK(cxla_buffer_from_literal(test_ctx(), backend, l, &b));
  cxla_literal_destroy(l);
  return b;
}

static cxla_executable *compile(cxla_module *m, const char *backend, uint64_t donate) {
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  o.donate = donate;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, &o, &e));
  return e;
}

static void check_consumed(cxla_executable *e, cxla_buffer *x, cxla_buffer *y) {
  cxla_literal *l = NULL;
  CHECK(cxla_buffer_to_literal(x, &l) == CXLA_ERR_INVALID_ARGUMENT && l == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "donated");
  cxla_buffer *args[2] = {x, y}, *r = NULL;
  CHECK(cxla_executable_execute(e, y ? 2 : 1, args, &r) == CXLA_ERR_INVALID_ARGUMENT && r == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "argument 0 (parameter 'x') was donated");
}

static void run_ew(const char *backend, int expect_alias) {
  cxla_module *m = parse(ew_text);
  cxla_executable *e = m ? compile(m, backend, 1) : NULL;
  cxla_buffer *x = ramp_buffer(backend, 2), *y = ramp_buffer(backend, -1);
  if (!e || !x || !y) goto done;
  void *xmem = x->host->data;
  cxla_buffer *args[2] = {x, y}, *r = NULL;
  CHECK_OK(cxla_executable_execute(e, 2, args, &r));
  if (r) {
    for (int64_t i = 0; i < N; i++) {
      double xv = (float)(2.0 * (double)(i % 97) / 97.0), yv = (float)(-1.0 * (double)(i % 97) / 97.0);
      CHECK_NEAR(cxla_literal_get_f64(r->host, i), exp(xv) + yv, 1e-5 * (1 + fabs(exp(xv))));
    }
    if (expect_alias) CHECK_MSG(r->host->data == xmem, "%s: the result is not in the donated argument's memory", backend);
  }
  check_consumed(e, x, y);
  cxla_literal *yl = NULL; /* y was not donated: still whole */
  CHECK_OK(cxla_buffer_to_literal(y, &yl));
  if (yl) CHECK_NEAR(cxla_literal_get_f64(yl, 96), -96.0 / 97.0, 1e-6);
  cxla_literal_destroy(yl);
  cxla_buffer_destroy(r);
done:
  cxla_buffer_destroy(x);
  cxla_buffer_destroy(y);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

TEST(api_donation_cpu_result_in_argument_memory) { run_ew("cpu", 1); }
TEST(api_donation_interp_consumes_argument) { run_ew("interp", 0); }

/* The while loop's state takes over x's memory; the header alone donates x. */
TEST(api_donation_from_module_header_through_a_loop) {
  const char *backends[2] = {"cpu", "interp"};
  for (int k = 0; k < 2; k++) {
    cxla_module *m = parse(loop_text);
    cxla_executable *e = m ? compile(m, backends[k], 0) : NULL;
    cxla_buffer *x = ramp_buffer(backends[k], 3);
    if (e && x) {
      void *xmem = x->host->data;
      cxla_buffer *args[1] = {x}, *r = NULL;
      CHECK_OK(cxla_executable_execute(e, 1, args, &r));
      for (int64_t i = 0; r && i < N; i++)
        CHECK_NEAR(cxla_literal_get_f64(r->host, i), (float)(3.0 * (double)(i % 97) / 97.0) / 32.0, 1e-7);
      if (r && k == 0) CHECK_MSG(r->host->data == xmem, "the loop result is not in x's memory");
      check_consumed(e, x, NULL);
      cxla_buffer_destroy(r);
    }
    cxla_buffer_destroy(x);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

TEST(api_donation_errors) {
  cxla_module *m = parse(ew_text);
  if (!m) return;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  o.donate = 1ull << 5;
  cxla_executable *e = NULL;
  CHECK(cxla_compile(m, &o, &e) == CXLA_ERR_INVALID_ARGUMENT && e == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "donate: bit 5 names no parameter");
  /* the same buffer as a donated and a plain argument: refused before anything runs */
  e = compile(m, "cpu", 1);
  cxla_buffer *x = ramp_buffer("cpu", 1);
  if (e && x) {
    cxla_buffer *args[2] = {x, x}, *r = NULL;
    CHECK(cxla_executable_execute(e, 2, args, &r) == CXLA_ERR_INVALID_ARGUMENT && r == NULL);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "is donated, and the same buffer is also argument 1");
    cxla_literal *l = NULL;
    CHECK_OK(cxla_buffer_to_literal(x, &l)); /* not consumed */
    cxla_literal_destroy(l);
  }
  cxla_buffer_destroy(x);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

/* cxla_module_run borrows its literals: a donated parameter consumes a copy. */
TEST(api_donation_module_run_keeps_caller_literals) {
  cxla_module *m = parse(ew_text);
  if (!m) return;
  int64_t dims[1] = {N};
  cxla_literal *x = cxla_literal_create(test_ctx(), CXLA_F32, 1, dims), *y = cxla_literal_create(test_ctx(), CXLA_F32, 1, dims);
  for (int64_t i = 0; x && y && i < N; i++) {
    cxla_literal_set_f64(x, i, 0.5);
    cxla_literal_set_f64(y, i, 1);
  }
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  o.donate = 3;
  cxla_literal *args[2] = {x, y}, *r = NULL;
  if (x && y) CHECK_OK(cxla_module_run(m, &o, 2, args, &r));
  if (r) CHECK_NEAR(cxla_literal_get_f64(r, 7), exp(0.5) + 1, 1e-6);
  if (x) CHECK_NEAR(cxla_literal_get_f64(x, 7), 0.5, 0);
  if (y) CHECK_NEAR(cxla_literal_get_f64(y, 7), 1, 0);
  cxla_literal_destroy(r);
  cxla_literal_destroy(x);
  cxla_literal_destroy(y);
  cxla_module_destroy(m);
}

/* A step with more arguments than a 64-bit mask: 70 parameters, r = -(exp(p66) + p65 + p68 +
 * p0), one loop kernel. The header donates p66 (input_output_alias pairs it with the result) and
 * p68 (buffer_donor), donate_params p65; on the cpu the result lands in p66's memory, and each
 * donated buffer is consumed. */
static char *wide_text(const char *header) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "HloModule wide%s\nENTRY main {\n", header);
  for (int i = 0; i < 70; i++) cx_sb_printf(&sb, "  p%d = f32[4096] parameter(%d)\n", i, i);
  cx_sb_puts(&sb, "  e = f32[4096] exponential(p66)\n  a = f32[4096] add(e, p65)\n  b = f32[4096] add(a, p68)\n"
                  "  c = f32[4096] add(b, p0)\n  ROOT r = f32[4096] negate(c)\n}\n");
  return cx_sb_take(&sb);
}

TEST(api_donation_beyond_sixty_four_parameters) {
  enum { NP = 70 };
  char *text = wide_text(", input_output_alias={ {}: (66, {}, may-alias) }, buffer_donor={ (68, {}) }");
  cxla_module *m = text ? parse(text) : NULL;
  cx_free(text);
  if (!m) return;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  int more[1] = {65};
  o.donate_params = more, o.num_donate_params = 1;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, &o, &e));
  cxla_buffer *args[NP] = {0}, *r = NULL;
  int ok = e != NULL;
  for (int i = 0; i < NP && ok; i++) ok = (args[i] = ramp_buffer("cpu", i == 66 ? 1 : 0)) != NULL;
  if (ok) {
    for (int p = 0; p < NP + 2; p++)
      CHECK_MSG(cxla_executable_parameter_donated(e, p) == (p == 65 || p == 66 || p == 68), "parameter %d", p);
    CHECK(cxla_executable_parameter_donated(e, -1) == 0 && cxla_executable_parameter_donated(NULL, 66) == 0);
    CHECK(cxla_executable_donated_parameters(e) == 0); /* the mask covers parameters 0-63 */
    void *mem66 = args[66]->host->data, *mem65 = args[65]->host->data, *mem68 = args[68]->host->data;
    CHECK_OK(cxla_executable_execute(e, NP, args, &r));
    for (int64_t i = 0; r && i < N; i += 13) {
      double x = (float)((double)(i % 97) / 97.0);
      CHECK_NEAR(cxla_literal_get_f64(r->host, i), -exp(x), 1e-5 * (1 + exp(x)));
    }
    if (r) CHECK_MSG(r->host->data == mem66, "the result is not in parameter 66's memory (65's: %d, 68's: %d)",
                     r->host->data == mem65, r->host->data == mem68);
    for (int p = 0; p < NP; p++) CHECK_MSG(args[p]->donated == (p == 65 || p == 66 || p == 68), "argument %d", p);
  }
  cxla_buffer_destroy(r);
  for (int i = 0; i < NP; i++) cxla_buffer_destroy(args[i]);
  cxla_executable_destroy(e);
  /* indices the ENTRY does not have */
  more[0] = 70;
  CHECK(cxla_compile(m, &o, &e) == CXLA_ERR_INVALID_ARGUMENT && !e);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "donate_params[0] names parameter 70: ENTRY main has 70");
  o.donate_params = NULL;
  CHECK(cxla_compile(m, &o, &e) == CXLA_ERR_INVALID_ARGUMENT && !e);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "num_donate_params is 1 but donate_params is NULL");
  cxla_module_destroy(m);
  text = wide_text(", buffer_donor={ (99, {}) }");
  m = text ? parse(text) : NULL;
  cx_free(text);
  o.num_donate_params = 0;
  if (m) CHECK(cxla_compile(m, &o, &e) == CXLA_ERR_INVALID_ARGUMENT && !e);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "buffer_donor names parameter 99: ENTRY main has 70");
  cxla_module_destroy(m);
}

/* A step whose 40 results each update a donated parameter in place (a model's state): every
 * result leaf is in its own parameter's memory, found without walking the result tuple per
 * leaf (more leaves than the stack list: the heap one). */
TEST(api_donation_many_results_in_place) {
  enum { NP = 40 };
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule state, input_output_alias={");
  for (int i = 0; i < NP; i++) cx_sb_printf(&sb, "%s {%d}: (%d, {}, may-alias)", i ? "," : "", i, i);
  cx_sb_puts(&sb, " }\nENTRY main {\n  one = f32[] constant(1)\n  ob = f32[4096] broadcast(one), dimensions={}\n");
  for (int i = 0; i < NP; i++) cx_sb_printf(&sb, "  p%d = f32[4096] parameter(%d)\n  r%d = f32[4096] add(p%d, ob)\n", i, i, i, i);
  cx_sb_puts(&sb, "  ROOT t = (");
  for (int i = 0; i < NP; i++) cx_sb_printf(&sb, "%sf32[4096]", i ? ", " : "");
  cx_sb_puts(&sb, ") tuple(");
  for (int i = 0; i < NP; i++) cx_sb_printf(&sb, "%sr%d", i ? ", " : "", i);
  cx_sb_puts(&sb, ")\n}\n");
  char *text = cx_sb_take(&sb);
  cxla_module *m = text ? parse(text) : NULL;
  cx_free(text);
  cxla_executable *e = m ? compile(m, "cpu", 0) : NULL;
  cxla_buffer *args[NP] = {0}, *r = NULL, *el[NP] = {0};
  void *mem[NP];
  int ok = e != NULL;
  for (int i = 0; i < NP && ok; i++) ok = (args[i] = ramp_buffer("cpu", i)) != NULL;
  for (int i = 0; i < NP && ok; i++) mem[i] = args[i]->host->data;
  if (ok) CHECK_OK(cxla_executable_execute(e, NP, args, &r));
  if (r) CHECK_OK(cxla_buffer_untuple(r, NP, el));
  for (int i = 0; i < NP && el[i]; i++) {
    CHECK_MSG(cxla_buffer_data(el[i]) == mem[i], "result %d is not in parameter %d's memory", i, i);
    CHECK_NEAR(((const float *)cxla_buffer_data(el[i]))[96], (float)i * 96.0f / 97.0f + 1.0f, 1e-5 * (1 + i));
  }
  for (int i = 0; i < NP; i++) cxla_buffer_destroy(el[i]), cxla_buffer_destroy(args[i]);
  cxla_buffer_destroy(r);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}
