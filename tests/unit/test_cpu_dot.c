/* test_cpu_dot.c — dot on the cpu backend: GEMM plans worked out by hand for the layouts BLAS
 * reads directly (transposed operands, batch dims not leading, contracting dim 0), the
 * transposes inserted when no layout fits, and dots of every dimension arrangement against the
 * interpreter (random shapes with small integer values, so f32 sums are exact). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/sequencer.h"
#include "passes/pass.h"
#include "rt/rt.h"
#include "test_cpu_helpers.h"

static cx_instr *dot_of(cx_module *m) {
  for (int i = 0; m && i < m->entry->ninstrs; i++)
    if (m->entry->instrs[i]->op == CX_OP_DOT) return m->entry->instrs[i];
  return NULL;
}

static int plan(const char *text, cx_gemm_plan *p) {
  cx_module *m = cpu_parse(text);
  cx_instr *d = dot_of(m);
  const char *why = NULL;
  int ok = d ? cx_dot_plan(d, &cx_cpu_gemm, p, &why) : -1;
  cx_module_free(m);
  return ok;
}

#define MOD(a, b, out, dims)                                                                       \
  "HloModule d\nENTRY main {\n  a = " a " parameter(0)\n  b = " b " parameter(1)\n  ROOT d = " out \
  " dot(a, b), " dims "\n}\n"

TEST(cpu_dot_plans) {
  cx_gemm_plan p;
  /* [M,K] x [K,N] */
  CHECK_EQ_INT(plan(MOD("f32[2,3]", "f32[3,5]", "f32[2,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), &p), 1);
  CHECK(p.m == 2 && p.n == 5 && p.k == 3 && !p.trans_a && !p.trans_b && p.lda == 3 && p.ldb == 5 && p.ldc == 5);
  /* lhs contracts dim 0: A stored K x M, transposed */
  CHECK_EQ_INT(plan(MOD("f32[3,2]", "f32[3,5]", "f32[2,5]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), &p), 1);
  CHECK(p.trans_a && !p.trans_b && p.lda == 2 && p.m == 2 && p.k == 3);
  /* rhs contracts dim 1: B stored N x K */
  CHECK_EQ_INT(plan(MOD("f32[2,3]", "f32[5,3]", "f32[2,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"), &p), 1);
  CHECK(!p.trans_a && p.trans_b && p.ldb == 3);
  /* batch in the middle of the lhs: rows of A are B*K apart, batches K apart */
  CHECK_EQ_INT(plan(MOD("f64[2,4,3]", "f64[4,3,5]", "f64[4,2,5]",
                        "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"), &p), 1);
  CHECK(p.batch == 4 && p.lda == 12 && p.stride_a == 3 && p.stride_b == 15 && p.stride_c == 10 && p.type == CXLA_F64);
  /* two contracting dims, nested the same way in both operands */
  CHECK_EQ_INT(plan(MOD("f32[2,3,4]", "f32[3,4,5]", "f32[2,5]", "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"), &p), 1);
  CHECK(p.k == 12 && p.lda == 12 && p.ldb == 5);
  /* ...listed in the other order: the pairs are reordered, not refused */
  CHECK_EQ_INT(plan(MOD("f32[2,3,4]", "f32[3,4,5]", "f32[2,5]", "lhs_contracting_dims={2,1}, rhs_contracting_dims={1,0}"), &p), 1);
  /* batch dim innermost in the lhs: no BLAS layout */
  CHECK_EQ_INT(plan(MOD("f32[2,3,4]", "f32[4,3,5]", "f32[4,2,5]",
                        "lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}"), &p), 0);
  /* integer dots are not GEMMs */
  CHECK_EQ_INT(plan(MOD("s32[2,3]", "s32[3,5]", "s32[2,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), &p), 0);
}

/* Lowering inserts a transpose only for the operand that fits no layout. */
TEST(cpu_dot_lowering_transposes_only_what_it_must) {
  cx_module *m = cpu_parse(MOD("f32[2,3,4]", "f32[4,3,5]", "f32[4,2,5]",
                               "lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}"));
  if (!m) return;
  CHECK_OK(cx_lower_library_ops(m, &cx_cpu_gemm));
  cx_instr *d = dot_of(m);
  cx_gemm_plan p;
  const char *why;
  CHECK(d && d->ops[0]->op == CX_OP_FUSION && d->ops[1]->op == CX_OP_PARAMETER);
  CHECK(d && cx_dot_plan(d, &cx_cpu_gemm, &p, &why) == 1);
  cx_module_free(m);
  m = cpu_parse(MOD("bf16[2,3]", "bf16[3,5]", "bf16[2,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  if (!m) return;
  CHECK_OK(cx_lower_library_ops(m, &cx_cpu_gemm));
  d = dot_of(m);
  CHECK(d && d->shape.type == CXLA_F32 && d->ops[0]->shape.type == CXLA_F32 && cx_dot_plan(d, &cx_cpu_gemm, &p, &why) == 1);
  CHECK(m->entry->root->op == CX_OP_FUSION && m->entry->root->shape.type == CXLA_BF16);
  cx_module_free(m);
}

/* The attention's p·v as JAX writes it (dot(v, p), v [b, s, h, d], p [b, h, t, s], then
 * [b, t, h, d]): lowered as it stands, v is copied into [b, h, d, s] and the GEMM reads p
 * transposed (OpenBLAS's slow form on these shapes); after dot-orient both sides are read
 * straight, and v in place (a two-level batch: b, then h) */
TEST(cpu_dot_orient_reads_both_sides_straight) {
  const char *text = "HloModule a\nENTRY main {\n  v = f32[2,5,3,4] parameter(0)\n  p = f32[2,3,6,5] parameter(1)\n"
                     "  d = f32[2,3,4,6] dot(v, p), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, "
                     "rhs_batch_dims={0,1}, rhs_contracting_dims={3}\n"
                     "  ROOT t = f32[2,6,3,4] transpose(d), dimensions={0,3,1,2}\n}\n";
  for (int orient = 0; orient < 2; orient++) {
    cx_module *m = cpu_parse(text);
    if (!m) return;
    int changed = 0;
    if (orient) CHECK_OK(cx_pass_dot_orient(m, &changed));
    CHECK_EQ_INT(changed, orient);
    CHECK_OK(cx_lower_library_ops(m, &cx_cpu_gemm));
    cx_instr *d = dot_of(m);
    cx_gemm_plan p;
    const char *why;
    CHECK(d && cx_dot_plan(d, &cx_cpu_gemm, &p, &why) == 1);
    CHECK_MSG(d && p.trans_a == 0 && p.trans_b == !orient, "orient %d: trans_a %d trans_b %d", orient, p.trans_a,
              p.trans_b);
    CHECK(d && p.m == (orient ? 6 : 4) && p.n == (orient ? 4 : 6) && p.k == 5 && p.batch == 6);
    /* v [2,5,3,4] read in place: batch b (stride 60) outer, h (stride 4) inner */
    CHECK(d && (!orient || (p.batch_inner == 3 && p.stride_b == 60 && p.stride_b2 == 4)));
    cx_module_free(m);
  }
}

static unsigned rng_state = 12345;
static int rnd(int n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (int)((rng_state >> 16) % (unsigned)n);
}

static void put_dims(char *s, size_t cap, const char *type, const int64_t *d, int n) {
  size_t k = (size_t)snprintf(s, cap, "%s[", type);
  for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%lld", i ? "," : "", (long long)d[i]);
  snprintf(s + k, cap - k, "]");
}

static void put_list(char *s, size_t cap, const char *name, const int *v, int n) {
  size_t k = (size_t)snprintf(s, cap, "%s={", name);
  for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%d", i ? "," : "", v[i]);
  snprintf(s + k, cap - k, "}");
}

/* A random dot: nb batch, nc contracting and up to 2 free dims per side, each side's dims in a
 * random order, sizes 1..4. */
static int random_dot(const char *type, const char *out_type, char *text, size_t cap, char **in0, char **in1) {
  int nb = rnd(3), nc = rnd(3), nfl = rnd(3), nfr = rnd(3);
  int rl = nb + nc + nfl, rr = nb + nc + nfr;
  int64_t bs[4], cs[4], fl[4], fr[4];
  for (int i = 0; i < nb; i++) bs[i] = 1 + rnd(3);
  for (int i = 0; i < nc; i++) cs[i] = 1 + rnd(4);
  for (int i = 0; i < nfl; i++) fl[i] = 1 + rnd(4);
  for (int i = 0; i < nfr; i++) fr[i] = 1 + rnd(4);
  int pl[8], pr[8]; /* position of logical dim j (batch, contract, free) in each operand */
  for (int i = 0; i < rl; i++) pl[i] = i;
  for (int i = 0; i < rr; i++) pr[i] = i;
  for (int i = rl - 1; i > 0; i--) { int j = rnd(i + 1), t = pl[i]; pl[i] = pl[j]; pl[j] = t; }
  for (int i = rr - 1; i > 0; i--) { int j = rnd(i + 1), t = pr[i]; pr[i] = pr[j]; pr[j] = t; }
  int64_t ld[8], rd[8], od[8];
  int lb[4], lc[4], rb[4], rc[4], no = 0;
  for (int i = 0; i < nb; i++) { ld[pl[i]] = bs[i]; rd[pr[i]] = bs[i]; lb[i] = pl[i]; rb[i] = pr[i]; od[no++] = bs[i]; }
  for (int i = 0; i < nc; i++) { ld[pl[nb + i]] = cs[i]; rd[pr[nb + i]] = cs[i]; lc[i] = pl[nb + i]; rc[i] = pr[nb + i]; }
  /* free dims appear in the output in operand order */
  for (int i = 0; i < nfl; i++) ld[pl[nb + nc + i]] = fl[i];
  for (int i = 0; i < nfr; i++) rd[pr[nb + nc + i]] = fr[i];
  for (int d = 0; d < rl; d++) {
    int isfree = 1;
    for (int i = 0; i < nb + nc; i++) isfree &= pl[i] != d;
    if (isfree) od[no++] = ld[d];
  }
  for (int d = 0; d < rr; d++) {
    int isfree = 1;
    for (int i = 0; i < nb + nc; i++) isfree &= pr[i] != d;
    if (isfree) od[no++] = rd[d];
  }
  char sl[128], sr[128], so[128], l1[64], l2[64], r1[64], r2[64];
  put_dims(sl, sizeof sl, type, ld, rl);
  put_dims(sr, sizeof sr, type, rd, rr);
  put_dims(so, sizeof so, out_type, od, no);
  put_list(l1, sizeof l1, "lhs_batch_dims", lb, nb);
  put_list(l2, sizeof l2, "lhs_contracting_dims", lc, nc);
  put_list(r1, sizeof r1, "rhs_batch_dims", rb, nb);
  put_list(r2, sizeof r2, "rhs_contracting_dims", rc, nc);
  snprintf(text, cap,
           "HloModule rdot\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
           "  ROOT d = %s dot(a, b), %s, %s, %s, %s\n}\n", sl, sr, so, l1, l2, r1, r2);
  int uns = type[0] == 'u';
  *in0 = cpu_ramp_nd(type, ld, rl, 7, 1, uns ? 0 : -3);
  *in1 = cpu_ramp_nd(type, rd, rr, 5, 1, uns ? 0 : -2);
  return 1;
}

TEST(cpu_dot_random_arrangements_match_interp) {
  static const char *types[][2] = {{"f32", "f32"}, {"f64", "f64"}, {"bf16", "bf16"}, {"f16", "f32"},
                                   {"s32", "s32"},  {"s8", "s32"},  {"u8", "u16"}};
  char text[1024];
  int failures = 0;
  for (int it = 0; it < 70 && failures < 3; it++) {
    const char **t = types[it % 7];
    char *a = NULL, *b = NULL;
    random_dot(t[0], t[1], text, sizeof text, &a, &b);
    const char *in[2] = {a, b};
    char *stats = NULL;
    int ok = cpu_check(text, 2, in, NULL, 1e-6, 1e-6, &stats, NULL);
    if (!ok) {
      failures++;
      CHECK_MSG(0, "dot mismatch for\n%s%s\n%s", text, a, b);
    } else { /* floats as GEMMs, integers as reduce kernels */
      CHECK_MSG(cpu_fallbacks(stats) == 0, "dot ran on the interpreter: %s\n%s", stats, text);
    }
    free(stats);
    free(a);
    free(b);
  }
}

/* The class of GEMMs oneDNN's sgemm takes (rt/gemm_dnnl.c): the MLP and CNN steps' products with
 * C at least 64 wide, A as stored or transposed (the weight gradients); both transposed only
 * with at least 512 rows of C; not the logits (10 wide), other types or the big squares (batched
 * products: test_cpu_dot_batched_onednn.c). */
TEST(cpu_dot_onednn_class) {
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 128, 784, 1));  /* MLP layer 1 */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 512, 512, 1));  /* flax MLP, NN or NT */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 64, 1568, 128, 1));  /* LeNet's input gradient */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 10, 64, 1));   /* logits */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 0, 784, 512, 128, 1));  /* flax MLP weight gradient */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 0, 512, 10, 128, 1));  /* logits' weight gradient */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 1, 128, 512, 512, 1)); /* TT, 128 rows: OpenBLAS */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 1, 256, 512, 512, 1));
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 1, 784, 512, 128, 1));  /* TT, 784 rows: oneDNN */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 1, 128, 512, 512, 1));  /* NT whatever the rows */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F64, 0, 0, 128, 128, 784, 1));
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 1024, 1024, 1024, 1));
}

