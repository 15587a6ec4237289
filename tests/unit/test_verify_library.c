/* test_verify_library.c — shape rules of dot, convolution, gather, scatter and control flow.
 * Expected shapes are computed by hand (comments show how). */
#include "verify_helpers.h"

static cx_instr *dot(const char *name, const char *decl, cx_instr *l, cx_instr *r) {
  return vt_op(CX_OP_DOT, name, decl, 2, l, r);
}

TEST(verify_dot) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[2,3]"), *b = vt_param(1, "b", "f32[3,4]"), *c = vt_param(2, "c", "f32[4,4]");
  cx_instr *d = dot("d", NULL, a, b);
  VT_INTS(d->a.dot.lhs_contract, 1);
  VT_INTS(d->a.dot.rhs_contract, 0);
  CHECK_INFER(d, "f32[2,4]");
  cx_instr *bad = dot("dot.5", NULL, a, c);
  VT_INTS(bad->a.dot.lhs_contract, 1);
  VT_INTS(bad->a.dot.rhs_contract, 0);
  vt_at(bad, 14, 2);
  CHECK_STR_EQ(vt_infer(bad), "ERROR: t.hlo:14:2: error: dot dot.5: lhs contracting dimension 1 has size 3 but rhs "
                              "contracting dimension 0 has size 4");
  /* batch dims first (lhs order), then lhs free dims, then rhs free dims */
  cx_instr *x = vt_param(3, "x", "f32[2,5,3]"), *y = vt_param(4, "y", "f32[3,5,4]");
  cx_instr *bd = dot("bd", NULL, x, y);
  VT_INTS(bd->a.dot.lhs_batch, 1);
  VT_INTS(bd->a.dot.rhs_batch, 1);
  VT_INTS(bd->a.dot.lhs_contract, 2);
  VT_INTS(bd->a.dot.rhs_contract, 0);
  CHECK_INFER(bd, "f32[5,2,4]");
  VT_INTS(bd->a.dot.rhs_batch, 2);
  CHECK_INFER_ERR(bd, "lhs batch dimension 1 has size 5 but rhs batch dimension 2 has size 4");
  VT_INTS(bd->a.dot.rhs_batch, 1, 2);
  CHECK_INFER_ERR(bd, "lhs has 1 batch dimensions but rhs has 2 (expected the same number)");
  VT_INTS(bd->a.dot.rhs_batch, 0);
  VT_INTS(bd->a.dot.rhs_contract, 0);
  CHECK_INFER_ERR(bd, "rhs_contracting_dims {0}: dimension 0 is used more than once");
  cx_instr *outer = dot("outer", NULL, a, b); /* no contraction: outer product */
  CHECK_INFER(outer, "f32[2,3,3,4]");
  VT_INTS(outer->a.dot.lhs_contract, 5);
  VT_INTS(outer->a.dot.rhs_contract, 0);
  CHECK_INFER_ERR(outer, "lhs_contracting_dims {5}: dimension 5 is out of range for rank 2");
  /* wider declared result types */
  cx_instr *h = vt_param(5, "h", "bf16[2,3]"), *g = vt_param(6, "g", "bf16[3,4]");
  cx_instr *i8 = vt_param(7, "i8", "s8[2,3]"), *j8 = vt_param(8, "j8", "s8[3,4]");
  cx_instr *wide = dot("wide", "f32[2,4]", h, g);
  VT_INTS(wide->a.dot.lhs_contract, 1);
  VT_INTS(wide->a.dot.rhs_contract, 0);
  CHECK_INFER(wide, "f32[2,4]");
  cx_instr *iw = dot("iw", "s32[2,4]", i8, j8);
  VT_INTS(iw->a.dot.lhs_contract, 1);
  VT_INTS(iw->a.dot.rhs_contract, 0);
  CHECK_INFER(iw, "s32[2,4]");
  iw->shape = vt_shape("pred[2,4]"); /* not a widening: the operand type stays */
  CHECK_INFER(iw, "s8[2,4]");
  cx_instr *narrow = dot("narrow", "s8[2,4]", vt_param(9, "s", "s32[2,3]"), vt_param(10, "t", "s32[3,4]"));
  VT_INTS(narrow->a.dot.lhs_contract, 1);
  VT_INTS(narrow->a.dot.rhs_contract, 0);
  CHECK_INFER(narrow, "s32[2,4]");
  vt_end();
}

