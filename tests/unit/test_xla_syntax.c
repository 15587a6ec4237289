/* test_xla_syntax.c — the HLO text XLA's own tests write: instructions without a result shape
 * (inferred as XLA's parser infers them), operands written as nested instructions, modules
 * without the HloModule line, the one-value constant shorthand, iota replica groups, async
 * chains in both spellings and copy-start/copy-done; ragged-all-to-all refused when compiling,
 * on every backend. Expected shapes and values are worked out by hand from the text. */
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes_helpers.h"
#include "text/hlo.h"

static cx_module *parse(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse failed: %s", cxla_context_errmsg(test_ctx()));
  return s == CXLA_OK ? m : NULL;
}

static void expect_err(const char *text, cxla_status code, const char *msg, int line) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s != code) test_fail(__FILE__, line, "status %s, expected %s (%s)", cxla_status_str(s), cxla_status_str(code), got);
  else if (!strstr(got, msg)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, msg);
  cx_module_free(m);
}
#define PERR(text, msg) expect_err((text), CXLA_ERR_PARSE, (msg), __LINE__)
#define VERR(text, msg) expect_err((text), CXLA_ERR_VERIFY, (msg), __LINE__)
#define E(body) "HloModule m\nENTRY e {\n" body "}\n" /* body starts on line 3 */

static cx_instr *find(const cx_module *m, const char *name) {
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (!strcmp(m->comps[i]->instrs[j]->name, name)) return m->comps[i]->instrs[j];
  return NULL;
}

static int shape_is(const cx_instr *in, const char *want) {
  char buf[256];
  if (!in) return 0;
  cx_shape_str(&in->shape, buf, sizeof buf);
  if (strcmp(buf, want)) printf("    %s has shape %s, expected %s\n", in->name, buf, want);
  return !strcmp(buf, want);
}

static char *print(const cx_module *m) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  return cx_sb_take(&sb);
}

/* The module's result on the interpreter, compared with a literal written by hand. */
static void expect_result(cx_module *m, int nargs, const char *const *args, const char *want, int line) {
  cxla_literal *a[4] = {0}, *w = NULL, *got = NULL;
  for (int i = 0; i < nargs; i++) CHECK_OK(cx_parse_literal(test_ctx(), args[i], strlen(args[i]), &a[i]));
  CHECK_OK(cx_parse_literal(test_ctx(), want, strlen(want), &w));
  cxla_status s = cx_interp_run(m, nargs, a, &got);
  if (s != CXLA_OK) test_fail(__FILE__, line, "run: %s", cxla_context_errmsg(test_ctx()));
  else if (w && !cx_literal_equal(got, w)) {
    cx_sb sb;
    cx_sb_init(&sb);
    cx_literal_print(&sb, got, 1);
    test_fail(__FILE__, line, "got %s, expected %s", sb.buf, want);
    cx_sb_free(&sb);
  }
  for (int i = 0; i < nargs; i++) cxla_literal_destroy(a[i]);
  cxla_literal_destroy(w);
  cxla_literal_destroy(got);
}

