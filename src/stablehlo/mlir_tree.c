/* mlir_tree.c — what users of a cx_mlir_tree ask of it: lookups by name, element counts and
 * storage sizes, the values of float encodings of every width MLIR knows, and locations as
 * text for messages. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "stablehlo/bytecode_int.h"

void cx_mlir_tree_free(cx_mlir_tree *t) {
  if (!t) return;
  cx_arena_free(&t->arena);
  cx_free(t);
}

const cx_mlir_attr *cx_mlir_op_attr(const cx_mlir_op *op, const char *name) {
  for (int i = 0; op && i < op->num_attrs; i++)
    if (!strcmp(op->attrs[i].name, name)) return op->attrs[i].value;
  return NULL;
}

const cx_mlir_attr *cx_mlir_dict_get(const cx_mlir_attr *d, const char *name) {
  if (!d || d->kind != CX_MLIR_ATTR_DICT) return NULL;
  for (int i = 0; i < d->u.dict.n; i++)
    if (!strcmp(d->u.dict.entries[i].name, name)) return d->u.dict.entries[i].value;
  return NULL;
}

cx_mlir_op *cx_mlir_block_find(const cx_mlir_block *b, const char *name) {
  for (int i = 0; b && i < b->num_ops; i++)
    if (!strcmp(b->ops[i]->name, name)) return b->ops[i];
  return NULL;
}

const char *cx_mlir_attr_cstr(const cx_mlir_attr *a) {
  return a && a->kind == CX_MLIR_ATTR_STRING ? a->u.str.bytes : NULL;
}

cx_mlir_op *cx_mlir_find_func(const cx_mlir_op *module, const char *sym) {
  if (!module || module->num_regions < 1 || module->regions[0].num_blocks < 1) return NULL;
  const cx_mlir_block *b = &module->regions[0].blocks[0];
  for (int i = 0; i < b->num_ops; i++) {
    const cx_mlir_op *f = b->ops[i];
    if (strcmp(f->name, "vhlo.func_v1") && strcmp(f->name, "func.func")) continue;
    const char *name = cx_mlir_attr_cstr(cx_mlir_op_attr(f, "sym_name"));
    if (name && !strcmp(name, sym)) return b->ops[i];
  }
  return NULL;
}

int64_t cx_mlir_type_numel(const cx_mlir_type *t) {
  if (!t || (t->kind != CX_MLIR_TYPE_RANKED_TENSOR && t->kind != CX_MLIR_TYPE_BUFFER)) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i];
    if (d < 0) return -1;
    if (d && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

unsigned cx_mlir_float_bits(cx_mlir_float_kind k) {
  switch (k) {
  case CX_MLIR_BF16: case CX_MLIR_F16: return 16;
  case CX_MLIR_F32: return 32;
  case CX_MLIR_F64: return 64;
  case CX_MLIR_F80: return 80;
  case CX_MLIR_F128: return 128;
  case CX_MLIR_TF32: return 19;
  case CX_MLIR_F8E3M4: case CX_MLIR_F8E4M3: case CX_MLIR_F8E4M3FN: case CX_MLIR_F8E5M2:
  case CX_MLIR_F8E4M3FNUZ: case CX_MLIR_F8E5M2FNUZ: case CX_MLIR_F8E4M3B11FNUZ: case CX_MLIR_F8E8M0FNU:
    return 8;
  case CX_MLIR_F4E2M1FN: return 4;
  case CX_MLIR_F6E2M3FN: case CX_MLIR_F6E3M2FN: return 6;
  }
  return 0;
}

size_t cx_mlir_elem_bytes(const cx_mlir_type *t) {
  if (!t) return 0;
  switch (t->kind) {
  case CX_MLIR_TYPE_INT: return (size_t)(t->width + 7) / 8;
  case CX_MLIR_TYPE_INDEX: return 8;
  case CX_MLIR_TYPE_FLOAT: return (cx_mlir_float_bits(t->fkind) + 7) / 8;
  case CX_MLIR_TYPE_COMPLEX: return 2 * cx_mlir_elem_bytes(t->elem);
  default: return 0;
  }
}

/* How each float format spends its bits: exponent and mantissa widths, bias, and which
 * encodings are special. IEEE: all-ones exponent is inf/NaN. FN: no infinities, only the
 * all-ones pattern is NaN. FNUZ: no infinities, no negative zero, 0x80 is the only NaN.
 * FINITE: every pattern is a number. E8M0: unsigned powers of two, 0xFF is NaN. */
