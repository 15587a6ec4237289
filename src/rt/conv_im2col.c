/* conv_im2col.c — f32/f64 2-D convolution as patch gathering + GEMM: the entry point, and
 * convolutions with at least as many output pixels as patch elements (forward and
 * input-gradient convolutions), one patch per row:
 *   out[p, g*og + o] = sum_k cols[p, g*Kg + k] * wt_g[k, o]
 * for output pixel p = (n, oh, ow), where cols[p, :] is the (zero-padded, dilated) input patch
 * under the window at p, group by group (Kg = in features per group × window size), and wt_g
 * the group's filters flattened in the same k order. Within a group the k order follows the
 * input layout so that the gather reads memory in order: (kh, kw, i) when the input's feature
 * stride is 1 (channels last: each (kh, kw) copies runs of features), (i, kh, kw) otherwise.
 * The filter is repacked once (K × out_feat elements, small next to the product), which
 * absorbs any filter layout and window reversal. The weight gradient's shape (few output
 * pixels, a patch as long as the batch times the image) goes to conv_wgrad.c instead.
 *
 * A chunk of pixels is gathered by the task that multiplies it, so its rows are still in
 * cache for the GEMM; when the output's pixels are evenly strided with features contiguous
 * (b01f-like layouts) the GEMM writes the output directly, otherwise the task's scratch,
 * scattered right after. A 1×1 unit-stride convolution of a channels-last input skips the
 * gather: the input already is the matrix. Groups with fewer than DIRECT_OG output features
 * (depthwise convolutions, f32) skip both the gather and BLAS — a product with 1-3 columns is
 * memory bound — and accumulate each output pixel straight from the input, window position by
 * window position, features innermost (contiguous for channels-last layouts, so it
 * vectorises). batch_group_count > 1 (the weight gradient of a grouped convolution) runs as
 * that many convolutions, one per batch group. */
#include <limits.h>
#include <stdio.h>
#include "rt/conv.h"
#include "rt/threadpool.h"
#include "core/trace.h"
#include "util/util.h"

/* OpenBLAS's own, declared here so that a netlib cblas.h alternative still compiles. */
int openblas_get_num_threads(void);

/* Elements a gather/scatter hand-off should move in big mode. */
#define CHUNK_ELEMS 16384
/* Below this many output features per group, dot products instead of a GEMM (f32). */
#define DIRECT_OG 4

/* ---- one patch per row ---- */

typedef struct a_state {
  const cx_conv_plan *pl;
  int chan_last;            /* the input's feature stride is 1 */
  int inner;                /* big mode: gather and scatter on the pool, inside a chunk */
  int64_t rows;             /* pixels per chunk */
  int64_t in_ld, out_ld;    /* > 0: pixel p of the input (1×1 only) / output starts at p * ld */
  int64_t cbuf_off;         /* a task's scratch: cols at 0 (rows × K), the output block here */
  const char *wt;           /* per group Kg × og (GEMM), or window × out_feat × cg (direct, f32) */
} a_state;

/* The rows [p0, p0 + rows) of one chunk, for the row-parallel helpers. */
typedef struct a_rows {
  const a_state *st;
  int64_t p0;
  char *cols, *cbuf;
} a_rows;

/* Channels last, one group, densely packed undilated pixels: a window row is one run of
 * KW * C elements (this matters when C is small, as in a network's first layer). Walks the
 * pixels of one output row at a time, window row by window row. */
CX_CONV_INLINE void gather_packed(const a_rows *j, int64_t begin, int64_t end, const int64_t es) {
  const cx_conv_plan *pl = j->st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *is = d->in_stride, KH = d->k_h, C = pl->cg, n = d->k_w * C, K = pl->K, step = d->stride[1] * C;
  int64_t p = j->p0 + begin, ow = p % d->out_w, oh = p / d->out_w % d->out_h, b = p / (d->out_w * d->out_h);
  for (int64_t r = begin; r < end;) {
    int64_t seg = d->out_w - ow < end - r ? d->out_w - ow : end - r;
    const char *img = pl->in + b * is[0] * es;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t h = cx_conv_in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      char *dst = j->cols + (r * K + kh * n) * es;
      if (h < 0) {
        for (int64_t i = 0; i < seg; i++) cx_conv_zero(dst + i * K * es, n, es);
        continue;
      }
      const char *line = img + h * is[2] * es;
      int64_t x0 = (ow * d->stride[1] - d->pad_lo[1]) * C, size = d->in_w * C;
      for (int64_t i = 0; i < seg; i++, x0 += step, dst += K * es) {
        if (x0 >= 0 && x0 + n <= size)
          cx_conv_copy(dst, line + x0 * es, n, 1, es);
        else
          cx_conv_run(dst, line, x0, n, size, 1, es);
      }
    }
    r += seg, ow += seg;
    if (ow == d->out_w) {
      ow = 0;
      if (++oh == d->out_h) oh = 0, b++;
    }
  }
}

