/* test_printer.c — HLO text printing: the exact canonical and %name styles, constant values,
 * options, unnamed instructions, and the parse/print fixed point over a corpus of modules
 * that uses every attribute kind. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "text/hlo.h"
#include "test.h"

static cx_module *parse_ok(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "p.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse failed: %s", cxla_context_errmsg(test_ctx()));
  return s == CXLA_OK ? m : NULL;
}

static char *print(const cx_module *m, const cx_print_opts *o) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_module(&sb, m, o);
  return cx_sb_take(&sb);
}

/* Prints text's module with o; NULL if it does not parse. */
static char *reprint(const char *text, const cx_print_opts *o) {
  cx_module *m = parse_ok(text);
  if (!m) return NULL;
  char *s = print(m, o);
  cx_module_free(m);
  return s;
}

static void check_text(const char *got, const char *want, int line) {
  if (!got || strcmp(got, want)) test_fail(__FILE__, line, "printed:\n%s\nexpected:\n%s", got ? got : "(null)", want);
}

static const char *jax_in =
    "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[]}\n"
    "\n"
    "region_0.4 {\n"
    "  Arg_0.5 = f32[] parameter(0)\n"
    "  Arg_1.6 = f32[] parameter(1)\n"
    "  ROOT add.7 = f32[] add(Arg_0.5, Arg_1.6)\n"
    "}\n"
    "\n"
    "ENTRY main.10 {\n"
    "  Arg_0.1 = f32[8]{0} parameter(0), metadata={op_name=\"x\"}\n"
    "  constant.2 = f32[] constant(0)\n"
    "  reduce.8 = f32[] reduce(Arg_0.1, constant.2), dimensions={0}, to_apply=region_0.4, metadata={op_name=\"jit(f)/reduce_sum\" source_file=\"f.py\" source_line=4}\n"
    "  ROOT sqrt.9 = f32[] sqrt(reduce.8)\n"
    "}\n";

TEST(printer_canonical_is_xla_style) {
  cx_print_opts o = cx_print_opts_canonical();
  CHECK(!o.percent && !o.operand_shapes && o.layouts && o.metadata);
  char *s = reprint(jax_in, &o);
  check_text(s, jax_in, __LINE__); /* the input is already canonical */
  free(s);
}

TEST(printer_percent_style) {
  cx_print_opts o = {1, 1, 1, 1};
  char *s = reprint(jax_in, &o);
  check_text(s,
             "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[]}\n"
             "\n"
             "%region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {\n"
             "  %Arg_0.5 = f32[] parameter(0)\n"
             "  %Arg_1.6 = f32[] parameter(1)\n"
             "  ROOT %add.7 = f32[] add(f32[] %Arg_0.5, f32[] %Arg_1.6)\n"
             "}\n"
             "\n"
             "ENTRY %main.10 (Arg_0.1: f32[8]) -> f32[] {\n"
             "  %Arg_0.1 = f32[8]{0} parameter(0), metadata={op_name=\"x\"}\n"
             "  %constant.2 = f32[] constant(0)\n"
             "  %reduce.8 = f32[] reduce(f32[8]{0} %Arg_0.1, f32[] %constant.2), dimensions={0}, to_apply=%region_0.4, metadata={op_name=\"jit(f)/reduce_sum\" source_file=\"f.py\" source_line=4}\n"
             "  ROOT %sqrt.9 = f32[] sqrt(f32[] %reduce.8)\n"
             "}\n",
             __LINE__);
  free(s);
}

TEST(printer_options) {
  cx_print_opts o = {0, 0, 0, 0};
  char *s = reprint(jax_in, &o);
  CHECK_STR_CONTAINS(s, "  Arg_0.1 = f32[8] parameter(0)\n");
  CHECK_STR_CONTAINS(s, "reduce(Arg_0.1, constant.2), dimensions={0}, to_apply=region_0.4\n");
  CHECK(s && !strstr(s, "metadata"));
  CHECK_STR_CONTAINS(s, "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[]}\n");
  free(s);
  o.operand_shapes = 1;
  s = reprint(jax_in, &o);
  CHECK_STR_CONTAINS(s, "reduce(f32[8] Arg_0.1, f32[] constant.2)");
  free(s);
}

