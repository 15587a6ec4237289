/* translate_types.c — VHLO types to cxla shapes, the attribute readers every op handler uses
 * (each names the attribute it refuses), and dense constants to literals byte for byte. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "stablehlo/translate.h"

cxla_status cx_sx_err(cx_sx *sx, const cx_mlir_op *op, cxla_status code, const char *fmt, ...) {
  char msg[1400], where[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!op) return cx_error(sx->ctx, code, "%s: error: %s", sx->filename, msg);
  cx_mlir_loc_str(op->loc, where, sizeof where);
  return cx_error(sx->ctx, code, "%s: error: %s: %s: %s", sx->filename, where, op->name, msg);
}

static const char *type_text(const cx_mlir_type *t, char *buf, size_t n) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_mlir_print_type(&sb, t);
  snprintf(buf, n, "%s", sb.buf && !sb.oom ? sb.buf : "?");
  cx_sb_free(&sb);
  return buf;
}

static int float_type(cx_mlir_float_kind k, cxla_type *out) {
  switch (k) {
  case CX_MLIR_BF16: *out = CXLA_BF16; return 1;
  case CX_MLIR_F16: *out = CXLA_F16; return 1;
  case CX_MLIR_F32: *out = CXLA_F32; return 1;
  case CX_MLIR_F64: *out = CXLA_F64; return 1;
  case CX_MLIR_F8E3M4: *out = CXLA_F8E3M4; return 1;
  case CX_MLIR_F8E4M3: *out = CXLA_F8E4M3; return 1;
  case CX_MLIR_F8E4M3FN: *out = CXLA_F8E4M3FN; return 1;
  case CX_MLIR_F8E5M2: *out = CXLA_F8E5M2; return 1;
  case CX_MLIR_F8E4M3FNUZ: *out = CXLA_F8E4M3FNUZ; return 1;
  case CX_MLIR_F8E5M2FNUZ: *out = CXLA_F8E5M2FNUZ; return 1;
  case CX_MLIR_F8E4M3B11FNUZ: *out = CXLA_F8E4M3B11FNUZ; return 1;
  case CX_MLIR_F8E8M0FNU: *out = CXLA_F8E8M0FNU; return 1;
  case CX_MLIR_F4E2M1FN: *out = CXLA_F4E2M1FN; return 1;
  case CX_MLIR_F80: case CX_MLIR_F128: case CX_MLIR_TF32: case CX_MLIR_F6E2M3FN: case CX_MLIR_F6E3M2FN: return 0;
  }
  return 0;
}

cxla_status cx_sx_elem_type(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_type *t, cxla_type *out) {
  char buf[160];
  if (t->kind == CX_MLIR_TYPE_INT) {
    int u = t->sign == CX_MLIR_UNSIGNED;
    switch (t->width) {
    case 1: *out = CXLA_PRED; return CXLA_OK;
    case 2: *out = u ? CXLA_U2 : CXLA_S2; return CXLA_OK;
    case 4: *out = u ? CXLA_U4 : CXLA_S4; return CXLA_OK;
    case 8: *out = u ? CXLA_U8 : CXLA_S8; return CXLA_OK;
    case 16: *out = u ? CXLA_U16 : CXLA_S16; return CXLA_OK;
    case 32: *out = u ? CXLA_U32 : CXLA_S32; return CXLA_OK;
    case 64: *out = u ? CXLA_U64 : CXLA_S64; return CXLA_OK;
    default: break;
    }
  } else if (t->kind == CX_MLIR_TYPE_FLOAT) {
    if (float_type(t->fkind, out)) return CXLA_OK;
  } else if (t->kind == CX_MLIR_TYPE_COMPLEX && t->elem && t->elem->kind == CX_MLIR_TYPE_FLOAT) {
    if (t->elem->fkind == CX_MLIR_F32) { *out = CXLA_C64; return CXLA_OK; }
    if (t->elem->fkind == CX_MLIR_F64) { *out = CXLA_C128; return CXLA_OK; }
  }
  return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: element type %s (cxla has no such type)",
                   type_text(t, buf, sizeof buf));
}

cxla_status cx_sx_shape(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_type *t, cx_shape *out) {
  char buf[200];
  memset(out, 0, sizeof *out);
  switch (t->kind) {
  case CX_MLIR_TYPE_TOKEN:
    out->type = CXLA_TOKEN;
    return CXLA_OK;
  case CX_MLIR_TYPE_TUPLE: {
    out->type = CXLA_TUPLE;
    out->ntuple = t->n;
    if (!t->n) return CXLA_OK;
    out->tuple = cx_arena_alloc(&sx->m->arena, sizeof *out->tuple * (size_t)t->n);
    if (!out->tuple) return cx_oom(sx->ctx);
    for (int i = 0; i < t->n; i++) CX_TRY(cx_sx_shape(sx, op, t->types[i], &out->tuple[i]));
    return CXLA_OK;
  }
  case CX_MLIR_TYPE_RANKED_TENSOR: {
    if (t->rank > CXLA_MAX_RANK)
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: rank %d (cxla allows up to %d) in %s", t->rank,
                       CXLA_MAX_RANK, type_text(t, buf, sizeof buf));
    for (int d = 0; d < t->rank; d++) {
      if (t->dims[d] == CX_MLIR_DYNAMIC)
        return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED,
                         "not supported: dimension %d of %s is dynamic (shape-polymorphic); export with static shapes",
                         d, type_text(t, buf, sizeof buf));
      if (t->dims[d] < 0)
        return cx_sx_err(sx, op, CXLA_ERR_PARSE, "dimension %d of %s is negative", d, type_text(t, buf, sizeof buf));
    }
    CX_TRY(cx_sx_elem_type(sx, op, t->elem, &out->type));
    out->rank = t->rank;
    for (int d = 0; d < t->rank; d++) out->dims[d] = t->dims[d];
    if (cx_shape_elems(out) < 0)
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: %s has too many elements",
                       type_text(t, buf, sizeof buf));
    return CXLA_OK;
  }
  case CX_MLIR_TYPE_UNRANKED_TENSOR:
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: unranked tensor %s", type_text(t, buf, sizeof buf));
  case CX_MLIR_TYPE_QUANT:
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: quantized type %s", type_text(t, buf, sizeof buf));
  case CX_MLIR_TYPE_INT: case CX_MLIR_TYPE_INDEX: case CX_MLIR_TYPE_FLOAT: case CX_MLIR_TYPE_COMPLEX:
  case CX_MLIR_TYPE_FUNCTION: case CX_MLIR_TYPE_NONE: case CX_MLIR_TYPE_WITNESS: case CX_MLIR_TYPE_FUTURE:
  case CX_MLIR_TYPE_BUFFER: case CX_MLIR_TYPE_OPAQUE:
    break;
  }
  return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: a value of type %s", type_text(t, buf, sizeof buf));
}

cxla_status cx_sx_result_shape(cx_sx *sx, const cx_mlir_op *op, cx_shape *out) {
  if (op->num_results == 1) return cx_sx_shape(sx, op, op->results[0].type, out);
  memset(out, 0, sizeof *out);
  out->type = CXLA_TUPLE;
  out->ntuple = op->num_results;
  if (!op->num_results) return CXLA_OK;
  out->tuple = cx_arena_alloc(&sx->m->arena, sizeof *out->tuple * (size_t)op->num_results);
  if (!out->tuple) return cx_oom(sx->ctx);
  for (int i = 0; i < op->num_results; i++) CX_TRY(cx_sx_shape(sx, op, op->results[i].type, &out->tuple[i]));
  return CXLA_OK;
}

cxla_status cx_sx_set_layout(cx_sx *sx, const cx_mlir_op *op, cx_shape *s, const cx_mlir_attr *a) {
  cx_ints v;
  CX_TRY(cx_sx_ints_of(sx, op, a, "a layout", &v));
  if (s->type == CXLA_TUPLE || s->type == CXLA_TOKEN) {
    if (v.n) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a layout of %d dimensions for a tuple or token", v.n);
    return CXLA_OK;
  }
  if (v.n != s->rank) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a layout of %d dimensions for rank %d", v.n, s->rank);
  if (!s->rank) return CXLA_OK; /* a scalar has one layout: XLA's text writes none */
  uint32_t seen = 0;
  for (int i = 0; i < v.n; i++) {
    if (v.v[i] < 0 || v.v[i] >= s->rank || (seen >> v.v[i] & 1))
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "layout entry %lld is not a permutation of 0..%d", (long long)v.v[i],
                       s->rank - 1);
    seen |= 1u << v.v[i];
    s->minor_to_major[i] = (int8_t)v.v[i];
  }
  s->has_layout = 1;
  return CXLA_OK;
}

