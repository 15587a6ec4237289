/* convolution.c — general XLA convolution: dim_labels, per-spatial-dim window (stride, padding
 * that may be negative, base/lhs dilation, window/rhs dilation, reversal), feature groups and
 * batch groups.
 *
 * For result element (ob, of, os...):
 *   g  = of / (KO / feature_group_count)      feature group; input features g*KI .. g*KI+KI-1
 *   bg = of / (KO / batch_group_count)        batch group; input batch bg*(N/bgc) + ob
 *   sum over window taps (row-major over spatial dims, window order; padding and base-dilation
 *   holes skipped as in reduce-window) and ki < KI of
 *     input[b, g*KI+ki, in_coords] * kernel[of, ki, k_coords]
 * where a tap at window offset j reads kernel coordinate j, or size-1-j when reversed.
 * Batch groups follow StableHLO's definition (split the input batch and the kernel output
 * features into batch_group_count contiguous groups, convolve pairwise, concatenate along the
 * output features); XLA's evaluator agrees whenever batch_group_count equals the input batch,
 * the filter-gradient case. As for dot, operands are converted to the result type first and
 * products summed in double (float results) or 64-bit two's complement, rounded once. */
#include "interp/index_util.h"

typedef struct conv_plan {
  int ns;                        /* spatial dims */
  cx_conv_dims cd;
  cx_window_dim w[CXLA_MAX_RANK];
  int64_t N, C, KI, KO, G, BG;
  int64_t lstr[CXLA_MAX_RANK], kstr[CXLA_MAX_RANK];
  int64_t in_sp[CXLA_MAX_RANK];  /* input spatial sizes */
  int64_t out_dims[CXLA_MAX_RANK];
  /* taps of the current output spatial position, as element offsets into input / kernel */
  int64_t *in_off[CXLA_MAX_RANK], *k_off[CXLA_MAX_RANK];
  int64_t count[CXLA_MAX_RANK], at[CXLA_MAX_RANK];
  int64_t *scratch_c, *scratch_k;
} conv_plan;

static cxla_status check_labels(cx_interp *st, cx_instr *in, int rank, int64_t a, int64_t b,
                                const int64_t *sp, int ns, const char *what) {
  int seen[CXLA_MAX_RANK] = {0};
  int64_t all[CXLA_MAX_RANK + 2];
  all[0] = a;
  all[1] = b;
  for (int i = 0; i < ns; i++) all[2 + i] = sp[i];
  for (int i = 0; i < ns + 2; i++) {
    if (all[i] < 0 || all[i] >= rank || seen[all[i]])
      return cx_hv_bad(st, in, "bad %s dimension numbers", what);
    seen[all[i]] = 1;
  }
  return CXLA_OK;
}

static cxla_status plan_conv(cx_interp *st, cx_instr *in, const cx_shape *ls, const cx_shape *ks,
                             conv_plan *p) {
  if (!in->a.conv) return cx_hv_bad(st, in, "missing dim_labels");
  p->cd = *in->a.conv;
  const cx_conv_dims *cd = &p->cd;
  int rank = ls->rank;
  p->ns = cd->nspatial;
  if (p->ns < 0 || p->ns + 2 != rank || ks->rank != rank || in->shape.rank != rank)
    return cx_hv_bad(st, in, "operands and result must have rank %d", p->ns + 2);
  CX_TRY(check_labels(st, in, rank, cd->in_batch, cd->in_feature, cd->in_spatial, p->ns, "input"));
  CX_TRY(check_labels(st, in, rank, cd->k_in, cd->k_out, cd->k_spatial, p->ns, "kernel"));
  CX_TRY(check_labels(st, in, rank, cd->out_batch, cd->out_feature, cd->out_spatial, p->ns,
                      "output"));
  p->N = ls->dims[cd->in_batch];
  p->C = ls->dims[cd->in_feature];
  p->KI = ks->dims[cd->k_in];
  p->KO = ks->dims[cd->k_out];
  p->G = in->a.feature_group_count;
  p->BG = in->a.batch_group_count;
  if (p->G < 1 || p->BG < 1 || (p->G > 1 && p->BG > 1))
    return cx_hv_bad(st, in, "bad feature_group_count/batch_group_count");
  if (p->C % p->G || p->C / p->G != p->KI || p->KO % p->G || p->N % p->BG || p->KO % p->BG)
    return cx_hv_bad(st, in, "feature/batch sizes do not fit the group counts");
  if (in->a.window.rank != p->ns)
    return cx_hv_bad(st, in, "window has %d dimensions, expected %d", in->a.window.rank, p->ns);
  p->out_dims[cd->out_batch] = p->N / p->BG;
  p->out_dims[cd->out_feature] = p->KO;
  for (int d = 0; d < p->ns; d++) {
    CX_TRY(cx_hv_window_dim(st, in, &in->a.window.d[d], &p->w[d]));
    if (p->w[d].size != ks->dims[cd->k_spatial[d]])
      return cx_hv_bad(st, in, "window size %lld differs from kernel spatial size %lld",
                       (long long)p->w[d].size, (long long)ks->dims[cd->k_spatial[d]]);
    p->in_sp[d] = ls->dims[cd->in_spatial[d]];
    int64_t o = cx_window_out_size(&p->w[d], p->in_sp[d]);
    if (o < 0) return cx_hv_bad(st, in, "window dimension %d too large", d);
    p->out_dims[cd->out_spatial[d]] = o;
  }
  if (!cx_type_is_array(in->shape.type)) return cx_hv_bad(st, in, "result must be an array");
  CX_TRY(cx_hv_check_result(st, in, &in->shape, in->shape.type, rank, p->out_dims));
  cx_shape_strides(ls, p->lstr);
  cx_shape_strides(ks, p->kstr);
  return CXLA_OK;
}

