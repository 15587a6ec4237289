/* test_parser.c — HLO text parsing: JAX-style and old %name-style modules, forward references,
 * shapes, every modelled attribute, kept (raw) attributes and constants. Expected values are
 * read off the input text by hand. Errors are in test_parser_errors.c. */
#include "ir/ir.h"
#include "text/hlo.h"
#include "test.h"

static cx_module *parse_ok(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse failed: %s", cxla_context_errmsg(test_ctx()));
  return s == CXLA_OK ? m : NULL;
}

static cx_instr *find(cx_module *m, const char *name) {
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (!strcmp(m->comps[i]->instrs[j]->name, name)) return m->comps[i]->instrs[j];
  return NULL;
}

static const char *raw(const cx_attrs *a, const char *key) {
  for (int i = 0; i < a->nraw; i++)
    if (!strcmp(a->raw[i].key, key)) return a->raw[i].value;
  return NULL;
}

static int ints_eq(const cx_ints *v, int n, const int64_t *want) {
  if (v->n != n) return 0;
  for (int i = 0; i < n; i++)
    if (v->v[i] != want[i]) return 0;
  return 1;
}
#define INTS(v, ...) ints_eq(&(v), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static const char *jax_module =
    "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[]}, "
    "allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={xla.sdy.meshes=\"{}\"}\n"
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
    "  reduce.8 = f32[] reduce(Arg_0.1, constant.2), dimensions={0}, to_apply=region_0.4, "
    "metadata={op_name=\"jit(f)/jit(main)/reduce_sum[axes=(0,)]\" source_file=\"/tmp/f.py\" source_line=4}\n"
    "  ROOT sine.9 = f32[] sine(reduce.8), frontend_attributes={_xla_compute_type=\"host\"}\n"
    "}\n";

TEST(parser_jax_module) {
  cx_module *m = parse_ok(jax_module);
  if (!m) return;
  CHECK(!strcmp(m->name, "jit_f"));
  CHECK(!strcmp(m->filename, "t.hlo"));
  CHECK_EQ_INT(m->nraw, 3);
  CHECK(!strcmp(m->raw[0].key, "entry_computation_layout"));
  CHECK(!strcmp(m->raw[0].value, "{(f32[8]{0})->f32[]}"));
  CHECK(!strcmp(m->raw[1].value, "{true}"));
  CHECK(!strcmp(m->raw[2].value, "{xla.sdy.meshes=\"{}\"}"));
  CHECK_EQ_INT(m->ncomps, 2);
  cx_comp *region = m->comps[0], *main = m->comps[1];
  CHECK(!strcmp(region->name, "region_0.4") && !strcmp(main->name, "main.10"));
  CHECK(m->entry == main && main->is_entry && !region->is_entry);
  CHECK_EQ_INT(region->loc.line, 3);
  CHECK_EQ_INT(region->loc.col, 1);
  CHECK_EQ_INT(main->loc.line, 9);
  CHECK_EQ_INT(main->loc.col, 7);
  CHECK_EQ_INT(main->ninstrs, 4);
  CHECK_EQ_INT(region->nparams, 2);
  cx_instr *arg = find(m, "Arg_0.1"), *c = find(m, "constant.2"), *r = find(m, "reduce.8"), *s = find(m, "sine.9");
  CHECK(arg && c && r && s);
  if (!arg || !c || !r || !s) { cx_module_free(m); return; }
  CHECK_EQ_INT(arg->loc.line, 10);
  CHECK_EQ_INT(arg->loc.col, 3);
  CHECK(arg->op == CX_OP_PARAMETER && arg->a.index == 0);
  CHECK(arg->shape.type == CXLA_F32 && arg->shape.rank == 1 && arg->shape.dims[0] == 8 && arg->shape.has_layout);
  CHECK(!strcmp(raw(&arg->a, "metadata"), "{op_name=\"x\"}"));
  CHECK(c->op == CX_OP_CONSTANT && c->a.literal && cxla_literal_get_f64(c->a.literal, 0) == 0);
  CHECK(!c->shape.has_layout);
  CHECK(r->op == CX_OP_REDUCE && r->nops == 2 && r->ops[0] == arg && r->ops[1] == c);
  CHECK(INTS(r->a.dims, 0));
  CHECK(r->ncalled == 1 && r->called[0] == region);
  CHECK(!strcmp(raw(&r->a, "metadata"),
                "{op_name=\"jit(f)/jit(main)/reduce_sum[axes=(0,)]\" source_file=\"/tmp/f.py\" source_line=4}"));
  CHECK(s->op == CX_OP_SIN && main->root == s && s->ops[0] == r);
  CHECK(!strcmp(raw(&s->a, "frontend_attributes"), "{_xla_compute_type=\"host\"}"));
  CHECK(region->root == find(m, "add.7"));
  cx_module_free(m);
}

