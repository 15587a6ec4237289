/* batch_norm.c — batch-norm-training, -inference and -grad on the interpreter, evaluated
 * directly (the cpu pipeline expands them into reduces and elementwise ops instead; this is
 * the reference it is checked against). Per feature, in double, each result rounded once:
 *   training:  mean = sum(x) / N, var = sum((x - mean)^2) / N (biased, two passes),
 *              y = (x - mean) * scale / sqrt(var + eps) + offset; result (y, mean, var)
 *   inference: y = (x - mean) * scale / sqrt(var + eps) + offset with the given mean, var
 *   grad:      with r = 1 / sqrt(var + eps) and the given mean, var:
 *              grad_offset = sum(g), grad_scale = sum(g * (x - mean)) * r,
 *              grad_x = scale * r / N * (N g - grad_offset - (x - mean) * sum(g (x - mean)) / (var + eps))
 * N is the element count per feature (every dimension but feature_index): XLA's semantics. */
#include <math.h>
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"

/* The operand seen as [outer, F, inner] around the feature dimension. */
typedef struct bn_view {
  int64_t outer, f, inner, n; /* n = outer * inner elements per feature */
  float eps;
} bn_view;

static void view_of(const cx_instr *in, const cxla_literal *x, bn_view *v) {
  const cx_shape *s = &x->shape;
  int64_t fi = in->a.index;
  v->outer = v->inner = 1;
  for (int d = 0; d < s->rank; d++) {
    if (d < fi) v->outer *= s->dims[d];
    if (d > fi) v->inner *= s->dims[d];
  }
  v->f = s->dims[fi];
  v->n = v->outer * v->inner;
  int32_t bits = in->a.epsilon_bits;
  memcpy(&v->eps, &bits, sizeof v->eps);
}

static double at(const cxla_literal *x, int64_t i) { return cx_load_f64(x->shape.type, x->data, i); }
static int64_t idx(const bn_view *v, int64_t o, int64_t c, int64_t i) { return (o * v->f + c) * v->inner + i; }

static cxla_status check(cx_interp *st, cx_instr *in, cxla_literal *const *ops, int nops) {
  for (int i = 0; i < nops; i++) CX_TRY(cx_hv_check_array(st, in, ops[i], i == 0 || i == 4 ? -1 : 1, "operand"));
  if (in->a.index < 0 || in->a.index >= ops[0]->shape.rank) return cx_hv_bad(st, in, "feature_index out of range");
  for (int i = 1; i < nops && i < 4; i++)
    if (ops[i]->shape.dims[0] != ops[0]->shape.dims[in->a.index]) return cx_hv_bad(st, in, "per-feature operand size");
  return CXLA_OK;
}

/* y = (x - mean) * scale * r + offset for feature c, mean m and r = 1 / sqrt(var + eps). */
static void normalize(const bn_view *v, const cxla_literal *x, cxla_literal *y, int64_t c, double m, double r,
                      double scale, double offset) {
  for (int64_t o = 0; o < v->outer; o++)
    for (int64_t i = 0; i < v->inner; i++) {
      int64_t k = idx(v, o, c, i);
      cx_store_f64(y->shape.type, y->data, k, (at(x, k) - m) * scale * r + offset);
    }
}

CX_INTERP_EVALUATOR(cx_interp_batch_norm_training) {
  CX_TRY(check(st, in, ops, 3));
  bn_view v;
  view_of(in, ops[0], &v);
  cxla_literal *r[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) {
    const cx_shape *s = cx_hv_result_shape(st, in, i, 3);
    if (!s || !(r[i] = cx_hv_literal(st, in, s))) {
      for (int j = 0; j < i; j++) cxla_literal_destroy(r[j]);
      return s ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_VERIFY;
    }
  }
  for (int64_t c = 0; c < v.f; c++) {
    double sum = 0, sq = 0;
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t i = 0; i < v.inner; i++) sum += at(ops[0], idx(&v, o, c, i));
    double mean = sum / (double)v.n;
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t i = 0; i < v.inner; i++) {
        double d = at(ops[0], idx(&v, o, c, i)) - mean;
        sq += d * d;
      }
    double var = sq / (double)v.n;
    normalize(&v, ops[0], r[0], c, mean, 1 / sqrt(var + v.eps), at(ops[1], c), at(ops[2], c));
    cx_store_f64(r[1]->shape.type, r[1]->data, c, mean);
    cx_store_f64(r[2]->shape.type, r[2]->data, c, var);
  }
  return cx_hv_finish(st, in, 3, r, out);
}

CX_INTERP_EVALUATOR(cx_interp_batch_norm_inference) {
  CX_TRY(check(st, in, ops, 5));
  bn_view v;
  view_of(in, ops[0], &v);
  cxla_literal *y = cx_hv_literal(st, in, &in->shape);
  if (!y) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t c = 0; c < v.f; c++)
    normalize(&v, ops[0], y, c, at(ops[3], c), 1 / sqrt(at(ops[4], c) + v.eps), at(ops[1], c), at(ops[2], c));
  *out = y;
  return CXLA_OK;
}

/* operands: x, scale, mean, variance, grad_output */
CX_INTERP_EVALUATOR(cx_interp_batch_norm_grad) {
  CX_TRY(check(st, in, ops, 5));
  if (!cx_shape_same_dims(&ops[4]->shape, &ops[0]->shape)) return cx_hv_bad(st, in, "grad_output's dimensions");
  bn_view v;
  view_of(in, ops[0], &v);
  cxla_literal *r[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) {
    const cx_shape *s = cx_hv_result_shape(st, in, i, 3);
    if (!s || !(r[i] = cx_hv_literal(st, in, s))) {
      for (int j = 0; j < i; j++) cxla_literal_destroy(r[j]);
      return s ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_VERIFY;
    }
  }
  const cxla_literal *x = ops[0], *g = ops[4];
  double n = (double)v.n;
  for (int64_t c = 0; c < v.f; c++) {
    double m = at(ops[2], c), ve = at(ops[3], c) + v.eps, rs = 1 / sqrt(ve), sg = 0, sgx = 0;
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t i = 0; i < v.inner; i++) {
        int64_t k = idx(&v, o, c, i);
        sg += at(g, k);
        sgx += at(g, k) * (at(x, k) - m);
      }
    double f = at(ops[1], c) * rs / n;
    for (int64_t o = 0; o < v.outer; o++)
      for (int64_t i = 0; i < v.inner; i++) {
        int64_t k = idx(&v, o, c, i);
        cx_store_f64(r[0]->shape.type, r[0]->data, k, f * (n * at(g, k) - sg - (at(x, k) - m) * sgx / ve));
      }
    cx_store_f64(r[1]->shape.type, r[1]->data, c, sgx * rs);
    cx_store_f64(r[2]->shape.type, r[2]->data, c, sg);
  }
  return cx_hv_finish(st, in, 3, r, out);
}