/* Lists the taps of output spatial coordinate o along spatial dim d. */
static void taps(conv_plan *p, int d, int64_t o) {
  const cx_window_dim *w = &p->w[d];
  int64_t n = cx_window_taps(w, p->in_sp[d], o, p->scratch_c, p->scratch_k);
  for (int64_t t = 0; t < n; t++) {
    int64_t kc = w->reversal ? w->size - 1 - p->scratch_k[t] : p->scratch_k[t];
    p->in_off[d][t] = p->scratch_c[t] * p->lstr[p->cd.in_spatial[d]];
    p->k_off[d][t] = kc * p->kstr[p->cd.k_spatial[d]];
  }
  p->count[d] = n;
  p->at[d] = o;
}

/* Input and kernel base offsets of the result element at oidx (spatial taps excluded). */
static void bases(const conv_plan *p, const int64_t *oidx, int64_t *lb, int64_t *kb) {
  const cx_conv_dims *cd = &p->cd;
  int64_t of = oidx[cd->out_feature], ob = oidx[cd->out_batch];
  int64_t g = of / (p->KO / p->G), bg = of / (p->KO / p->BG);
  *lb = (bg * (p->N / p->BG) + ob) * p->lstr[cd->in_batch] + g * p->KI * p->lstr[cd->in_feature];
  *kb = of * p->kstr[cd->k_out];
}

static void run_f64(conv_plan *p, const double *x, const double *k, double *out, int64_t n_out) {
  int64_t oidx[CXLA_MAX_RANK] = {0};
  int64_t lf = p->lstr[p->cd.in_feature], kf = p->kstr[p->cd.k_in];
  for (int64_t o = 0; o < n_out; o++, cx_idx_next(p->ns + 2, p->out_dims, oidx)) {
    int empty = 0;
    for (int d = 0; d < p->ns; d++) {
      if (p->at[d] != oidx[p->cd.out_spatial[d]]) taps(p, d, oidx[p->cd.out_spatial[d]]);
      empty |= p->count[d] == 0;
    }
    double acc = 0;
    if (!empty) {
      int64_t lb, kb, t[CXLA_MAX_RANK] = {0};
      bases(p, oidx, &lb, &kb);
      do {
        int64_t lo = lb, ko = kb;
        for (int d = 0; d < p->ns; d++) { lo += p->in_off[d][t[d]]; ko += p->k_off[d][t[d]]; }
        for (int64_t ki = 0; ki < p->KI; ki++) acc += x[lo + ki * lf] * k[ko + ki * kf];
      } while (cx_idx_next(p->ns, p->count, t));
    }
    out[o] = acc;
  }
}

