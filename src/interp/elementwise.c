/* elementwise.c — elementwise ops over whole arrays. The scalar rules live in ew_rules.c; this
 * file only loops. Every op can go element by element through its rule; f32 and f64 operands
 * of the same type call the rule's float function directly, and a few ops have loops of their
 * own, listed by op in k_fast: +,-,*,/ in native float arithmetic (the common case, the one big
 * graphs spend their time in), and work on the stored bits where a round trip through double
 * would quiet a signalling NaN (copy, select, f32 negate and abs, reduce-precision, TOTALORDER
 * compare). A rank-0
 * operand of a larger op is broadcast (select's pred and clamp's bounds may be scalars). */
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

/* ---- the general loops ---- */

static void rule_loop(const cx_ew_rule *r, const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  cx_scalar v[3];
  cx_ew_bound b;
  cx_ew_bind(&b, r, in);
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < g->n; k++) v[k] = cx_scalar_load(g->type[k], g->data[k], i * g->step[k]);
    cx_scalar_store(rt, out, i, cx_ew_call(&b, v));
  }
}

/* f32 / f64 operands of the result's type: the rule's float function on each element, in
 * double, rounded once. Returns 0 when the types need rule_loop. */
#define FLOAT_LOOP(T)                                                                      \
  do {                                                                                     \
    T *o = out;                                                                            \
    const T *a = g->data[0], *b = g->data[1];                                              \
    int64_t sb = g->step[1];                                                               \
    if (r->f1)                                                                             \
      for (int64_t i = 0; i < n; i++) o[i] = (T)r->f1(a[i]);                               \
    else if (g->step[0] == 1 && sb == 1)                                                   \
      for (int64_t i = 0; i < n; i++) o[i] = (T)r->f2(a[i], b[i]);                         \
    else                                                                                   \
      for (int64_t i = 0; i < n; i++) o[i] = (T)r->f2(a[i * g->step[0]], b[i * sb]);       \
  } while (0)

static int float_loop(const cx_ew_rule *r, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  if ((rt != CXLA_F32 && rt != CXLA_F64) || !(r->f1 || r->f2)) return 0;
  for (int k = 0; k < g->n; k++)
    if (g->type[k] != rt) return 0;
  if (r->f1 && g->step[0] != 1) return 0;
  if (rt == CXLA_F32) FLOAT_LOOP(float);
  else FLOAT_LOOP(double);
  return 1;
}

/* ---- loops of particular ops: each returns 0 when the types need the general loops ---- */

typedef int (*ew_fast_fn)(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n);

/* +,-,*,/ on floats equal the double result rounded once (53 >= 2*24+2 bits), so native float
 * arithmetic gives the same bits as the double-then-round rule. Unit strides get their own
 * loops so the compiler can vectorise them. */
#define NATIVE_LOOPS(T, OP)                                                                 \
  do {                                                                                      \
    T *o = out;                                                                             \
    const T *a = g->data[0], *b = g->data[1];                                               \
    int64_t sa = g->step[0], sb = g->step[1];                                               \
    if (sa == 1 && sb == 1)                                                                 \
      for (int64_t i = 0; i < n; i++) o[i] = a[i] OP b[i];                                  \
    else                                                                                    \
      for (int64_t i = 0; i < n; i++) o[i] = a[i * sa] OP b[i * sb];                        \
  } while (0)
#define NATIVE_BINARY(name, OP)                                                             \
  static int name(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) { \
    (void)in;                                                                               \
    if (g->type[0] != rt || g->type[1] != rt) return 0;                                     \
    if (rt == CXLA_F32) NATIVE_LOOPS(float, OP);                                            \
    else if (rt == CXLA_F64) NATIVE_LOOPS(double, OP);                                      \
    else return 0;                                                                          \
    return 1;                                                                               \
  }
NATIVE_BINARY(add_fast, +)
NATIVE_BINARY(subtract_fast, -)
NATIVE_BINARY(multiply_fast, *)
NATIVE_BINARY(divide_fast, /)

/* negate and abs of f32 in float arithmetic: they only touch the sign bit, so a signalling
 * NaN keeps its bits (widening it to double would quiet it; f64 is never widened). */
#define F32_SIGN_OP(name, EXPR)                                                             \
  static int name(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) { \
    (void)in;                                                                               \
    if (rt != CXLA_F32 || g->type[0] != rt || g->step[0] != 1) return 0;                    \
    float *o = out;                                                                         \
    const float *a = g->data[0];                                                            \
    for (int64_t i = 0; i < n; i++) o[i] = EXPR;                                            \
    return 1;                                                                               \
  }
F32_SIGN_OP(negate_fast, -a[i])
F32_SIGN_OP(abs_fast, fabsf(a[i]))