TEST(xla_syntax_inferred_shapes) {
  cx_module *m = parse("HloModule m\n"
                       "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = add(a, b)\n}\n"
                       "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[3,4] parameter(1)\n"
                       "  n = negate(x)\n  c = compare(x, n), direction=LT\n  t = tuple(n, c)\n"
                       "  g = get-tuple-element(t), index=1\n  d = dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                       "  z = f32[] constant(0)\n  r = reduce(d, z), dimensions={0}, to_apply=sum\n"
                       "  tr = transpose(d), dimensions={1,0}\n  b = broadcast(z)\n  pid = partition-id()\n"
                       "  cv = s32[2,3] convert(x)\n  sel = select(g, cv, cv)\n"
                       "  ROOT out = tuple(r, tr, b, pid, sel)\n}\n");
  if (!m) return;
  CHECK(shape_is(find(m, "s"), "f32[]"));
  CHECK(shape_is(find(m, "n"), "f32[2,3]"));
  CHECK(shape_is(find(m, "c"), "pred[2,3]"));
  CHECK(shape_is(find(m, "t"), "(f32[2,3], pred[2,3])"));
  CHECK(shape_is(find(m, "g"), "pred[2,3]"));
  CHECK(shape_is(find(m, "d"), "f32[2,4]"));
  CHECK(shape_is(find(m, "r"), "f32[4]"));
  CHECK(shape_is(find(m, "tr"), "f32[4,2]"));
  CHECK(shape_is(find(m, "b"), "f32[]")); /* XLA: dimensions= (none) as new major sizes */
  CHECK(shape_is(find(m, "pid"), "u32[]"));
  CHECK(shape_is(find(m, "sel"), "s32[2,3]"));
  CHECK(shape_is(find(m, "out"), "(f32[4], f32[4,2], f32[], u32[], s32[2,3])"));
  CHECK_OK(cx_verify_module(m));
  /* printed with the shapes, and read back the same */
  char *t1 = print(m), *t2 = NULL;
  cx_module *m2 = t1 ? parse(t1) : NULL;
  if (m2) t2 = print(m2);
  CHECK(t1 && t2 && !strcmp(t1, t2));
  CHECK_STR_CONTAINS(t1, "ROOT s = f32[] add(a, b)");
  cx_free(t1);
  cx_free(t2);
  cx_module_free(m2);
  cx_module_free(m);
  /* a signature checks the inferred ROOT; written operand shapes check inferred operands */
  PERR("HloModule m\nENTRY %e (x: f32[2]) -> f32[3] {\n  %x = f32[2] parameter(0)\n  ROOT %n = negate(%x)\n}\n",
       "t.hlo:4:8: error: ROOT 'n' has shape f32[2], the signature of 'e' says f32[3]");
  PERR(E("  x = f32[2] parameter(0)\n  n = negate(x)\n  ROOT a = f32[2] abs(f32[3] n)\n"),
       "t.hlo:5:23: error: operand 0 of 'a' is written with shape f32[3], but 'n' has shape f32[2]");
}

TEST(xla_syntax_shapes_that_must_be_written) {
  PERR(E("  x = parameter(0)\n"), "t.hlo:3:7: error: the shape of parameter cannot be left out: XLA's parser requires it too");
  PERR(E("  x = f32[2] parameter(0)\n  c = convert(x)\n"), "t.hlo:4:7: error: the shape of convert cannot be left out");
  PERR(E("  x = f32[2] parameter(0)\n  c = slice(x), slice={[0:1]}\n"), "t.hlo:4:7: error: the shape of slice cannot be left out");
  PERR(E("  i = iota(), iota_dimension=0\n"), "t.hlo:3:7: error: the shape of iota cannot be left out");
  PERR(E("  x = f32[2,2] parameter(0)\n  c = get-dimension-size(x)\n"),
       "t.hlo:4:7: error: the shape of get-dimension-size cannot be left out: cxla does not infer it (XLA's parser does)");
  PERR(E("  x = f32[2] parameter(0)\n  s = all-reduce(x), to_apply=x\n"), "t.hlo:4:7: error: the shape of all-reduce cannot be left out");
  /* a broadcast of a non-scalar needs dimensions=, written or not */
  PERR(E("  x = f32[2] parameter(0)\n  b = broadcast(x)\n"),
       "t.hlo:4:7: error: broadcast needs attribute dimensions= (only a scalar operand may leave it out; 'x' is f32[2])");
  /* what XLA infers from a non-empty dimensions= (sizes of new major dims) fails verification */
  VERR(E("  x = f32[3] parameter(0)\n  ROOT b = broadcast(x), dimensions={0}\n"), "t.hlo:4:8: error: broadcast b");
}

