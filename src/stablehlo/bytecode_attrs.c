/* bytecode_attrs.c — the primitives every part of the bytecode reader reads with (prefix
 * varints, zigzag varints, blobs, sections, APInts) and the attribute/type table: the offset
 * section cut into entries, each entry decoded once, on first use, by its dialect's decoder
 * (builtin_codes.c, vhlo_codes.c) or kept opaque. Entries refer to each other by index, so a
 * read nests; the nesting is bounded and a cycle is an error, never a hang or a stack overflow. */
#include <string.h>
#include "stablehlo/bytecode_int.h"

/* Outputs are set on failure too, so no caller ever reads an unset value. */
cxla_status cx_bc_byte(cx_bc *bc, cx_bc_cur *c, uint8_t *v) {
  *v = 0;
  if (c->p >= c->end) return cx_bc_fail(bc, c->p, "unexpected end of data (expected a byte)");
  *v = *c->p++;
  return CXLA_OK;
}

cxla_status cx_bc_bytes(cx_bc *bc, cx_bc_cur *c, size_t n, const uint8_t **v) {
  *v = NULL;
  if (n > cx_bc_left(c))
    return cx_bc_fail(bc, c->p, "%zu bytes needed but only %zu remain", n, cx_bc_left(c));
  *v = c->p;
  c->p += n;
  return CXLA_OK;
}

/* MLIR's PrefixVarInt: the count of trailing zero bits of the first byte is the number of
 * bytes that follow; a first byte of 0 means 8 full bytes follow. */
cxla_status cx_bc_varint(cx_bc *bc, cx_bc_cur *c, uint64_t *v) {
  const uint8_t *at = c->p;
  *v = 0;
  uint8_t b;
  CX_TRY(cx_bc_byte(bc, c, &b));
  if (b & 1) {
    *v = b >> 1;
    return CXLA_OK;
  }
  unsigned extra = b ? (unsigned)__builtin_ctz(b) : 8;
  if (extra > cx_bc_left(c)) return cx_bc_fail(bc, at, "truncated varint");
  uint64_t r = 0;
  for (unsigned i = 0; i < extra; i++) r |= (uint64_t)c->p[i] << (8 * i);
  c->p += extra;
  if (extra == 8) {
    *v = r;
  } else {
    /* value bits: the first byte's bits above the marker, then the following bytes */
    r = (r << 8) | b;
    *v = r >> (extra + 1);
  }
  return CXLA_OK;
}

cxla_status cx_bc_svarint(cx_bc *bc, cx_bc_cur *c, int64_t *v) {
  uint64_t u;
  *v = 0;
  CX_TRY(cx_bc_varint(bc, c, &u));
  *v = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
  return CXLA_OK;
}

cxla_status cx_bc_varint_flag(cx_bc *bc, cx_bc_cur *c, uint64_t *v, int *flag) {
  *flag = 0;
  CX_TRY(cx_bc_varint(bc, c, v));
  *flag = (int)(*v & 1);
  *v >>= 1;
  return CXLA_OK;
}

cxla_status cx_bc_count(cx_bc *bc, cx_bc_cur *c, size_t min_bytes, const char *what, int64_t *n) {
  const uint8_t *at = c->p;
  uint64_t v;
  *n = 0;
  CX_TRY(cx_bc_varint(bc, c, &v));
  size_t left = cx_bc_left(c);
  if (min_bytes && v > left / min_bytes)
    return cx_bc_fail(bc, at, "%s count %llu is more than the %zu remaining bytes can hold", what,
                      (unsigned long long)v, left);
  if (v > (uint64_t)INT32_MAX) return cx_bc_fail(bc, at, "%s count %llu is too large", what,
                                                 (unsigned long long)v);
  *n = (int64_t)v;
  return CXLA_OK;
}

cxla_status cx_bc_blob(cx_bc *bc, cx_bc_cur *c, const uint8_t **data, size_t *len) {
  uint64_t n;
  CX_TRY(cx_bc_varint(bc, c, &n));
  if (n > cx_bc_left(c))
    return cx_bc_fail(bc, c->p, "blob of %llu bytes but only %zu remain", (unsigned long long)n,
                      cx_bc_left(c));
  *len = (size_t)n;
  return cx_bc_bytes(bc, c, (size_t)n, data);
}

/* Padding bytes (0xCB) up to a multiple of align counted from the start of the file, which is
 * what the writer aligned to (MLIR checks the buffer itself is aligned that much). */
