/* test_cpu_conv.c — convolutions on the cpu backend against the interpreter: big enough f32
 * and bf16 ones through oneDNN (cx_rt_conv_dnnl) where it applies, the other f32 and f64 ones
 * (and all of them with --cpu-onednn=off) through im2col + GEMM (cx_rt_conv_im2col with the
 * descriptor the sequencer builds), small or f16 ones through the emitter's loop nest. Layouts (NHWC, NCHW, odd
 * dim_labels orders), strides, padding, base and window dilation, window reversal, feature and
 * batch groups, the CNN training step's gradient convolutions, 1-D and 0-D spatial cases.
 * Small integer values keep every sum exact in f32. */
#include <stdlib.h>
#include "test_cpu_helpers.h"

typedef struct conv_case {
  const char *labels;            /* dim_labels */
  const char *lhs, *rhs, *out;   /* shapes */
  const char *window;            /* window={...} or "" */
  int groups;
  int batch_groups;              /* 0: 1 */
  int library;                   /* 1: must run as the runtime's convolution (convolutions=1);
                                    2: so with --cpu-onednn=on (bf16: oneDNN's alone) */
} conv_case;

static const conv_case cases[] = {
    /* NHWC, 3x3, same padding: 2*16*12*12*8*9 MACs */
    {"b01f_01io->b01f", "f32[2,12,12,8]", "f32[3,3,8,16]", "f32[2,12,12,16]", "window={size=3x3 pad=1_1x1_1}", 1},
    /* NCHW, stride 2, no padding */
    {"bf01_oi01->bf01", "f32[2,8,13,13]", "f32[16,8,3,3]", "f32[2,16,6,6]", "window={size=3x3 stride=2x2}", 1},
    /* odd orders everywhere, window dilation, uneven padding */
    {"f0b1_i1o0->1bf0", "f32[8,11,2,10]", "f32[8,3,16,3]", "f32[11,2,16,11]",
     "window={size=3x3 pad=2_2x1_2 rhs_dilate=2x1}", 1},
    /* base (lhs) dilation, i.e. a transposed convolution, and window reversal */
    {"b01f_01io->b01f", "f32[2,7,7,8]", "f32[3,3,8,16]", "f32[2,15,15,16]",
     "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2 rhs_reversal=1x0}", 1},
    /* feature groups: 4 groups of 4 input features, 8 outputs each */
    {"b01f_01io->b01f", "f32[2,10,10,16]", "f32[3,3,4,32]", "f32[2,8,8,32]", "window={size=3x3}", 4},
    /* 1-D */
    {"b0f_0io->b0f", "f32[4,64,16]", "f32[5,16,32]", "f32[4,60,32]", "window={size=5}", 1},
    /* 1x1 channels-last (the runtime's no-gather path) */
    {"b01f_01io->b01f", "f32[2,16,16,32]", "f32[1,1,32,64]", "f32[2,16,16,64]", "window={size=1x1}", 1},
    /* no spatial dims: a batched matmul in disguise */
    {"bf_io->bf", "f32[64,128]", "f32[128,64]", "f32[64,64]", "", 1},
    /* small: the emitter's direct loop nest */
    {"b01f_01io->b01f", "f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,3,3,3]", "window={size=3x3}", 1},
    /* f16: never im2col */
    {"b01f_01io->b01f", "f16[1,8,8,4]", "f16[3,3,4,8]", "f16[1,6,6,8]", "window={size=3x3}", 1},
    /* examples/train's CNN step at batch 2, as its autodiff writes it: conv1 forward, conv2's
     * weight gradient (f01b_i01o->01bf: the contraction over batch and image) and input
     * gradient (reversed kernel, features swapped), conv1's weight gradient */
    {"b01f_01io->b01f", "f32[2,28,28,1]", "f32[3,3,1,16]", "f32[2,28,28,16]", "window={size=3x3 pad=1_1x1_1}", 1, 0, 1},
    {"f01b_i01o->01bf", "f32[2,14,14,16]", "f32[2,14,14,32]", "f32[3,3,16,32]", "window={size=14x14 pad=1_1x1_1}", 1, 0, 1},
    {"b01f_01oi->b01f", "f32[2,14,14,32]", "f32[3,3,16,32]", "f32[2,14,14,16]",
     "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}", 1, 0, 1},
    {"f01b_i01o->01bf", "f32[2,28,28,1]", "f32[2,28,28,16]", "f32[3,3,1,16]", "window={size=28x28 pad=1_1x1_1}", 1, 0, 1},
    /* the weight gradient of a stride-2 convolution (the stride becomes window dilation) */
    {"f01b_i01o->01bf", "f32[2,14,14,16]", "f32[2,7,7,32]", "f32[3,3,16,32]",
     "window={size=7x7 pad=0_1x0_1 rhs_dilate=2x2}", 1, 0, 1},
    /* NCHW weight gradient */
    {"fb01_io01->bf01", "f32[2,16,14,14]", "f32[2,32,14,14]", "f32[16,32,3,3]", "window={size=14x14 pad=1_1x1_1}", 1, 0, 1},
    /* f64, forward and weight gradient */
    {"b01f_01io->b01f", "f64[2,14,14,16]", "f64[3,3,16,32]", "f64[2,14,14,32]", "window={size=3x3 pad=1_1x1_1}", 1, 0, 1},
    {"f01b_i01o->01bf", "f64[2,14,14,16]", "f64[2,14,14,32]", "f64[3,3,16,32]", "window={size=14x14 pad=1_1x1_1}", 1, 0, 1},
    {"bf01_oi01->bf01", "f64[2,8,13,13]", "f64[16,8,3,3]", "f64[2,16,6,6]", "window={size=3x3 stride=2x2}", 1, 0, 1},
    /* batch_group_count: the weight gradient of a 2-group convolution, and of a depthwise one */
    {"f01b_i01o->01bf", "f32[2,14,14,8]", "f32[2,14,14,6]", "f32[3,3,4,6]", "window={size=14x14 pad=1_1x1_1}", 1, 2, 1},
    {"f01b_i01o->01bf", "f64[8,14,14,8]", "f64[8,14,14,8]", "f64[3,3,1,8]", "window={size=14x14 pad=1_1x1_1}", 1, 8, 1},
    /* feature groups, f64, NCHW */
    {"bf01_oi01->bf01", "f64[2,16,10,10]", "f64[32,4,3,3]", "f64[2,32,8,8]", "window={size=3x3}", 4, 0, 1},
    /* bf16 (oneDNN only: with --cpu-onednn=off the loop nest), the CNN step's three kinds */
    {"b01f_01io->b01f", "bf16[2,14,14,16]", "bf16[3,3,16,32]", "bf16[2,14,14,32]", "window={size=3x3 pad=1_1x1_1}", 1, 0, 2},
    {"b01f_01oi->b01f", "bf16[2,14,14,32]", "bf16[3,3,16,32]", "bf16[2,14,14,16]", "window={size=3x3 pad=1_1x1_1}", 1, 0, 2},
    {"f01b_i01o->01bf", "bf16[2,14,14,16]", "bf16[2,14,14,32]", "bf16[3,3,16,32]", "window={size=14x14 pad=1_1x1_1}", 1, 0, 2},
    /* NCHW weight gradient with window dilation (oneDNN's stride) and an uneven high padding */
    {"fb01_io01->bf01", "f32[2,8,14,14]", "f32[2,16,7,7]", "f32[8,16,3,3]", "window={size=7x7 pad=1_0x1_0 rhs_dilate=2x2}", 1, 0, 1},
};

