/* attrs.c — the field table, initial values, equality and hashing of instruction attributes,
 * each expanded from ir/attrs.def: a kind's macro below decides what the field takes part in,
 * so no function here lists fields by hand. */
#include <string.h>
#include "ir/attrs.h"

#define MEMBER_SIZE(m) sizeof(((cx_attrs *)0)->m)
const cx_attr_field cx_attr_fields[CX_ATTR_COUNT] = {
#define CX_ATTR_FIELD(id, member, kind, dflt) \
  [CX_ATTR_##id] = {#member, offsetof(cx_attrs, member), MEMBER_SIZE(member), CX_ATTR_KIND_##kind, (int64_t)(dflt)},
#include "ir/attrs.def"
};

/* cx_attr_get_pod reads POD fields as int32_t or int64_t ("+" refuses pointers and structs). */
#define SIZE_CHECK_POD(m) _Static_assert(sizeof(+((cx_attrs *)0)->m) && (MEMBER_SIZE(m) == 4 || MEMBER_SIZE(m) == 8), #m);
#define SIZE_CHECK_INTS(m)
#define SIZE_CHECK_WINDOW(m)
#define SIZE_CHECK_CONV(m)
#define SIZE_CHECK_STR(m)
#define SIZE_CHECK_LITERAL(m)
#define SIZE_CHECK_RAW(m)
#define SIZE_CHECK_GROUPS(m)
#define CX_ATTR_FIELD(id, member, kind, dflt) SIZE_CHECK_##kind(member)
#include "ir/attrs.def"

/* POD fields are int-sized (ints, enums) or int64_t. */
int64_t cx_attr_get_pod(const cx_attrs *a, cx_attr_id f) {
  const void *p = cx_attr_cptr(a, f);
  if (cx_attr_fields[f].size == sizeof(int32_t)) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

void cx_attr_set_pod(cx_attrs *a, cx_attr_id f, int64_t v) {
  void *p = cx_attr_ptr(a, f);
  if (cx_attr_fields[f].size == sizeof(int32_t)) {
    int32_t x = (int32_t)v;
    memcpy(p, &x, sizeof x);
  } else {
    memcpy(p, &v, sizeof v);
  }
}

void cx_attrs_init(cx_attrs *a) {
  memset(a, 0, sizeof *a);
#define INIT_POD(m, d) a->m = d;
#define INIT_INTS(m, d)
#define INIT_WINDOW(m, d)
#define INIT_CONV(m, d)
#define INIT_STR(m, d)
#define INIT_LITERAL(m, d)
#define INIT_RAW(m, d)
#define INIT_GROUPS(m, d)
#define CX_ATTR_FIELD(id, member, kind, dflt) INIT_##kind(member, dflt)
#include "ir/attrs.def"
}

/* ---- equality ---- */

static int ints_eq(const cx_ints *a, const cx_ints *b) {
  return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, sizeof *a->v * (size_t)a->n));
}

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int window_eq(const cx_window *a, const cx_window *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++) {
    const cx_window_dim *x = &a->d[i], *y = &b->d[i];
    if (x->size != y->size || x->stride != y->stride || x->pad_lo != y->pad_lo || x->pad_hi != y->pad_hi ||
        x->lhs_dilate != y->lhs_dilate || x->rhs_dilate != y->rhs_dilate || x->reversal != y->reversal)
      return 0;
  }
  return 1;
}

/* Spatial entries past nspatial are never read (and may be left unset by the label parser). */
static int conv_eq(const cx_conv_dims *x, const cx_conv_dims *y) {
  if (!x != !y) return 0;
  if (!x) return 1;
  if (x->nspatial != y->nspatial || x->in_batch != y->in_batch || x->in_feature != y->in_feature ||
      x->k_in != y->k_in || x->k_out != y->k_out || x->out_batch != y->out_batch || x->out_feature != y->out_feature)
    return 0;
  for (int i = 0; i < x->nspatial && i < CXLA_MAX_RANK; i++)
    if (x->in_spatial[i] != y->in_spatial[i] || x->k_spatial[i] != y->k_spatial[i] ||
        x->out_spatial[i] != y->out_spatial[i])
      return 0;
  return 1;
}

static int literal_eq(const cxla_literal *a, const cxla_literal *b) {
  return a == b || (a && b && cx_literal_equal(a, b));
}

static int i64s_eq(const int64_t *a, const int64_t *b, int64_t n) {
  return n <= 0 || !memcmp(a, b, sizeof *a * (size_t)n);
}

/* The same groups written the same way (a list and the iota form that expands to it print
 * differently, so they are different attributes). */
static int groups_eq(const cx_groups *a, const cx_groups *b) {
  if (!a || !b) return a == b;
  if (a->n != b->n || a->ndims != b->ndims || !i64s_eq(a->start, b->start, a->n + 1) ||
      !i64s_eq(a->ids, b->ids, a->start[a->n]) || !i64s_eq(a->dims, b->dims, a->ndims))
    return 0;
  for (int i = 0; i < a->ndims; i++)
    if (a->perm[i] != b->perm[i]) return 0;
  return 1;
}

static int is_metadata(const cx_raw_attr *r) { return !strcmp(r->key, "metadata"); }

