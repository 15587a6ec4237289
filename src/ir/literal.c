/* literal.c — host literals: creation, element access, printing and comparison. */
#include <math.h>
#include <string.h>
#include "ir/literal.h"
#include "util/fpenv.h"

static cxla_literal *literal_new(const cx_shape *shape, int zero) {
  cxla_literal *l = cx_calloc(1, sizeof *l);
  if (!l) return NULL;
  if (!cx_shape_copy(&l->shape, shape, NULL)) { cx_free(l); return NULL; }
  if (shape->type == CXLA_TUPLE) {
    l->elems = cx_calloc((size_t)(shape->ntuple ? shape->ntuple : 1), sizeof *l->elems);
    if (!l->elems) { cxla_literal_destroy(l); return NULL; }
    l->nelems = shape->ntuple; /* only once elems exists: destroy walks nelems entries */
    for (int i = 0; i < shape->ntuple; i++)
      if (!(l->elems[i] = literal_new(&shape->tuple[i], zero))) { cxla_literal_destroy(l); return NULL; }
    return l;
  }
  if (shape->type == CXLA_TOKEN) return l; /* an ordering value: no data */
  int64_t bytes = cx_shape_bytes(shape);
  if (bytes < 0 || !cx_type_is_array(shape->type)) { cxla_literal_destroy(l); return NULL; }
  l->data = cx_block_alloc((size_t)(bytes ? bytes : 1));
  if (!l->data) { cxla_literal_destroy(l); return NULL; }
  if (zero) memset(l->data, 0, (size_t)(bytes ? bytes : 1));
  return l;
}

cxla_literal *cx_literal_new(const cx_shape *shape) { return literal_new(shape, 1); }
cxla_literal *cx_literal_new_uninit(const cx_shape *shape) { return literal_new(shape, 0); }

void cxla_literal_destroy(cxla_literal *l) {
  if (!l) return;
  for (int i = 0; i < l->nelems; i++) cxla_literal_destroy(l->elems[i]);
  cx_free(l->elems);
  if (l->data) {
    int64_t bytes = cx_shape_bytes(&l->shape);
    cx_block_free(l->data, (size_t)(bytes > 0 ? bytes : 1));
  }
  cx_shape_free_heap(&l->shape);
  cx_free(l);
}

static int check_dims(int rank, const int64_t *dims) {
  if (rank < 0 || rank > CXLA_MAX_RANK || (rank && !dims)) return 0;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return 0;
  return 1;
}

cxla_literal *cxla_literal_create(cxla_context *ctx, cxla_type type, int rank, const int64_t *dims) {
  if (!cx_type_is_array(type) || !check_dims(rank, dims)) {
    cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_create: bad type or dimensions");
    return NULL;
  }
  cx_shape s = cx_shape_array(type, rank, dims);
  if (cx_shape_bytes(&s) < 0) {
    cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_create: shape too large");
    return NULL;
  }
  cxla_literal *l = cx_literal_new(&s);
  if (!l) cx_oom(ctx);
  return l;
}

cxla_literal *cxla_literal_from_data(cxla_context *ctx, cxla_type type, int rank, const int64_t *dims,
                                     const void *data, size_t nbytes) {
  cxla_literal *l = cxla_literal_create(ctx, type, rank, dims);
  if (!l) return NULL;
  size_t want = (size_t)cx_shape_bytes(&l->shape);
  if (nbytes != want || (want && !data)) {
    cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_from_data: %zu bytes given, shape needs %zu",
             nbytes, want);
    cxla_literal_destroy(l);
    return NULL;
  }
  if (want) memcpy(l->data, data, want);
  return l;
}

cxla_literal *cxla_literal_token(cxla_context *ctx) {
  cx_shape s = {0};
  s.type = CXLA_TOKEN;
  cxla_literal *l = cx_literal_new(&s);
  if (!l) cx_oom(ctx);
  return l;
}

cxla_literal *cxla_literal_tuple(cxla_context *ctx, int n, cxla_literal **elems) {
  cxla_literal *l = cx_calloc(1, sizeof *l);
  cx_shape *shapes = cx_calloc((size_t)(n > 0 ? n : 1), sizeof *shapes);
  cxla_literal **el = cx_calloc((size_t)(n > 0 ? n : 1), sizeof *el);
  int ok = l && shapes && el && n >= 0;
  for (int i = 0; ok && i < n; i++) ok = elems[i] && cx_shape_copy(&shapes[i], &elems[i]->shape, NULL);
  if (!ok) {
    for (int i = 0; i < n; i++) { if (shapes) cx_shape_free_heap(&shapes[i]); cxla_literal_destroy(elems[i]); }
    cx_free(shapes); cx_free(el); cx_free(l);
    if (n < 0) cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_tuple: negative count");
    else cx_oom(ctx);
    return NULL;
  }
  l->shape.type = CXLA_TUPLE;
  l->shape.ntuple = n;
  l->shape.tuple = shapes;
  l->nelems = n;
  l->elems = el;
  for (int i = 0; i < n; i++) el[i] = elems[i];
  return l;
}