CX_CONV_INLINE void gather_rows_es(void **args, int64_t begin, int64_t end, const int64_t es) {
  const a_rows *j = args[0];
  const a_state *st = j->st;
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *is = d->in_stride, cg = pl->cg, KH = d->k_h, KW = d->k_w, G = d->groups;
  /* Consecutive window columns read consecutive input columns: runs, padding zero-filled. */
  int unit_w = d->rhs_dil[1] == 1 && d->lhs_dil[1] == 1;
  if (st->chan_last && unit_w && G == 1 && is[3] == cg) {
    gather_packed(j, begin, end, es);
    return;
  }
  int64_t p = j->p0 + begin, ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
  for (int64_t r = begin; r < end; r++) {
    char *row = j->cols + r * pl->K * es;
    const char *img = pl->in + n * is[0] * es;
    int64_t w0 = ow * d->stride[1] - d->pad_lo[1];
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t h = cx_conv_in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      const char *line = h < 0 ? NULL : img + h * is[2] * es;
      if (!st->chan_last) { /* k = (g, i, kh, kw) = (feature, kh, kw) */
        for (int64_t c = 0; c < d->in_feat; c++) {
          char *dst = row + (c * KH + kh) * KW * es;
          if (!line) cx_conv_zero(dst, KW, es);
          else if (unit_w) cx_conv_run(dst, line + c * is[1] * es, w0, KW, d->in_w, is[3], es);
          else
            for (int64_t kw = 0; kw < KW; kw++) {
              int64_t w = cx_conv_in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
              if (w < 0) cx_conv_zero(dst + kw * es, 1, es);
              else cx_conv_put(dst + kw * es, line + (c * is[1] + w * is[3]) * es, es);
            }
        }
        continue;
      }
      for (int64_t kw = 0; kw < KW; kw++) { /* k = (g, kh, kw, i): per group, a run of cg features */
        int64_t w = !line ? -1
                          : cx_conv_in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
        const char *src = w < 0 ? NULL : line + w * is[3] * es; /* feature stride is 1 here */
        for (int64_t g = 0; g < G; g++) {
          char *dst = row + (g * pl->Kg + (kh * KW + kw) * cg) * es;
          if (!src) cx_conv_zero(dst, cg, es);
          else cx_conv_copy(dst, src + g * cg * es, cg, 1, es);
        }
      }
    }
    if (++ow == d->out_w) {
      ow = 0;
      if (++oh == d->out_h) oh = 0, n++;
    }
  }
}

static void gather_rows(void **args, int64_t begin, int64_t end) {
  int64_t es = ((const a_rows *)args[0])->st->pl->es;
  CX_CONV_BY_SIZE(gather_rows_es, es, args, begin, end);
}

/* The output element of pixel p, feature f. */
static inline char *out_at(const a_state *st, int64_t p, int64_t f) {
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *os = d->out_stride;
  if (st->out_ld) return pl->out + (p * st->out_ld + f) * pl->es;
  int64_t ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
  return pl->out + (n * os[0] + f * os[1] + oh * os[2] + ow * os[3]) * pl->es;
}

CX_CONV_INLINE void scatter_rows_es(void **args, int64_t begin, int64_t end, const int64_t es) {
  const a_rows *j = args[0];
  const cx_conv_plan *pl = j->st->pl;
  int64_t os1 = pl->d.out_stride[1] * es, F = pl->d.out_feat;
  for (int64_t r = begin; r < end; r++) {
    char *dst = out_at(j->st, j->p0 + r, 0);
    const char *src = j->cbuf + r * F * es;
    for (int64_t f = 0; f < F; f++) cx_conv_put(dst + f * os1, src + f * es, es);
  }
}