static int raw_eq(int na, const cx_raw_attr *a, int nb, const cx_raw_attr *b) {
  int ka = 0, kb = 0;
  for (int i = 0; i < na; i++) ka += !is_metadata(&a[i]);
  for (int i = 0; i < nb; i++) kb += !is_metadata(&b[i]);
  if (ka != kb) return 0;
  for (int i = 0; i < na; i++) {
    if (is_metadata(&a[i])) continue;
    int found = 0;
    for (int j = 0; j < nb && !found; j++) found = !strcmp(a[i].key, b[j].key) && !strcmp(a[i].value, b[j].value);
    if (!found) return 0;
  }
  return 1;
}

int cx_attrs_equal(const cx_attrs *a, const cx_attrs *b) {
#define EQ_POD(m) if (a->m != b->m) return 0;
#define EQ_INTS(m) if (!ints_eq(&a->m, &b->m)) return 0;
#define EQ_WINDOW(m) if (!window_eq(&a->m, &b->m)) return 0;
#define EQ_CONV(m) if (!conv_eq(a->m, b->m)) return 0;
#define EQ_STR(m) if (!str_eq(a->m, b->m)) return 0;
#define EQ_LITERAL(m) if (!literal_eq(a->m, b->m)) return 0;
#define EQ_RAW(m) if (!raw_eq(a->n##m, a->m, b->n##m, b->m)) return 0;
#define EQ_GROUPS(m) if (!groups_eq(a->m, b->m)) return 0;
#define CX_ATTR_FIELD(id, member, kind, dflt) EQ_##kind(member)
#include "ir/attrs.def"
  return 1;
}

/* ---- hashing: what equality compares, no more ---- */

static uint64_t hash_ints(uint64_t h, const cx_ints *v) {
  h = cx_hash_mix(h, (uint64_t)v->n);
  for (int i = 0; i < v->n; i++) h = cx_hash_mix(h, (uint64_t)v->v[i]);
  return h;
}

static uint64_t hash_window(uint64_t h, const cx_window *w) {
  h = cx_hash_mix(h, (uint64_t)w->rank);
  for (int i = 0; i < w->rank; i++) {
    const cx_window_dim *d = &w->d[i];
    int64_t v[7] = {d->size, d->stride, d->pad_lo, d->pad_hi, d->lhs_dilate, d->rhs_dilate, d->reversal};
    for (int k = 0; k < 7; k++) h = cx_hash_mix(h, (uint64_t)v[k]);
  }
  return h;
}

static uint64_t hash_conv(uint64_t h, const cx_conv_dims *c) {
  if (!c) return cx_hash_mix(h, 0);
  int64_t v[7] = {1 + c->nspatial, c->in_batch, c->in_feature, c->k_in, c->k_out, c->out_batch, c->out_feature};
  for (int k = 0; k < 7; k++) h = cx_hash_mix(h, (uint64_t)v[k]);
  for (int i = 0; i < c->nspatial && i < CXLA_MAX_RANK; i++) {
    h = cx_hash_mix(h, (uint64_t)c->in_spatial[i]);
    h = cx_hash_mix(h, (uint64_t)c->k_spatial[i]);
    h = cx_hash_mix(h, (uint64_t)c->out_spatial[i]);
  }
  return h;
}

static uint64_t hash_str(uint64_t h, const char *s) {
  if (!s) return cx_hash_mix(h, 0);
  for (; *s; s++) h = cx_hash_mix(h, (unsigned char)*s);
  return cx_hash_mix(h, 1);
}

/* A prefix spreads constants well enough; equal literals have equal bytes. */
static uint64_t hash_literal(uint64_t h, const cxla_literal *l) {
  if (!l || !cx_type_is_array(l->shape.type)) return h;
  int64_t nb = cx_shape_bytes(&l->shape);
  const unsigned char *d = l->data;
  for (int64_t i = 0; i < nb && i < 64; i++) h = cx_hash_mix(h, d[i]);
  return h;
}

static uint64_t hash_groups(uint64_t h, const cx_groups *g) {
  if (!g) return cx_hash_mix(h, 0);
  h = cx_hash_mix(h, (uint64_t)g->n + 1);
  for (int64_t i = 0; i < g->start[g->n]; i++) h = cx_hash_mix(h, (uint64_t)g->ids[i]);
  for (int i = 0; i <= g->n; i++) h = cx_hash_mix(h, (uint64_t)g->start[i]);
  h = cx_hash_mix(h, (uint64_t)g->ndims);
  for (int i = 0; i < g->ndims; i++) h = cx_hash_mix(cx_hash_mix(h, (uint64_t)g->dims[i]), (uint64_t)g->perm[i]);
  return h;
}

/* Equality compares kept attributes as a set, without metadata: their count is what is sure
 * to agree. */
static uint64_t hash_raw(uint64_t h, int n, const cx_raw_attr *r) {
  uint64_t k = 0;
  for (int i = 0; i < n; i++) k += !is_metadata(&r[i]);
  return cx_hash_mix(h, k);
}

uint64_t cx_attrs_hash(uint64_t h, const cx_attrs *a) {
#define HASH_POD(m) h = cx_hash_mix(h, (uint64_t)+a->m);
#define HASH_INTS(m) h = hash_ints(h, &a->m);
#define HASH_WINDOW(m) h = hash_window(h, &a->m);
#define HASH_CONV(m) h = hash_conv(h, a->m);
#define HASH_STR(m) h = hash_str(h, a->m);
#define HASH_LITERAL(m) h = hash_literal(h, a->m);
#define HASH_RAW(m) h = hash_raw(h, a->n##m, a->m);
#define HASH_GROUPS(m) h = hash_groups(h, a->m);
#define CX_ATTR_FIELD(id, member, kind, dflt) HASH_##kind(member)
#include "ir/attrs.def"
  return h;
}
