/* test_interp_conv.c — convolution in the reference interpreter against a naive reference
 * written from the definition in a different form: the input is materialised padded (or
 * cropped, for negative padding) and base-dilated with explicit zeros, the kernel
 * window-dilated (and reversed) with explicit zeros, and then plainly correlated with stride.
 * Groups follow the definition: feature group g = o / (O/fgc) reads input features
 * g*I .. g*I+I-1; batch group bg = o / (O/bgc) reads input batch bg*(N/bgc) + b. Data are
 * small integers, so every sum is exact and results must match exactly. */
#include "heavy_helpers.h"

typedef struct conv_case {
  const char *labels;     /* e.g. "b01f_01io->b01f" */
  int ns;                 /* 1 or 2 spatial dims */
  int64_t n, c, o;        /* batch, input features, output features */
  int64_t in[2], k[2];    /* spatial sizes of input and kernel */
  int64_t w[2][7];        /* window rows without size: {0, stride, lo, hi, lhs_d, rhs_d, rev} */
  int64_t fgc, bgc;
  cxla_type in_type, out_type;
} conv_case;

/* Canonical dim (0 batch/out-feature, 1 feature/in-feature, 2+d spatial d) of each actual
 * dim of one dim_labels part. */
static void parse_part(const char *s, int len, int *canon) {
  for (int i = 0; i < len; i++) {
    char ch = s[i];
    canon[i] = ch == 'b' || ch == 'o' ? 0 : ch == 'f' || ch == 'i' ? 1 : 2 + (ch - '0');
  }
}

/* Copies canonical row-major data (canonical dims cd) into literal l whose dim a is
 * canonical dim canon[a]. */
static void to_layout(const double *src, const int64_t *cd, int rank, const int *canon,
                      cxla_literal *l) {
  int64_t cstr[4], idx[4] = {0}, total = 1;
  for (int d = rank - 1; d >= 0; d--) { cstr[d] = total; total *= cd[d]; }
  for (int64_t e = 0; e < total; e++) {
    int64_t ci = 0;
    for (int a = 0; a < rank; a++) ci += idx[a] * cstr[canon[a]];
    cxla_literal_set_f64(l, e, src[ci]);
    for (int a = rank - 1; a >= 0; a--) {
      if (++idx[a] < l->shape.dims[a]) break;
      idx[a] = 0;
    }
  }
}

/* The naive reference on canonical [N][C][S0][S1] input and [O][I][K0][K1] kernel (a 1-D
 * case uses S1 = K1 = 1 with a trivial window). Fills out (canonical [N/bgc][O][Y0][Y1]). */
static void reference(const conv_case *cc, const double *x, const double *k, double *out,
                      int64_t *y) {
  int64_t in[2] = {cc->in[0], cc->ns > 1 ? cc->in[1] : 1};
  int64_t ks[2] = {cc->k[0], cc->ns > 1 ? cc->k[1] : 1};
  int64_t w[2][7] = {{0}};
  for (int d = 0; d < 2; d++) {
    for (int j = 0; j < 7; j++) w[d][j] = cc->ns > d ? cc->w[d][j] : 0;
    if (cc->ns <= d) w[d][1] = w[d][4] = w[d][5] = 1;
  }
  int64_t pd[2], kd[2];
  for (int d = 0; d < 2; d++) {
    pd[d] = (in[d] - 1) * w[d][4] + 1 + w[d][2] + w[d][3];
    kd[d] = (ks[d] - 1) * w[d][5] + 1;
    y[d] = pd[d] < kd[d] ? 0 : (pd[d] - kd[d]) / w[d][1] + 1;
  }
  int64_t I = cc->c / cc->fgc, N = cc->n, C = cc->c, O = cc->o;
  static double P[1 << 16], D[1 << 16];
  /* padded/dilated input */
  for (int64_t b = 0; b < N; b++)
    for (int64_t f = 0; f < C; f++)
      for (int64_t p0 = 0; p0 < pd[0]; p0++)
        for (int64_t p1 = 0; p1 < pd[1]; p1++) {
          int64_t q0 = p0 - w[0][2], q1 = p1 - w[1][2];
          double v = 0;
          if (q0 >= 0 && q1 >= 0 && q0 % w[0][4] == 0 && q1 % w[1][4] == 0 &&
              q0 / w[0][4] < in[0] && q1 / w[1][4] < in[1])
            v = x[((b * C + f) * in[0] + q0 / w[0][4]) * in[1] + q1 / w[1][4]];
          P[((b * C + f) * pd[0] + p0) * pd[1] + p1] = v;
        }
  /* dilated, possibly reversed kernel */
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++)
      for (int64_t q0 = 0; q0 < kd[0]; q0++)
        for (int64_t q1 = 0; q1 < kd[1]; q1++) {
          double v = 0;
          if (q0 % w[0][5] == 0 && q1 % w[1][5] == 0) {
            int64_t k0 = q0 / w[0][5], k1 = q1 / w[1][5];
            if (w[0][6]) k0 = ks[0] - 1 - k0;
            if (w[1][6]) k1 = ks[1] - 1 - k1;
            v = k[((o * I + i) * ks[0] + k0) * ks[1] + k1];
          }
          D[((o * I + i) * kd[0] + q0) * kd[1] + q1] = v;
        }
  int64_t NB = N / cc->bgc;
  for (int64_t b = 0; b < NB; b++)
    for (int64_t o = 0; o < O; o++) {
      int64_t g = o / (O / cc->fgc), bg = o / (O / cc->bgc), lb = bg * NB + b;
      for (int64_t y0 = 0; y0 < y[0]; y0++)
        for (int64_t y1 = 0; y1 < y[1]; y1++) {
          double s = 0;
          for (int64_t i = 0; i < I; i++)
            for (int64_t q0 = 0; q0 < kd[0]; q0++)
              for (int64_t q1 = 0; q1 < kd[1]; q1++)
                s += P[((lb * C + g * I + i) * pd[0] + y0 * w[0][1] + q0) * pd[1] + y1 * w[1][1] + q1] *
                     D[((o * I + i) * kd[0] + q0) * kd[1] + q1];
          out[((b * O + o) * y[0] + y0) * y[1] + y1] = s;
        }
    }
}

