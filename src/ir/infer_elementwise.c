/* infer_elementwise.c — shape rules of elementwise ops: operands of identical dims and element
 * type (HLO has no implicit broadcasting), plus per-op element-type classes as XLA has them. */
#include "ir/infer.h"

cxla_status cx_vcheck_type(cx_infer *ic, int i) {
  cx_op op = ic->in->op;
  cxla_type t = cx_vop(ic, i)->type;
  if (cx_op_valid_for_type(op, t)) return CXLA_OK;
  return cx_vfail(ic, "operand %d has element type %s but %s needs %s", i, cx_vtype(t), cx_op_name(op),
                  cx_op_types_accepted(op));
}

static cxla_status convert_operand(cx_infer *ic) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  return cx_vdeclared_array(ic);
}

cxla_status cx_infer_convert(cx_infer *ic, cx_shape *out) {
  CX_TRY(convert_operand(ic));
  const cx_shape *x = cx_vop(ic, 0);
  /* XLA has no complex -> real convert (InferConvertShape): real() and imag() say which part */
  if (cx_type_is_complex(x->type) && !cx_type_is_complex(ic->in->shape.type))
    return cx_vfail(ic, "conversion from complex to real type %s => %s is not implemented (as in XLA: take "
                    "real() or imag())", cx_vshape(ic, x), cx_vtype(ic->in->shape.type));
  cx_vset_array(out, ic->in->shape.type, x->rank, x->dims);
  return CXLA_OK;
}

/* Same total bits; a narrower result type adds a minor dimension of the width ratio, a wider
 * one consumes it. */
cxla_status cx_infer_bitcast_convert(cx_infer *ic, cx_shape *out) {
  CX_TRY(convert_operand(ic));
  const cx_shape *x = cx_vop(ic, 0);
  cxla_type to = ic->in->shape.type;
  if (x->type == CXLA_PRED || to == CXLA_PRED)
    return cx_vfail(ic, "bitcast-convert does not support pred (from %s to %s)", cx_vtype(x->type), cx_vtype(to));
  if (cx_type_is_complex(x->type) != cx_type_is_complex(to))
    return cx_vfail(ic, "bitcast-convert between complex and real type %s => %s (XLA refuses it too)",
                    cx_vshape(ic, x), cx_vtype(to));
  int fb = cx_type_bits(x->type), tb = cx_type_bits(to);
  if (fb == tb) {
    cx_vset_array(out, to, x->rank, x->dims);
  } else if (fb > tb) {
    if (x->rank >= CXLA_MAX_RANK)
      return cx_vfail(ic, "bitcast-convert from %s to %s would need rank %d (at most %d)", cx_vshape(ic, x),
                      cx_vtype(to), x->rank + 1, CXLA_MAX_RANK);
    cx_vset_array(out, to, x->rank, x->dims);
    out->dims[out->rank++] = fb / tb;
  } else {
    if (x->rank < 1 || x->dims[x->rank - 1] != tb / fb)
      return cx_vfail(ic, "bitcast-convert from %s to %s needs a last dimension of %d (the width ratio)",
                      cx_vshape(ic, x), cx_vtype(to), tb / fb);
    cx_vset_array(out, to, x->rank - 1, x->dims);
  }
  return CXLA_OK;
}

/* stochastic-convert(operand, random): XLA's InferStochasticConvertShape (a float operand, an
 * unsigned random array of the operand's bit width and dims, the result the operand's dims in
 * the declared type). XLA's verifier leaves the result type open, but its evaluator and its
 * decomposer only convert to signed integers and fail on any other when compiling: refused
 * here, where the message can say so. */
