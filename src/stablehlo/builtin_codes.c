/* builtin_codes.c — the builtin dialect's custom bytecode encodings (the order of the elems
 * lists in mlir/include/mlir/IR/BuiltinDialectBytecode.td gives each kind's code). A portable
 * artifact holds builtin attributes where MLIR itself owns the thing: op attribute dictionaries
 * and their string names, locations, builtin.module's properties, dense_resource constants.
 * Kinds a VHLO program cannot hold meaningfully (memrefs, vectors, sparse and string
 * elements, distinct attrs) are kept opaque with their bytes. */
#include <string.h>
#include "stablehlo/bytecode_int.h"

enum {
  B_ARRAY = 0, B_DICT, B_STRING, B_STRING_TYPED, B_FLAT_SYMREF, B_SYMREF, B_TYPE, B_UNIT, B_INT,
  B_FLOAT, B_CALLSITE_LOC, B_FILE_LOC, B_FUSED_LOC, B_FUSED_LOC_META, B_NAME_LOC, B_UNKNOWN_LOC,
  B_DENSE_RESOURCE, B_DENSE_ARRAY, B_DENSE_ELEMENTS, B_DENSE_STRINGS, B_SPARSE, B_DISTINCT,
  B_FILE_RANGE_LOC /* FileLineColRange, appended by LLVM when source ranges arrived */
};

enum {
  T_INT = 0, T_INDEX, T_FUNCTION, T_BF16, T_F16, T_F32, T_F64, T_F80, T_F128, T_COMPLEX, T_MEMREF,
  T_MEMREF_SPACE, T_NONE, T_RANKED_TENSOR, T_RANKED_TENSOR_ENC, T_TUPLE, T_UNRANKED_MEMREF,
  T_UNRANKED_MEMREF_SPACE, T_UNRANKED_TENSOR, T_VECTOR, T_VECTOR_SCALABLE
};

static const char B[] = "builtin";

static cxla_status string_attr(cx_bc *bc, cx_bc_cur *c, const char **s) {
  const uint8_t *at = c->p;
  const cx_mlir_attr *a;
  CX_TRY(cx_bc_attr_ref(bc, c, &a));
  if (a->kind != CX_MLIR_ATTR_STRING) return cx_bc_fail(bc, at, "expected a string attribute");
  *s = a->u.str.bytes;
  return CXLA_OK;
}

static cxla_status loc_ref(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **l) {
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_attr_ref(bc, c, l));
  if ((*l)->kind != CX_MLIR_ATTR_LOC && (*l)->kind != CX_MLIR_ATTR_OPAQUE)
    return cx_bc_fail(bc, at, "expected a location attribute");
  return CXLA_OK;
}

static int is_int_like(const cx_mlir_type *t) {
  return t->kind == CX_MLIR_TYPE_INT || t->kind == CX_MLIR_TYPE_INDEX;
}

/* Integer attribute values (builtin and vhlo alike): bits as stored, value by signedness. */
void cx_bc_set_int(cx_mlir_attr *a, const cx_mlir_type *t, uint64_t bits) {
  unsigned w = t->kind == CX_MLIR_TYPE_INDEX ? 64 : (unsigned)t->width;
  a->u.integer.type = t;
  a->u.integer.bits = bits;
  int64_t v = (int64_t)bits;
  if (w < 64 && w > 0) {
    uint64_t m = UINT64_C(1) << (w - 1);
    v = t->sign == CX_MLIR_UNSIGNED ? (int64_t)bits : (int64_t)((bits ^ m) - m);
  }
  a->u.integer.value = v;
}

static cxla_status read_file_loc(cx_bc *bc, cx_bc_cur *c, cx_mlir_attr *a, int range) {
  a->u.loc.kind = CX_MLIR_LOC_FILE;
  CX_TRY(string_attr(bc, c, &a->u.loc.file));
  if (!range) {
    uint64_t line, col;
    CX_TRY(cx_bc_varint(bc, c, &line));
    CX_TRY(cx_bc_varint(bc, c, &col));
    a->u.loc.line = (int64_t)line;
    a->u.loc.col = (int64_t)col;
    return CXLA_OK;
  }
  /* a range stores up to four numbers: start line, start column, end line, end column */
  int64_t n;
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_count(bc, c, 1, "location range", &n));
  if (n > 4) return cx_bc_fail(bc, at, "a file location range holds %lld numbers (at most 4)", (long long)n);
  int64_t v[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n; i++) {
    uint64_t x;
    CX_TRY(cx_bc_varint(bc, c, &x));
    v[i] = (int64_t)x;
  }
  a->u.loc.line = v[0];
  a->u.loc.col = v[1];
  /* three numbers: a range within the start line; four: start and end line and column */
  a->u.loc.end_line = n == 3 ? v[0] : n == 4 ? v[2] : 0;
  a->u.loc.end_col = n == 3 ? v[2] : n == 4 ? v[3] : 0;
  return CXLA_OK;
}