/* dims of a shape text "f32[2,3]" */
static int dims_of(const char *s, char *type, int64_t *d) {
  const char *b = strchr(s, '[');
  memcpy(type, s, (size_t)(b - s));
  type[b - s] = 0;
  int n = 0;
  for (const char *p = b + 1; *p && *p != ']';) {
    d[n++] = strtoll(p, (char **)&p, 10);
    if (*p == ',') p++;
  }
  return n;
}

/* Every case with oneDNN on (the default) and off (im2col for f32 and f64). */
TEST(cpu_conv_layouts_match_interp) {
  static const char *const modes[2] = {"--cpu-onednn=on", "--cpu-onednn=off"};
  for (int run = 0; run < 2 * (int)(sizeof cases / sizeof *cases); run++) {
    int i = run / 2;
    const char *mode = modes[run % 2];
    const conv_case *c = &cases[i];
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule conv\nENTRY main {\n  x = %s parameter(0)\n  k = %s parameter(1)\n"
             "  ROOT c = %s convolution(x, k), %s%sdim_labels=%s, feature_group_count=%d, batch_group_count=%d\n}\n",
             c->lhs, c->rhs, c->out, c->window, c->window[0] ? ", " : "", c->labels, c->groups,
             c->batch_groups ? c->batch_groups : 1);
    char tl[8], tr[8];
    int64_t dl[8], dr[8];
    int nl = dims_of(c->lhs, tl, dl), nr = dims_of(c->rhs, tr, dr);
    char *x = cpu_ramp_nd(tl, dl, nl, 5, 1, -2), *k = cpu_ramp_nd(tr, dr, nr, 3, 1, -1);
    const char *in[2] = {x, k};
    char *stats = NULL;
    /* bf16: each output rounded once (oneDNN sums in f32), the interpreter may round differently */
    double tol = tl[0] == 'b' ? 1e-2 : 1e-6;
    int ok = cpu_check(text, 2, in, mode, tol, tol, &stats, NULL);
    CHECK_MSG(ok, "case %d (%s): %s", i, mode, text);
    if (ok) CHECK_MSG(cpu_fallbacks(stats) == 0, "case %d (%s) ran on the interpreter: %s", i, mode, stats);
    int lib = c->library == 1 || (c->library == 2 && run % 2 == 0);
    if (ok && lib)
      CHECK_MSG(stats && strstr(stats, "convolutions=1"), "case %d (%s): not the runtime's: %s", i, mode, stats);
    free(stats);
    free(x);
    free(k);
  }
}

