/* conv_im2col.c — f32 2-D convolution as patch gathering + SGEMM.
 *
 * For feature group g, output pixel p = (n, oh, ow) and output feature o:
 *   out[p, g*og + o] = sum_k cols[p, k] * wt[k, o]
 * where cols[p, :] is the (zero-padded, dilated) input patch under the window at p and
 * wt[:, o] the filter of output feature g*og + o, both flattened in the same k order. The k
 * order follows the input layout so that the gather reads memory in order: (kh, kw, i) when
 * the input's feature stride is 1 (channels last: each (kh, kw) copies a run of features),
 * (i, kh, kw) otherwise. The filter is repacked per group (K × og floats, small next to the
 * product), which absorbs any filter layout and window reversal.
 *
 * Pixels are processed in blocks so that the patch matrix stays a few MiB whatever the
 * image size: each block is gathered in parallel on the pool (rows are independent) and
 * multiplied by one sgemm, which uses OpenBLAS's threads. When the output's pixels are evenly
 * strided with features contiguous (b01f-like layouts) the sgemm writes the output directly;
 * otherwise it writes a scratch block that is then scattered in parallel. A 1×1 unit-stride
 * convolution of a channels-last input skips the gather: the input already is the matrix. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "backend/cpu/runtime.h"
#include "backend/cpu/threadpool.h"
#include "runtime/trace.h"

/* Patch-matrix block size in floats (4 MiB). */
#define BLOCK_FLOATS (1 << 20)
/* Elements a gather/scatter chunk should move to be worth a hand-off. */
#define CHUNK_ELEMS 16384

typedef struct plan {
  const cx_conv2d_desc *d;
  const float *in, *filt;
  float *out;
  int64_t cg, og, K, g, p0; /* features per group in/out, patch length, group, first pixel */
  int chan_last;
  float *cols, *wt, *cbuf;
} plan;

static void gather_rows(void **args, int64_t begin, int64_t end) {
  const plan *pl = args[0];
  const cx_conv2d_desc *d = pl->d;
  const int64_t *is = d->in_stride, cg = pl->cg, KH = d->k_h, KW = d->k_w;
  const int64_t fbase = pl->g * cg * is[1];
  for (int64_t r = begin; r < end; r++) {
    int64_t p = pl->p0 + r, ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
    float *row = pl->cols + r * pl->K;
    const float *img = pl->in + n * is[0] + fbase;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t hd = oh * d->stride[0] - d->pad_lo[0] + kh * d->rhs_dil[0], h = hd / d->lhs_dil[0];
      int vh = hd >= 0 && hd % d->lhs_dil[0] == 0 && h < d->in_h;
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t wd = ow * d->stride[1] - d->pad_lo[1] + kw * d->rhs_dil[1], w = wd / d->lhs_dil[1];
        int valid = vh && wd >= 0 && wd % d->lhs_dil[1] == 0 && w < d->in_w;
        const float *src = valid ? img + h * is[2] + w * is[3] : NULL;
        if (pl->chan_last) { /* k = (kh, kw, i) */
          float *dst = row + (kh * KW + kw) * cg;
          if (!valid) memset(dst, 0, (size_t)cg * sizeof *dst);
          else if (is[1] == 1) memcpy(dst, src, (size_t)cg * sizeof *dst);
          else for (int64_t i = 0; i < cg; i++) dst[i] = src[i * is[1]];
        } else { /* k = (i, kh, kw) */
          float *dst = row + kh * KW + kw;
          for (int64_t i = 0; i < cg; i++) dst[i * KH * KW] = valid ? src[i * is[1]] : 0.0f;
        }
      }
    }
  }
}

static void scatter_rows(void **args, int64_t begin, int64_t end) {
  const plan *pl = args[0];
  const cx_conv2d_desc *d = pl->d;
  const int64_t *os = d->out_stride;
  for (int64_t r = begin; r < end; r++) {
    int64_t p = pl->p0 + r, ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
    float *dst = pl->out + n * os[0] + pl->g * pl->og * os[1] + oh * os[2] + ow * os[3];
    const float *src = pl->cbuf + r * pl->og;
    for (int64_t o = 0; o < pl->og; o++) dst[o * os[1]] = src[o];
  }
}

static void repack_filter(const plan *pl) {
  const cx_conv2d_desc *d = pl->d;
  const int64_t *fs = d->filt_stride, KH = d->k_h, KW = d->k_w;
  for (int64_t i = 0; i < pl->cg; i++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t k = pl->chan_last ? (kh * KW + kw) * pl->cg + i : (i * KH + kh) * KW + kw;
        int64_t fh = d->reverse[0] ? KH - 1 - kh : kh, fw = d->reverse[1] ? KW - 1 - kw : kw;
        const float *src = pl->filt + pl->g * pl->og * fs[0] + i * fs[1] + fh * fs[2] + fw * fs[3];
        for (int64_t o = 0; o < pl->og; o++) pl->wt[k * pl->og + o] = src[o * fs[0]];
      }
}

/* The element stride L such that pixel p = (n, h, w) of an n×h×w grid sits at p * L, or 0 if
 * the strides are not of that form (dimensions of size 1 may have any stride). */
static int64_t pixel_stride(const int64_t *st, int64_t nb, int64_t nh, int64_t nw, int64_t dflt) {
  int64_t L = nw > 1 ? st[3] : nh > 1 ? st[2] / nw : nb > 1 ? st[0] / (nh * nw) : dflt;
  if (L <= 0) return 0;
  if ((nw > 1 && st[3] != L) || (nh > 1 && st[2] != L * nw) || (nb > 1 && st[0] != L * nw * nh)) return 0;
  return L;
}

