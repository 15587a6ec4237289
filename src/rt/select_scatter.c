/* select_scatter.c — select-and-scatter on the cpu (the gradient of max-pooling). The
 * result starts as init_value; for every source element (row-major) its window over the
 * operand is walked in row-major order over in-bounds elements only (padding and
 * base-dilation holes are never selected); the first is the initial selection and a later one
 * replaces it when select(selected, current) is false; then result[selected] =
 * scatter(result[selected], source). A window with no in-bounds element scatters nothing.
 * Slices along the leading dimensions whose window is 1 wide with stride 1 and no padding
 * (the batch of a pooling) never share a result element, so they run in parallel on the
 * pool, each in that serial order. select = GE/GT compare of f32 and scatter = add of f32, the
 * max-pool gradient jax emits, run inline (by rows of channels where the last dim is not
 * windowed: row_slices); any other pair calls the emitted functions. When the windows tile the
 * operand (stride = size, no padding: the usual 2x2/2 pooling), each result element is in one
 * window, so it is written once, init_value or init_value + source, with no init_value pass
 * before and no read-modify-write after (tiled_rows, and fast_slices element by element). */
#include <stdio.h>
#include <string.h>
#include "rt/sort_scatter.h"
#include "rt/threadpool.h"
#include "core/trace.h"


typedef struct sas_job {
  const sas_desc *d;
  /* per dim a and source coordinate c: cnt[a][c] in-bounds taps at operand offsets
   * off[a][c * size ...] (coordinate times stride): made once per call */
  int64_t *cnt[CXLA_MAX_RANK], *off[CXLA_MAX_RANK];
  cx_scalar_fn sel, sct;
  char *res;
  const char *x, *src, *init;
  int rows;     /* the fast form's last dim is a row of shared taps (row_slices) */
  int disjoint; /* the fast form's windows tile the operand: every element is in one */
} sas_job;

/* In-bounds operand coordinates of source coordinate s along one dimension. */
static int64_t taps(const cx_window_dim *w, int64_t dim, int64_t s, int64_t *coord) {
  int64_t n = 0, pos = s * w->stride - w->pad_lo;
  if (w->lhs_dilate == 1) { /* no divisions in the common case: they would dominate */
    for (int64_t k = 0; k < w->size; k++, pos += w->rhs_dilate)
      if (pos >= 0 && pos < dim) coord[n++] = pos;
    return n;
  }
  for (int64_t k = 0; k < w->size; k++, pos += w->rhs_dilate)
    if (pos >= 0 && pos % w->lhs_dilate == 0 && pos / w->lhs_dilate < dim) coord[n++] = pos / w->lhs_dilate;
  return n;
}

