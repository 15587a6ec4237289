/* test_cpu_sort_scatter.c — sort, scatter and select-and-scatter run natively on the cpu
 * (sort_scatter.h): every case bit-exact against the interpreter, with no fallback. Inputs are
 * pseudo-random with many equal values (stability and colliding indices matter), the
 * comparators and combiners both the inline forms (f32 add/max/min, GE/GT select) and
 * arbitrary ones called through the emitted functions, along every dimension, with fusion on
 * and off. A LeNet-style step (conv, ReLU, max-pool, its gradient) compiles with no fallback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_cpu_helpers.h"

/* "T[n] {...}": n values from a linear congruential sequence, integers in [lo, lo + span)
 * scaled by `scale` (malloc'd). */
static char *rand_lit(const char *type, int n, int span, int lo, double scale, unsigned seed) {
  size_t cap = 64 + (size_t)n * 24, at = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  at += (size_t)snprintf(s, cap, "%s[%d] {", type, n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    double v = (double)((int)((seed >> 8) % (unsigned)span) + lo) * scale;
    at += (size_t)snprintf(s + at, cap - at, "%s%.17g", i ? ", " : "", v);
  }
  snprintf(s + at, cap - at, "}");
  return s;
}

static void run_case(const char *text, int nargs, char **in, const char *flags) {
  char *stats = NULL;
  int ok = cpu_check(text, nargs, (const char *const *)in, flags, 0, 0, &stats, NULL);
  if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0, "ran on the interpreter: %s\n%s", stats, text);
  free(stats);
}

static const char *const k_flags[2] = {NULL, "--fusion=off"};

TEST(cpu_sort_native_any_dim_variadic_stable) {
  char text[2048];
  for (int dim = 0; dim < 3; dim++)
    for (int f = 0; f < 2; f++) {
      /* keys with many ties, payload = position: the order of ties shows the stability */
      snprintf(text, sizeof text,
               "HloModule s\n"
               "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
               "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
               "  ROOT r = pred[] compare(a, b), direction=%s\n}\n"
               "ENTRY main {\n  p = f32[420] parameter(0)\n  x = f32[5,12,7] reshape(p)\n"
               "  i = s32[5,12,7] iota(), iota_dimension=%d\n"
               "  ROOT s = (f32[5,12,7], s32[5,12,7]) sort(x, i), dimensions={%d}, is_stable=%s, to_apply=cmp\n}\n",
               f ? "GT" : "LT", dim, dim, f ? "false" : "true");
      char *in[1] = {rand_lit("f32", 420, 9, -4, 0.5, 7u + (unsigned)dim)};
      run_case(text, 1, in, k_flags[f]);
      free(in[0]);
    }
}

TEST(cpu_sort_native_custom_comparator) {
  /* by |x| descending, then by x ascending; on f64 and s32 operands */
  static const char text[] =
      "HloModule s\n"
      "cmp {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  aa = f64[] abs(a)\n  ab = f64[] abs(b)\n  gt = pred[] compare(aa, ab), direction=GT\n"
      "  eq = pred[] compare(aa, ab), direction=EQ\n  lt = pred[] compare(a, b), direction=LT\n"
      "  t = pred[] and(eq, lt)\n  ROOT r = pred[] or(gt, t)\n}\n"
      "ENTRY main {\n  p = f64[600] parameter(0)\n  x = f64[3,200] reshape(p)\n"
      "  q = s32[600] parameter(1)\n  y = s32[3,200] reshape(q)\n"
      "  ROOT s = (f64[3,200], s32[3,200]) sort(x, y), dimensions={1}, to_apply=cmp\n}\n";
  char *in[2] = {rand_lit("f64", 600, 21, -10, 0.25, 3u), rand_lit("s32", 600, 1000, 0, 1, 5u)};
  for (int f = 0; f < 2; f++) run_case(text, 2, in, k_flags[f]);
  free(in[0]);
  free(in[1]);
}

