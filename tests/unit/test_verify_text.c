/* test_verify_text.c — the verifier on HLO text as the parser delivers it: attribute syntax
 * reaching the rules, and errors pointing at the instruction's LINE:COL (its name). */
#include "ir/ir.h"
#include "ir/verify.h"
#include "text/hlo.h"
#include "test.h"

/* "ok", "PARSE: <message>" or the verifier's message. */
static const char *check_hlo(const char *text) {
  static char out[2048];
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s != CXLA_OK) {
    snprintf(out, sizeof out, "PARSE: %s", cxla_context_errmsg(test_ctx()));
    return out;
  }
  s = cx_verify_module(m);
  snprintf(out, sizeof out, "%s", s == CXLA_OK ? "ok" : cxla_context_errmsg(test_ctx()));
  cx_module_free(m);
  return out;
}

#define CHECK_HLO(text, want)                                                                     \
  do {                                                                                            \
    const char *g_ = check_hlo(text), *w_ = (want);                                              \
    if (strcmp(w_, "ok") ? !strstr(g_, w_) : strcmp(g_, "ok"))                                     \
      test_fail(__FILE__, __LINE__, "got '%s', expected '%s'", g_, w_);                          \
  } while (0)

TEST(verify_text_softmax_ok) {
  CHECK_HLO("HloModule softmax\n"
            "max_f32 {\n"
            "  a = f32[] parameter(0)\n"
            "  b = f32[] parameter(1)\n"
            "  ROOT m = f32[] maximum(a, b)\n"
            "}\n"
            "add_f32 {\n"
            "  a = f32[] parameter(0)\n"
            "  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n"
            "}\n"
            "ENTRY main {\n"
            "  x = f32[2,5]{1,0} parameter(0)\n"
            "  ninf = f32[] constant(-inf)\n"
            "  mx = f32[2]{0} reduce(x, ninf), dimensions={1}, to_apply=max_f32\n"
            "  mxb = f32[2,5]{1,0} broadcast(mx), dimensions={0}\n"
            "  d = f32[2,5]{1,0} subtract(x, mxb)\n"
            "  e = f32[2,5]{1,0} exponential(d)\n"
            "  zero = f32[] constant(0)\n"
            "  s = f32[2]{0} reduce(e, zero), dimensions={1}, to_apply=add_f32\n"
            "  sb = f32[2,5]{1,0} broadcast(s), dimensions={0}\n"
            "  ROOT r = f32[2,5]{1,0} divide(e, sb)\n"
            "}\n",
            "ok");
}

TEST(verify_text_errors_point_at_the_instruction) {
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  a = f32[4] parameter(0)\n"
            "  ROOT add.3 = f32[3] add(a, a)\n"
            "}\n",
            "t.hlo:4:8: error: add add.3: declared shape f32[3] does not match inferred shape f32[4]");
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  a = f32[2,3] parameter(0)\n"
            "  b = f32[4,4] parameter(1)\n"
            "  ROOT dot.5 = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
            "}\n",
            "t.hlo:5:8: error: dot dot.5: lhs contracting dimension 1 has size 3 but rhs contracting dimension 0 has "
            "size 4");
  CHECK_HLO("HloModule m\n"
            "region_0 {\n"
            "  a = f32[] parameter(0)\n"
            "  b = f32[] parameter(1)\n"
            "  c = f32[] parameter(2)\n"
            "  ROOT s = f32[] add(a, b)\n"
            "}\n"
            "ENTRY e {\n"
            "  x = f32[8] parameter(0)\n"
            "  z = f32[] constant(0)\n"
            "  ROOT reduce.8 = f32[] reduce(x, z), dimensions={0}, to_apply=region_0\n"
            "}\n",
            "t.hlo:11:8: error: reduce reduce.8: to_apply region_0 must take 2 parameters, has 3");
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  a = s32[4] parameter(0)\n"
            "  ROOT c = pred[4] compare(a, a), direction=LT, type=FLOAT\n"
            "}\n",
            "t.hlo:4:8: error: compare c: type=FLOAT does not fit s32 operands (expected SIGNED)");
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  a = u32[4] parameter(0)\n"
            "  ROOT n = u32[4] abs(a)\n"
            "}\n",
            "t.hlo:4:8: error: abs n: operand 0 has element type u32 but abs needs a signed integer, floating-point or complex type");
}

TEST(verify_text_windows_and_convolution) {
  CHECK_HLO("HloModule m\n"
            "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
            "ge { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=GE }\n"
            "ENTRY e {\n"
            "  x = f32[1,4,6,1] parameter(0)\n"
            "  z = f32[] constant(0)\n"
            "  pool = f32[1,2,2,1] reduce-window(x, z), window={size=1x2x3x1 stride=1x2x3x1}, to_apply=add\n"
            "  padded = f32[1,3,3,1] reduce-window(x, z), window={size=1x2x3x1 stride=1x2x3x1 pad=0_0x1_1x1_2x0_0}, "
            "to_apply=add\n"
            "  src = f32[1,2,2,1] parameter(1)\n"
            "  sas = f32[1,4,6,1] select-and-scatter(x, src, z), window={size=1x2x3x1 stride=1x2x3x1}, select=ge, "
            "scatter=add\n"
            "  k = f32[2,3,1,8] parameter(2)\n"
            "  conv = f32[1,3,4,8] convolution(x, k), window={size=2x3}, dim_labels=b01f_01io->b01f\n"
            "  ROOT t = (f32[1,2,2,1], f32[1,3,3,1], f32[1,4,6,1], f32[1,3,4,8]) tuple(pool, padded, sas, conv)\n"
            "}\n",
            "ok");
  /* padded: (4+2-2)/2+1 = 3 and (6+3-3)/3+1 = 3; conv: 4-2+1 = 3, 6-3+1 = 4 */
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  x = f32[1,4,6,2] parameter(0)\n"
            "  k = f32[2,3,3,8] parameter(1)\n"
            "  ROOT conv = f32[1,3,4,8] convolution(x, k), window={size=2x3}, dim_labels=b01f_01io->b01f\n"
            "}\n",
            "t.hlo:5:8: error: convolution conv: input feature size 2 must equal kernel input feature size 3 times "
            "feature_group_count=1");
}