cxla_literal *cxla_literal_clone(cxla_context *ctx, const cxla_literal *src) {
  cxla_literal *l = src ? cx_literal_new(&src->shape) : NULL;
  if (!l) { cx_oom(ctx); return NULL; }
  if (src->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < src->nelems; i++) {
      cxla_literal *e = cxla_literal_clone(ctx, src->elems[i]);
      if (!e) { cxla_literal_destroy(l); return NULL; }
      cxla_literal_destroy(l->elems[i]);
      l->elems[i] = e;
    }
  } else if (src->shape.type != CXLA_TOKEN) {
    memcpy(l->data, src->data, (size_t)cx_shape_bytes(&src->shape));
  }
  return l;
}

cxla_type cxla_literal_type(const cxla_literal *l) { return l->shape.type; }
int cxla_literal_rank(const cxla_literal *l) { return l->shape.rank; }
const int64_t *cxla_literal_dims(const cxla_literal *l) { return l->shape.dims; }
int64_t cxla_literal_element_count(const cxla_literal *l) { return cx_shape_elems(&l->shape); }
size_t cxla_literal_size_bytes(const cxla_literal *l) {
  int64_t b = cx_shape_bytes(&l->shape);
  return b < 0 ? 0 : (size_t)b;
}
void *cxla_literal_data(cxla_literal *l) { return l->shape.type == CXLA_TUPLE ? NULL : l->data; }
int cxla_literal_tuple_size(const cxla_literal *l) { return l->shape.type == CXLA_TUPLE ? l->nelems : -1; }
cxla_literal *cxla_literal_tuple_get(cxla_literal *l, int i) {
  return l->shape.type == CXLA_TUPLE && i >= 0 && i < l->nelems ? l->elems[i] : NULL;
}
double cxla_literal_get_f64(const cxla_literal *l, int64_t i) { return cx_load_f64(l->shape.type, l->data, i); }
void cxla_literal_set_f64(cxla_literal *l, int64_t i, double v) { cx_store_f64(l->shape.type, l->data, i, v); }

void cx_literal_print_elem(cx_sb *sb, const cxla_literal *l, int64_t i) {
  cxla_type t = l->shape.type;
  switch (cx_type_kind(t)) {
  case CX_KIND_PRED: cx_sb_puts(sb, cx_load_i64(t, l->data, i) ? "true" : "false"); break;
  case CX_KIND_SINT: cx_sb_printf(sb, "%lld", (long long)cx_load_i64(t, l->data, i)); break;
  case CX_KIND_UINT: cx_sb_printf(sb, "%llu", (unsigned long long)cx_load_i64(t, l->data, i)); break;
  case CX_KIND_FLOAT: cx_sb_put_double(sb, cx_load_f64(t, l->data, i), t != CXLA_F64); break;
  case CX_KIND_COMPLEX: { /* HLO's complex literal: (real, imaginary) */
    double re, im;
    cx_load_complex(t, l->data, i, &re, &im);
    cx_sb_putc(sb, '(');
    cx_sb_put_double(sb, re, t != CXLA_C128);
    cx_sb_puts(sb, ", ");
    cx_sb_put_double(sb, im, t != CXLA_C128);
    cx_sb_putc(sb, ')');
    break;
  }
  case CX_KIND_NONE: cx_sb_puts(sb, "?"); break;
  }
}

static void print_dims(cx_sb *sb, const cxla_literal *l, int d, int64_t *pos) {
  if (d == l->shape.rank) { cx_literal_print_elem(sb, l, (*pos)++); return; }
  cx_sb_putc(sb, '{');
  for (int64_t i = 0; i < l->shape.dims[d]; i++) {
    if (i) cx_sb_puts(sb, ", ");
    print_dims(sb, l, d + 1, pos);
  }
  cx_sb_putc(sb, '}');
}

void cx_literal_print(cx_sb *sb, const cxla_literal *l, int with_shape) {
  if (l->shape.type == CXLA_TOKEN) { /* no value to show */
    cx_sb_puts(sb, with_shape ? "token[]" : "token");
    return;
  }
  if (with_shape) {
    cx_shape_print(sb, &l->shape, 0);
    cx_sb_putc(sb, ' ');
  }
  if (l->shape.type == CXLA_TUPLE) {
    cx_sb_putc(sb, '(');
    for (int i = 0; i < l->nelems; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_literal_print(sb, l->elems[i], 0);
    }
    cx_sb_putc(sb, ')');
    return;
  }
  int64_t pos = 0;
  print_dims(sb, l, 0, &pos);
}