/* embedding-gradient style: rows of 16 added at colliding (and out-of-bounds) indices */
static void scatter_case(const char *comb_body, const char *type, int window) {
  char text[2048];
  if (window)
    snprintf(text, sizeof text,
             "HloModule sc\ncomb {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n%s}\n"
             "ENTRY main {\n  x = %s[10,16] parameter(0)\n  i = s32[40,1] parameter(1)\n  u = %s[40,16] parameter(2)\n"
             "  ROOT s = %s[10,16] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},\n"
             "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb\n}\n",
             type, type, comb_body, type, type, type);
  else /* 2-d indices into a matrix, one element each */
    snprintf(text, sizeof text,
             "HloModule sc\ncomb {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n%s}\n"
             "ENTRY main {\n  x = %s[10,16] parameter(0)\n  i = s32[40,2] parameter(1)\n  u = %s[40] parameter(2)\n"
             "  ROOT s = %s[10,16] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1},\n"
             "      scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=comb\n}\n",
             type, type, comb_body, type, type, type);
  char ix[1024];
  int at = snprintf(ix, sizeof ix, "s32[40,%d] {", window ? 1 : 2);
  unsigned seed = 11;
  for (int r = 0; r < 40; r++) {
    seed = seed * 1103515245u + 12345u;
    int a = (int)((seed >> 8) % 12) - 1, b = (int)((seed >> 16) % 18) - 1; /* a few out of bounds */
    at += window ? snprintf(ix + at, sizeof ix - (size_t)at, "%s{%d}", r ? ", " : "", a)
                 : snprintf(ix + at, sizeof ix - (size_t)at, "%s{%d, %d}", r ? ", " : "", a, b);
  }
  snprintf(ix + at, sizeof ix - (size_t)at, "}");
  char *x = rand_lit(type, 160, 17, -8, 0.5, 2u), *u = rand_lit(type, window ? 640 : 40, 17, -8, 0.25, 9u);
  /* the literal text is flat: reshape through the parameter shape */
  char xs[4096], us[16384];
  snprintf(xs, sizeof xs, "%s[10,16] {", type);
  char *p = strchr(x, '{') + 1;
  size_t n = strlen(xs);
  for (int r = 0; r < 10; r++) {
    n += (size_t)snprintf(xs + n, sizeof xs - n, "%s{", r ? ", " : "");
    for (int c = 0; c < 16; c++) {
      char *e = strpbrk(p, ",}");
      n += (size_t)snprintf(xs + n, sizeof xs - n, "%s%.*s", c ? ", " : "", (int)(e - p), p);
      p = e + 1;
      while (*p == ' ') p++;
    }
    n += (size_t)snprintf(xs + n, sizeof xs - n, "}");
  }
  snprintf(xs + n, sizeof xs - n, "}");
  if (window) {
    snprintf(us, sizeof us, "%s[40,16] {", type);
    p = strchr(u, '{') + 1;
    n = strlen(us);
    for (int r = 0; r < 40; r++) {
      n += (size_t)snprintf(us + n, sizeof us - n, "%s{", r ? ", " : "");
      for (int c = 0; c < 16; c++) {
        char *e = strpbrk(p, ",}");
        n += (size_t)snprintf(us + n, sizeof us - n, "%s%.*s", c ? ", " : "", (int)(e - p), p);
        p = e + 1;
        while (*p == ' ') p++;
      }
      n += (size_t)snprintf(us + n, sizeof us - n, "}");
    }
    snprintf(us + n, sizeof us - n, "}");
  } else {
    snprintf(us, sizeof us, "%s", u);
  }
  char *in[3] = {xs, ix, us};
  for (int f = 0; f < 2; f++) run_case(text, 3, in, k_flags[f]);
  free(x);
  free(u);
}