static const char *tf_module =
    "HloModule cluster_0__XlaCompiledKernel_true.v42\n"
    "\n"
    "%add_F32.v3 (lhs: f32[], rhs: f32[]) -> f32[] {\n"
    "  %lhs = f32[] parameter(0)\n"
    "  %rhs = f32[] parameter(1)\n"
    "  ROOT %add = f32[] add(f32[] %lhs, f32[] %rhs)\n"
    "}\n"
    "\n"
    "ENTRY %main (x: f32[2,3], t: (s32[], f32[2,3])) -> (f32[2], s32[]) {\n"
    "  %x = f32[2,3]{1,0} parameter(0)\n"
    "  %t = (s32[], f32[2,3]{1,0}) parameter(1)\n"
    "  %i = s32[] get-tuple-element((s32[], f32[2,3]{1,0}) %t), index=0\n"
    "  %zero = f32[] constant(0)\n"
    "  %sum = f32[2]{0} reduce(f32[2,3]{1,0} %x, f32[] %zero), dimensions={1}, to_apply=%add_F32.v3\n"
    "  ROOT %out = (f32[2]{0}, s32[]) tuple(f32[2]{0} %sum, s32[] %i)\n"
    "}\n";

TEST(parser_tf_style) {
  cx_module *m = parse_ok(tf_module);
  if (!m) return;
  CHECK(!strcmp(m->name, "cluster_0__XlaCompiledKernel_true.v42"));
  CHECK_EQ_INT(m->nraw, 0);
  CHECK_EQ_INT(m->ncomps, 2);
  CHECK(!strcmp(m->comps[0]->name, "add_F32.v3"));
  cx_instr *t = find(m, "t"), *i = find(m, "i"), *out = find(m, "out");
  CHECK(t && t->shape.type == CXLA_TUPLE && t->shape.ntuple == 2 && t->shape.tuple[1].dims[1] == 3);
  CHECK(i && i->op == CX_OP_GET_TUPLE_ELEMENT && i->a.index == 0 && i->ops[0] == t);
  CHECK(out && m->entry->root == out && out->nops == 2);
  CHECK_EQ_INT(m->entry->loc.line, 9);
  CHECK_EQ_INT(m->entry->loc.col, 7);
  CHECK_EQ_INT(find(m, "x")->loc.col, 3);
  cx_module_free(m);
}

TEST(parser_forward_references) {
  cx_module *m = parse_ok(
      "HloModule fwd\n"
      "ENTRY main {\n"
      "  ROOT r = f32[] call(b), to_apply=callee\n"
      "  b = f32[] negate(a)\n"
      "  a = f32[] parameter(0)\n"
      "}\n"
      "callee {\n"
      "  p = f32[] parameter(0)\n"
      "  ROOT q = f32[] add(p, p)\n"
      "}\n");
  if (!m) return;
  CHECK_EQ_INT(m->ncomps, 2);
  CHECK(!strcmp(m->comps[0]->name, "callee") && !strcmp(m->comps[1]->name, "main"));
  CHECK(m->entry == m->comps[1]);
  cx_comp *c = m->entry;
  CHECK(!strcmp(c->instrs[0]->name, "a") && !strcmp(c->instrs[1]->name, "b") && !strcmp(c->instrs[2]->name, "r"));
  CHECK(c->root == c->instrs[2] && c->root->called[0] == m->comps[0]);
  cx_module_free(m);
}

TEST(parser_implicit_root_and_entry) {
  cx_module *m = parse_ok("HloModule x\nfirst {\n  a = s32[] constant(1)\n}\nsecond {\n  b = s32[] constant(2)\n  c = s32[] negate(b)\n}\n");
  if (!m) return;
  CHECK(m->entry == m->comps[1] && m->comps[1]->is_entry && !m->comps[0]->is_entry);
  CHECK(!strcmp(m->entry->root->name, "c"));
  CHECK(!strcmp(m->comps[0]->root->name, "a"));
  cx_module_free(m);
  /* A ROOT in the middle stays where it is. */
  m = parse_ok("HloModule y\nENTRY e {\n  a = s32[] constant(1)\n  ROOT b = s32[] negate(a)\n  c = s32[] abs(a)\n}\n");
  if (!m) return;
  CHECK(!strcmp(m->entry->root->name, "b") && !strcmp(m->entry->instrs[2]->name, "c"));
  cx_module_free(m);
}