static cxla_status read_resource(cx_bc *bc, cx_bc_cur *c, cx_mlir_attr *a) {
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_type_ref(bc, c, &a->u.res.type));
  uint64_t h;
  const uint8_t *hat = c->p;
  CX_TRY(cx_bc_varint(bc, c, &h));
  if (h >= (uint64_t)bc->nresources)
    return cx_bc_fail(bc, hat, "resource handle %llu out of range (%lld resources)", (unsigned long long)h,
                      (long long)bc->nresources);
  const cx_bc_resource *r = &bc->resources[h];
  a->u.res.key = r->key;
  a->u.res.data = r->data;
  a->u.res.size = r->size;
  a->u.res.align = r->align;
  if (!r->data)
    return cx_bc_fail(bc, at, "dense_resource<%s> has no blob in the file's resource section", r->key);
  /* the blob is the dense data of the type; check it like any dense constant */
  cx_mlir_attr tmp = *a;
  CX_TRY(cx_bc_dense(bc, at, a->u.res.type, r->data, r->size, 0, &tmp));
  return CXLA_OK;
}

cxla_status cx_builtin_read_attr(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out) {
  const uint8_t *at = c->p;
  uint64_t code;
  CX_TRY(cx_bc_varint(bc, c, &code));
  cx_mlir_attr *a = cx_bc_new_attr(bc, CX_MLIR_ATTR_OPAQUE, B);
  if (!a) return CXLA_ERR_OUT_OF_MEMORY;
  *out = a;
  switch (code) {
  case B_ARRAY:
    a->kind = CX_MLIR_ATTR_ARRAY;
    return cx_bc_attr_refs(bc, c, &a->u.array.n, &a->u.array.elems);
  case B_DICT: {
    int64_t n;
    CX_TRY(cx_bc_count(bc, c, 2, "dictionary entry", &n));
    cx_mlir_named_attr *e = cx_bc_array(bc, n, sizeof *e);
    if (n && !e) return CXLA_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++) {
      CX_TRY(string_attr(bc, c, &e[i].name));
      CX_TRY(cx_bc_attr_ref(bc, c, &e[i].value));
    }
    a->kind = CX_MLIR_ATTR_DICT;
    a->u.dict.n = (int)n;
    a->u.dict.entries = e;
    return CXLA_OK;
  }
  case B_STRING:
  case B_STRING_TYPED:
    a->kind = CX_MLIR_ATTR_STRING;
    CX_TRY(cx_bc_string_ref(bc, c, &a->u.str.bytes, &a->u.str.len));
    if (code == B_STRING_TYPED) CX_TRY(cx_bc_type_ref(bc, c, &a->u.str.type));
    return CXLA_OK;
  case B_FLAT_SYMREF:
  case B_SYMREF: {
    a->kind = CX_MLIR_ATTR_SYMBOL_REF;
    CX_TRY(string_attr(bc, c, &a->u.sym.root));
    if (code == B_FLAT_SYMREF) return CXLA_OK;
    int n;
    const cx_mlir_attr *const *refs;
    const uint8_t *lat = c->p;
    CX_TRY(cx_bc_attr_refs(bc, c, &n, &refs));
    const char **names = cx_bc_array(bc, n, sizeof *names);
    if (n && !names) return CXLA_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < n; i++) {
      if (refs[i]->kind != CX_MLIR_ATTR_SYMBOL_REF || refs[i]->u.sym.nnested)
        return cx_bc_fail(bc, lat, "nested symbol reference %d is not a flat symbol reference", i);
      names[i] = refs[i]->u.sym.root;
    }
    a->u.sym.nnested = n;
    a->u.sym.nested = names;
    return CXLA_OK;
  }
  case B_TYPE:
    a->kind = CX_MLIR_ATTR_TYPE;
    return cx_bc_type_ref(bc, c, &a->u.type);
  case B_UNIT:
    a->kind = CX_MLIR_ATTR_UNIT;
    return CXLA_OK;
  case B_INT: {
    const cx_mlir_type *t;
    uint64_t bits;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    if (!is_int_like(t)) return cx_bc_fail(bc, at, "integer attribute of a non-integer type");
    CX_TRY(cx_bc_apint(bc, c, t->kind == CX_MLIR_TYPE_INDEX ? 64 : (unsigned)t->width, &bits));
    a->kind = CX_MLIR_ATTR_INT;
    cx_bc_set_int(a, t, bits);
    return CXLA_OK;
  }
  case B_FLOAT: {
    const cx_mlir_type *t;
    uint64_t bits;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    if (t->kind != CX_MLIR_TYPE_FLOAT) return cx_bc_fail(bc, at, "float attribute of a non-float type");
    CX_TRY(cx_bc_apint(bc, c, cx_mlir_float_bits(t->fkind), &bits));
    a->kind = CX_MLIR_ATTR_FLOAT;
    a->u.fp.type = t;
    a->u.fp.bits = bits;
    a->u.fp.value = cx_mlir_float_value(t->fkind, bits);
    return CXLA_OK;
  }
  case B_CALLSITE_LOC:
    a->kind = CX_MLIR_ATTR_LOC;
    a->u.loc.kind = CX_MLIR_LOC_CALLSITE;
    CX_TRY(loc_ref(bc, c, &a->u.loc.callee));
    return loc_ref(bc, c, &a->u.loc.caller);
  case B_FILE_LOC:
  case B_FILE_RANGE_LOC:
    a->kind = CX_MLIR_ATTR_LOC;
    return read_file_loc(bc, c, a, code == B_FILE_RANGE_LOC);
  case B_FUSED_LOC:
  case B_FUSED_LOC_META: {
    a->kind = CX_MLIR_ATTR_LOC;
    a->u.loc.kind = CX_MLIR_LOC_FUSED;
    const uint8_t *lat = c->p;
    CX_TRY(cx_bc_attr_refs(bc, c, &a->u.loc.n, &a->u.loc.locs));
    for (int i = 0; i < a->u.loc.n; i++)
      if (a->u.loc.locs[i]->kind != CX_MLIR_ATTR_LOC && a->u.loc.locs[i]->kind != CX_MLIR_ATTR_OPAQUE)
        return cx_bc_fail(bc, lat, "fused location member %d is not a location", i);
    if (code == B_FUSED_LOC_META) CX_TRY(cx_bc_attr_ref(bc, c, &a->u.loc.metadata));
    return CXLA_OK;
  }
  case B_NAME_LOC:
    a->kind = CX_MLIR_ATTR_LOC;
    a->u.loc.kind = CX_MLIR_LOC_NAME;
    CX_TRY(string_attr(bc, c, &a->u.loc.name));
    CX_TRY(loc_ref(bc, c, &a->u.loc.child));
    if (a->u.loc.child->kind == CX_MLIR_ATTR_LOC && a->u.loc.child->u.loc.kind == CX_MLIR_LOC_UNKNOWN)
      a->u.loc.child = NULL;
    return CXLA_OK;
  case B_UNKNOWN_LOC:
    a->kind = CX_MLIR_ATTR_LOC;
    a->u.loc.kind = CX_MLIR_LOC_UNKNOWN;
    return CXLA_OK;
  case B_DENSE_RESOURCE:
    a->kind = CX_MLIR_ATTR_DENSE_RESOURCE;
    return read_resource(bc, c, a);
  case B_DENSE_ARRAY: {
    const cx_mlir_type *t;
    uint64_t count;
    const uint8_t *data;
    size_t len;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    CX_TRY(cx_bc_varint(bc, c, &count));
    CX_TRY(cx_bc_blob(bc, c, &data, &len));
    size_t eb = cx_mlir_elem_bytes(t);
    if (!eb || count > len / eb || count * eb != len)
      return cx_bc_fail(bc, at, "dense array of %llu elements with %zu bytes of data",
                        (unsigned long long)count, len);
    a->kind = CX_MLIR_ATTR_DENSE_ARRAY;
    a->u.darray.elem = t;
    a->u.darray.count = (int64_t)count;
    a->u.darray.size = len;
    a->u.darray.data = len ? cx_arena_memdup(bc->A, data, len) : NULL;
    if (len && !a->u.darray.data) return cx_bc_oom(bc);
    return CXLA_OK;
  }
  case B_DENSE_ELEMENTS: {
    const cx_mlir_type *t;
    const uint8_t *data;
    size_t len;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    CX_TRY(cx_bc_blob(bc, c, &data, &len));
    a->kind = CX_MLIR_ATTR_TENSOR;
    return cx_bc_dense(bc, at, t, data, len, 0, a);
  }
  default:
    /* string/sparse elements, distinct attrs and kinds of newer MLIR: kept as bytes */
    c->p = c->end;
    a->u.opaque.raw = cx_arena_memdup(bc->A, at, (size_t)(c->end - at));
    a->u.opaque.raw_len = (size_t)(c->end - at);
    if (!a->u.opaque.raw) return cx_bc_oom(bc);
    return CXLA_OK;
  }
}

