/* bench_blas.c — the GEMM groups: a 1024^3 dot against cblas_sgemm called directly, dense +
 * bias + relu against sgemm plus a C epilogue loop, and the 784-128-64-10 MLP forward against
 * the same BLAS + C loops. OpenBLAS runs on cfg.threads threads on both sides. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "baselines.h"
#include "bench_main.h"

typedef struct layer {
  int m, k, n;
  const float *a, *w, *bias;
  float *c;
  int act; /* 0 none, 1 relu, 2 softmax */
} layer;

static void run_layer(const layer *l) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l->m, l->n, l->k, 1.0f, l->a, l->k, l->w, l->n, 0.0f, l->c,
              l->n);
  if (l->act == 1) bl_bias_relu(l->c, l->bias, l->m, l->n);
  else if (l->act == 2) bl_bias_softmax(l->c, l->bias, l->m, l->n);
}

typedef struct blas_net {
  int threads, nlayers;
  layer l[3];
} blas_net;

/* OpenBLAS's own (declared here too, as bench_main.c does). */
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);

/* The baseline calls OpenBLAS as a C program would, on its own threads; cxla's pool sets OpenBLAS
 * to one thread process-wide (it splits GEMMs itself), so that setting is put back after. */
static void blas_net_call(void *p) {
  blas_net *b = p;
  int was = openblas_get_num_threads();
  bl_set_threads(b->threads);
  openblas_set_num_threads(b->threads);
  for (int i = 0; i < b->nlayers; i++) run_layer(&b->l[i]);
  openblas_set_num_threads(was);
}

static float *falloc(int64_t n) {
  float *p = malloc((size_t)n * sizeof *p);
  if (!p) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  memset(p, 0, (size_t)n * sizeof *p);
  return p;
}

void group_gemm(void) {
  int T = cfg.threads, n = bench_gemm_side();
  set_all_threads(T);
  cxla_context *ctx = new_context();
  if (!ctx) return;
  int64_t dims[2] = {n, n};
  cxla_literal *in[2] = {bu_literal(ctx, 2, dims, 11, -1, 1), bu_literal(ctx, 2, dims, 12, -1, 1)};
  bu_cxla g;
  bu_cxla_open(&g, ctx, hlo_path("gemm_1024.hlo"), NULL, T, -1, in);
  blas_net b = {T, 1, {{n, n, n, cxla_literal_data(in[0]), cxla_literal_data(in[1]), NULL, falloc((int64_t)n * n), 0}}};
  bu_contender c[] = {
      {.name = "cxla dot f32[1024,1024] x f32[1024,1024]", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &g, .fail_flag = &g.failed},
      {.name = "cblas_sgemm (OpenBLAS) direct", .fn = blas_net_call, .arg = &b},
  };
  bu_opts o = opts_for(20);
  bu_interleave(c, 2, &o);
  double flops = 2.0 * n * n * n;
  print_contenders("gemm 1024^3", c, 2, flops, "GFLOP/s");
  char chk[40], a[48], bb[64];
  check_result(chk, sizeof chk, &g, b.l[0].c, (int64_t)n * n, 1e-5);
  fmt_rate(a, sizeof a, &c[0], flops, "GFLOP/s");
  fmt_rate(bb, sizeof bb, &c[1], flops, "GFLOP/s OpenBLAS");
  add_row("sgemm 1024³ vs cblas_sgemm", a, bb, ratio_best(&c[0], &c[1]), ratio_median(&c[0], &c[1]), "≥ 0.95", 0.95, chk);
  bu_contenders_free(c, (int)(sizeof c / sizeof c[0]));
  bu_cxla_close(&g);
  free(b.l[0].c);
  cxla_literal_destroy(in[0]);
  cxla_literal_destroy(in[1]);
  cxla_context_destroy(ctx);
}