TEST(parser_bom_and_crlf) {
  cx_module *m = parse_ok("\xef\xbb\xbfHloModule w\r\nENTRY e {\r\n  a = f32[] parameter(0), metadata={op_name=\"a\"}\r\n  ROOT b = f32[] negate(a)\r\n}\r\n");
  if (!m) return;
  cx_instr *a = find(m, "a");
  CHECK(a && a->loc.line == 3 && a->loc.col == 3 && !strcmp(raw(&a->a, "metadata"), "{op_name=\"a\"}"));
  CHECK_EQ_INT(m->entry->loc.col, 7);
  cx_module_free(m);
}

TEST(parser_shapes) {
  cx_module *m = parse_ok(
      "HloModule s\nENTRY e {\n"
      "  a = (f32[2], (s32[], u8[3]), ()) parameter(0)\n"
      "  b = token[] after-all()\n"
      "  c = f32[<=10,3]{0,1} parameter(1)\n"
      "  d = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(2)\n"
      "  e = pred[0] parameter(3)\n"
      "  f = f16[]{} parameter(4)\n"
      "  ROOT g = () tuple()\n"
      "}\n");
  if (!m) return;
  cx_instr *a = find(m, "a"), *b = find(m, "b"), *c = find(m, "c"), *d = find(m, "d"), *e = find(m, "e"), *f = find(m, "f");
  CHECK(a->shape.type == CXLA_TUPLE && a->shape.ntuple == 3);
  CHECK(a->shape.tuple[1].type == CXLA_TUPLE && a->shape.tuple[1].tuple[1].type == CXLA_U8);
  CHECK(a->shape.tuple[2].type == CXLA_TUPLE && a->shape.tuple[2].ntuple == 0);
  CHECK(b->shape.type == CXLA_TOKEN && b->shape.rank == 0);
  CHECK(c->shape.dynamic == 1 && c->shape.dims[0] == 10 && c->shape.minor_to_major[0] == 0 && c->shape.minor_to_major[1] == 1);
  CHECK(d->shape.type == CXLA_BF16 && d->shape.layout_extra && !strcmp(d->shape.layout_extra, "T(8,128)(2,1)S(1)"));
  CHECK(e->shape.type == CXLA_PRED && e->shape.rank == 1 && e->shape.dims[0] == 0);
  CHECK(f->shape.type == CXLA_F16 && f->shape.has_layout && f->shape.rank == 0);
  cx_module_free(m);
}

TEST(parser_attrs_shape_ops) {
  cx_module *m = parse_ok(
      "HloModule a\nENTRY e {\n"
      "  p = f32[4,6] parameter(0)\n"
      "  b = f32[3,4,6] broadcast(p), dimensions={1,2}\n"
      "  t = f32[6,4] transpose(p), dimensions={1,0}\n"
      "  r = f32[4,6] reverse(p), dimensions={0}\n"
      "  s = f32[2,2] slice(p), slice={[0:2], [1:5:2]}\n"
      "  z = f32[] constant(0)\n"
      "  pd = f32[5,12] pad(p, z), padding=0_1x-1_2_2\n"
      "  i = s32[] constant(1)\n"
      "  ds = f32[2,3] dynamic-slice(p, i, i), dynamic_slice_sizes={2,3}\n"
      "  io = s32[4,6] iota(), iota_dimension=1\n"
      "  cc = f32[8,6] concatenate(p, p), dimensions={0}\n"
      "  g = f32[] get-tuple-element(tp), index=1\n"
      "  tp = (f32[], f32[]) tuple(z, z)\n"
      "  cp = pred[4,6] compare(p, p), direction=GE, type=TOTALORDER\n"
      "  c2 = pred[4,6] compare(p, p), direction=NE\n"
      "  rp = f32[4,6] reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"
      "  ROOT cv = s32[4,6] convert(p)\n"
      "}\n");
  if (!m) return;
  CHECK(INTS(find(m, "b")->a.dims, 1, 2));
  CHECK(INTS(find(m, "t")->a.dims, 1, 0));
  CHECK(INTS(find(m, "r")->a.dims, 0));
  cx_attrs *s = &find(m, "s")->a;
  CHECK(INTS(s->slice_start, 0, 1) && INTS(s->slice_limit, 2, 5) && INTS(s->slice_stride, 1, 2));
  cx_attrs *pd = &find(m, "pd")->a;
  CHECK(INTS(pd->pad_lo, 0, -1) && INTS(pd->pad_hi, 1, 2) && INTS(pd->pad_interior, 0, 2));
  CHECK(INTS(find(m, "ds")->a.dims, 2, 3) && find(m, "ds")->nops == 3);
  CHECK_EQ_INT(find(m, "io")->a.index, 1);
  CHECK(INTS(find(m, "cc")->a.dims, 0));
  CHECK_EQ_INT(find(m, "g")->a.index, 1);
  CHECK(find(m, "cp")->a.dir == CXLA_GE && find(m, "cp")->a.cmp_type == CX_CMP_TOTALORDER);
  CHECK(find(m, "c2")->a.dir == CXLA_NE && find(m, "c2")->a.cmp_type == CX_CMP_DEFAULT);
  CHECK(find(m, "rp")->a.exponent_bits == 5 && find(m, "rp")->a.mantissa_bits == 10);
  cx_module_free(m);
}