TEST(verify_text_gather_scatter) {
  CHECK_HLO("HloModule m\n"
            "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
            "ENTRY e {\n"
            "  emb = f32[10,8] parameter(0)\n"
            "  ids = s32[5,1] parameter(1)\n"
            "  g = f32[5,8] gather(emb, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,8}\n"
            "  ROOT s = f32[10,8] scatter(emb, ids, g), update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
            "}\n",
            "ok");
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  x = f32[3,10,8] parameter(0)\n"
            "  i = s32[3,4,1] parameter(1)\n"
            "  ROOT g = f32[3,4,8] gather(x, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,8}\n"
            "}\n",
            "ok");
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  emb = f32[10,8] parameter(0)\n"
            "  ids = s32[5,1] parameter(1)\n"
            "  ROOT g = f32[5,8] gather(emb, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={2,8}\n"
            "}\n",
            "t.hlo:5:8: error: gather g: slice_sizes={2,8}: collapsed or batching dimension 0 must have size 0 or 1, got 2");
}

TEST(verify_text_control_flow) {
  static const char *loop =
      "HloModule m\n"
      "cond {\n"
      "  p = (s32[], f32[4]) parameter(0)\n"
      "  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(10)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  p = (s32[], f32[4]) parameter(0)\n"
      "  i = s32[] get-tuple-element(p), index=0\n"
      "  v = f32[4] get-tuple-element(p), index=1\n"
      "  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n"
      "  v1 = f32[4] sine(v)\n"
      "  ROOT t = (s32[], f32[4]) tuple(i1, v1)\n"
      "}\n"
      "neg { x = f32[4] parameter(0)\n ROOT n = f32[4] negate(x) }\n"
      "id { x = f32[4] parameter(0)\n ROOT c = f32[4] copy(x) }\n"
      "ENTRY e {\n"
      "  v = f32[4] parameter(0)\n"
      "  z = s32[] constant(0)\n"
      "  t = (s32[], f32[4]) tuple(z, v)\n"
      "  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
      "  r = f32[4] get-tuple-element(w), index=1\n"
      "  b = pred[] parameter(1)\n"
      "  c = f32[4] conditional(b, r, r), true_computation=neg, false_computation=id\n"
      "  k = s32[] parameter(2)\n"
      "  ROOT c2 = f32[4] conditional(k, c, c, r), branch_computations={neg, id, neg}\n"
      "}\n";
  CHECK_HLO(loop, "ok");
  CHECK_HLO("HloModule m\n"
            "body { p = s32[] parameter(0)\n ROOT c = f32[] convert(p) }\n"
            "cond { p = s32[] parameter(0)\n ROOT t = pred[] constant(true) }\n"
            "ENTRY e {\n"
            "  z = s32[] parameter(0)\n"
            "  ROOT w = s32[] while(z), condition=cond, body=body\n"
            "}\n",
            "t.hlo:8:8: error: while w: body body returns f32[] but must return the loop state shape s32[]");
}

TEST(verify_text_shape_ops) {
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  x = f32[10,5] parameter(0)\n"
            "  i = s32[] parameter(1)\n"
            "  s = f32[3,5] slice(x), slice={[2:9:3], [0:5]}\n"
            "  d = f32[2,5] dynamic-slice(x, i, i), dynamic_slice_sizes={2,5}\n"
            "  u = f32[10,5] dynamic-update-slice(x, d, i, i)\n"
            "  p0 = f32[] constant(0)\n"
            "  p = f32[21,3] pad(x, p0), padding=1_1_1x-1_-1\n"
            "  t = f32[5,10] transpose(x), dimensions={1,0}\n"
            "  r = f32[50] reshape(x)\n"
            "  c = f32[20,5] concatenate(x, x), dimensions={0}\n"
            "  io = s32[4,3] iota(), iota_dimension=1\n"
            "  rv = f32[10,5] reverse(x), dimensions={0,1}\n"
            "  ROOT tup = (f32[3,5], f32[10,5], f32[21,3], f32[5,10], f32[50], f32[20,5], s32[4,3], f32[10,5]) "
            "tuple(s, u, p, t, r, c, io, rv)\n"
            "}\n",
            "ok");
  /* pad: 10+1+1+9*1 = 21 and 5-1-1 = 3 */
  CHECK_HLO("HloModule m\n"
            "ENTRY e {\n"
            "  x = f32[3] parameter(0)\n"
            "  ROOT b = f32[2,4] broadcast(x), dimensions={1}\n"
            "}\n",
            "t.hlo:4:8: error: broadcast b: operand dimension 0 has size 3 but result dimension 1 has size 4");
}
