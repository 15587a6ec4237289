/* test_runtime_conv.c — cx_rt_conv_im2col against a naive loop written here from XLA's
 * definition of convolution, in f32 and f64: layouts (b01f/01io, bf01/oi01, and scrambled
 * ones), strides, padding (negative too), base and window dilation, window reversal, feature
 * and batch groups, the 1×1 fast path, weight-gradient shapes (NHWC and NCHW), big mode, with
 * and without a pool; errors; prints GFLOP/s of a ResNet-like layer. */
#include <time.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "test.h"
#include "util/util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float rndf(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

/* Dense strides for a tensor of logical dims (d0..d3) stored in the order `order` (a
 * permutation of 0..3 listing logical dims from outermost to innermost). */
static void strides_for(const int64_t dims[4], const int order[4], int64_t st[4]) {
  int64_t s = 1;
  for (int i = 3; i >= 0; i--) {
    st[order[i]] = s;
    s *= dims[order[i]];
  }
}

static double at(const void *buf, int64_t i, int32_t type) {
  return type == CXLA_F32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

/* XLA convolution, one output element at a time: output spatial position o reads dilated
 * input position o*stride - pad_lo + k*rhs_dil, which is a real input element only when it
 * is a multiple of the base dilation. Batch group g (of output features g*O/bg ...) reads
 * input batch g*(N/bg) + n. */
static void naive(const cx_conv2d_desc *d, int32_t type, const void *in, const void *f, double *out /* b,f,h,w dense */) {
  int64_t cg = d->in_feat / d->groups, og = d->out_feat / d->groups, nb = d->batch / d->batch_groups;
  int64_t obg = d->out_feat / d->batch_groups;
  for (int64_t n = 0; n < nb; n++)
    for (int64_t o = 0; o < d->out_feat; o++)
      for (int64_t oy = 0; oy < d->out_h; oy++)
        for (int64_t ox = 0; ox < d->out_w; ox++) {
          double acc = 0;
          int64_t g = o / og, b = o / obg * nb + n;
          for (int64_t i = 0; i < cg; i++)
            for (int64_t ky = 0; ky < d->k_h; ky++)
              for (int64_t kx = 0; kx < d->k_w; kx++) {
                int64_t y = oy * d->stride[0] - d->pad_lo[0] + ky * d->rhs_dil[0];
                int64_t x = ox * d->stride[1] - d->pad_lo[1] + kx * d->rhs_dil[1];
                if (y < 0 || x < 0 || y % d->lhs_dil[0] || x % d->lhs_dil[1]) continue;
                y /= d->lhs_dil[0];
                x /= d->lhs_dil[1];
                if (y >= d->in_h || x >= d->in_w) continue;
                int64_t fy = d->reverse[0] ? d->k_h - 1 - ky : ky, fx = d->reverse[1] ? d->k_w - 1 - kx : kx;
                acc += at(in, b * d->in_stride[0] + (g * cg + i) * d->in_stride[1] + y * d->in_stride[2] + x * d->in_stride[3],
                          type) *
                       at(f, o * d->filt_stride[0] + i * d->filt_stride[1] + fy * d->filt_stride[2] + fx * d->filt_stride[3],
                          type);
              }
          out[((n * d->out_feat + o) * d->out_h + oy) * d->out_w + ox] = acc;
        }
}

typedef struct {
  int64_t n, c, h, w, o, kh, kw;
  int64_t stride[2], pad_lo[2], pad_hi[2], ldil[2], rdil[2], rev[2], groups;
  int in_order[4], f_order[4], out_order[4]; /* logical dims b,f,0,1 / o,i,0,1 outermost first */
  int64_t batch_groups;
} ccase;

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t lo, int64_t hi, int64_t ld, int64_t rd) {
  int64_t din = in ? (in - 1) * ld + 1 : 0, dk = k ? (k - 1) * rd + 1 : 0, span = din + lo + hi - dk;
  return span < 0 ? 0 : span / s + 1;
}