enum { IEEE, FN, FNUZ, FINITE, E8M0 };
static const struct { uint8_t e, m; int16_t bias; uint8_t style; } fmt[] = {
    [CX_MLIR_BF16] = {8, 7, 127, IEEE},       [CX_MLIR_F16] = {5, 10, 15, IEEE},
    [CX_MLIR_F32] = {8, 23, 127, IEEE},       [CX_MLIR_F64] = {11, 52, 1023, IEEE},
    [CX_MLIR_TF32] = {8, 10, 127, IEEE},      [CX_MLIR_F8E3M4] = {3, 4, 3, IEEE},
    [CX_MLIR_F8E4M3] = {4, 3, 7, IEEE},       [CX_MLIR_F8E4M3FN] = {4, 3, 7, FN},
    [CX_MLIR_F8E5M2] = {5, 2, 15, IEEE},      [CX_MLIR_F8E4M3FNUZ] = {4, 3, 8, FNUZ},
    [CX_MLIR_F8E5M2FNUZ] = {5, 2, 16, FNUZ},  [CX_MLIR_F8E4M3B11FNUZ] = {4, 3, 11, FNUZ},
    [CX_MLIR_F8E8M0FNU] = {8, 0, 127, E8M0},  [CX_MLIR_F4E2M1FN] = {2, 1, 1, FINITE},
    [CX_MLIR_F6E2M3FN] = {2, 3, 1, FINITE},   [CX_MLIR_F6E3M2FN] = {3, 2, 3, FINITE},
};

double cx_mlir_float_value(cx_mlir_float_kind k, uint64_t bits) {
  if (k == CX_MLIR_F80 || k == CX_MLIR_F128) return NAN;
  if (k == CX_MLIR_F64) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (k == CX_MLIR_F32) {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
  }
  unsigned eb = fmt[k].e, mb = fmt[k].m;
  uint64_t mant = bits & ((UINT64_C(1) << mb) - 1);
  uint64_t exp = (bits >> mb) & ((UINT64_C(1) << eb) - 1);
  uint64_t emax = (UINT64_C(1) << eb) - 1;
  if (fmt[k].style == E8M0) return exp == emax ? NAN : ldexp(1.0, (int)exp - fmt[k].bias);
  int neg = (int)((bits >> (eb + mb)) & 1);
  if (fmt[k].style == FNUZ && neg && !exp && !mant) return NAN;
  if (fmt[k].style == IEEE && exp == emax) return mant ? NAN : (neg ? -INFINITY : INFINITY);
  if (fmt[k].style == FN && exp == emax && mant == (UINT64_C(1) << mb) - 1) return NAN;
  double v = exp ? ldexp((double)(mant | (UINT64_C(1) << mb)), (int)exp - fmt[k].bias - (int)mb)
                 : ldexp((double)mant, 1 - fmt[k].bias - (int)mb);
  return neg ? -v : v;
}

void cx_mlir_loc_str(const cx_mlir_attr *loc, char *buf, size_t n) {
  if (!n) return;
  buf[0] = 0;
  /* descend to the first file location, keeping the innermost name seen on the way */
  const char *name = NULL;
  for (int guard = 0; loc && guard < 64; guard++) {
    if (loc->kind != CX_MLIR_ATTR_LOC) break;
    if (loc->u.loc.kind == CX_MLIR_LOC_FILE) {
      snprintf(buf, n, "%s:%lld:%lld", loc->u.loc.file, (long long)loc->u.loc.line, (long long)loc->u.loc.col);
      return;
    }
    if (loc->u.loc.kind == CX_MLIR_LOC_NAME) {
      if (!name) name = loc->u.loc.name;
      loc = loc->u.loc.child;
    } else if (loc->u.loc.kind == CX_MLIR_LOC_CALLSITE) {
      loc = loc->u.loc.callee;
    } else if (loc->u.loc.kind == CX_MLIR_LOC_FUSED) {
      loc = loc->u.loc.n ? loc->u.loc.locs[0] : NULL;
    } else {
      break;
    }
  }
  snprintf(buf, n, "%s", name ? name : "unknown");
}