/* unsigned arithmetic wraps modulo 2^64 without undefined behaviour */
static void run_i64(conv_plan *p, const int64_t *x, const int64_t *k, int64_t *out,
                    int64_t n_out) {
  int64_t oidx[CXLA_MAX_RANK] = {0};
  int64_t lf = p->lstr[p->cd.in_feature], kf = p->kstr[p->cd.k_in];
  for (int64_t o = 0; o < n_out; o++, cx_idx_next(p->ns + 2, p->out_dims, oidx)) {
    int empty = 0;
    for (int d = 0; d < p->ns; d++) {
      if (p->at[d] != oidx[p->cd.out_spatial[d]]) taps(p, d, oidx[p->cd.out_spatial[d]]);
      empty |= p->count[d] == 0;
    }
    uint64_t acc = 0;
    if (!empty) {
      int64_t lb, kb, t[CXLA_MAX_RANK] = {0};
      bases(p, oidx, &lb, &kb);
      do {
        int64_t lo = lb, ko = kb;
        for (int d = 0; d < p->ns; d++) { lo += p->in_off[d][t[d]]; ko += p->k_off[d][t[d]]; }
        for (int64_t ki = 0; ki < p->KI; ki++)
          acc += (uint64_t)x[lo + ki * lf] * (uint64_t)k[ko + ki * kf];
      } while (cx_idx_next(p->ns, p->count, t));
    }
    out[o] = (int64_t)acc;
  }
}

/* Converts a whole literal to the result type, widened to double or int64. */
static void widen(const cxla_literal *x, cxla_type to, int as_float, void *buf) {
  int64_t n = cx_shape_elems(&x->shape);
  for (int64_t i = 0; i < n; i++) {
    if (as_float) ((double *)buf)[i] = cx_hv_load_f64_as(x->shape.type, x->data, i, to);
    else ((int64_t *)buf)[i] = cx_hv_load_i64_as(x->shape.type, x->data, i, to);
  }
}

cxla_status cx_interp_convolution(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                                  cxla_literal **out) {
  *out = NULL;
  if (in->nops != 2) return cx_hv_bad(st, in, "expects 2 operands");
  CX_TRY(cx_hv_check_array(st, in, ops[0], -1, "input"));
  CX_TRY(cx_hv_check_array(st, in, ops[1], -1, "kernel"));
  conv_plan p = {0};
  CX_TRY(plan_conv(st, in, &ops[0]->shape, &ops[1]->shape, &p));
  cxla_type rt = in->shape.type;
  int as_float = cx_type_is_float(rt);
  int64_t nx = cx_shape_elems(&ops[0]->shape), nk = cx_shape_elems(&ops[1]->shape);
  int64_t n_out = cx_shape_elems(&in->shape), ntap = 0, maxw = 1;
  if (n_out < 0 || n_out > CX_HV_MAX / 8) return cx_hv_bad(st, in, "result too large");
  for (int d = 0; d < p.ns; d++) {
    ntap += p.w[d].size;
    if (p.w[d].size > maxw) maxw = p.w[d].size;
  }
  void *x = cx_malloc(8 * (size_t)(nx ? nx : 1)), *k = cx_malloc(8 * (size_t)(nk ? nk : 1));
  void *acc = cx_malloc(8 * (size_t)(n_out ? n_out : 1));
  int64_t *tapbuf = cx_malloc(sizeof(int64_t) * (size_t)(2 * ntap + 2 * maxw));
  cxla_literal *res = x && k && acc && tapbuf ? cx_hv_literal(st, in, &in->shape) : NULL;
  if (!res) {
    cx_free(x); cx_free(k); cx_free(acc); cx_free(tapbuf);
    return cx_hv_oom(st, in);
  }
  int64_t at = 0;
  for (int d = 0; d < p.ns; d++) {
    p.in_off[d] = tapbuf + at;
    p.k_off[d] = tapbuf + at + p.w[d].size;
    at += 2 * p.w[d].size;
    p.at[d] = -1; /* no taps listed yet */
  }
  p.scratch_c = tapbuf + at;
  p.scratch_k = tapbuf + at + maxw;
  widen(ops[0], rt, as_float, x);
  widen(ops[1], rt, as_float, k);
  if (as_float) {
    run_f64(&p, x, k, acc, n_out);
    for (int64_t i = 0; i < n_out; i++) cx_store_f64(rt, res->data, i, ((double *)acc)[i]);
  } else {
    run_i64(&p, x, k, acc, n_out);
    for (int64_t i = 0; i < n_out; i++) cx_store_i64(rt, res->data, i, ((int64_t *)acc)[i]);
  }
  cx_free(x); cx_free(k); cx_free(acc); cx_free(tapbuf);
  *out = res;
  return CXLA_OK;
}
