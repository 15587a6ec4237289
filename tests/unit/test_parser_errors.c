/* test_parser_errors.c — every kind of HLO text error with its exact FILE:LINE:COL (columns
 * counted by hand from the test strings), hostile input (NUL bytes, unterminated strings and
 * comments, deep nesting, huge numbers), and allocation failures at every step. */
#include "ir/ir.h"
#include "ir/verify.h"
#include "text/hlo.h"
#include "test.h"

static void expect_err(const char *text, size_t len, cxla_status code, const char *msg, int line) {
  cx_module *m = (cx_module *)&m; /* must be reset to NULL */
  cxla_status s = cx_parse_module(test_ctx(), text, len, "t.hlo", &m);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s != code) test_fail(__FILE__, line, "status %s, expected %s: %s", cxla_status_str(s), cxla_status_str(code), got);
  if (m) test_fail(__FILE__, line, "module not NULL after an error");
  if (s == CXLA_OK) cx_module_free(m);
  if (!strstr(got, msg)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, msg);
}
#define ERR(text, code, msg) expect_err(text, strlen(text), code, msg, __LINE__)
#define PERR(text, msg) ERR(text, CXLA_ERR_PARSE, msg)
#define E(body) "HloModule m\nENTRY e {\n" body "}\n" /* body starts on line 3 */

TEST(parser_error_structure) {
  PERR("", "t.hlo:1:1: error: expected 'HloModule', got end of file");
  PERR("HloModul m", "t.hlo:1:1: error: expected 'HloModule', got 'HloModul'");
  PERR("HloModule m\n", "t.hlo:2:1: error: expected a computation, got end of file");
  PERR("HloModule m\nENTRY e {\n}\n", "t.hlo:2:7: error: computation 'e' has no instructions");
  PERR("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n", "t.hlo:4:1: error: expected '}' at the end of the computation, got end of file");
  PERR(E("  a f32[] parameter(0)\n"), "t.hlo:3:5: error: expected '=', got 'f32'");
  PERR(E("  a = f32[] parameter(0\n"), "t.hlo:4:1: error: expected ')', got '}'");
  PERR(E("  a = f32[] parameter(x)\n"), "t.hlo:3:23: error: expected a parameter number, got 'x'");
  PERR(E("  a = f32[] negate(b c)\n"), "t.hlo:3:22: error: expected ',' or ')', got 'c'");
  PERR(E("  a = f32[] parameter(0), foo\n"), "t.hlo:4:1: error: expected '=' after the attribute name, got '}'");
  PERR(E("  a = f32[] parameter(0), foo=\n"), "t.hlo:3:31: error: expected an attribute value");
  PERR(E("  a = f32[] parameter(0), foo= /* c */ 5, bar=\n"), "t.hlo:3:47: error: expected an attribute value");
  PERR(E("  a = f32[] parameter(0), metadata={{{op_name=\"x\"}\n"), "t.hlo:3:36: error: unterminated attribute value");
  PERR(E("  a = f32[] parameter(0), metadata={op_name=\"x\")\n"), "t.hlo:3:48: error: mismatched bracket in attribute value");
}

TEST(parser_error_names) {
  PERR(E("  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, c)\n"), "t.hlo:4:25: error: use of undefined instruction 'c'");
  PERR(E("  a = f32[] parameter(0)\n  a = f32[] negate(a)\n"), "t.hlo:4:3: error: duplicate instruction name 'a' (first defined at line 3)");
  PERR("HloModule m\nc {\n  a = f32[] parameter(0)\n}\nc {\n  a = f32[] parameter(0)\n}\n",
       "t.hlo:5:1: error: duplicate computation name 'c' (first defined at line 2)");
  PERR(E("  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n"), "t.hlo:4:8: error: second ROOT instruction 'b' (the first is 'a')");
  PERR("HloModule m\nENTRY a {\n  x = f32[] parameter(0)\n}\nENTRY b {\n  x = f32[] parameter(0)\n}\n",
       "t.hlo:5:7: error: second ENTRY computation 'b' (the first is 'a')");
  PERR(E("  a = f32[] negate(b)\n  b = f32[] negate(a)\n"), "t.hlo:3:3: error: instruction 'a' depends on itself");
  PERR(E("  a = f32[] negate(a)\n"), "t.hlo:3:3: error: instruction 'a' depends on itself");
  PERR(E("  a = f32[] parameter(0)\n  ROOT r = f32[] call(a), to_apply=nowhere\n"), "t.hlo:4:36: error: use of undefined computation 'nowhere'");
  PERR("HloModule m\nc {\n  a = f32[] parameter(0)\n  ROOT r = f32[] call(a), to_apply=c\n}\nENTRY e {\n  a = f32[] parameter(0)\n}\n",
       "t.hlo:4:36: error: computation 'c' calls itself");
  PERR(E("  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(f32[3] a)\n"),
       "t.hlo:4:26: error: operand 0 of 'n' is written with shape f32[3], but 'a' has shape f32[2]");
  PERR(E("  a = (f32[2], s32[]) parameter(0)\n  ROOT g = s32[] get-tuple-element((f32[2], u32[]) a), index=1\n"),
       "t.hlo:4:36: error: operand 0 of 'g' is written with shape (f32[2], u32[])");
  /* Written layouts may differ (only the shape is compared), as may later definitions. */
  cx_module *ok = NULL;
  const char *lay = E("  ROOT n = f32[2] negate(f32[2]{0} a)\n  a = f32[2] parameter(0)\n");
  CHECK_OK(cx_parse_module(test_ctx(), lay, strlen(lay), "t.hlo", &ok));
  cx_module_free(ok);
  /* An operand from another computation is undefined in this one. */
  PERR("HloModule m\nc {\n  q = f32[] parameter(0)\n}\nENTRY e {\n  ROOT a = f32[] negate(q)\n}\n",
       "t.hlo:6:25: error: use of undefined instruction 'q'");
}