/* ---- attributes ---- */

static const char *const kind_names[] = {
    "an array", "a dictionary", "a bool", "an integer", "a float", "a string", "a dense tensor", "a type",
    "an enum", "an output-operand alias", "a symbol", "a unit", "type extensions", "a result accuracy",
    "a dense array", "a dense resource", "a sharding record", "a location", "an opaque attribute"};

static const char *kind_name(const cx_mlir_attr *a) {
  return a && (int)a->kind >= 0 && (int)a->kind < CX_ARRAY_LEN(kind_names) ? kind_names[a->kind] : "?";
}

const cx_mlir_attr *cx_sx_attr(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, cxla_status *st) {
  *st = CXLA_OK;
  const cx_mlir_attr *a = cx_mlir_op_attr(op, name);
  /* VHLO writes an absent optional attribute as #vhlo.type_v1<!vhlo.none_v1> */
  if (a && a->kind == CX_MLIR_ATTR_TYPE && a->u.type && a->u.type->kind == CX_MLIR_TYPE_NONE) a = NULL;
  if (!a && required) *st = cx_sx_err(sx, op, CXLA_ERR_PARSE, "missing attribute '%s'", name);
  return a;
}

/* Element e of dense integer data of element type t (little-endian, storage size). */
static int64_t dense_int(const cx_mlir_type *t, const uint8_t *data, size_t esz, int64_t e) {
  uint64_t v = 0;
  for (size_t b = 0; b < esz && b < 8; b++) v |= (uint64_t)data[(size_t)e * esz + b] << (8 * b);
  int width = t->kind == CX_MLIR_TYPE_INDEX ? 64 : t->width;
  if (width < 64 && width > 0) {
    uint64_t m = (uint64_t)1 << width;
    v &= m - 1;
    if (t->sign != CX_MLIR_UNSIGNED && width > 1 && (v >> (width - 1) & 1)) v |= ~(m - 1);
  }
  return (int64_t)v;
}