TEST(verify_dot_declared_type_in_module) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[2,3]"), *b = vt_param(1, "b", "f32[3,4]");
  cx_instr *d = dot("d", "s32[2,4]", a, b);
  VT_INTS(d->a.dot.lhs_contract, 1);
  VT_INTS(d->a.dot.rhs_contract, 0);
  vt_at(d, 3, 5);
  vt_finish(d, 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:3:5: error: dot d: declared shape s32[2,4] does not match inferred shape f32[2,4]");
  d->shape = vt_shape("f64[2,4]");
  CHECK_STR_EQ(vt_verify(), "ok");
  vt_end();
}

static cx_instr *conv(const char *name, cx_instr *l, cx_instr *r, const char *labels, const char *window) {
  cx_instr *c = vt_op(CX_OP_CONVOLUTION, name, NULL, 2, l, r);
  vt_labels(c, labels);
  vt_window(c, window);
  return c;
}

TEST(verify_convolution) {
  vt_begin();
  vt_comp("e");
  cx_instr *img = vt_param(0, "img", "f32[1,5,5,2]"), *k = vt_param(1, "k", "f32[3,3,2,4]");
  CHECK_INFER(conv("c1", img, k, "b01f_01io->b01f", "size=3x3"), "f32[1,3,3,4]"); /* 5-3+1 = 3 */
  /* padded 5+2 = 7, (7-3)/2+1 = 3 */
  CHECK_INFER(conv("c2", img, k, "b01f_01io->b01f", "size=3x3 stride=2x2 pad=1_1x1_1"), "f32[1,3,3,4]");
  CHECK_INFER(conv("c3", img, k, "b01f_01io->bf01", "size=3x3"), "f32[1,4,3,3]");
  cx_instr *nchw = vt_param(2, "nchw", "f32[1,2,5,5]"), *oihw = vt_param(3, "oihw", "f32[4,2,3,3]");
  /* rhs dilation 2: window extent 5, output 1 */
  CHECK_INFER(conv("c4", nchw, oihw, "bf01_oi01->bf01", "size=3x3 rhs_dilate=2x2"), "f32[1,4,1,1]");
  cx_instr *img4 = vt_param(4, "img4", "f32[1,5,5,4]"), *k6 = vt_param(5, "k6", "f32[3,3,2,6]");
  cx_instr *fg = conv("fg", img4, k6, "b01f_01io->b01f", "size=3x3");
  fg->a.feature_group_count = 2; /* 4 input features = 2 per group x 2 groups */
  CHECK_INFER(fg, "f32[1,3,3,6]");
  cx_instr *b4 = vt_param(6, "b4", "f32[4,5,5,2]");
  cx_instr *bg = conv("bg", b4, k6, "b01f_01io->b01f", "size=3x3");
  bg->a.batch_group_count = 2; /* batch 4 / 2 */
  CHECK_INFER(bg, "f32[2,3,3,6]");
  bg->a.feature_group_count = 2;
  CHECK_INFER_ERR(bg, "feature_group_count=2 and batch_group_count=2 must be >= 1 and not both > 1");
  cx_instr *bad = conv("bad", img4, k, "b01f_01io->b01f", "size=3x3");
  vt_at(bad, 30, 7);
  CHECK_STR_EQ(vt_infer(bad), "ERROR: t.hlo:30:7: error: convolution bad: input feature size 4 must equal kernel input "
                              "feature size 2 times feature_group_count=1");
  CHECK_INFER_ERR(conv("w", img, k, "b01f_01io->b01f", "size=3x2"),
                  "window size 2 in spatial dimension 1 differs from the kernel's size 3");
  CHECK_INFER_ERR(conv("w2", img, k, "b01f_01io->b01f", "size=3"),
                  "window has 1 dimensions but dim_labels have 2 spatial dimensions");
  CHECK_INFER_ERR(conv("r", img, k, "b0f_0io->b0f", "size=3"),
                  "dim_labels have 1 spatial dimensions, so lhs and rhs need rank 3, got f32[1,5,5,2] and f32[3,3,2,4]");
  cx_instr *nl = vt_op(CX_OP_CONVOLUTION, "nl", NULL, 2, img, k);
  CHECK_INFER_ERR(nl, "convolution needs dim_labels (e.g. b01f_01io->b01f)");
  cx_instr *dup = conv("dup", img, k, "b01f_01io->b01f", "size=3x3");
  dup->a.conv->out_spatial[1] = 1; /* output labels name dimension 1 twice */
  CHECK_INFER_ERR(dup, "dim_labels: the output labels must name each of its 4 dimensions once");
  cx_instr *wide = conv("wide", vt_param(7, "hi", "bf16[1,5,5,2]"), vt_param(8, "hk", "bf16[3,3,2,4]"),
                        "b01f_01io->b01f", "size=3x3");
  wide->shape = vt_shape("f32[1,3,3,4]");
  CHECK_INFER(wide, "f32[1,3,3,4]");
  vt_end();
}