TEST(xla_syntax_nested_instructions) {
  /* "negate.anon" is taken by the text: the nested negates get the next free names */
  cx_module *m = parse(E("  x = f32[2] parameter(0)\n  negate.anon = f32[2] abs(x)\n"
                         "  y = f32[2] add(negate(x), f32[2] multiply(negate(negate.anon), x))\n"));
  if (!m) return;
  cx_comp *c = m->entry;
  CHECK(c->root && !strcmp(c->root->name, "y")); /* the last written, not a nested one */
  CHECK(find(m, "negate.anon.1") && find(m, "negate.anon.2") && find(m, "multiply.anon"));
  CHECK(shape_is(find(m, "negate.anon.1"), "f32[2]"));
  cx_instr *y = find(m, "y");
  CHECK(y && y->nops == 2 && y->ops[0]->op == CX_OP_NEGATE && y->ops[1]->op == CX_OP_MULTIPLY);
  for (int i = 1; i < c->ninstrs; i++) /* operands first */
    for (int j = 0; j < c->instrs[i]->nops; j++) CHECK(c->instrs[i]->ops[j] != c->instrs[i]);
  const char *args[] = {"f32[2] {1, -2}"};
  /* y = -x + (-|x|) * x = {-1 + -1*1, 2 + -2*-2} */
  expect_result(m, 1, args, "f32[2] {-2, 6}", __LINE__);
  cx_module_free(m);
  /* nested constants and tuples, and a nested instruction with a written tuple shape */
  m = parse(E("  ROOT g = get-tuple-element((s32[], s32[]) tuple(s32[] constant(4), negate(s32[] constant(5)))), index=1\n"));
  if (m) expect_result(m, 0, NULL, "s32[] -5", __LINE__);
  cx_module_free(m);

  PERR(E("  x = f32[2] parameter(0)\n  y = f32[2] add(x, reverse(x))\n"),
       "t.hlo:4:21: error: reverse needs attribute dimensions=, which a nested instruction cannot have");
  PERR(E("  x = f32[2] parameter(0)\n  y = f32[2] add(x, parameter(1))\n"),
       "t.hlo:4:21: error: the shape of parameter cannot be left out");
  PERR(E("  x = f32[2] parameter(0)\n  y = f32[2] add(x, negate(x)\n"), "t.hlo:5:1: error: expected ',' or ')', got '}'");
  PERR(E("  x = f32[2] parameter(0)\n  y = f32[2] add(x, negate(x) x)\n"), "t.hlo:4:31: error: expected ',' or ')', got 'x'");
  PERR(E("  x = f32[2] parameter(0)\n  y = ((f32[2]), f32[2]) add(x, negate-start(x))\n"),
       "t.hlo:4:33: error: an async op cannot be a nested instruction");
  char deep[1200];
  strcpy(deep, "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] ");
  for (int i = 0; i < 70; i++) strcat(deep, "negate(");
  strcat(deep, "x");
  for (int i = 0; i < 70; i++) strcat(deep, ")");
  strcat(deep, "\n}\n");
  PERR(deep, "error: instructions nested deeper than 64");
}

TEST(xla_syntax_module_without_header) {
  cx_module *m = parse("c {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
                       "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c\n}\n");
  if (m) {
    CHECK(!strcmp(m->name, "module_e"));
    CHECK(m->entry && !strcmp(m->entry->name, "e"));
    CHECK(m->nraw == 0);
  }
  cx_module_free(m);
  m = parse("%c (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  ROOT %n = f32[] negate(%a)\n}\n"
            "ENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %y = f32[] call(%x), to_apply=%c\n}\n");
  if (m) CHECK(!strcmp(m->name, "module_e") && m->ncomps == 2);
  cx_module_free(m);
  m = parse("f {\n  ROOT a = f32[] parameter(0)\n}\ng {\n  ROOT b = s32[] parameter(0)\n}\n");
  if (m) CHECK(!strcmp(m->name, "module_g") && m->entry == m->comps[1]); /* XLA: the last is the entry */
  cx_module_free(m);
  PERR("Hlomodule m\nENTRY e {\n  a = f32[] parameter(0)\n}\n", "t.hlo:1:1: error: expected 'HloModule', got 'Hlomodule'");
  m = parse("ENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %n = negate(%x)\n}\n");
  if (m) CHECK(!strcmp(m->name, "module_e") && shape_is(m->entry->root, "f32[]"));
  cx_module_free(m);
}

