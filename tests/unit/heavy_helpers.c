/* heavy_helpers.c — see heavy_helpers.h. Failures to build (OOM in a test) are reported with
 * test_fail and return NULL; the calling test then fails on its own checks. */
#include "heavy_helpers.h"

int hh_init(hh *h) {
  h->m = cx_module_new(test_ctx(), "heavy_test");
  h->entry = h->m ? cx_comp_new(h->m, "entry") : NULL;
  if (!h->entry) {
    test_fail(__FILE__, __LINE__, "hh_init: out of memory");
    cx_module_free(h->m);
    h->m = NULL;
    return 0;
  }
  h->entry->is_entry = 1;
  cx_interp_init(&h->st, h->m);
  return 1;
}

void hh_free(hh *h) {
  cx_module_free(h->m);
  h->m = NULL;
}

cxla_literal *hh_lit(cxla_type t, int rank, const int64_t *dims, const double *v) {
  cxla_literal *l = cxla_literal_create(test_ctx(), t, rank, dims);
  if (!l) {
    test_fail(__FILE__, __LINE__, "hh_lit: %s", cxla_context_errmsg(test_ctx()));
    return NULL;
  }
  int64_t n = cxla_literal_element_count(l);
  for (int64_t i = 0; v && i < n; i++) cxla_literal_set_f64(l, i, v[i]);
  return l;
}

cxla_literal *hh_scalar(cxla_type t, double v) { return hh_lit(t, 0, NULL, &v); }

cxla_literal *hh_rand(cxla_type t, int rank, const int64_t *dims, unsigned seed, int lo, int hi) {
  cxla_literal *l = hh_lit(t, rank, dims, NULL);
  if (!l) return NULL;
  uint32_t x = seed * 2654435761u + 12345u;
  int64_t n = cxla_literal_element_count(l);
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    cxla_literal_set_f64(l, i, lo + (double)(x % (uint32_t)(hi - lo + 1)));
  }
  return l;
}

void hh_free_lits(int n, cxla_literal **l) {
  for (int i = 0; i < n; i++) cxla_literal_destroy(l[i]);
}

cx_comp *hh_comp(hh *h, const char *name) { return h->m ? cx_comp_new(h->m, name) : NULL; }

static cx_instr *scalar_instr(cx_comp *c, cx_op op, cxla_type t, int n, cx_instr *const *ops) {
  if (!c) return NULL;
  for (int i = 0; i < n; i++)
    if (!ops[i]) return NULL;
  cx_shape s = cx_shape_scalar(t);
  return cx_instr_new(c, op, &s, n, ops);
}

cx_instr *hh_param(cx_comp *c, int index, cxla_type t) {
  cx_instr *p = scalar_instr(c, CX_OP_PARAMETER, t, 0, NULL);
  if (p) p->a.index = index;
  return p;
}

cx_instr *hh_op2(cx_comp *c, cx_op op, cx_instr *a, cx_instr *b) {
  cx_instr *ops[2] = {a, b};
  return a ? scalar_instr(c, op, a->shape.type, 2, ops) : NULL;
}

cx_instr *hh_cmp(cx_comp *c, cxla_compare_dir dir, cx_cmp_type ct, cx_instr *a, cx_instr *b) {
  cx_instr *ops[2] = {a, b};
  cx_instr *r = scalar_instr(c, CX_OP_COMPARE, CXLA_PRED, 2, ops);
  if (r) {
    r->a.dir = dir;
    r->a.cmp_type = ct;
  }
  return r;
}

cx_instr *hh_select(cx_comp *c, cx_instr *p, cx_instr *a, cx_instr *b) {
  cx_instr *ops[3] = {p, a, b};
  return a ? scalar_instr(c, CX_OP_SELECT, a->shape.type, 3, ops) : NULL;
}

cx_instr *hh_tuple(cx_comp *c, int n, cx_instr *const *elems) {
  cx_shape el[16];
  for (int i = 0; i < n; i++) {
    if (!elems[i]) return NULL;
    el[i] = elems[i]->shape;
  }
  cx_shape s = {0};
  s.type = CXLA_TUPLE;
  s.ntuple = n;
  s.tuple = el;
  return c ? cx_instr_new(c, CX_OP_TUPLE, &s, n, elems) : NULL;
}

