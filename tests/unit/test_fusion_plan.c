/* test_fusion_plan.c — the plan each fusion carries for buffer assignment and the emitter
 * (passes/fusion_plan.c): its facts on small hand-written fusions (worked out by reading the
 * fused computations), that it is made once and made again when the fusion changes, the fusion
 * builder the backend uses (passes/fusion_build.h), and that a module printed after fusion and
 * read back gets the same plans and still compiles without fallbacks. */
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes/fusion_build.h"
#include "passes/fusion_plan.h"
#include "passes/pass.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"

static const char *k_plans =
    "HloModule plans\n"
    "fused_add {\n  a = f32[8] parameter(0)\n  b = f32[] parameter(1)\n"
    "  bb = f32[8] broadcast(b), dimensions={}\n  e = f32[8] exponential(a)\n  ROOT s = f32[8] add(e, bb)\n}\n"
    "fused_tr {\n  t = f32[4,2] parameter(0)\n  ROOT r = f32[2,4] transpose(t), dimensions={1,0}\n}\n"
    "fused_rs {\n  q = f32[4,2] parameter(0)\n  ROOT rq = f32[8] reshape(q)\n}\n"
    "fused_mul {\n  m0 = f32[8] parameter(0)\n  m1 = f32[8] parameter(1)\n  ROOT m = f32[8] multiply(m0, m1)\n}\n"
    "sum {\n  l = f32[] parameter(0)\n  rr = f32[] parameter(1)\n  ROOT sa = f32[] add(l, rr)\n}\n"
    "fused_red {\n  v = f32[4,2] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT rv = f32[4] reduce(v, z), dimensions={1}, to_apply=sum\n}\n"
    "ENTRY e {\n  x = f32[8] parameter(0)\n  y = f32[] parameter(1)\n  w = f32[4,2] parameter(2)\n"
    "  f1 = f32[8] fusion(x, y), kind=kLoop, calls=fused_add\n"
    "  f2 = f32[2,4] fusion(w), kind=kLoop, calls=fused_tr\n"
    "  f3 = f32[8] fusion(w), kind=kLoop, calls=fused_rs\n"
    "  f4 = f32[8] fusion(x, x), kind=kLoop, calls=fused_mul\n"
    "  f5 = f32[4] fusion(w), kind=kInput, calls=fused_red\n"
    "  ROOT t = (f32[8], f32[2,4], f32[8], f32[8], f32[4]) tuple(f1, f2, f3, f4, f5)\n}\n";

TEST(fusion_plan_facts) {
  cx_module *m = cpu_parse(k_plans);
  if (!m) return;
  CHECK_OK(cx_fusion_plan_module(m));
  const cx_fusion_plan *p = cpu_find(m, "f1")->plan;
  CHECK(p && p->kind == CX_FUSION_LOOP && p->nops == 2 && p->expensive && !p->nreduces && !p->relabels && !p->dot);
  /* x is read at the output's index: the output may overwrite it; y is broadcast */
  CHECK(p && p->use[0].elementwise && !p->use[0].reused && p->use[0].in_place);
  CHECK(p && p->use[1].reused && !p->use[1].in_place);
  p = cpu_find(m, "f2")->plan; /* a transpose reads elements the output overwrote */
  CHECK(p && !p->expensive && !p->use[0].elementwise && !p->use[0].in_place && !p->relabels);
  p = cpu_find(m, "f3")->plan; /* a reshape of the parameter: the operand's bytes, no code */
  CHECK(p && p->relabels);
  p = cpu_find(m, "f4")->plan; /* one value bound twice is read twice per element */
  CHECK(p && p->use[0].reused && p->use[1].reused && !p->use[0].in_place && !p->use[1].in_place);
  p = cpu_find(m, "f5")->plan; /* only kLoop fusions run in place */
  CHECK(p && p->kind == CX_FUSION_INPUT && p->nreduces == 1 && p->use[0].elementwise && !p->use[0].in_place);
  /* a non-fusion has no plan */
  CHECK(!cx_fusion_plan_get(cpu_find(m, "x")));
  /* a clone starts without plans and gets the same ones */
  cx_module *c = cx_module_clone(m);
  CHECK(c && !cpu_find(c, "f1")->plan);
  if (c) CHECK_OK(cx_fusion_plan_module(c));
  p = c ? cpu_find(c, "f1")->plan : NULL;
  CHECK(p && p->body == cpu_find(c, "f1")->called[0] && p->use[0].in_place && !p->use[1].in_place);
  cx_module_free(c);
  cx_module_free(m);
}

/* Made once; a fusion that changed (kind, operands) gets a new one. */
TEST(fusion_plan_remade_when_the_fusion_changes) {
  cx_module *m = cpu_parse("HloModule o\n"
                           "fused_dot {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
                           "  c = f32[2,4] parameter(2)\n"
                           "  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                           "  ROOT s = f32[2,4] add(d, c)\n}\n"
                           "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[3,4] parameter(1)\n  z = f32[2,4] parameter(2)\n"
                           "  ROOT f = f32[2,4] fusion(x, y, z), kind=kOutput, calls=fused_dot\n}\n");
  if (!m) return;
  cx_instr *f = cpu_find(m, "f");
  const cx_fusion_plan *p = cx_fusion_plan_get(f);
  CHECK(p && p->kind == CX_FUSION_OUTPUT && p->dot && p->dot->op == CX_OP_DOT);
  CHECK(p && p->use[0].dot_operand && !p->use[0].elementwise && !p->use[2].dot_operand && p->use[2].elementwise);
  CHECK(p && !p->use[2].in_place); /* kOutput: the epilogue runs over the GEMM result instead */
  CHECK(cx_fusion_plan_get(f) == p);
  cx_instr *nd = NULL;
  CHECK_OK(cx_fusion_hoist(m->entry, f, (cx_instr *)p->dot, CX_FUSION_LOOP, &nd));
  CHECK(nd && nd->op == CX_OP_DOT && nd->parent == m->entry && f->nops == 4 && f->ops[3] == nd);
  CHECK(!cx_fusion_plan_fits(f->plan, f));
  const cx_fusion_plan *q = cx_fusion_plan_get(f);
  CHECK(q && q != p && q->kind == CX_FUSION_LOOP && q->nops == 4 && !q->dot);
  CHECK(q && q->use[3].in_place && q->use[2].in_place); /* the epilogue can run over either */
  CHECK_OK(cx_verify_module(m));
  cx_module_free(m);
}