TEST(xla_syntax_constant_shorthand) {
  cx_module *m = parse(E("  a = f32[2,2] constant(3)\n  b = pred[3] constant(true)\n  c = u8[2] constant(255)\n"
                         "  d = f32[0,2] constant({ })\n  k = (s32[2], f32[]) constant((-4, 1.5))\n"
                         "  z = f32[2,3] constant(0)\n  ROOT t = (f32[2,2], pred[3], u8[2], f32[2,3], (s32[2], f32[])) tuple(a, b, c, z, k)\n"));
  if (m) { /* XLA: the value at index 0 of a zero-filled array */
    expect_result(m, 0, NULL,
                  "(f32[2,2], pred[3], u8[2], f32[2,3], (s32[2], f32[])) ({{3, 0}, {0, 0}}, {true, false, false}, "
                  "{255, 0}, {{0, 0, 0}, {0, 0, 0}}, ({-4, 0}, 1.5))",
                  __LINE__);
    char *t = print(m);
    CHECK_STR_CONTAINS(t, "a = f32[2,2] constant({ { 3, 0 }, { 0, 0 } })");
    cx_free(t);
  }
  cx_module_free(m);
  PERR(E("  a = f32[0] constant(1)\n"), "t.hlo:3:23: error: a value for f32[0], which has no elements");
  PERR(E("  a = s8[4] constant(200)\n"), "t.hlo:3:22: error: value 200 out of range for s8");
  PERR(E("  a = f32[8192,8192] constant(0)\n"),
       "t.hlo:3:31: error: constant of shape f32[8192,8192] written as one value: larger than the 64 MiB");
  /* only constants: a literal of its own (an INPUT) must be written out */
  cxla_literal *l = NULL;
  CHECK(cx_parse_literal(test_ctx(), "f32[2] 1", 8, &l) == CXLA_ERR_PARSE);
  cxla_literal_destroy(l);
}

TEST(xla_syntax_replica_groups) {
  const char *text =
      "HloModule m, replica_count=4\n"
      "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n"
      "  r1 = f32[4] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=sum\n"
      "  r2 = f32[4] all-reduce(r1), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum\n"
      "  r3 = f32[4] all-reduce(r2), replica_groups={{0,1},{2,3}}, to_apply=sum\n"
      "  r4 = f32[4] all-reduce(r3), replica_groups={}, to_apply=sum\n"
      "  r5 = f32[16] all-gather(r4), replica_groups=[1,4]<=[2,2]T(1,0), dimensions={0}\n"
      "  ROOT r6 = f32[16] all-reduce(r5), replica_groups=[4,1]<=[2,1,2]T(2,0,1), to_apply=sum\n}\n";
  cx_module *m = parse(text);
  if (!m) return;
  CHECK_OK(cx_verify_module(m));
  char *t = print(m);
  CHECK_STR_CONTAINS(t, "replica_groups=[2,2]<=[4]");
  CHECK_STR_CONTAINS(t, "replica_groups=[2,2]<=[2,2]T(1,0)");
  CHECK_STR_CONTAINS(t, "replica_groups={{0,1},{2,3}}");
  CHECK_STR_CONTAINS(t, "replica_groups={}");
  CHECK_STR_CONTAINS(t, "replica_groups=[4,1]<=[2,1,2]T(2,0,1)");
  cx_free(t);
  cx_module_free(m);
#define AR(groups) E("  x = f32[4] parameter(0)\n  r = f32[4] all-reduce(x), replica_groups=" groups ", to_apply=x\n")
  PERR(AR("[4]<=[4]"), "t.hlo:4:44: error: iota replica groups need 2 dimensions [groups,group_size], got 1");
  PERR(AR("[2,2]<=[5]"), "t.hlo:4:51: error: iota replica groups [2,2]<=[5]: the groups hold 4 devices but the device array has 5");
  PERR(AR("[2,2]<=[2,2]T(0,2)"), "t.hlo:4:60: error: transpose dimension 2 out of range for 2 device dimensions");
  PERR(AR("[2,2]<=[2,2]T(1,1)"), "t.hlo:4:60: error: transpose names dimension 1 twice");
  PERR(AR("[2,2]<=[2,2]T(1)"), "t.hlo:4:59: error: transpose has 1 dimensions, the device array has 2");
  PERR(AR("[2,0]<=[0]"), "t.hlo:4:44: error: iota replica groups [2,0]: sizes must be >= 1");
  PERR(AR("[2,2]=[4]"), "t.hlo:4:49: error: expected '<='");
  PERR(AR("{0,1}"), "t.hlo:4:45: error: expected '{' (a replica group such as {0,1}), got '0'");
  PERR(AR("7"), "t.hlo:4:44: error: expected replica groups");
#undef AR
}