static void run_case(const conv_case *cc, unsigned seed) {
  hh h;
  if (!hh_init(&h)) return;
  int rank = cc->ns + 2;
  int cin[4], ck[4], cout[4];
  parse_part(cc->labels, rank, cin);
  parse_part(cc->labels + rank + 1, rank, ck);
  parse_part(cc->labels + 2 * rank + 3, rank, cout);
  int64_t I = cc->c / cc->fgc;
  int64_t cx_dims[4] = {cc->n, cc->c, cc->in[0], cc->in[1]};
  int64_t ck_dims[4] = {cc->o, I, cc->k[0], cc->k[1]};
  static double x[4096], k[4096], ref[4096];
  int64_t nx = 1, nk = 1;
  for (int d = 0; d < rank; d++) { nx *= cx_dims[d]; nk *= ck_dims[d]; }
  uint32_t r = seed;
  for (int64_t i = 0; i < nx; i++) { r = r * 1103515245u + 12345u; x[i] = (double)((r >> 16) % 7) - 3; }
  for (int64_t i = 0; i < nk; i++) { r = r * 1103515245u + 12345u; k[i] = (double)((r >> 16) % 5) - 2; }
  int64_t y[2];
  reference(cc, x, k, ref, y);
  int64_t co_dims[4] = {cc->n / cc->bgc, cc->o, y[0], y[1]};

  int64_t ad[4], kdm[4], od[4];
  for (int a = 0; a < rank; a++) {
    ad[a] = cx_dims[cin[a]];
    kdm[a] = ck_dims[ck[a]];
    od[a] = co_dims[cout[a]];
  }
  cxla_literal *xl = hh_lit(cc->in_type, rank, ad, NULL), *kl = hh_lit(cc->in_type, rank, kdm, NULL);
  cxla_literal *want = hh_lit(cc->out_type, rank, od, NULL);
  cxla_literal *ops[2] = {xl, kl}, *got = NULL;
  cx_instr *in = xl && kl && want ? hh_instr1(&h, CX_OP_CONVOLUTION, cc->out_type, rank, od, 2, ops) : NULL;
  if (in) {
    to_layout(x, cx_dims, rank, cin, xl);
    to_layout(k, ck_dims, rank, ck, kl);
    to_layout(ref, co_dims, rank, cout, want);
    static _Thread_local cx_conv_dims dims;
    cx_conv_dims *cd = &dims;
    memset(cd, 0, sizeof *cd);
    in->a.conv = cd;
    cd->nspatial = cc->ns;
    for (int a = 0; a < rank; a++) {
      if (cin[a] == 0) cd->in_batch = a; else if (cin[a] == 1) cd->in_feature = a; else cd->in_spatial[cin[a] - 2] = a;
      if (ck[a] == 0) cd->k_out = a; else if (ck[a] == 1) cd->k_in = a; else cd->k_spatial[ck[a] - 2] = a;
      if (cout[a] == 0) cd->out_batch = a; else if (cout[a] == 1) cd->out_feature = a; else cd->out_spatial[cout[a] - 2] = a;
    }
    int64_t w[2][7];
    for (int d = 0; d < cc->ns; d++) {
      for (int j = 0; j < 7; j++) w[d][j] = cc->w[d][j];
      w[d][0] = cc->k[d];
    }
    hh_window(&h, in, cc->ns, (const int64_t(*)[7])w);
    in->a.feature_group_count = cc->fgc;
    in->a.batch_group_count = cc->bgc;
    CHECK_OK(cx_interp_convolution(&h.st, in, ops, &got));
    cx_sb why;
    cx_sb_init(&why);
    if (got && !cx_literal_compare(got, want, 0, 0, &why))
      test_fail(__FILE__, __LINE__, "%s (seed %u): %s", cc->labels, seed, why.buf ? why.buf : "?");
    cx_sb_free(&why);
  }
  cxla_literal *all[] = {xl, kl, want, got};
  hh_free_lits(4, all);
  hh_free(&h);
}

