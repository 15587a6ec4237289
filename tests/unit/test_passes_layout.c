/* test_passes_layout.c — the layout pass (and broadcast-order, the other pass that puts the module
 * in the form the rest of the pipeline reads): every bitcast becomes logical ops that compute what
 * the interpreter's byte-level bitcast computes, no layout survives it, the simplifier after
 * it may then drop layout-changing copies, and a bitcast through a tiled layout is refused
 * with its location. */
#include "passes_helpers.h"

#define LAYOUT(text, expect) TP_PASS((text), cx_pass_layout, (expect))

static int layouts_left(const cx_module *m) {
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      const cx_shape *s = &m->comps[i]->instrs[j]->shape;
      n += !cx_shape_has_default_layout(s);
      for (int k = 0; s->type == CXLA_TUPLE && k < s->ntuple; k++) n += !cx_shape_has_default_layout(&s->tuple[k]);
    }
  return n;
}

TEST(passes_layout_copy_then_bitcast) {
  /* issue 8's module: the copy changes the layout the bitcast reads */
  const char *text = "HloModule tcopy\nENTRY main {\n  p = f32[2,3,4]{2,1,0} parameter(0)\n"
                     "  t = f32[4,2,3]{0,2,1} transpose(p), dimensions={2,0,1}\n"
                     "  c = f32[4,2,3]{2,1,0} copy(t)\n  ROOT b = f32[4,6]{1,0} bitcast(c)\n}\n";
  cx_module *m = LAYOUT(text, 1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_BITCAST), 0);
  CHECK_EQ_INT(layouts_left(m), 0);
  cx_module_free(m);
  /* and through the whole simplification fixpoint, which deletes the copy */
  cx_module *before = TP_PARSE(text), *after = TP_PARSE(text);
  if (before && after) {
    CHECK_OK(tp_optimize(after));
    CHECK_EQ_INT(tp_count(after, CX_OP_COPY), 0);
    TP_EQUIV(before, after, 4);
  }
  cx_module_free(before);
  cx_module_free(after);
}

TEST(passes_layout_bitcast_kinds) {
  /* both sides non-default, a bytes-keeping transpose, element-size changes both ways, a
   * same-size type change, and a bitcast inside a fused computation */
  cx_module *m = LAYOUT(
      "HloModule k\nfc {\n  fp = s32[2,3]{1,0} parameter(0)\n  fcp = s32[2,3]{0,1} copy(fp)\n"
      "  ROOT fb = s32[3,2]{1,0} bitcast(fcp)\n}\n"
      "ENTRY e {\n  p = s32[2,3]{0,1} parameter(0)\n  a = s32[3,2]{0,1} bitcast(p)\n"
      "  t = s32[3,2]{0,1} transpose(p), dimensions={1,0}\n  tb = s32[6]{0} bitcast(t)\n"
      "  u = u8[3,8]{0,1} bitcast(p)\n  w = s32[6]{0} bitcast(u)\n  h = u16[2,2,3]{1,2,0} bitcast(a)\n"
      "  f = f32[3,2]{1,0} bitcast(a)\n  n = s32[3,2] fusion(p), kind=kLoop, calls=fc\n"
      "  ROOT r = (s32[3,2]{0,1}, s32[6], s32[6], u16[2,2,3]{1,2,0}, f32[3,2], s32[3,2]) tuple(a, tb, w, h, f, n)\n}\n",
      1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_BITCAST), 0);
  CHECK_EQ_INT(layouts_left(m), 0);
  CHECK(tp_count_all(m, CX_OP_BITCAST_CONVERT) >= 3);
  cx_module_free(m);
}

TEST(passes_layout_leaves_layout_free_modules_alone) {
  cx_module *m = LAYOUT("HloModule k\nENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT b = f32[3,2] bitcast(p)\n}\n", 1);
  if (!m) return;
  CHECK_EQ_INT(tp_count(m, CX_OP_RESHAPE), 1); /* the bitcast itself, now a reshape */
  cx_module_free(m);
  m = LAYOUT("HloModule k\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  ROOT n = f32[2,3]{1,0} negate(p)\n}\n", 0);
  cx_module_free(m);
}

TEST(passes_layout_refuses_tiled_bitcasts) {
  cx_module *m = TP_PARSE("HloModule k\nENTRY e {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
                          "  ROOT b = f32[1024]{0} bitcast(p)\n}\n");
  if (!m) return;
  int ch = 0;
  cxla_status s = cx_pass_layout(m, &ch);
  CHECK_EQ_INT(s, CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), ":4:8: error: not supported: bitcast 'b' through a tiled");
  cx_module_free(m);
}

/* Tiled bitcasts that keep every element in its tile are lowered like untiled ones: XLA's
 * (from latency_hiding_scheduler_test) adds size-1 dimensions around the tiled pair (1024,
 * 256); splitting a tiled dimension (6 -> 3 x 2 under T(128): rows of 3 get padded to 128)
 * moves elements and stays refused. */
TEST(passes_layout_tiled_bitcasts_that_keep_tiles) {
  cx_module *m = TP_PARSE("HloModule k\nENTRY e {\n  p = bf16[16,1024,1,10,256,1]{4,1,3,0,5,2:T(8,128)(2,1)} parameter(0)\n"
                          "  ROOT b = bf16[16,1024,1,10,256,1,1]{4,1,6,3,2,0,5:T(8,128)(2,1)} bitcast(p)\n}\n");
  if (!m) return;
  int ch = 0;
  CHECK_OK(cx_pass_layout(m, &ch));
  CHECK_EQ_INT(tp_count_all(m, CX_OP_BITCAST), 0);
  cx_module_free(m);
  m = TP_PARSE("HloModule k\nENTRY e {\n  p = s32[6]{0:T(128)} parameter(0)\n"
               "  ROOT b = s32[3,2]{0,1:T(128)} bitcast(p)\n}\n");
  if (!m) return;
  CHECK_EQ_INT(cx_pass_layout(m, &ch), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "bitcast 'b' through a tiled");
  cx_module_free(m);
}

TEST(passes_simplify_keeps_layout_changing_copies) {
  /* on its own (no layout pass before it), the simplifier must not drop a copy a bitcast reads */
  cx_module *m = TP_PASS("HloModule k\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  c = f32[2,3]{0,1} copy(p)\n"
                         "  ROOT b = f32[6]{0} bitcast(c)\n}\n",
                         cx_pass_simplify, 0);
  if (!m) return;
  CHECK_EQ_INT(tp_count(m, CX_OP_COPY), 1);
  cx_module_free(m);
}

TEST(passes_broadcast_order_splits_out_of_order_broadcasts) {
  cx_module *m = TP_PASS("HloModule k\nENTRY e {\n  x = f32[2,3] parameter(0)\n"
                         "  r = f32[3,4,2] broadcast(x), dimensions={2,0}\n}\n",
                         cx_pass_broadcast_order, 1);
  if (!m) return;
  cx_instr *r = tp_find(m, "r");
  CHECK(r && r->a.dims.n == 2 && r->a.dims.v[0] == 0 && r->a.dims.v[1] == 2);
  CHECK(r && r->ops[0]->op == CX_OP_TRANSPOSE);
  cx_module_free(m);
  m = TP_PASS("HloModule k\nENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,4,3] broadcast(x), dimensions={0,2}\n}\n",
              cx_pass_broadcast_order, 0);
  cx_module_free(m);
}