static const char *check(const cx_conv2d_desc *d) {
  if (d->batch < 0 || d->in_feat < 0 || d->in_h < 0 || d->in_w < 0 || d->out_feat < 0 || d->out_h < 0 ||
      d->out_w < 0 || d->k_h < 0 || d->k_w < 0)
    return "negative dimension";
  for (int i = 0; i < 2; i++)
    if (d->stride[i] < 1 || d->lhs_dil[i] < 1 || d->rhs_dil[i] < 1) return "stride and dilations must be >= 1";
  if (d->groups < 1 || d->in_feat % d->groups || d->out_feat % d->groups)
    return "feature_group_count must divide the input and output features";
  int64_t K = d->in_feat / d->groups * d->k_h * d->k_w;
  if (K > INT_MAX || d->out_feat > INT_MAX) return "too large for a 32-bit BLAS";
  return NULL;
}

/* Runs one group over all pixel blocks. */
static void run_group(cx_rt *rt, plan *pl, int64_t P, int64_t block, int64_t out_ld, int64_t in_ld) {
  const cx_conv2d_desc *d = pl->d;
  repack_filter(pl);
  for (pl->p0 = 0; pl->p0 < P; pl->p0 += block) {
    int64_t rows = P - pl->p0 < block ? P - pl->p0 : block;
    void *args[1] = {pl};
    const float *a = pl->cols;
    int64_t lda = pl->K;
    if (in_ld) { /* 1×1 unit-stride channels-last: rows of the input are the patches */
      a = pl->in + pl->p0 * in_ld + pl->g * pl->cg;
      lda = in_ld;
    } else {
      int64_t grain = CHUNK_ELEMS / (pl->K ? pl->K : 1);
      cx_threadpool_parallel_for(rt->pool, gather_rows, args, rows, grain > 1 ? grain : 1);
    }
    float *c = out_ld ? pl->out + pl->p0 * out_ld + pl->g * pl->og : pl->cbuf;
    int64_t ldc = out_ld ? out_ld : pl->og;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)pl->og, (int)pl->K, 1.0f, a, (int)lda,
                pl->wt, (int)pl->og, 0.0f, c, (int)ldc);
    if (!out_ld) {
      int64_t grain = CHUNK_ELEMS / (pl->og ? pl->og : 1);
      cx_threadpool_parallel_for(rt->pool, scatter_rows, args, rows, grain > 1 ? grain : 1);
    }
  }
  (void)d;
}

static void zero_output(const cx_conv2d_desc *d, float *out) {
  const int64_t *os = d->out_stride;
  for (int64_t n = 0; n < d->batch; n++)
    for (int64_t f = 0; f < d->out_feat; f++)
      for (int64_t h = 0; h < d->out_h; h++)
        for (int64_t w = 0; w < d->out_w; w++) out[n * os[0] + f * os[1] + h * os[2] + w * os[3]] = 0.0f;
}

void cx_rt_conv_im2col(cx_rt *rt, int32_t type, const cx_conv2d_desc *d, const void *in, const void *filt,
                       void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "convolution";
  const char *why = type != CXLA_F32 ? "only f32 is supported" : check(d);
  if (why) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: im2col convolution: %s", name, why);
    rt->status = type != CXLA_F32 ? CXLA_ERR_UNSUPPORTED : CXLA_ERR_INTERNAL;
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  int64_t P = d->batch * d->out_h * d->out_w;
  plan pl = {.d = d, .in = in, .filt = filt, .out = out, .cg = d->in_feat / d->groups,
             .og = d->out_feat / d->groups, .chan_last = d->in_stride[1] == 1};
  pl.K = pl.cg * d->k_h * d->k_w;
  if (P == 0 || d->out_feat == 0) goto done;
  if (pl.K == 0) {
    zero_output(d, out);
    goto done;
  }
  int64_t out_ld = d->out_stride[1] == 1 ? pixel_stride(d->out_stride, d->batch, d->out_h, d->out_w, d->out_feat) : 0;
  int64_t in_ld = 0;
  if (d->k_h == 1 && d->k_w == 1 && d->in_stride[1] == 1 && d->in_h == d->out_h && d->in_w == d->out_w &&
      !d->pad_lo[0] && !d->pad_lo[1] && d->stride[0] == 1 && d->stride[1] == 1 && d->lhs_dil[0] == 1 &&
      d->lhs_dil[1] == 1)
    in_ld = pixel_stride(d->in_stride, d->batch, d->in_h, d->in_w, d->in_feat);
  if (out_ld > INT_MAX || in_ld > INT_MAX) out_ld = in_ld = 0;
  int64_t block = BLOCK_FLOATS / pl.K;
  if (block < 64) block = 64;
  if (block > P) block = P;
  pl.wt = cx_malloc((size_t)(pl.K * pl.og) * sizeof(float));
  pl.cols = in_ld ? NULL : cx_malloc((size_t)(block * pl.K) * sizeof(float));
  pl.cbuf = out_ld ? NULL : cx_malloc((size_t)(block * pl.og) * sizeof(float));
  if (!pl.wt || (!in_ld && !pl.cols) || (!out_ld && !pl.cbuf)) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: out of memory for the im2col scratch", name);
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  } else {
    for (pl.g = 0; pl.g < d->groups; pl.g++) run_group(rt, &pl, P, block, out_ld, in_ld);
  }
  cx_free(pl.wt);
  cx_free(pl.cols);
  cx_free(pl.cbuf);
done:
  if (rt->trace) {
    cx_trace_args a = {4, {"pixels", "patch", "out_features", "groups"}, {P, pl.K, d->out_feat, d->groups}};
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