static int run_typed(cx_rt *rt, ccase c, int32_t type) {
  for (int i = 0; i < 2; i++) {
    if (!c.stride[i]) c.stride[i] = 1;
    if (!c.ldil[i]) c.ldil[i] = 1;
    if (!c.rdil[i]) c.rdil[i] = 1;
  }
  if (!c.groups) c.groups = 1;
  if (!c.batch_groups) c.batch_groups = 1;
  cx_conv2d_desc d = {.batch = c.n, .in_feat = c.c, .in_h = c.h, .in_w = c.w, .out_feat = c.o, .k_h = c.kh,
                      .k_w = c.kw, .groups = c.groups, .batch_groups = c.batch_groups};
  d.out_h = out_size(c.h, c.kh, c.stride[0], c.pad_lo[0], c.pad_hi[0], c.ldil[0], c.rdil[0]);
  d.out_w = out_size(c.w, c.kw, c.stride[1], c.pad_lo[1], c.pad_hi[1], c.ldil[1], c.rdil[1]);
  for (int i = 0; i < 2; i++) {
    d.stride[i] = c.stride[i], d.pad_lo[i] = c.pad_lo[i], d.lhs_dil[i] = c.ldil[i], d.rhs_dil[i] = c.rdil[i];
    d.reverse[i] = c.rev[i];
  }
  int64_t nb = c.n / c.batch_groups;
  int64_t idims[4] = {c.n, c.c, c.h, c.w}, fdims[4] = {c.o, c.c / c.groups, c.kh, c.kw},
          odims[4] = {nb, c.o, d.out_h, d.out_w};
  strides_for(idims, c.in_order, d.in_stride);
  strides_for(fdims, c.f_order, d.filt_stride);
  strides_for(odims, c.out_order, d.out_stride);
  int64_t ni = c.n * c.c * c.h * c.w, nf = fdims[0] * fdims[1] * c.kh * c.kw, no = nb * c.o * d.out_h * d.out_w;
  size_t es = type == CXLA_F32 ? 4 : 8;
  char *in = malloc(es * (size_t)(ni + 1)), *f = malloc(es * (size_t)(nf + 1)), *out = malloc(es * (size_t)(no + 1));
  double *want = malloc(sizeof(double) * (size_t)(no + 1));
  for (int64_t i = 0; i < ni; i++) {
    if (type == CXLA_F32) ((float *)in)[i] = rndf();
    else ((double *)in)[i] = rndf();
  }
  for (int64_t i = 0; i < nf; i++) {
    if (type == CXLA_F32) ((float *)f)[i] = rndf();
    else ((double *)f)[i] = rndf();
  }
  for (int64_t i = 0; i < no; i++) {
    if (type == CXLA_F32) ((float *)out)[i] = 12345.0f;
    else ((double *)out)[i] = 12345.0;
  }
  naive(&d, type, in, f, want);
  cx_rt_conv_im2col(rt, type, &d, in, f, out, 0);
  int bad = 0;
  CHECK_MSG(rt->status == CXLA_OK, "status %d: %s", rt->status, rt->errmsg);
  double tol = (type == CXLA_F32 ? 1e-5 : 1e-13) * (double)(c.c / c.groups * c.kh * c.kw + 1);
  for (int64_t n = 0; n < nb && !bad; n++)
    for (int64_t o = 0; o < c.o && !bad; o++)
      for (int64_t y = 0; y < d.out_h && !bad; y++)
        for (int64_t x = 0; x < d.out_w && !bad; x++) {
          double w = want[((n * c.o + o) * d.out_h + y) * d.out_w + x];
          double g = at(out, n * d.out_stride[0] + o * d.out_stride[1] + y * d.out_stride[2] + x * d.out_stride[3], type);
          if (!(fabs(g - w) <= tol)) {
            test_fail(__FILE__, __LINE__,
                      "%s n%lld c%lld %lldx%lld o%lld k%lldx%lld g%lld bg%lld: out[%lld,%lld,%lld,%lld] = %.17g, want %.17g",
                      type == CXLA_F32 ? "f32" : "f64", (long long)c.n, (long long)c.c, (long long)c.h, (long long)c.w,
                      (long long)c.o, (long long)c.kh, (long long)c.kw, (long long)c.groups, (long long)c.batch_groups,
                      (long long)n, (long long)o, (long long)y, (long long)x, g, w);
            bad = 1;
          }
        }
  free(in), free(f), free(out), free(want);
  return bad;
}