static int next_index(int rank, const int64_t *dims, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* The f32 GE/GT + add form over the tap tables: window dims of one tap add a fixed offset,
 * the others (a pooling's two) are walked in row-major order. */
static void fast_slices(sas_job *j, int64_t begin, int64_t end, int64_t *sidx) {
  const sas_desc *d = j->d;
  int rank = d->rank, act[CXLA_MAX_RANK], nact = 0;
  for (int a = 0; a < rank; a++)
    if (d->w[a].size > 1) act[nact++] = a;
  const float *x = (const float *)j->x, *src = (const float *)j->src;
  float *res = (float *)j->res;
  int ge = d->fast == 1;
  for (int64_t si = begin * d->slice_s; si < end * d->slice_s; si++, next_index(rank, d->sdims, sidx)) {
    int64_t base = 0, best = -1;
    int empty = 0;
    for (int a = 0; a < rank && !empty; a++) {
      if (d->w[a].size > 1) continue;
      empty = j->cnt[a][sidx[a]] == 0;
      base += j->off[a][sidx[a]];
    }
    if (empty) continue;
    float bv = 0;
    if (nact == 2) {
      int a0 = act[0], a1 = act[1];
      int64_t n0 = j->cnt[a0][sidx[a0]], n1 = j->cnt[a1][sidx[a1]];
      const int64_t *o0 = j->off[a0] + sidx[a0] * d->w[a0].size, *o1 = j->off[a1] + sidx[a1] * d->w[a1].size;
      int first = 1;
      for (int64_t t0 = 0; t0 < n0; t0++)
        for (int64_t t1 = 0; t1 < n1; t1++) { /* branch-free: random data mispredicts */
          int64_t off = base + o0[t0] + o1[t1];
          float v = x[off];
          int take = first | !(ge ? bv >= v : bv > v);
          first = 0;
          best = take ? off : best;
          bv = take ? v : bv;
        }
      if (j->disjoint) { /* every tap's result element is this window's alone: written once */
        float iv = *(const float *)j->init, sv = iv + src[si];
        for (int64_t t0 = 0; t0 < n0; t0++)
          for (int64_t t1 = 0; t1 < n1; t1++) {
            int64_t off = base + o0[t0] + o1[t1];
            res[off] = off == best ? sv : iv;
          }
        continue;
      }
    } else {
      int64_t t[CXLA_MAX_RANK] = {0}, cnt[CXLA_MAX_RANK];
      for (int k = 0; k < nact; k++) cnt[k] = j->cnt[act[k]][sidx[act[k]]];
      int any = 1;
      for (int k = 0; k < nact; k++) any &= cnt[k] > 0;
      while (any) {
        int64_t off = base;
        for (int k = 0; k < nact; k++) off += j->off[act[k]][sidx[act[k]] * d->w[act[k]].size + t[k]];
        float v = x[off];
        if (best < 0 || !(ge ? bv >= v : bv > v)) best = off, bv = v;
        if (!next_index(nact, cnt, t)) break;
      }
    }
    if (best >= 0) res[best] += src[si];
  }
}

/* Taps one row may share at most (a wider window goes element by element). */
#define ROW_TAPS 256
/* Elements of a row selected at once: the best value and tap of each sit on the stack. */
#define ROW_CHUNK 16

/* The best of n taps (operand offsets, row-major window order) for m <= ROW_CHUNK elements of
 * a row at xr: value in bv, tap number in bk. Branch-free (random data mispredicts) and
 * inlined, so that a constant m vectorises. */
static inline void row_select(const float *xr, const int64_t *tap, int64_t n, int ge, int64_t m, float *bv,
                              int32_t *bk) {
  for (int64_t c = 0; c < m; c++) bv[c] = xr[tap[0] + c], bk[c] = 0;
  for (int32_t k = 1; k < n; k++) {
    const float *xt = xr + tap[k];
    if (ge) {
      for (int64_t c = 0; c < m; c++) {
        float b = bv[c], v = xt[c];
        int32_t keep = -(int32_t)(b >= v); /* all ones where the selection stays */
        bk[c] = (bk[c] & keep) | (k & ~keep);
        bv[c] = keep ? b : v;
      }
    } else {
      for (int64_t c = 0; c < m; c++) {
        float b = bv[c], v = xt[c];
        int32_t keep = -(int32_t)(b > v); /* all ones where the selection stays */
        bk[c] = (bk[c] & keep) | (k & ~keep);
        bv[c] = keep ? b : v;
      }
    }
  }
}

/* Disjoint windows: each of the n taps' m result elements is written once, init_value plus
 * the source where the tap was selected, init_value elsewhere (the order of the scatters
 * cannot matter: one per element at most). Inlined, so that a constant m vectorises. */
static inline void row_write(float *restrict rr, const int64_t *tap, int64_t n, const int32_t *restrict bk,
                             const float *restrict sr, float iv, int64_t m) {
  float sv[ROW_CHUNK];
  for (int64_t c = 0; c < m; c++) sv[c] = iv + sr[c];
  for (int32_t k = 0; k < n; k++) {
    float *restrict rk = rr + tap[k];
    for (int64_t c = 0; c < m; c++) rk[c] = bk[c] == k ? sv[c] : iv;
  }
}

/* The fast form when the last dim has a 1-wide window, stride 1 and no padding (a pooling's
 * channels, NHWC): the source elements of one row (every channel at one window position) have
 * the same taps, shifted by the channel, so a row lists its taps once and walks each over all
 * its elements, instead of every element finding its own. Each element of a row has a result
 * element of its own, so every result element still takes its scatters in row-major order of
 * the source. */
static void row_slices(sas_job *j, int64_t begin, int64_t end, int64_t *sidx) {
  const sas_desc *d = j->d;
  int last = d->rank - 1, ge = d->fast == 1;
  const float *x = (const float *)j->x, *src = (const float *)j->src;
  float *res = (float *)j->res, bv[ROW_CHUNK];
  int32_t bk[ROW_CHUNK];
  int64_t row = d->sdims[last], tap[ROW_TAPS];
  for (int64_t si = begin * d->slice_s; si < end * d->slice_s; si += row) { /* sidx[last] is 0 here */
    int64_t base = 0, ntap = 1, t[CXLA_MAX_RANK] = {0}, cnt[CXLA_MAX_RANK], n = 0;
    int act[CXLA_MAX_RANK], nact = 0;
    for (int a = 0; a < last; a++) {
      int64_t c = j->cnt[a][sidx[a]];
      if (d->w[a].size > 1) cnt[nact] = c, act[nact++] = a;
      else if (c) base += j->off[a][sidx[a]];
      ntap *= c;
    }
    while (ntap) { /* the taps in row-major order over the window (none: nothing scattered) */
      int64_t off = base;
      for (int k = 0; k < nact; k++) off += j->off[act[k]][sidx[act[k]] * d->w[act[k]].size + t[k]];
      tap[n++] = off;
      if (!next_index(nact, cnt, t)) break;
    }
    for (int64_t c0 = 0; n && c0 < row; c0 += ROW_CHUNK) {
      int64_t m = row - c0 < ROW_CHUNK ? row - c0 : ROW_CHUNK;
      if (m == ROW_CHUNK) row_select(x + c0, tap, n, ge, ROW_CHUNK, bv, bk); /* a constant count: vectorised */
      else row_select(x + c0, tap, n, ge, m, bv, bk);
      float *rr = res + c0;
      const float *sr = src + si + c0;
      for (int64_t c = 0; c < m; c++) rr[tap[bk[c]] + c] += sr[c];
    }
    sidx[last] = row - 1;
    next_index(d->rank, d->sdims, sidx);
  }
}

/* row_slices when the windows tile the operand (a pooling whose stride is its size): every
 * row's windows are whole, so its taps are one pattern (made here once) shifted by the row's
 * first tap, and every result element is written once (row_write), with no init_value pass. */
static void tiled_rows(sas_job *j, int64_t begin, int64_t end, int64_t *sidx) {
  const sas_desc *d = j->d;
  int last = d->rank - 1, ge = d->fast == 1;
  const float *x = (const float *)j->x, *src = (const float *)j->src, iv = *(const float *)j->init;
  float *res = (float *)j->res, bv[ROW_CHUNK];
  int32_t bk[ROW_CHUNK];
  int64_t row = d->sdims[last], tap[ROW_TAPS], n = 1;
  tap[0] = 0;
  for (int a = 0; a < last; a++) /* row-major over the window: the later dims vary fastest */
    if (d->w[a].size > 1) {
      for (int64_t i = n - 1; i >= 0; i--)
        for (int64_t k = d->w[a].size - 1; k >= 0; k--) tap[i * d->w[a].size + k] = tap[i] + k * d->ostride[a];
      n *= d->w[a].size;
    }
  for (int64_t si = begin * d->slice_s; si < end * d->slice_s; si += row) {
    int64_t base = 0;
    for (int a = 0; a < last; a++) base += j->off[a][sidx[a] * d->w[a].size];
    for (int64_t c0 = 0; c0 < row; c0 += ROW_CHUNK) {
      int64_t m = row - c0 < ROW_CHUNK ? row - c0 : ROW_CHUNK;
      const float *xr = x + base + c0, *sr = src + si + c0;
      float *rr = res + base + c0;
      if (m == ROW_CHUNK) { /* a constant count: vectorised */
        row_select(xr, tap, n, ge, ROW_CHUNK, bv, bk);
        row_write(rr, tap, n, bk, sr, iv, ROW_CHUNK);
      } else {
        row_select(xr, tap, n, ge, m, bv, bk);
        row_write(rr, tap, n, bk, sr, iv, m);
      }
    }
    next_index(last, d->sdims, sidx);
  }
}

/* Whether row_slices applies to j (its tap tables made): see there. */
static int rows_apply(const sas_job *j) {
  const sas_desc *d = j->d;
  int last = d->rank - 1;
  if (!d->fast || last < d->indep || d->w[last].size != 1) return 0; /* a slice must hold whole rows */
  int64_t taps = 1;
  for (int a = 0; a < last; a++) { /* checked before each product: no overflow */
    if (d->w[a].size < 1 || d->w[a].size > ROW_TAPS / taps) return 0;
    taps *= d->w[a].size;
  }
  for (int64_t c = 0; c < d->sdims[last]; c++)
    if (j->cnt[last][c] != 1 || j->off[last][c] != c) return 0;
  return 1;
}

/* Whether the windows tile the operand exactly (each dim: stride = size, no padding or
 * dilation, source × size = operand), so that every result element is in one window. */
static int windows_tile(const sas_desc *d) {
  for (int a = 0; a < d->rank; a++) {
    const cx_window_dim *w = &d->w[a];
    if (w->stride != w->size || w->pad_lo || w->pad_hi || w->lhs_dilate != 1 || w->rhs_dilate != 1 ||
        d->sdims[a] * w->size != d->odims[a])
      return 0;
  }
  return 1;
}

/* Kernel ABI: args[0] is the job, the range is independent slices. */
static void sas_slices(void **args, int64_t begin, int64_t end) {
  sas_job *j = args[0];
  const sas_desc *d = j->d;
  int rank = d->rank;
  int64_t coord[CXLA_MAX_RANK][64], count[CXLA_MAX_RANK];
  /* init_value everywhere (unless the windows write every element): one element, then
   * doubling copies */
  char *r0 = j->res + (size_t)(begin * d->slice_o) * d->res;
  size_t total = j->disjoint ? 0 : (size_t)((end - begin) * d->slice_o) * d->res, done = d->res;
  if (total) memcpy(r0, j->init, d->res);
  for (; done < total; done *= 2) memcpy(r0 + done, r0, done < total - done ? done : total - done);
  int64_t sidx[CXLA_MAX_RANK] = {0};
  /* the first source element of slice `begin` */
  int64_t rem = begin;
  for (int a = d->indep - 1; a >= 0; a--) {
    sidx[a] = rem % d->sdims[a];
    rem /= d->sdims[a];
  }
  if (j->rows && j->disjoint) {
    tiled_rows(j, begin, end, sidx);
    return;
  }
  if (j->rows) {
    row_slices(j, begin, end, sidx);
    return;
  }
  if (d->fast) {
    fast_slices(j, begin, end, sidx);
    return;
  }
  void *p[3];
  unsigned char pick;
  for (int64_t si = begin * d->slice_s; si < end * d->slice_s; si++, next_index(rank, d->sdims, sidx)) {
    int empty = 0;
    for (int a = 0; a < rank && !empty; a++) empty = (count[a] = taps(&d->w[a], d->odims[a], sidx[a], coord[a])) == 0;
    if (empty) continue;
    int64_t t[CXLA_MAX_RANK] = {0}, best = -1;
    do {
      int64_t off = 0;
      for (int a = 0; a < rank; a++) off += coord[a][t[a]] * d->ostride[a];
      if (best >= 0) {
        p[0] = &pick, p[1] = (void *)(j->x + (size_t)best * d->oes), p[2] = (void *)(j->x + (size_t)off * d->oes);
        j->sel(p);
      }
      if (best < 0 || !pick) best = off;
    } while (next_index(rank, count, t));
    p[0] = p[1] = j->res + (size_t)best * d->res;
    p[2] = (void *)(j->src + (size_t)si * d->ses);
    j->sct(p);
  }
}

void cx_rt_select_and_scatter(cx_rt *rt, const void *desc, cx_scalar_fn sel, cx_scalar_fn sct, void **bufs,
                              int32_t id) {
  if (rt->status != CXLA_OK) return;
  const sas_desc *d = desc;
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  sas_job job = {.d = d, .sel = sel, .sct = sct, .res = bufs[0], .x = bufs[1], .src = bufs[2], .init = bufs[3]};
  int64_t slices = d->slice_o ? d->oelems / d->slice_o : 0, ntab = 0;
  for (int a = 0; a < d->rank; a++) ntab += d->sdims[a] * (1 + d->w[a].size);
  int64_t *tab = d->fast && slices > 0 ? cx_malloc(sizeof *tab * (size_t)(ntab ? ntab : 1)) : NULL;
  if (d->fast && slices > 0 && !tab) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "select-and-scatter: out of memory");
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
    return;
  }
  for (int a = 0, at = 0; tab && a < d->rank; a++) {
    job.cnt[a] = tab + at;
    job.off[a] = tab + at + d->sdims[a];
    at += (int)(d->sdims[a] * (1 + d->w[a].size));
    for (int64_t c = 0; c < d->sdims[a]; c++) {
      int64_t *o = job.off[a] + c * d->w[a].size;
      job.cnt[a][c] = taps(&d->w[a], d->odims[a], c, o);
      for (int64_t k = 0; k < job.cnt[a][c]; k++) o[k] *= d->ostride[a];
    }
  }
  job.rows = tab && rows_apply(&job);
  int nact = 0;
  for (int a = 0; a < d->rank; a++) nact += d->w[a].size > 1;
  job.disjoint = tab && windows_tile(d) && (job.rows || nact == 2); /* the forms that write that way */
  if (slices > 0) {
    void *args[1] = {&job};
    int64_t grain = 16384 / (d->slice_o ? d->slice_o : 1);
    cx_threadpool_parallel_for(rt->pool, sas_slices, args, slices, grain > 1 ? grain : 1);
  }
  cx_free(tab);
  if (rt->trace) {
    const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "select-and-scatter";
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 2, a.key[0] = "slices", a.key[1] = "source";
    a.val[0] = slices, a.val[1] = d->selems;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
