/* test_codegen_window.c — generators with inner loops: reduce-window (strides, padding, base and
 * window dilation, variadic), map, and the direct convolution (dim_labels, strides, padding,
 * dilations, reversal, feature and batch groups), against the interpreter. */
#include "codegen_harness.h"

#define COMPS                                                                                  \
  "HloModule w\n"                                                                              \
  "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"   \
  "mx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n" \
  "imin {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] minimum(a, b)\n}\n" \
  "sum_max {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n"      \
  " d = s32[] parameter(3)\n s = f32[] add(a, c)\n m = s32[] maximum(b, d)\n"                  \
  " ROOT t = (f32[], s32[]) tuple(s, m)\n}\n"                                                  \
  "fma1 {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n m = f32[] multiply(x, y)\n"      \
  " one = f32[] constant(1)\n ROOT s = f32[] add(m, one)\n}\n"                                 \
  "sq {\n x = s32[] parameter(0)\n m = s32[] multiply(x, x)\n ROOT s = s32[] subtract(m, x)\n}\n"

static void run(const char *body, cgt_opts o, int n, const char *file, int line) {
  char text[8192];
  snprintf(text, sizeof text, "%s%s", COMPS, body);
  for (int s = 1; s <= 2; s++) {
    o.seed = (uint64_t)s;
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "seed %d failed", s);
    if (n >= 0 && o.nfusions != n) test_fail(file, line, "%d fusions, expected %d", o.nfusions, n);
  }
}
#define RUN(body, o, n) run((body), (o), (n), __FILE__, __LINE__)

/* windows are folded in the interpreter's order, so sums are exact too */
static const cgt_opts EXACT = {.fusion_pass = 1};

TEST(codegen_window_reduce_window_1d) {
  RUN("ENTRY e {\n x = f32[11] parameter(0)\n zero = f32[] constant(0)\n"
      " r0 = f32[10] reduce-window(x, zero), window={size=2}, to_apply=add\n"
      " r1 = f32[5] reduce-window(x, zero), window={size=2 stride=2}, to_apply=add\n"
      " r2 = f32[13] reduce-window(x, zero), window={size=2 pad=1_2}, to_apply=add\n"
      " r3 = f32[11] reduce-window(x, zero), window={size=4 pad=3_0}, to_apply=add\n"
      " r4 = f32[5] reduce-window(x, zero), window={size=3 stride=2 pad=0_1}, to_apply=add\n"
      " r5 = f32[19] reduce-window(x, zero), window={size=3 lhs_dilate=2}, to_apply=add\n"
      " r6 = f32[7] reduce-window(x, zero), window={size=3 rhs_dilate=2}, to_apply=add\n"
      " r7 = f32[7] reduce-window(x, zero), window={size=3 stride=3 pad=2_3 lhs_dilate=2 rhs_dilate=3}, to_apply=add\n"
      " r8 = f32[1] reduce-window(x, zero), window={size=2 pad=-4_-5}, to_apply=add\n"
      " ROOT t = (f32[10], f32[5], f32[13], f32[11], f32[5], f32[19], f32[7], f32[7], f32[1])"
      " tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8)\n}\n", EXACT, 9);
}

TEST(codegen_window_pooling_2d_and_variadic) {
  RUN("ENTRY e {\n x = f32[2,9,10,3] parameter(0)\n ninf = f32[] constant(-inf)\n zero = f32[] constant(0)\n"
      " r0 = f32[2,4,5,3] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x1_1x0_0}, to_apply=mx\n"
      " r1 = f32[2,9,10,3] reduce-window(x, zero), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=add\n"
      " y = s32[6,7] parameter(1)\n big = s32[] constant(2147483647)\n"
      " r2 = s32[3,7] reduce-window(y, big), window={size=2x3 stride=2x1 pad=0_0x1_1}, to_apply=imin\n"
      " a = f32[12] parameter(2)\n b = s32[12] parameter(3)\n bz = s32[] constant(-5)\n"
      " r3 = (f32[11], s32[11]) reduce-window(a, b, zero, bz), window={size=2}, to_apply=sum_max\n"
      " ROOT t = (f32[2,4,5,3], f32[2,9,10,3], s32[3,7], (f32[11], s32[11])) tuple(r0, r1, r2, r3)\n}\n", EXACT, 4);
}

