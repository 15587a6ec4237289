/* test_cpu_dot_batched_onednn.c — batched f32 products through oneDNN's sgemm (rt/gemm.c's
 * batch split, each product one single-threaded dnnl_sgemm): the class, attention's q·kᵀ read
 * in place (k not copied) only where oneDNN computes it, and every transpose form, one and two
 * batch levels and C written transposed, against the interpreter with oneDNN on and off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/sequencer.h"
#include "rt/rt.h"
#include "test_cpu_helpers.h"

/* Batched products of at least 32 columns, as one product has at least 64. */
TEST(cpu_dot_batched_onednn_class) {
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 1, 128, 128, 32, 32)); /* attention's scores */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 32, 128, 32)); /* p·v */
  CHECK(cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 0, 128, 32, 128, 32)); /* dv */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 16, 128, 32));
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 64, 40, 64, 1)); /* one product: 64 columns */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 1, 1, 128, 128, 32, 8)); /* TT below 512 rows */
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F64, 0, 0, 128, 128, 32, 8));
  CHECK(!cx_rt_gemm_dnnl_suits(CXLA_F32, 0, 0, 128, 128, 32, 0));
}

static cx_instr *first_dot(cx_module *m) {
  for (int i = 0; m && i < m->entry->ninstrs; i++)
    if (m->entry->instrs[i]->op == CX_OP_DOT) return m->entry->instrs[i];
  return NULL;
}

/* q·kᵀ per head as JAX writes it, q and k [b, t, h, d]: the heads are a two-level batch (b, then
 * h) and k is read transposed. */
#define SCORES(B, T, H, D)                                                                                  \
  "HloModule s\nENTRY main {\n  q = f32[" #B "," #T "," #H "," #D "] parameter(0)\n  k = f32[" #B "," #T \
  "," #H "," #D "] parameter(1)\n  ROOT s = f32[" #B "," #H "," #T "," #T "] dot(q, k), "               \
  "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}\n}\n"

TEST(cpu_dot_batched_onednn_reads_k_in_place) {
  for (int onednn = 0; onednn < 2; onednn++) {
    cx_module *m = cpu_parse(SCORES(2, 40, 3, 32));
    if (!m) return;
    const cx_gemm_target *t = cx_cpu_gemm_target(onednn);
    CHECK_OK(cx_lower_library_ops(m, t));
    cx_instr *d = first_dot(m);
    cx_gemm_plan p;
    const char *why = NULL;
    CHECK(d && cx_dot_plan(d, t, &p, &why) == 1);
    /* oneDNN: both operands are the parameters; OpenBLAS: k is copied into [b, h, d, t] first */
    CHECK_MSG(d && d->ops[0]->op == CX_OP_PARAMETER && (d->ops[1]->op == CX_OP_PARAMETER) == onednn,
              "onednn %d: operands %s, %s", onednn, d ? cx_op_name(d->ops[0]->op) : "-",
              d ? cx_op_name(d->ops[1]->op) : "-");
    CHECK_MSG(d && p.trans_b == onednn && p.batch == 6 && p.batch_inner == (onednn ? 3 : p.batch_inner),
              "onednn %d: trans_b %d batch %lld inner %lld", onednn, p.trans_b, (long long)p.batch,
              (long long)p.batch_inner);
    cx_module_free(m);
  }
  /* below oneDNN's batched class (16 columns), k is copied with oneDNN on too */
  cx_module *m = cpu_parse(SCORES(2, 16, 3, 32));
  if (!m) return;
  CHECK_OK(cx_lower_library_ops(m, cx_cpu_gemm_target(1)));
  cx_instr *d = first_dot(m);
  CHECK(d && d->ops[1]->op == CX_OP_FUSION);
  cx_module_free(m);
}

static int64_t dims_of(const char *s, int64_t *d) {
  int n = 0;
  for (s = strchr(s, '['); s && *s && *s != ']' && n < 4; n++) d[n] = strtoll(s + 1, (char **)&s, 10);
  return n;
}

