/* test_passes_disable.c — the CPU pipeline as a table: --disable-pass checks its names
 * (unknown and required ones are refused), a disabled pass does not run, and the module left
 * by any set of disabled passes still computes the same values. */
#include "core/context.h"
#include "ir/clone.h"
#include "passes_helpers.h"

static const char *text =
    "HloModule m\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  r = f32[3,2] reshape(x)\n"
    "  r2 = f32[2,3] reshape(r)\n"
    "  e = f32[2,3] exponential(r2)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[2] reduce(e, z), dimensions={1}, to_apply=add\n"
    "  bs = f32[2,3] broadcast(s), dimensions={0}\n"
    "  ROOT d = f32[2,3] divide(e, bs)\n"
    "}\n";

TEST(passes_disable_checks_names) {
  cxla_context *ctx = test_ctx();
  CHECK_OK(cx_pipeline_check_disabled(ctx, "simplify,cse,dot-epilogue-fusion"));
  CHECK_EQ_INT(cx_pipeline_check_disabled(ctx, "simplify,frob"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "unknown pass 'frob'; passes that may be disabled: remove-annotations, batchnorm-expand, scan-expand, inline, simplify, ");
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), ", fusion, multi-output-fusion, row-fusion, dot-epilogue-fusion");
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "(required: layout, ");
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "wrap-singletons)");
  CHECK_EQ_INT(cx_pipeline_check_disabled(ctx, "layout"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "pass 'layout' is required");
  CHECK_EQ_INT(cx_pipeline_check_disabled(ctx, "wrap-singletons"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cx_pipeline_check_disabled(ctx, "simplify,,cse"), CXLA_ERR_INVALID_ARGUMENT);
  /* through a context's flags, which keep their old values when any option is bad */
  ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  CHECK_OK(cxla_context_set_flags(ctx, "--disable-pass=fold"));
  CHECK_EQ_INT(cxla_context_set_flags(ctx, "--fusion=off --disable-pass=fusion,layout"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "layout");
  CHECK(ctx->flags.disable_pass && !strcmp(ctx->flags.disable_pass, "fold"));
  CHECK_EQ_INT(ctx->flags.fusion, 1);
  CHECK_OK(cxla_context_set_flags(ctx, "--disable-pass=fold --dump-format=hlo"));
  CHECK_EQ_INT(cxla_context_set_flags(ctx, "--dump-format=pdf"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(ctx->flags.dump_format && !strcmp(ctx->flags.dump_format, "hlo"));
  cxla_context_destroy(ctx);
}

TEST(passes_disable_table) {
  int n;
  const cx_pipeline_step *st = cx_pipeline_steps(&n);
  CHECK(n >= 2 && !strcmp(st[0].pass.name, "layout") && st[0].required); /* layout runs first */
  int wrap = 0;
  for (int i = 0; i < n; i++) {
    CHECK_MSG(st[i].desc && st[i].desc[0], "step %d has no description", i);
    if (!strcmp(st[i].pass.name, "wrap-singletons")) wrap = st[i].required && st[i].kind == CX_STEP_ONCE;
  }
  CHECK(wrap);
}

/* Number of instructions in m's fused computations that are not parameters. */
static int fused_ops(const cx_module *m, int *nfusions) {
  int k = 0;
  *nfusions = 0;
  for (int i = 0; i < m->entry->ninstrs; i++) {
    const cx_instr *in = m->entry->instrs[i];
    if (in->op != CX_OP_FUSION) continue;
    (*nfusions)++;
    for (int j = 0; j < in->called[0]->ninstrs; j++) k += in->called[0]->instrs[j]->op != CX_OP_PARAMETER;
  }
  return k;
}

/* Every pass that may be disabled, each once, comma-separated (caller frees). */
static char *all_optional(void) {
  int n;
  const cx_pipeline_step *st = cx_pipeline_steps(&n);
  cx_sb sb;
  cx_sb_init(&sb);
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= !strcmp(st[j].pass.name, st[i].pass.name);
    if (!st[i].required && !seen) cx_sb_printf(&sb, "%s%s", sb.len ? "," : "", st[i].pass.name);
  }
  return cx_sb_take(&sb);
}

TEST(passes_disable_skips_passes_and_keeps_results) {
  char *all = all_optional();
  const char *sets[] = {"simplify", "fusion", "fusion,multi-output-fusion,row-fusion,dot-epilogue-fusion", all};
  CHECK_OK(cx_pipeline_check_disabled(test_ctx(), all));
  for (int k = 0; k < 4 && all; k++) {
    cx_module *m = TP_PARSE(text);
    if (!m) return;
    cx_module *orig = cx_module_clone(m);
    cx_flags f;
    cx_flags_init(&f);
    CHECK_OK(cx_flags_parse(test_ctx(), &f, k == 0 ? "--disable-pass=simplify" : "--disable-pass=fusion"));
    cx_free(f.disable_pass);
    f.disable_pass = cx_strdup(sets[k]);
    cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
    cx_pass_ctx pc = {&pc_opts, 1, 0, NULL};
    CHECK_OK(cx_pass_pipeline(&pc, m));
    TP_EQUIV(orig, m, 8);
    int nf, ops = fused_ops(m, &nf);
    if (k == 0) /* the reshape pair stays, fused into its user */
      CHECK_MSG(ops >= 6, "simplify disabled: %d fused ops in %d fusions", ops, nf);
    if (k >= 2) /* every op its own fusion: at least exp, reduce, broadcast, divide */
      CHECK_MSG(nf >= (k == 3 ? 6 : 4) && ops == nf, "fusion passes disabled: %d fused ops in %d fusions", ops, nf);
    cx_flags_free(&f);
    cx_module_free(orig);
    cx_module_free(m);
  }
  cx_free(all);
}
