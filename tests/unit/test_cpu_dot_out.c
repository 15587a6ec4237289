/* test_cpu_dot_out.c — a dot whose result a kernel only transposes (attention's heads,
 * [b, h, t, dh] -> [b, t, h, dh]) writes the transposed layout itself (passes/dot_out_transpose.c):
 * the fold and its GEMM plan worked out by hand, where it must not fold, and the results
 * against the interpreter on shapes whose b, h, t and dh all differ (a stride taken from the
 * wrong dim reads or writes elsewhere), on one and two threads (two split C's rows), the
 * transformer step's own shapes included. Small integer values: the f32 sums are exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/sequencer.h"
#include "test_cpu_helpers.h"

/* The module after fusion: the dot, and a kLoop fusion that transposes (and reshapes) it. */
#define FUSED(a, b, d, dims, t, perm, body, out)                                                           \
  "HloModule f\nfused {\n  p = " d " parameter(0)\n  t = " t " transpose(p), dimensions={" perm "}\n" body \
  "}\nENTRY main {\n  a = " a " parameter(0)\n  b = " b " parameter(1)\n  d = " d " dot(a, b), " dims      \
  "\n  ROOT f = " out " fusion(d), kind=kLoop, calls=fused\n}\n"

/* p·v: p [b, h, t, s], v [b, s, h, dh] -> [b, h, t, dh] -> [b, t, h, dh] -> [b, t, h*dh] */
#define PV FUSED("f32[2,3,5,6]", "f32[2,6,3,4]", "f32[2,3,5,4]",                                              \
                 "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}", \
                 "f32[2,5,3,4]", "0,2,1,3", "  ROOT r = f32[2,5,12] reshape(t)\n", "f32[2,5,12]")
/* dv's kind: x [b, s, h, dh], g [b, h, s, t] -> [b, h, dh, t] -> [b, t, h, dh]: C transposed */
#define XG FUSED("f32[2,6,3,4]", "f32[2,3,6,5]", "f32[2,3,4,5]",                                              \
                 "lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}", \
                 "f32[2,5,3,4]", "0,3,1,2", "  ROOT r = f32[2,5,12] reshape(t)\n", "f32[2,5,12]")

static cx_instr *lowered_root(cx_module *m, const cx_gemm_target *t) {
  if (!m) return NULL;
  CHECK_OK(cx_lower_library_ops(m, t));
  return m->entry->root;
}

static int has_comp(const cx_module *m, const char *name) {
  for (int i = 0; m && i < m->ncomps; i++)
    if (m->comps[i]->name && !strcmp(m->comps[i]->name, name)) return 1;
  return 0;
}

TEST(cpu_dot_out_plans) {
  cx_module *m = cpu_parse(PV);
  cx_instr *f = lowered_root(m, &cx_cpu_gemm);
  CHECK(m && !has_comp(m, "fused")); /* the old transpose's body went with it */
  int64_t cst[CXLA_MAX_RANK];
  const cx_instr *d = f ? cx_dot_out_fusion(f, cst) : NULL;
  cx_gemm_plan p;
  const char *why = NULL;
  CHECK(f && f->op == CX_OP_FUSION && f->a.fusion_kind == CX_FUSION_OUTPUT && f->nops == 2 && !strcmp(f->name, "f"));
  CHECK(d && cst[0] == 60 && cst[1] == 4 && cst[2] == 12 && cst[3] == 1);
  CHECK(d && cx_dot_plan_out(d, cst, &cx_cpu_gemm, &p, &why) == 1);
  /* C: t rows 12 apart, products b 60 and h 4 apart; A and B read in place as before */
  CHECK_MSG(d && !p.swap_ab && p.m == 5 && p.n == 4 && p.k == 6 && p.ldc == 12 && p.stride_c == 60 &&
                p.stride_c2 == 4 && p.batch == 6 && p.batch_inner == 3,
            "swap %d m %lld n %lld ldc %lld sc %lld sc2 %lld", p.swap_ab, (long long)p.m, (long long)p.n,
            (long long)p.ldc, (long long)p.stride_c, (long long)p.stride_c2);
  CHECK(d && !p.trans_a && p.lda == 6 && p.stride_a == 90 && p.stride_a2 == 30);
  CHECK(d && !p.trans_b && p.ldb == 12 && p.stride_b == 72 && p.stride_b2 == 4);
  cx_module_free(m);
  /* C's dh is its unit stride: Cᵀ = gᵀ·x, t rows of 12 */
  m = cpu_parse(XG);
  f = lowered_root(m, &cx_cpu_gemm);
  d = f ? cx_dot_out_fusion(f, cst) : NULL;
  CHECK(d && cx_dot_plan_out(d, cst, &cx_cpu_gemm, &p, &why) == 1);
  CHECK(d && p.swap_ab && p.m == 5 && p.n == 4 && p.k == 6 && p.ldc == 12 && p.stride_c == 60 && p.stride_c2 == 4);
  CHECK(d && p.trans_a && p.lda == 5 && p.stride_a == 90 && p.stride_a2 == 30);
  CHECK(d && !p.trans_b && p.ldb == 12 && p.stride_b == 72 && p.stride_b2 == 4);
  cx_module_free(m);
}