TEST(parser_attrs_dot_conv_window) {
  cx_module *m = parse_ok(
      "HloModule a\nmax {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT m = f32[] maximum(x, y)\n}\n"
      "ge {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT c = pred[] compare(x, y), direction=GE\n}\n"
      "ENTRY e {\n"
      "  l = f32[2,3,4] parameter(0)\n"
      "  r = f32[2,4,5] parameter(1)\n"
      "  d = f32[2,3,5] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={default,default}\n"
      "  in = f32[1,8,8,3] parameter(2)\n"
      "  k = f32[3,3,3,16] parameter(3)\n"
      "  cv = f32[1,4,4,16] convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1\n"
      "  c1 = f32[1,16,8] convolution(in, k), window={size=3}, dim_labels=bf0_oi0->bf0, feature_group_count=3\n"
      "  c2 = f32[1,16,8] convolution(in, k), dim_labels=0bf_io0->0bf\n"
      "  z = f32[] constant(0)\n"
      "  rw = f32[1,4,4,3] reduce-window(in, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n"
      "  ROOT ss = f32[1,8,8,3] select-and-scatter(in, rw, z), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=max\n"
      "}\n");
  if (!m) return;
  cx_attrs *d = &find(m, "d")->a;
  CHECK(INTS(d->dot.lhs_batch, 0) && INTS(d->dot.lhs_contract, 2) && INTS(d->dot.rhs_batch, 0) && INTS(d->dot.rhs_contract, 1));
  CHECK(!strcmp(raw(d, "operand_precision"), "{default,default}"));
  cx_attrs *cv = &find(m, "cv")->a;
  CHECK_EQ_INT(cv->window.rank, 2);
  if (cv->window.rank == 2) {
    cx_window_dim *w = cv->window.d;
    CHECK(w[0].size == 3 && w[0].stride == 2 && w[0].pad_lo == 1 && w[0].pad_hi == 1 && w[0].rhs_dilate == 2 && w[0].reversal == 0);
    CHECK(w[1].pad_lo == 0 && w[1].pad_hi == 1 && w[1].lhs_dilate == 1 && w[1].reversal == 1);
  }
  CHECK(cv->conv && cv->conv->nspatial == 2 && cv->conv->in_batch == 0 && cv->conv->in_feature == 3);
  CHECK(cv->conv && cv->conv->in_spatial[0] == 1 && cv->conv->k_in == 2 && cv->conv->k_out == 3 &&
        cv->conv->out_feature == 3);
  cx_attrs *c1 = &find(m, "c1")->a;
  CHECK(c1->window.rank == 1 && c1->window.d[0].size == 3 && c1->window.d[0].stride == 1 && c1->window.d[0].lhs_dilate == 1);
  CHECK(c1->conv && c1->conv->nspatial == 1 && c1->conv->in_feature == 1 && c1->conv->k_out == 0 &&
        c1->conv->k_in == 1 && c1->feature_group_count == 3);
  cx_attrs *c2 = &find(m, "c2")->a;
  CHECK(c2->window.rank == 0 && c2->conv && c2->conv->in_spatial[0] == 0 && c2->conv->in_batch == 1 &&
        c2->conv->k_in == 0 && c2->batch_group_count == 1);
  cx_instr *rw = find(m, "rw"), *ss = find(m, "ss");
  CHECK(rw->a.window.rank == 4 && rw->a.window.d[1].stride == 2 && rw->ncalled == 1 && !strcmp(rw->called[0]->name, "max"));
  CHECK(ss->ncalled == 2 && !strcmp(ss->called[0]->name, "ge") && !strcmp(ss->called[1]->name, "max"));
  cx_module_free(m);
}

