/* topk.c — topk(x), k=K, largest=...: per row of the last dimension, the K elements that come
 * first in XLA's TopK decomposition (ir/infer_reduce.c says so): a stable sort of (x, iota)
 * by x with a TOTALORDER comparison, greater-than for largest=true (NaN > inf > ... > +0 > -0
 * > ... > -inf > -NaN), less-than for false, then the first K. The reference sorts every row
 * completely by (key, index): an order with no ties, so any sort gives the stable answer. */
#include <stdlib.h>
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"

typedef struct {
  int64_t key, at;
} keyed;

/* An int64 whose signed order is TOTALORDER on the stored element (floats by their bits:
 * sign-magnitude made two's complement), or the integer order. */
static int64_t order_key(cxla_type t, const void *data, int64_t i) {
  switch (cx_type_kind(t)) {
  case CX_KIND_FLOAT: {
    int64_t v;
    if (t == CXLA_F64) {
      memcpy(&v, (const char *)data + 8 * i, 8);
      return v < 0 ? v ^ INT64_MAX : v;
    }
    if (t == CXLA_F32) {
      int32_t w;
      memcpy(&w, (const char *)data + 4 * i, 4);
      return w < 0 ? w ^ INT32_MAX : w;
    }
    if (cxla_type_size(t) == 1) { /* f8/f4: the key of the value (widening keeps the order) */
      double d = cx_load_f64(t, data, i);
      memcpy(&v, &d, 8);
      return v < 0 ? v ^ INT64_MAX : v;
    }
    int16_t h;
    memcpy(&h, (const char *)data + 2 * i, 2);
    return h < 0 ? h ^ INT16_MAX : h;
  }
  case CX_KIND_UINT: {
    int64_t v = cx_load_i64(t, data, i); /* u64 as its bits: flip the top bit to order them */
    return t == CXLA_U64 ? v ^ INT64_MIN : v;
  }
  default: return cx_load_i64(t, data, i); /* signed integers and pred */
  }
}

static int first_largest(const void *pa, const void *pb) {
  const keyed *a = pa, *b = pb;
  if (a->key != b->key) return a->key > b->key ? -1 : 1;
  return (a->at > b->at) - (a->at < b->at);
}

static int first_smallest(const void *pa, const void *pb) {
  const keyed *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->at > b->at) - (a->at < b->at);
}

static cxla_status topk(cx_interp *st, cx_instr *in, cxla_literal *const *ops, int64_t k, int largest,
                        cxla_literal **out) {
  *out = NULL;
  CX_TRY(cx_hv_check_array(st, in, ops[0], -1, "operand"));
  const cx_shape *xs = &ops[0]->shape;
  if (xs->rank < 1 || k < 0 || k > xs->dims[xs->rank - 1]) return cx_hv_bad(st, in, "k out of range");
  int64_t n = xs->dims[xs->rank - 1], rows = n ? cx_shape_elems(xs) / n : 0;
  cx_shape vs = *xs;
  vs.dims[vs.rank - 1] = k;
  vs.has_layout = 0;
  for (int i = 0; i < 2; i++) {
    const cx_shape *rs = cx_hv_result_shape(st, in, i, 2);
    if (!rs) return CXLA_ERR_VERIFY;
    CX_TRY(cx_hv_check_result(st, in, rs, i ? CXLA_S32 : xs->type, vs.rank, vs.dims));
  }
  cxla_literal *res[2] = {cx_hv_literal(st, in, &vs), NULL};
  vs.type = CXLA_S32;
  res[1] = res[0] ? cx_hv_literal(st, in, &vs) : NULL;
  keyed *row = cx_malloc(sizeof *row * (size_t)(n ? n : 1));
  if (!res[1] || !row) {
    cx_free(row);
    cxla_literal_destroy(res[0]);
    cxla_literal_destroy(res[1]);
    return res[1] ? cx_hv_oom(st, in) : CXLA_ERR_OUT_OF_MEMORY;
  }
  size_t es = cxla_type_size(xs->type);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < n; j++) row[j] = (keyed){order_key(xs->type, ops[0]->data, r * n + j), j};
    qsort(row, (size_t)n, sizeof *row, largest ? first_largest : first_smallest);
    for (int64_t j = 0; j < k; j++) {
      const char *from = (const char *)ops[0]->data + (size_t)(r * n + row[j].at) * es;
      memcpy((char *)res[0]->data + (size_t)(r * k + j) * es, from, es);
      ((int32_t *)res[1]->data)[r * k + j] = (int32_t)row[j].at;
    }
  }
  cx_free(row);
  return cx_hv_finish(st, in, 2, res, out);
}

CX_INTERP_EVALUATOR(cx_interp_topk) { return topk(st, in, ops, in->a.index, in->a.largest, out); }

/* XLA:CPU's "TopK" custom-call: the largest, k from the result's values. */
CX_INTERP_EVALUATOR(cx_interp_topk_custom_call) {
  const cx_shape *v = in->shape.type == CXLA_TUPLE && in->shape.ntuple == 2 ? &in->shape.tuple[0] : NULL;
  if (!v || v->rank < 1) return cx_hv_bad(st, in, "TopK returns (values, indices)");
  return topk(st, in, ops, v->dims[v->rank - 1], 1, out);
}
