/* simplify.c — algebraic simplification: the driver, and the rules for elementwise ops and
 * tuples. Every rule preserves exact semantics, so several identities that hold in real
 * arithmetic are applied only where they also hold in floating point:
 *   x + 0 -> x only for integers (-0 + +0 is +0); for floats only x + (-0) -> x, which is exact
 *   for every x, -0 and NaN included. x - (+0) -> x likewise.
 *   x * 0 -> 0 only for integers (NaN * 0 is NaN, -1 * 0 is -0).
 *   compare(x, x) folds only for integers, pred and TOTALORDER (NaN != NaN otherwise).
 * Shape ops live in simplify_shape.c, reduce and map in simplify_reduce.c. */
#include <math.h>
#include "passes/pass.h"
#include "passes/simplify.h"

static int is_intlike(cxla_type t) { return cx_type_is_int(t) || t == CXLA_PRED; }

/* 1 for the "one" of a numeric type (multiplicative identity). */
static int is_one(const cx_instr *x) {
  return cx_type_is_int(x->shape.type) ? cx_simp_is_int(x, 1) : cx_simp_is_float(x, 1.0);
}

static cxla_status splat_int(cx_instr *in, int64_t k, cx_instr **out) {
  cx_scalar v;
  v.i = in->shape.type == CXLA_PRED ? (k & 1) : cx_wrap_int(in->shape.type, k);
  return (*out = cx_simp_splat(in, &in->shape, v)) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* x / 2^k -> x * 2^-k: both are the one real number x * 2^-k rounded once, so they agree
 * bit for bit (NaN, infinities, -0 and subnormal results included) as long as 2^-k itself is
 * exact in the type; a multiply is much cheaper than a divide. */
static cxla_status divide_by_power_of_two(cx_instr *in, cx_instr **out) {
  cx_instr *b = in->ops[1];
  cxla_type t = in->shape.type;
  cx_scalar v;
  int e;
  if (!cx_simp_uniform(b, &v) || !isfinite(v.f) || v.f == 0 || fabs(frexp(v.f, &e)) != 0.5) return CXLA_OK;
  double r = 1.0 / v.f; /* exact in double: a power of two within double's range */
  if (cx_round_to_type(t, r) != r || r * v.f != 1.0) return CXLA_OK;
  cx_scalar rv;
  rv.f = r;
  cx_instr *k = cx_simp_splat(in, &b->shape, rv);
  cx_instr *ops[2] = {in->ops[0], k};
  *out = k ? cx_simp_new(in, CX_OP_MULTIPLY, &in->shape, 2, ops) : NULL;
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

static cxla_status binary(cx_instr *in, cx_instr **out) {
  cx_instr *a = in->ops[0], *b = in->ops[1];
  cxla_type t = a->shape.type;
  int I = cx_type_is_int(t), F = cx_type_is_float(t), P = t == CXLA_PRED;
  switch (in->op) {
  case CX_OP_ADD:
    if (I && cx_simp_is_int(b, 0)) *out = a;
    else if (I && cx_simp_is_int(a, 0)) *out = b;
    else if (F && cx_simp_is_float(b, -0.0)) *out = a;
    else if (F && cx_simp_is_float(a, -0.0)) *out = b;
    return CXLA_OK;
  case CX_OP_SUBTRACT:
    if (I && cx_simp_is_int(b, 0)) *out = a;
    else if (F && cx_simp_is_float(b, 0.0)) *out = a;
    else if (I && a == b) return splat_int(in, 0, out); /* wraps consistently: x - x == 0 */
    return CXLA_OK;
  case CX_OP_MULTIPLY:
    if ((I || F) && is_one(b)) *out = a;
    else if ((I || F) && is_one(a)) *out = b;
    else if (I && (cx_simp_is_int(a, 0) || cx_simp_is_int(b, 0))) return splat_int(in, 0, out);
    return CXLA_OK;
  case CX_OP_DIVIDE:
    if ((I || F) && is_one(b)) *out = a;
    else if (F) return divide_by_power_of_two(in, out);
    return CXLA_OK;
  case CX_OP_POWER:
    if (F && cx_simp_is_float(b, 1.0)) *out = a; /* pow(x, 1) is x, NaN and -0 included */
    return CXLA_OK;
  case CX_OP_MAXIMUM:
  case CX_OP_MINIMUM: {
    int max = in->op == CX_OP_MAXIMUM;
    if (a == b) *out = a; /* max(NaN, NaN) is that NaN, max(-0, -0) is -0 */
    else if (I) {
      int64_t id = max ? cx_simp_int_min(t) : cx_simp_int_max(t);
      if (cx_simp_is_int(b, id)) *out = a;
      else if (cx_simp_is_int(a, id)) *out = b;
    } else if (F) { /* max(x, -inf) is x, also for NaN (propagates) and -0 */
      double id = max ? -INFINITY : INFINITY;
      if (cx_simp_is_float(b, id)) *out = a;
      else if (cx_simp_is_float(a, id)) *out = b;
    }
    return CXLA_OK;
  }
  case CX_OP_AND:
    if (a == b) *out = a;
    else if ((I || P) && cx_simp_is_int(b, -1)) *out = a;
    else if ((I || P) && cx_simp_is_int(a, -1)) *out = b;
    else if ((I || P) && (cx_simp_is_int(a, 0) || cx_simp_is_int(b, 0))) return splat_int(in, 0, out);
    return CXLA_OK;
  case CX_OP_OR:
    if (a == b) *out = a;
    else if ((I || P) && cx_simp_is_int(b, 0)) *out = a;
    else if ((I || P) && cx_simp_is_int(a, 0)) *out = b;
    else if ((I || P) && (cx_simp_is_int(a, -1) || cx_simp_is_int(b, -1))) return splat_int(in, -1, out);
    return CXLA_OK;
  case CX_OP_XOR:
    if ((I || P) && cx_simp_is_int(b, 0)) *out = a;
    else if ((I || P) && cx_simp_is_int(a, 0)) *out = b;
    else if ((I || P) && a == b) return splat_int(in, 0, out);
    return CXLA_OK;
  case CX_OP_SHIFT_LEFT:
  case CX_OP_SHIFT_RIGHT_ARITHMETIC:
  case CX_OP_SHIFT_RIGHT_LOGICAL:
    if (I && cx_simp_is_int(b, 0)) *out = a;
    return CXLA_OK;
  case CX_OP_COMPARE: {
    cx_cmp_type ct = in->a.cmp_type;
    int exact = is_intlike(t) ? ct != CX_CMP_FLOAT : ct == CX_CMP_TOTALORDER;
    if (a != b || !exact) return CXLA_OK;
    cxla_compare_dir d = in->a.dir;
    return splat_int(in, d == CXLA_EQ || d == CXLA_LE || d == CXLA_GE, out);
  }
  default:
    return CXLA_OK;
  }
}

/* Whether every value of `from` converts to `to` exactly (so converting back gives the
 * original). */
static int convert_is_exact(cxla_type from, cxla_type to) {
  cx_kind kf = cx_type_kind(from), kt = cx_type_kind(to);
  int bf = cx_type_bits(from), bt = cx_type_bits(to);
  if (from == to) return 1;
  if (kf == CX_KIND_PRED) return kt != CX_KIND_NONE; /* 0 and 1 exist in every type */
  if (kt == CX_KIND_PRED || kf == CX_KIND_NONE || kt == CX_KIND_NONE) return 0;
  if (kf == CX_KIND_FLOAT) /* f16 and bf16 fit in f32, everything in f64; -0, inf, NaN stay */
    return kt == CX_KIND_FLOAT && (to == CXLA_F64 || (to == CXLA_F32 && (from == CXLA_F16 || from == CXLA_BF16)));
  int digits = kf == CX_KIND_SINT ? bf - 1 : bf; /* value bits of the integer type */
  if (kt == CX_KIND_FLOAT) {
    int mant = to == CXLA_F64 ? 53 : to == CXLA_F32 ? 24 : to == CXLA_F16 ? 11 : 8;
    return digits <= mant; /* small integers are far inside every float type's range */
  }
  if (kf == CX_KIND_SINT) return kt == CX_KIND_SINT && bf <= bt;
  return kt == CX_KIND_UINT ? bf <= bt : bf < bt;
}

static int float_mantissa_bits(cxla_type t, int *ebits) {
  switch (t) {
  case CXLA_F16: *ebits = 5; return 10;
  case CXLA_BF16: *ebits = 8; return 7;
  case CXLA_F32: *ebits = 8; return 23;
  case CXLA_F64: *ebits = 11; return 52;
  default: *ebits = 0; return -1;
  }
}

static cxla_status unary(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  switch (in->op) {
  case CX_OP_NEGATE: /* -(-x) is x also for INT_MIN (wraps both times) and NaN */
  case CX_OP_NOT:
    if (x->op == in->op) *out = x->ops[0];
    return CXLA_OK;
  case CX_OP_ABS:
    if (x->op == CX_OP_ABS) *out = x;
    else if (x->op == CX_OP_NEGATE) /* |-x| == |x|, INT_MIN included */
      *out = cx_simp_new(in, CX_OP_ABS, &in->shape, 1, &x->ops[0]);
    return *out || x->op != CX_OP_NEGATE ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  case CX_OP_COPY: /* one that changes the layout matters to a bitcast reading it */
    if (cx_shape_equal(&x->shape, &in->shape) && cx_shape_same_layout(&x->shape, &in->shape)) *out = x;
    return CXLA_OK;
  case CX_OP_BITCAST_CONVERT:
    if (x->shape.type == in->shape.type && cx_shape_equal(&x->shape, &in->shape)) *out = x;
    return CXLA_OK;
  case CX_OP_CONVERT: {
    cxla_type to = in->shape.type;
    if (x->shape.type == to) { *out = x; return CXLA_OK; }
    if (x->op != CX_OP_CONVERT) return CXLA_OK;
    cx_instr *y = x->ops[0];
    if (!convert_is_exact(y->shape.type, x->shape.type)) return CXLA_OK;
    if (y->shape.type == to) { *out = y; return CXLA_OK; }
    /* On to a third type the value alone decides the result, except into integers: from a
     * float that saturates, from an integer it wraps (s16 300 -> f32 -> s8 is 127, s16 -> s8
     * is 44). So the middle type must be of the source's family there. */
    cx_kind ky = cx_type_kind(y->shape.type), kx = cx_type_kind(x->shape.type);
    if (cx_type_is_int(to) && ky != CX_KIND_PRED && (ky == CX_KIND_FLOAT) != (kx == CX_KIND_FLOAT)) return CXLA_OK;
    *out = cx_simp_new(in, CX_OP_CONVERT, &in->shape, 1, &y);
    return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  }
  case CX_OP_REDUCE_PRECISION: { /* keeping at least every bit the type has changes nothing */
    int eb, mb = float_mantissa_bits(x->shape.type, &eb);
    if (mb >= 0 && in->a.exponent_bits >= eb && in->a.mantissa_bits >= mb) *out = x;
    return CXLA_OK;
  }
  default:
    return CXLA_OK;
  }
}

static cxla_status ternary(cx_instr *in, cx_instr **out) {
  if (in->op != CX_OP_SELECT) return CXLA_OK;
  cx_instr *p = in->ops[0], *t = in->ops[1], *f = in->ops[2];
  cx_scalar v;
  if (t == f) *out = t;
  else if (p->shape.type == CXLA_PRED && cx_simp_uniform(p, &v)) *out = v.i ? t : f;
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) *out = NULL;
  return CXLA_OK;
}

cxla_status cx_simp_elementwise(cx_instr *in, cx_instr **out) {
  switch (in->nops) {
  case 1: return unary(in, out);
  case 2: return binary(in, out);
  case 3: return ternary(in, out);
  default: return CXLA_OK;
  }
}

/* get-tuple-element(tuple(...)) and tuple(gte(t, 0), ..., gte(t, n-1)) == t. */
static cxla_status data_op(cx_instr *in, cx_instr **out) {
  if (in->op == CX_OP_GET_TUPLE_ELEMENT) {
    cx_instr *t = in->ops[0];
    if (t->op == CX_OP_TUPLE && in->a.index >= 0 && in->a.index < t->nops) *out = t->ops[in->a.index];
  } else if (in->op == CX_OP_TUPLE && in->nops > 0) {
    cx_instr *t = in->ops[0]->op == CX_OP_GET_TUPLE_ELEMENT ? in->ops[0]->ops[0] : NULL;
    for (int i = 0; t && i < in->nops; i++)
      if (in->ops[i]->op != CX_OP_GET_TUPLE_ELEMENT || in->ops[i]->ops[0] != t || in->ops[i]->a.index != i) t = NULL;
    if (t && t->shape.type == CXLA_TUPLE && t->shape.ntuple == in->nops) *out = t;
  }
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) *out = NULL;
  return CXLA_OK;
}

