/* test_annotations.c — the custom-calls that annotate a value for a compiler of several
 * devices (Sharding, SPMDFullToShardShape, SPMDShardToFullShape, MoveToHost, MoveToDevice):
 * the remove-annotations pass replaces each by its operand (as XLA's ShardingRemover), chains
 * and roots included, and leaves other custom-calls alone; the interpreter runs them as the
 * identity, so the check before any pass accepts them; the cpu compile then runs nothing for
 * them (and copies, with the pass disabled); one that changes the shape is a program for
 * several devices, refused when compiling. Also XLA:CPU's "TopK" custom-call's shape rule.
 * Values: tests/hlo/ops/annotations.hlo, tests/hlo/jax_ops/lax_with_sharding_constraint.hlo. */
#include <string.h>
#include "passes_helpers.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "verify_helpers.h"

static const char *k_chain =
    "HloModule m\n"
    "f {\n  p = f32[3] parameter(0)\n  n = f32[3] negate(p)\n"
    "  ROOT s = f32[3] custom-call(n), custom_call_target=\"Sharding\", sharding={replicated}\n}\n"
    "ENTRY e {\n  x = f32[3] parameter(0)\n"
    "  a = f32[3] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
    "  b = f32[3] custom-call(a), custom_call_target=\"MoveToHost\"\n"
    "  c = f32[3] custom-call(b), custom_call_target=\"MoveToDevice\"\n"
    "  k = f32[3] custom-call(c), custom_call_target=\"keep_me\"\n"
    "  d = f32[3] call(k), to_apply=f\n"
    "  ROOT r = f32[3] custom-call(d), custom_call_target=\"SPMDShardToFullShape\", sharding={replicated}\n}\n";

TEST(remove_annotations_pass) {
  cx_module *m = TP_PARSE(k_chain);
  if (!m) return;
  TP_RUN(m, cx_pass_remove_annotations, 1);
  /* only the unknown target is left, reading x; the roots are the call and the negate */
  CHECK_EQ_INT(tp_count_all(m, CX_OP_CUSTOM_CALL), 1);
  cx_instr *k = tp_find(m, "k");
  CHECK(k && k->ops[0] == tp_find(m, "x"));
  CHECK(m->entry->root == tp_find(m, "d"));
  for (int i = 0; i < m->ncomps; i++)
    if (!m->comps[i]->is_entry) CHECK(m->comps[i]->root->op == CX_OP_NEGATE);
  TP_RUN(m, cx_pass_remove_annotations, 0); /* nothing left to do */
  cx_module_free(m);
}

TEST(remove_annotations_keeps_a_resharding_one) {
  cx_module *m = TP_PARSE("HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n"
                          "  ROOT a = f32[4] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n}\n");
  if (!m) return;
  TP_RUN(m, cx_pass_remove_annotations, 0);
  cx_module_free(m);
}

/* Both backends: the identity on the interpreter, nothing at all on the cpu. */
TEST(annotations_run_on_every_backend) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n"
                     "  a = f32[3] custom-call(x), custom_call_target=\"Sharding\", sharding={replicated}\n"
                     "  b = f32[3] custom-call(a), custom_call_target=\"MoveToHost\"\n"
                     "  y = f32[3] exponential(b)\n"
                     "  ROOT c = f32[3] custom-call(y), custom_call_target=\"MoveToDevice\"\n}\n";
  const char *in[1] = {"f32[3] {0, 1, -1}"};
  char *stats = NULL;
  CHECK(cpu_check(text, 1, in, NULL, 1e-6, 1e-7, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0 && strstr(stats, "copies=0"), "%s", stats);
  free(stats);
  /* without the pass the cpu copies, still natively */
  CHECK(cpu_check(text, 1, in, "--disable-pass=remove-annotations", 1e-6, 1e-7, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "%s", stats);
  free(stats);
}

/* Shardy's marks: GlobalToLocalShape of several operands is the tuple of them; without the
 * pass the cpu runs that one on the interpreter (counted), the single ones natively. */
TEST(sdy_annotations_run_on_every_backend) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  y = s32[2] parameter(1)\n"
                     "  g = (f32[3], s32[2]) custom-call(x, y), custom_call_target=\"xla.sdy.GlobalToLocalShape\", "
                     "custom_call_has_side_effect=true\n"
                     "  g0 = f32[3] get-tuple-element(g), index=0\n  g1 = s32[2] get-tuple-element(g), index=1\n"
                     "  e = f32[3] exponential(g0)\n"
                     "  l = f32[3] custom-call(e), custom_call_target=\"xla.sdy.LocalToGlobalShape\", custom_call_has_side_effect=true\n"
                     "  f = f32[3] custom-call(l), custom_call_target=\"xla.sdy.FuncResultSharding\", custom_call_has_side_effect=true\n"
                     "  ROOT r = (f32[3], s32[2]) tuple(f, g1)\n}\n";
  const char *in[2] = {"f32[3] {0, 1, -1}", "s32[2] {7, -3}"};
  char *stats = NULL;
  CHECK(cpu_check(text, 2, in, NULL, 1e-6, 1e-7, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "%s", stats);
  free(stats);
  CHECK(cpu_check(text, 2, in, "--disable-pass=remove-annotations", 1e-6, 1e-7, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 1, "%s", stats);
  free(stats);
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[9] parameter(0)\n  y = f32[9] parameter(1)\n"
                                    "  ROOT g = (f32[9], f32[9]) custom-call(x, y), custom_call_target=\"xla.sdy.GlobalToLocalShape\"\n"),
                     "ok");
}