cxla_status cx_bc_align(cx_bc *bc, cx_bc_cur *c, uint64_t align) {
  if (align == 0 || (align & (align - 1)))
    return cx_bc_fail(bc, c->p, "alignment %llu is not a power of two", (unsigned long long)align);
  while ((uint64_t)(c->p - c->base) & (align - 1)) {
    if (c->p >= c->end) return cx_bc_fail(bc, c->p, "unexpected end of data in alignment padding");
    if (*c->p != 0xCB)
      return cx_bc_fail(bc, c->p, "expected alignment byte 0xCB, found 0x%02X", *c->p);
    c->p++;
  }
  return CXLA_OK;
}

cxla_status cx_bc_section(cx_bc *bc, cx_bc_cur *c, int *id, cx_bc_cur *data) {
  const uint8_t *at = c->p;
  uint8_t b;
  uint64_t len;
  CX_TRY(cx_bc_byte(bc, c, &b));
  CX_TRY(cx_bc_varint(bc, c, &len));
  *id = b & 0x7F;
  if (*id > 8) return cx_bc_fail(bc, at, "invalid section id %d", *id);
  if (b & 0x80) {
    uint64_t align;
    CX_TRY(cx_bc_varint(bc, c, &align));
    CX_TRY(cx_bc_align(bc, c, align));
  }
  if (len > cx_bc_left(c))
    return cx_bc_fail(bc, at, "section %d claims %llu bytes but only %zu remain", *id,
                      (unsigned long long)len, cx_bc_left(c));
  data->base = c->base;
  data->p = c->p;
  data->end = c->p + len;
  c->p += len;
  return CXLA_OK;
}

cxla_status cx_bc_apint(cx_bc *bc, cx_bc_cur *c, unsigned width, uint64_t *bits) {
  if (width <= 8) {
    uint8_t b;
    CX_TRY(cx_bc_byte(bc, c, &b));
    *bits = width == 8 ? b : (b & ((1u << width) - 1));
    return CXLA_OK;
  }
  if (width <= 64) {
    int64_t v;
    CX_TRY(cx_bc_svarint(bc, c, &v));
    *bits = width == 64 ? (uint64_t)v : ((uint64_t)v & ((UINT64_C(1) << width) - 1));
    return CXLA_OK;
  }
  int64_t nwords;
  CX_TRY(cx_bc_count(bc, c, 1, "APInt word", &nwords));
  *bits = 0;
  for (int64_t i = 0; i < nwords; i++) {
    int64_t w;
    CX_TRY(cx_bc_svarint(bc, c, &w));
    if (i == 0) *bits = (uint64_t)w;
  }
  return CXLA_OK;
}

cxla_status cx_bc_svarints(cx_bc *bc, cx_bc_cur *c, int *n, const int64_t **v) {
  int64_t cnt;
  CX_TRY(cx_bc_count(bc, c, 1, "integer list", &cnt));
  int64_t *a = cx_bc_array(bc, cnt, sizeof *a);
  if (!a && cnt) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < cnt; i++) CX_TRY(cx_bc_svarint(bc, c, &a[i]));
  *n = (int)cnt;
  *v = a;
  return CXLA_OK;
}

cxla_status cx_bc_string_ref(cx_bc *bc, cx_bc_cur *c, const char **s, size_t *len) {
  const uint8_t *at = c->p;
  uint64_t i;
  CX_TRY(cx_bc_varint(bc, c, &i));
  if (i >= (uint64_t)bc->nstrings)
    return cx_bc_fail(bc, at, "string index %llu out of range (%lld strings)", (unsigned long long)i,
                      (long long)bc->nstrings);
  *s = bc->strings[i];
  if (len) *len = bc->string_lens[i];
  return CXLA_OK;
}

cx_mlir_attr *cx_bc_new_attr(cx_bc *bc, cx_mlir_attr_kind kind, const char *dialect) {
  cx_mlir_attr *a = cx_bc_alloc(bc, sizeof *a);
  if (a) {
    a->kind = kind;
    a->dialect = dialect;
  }
  return a;
}

cx_mlir_type *cx_bc_new_type(cx_bc *bc, cx_mlir_type_kind kind, const char *dialect) {
  cx_mlir_type *t = cx_bc_alloc(bc, sizeof *t);
  if (t) {
    t->kind = kind;
    t->dialect = dialect;
  }
  return t;
}

/* ---- the table ---- */

