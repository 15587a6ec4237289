/* vhlo_codes.c — the VHLO dialect's bytecode encodings: the attribute and type codes, their
 * field order and the enum values are the facts of stablehlo/dialect/VhloBytecode.cpp and
 * VhloEnums.td at the StableHLO commit jaxlib 0.10.2 uses (VHLO 1.16.3). VHLO never reuses a
 * code, so an unknown one (a newer VHLO) is kept opaque with its bytes, as are unknown enum
 * values; bytes that contradict a known code are errors. */
#include <string.h>
#include "stablehlo/bytecode_int.h"

enum {
  A_ARRAY = 1, A_BOOL, A_CMP_DIR, A_CMP_TYPE, A_CC_API, A_DICT, A_FFT, A_FLOAT, A_INT, A_ALIAS,
  A_PRECISION, A_RNG_ALG, A_RNG_DIST, A_STRING, A_TENSOR, A_TRANSPOSE, A_TYPE, A_TYPE_EXT,
  A_ACC_MODE, A_ACC, A_SUB_AXIS, A_AXIS_REF, A_RG_MESH_AXES, A_MESH_AXIS, A_MESH
};

static const char V[] = "vhlo";

/* An entry this reader does not know (a code or enum value of a newer VHLO): its bytes are
 * delimited by the table, so it is kept whole for the translator to refuse by name. */
static cxla_status keep_opaque_attr(cx_bc *bc, cx_bc_cur *c, const uint8_t *at, cx_mlir_attr *a) {
  a->kind = CX_MLIR_ATTR_OPAQUE;
  a->u.opaque.raw_len = (size_t)(c->end - at);
  a->u.opaque.raw = cx_arena_memdup(bc->A, at, a->u.opaque.raw_len);
  c->p = c->end;
  return a->u.opaque.raw ? CXLA_OK : cx_bc_oom(bc);
}

