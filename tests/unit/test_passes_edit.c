/* test_passes_edit.c — the IR edit helpers shared by passes and backends (ir/edit.h). */
#include "ir/edit.h"
#include "ir/verify.h"
#include "passes_helpers.h"

TEST(passes_edit_add_remove_resort) {
  cx_module *m = TP_PARSE("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  a = f32[2] negate(p)\n"
                          "  b = f32[2] abs(a)\n  ROOT c = f32[2] add(b, p)\n}\n");
  if (!m) return;
  cx_comp *c = m->entry;
  cx_loc loc = {7, 3};
  cx_instr *x = c->instrs[0];
  cx_instr *e = cx_instr_add(c, CX_OP_EXP, &x->shape, 1, &x, loc);
  CHECK(e && e->name && !strncmp(e->name, "exponential.", 12) && e->loc.line == 7 && e->parent == c);
  /* use it before its position, then re-sort */
  c->root->ops[1] = e;
  CHECK_OK(cx_comp_resort(c, "test"));
  CHECK_OK(cx_verify_module(m));
  /* the root stops reading b; then abs and negate are dead and can be dropped */
  c->root->ops[0] = e;
  uint8_t drop[8] = {0};
  for (int i = 0; i < c->ninstrs; i++) drop[i] = c->instrs[i]->op == CX_OP_ABS || c->instrs[i]->op == CX_OP_NEGATE;
  CHECK_EQ_INT(cx_comp_remove_instrs(c, drop), 2);
  CHECK_EQ_INT(c->ninstrs, 3);
  CHECK_OK(cx_verify_module(m));
  cx_module_free(m);
}

TEST(passes_edit_resort_reports_foreign_operands) {
  cx_module *m = TP_PARSE("HloModule m\nf {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n"
                          "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\n");
  if (!m) return;
  cx_comp *f = cx_module_find_comp(m, "f");
  cx_instr *save = m->entry->root->ops[0];
  m->entry->root->ops[0] = f->root; /* a broken edit */
  CHECK_EQ_INT(cx_comp_resort(m->entry, "tester"), CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "tester: c uses n from another computation");
  m->entry->root->ops[0] = save;
  /* unreachable computations go, reachable ones stay */
  CHECK_EQ_INT(cx_module_remove_unreachable(m), 0);
  m->entry->root = m->entry->instrs[0];
  uint8_t drop[2] = {0, 1};
  CHECK_EQ_INT(cx_comp_remove_instrs(m->entry, drop), 1); /* the call */
  CHECK_EQ_INT(cx_module_remove_unreachable(m), 1);
  CHECK(cx_module_find_comp(m, "f") == NULL && m->ncomps == 1);
  cx_module_free(m);
}