/* oneDNN's set-up thread (rt/gemm_dnnl.c): asked for any number of times, waited for any
 * number of times, and the products after it (through the pool and on this thread) exact. */
TEST(cpu_dot_onednn_warm_then_products) {
  cx_rt_gemm_dnnl_warm();
  cx_rt_gemm_dnnl_warm();
  cx_rt_gemm_dnnl_settle();
  cx_rt_gemm_dnnl_settle();
  cx_rt_gemm_dnnl_warm(); /* after the wait: nothing more to start */
  cx_rt_gemm_dnnl_settle();
  static const char text[] = "HloModule d\nENTRY main {\n  a = f32[96,80] parameter(0)\n  b = f32[80,64] parameter(1)\n"
                             "  ROOT d = f32[96,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  int64_t da[2] = {96, 80}, db[2] = {80, 64};
  char *a = cpu_ramp_nd("f32", da, 2, 7, 1, -3), *b = cpu_ramp_nd("f32", db, 2, 5, 1, -2);
  const char *in[2] = {a, b};
  for (int t = 0; t < 2; t++) {
    char *stats = NULL;
    int ok = cpu_check(text, 2, in, t ? "--threads=1" : "--threads=2", 1e-6, 1e-6, &stats, NULL);
    CHECK_MSG(ok, "threads %d", t ? 1 : 2);
    if (ok) CHECK_MSG(stats && strstr(stats, "gemms=1"), "not one GEMM: %s", stats);
    if (ok) CHECK_MSG(stats && strstr(stats, " library_macs=491520 "), "96x64x80 multiply-adds: %s", stats);
    free(stats);
  }
  free(a);
  free(b);
}