TEST(parser_error_ops_and_attrs) {
  PERR(E("  a = f32[] frobnicate()\n"), "t.hlo:3:13: error: unknown opcode 'frobnicate'");
  ERR(E("  a = f32[] sinh()\n"), CXLA_ERR_UNSUPPORTED, "t.hlo:3:13: error: not supported: opcode sinh");
  PERR(E("  a = f32[2] parameter(0)\n  b = f32[2] broadcast(a)\n"), "t.hlo:4:14: error: broadcast needs attribute dimensions=");
  PERR(E("  a = pred[] compare()\n"), "t.hlo:3:14: error: compare needs attribute direction=");
  PERR(E("  a = pred[] compare(), direction=XX\n"), "t.hlo:3:35: error: expected a comparison direction");
  PERR(E("  a = f32[2] parameter(0)\n  b = f32[2] reverse(a), dimensions={0}, dimensions={0}\n"),
       "t.hlo:4:42: error: attribute dimensions given twice");
  PERR(E("  a = f32[2] parameter(0)\n  b = f32[2] reverse(a), dimensions={0 1}\n"), "t.hlo:4:40: error: expected ',' or '}', got '1'");
  PERR(E("  a = s32[] while(), body=b\n"), "t.hlo:3:13: error: while needs attribute condition=");
  PERR(E("  a = s32[] conditional(), branch_computations={x}, true_computation=x\n"),
       "t.hlo:3:13: error: conditional has both branch_computations and true/false_computation");
  PERR(E("  a = s32[] conditional(), true_computation=x\n"), "t.hlo:3:13: error: conditional needs both");
  PERR(E("  a = f32[1,1] convolution(), window={size=3 stride=1x1}\n"), "t.hlo:3:38: error: window stride has 2 dimensions, size has 1");
  PERR(E("  a = f32[1,1] convolution(), window={size=3 bogus=1}\n"), "t.hlo:3:46: error: unknown window attribute 'bogus'");
  PERR(E("  a = f32[1,1] convolution(), window={size=3 pad=1}\n"), "t.hlo:3:50: error: bad window pad value '1'");
  PERR(E("  a = f32[1,1] convolution(), dim_labels=b01f_01io->b0f\n"), "t.hlo:3:42: error: dim_labels 'b01f_01io->b0f'");
  PERR(E("  a = f32[2] pad(), padding=1\n"), "t.hlo:3:29: error: expected padding lo_hi[_interior] per dimension, got '1'");
  PERR(E("  a = f32[2] slice(), slice={[0:2}\n"), "t.hlo:3:34: error: expected ']', got '}'");
  PERR(E("  a = f32[2] custom-call(), custom_call_target=\"a\\qb\"\n"), "t.hlo:3:50: error: bad escape sequence in string");
}