static cxla_status simplify_instr(cx_instr *in, cx_instr **out) {
  *out = NULL;
  switch (in->op) {
  case CX_OP_PARAMETER: case CX_OP_CONSTANT: return CXLA_OK;
  case CX_OP_TUPLE: case CX_OP_GET_TUPLE_ELEMENT: return data_op(in, out);
  case CX_OP_REDUCE: case CX_OP_MAP: return cx_simp_reduce(in, out);
  default: break;
  }
  if (cx_op_has_side_effect(in->op)) return CXLA_OK;
  switch (cx_op_class_of(in->op)) {
  case CX_CLASS_ELEMENTWISE: return cx_simp_elementwise(in, out);
  case CX_CLASS_SHAPE: return cx_simp_shape(in, out);
  default: return CXLA_OK;
  }
}

/* One sweep over c in order. A replaced instruction records its replacement in aux; later
 * instructions see their operands through those records, so chains collapse in one sweep. */
static cxla_status simplify_comp(cx_comp *c, int *changed) {
  int n0 = c->ninstrs, nrep = 0;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n0; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < n0 && s == CXLA_OK; i++) {
    cx_instr *in = c->instrs[i], *r = NULL;
    for (int j = 0; j < in->nops; j++)
      while (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux;
    s = simplify_instr(in, &r);
    if (s == CXLA_OK && r && r != in) {
      in->aux = r;
      nrep++;
    }
  }
  if (nrep || c->ninstrs != n0) {
    for (int i = 0; i < c->ninstrs; i++) {
      cx_instr *in = c->instrs[i];
      for (int j = 0; j < in->nops; j++)
        while (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux;
    }
    while (c->root && c->root->aux) c->root = c->root->aux;
    int n = 0;
    for (int i = 0; i < c->ninstrs; i++)
      if (!c->instrs[i]->aux) c->instrs[n++] = c->instrs[i];
    c->ninstrs = n;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  if (s != CXLA_OK) return s;
  if (c->ninstrs != n0 - nrep) CX_TRY(cx_comp_resort(c, "simplify"));
  *changed += nrep;
  return CXLA_OK;
}

cxla_status cx_pass_simplify(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(simplify_comp(m->comps[i], changed));
  return CXLA_OK;
}