static cxla_status shaped(cx_bc *bc, cx_bc_cur *c, cx_mlir_type *t) {
  CX_TRY(cx_bc_svarints(bc, c, &t->rank, &t->dims));
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 && t->dims[i] != CX_MLIR_DYNAMIC)
      return cx_bc_fail(bc, c->p, "negative dimension %lld", (long long)t->dims[i]);
  return cx_bc_type_ref(bc, c, &t->elem);
}

cxla_status cx_builtin_read_type(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out) {
  const uint8_t *at = c->p;
  uint64_t code;
  CX_TRY(cx_bc_varint(bc, c, &code));
  cx_mlir_type *t = cx_bc_new_type(bc, CX_MLIR_TYPE_OPAQUE, B);
  if (!t) return CXLA_ERR_OUT_OF_MEMORY;
  *out = t;
  static const cx_mlir_float_kind fk[] = {CX_MLIR_BF16, CX_MLIR_F16, CX_MLIR_F32, CX_MLIR_F64,
                                          CX_MLIR_F80, CX_MLIR_F128};
  switch (code) {
  case T_INT: {
    uint64_t ws;
    CX_TRY(cx_bc_varint(bc, c, &ws));
    if ((ws >> 2) == 0 || (ws >> 2) > 65536 || (ws & 3) == 3)
      return cx_bc_fail(bc, at, "bad integer type (width %llu, signedness %u)", (unsigned long long)(ws >> 2),
                        (unsigned)(ws & 3));
    t->kind = CX_MLIR_TYPE_INT;
    t->width = (int)(ws >> 2);
    t->sign = (cx_mlir_signedness)(ws & 3);
    return CXLA_OK;
  }
  case T_INDEX:
    t->kind = CX_MLIR_TYPE_INDEX;
    return CXLA_OK;
  case T_FUNCTION:
    t->kind = CX_MLIR_TYPE_FUNCTION;
    CX_TRY(cx_bc_type_refs(bc, c, &t->n, &t->types));
    return cx_bc_type_refs(bc, c, &t->nout, &t->outputs);
  case T_BF16: case T_F16: case T_F32: case T_F64: case T_F80: case T_F128:
    t->kind = CX_MLIR_TYPE_FLOAT;
    t->fkind = fk[code - T_BF16];
    return CXLA_OK;
  case T_COMPLEX:
    t->kind = CX_MLIR_TYPE_COMPLEX;
    return cx_bc_type_ref(bc, c, &t->elem);
  case T_NONE:
    t->kind = CX_MLIR_TYPE_NONE;
    return CXLA_OK;
  case T_RANKED_TENSOR_ENC:
    CX_TRY(cx_bc_attr_ref(bc, c, &t->encoding));
    /* fall through */
  case T_RANKED_TENSOR:
    t->kind = CX_MLIR_TYPE_RANKED_TENSOR;
    return shaped(bc, c, t);
  case T_TUPLE:
    t->kind = CX_MLIR_TYPE_TUPLE;
    return cx_bc_type_refs(bc, c, &t->n, &t->types);
  case T_UNRANKED_TENSOR:
    t->kind = CX_MLIR_TYPE_UNRANKED_TENSOR;
    return cx_bc_type_ref(bc, c, &t->elem);
  default:
    /* memrefs, vectors and newer kinds: kept as bytes */
    c->p = c->end;
    t->raw = cx_arena_memdup(bc->A, at, (size_t)(c->end - at));
    t->raw_len = (size_t)(c->end - at);
    if (!t->raw) return cx_bc_oom(bc);
    return CXLA_OK;
  }
}