static int run(cx_rt *rt, ccase c) { return run_typed(rt, c, CXLA_F32) + run_typed(rt, c, CXLA_F64); }

#define NHWC {0, 2, 3, 1}
#define NCHW {0, 1, 2, 3}
#define HWIO {2, 3, 1, 0}
#define OIHW {0, 1, 2, 3}
#define ODD_IN {2, 1, 3, 0}  /* "0f1b": h, f, w, b outermost first */
#define ODD_F {1, 3, 0, 2}   /* i, w, o, h */
#define ODD_OUT {3, 0, 2, 1} /* w, b, h, f */
/* the weight gradient of an NHWC/HWIO convolution: f01b_i01o->01bf, and of an NCHW/OIHW
 * one: fb01_io01->bf01 */
#define F01B {1, 2, 3, 0}
#define I01O {1, 2, 3, 0}
#define O1BF {2, 3, 0, 1}
#define FB01 {1, 0, 2, 3}
#define IO01 {1, 0, 2, 3}

static const ccase cases[] = {
    /* n  c  h  w  o kh kw  stride  pad_lo  pad_hi  ldil    rdil    rev     g   layouts */
    {1, 1, 3, 3, 1, 2, 2, {0}, {0}, {0}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},
    {2, 3, 7, 6, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},
    {2, 3, 7, 6, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NCHW, OIHW, NCHW},
    {3, 5, 9, 8, 6, 3, 2, {2, 3}, {1, 0}, {2, 1}, {0}, {0}, {0}, 0, NCHW, HWIO, NHWC},
    {2, 4, 8, 7, 5, 3, 3, {2, 1}, {0, 2}, {1, 0}, {0}, {2, 3}, {0}, 0, NHWC, OIHW, NCHW},
    {2, 3, 5, 6, 2, 3, 3, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {0}, {0}, 0, NHWC, HWIO, NHWC}, /* base dilation */
    {1, 2, 6, 6, 3, 3, 2, {1, 1}, {-1, 0}, {-1, 2}, {0}, {0}, {1, 0}, 0, NCHW, OIHW, NHWC}, /* negative pad, reversal */
    {2, 6, 5, 5, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0, 1}, 2, NHWC, HWIO, NHWC},  /* 2 groups */
    {2, 4, 6, 5, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 4, NCHW, OIHW, NCHW},    /* depthwise x2 */
    {3, 6, 5, 7, 9, 2, 3, {2, 1}, {1, 1}, {0, 1}, {1, 2}, {2, 1}, {1, 1}, 3, ODD_IN, ODD_F, ODD_OUT},
    {2, 8, 5, 4, 6, 1, 1, {0}, {0}, {0}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},  /* 1x1: no gather */
    {2, 8, 5, 4, 6, 1, 1, {0}, {0}, {0}, {0}, {0}, {0}, 2, NHWC, OIHW, NCHW},  /* 1x1, groups, scatter */
    {2, 8, 5, 4, 6, 1, 1, {2, 2}, {0}, {0}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC}, /* 1x1 strided: gather */
    {1, 3, 2, 2, 2, 3, 3, {1, 1}, {0}, {0}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC}, /* window > input: empty */
    {1, 2, 40, 37, 5, 5, 4, {1, 1}, {2, 2}, {2, 1}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},
    /* groups with >= 4 outputs each go through one sgemm per group (the cases above with
     * fewer use the direct dot path) */
    {2, 6, 5, 5, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 2, NHWC, HWIO, NHWC},
    {2, 6, 5, 6, 12, 3, 2, {2, 1}, {1, 0}, {1, 1}, {0}, {1, 2}, {1, 0}, 3, NCHW, OIHW, NCHW},
    {2, 8, 5, 4, 8, 1, 1, {0}, {0}, {0}, {0}, {0}, {0}, 2, NHWC, HWIO, ODD_OUT}, /* 1x1, groups, scatter */
    {2, 8, 5, 4, 8, 1, 1, {0}, {0}, {0}, {0}, {0}, {0}, 2, NHWC, HWIO, NHWC},    /* 1x1, groups, direct out */
    {2, 1, 300, 250, 3, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NCHW, OIHW, NCHW}, /* several pixel blocks */
    {1, 2, 20, 21, 3, 17, 16, {1, 2}, {2, 3}, {1, 0}, {0}, {0}, {1, 0}, 0, NCHW, OIHW, NCHW}, /* window > 256 */
    {1, 16, 300, 250, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NHWC, OIHW, NCHW}, /* blocks, sgemm, scatter */
    /* weight-gradient shapes (fewer output pixels than patch elements: rt/conv_wgrad.c): NHWC,
     * runs of the batch (the channels) and the filter (dy) used in place */
    {4, 3, 9, 9, 6, 9, 9, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, F01B, I01O, O1BF},
    {4, 12, 10, 10, 5, 4, 4, {1, 1}, {1, 1}, {1, 1}, {0}, {2, 2}, {0}, 0, F01B, I01O, O1BF}, /* of stride 2 */
    {3, 6, 11, 11, 4, 7, 7, {1, 2}, {0}, {0}, {0}, {0}, {0}, 0, F01B, I01O, O1BF},          /* of dilation */
    {2, 5, 6, 6, 3, 6, 6, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {0}, {0}, 0, F01B, I01O, O1BF},   /* base dilation */
    {4, 3, 9, 9, 6, 9, 9, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {1, 0}, 0, F01B, I01O, O1BF},   /* reversed: repacked */
    {1, 4, 12, 12, 8, 12, 12, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, F01B, I01O, O1BF}, /* one channel */
    /* NCHW: rows of output pixels, runs of window columns, the filter repacked */
    {3, 4, 8, 8, 5, 8, 8, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, FB01, IO01, NCHW},
    {2, 3, 9, 9, 4, 4, 4, {1, 1}, {0}, {0}, {0}, {1, 2}, {0, 1}, 0, FB01, IO01, NCHW},
    {3, 5, 7, 6, 4, 7, 6, {2, 1}, {2, 1}, {1, 2}, {0}, {0}, {0}, 0, ODD_IN, ODD_F, ODD_OUT},
    /* batch groups: a grouped and a depthwise convolution's weight gradients, and a forward
     * shape */
    {8, 3, 9, 9, 6, 9, 9, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, F01B, I01O, O1BF, 2},
    {6, 2, 8, 8, 6, 8, 8, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, F01B, I01O, O1BF, 6},
    {4, 3, 8, 8, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC, 2},
    {4, 3, 8, 8, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NCHW, OIHW, NCHW, 2},
    /* few pixels, long patches, channels last: still one patch per row */
    {1, 48, 5, 5, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},
    /* too much GEMM per row for small single-threaded GEMMs: big mode when OpenBLAS runs
     * threads of its own (one task, threaded GEMMs) */
    {2, 64, 6, 6, 128, 3, 3, {1, 1}, {1, 1}, {1, 1}, {0}, {0}, {0}, 0, NHWC, HWIO, NHWC},
    {32, 8, 10, 10, 256, 8, 8, {0}, {0}, {0}, {0}, {0}, {0}, 0, F01B, I01O, O1BF},
};