TEST(parser_attrs_gather_scatter_sort) {
  cx_module *m = parse_ok(
      "HloModule a\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "lt {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT c = pred[] compare(x, y), direction=LT\n}\n"
      "ENTRY e {\n"
      "  op = f32[5,2] parameter(0)\n"
      "  ix = s32[5,1] parameter(1)\n"
      "  g = f32[5,1] gather(op, ix), offset_dims={1}, collapsed_slice_dims={}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}, indices_are_sorted=true\n"
      "  up = f32[5,1] parameter(2)\n"
      "  sc = f32[5,2] scatter(op, ix, up), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add\n"
      "  so = f32[5,2] sort(op), dimensions={1}, is_stable=true, to_apply=lt\n"
      "  ROOT mp = f32[5,2] map(op, so), dimensions={0,1}, to_apply=add\n"
      "}\n");
  if (!m) return;
  cx_gather_dims *g = &find(m, "g")->a.gather;
  CHECK(INTS(g->offset_dims, 1) && g->collapsed_slice_dims.n == 0 && INTS(g->start_index_map, 1));
  CHECK(INTS(g->operand_batching_dims, 0) && INTS(g->start_indices_batching_dims, 0) && INTS(g->slice_sizes, 1, 1));
  CHECK(g->index_vector_dim == 1 && g->indices_are_sorted);
  cx_scatter_dims *s = &find(m, "sc")->a.scatter;
  CHECK(INTS(s->update_window_dims, 1) && s->inserted_window_dims.n == 0 && INTS(s->scatter_dims_to_operand_dims, 1));
  CHECK(INTS(s->input_batching_dims, 0) && INTS(s->scatter_indices_batching_dims, 0));
  CHECK(s->index_vector_dim == 1 && s->indices_are_sorted && s->unique_indices);
  CHECK(find(m, "sc")->called[0] == m->comps[0]);
  cx_instr *so = find(m, "so");
  CHECK(INTS(so->a.dims, 1) && so->a.is_stable && so->called[0] == m->comps[1]);
  CHECK(INTS(find(m, "mp")->a.dims, 0, 1));
  cx_module_free(m);
}

TEST(parser_attrs_control_flow) {
  cx_module *m = parse_ok(
      "HloModule cf\n"
      "ENTRY main {\n"
      "  p = s32[] parameter(0)\n"
      "  w = s32[] while(p), condition=cond, body=body\n"
      "  b = pred[] constant(true)\n"
      "  c1 = s32[] conditional(b, p, p), true_computation=body, false_computation=neg\n"
      "  c2 = s32[] conditional(p, p, p, p), branch_computations={body, neg, %body}\n"
      "  f = s32[] fusion(p), kind=kLoop, calls=neg\n"
      "  cc = s32[] custom-call(p), custom_call_target=\"my\\\"target\\n\", api_version=API_VERSION_TYPED_FFI, backend_config={\"a\": [1, {\"b\": \"}\"}]}\n"
      "  ROOT t = (s32[], s32[], s32[], s32[], s32[]) tuple(w, c1, c2, f, cc)\n"
      "}\n"
      "cond {\n  x = s32[] parameter(0)\n  k = s32[] constant(10)\n  ROOT lt = pred[] compare(x, k), direction=LT\n}\n"
      "body {\n  x = s32[] parameter(0)\n  ROOT y = s32[] add(x, x)\n}\n"
      "neg {\n  x = s32[] parameter(0)\n  ROOT y = s32[] negate(x)\n}\n");
  if (!m) return;
  CHECK_EQ_INT(m->ncomps, 4);
  CHECK(!strcmp(m->comps[3]->name, "main") && m->entry == m->comps[3]);
  cx_comp *cond = cx_module_find_comp(m, "cond"), *body = cx_module_find_comp(m, "body"), *neg = cx_module_find_comp(m, "neg");
  cx_instr *w = find(m, "w"), *c1 = find(m, "c1"), *c2 = find(m, "c2"), *f = find(m, "f"), *cc = find(m, "cc");
  CHECK(w->ncalled == 2 && w->called[0] == cond && w->called[1] == body);
  CHECK(c1->ncalled == 2 && c1->called[0] == body && c1->called[1] == neg);
  CHECK(c2->ncalled == 3 && c2->called[0] == body && c2->called[1] == neg && c2->called[2] == body);
  CHECK(f->ncalled == 1 && f->called[0] == neg && f->a.fusion_kind == CX_FUSION_LOOP);
  CHECK(!strcmp(cc->a.custom_call_target, "my\"target\n"));
  CHECK(!strcmp(raw(&cc->a, "api_version"), "API_VERSION_TYPED_FFI"));
  CHECK(cc->a.backend_config && !strcmp(cc->a.backend_config, "{\"a\": [1, {\"b\": \"}\"}]}")); /* modelled, verbatim */
  cx_module_free(m);
}