/* fma1 is x*y + 1: contracted into an FMA (allowed, as in XLA), so not bit exact */
TEST(codegen_window_map) {
  cgt_opts o = {.fusion_pass = 1, .ulps = 2, .atol = 1e-5};
  RUN("ENTRY e {\n a = f32[20,30] parameter(0)\n b = f32[20,30] parameter(1)\n c = s32[50] parameter(2)\n"
      " m = f32[20,30] map(a, b), dimensions={0,1}, to_apply=fma1\n n = s32[50] map(c), dimensions={0}, to_apply=sq\n"
      " ROOT t = (f32[20,30], s32[50]) tuple(m, n)\n}\n", o, 2);
}

/* A convolution as a single-op fusion (the direct generator). Products are summed in f32 (with
 * reassociation) where the interpreter sums in double, hence a tolerance for floats; integer
 * results wrap the same way and are exact. */
static void run_conv(const char *lhs, const char *rhs, const char *res, const char *attrs, int is_float,
                     const char *file, int line) {
  char text[4096];
  snprintf(text, sizeof text,
           "HloModule c\nfc {\n p0 = %s parameter(0)\n p1 = %s parameter(1)\n ROOT c = %s convolution(p0, p1), %s\n}\n"
           "ENTRY e {\n a = %s parameter(0)\n b = %s parameter(1)\n ROOT f = %s fusion(a, b), kind=kLoop, calls=fc\n}\n",
           lhs, rhs, res, attrs, lhs, rhs, res);
  cgt_opts o = {.no_specials = is_float, .lo = -2, .hi = 2, .atol = 1e-4, .rtol = 1e-5};
  for (int s = 1; s <= 2; s++) {
    o.seed = (uint64_t)s;
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "%s seed %d failed", attrs, s);
  }
}
#define CONV(l, r, res, attrs, f) run_conv((l), (r), (res), (attrs), (f), __FILE__, __LINE__)

TEST(codegen_window_convolution) {
  CONV("f32[1,2,3,3]", "f32[3,2,2,2]", "f32[1,3,2,2]", "window={size=2x2}, dim_labels=bf01_oi01->bf01", 1);
  CONV("f32[2,9,9,4]", "f32[3,3,4,8]", "f32[2,9,9,8]", "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 1);
  CONV("f32[2,10,11,3]", "f32[3,3,3,5]", "f32[2,5,5,5]", "window={size=3x3 stride=2x2 pad=1_0x0_0}, dim_labels=b01f_01io->b01f", 1);
  CONV("s32[1,3,7]", "s32[2,3,3]", "s32[1,2,5]", "window={size=3}, dim_labels=bf0_oi0->bf0", 0);
  CONV("s8[1,7,3]", "s8[3,3,2]", "s32[1,5,2]", "window={size=3}, dim_labels=b0f_0io->b0f", 0);
  CONV("f16[1,4,3]", "f16[2,3,1]", "f16[1,3,1]", "window={size=2}, dim_labels=b0f_0io->b0f", 1);
  CONV("f64[1,5,1]", "f64[3,1,2]", "f64[1,3,2]", "window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f", 1);
  CONV("f32[1,5,1]", "f32[2,1,1]", "f32[1,3,1]", "window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f", 1);
  CONV("f32[1,4,1]", "f32[2,1,1]", "f32[1,8,1]", "window={size=2 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f", 1);
  CONV("f32[1,5,1]", "f32[3,1,1]", "f32[1,3,1]", "window={size=3 rhs_reversal=1}, dim_labels=b0f_0io->b0f", 1);
  CONV("f32[1,6,4]", "f32[2,2,6]", "f32[1,5,6]", "window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2", 1);
  CONV("f32[4,6,3]", "f32[2,3,6]", "f32[2,5,6]", "window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2", 1);
  CONV("f32[3,8,8,2]", "f32[3,3,2,4]", "f32[3,4,3,4]", "window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f", 1);
  CONV("f32[2,3,6,6]", "f32[4,3,2,2]", "f32[2,4,3,3]", "window={size=2x2 stride=2x2}, dim_labels=bf01_oi01->bf01", 1);
}