/* cx_fusion_make: the parts become one fusion in place of the output part. */
TEST(fusion_build_make) {
  cx_module *m = cpu_parse("HloModule b\nENTRY e {\n  x = f32[4] parameter(0)\n  c = f64[4] convert(x)\n"
                           "  n = f64[4] negate(c)\n  ROOT t = (f64[4]) tuple(n)\n}\n");
  if (!m) return;
  cx_instr *parts[2] = {cpu_find(m, "c"), cpu_find(m, "n")}, *f = NULL;
  CHECK_OK(cx_fusion_make(m->entry, parts, 2, parts[1], CX_FUSION_LOOP, &f));
  CHECK(f && f->op == CX_OP_FUSION && f->a.fusion_kind == CX_FUSION_LOOP && f->nops == 1);
  CHECK(f && f->ops[0] == cpu_find(m, "x") && m->entry->root->ops[0] == f && f->called[0]->ninstrs == 3);
  CHECK(f && cx_module_comp_index(m, f->called[0]) < cx_module_comp_index(m, m->entry));
  CHECK_EQ_INT(m->entry->ninstrs, 3);
  CHECK_OK(cx_verify_module(m));
  cx_module_free(m);
}

/* Fused, printed and read back: the fusions get the same plans, and the text compiles. */
TEST(fusion_plan_survives_print_and_parse) {
  static const char *text =
      "HloModule rt\n"
      "mx {\n  ma = f32[] parameter(0)\n  mb = f32[] parameter(1)\n  ROOT m = f32[] maximum(ma, mb)\n}\n"
      "sum {\n  sa = f32[] parameter(0)\n  sb = f32[] parameter(1)\n  ROOT s = f32[] add(sa, sb)\n}\n"
      "ENTRY e {\n  x = f32[16,32] parameter(0)\n  w = f32[32,8] parameter(1)\n  bias = f32[8] parameter(2)\n"
      "  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
      "  rmax = f32[16] reduce(x, ninf), dimensions={1}, to_apply=mx\n"
      "  bm = f32[16,32] broadcast(rmax), dimensions={0}\n  sx = f32[16,32] subtract(x, bm)\n"
      "  ex = f32[16,32] exponential(sx)\n  rs = f32[16] reduce(ex, zero), dimensions={1}, to_apply=sum\n"
      "  bs = f32[16,32] broadcast(rs), dimensions={0}\n  sm = f32[16,32] divide(ex, bs)\n"
      "  d = f32[16,8] dot(sm, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  bb = f32[16,8] broadcast(bias), dimensions={1}\n  y = f32[16,8] add(d, bb)\n"
      "  ROOT r = f32[16,8] maximum(y, y)\n}\n";
  cx_module *m = cpu_parse(text);
  if (!m) return;
  cx_pass_ctx pc = {0};
  CHECK_OK(cx_pass_pipeline(&pc, m));
  CHECK_OK(cx_fusion_plan_module(m));
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  cx_module *back = cpu_parse(sb.buf);
  if (back) CHECK_OK(cx_fusion_plan_module(back));
  int nfusions = 0, kinds = 0;
  for (int ci = 0; back && ci < m->ncomps; ci++)
    for (int i = 0; i < m->comps[ci]->ninstrs; i++) {
      const cx_instr *f = m->comps[ci]->instrs[i];
      if (f->op != CX_OP_FUSION) continue;
      const cx_instr *g = cpu_find(back, f->name);
      const cx_fusion_plan *p = f->plan, *q = g ? g->plan : NULL;
      nfusions++;
      kinds |= 1 << f->a.fusion_kind;
      CHECK_MSG(p && q, "%s: no plan after reading it back", f->name);
      if (!p || !q) continue;
      CHECK(q->kind == p->kind && q->nops == p->nops && q->nreduces == p->nreduces && q->expensive == p->expensive &&
            q->relabels == p->relabels && !q->dot == !p->dot);
      for (int k = 0; k < p->nops; k++)
        CHECK_MSG(!memcmp(&p->use[k], &q->use[k], sizeof p->use[k]), "%s: operand %d is used differently", f->name, k);
    }
  CHECK(nfusions >= 2);
  CHECK(kinds & (1 << CX_FUSION_INPUT));
  CHECK(kinds & (1 << CX_FUSION_OUTPUT));
  char *x = cpu_ramp_nd("f32", (int64_t[]){16, 32}, 2, 7, 0.25, -0.5);
  char *w = cpu_ramp_nd("f32", (int64_t[]){32, 8}, 2, 5, 0.125, -0.25);
  char *bias = cpu_ramp("f32", 8, 3, 0.5, -0.5);
  const char *in[3] = {x, w, bias};
  char *stats = NULL;
  CHECK(sb.buf && cpu_check(sb.buf, 3, in, NULL, 1e-5, 1e-6, &stats, NULL));
  CHECK_EQ_INT(cpu_fallbacks(stats), 0);
  free(stats);
  free(x);
  free(w);
  free(bias);
  cx_sb_free(&sb);
  cx_module_free(back);
  cx_module_free(m);
}
