/* test_row_max.c — the cpu row kernel's vector max pass (reduce_emit.c, fast_max_pass): a max
 * over rows of a fused operand must give llvm.maximum's answer bit for bit (NaN propagates,
 * -0 < +0), on rows that take the vector pass and on those it hands to the ordinary one (a
 * NaN, a zero maximum). Also through softmax, the pass's reason for being. */
#include "codegen_harness.h"

#define ROWS 64
#define COLS 256

/* Row kinds: random; a NaN at some column; +inf; -inf everywhere but one value; all -0; -0
 * then +0 (maximum +0); negative values only; the largest value at the last column. */
static void fill_rows(cxla_literal *lit, int k, void *user) {
  float *x = lit->data;
  uint64_t rs = 99 + (uint64_t)k;
  (void)user;
  if (cx_shape_elems(&lit->shape) != ROWS * COLS) return;
  for (int r = 0; r < ROWS; r++)
    for (int j = 0; j < COLS; j++) {
      float u = (float)((double)(cgt_rand(&rs) >> 11) / 9007199254740992.0);
      float v = -8 + 16 * u;
      switch (r % 8) {
      case 1: v = j == (r * 7) % COLS ? __builtin_nanf("") : v; break;
      case 2: v = j == 3 ? __builtin_inff() : v; break;
      case 3: v = j == 200 ? -5.0f : -__builtin_inff(); break;
      case 4: v = -0.0f; break;
      case 5: v = j < COLS / 2 ? -0.0f : 0.0f; break; /* each lane meets -0 first */
      case 6: v = -1 - u; break;
      case 7: v = j == COLS - 1 ? 100.0f : v; break;
      default: break;
      }
      x[r * COLS + j] = v;
    }
}

/* Bit for bit against the interpreter (the harness counts -0 and +0 as equal values); the
 * pass's use checked on the IR. */
TEST(row_max_vector_pass) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\n"
           "ENTRY e {\n x = f32[%d,%d] parameter(0)\n c = f32[] constant(-inf)\n"
           " ROOT r = f32[%d] reduce(x, c), dimensions={1}, to_apply=mx\n}\n", ROWS, COLS, ROWS);
  char *ir = NULL;
  cgt_opts o = {.fusion_pass = 3, .ulps = 0, .fill = fill_rows, .chunks = 3, .ir = &ir};
  CHECK_MSG(CGT(text, &o) == 0, "row max differs from the interpreter's");
  CHECK_MSG(ir && strstr(ir, "max_slow"), "the vector max pass was not used");
  cx_free(ir);
  int64_t dims[2] = {ROWS, COLS};
  cxla_literal *x = cxla_literal_create(test_ctx(), CXLA_F32, 2, dims);
  CHECK(x != NULL);
  if (!x) return;
  fill_rows((cxla_literal *)x, 0, NULL);
  cxla_literal *got = test_run_text(text, "cpu", "cpu", x), *want = test_run_text(text, "interp", "interp", x);
  if (got && want) {
    const uint32_t *g = cxla_literal_data(got), *w = cxla_literal_data(want);
    for (int r = 0; r < ROWS; r++) {
      int nan = (g[r] & 0x7fffffffu) > 0x7f800000u && (w[r] & 0x7fffffffu) > 0x7f800000u; /* any NaN */
      CHECK_MSG(g[r] == w[r] || nan, "row %d: max 0x%08x, the interpreter's 0x%08x", r, g[r], w[r]);
    }
  }
  cxla_literal_destroy(got);
  cxla_literal_destroy(want);
  cxla_literal_destroy(x);
}

/* Softmax over the same rows: its max takes the vector pass; the results agree with the
 * interpreter within the exp's and the sum's error (NaN rows NaN, -inf rows as the divide). */
TEST(row_max_softmax) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\n"
           "ad {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
           "ENTRY e {\n x = f32[%d,%d] parameter(0)\n c = f32[] constant(-inf)\n z = f32[] constant(0)\n"
           " m = f32[%d] reduce(x, c), dimensions={1}, to_apply=mx\n bm = f32[%d,%d] broadcast(m), dimensions={0}\n"
           " d = f32[%d,%d] subtract(x, bm)\n e = f32[%d,%d] exponential(d)\n"
           " s = f32[%d] reduce(e, z), dimensions={1}, to_apply=ad\n bs = f32[%d,%d] broadcast(s), dimensions={0}\n"
           " ROOT q = f32[%d,%d] divide(e, bs)\n}\n",
           ROWS, COLS, ROWS, ROWS, COLS, ROWS, COLS, ROWS, COLS, ROWS, ROWS, COLS, ROWS, COLS);
  char *ir = NULL;
  cgt_opts o = {.fusion_pass = 3, .rtol = 1e-5, .atol = 1e-30, .fill = fill_rows, .chunks = 3, .ir = &ir};
  CHECK_MSG(CGT(text, &o) == 0, "softmax differs from the interpreter's");
  CHECK_MSG(ir && strstr(ir, "max_slow"), "the vector max pass was not used");
  cx_free(ir);
}