/* Constant values print so that they parse back to the same bits. */
TEST(printer_constant_values) {
  const char *in =
      "HloModule k\nENTRY e {\n"
      "  a = f32[4] constant({0.1, 0.333333343, -0, 1e+20})\n"
      "  b = f64[3] constant({0.1, 0.33333333333333331, 1e-300})\n"
      "  c = f32[4] constant({nan, -nan, inf, -inf})\n"
      "  d = bf16[2] constant({3.140625, -2})\n"
      "  f = f16[2] constant({65504, 0.0999755859})\n"
      "  g = u64[] constant(18446744073709551615)\n"
      "  h = s64[] constant(-9223372036854775808)\n"
      "  i = pred[3] constant({true, false, 1})\n"
      "  j = s32[2,3] constant({ { 1, 2, 3 }, { 4, 5, 6 } })\n"
      "  l = f32[2,0] constant({ {}, {} })\n"
      "  n = f32[0] constant({})\n"
      "  q = (s32[], (f32[1], pred[])) constant((1, ({2.5}, true)))\n"
      "  ROOT r = u8[] constant(255)\n"
      "}\n";
  cx_print_opts o = cx_print_opts_canonical();
  char *s = reprint(in, &o);
  CHECK_STR_CONTAINS(s, "a = f32[4] constant({0.1, 0.33333334, -0, 1e+20})\n");
  CHECK_STR_CONTAINS(s, "b = f64[3] constant({0.1, 0.3333333333333333, 1e-300})\n");
  CHECK_STR_CONTAINS(s, "c = f32[4] constant({nan, -nan, inf, -inf})\n");
  CHECK_STR_CONTAINS(s, "d = bf16[2] constant({3.140625, -2})\n");
  CHECK_STR_CONTAINS(s, "f = f16[2] constant({65504, 0.099975586})\n");
  CHECK_STR_CONTAINS(s, "g = u64[] constant(18446744073709551615)\n");
  CHECK_STR_CONTAINS(s, "h = s64[] constant(-9223372036854775808)\n");
  CHECK_STR_CONTAINS(s, "i = pred[3] constant({true, false, true})\n");
  CHECK_STR_CONTAINS(s, "j = s32[2,3] constant({ { 1, 2, 3 }, { 4, 5, 6 } })\n");
  CHECK_STR_CONTAINS(s, "l = f32[2,0] constant({ {}, {} })\n");
  CHECK_STR_CONTAINS(s, "n = f32[0] constant({})\n");
  CHECK_STR_CONTAINS(s, "q = (s32[], (f32[1], pred[])) constant((1, ({2.5}, true)))\n");
  CHECK_STR_CONTAINS(s, "ROOT r = u8[] constant(255)\n");
  free(s);
}

/* Instructions built through the IR API have no names: they print as <opcode>.<id>, and the
 * printed text parses back. */
TEST(printer_unnamed_instructions) {
  cx_module *m = cx_module_new(test_ctx(), "built");
  cx_comp *c = m ? cx_comp_new(m, "main") : NULL;
  CHECK(c != NULL);
  if (!c) { cx_module_free(m); return; }
  c->is_entry = 1;
  int64_t dims[1] = {3};
  cx_shape s = cx_shape_array(CXLA_F32, 1, dims);
  cx_instr *p = cx_instr_new(c, CX_OP_PARAMETER, &s, 0, NULL);
  cx_instr *n = cx_instr_new(c, CX_OP_NEGATE, &s, 1, &p);
  c->root = n;
  CHECK(p && n && cx_module_add_comp(m, c));
  cx_print_opts o = cx_print_opts_canonical();
  char *text = print(m, &o);
  char want[256];
  snprintf(want, sizeof want,
           "HloModule built\n\nENTRY main {\n  parameter.%d = f32[3] parameter(0)\n  ROOT negate.%d = f32[3] negate(parameter.%d)\n}\n",
           p->id, n->id, p->id);
  check_text(text, want, __LINE__);
  char *again = text ? reprint(text, &o) : NULL;
  check_text(again, want, __LINE__);
  free(text);
  free(again);
  cx_module_free(m);
}

