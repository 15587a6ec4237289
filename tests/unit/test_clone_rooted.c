/* test_clone_rooted.c — cx_module_clone_rooted, the copy with another ROOT that
 * `cxla run --check-each` compiles for each instruction: the right value comes out, what the
 * new root does not need is gone, parameters stay, and the source module is untouched. */
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes_helpers.h"

static const char *text =
    "HloModule m\n"
    "ENTRY main {\n"
    "  x = f32[3] parameter(0)\n"
    "  y = f32[3] parameter(1)\n"
    "  a = f32[3] add(x, x)\n"
    "  unused = f32[3] sine(y)\n"
    "  b = f32[3] multiply(a, y)\n"
    "  ROOT n = f32[3] negate(b)\n"
    "}\n";

static cxla_literal *vec3(double a, double b, double c) {
  int64_t d = 3;
  cxla_literal *l = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d);
  if (l) {
    cxla_literal_set_f64(l, 0, a);
    cxla_literal_set_f64(l, 1, b);
    cxla_literal_set_f64(l, 2, c);
  }
  return l;
}

TEST(clone_rooted_single_and_tuple) {
  cx_module *m = TP_PARSE(text);
  cxla_literal *args[2] = {vec3(1, 2, 3), vec3(10, 20, 30)};
  if (!m || !args[0] || !args[1]) { CHECK(0); return; }
  char *before = tp_print(m);
  int id_a = tp_find(m, "a")->id, id_b = tp_find(m, "b")->id;

  cx_module *c = cx_module_clone_rooted(m, &id_a, 1);
  CHECK(c != NULL);
  if (c) {
    CHECK(c->entry->root->name && !strcmp(c->entry->root->name, "a"));
    CHECK(tp_find(c, "b") == NULL && tp_find(c, "n") == NULL && tp_find(c, "unused") == NULL);
    CHECK_EQ_INT(c->entry->nparams, 2); /* y is unused now but stays: same arguments */
    CHECK_OK(cx_verify_module(c));
    cxla_literal *out = NULL;
    CHECK_OK(cx_interp_run(c, 2, args, &out));
    if (out) CHECK(cxla_literal_get_f64(out, 0) == 2 && cxla_literal_get_f64(out, 2) == 6); /* x + x */
    cxla_literal_destroy(out);
    cx_module_free(c);
  }

  int ids[2] = {id_b, id_a};
  c = cx_module_clone_rooted(m, ids, 2);
  CHECK(c != NULL);
  if (c) {
    CHECK_EQ_INT(c->entry->root->op, CX_OP_TUPLE);
    CHECK_OK(cx_verify_module(c));
    cxla_literal *out = NULL;
    CHECK_OK(cx_interp_run(c, 2, args, &out));
    CHECK_EQ_INT(out ? cxla_literal_tuple_size(out) : -1, 2);
    if (out && cxla_literal_tuple_size(out) == 2) {
      CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(out, 0), 1) == 80); /* (2+2)*20 */
      CHECK(cxla_literal_get_f64(cxla_literal_tuple_get(out, 1), 1) == 4);
    }
    cxla_literal_destroy(out);
    cx_module_free(c);
  }

  int bogus = 9999;
  CHECK(cx_module_clone_rooted(m, &bogus, 1) == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "ENTRY main has no instruction with id 9999");
  char *after = tp_print(m);
  CHECK(before && after && !strcmp(before, after));
  free(before);
  free(after);
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cx_module_free(m);
}

/* Every allocation of the copy failing in turn: NULL with the context's error set (ASan
 * checks that nothing leaks), until one run sees no injected failure and succeeds. */
TEST(clone_rooted_out_of_memory) {
  cx_module *m = TP_PARSE(text);
  if (!m) return;
  int ids[2] = {tp_find(m, "b")->id, tp_find(m, "a")->id};
  for (int64_t n = 0; n < 100000; n++) {
    cx_alloc_fail_after(n);
    cx_module *c = cx_module_clone_rooted(m, ids, 2);
    int64_t injected = cx_alloc_failures();
    cx_alloc_fail_after(-1);
    if (!injected) {
      CHECK(c != NULL);
      cx_module_free(c);
      break;
    }
    CHECK_MSG(c == NULL, "allocation %lld failed, yet a module came back", (long long)n);
    cx_module_free(c);
  }
  cx_module_free(m);
}
