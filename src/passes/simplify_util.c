/* simplify_util.c — constant matching and replacement builders for the simplifier. */
#include <math.h>
#include <string.h>
#include "passes/simplify.h"

int cx_simp_uniform(const cx_instr *x, cx_scalar *v) {
  /* broadcasts (of broadcasts) of a uniform value are uniform */
  while (x->op == CX_OP_BROADCAST) x = x->ops[0];
  if (x->op != CX_OP_CONSTANT || !x->a.literal) return 0;
  const cxla_literal *l = x->a.literal;
  if (!cx_type_is_array(l->shape.type)) return 0;
  int64_t n = cx_shape_elems(&l->shape);
  size_t es = cxla_type_size(l->shape.type);
  if (n <= 0 || es == 0) return 0;
  /* equal bytes: -0 and +0 differ, and a NaN only matches the same NaN */
  const unsigned char *d = l->data;
  for (int64_t i = 1; i < n; i++)
    if (memcmp(d, d + (size_t)i * es, es)) return 0;
  *v = cx_scalar_load(l->shape.type, l->data, 0);
  return 1;
}

int cx_simp_is_int(const cx_instr *x, int64_t k) {
  cxla_type t = x->shape.type;
  cx_kind kind = cx_type_kind(t);
  cx_scalar v;
  if (kind != CX_KIND_SINT && kind != CX_KIND_UINT && kind != CX_KIND_PRED) return 0;
  if (!cx_simp_uniform(x, &v)) return 0;
  if (kind == CX_KIND_PRED) return v.i == (k & 1);
  return v.i == cx_wrap_int(t, k);
}

int cx_simp_is_float(const cx_instr *x, double f) {
  cx_scalar v;
  if (!cx_type_is_float(x->shape.type) || !cx_simp_uniform(x, &v)) return 0;
  return v.f == f && !signbit(v.f) == !signbit(f);
}

int64_t cx_simp_int_min(cxla_type t) {
  if (cx_type_kind(t) != CX_KIND_SINT) return 0;
  return cx_wrap_int(t, (int64_t)(UINT64_C(1) << (cx_type_bits(t) - 1)));
}

int64_t cx_simp_int_max(cxla_type t) {
  if (cx_type_kind(t) != CX_KIND_SINT) return cx_wrap_int(t, -1); /* all ones */
  return cx_wrap_int(t, (int64_t)((UINT64_C(1) << (cx_type_bits(t) - 1)) - 1));
}

cx_instr *cx_simp_new(cx_instr *at, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops) {
  return cx_instr_add(at->parent, op, shape, nops, ops, at->loc);
}

cx_instr *cx_simp_splat(cx_instr *at, const cx_shape *shape, cx_scalar v) {
  cx_module *m = at->parent->module;
  cx_shape ss = cx_shape_scalar(shape->type);
  cxla_literal *lit = cx_literal_new(&ss);
  if (!lit) { cx_oom(m->ctx); return NULL; }
  cx_scalar_store(shape->type, lit->data, 0, v);
  if (!cx_module_own_literal(m, lit)) return NULL;
  cx_instr *c = cx_simp_new(at, CX_OP_CONSTANT, &ss, 0, NULL);
  if (!c) return NULL;
  c->a.literal = lit;
  if (shape->rank == 0) return c;
  return cx_simp_new(at, CX_OP_BROADCAST, shape, 1, &c); /* dimensions={} */
}

cx_instr *cx_simp_reshape(cx_instr *at, cx_instr *x, const cx_shape *shape) {
  if (cx_shape_same_dims(&x->shape, shape)) return x;
  cx_shape s = cx_shape_array(x->shape.type, shape->rank, shape->dims);
  return cx_simp_new(at, CX_OP_RESHAPE, &s, 1, &x);
}