static void scatter_rows(void **args, int64_t begin, int64_t end) {
  int64_t es = ((const a_rows *)args[0])->st->pl->es;
  CX_CONV_BY_SIZE(scatter_rows_es, es, args, begin, end);
}

/* One chunk: gather, one GEMM per group, scatter when the output is not pixel-strided. */
static void a_chunk(const void *vst, int64_t chunk, char *scratch) {
  const a_state *st = vst;
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  int64_t es = pl->es, p0 = chunk * st->rows, n = pl->P - p0 < st->rows ? pl->P - p0 : st->rows;
  a_rows j = {st, p0, scratch, scratch ? scratch + st->cbuf_off : NULL};
  void *args[1] = {&j};
  if (!st->in_ld) cx_conv_rows(pl, st->inner, gather_rows, args, n, CHUNK_ELEMS / pl->K);
  /* 1×1 unit-stride channels-last: rows of the input are the patches. */
  const char *a = st->in_ld ? pl->in + p0 * st->in_ld * es : j.cols;
  int64_t lda = st->in_ld ? st->in_ld : pl->K, ldc = st->out_ld ? st->out_ld : d->out_feat;
  for (int64_t g = 0; g < d->groups; g++) {
    char *c = st->out_ld ? pl->out + (p0 * st->out_ld + g * pl->og) * es : j.cbuf + g * pl->og * es;
    cx_conv_gemm(pl, 0, n, pl->og, pl->Kg, a + g * pl->Kg * es, lda, st->wt + g * pl->Kg * pl->og * es, pl->og, 0, c,
                 ldc);
  }
  if (!st->out_ld) cx_conv_rows(pl, st->inner, scatter_rows, args, n, CHUNK_ELEMS / d->out_feat);
}

/* out[p, f] = sum over window positions and the group's input features, for pixels
 * [begin, end) (direct path, f32). */
