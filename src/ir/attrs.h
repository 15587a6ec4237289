/* attrs.h — instruction attributes as ir/attrs.def describes them: the field table, and the
 * initial values, equality and hashing every field takes part in. */
#ifndef CX_ATTRS_H
#define CX_ATTRS_H
#include <stddef.h>
#include "ir/ir.h"

typedef enum cx_attr_id {
  CX_ATTR_NONE = -1,
#define CX_ATTR_FIELD(id, ...) CX_ATTR_##id,
#include "ir/attrs.def"
  CX_ATTR_COUNT
} cx_attr_id;

typedef enum cx_attr_kind {
  CX_ATTR_KIND_POD, CX_ATTR_KIND_INTS, CX_ATTR_KIND_WINDOW, CX_ATTR_KIND_CONV, CX_ATTR_KIND_STR,
  CX_ATTR_KIND_LITERAL, CX_ATTR_KIND_RAW, CX_ATTR_KIND_GROUPS
} cx_attr_kind;

typedef struct cx_attr_field {
  const char *name;   /* the member, as written in attrs.def ("dot.lhs_batch") */
  size_t offset;      /* where its value is in cx_attrs */
  size_t size;        /* sizeof the member (RAW: the raw pointer; its count is nraw) */
  cx_attr_kind kind;
  int64_t dflt;       /* POD: the value of a new instruction */
} cx_attr_field;

extern const cx_attr_field cx_attr_fields[CX_ATTR_COUNT];

static inline void *cx_attr_ptr(cx_attrs *a, cx_attr_id f) { return (char *)a + cx_attr_fields[f].offset; }
static inline const void *cx_attr_cptr(const cx_attrs *a, cx_attr_id f) {
  return (const char *)a + cx_attr_fields[f].offset;
}
/* A POD field's value (sign-extended from its size) and its assignment. */
int64_t cx_attr_get_pod(const cx_attrs *a, cx_attr_id f);
void cx_attr_set_pod(cx_attrs *a, cx_attr_id f, int64_t v);

/* Every field at its default (group counts 1, everything else empty). */
void cx_attrs_init(cx_attrs *a);
/* Whether two attribute sets mean the same: every field equal, kept attributes compared as a
 * set without metadata (which only says where an instruction came from). */
int cx_attrs_equal(const cx_attrs *a, const cx_attrs *b);
/* Mixes every field into h so that cx_attrs_equal attributes hash alike. */
uint64_t cx_attrs_hash(uint64_t h, const cx_attrs *a);

static inline uint64_t cx_hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

#endif