TEST(parser_raw_attributes_verbatim) {
  cx_module *m = parse_ok(
      "HloModule r, is_scheduled=true, num_partitions=1\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0), sharding={devices=[2,1]0,1}, parameter_replication={false}\n"
      "  a = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add\n"
      "  q = f32[4] add(p, p), control-predecessors={a}, backend_config=\"x\\\"y\", origin={{\"v1\"}}, statistics={visualizing_index=1,stat-1=33}\n"
      "  r = f32[4] rng(p, p), distribution=rng_uniform\n"
      "  ROOT s = f32[4] custom-call(q, r), custom_call_target=\"t\", literal=s32[2]{0} {1, 2}, outfeed_shape=(u32[3]{0}, pred[])\n"
      "}, execution_thread=\"main\"\n"
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT z = f32[] add(x, y)\n}\n");
  if (!m) return;
  CHECK(m->nraw == 2 && !strcmp(m->raw[1].key, "num_partitions") && !strcmp(m->raw[1].value, "1"));
  cx_instr *p = find(m, "p"), *a = find(m, "a"), *q = find(m, "q"), *r = find(m, "r"), *s = find(m, "s");
  CHECK(!strcmp(raw(&p->a, "sharding"), "{devices=[2,1]0,1}") && p->a.nraw == 2);
  /* replica groups and the channel are modelled (collectives run), not kept raw */
  CHECK(a->a.replica_groups && a->a.replica_groups->n == 2 && a->a.replica_groups->ids[2] == 2 && a->ncalled == 1);
  CHECK(a->a.channel_id == 1 && a->a.use_global_device_ids && !raw(&a->a, "replica_groups"));
  CHECK(!strcmp(raw(&q->a, "control-predecessors"), "{a}"));
  CHECK(!strcmp(raw(&q->a, "backend_config"), "\"x\\\"y\""));
  CHECK(!strcmp(raw(&q->a, "origin"), "{{\"v1\"}}"));
  CHECK(r->a.rng_distribution == CX_RNG_UNIFORM && r->a.nraw == 0); /* a modelled attribute */
  CHECK(!strcmp(raw(&s->a, "literal"), "s32[2]{0} {1, 2}"));
  CHECK(!strcmp(raw(&s->a, "outfeed_shape"), "(u32[3]{0}, pred[])"));
  /* The order of kept attributes is the order in the text. */
  CHECK(!strcmp(q->a.raw[0].key, "control-predecessors") && !strcmp(q->a.raw[3].key, "statistics"));
  cx_module_free(m);
}

TEST(parser_comments_and_sections) {
  cx_module *m = parse_ok(
      "// leading comment\n"
      "HloModule c /* after name */, entry_computation_layout={()->s32[]}\n"
      "\n"
      "FileNames\n1 \"a.py\"\n2 \"b.py\"\n\n"
      "FunctionNames\n1 \"f\"\n\n"
      "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=5}\n\n"
      "StackFrames\n1 {file_location_id=1 parent_frame_id=0}\n\n"
      "ENTRY e { // body\n"
      "  /* a */ a = s32[] /* b */ constant(/* c */ 1) // d\n"
      "  ROOT t = (s32[], s32[]) tuple(a, /*index=1*/a), metadata={op_name=\"t\" stack_frame_id=1} // end\n"
      "}\n"
      "// trailing\n");
  if (!m) return;
  CHECK(m->nraw == 1 && !strcmp(m->raw[0].value, "{()->s32[]}"));
  cx_instr *a = find(m, "a"), *t = find(m, "t");
  CHECK(a && a->loc.line == 18 && a->loc.col == 11);
  CHECK(t && t->nops == 2 && !strcmp(raw(&t->a, "metadata"), "{op_name=\"t\" stack_frame_id=1}"));
  cx_module_free(m);
}