static const char *async_sugar =
    "HloModule m\n"
    "ENTRY e {\n  x = f32[2] parameter(0)\n"
    "  s = ((f32[2]), f32[2], u32[]) custom-call-start(x), custom_call_target=\"foo\", metadata={op_name=\"cc\"}, "
    "async_execution_thread=\"side\"\n"
    "  u = ((f32[2]), f32[2], u32[]) custom-call-update(s), custom_call_target=\"foo\", backend_config=\"b\"\n"
    "  ROOT d = f32[2] custom-call-done(u), custom_call_target=\"foo\"\n}\n";

static const char *raw(const cx_instr *in, const char *key) {
  for (int i = 0; i < in->a.nraw; i++)
    if (!strcmp(in->a.raw[i].key, key)) return in->a.raw[i].value;
  return NULL;
}

TEST(xla_syntax_async_sugar) {
  cx_module *m = parse(async_sugar);
  if (!m) return;
  CHECK_OK(cx_verify_module(m));
  cx_instr *s = find(m, "s"), *u = find(m, "u"), *d = find(m, "d");
  CHECK(s && u && d);
  if (!s || !u || !d) { cx_module_free(m); return; }
  CHECK(s->op == CX_OP_ASYNC_START && u->op == CX_OP_ASYNC_UPDATE && d->op == CX_OP_ASYNC_DONE);
  CHECK(s->ncalled == 1 && u->ncalled == 1 && d->ncalled == 1);
  cx_comp *w = s->called[0];
  CHECK(w == u->called[0] && w == d->called[0] && m->ncomps == 2 && m->comps[0] == w);
  CHECK(!strcmp(w->name, "async_wrapped") && w->nparams == 1 && w->root->op == CX_OP_CUSTOM_CALL);
  CHECK(w->root->nops == 1 && w->root->ops[0] == w->params[0] && shape_is(w->root, "f32[2]"));
  CHECK(w->root->a.custom_call_target && !strcmp(w->root->a.custom_call_target, "foo"));
  /* metadata on both, the async op's own attributes on the start only, the wrapped op's
   * dropped from -update and -done */
  CHECK(raw(s, "metadata") && raw(w->root, "metadata"));
  CHECK(raw(s, "async_execution_thread") && !raw(w->root, "async_execution_thread"));
  CHECK(raw(u, "backend_config") && !raw(u, "custom_call_target") && !raw(d, "custom_call_target"));
  char *t = print(m);
  CHECK_STR_CONTAINS(t, "ROOT d = f32[2] async-done(u), calls=async_wrapped\n");
  cx_free(t);
  cx_module_free(m);

  PERR(E("  x = f32[2] parameter(0)\n  s = f32[2] custom-call-start(x), custom_call_target=\"a\"\n"),
       "t.hlo:4:14: error: async-start needs the shape ((operands), result, context...), got f32[2]");
  PERR(E("  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) parameter-start(x)\n"),
       "t.hlo:4:26: error: parameter-start: parameter cannot run asynchronously");
  PERR(E("  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) frob-start(x)\n"), "t.hlo:4:26: error: unknown opcode 'frob-start'");
  PERR(E("  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) negate-start(x)\n  d = f32[2] abs-done(s)\n"),
       "t.hlo:5:14: error: abs-done: the async-start it follows wraps negate, not abs");
}

static const char *async_explicit =
    "HloModule m\n"
    "w {\n  p = f32[2] parameter(0)\n  q = s32[] parameter(1)\n  c = f32[2] convert(s32[2] broadcast(q))\n"
    "  ROOT r = f32[2] add(p, c)\n}\n"
    "v {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}\n"
    "ENTRY e {\n  x = f32[2] parameter(0)\n  k = s32[] constant(3)\n"
    "  s = ((f32[2], s32[]), f32[2], (u32[], f32[2])) async-start(x, k), calls=w\n"
    "  u = ((f32[2], s32[]), f32[2], (u32[], f32[2])) async-update(s)\n"
    "  d = f32[2] async-done(u), calls=w\n"
    "  ROOT t = (((f32[2], s32[]), f32[2], (u32[], f32[2])), f32[2]) tuple(u, d)\n}\n";

