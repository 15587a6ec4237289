/* test_compile_refusals.c — what cxla cannot run or cannot finish: an instruction cxla cannot
 * run is refused by cxla_compile, on every backend, naming the op, the instruction and its line;
 * never by an execute that has already run half the program. Computations nothing runs do not
 * count. And the activity a watchdog reads to tell a loop that keeps going from a slow kernel. */
#include "test.h"
#include "util/util.h"

static void refused(const char *text, const char *want) {
  static const char *const backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    cxla_context *ctx = test_ctx();
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "r.hlo", &m));
    if (!m) return;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_executable *e = NULL;
    cxla_status s = cxla_compile(m, &o, &e);
    CHECK_MSG(s == CXLA_ERR_UNSUPPORTED, "%s: compile gave %s, expected a refusal", backends[b], cxla_status_str(s));
    CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), want);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

TEST(compile_refuses_what_cannot_run) {
  refused("HloModule r\nENTRY e {\n  x = f32[4] parameter(0)\n  c = f32[4] cosine(x)\n"
          "  ROOT r = f32[4] custom-call(c), custom_call_target=\"foo\"\n}\n",
          "r.hlo:5:8: error: not supported: custom-call 'r' (target foo: ");
  refused("HloModule r\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
          "ENTRY e {\n  x = f32[8] parameter(0)\n  z = f32[] constant(0)\n"
          "  ROOT w = f32[4] reduce-window(x, z), window={size=2 stride=2 rhs_reversal=1}, to_apply=add\n}\n",
          "not supported: reduce-window 'w' (window reversal)");
  refused("HloModule r\nENTRY e {\n  x = f32[<=4] parameter(0)\n  ROOT n = f32[4] slice(x), slice={[0:4]}\n}\n",
          "r.hlo:3:3: error: not supported: parameter 'x' (dynamic dimensions)");
}

/* Every instruction cxla cannot run is named, in file order, with where it is and (for a
 * custom-call) its target, those in called computations included; the error is at the
 * first. So one compile says everything a module needs, not one op per attempt. */
TEST(compile_lists_every_refusal) {
  const char *text = "HloModule r\n"
                     "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] custom-call(a, b), custom_call_target=\"my_add\"\n}\n"
                     "ENTRY e {\n  x = f32[8] parameter(0)\n"
                     "  q = f32[8] custom-call(x), custom_call_target=\"lapack_sgeqrf_foo\"\n"
                     "  z = f32[] constant(0)\n"
                     "  w = f32[4] reduce-window(q, z), window={size=2 stride=2 rhs_reversal=1}, to_apply=add\n"
                     "  ROOT g = s32[] get-dimension-size(w), dimensions={0}\n}\n";
  refused(text, "r.hlo:5:8: error: not supported: 4 instructions: r.hlo:5:8 custom-call 's' (target my_add: ");
  refused(text, "), r.hlo:9:3 custom-call 'q' (target lapack_sgeqrf_foo: ");
  refused(text, "), r.hlo:11:3 reduce-window 'w' (window reversal), r.hlo:12:8 get-dimension-size 'g' (cxla does "
                "not run this op yet)");
}

/* Hundreds of refusals: as many as fit, then how many more, in one line. */
TEST(compile_lists_many_refusals_briefly) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule r\nENTRY e {\n  x = f32[8] parameter(0)\n");
  for (int i = 0; i < 300; i++) cx_sb_printf(&sb, "  c%d = f32[8] custom-call(x), custom_call_target=\"t%d\"\n", i, i);
  cx_sb_puts(&sb, "  ROOT t = (");
  for (int i = 0; i < 300; i++) cx_sb_printf(&sb, "%sf32[8]", i ? ", " : "");
  cx_sb_puts(&sb, ") tuple(");
  for (int i = 0; i < 300; i++) cx_sb_printf(&sb, "%sc%d", i ? ", " : "", i);
  cx_sb_puts(&sb, ")\n}\n");
  refused(sb.buf, "r.hlo:4:3: error: not supported: 300 instructions: r.hlo:4:3 custom-call 'c0' (target t0: ");
  const char *msg = cxla_context_errmsg(test_ctx());
  CHECK_STR_CONTAINS(msg, " more");
  CHECK(!strchr(msg, '\n') && strlen(msg) < 2000);
  cx_sb_free(&sb);
}

TEST(compile_ignores_computations_nothing_runs) {
  const char *text = "HloModule r\nunused {\n  a = f32[4] parameter(0)\n"
                     "  ROOT r = f32[4] custom-call(a), custom_call_target=\"foo\"\n}\n"
                     "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n";
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "r.hlo", &m));
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  cxla_executable *e = NULL;
  if (m) CHECK_OK(cxla_compile(m, &o, &e));
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

/* cxla_context_activity: idle between calls; while-loop iterations counted on both backends
 * (what `cxla run --timeout` reads to tell a loop that keeps going from a slow kernel). */
TEST(context_activity_counts_loop_iterations) {
  const char *text = "HloModule l\ncond {\n  p = s32[] parameter(0)\n  k = s32[] constant(7)\n"
                     "  ROOT c = pred[] compare(p, k), direction=LT\n}\n"
                     "body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT a = s32[] add(p, one)\n}\n"
                     "ENTRY e {\n  x = s32[] parameter(0)\n  ROOT w = s32[] while(x), condition=cond, body=body\n}\n";
  static const char *const backends[] = {"interp", "cpu"}; /* a parameter: nothing folds the loop away */
  for (int b = 0; b < 2; b++) {
    cxla_context *ctx = NULL;
    CHECK_OK(cxla_context_create(&ctx));
    if (!ctx) return;
    char what[128];
    int64_t n = -1;
    cxla_context_activity(ctx, what, sizeof what, &n);
    CHECK_MSG(!strcmp(what, "idle") && n == 0, "fresh context: %s, %lld", what, (long long)n);
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "l.hlo", &m));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_literal *out = NULL, *x = cxla_literal_create(ctx, CXLA_S32, 0, NULL);
    if (m && x) CHECK_OK(cxla_module_run(m, &o, 1, &x, &out));
    cxla_literal_destroy(x);
    cxla_context_activity(ctx, what, sizeof what, &n);
    CHECK_MSG(!strcmp(what, "idle") && n == 7, "%s after the run: %s, %lld iterations", backends[b], what, (long long)n);
    cxla_literal_destroy(out);
    cxla_module_destroy(m);
    cxla_context_destroy(ctx);
  }
}