static void direct_rows(void **args, int64_t begin, int64_t end) {
  const a_state *st = args[0];
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *is = d->in_stride, cg = pl->cg, og = pl->og, F = d->out_feat, KW = d->k_w;
  const float *in = (const float *)pl->in, *wt = (const float *)st->wt;
  int64_t os1 = st->out_ld ? 1 : d->out_stride[1];
  for (int64_t p = begin; p < end; p++) {
    int64_t ow = p % d->out_w, oh = p / d->out_w % d->out_h, n = p / (d->out_w * d->out_h);
    float *dst = (float *)out_at(st, p, 0);
    for (int64_t f = 0; f < F; f++) dst[f * os1] = 0;
    for (int64_t kh = 0; kh < d->k_h; kh++) {
      int64_t h = cx_conv_in_coord(oh, kh, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      if (h < 0) continue;
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t w = cx_conv_in_coord(ow, kw, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
        if (w < 0) continue;
        const float *src = in + n * is[0] + h * is[2] + w * is[3], *wk = wt + (kh * KW + kw) * F * cg;
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

/* Filter rows (g, i) [begin, end) into wt, for the GEMM or the direct path. */
static void repack_rows(void **args, int64_t begin, int64_t end) {
  const a_state *st = args[0];
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *fs = d->filt_stride, KH = d->k_h, KW = d->k_w, og = pl->og, es = pl->es;
  char *wt = (char *)st->wt;
  int direct = args[1] != NULL;
  for (int64_t gi = begin; gi < end; gi++) {
    int64_t g = gi / pl->cg, i = gi % pl->cg;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t k = st->chan_last ? (kh * KW + kw) * pl->cg + i : (i * KH + kh) * KW + kw;
        int64_t fh = d->reverse[0] ? KH - 1 - kh : kh, fw = d->reverse[1] ? KW - 1 - kw : kw;
        const char *src = pl->filt + (g * og * fs[0] + i * fs[1] + fh * fs[2] + fw * fs[3]) * es;
        for (int64_t o = 0; o < og; o++) {
          int64_t at = direct ? ((kh * KW + kw) * d->out_feat + g * og + o) * pl->cg + i : g * pl->Kg * og + k * og + o;
          cx_conv_put(wt + at * es, src + o * fs[0] * es, es);
        }
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

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static cxla_status conv_pixels(const cx_conv_plan *pl, const char **why) {
  const cx_conv2d_desc *d = &pl->d;
  int64_t es = pl->es, O = d->out_feat;
  a_state st = {.pl = pl, .chan_last = d->in_stride[1] == 1};
  int64_t out_ld = d->out_stride[1] == 1 ? pixel_stride(d->out_stride, d->batch, d->out_h, d->out_w, O) : 0;
  int direct = pl->og < DIRECT_OG && pl->type == CXLA_F32;
  int64_t in_ld = 0;
  if (d->k_h == 1 && d->k_w == 1 && d->in_stride[1] == 1 && d->in_h == d->out_h && d->in_w == d->out_w &&
      !d->pad_lo[0] && !d->pad_lo[1] && d->stride[0] == 1 && d->stride[1] == 1 && d->lhs_dil[0] == 1 &&
      d->lhs_dil[1] == 1)
    in_ld = pixel_stride(d->in_stride, d->batch, d->in_h, d->in_w, d->in_feat);
  if (out_ld > INT_MAX || in_ld > INT_MAX) out_ld = in_ld = 0;
  st.out_ld = out_ld, st.in_ld = direct ? 0 : in_ld;
  char *wt = cx_malloc((size_t)(pl->Kg * O * es));
  if (!wt) return *why = "out of memory for the repacked filter", CXLA_ERR_OUT_OF_MEMORY;
  st.wt = wt;
  void *rargs[2] = {&st, direct ? &st : NULL};
  cx_conv_rows(pl, 1, repack_rows, rargs, d->groups * pl->cg, CHUNK_ELEMS / max64(1, d->k_h * d->k_w * pl->og));
  if (direct) {
    void *args[1] = {&st};
    cx_conv_rows(pl, 1, direct_rows, args, pl->P, CHUNK_ELEMS / max64(1, O * pl->Kg));
    cx_free(wt);
    return CXLA_OK;
  }
  /* Scratch per row: its patch (unless the input is the matrix) and its output (unless the
   * GEMM writes the output). */
  int64_t per_row = (st.in_ld ? 0 : pl->K) + (out_ld ? 0 : O), tasks = pl->threads;
  st.rows = cx_conv_chunk_rows(pl, (double)(pl->og * pl->Kg), per_row * es, pl->P);
  if (!st.rows) { /* big mode: one task, OpenBLAS's threads in each GEMM */
    st.rows = min64(max64(CX_CONV_BLOCK_BYTES / (pl->K * es), 64), pl->P);
    st.inner = tasks > 1, tasks = 1;
  }
  st.cbuf_off = (st.in_ld ? 0 : st.rows * pl->K * es + 63) / 64 * 64;
  int64_t scratch_bytes = (st.cbuf_off + (out_ld ? 0 : st.rows * O * es) + 63) / 64 * 64;
  char *scratch = scratch_bytes ? cx_malloc((size_t)(scratch_bytes * tasks)) : NULL;
  if (scratch_bytes && !scratch) {
    cx_free(wt);
    return *why = "out of memory for the im2col scratch", CXLA_ERR_OUT_OF_MEMORY;
  }
  cx_conv_run_chunks(pl, (int)tasks, a_chunk, &st, (pl->P + st.rows - 1) / st.rows, scratch, scratch_bytes, NULL);
  cx_free(scratch);
  cx_free(wt);
  return CXLA_OK;
}

/* ---- entry ---- */

static const char *check(const cx_conv2d_desc *d) {
  if (d->batch < 0 || d->in_feat < 0 || d->in_h < 0 || d->in_w < 0 || d->out_feat < 0 || d->out_h < 0 ||
      d->out_w < 0 || d->k_h < 0 || d->k_w < 0)
    return "negative dimension";
  for (int i = 0; i < 2; i++)
    if (d->stride[i] < 1 || d->lhs_dil[i] < 1 || d->rhs_dil[i] < 1) return "stride and dilations must be >= 1";
  if (d->groups < 1 || d->in_feat % d->groups || d->out_feat % d->groups)
    return "feature_group_count must divide the input and output features";
  if (d->batch_groups < 1 || d->batch % d->batch_groups || d->out_feat % d->batch_groups)
    return "batch_group_count must divide the input batch and the output features";
  if (d->groups > 1 && d->batch_groups > 1) return "feature_group_count and batch_group_count are both > 1";
  int64_t K = d->in_feat * d->k_h * d->k_w; /* all groups: the patch row length */
  if (K > INT_MAX || d->out_feat > INT_MAX || d->batch * d->out_h * d->out_w > INT_MAX)
    return "too large for a 32-bit BLAS";
  return NULL;
}

static void zero_output(const cx_conv_plan *pl) {
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *os = d->out_stride;
  for (int64_t n = 0; n < d->batch; n++)
    for (int64_t f = 0; f < d->out_feat; f++)
      for (int64_t h = 0; h < d->out_h; h++)
        for (int64_t w = 0; w < d->out_w; w++)
          memset(pl->out + (n * os[0] + f * os[1] + h * os[2] + w * os[3]) * pl->es, 0, (size_t)pl->es);
}

/* One batch group's convolution (the whole one when batch_groups is 1). */
static cxla_status conv_group(cx_conv_plan *pl, const char **why) {
  const cx_conv2d_desc *d = &pl->d;
  pl->cg = d->in_feat / d->groups, pl->og = d->out_feat / d->groups;
  pl->Kg = pl->cg * d->k_h * d->k_w, pl->K = pl->Kg * d->groups;
  pl->P = d->batch * d->out_h * d->out_w;
  if (pl->P == 0 || d->out_feat == 0) return CXLA_OK;
  if (pl->K == 0) {
    zero_output(pl);
    return CXLA_OK;
  }
  /* Fewer output pixels than patch elements, as in a weight gradient: contraction rows,
   * unless only one patch per row reads the input in runs (channels last, when the batch is
   * not the fastest dim and window columns are not contiguous). */
  const int64_t *is = d->in_stride;
  int runs_a = is[1] == 1 && pl->cg > 1, runs_w = (is[0] == 1 && d->batch > 1) || is[3] == 1;
  if (d->groups == 1 && pl->P < pl->Kg && (runs_w || !runs_a)) return cx_conv_wgrad(pl, why);
  return conv_pixels(pl, why);
}

void cx_rt_conv_im2col(cx_rt *rt, int32_t type, const cx_conv2d_desc *d, const void *in, const void *filt,
                       void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "convolution";
  const char *why = type != CXLA_F32 && type != CXLA_F64 ? "only f32 and f64 are supported" : check(d);
  if (why) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: im2col convolution: %s", name, why);
    rt->status = type != CXLA_F32 && type != CXLA_F64 ? CXLA_ERR_UNSUPPORTED : CXLA_ERR_INTERNAL;
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  int64_t BG = d->batch_groups, es = type == CXLA_F32 ? 4 : 8;
  cx_conv_plan pl = {.d = *d, .type = type, .es = es, .pool = rt->pool, .threads = cx_threadpool_size(rt->pool)};
  pl.blas_threaded = pl.threads > 1 && openblas_get_num_threads() > 1;
  pl.d.batch /= BG, pl.d.out_feat /= BG, pl.d.batch_groups = 1;
  cxla_status s = CXLA_OK;
  /* Batch group g: input batch [g*B/BG, (g+1)*B/BG), output features [g*O/BG, ...). */
  for (int64_t g = 0; g < BG && s == CXLA_OK; g++) {
    pl.in = (const char *)in + g * pl.d.batch * d->in_stride[0] * es;
    pl.filt = (const char *)filt + g * pl.d.out_feat * d->filt_stride[0] * es;
    pl.out = (char *)out + g * pl.d.out_feat * d->out_stride[1] * es;
    s = conv_group(&pl, &why);
  }
  if (s != CXLA_OK) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: im2col convolution: %s", name, why ? why : "failed");
    rt->status = s;
  }
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 4, a.key[0] = "pixels", a.key[1] = "patch", a.key[2] = "out_features", a.key[3] = "groups";
    a.val[0] = pl.P * BG, a.val[1] = pl.K, a.val[2] = d->out_feat, a.val[3] = d->groups * BG;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