TEST(cpu_dot_out_leaves_what_it_must) {
  /* a target whose GEMMs write C row-major only (the gpu's): the transpose stays a kernel */
  static const cx_gemm_target rowmajor = {.half = 1};
  cx_module *m = cpu_parse(PV);
  cx_instr *f = lowered_root(m, &rowmajor);
  const char *why = NULL;
  int64_t cst[CXLA_MAX_RANK] = {0};
  cx_gemm_plan p;
  CHECK(f && f->a.fusion_kind == CX_FUSION_LOOP && f->ops[0]->op == CX_OP_DOT && !cx_dot_out_fusion(f, cst));
  CHECK(has_comp(m, "fused"));
  CHECK(f && cx_dot_plan_out(f->ops[0], cst, &rowmajor, &p, &why) == 0);
  cx_module_free(m);
  /* the free dims of the lhs swapped: no stride for M */
  m = cpu_parse(FUSED("f32[3,4,6]", "f32[6,5]", "f32[3,4,5]", "lhs_contracting_dims={2}, rhs_contracting_dims={0}",
                      "f32[4,3,5]", "1,0,2", "", "f32[4,3,5]"));
  f = lowered_root(m, &cx_cpu_gemm);
  CHECK(f && f->a.fusion_kind == CX_FUSION_LOOP);
  cx_module_free(m);
  /* the dot read twice: it is computed once, into its own buffer */
  m = cpu_parse("HloModule f\nfused {\n  p = f32[2,3,4] parameter(0)\n  ROOT t = f32[3,2,4] transpose(p), dimensions={1,0,2}\n}\n"
                "ENTRY main {\n  a = f32[2,3,6] parameter(0)\n  b = f32[2,6,4] parameter(1)\n"
                "  d = f32[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}\n  f = f32[3,2,4] fusion(d), kind=kLoop, calls=fused\n"
                "  ROOT r = (f32[2,3,4], f32[3,2,4]) tuple(d, f)\n}\n");
  lowered_root(m, &cx_cpu_gemm);
  f = m ? cpu_find(m, "f") : NULL;
  CHECK(f && f->a.fusion_kind == CX_FUSION_LOOP);
  cx_module_free(m);
}

/* The integer after "kernels=" in compile stats, or -1. */
static int kernels(const char *stats) {
  const char *p = stats ? strstr(stats, "kernels=") : NULL;
  return p ? atoi(p + 8) : -1;
}

/* transpose(dot) as written, through the whole pipeline, against the interpreter. */
static void check_module(const char *text, const char *ta, const int64_t *da, int ra, const int64_t *db, int rb) {
  char *a = cpu_ramp_nd(ta, da, ra, 7, 1, -3), *b = cpu_ramp_nd(ta, db, rb, 5, 1, -2);
  const char *in[2] = {a, b};
  for (int th = 1; th <= 2; th++) {
    char *stats = NULL;
    int ok = cpu_check(text, 2, in, th == 1 ? "--threads=1" : "--threads=2", 0, 0, &stats, NULL);
    CHECK_MSG(ok, "threads %d:\n%s", th, text);
    /* one GEMM and no kernel: the transpose went into it */
    if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0 && kernels(stats) == 0 && strstr(stats, "gemms=1"), "%s\n%s", stats, text);
    free(stats);
  }
  free(a);
  free(b);
}

/* attention's dot, its transpose, and what reads that (out, tail) */
#define ATT(ty, a, b, d, dims, t, perm, out, tail)                                                          \
  "HloModule att\nENTRY main {\n  a = " ty a " parameter(0)\n  b = " ty b " parameter(1)\n  d = " ty d     \
  " dot(a, b), " dims "\n  t = " ty t " transpose(d), dimensions={" perm "}\n"                            \
  "  ROOT r = " ty out tail "\n}\n"

