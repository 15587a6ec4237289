/* ops.c — table lookups over ops.def. */
#include <string.h>
#include "ir/ops.h"

enum { CHEAP, EXPENSIVE };
typedef struct {
  const char *name;
  int arity;
  cx_op_class cls;
  int expensive;
} op_info;

static const op_info table[CX_OP_COUNT] = {
#define X(id, name, arity, cls, cost) {name, arity, CX_CLASS_##cls, cost},
#include "ir/ops.def"
#undef X
};

const char *cx_op_name(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].name : "?"; }
int cx_op_arity(cx_op op) { return table[op].arity; }
cx_op_class cx_op_class_of(cx_op op) { return table[op].cls; }
int cx_op_is_expensive(cx_op op) { return table[op].expensive; }

int cx_op_lookup(const char *name, int len) {
  for (int i = 0; i < CX_OP_COUNT; i++)
    if ((int)strlen(table[i].name) == len && !memcmp(table[i].name, name, (size_t)len)) return i;
  return -1;
}