static int int_type(const cx_mlir_type *t) { return t && (t->kind == CX_MLIR_TYPE_INT || t->kind == CX_MLIR_TYPE_INDEX); }

cxla_status cx_sx_ints_of(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_attr *a, const char *what, cx_ints *out) {
  out->n = 0;
  out->v = NULL;
  const cx_mlir_type *et = NULL;
  const uint8_t *data = NULL;
  int64_t n = 0;
  int splat = 0;
  size_t size = 0;
  if (a->kind == CX_MLIR_ATTR_TENSOR && a->u.dense.type && a->u.dense.type->elem) {
    et = a->u.dense.type->elem, data = a->u.dense.data, n = a->u.dense.count, splat = a->u.dense.splat, size = a->u.dense.size;
  } else if (a->kind == CX_MLIR_ATTR_DENSE_ARRAY) {
    et = a->u.darray.elem, data = a->u.darray.data, n = a->u.darray.count, size = a->u.darray.size;
  } else if (a->kind == CX_MLIR_ATTR_ARRAY) {
    n = a->u.array.n;
    for (int i = 0; i < a->u.array.n; i++)
      if (a->u.array.elems[i]->kind != CX_MLIR_ATTR_INT)
        return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a list of integers, element %d is %s", what, i,
                         kind_name(a->u.array.elems[i]));
  } else {
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a list of integers, got %s", what, kind_name(a));
  }
  if (a->kind != CX_MLIR_ATTR_ARRAY && !int_type(et))
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a list of integers, got non-integer elements", what);
  if (n > (1 << 20)) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "'%s' has %lld entries", what, (long long)n);
  size_t esz = et ? cx_mlir_elem_bytes(et) : 0;
  if (a->kind != CX_MLIR_ATTR_ARRAY && n && (!esz || size < esz * (splat ? 1 : (size_t)n)))
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' holds %zu bytes for %lld integers", what, size, (long long)n);
  if (!n) return CXLA_OK;
  int64_t *v = cx_arena_alloc(&sx->m->arena, sizeof *v * (size_t)n);
  if (!v) return cx_oom(sx->ctx);
  for (int64_t i = 0; i < n; i++) {
    if (a->kind == CX_MLIR_ATTR_ARRAY) v[i] = a->u.array.elems[i]->u.integer.value;
    else v[i] = dense_int(et, data, esz, splat ? 0 : i);
  }
  out->n = (int)n;
  out->v = v;
  return CXLA_OK;
}

