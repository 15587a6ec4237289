/* ragged_dot.c — ragged-dot (ir/ragged_dot.h) with plain loops: for each result element, every
 * contracting index tuple, and every group whose range holds the ragged index, one product
 * added. A group's range is [start, start + size) with start the sum of the sizes before it, so
 * an index past the last group belongs to none (its rows are zero, or it is left out of every
 * sum). Values are converted to the result type first and summed as dot.c sums them: double
 * (two for complex), or 64-bit two's complement for integers, rounded or wrapped once. */
#include "interp/index_util.h"
#include "ir/ragged_dot.h"

typedef struct rd_walk {
  const cx_shape *ls, *rs, *gs;
  const cx_dot_dims *d;
  cx_ragged_dims rd;
  int64_t lst[CXLA_MAX_RANK], rst[CXLA_MAX_RANK], gst[CXLA_MAX_RANK];
  const void *gdata;
} rd_walk;

static void strides(const cx_shape *s, int64_t *st) {
  int64_t k = 1;
  for (int i = s->rank - 1; i >= 0; i--) st[i] = k, k *= s->dims[i];
}

/* a + b, held at the int64 range (sizes are XLA's to validate, not ours to overflow on) */
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Whether lhs index li (ragged coordinate r) lies in group g of the group_sizes row that the
 * prefix coordinates of li pick. */
static int in_group(const rd_walk *w, const int64_t *li, int64_t g) {
  int64_t row = 0, ng = w->gs->dims[w->gs->rank - 1];
  if (w->gs->rank > 1)
    for (int i = 0; i < w->rd.nprefix; i++) row += li[w->rd.prefix[i]] * w->gst[i];
  int64_t start = 0, end, r = li[w->rd.lhs_ragged];
  for (int64_t j = 0; j < g && j < ng; j++) start = sat_add(start, cx_hv_load_i64_as(w->gs->type, w->gdata, row + j, CXLA_S64));
  end = sat_add(start, cx_hv_load_i64_as(w->gs->type, w->gdata, row + g, CXLA_S64));
  return start <= r && r < end;
}

typedef struct rd_acc {
  double re, im;
  uint64_t i; /* wraps modulo 2^64 without undefined behaviour */
} rd_acc;

/* acc += lhs[li] * rhs[ri], both converted to the result type rt first. */
static void add(const rd_walk *w, cxla_literal *const *ops, const int64_t *li, const int64_t *ri, cxla_type rt,
                rd_acc *acc) {
  int64_t la = 0, ra = 0;
  for (int i = 0; i < w->ls->rank; i++) la += li[i] * w->lst[i];
  for (int i = 0; i < w->rs->rank; i++) ra += ri[i] * w->rst[i];
  if (cx_type_is_complex(rt)) {
    cxla_type part = cx_type_part(rt);
    double ar, ai, br, bi;
    cx_load_complex(w->ls->type, ops[0]->data, la, &ar, &ai);
    cx_load_complex(w->rs->type, ops[1]->data, ra, &br, &bi);
    ar = cx_round_to_type(part, ar), ai = cx_round_to_type(part, ai);
    br = cx_round_to_type(part, br), bi = cx_round_to_type(part, bi);
    acc->re += ar * br - ai * bi;
    acc->im += ar * bi + ai * br;
  } else if (cx_type_is_float(rt)) {
    acc->re += cx_hv_load_f64_as(w->ls->type, ops[0]->data, la, rt) * cx_hv_load_f64_as(w->rs->type, ops[1]->data, ra, rt);
  } else {
    acc->i += (uint64_t)cx_hv_load_i64_as(w->ls->type, ops[0]->data, la, rt) *
              (uint64_t)cx_hv_load_i64_as(w->rs->type, ops[1]->data, ra, rt);
  }
}