static void dense_one(cxla_context *ctx, const char *file, int m, int k, int n) {
  int T = cfg.threads;
  int64_t dx[2] = {m, k}, dw[2] = {k, n}, db[1] = {n};
  float s = 1.0f / sqrtf((float)k);
  cxla_literal *in[3] = {bu_literal(ctx, 2, dx, 21, -1, 1), bu_literal(ctx, 2, dw, 22, -s, s), bu_literal(ctx, 1, db, 23, -0.5f, 0.5f)};
  bu_cxla d;
  bu_cxla_open(&d, ctx, hlo_path(file), NULL, T, -1, in);
  blas_net b = {T, 1, {{m, k, n, cxla_literal_data(in[0]), cxla_literal_data(in[1]), cxla_literal_data(in[2]),
                        falloc((int64_t)m * n), 1}}};
  char name[2][96];
  snprintf(name[0], sizeof name[0], "cxla dense+bias+relu %dx%dx%d", m, k, n);
  snprintf(name[1], sizeof name[1], "cblas_sgemm + C bias/relu loop");
  bu_contender c[] = {
      {.name = name[0], .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &d, .fail_flag = &d.failed},
      {.name = name[1], .fn = blas_net_call, .arg = &b},
  };
  bu_opts o = opts_for(20);
  bu_interleave(c, 2, &o);
  double flops = 2.0 * m * k * n;
  print_contenders(file, c, 2, flops, "GFLOP/s");
  char chk[40], a[48], bb[64], row[96];
  check_result(chk, sizeof chk, &d, b.l[0].c, (int64_t)m * n, 1e-5);
  fmt_rate(a, sizeof a, &c[0], flops, "GFLOP/s");
  fmt_rate(bb, sizeof bb, &c[1], flops, "GFLOP/s BLAS+C");
  snprintf(row, sizeof row, "dense+bias+relu %dx%dx%d vs sgemm + C loop", m, k, n);
  /* issue 22's goal is for the small layer, where the library call's overhead and the second
   * pass over C decide; at 1024³ both sides are the same GEMM */
  int small = (int64_t)m * k * n < (1 << 24);
  add_row(row, a, bb, ratio_best(&c[0], &c[1]), ratio_median(&c[0], &c[1]), small ? "≥ 1.1" : "(none set)",
          small ? 1.1 : NAN, chk);
  bu_contenders_free(c, (int)(sizeof c / sizeof c[0]));
  bu_cxla_close(&d);
  free(b.l[0].c);
  for (int i = 0; i < 3; i++) cxla_literal_destroy(in[i]);
}

void group_dense(void) {
  set_all_threads(cfg.threads);
  cxla_context *ctx = new_context();
  if (!ctx) return;
  dense_one(ctx, "dense_relu_1024.hlo", bench_gemm_side(), bench_gemm_side(), bench_gemm_side());
  dense_one(ctx, "dense_relu_128x784x128.hlo", 128, 784, 128);
  cxla_context_destroy(ctx);
}

void group_mlp(void) {
  int T = cfg.threads, B = 128, dims[4] = {784, 128, 64, 10};
  set_all_threads(T);
  cxla_context *ctx = new_context();
  if (!ctx) return;
  cxla_literal *in[7];
  int64_t dx[2] = {B, dims[0]};
  in[0] = bu_literal(ctx, 2, dx, 31, 0, 1);
  for (int i = 0; i < 3; i++) {
    int64_t dw[2] = {dims[i], dims[i + 1]}, db[1] = {dims[i + 1]};
    float s = 1.0f / sqrtf((float)dims[i]);
    in[1 + 2 * i] = bu_literal(ctx, 2, dw, 32 + (uint64_t)i, -s, s);
    in[2 + 2 * i] = bu_literal(ctx, 1, db, 42 + (uint64_t)i, -0.1f, 0.1f);
  }
  bu_cxla mlp;
  bu_cxla_open(&mlp, ctx, hlo_path("mlp.hlo"), NULL, T, -1, in);
  blas_net b = {T, 3, {{0}}};
  const float *act = cxla_literal_data(in[0]);
  for (int i = 0; i < 3; i++) {
    layer *l = &b.l[i];
    *l = (layer){B, dims[i], dims[i + 1], act, cxla_literal_data(in[1 + 2 * i]), cxla_literal_data(in[2 + 2 * i]),
                 falloc((int64_t)B * dims[i + 1]), i < 2 ? 1 : 2};
    act = l->c;
  }
  bu_contender c[] = {
      {.name = "cxla MLP 784-128-64-10, batch 128", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &mlp, .fail_flag = &mlp.failed},
      {.name = "3 x cblas_sgemm + C bias/relu/softmax", .fn = blas_net_call, .arg = &b},
  };
  bu_opts o = opts_for(10);
  bu_interleave(c, 2, &o);
  print_contenders("mlp forward (time per call)", c, 2, 0, NULL);
  char chk[40], a[48], bb[64];
  check_result(chk, sizeof chk, &mlp, b.l[2].c, (int64_t)B * 10, 1e-4);
  fmt_rate(a, sizeof a, &c[0], 0, NULL);
  fmt_rate(bb, sizeof bb, &c[1], 0, NULL);
  strcat(bb, " BLAS+C");
  add_row("MLP 784-128-64-10 fwd, batch 128 (time/call)", a, bb, ratio_best(&c[0], &c[1]), ratio_median(&c[0], &c[1]),
          "(none set)", NAN, chk);
  bu_contenders_free(c, (int)(sizeof c / sizeof c[0]));
  bu_cxla_close(&mlp);
  for (int i = 0; i < 3; i++) free(b.l[i].c);
  for (int i = 0; i < 7; i++) cxla_literal_destroy(in[i]);
  cxla_context_destroy(ctx);
}