TEST(cpu_dot_out_matches_interp) {
  /* p·v: b 2, h 3, t 5, s 6, dh 4 */
  int64_t p[4] = {2, 3, 5, 6}, v[4] = {2, 6, 3, 4}, x[4] = {2, 6, 3, 4}, g[4] = {2, 3, 6, 5};
  check_module(ATT("f32", "[2,3,5,6]", "[2,6,3,4]", "[2,3,5,4]",
                   "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}",
                   "[2,5,3,4]", "0,2,1,3", "[2,5,12]", " reshape(t)"),
               "f32", p, 4, v, 4);
  /* C transposed (x·g over s, [b, h, dh, t] -> [b, t, h, dh]), in f64, no reshape after it (a
   * copy, which the simplifier drops) */
  check_module(ATT("f64", "[2,6,3,4]", "[2,3,6,5]", "[2,3,4,5]",
                   "lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}",
                   "[2,5,3,4]", "0,3,1,2", "[2,5,3,4]", " copy(t)"),
               "f64", x, 4, g, 4);
  /* the lhs read transposed ([b, h, s, t] contracting s), C [b, t, h, dh] */
  check_module(ATT("f32", "[2,3,6,5]", "[2,6,3,4]", "[2,3,5,4]",
                   "lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}",
                   "[2,5,3,4]", "0,2,1,3", "[2,5,12]", " reshape(t)"),
               "f32", g, 4, v, 4);
  /* one batch level, the batch between M and N: [b, m, n] -> [m, b, n] (ldc = b*n) */
  int64_t l[3] = {2, 3, 6}, r[3] = {2, 6, 4};
  check_module(ATT("f32", "[2,3,6]", "[2,6,4]", "[2,3,4]",
                   "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
                   "[3,2,4]", "1,0,2", "[3,8]", " reshape(t)"),
               "f32", l, 3, r, 3);
}

/* The transformer step's attention (b 8, h 4, t 128, dh 32): p·v and dv's kind. */
TEST(cpu_dot_out_transformer_shapes) {
  int64_t p[4] = {8, 4, 128, 128}, v[4] = {8, 128, 4, 32};
  check_module(ATT("f32", "[8,4,128,128]", "[8,128,4,32]", "[8,4,128,32]",
                   "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}",
                   "[8,128,4,32]", "0,2,1,3", "[8,128,128]", " reshape(t)"),
               "f32", p, 4, v, 4);
  check_module(ATT("f32", "[8,128,4,32]", "[8,4,128,128]", "[8,4,32,128]",
                   "lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}",
                   "[8,128,4,32]", "0,3,1,2", "[8,128,128]", " reshape(t)"),
               "f32", v, 4, p, 4);
}

/* One product written transposed (Cᵀ = Bᵀ·Aᵀ, batch 1): dot-transpose swaps such a dot's
 * operands itself, except where operand_precision is set; then the GEMM does, on oneDNN's
 * sgemm (C 96 wide) or OpenBLAS, rows split over two threads or not. */
TEST(cpu_dot_out_one_product_transposed) {
  static const char text[] =
      "HloModule one\nENTRY main {\n  a = f32[3,32,40] parameter(0)\n  b = f32[40,70] parameter(1)\n"
      "  d = f32[3,32,70] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}, "
      "operand_precision={highest,highest}\n  ROOT t = f32[70,3,32] transpose(d), dimensions={2,0,1}\n}\n";
  static const char *const modes[4] = {"--cpu-onednn=on --threads=1", "--cpu-onednn=on --threads=2",
                                       "--cpu-onednn=off --threads=1", "--cpu-onednn=off --threads=2"};
  int64_t da[3] = {3, 32, 40}, db[2] = {40, 70};
  char *a = cpu_ramp_nd("f32", da, 3, 7, 1, -3), *b = cpu_ramp_nd("f32", db, 2, 5, 1, -2);
  const char *in[2] = {a, b};
  for (int i = 0; i < 4; i++) {
    char *stats = NULL;
    int ok = cpu_check(text, 2, in, modes[i], 0, 0, &stats, NULL);
    CHECK_MSG(ok, "%s", modes[i]);
    if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0 && kernels(stats) == 0 && strstr(stats, "gemms=1"), "%s: %s", modes[i], stats);
    free(stats);
  }
  free(a);
  free(b);
}
