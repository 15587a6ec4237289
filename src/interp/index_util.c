/* index_util.c — checked sizes, window taps, operand checks and conversions for the
 * interpreter's heavy ops. */
#include <stdarg.h>
#include <stdio.h>
#include "interp/index_util.h"

int cx_hv_mul(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return 0;
  if (a != 0 && b > CX_HV_MAX / a) return 0;
  *out = a * b;
  return 1;
}

cxla_status cx_hv_bad(cx_interp *st, cx_instr *in, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cx_error_at(st->m, in->loc, CXLA_ERR_VERIFY, "%s: %s", cx_op_name(in->op), msg);
}

cxla_status cx_hv_oom(cx_interp *st, cx_instr *in) {
  return cx_error_at(st->m, in->loc, CXLA_ERR_OUT_OF_MEMORY, "%s: out of memory",
                     cx_op_name(in->op));
}

cxla_literal *cx_hv_literal(cx_interp *st, cx_instr *in, const cx_shape *s) {
  cxla_literal *l = cx_literal_new(s);
  if (!l) cx_hv_oom(st, in);
  return l;
}

const cx_shape *cx_hv_result_shape(cx_interp *st, cx_instr *in, int i, int n) {
  const cx_shape *s = &in->shape;
  if (n == 1 && s->type != CXLA_TUPLE) return s;
  if (s->type == CXLA_TUPLE && s->ntuple == n && i < n && s->tuple[i].type != CXLA_TUPLE &&
      cx_type_is_array(s->tuple[i].type))
    return &s->tuple[i];
  cx_hv_bad(st, in, "result shape does not match %d operand%s", n, n == 1 ? "" : "s");
  return NULL;
}

cxla_status cx_hv_finish(cx_interp *st, cx_instr *in, int n, cxla_literal **lits,
                         cxla_literal **out) {
  *out = NULL;
  if (in->shape.type != CXLA_TUPLE) {
    for (int i = 1; i < n; i++) cxla_literal_destroy(lits[i]);
    *out = lits[0];
    return CXLA_OK;
  }
  *out = cxla_literal_tuple(st->ctx, n, lits); /* owns lits even when it fails */
  return *out ? CXLA_OK : cx_hv_oom(st, in);
}

cxla_status cx_hv_check_array(cx_interp *st, cx_instr *in, const cxla_literal *lit, int rank,
                              const char *what) {
  if (!lit || !cx_type_is_array(lit->shape.type))
    return cx_hv_bad(st, in, "%s must be an array", what);
  if (rank >= 0 && lit->shape.rank != rank)
    return cx_hv_bad(st, in, "%s has rank %d, expected %d", what, lit->shape.rank, rank);
  return CXLA_OK;
}

cxla_status cx_hv_check_dims(cx_interp *st, cx_instr *in, const cx_ints *dims, int rank,
                             int *seen, const char *what) {
  if (dims->n < 0 || dims->n > rank) return cx_hv_bad(st, in, "too many %s", what);
  for (int i = 0; i < dims->n; i++) {
    int64_t d = dims->v[i];
    if (d < 0 || d >= rank) return cx_hv_bad(st, in, "%s %lld out of range", what, (long long)d);
    if (seen[d]) return cx_hv_bad(st, in, "%s %lld repeated or used twice", what, (long long)d);
    seen[d] = 1;
  }
  return CXLA_OK;
}

cxla_status cx_hv_check_result(cx_interp *st, cx_instr *in, const cx_shape *declared,
                               cxla_type type, int rank, const int64_t *dims) {
  cx_shape want = cx_shape_array(type, rank, dims);
  if (!cx_shape_equal(declared, &want)) {
    char a[256], b[256];
    return cx_hv_bad(st, in, "declared shape %s, operands give %s",
                     cx_shape_str(declared, a, sizeof a), cx_shape_str(&want, b, sizeof b));
  }
  return CXLA_OK;
}

/* Bound on window attributes: keeps every product below in 64 bits without overflow checks
 * in the inner loops. */
#define WIN_MAX ((int64_t)1 << 31)