/* gather with the given dimension numbers */
static cx_instr *gather(const char *name, cx_instr *x, cx_instr *idx, int64_t ivd) {
  cx_instr *g = vt_op(CX_OP_GATHER, name, NULL, 2, x, idx);
  g->a.gather.index_vector_dim = ivd;
  return g;
}

TEST(verify_gather) {
  vt_begin();
  vt_comp("e");
  cx_instr *emb = vt_param(0, "emb", "f32[10,8]"), *ids = vt_param(1, "ids", "s32[5,1]");
  cx_instr *g = gather("g", emb, ids, 1);
  VT_INTS(g->a.gather.offset_dims, 1);
  VT_INTS(g->a.gather.collapsed_slice_dims, 0);
  VT_INTS(g->a.gather.start_index_map, 0);
  VT_INTS(g->a.gather.slice_sizes, 1, 8);
  CHECK_INFER(g, "f32[5,8]");
  /* index_vector_dim == rank: an implicit trailing 1 */
  cx_instr *g2 = gather("g2", emb, vt_param(2, "flat", "s32[5]"), 1);
  g2->a.gather = g->a.gather;
  CHECK_INFER(g2, "f32[5,8]");
  /* index_vector_dim 0: the index vectors are the columns of a [1,5] array */
  cx_instr *g7 = gather("g7", emb, vt_param(8, "cols", "s32[1,5]"), 0);
  g7->a.gather = g->a.gather;
  g7->a.gather.index_vector_dim = 0;
  CHECK_INFER(g7, "f32[5,8]");
  VT_INTS(g->a.gather.slice_sizes, 2, 8);
  vt_at(g, 40, 3);
  CHECK_STR_EQ(vt_infer(g), "ERROR: t.hlo:40:3: error: gather g: slice_sizes={2,8}: collapsed or batching dimension 0 "
                            "must have size 0 or 1, got 2");
  VT_INTS(g->a.gather.slice_sizes, 1, 9);
  CHECK_INFER_ERR(g, "slice_sizes={1,9}: size 9 of dimension 1 must be in [0, 8]");
  VT_INTS(g->a.gather.slice_sizes, 1, 8);
  VT_INTS(g->a.gather.start_index_map, 0, 1);
  CHECK_INFER_ERR(g, "start_index_map={0,1} has 2 entries but the index vectors have 1");
  /* offset dims placed around the batch dims: two index components, windows of 8x6 */
  cx_instr *x = vt_param(3, "x", "f32[16,11]"), *pairs = vt_param(4, "pairs", "s64[5,2]");
  cx_instr *g3 = gather("g3", x, pairs, 1);
  VT_INTS(g3->a.gather.offset_dims, 0, 2);
  VT_INTS(g3->a.gather.start_index_map, 0, 1);
  VT_INTS(g3->a.gather.slice_sizes, 8, 6);
  CHECK_INFER(g3, "f32[8,5,6]");
  VT_INTS(g3->a.gather.offset_dims, 2, 0);
  CHECK_INFER_ERR(g3, "offset_dims={2,0} must be sorted");
  VT_INTS(g3->a.gather.offset_dims, 1, 2);
  VT_INTS(g3->a.gather.start_index_map, 1, 1);
  CHECK_INFER_ERR(g3, "start_index_map {1,1}: dimension 1 is used more than once");
  /* batching: operand dim 0 pairs with indices dim 0 */
  cx_instr *bx = vt_param(5, "bx", "f32[3,10,8]"), *bi = vt_param(6, "bi", "s32[3,4,1]");
  cx_instr *g4 = gather("g4", bx, bi, 2);
  VT_INTS(g4->a.gather.offset_dims, 2);
  VT_INTS(g4->a.gather.collapsed_slice_dims, 1);
  VT_INTS(g4->a.gather.operand_batching_dims, 0);
  VT_INTS(g4->a.gather.start_indices_batching_dims, 0);
  VT_INTS(g4->a.gather.start_index_map, 1);
  VT_INTS(g4->a.gather.slice_sizes, 1, 1, 8);
  CHECK_INFER(g4, "f32[3,4,8]");
  VT_INTS(g4->a.gather.start_indices_batching_dims, 1);
  CHECK_INFER_ERR(g4, "batching dimension 0 of the operand has size 3 but dimension 1 of the indices has size 4");
  VT_INTS(g4->a.gather.start_indices_batching_dims, 2);
  CHECK_INFER_ERR(g4, "start_indices_batching_dims={2} must not contain index_vector_dim=2");
  VT_INTS(g4->a.gather.start_indices_batching_dims, 0);
  VT_INTS(g4->a.gather.start_index_map, 0);
  CHECK_INFER_ERR(g4, "start_index_map {0}: dimension 0 is used more than once"); /* a batching dim */
  VT_INTS(g4->a.gather.start_index_map, 1);
  VT_INTS(g4->a.gather.collapsed_slice_dims, 0);
  CHECK_INFER_ERR(g4, "operand_batching_dims {0}: dimension 0 is used more than once");
  cx_instr *g5 = gather("g5", emb, vt_param(7, "fi", "f32[5,1]"), 1);
  CHECK_INFER_ERR(g5, "indices (operand 1) must have an integer type, got f32[5,1]");
  cx_instr *g6 = gather("g6", emb, ids, 3);
  CHECK_INFER_ERR(g6, "index_vector_dim=3 must be in [0, 2] for indices s32[5,1]");
  vt_end();
}