cxla_status cx_interp_ragged_dot(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  rd_walk w = {.ls = &ops[0]->shape, .rs = &ops[1]->shape, .gs = &ops[2]->shape, .d = &in->a.dot,
               .gdata = ops[2]->data};
  if (in->nops != 3 || !cx_ragged_dims_of(in, w.ls->rank, &w.rd) || w.gs->rank < 1 || !cx_type_is_array(in->shape.type))
    return cx_hv_bad(st, in, "expects a verified ragged-dot (lhs, rhs, group_sizes)");
  const cx_dot_dims *d = w.d;
  strides(w.ls, w.lst);
  strides(w.rs, w.rst);
  strides(w.gs, w.gst);
  int lrole[CXLA_MAX_RANK] = {0}, rrole[CXLA_MAX_RANK] = {0}; /* 1 batch, 2 contracting, 3 group */
  for (int i = 0; i < d->lhs_batch.n; i++) lrole[d->lhs_batch.v[i]] = 1, rrole[d->rhs_batch.v[i]] = 1;
  for (int i = 0; i < d->lhs_contract.n; i++) lrole[d->lhs_contract.v[i]] = 2, rrole[d->rhs_contract.v[i]] = 2;
  if (w.rd.rhs_group >= 0) rrole[w.rd.rhs_group] = 3;
  int64_t K = 1, ng = w.gs->dims[w.gs->rank - 1];
  for (int i = 0; i < d->lhs_contract.n; i++) K *= w.ls->dims[d->lhs_contract.v[i]];
  cxla_literal *res = cx_hv_literal(st, in, &in->shape);
  if (!res) return cx_hv_oom(st, in);
  cxla_type rt = in->shape.type;
  int64_t n = cx_shape_elems(&in->shape), oi[CXLA_MAX_RANK] = {0};
  for (int64_t e = 0; e < n; e++) {
    /* the result index: [group,] batch, lhs free, rhs free (the group dimension left out) */
    int64_t li[CXLA_MAX_RANK] = {0}, ri[CXLA_MAX_RANK] = {0}, k = 0, g0 = 0;
    if (w.rd.mode == CX_RAGGED_CONTRACTING) g0 = oi[k++];
    for (int i = 0; i < d->lhs_batch.n; i++, k++) li[d->lhs_batch.v[i]] = oi[k], ri[d->rhs_batch.v[i]] = oi[k];
    for (int i = 0; i < w.ls->rank; i++)
      if (!lrole[i]) li[i] = oi[k++];
    for (int i = 0; i < w.rs->rank; i++)
      if (!rrole[i]) ri[i] = oi[k++];
    rd_acc acc = {0, 0, 0};
    for (int64_t c = 0; c < K; c++) {
      int64_t rem = c; /* the contracting tuple, the first listed pair outermost */
      for (int i = d->lhs_contract.n - 1; i >= 0; i--) {
        int64_t sz = w.ls->dims[d->lhs_contract.v[i]];
        li[d->lhs_contract.v[i]] = ri[d->rhs_contract.v[i]] = rem % sz;
        rem /= sz;
      }
      if (w.rd.mode == CX_RAGGED_BATCH) add(&w, ops, li, ri, rt, &acc);
      else if (w.rd.mode == CX_RAGGED_CONTRACTING) {
        if (in_group(&w, li, g0)) add(&w, ops, li, ri, rt, &acc);
      } else
        for (int64_t g = 0; g < ng; g++)
          if (in_group(&w, li, g)) ri[w.rd.rhs_group] = g, add(&w, ops, li, ri, rt, &acc);
    }
    if (cx_type_is_complex(rt)) cx_store_complex(rt, res->data, e, acc.re, acc.im);
    else if (cx_type_is_float(rt)) cx_store_f64(rt, res->data, e, acc.re);
    else cx_store_i64(rt, res->data, e, (int64_t)acc.i);
    for (int i = in->shape.rank - 1; i >= 0; i--) {
      if (++oi[i] < in->shape.dims[i]) break;
      oi[i] = 0;
    }
  }
  *out = res;
  return CXLA_OK;
}