static cxla_status cut_entries(cx_bc *bc, cx_bc_cur *offs, cx_bc_cur sect, cx_bc_entry *e, int64_t n,
                               size_t *pos) {
  int64_t i = 0;
  while (i < n) {
    const uint8_t *at = offs->p;
    uint64_t d;
    int64_t cnt;
    CX_TRY(cx_bc_varint(bc, offs, &d));
    if (d >= (uint64_t)bc->ndialects)
      return cx_bc_fail(bc, at, "dialect index %llu out of range", (unsigned long long)d);
    CX_TRY(cx_bc_count(bc, offs, 1, "attribute/type group", &cnt));
    if (cnt > n - i) return cx_bc_fail(bc, at, "attribute/type group runs past the table's %lld entries",
                                       (long long)n);
    for (int64_t k = 0; k < cnt; k++, i++) {
      uint64_t size;
      int custom;
      const uint8_t *eat = offs->p;
      CX_TRY(cx_bc_varint_flag(bc, offs, &size, &custom));
      size_t total = cx_bc_left(&sect);
      if (*pos > total || size > total - *pos)
        return cx_bc_fail(bc, eat, "attribute/type entry of %llu bytes runs past its section",
                          (unsigned long long)size);
      e[i].dialect = (int64_t)d;
      e[i].custom = custom;
      e[i].data = sect.p + *pos;
      e[i].len = (size_t)size;
      *pos += (size_t)size;
    }
  }
  return CXLA_OK;
}

cxla_status cx_bc_attr_table(cx_bc *bc, cx_bc_cur sect, cx_bc_cur offs) {
  int64_t na, nt;
  /* every entry has at least one byte of offset, so both counts are bounded by the section */
  CX_TRY(cx_bc_count(bc, &offs, 1, "attribute", &na));
  CX_TRY(cx_bc_count(bc, &offs, 1, "type", &nt));
  if (na + nt > (int64_t)cx_bc_left(&offs))
    return cx_bc_fail(bc, offs.p, "%lld attributes and %lld types cannot fit in the offset section",
                      (long long)na, (long long)nt);
  bc->attrs = cx_bc_array(bc, na, sizeof *bc->attrs);
  bc->types = cx_bc_array(bc, nt, sizeof *bc->types);
  if ((na && !bc->attrs) || (nt && !bc->types)) return CXLA_ERR_OUT_OF_MEMORY;
  bc->nattrs = na;
  bc->ntypes = nt;
  size_t pos = 0;
  CX_TRY(cut_entries(bc, &offs, sect, bc->attrs, na, &pos));
  CX_TRY(cut_entries(bc, &offs, sect, bc->types, nt, &pos));
  if (offs.p != offs.end)
    return cx_bc_fail(bc, offs.p, "unexpected trailing data in the attribute/type offset section");
  return CXLA_OK;
}

/* An entry MLIR wrote as assembly text (no custom encoding), or one of a dialect this reader
 * does not decode: kept as bytes for the translator to refuse by name. */
static cxla_status read_opaque(cx_bc *bc, cx_bc_entry *e, int is_attr, const void **out) {
  const char *dialect = bc->dialect_names[e->dialect];
  const char *text = NULL;
  if (!e->custom) {
    const uint8_t *nul = e->len ? memchr(e->data, 0, e->len) : NULL;
    if (!nul) return cx_bc_fail(bc, e->data, "assembly-format entry without a terminating NUL");
    if ((size_t)(nul - e->data) + 1 != e->len)
      return cx_bc_fail(bc, nul + 1, "trailing bytes after an assembly-format entry");
    text = cx_arena_strndup(bc->A, (const char *)e->data, (size_t)(nul - e->data));
    if (!text) return cx_bc_oom(bc);
  }
  const uint8_t *raw = e->len ? cx_arena_memdup(bc->A, e->data, e->len) : NULL;
  if (e->len && !raw) return cx_bc_oom(bc);
  if (is_attr) {
    cx_mlir_attr *a = cx_bc_new_attr(bc, CX_MLIR_ATTR_OPAQUE, dialect);
    if (!a) return CXLA_ERR_OUT_OF_MEMORY;
    a->u.opaque.raw = raw;
    a->u.opaque.raw_len = e->len;
    a->u.opaque.asm_text = text;
    *out = a;
  } else {
    cx_mlir_type *t = cx_bc_new_type(bc, CX_MLIR_TYPE_OPAQUE, dialect);
    if (!t) return CXLA_ERR_OUT_OF_MEMORY;
    t->raw = raw;
    t->raw_len = e->len;
    t->asm_text = text;
    *out = t;
  }
  return CXLA_OK;
}