cxla_status cx_sx_ints(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, cx_ints *out) {
  cxla_status st;
  out->n = 0;
  out->v = NULL;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, required, &st);
  if (!a) return st;
  return cx_sx_ints_of(sx, op, a, name, out);
}

cxla_status cx_sx_int(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, int64_t dflt, int64_t *out) {
  cxla_status st;
  *out = dflt;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, required, &st);
  if (!a) return st;
  if (a->kind != CX_MLIR_ATTR_INT)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be an integer, got %s", name, kind_name(a));
  *out = a->u.integer.value;
  return CXLA_OK;
}

cxla_status cx_sx_bool(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, int dflt, int *out) {
  cxla_status st;
  *out = dflt;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, required, &st);
  if (!a) return st;
  if (a->kind == CX_MLIR_ATTR_UNIT) { *out = 1; return CXLA_OK; }
  if (a->kind != CX_MLIR_ATTR_BOOL) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a bool, got %s", name, kind_name(a));
  *out = a->u.boolean != 0;
  return CXLA_OK;
}

cxla_status cx_sx_enum(cx_sx *sx, const cx_mlir_op *op, const char *name, cx_mlir_enum_kind which, int required,
                       uint32_t dflt, uint32_t *out) {
  cxla_status st;
  *out = dflt;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, required, &st);
  if (!a) return st;
  if (a->kind != CX_MLIR_ATTR_ENUM || a->u.enm.which != which)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be an enum of its kind, got %s", name, kind_name(a));
  if (!cx_mlir_enum_name(which, a->u.enm.value))
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' has no value %u", name, (unsigned)a->u.enm.value);
  *out = a->u.enm.value;
  return CXLA_OK;
}

cxla_status cx_sx_f32(cx_sx *sx, const cx_mlir_op *op, const char *name, float *out) {
  cxla_status st;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, 1, &st);
  if (!a) return st;
  if (a->kind != CX_MLIR_ATTR_FLOAT) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a float, got %s", name, kind_name(a));
  *out = (float)a->u.fp.value;
  return CXLA_OK;
}

/* ---- dense constants ---- */

cxla_status cx_sx_literal(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_attr *a, const cx_shape *s,
                          cxla_literal **out, int *one) {
  *out = NULL;
  *one = 0;
  const uint8_t *data;
  size_t size;
  int64_t count;
  int splat = 0;
  const cx_mlir_type *tt;
  if (a->kind == CX_MLIR_ATTR_TENSOR) {
    data = a->u.dense.data, size = a->u.dense.size, count = a->u.dense.count, splat = a->u.dense.splat;
    tt = a->u.dense.type;
  } else if (a->kind == CX_MLIR_ATTR_DENSE_RESOURCE) {
    data = a->u.res.data, size = a->u.res.size, tt = a->u.res.type;
    count = tt ? cx_mlir_type_numel(tt) : -1;
    if (!data) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "dense_resource '%s' has no data in the file", a->u.res.key);
  } else {
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'value' must be a dense tensor, got %s", kind_name(a));
  }
  if (s->type == CXLA_TUPLE || s->type == CXLA_TOKEN)
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: a constant of a tuple or token type");
  /* the attribute's own type must be the result's (element type and dimensions) */
  if (tt) {
    cx_shape as;
    CX_TRY(cx_sx_shape(sx, op, tt, &as));
    if (!cx_shape_equal(&as, s)) {
      char b1[96], b2[96];
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the value's type %s is not the result's %s", cx_shape_str(&as, b1, sizeof b1),
                       cx_shape_str(s, b2, sizeof b2));
    }
  }
  int64_t n = cx_shape_elems(s);
  size_t esz = cxla_type_size(s->type);
  if (count != n) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the value has %lld elements, the type %lld", (long long)count, (long long)n);
  if (tt && tt->elem && cx_mlir_elem_bytes(tt->elem) != esz)
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: %zu-byte elements for cxla's %zu-byte %s",
                     cx_mlir_elem_bytes(tt->elem), esz, cxla_type_name(s->type));
  size_t want = splat ? esz : esz * (size_t)n;
  if (size != want)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the value holds %zu bytes, %s needs %zu", size,
                     splat ? "one element" : "the type", want);
  *one = splat && n > 1;
  cx_shape ls = *one ? cx_shape_array(s->type, 0, NULL) : *s;
  ls.has_layout = 0;
  if (*one) n = 1;
  cxla_literal *lit = cx_literal_new_uninit(&ls);
  if (!lit) return cx_oom(sx->ctx);
  uint8_t *dst = lit->data;
  if (splat) {
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esz, data, esz);
  } else if (want) {
    memcpy(dst, data, want);
  }
  /* pred holds 0 or 1 in cxla; MLIR's i1 bytes are 0 or 1 too, but make sure */
  if (s->type == CXLA_PRED)
    for (int64_t i = 0; i < n; i++) dst[i] = dst[i] != 0;
  *out = lit;
  return CXLA_OK;
}