TEST(parser_error_shapes) {
  ERR(E("  a = s1[2] parameter(0)\n"), CXLA_ERR_UNSUPPORTED, "t.hlo:3:7: error: not supported: element type s1");
  ERR(E("  a = f32[?] parameter(0)\n"), CXLA_ERR_UNSUPPORTED, "t.hlo:3:11: error: not supported: unbounded dynamic dimension");
  PERR(E("  a = f33[2] parameter(0)\n"), "t.hlo:3:7: error: unknown element type 'f33'");
  PERR(E("  a = f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] parameter(0)\n"), "t.hlo:3:43: error: rank exceeds the maximum of 16");
  PERR(E("  a = f32[2,3]{0} parameter(0)\n"), "t.hlo:3:15: error: layout has 1 dimensions, the shape has rank 2");
  PERR(E("  a = f32[2,3]{0,2} parameter(0)\n"), "t.hlo:3:18: error: layout dimension 2 out of range for rank 2");
  PERR(E("  a = f32[2,3]{0,0} parameter(0)\n"), "t.hlo:3:18: error: layout names dimension 0 twice");
  PERR(E("  a = f32[99999999999999999999] parameter(0)\n"), "t.hlo:3:11: error: integer '99999999999999999999' out of range");
  PERR(E("  a = f32[-1] parameter(0)\n"), "t.hlo:3:11: error: negative dimension size -1");
  PERR(E("  a = token[2] parameter(0)\n"), "t.hlo:3:7: error: a token shape has no dimensions");
  PERR(E("  a = f32[2]{0:T(8} parameter(0)\n"), "t.hlo:3:19: error: unbalanced '(' in layout");
  char deep[400];
  strcpy(deep, "HloModule m\nENTRY e {\n  a = ");
  for (int i = 0; i < 100; i++) strcat(deep, "(");
  strcat(deep, "f32[]");
  PERR(deep, "t.hlo:3:71: error: tuple nesting deeper than 64");
  PERR("HloModule m\nENTRY %e (x: f32[2]) -> f32[3] {\n  ROOT %x = f32[2] parameter(0)\n}\n",
       "t.hlo:3:8: error: ROOT 'x' has shape f32[2], the signature of 'e' says f32[3]");
  /* XLA's parser drops a signature's parameter list (ParseParamListToShape): parameters whose
   * shapes, count or numbers differ from it are the computation's own; broken numbering is
   * the verifier's to report. */
  static const char *const ignored[] = {
      "HloModule m\nENTRY %e (x: f32[2]) -> f32[3] {\n  %x = f32[3] parameter(0)\n  ROOT %y = f32[3] negate(%x)\n}\n",
      "HloModule m\nENTRY %e (x: f32[2], y: f32[2]) -> f32[2] {\n  ROOT %x = f32[2] parameter(0)\n}\n",
      "HloModule m\nENTRY %e () -> f32[2] {\n  %x = f32[2] parameter(0)\n  ROOT %y = f32[2] parameter(1)\n}\n",
      "HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  ROOT %x = f32[2] parameter(7)\n}\n",
  };
  for (int i = 0; i < 4; i++) {
    cx_module *m = NULL;
    CHECK_OK(cx_parse_module(test_ctx(), ignored[i], strlen(ignored[i]), "t.hlo", &m));
    if (i == 2) { /* and the module runs with its own parameters */
      CHECK_OK(cx_verify_module(m));
      CHECK(m->entry->nparams == 2 && cx_shape_equal(&m->entry->params[1]->shape, &m->entry->params[0]->shape));
    }
    cx_module_free(m);
  }
}

TEST(parser_error_constants) {
  /* "{...}" for a whole array is XLA's elided constant (filled, see parse_literal.c); inside it is not */
  PERR(E("  a = f32[2,2] constant({{...}, {1, 2}})\n"),
       "t.hlo:3:27: error: '...' (elided values) may stand only for a whole array constant, {...}");
  PERR(E("  a = f32[3] constant({..., 1})\n"), "t.hlo:3:27: error: expected '}' after '...' (an elided constant), got ','");
  PERR(E("  a = f32[3] constant({1, 2})\n"), "t.hlo:3:28: error: too few values in dimension 0: 2 of 3");
  PERR(E("  a = f32[2] constant({1, 2, 3})\n"), "t.hlo:3:28: error: too many values in dimension 0 (size 2)");
  PERR(E("  a = f32[2,2] constant({1, 2})\n"), "t.hlo:3:26: error: expected '{' (dimension 1 of f32[2,2]), got '1'");
  PERR(E("  a = s8[] constant(128)\n"), "t.hlo:3:21: error: value 128 out of range for s8");
  PERR(E("  a = u8[] constant(-1)\n"), "t.hlo:3:21: error: value -1 out of range for u8");
  PERR(E("  a = pred[] constant(2)\n"), "t.hlo:3:23: error: value 2 out of range for pred");
  PERR(E("  a = f16[] constant(1e5)\n"), "t.hlo:3:22: error: value 1e5 out of range for f16");
  PERR(E("  a = f32[] constant(1e39)\n"), "t.hlo:3:22: error: value 1e39 out of range for f32");
  PERR(E("  a = s32[] constant(1.5)\n"), "t.hlo:3:22: error: expected an integer (s32 value), got '1.5'");
  PERR(E("  a = f32[] constant(1.5.2)\n"), "t.hlo:3:22: error: expected a number (f32 value), got '1.5.2'");
  PERR(E("  a = (f32[], s32[]) constant((1))\n"), "t.hlo:3:33: error: expected ',', got ')'");
  PERR(E("  a = token[] constant(1)\n"), "t.hlo:3:24: error: a literal cannot have token shape token[]");
  PERR(E("  a = f32[2] constant(s32[2] {1, 2})\n"), "t.hlo:3:23: error: literal shape s32[2] does not match f32[2]");
  PERR(E("  a = f32[1000000000000] constant({1})\n"), "t.hlo:3:35: error: literal of shape f32[1000000000000]: the text is too short");
}