TEST(runtime_conv_im2col_matches_naive) {
  cx_rt rt = {0};
  int fails = 0;
  for (int i = 0; i < CX_ARRAY_LEN(cases) && fails < 3; i++) fails += run(&rt, cases[i]);
}

/* OpenBLAS's own (the runtime reads the count to size its chunks). */
int openblas_get_num_threads(void);
void openblas_set_num_threads(int num_threads);

/* With a pool, the chunks run as parallel tasks; with OpenBLAS threaded as well, the biggest
 * cases run in big mode, and with it on one thread, as tasks with packed GEMMs. */
TEST(runtime_conv_im2col_on_pool) {
  cx_rt rt = {0};
  rt.pool = cx_threadpool_create(3);
  int blas = openblas_get_num_threads();
  for (int threads = 2; threads >= 1; threads--) {
    openblas_set_num_threads(threads);
    int fails = 0;
    for (int i = 0; i < CX_ARRAY_LEN(cases) && fails < 3; i++) fails += run(&rt, cases[i]);
  }
  openblas_set_num_threads(blas);
  cx_threadpool_destroy(rt.pool);
}

TEST(runtime_conv_im2col_errors) {
  cx_rt rt = {0};
  cx_conv2d_desc d = {.batch = 1, .in_feat = 3, .in_h = 2, .in_w = 2, .out_feat = 2, .out_h = 2, .out_w = 2,
                      .k_h = 1, .k_w = 1, .stride = {1, 1}, .lhs_dil = {1, 1}, .rhs_dil = {1, 1}, .groups = 2,
                      .batch_groups = 1};
  float buf[64] = {0};
  const char *names[] = {"convolution.4"};
  rt.names = names;
  cx_rt_conv_im2col(&rt, CXLA_F32, &d, buf, buf, buf, 0);
  CHECK_EQ_INT(rt.status, CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(rt.errmsg, "convolution.4: im2col convolution: feature_group_count must divide");
  cx_rt r2 = {0};
  d.groups = 1;
  cx_rt_conv_im2col(&r2, CXLA_F16, &d, buf, buf, buf, 0);
  CHECK_EQ_INT(r2.status, CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(r2.errmsg, "only f32 and f64");
}

static double secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* For the record: a ResNet-like 3×3 layer, batch 8, 56×56×64 -> 64, NHWC/HWIO. */
TEST(runtime_conv_im2col_speed) {
  cx_conv2d_desc d = {.batch = 8, .in_feat = 64, .in_h = 56, .in_w = 56, .out_feat = 64, .out_h = 56, .out_w = 56,
                      .k_h = 3, .k_w = 3, .stride = {1, 1}, .pad_lo = {1, 1}, .lhs_dil = {1, 1}, .rhs_dil = {1, 1},
                      .groups = 1, .batch_groups = 1};
  int64_t idims[4] = {8, 64, 56, 56}, fdims[4] = {64, 64, 3, 3};
  int o1[4] = NHWC, o2[4] = HWIO;
  strides_for(idims, o1, d.in_stride);
  strides_for(fdims, o2, d.filt_stride);
  strides_for(idims, o1, d.out_stride);
  size_t ni = 8 * 64 * 56 * 56, nf = 64 * 64 * 9;
  float *in = malloc(ni * 4), *f = malloc(nf * 4), *out = malloc(ni * 4);
  for (size_t i = 0; i < ni; i++) in[i] = rndf();
  for (size_t i = 0; i < nf; i++) f[i] = rndf();
  cx_rt rt = {0};
  rt.pool = cx_threadpool_create(0);
  double best = 1e9;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = secs();
    cx_rt_conv_im2col(&rt, CXLA_F32, &d, in, f, out, 0);
    if (secs() - t0 < best) best = secs() - t0;
  }
  CHECK_EQ_INT(rt.status, CXLA_OK);
  printf("    im2col conv 8x56x56x64 3x3 -> 64 (NHWC): %.2f ms, %.1f GFLOP/s on %d threads\n", best * 1e3,
         2.0 * 8 * 56 * 56 * 64 * 64 * 9 / best * 1e-9, cx_threadpool_size(rt.pool));
  cx_threadpool_destroy(rt.pool);
  free(in), free(f), free(out);
}