static void scatter_dims(cx_instr *s, int64_t ivd) {
  VT_INTS(s->a.scatter.update_window_dims, 1);
  VT_INTS(s->a.scatter.inserted_window_dims, 0);
  VT_INTS(s->a.scatter.scatter_dims_to_operand_dims, 0);
  s->a.scatter.index_vector_dim = ivd;
}

TEST(verify_scatter) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  vt_comp("pair"); /* (f32, s32, f32, s32) -> (f32, s32): keeps the updates */
  vt_param(0, NULL, "f32[]");
  vt_param(1, NULL, "s32[]");
  cx_instr *u0 = vt_param(2, NULL, "f32[]"), *u1 = vt_param(3, NULL, "s32[]");
  cx_comp *pair = vt_finish(vt_op(CX_OP_TUPLE, "t", NULL, 2, u0, u1), 0);
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[10,8]"), *ids = vt_param(1, "ids", "s32[5,1]"), *up = vt_param(2, "up", "f32[5,8]");
  cx_instr *s = vt_op(CX_OP_SCATTER, "s", NULL, 3, x, ids, up);
  scatter_dims(s, 1);
  vt_called(s, 1, add);
  CHECK_INFER(s, "f32[10,8]");
  cx_instr *k = vt_param(3, "k", "s32[10,8]"), *ku = vt_param(4, "ku", "s32[5,8]");
  cx_instr *v = vt_op(CX_OP_SCATTER, "v", NULL, 5, x, k, ids, up, ku);
  scatter_dims(v, 1);
  vt_called(v, 1, pair);
  CHECK_INFER(v, "(f32[10,8], s32[10,8])");
  vt_called(v, 1, add);
  CHECK_INFER_ERR(v, "to_apply add must take 4 parameters, has 2");
  cx_instr *s2 = vt_op(CX_OP_SCATTER, "s2", NULL, 3, x, ids, vt_param(5, "up6", "f32[6,8]"));
  scatter_dims(s2, 1);
  vt_called(s2, 1, add);
  vt_at(s2, 50, 1);
  CHECK_STR_EQ(vt_infer(s2), "ERROR: t.hlo:50:1: error: scatter s2: update scatter dimension 0 has size 6 but indices "
                             "dimension 0 has size 5");
  cx_instr *s3 = vt_op(CX_OP_SCATTER, "s3", NULL, 3, x, ids, vt_param(6, "up9", "f32[5,9]"));
  scatter_dims(s3, 1);
  vt_called(s3, 1, add);
  CHECK_INFER_ERR(s3, "update window dimension 1 has size 9, larger than operand dimension 1 (8)");
  cx_instr *s4 = vt_op(CX_OP_SCATTER, "s4", NULL, 3, x, ids, ku);
  scatter_dims(s4, 1);
  vt_called(s4, 1, add);
  CHECK_INFER_ERR(s4, "update s32[5,8] (operand 2) must have the element type of operand 0 f32[10,8]");
  cx_instr *s5 = vt_op(CX_OP_SCATTER, "s5", NULL, 3, x, ids, vt_param(7, "up3", "f32[5,8,1]"));
  scatter_dims(s5, 1);
  vt_called(s5, 1, add);
  CHECK_INFER_ERR(s5, "updates f32[5,8,1] must have rank 2 (1 window dimensions and 1 scatter dimensions)");
  /* implicit trailing index dim and batching dims */
  cx_instr *s6 = vt_op(CX_OP_SCATTER, "s6", NULL, 3, x, vt_param(8, "flat", "s32[5]"), up);
  scatter_dims(s6, 1);
  vt_called(s6, 1, add);
  CHECK_INFER(s6, "f32[10,8]");
  cx_instr *s8 = vt_op(CX_OP_SCATTER, "s8", NULL, 3, x, vt_param(12, "cols", "s32[1,5]"), up);
  scatter_dims(s8, 0);
  vt_called(s8, 1, add);
  CHECK_INFER(s8, "f32[10,8]");
  cx_instr *bx = vt_param(9, "bx", "f32[3,10,8]"), *bi = vt_param(10, "bi", "s32[3,4,1]");
  cx_instr *bu = vt_param(11, "bu", "f32[3,4,8]");
  cx_instr *s7 = vt_op(CX_OP_SCATTER, "s7", NULL, 3, bx, bi, bu);
  VT_INTS(s7->a.scatter.update_window_dims, 2);
  VT_INTS(s7->a.scatter.inserted_window_dims, 1);
  VT_INTS(s7->a.scatter.input_batching_dims, 0);
  VT_INTS(s7->a.scatter.scatter_indices_batching_dims, 0);
  VT_INTS(s7->a.scatter.scatter_dims_to_operand_dims, 1);
  s7->a.scatter.index_vector_dim = 2;
  vt_called(s7, 1, add);
  CHECK_INFER(s7, "f32[3,10,8]");
  s7->a.scatter.input_batching_dims.n = 0;
  CHECK_INFER_ERR(s7, "input_batching_dims={} and scatter_indices_batching_dims={0} must have the same length");
  VT_INTS(s7->a.scatter.inserted_window_dims, 1, 0);
  CHECK_INFER_ERR(s7, "inserted_window_dims={1,0} must be sorted");
  vt_end();
}

