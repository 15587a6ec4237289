/* bytecode.c — the MLIR bytecode container: magic, version, producer, the top-level sections
 * (alignment and padding included), and the tables the IR section refers to: strings, dialects
 * and op names, properties, resources. Then the attribute/type table (bytecode_attrs.c) and the
 * IR (bytecode_ir.c). Versions 0..6 are read (JAX 0.10.2 writes 6: StableHLO targets up to
 * 1.16.3 serialize with bytecode version 6). Every failure is one message naming the byte. */
#include <stdio.h>
#include <string.h>
#include "stablehlo/bytecode_int.h"

enum {
  S_STRING = 0, S_DIALECT, S_ATTR_TYPE, S_ATTR_TYPE_OFFSET, S_IR, S_RESOURCE, S_RESOURCE_OFFSET,
  S_DIALECT_VERSIONS, S_PROPERTIES, S_COUNT
};

/* Bytecode versions at which the format changed (mlir/include/mlir/Bytecode/Encoding.h). */
enum { V_DIALECT_VERSIONING = 1, V_LAZY_LOADING = 2, V_USE_LIST_ORDERING = 3,
       V_ELIDE_UNKNOWN_BLOCK_ARG_LOC = 4, V_NATIVE_PROPERTIES = 5, V_CURRENT = 6 };

cxla_status cx_bc_fail(cx_bc *bc, const uint8_t *at, const char *fmt, ...) {
  if (bc->failed) return bc->failed;
  char msg[1024], where[600] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (bc->cur_opname) {
    char loc[400] = "";
    if (bc->cur_op && bc->cur_op->loc) cx_mlir_loc_str(bc->cur_op->loc, loc, sizeof loc);
    if (!strcmp(loc, "unknown")) loc[0] = 0;
    snprintf(where, sizeof where, " (in op %s%s%s)", bc->cur_opname, loc[0] ? " at " : "", loc);
  }
  size_t off = at && at >= bc->buf && at <= bc->buf + bc->size ? (size_t)(at - bc->buf) : bc->size;
  bc->failed = cx_error(bc->ctx, CXLA_ERR_PARSE, "%s: byte %zu: %s%s", bc->filename, off, msg, where);
  return bc->failed;
}

cxla_status cx_bc_oom(cx_bc *bc) {
  if (!bc->failed) bc->failed = cx_oom(bc->ctx);
  return bc->failed;
}

void *cx_bc_alloc(cx_bc *bc, size_t n) {
  void *p = cx_arena_alloc(bc->A, n ? n : 1);
  if (!p) cx_bc_oom(bc);
  return p;
}

void *cx_bc_array(cx_bc *bc, int64_t n, size_t elem) {
  if (n <= 0) return NULL;
  if ((uint64_t)n > SIZE_MAX / elem / 2) {
    cx_bc_oom(bc);
    return NULL;
  }
  return cx_bc_alloc(bc, (size_t)n * elem);
}

int cx_mlirbc_sniff(const void *bytes, size_t n) {
  return bytes && n >= 4 && !memcmp(bytes, "ML\xEFR", 4);
}

/* ---- the string section: a count, the lengths in reverse order, then the NUL-terminated
 * strings back to back ending at the end of the section ---- */
static cxla_status read_strings(cx_bc *bc, cx_bc_cur c) {
  int64_t n;
  CX_TRY(cx_bc_count(bc, &c, 2, "string", &n));
  bc->strings = cx_bc_array(bc, n, sizeof *bc->strings);
  bc->string_lens = cx_bc_array(bc, n, sizeof *bc->string_lens);
  if (n && (!bc->strings || !bc->string_lens)) return CXLA_ERR_OUT_OF_MEMORY;
  bc->nstrings = n;
  const uint8_t *end = c.end;
  for (int64_t i = n - 1; i >= 0; i--) {
    const uint8_t *at = c.p;
    uint64_t len;
    CX_TRY(cx_bc_varint(bc, &c, &len));
    /* the lengths grow from the front and the strings from the back: they must not meet */
    if (len == 0 || c.p > end || len > (uint64_t)(end - c.p))
      return cx_bc_fail(bc, at, "string %lld of %llu bytes does not fit its section", (long long)i,
                        (unsigned long long)len);
    end -= len;
    if (end[len - 1] != 0) return cx_bc_fail(bc, end + len - 1, "string %lld is not NUL-terminated", (long long)i);
    bc->strings[i] = cx_arena_strndup(bc->A, (const char *)end, (size_t)len - 1);
    if (!bc->strings[i]) return cx_bc_oom(bc);
    bc->string_lens[i] = (size_t)len - 1;
  }
  if (c.p != end) return cx_bc_fail(bc, c.p, "unexpected data between the string lengths and the strings");
  return CXLA_OK;
}