/* ---- MLIR attribute syntax (typed-FFI backend_config), as mlir::Attribute::print writes it
 * for the kinds a backend_config dictionary holds ---- */

static void print_type_suffix(cx_sb *sb, const cx_mlir_type *t) {
  if (!t) return;
  cx_sb_puts(sb, " : ");
  cx_mlir_print_type(sb, t);
}

void cx_sx_print_attr(cx_sb *sb, const cx_mlir_attr *a) {
  switch (a->kind) {
  case CX_MLIR_ATTR_DICT:
    cx_sb_putc(sb, '{');
    for (int i = 0; i < a->u.dict.n; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_sb_puts(sb, a->u.dict.entries[i].name);
      if (a->u.dict.entries[i].value->kind == CX_MLIR_ATTR_UNIT) continue;
      cx_sb_puts(sb, " = ");
      cx_sx_print_attr(sb, a->u.dict.entries[i].value);
    }
    cx_sb_putc(sb, '}');
    return;
  case CX_MLIR_ATTR_ARRAY:
    cx_sb_putc(sb, '[');
    for (int i = 0; i < a->u.array.n; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_sx_print_attr(sb, a->u.array.elems[i]);
    }
    cx_sb_putc(sb, ']');
    return;
  case CX_MLIR_ATTR_BOOL:
    cx_sb_puts(sb, a->u.boolean ? "true" : "false");
    return;
  case CX_MLIR_ATTR_INT: {
    const cx_mlir_type *t = a->u.integer.type;
    if (t && t->kind == CX_MLIR_TYPE_INT && t->sign == CX_MLIR_UNSIGNED) cx_sb_printf(sb, "%llu", (unsigned long long)a->u.integer.bits);
    else cx_sb_printf(sb, "%lld", (long long)a->u.integer.value);
    /* MLIR leaves out ": i64" */
    if (t && !(t->kind == CX_MLIR_TYPE_INT && t->width == 64 && t->sign == CX_MLIR_SIGNLESS)) print_type_suffix(sb, t);
    return;
  }
  case CX_MLIR_ATTR_FLOAT: {
    const cx_mlir_type *t = a->u.fp.type;
    cx_sb_put_double(sb, a->u.fp.value, t && t->kind == CX_MLIR_TYPE_FLOAT && t->fkind == CX_MLIR_F32);
    if (t && !(t->kind == CX_MLIR_TYPE_FLOAT && t->fkind == CX_MLIR_F64)) print_type_suffix(sb, t);
    return;
  }
  case CX_MLIR_ATTR_STRING:
    cx_sb_putc(sb, '"');
    for (size_t i = 0; i < a->u.str.len; i++) {
      unsigned char c = (unsigned char)a->u.str.bytes[i];
      if (c == '"' || c == '\\') cx_sb_printf(sb, "\\%c", c);
      else if (c < 0x20 || c >= 0x7f) cx_sb_printf(sb, "\\%02X", c);
      else cx_sb_putc(sb, (char)c);
    }
    cx_sb_putc(sb, '"');
    return;
  case CX_MLIR_ATTR_UNIT:
    cx_sb_puts(sb, "unit");
    return;
  case CX_MLIR_ATTR_TENSOR: case CX_MLIR_ATTR_TYPE: case CX_MLIR_ATTR_ENUM: case CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS:
  case CX_MLIR_ATTR_SYMBOL_REF: case CX_MLIR_ATTR_TYPE_EXTENSIONS: case CX_MLIR_ATTR_RESULT_ACCURACY:
  case CX_MLIR_ATTR_DENSE_ARRAY: case CX_MLIR_ATTR_DENSE_RESOURCE: case CX_MLIR_ATTR_RECORD: case CX_MLIR_ATTR_LOC:
  case CX_MLIR_ATTR_OPAQUE:
    break;
  }
  cx_mlir_print_attr(sb, a);
}