/* ---- fixed point: print(parse(print(parse(x)))) == print(parse(x)) in both styles ---- */

static const char *const corpus[] = {
    /* JAX style with regions, metadata and frontend attributes */
    "HloModule jit_g, entry_computation_layout={(f32[2,3]{1,0}, s32[])->(f32[3]{0}, s32[])}, frontend_attributes={a=\"b\"}\n"
    "region_0.1 {\n  Arg_0.2 = f32[] parameter(0)\n  Arg_1.3 = f32[] parameter(1)\n  ROOT maximum.4 = f32[] maximum(Arg_0.2, Arg_1.3)\n}\n"
    "ENTRY main.9 {\n  Arg_0.5 = f32[2,3]{1,0} parameter(0), sharding={replicated}\n  Arg_1.6 = s32[] parameter(1)\n"
    "  constant.7 = f32[] constant(-inf)\n"
    "  reduce.8 = f32[3]{0} reduce(Arg_0.5, constant.7), dimensions={0}, to_apply=region_0.1, metadata={op_name=\"jit(g)/reduce_max\" source_file=\"g.py\" source_line=7}\n"
    "  ROOT tuple.10 = (f32[3]{0}, s32[]) tuple(reduce.8, Arg_1.6)\n}\n",
    /* shape ops */
    "HloModule s\nENTRY e {\n  p = f32[4,6]{1,0} parameter(0)\n  b = f32[3,4,6] broadcast(p), dimensions={1,2}\n"
    "  t = f32[6,4]{0,1} transpose(p), dimensions={1,0}\n  r = f32[4,6] reverse(p), dimensions={0,1}\n"
    "  s = f32[2,2] slice(p), slice={[0:2], [1:5:2]}\n  s2 = f32[2,6] slice(p), slice={[0:2], [0:6]}\n"
    "  z = f32[] constant(0.5)\n  pd = f32[5,12] pad(p, z), padding=0_1x-1_2_2\n  pd2 = f32[5,7] pad(p, z), padding=0_1x0_1\n"
    "  i = s32[] constant(1)\n  ds = f32[2,3] dynamic-slice(p, i, i), dynamic_slice_sizes={2,3}\n"
    "  du = f32[4,6] dynamic-update-slice(p, ds, i, i)\n  io = s32[4,6] iota(), iota_dimension=1\n"
    "  cc = f32[8,6] concatenate(p, p), dimensions={0}\n  rs = f32[24] reshape(p)\n  bc = s32[4,6] bitcast-convert(p)\n"
    "  cp = pred[4,6] compare(p, p), direction=GE, type=TOTALORDER\n  sel = f32[4,6] select(cp, p, p)\n"
    "  cl = f32[4,6] clamp(p, p, p)\n  rp = f32[4,6] reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"
    "  ROOT tp = (f32[3,4,6], f32[6,4]{0,1}, f32[4,6], f32[2,2], f32[2,6], f32[5,12], f32[5,7], f32[4,6], s32[4,6], f32[8,6], f32[24], s32[4,6], f32[4,6], f32[4,6], f32[4,6]) "
    "tuple(b, t, r, s, s2, pd, pd2, du, io, cc, rs, bc, sel, cl, rp)\n}\n",
    /* dot, convolution, windows, gather, scatter, sort, map */
    "HloModule d\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "ge {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT c = pred[] compare(x, y), direction=GE, type=FLOAT\n}\n"
    "ENTRY e {\n  l = f32[2,3,4] parameter(0)\n  r = f32[2,4,5] parameter(1)\n"
    "  d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,highest}\n"
    "  o = f32[3,4,4,5] dot(l, r), lhs_contracting_dims={}, rhs_contracting_dims={}\n"
    "  in = f32[1,8,8,3] parameter(2)\n  k = f32[3,3,3,16] parameter(3)\n"
    "  cv = f32[1,4,4,16] convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x2 rhs_dilate=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=3\n"
    "  c1 = f32[1,16,8] convolution(in, k), window={size=3}, dim_labels=bf0_oi0->bf0\n"
    "  c2 = f32[1,16] convolution(in, k), dim_labels=bf_io->bf\n  z = f32[] constant(0)\n"
    "  rw = f32[1,4,4,3] reduce-window(in, z), window={size=1x2x2x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=add\n"
    "  ss = f32[1,8,8,3] select-and-scatter(in, rw, z), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add\n"
    "  ix = s32[5,1] parameter(4)\n  op = f32[5,2] parameter(5)\n"
    "  g = f32[5,1] gather(op, ix), offset_dims={1}, collapsed_slice_dims={}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}, indices_are_sorted=true\n"
    "  g2 = f32[5,2] gather(op, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n"
    "  sc = f32[5,2] scatter(op, ix, g), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add\n"
    "  so = (f32[5,2], f32[5,2]) sort(op, op), dimensions={1}, is_stable=true, to_apply=ge\n"
    "  mp = f32[5,2] map(op, op), dimensions={0,1}, to_apply=add\n"
    "  ROOT t = (f32[2,3,5], f32[3,4,4,5], f32[1,4,4,16], f32[1,16,8], f32[1,16], f32[1,8,8,3], f32[5,1], f32[5,2], f32[5,2], (f32[5,2], f32[5,2]), f32[5,2]) tuple(d, o, cv, c1, c2, ss, g, g2, sc, so, mp)\n}\n",
    /* control flow, fusion, custom calls, raw attributes, computations defined after use */
    "HloModule cf, is_scheduled=true, num_partitions=1\n"
    "ENTRY main {\n  p = s32[] parameter(0), parameter_replication={false}\n"
    "  w = s32[] while(p), condition=cond, body=body, backend_config={\"known_trip_count\":{\"n\":\"10\"}}\n"
    "  b = pred[] constant(false)\n  c1 = s32[] conditional(b, p, p), true_computation=body, false_computation=neg\n"
    "  c2 = s32[] conditional(p, p, p, p), branch_computations={body, neg, body}\n"
    "  f = s32[] fusion(p), kind=kLoop, calls=neg, output_to_operand_aliasing={{}: (0, {})}\n"
    "  cc = s32[] custom-call(p), custom_call_target=\"my\\\"target\\ttab\", api_version=API_VERSION_TYPED_FFI, literal=s32[2]{0} {1, 2}\n"
    "  ca = s32[] call(p), to_apply=neg, frontend_attributes={_xla_stream_annotation=\"1\"}\n"
    "  tk = token[] after-all()\n  tp2 = (s32[], token[]) tuple(p, tk)\n  ob = (s32[], token[]) opt-barrier(tp2)\n"
    "  ROOT t = (s32[], s32[], s32[], s32[], s32[], s32[]) tuple(w, c1, c2, f, cc, ca), control-predecessors={tk}\n}\n"
    "cond {\n  x = s32[] parameter(0)\n  k = s32[] constant(10)\n  ROOT lt = pred[] compare(x, k), direction=LT\n}\n"
    "body {\n  x = s32[] parameter(0)\n  ROOT y = s32[] add(x, x)\n}\n"
    "neg {\n  x = s32[] parameter(0)\n  ROOT y = s32[] negate(x)\n}\n",
    /* shapes and constants */
    "HloModule sh\nENTRY e {\n  a = (f32[2], (s32[], u8[3]), ()) parameter(0)\n  c = f32[<=10,3]{0,1} parameter(1)\n"
    "  d = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(2)\n  f = f16[]{} parameter(3)\n"
    "  k1 = (s32[], f32[2]) constant((1, {2, 3}))\n  k2 = f64[2,2] constant({ { 1e-300, -0 }, { nan, 5e+300 } })\n"
    "  k3 = s16[3] constant({-32768, 0, 32767})\n  k4 = u32[] constant(4294967295)\n  k5 = pred[] constant(false)\n"
    "  ROOT g = () tuple()\n}\n",
    /* old TF style: %names, operand shapes, signatures, tuple parameters */
    "HloModule tf\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n"
    "ENTRY %main (t: (f32[2], s32[]), x: f32[2]) -> f32[] {\n  %x = f32[2]{0} parameter(1)\n  %t = (f32[2]{0}, s32[]) parameter(0)\n"
    "  %g = f32[2]{0} get-tuple-element((f32[2]{0}, s32[]) %t), index=0\n  %m = f32[2]{0} multiply(f32[2]{0} %g, f32[2]{0} %x)\n"
    "  %z = f32[] constant(0)\n  ROOT %r = f32[] reduce(f32[2]{0} %m, f32[] %z), dimensions={0}, to_apply=%add\n}\n",
};