TEST(cpu_scatter_native_combiners) {
  static const char *const bodies[] = {
      "  ROOT c = T[] add(a, b)\n", "  ROOT c = T[] maximum(a, b)\n", "  ROOT c = T[] minimum(a, b)\n",
      "  ROOT c = T[] add(b, a)\n", /* not the inline form: through the emitted function */
      "  h = T[] constant(0.5)\n  m = T[] multiply(a, h)\n  ROOT c = T[] subtract(m, b)\n", /* not commutative */
      "  ROOT c = T[] copy(b)\n",                                                            /* overwrite */
  };
  static const char *const types[] = {"f32", "f64"};
  for (int t = 0; t < 2; t++)
    for (int b = 0; b < 6; b++)
      for (int w = 0; w < 2; w++) {
        char body[256];
        size_t n = 0;
        for (const char *q = bodies[b]; *q && n < sizeof body - 4; q++) /* T -> the type */
          if (*q == 'T' && q[1] == '[') n += (size_t)snprintf(body + n, sizeof body - n, "%s", types[t]);
          else body[n++] = *q;
        body[n] = 0;
        scatter_case(body, types[t], w);
      }
}

TEST(cpu_scatter_native_variadic) {
  static const char text[] =
      "HloModule sc\ncomb {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n"
      "  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n  m = s32[] maximum(b, d)\n  ROOT r = (f32[], s32[]) tuple(s, m)\n}\n"
      "ENTRY main {\n  x = f32[8] parameter(0)\n  y = s32[8] parameter(1)\n  i = s32[12] parameter(2)\n"
      "  u = f32[12] parameter(3)\n  v = s32[12] parameter(4)\n"
      "  ROOT s = (f32[8], s32[8]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0},\n"
      "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb\n}\n";
  char *in[5] = {rand_lit("f32", 8, 9, -4, 0.5, 1u), rand_lit("s32", 8, 100, -50, 1, 2u),
                 rand_lit("s32", 12, 10, -1, 1, 3u), rand_lit("f32", 12, 9, -4, 0.5, 4u),
                 rand_lit("s32", 12, 100, -50, 1, 5u)};
  for (int f = 0; f < 2; f++) run_case(text, 5, in, k_flags[f]);
  for (int i = 0; i < 5; i++) free(in[i]);
}

/* max-pool gradients: NHWC 2x2/2, overlapping 3x3/2 with padding, and NCHW (no independent
 * leading dim but the batch), GE and GT, f32 inline (element by element, and NHWC by rows of
 * channels) and f64 through the emitted functions; windows that tile the operand (each result
 * element written once, no init_value pass: rt/select_scatter.c tiled_rows, and fast_slices for
 * NCHW) also with an init_value other than 0, and one that leaves a last row and column out */
