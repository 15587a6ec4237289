/* test_interp_util.c — helpers for the interpreter tests (see test_interp_util.h). */
#include <stdarg.h>
#include "test_interp_util.h"

cx_shape ti_sh(cxla_type t, int rank, ...) {
  int64_t d[CXLA_MAX_RANK];
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) d[i] = va_arg(ap, int);
  va_end(ap);
  return cx_shape_array(t, rank, d);
}

cx_shape ti_tuple_sh(int n, cx_shape *elems) {
  cx_shape s = cx_shape_scalar(CXLA_TUPLE);
  s.ntuple = n;
  s.tuple = elems;
  return s;
}

cx_module *ti_module(void) { return cx_module_new(test_ctx(), "t"); }
cx_comp *ti_comp(cx_module *m, const char *name) { return cx_comp_new(m, name); }

cx_instr *ti_param(cx_comp *c, int index, cx_shape s) {
  cx_instr *p = cx_instr_new(c, CX_OP_PARAMETER, &s, 0, NULL);
  if (p) p->a.index = index;
  return p;
}

cx_instr *ti_const(cx_comp *c, cxla_literal *lit) {
  if (!lit || !cx_module_own_literal(c->module, lit)) return NULL;
  cx_instr *k = cx_instr_new(c, CX_OP_CONSTANT, &lit->shape, 0, NULL);
  if (k) k->a.literal = lit;
  return k;
}

cx_instr *ti_cscalar(cx_comp *c, cxla_type t, double v) { return ti_const(c, ti_scalar_f(t, v)); }

cx_instr *ti_op(cx_comp *c, cx_op op, cx_shape s, int n, ...) {
  cx_instr *ops[16];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n && i < 16; i++) ops[i] = va_arg(ap, cx_instr *);
  va_end(ap);
  return cx_instr_new(c, op, &s, n, ops);
}

void ti_ints(cx_comp *c, cx_ints *dst, int n, ...) {
  int64_t v[CXLA_MAX_RANK * 2];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) v[i] = va_arg(ap, int);
  va_end(ap);
  cx_ints_set(c->module, dst, n, v);
}

cx_comp *ti_finish(cx_module *m, cx_comp *c, cx_instr *root, int entry) {
  c->root = root;
  c->is_entry = entry;
  cx_comp_index_params(c);
  cx_module_add_comp(m, c);
  return c;
}

cxla_literal *ti_lit_f(cxla_type t, cx_shape s, const double *v) {
  s.type = t;
  cxla_literal *l = cx_literal_new(&s);
  for (int64_t i = 0; l && i < cx_shape_elems(&s); i++) cx_store_f64(t, l->data, i, v[i]);
  return l;
}

cxla_literal *ti_lit_i(cxla_type t, cx_shape s, const int64_t *v) {
  s.type = t;
  cxla_literal *l = cx_literal_new(&s);
  for (int64_t i = 0; l && i < cx_shape_elems(&s); i++) cx_store_i64(t, l->data, i, v[i]);
  return l;
}

cxla_literal *ti_scalar_f(cxla_type t, double v) { return ti_lit_f(t, cx_shape_scalar(t), &v); }
cxla_literal *ti_scalar_i(cxla_type t, int64_t v) { return ti_lit_i(t, cx_shape_scalar(t), &v); }

cxla_literal *ti_run(cx_module *m, int nargs, cxla_literal **args, const char *file, int line) {
  cxla_literal *out = NULL;
  cxla_status s = cx_interp_run(m, nargs, args, &out);
  if (s != CXLA_OK) {
    test_fail(file, line, "run -> %s: %s", cxla_status_str(s), cxla_context_errmsg(test_ctx()));
    return NULL;
  }
  return out;
}

cxla_literal *ti_op_run(cx_op op, cx_shape rs, const cx_attrs *attrs, int n, cxla_literal **args,
                        const char *file, int line) {
  cx_module *m = ti_module();
  cx_comp *c = ti_comp(m, "main");
  cx_instr *ps[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++) ps[i] = ti_param(c, i, args[i]->shape);
  cx_instr *r = cx_instr_new(c, op, &rs, n, ps);
  if (attrs) r->a = *attrs;
  ti_finish(m, c, r, 1);
  cxla_literal *out = ti_run(m, n, args, file, line);
  for (int i = 0; i < n; i++) cxla_literal_destroy(args[i]);
  cx_module_free(m);
  return out;
}

void ti_check_f(cxla_literal *l, int n, const double *want, double tol, const char *file, int line) {
  if (!l) return;
  if (cxla_literal_element_count(l) != n) {
    test_fail(file, line, "%lld elements, expected %d", (long long)cxla_literal_element_count(l), n);
  } else {
    for (int i = 0; i < n; i++) {
      double g = cxla_literal_get_f64(l, i), w = want[i];
      int ok = (isnan(g) && isnan(w)) || (g == w && tol >= 0) ||
               (tol < 0 ? g == w && signbit(g) == signbit(w) : fabs(g - w) <= tol * fmax(1, fabs(w)));
      if (!ok) test_fail(file, line, "element %d: got %.17g, expected %.17g", i, g, w);
    }
  }
  cxla_literal_destroy(l);
}

void ti_check_i(cxla_literal *l, int n, const int64_t *want, const char *file, int line) {
  if (!l) return;
  if (cxla_literal_element_count(l) != n) {
    test_fail(file, line, "%lld elements, expected %d", (long long)cxla_literal_element_count(l), n);
  } else {
    for (int i = 0; i < n; i++) {
      int64_t g = cx_load_i64(l->shape.type, l->data, i);
      if (g != want[i]) test_fail(file, line, "element %d: got %lld, expected %lld", i, (long long)g, (long long)want[i]);
    }
  }
  cxla_literal_destroy(l);
}
