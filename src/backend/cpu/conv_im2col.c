/* conv_im2col.c — f32 2-D convolution as patch gathering + SGEMM.
 *
 * For output pixel p = (n, oh, ow) and output feature g*og + o of feature group g:
 *   out[p, g*og + o] = sum_k cols[p, g*Kg + k] * wt_g[k, o]
 * where cols[p, :] is the (zero-padded, dilated) input patch under the window at p, group by
 * group (Kg = in features per group × window size), and wt_g the group's filters flattened in
 * the same k order. Within a group the k order follows the input layout so that the gather
 * reads memory in order: (kh, kw, i) when the input's feature stride is 1 (channels last: each
 * (kh, kw) copies runs of features), (i, kh, kw) otherwise. The filter is repacked once (K ×
 * out_feat floats, small next to the product), which absorbs any filter layout and window
 * reversal.
 *
 * Pixels are processed in blocks so that the patch matrix stays a few MiB whatever the image
 * size: each block is gathered once for all groups, in parallel on the pool (rows are
 * independent), then multiplied by one sgemm per group, which uses OpenBLAS's threads. When
 * the output's pixels are evenly strided with features contiguous (b01f-like layouts) the
 * sgemm writes the output directly; otherwise it writes a scratch block that is scattered in
 * parallel. A 1×1 unit-stride convolution of a channels-last input skips the gather: the
 * input already is the matrix. Groups with fewer than DIRECT_OG output features (depthwise
 * convolutions) skip both the gather and BLAS — a product with 1-3 columns is memory bound —
 * and accumulate each output pixel straight from the input, window position by window
 * position, features innermost (contiguous for channels-last layouts, so it vectorises). */
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
/* Below this many output features per group, dot products instead of sgemm. */
#define DIRECT_OG 4

typedef struct plan {
  const cx_conv2d_desc *d;
  const float *in, *filt;
  float *out;
  int64_t cg, og, Kg, K, p0; /* features per group in/out, patch length per group and in all, first pixel */
  int chan_last, direct;     /* direct: no gather, no BLAS (small og) */
  int64_t out_ld;            /* > 0: pixel p of the output starts at out + p * out_ld */
  float *cols, *wt, *cbuf;   /* wt: per group Kg × og (sgemm), or window × out_feat × cg (direct) */
} plan;

/* Input coordinate of window offset k at output position o along one spatial dim, or -1
 * when it falls in padding or between dilated input elements. */
static inline int64_t in_coord(int64_t o, int64_t k, int64_t stride, int64_t pad_lo, int64_t ldil, int64_t rdil,
                               int64_t size) {
  int64_t x = o * stride - pad_lo + k * rdil;
  if (ldil != 1) { /* (divisions are slow: only for base-dilated convolutions) */
    if (x < 0 || x % ldil) return -1;
    x /= ldil;
  }
  return x >= 0 && x < size ? x : -1;
}

static void gather_rows(void **args, int64_t begin, int64_t end) {
  const plan *pl = args[0];
  const cx_conv2d_desc *d = pl->d;
  const int64_t *is = d->in_stride, cg = pl->cg, KH = d->k_h, KW = d->k_w, G = d->groups;
  for (int64_t r = begin; r < end; r++) {
    int64_t p = pl->p0 + r, ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
    float *row = pl->cols + r * pl->K;
    const float *img = pl->in + n * is[0];
    if (!pl->chan_last) { /* k = (g, i, kh, kw) = (feature, kh, kw): written in order */
      /* Element offsets of the window's input positions within a feature plane (-1: zero),
       * the same for every feature; computed once per row when the window is small. */
      int64_t off[256];
      int small = KH * KW <= 256;
      for (int64_t k = 0; small && k < KH * KW; k++) {
        int64_t h = in_coord(oh, k / KW, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
        int64_t w = h < 0 ? -1 : in_coord(ow, k % KW, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
        off[k] = w < 0 ? -1 : h * is[2] + w * is[3];
      }
      for (int64_t c = 0; c < d->in_feat; c++) {
        const float *plane = img + c * is[1];
        if (small) {
          for (int64_t k = 0; k < KH * KW; k++) *row++ = off[k] < 0 ? 0.0f : plane[off[k]];
          continue;
        }
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t h = in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t w = h < 0 ? -1 : in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
            *row++ = w < 0 ? 0.0f : plane[h * is[2] + w * is[3]];
          }
        }
      }
      continue;
    }
    /* With one group and densely packed, undilated pixels, a window row inside the image is
     * one run of KW * C floats (this matters when C is small, as in a network's first layer). */
    int rows_contiguous = G == 1 && is[3] == cg && d->rhs_dil[1] == 1 && d->lhs_dil[1] == 1;
    int64_t w0 = ow * d->stride[1] - d->pad_lo[1];
    for (int64_t kh = 0; kh < KH; kh++) { /* k = (g, kh, kw, i): per group, a run of cg features */
      int64_t h = in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      if (rows_contiguous && h >= 0 && w0 >= 0 && w0 + KW <= d->in_w) {
        memcpy(row + kh * KW * cg, img + h * is[2] + w0 * is[3], (size_t)(KW * cg) * sizeof *row);
        continue;
      }
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t w = h < 0 ? -1 : in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
        const float *src = w < 0 ? NULL : img + h * is[2] + w * is[3]; /* feature stride is 1 here */
        for (int64_t g = 0; g < G; g++) {
          float *dst = row + g * pl->Kg + (kh * KW + kw) * cg;
          if (!src) memset(dst, 0, (size_t)cg * sizeof *dst);
          else if (cg >= 8) memcpy(dst, src + g * cg, (size_t)cg * sizeof *dst);
          else for (int64_t i = 0; i < cg; i++) dst[i] = src[g * cg + i];
        }
      }
    }
  }
}