/* ---- enums ---- */
static const char *const cmp_dir[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
static const char *const cmp_type[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
static const char *const cc_api[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                     "API_VERSION_STATUS_RETURNING",
                                     "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const precision[] = {"DEFAULT", "HIGH", "HIGHEST"};
static const char *const rng_alg[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
static const char *const rng_dist[] = {NULL, "UNIFORM", "NORMAL"}; /* no value 0 */
static const char *const transpose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
static const char *const acc_mode[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};

static const struct {
  const char *const *names;
  uint32_t n;
} enums[] = {
    [CX_MLIR_ENUM_COMPARISON_DIRECTION] = {cmp_dir, 6},
    [CX_MLIR_ENUM_COMPARISON_TYPE] = {cmp_type, 5},
    [CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION] = {cc_api, 5},
    [CX_MLIR_ENUM_FFT_TYPE] = {fft, 4},
    [CX_MLIR_ENUM_PRECISION] = {precision, 3},
    [CX_MLIR_ENUM_RNG_ALGORITHM] = {rng_alg, 3},
    [CX_MLIR_ENUM_RNG_DISTRIBUTION] = {rng_dist, 3},
    [CX_MLIR_ENUM_TRANSPOSE] = {transpose, 4},
    [CX_MLIR_ENUM_RESULT_ACCURACY_MODE] = {acc_mode, 3},
};

const char *cx_mlir_enum_name(cx_mlir_enum_kind which, uint32_t value) {
  if ((unsigned)which >= sizeof enums / sizeof enums[0] || value >= enums[which].n) return NULL;
  return enums[which].names[value];
}

static cxla_status read_enum(cx_bc *bc, cx_bc_cur *c, const uint8_t *at, cx_mlir_enum_kind which,
                             cx_mlir_attr *a) {
  uint64_t v;
  CX_TRY(cx_bc_varint(bc, c, &v));
  const char *name = v <= UINT32_MAX ? cx_mlir_enum_name(which, (uint32_t)v) : NULL;
  if (!name) return keep_opaque_attr(bc, c, at, a);
  a->kind = CX_MLIR_ATTR_ENUM;
  a->u.enm.which = which;
  a->u.enm.value = (uint32_t)v;
  a->u.enm.name = name;
  return CXLA_OK;
}

/* ---- dense data ---- */

cxla_status cx_bc_dense(cx_bc *bc, const uint8_t *at, const cx_mlir_type *type, const uint8_t *blob,
                        size_t len, int unpack_bool, cx_mlir_attr *a) {
  if (type->kind != CX_MLIR_TYPE_RANKED_TENSOR)
    return cx_bc_fail(bc, at, "dense elements of a type that is not a ranked tensor");
  int64_t count = cx_mlir_type_numel(type);
  size_t eb = cx_mlir_elem_bytes(type->elem);
  if (count < 0) return cx_bc_fail(bc, at, "dense elements of a tensor type with dynamic dimensions (or more than 2^63 elements)");
  if (!eb) return cx_bc_fail(bc, at, "dense elements of an element type without a storage size");
  uint8_t *data = NULL;
  size_t size = len;
  int is_bool = type->elem->kind == CX_MLIR_TYPE_INT && type->elem->width == 1;
  if (unpack_bool && is_bool && len == 1 && blob[0] == 0xFF) {
    /* VhloBytecode.cpp: an all-ones byte is a splat of true */
    data = cx_bc_alloc(bc, 1);
    if (!data) return CXLA_ERR_OUT_OF_MEMORY;
    data[0] = 1;
    size = 1;
  } else if (unpack_bool && is_bool && (uint64_t)len == ((uint64_t)count + 7) / 8 && (int64_t)len != count) {
    data = cx_bc_alloc(bc, (size_t)count);
    if (!data) return CXLA_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < count; i++) data[i] = (blob[i / 8] >> (i % 8)) & 1;
    size = (size_t)count;
  } else if (len) {
    data = cx_arena_memdup(bc->A, blob, len);
    if (!data) return cx_bc_oom(bc);
  }
  int splat = 0;
  if (size == eb && count != 1) {
    splat = 1;
  } else if ((uint64_t)count > SIZE_MAX / eb || size != (size_t)count * eb) {
    return cx_bc_fail(bc, at, "dense data of %zu bytes for %lld elements of %zu bytes", size,
                      (long long)count, eb);
  }
  a->u.dense.type = type;
  a->u.dense.data = data;
  a->u.dense.size = size;
  a->u.dense.splat = splat;
  a->u.dense.count = count;
  return CXLA_OK;
}

/* ---- attributes ---- */

static cxla_status read_apfloat_f64(cx_bc *bc, cx_bc_cur *c, double *v) {
  uint64_t bits;
  CX_TRY(cx_bc_apint(bc, c, 64, &bits));
  *v = cx_mlir_float_value(CX_MLIR_F64, bits);
  return CXLA_OK;
}

static cxla_status record(cx_bc *bc, cx_bc_cur *c, cx_mlir_attr *a, const char *name, const char *fields) {
  /* fields: 'i' a signed varint, 'a' an attribute, 'o' an optional attribute (flagged index),
   * 'f' an attribute behind a varint presence flag */
  int ni = 0, na = 0;
  for (const char *f = fields; *f; f++) {
    if (*f == 'i') ni++;
    else na++;
  }
  int64_t *ints = ni ? cx_bc_alloc(bc, (size_t)ni * sizeof *ints) : NULL;
  const cx_mlir_attr **attrs = na ? cx_bc_alloc(bc, (size_t)na * sizeof *attrs) : NULL;
  if ((ni && !ints) || (na && !attrs)) return CXLA_ERR_OUT_OF_MEMORY;
  int ki = 0, ka = 0;
  for (const char *f = fields; *f; f++) {
    if (*f == 'i') {
      CX_TRY(cx_bc_svarint(bc, c, &ints[ki++]));
    } else if (*f == 'a') {
      CX_TRY(cx_bc_attr_ref(bc, c, &attrs[ka++]));
    } else if (*f == 'o') {
      const uint8_t *at = c->p;
      uint64_t idx;
      int present;
      CX_TRY(cx_bc_varint_flag(bc, c, &idx, &present));
      if (present) CX_TRY(cx_bc_attr_at(bc, at, idx, &attrs[ka]));
      ka++;
    } else {
      uint64_t present;
      CX_TRY(cx_bc_varint(bc, c, &present));
      if (present) CX_TRY(cx_bc_attr_ref(bc, c, &attrs[ka]));
      ka++;
    }
  }
  a->kind = CX_MLIR_ATTR_RECORD;
  a->u.rec.name = name;
  a->u.rec.nints = ni;
  a->u.rec.ints = ints;
  a->u.rec.nattrs = na;
  a->u.rec.attrs = attrs;
  return CXLA_OK;
}

cxla_status cx_vhlo_read_attr(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out) {
  const uint8_t *at = c->p;
  uint64_t code;
  CX_TRY(cx_bc_varint(bc, c, &code));
  cx_mlir_attr *a = cx_bc_new_attr(bc, CX_MLIR_ATTR_OPAQUE, V);
  if (!a) return CXLA_ERR_OUT_OF_MEMORY;
  *out = a;
  switch (code) {
  case A_ARRAY:
    a->kind = CX_MLIR_ATTR_ARRAY;
    return cx_bc_attr_refs(bc, c, &a->u.array.n, &a->u.array.elems);
  case A_BOOL: {
    uint64_t v;
    CX_TRY(cx_bc_varint(bc, c, &v));
    if (v > 1) return cx_bc_fail(bc, at, "boolean value %llu", (unsigned long long)v);
    a->kind = CX_MLIR_ATTR_BOOL;
    a->u.boolean = (int)v;
    return CXLA_OK;
  }
  case A_CMP_DIR: return read_enum(bc, c, at, CX_MLIR_ENUM_COMPARISON_DIRECTION, a);
  case A_CMP_TYPE: return read_enum(bc, c, at, CX_MLIR_ENUM_COMPARISON_TYPE, a);
  case A_CC_API: return read_enum(bc, c, at, CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION, a);
  case A_FFT: return read_enum(bc, c, at, CX_MLIR_ENUM_FFT_TYPE, a);
  case A_PRECISION: return read_enum(bc, c, at, CX_MLIR_ENUM_PRECISION, a);
  case A_RNG_ALG: return read_enum(bc, c, at, CX_MLIR_ENUM_RNG_ALGORITHM, a);
  case A_RNG_DIST: return read_enum(bc, c, at, CX_MLIR_ENUM_RNG_DISTRIBUTION, a);
  case A_TRANSPOSE: return read_enum(bc, c, at, CX_MLIR_ENUM_TRANSPOSE, a);
  case A_ACC_MODE: return read_enum(bc, c, at, CX_MLIR_ENUM_RESULT_ACCURACY_MODE, a);
  case A_DICT: {
    int64_t n;
    CX_TRY(cx_bc_count(bc, c, 2, "dictionary entry", &n));
    cx_mlir_named_attr *e = cx_bc_array(bc, n, sizeof *e);
    if (n && !e) return CXLA_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *kat = c->p;
      const cx_mlir_attr *k;
      CX_TRY(cx_bc_attr_ref(bc, c, &k));
      /* vhlo dictionaries key by vhlo.string_v1 attributes */
      if (k->kind != CX_MLIR_ATTR_STRING) return cx_bc_fail(bc, kat, "dictionary key is not a string");
      e[i].name = k->u.str.bytes;
      CX_TRY(cx_bc_attr_ref(bc, c, &e[i].value));
    }
    a->kind = CX_MLIR_ATTR_DICT;
    a->u.dict.n = (int)n;
    a->u.dict.entries = e;
    return CXLA_OK;
  }
  case A_FLOAT: {
    const cx_mlir_type *t;
    uint64_t bits;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    if (t->kind != CX_MLIR_TYPE_FLOAT || t->fkind == CX_MLIR_F80 || t->fkind == CX_MLIR_F128)
      return cx_bc_fail(bc, at, "vhlo float attribute of a type that is not a vhlo float type");
    CX_TRY(cx_bc_apint(bc, c, cx_mlir_float_bits(t->fkind), &bits));
    a->kind = CX_MLIR_ATTR_FLOAT;
    a->u.fp.type = t;
    a->u.fp.bits = bits;
    a->u.fp.value = cx_mlir_float_value(t->fkind, bits);
    return CXLA_OK;
  }
  case A_INT: {
    const cx_mlir_type *t;
    uint64_t bits;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    if (t->kind != CX_MLIR_TYPE_INT && t->kind != CX_MLIR_TYPE_INDEX)
      return cx_bc_fail(bc, at, "vhlo integer attribute of a non-integer type");
    CX_TRY(cx_bc_apint(bc, c, t->kind == CX_MLIR_TYPE_INDEX ? 64 : (unsigned)t->width, &bits));
    a->kind = CX_MLIR_ATTR_INT;
    cx_bc_set_int(a, t, bits);
    return CXLA_OK;
  }
  case A_ALIAS: {
    const int64_t *v;
    int n;
    a->kind = CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS;
    CX_TRY(cx_bc_svarints(bc, c, &a->u.alias.nout, &a->u.alias.output_tuple_indices));
    CX_TRY(cx_bc_svarint(bc, c, &a->u.alias.operand_index));
    CX_TRY(cx_bc_svarints(bc, c, &n, &v));
    a->u.alias.nop = n;
    a->u.alias.operand_tuple_indices = v;
    return CXLA_OK;
  }
  case A_STRING:
    a->kind = CX_MLIR_ATTR_STRING;
    return cx_bc_string_ref(bc, c, &a->u.str.bytes, &a->u.str.len);
  case A_TENSOR: {
    const cx_mlir_type *t;
    const uint8_t *blob;
    size_t len;
    CX_TRY(cx_bc_type_ref(bc, c, &t));
    CX_TRY(cx_bc_blob(bc, c, &blob, &len));
    a->kind = CX_MLIR_ATTR_TENSOR;
    return cx_bc_dense(bc, at, t, blob, len, 1, a);
  }
  case A_TYPE:
    a->kind = CX_MLIR_ATTR_TYPE;
    return cx_bc_type_ref(bc, c, &a->u.type);
  case A_TYPE_EXT:
    a->kind = CX_MLIR_ATTR_TYPE_EXTENSIONS;
    return cx_bc_svarints(bc, c, &a->u.ints.n, &a->u.ints.v);
  case A_ACC: {
    a->kind = CX_MLIR_ATTR_RESULT_ACCURACY;
    CX_TRY(read_apfloat_f64(bc, c, &a->u.acc.atol));
    CX_TRY(read_apfloat_f64(bc, c, &a->u.acc.rtol));
    CX_TRY(cx_bc_svarint(bc, c, &a->u.acc.ulps));
    const uint8_t *mat = c->p;
    CX_TRY(cx_bc_attr_ref(bc, c, &a->u.acc.mode));
    if (a->u.acc.mode->kind != CX_MLIR_ATTR_OPAQUE &&
        (a->u.acc.mode->kind != CX_MLIR_ATTR_ENUM || a->u.acc.mode->u.enm.which != CX_MLIR_ENUM_RESULT_ACCURACY_MODE))
      return cx_bc_fail(bc, mat, "result accuracy mode is not a result_accuracy_mode_v1");
    return CXLA_OK;
  }
  case A_SUB_AXIS: return record(bc, c, a, "vhlo.sub_axis_info_v1", "ii");
  case A_AXIS_REF: return record(bc, c, a, "vhlo.axis_ref_v1", "af");
  case A_RG_MESH_AXES: return record(bc, c, a, "vhlo.replica_group_mesh_axes_v1", "aa");
  case A_MESH_AXIS: return record(bc, c, a, "vhlo.mesh_axis_v1", "ai");
  case A_MESH: return record(bc, c, a, "vhlo.mesh_v1", "ao");
  default:
    return keep_opaque_attr(bc, c, at, a);
  }
}

/* ---- types ---- */

enum {
  T_BOOL = 0, T_COMPLEX, T_BF16, T_F16, T_F32, T_F64, T_F8E4M3FN, T_F8E5M2, T_FUNCTION, T_INDEX,
  T_SI4, T_SI8, T_SI16, T_SI32, T_SI64, T_UI4, T_UI8, T_UI16, T_UI32, T_UI64, T_RANKED,
  T_RANKED_ENC, T_TOKEN, T_TUPLE, T_QUANT, T_UNRANKED, T_WITNESS, T_F8E4M3FNUZ, T_F8E5M2FNUZ,
  T_F8E4M3B11FNUZ, T_QUANT_AXIS, T_SI2, T_UI2, T_NONE, T_TF32, T_F8E4M3, T_F8E3M4, T_F4E2M1FN,
  T_F6E2M3FN, T_F6E3M2FN, T_F8E8M0FNU, T_BUFFER, T_FUTURE
};

static int float_code(uint64_t code, cx_mlir_float_kind *k) {
  switch (code) {
  case T_BF16: *k = CX_MLIR_BF16; return 1;
  case T_F16: *k = CX_MLIR_F16; return 1;
  case T_F32: *k = CX_MLIR_F32; return 1;
  case T_F64: *k = CX_MLIR_F64; return 1;
  case T_F8E4M3FN: *k = CX_MLIR_F8E4M3FN; return 1;
  case T_F8E5M2: *k = CX_MLIR_F8E5M2; return 1;
  case T_F8E4M3FNUZ: *k = CX_MLIR_F8E4M3FNUZ; return 1;
  case T_F8E5M2FNUZ: *k = CX_MLIR_F8E5M2FNUZ; return 1;
  case T_F8E4M3B11FNUZ: *k = CX_MLIR_F8E4M3B11FNUZ; return 1;
  case T_TF32: *k = CX_MLIR_TF32; return 1;
  case T_F8E4M3: *k = CX_MLIR_F8E4M3; return 1;
  case T_F8E3M4: *k = CX_MLIR_F8E3M4; return 1;
  case T_F4E2M1FN: *k = CX_MLIR_F4E2M1FN; return 1;
  case T_F6E2M3FN: *k = CX_MLIR_F6E2M3FN; return 1;
  case T_F6E3M2FN: *k = CX_MLIR_F6E3M2FN; return 1;
  case T_F8E8M0FNU: *k = CX_MLIR_F8E8M0FNU; return 1;
  default: return 0;
  }
}

static int int_code(uint64_t code, int *width, cx_mlir_signedness *sign) {
  static const struct { uint8_t code, width, sign; } ints[] = {
      {T_BOOL, 1, CX_MLIR_SIGNLESS}, {T_SI2, 2, CX_MLIR_SIGNLESS}, {T_SI4, 4, CX_MLIR_SIGNLESS},
      {T_SI8, 8, CX_MLIR_SIGNLESS},  {T_SI16, 16, CX_MLIR_SIGNLESS}, {T_SI32, 32, CX_MLIR_SIGNLESS},
      {T_SI64, 64, CX_MLIR_SIGNLESS}, {T_UI2, 2, CX_MLIR_UNSIGNED}, {T_UI4, 4, CX_MLIR_UNSIGNED},
      {T_UI8, 8, CX_MLIR_UNSIGNED},  {T_UI16, 16, CX_MLIR_UNSIGNED}, {T_UI32, 32, CX_MLIR_UNSIGNED},
      {T_UI64, 64, CX_MLIR_UNSIGNED}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (ints[i].code == code) {
      *width = ints[i].width;
      *sign = (cx_mlir_signedness)ints[i].sign;
      return 1;
    }
  return 0;
}

static cxla_status shaped(cx_bc *bc, cx_bc_cur *c, cx_mlir_type *t) {
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_svarints(bc, c, &t->rank, &t->dims));
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 && t->dims[i] != CX_MLIR_DYNAMIC)
      return cx_bc_fail(bc, at, "negative dimension %lld", (long long)t->dims[i]);
  return cx_bc_type_ref(bc, c, &t->elem);
}

static cxla_status quant(cx_bc *bc, cx_bc_cur *c, cx_mlir_type *t, int per_axis) {
  cx_mlir_quant *q = cx_bc_alloc(bc, sizeof *q);
  if (!q) return CXLA_ERR_OUT_OF_MEMORY;
  t->kind = CX_MLIR_TYPE_QUANT;
  t->quant = q;
  q->per_axis = per_axis;
  CX_TRY(cx_bc_varint(bc, c, &q->flags));
  CX_TRY(cx_bc_type_ref(bc, c, &q->storage));
  CX_TRY(cx_bc_type_ref(bc, c, &q->expressed));
  if (!per_axis) {
    double *s = cx_bc_alloc(bc, sizeof *s);
    int64_t *z = cx_bc_alloc(bc, sizeof *z);
    if (!s || !z) return CXLA_ERR_OUT_OF_MEMORY;
    CX_TRY(read_apfloat_f64(bc, c, s));
    CX_TRY(cx_bc_svarint(bc, c, z));
    CX_TRY(cx_bc_svarint(bc, c, &q->storage_min));
    CX_TRY(cx_bc_svarint(bc, c, &q->storage_max));
    q->nscales = 1;
    q->scales = s;
    q->zero_points = z;
    return CXLA_OK;
  }
  uint64_t dim;
  int64_t ns, nz;
  CX_TRY(cx_bc_varint(bc, c, &dim));
  q->quantized_dim = (int64_t)(dim > INT64_MAX ? INT64_MAX : dim);
  CX_TRY(cx_bc_svarint(bc, c, &q->storage_min));
  CX_TRY(cx_bc_svarint(bc, c, &q->storage_max));
  CX_TRY(cx_bc_count(bc, c, 1, "quantization scale", &ns));
  double *s = cx_bc_array(bc, ns, sizeof *s);
  if (ns && !s) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < ns; i++) CX_TRY(read_apfloat_f64(bc, c, &s[i]));
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_count(bc, c, 1, "zero point", &nz));
  if (nz != ns) return cx_bc_fail(bc, at, "%lld zero points for %lld scales", (long long)nz, (long long)ns);
  int64_t *z = cx_bc_array(bc, nz, sizeof *z);
  if (nz && !z) return CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < nz; i++) CX_TRY(cx_bc_svarint(bc, c, &z[i]));
  q->nscales = (int)ns;
  q->scales = s;
  q->zero_points = z;
  return CXLA_OK;
}