TEST(verify_call_and_fusion) {
  vt_begin();
  vt_comp("callee");
  cx_instr *p0 = vt_param(0, "p0", "f32[2]");
  vt_param(1, "p1", "s32[]");
  cx_comp *callee = vt_finish(vt_op(CX_OP_NEGATE, "n", NULL, 1, p0), 0);
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[2]"), *i = vt_param(1, "i", "s32[]"), *j = vt_param(2, "j", "s32[3]");
  cx_instr *c = vt_op(CX_OP_CALL, "c", NULL, 2, a, i);
  vt_called(c, 1, callee);
  CHECK_INFER(c, "f32[2]");
  cx_instr *f = vt_op(CX_OP_FUSION, "f", NULL, 2, a, i);
  vt_called(f, 1, callee);
  CHECK_INFER(f, "f32[2]");
  cx_instr *c2 = vt_op(CX_OP_CALL, "c2", NULL, 2, a, j);
  vt_called(c2, 1, callee);
  vt_at(c2, 60, 2);
  CHECK_STR_EQ(vt_infer(c2), "ERROR: t.hlo:60:2: error: call c2: operand 1 s32[3] does not match parameter 1 of callee, s32[]");
  cx_instr *c3 = vt_op(CX_OP_CALL, "c3", NULL, 1, a);
  vt_called(c3, 1, callee);
  CHECK_INFER_ERR(c3, "call c3: expected 2 operands (the parameters of callee), got 1");
  vt_end();
}