cxla_status cx_infer_stochastic_convert(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vneed_array(ic, 1, "random"));
  CX_TRY(cx_vcheck_type(ic, 0));
  CX_TRY(cx_vdeclared_array(ic));
  const cx_shape *x = cx_vop(ic, 0), *r = cx_vop(ic, 1);
  cxla_type to = ic->in->shape.type;
  if (cx_type_kind(r->type) != CX_KIND_UINT)
    return cx_vfail(ic, "random numbers must be unsigned integers, got %s", cx_vshape(ic, r));
  if (cx_type_bits(r->type) != cx_type_bits(x->type))
    return cx_vfail(ic, "random numbers %s must have the operand's bit width (%d), got %d bits", cx_vshape(ic, r),
                    cx_type_bits(x->type), cx_type_bits(r->type));
  if (!cx_shape_same_dims(x, r))
    return cx_vfail(ic, "operand %s and random numbers %s must have the same dimensions", cx_vshape(ic, x),
                    cx_vshape(ic, r));
  if (cx_type_kind(to) != CX_KIND_SINT)
    return cx_vfail(ic, "converts to signed integer types only (as XLA does), not to %s", cx_vtype(to));
  cx_vset_array(out, to, x->rank, x->dims);
  return CXLA_OK;
}

cxla_status cx_infer_copy(cx_infer *ic, cx_shape *out) { /* copies anything, tuples included */
  *out = ic->in->ops[0]->shape;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_unary(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vcheck_type(ic, 0));
  *out = ic->in->ops[0]->shape;
  cx_vplain(out);
  return CXLA_OK;
}

/* abs, real and imag: a complex operand gives its component type (f32 of c64, f64 of c128),
 * any other the operand's own type (real(x) = x, imag(x) = 0 for a float x). */
cxla_status cx_infer_part(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_infer_unary(ic, out));
  out->type = cx_type_part(out->type);
  return CXLA_OK;
}

/* complex(real, imag): two f32 or two f64 arrays (XLA has no c32 for f16/bf16) make c64 or
 * c128. */
cxla_status cx_infer_complex(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_infer_binary(ic, out));
  cxla_type c = cx_type_complex_of(out->type);
  if (c == CXLA_INVALID)
    return cx_vfail(ic, "complex needs f32 or f64 parts, got %s (XLA has no complex type of them)",
                    cx_vshape(ic, cx_vop(ic, 0)));
  out->type = c;
  return CXLA_OK;
}

cxla_status cx_infer_is_finite(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_infer_unary(ic, out));
  out->type = CXLA_PRED;
  return CXLA_OK;
}

cxla_status cx_infer_reduce_precision(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_infer_unary(ic, out));
  if (in->a.exponent_bits < 1 || in->a.mantissa_bits < 0)
    return cx_vfail(ic, "needs exponent_bits >= 1 and mantissa_bits >= 0, got exponent_bits=%d mantissa_bits=%d",
                    in->a.exponent_bits, in->a.mantissa_bits);
  return CXLA_OK;
}

