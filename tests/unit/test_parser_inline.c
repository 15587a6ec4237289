/* test_parser_inline.c — called computations written inline ("to_apply={ ... }", XLA's parser's
 * nested computations): the names they get, names inside them that repeat names outside,
 * errors inside them located and freed (ASan), and nesting past the parser's depth limit. Whole
 * modules that run are in tests/hlo/xla_syntax/inline_computations.hlo. */
#include <string.h>
#include "ir/ir.h"
#include "text/hlo.h"
#include "test.h"
#include "util/util.h"

static cx_module *parse(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s != CXLA_OK) test_fail(__FILE__, __LINE__, "%s", cxla_context_errmsg(test_ctx()));
  return s == CXLA_OK ? m : NULL;
}

/* A computation the module already names "inline" keeps it; the inline one gets the next free
 * name, and a named branch sits beside an inline one. */
TEST(parser_inline_names) {
  const char *text = "HloModule m\n"
                     "inline {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
                     "ENTRY e {\n  i = s32[] parameter(0)\n  x = f32[] parameter(1)\n"
                     "  ROOT c = f32[] conditional(i, x, x), branch_computations={inline, {\n"
                     "    x = f32[] parameter(0)\n    ROOT y = f32[] abs(x)\n  }}\n}\n";
  cx_module *m = parse(text);
  if (!m) return;
  cx_instr *c = m->entry->root;
  CHECK(c->ncalled == 2);
  if (c->ncalled == 2) {
    CHECK_STR_CONTAINS(c->called[0]->name, "inline");
    CHECK(!strcmp(c->called[1]->name, "inline.1"));
    CHECK(c->called[1]->root->op == CX_OP_ABS);
  }
  cx_module_free(m);
}

static void expect_err(const char *text, const char *msg, int line) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) {
    cx_module_free(m);
    test_fail(__FILE__, line, "parsed, expected '%s'", msg);
    return;
  }
  const char *got = cxla_context_errmsg(test_ctx());
  if (!strstr(got, msg)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, msg);
}

TEST(parser_inline_errors) {
  /* an error two computations deep: the outer names wait on the scope stack and are freed */
  expect_err("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
             "  ROOT c = f32[] call(x), to_apply={\n    v = f32[4] parameter(0)\n"
             "    ROOT r = f32[] reduce(v, f32[] constant(0)), dimensions={0}, to_apply={\n"
             "      a = f32[] parameter(0)\n      ROOT s = f32[] add(a, v)\n    }\n  }\n}\n",
             "t.hlo:8:29: error: use of undefined instruction 'v'", __LINE__);
  expect_err("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = f32[] call(x), to_apply={ ROOT }\n}\n",
             "t.hlo:4:43: error: expected an instruction name, got '}'", __LINE__);
  /* 70 computations each calling the next inline */
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=");
  for (int i = 0; i < 70; i++) cx_sb_puts(&sb, "{ p = f32[] parameter(0)\n ROOT c = f32[] call(p), to_apply=");
  cx_sb_puts(&sb, "x\n");
  expect_err(sb.buf ? sb.buf : "", "nested deeper than 64", __LINE__);
  cx_sb_free(&sb);
}
