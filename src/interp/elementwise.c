/* elementwise.c — elementwise ops over whole arrays. The scalar rules live in scalar.c; this
 * file only loops. f32 and f64 get loops with the op chosen outside the element loop (the
 * common case, and the one big graphs spend their time in); other types and the rarer ops go
 * element by element through cx_scalar_eval. A rank-0 operand of a larger op is broadcast
 * (select's pred and clamp's bounds may be scalars). */
#include <stdio.h>
#include <string.h>
#include "interp/internal.h"

/* Operand k's element i is at index i * step[k] (step 0: a broadcast scalar). */
typedef struct {
  int n;
  cxla_type type[3];
  const void *data[3];
  int64_t step[3];
} ew_args;

/* ---- f32 / f64 fast paths. +,-,*,/ on floats equal the double result rounded once (53 >=
 * 2*24+2 bits), so native float arithmetic gives the same bits as the double-then-round rule. */

#define FLOAT_BINARY_LOOPS(T, A, B)                                                        \
  switch (op) {                                                                            \
  case CX_OP_ADD: for (int64_t i = 0; i < n; i++) o[i] = A + B; return;                    \
  case CX_OP_SUBTRACT: for (int64_t i = 0; i < n; i++) o[i] = A - B; return;               \
  case CX_OP_MULTIPLY: for (int64_t i = 0; i < n; i++) o[i] = A * B; return;               \
  case CX_OP_DIVIDE: for (int64_t i = 0; i < n; i++) o[i] = A / B; return;                 \
  default: for (int64_t i = 0; i < n; i++) o[i] = (T)cx_float_binary(op, A, B); return;    \
  }

/* Unit strides get their own loops so the compiler can vectorise them. */
static void f32_binary(cx_op op, float *o, const float *a, int64_t sa, const float *b, int64_t sb,
                       int64_t n) {
  if (sa == 1 && sb == 1) FLOAT_BINARY_LOOPS(float, a[i], b[i])
  FLOAT_BINARY_LOOPS(float, a[i * sa], b[i * sb])
}

static void f64_binary(cx_op op, double *o, const double *a, int64_t sa, const double *b,
                       int64_t sb, int64_t n) {
  if (sa == 1 && sb == 1) FLOAT_BINARY_LOOPS(double, a[i], b[i])
  FLOAT_BINARY_LOOPS(double, a[i * sa], b[i * sb])
}

static void f32_unary(cx_op op, float *o, const float *a, int64_t n) {
  switch (op) {
  case CX_OP_NEGATE: for (int64_t i = 0; i < n; i++) o[i] = -a[i]; return;
  case CX_OP_ABS: for (int64_t i = 0; i < n; i++) o[i] = fabsf(a[i]); return;
  /* exp/tanh/log in double, rounded once: closer to the true value than expf & co. */
  case CX_OP_EXP: for (int64_t i = 0; i < n; i++) o[i] = (float)exp(a[i]); return;
  case CX_OP_TANH: for (int64_t i = 0; i < n; i++) o[i] = (float)tanh(a[i]); return;
  case CX_OP_LOG: for (int64_t i = 0; i < n; i++) o[i] = (float)log(a[i]); return;
  default: for (int64_t i = 0; i < n; i++) o[i] = (float)cx_float_unary(op, a[i]); return;
  }
}

static void f64_unary(cx_op op, double *o, const double *a, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = cx_float_unary(op, a[i]);
}

/* ---- generic loops ---- */

static void generic_loop(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  cx_scalar v[3];
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < g->n; k++) v[k] = cx_scalar_load(g->type[k], g->data[k], i * g->step[k]);
    cx_scalar_store(rt, out, i, cx_scalar_eval(in, v));
  }
}

/* TOTALORDER on the stored bits (keeps NaN payloads and signalling NaNs exact): the
 * sign-magnitude pattern turned into a two's complement order key. */
static int64_t total_key(cxla_type t, const void *p, int64_t i) {
  int64_t k;
  switch (t) {
  case CXLA_F64: memcpy(&k, (const char *)p + 8 * i, 8); return k < 0 ? k ^ INT64_MAX : k;
  case CXLA_F32: { int32_t w; memcpy(&w, (const char *)p + 4 * i, 4); return w < 0 ? w ^ INT32_MAX : w; }
  default: { int16_t h; memcpy(&h, (const char *)p + 2 * i, 2); return h < 0 ? h ^ INT16_MAX : h; }
  }
}