/* The output element of pixel p, feature f. */
static inline float *out_at(const plan *pl, int64_t p, int64_t f) {
  const cx_conv2d_desc *d = pl->d;
  const int64_t *os = d->out_stride;
  if (pl->out_ld) return pl->out + p * pl->out_ld + f;
  int64_t ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
  return pl->out + n * os[0] + f * os[1] + oh * os[2] + ow * os[3];
}

/* out[p, f] = sum over window positions and the group's input features, for pixels
 * [begin, end) (direct path). */
static void direct_rows(void **args, int64_t begin, int64_t end) {
  const plan *pl = args[0];
  const cx_conv2d_desc *d = pl->d;
  const int64_t *is = d->in_stride, cg = pl->cg, og = pl->og, F = d->out_feat, KW = d->k_w;
  int64_t os1 = pl->out_ld ? 1 : d->out_stride[1];
  for (int64_t p = begin; p < end; p++) {
    int64_t ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
    float *dst = out_at(pl, p, 0);
    for (int64_t f = 0; f < F; f++) dst[f * os1] = 0;
    for (int64_t kh = 0; kh < d->k_h; kh++) {
      int64_t h = in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      if (h < 0) continue;
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t w = in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
        if (w < 0) continue;
        const float *src = pl->in + n * is[0] + h * is[2] + w * is[3], *wk = pl->wt + (kh * KW + kw) * F * cg;
        if (cg == 1 && og == 1 && is[1] == 1 && os1 == 1) { /* depthwise, channels last */
          for (int64_t f = 0; f < F; f++) dst[f] += src[f] * wk[f];
          continue;
        }
        for (int64_t f = 0; f < F; f++) {
          const float *x = src + f / og * cg * is[1], *wf = wk + f * cg;
          float acc = 0;
          for (int64_t i = 0; i < cg; i++) acc += x[i * is[1]] * wf[i];
          dst[f * os1] += acc;
        }
      }
    }
  }
}

static void scatter_rows(void **args, int64_t begin, int64_t end) {
  const plan *pl = args[0];
  int64_t os1 = pl->d->out_stride[1], F = pl->d->out_feat;
  for (int64_t r = begin; r < end; r++) {
    float *dst = out_at(pl, pl->p0 + r, 0);
    const float *src = pl->cbuf + r * F;
    for (int64_t f = 0; f < F; f++) dst[f * os1] = src[f];
  }
}

static void repack_filter(const plan *pl) {
  const cx_conv2d_desc *d = pl->d;
  const int64_t *fs = d->filt_stride, KH = d->k_h, KW = d->k_w, og = pl->og;
  for (int64_t g = 0; g < d->groups; g++)
    for (int64_t i = 0; i < pl->cg; i++)
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) {
          int64_t k = pl->chan_last ? (kh * KW + kw) * pl->cg + i : (i * KH + kh) * KW + kw;
          int64_t fh = d->reverse[0] ? KH - 1 - kh : kh, fw = d->reverse[1] ? KW - 1 - kw : kw;
          const float *src = pl->filt + g * og * fs[0] + i * fs[1] + fh * fs[2] + fw * fs[3];
          for (int64_t o = 0; o < og; o++) {
            float v = src[o * fs[0]];
            if (pl->direct) pl->wt[((kh * KW + kw) * d->out_feat + g * og + o) * pl->cg + i] = v;
            else pl->wt[g * pl->Kg * og + k * og + o] = v;
          }
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
  int64_t K = d->in_feat * d->k_h * d->k_w; /* all groups: the patch row length */
  if (K > INT_MAX || d->out_feat > INT_MAX) return "too large for a 32-bit BLAS";
  return NULL;
}