TEST(printer_roundtrip_fixed_point) {
  cx_print_opts styles[3] = {cx_print_opts_canonical(), {1, 1, 1, 1}, {1, 0, 1, 1}};
  for (int i = 0; i < CX_ARRAY_LEN(corpus); i++) {
    for (int k = 0; k < 3; k++) {
      char *a = reprint(corpus[i], &styles[k]);
      CHECK_MSG(a != NULL, "corpus %d style %d does not parse", i, k);
      if (!a) continue;
      char *b = reprint(a, &styles[k]);
      if (!b || strcmp(a, b)) test_fail(__FILE__, __LINE__, "corpus %d style %d: not a fixed point:\n%s\n---\n%s", i, k, a, b ? b : "(null)");
      /* each style reads back into the other */
      char *c = reprint(a, &styles[0]), *d = reprint(corpus[i], &styles[0]);
      if (!c || !d || strcmp(c, d)) test_fail(__FILE__, __LINE__, "corpus %d style %d: styles disagree", i, k);
      free(a); free(b); free(c); free(d);
    }
  }
}

/* Printing keeps what the text said: a few spot checks on the corpus' canonical text. */
TEST(printer_attribute_text) {
  cx_print_opts o = cx_print_opts_canonical();
  char *s = reprint(corpus[1], &o);
  CHECK_STR_CONTAINS(s, "s = f32[2,2] slice(p), slice={[0:2:1], [1:5:2]}\n");
  CHECK_STR_CONTAINS(s, "s2 = f32[2,6] slice(p), slice={[0:2], [0:6]}\n");
  CHECK_STR_CONTAINS(s, "pd = f32[5,12] pad(p, z), padding=0_1_0x-1_2_2\n");
  CHECK_STR_CONTAINS(s, "pd2 = f32[5,7] pad(p, z), padding=0_1x0_1\n");
  CHECK_STR_CONTAINS(s, "cp = pred[4,6] compare(p, p), direction=GE, type=TOTALORDER\n");
  free(s);
  s = reprint(corpus[2], &o);
  CHECK_STR_CONTAINS(s, "window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x2 rhs_dilate=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=3\n");
  CHECK_STR_CONTAINS(s, "c1 = f32[1,16,8] convolution(in, k), window={size=3}, dim_labels=bf0_oi0->bf0\n");
  CHECK_STR_CONTAINS(s, "o = f32[3,4,4,5] dot(l, r), lhs_contracting_dims={}, rhs_contracting_dims={}\n");
  CHECK_STR_CONTAINS(s, "d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,highest}\n");
  CHECK_STR_CONTAINS(s, "g2 = f32[5,2] gather(op, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n");
  CHECK_STR_CONTAINS(s, "index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add\n");
  CHECK_STR_CONTAINS(s, "so = (f32[5,2], f32[5,2]) sort(op, op), dimensions={1}, is_stable=true, to_apply=ge\n");
  CHECK_STR_CONTAINS(s, "ss = f32[1,8,8,3] select-and-scatter(in, rw, z), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add\n");
  free(s);
  s = reprint(corpus[3], &o);
  CHECK_STR_CONTAINS(s, "HloModule cf, is_scheduled=true, num_partitions=1\n\ncond {");
  CHECK_STR_CONTAINS(s, "w = s32[] while(p), condition=cond, body=body, backend_config={\"known_trip_count\":{\"n\":\"10\"}}\n");
  CHECK_STR_CONTAINS(s, "c1 = s32[] conditional(b, p, p), true_computation=body, false_computation=neg\n");
  CHECK_STR_CONTAINS(s, "c2 = s32[] conditional(p, p, p, p), branch_computations={body, neg, body}\n");
  CHECK_STR_CONTAINS(s, "f = s32[] fusion(p), kind=kLoop, calls=neg, output_to_operand_aliasing={{}: (0, {})}\n");
  CHECK_STR_CONTAINS(s, "custom_call_target=\"my\\\"target\\ttab\", api_version=API_VERSION_TYPED_FFI, literal=s32[2]{0} {1, 2}\n");
  CHECK_STR_CONTAINS(s, "}\n\nENTRY main {\n");
  free(s);
}