TEST(interp_conv_1d_by_hand) {
  hh h;
  if (!hh_init(&h)) return;
  /* {1,2,3,4} correlated with {1,0,-1}: {1-3, 2-4} */
  cxla_literal *x = hh_lit(CXLA_F32, 3, HH_DIMS(1, 1, 4), HH_VALS(1, 2, 3, 4));
  cxla_literal *k = hh_lit(CXLA_F32, 3, HH_DIMS(1, 1, 3), HH_VALS(1, 0, -1));
  cxla_literal *ops[2] = {x, k}, *r = NULL;
  cx_instr *in = hh_instr1(&h, CX_OP_CONVOLUTION, CXLA_F32, 3, HH_DIMS(1, 1, 2), 2, ops);
  if (in) {
    static cx_conv_dims cd = {.nspatial = 1, .in_batch = 0, .in_feature = 1, .in_spatial = {2},
                              .k_out = 0, .k_in = 1, .k_spatial = {2},
                              .out_batch = 0, .out_feature = 1, .out_spatial = {2}};
    in->a.conv = &cd;
    hh_window(&h, in, 1, (const int64_t[][7]){{3, 1, 0, 0, 1, 1, 0}});
    CHECK_OK(cx_interp_convolution(&h.st, in, ops, &r));
    HH_EXPECT(r, CXLA_F32, 3, HH_DIMS(1, 1, 2), HH_VALS(-2, -2), 0);
  }
  cxla_literal *all[] = {x, k, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_conv_1d_stride_padding) {
  conv_case cc = {"bf0_oi0->bf0", 1, 2, 3, 4, {7, 1}, {3, 1}, {{0, 2, 1, 2, 1, 1, 0}}, 1, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 1);
}

TEST(interp_conv_2d_nhwc) {
  conv_case cc = {"b01f_01io->b01f", 2, 2, 3, 4, {5, 6}, {3, 2},
                  {{0, 2, 1, 1, 1, 1, 0}, {0, 1, 0, 1, 1, 2, 0}}, 1, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 2);
}

TEST(interp_conv_2d_nchw_dilations) {
  conv_case cc = {"bf01_oi01->bf01", 2, 1, 2, 3, {4, 5}, {2, 3},
                  {{0, 1, 1, 1, 2, 1, 0}, {0, 2, 2, 0, 1, 2, 0}}, 1, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 3);
}

/* transposed convolution: base dilation = the forward stride, padding k-1 each side */
TEST(interp_conv_transposed_lhs_dilation) {
  conv_case cc = {"b01f_01oi->b01f", 2, 1, 2, 2, {3, 3}, {3, 3},
                  {{0, 1, 2, 2, 2, 1, 1}, {0, 1, 2, 2, 2, 1, 1}}, 1, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 4);
}

TEST(interp_conv_depthwise_feature_groups) {
  /* 4 input features, 4 groups, 2 outputs per group: kernel input features = 1 */
  conv_case cc = {"b01f_01io->b01f", 2, 2, 4, 8, {4, 4}, {2, 2},
                  {{0, 1, 0, 0, 1, 1, 0}, {0, 1, 1, 0, 1, 1, 0}}, 4, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 5);
  conv_case cc2 = {"bf01_oi01->bf01", 2, 1, 6, 4, {3, 3}, {2, 2},
                   {{0, 1, 0, 0, 1, 1, 0}, {0, 1, 0, 0, 1, 1, 0}}, 2, 1, CXLA_F32, CXLA_F32};
  run_case(&cc2, 6);
}

TEST(interp_conv_batch_groups) {
  /* the filter-gradient shape: batch_group_count = input batch */
  conv_case cc = {"f01b_i01o->01bf", 2, 4, 3, 8, {5, 4}, {2, 2},
                  {{0, 1, 0, 0, 1, 1, 0}, {0, 1, 0, 0, 1, 1, 0}}, 1, 4, CXLA_F32, CXLA_F32};
  run_case(&cc, 7);
  /* batch_group_count 2 of a batch of 4: contiguous groups of 2 */
  conv_case cc2 = {"bf0_oi0->bf0", 1, 4, 2, 4, {5, 1}, {2, 1}, {{0, 1, 0, 0, 1, 1, 0}}, 1, 2,
                   CXLA_F32, CXLA_F32};
  run_case(&cc2, 8);
}

TEST(interp_conv_negative_padding_and_reversal) {
  conv_case cc = {"bf01_oi01->bf01", 2, 1, 2, 2, {6, 5}, {2, 2},
                  {{0, 1, -1, -2, 1, 1, 1}, {0, 2, -1, 1, 1, 1, 0}}, 1, 1, CXLA_F32, CXLA_F32};
  run_case(&cc, 9);
}

TEST(interp_conv_int8_to_s32) {
  conv_case cc = {"b01f_01io->b01f", 2, 1, 3, 2, {4, 4}, {2, 2},
                  {{0, 1, 1, 0, 1, 1, 0}, {0, 1, 0, 1, 1, 1, 0}}, 1, 1, CXLA_S8, CXLA_S32};
  run_case(&cc, 10);
}