/* ---- the dialect section: the dialects (with their version blobs) and op names by dialect ---- */
static cxla_status read_dialects(cx_bc *bc, cx_bc_cur c) {
  int64_t n;
  CX_TRY(cx_bc_count(bc, &c, 1, "dialect", &n));
  cx_mlir_dialect *d = cx_bc_array(bc, n, sizeof *d);
  bc->dialect_names = cx_bc_array(bc, n, sizeof *bc->dialect_names);
  if (n && (!d || !bc->dialect_names)) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; i++) {
    const uint8_t *at = c.p;
    uint64_t idx;
    int has_version = 0;
    if (bc->version < V_DIALECT_VERSIONING) CX_TRY(cx_bc_varint(bc, &c, &idx));
    else CX_TRY(cx_bc_varint_flag(bc, &c, &idx, &has_version));
    if (idx >= (uint64_t)bc->nstrings) return cx_bc_fail(bc, at, "dialect name index %llu out of range",
                                                         (unsigned long long)idx);
    d[i].name = bc->strings[idx];
    bc->dialect_names[i] = d[i].name;
    if (has_version) {
      int id;
      cx_bc_cur v;
      const uint8_t *sat = c.p;
      CX_TRY(cx_bc_section(bc, &c, &id, &v));
      if (id != S_DIALECT_VERSIONS) return cx_bc_fail(bc, sat, "expected a dialect version section");
      d[i].version_len = cx_bc_left(&v);
      d[i].version = d[i].version_len ? cx_arena_memdup(bc->A, v.p, d[i].version_len) : NULL;
      if (d[i].version_len && !d[i].version) return cx_bc_oom(bc);
    }
  }
  bc->ndialects = n;
  bc->tree->num_dialects = (int)n;
  bc->tree->dialects = d;
  if (bc->version >= V_ELIDE_UNKNOWN_BLOCK_ARG_LOC) {
    uint64_t hint; /* the number of op names: a reservation hint, checked by what follows */
    CX_TRY(cx_bc_varint(bc, &c, &hint));
  }
  /* op names: each takes at least one byte, so the section's size bounds their number */
  int64_t cap = (int64_t)cx_bc_left(&c);
  bc->opnames = cx_bc_array(bc, cap, sizeof *bc->opnames);
  if (cap && !bc->opnames) return CXLA_ERR_OUT_OF_MEMORY;
  while (c.p < c.end) {
    const uint8_t *at = c.p;
    uint64_t di;
    int64_t cnt;
    CX_TRY(cx_bc_varint(bc, &c, &di));
    if (di >= (uint64_t)n) return cx_bc_fail(bc, at, "dialect index %llu out of range", (unsigned long long)di);
    CX_TRY(cx_bc_count(bc, &c, 1, "op name", &cnt));
    for (int64_t k = 0; k < cnt; k++) {
      const uint8_t *nat = c.p;
      uint64_t si;
      int reg = -1;
      if (bc->version < V_NATIVE_PROPERTIES) CX_TRY(cx_bc_varint(bc, &c, &si));
      else CX_TRY(cx_bc_varint_flag(bc, &c, &si, &reg));
      if (si >= (uint64_t)bc->nstrings) return cx_bc_fail(bc, nat, "op name index %llu out of range",
                                                          (unsigned long long)si);
      cx_bc_opname *o = &bc->opnames[bc->nopnames++];
      o->dialect = (int64_t)di;
      o->registered = reg;
      size_t dl = strlen(d[di].name), ol = bc->string_lens[si];
      char *full = cx_bc_alloc(bc, dl + ol + 2);
      if (!full) return CXLA_ERR_OUT_OF_MEMORY;
      memcpy(full, d[di].name, dl);
      if (ol) {
        full[dl] = '.';
        memcpy(full + dl + 1, bc->strings[si], ol);
      }
      o->name = full;
    }
  }
  return CXLA_OK;
}