/* The shortest text of a float (cx_sb_put_double's binary search over the digit count) against
 * the plain search p = 1, 2, ...: random f32 and f64 bit patterns, powers of two and their
 * neighbours (where the search switches to the plain one), subnormals, and the decimals a
 * program writes (0.1, 1e-3 ...). */
static void shortest_by_steps(char *buf, size_t n, double v, int is_f32) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, v);
    if (is_f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) return;
  }
}

static int shortest_agrees(double v, int is_f32) {
  if (!isfinite(v) || (v == floor(v) && fabs(v) < 1e15)) return 1; /* not the searched forms */
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_put_double(&sb, v, is_f32);
  char *got = cx_sb_take(&sb), want[64];
  shortest_by_steps(want, sizeof want, v, is_f32);
  int ok = got && !strcmp(got, want);
  CHECK_MSG(ok, "%.17g (%s): printed %s, the shortest is %s", v, is_f32 ? "f32" : "f64", got ? got : "(null)", want);
  free(got);
  return ok;
}

TEST(printer_shortest_float_text) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  int bad = 0;
  for (int i = 0; i < 200000 && bad < 5; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint32_t b32 = (uint32_t)(s >> 32);
    float f;
    double d;
    memcpy(&f, &b32, 4);
    memcpy(&d, &s, 8);
    bad += !shortest_agrees(f, 1) + !shortest_agrees(d, 0);
  }
  for (int e = -149; e <= 127 && bad < 5; e++) {
    float p2 = ldexpf(1.0f, e);
    bad += !shortest_agrees(p2, 1) + !shortest_agrees(nextafterf(p2, 0), 1) + !shortest_agrees(nextafterf(p2, INFINITY), 1);
  }
  for (int e = -1074; e <= 1023 && bad < 5; e += 7) {
    double p2 = ldexp(1.0, e);
    bad += !shortest_agrees(p2, 0) + !shortest_agrees(nextafter(p2, 0), 0) + !shortest_agrees(nextafter(p2, INFINITY), 0);
  }
  static const double decimals[] = {0.1, 0.2, 0.3, 1e-3, 3.14159, 2.5e-8, 1e-45, 6.02e23, 0.044715, 0.7978846};
  for (size_t i = 0; i < sizeof decimals / sizeof *decimals; i++)
    bad += !shortest_agrees(decimals[i], 0) + !shortest_agrees((float)decimals[i], 1);
  CHECK_EQ_INT(bad, 0);
}