/* One block of pixels, every group. */
static void run_block(cx_rt *rt, plan *pl, int64_t rows, int64_t in_ld) {
  const cx_conv2d_desc *d = pl->d;
  void *args[1] = {pl};
  if (!in_ld) {
    int64_t grain = CHUNK_ELEMS / pl->K;
    cx_threadpool_parallel_for(rt->pool, gather_rows, args, rows, grain > 1 ? grain : 1);
  }
  /* 1×1 unit-stride channels-last: rows of the input are the patches. */
  const float *a = in_ld ? pl->in + pl->p0 * in_ld : pl->cols;
  int64_t lda = in_ld ? in_ld : pl->K;
  for (int64_t g = 0; g < d->groups; g++) {
    float *c = pl->out_ld ? pl->out + pl->p0 * pl->out_ld + g * pl->og : pl->cbuf + g * pl->og;
    int64_t ldc = pl->out_ld ? pl->out_ld : d->out_feat;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)pl->og, (int)pl->Kg, 1.0f, a + g * pl->Kg,
                (int)lda, pl->wt + g * pl->Kg * pl->og, (int)pl->og, 0.0f, c, (int)ldc);
  }
  if (!pl->out_ld) {
    int64_t grain = CHUNK_ELEMS / d->out_feat;
    cx_threadpool_parallel_for(rt->pool, scatter_rows, args, rows, grain > 1 ? grain : 1);
  }
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
  pl.Kg = pl.cg * d->k_h * d->k_w;
  pl.K = pl.Kg * d->groups;
  if (P == 0 || d->out_feat == 0) goto done;
  if (pl.K == 0) {
    zero_output(d, out);
    goto done;
  }
  int64_t out_ld = d->out_stride[1] == 1 ? pixel_stride(d->out_stride, d->batch, d->out_h, d->out_w, d->out_feat) : 0;
  pl.direct = pl.og < DIRECT_OG;
  int64_t in_ld = 0;
  if (d->k_h == 1 && d->k_w == 1 && d->in_stride[1] == 1 && d->in_h == d->out_h && d->in_w == d->out_w &&
      !d->pad_lo[0] && !d->pad_lo[1] && d->stride[0] == 1 && d->stride[1] == 1 && d->lhs_dil[0] == 1 &&
      d->lhs_dil[1] == 1)
    in_ld = pixel_stride(d->in_stride, d->batch, d->in_h, d->in_w, d->in_feat);
  if (out_ld > INT_MAX || in_ld > INT_MAX) out_ld = in_ld = 0;
  pl.out_ld = out_ld;
  int64_t block = BLOCK_FLOATS / pl.K; /* rows of the patch matrix per block */
  if (block < 64) block = 64;
  if (block > P) block = P;
  int need_cbuf = !out_ld && !pl.direct;
  pl.wt = cx_malloc((size_t)(pl.Kg * d->out_feat) * sizeof(float));
  pl.cols = in_ld || pl.direct ? NULL : cx_malloc((size_t)(block * pl.K) * sizeof(float));
  pl.cbuf = need_cbuf ? cx_malloc((size_t)(block * d->out_feat) * sizeof(float)) : NULL;
  if (!pl.wt || (!in_ld && !pl.direct && !pl.cols) || (need_cbuf && !pl.cbuf)) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: out of memory for the im2col scratch", name);
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  } else {
    repack_filter(&pl);
    if (pl.direct) {
      void *args[1] = {&pl};
      int64_t grain = CHUNK_ELEMS / (d->out_feat * pl.Kg);
      cx_threadpool_parallel_for(rt->pool, direct_rows, args, P, grain > 1 ? grain : 1);
    } else {
      for (pl.p0 = 0; pl.p0 < P; pl.p0 += block) run_block(rt, &pl, P - pl.p0 < block ? P - pl.p0 : block, in_ld);
    }
  }
  cx_free(pl.wt);
  cx_free(pl.cols);
  cx_free(pl.cbuf);
done:
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 4, a.key[0] = "pixels", a.key[1] = "patch", a.key[2] = "out_features", a.key[3] = "groups";
    a.val[0] = P, a.val[1] = pl.K, a.val[2] = d->out_feat, a.val[3] = d->groups;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