TEST(verify_while) {
  vt_begin();
  vt_comp("cond");
  cx_instr *cp = vt_param(0, "cp", "s32[]");
  cx_comp *cond = vt_finish(vt_op(CX_OP_COMPARE, "lt", NULL, 2, cp, cp), 0);
  vt_comp("body");
  cx_instr *bp = vt_param(0, "bp", "s32[]");
  cx_comp *body = vt_finish(vt_op(CX_OP_ADD, "inc", NULL, 2, bp, bp), 0);
  vt_comp("fbody");
  cx_comp *fbody = vt_finish(vt_op(CX_OP_CONVERT, "cv", "f32[]", 1, vt_param(0, "q", "s32[]")), 0);
  vt_comp("e");
  cx_instr *init = vt_param(0, "init", "s32[]");
  cx_instr *w = vt_op(CX_OP_WHILE, "w", NULL, 1, init);
  vt_called(w, 2, cond, body);
  CHECK_INFER(w, "s32[]");
  vt_called(w, 2, body, body);
  CHECK_INFER_ERR(w, "while w: condition body must return pred[], returns s32[]");
  vt_called(w, 2, cond, fbody);
  vt_at(w, 70, 5);
  CHECK_STR_EQ(vt_infer(w), "ERROR: t.hlo:70:5: error: while w: body fbody returns f32[] but must return the loop state "
                            "shape s32[]");
  cx_instr *w2 = vt_op(CX_OP_WHILE, "w2", NULL, 1, vt_param(1, "f", "f32[]"));
  vt_called(w2, 2, cond, body);
  CHECK_INFER_ERR(w2, "condition cond parameter s32[] must match the operand f32[]");
  vt_end();
}

