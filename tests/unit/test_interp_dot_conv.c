/* test_interp_dot_conv.c — dot and convolution in the reference interpreter. Expected values
 * come from hand computation for the small cases and, for random inputs, from naive
 * references written here directly from the definitions (dot: one sum per result element
 * over explicit index tuples; convolution: materialise the padded, base-dilated input and
 * the window-dilated kernel, then correlate). */
#include <time.h>
#include "heavy_helpers.h"

/* ---- dot ---- */

static cxla_literal *dot(hh *h, cxla_literal *a, cxla_literal *b, cxla_type rt, int rrank,
                         const int64_t *rdims, int nb, const int64_t *lb, const int64_t *rb,
                         int nc, const int64_t *lc, const int64_t *rc) {
  cxla_literal *ops[2] = {a, b};
  cx_instr *in = hh_instr1(h, CX_OP_DOT, rt, rrank, rdims, 2, ops);
  if (!in) return NULL;
  hh_ints(h, &in->a.dot.lhs_batch, nb, lb);
  hh_ints(h, &in->a.dot.rhs_batch, nb, rb);
  hh_ints(h, &in->a.dot.lhs_contract, nc, lc);
  hh_ints(h, &in->a.dot.rhs_contract, nc, rc);
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_dot(&h->st, in, ops, &out));
  return out;
}

static double at(const cxla_literal *l, int64_t i) { return cxla_literal_get_f64(l, i); }

TEST(interp_dot_matmul_by_hand) {
  hh h;
  if (!hh_init(&h)) return;
  /* {{1,2,3},{4,5,6}} x {{7,8},{9,10},{11,12}} = {{58,64},{139,154}} */
  cxla_literal *a = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *b = hh_lit(CXLA_F32, 2, HH_DIMS(3, 2), HH_VALS(7, 8, 9, 10, 11, 12));
  cxla_literal *r = dot(&h, a, b, CXLA_F32, 2, HH_DIMS(2, 2), 0, NULL, NULL, 1, HH_DIMS(1), HH_DIMS(0));
  HH_EXPECT(r, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(58, 64, 139, 154), 0);
  /* contracting lhs dim 0 with rhs dim 1: a^T (3x2) . b^T (2x3) -> result [3,3]:
   * r[i][j] = sum_k a[k][i] * b[j][k] */
  cxla_literal *r2 = dot(&h, a, b, CXLA_F32, 2, HH_DIMS(3, 3), 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(1));
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(3, 3),
            HH_VALS(1 * 7 + 4 * 8, 1 * 9 + 4 * 10, 1 * 11 + 4 * 12, 2 * 7 + 5 * 8, 2 * 9 + 5 * 10,
                    2 * 11 + 5 * 12, 3 * 7 + 6 * 8, 3 * 9 + 6 * 10, 3 * 11 + 6 * 12), 0);
  cxla_literal *all[] = {a, b, r, r2};
  hh_free_lits(4, all);
  hh_free(&h);
}

