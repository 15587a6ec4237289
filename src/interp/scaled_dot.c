/* scaled_dot.c — scaled-dot and the __op$block_scaled_dot custom-call (ir/scaled_dot.h). Each
 * operand is first scaled into a buffer of its own shape, deq(x)[i] = T(x[i]) * T(s[i / block])
 * rounded to deq (or wrapped to T for integers); the interpreter's dot then sums the products
 * of every result element (double, or 64-bit two's complement for integers), which is rounded
 * or wrapped once to T; a global scale then multiplies it, rounded to T again. */
#include "interp/index_util.h"
#include "interp/internal.h"
#include "ir/scaled_dot.h"

static void strides(const cx_shape *s, int64_t *st) {
  int64_t k = 1;
  for (int i = s->rank - 1; i >= 0; i--) st[i] = k, k *= s->dims[i];
}

/* deq(x) into buf: doubles (float T) or int64 (integer T), in x's row-major order. */
static void scale_operand(const cx_sdot *d, int side, const cxla_literal *x, const cxla_literal *s, void *buf) {
  const cx_sdot_side *sd = &d->side[side];
  const cx_shape *xs = &x->shape;
  int as_float = cx_type_is_float(d->type);
  int64_t sst[CXLA_MAX_RANK] = {0}, idx[CXLA_MAX_RANK] = {0}, n = cx_shape_elems(xs);
  if (sd->scaled) strides(&s->shape, sst);
  double *fb = buf;
  int64_t *ib = buf;
  for (int64_t i = 0; i < n; i++) {
    int64_t so = 0;
    for (int k = 0; sd->scaled && k < xs->rank; k++) so += idx[k] / sd->block[k] * sst[k];
    if (as_float) {
      double v = cx_hv_load_f64_as(xs->type, x->data, i, d->type);
      if (sd->scaled) v = cx_round_to_type(d->deq, v * cx_hv_load_f64_as(s->shape.type, s->data, so, d->type));
      fb[i] = v;
    } else {
      int64_t v = cx_hv_load_i64_as(xs->type, x->data, i, d->type);
      if (sd->scaled)
        v = cx_wrap_int(d->type, (int64_t)((uint64_t)v * (uint64_t)cx_hv_load_i64_as(s->shape.type, s->data, so, d->type)));
      ib[i] = v;
    }
    cx_idx_next(xs->rank, xs->dims, idx);
  }
}

/* The scaled operands as f64 (float T) or s64 (integer T) literals, summed by the interpreter's
 * own dot (dot.c: double or 64-bit two's complement, both exact for these values' conversion),
 * as an instruction like `in` that is a dot of that wide type; then rounded or wrapped to T. */
static cxla_status eval(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  cx_sdot d;
  if (!cx_sdot_of(in, &d)) return cx_hv_bad(st, in, "expects a verified scaled-dot (ir/scaled_dot.h)");
  int as_float = cx_type_is_float(d.type);
  cxla_type wide = as_float ? CXLA_F64 : CXLA_S64;
  cxla_literal *deq[2] = {NULL, NULL}, *sum = NULL, *res = NULL;
  for (int i = 0; i < 2; i++) {
    cx_shape s = cx_shape_array(wide, ops[i]->shape.rank, ops[i]->shape.dims);
    if (!(deq[i] = cx_literal_new(&s))) goto oom;
    scale_operand(&d, i, ops[i], d.side[i].scaled ? ops[i + 2] : NULL, deq[i]->data);
  }
  cx_instr dot = *in;
  dot.op = CX_OP_DOT, dot.nops = 2, dot.a.dot = d.dims, dot.shape.type = wide;
  cxla_status rc = cx_interp_dot(st, &dot, deq, &sum);
  if (rc != CXLA_OK) {
    cxla_literal_destroy(deq[0]), cxla_literal_destroy(deq[1]);
    return rc;
  }
  if (!(res = cx_hv_literal(st, in, &in->shape))) goto oom;
  double g = 1;
  int64_t gi = 1;
  if (d.global >= 0 && as_float) g = cx_hv_load_f64_as(ops[d.global]->shape.type, ops[d.global]->data, 0, d.type);
  if (d.global >= 0 && !as_float) gi = cx_hv_load_i64_as(ops[d.global]->shape.type, ops[d.global]->data, 0, d.type);
  int64_t n = cx_shape_elems(&in->shape);
  for (int64_t e = 0; e < n; e++) {
    if (as_float) {
      double v = cx_round_to_type(d.type, cx_round_to_type(d.deq, ((const double *)sum->data)[e]));
      cx_store_f64(d.type, res->data, e, d.global >= 0 ? v * g : v);
    } else {
      cx_store_i64(d.type, res->data, e, (int64_t)((uint64_t)((const int64_t *)sum->data)[e] * (uint64_t)gi));
    }
  }
  cxla_literal_destroy(deq[0]), cxla_literal_destroy(deq[1]), cxla_literal_destroy(sum);
  *out = res;
  return CXLA_OK;
oom:
  cxla_literal_destroy(deq[0]), cxla_literal_destroy(deq[1]), cxla_literal_destroy(sum);
  return cx_hv_oom(st, in);
}

CX_INTERP_EVALUATOR(cx_interp_scaled_dot) { return eval(st, in, ops, out); }
CX_INTERP_EVALUATOR(cx_interp_block_scaled_dot) { return eval(st, in, ops, out); }