TEST(verify_conditional) {
  vt_begin();
  vt_comp("b0");
  cx_instr *x = vt_param(0, "x", "f32[2]");
  cx_comp *b0 = vt_finish(vt_op(CX_OP_NEGATE, "n", NULL, 1, x), 0);
  vt_comp("b1");
  cx_comp *b1 = vt_finish(vt_op(CX_OP_CONVERT, "cv", "f32[2]", 1, vt_param(0, "y", "s32[2]")), 0);
  vt_comp("b2");
  cx_comp *b2 = vt_finish(vt_param(0, "z", "f32[3]"), 0);
  vt_comp("e");
  cx_instr *p = vt_param(0, "p", "pred[]"), *i = vt_param(1, "i", "s32[]"), *f = vt_param(2, "f", "f32[2]");
  cx_instr *s = vt_param(3, "s", "s32[2]"), *g = vt_param(4, "g", "f32[3]"), *l = vt_param(5, "l", "s64[]");
  cx_instr *c = vt_op(CX_OP_CONDITIONAL, "c", NULL, 3, p, f, s);
  vt_called(c, 2, b0, b1);
  CHECK_INFER(c, "f32[2]");
  cx_instr *c2 = vt_op(CX_OP_CONDITIONAL, "c2", NULL, 4, i, f, s, f);
  vt_called(c2, 3, b0, b1, b0);
  CHECK_INFER(c2, "f32[2]");
  cx_instr *c3 = vt_op(CX_OP_CONDITIONAL, "c3", NULL, 4, p, f, s, f);
  vt_called(c3, 3, b0, b1, b0);
  CHECK_INFER_ERR(c3, "a pred branch index needs 2 branch computations (true, false), got 3");
  cx_instr *c4 = vt_op(CX_OP_CONDITIONAL, "c4", NULL, 3, l, f, s);
  vt_called(c4, 2, b0, b1);
  CHECK_INFER_ERR(c4, "branch index (operand 0) must be pred[] or s32[], got s64[]");
  cx_instr *c5 = vt_op(CX_OP_CONDITIONAL, "c5", NULL, 3, i, f, g);
  vt_called(c5, 2, b0, b2);
  vt_at(c5, 80, 4);
  CHECK_STR_EQ(vt_infer(c5), "ERROR: t.hlo:80:4: error: conditional c5: branch 1 b2 returns f32[3] but branch 0 b0 "
                             "returns f32[2] (expected the same shape)");
  cx_instr *c6 = vt_op(CX_OP_CONDITIONAL, "c6", NULL, 3, i, f, f);
  vt_called(c6, 2, b0, b1);
  CHECK_INFER_ERR(c6, "branch 1 b1 takes s32[2] but operand 2 is f32[2]");
  cx_instr *c7 = vt_op(CX_OP_CONDITIONAL, "c7", NULL, 2, i, f);
  vt_called(c7, 2, b0, b1);
  CHECK_INFER_ERR(c7, "expected 3 operands (the branch index and one per branch), got 2");
  vt_end();
}

/* A whole module: reducer, while loop with a tuple state, entry; verified end to end. */
TEST(verify_module_with_loop) {
  vt_begin();
  vt_comp("cond");
  cx_instr *st = vt_param(0, "st", "(s32[], f32[4])");
  cx_instr *n = vt_op(CX_OP_GET_TUPLE_ELEMENT, "n", "s32[]", 1, st);
  cx_instr *ten = vt_const("ten", "s32[]");
  cx_instr *lt = vt_op(CX_OP_COMPARE, "lt", "pred[]", 2, n, ten);
  lt->a.dir = CXLA_LT;
  cx_comp *cond = vt_finish(lt, 0);
  vt_comp("body");
  cx_instr *bs = vt_param(0, "bs", "(s32[], f32[4])");
  cx_instr *bn = vt_op(CX_OP_GET_TUPLE_ELEMENT, "bn", "s32[]", 1, bs);
  cx_instr *bv = vt_op(CX_OP_GET_TUPLE_ELEMENT, "bv", "f32[4]", 1, bs);
  bv->a.index = 1;
  cx_instr *bn1 = vt_op(CX_OP_ADD, "bn1", "s32[]", 2, bn, bn);
  cx_instr *bv1 = vt_op(CX_OP_EXP, "bv1", "f32[4]", 1, bv);
  cx_comp *body = vt_finish(vt_op(CX_OP_TUPLE, "bt", "(s32[], f32[4])", 2, bn1, bv1), 0);
  vt_comp("e");
  cx_instr *v = vt_param(0, "v", "f32[4]");
  cx_instr *zero = vt_const("zero", "s32[]");
  cx_instr *t = vt_op(CX_OP_TUPLE, "t", "(s32[], f32[4])", 2, zero, v);
  cx_instr *w = vt_op(CX_OP_WHILE, "w", "(s32[], f32[4])", 1, t);
  vt_called(w, 2, cond, body);
  cx_instr *r = vt_op(CX_OP_GET_TUPLE_ELEMENT, "r", "f32[4]", 1, w);
  r->a.index = 1;
  vt_finish(r, 1);
  CHECK_STR_EQ(vt_verify(), "ok");
  CHECK(cx_verify_comp(body) == CXLA_OK);
  /* a wrong declared tuple in the loop state is found */
  w->shape = vt_shape("(s32[], f32[5])");
  vt_at(w, 20, 3);
  CHECK_STR_EQ(vt_verify(), "t.hlo:20:3: error: while w: declared shape (s32[], f32[5]) does not match inferred shape "
                            "(s32[], f32[4])");
  vt_end();
}