cxla_status cx_hv_window_dim(cx_interp *st, cx_instr *in, const cx_window_dim *w,
                             cx_window_dim *out) {
  *out = *w;
  if (!out->stride) out->stride = 1;
  if (!out->lhs_dilate) out->lhs_dilate = 1;
  if (!out->rhs_dilate) out->rhs_dilate = 1;
  if (out->size < 1 || out->size > WIN_MAX || out->stride < 1 || out->stride > WIN_MAX ||
      out->lhs_dilate < 1 || out->lhs_dilate > WIN_MAX || out->rhs_dilate < 1 ||
      out->rhs_dilate > WIN_MAX || out->pad_lo < -CX_HV_MAX / 4 || out->pad_lo > CX_HV_MAX / 4 ||
      out->pad_hi < -CX_HV_MAX / 4 || out->pad_hi > CX_HV_MAX / 4)
    return cx_hv_bad(st, in, "window dimension out of range (size=%lld stride=%lld)",
                     (long long)w->size, (long long)w->stride);
  return CXLA_OK;
}

int64_t cx_window_out_size(const cx_window_dim *w, int64_t in_size) {
  int64_t dil_in = 0, dil_win;
  if (in_size > 0) {
    if (!cx_hv_mul(in_size - 1, w->lhs_dilate, &dil_in)) return -1;
    dil_in += 1;
  }
  if (!cx_hv_mul(w->size - 1, w->rhs_dilate, &dil_win)) return -1;
  dil_win += 1;
  int64_t padded = dil_in + w->pad_lo + w->pad_hi; /* each term below 2^62 / 4 in size */
  if (padded > CX_HV_MAX / 2) return -1;
  if (padded < dil_win) return 0;
  return (padded - dil_win) / w->stride + 1;
}

cxla_status cx_hv_window(cx_interp *st, cx_instr *in, int rank, const int64_t *in_dims,
                         int allow_reversal, cx_window_dim *w, int64_t *out_dims) {
  if (in->a.window.rank != rank)
    return cx_hv_bad(st, in, "window has %d dimensions, expected %d", in->a.window.rank, rank);
  for (int d = 0; d < rank; d++) {
    CX_TRY(cx_hv_window_dim(st, in, &in->a.window.d[d], &w[d]));
    if (w[d].reversal && !allow_reversal)
      return cx_interp_unsupported(st, in, "window reversal");
    out_dims[d] = cx_window_out_size(&w[d], in_dims[d]);
    if (out_dims[d] < 0) return cx_hv_bad(st, in, "window dimension %d too large", d);
  }
  return CXLA_OK;
}

int64_t cx_window_taps(const cx_window_dim *w, int64_t in_size, int64_t o, int64_t *in_coord,
                       int64_t *k) {
  int64_t n = 0, base = o * w->stride - w->pad_lo;
  for (int64_t j = 0; j < w->size; j++) {
    int64_t p = base + j * w->rhs_dilate; /* position in the dilated, padded base */
    if (p < 0) continue;                 /* low padding */
    if (w->lhs_dilate > 1) {
      if (p % w->lhs_dilate) continue;   /* a hole between dilated elements */
      p /= w->lhs_dilate;
    }
    if (p >= in_size) continue;          /* high padding */
    in_coord[n] = p;
    k[n] = j;
    n++;
  }
  return n;
}

double cx_hv_load_f64_as(cxla_type src, const void *data, int64_t i, cxla_type to) {
  double v = cx_load_f64(src, data, i);
  return cx_round_to_type(to, v);
}

int64_t cx_hv_load_i64_as(cxla_type src, const void *data, int64_t i, cxla_type to) {
  if (cx_type_is_float(src)) return cx_f64_to_int(to, cx_load_f64(src, data, i));
  return cx_wrap_int(to, cx_load_i64(src, data, i));
}

int64_t cx_hv_load_index(cxla_type t, const void *data, int64_t i) {
  int64_t v = cx_load_i64(t, data, i);
  if (t == CXLA_U64 && v < 0) return INT64_MAX;
  return v;
}