static int copy_fast(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  (void)in;
  if (g->type[0] != rt || g->step[0] != 1) return 0;
  memcpy(out, g->data[0], (size_t)n * cxla_type_size(rt));
  return 1;
}

/* TOTALORDER on the stored bits (keeps NaN payloads and signalling NaNs exact): the
 * sign-magnitude pattern turned into a two's complement order key. */
static int64_t total_key(cxla_type t, const void *p, int64_t i) {
  int64_t k;
  switch (t) {
  case CXLA_F64: memcpy(&k, (const char *)p + 8 * i, 8); return k < 0 ? k ^ INT64_MAX : k;
  case CXLA_F32: { int32_t w; memcpy(&w, (const char *)p + 4 * i, 4); return w < 0 ? w ^ INT32_MAX : w; }
  default:
    if (cxla_type_size(t) == 1) { /* f8/f4: the key of the value (widening keeps the order) */
      double d = cx_load_f64(t, p, i);
      memcpy(&k, &d, 8);
      return k < 0 ? k ^ INT64_MAX : k;
    } else {
      int16_t h;
      memcpy(&h, (const char *)p + 2 * i, 2);
      return h < 0 ? h ^ INT16_MAX : h;
    }
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

static int compare_fast(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  (void)rt;
  if (in->a.cmp_type == CX_CMP_TOTALORDER && cx_type_is_float(g->type[0]) && g->type[0] == g->type[1]) {
    total_order_loop(in->a.dir, g, out, n);
    return 1;
  }
  return native_compare(in->a.dir, in->a.cmp_type, g, out, n);
}

/* select copies bytes, so NaN payloads pass through untouched. */
static int select_fast(const cx_instr *in, const ew_args *g, cxla_type rt, void *out, int64_t n) {
  (void)in;
  if (g->type[1] != rt || g->type[2] != rt) return 0;
  size_t es = cxla_type_size(rt);
  char *o = out;
  const uint8_t *p = g->data[0];
  const char *t = g->data[1], *f = g->data[2];
  for (int64_t i = 0; i < n; i++) {
    const char *src = p[i * g->step[0]] ? t + (size_t)(i * g->step[1]) * es : f + (size_t)(i * g->step[2]) * es;
    memcpy(o + (size_t)i * es, src, es);
  }
  return 1;
}

/* reduce-precision on the stored bits of each element. */
static int reduce_precision_fast(const cx_instr *in, const ew_args *g, cxla_type t, void *dst, int64_t n) {
  const void *src = g->data[0];
  int e = in->a.exponent_bits, m = in->a.mantissa_bits;
  if (g->type[0] != t || g->step[0] != 1 || cxla_type_size(t) == 1) return 0; /* f8/f4: the scalar rule */
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
  return 1;
}

static const ew_fast_fn k_fast[CX_OP_COUNT] = {
  [CX_OP_ADD] = add_fast,
  [CX_OP_SUBTRACT] = subtract_fast,
  [CX_OP_MULTIPLY] = multiply_fast,
  [CX_OP_DIVIDE] = divide_fast,
  [CX_OP_NEGATE] = negate_fast,
  [CX_OP_ABS] = abs_fast,
  [CX_OP_COPY] = copy_fast,
  [CX_OP_SELECT] = select_fast,
  [CX_OP_REDUCE_PRECISION] = reduce_precision_fast,
  [CX_OP_COMPARE] = compare_fast,
};

/* Checks operand k against the result's element count (equal, or a broadcast scalar) unless
 * !counts. */
static cxla_status add_operand(cx_interp *st, cx_instr *in, ew_args *g, const cxla_literal *x,
                               int64_t n, int counts) {
  if (!x || x->shape.type == CXLA_TUPLE || !cx_type_is_array(x->shape.type))
    return cx_interp_bad(st, in, "operand %d is not an array", g->n);
  int64_t xn = cx_shape_elems(&x->shape);
  int same = cx_shape_same_dims(&x->shape, &in->shape) || !counts;
  if (!same && !(x->shape.rank == 0 && xn == 1))
    return cx_interp_bad(st, in, "operand %d has %lld elements, the result %lld", g->n,
                         (long long)xn, (long long)n);
  g->type[g->n] = x->shape.type;
  g->data[g->n] = x->data;
  g->step[g->n] = same ? 1 : 0;
  g->n++;
  return CXLA_OK;
}

/* The checks every elementwise op shares, filling g; *out is the zeroed result. */
static cxla_status prepare(cx_interp *st, cx_instr *in, cxla_literal *const *ops, int counts, ew_args *g,
                           const cx_ew_rule **rule, cxla_literal **out) {
  *out = NULL;
  const cx_ew_rule *r = *rule = cx_ew_rule_of(in->op);
  if (!r) return cx_interp_unsupported(st, in, "the interpreter does not run this op");
  if (in->shape.type == CXLA_TUPLE || !cx_type_is_array(in->shape.type))
    return cx_interp_unsupported(st, in, "non-array result");
  int64_t n = cx_shape_elems(&in->shape);
  int arity = cx_op_arity(in->op);
  if (arity < 1 || arity > 3 || in->nops != arity || n < 0)
    return cx_interp_bad(st, in, "expected %d operands", arity);
  memset(g, 0, sizeof *g);
  for (int k = 0; k < arity; k++) CX_TRY(add_operand(st, in, g, ops[k], n, counts));
  cxla_type ot = g->type[r->type_operand < arity ? r->type_operand : 0];
  if (!cx_op_valid_for_type(in->op, ot)) {
    char msg[96];
    snprintf(msg, sizeof msg, "operand type %s", cxla_type_name(ot));
    return cx_interp_unsupported(st, in, msg);
  }
  const char *why = r->ill_formed ? r->ill_formed(in, g->type) : NULL;
  if (why) return cx_interp_bad(st, in, "%s", why);
  return CXLA_OK;
}

cxla_status cx_interp_elementwise(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  ew_args g;
  const cx_ew_rule *rule;
  cxla_literal *r;
  CX_TRY(prepare(st, in, ops, 1, &g, &rule, out));
  CX_TRY(cx_interp_new_array(st, in, &in->shape, &r));
  cxla_type rt = in->shape.type;
  int64_t n = cx_shape_elems(&in->shape);
  ew_fast_fn fast = k_fast[in->op];
  if (!(fast && fast(in, &g, rt, r->data, n)) && !float_loop(rule, &g, rt, r->data, n))
    rule_loop(rule, in, &g, rt, r->data, n);
  *out = r;
  return CXLA_OK;
}

/* One element's bits at its bit width (a sub-byte type's are the low bits of its byte). */
static uint64_t width_bits(const cxla_literal *l, int64_t i, int w) {
  size_t sz = cxla_type_size(l->shape.type);
  uint64_t v = 0;
  memcpy(&v, (const uint8_t *)l->data + (size_t)i * sz, sz); /* little-endian */
  return w < 64 ? v & ((UINT64_C(1) << w) - 1) : v;
}

static void put_width_bits(cxla_literal *l, int64_t i, uint64_t v) {
  size_t sz = cxla_type_size(l->shape.type);
  memcpy((uint8_t *)l->data + (size_t)i * sz, &v, sz); /* a sub-byte type's high bits are 0 */
}

/* bitcast-convert: row-major and little-endian, so the bytes are the answer; a change of
 * element size adds or drops a trailing dimension, so the element counts differ. Widths are
 * bit widths: a sub-byte type (stored one to a byte) packs k elements into one, low first. */
cxla_status cx_interp_bitcast_convert(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  ew_args g;
  const cx_ew_rule *rule;
  CX_TRY(prepare(st, in, ops, 0, &g, &rule, out));
  cxla_type ft = ops[0]->shape.type, tt = in->shape.type;
  int fb = cx_type_bits(ft), tb = cx_type_bits(tt);
  int64_t ni = cx_shape_elems(&ops[0]->shape), no = cx_shape_elems(&in->shape);
  if (ni * fb != no * tb)
    return cx_interp_bad(st, in, "operand has %lld bits, the result %lld", (long long)(ni * fb), (long long)(no * tb));
  CX_TRY(cx_interp_new_array(st, in, &in->shape, out));
  if (fb == 8 * (int)cxla_type_size(ft) && tb == 8 * (int)cxla_type_size(tt)) {
    memcpy((*out)->data, ops[0]->data, (size_t)cx_shape_bytes(&in->shape));
  } else if (fb <= tb) { /* k = tb / fb operand elements (1 for equal widths) make one result */
    int k = tb / fb;
    for (int64_t o = 0; o < no; o++) {
      uint64_t v = 0;
      for (int j = 0; j < k; j++) v |= width_bits(ops[0], o * k + j, fb) << (j * fb);
      put_width_bits(*out, o, v);
    }
  } else { /* one operand element makes k = fb / tb results */
    int k = fb / tb;
    for (int64_t i = 0; i < ni; i++) {
      uint64_t v = width_bits(ops[0], i, fb);
      for (int j = 0; j < k; j++) put_width_bits(*out, i * k + j, (v >> (j * tb)) & ((UINT64_C(1) << tb) - 1));
    }
  }
  return CXLA_OK;
}