/* text, parsed as `file`, is refused when compiling for the interpreter and for cpu, with an
 * error containing msg. */
static void refused_on_every_backend(const char *text, const char *file, const char *msg) {
  static const char *const backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), file, &m));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_executable *e = NULL;
    CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), msg);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

TEST(annotations_that_reshard_are_refused) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n"
                     "  ROOT a = f32[4] custom-call(x), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n}\n";
  const char *sdy = "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  y = f32[2] parameter(1)\n"
                    "  ROOT a = (f32[8], f32[1]) custom-call(x, y), custom_call_target=\"xla.sdy.GlobalToLocalShape\"\n}\n";
  refused_on_every_backend(sdy, "s.hlo", "target xla.sdy.GlobalToLocalShape: its result is not its operand's shape");
  refused_on_every_backend(text, "r.hlo",
                           "r.hlo:4:8: error: not supported: custom-call 'a' (target SPMDFullToShardShape: its result is "
                           "not its operand's shape: a program for several devices needs XLA's SPMD partitioner)");
}

/* jax.debug.print, pure_callback and io_callback as jax lowers them for the CPU (index= into the
 * lowering's list of callables, which only cxla.jit and the PJRT plugin map to registered ids):
 * refused when compiling, naming the callback, on every backend (not when the program reaches
 * them). test_host_callbacks.c runs the cxla_host_callback they become. */
TEST(host_callbacks_are_refused_when_compiling) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n"
                     "  p = () custom-call(a), custom_call_target=\"xla_ffi_python_cpu_callback\", "
                     "custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={index = 0 : ui64}\n"
                     "  ROOT n = f32[3] negate(a)\n}\n";
  refused_on_every_backend(text, "cb.hlo",
                           "cb.hlo:4:3: error: not supported: custom-call 'p' (target xla_ffi_python_cpu_callback: a "
                           "callback by index= into its lowering's host_callbacks (cxla.jit and the PJRT plugin "
                           "lower it for cxla))");
}

TEST(topk_custom_call_verifier) {
  CHECK_STR_EQ(vt_verify_body("  x = bf16[2,9] parameter(0)\n"
                           "  ROOT t = (bf16[2,3], s32[2,3]) custom-call(x), custom_call_target=\"TopK\"\n"),
               "ok");
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[2,3,9] parameter(0)\n"
                                 "  ROOT t = (f32[2,3,3], s32[2,3,3]) custom-call(x), custom_call_target=\"TopK\"\n"),
                     "TopK takes a rank 1 or 2 array of reals, got f32[2,3,9]");
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[9] parameter(0)\n"
                                 "  ROOT t = (f32[10], s32[10]) custom-call(x), custom_call_target=\"TopK\"\n"),
                     "TopK: k=10 is more than the last dimension of f32[9]");
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[9] parameter(0)\n  ROOT t = f32[3] custom-call(x), custom_call_target=\"TopK\"\n"),
                     "TopK returns (values, s32 indices) of the operand's rank");
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[9] parameter(0)\n"
                                 "  ROOT t = (f32[3], u32[3]) custom-call(x), custom_call_target=\"TopK\"\n"),
                     "t"); /* the declared shape differs from the inferred (f32[3], s32[3]) */
  CHECK_STR_CONTAINS(vt_verify_body("  x = f32[9] parameter(0)\n  y = f32[9] parameter(1)\n"
                                 "  ROOT a = f32[9] custom-call(x, y), custom_call_target=\"Sharding\"\n"),
                     "Sharding of 2 operands returns a tuple of 2, declared f32[9]");
}