static void total_order_loop(cxla_compare_dir dir, const ew_args *g, uint8_t *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    int64_t a = total_key(g->type[0], g->data[0], i * g->step[0]);
    int64_t b = total_key(g->type[1], g->data[1], i * g->step[1]);
    int r;
    switch (dir) {
    case CXLA_EQ: r = a == b; break;
    case CXLA_NE: r = a != b; break;
    case CXLA_LT: r = a < b; break;
    case CXLA_LE: r = a <= b; break;
    case CXLA_GT: r = a > b; break;
    default: r = a >= b; break;
    }
    o[i] = (uint8_t)r;
  }
}

/* compare on f32/f64 (FLOAT order) and s32/s64 (SIGNED order) with the direction hoisted:
 * C's relational operators are exactly those orders, NaN rules included. */
#define CMP_LOOPS(T)                                                                     \
  do {                                                                                   \
    const T *a = g->data[0], *b = g->data[1];                                            \
    int64_t sa = g->step[0], sb = g->step[1];                                            \
    switch (dir) {                                                                       \
    case CXLA_EQ: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] == b[i * sb]; break; \
    case CXLA_NE: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] != b[i * sb]; break; \
    case CXLA_LT: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] < b[i * sb]; break;  \
    case CXLA_LE: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] <= b[i * sb]; break; \
    case CXLA_GT: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] > b[i * sb]; break;  \
    case CXLA_GE: for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] >= b[i * sb]; break; \
    }                                                                                    \
  } while (0)

/* Returns 0 when the types or the comparison type need the generic loop. */
static int native_compare(cxla_compare_dir dir, cx_cmp_type ct, const ew_args *g, uint8_t *o, int64_t n) {
  cxla_type t = g->type[0];
  if (t != g->type[1]) return 0;
  int isf = t == CXLA_F32 || t == CXLA_F64;
  if (!(ct == CX_CMP_DEFAULT || ct == (isf ? CX_CMP_FLOAT : CX_CMP_SIGNED))) return 0;
  switch (t) {
  case CXLA_F32: CMP_LOOPS(float); return 1;
  case CXLA_F64: CMP_LOOPS(double); return 1;
  case CXLA_S32: CMP_LOOPS(int32_t); return 1;
  case CXLA_S64: CMP_LOOPS(int64_t); return 1;
  default: return 0;
  }
}

/* select copies bytes, so NaN payloads pass through untouched. */
static void select_loop(const ew_args *g, size_t es, char *o, int64_t n) {
  const uint8_t *p = g->data[0];
  const char *t = g->data[1], *f = g->data[2];
  for (int64_t i = 0; i < n; i++) {
    const char *src = p[i * g->step[0]] ? t + (size_t)(i * g->step[1]) * es : f + (size_t)(i * g->step[2]) * es;
    memcpy(o + (size_t)i * es, src, es);
  }
}

/* reduce-precision on the stored bits of each element. */
static void reduce_precision_loop(cxla_type t, const void *src, void *dst, int64_t n, int e, int m) {
  for (int64_t i = 0; i < n; i++) {
    switch (t) {
    case CXLA_F64: {
      uint64_t u;
      memcpy(&u, (const char *)src + 8 * i, 8);
      u = cx_reduce_precision_bits(u, 64, 52, e, m);
      memcpy((char *)dst + 8 * i, &u, 8);
      break;
    }
    case CXLA_F32: {
      uint32_t u;
      memcpy(&u, (const char *)src + 4 * i, 4);
      u = (uint32_t)cx_reduce_precision_bits(u, 32, 23, e, m);
      memcpy((char *)dst + 4 * i, &u, 4);
      break;
    }
    default: {
      uint16_t u;
      memcpy(&u, (const char *)src + 2 * i, 2);
      u = (uint16_t)cx_reduce_precision_bits(u, 16, t == CXLA_F16 ? 10 : 7, e, m);
      memcpy((char *)dst + 2 * i, &u, 2);
      break;
    }
    }
  }
}

/* Checks operand k against the result's element count (equal, or a broadcast scalar). */
static cxla_status add_operand(cx_interp *st, cx_instr *in, ew_args *g, const cxla_literal *x,
                               int64_t n) {
  if (!x || x->shape.type == CXLA_TUPLE || !cx_type_is_array(x->shape.type))
    return cx_interp_bad(st, in, "operand %d is not an array", g->n);
  int64_t xn = cx_shape_elems(&x->shape);
  /* bitcast-convert may add or drop a trailing dimension; its byte counts are checked apart */
  int same = cx_shape_same_dims(&x->shape, &in->shape) || in->op == CX_OP_BITCAST_CONVERT;
  if (!same && !(x->shape.rank == 0 && xn == 1))
    return cx_interp_bad(st, in, "operand %d has %lld elements, the result %lld", g->n,
                         (long long)xn, (long long)n);
  g->type[g->n] = x->shape.type;
  g->data[g->n] = x->data;
  g->step[g->n] = same ? 1 : 0;
  g->n++;
  return CXLA_OK;
}

