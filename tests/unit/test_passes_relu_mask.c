/* test_passes_relu_mask.c — relu-mask: x > k reads max(x, c) where that maximum is computed.
 * Every case runs through TP_PASS, which also checks the results before and after agree bit for
 * bit on inputs led by NaN, -0 and infinities; then the whole pipeline on a dense layer with
 * JAX's relu and its gradient mask: the dot's epilogue runs on to the relu. */
#include <stdio.h>
#include <string.h>
#include "core/flags.h"
#include "fusion_helpers.h"

#define MASK(text, expect) TP_PASS((text), cx_pass_relu_mask, (expect))

TEST(passes_relu_mask_reads_the_maximum) {
  static const char *const fmt =
      "HloModule m\nENTRY e {\n  x = %s[6] parameter(0)\n  c = %s[] constant(%s)\n  cb = %s[6] broadcast(c), dimensions={}\n"
      "  k = %s[] constant(%s)\n  kb = %s[6] broadcast(k), dimensions={}\n  r = %s[6] maximum(%s)\n"
      "  q = pred[6] compare(%s), direction=%s%s\n  ROOT t = (%s[6], pred[6]) tuple(r, q)\n}\n";
  static const struct {
    const char *type, *c, *k, *max_ops, *cmp_ops, *dir, *cmp_type;
    int rewritten;
  } cases[] = {
      {"f32", "0", "0", "x, cb", "x, kb", "GT", "", 1},  /* JAX's relu and its mask */
      {"f32", "0", "0", "cb, x", "kb, x", "LT", "", 1},  /* either order, mirrored */
      {"bf16", "-0", "0", "x, cb", "x, kb", "GT", ", type=FLOAT", 1},
      {"f64", "-1", "0", "x, cb", "x, kb", "GE", "", 1}, /* c below k: >= holds too */
      {"f32", "0", "0", "x, cb", "x, kb", "GE", "", 0},  /* x = -1: x >= 0 false, max(x, 0) >= 0 true */
      {"f32", "1", "0", "x, cb", "x, kb", "GT", "", 0},  /* c above k */
      {"f32", "0", "0", "x, cb", "x, kb", "LT", "", 0},  /* an upper bound */
      {"f32", "0", "0", "x, cb", "x, kb", "GT", ", type=TOTALORDER", 0},
      {"f32", "0", "nan", "x, cb", "x, kb", "GT", "", 0},
      {"s32", "0", "0", "x, cb", "x, kb", "GT", "", 0}, /* floats only */
  };
  for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    char text[1024];
    const char *t = cases[i].type;
    snprintf(text, sizeof text, fmt, t, t, cases[i].c, t, t, cases[i].k, t, t, cases[i].max_ops, cases[i].cmp_ops,
             cases[i].dir, cases[i].cmp_type, t);
    cx_module *m = MASK(text, cases[i].rewritten);
    cx_instr *q = m ? tp_find(m, "q") : NULL;
    CHECK_MSG(q && (q->ops[0]->op == CX_OP_MAXIMUM || q->ops[1]->op == CX_OP_MAXIMUM) == cases[i].rewritten,
              "case %d: %s", i, text);
    cx_module_free(m);
  }
  /* the maximum defined after the comparison: the computation is re-sorted */
  cx_module *m = MASK("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                      "  zb = f32[4] broadcast(z), dimensions={}\n  q = pred[4] compare(x, zb), direction=GT\n"
                      "  r = f32[4] maximum(x, zb)\n  ROOT t = (pred[4], f32[4]) tuple(q, r)\n}\n", 1);
  cx_module_free(m);
}

/* relu(x.w + b) and its gradient mask as JAX writes them, the mask applied to a gradient that
 * comes from the relu's output through another product: with the mask on the relu's output,
 * x + b has one reader, and the first dot's epilogue takes in the bias and the relu (the mask's
 * select is the second dot's epilogue). Without the pass, the relu is a kernel of its own. */
TEST(passes_relu_mask_lets_the_epilogue_take_the_relu) {
  static const char *const text =
      "HloModule m\nrelu {\n  a = f32[8,16] parameter(0)\n  z = f32[] constant(0)\n"
      "  zb = f32[8,16] broadcast(z), dimensions={}\n  ROOT r = f32[8,16] maximum(a, zb)\n}\n"
      "ENTRY e {\n  h = f32[8,32] parameter(0)\n  w = f32[32,16] parameter(1)\n  b = f32[16] parameter(2)\n"
      "  d = f32[8,16] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bb = f32[8,16] broadcast(b), dimensions={1}\n  x = f32[8,16] add(d, bb)\n"
      "  z = f32[] constant(0)\n  zb = f32[8,16] broadcast(z), dimensions={}\n"
      "  q = pred[8,16] compare(x, zb), direction=GT\n  r = f32[8,16] call(x), to_apply=relu\n"
      "  v = f32[16,16] parameter(3)\n  g = f32[8,16] dot(r, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  s = f32[8,16] select(q, g, zb)\n  ROOT t = (f32[8,16], f32[8,16]) tuple(r, s)\n}\n";
  for (int on = 0; on < 2; on++) {
    cx_module *m = TP_PARSE(text);
    if (!m) return;
    cx_module *orig = cx_module_clone(m);
    cx_flags f;
    cx_flags_init(&f);
    f.disable_pass = on ? NULL : "relu-mask";
    cx_pass_opts opts = cx_pass_opts_from_flags(&f);
    cx_pass_ctx pc = {&opts, 1, 0, NULL};
    cxla_status s = cx_pass_pipeline(&pc, m);
    CHECK_MSG(s == CXLA_OK, "pipeline: %s", cxla_context_errmsg(test_ctx()));
    if (s == CXLA_OK && orig) TP_EQUIV(orig, m, 3);
    CHECK_MSG(cx_count_kernels(m) == (on ? 2 : 3), "relu-mask %s: %d kernels", on ? "on" : "off", cx_count_kernels(m));
    CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 2);
    cx_module_free(orig);
    cx_module_free(m);
  }
}
