/* test_topk.c — topk: the verifier's shape rule (XLA's InferTopKShape), the text form, and the
 * cpu backend's runtime routine (rt/topk.c) against the interpreter on rows full of
 * ties, NaN, infinities and signed zeros, every element type, both directions, k from 0 to
 * the whole row, with the rows split over several threads; the cpu compile must run it
 * natively (no interpreter fallback). Hand-computed values are in tests/hlo/ops/topk.hlo. */
#include <string.h>
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "util/util.h"
#include "verify_helpers.h"

TEST(topk_verifier) {
  vt_begin();
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[2,3,5]"), *s = vt_param(1, "s", "f32[]"), *p = vt_param(2, "p", "pred[4]");
  cx_instr *t = vt_op(CX_OP_TOPK, "t", NULL, 1, x);
  t->a.index = 2;
  CHECK_INFER(t, "(f32[2,3,2], s32[2,3,2])");
  t->a.index = 5;
  CHECK_INFER(t, "(f32[2,3,5], s32[2,3,5])");
  t->a.index = 0;
  CHECK_INFER(t, "(f32[2,3,0], s32[2,3,0])");
  t->a.index = 6;
  CHECK_INFER_ERR(t, "k=6 must be in [0, 5], the last dimension of f32[2,3,5]");
  t->a.index = -1;
  CHECK_INFER_ERR(t, "k=-1 must be in [0, 5]");
  cx_instr *u = vt_op(CX_OP_TOPK, "u", NULL, 1, s);
  CHECK_INFER_ERR(u, "needs an operand of rank 1 or more, got f32[]");
  cx_instr *v = vt_op(CX_OP_TOPK, "v", NULL, 1, p);
  v->a.index = 1;
  CHECK_INFER(v, "(pred[1], s32[1])");
  vt_end();
}

/* XLA's text: k= required, largest= printed always and true when left out; the result shape
 * may be left out (XLA's parser infers it too). */
TEST(topk_text) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[4,6] parameter(0)\n  ROOT t = topk(x), k=2\n}\n";
  cx_module *m = NULL;
  CHECK_OK(cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m));
  if (!m) return;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  CHECK_STR_CONTAINS(sb.buf ? sb.buf : "", "ROOT t = (f32[4,2], s32[4,2]) topk(x), k=2, largest=true");
  cx_sb_free(&sb);
  cx_module_free(m);
  const char *nok = "HloModule m\nENTRY e {\n  x = f32[4,6] parameter(0)\n  ROOT t = (f32[4,2], s32[4,2]) topk(x)\n}\n";
  CHECK(cx_parse_module(test_ctx(), nok, strlen(nok), "t.hlo", &m) != CXLA_OK);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "k");
}

/* rows x n values as literal text: a few distinct values so that rows are full of ties, and
 * for floats NaN, +-inf and +-0 among them. */
static char *values(const char *type, int rows, int n, unsigned seed) {
  static const char *const fv[] = {"nan", "inf", "-inf", "0", "-0", "1.5", "-2", "3", "3", "0.25", "-0.25", "7"};
  static const char *const iv[] = {"0", "1", "2", "3", "5", "5", "9", "100"};
  static const char *const sv[] = {"-1", "-7", "-100", "4"};
  static const char *const bv[] = {"0", "1"};
  int is_float = type[0] == 'f' || type[0] == 'b', is_signed = type[0] == 's', is_pred = type[0] == 'p';
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s[%d,%d] {", type, rows, n);
  uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < rows; i++) {
    cx_sb_puts(&sb, i ? ", {" : "{");
    for (int j = 0; j < n; j++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      unsigned z = (unsigned)(r >> 33);
      const char *v;
      if (is_pred) v = bv[z % 2];
      else if (is_float) v = fv[z % CX_ARRAY_LEN(fv)];
      else if (is_signed && z % 3 == 0) v = sv[(z >> 4) % CX_ARRAY_LEN(sv)];
      else v = iv[(z >> 4) % CX_ARRAY_LEN(iv)];
      cx_sb_printf(&sb, "%s%s", j ? ", " : "", v);
    }
    cx_sb_putc(&sb, '}');
  }
  cx_sb_putc(&sb, '}');
  return cx_sb_take(&sb);
}

static void check_cpu(const char *type, int rows, int n, int k, int largest, unsigned seed) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = %s[%d,%d] parameter(0)\n  ROOT t = (%s[%d,%d], s32[%d,%d]) topk(x), k=%d, "
           "largest=%s\n}\n",
           type, rows, n, type, rows, k, rows, k, k, largest ? "true" : "false");
  char *in = values(type, rows, n, seed), *stats = NULL;
  const char *inputs[1] = {in};
  CHECK_MSG(cpu_check(text, 1, inputs, "--threads=4", 0, 0, &stats, NULL), "%s %dx%d k=%d largest=%d", type, rows, n,
            k, largest);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "topk ran on the interpreter: %s", stats);
  free(stats);
  cx_free(in);
}

TEST(topk_cpu_matches_interpreter) {
  static const char *const types[] = {"f32", "f64", "f16", "bf16", "s8", "s16", "s32", "s64",
                                      "u8", "u16", "u32", "u64", "pred"};
  for (size_t i = 0; i < CX_ARRAY_LEN(types); i++) {
    check_cpu(types[i], 3, 40, 7, 1, (unsigned)i);
    check_cpu(types[i], 3, 40, 7, 0, (unsigned)i + 100);
  }
  /* k = 0, 1 and the whole row; many rows over 4 threads (chunks of ~32K elements) */
  check_cpu("f32", 5, 33, 0, 1, 7);
  check_cpu("f32", 5, 33, 1, 0, 8);
  check_cpu("f32", 5, 33, 33, 1, 9);
  check_cpu("s32", 5, 33, 33, 0, 10);
  check_cpu("f32", 300, 2000, 16, 1, 11);
  check_cpu("bf16", 97, 1500, 100, 0, 12);
}