static cxla_status read_entry(cx_bc *bc, const uint8_t *at, uint64_t idx, int is_attr, const void **out) {
  const char *what = is_attr ? "attribute" : "type";
  int64_t n = is_attr ? bc->nattrs : bc->ntypes;
  if (idx >= (uint64_t)n)
    return cx_bc_fail(bc, at, "%s index %llu out of range (%lld %ss)", what, (unsigned long long)idx,
                      (long long)n, what);
  cx_bc_entry *e = is_attr ? &bc->attrs[idx] : &bc->types[idx];
  if (e->state == 2) {
    *out = e->value;
    return CXLA_OK;
  }
  if (e->state == 1) return cx_bc_fail(bc, e->data, "%s %llu refers to itself", what, (unsigned long long)idx);
  if (bc->depth >= CX_BC_MAX_DEPTH)
    return cx_bc_fail(bc, e->data, "attributes/types nested more than %d deep", CX_BC_MAX_DEPTH);
  e->state = 1;
  bc->depth++;
  const char *dialect = bc->dialect_names[e->dialect];
  cx_bc_cur c = {bc->buf, e->data, e->data + e->len};
  cxla_status s;
  const void *v = NULL;
  if (!e->custom) {
    s = read_opaque(bc, e, is_attr, &v);
    c.p = c.end;
  } else if (!strcmp(dialect, "builtin")) {
    s = is_attr ? cx_builtin_read_attr(bc, &c, (const cx_mlir_attr **)&v)
                : cx_builtin_read_type(bc, &c, (const cx_mlir_type **)&v);
  } else if (!strcmp(dialect, "vhlo")) {
    s = is_attr ? cx_vhlo_read_attr(bc, &c, (const cx_mlir_attr **)&v)
                : cx_vhlo_read_type(bc, &c, (const cx_mlir_type **)&v);
  } else {
    s = read_opaque(bc, e, is_attr, &v);
    c.p = c.end;
  }
  bc->depth--;
  if (s != CXLA_OK) {
    e->state = 0;
    return s;
  }
  if (c.p != c.end) {
    e->state = 0;
    return cx_bc_fail(bc, c.p, "unexpected trailing bytes after %s entry %llu (%s)", what,
                      (unsigned long long)idx, dialect);
  }
  e->state = 2;
  e->value = v;
  *out = v;
  return CXLA_OK;
}

cxla_status cx_bc_attr_at(cx_bc *bc, const uint8_t *at, uint64_t idx, const cx_mlir_attr **out) {
  const void *v = NULL;
  CX_TRY(read_entry(bc, at, idx, 1, &v));
  *out = v;
  return CXLA_OK;
}

cxla_status cx_bc_type_at(cx_bc *bc, const uint8_t *at, uint64_t idx, const cx_mlir_type **out) {
  const void *v = NULL;
  CX_TRY(read_entry(bc, at, idx, 0, &v));
  *out = v;
  return CXLA_OK;
}

cxla_status cx_bc_attr_ref(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out) {
  const uint8_t *at = c->p;
  uint64_t i;
  CX_TRY(cx_bc_varint(bc, c, &i));
  return cx_bc_attr_at(bc, at, i, out);
}

cxla_status cx_bc_type_ref(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out) {
  const uint8_t *at = c->p;
  uint64_t i;
  CX_TRY(cx_bc_varint(bc, c, &i));
  return cx_bc_type_at(bc, at, i, out);
}

cxla_status cx_bc_attr_refs(cx_bc *bc, cx_bc_cur *c, int *n, const cx_mlir_attr *const **out) {
  int64_t cnt;
  CX_TRY(cx_bc_count(bc, c, 1, "attribute list", &cnt));
  const cx_mlir_attr **a = cx_bc_array(bc, cnt, sizeof *a);
  if (cnt && !a) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < cnt; i++) CX_TRY(cx_bc_attr_ref(bc, c, &a[i]));
  *n = (int)cnt;
  *out = a;
  return CXLA_OK;
}

cxla_status cx_bc_type_refs(cx_bc *bc, cx_bc_cur *c, int *n, const cx_mlir_type *const **out) {
  int64_t cnt;
  CX_TRY(cx_bc_count(bc, c, 1, "type list", &cnt));
  const cx_mlir_type **a = cx_bc_array(bc, cnt, sizeof *a);
  if (cnt && !a) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < cnt; i++) CX_TRY(cx_bc_type_ref(bc, c, &a[i]));
  *n = (int)cnt;
  *out = a;
  return CXLA_OK;
}