TEST(cpu_select_and_scatter_native) {
  static const struct {
    const char *x, *src, *window, *dir, *type;
    int nx, nsrc;
    const char *init; /* NULL: 0 */
  } cases[] = {
      {"4,8,8,3", "4,4,4,3", "size=1x2x2x1 stride=1x2x2x1", "GE", "f32", 768, 192},
      {"2,9,9,2", "2,5,5,2", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "GE", "f32", 324, 100},
      {"2,3,7,7", "2,3,3,3", "size=1x1x3x3 stride=1x1x2x2", "GT", "f32", 294, 54},
      {"2,9,9,2", "2,5,5,2", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "GE", "f64", 324, 100},
      {"3,10", "2,5", "size=2x4 stride=1x2 pad=0_0x1_1", "GT", "f32", 30, 10},
      /* rows of channels (rt/select_scatter.c row_slices): more than one chunk of 64, GT, and
       * overlapping padded windows over a row of 5 */
      {"2,6,6,70", "2,3,3,70", "size=1x2x2x1 stride=1x2x2x1", "GT", "f32", 5040, 1260},
      {"2,7,7,5", "2,4,4,5", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "GE", "f32", 490, 160},
      {"2,6,6,20", "2,2,2,20", "size=1x3x3x1 stride=1x3x3x1", "GT", "f32", 1440, 160, "-1.5"},
      {"4,8,8,3", "4,4,4,3", "size=1x2x2x1 stride=1x2x2x1", "GE", "f32", 768, 192, "0.75"},
      {"2,3,8,8", "2,3,4,4", "size=1x1x2x2 stride=1x1x2x2", "GE", "f32", 384, 96, "2"},
      {"2,3,8,8", "2,3,4,4", "size=1x1x2x2 stride=1x1x2x2", "GT", "f32", 384, 96},
      {"2,7,7,3", "2,3,3,3", "size=1x2x2x1 stride=1x2x2x1", "GE", "f32", 294, 54, "1"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char text[2048];
    const char *t = cases[c].type;
    snprintf(text, sizeof text,
             "HloModule sas\nsel {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
             "  ROOT r = pred[] compare(a, b), direction=%s\n}\n"
             "sct {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] add(a, b)\n}\n"
             "ENTRY main {\n  p = %s[%d] parameter(0)\n  x = %s[%s] reshape(p)\n  q = %s[%d] parameter(1)\n"
             "  s = %s[%s] reshape(q)\n  z = %s[] constant(%s)\n"
             "  ROOT r = %s[%s] select-and-scatter(x, s, z), window={%s}, select=sel, scatter=sct\n}\n",
             t, t, cases[c].dir, t, t, t, t, cases[c].nx, t, cases[c].x, t, cases[c].nsrc, t, cases[c].src, t,
             cases[c].init ? cases[c].init : "0", t, cases[c].x, cases[c].window);
    char *in[2] = {rand_lit(t, cases[c].nx, 7, -3, 0.5, 13u + (unsigned)c), rand_lit(t, cases[c].nsrc, 9, -4, 0.25, 5u)};
    for (int f = 0; f < 2; f++) run_case(text, 2, in, k_flags[f]);
    free(in[0]);
    free(in[1]);
  }
}

/* max-pool gradients fused into their consumer (passes/fusion.c: a select-and-scatter whose
 * windows are disjoint, codegen's cx_gen_select_and_scatter): an elementwise consumer that
 * also reads the pooled operand, and a column sum of it (a kInput fusion, as a conv bias's
 * gradient reads it) as the result, on windows that tile the operand, leave a last row and column out, have
 * gaps (stride > size), padding on both sides, a negative high padding and no window dims at
 * all; GE, GT and LE selects, f32 and f64, an init other than 0, many ties (a ReLU's zeros),
 * and NaNs in the operand. Exact against the interpreter but for the sum's order. */
TEST(cpu_select_and_scatter_fused) {
  static const struct {
    const char *x, *src, *sum, *window, *dir, *type; /* sum: x without dims 1 and 2 */
    int nx, nsrc;
    const char *init; /* NULL: 0 */
    int nans;
  } cases[] = {
      {"4,8,8,3", "4,4,4,3", "4,3", "size=1x2x2x1 stride=1x2x2x1", "GE", "f32", 768, 192},
      {"2,7,7,3", "2,3,3,3", "2,3", "size=1x2x2x1 stride=1x2x2x1", "GT", "f32", 294, 54, "1"},
      {"2,9,9,2", "2,3,3,2", "2,2", "size=1x2x2x1 stride=1x3x3x1", "GE", "f32", 324, 36},
      {"2,7,7,3", "2,4,4,3", "2,3", "size=1x2x2x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "GE", "f64", 294, 96},
      {"2,8,6,3", "2,3,3,3", "2,3", "size=1x2x2x1 stride=1x2x2x1 pad=0_0x0_-2x0_0x0_0", "LE", "f32", 288, 54, "-0.5"},
      {"2,6,6,20", "2,2,2,20", "2,20", "size=1x3x3x1 stride=1x3x3x1", "GT", "f32", 1440, 160, NULL, 1},
      {"2,3,8,8", "2,3,4,4", "2,8", "size=1x1x2x2 stride=1x1x2x2", "GE", "f32", 384, 96, NULL, 1},
      {"3,4,5,2", "3,4,5,2", "3,2", "size=1x1x1x1 stride=1x1x1x1", "GE", "f32", 120, 120},
  };
  for (size_t k = 0; k < 2 * sizeof cases / sizeof *cases; k++) {
    size_t c = k / 2;
    int root = (int)(k % 2); /* the sum the result (kInput) or e (kLoop) */
    char text[3072];
    const char *t = cases[c].type;
    /* the ReLU gives ties of zeros; log of a negative gives NaNs */
    const char *act = cases[c].nans ? "log(x0)" : "maximum(x0, zb)";
    snprintf(text, sizeof text,
             "HloModule sas_fused\nsel {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
             "  ROOT r = pred[] compare(a, b), direction=%s\n}\n"
             "sct {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] add(a, b)\n}\n"
             "ENTRY main {\n  p = %s[%d] parameter(0)\n  x0 = %s[%s] reshape(p)\n  zero = %s[] constant(0)\n"
             "  zb = %s[%s] broadcast(zero), dimensions={}\n  x = %s[%s] %s\n  q = %s[%d] parameter(1)\n"
             "  s = %s[%s] reshape(q)\n  z = %s[] constant(%s)\n"
             "  g = %s[%s] select-and-scatter(x, s, z), window={%s}, select=sel, scatter=sct\n"
             "  e = %s[%s] multiply(g, x0)\n  %s = %s[%s] reduce(e, zero), dimensions={1,2}, to_apply=sct\n}\n",
             t, t, cases[c].dir, t, t, t, t, cases[c].nx, t, cases[c].x, t, t, cases[c].x, t, cases[c].x, act, t,
             cases[c].nsrc, t, cases[c].src, t, cases[c].init ? cases[c].init : "0", t, cases[c].x, cases[c].window, t,
             cases[c].x, root ? "ROOT sum" : "sum", t, cases[c].sum);
    if (!root) { /* e the result instead of the sum: a kLoop fusion */
      char *at = strstr(text, "  e = ");
      memmove(at + 7, at + 2, strlen(at + 2) + 1);
      memcpy(at + 2, "ROOT ", 5);
    }
    char *in[2] = {rand_lit(t, cases[c].nx, 7, -3, 0.5, 29u + (unsigned)c), rand_lit(t, cases[c].nsrc, 9, -4, 0.25, 11u)};
    char *stats = NULL;
    int ok = cpu_check(text, 2, (const char *const *)in, NULL, 1e-6, 1e-6, &stats, NULL);
    if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0, "ran on the interpreter: %s\n%s", stats, text);
    free(stats);
    free(in[0]);
    free(in[1]);
  }
}

/* One LeNet-style training step's max-pool layer: conv + ReLU, 2x2 max-pool forward, and the
 * gradient of a sum of squares through the pool (select-and-scatter) and the ReLU. */
TEST(cpu_lenet_step_has_no_fallback) {
  static const char text[] =
      "HloModule lenet\n"
      "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
      "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GE\n}\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
      "ENTRY step {\n  p = f32[2304] parameter(0)\n  x = f32[4,12,12,4] reshape(p)\n"
      "  q = f32[144] parameter(1)\n  w = f32[3,3,4,4] reshape(q)\n"
      "  c = f32[4,12,12,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  z = f32[] constant(0)\n  zb = f32[4,12,12,4] broadcast(z), dimensions={}\n"
      "  r = f32[4,12,12,4] maximum(c, zb)\n  ninf = f32[] constant(-inf)\n"
      "  mp = f32[4,6,6,4] reduce-window(r, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n"
      "  two = f32[] constant(2)\n  tb = f32[4,6,6,4] broadcast(two), dimensions={}\n"
      "  g = f32[4,6,6,4] multiply(mp, tb)\n"
      "  gr = f32[4,12,12,4] select-and-scatter(r, g, z), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add\n"
      "  pos = pred[4,12,12,4] compare(c, zb), direction=GT\n"
      "  gc = f32[4,12,12,4] select(pos, gr, zb)\n"
      "  gw = f32[3,3,4,4] convolution(x, gc), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf\n"
      "  sq = f32[4,6,6,4] multiply(mp, mp)\n  loss = f32[] reduce(sq, z), dimensions={0,1,2,3}, to_apply=add\n"
      "  ROOT t = (f32[], f32[3,3,4,4]) tuple(loss, gw)\n}\n";
  char *in[2] = {rand_lit("f32", 2304, 15, -7, 0.125, 3u), rand_lit("f32", 144, 9, -4, 0.125, 4u)};
  char *stats = NULL;
  int ok = cpu_check(text, 2, (const char *const *)in, NULL, 1e-5, 1e-5, &stats, NULL);
  if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0, "the step ran on the interpreter: %s", stats);
  free(stats);
  free(in[0]);
  free(in[1]);
}

