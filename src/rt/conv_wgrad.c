/* conv_wgrad.c — convolutions with fewer output pixels than patch elements, the shape of a
 * weight gradient: out[kh, kw, i, o] = sum over (n, h, w) of x[n, h+kh, w+kw, i] * dy[n, h, w, o]
 * arrives as a convolution whose input features are the batch n, whose window is the image
 * (h, w), whose batch is the features i and whose output pixels are the filter taps. With
 * one patch per output pixel (conv_im2col.c) the patch matrix would be a few pixels by
 * batch × image, each row a strided walk through the whole input, and the filter (dy, as big
 * as an activation) repacked. Here the contraction runs down the rows instead:
 *   out[p, o] = sum_k colsT[k, p] * W[k, o]
 * for output pixel p and patch element k = (c, kh, kw), so W is the filter read in its own
 * layout (dy in NHWC already is that matrix: rows (n, h, w), output features contiguous) and
 * row k of colsT holds the input elements every output pixel takes at k: for a batch that is
 * the input's fastest dim (channels last), runs of it, pixels in (oh, ow, b) order. The rows
 * are cut into chunks; each task gathers its chunk into cache-sized scratch and adds one
 * GEMM (colsT transposed, so no transpose is ever copied) into its own P × O accumulator;
 * the accumulators are summed into the output at the end. Feature groups are not taken here
 * (conv_im2col.c runs them); batch groups arrive split (one call per group). */
#include <limits.h>
#include "rt/conv.h"
#include "util/util.h"

typedef struct w_state {
  const cx_conv_plan *pl;
  /* The layout of a chunk's gathered input: colsT (rows k, pixels in (oh, ow, b) order) when
   * the batch is the input's fastest dim, so a row is runs of the batch; otherwise cols
   * (rows p in (b, oh, ow) order, kc wide), a row being runs of window columns. */
  int k_rows;
  int inner;            /* big mode: gather on the pool, inside a chunk */
  int64_t kc;           /* contraction rows per chunk */
  const char *w;        /* the filter as a Kg × O matrix with row stride ldw, or NULL: repacked */
  int64_t ldw;
  int64_t cols_off, wbuf_off; /* a task's scratch: its P × O accumulator at 0, then cols, then W */
} w_state;

typedef struct w_rows {
  const w_state *st;
  int64_t k0, kn;
  char *cols, *wbuf;
} w_rows;