TEST(interp_dot_batch_not_leading) {
  hh h;
  if (!hh_init(&h)) return;
  /* lhs [M=2][B=3][K=4], rhs [K=4][B=3][N=5]; result [B][M][N] */
  cxla_literal *a = hh_rand(CXLA_F32, 3, HH_DIMS(2, 3, 4), 1, -8, 8);
  cxla_literal *b = hh_rand(CXLA_F32, 3, HH_DIMS(4, 3, 5), 2, -8, 8);
  cxla_literal *r = dot(&h, a, b, CXLA_F32, 3, HH_DIMS(3, 2, 5), 1, HH_DIMS(1), HH_DIMS(1), 1,
                        HH_DIMS(2), HH_DIMS(0));
  double want[30];
  for (int bb = 0; bb < 3; bb++)
    for (int m = 0; m < 2; m++)
      for (int n = 0; n < 5; n++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += at(a, (m * 3 + bb) * 4 + k) * at(b, (k * 3 + bb) * 5 + n);
        want[(bb * 2 + m) * 5 + n] = s;
      }
  HH_EXPECT(r, CXLA_F32, 3, HH_DIMS(3, 2, 5), want, 0);
  cxla_literal *all[] = {a, b, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_dot_multiple_contracting_and_outer) {
  hh h;
  if (!hh_init(&h)) return;
  /* lhs [2][3][4], rhs [4][3][5]: contract lhs {1,2} with rhs {1,0} -> [2][5] */
  cxla_literal *a = hh_rand(CXLA_F64, 3, HH_DIMS(2, 3, 4), 3, -9, 9);
  cxla_literal *b = hh_rand(CXLA_F64, 3, HH_DIMS(4, 3, 5), 4, -9, 9);
  cxla_literal *r = dot(&h, a, b, CXLA_F64, 2, HH_DIMS(2, 5), 0, NULL, NULL, 2, HH_DIMS(1, 2),
                        HH_DIMS(1, 0));
  double want[10];
  for (int m = 0; m < 2; m++)
    for (int n = 0; n < 5; n++) {
      double s = 0;
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) s += at(a, (m * 3 + j) * 4 + k) * at(b, (k * 3 + j) * 5 + n);
      want[m * 5 + n] = s;
    }
  HH_EXPECT(r, CXLA_F64, 2, HH_DIMS(2, 5), want, 0);
  /* outer product: no contracting dims */
  cxla_literal *u = hh_lit(CXLA_S32, 1, HH_DIMS(3), HH_VALS(1, 2, 3));
  cxla_literal *v = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(10, -1));
  cxla_literal *o = dot(&h, u, v, CXLA_S32, 2, HH_DIMS(3, 2), 0, NULL, NULL, 0, NULL, NULL);
  HH_EXPECT(o, CXLA_S32, 2, HH_DIMS(3, 2), HH_VALS(10, -1, 20, -2, 30, -3), 0);
  /* vector . vector -> scalar */
  cxla_literal *w = hh_lit(CXLA_S32, 1, HH_DIMS(3), HH_VALS(4, 5, 6));
  cxla_literal *s = dot(&h, u, w, CXLA_S32, 0, NULL, 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(0));
  HH_EXPECT(s, CXLA_S32, 0, NULL, HH_VALS(32), 0);
  cxla_literal *all[] = {a, b, r, u, v, o, w, s};
  hh_free_lits(8, all);
  hh_free(&h);
}