/* ---- the properties section: a count, then entries of (size, bytes) that ops refer to by
 * number ---- */
static cxla_status read_properties(cx_bc *bc, cx_bc_cur c) {
  if (c.p == c.end) return CXLA_OK;
  int64_t n;
  CX_TRY(cx_bc_count(bc, &c, 1, "properties", &n));
  bc->props = cx_bc_array(bc, n, sizeof *bc->props);
  if (n && !bc->props) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; i++) {
    const uint8_t *d;
    size_t len;
    bc->props[i] = c.p;
    CX_TRY(cx_bc_blob(bc, &c, &d, &len));
  }
  if (c.p != c.end) return cx_bc_fail(bc, c.p, "trailing data in the properties section");
  bc->nprops = n;
  bc->props_end = c.end;
  return CXLA_OK;
}

/* ---- resources: the offset section names each resource and its size; the resource section
 * holds the values back to back. Only dialect resources (dense_resource blobs of builtin) are
 * kept; external ones (e.g. mlir_reproducer) are skipped. ---- */
static cxla_status read_resource_group(cx_bc *bc, cx_bc_cur *offs, cx_bc_cur *res, int keep) {
  int64_t n;
  CX_TRY(cx_bc_count(bc, offs, 3, "resource", &n));
  for (int64_t i = 0; i < n; i++) {
    const char *key;
    uint64_t size;
    uint8_t kind;
    const uint8_t *data;
    const uint8_t *at = offs->p;
    CX_TRY(cx_bc_string_ref(bc, offs, &key, NULL));
    CX_TRY(cx_bc_varint(bc, offs, &size));
    CX_TRY(cx_bc_byte(bc, offs, &kind));
    if (size > cx_bc_left(res))
      return cx_bc_fail(bc, at, "resource '%s' of %llu bytes runs past the resource section", key,
                        (unsigned long long)size);
    CX_TRY(cx_bc_bytes(bc, res, (size_t)size, &data));
    if (!keep) continue;
    cx_bc_resource *r = &bc->resources[bc->nresources++];
    r->key = key;
    if (kind != 0 || size == 0) continue; /* 0: blob; 1: bool; 2: string */
    /* a blob: alignment, size, padding to the alignment, bytes */
    cx_bc_cur e = {bc->buf, data, data + size};
    uint64_t align, len;
    CX_TRY(cx_bc_varint(bc, &e, &align));
    CX_TRY(cx_bc_varint(bc, &e, &len));
    CX_TRY(cx_bc_align(bc, &e, align));
    const uint8_t *blob;
    CX_TRY(cx_bc_bytes(bc, &e, (size_t)(len > SIZE_MAX ? SIZE_MAX : len), &blob));
    if (e.p != e.end) return cx_bc_fail(bc, e.p, "trailing bytes in resource '%s'", key);
    r->align = align;
    r->size = (size_t)len;
    r->data = len ? cx_arena_memdup(bc->A, blob, (size_t)len) : NULL;
    if (len && !r->data) return cx_bc_oom(bc);
  }
  return CXLA_OK;
}

static cxla_status read_resources(cx_bc *bc, cx_bc_cur res, cx_bc_cur offs) {
  int64_t next;
  CX_TRY(cx_bc_count(bc, &offs, 1, "external resource group", &next));
  /* at most one resource per 3 bytes of offsets */
  int64_t cap = (int64_t)cx_bc_left(&offs) / 3 + 1;
  bc->resources = cx_bc_array(bc, cap, sizeof *bc->resources);
  if (!bc->resources) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < next; i++) {
    const char *key;
    CX_TRY(cx_bc_string_ref(bc, &offs, &key, NULL));
    CX_TRY(read_resource_group(bc, &offs, &res, 0));
  }
  while (offs.p < offs.end) {
    const uint8_t *at = offs.p;
    uint64_t d;
    CX_TRY(cx_bc_varint(bc, &offs, &d));
    if (d >= (uint64_t)bc->ndialects) return cx_bc_fail(bc, at, "dialect index %llu out of range",
                                                        (unsigned long long)d);
    CX_TRY(read_resource_group(bc, &offs, &res, 1));
  }
  return CXLA_OK;
}