static cxla_status check_compare(cx_infer *ic) {
  cx_instr *in = ic->in;
  cxla_type t = cx_vop(ic, 0)->type;
  if ((unsigned)in->a.dir > CXLA_GE) return cx_vfail(ic, "invalid comparison direction %d", (int)in->a.dir);
  cx_kind k = cx_type_kind(t);
  /* complex numbers have no order: XLA's emitters compare them for EQ and NE only */
  if (k == CX_KIND_COMPLEX && in->a.dir != CXLA_EQ && in->a.dir != CXLA_NE)
    return cx_vfail(ic, "complex operands %s compare for EQ or NE only", cx_vtype(t));
  switch (in->a.cmp_type) {
  case CX_CMP_DEFAULT: return CXLA_OK;
  case CX_CMP_FLOAT:
    if (k == CX_KIND_FLOAT || k == CX_KIND_COMPLEX) return CXLA_OK;
    break;
  case CX_CMP_TOTALORDER:
    if (k == CX_KIND_FLOAT) return CXLA_OK;
    break;
  case CX_CMP_SIGNED:
    if (k == CX_KIND_SINT) return CXLA_OK;
    break;
  case CX_CMP_UNSIGNED:
    if (k == CX_KIND_UINT || k == CX_KIND_PRED) return CXLA_OK;
    break;
  default: return cx_vfail(ic, "invalid comparison type %d", (int)in->a.cmp_type);
  }
  static const char *names[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  const char *want = k == CX_KIND_FLOAT ? "FLOAT or TOTALORDER" : k == CX_KIND_COMPLEX ? "FLOAT"
                     : k == CX_KIND_SINT ? "SIGNED" : "UNSIGNED";
  return cx_vfail(ic, "type=%s does not fit %s operands (expected %s)", names[in->a.cmp_type], cx_vtype(t), want);
}

static cxla_status same_operands(cx_infer *ic) {
  CX_TRY(cx_vneed_array(ic, 0, "lhs"));
  CX_TRY(cx_vneed_array(ic, 1, "rhs"));
  const cx_shape *a = cx_vop(ic, 0), *b = cx_vop(ic, 1);
  if (!cx_shape_same_dims(a, b))
    return cx_vfail(ic, "operands must have the same dimensions (broadcast explicitly), got %s and %s",
                    cx_vshape(ic, a), cx_vshape(ic, b));
  if (a->type != b->type)
    return cx_vfail(ic, "operands must have the same element type, got %s and %s", cx_vshape(ic, a),
                    cx_vshape(ic, b));
  return cx_vcheck_type(ic, 0);
}

cxla_status cx_infer_binary(cx_infer *ic, cx_shape *out) {
  CX_TRY(same_operands(ic));
  const cx_shape *a = cx_vop(ic, 0);
  cx_vset_array(out, a->type, a->rank, a->dims);
  return CXLA_OK;
}

cxla_status cx_infer_compare(cx_infer *ic, cx_shape *out) {
  CX_TRY(same_operands(ic));
  CX_TRY(check_compare(ic));
  const cx_shape *a = cx_vop(ic, 0);
  cx_vset_array(out, CXLA_PRED, a->rank, a->dims);
  return CXLA_OK;
}

cxla_status cx_infer_select(cx_infer *ic, cx_shape *out) {
  const cx_shape *p = cx_vop(ic, 0), *t = cx_vop(ic, 1), *f = cx_vop(ic, 2);
  if (!cx_varray(p) || p->type != CXLA_PRED)
    return cx_vfail(ic, "predicate (operand 0) must be a pred array, got %s", cx_vshape(ic, p));
  if (!cx_shape_equal(t, f))
    return cx_vfail(ic, "on_true and on_false must have the same shape, got %s and %s", cx_vshape(ic, t),
                    cx_vshape(ic, f));
  if (t->type == CXLA_TOKEN) return cx_vfail(ic, "cannot select between tokens");
  /* A scalar predicate picks a whole value (the older form, tuples included); otherwise it
   * picks per element and must match the dims. */
  if (p->rank != 0) {
    if (!cx_varray(t))
      return cx_vfail(ic, "selecting between tuples needs a scalar predicate, got %s", cx_vshape(ic, p));
    if (!cx_shape_same_dims(p, t))
      return cx_vfail(ic, "predicate %s must have the dimensions of on_true %s (or be a scalar)", cx_vshape(ic, p),
                      cx_vshape(ic, t));
  }
  *out = *t;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_clamp(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "min"));
  CX_TRY(cx_vneed_array(ic, 1, "operand"));
  CX_TRY(cx_vneed_array(ic, 2, "max"));
  const cx_shape *x = cx_vop(ic, 1);
  for (int i = 0; i < 3; i += 2) {
    const cx_shape *b = cx_vop(ic, i);
    if (b->type != x->type)
      return cx_vfail(ic, "%s %s must have the element type of the operand %s", i ? "max" : "min", cx_vshape(ic, b),
                      cx_vshape(ic, x));
    if (b->rank != 0 && !cx_shape_same_dims(b, x))
      return cx_vfail(ic, "%s %s must be a scalar or have the dimensions of the operand %s", i ? "max" : "min",
                      cx_vshape(ic, b), cx_vshape(ic, x));
  }
  *out = *x;
  cx_vplain(out);
  return CXLA_OK;
}