TEST(interp_dot_mixed_types) {
  hh h;
  if (!hh_init(&h)) return;
  /* s8 x s8 -> s32: 127*127*2 + (-128)*127 = 16002 (far outside s8) */
  cxla_literal *a = hh_lit(CXLA_S8, 2, HH_DIMS(1, 3), HH_VALS(127, 127, -128));
  cxla_literal *b = hh_lit(CXLA_S8, 2, HH_DIMS(3, 1), HH_VALS(127, 127, 127));
  cxla_literal *r = dot(&h, a, b, CXLA_S32, 2, HH_DIMS(1, 1), 0, NULL, NULL, 1, HH_DIMS(1), HH_DIMS(0));
  HH_EXPECT(r, CXLA_S32, 2, HH_DIMS(1, 1), HH_VALS(16002), 0);
  /* s32 wraps: 65536*65536 + 1 = 2^32 + 1 -> 1 */
  cxla_literal *c = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(65536, 1));
  cxla_literal *d = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(65536, 1));
  cxla_literal *r2 = dot(&h, c, d, CXLA_S32, 0, NULL, 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(0));
  HH_EXPECT(r2, CXLA_S32, 0, NULL, HH_VALS(1), 0);
  /* bf16 x bf16 -> f32: 1.5*2.25 + 3.015625*256 = 3.375 + 772 = 775.375, exact in f32 but
   * not in bf16 (which would round it to 776) */
  cxla_literal *e = hh_lit(CXLA_BF16, 1, HH_DIMS(2), HH_VALS(1.5, 3.015625));
  cxla_literal *f = hh_lit(CXLA_BF16, 1, HH_DIMS(2), HH_VALS(2.25, 256));
  cxla_literal *r3 = dot(&h, e, f, CXLA_F32, 0, NULL, 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(0));
  HH_EXPECT(r3, CXLA_F32, 0, NULL, HH_VALS(775.375), 0);
  /* f16 -> f32: 2048 + 1 is not representable in f16 but is in f32 */
  cxla_literal *g = hh_lit(CXLA_F16, 1, HH_DIMS(2), HH_VALS(2048, 1));
  cxla_literal *k = hh_lit(CXLA_F16, 1, HH_DIMS(2), HH_VALS(1, 1));
  cxla_literal *r4 = dot(&h, g, k, CXLA_F32, 0, NULL, 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(0));
  HH_EXPECT(r4, CXLA_F32, 0, NULL, HH_VALS(2049), 0);
  /* f32 accumulation is rounded once: 1 + 2^-30 - 1 in double is exact */
  cxla_literal *p = hh_lit(CXLA_F32, 1, HH_DIMS(3), HH_VALS(1, 0x1p-30, -1));
  cxla_literal *q = hh_lit(CXLA_F32, 1, HH_DIMS(3), HH_VALS(1, 1, 1));
  cxla_literal *r5 = dot(&h, p, q, CXLA_F32, 0, NULL, 0, NULL, NULL, 1, HH_DIMS(0), HH_DIMS(0));
  HH_EXPECT(r5, CXLA_F32, 0, NULL, HH_VALS(0x1p-30), 0);
  cxla_literal *all[] = {a, b, r, c, d, r2, e, f, r3, g, k, r4, p, q, r5};
  hh_free_lits(15, all);
  hh_free(&h);
}

TEST(interp_dot_256_speed) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *a = hh_rand(CXLA_F32, 2, HH_DIMS(256, 256), 5, -4, 4);
  cxla_literal *b = hh_rand(CXLA_F32, 2, HH_DIMS(256, 256), 6, -4, 4);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cxla_literal *r = dot(&h, a, b, CXLA_F32, 2, HH_DIMS(256, 256), 0, NULL, NULL, 1, HH_DIMS(1),
                        HH_DIMS(0));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("    256x256x256 f32 dot: %.1f ms\n", ms);
  CHECK_MSG(ms < 1000, "256^3 dot took %.1f ms", ms); /* loose: sanitizer builds are slow */
  if (r) {
    for (int t = 0; t < 50; t++) {
      int i = (t * 37) % 256, j = (t * 101) % 256;
      double s = 0;
      for (int k = 0; k < 256; k++) s += at(a, i * 256 + k) * at(b, k * 256 + j);
      CHECK_NEAR(at(r, i * 256 + j), s, 0);
    }
  }
  cxla_literal *all[] = {a, b, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_dot_bad_dims_fail_cleanly) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *a = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), NULL), *b = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), NULL);
  cxla_literal *ops[2] = {a, b};
  cx_instr *in = hh_instr1(&h, CX_OP_DOT, CXLA_F32, 2, HH_DIMS(2, 2), 2, ops);
  cxla_literal *out = NULL;
  if (in) {
    hh_ints(&h, &in->a.dot.lhs_contract, 1, HH_DIMS(1));
    hh_ints(&h, &in->a.dot.rhs_contract, 1, HH_DIMS(0)); /* 3 vs 2 */
    CHECK(cx_interp_dot(&h.st, in, ops, &out) == CXLA_ERR_VERIFY);
    hh_ints(&h, &in->a.dot.rhs_contract, 1, HH_DIMS(7));
    CHECK(cx_interp_dot(&h.st, in, ops, &out) == CXLA_ERR_VERIFY);
    CHECK(out == NULL);
  }
  hh_free_lits(2, ops);
  hh_free(&h);
}