static cxla_status read_all(cx_bc *bc) {
  cx_bc_cur c = {bc->buf, bc->buf, bc->buf + bc->size};
  if (!cx_mlirbc_sniff(bc->buf, bc->size))
    return cx_bc_fail(bc, bc->buf, "not MLIR bytecode (the magic \"ML\\xEFR\" is missing)");
  c.p += 4;
  const uint8_t *vat = c.p;
  CX_TRY(cx_bc_varint(bc, &c, &bc->version));
  if (bc->version > V_CURRENT)
    return cx_bc_fail(bc, vat, "bytecode version %llu is newer than the %d this reader knows",
                      (unsigned long long)bc->version, V_CURRENT);
  bc->tree->bytecode_version = bc->version;
  const uint8_t *nul = memchr(c.p, 0, cx_bc_left(&c));
  if (!nul) return cx_bc_fail(bc, c.p, "the producer string is not NUL-terminated");
  bc->tree->producer = cx_arena_strndup(bc->A, (const char *)c.p, (size_t)(nul - c.p));
  if (!bc->tree->producer) return cx_bc_oom(bc);
  c.p = nul + 1;

  cx_bc_cur sect[S_COUNT];
  int have[S_COUNT] = {0};
  while (c.p < c.end) {
    const uint8_t *at = c.p;
    int id;
    cx_bc_cur d;
    CX_TRY(cx_bc_section(bc, &c, &id, &d));
    if (have[id]) return cx_bc_fail(bc, at, "duplicate section %d", id);
    have[id] = 1;
    sect[id] = d;
  }
  for (int id = S_STRING; id <= S_IR; id++)
    if (!have[id]) return cx_bc_fail(bc, c.p, "the required section %d is missing", id);
  if (!have[S_PROPERTIES] && bc->version >= V_NATIVE_PROPERTIES)
    return cx_bc_fail(bc, c.p, "the properties section is missing");
  if (have[S_RESOURCE] != have[S_RESOURCE_OFFSET])
    return cx_bc_fail(bc, c.p, "a resource section without its offset section (or the reverse)");
  CX_TRY(read_strings(bc, sect[S_STRING]));
  if (have[S_PROPERTIES]) CX_TRY(read_properties(bc, sect[S_PROPERTIES]));
  CX_TRY(read_dialects(bc, sect[S_DIALECT]));
  if (have[S_RESOURCE]) CX_TRY(read_resources(bc, sect[S_RESOURCE], sect[S_RESOURCE_OFFSET]));
  CX_TRY(cx_bc_attr_table(bc, sect[S_ATTR_TYPE], sect[S_ATTR_TYPE_OFFSET]));
  return cx_bc_read_ir(bc, sect[S_IR]);
}

cxla_status cx_mlirbc_read(cxla_context *ctx, const void *bytes, size_t n, const char *filename,
                           cx_mlir_tree **out) {
  *out = NULL;
  if (!bytes && n) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cx_mlirbc_read: no bytes");
  cx_mlir_tree *t = cx_calloc(1, sizeof *t);
  if (!t) return cx_oom(ctx);
  cx_arena_init(&t->arena);
  cx_bc bc;
  memset(&bc, 0, sizeof bc);
  bc.ctx = ctx;
  bc.buf = bytes ? bytes : (const uint8_t *)"";
  bc.size = n;
  bc.tree = t;
  bc.A = &t->arena;
  bc.filename = filename ? filename : "<bytecode>";
  t->filename = cx_arena_strdup(&t->arena, bc.filename);
  cxla_status s = t->filename ? read_all(&bc) : cx_oom(ctx);
  if (s == CXLA_OK && bc.failed) s = bc.failed;
  if (s != CXLA_OK) {
    if (!bc.failed && s != CXLA_ERR_OUT_OF_MEMORY) cx_bc_fail(&bc, NULL, "unreadable bytecode");
    cx_mlir_tree_free(t);
    return s;
  }
  t->num_values = bc.next_value_id;
  *out = t;
  return CXLA_OK;
}