/* colsT rows [k0 + begin, k0 + end) (P elements each), and W's when it is repacked. */
CX_CONV_INLINE void gather_k_rows_es(void **args, int64_t begin, int64_t end, const int64_t es) {
  const w_rows *j = args[0];
  const w_state *st = j->st;
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *is = d->in_stride, *fs = d->filt_stride, KH = d->k_h, KW = d->k_w;
  const int64_t B = d->batch, OH = d->out_h, OW = d->out_w, O = d->out_feat;
  /* The batch packed inside pixels and unit steps along w: one run per output row. */
  int packed = is[0] == 1 && is[3] == B && d->stride[1] == 1 && d->lhs_dil[1] == 1;
  for (int64_t r = begin; r < end; r++) {
    int64_t k = j->k0 + r, c = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    const char *plane = pl->in + c * is[1] * es;
    char *row = j->cols + r * pl->P * es;
    for (int64_t oy = 0; oy < OH; oy++) {
      int64_t y = cx_conv_in_coord(oy, ky, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      char *dst = row + oy * OW * B * es;
      if (y < 0) cx_conv_zero(dst, OW * B, es);
      else if (packed) cx_conv_run(dst, plane + y * is[2] * es, (kx * d->rhs_dil[1] - d->pad_lo[1]) * B, OW * B, d->in_w * B, 1, es);
      else
        for (int64_t ox = 0; ox < OW; ox++) {
          int64_t x = cx_conv_in_coord(ox, kx, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
          if (x < 0) cx_conv_zero(dst + ox * B * es, B, es);
          else cx_conv_copy(dst + ox * B * es, plane + (y * is[2] + x * is[3]) * es, B, is[0], es);
        }
    }
    if (st->w) continue;
    int64_t fy = d->reverse[0] ? KH - 1 - ky : ky, fx = d->reverse[1] ? KW - 1 - kx : kx;
    const char *f = pl->filt + (c * fs[1] + fy * fs[2] + fx * fs[3]) * es;
    for (int64_t o = 0; o < O; o++) cx_conv_put(j->wbuf + (r * O + o) * es, f + o * fs[0] * es, es);
  }
}

static void gather_k_rows(void **args, int64_t begin, int64_t end) {
  int64_t es = ((const w_rows *)args[0])->st->pl->es;
  CX_CONV_BY_SIZE(gather_k_rows_es, es, args, begin, end);
}

/* cols rows p in [begin, end), columns k0 .. k0 + kn: runs of window columns. */
CX_CONV_INLINE void gather_p_rows_es(void **args, int64_t begin, int64_t end, const int64_t es) {
  const w_rows *j = args[0];
  const w_state *st = j->st;
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *is = d->in_stride, KH = d->k_h, KW = d->k_w, k1 = j->k0 + j->kn;
  int unit_w = d->rhs_dil[1] == 1 && d->lhs_dil[1] == 1;
  for (int64_t p = begin; p < end; p++) {
    int64_t ox = p % d->out_w, oy = p / d->out_w % d->out_h, b = p / (d->out_w * d->out_h);
    const char *img = pl->in + b * is[0] * es;
    char *dst = j->cols + p * st->kc * es;
    int64_t k = j->k0, c = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    while (k < k1) {
      int64_t run = KW - kx < k1 - k ? KW - kx : k1 - k;
      int64_t y = cx_conv_in_coord(oy, ky, d->stride[0], d->pad_lo[0], d->lhs_dil[0], d->rhs_dil[0], d->in_h);
      const char *line = y < 0 ? NULL : img + (c * is[1] + y * is[2]) * es;
      if (!line) cx_conv_zero(dst, run, es);
      else if (unit_w) cx_conv_run(dst, line, ox * d->stride[1] - d->pad_lo[1] + kx, run, d->in_w, is[3], es);
      else
        for (int64_t i = 0; i < run; i++) {
          int64_t x = cx_conv_in_coord(ox, kx + i, d->stride[1], d->pad_lo[1], d->lhs_dil[1], d->rhs_dil[1], d->in_w);
          if (x < 0) cx_conv_zero(dst + i * es, 1, es);
          else cx_conv_put(dst + i * es, line + x * is[3] * es, es);
        }
      dst += run * es, k += run, kx = 0;
      if (++ky == KH) ky = 0, c++;
    }
  }
}

static void gather_p_rows(void **args, int64_t begin, int64_t end) {
  int64_t es = ((const w_rows *)args[0])->st->pl->es;
  CX_CONV_BY_SIZE(gather_p_rows_es, es, args, begin, end);
}

/* W's rows k0 .. k0 + kn when it is repacked (cols layout: gather_k_rows does it for colsT). */
CX_CONV_INLINE void repack_w_rows_es(void **args, int64_t begin, int64_t end, const int64_t es) {
  const w_rows *j = args[0];
  const cx_conv_plan *pl = j->st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *fs = d->filt_stride, KH = d->k_h, KW = d->k_w, O = d->out_feat;
  for (int64_t r = begin; r < end; r++) {
    int64_t k = j->k0 + r, c = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    int64_t fy = d->reverse[0] ? KH - 1 - ky : ky, fx = d->reverse[1] ? KW - 1 - kx : kx;
    const char *f = pl->filt + (c * fs[1] + fy * fs[2] + fx * fs[3]) * es;
    for (int64_t o = 0; o < O; o++) cx_conv_put(j->wbuf + (r * O + o) * es, f + o * fs[0] * es, es);
  }
}

static void repack_w_rows(void **args, int64_t begin, int64_t end) {
  int64_t es = ((const w_rows *)args[0])->st->pl->es;
  CX_CONV_BY_SIZE(repack_w_rows_es, es, args, begin, end);
}

static void w_init(const void *vst, char *scratch) {
  const w_state *st = vst;
  memset(scratch, 0, (size_t)(st->pl->P * st->pl->d.out_feat * st->pl->es));
}

static void w_chunk(const void *vst, int64_t chunk, char *scratch) {
  const w_state *st = vst;
  const cx_conv_plan *pl = st->pl;
  int64_t k0 = chunk * st->kc, n = pl->Kg - k0 < st->kc ? pl->Kg - k0 : st->kc, O = pl->d.out_feat;
  w_rows j = {st, k0, n, scratch + st->cols_off, scratch + st->wbuf_off};
  void *args[1] = {&j};
  if (st->k_rows) {
    cx_conv_rows(pl, st->inner, gather_k_rows, args, n, 16384 / (pl->P + O));
  } else {
    cx_conv_rows(pl, st->inner, gather_p_rows, args, pl->P, 16384 / n);
    if (!st->w) cx_conv_rows(pl, st->inner, repack_w_rows, args, n, 16384 / O);
  }
  const char *w = st->w ? st->w + k0 * st->ldw * pl->es : j.wbuf;
  cx_conv_gemm(pl, st->k_rows, pl->P, O, n, j.cols, st->k_rows ? pl->P : st->kc, w, st->w ? st->ldw : O, 1, scratch,
               O);
}

/* Output pixels [begin, end): the sum of every task's accumulator. */
static void sum_rows(void **args, int64_t begin, int64_t end) {
  const w_state *st = args[0];
  const char *acc = args[1];
  int64_t tasks = *(const int64_t *)args[2], bytes = *(const int64_t *)args[3];
  const cx_conv_plan *pl = st->pl;
  const cx_conv2d_desc *d = &pl->d;
  const int64_t *os = d->out_stride, O = d->out_feat;
  for (int64_t p = begin; p < end; p++) {
    int64_t b, oy, ox;
    if (st->k_rows) b = p % d->batch, ox = p / d->batch % d->out_w, oy = p / (d->batch * d->out_w);
    else ox = p % d->out_w, oy = p / d->out_w % d->out_h, b = p / (d->out_w * d->out_h);
    char *dst = pl->out + (b * os[0] + oy * os[2] + ox * os[3]) * pl->es;
    for (int64_t o = 0; o < O; o++) {
      if (pl->type == CXLA_F32) {
        float s = 0;
        for (int64_t t = 0; t < tasks; t++) s += ((const float *)(acc + t * bytes))[p * O + o];
        ((float *)dst)[o * os[1]] = s;
      } else {
        double s = 0;
        for (int64_t t = 0; t < tasks; t++) s += ((const double *)(acc + t * bytes))[p * O + o];
        ((double *)dst)[o * os[1]] = s;
      }
    }
  }
}

/* The element stride L with filter element (o, c, ky, kx) at (c*KH*KW + ky*KW + kx) * L + o,
 * or 0 (dims of size 1 may have any stride). */
static int64_t filter_row_stride(const cx_conv2d_desc *d, int64_t C) {
  const int64_t *fs = d->filt_stride;
  if ((d->out_feat > 1 && fs[0] != 1) || (d->k_h > 1 && d->reverse[0]) || (d->k_w > 1 && d->reverse[1])) return 0;
  int64_t L = d->k_w > 1 ? fs[3] : d->k_h > 1 ? fs[2] / d->k_w : C > 1 ? fs[1] / (d->k_h * d->k_w) : d->out_feat;
  if (L < d->out_feat || L > INT_MAX) return 0;
  if ((d->k_w > 1 && fs[3] != L) || (d->k_h > 1 && fs[2] != L * d->k_w) || (C > 1 && fs[1] != L * d->k_w * d->k_h))
    return 0;
  return L;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

cxla_status cx_conv_wgrad(const cx_conv_plan *pl, const char **why) {
  const cx_conv2d_desc *d = &pl->d;
  int64_t es = pl->es, O = d->out_feat, P = pl->P, tasks = pl->threads;
  w_state st = {.pl = pl, .k_rows = d->batch > 1 && d->in_stride[0] < d->in_stride[3]};
  st.ldw = filter_row_stride(d, pl->cg);
  st.w = st.ldw ? pl->filt : NULL;
  int64_t per_row = P + (st.w ? 0 : O), acc_bytes = (P * O * es + 63) / 64 * 64;
  st.kc = acc_bytes * tasks <= (64 << 20) ? cx_conv_chunk_rows(pl, (double)(P * O), per_row * es, pl->Kg) : 0;
  if (!st.kc) { /* big mode: one task, one accumulator, OpenBLAS's threads in each GEMM */
    st.kc = min64(max64(CX_CONV_BLOCK_BYTES / (per_row * es), 64), pl->Kg);
    st.inner = tasks > 1, tasks = 1;
  }
  st.cols_off = acc_bytes;
  st.wbuf_off = st.cols_off + (st.kc * P * es + 63) / 64 * 64;
  int64_t scratch_bytes = st.wbuf_off + (st.w ? 0 : (st.kc * O * es + 63) / 64 * 64);
  char *scratch = cx_malloc((size_t)(scratch_bytes * tasks));
  if (!scratch) return *why = "out of memory for the weight-gradient scratch", CXLA_ERR_OUT_OF_MEMORY;
  cx_conv_run_chunks(pl, (int)tasks, w_chunk, &st, (pl->Kg + st.kc - 1) / st.kc, scratch, scratch_bytes, w_init);
  void *args[4] = {&st, scratch, &tasks, &scratch_bytes};
  cx_conv_rows(pl, 1, sum_rows, args, P, 16384 / (O * tasks));
  cx_free(scratch);
  return CXLA_OK;
}