cxla_status cx_interp_elementwise(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  if (in->shape.type == CXLA_TUPLE || !cx_type_is_array(in->shape.type))
    return cx_interp_unsupported(st, in, "non-array result");
  int64_t n = cx_shape_elems(&in->shape);
  int arity = cx_op_arity(in->op);
  if (arity < 1 || arity > 3 || in->nops != arity || n < 0)
    return cx_interp_bad(st, in, "expected %d operands", arity);
  ew_args g = {0};
  for (int k = 0; k < arity; k++) CX_TRY(add_operand(st, in, &g, ops[k], n));
  cxla_type rt = in->shape.type;
  cxla_type ot = in->op == CX_OP_SELECT || in->op == CX_OP_CLAMP ? g.type[1] : g.type[0];
  if (!cx_op_valid_for_type(in->op, ot)) {
    char msg[96];
    snprintf(msg, sizeof msg, "operand type %s", cxla_type_name(ot));
    return cx_interp_unsupported(st, in, msg);
  }
  if (in->op == CX_OP_SELECT && g.type[0] != CXLA_PRED)
    return cx_interp_bad(st, in, "select needs a pred selector");
  if (in->op == CX_OP_REDUCE_PRECISION && (in->a.exponent_bits < 1 || in->a.mantissa_bits < 0))
    return cx_interp_bad(st, in, "exponent_bits must be >= 1 and mantissa_bits >= 0");
  if (in->op == CX_OP_BITCAST_CONVERT) {
    int64_t ib = cx_shape_bytes(&ops[0]->shape), ob = cx_shape_bytes(&in->shape);
    if (ib != ob) return cx_interp_bad(st, in, "operand has %lld bytes, the result %lld", (long long)ib, (long long)ob);
  }

  cxla_literal *r;
  CX_TRY(cx_interp_new_array(st, in, &in->shape, &r));
  size_t es = cxla_type_size(rt);
  switch (in->op) {
  case CX_OP_COPY:
    if (g.type[0] != rt || g.step[0] != 1) goto generic;
    memcpy(r->data, ops[0]->data, (size_t)n * es);
    break;
  case CX_OP_BITCAST_CONVERT: /* row-major, little-endian: the bytes are the answer */
    memcpy(r->data, ops[0]->data, (size_t)cx_shape_bytes(&in->shape));
    break;
  case CX_OP_SELECT:
    if (g.type[1] != rt || g.type[2] != rt) goto generic;
    select_loop(&g, es, r->data, n);
    break;
  case CX_OP_REDUCE_PRECISION:
    if (g.type[0] != rt) goto generic;
    reduce_precision_loop(rt, ops[0]->data, r->data, n, in->a.exponent_bits, in->a.mantissa_bits);
    break;
  case CX_OP_COMPARE:
    if (in->a.cmp_type == CX_CMP_TOTALORDER && cx_type_is_float(g.type[0]) && g.type[0] == g.type[1]) {
      total_order_loop(in->a.dir, &g, r->data, n);
      break;
    }
    if (native_compare(in->a.dir, in->a.cmp_type, &g, r->data, n)) break;
    goto generic;
  default:
    if (in->op == CX_OP_IS_FINITE || in->op == CX_OP_CONVERT || in->op == CX_OP_CLAMP ||
        g.type[0] != rt || (arity == 2 && g.type[1] != rt) || (arity == 1 && g.step[0] != 1))
      goto generic;
    if (rt == CXLA_F32 && arity == 1) f32_unary(in->op, r->data, ops[0]->data, n);
    else if (rt == CXLA_F64 && arity == 1) f64_unary(in->op, r->data, ops[0]->data, n);
    else if (rt == CXLA_F32) f32_binary(in->op, r->data, ops[0]->data, g.step[0], ops[1]->data, g.step[1], n);
    else if (rt == CXLA_F64) f64_binary(in->op, r->data, ops[0]->data, g.step[0], ops[1]->data, g.step[1], n);
    else goto generic;
    break;
  generic:
    generic_loop(in, &g, rt, r->data, n);
    break;
  }
  *out = r;
  return CXLA_OK;
}