/* The training modules of the corpus compile with no interpreter fallback. (jax_opt's
 * layer_norm_grad and mlp_train_step still have fusions the emitter refuses: ynn kCustom
 * fusions and reduces over different dims in one fusion, not sort/scatter.) */
TEST(cpu_training_modules_have_no_fallback) {
  static const char *const files[] = {"jax/jit_mlp.hlo", "jax_opt/conv_grad.hlo", "jax_opt/attention_grad.hlo"};
  cxla_context *ctx = test_ctx();
  for (int i = 0; i < 3; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/hlo/%s", test_srcdir(), files[i]);
    cxla_module *m = NULL;
    cxla_executable *e = NULL;
    CHECK_OK(cxla_module_parse_file(ctx, path, &m));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = "cpu";
    if (m) CHECK_OK(cxla_compile(m, &o, &e));
    if (e) CHECK_MSG(cpu_fallbacks(cxla_executable_compile_counts(e)) == 0, "%s: %s", files[i],
                     cxla_executable_compile_counts(e));
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

/* The inline f32 comparators on NaN, -0 and +0, infinities and ties, stable and by position:
 * FLOAT with NaN (the merge sort), FLOAT without NaN (-0 and +0 equivalent) and TOTALORDER
 * (the radix sort), ascending and descending. */
TEST(cpu_sort_native_f32_special_values) {
  static const char *const inputs[] = {
      "f32[12] {nan, -0, 0, 1, -1, inf, -inf, nan, 0, -0, 2, 1}",
      "f32[12] {0, -0, 1, -1, inf, -inf, 0, -0, 2, 1, -2, 0}",
  };
  static const char *const kinds[] = {"LT", "GT", "LT, type=TOTALORDER", "GT, type=TOTALORDER"};
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      char text[1024];
      snprintf(text, sizeof text,
               "HloModule s\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
               "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=%s\n}\n"
               "ENTRY main {\n  x = f32[12] parameter(0)\n  i = s32[12] iota(), iota_dimension=0\n"
               "  ROOT s = (f32[12], s32[12]) sort(x, i), dimensions={0}, is_stable=true, to_apply=cmp\n}\n",
               kinds[k]);
      char *in[1] = {(char *)inputs[i]};
      run_case(text, 1, in, NULL);
    }
}

/* Indices at the ends of s64 (and just past the operand) are skipped, on the cpu runtime as in
 * the interpreter, with no overflow in the offset they would have had (UBSan checks that). */
TEST(cpu_scatter_extreme_indices_skipped) {
  static const char text[] =
      "HloModule sc\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4,3] parameter(0)\n  i = s64[5,1] parameter(1)\n  u = f32[5,3] parameter(2)\n"
      "  ROOT s = f32[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
  const char *in[3] = {"f32[4,3] {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}}",
                       "s64[5,1] {{-9223372036854775808}, {9223372036854775807}, {2}, {4}, {-1}}",
                       "f32[5,3] {{100, 100, 100}, {200, 200, 200}, {0.5, 0.25, 0.125}, {300, 300, 300}, {400, 400, 400}}"};
  cxla_literal *got = NULL;
  CHECK(cpu_check(text, 3, in, NULL, 0, 0, NULL, &got));
  if (got) { /* only row 2 changed */
    const float *v = (const float *)got->data;
    CHECK_MSG(v[6] == 7.5f && v[7] == 8.25f && v[8] == 9.125f && v[0] == 1 && v[11] == 12, "row 2: %g %g %g", v[6], v[7], v[8]);
  }
  cxla_literal_destroy(got);
}