cx_comp *hh_end(hh *h, cx_comp *c, cx_instr *root) {
  if (!c || !root) {
    test_fail(__FILE__, __LINE__, "hh_end: building a computation failed");
    return NULL;
  }
  c->root = root;
  if (!cx_comp_index_params(c) || !cx_module_add_comp(h->m, c)) {
    test_fail(__FILE__, __LINE__, "hh_end: bad parameters or out of memory");
    return NULL;
  }
  return c;
}

cx_comp *hh_binary(hh *h, cx_op op, cxla_type t) {
  cx_comp *c = hh_comp(h, cx_op_name(op));
  return hh_end(h, c, hh_op2(c, op, hh_param(c, 0, t), hh_param(c, 1, t)));
}

cx_comp *hh_comparator(hh *h, int n, const cxla_type *types, int a, int b,
                       cxla_compare_dir dir, cx_cmp_type ct) {
  cx_comp *c = hh_comp(h, "cmp");
  cx_instr *p[32];
  for (int i = 0; i < 2 * n; i++) p[i] = hh_param(c, i, types[i / 2]);
  return hh_end(h, c, hh_cmp(c, dir, ct, p[a], p[b]));
}

cx_instr *hh_instr(hh *h, cx_op op, int nres, const cx_shape *rs, int nops,
                   cxla_literal *const *ops) {
  if (!h->m) return NULL;
  cx_instr *params[64];
  for (int i = 0; i < nops; i++) {
    if (!ops[i]) return NULL;
    params[i] = cx_instr_new(h->entry, CX_OP_PARAMETER, &ops[i]->shape, 0, NULL);
    if (!params[i]) return NULL;
    params[i]->a.index = i;
  }
  cx_shape s = rs[0];
  if (nres > 1 || nres < 0) {
    s = (cx_shape){0};
    s.type = CXLA_TUPLE;
    s.ntuple = nres < 0 ? -nres : nres;
    s.tuple = (cx_shape *)rs;
  }
  cx_instr *in = cx_instr_new(h->entry, op, &s, nops, params);
  if (!in) test_fail(__FILE__, __LINE__, "hh_instr: out of memory");
  return in;
}

cx_instr *hh_instr1(hh *h, cx_op op, cxla_type t, int rank, const int64_t *dims, int nops,
                    cxla_literal *const *ops) {
  cx_shape s = cx_shape_array(t, rank, dims);
  return hh_instr(h, op, 1, &s, nops, ops);
}

void hh_ints(hh *h, cx_ints *dst, int n, const int64_t *v) {
  if (!cx_ints_set(h->m, dst, n, v)) test_fail(__FILE__, __LINE__, "hh_ints: out of memory");
}

void hh_window(hh *h, cx_instr *in, int rank, const int64_t (*w)[7]) {
  cx_window_dim *d = cx_arena_alloc(&h->m->arena, sizeof *d * (size_t)(rank ? rank : 1));
  if (!d) { test_fail(__FILE__, __LINE__, "hh_window: out of memory"); return; }
  for (int i = 0; i < rank; i++) {
    d[i].size = w[i][0];
    d[i].stride = w[i][1];
    d[i].pad_lo = w[i][2];
    d[i].pad_hi = w[i][3];
    d[i].lhs_dilate = w[i][4];
    d[i].rhs_dilate = w[i][5];
    d[i].reversal = (int)w[i][6];
  }
  in->a.window.rank = rank;
  in->a.window.d = d;
}

int hh_expect_at(const char *file, int line, const cxla_literal *got, cxla_type t, int rank,
                 const int64_t *dims, const double *want, double tol) {
  if (!got) { test_fail(file, line, "no literal"); return 0; }
  if (got->shape.type != t || got->shape.rank != rank) {
    test_fail(file, line, "type/rank %s/%d, expected %s/%d", cxla_type_name(got->shape.type),
              got->shape.rank, cxla_type_name(t), rank);
    return 0;
  }
  for (int d = 0; d < rank; d++)
    if (got->shape.dims[d] != dims[d]) {
      test_fail(file, line, "dim %d is %lld, expected %lld", d, (long long)got->shape.dims[d],
                (long long)dims[d]);
      return 0;
    }
  int64_t n = cxla_literal_element_count(got);
  for (int64_t i = 0; i < n; i++) {
    double g = cxla_literal_get_f64(got, i), w = want[i];
    int ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= tol;
    if (ok && tol == 0 && g == 0 && signbit(g) != signbit(w)) ok = 0;
    if (!ok) {
      test_fail(file, line, "element %lld is %.9g, expected %.9g", (long long)i, g, w);
      return 0;
    }
  }
  return 1;
}
