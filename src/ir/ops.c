/* ops.c — table lookups over ops.def. */
#include <string.h>
#include "ir/ops.h"
#include "ir/types.h"

enum { CHEAP, EXPENSIVE };
enum { INFER, WRITTEN, UNINFERRED };
typedef struct {
  const char *name;
  int arity;
  cx_op_class cls;
  int expensive;
  cx_op_runs runs;
  int shape;
} op_info;

static const op_info table[CX_OP_COUNT] = {
#define X(id, name, arity, cls, cost, runs, shape) {name, arity, CX_CLASS_##cls, cost, CX_RUNS_##runs, shape},
#include "ir/ops.def"
#undef X
};

const char *cx_op_name(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].name : "?"; }
int cx_op_arity(cx_op op) { return table[op].arity; }
cx_op_class cx_op_class_of(cx_op op) { return table[op].cls; }
int cx_op_is_expensive(cx_op op) { return table[op].expensive; }
cx_op_runs cx_op_runs_on(cx_op op) { return table[op].runs; }

int cx_op_shape_inferable(cx_op op, const char **why) {
  if (table[op].shape == INFER) return 1;
  *why = table[op].shape == WRITTEN ? "XLA's parser requires it too" : "cxla does not infer it (XLA's parser does)";
  return 0;
}

int cx_op_lookup(const char *name, int len) {
  for (int i = 0; i < CX_OP_COUNT; i++)
    if ((int)strlen(table[i].name) == len && !memcmp(table[i].name, name, (size_t)len)) return i;
  return -1;
}

int cx_op_valid_for_type(cx_op op, cxla_type t) {
  cx_kind k = cx_type_kind(t);
  if (k == CX_KIND_NONE) return 0;
  switch (op) {
  case CX_OP_EXP: case CX_OP_EXPM1: case CX_OP_LOG: case CX_OP_LOG1P: case CX_OP_LOGISTIC:
  case CX_OP_SQRT: case CX_OP_RSQRT: case CX_OP_CBRT: case CX_OP_SIN: case CX_OP_COS:
  case CX_OP_TAN: case CX_OP_TANH: case CX_OP_FLOOR: case CX_OP_CEIL: case CX_OP_ROUND_AFZ:
  case CX_OP_ROUND_EVEN: case CX_OP_IS_FINITE: case CX_OP_ERF: case CX_OP_ATAN2:
  case CX_OP_REDUCE_PRECISION:
    return k == CX_KIND_FLOAT;
  case CX_OP_NOT: case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR:
    return k != CX_KIND_FLOAT;
  case CX_OP_POPCNT: case CX_OP_CLZ: case CX_OP_SHIFT_LEFT: case CX_OP_SHIFT_RIGHT_ARITHMETIC:
  case CX_OP_SHIFT_RIGHT_LOGICAL:
    return k == CX_KIND_SINT || k == CX_KIND_UINT;
  case CX_OP_ABS: case CX_OP_NEGATE: case CX_OP_SIGN: case CX_OP_DIVIDE: case CX_OP_REMAINDER:
    return k != CX_KIND_PRED;
  case CX_OP_ADD: case CX_OP_SUBTRACT: case CX_OP_MULTIPLY: case CX_OP_MAXIMUM:
  case CX_OP_MINIMUM: case CX_OP_POWER: case CX_OP_COPY: case CX_OP_CONVERT:
  case CX_OP_BITCAST_CONVERT: case CX_OP_COMPARE: case CX_OP_SELECT: case CX_OP_CLAMP:
    return 1;
  default:
    return 0;
  }
}