/* Every transpose form at one and two batch levels, odd sizes (uneven shares), and a result
 * transposed into [b, t, h, d] (C written at strides), against the interpreter (small integers:
 * exact sums), on one and two threads, with oneDNN on and off; each is one GEMM. */
TEST(cpu_dot_batched_onednn_matches_interp) {
  static const struct { const char *a, *b, *out, *dims, *root; } cases[] = {
      /* one level: NN, NT, TN */
      {"f32[5,33,40]", "f32[5,40,36]", "f32[5,33,36]", "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}", NULL},
      {"f32[5,33,40]", "f32[5,36,40]", "f32[5,33,36]", "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}", NULL},
      {"f32[3,40,33]", "f32[3,40,64]", "f32[3,33,64]", "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}", NULL},
      /* two levels, q·kᵀ with heads read in place (NT) */
      {"f32[2,40,3,32]", "f32[2,40,3,32]", "f32[2,3,40,40]", "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}", NULL},
      /* two levels, p·v (NN, v's heads in place) written back as [b, t, h, d] */
      {"f32[2,3,40,40]", "f32[2,40,3,32]", "f32[2,3,40,32]", "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}",
       "f32[2,40,3,32] transpose(d), dimensions={0,2,1,3}"},
      /* two products of 130 rows on 8 threads: each split into shares of C (columns: C is wider
       * than tall), NN, NT and TN */
      {"f32[2,130,96]", "f32[2,96,140]", "f32[2,130,140]", "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}", NULL},
      {"f32[2,130,96]", "f32[2,140,96]", "f32[2,130,140]", "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}", NULL},
      {"f32[2,96,140]", "f32[2,96,130]", "f32[2,140,130]", "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}", NULL},
      /* two levels, dv = pᵀ·do (TN) */
      {"f32[2,3,40,40]", "f32[2,40,3,32]", "f32[2,3,40,32]", "lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}", NULL},
  };
  static const char *const modes[] = {"--cpu-onednn=on --threads=2", "--cpu-onednn=on --threads=1",
                                      "--cpu-onednn=on --threads=8", "--cpu-onednn=off --threads=2"};
  int ncases = (int)(sizeof cases / sizeof cases[0]);
  int nmodes = (int)(sizeof modes / sizeof modes[0]);
  for (int i = 0; i < nmodes * ncases; i++) {
    int c = i / nmodes;
    char text[1024];
    if (cases[c].root)
      snprintf(text, sizeof text, "HloModule d\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
               "  d = %s dot(a, b), %s\n  ROOT r = %s\n}\n", cases[c].a, cases[c].b, cases[c].out, cases[c].dims, cases[c].root);
    else
      snprintf(text, sizeof text, "HloModule d\nENTRY main {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
               "  ROOT d = %s dot(a, b), %s\n}\n", cases[c].a, cases[c].b, cases[c].out, cases[c].dims);
    int64_t da[4], db[4];
    int ra = (int)dims_of(cases[c].a, da), rb = (int)dims_of(cases[c].b, db);
    char *a = cpu_ramp_nd("f32", da, ra, 7, 1, -3), *b = cpu_ramp_nd("f32", db, rb, 5, 1, -2);
    const char *in[2] = {a, b};
    char *stats = NULL;
    const char *mode = modes[i % nmodes];
    int ok = cpu_check(text, 2, in, mode, 1e-6, 1e-6, &stats, NULL);
    CHECK_MSG(ok, "case %d (%s): %s", c, mode, text);
    if (ok) CHECK_MSG(stats && strstr(stats, "gemms=1") && cpu_fallbacks(stats) == 0, "case %d: %s", c, stats);
    /* oneDNN ran it where it was on */
    const char *want = strstr(mode, "onednn=on") ? "gemms_onednn=1 " : "gemms_onednn=0 ";
    if (ok) CHECK_MSG(stats && strstr(stats, want), "case %d (%s): want %s: %s", c, mode, want, stats);
    free(stats);
    free(a);
    free(b);
  }
}