static double elem(cx_module *m, const char *name, int64_t i) { return cxla_literal_get_f64(find(m, name)->a.literal, i); }

TEST(parser_constants) {
  cx_module *m = parse_ok(
      "HloModule k\nENTRY e {\n"
      "  a = f32[] constant(3.5)\n"
      "  b = s32[] constant(-7)\n"
      "  c = pred[] constant(true)\n"
      "  d = f32[3] constant({1, 2, 3})\n"
      "  e = s32[2,2] constant({ { 1, 2 }, { 3, 4 } })\n"
      "  f = f32[0] constant({})\n"
      "  g = f32[6] constant({inf, -inf, nan, -nan, 1e-05, 0x1p3})\n"
      "  h = (s32[], f32[2]) constant((1, {2, 3}))\n"
      "  i = f32[2] constant(f32[2] {1, 2})\n"
      "  j = f32[2]{0} constant(f32[2]{0} {5, 6})\n"
      "  k = pred[3] constant({1, 0, true})\n"
      "  l = f32[2,0,3] constant({ { /*i0=0*/ }, { /*i0=1*/ } })\n"
      "  n = u64[] constant(18446744073709551615)\n"
      "  o = s64[] constant(-9223372036854775808)\n"
      "  q = f64[] constant(0.1)\n"
      "  r = f16[] constant(-0)\n"
      "  s = bf16[2] constant({1.5, -2})\n"
      "  ROOT t = s8[2] constant({-128, 127})\n"
      "}\n");
  if (!m) return;
  CHECK(elem(m, "a", 0) == 3.5 && elem(m, "b", 0) == -7 && elem(m, "c", 0) == 1);
  CHECK(elem(m, "d", 0) == 1 && elem(m, "d", 2) == 3);
  CHECK(elem(m, "e", 1) == 2 && elem(m, "e", 2) == 3 && elem(m, "e", 3) == 4);
  CHECK(cxla_literal_element_count(find(m, "f")->a.literal) == 0);
  CHECK(isinf(elem(m, "g", 0)) && elem(m, "g", 1) < 0 && isinf(elem(m, "g", 1)) && isnan(elem(m, "g", 2)));
  CHECK(isnan(elem(m, "g", 3)) && signbit(elem(m, "g", 3)) && !signbit(elem(m, "g", 2)));
  CHECK(elem(m, "g", 4) == (double)1e-05f && elem(m, "g", 5) == 8);
  cxla_literal *h = find(m, "h")->a.literal;
  CHECK(cxla_literal_tuple_size(h) == 2 && cxla_literal_get_f64(cxla_literal_tuple_get(h, 0), 0) == 1 &&
        cxla_literal_get_f64(cxla_literal_tuple_get(h, 1), 1) == 3);
  CHECK(elem(m, "i", 1) == 2 && elem(m, "j", 0) == 5);
  CHECK(elem(m, "k", 0) == 1 && elem(m, "k", 1) == 0 && elem(m, "k", 2) == 1);
  CHECK(cxla_literal_element_count(find(m, "l")->a.literal) == 0);
  CHECK(*(uint64_t *)cxla_literal_data(find(m, "n")->a.literal) == UINT64_MAX);
  CHECK(*(int64_t *)cxla_literal_data(find(m, "o")->a.literal) == INT64_MIN);
  CHECK(*(double *)cxla_literal_data(find(m, "q")->a.literal) == 0.1);
  CHECK(*(uint16_t *)cxla_literal_data(find(m, "r")->a.literal) == 0x8000);
  CHECK(((uint16_t *)cxla_literal_data(find(m, "s")->a.literal))[0] == 0x3fc0);
  CHECK(((uint16_t *)cxla_literal_data(find(m, "s")->a.literal))[1] == 0xc000);
  CHECK(elem(m, "t", 0) == -128 && elem(m, "t", 1) == 127);
  cx_module_free(m);
}