char *cxla_literal_to_string(const cxla_literal *l) {
  if (!l) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  unsigned env = cx_fpenv_enter(0); /* a denormal prints as itself (util/fpenv.h) */
  cx_literal_print(&sb, l, 1);
  cx_fpenv_leave(env);
  return cx_sb_take(&sb);
}

static void describe_index(cx_sb *why, const cx_shape *s, int64_t i) {
  int64_t st[CXLA_MAX_RANK];
  cx_shape_strides(s, st);
  cx_sb_putc(why, '[');
  for (int d = 0; d < s->rank; d++) cx_sb_printf(why, "%s%lld", d ? "," : "", (long long)((i / st[d]) % s->dims[d]));
  cx_sb_putc(why, ']');
}

/* Complex elements are close when each part matches in kind (NaN with NaN, an infinity with
 * the same one) and the finite ones are near in the complex plane: |got - want| <= atol +
 * rtol*|want|, so a part that should be 0 may carry the rounding of the other one. */
int cx_complex_close(cxla_type t, const void *got, const void *want, int64_t i, double rtol, double atol) {
  double gr, gi, wr, wi;
  cx_load_complex(t, got, i, &gr, &gi);
  cx_load_complex(t, want, i, &wr, &wi);
  double g[2] = {gr, gi}, w[2] = {wr, wi};
  for (int k = 0; k < 2; k++) {
    if (isnan(g[k]) || isnan(w[k])) {
      if (!(isnan(g[k]) && isnan(w[k]))) return 0;
      g[k] = w[k] = 0;
    } else if (isinf(g[k]) || isinf(w[k])) {
      if (g[k] != w[k]) return 0;
      g[k] = w[k] = 0;
    }
  }
  return hypot(g[0] - w[0], g[1] - w[1]) <= atol + rtol * hypot(w[0], w[1]);
}

int cx_literal_compare(const cxla_literal *got, const cxla_literal *want, double rtol, double atol,
                       cx_sb *why) {
  char a[256], b[256];
  if (!cx_shape_equal(&got->shape, &want->shape)) {
    if (why) cx_sb_printf(why, "shape %s, expected %s", cx_shape_str(&got->shape, a, sizeof a),
                          cx_shape_str(&want->shape, b, sizeof b));
    return 0;
  }
  if (got->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < got->nelems; i++) {
      if (!cx_literal_compare(got->elems[i], want->elems[i], rtol, atol, why)) {
        if (why) cx_sb_printf(why, " (in tuple element %d)", i);
        return 0;
      }
    }
    return 1;
  }
  if (got->shape.type == CXLA_TOKEN) return 1;
  cxla_type t = got->shape.type;
  int64_t n = cx_shape_elems(&got->shape);
  for (int64_t i = 0; i < n; i++) {
    int ok;
    if (cx_type_is_float(t)) {
      double g = cx_load_f64(t, got->data, i), w = cx_load_f64(t, want->data, i);
      if (isnan(w) || isnan(g)) ok = isnan(w) && isnan(g);
      else if (isinf(w) || isinf(g)) ok = g == w;
      else ok = fabs(g - w) <= atol + rtol * fabs(w);
    } else if (cx_type_is_complex(t)) {
      ok = cx_complex_close(t, got->data, want->data, i, rtol, atol);
    } else {
      ok = cx_load_i64(t, got->data, i) == cx_load_i64(t, want->data, i);
    }
    if (!ok) {
      if (why) {
        cx_sb_puts(why, "element ");
        describe_index(why, &got->shape, i);
        cx_sb_puts(why, " is ");
        cx_literal_print_elem(why, got, i);
        cx_sb_puts(why, ", expected ");
        cx_literal_print_elem(why, want, i);
      }
      return 0;
    }
  }
  return 1;
}

int cx_literal_equal(const cxla_literal *a, const cxla_literal *b) {
  if (!cx_shape_equal(&a->shape, &b->shape)) return 0;
  if (a->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < a->nelems; i++)
      if (!cx_literal_equal(a->elems[i], b->elems[i])) return 0;
    return 1;
  }
  if (a->shape.type == CXLA_TOKEN) return 1;
  return memcmp(a->data, b->data, (size_t)cx_shape_bytes(&a->shape)) == 0;
}

int cx_literal_leaves(const cxla_literal *l, const cxla_literal **out, int *k, int cap) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!cx_literal_leaves(l->elems[i], out, k, cap)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = l;
  return 1;
}