cxla_status cx_vhlo_read_type(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out) {
  const uint8_t *at = c->p;
  uint64_t code;
  CX_TRY(cx_bc_varint(bc, c, &code));
  cx_mlir_type *t = cx_bc_new_type(bc, CX_MLIR_TYPE_OPAQUE, V);
  if (!t) return CXLA_ERR_OUT_OF_MEMORY;
  *out = t;
  if (float_code(code, &t->fkind)) {
    t->kind = CX_MLIR_TYPE_FLOAT;
    return CXLA_OK;
  }
  if (int_code(code, &t->width, &t->sign)) {
    t->kind = CX_MLIR_TYPE_INT;
    return CXLA_OK;
  }
  switch (code) {
  case T_COMPLEX:
    t->kind = CX_MLIR_TYPE_COMPLEX;
    return cx_bc_type_ref(bc, c, &t->elem);
  case T_FUNCTION:
    t->kind = CX_MLIR_TYPE_FUNCTION;
    CX_TRY(cx_bc_type_refs(bc, c, &t->n, &t->types));
    return cx_bc_type_refs(bc, c, &t->nout, &t->outputs);
  case T_INDEX:
    t->kind = CX_MLIR_TYPE_INDEX;
    return CXLA_OK;
  case T_RANKED_ENC:
    CX_TRY(cx_bc_attr_ref(bc, c, &t->encoding));
    /* fall through */
  case T_RANKED:
    t->kind = CX_MLIR_TYPE_RANKED_TENSOR;
    return shaped(bc, c, t);
  case T_TOKEN:
    t->kind = CX_MLIR_TYPE_TOKEN;
    return CXLA_OK;
  case T_TUPLE:
    t->kind = CX_MLIR_TYPE_TUPLE;
    return cx_bc_type_refs(bc, c, &t->n, &t->types);
  case T_FUTURE:
    t->kind = CX_MLIR_TYPE_FUTURE;
    return cx_bc_type_refs(bc, c, &t->n, &t->types);
  case T_QUANT: return quant(bc, c, t, 0);
  case T_QUANT_AXIS: return quant(bc, c, t, 1);
  case T_UNRANKED:
    t->kind = CX_MLIR_TYPE_UNRANKED_TENSOR;
    return cx_bc_type_ref(bc, c, &t->elem);
  case T_WITNESS:
    t->kind = CX_MLIR_TYPE_WITNESS;
    return CXLA_OK;
  case T_NONE:
    t->kind = CX_MLIR_TYPE_NONE;
    return CXLA_OK;
  case T_BUFFER:
    t->kind = CX_MLIR_TYPE_BUFFER;
    return shaped(bc, c, t);
  default:
    t->raw_len = (size_t)(c->end - at);
    t->raw = cx_arena_memdup(bc->A, at, t->raw_len);
    c->p = c->end;
    return t->raw ? CXLA_OK : cx_bc_oom(bc);
  }
}