/* oneDNN's primitives are made once per shape and slice and kept (rt/conv_dnnl.c, a cache of 64):
 * the same forward and weight-gradient convolutions run again on other values, then more shapes
 * than the cache holds (each width a shape of its own), then the first again, evicted and made
 * anew; every result against the interpreter. */
TEST(cpu_conv_onednn_primitives_reused_and_evicted) {
  for (int pass = 0; pass < 3; pass++) {
    int w_lo = pass == 1 ? 9 : 8, w_hi = pass == 1 ? 8 + 66 : 8; /* pass 1: 66 widths, past the cache */
    for (int w = w_lo; w <= w_hi; w++)
      for (int wgrad = 0; wgrad < 2; wgrad++) {
        if (pass == 1 && wgrad && w % 8) continue; /* the forward ones fill it; a few weight gradients */
        char x_shape[32], k_shape[32], out_shape[32], window[64], text[1024];
        snprintf(x_shape, sizeof x_shape, "f32[2,8,%d,16]", w);
        snprintf(k_shape, sizeof k_shape, wgrad ? "f32[2,8,%d,16]" : "f32[3,3,16,16]", w);
        snprintf(out_shape, sizeof out_shape, wgrad ? "f32[3,3,16,16]" : "f32[2,8,%d,16]", w);
        if (wgrad) snprintf(window, sizeof window, "window={size=8x%d pad=1_1x1_1}", w);
        else snprintf(window, sizeof window, "window={size=3x3 pad=1_1x1_1}");
        snprintf(text, sizeof text,
                 "HloModule conv\nENTRY main {\n  x = %s parameter(0)\n  k = %s parameter(1)\n"
                 "  ROOT c = %s convolution(x, k), %s, dim_labels=%s\n}\n",
                 x_shape, k_shape, out_shape, window, wgrad ? "f01b_i01o->01bf" : "b01f_01io->b01f");
        int64_t dx[4] = {2, 8, w, 16}, dk[4] = {3, 3, 16, 16};
        char *x = cpu_ramp_nd("f32", dx, 4, 5 + pass, 1, -2), *k = cpu_ramp_nd("f32", wgrad ? dx : dk, 4, 3 + pass, 1, -1);
        const char *in[2] = {x, k};
        char *stats = NULL;
        int ok = cpu_check(text, 2, in, "--cpu-onednn=on", 1e-6, 1e-6, &stats, NULL);
        CHECK_MSG(ok, "pass %d: %s", pass, text);
        if (ok) CHECK_MSG(stats && strstr(stats, "convolutions=1"), "not the runtime's: %s (%s)", text, stats);
        free(stats);
        free(x);
        free(k);
      }
  }
}