TEST(xla_syntax_async_chain_runs) {
  cx_module *m = parse(async_explicit);
  if (!m) return;
  CHECK_OK(cx_verify_module(m));
  /* x + 3; the whole async value: (operands, result, zero context) */
  const char *args[] = {"f32[2] {1, -0.5}"};
  expect_result(m, 1, args,
                "(((f32[2], s32[]), f32[2], (u32[], f32[2])), f32[2]) ((({1, -0.5}, 3), {4, 2.5}, (0, {0, 0})), {4, 2.5})",
                __LINE__);
  /* the cpu pipeline's first steps leave no async op behind and keep the values */
  cx_module *before = cx_module_clone(m);
  int changed = 0;
  CHECK_OK(cx_pass_async(m, &changed));
  CHECK(changed);
  CHECK_OK(cx_verify_module(m));
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      cx_op op = m->comps[i]->instrs[j]->op;
      CHECK(op != CX_OP_ASYNC_START && op != CX_OP_ASYNC_UPDATE && op != CX_OP_ASYNC_DONE);
    }
  CHECK_OK(cx_pass_inline_calls(m, &changed));
  CHECK_EQ_INT(m->ncomps, 1); /* w and the unused v are gone */
  if (before) TP_EQUIV(before, m, 4);
  cx_module_free(before);
  cx_module_free(m);

  /* chains: an async-update or -done needs an async op as its operand, and the computation it
   * names must be the chain's; one async-start per computation */
  PERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\nv {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
       "  ROOT d = f32[2] async-done(s), calls=v\n}\n",
       "t.hlo:11:8: error: async-done 'd' names computation 'v', but its async-start runs 'w'");
  PERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
       "  t = ((f32[2]), f32[2]) async-start(x), calls=w\n  ROOT d = f32[2] async-done(t)\n}\n",
       "t.hlo:8:3: error: computation 'w' is already run by async-start 's'");
  PERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
       "  d = f32[2] async-done(s)\n  ROOT e = f32[2] async-done(d)\n}\n",
       "t.hlo:9:8: error: async-done 'e' needs one operand, an async-start or async-update (got async-done)");
  /* shapes, by the verifier's rules (XLA's) */
  VERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT s = ((f32[2]), f32[3]) async-start(x), calls=w\n}\n",
       "t.hlo:7:8: error: async-start s: declared shape element {1} f32[3] is neither the result of w, f32[2], nor a "
       "prefix of it");
  VERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT s = ((f32[3]), f32[2]) async-start(x), calls=w\n}\n",
       "t.hlo:7:8: error: async-start s: declared shape element {0,0} f32[3] does not match parameter 0 of w, f32[2]");
  VERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
       "  ROOT d = f32[3] async-done(s)\n}\n",
       "t.hlo:8:8: error: async-done d: declared shape f32[3] does not match inferred shape f32[2]");
  /* an async-update may add context elements (XLA checks only {0} and {1}), not change {1} */
  const char *ctx = "HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
                    "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
                    "  ROOT u = ((f32[2]), f32[2], u32[]) async-update(s)\n}\n";
  CHECK_OK(cx_parse_module(test_ctx(), ctx, strlen(ctx), "t.hlo", &m));
  CHECK_OK(cx_verify_module(m));
  cx_module_free(m);
  VERR("HloModule m\nw {\n  ROOT p = f32[2] parameter(0)\n}\n"
       "ENTRY e {\n  x = f32[2] parameter(0)\n  s = ((f32[2]), f32[2]) async-start(x), calls=w\n"
       "  ROOT u = ((f32[2]), (f32[2]), u32[]) async-update(s)\n}\n",
       "t.hlo:8:8: error: async-update u: declared shape element {1} (f32[2]) is neither the result of w, f32[2], nor a "
       "prefix of it");
}

TEST(xla_syntax_copy_start_done) {
  cx_module *m = parse(E("  x = s32[3] parameter(0)\n  s = (s32[3], s32[3], u32[]) copy-start(x)\n"
                         "  ROOT d = s32[3] copy-done(s)\n"));
  if (m) {
    const char *args[] = {"s32[3] {7, -8, 9}"};
    expect_result(m, 1, args, "s32[3] {7, -8, 9}", __LINE__);
  }
  cx_module_free(m);
  VERR(E("  x = s32[3] parameter(0)\n  ROOT s = (s32[3], s32[3]) copy-start(x)\n"),
       "t.hlo:4:8: error: copy-start s: declared shape (s32[3], s32[3]) does not match inferred shape (s32[3], s32[3], u32[])");
  VERR(E("  x = (s32[3], s32[2]) parameter(0)\n  ROOT d = s32[3] copy-done(x)\n"),
       "t.hlo:4:8: error: copy-done d: operand must be a copy-start's (destination, source, context)");
}