/* Products of that class and just outside it, NN, NT, TN and TT, with oneDNN on and off, against the
 * interpreter (small integers: exact sums); odd row (or column) counts split unevenly over the pool. */
TEST(cpu_dot_onednn_matches_interp) {
  static const struct { const char *a, *b, *out, *dims; } cases[] = {
      {"f32[130,200]", "f32[200,96]", "f32[130,96]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32[77,64]", "f32[128,64]", "f32[77,128]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"f32[33,40]", "f32[40,64]", "f32[33,64]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32[64,48]", "f32[48,10]", "f32[64,10]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      /* A transposed (a weight gradient, TN), odd rows; and both transposed (TT) */
      {"f32[70,131]", "f32[70,72]", "f32[131,72]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"f32[40,97]", "f32[80,40]", "f32[97,80]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
      /* a weight gradient (TN) with a long contraction and a small C is split over the
       * contraction, an odd length unevenly, and the partial products added */
      {"f32[300,40]", "f32[300,72]", "f32[40,72]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"f32[301,40]", "f32[301,72]", "f32[40,72]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      /* ... and a forward product (NN) whose C is wider than tall */
      {"f32[40,301]", "f32[301,72]", "f32[40,72]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      /* B transposed (NT, TT) is split by columns of C when C is wider than tall (odd column
       * counts split unevenly), by rows when it is taller */
      {"f32[64,96]", "f32[97,96]", "f32[64,97]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"f32[131,64]", "f32[72,64]", "f32[131,72]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"f32[96,97]", "f32[81,96]", "f32[97,81]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
  };
  static const char *const modes[2] = {"--cpu-onednn=on --threads=2", "--cpu-onednn=off --threads=2"};
  for (int i = 0; i < (int)(2 * sizeof cases / sizeof cases[0]); i++) {
    char text[512], ta[8], tb[8];
    snprintf(text, sizeof text, "HloModule d\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
             "  ROOT d = %s dot(a, b), %s\n}\n", cases[i / 2].a, cases[i / 2].b, cases[i / 2].out, cases[i / 2].dims);
    int64_t da[2], db[2];
    sscanf(cases[i / 2].a, "%3[a-z0-9][%" SCNd64 ",%" SCNd64 "]", ta, &da[0], &da[1]);
    sscanf(cases[i / 2].b, "%3[a-z0-9][%" SCNd64 ",%" SCNd64 "]", tb, &db[0], &db[1]);
    char *a = cpu_ramp_nd("f32", da, 2, 7, 1, -3), *b = cpu_ramp_nd("f32", db, 2, 5, 1, -2);
    const char *in[2] = {a, b};
    char *stats = NULL;
    int ok = cpu_check(text, 2, in, modes[i % 2], 1e-6, 1e-6, &stats, NULL);
    CHECK_MSG(ok, "case %d (%s): %s", i / 2, modes[i % 2], text);
    if (ok) CHECK_MSG(stats && strstr(stats, "gemms=1"), "case %d: not one GEMM: %s", i / 2, stats);
    int64_t out[2], k = strstr(cases[i / 2].dims, "lhs_contracting_dims={1}") ? da[1] : da[0];
    sscanf(cases[i / 2].out, "f32[%" SCNd64 ",%" SCNd64 "]", &out[0], &out[1]);
    char want[64];
    snprintf(want, sizeof want, " library_macs=%lld ", (long long)(out[0] * out[1] * k));
    if (ok) CHECK_MSG(stats && strstr(stats, want), "case %d: want%s: %s", i / 2, want, stats);
    free(stats);
    free(a);
    free(b);
  }
}