TEST(parser_error_hostile_bytes) {
  PERR("HloModule m, k=\"abc\n", "t.hlo:1:16: error: unterminated string");
  PERR("HloModule m\n/* never ends\n", "t.hlo:2:1: error: unterminated comment");
  const char nul[] = "HloModule m\nENTRY e {\n  a = f32[]\0 parameter(0)\n}\n";
  expect_err(nul, sizeof nul - 1, CXLA_ERR_PARSE, "t.hlo:3:12: error: unexpected NUL byte", __LINE__);
  PERR(E("  a = f32[] parameter(0) @\n"), "t.hlo:3:26: error: unexpected character '@'");
  PERR("HloModule m\nENTRY e {\n  a = f32[] parameter(0), k={[}\n}\n", "t.hlo:3:31: error: mismatched bracket in attribute value");
  PERR("HloModule m\nENTRY e {\n  a = f32[] parameter(0), k={[\n}\n", "t.hlo:4:1: error: mismatched bracket in attribute value");
  PERR("HloModule m\nENTRY e {\n  a = f32[] parameter(0), k={[\n", "t.hlo:3:29: error: unterminated attribute value");
  PERR("HloModule \xff", "t.hlo:1:11: error: unexpected byte 0xff");
  /* a length shorter than the text: nothing past it is read */
  expect_err("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n}\n", 20, CXLA_ERR_PARSE, "t.hlo:2:9: error: expected '{'", __LINE__);
  cx_module *m = (cx_module *)&m;
  CHECK(cx_parse_module(test_ctx(), NULL, 5, NULL, &m) == CXLA_ERR_PARSE && m == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "<input>:1:1: error: expected 'HloModule'");
}

/* ---- allocation failures: every failing allocation must give OUT_OF_MEMORY and no leak
 * (the ASan build checks the leaks). ---- */

static const char *oom_module =
    "HloModule oom, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n"
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "ENTRY e {\n  p = f32[2]{0} parameter(0), metadata={op_name=\"p\"}\n"
    "  c = (f32[2], s32[]) constant(({1, 2}, 3))\n  z = f32[] constant(0)\n"
    "  r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
    "  w = f32[2] convolution(p, p), window={size=1}, dim_labels=bf_io->bf\n"
    "  ROOT b = f32[2] broadcast(r), dimensions={}\n}\n";

TEST(parser_alloc_failures) {
  int done = 0;
  for (int64_t k = 0; k < 10000 && !done; k++) {
    cx_module *m = NULL;
    cx_alloc_fail_after(k);
    cxla_status s = cx_parse_module(test_ctx(), oom_module, strlen(oom_module), "oom.hlo", &m);
    int64_t failures = cx_alloc_failures();
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) {
      done = 1;
      CHECK(m != NULL);
      cx_module_free(m);
    } else {
      CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY && failures > 0, "k=%lld: %s", (long long)k, cxla_context_errmsg(test_ctx()));
      CHECK(m == NULL);
    }
  }
  CHECK(done);
  done = 0;
  for (int64_t k = 0; k < 1000 && !done; k++) {
    cxla_literal *lit = NULL;
    cx_alloc_fail_after(k);
    cxla_status s = cxla_literal_parse(test_ctx(), "(f32[2], s32[]) ({1, 2}, 3)", &lit);
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) done = 1;
    else CHECK(s == CXLA_ERR_OUT_OF_MEMORY && lit == NULL);
    cxla_literal_destroy(lit);
  }
  CHECK(done);
}