/* Collectives compile on no backend: cxla runs one device. */
static void expect_refused(const char *text, const char *backend, const char *msg, int line) {
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s != CXLA_OK) { test_fail(__FILE__, line, "parse: %s", cxla_context_errmsg(test_ctx())); return; }
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_executable *e = NULL;
  s = cxla_compile(m, &o, &e);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s == CXLA_ERR_UNSUPPORTED && strstr(got, "is not built into")) { /* no such backend here */
  } else if (s != CXLA_ERR_UNSUPPORTED || !strstr(got, msg)) {
    test_fail(__FILE__, line, "%s: %s: '%s', expected '%s'", backend, cxla_status_str(s), got, msg);
  }
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

/* The collectives compile (test_collectives.c runs them); ragged-all-to-all is still refused,
 * with its location, on every backend. */
TEST(xla_syntax_ragged_all_to_all_refused_when_compiling) {
  const char *ar = "HloModule m\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                   "ENTRY e {\n  x = f32[4] parameter(0)\n  n = f32[4] negate(x)\n"
                   "  ROOT r = f32[4] all-reduce(n), replica_groups=[2,2]<=[4], to_apply=sum\n}\n";
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), ar, strlen(ar), "t.hlo", &m));
  CHECK_OK(cxla_compile(m, NULL, &e));
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  const char *ragged = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  o = s64[2] parameter(1)\n"
                       "  ROOT r = f32[4] ragged-all-to-all(x, x, o, o, o, o), replica_groups={{0,1}}\n}\n";
  const char *want = "t.hlo:5:8: error: not supported: ragged-all-to-all 'r' (cxla does not run this op yet)";
  expect_refused(ragged, "interp", want, __LINE__);
  expect_refused(ragged, "cpu", want, __LINE__);
}

/* Every allocation of the new paths (nested instructions, late inference, async sugar, the
 * shorthand, replica groups) may fail: OUT_OF_MEMORY and no leak (the ASan build checks). */
TEST(xla_syntax_alloc_failures) {
  const char *text = "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = add(a, b)\n}\n"
                     "ENTRY e {\n  x = f32[2] parameter(0)\n  z = f32[2] constant(0)\n"
                     "  y = add(x, f32[2] multiply(z, negate(x)))\n  r = reduce(y, f32[] constant(0)), dimensions={0}, to_apply=sum\n"
                     "  s = ((f32[2]), f32[2], u32[]) negate-start(y), metadata={op_name=\"n\"}\n"
                     "  d = f32[2] negate-done(s)\n  g = f32[2] all-gather(d), replica_groups=[1,1]<=[1], dimensions={0}\n"
                     "  ROOT t = tuple(r, g)\n}\n";
  int done = 0;
  for (int64_t k = 0; k < 20000 && !done; k++) {
    cx_module *m = NULL;
    cx_alloc_fail_after(k);
    cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "oom.hlo", &m);
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
  /* the interpreter's async chain and the async pass */
  cx_module *m = parse(async_explicit);
  if (!m) return;
  cxla_literal *arg = NULL;
  CHECK_OK(cx_parse_literal(test_ctx(), "f32[2] {1, 2}", 13, &arg));
  done = 0;
  for (int64_t k = 0; k < 5000 && !done; k++) {
    cxla_literal *out = NULL;
    cx_module *c = cx_module_clone(m);
    if (!c) break;
    int changed = 0;
    cx_alloc_fail_after(k);
    cxla_status s = cx_interp_run(c, 1, &arg, &out);
    if (s == CXLA_OK) s = cx_pass_async(c, &changed);
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) done = 1;
    else CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY, "k=%lld: %s", (long long)k, cxla_context_errmsg(test_ctx()));
    cxla_literal_destroy(out);
    cx_module_free(c);
  }
  CHECK(done);
  cxla_literal_destroy(arg);
  cx_module_free(m);
}
