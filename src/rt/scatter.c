/* scatter.c — scatter on the cpu (XLA's semantics, StableHLO's index definition with
 * batching dims): the results start as the operands; then for every scatter index in
 * row-major order whose whole update window fits in the operand (a window partly outside is
 * skipped, not clamped, as XLA's cpu runtime does), each window element is combined
 * result = combiner(result..., update...) in row-major window order. Updates run in that
 * serial order, which is the only order a non-commutative combiner or colliding indices
 * allow. A combiner that is one add, max or min of its two f32 parameters runs inline instead
 * of through the emitted function. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "rt/sort_scatter.h"
#include "core/trace.h"


static int64_t load_index(int32_t t, const char *p, int64_t i) {
  switch ((cxla_type)t) {
  case CXLA_S8: return ((const int8_t *)p)[i];
  case CXLA_S16: return ((const int16_t *)p)[i];
  case CXLA_S32: return ((const int32_t *)p)[i];
  case CXLA_U8: return ((const uint8_t *)p)[i];
  case CXLA_U16: return ((const uint16_t *)p)[i];
  case CXLA_U32: return ((const uint32_t *)p)[i];
  case CXLA_U64: {
    uint64_t v = ((const uint64_t *)p)[i];
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
  }
  default: return ((const int64_t *)p)[i];
  }
}

static int next_index(int rank, const int64_t *dims, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* XLA's maximum/minimum: NaN if either is (the first one), and -0 < +0 */
static inline float max_f32(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a != b) return a > b ? a : b;
  return signbit(a) ? b : a;
}
static inline float min_f32(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a != b) return a < b ? a : b;
  return signbit(a) ? a : b;
}

/* r[w] += u[w] for a contiguous window row, four lanes at a time (each lane one f32 add, as
 * the scalar loop: the same bits). r and u never overlap (a result and an update operand are
 * distinct buffers), which the compiler cannot know, so it would not vectorise the plain loop.
 * The vector type may sit at any float's address and alias floats. */
typedef float v4f_u __attribute__((vector_size(16), aligned(4), may_alias));

static void add_row_f32(float *r, const float *u, int64_t n) {
  int64_t w = 0;
  for (; w + 8 <= n; w += 8) {
    v4f_u x0 = *(v4f_u *)(r + w) + *(const v4f_u *)(u + w);
    v4f_u x1 = *(v4f_u *)(r + w + 4) + *(const v4f_u *)(u + w + 4);
    *(v4f_u *)(r + w) = x0;
    *(v4f_u *)(r + w + 4) = x1;
  }
  for (; w < n; w++) r[w] += u[w];
}

static void combine(const scatter_desc *d, cx_scalar_fn comb, void **p, char **res, const char **upd, int64_t oo,
                    int64_t uo) {
  float *r = (float *)res[0], u;
  switch ((sc_fast)d->fast) {
  case SC_ADD_F32: memcpy(&u, upd[0] + uo * 4, 4), r[oo] += u; return;
  case SC_MAX_F32: memcpy(&u, upd[0] + uo * 4, 4), r[oo] = max_f32(r[oo], u); return;
  case SC_MIN_F32: memcpy(&u, upd[0] + uo * 4, 4), r[oo] = min_f32(r[oo], u); return;
  case SC_CALL: break;
  }
  for (int i = 0; i < d->n; i++) {
    p[i] = p[d->n + i] = res[i] + (size_t)oo * d->oes[i];
    p[2 * d->n + i] = (void *)(upd[i] + (size_t)uo * d->ues[i]);
  }
  comb(p);
}

void cx_rt_scatter(cx_rt *rt, const void *desc, cx_scalar_fn comb, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const scatter_desc *d = desc;
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  int n = d->n;
  char *res[SC_MAX_OPS];
  const char *upd[SC_MAX_OPS], *ix = bufs[2 * n];
  for (int i = 0; i < n; i++) {
    res[i] = bufs[i];
    if (bufs[i] != bufs[n + i]) memcpy(bufs[i], bufs[n + i], (size_t)d->oelems * d->oes[i]);
    upd[i] = bufs[2 * n + 1 + i];
  }
  void *p[3 * SC_MAX_OPS];
  int64_t nscatter = 1, nwin = 1, applied = 0;
  for (int j = 0; j < d->nsd; j++) nscatter *= d->sdims[j];
  for (int j = 0; j < d->nwd; j++) nwin *= d->wdims[j];
  int64_t sidx[CXLA_MAX_RANK] = {0}, start[CXLA_MAX_RANK], widx[CXLA_MAX_RANK];
  int row_add = d->nwd == 1 && d->upd_wstride[0] == 1 && d->op_wstride[0] == 1 && d->fast == SC_ADD_F32;
  for (int64_t sc = 0; sc < nscatter && nwin > 0; sc++, next_index(d->nsd, d->sdims, sidx)) {
    /* per index, only what it reads is set: zeroing whole CXLA_MAX_RANK arrays cost more than
     * the update itself on a one-element window */
    int64_t ibase = 0, ubase = 0, obase = 0;
    for (int j = 0; j < d->nsd; j++) {
      ibase += sidx[j] * d->idx_stride[j];
      ubase += sidx[j] * d->upd_sstride[j];
    }
    for (int a = 0; a < d->orank; a++) start[a] = 0;
    for (int64_t k = 0; k < d->nidx; k++) start[d->start_map[k]] = load_index(d->itype, ix, ibase + k * d->ivec_stride);
    int skip = 0;
    for (int a = 0; a < d->orank; a++) {
      if (d->batching_from[a] >= 0) start[a] = sidx[d->batching_from[a]];
      skip |= start[a] < 0 || start[a] > d->odims[a] - d->wsize[a];
    }
    if (skip) continue; /* before the offset: an index near +-2^63 would overflow it */
    for (int a = 0; a < d->orank; a++) obase += start[a] * d->ostride[a];
    applied++;
    if (row_add) {
      add_row_f32((float *)res[0] + obase, (const float *)upd[0] + ubase, d->wdims[0]);
      continue;
    }
    for (int j = 0; j < d->nwd; j++) widx[j] = 0;
    do {
      int64_t oo = obase, uo = ubase;
      for (int j = 0; j < d->nwd; j++) {
        oo += widx[j] * d->op_wstride[j];
        uo += widx[j] * d->upd_wstride[j];
      }
      combine(d, comb, p, res, upd, oo, uo);
    } while (next_index(d->nwd, d->wdims, widx));
  }
  if (rt->trace) {
    const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "scatter";
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 2, a.key[0] = "windows", a.key[1] = "window_elems";
    a.val[0] = applied, a.val[1] = nwin;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
