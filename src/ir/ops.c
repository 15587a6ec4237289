/* ops.c — table lookups over ops.def. */
#include <string.h>
#include "ir/ops.h"
#include "ir/types.h"

enum { CHEAP, EXPENSIVE, TRANSCENDENTAL, MOVES };
enum { INFER, WRITTEN, UNINFERRED };
enum { NA, ANY, REAL, FLOAT, SIGNED, NUMERIC, FLOAT_OR_COMPLEX, SIGNED_OR_COMPLEX, NUMERIC_OR_COMPLEX, INT, PRED_OR_INT };
enum { SIDE_EFFECT = 1, COMMUTATIVE = 2, COLLECTIVE = 4, IDEMPOTENT = 8 };
enum { NOFUSE, REINDEX, DISJOINT, UPDATE };
typedef struct {
  const char *name;
  int arity;
  cx_op_class cls;
  int expensive;
  cx_op_runs runs;
  int shape, types, called, flags;
  cx_op_index index;
  int fuse;
  cx_op_alias alias;
  cx_op_gpu gpu;
  const char *gpu_why;
} op_info;

/* the gpu column's values, pasted onto GPU_ (REFUSED("why") becomes GPU_REFUSED("why")) */
#define GPU_EMIT CX_GPU_EMIT, NULL
#define GPU_EMIT_F32 CX_GPU_EMIT_F32, NULL
#define GPU_LIBRARY CX_GPU_LIBRARY, NULL
#define GPU_HOST CX_GPU_HOST, NULL
#define GPU_REWRITTEN CX_GPU_REWRITTEN, NULL
#define GPU_NONE CX_GPU_NONE, NULL
#define GPU_REFUSED(why) CX_GPU_REFUSED, why

static const op_info table[CX_OP_COUNT] = {
#define X(id, name, arity, cls, cost, runs, shape, types, called, flags, infer, index, fuse, alias, gpu) \
  {name, arity, CX_CLASS_##cls, cost, CX_RUNS_##runs, shape, types, CX_CALLS_##called, flags, CX_INDEX_##index, fuse, \
   CX_ALIAS_##alias, GPU_##gpu},
#include "ir/ops.def"
#undef X
};

const char *cx_op_name(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].name : "?"; }
int cx_op_arity(cx_op op) { return table[op].arity; }
cx_op_class cx_op_class_of(cx_op op) { return table[op].cls; }
int cx_op_is_expensive(cx_op op) { return table[op].expensive == EXPENSIVE || table[op].expensive == TRANSCENDENTAL; }
int cx_op_moves_only(cx_op op) { return (unsigned)op < CX_OP_COUNT && table[op].expensive == MOVES; }
int cx_op_is_transcendental(cx_op op) { return (unsigned)op < CX_OP_COUNT && table[op].expensive == TRANSCENDENTAL; }
cx_op_runs cx_op_runs_on(cx_op op) { return table[op].runs; }
cx_op_index cx_op_index_of(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].index : CX_INDEX_MULTI; }
int cx_op_fuses_as_reindex(cx_op op) { return (unsigned)op < CX_OP_COUNT && table[op].fuse == REINDEX; }
int cx_op_fuses_when_disjoint(cx_op op) { return (unsigned)op < CX_OP_COUNT && table[op].fuse == DISJOINT; }
int cx_op_fuses_as_update(cx_op op) { return (unsigned)op < CX_OP_COUNT && table[op].fuse == UPDATE; }
cx_op_alias cx_op_alias_of(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].alias : CX_ALIAS_NEVER; }
cx_op_calls cx_op_calls_of(cx_op op) { return table[op].called; }
cx_op_gpu cx_op_gpu_of(cx_op op) { return (unsigned)op < CX_OP_COUNT ? table[op].gpu : CX_GPU_NONE; }

const char *cx_op_gpu_why(cx_op op) {
  switch (cx_op_gpu_of(op)) {
  case CX_GPU_REFUSED: return table[op].gpu_why;
  case CX_GPU_NONE: return "parsed only: no backend compiles it";
  case CX_GPU_REWRITTEN: return "the pass pipeline rewrites it into other ops, and this one was left whole";
  case CX_GPU_EMIT_F32:
    return "f64 (and complex, which computes in f64) has no GPU math row for it yet (target_nvptx.c)";
  default: return NULL;
  }
}
int cx_op_is_commutative(cx_op op) { return (table[op].flags & COMMUTATIVE) != 0; }
int cx_op_is_idempotent(cx_op op) { return (table[op].flags & IDEMPOTENT) != 0; }
int cx_op_is_collective(cx_op op) { return (table[op].flags & COLLECTIVE) != 0; }
int cx_op_has_side_effect(cx_op op) { return (table[op].flags & (SIDE_EFFECT | COLLECTIVE)) != 0; }

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
  int fl = k == CX_KIND_FLOAT, si = k == CX_KIND_SINT, ui = k == CX_KIND_UINT, cp = k == CX_KIND_COMPLEX;
  switch (table[op].types) {
  case ANY: return k != CX_KIND_NONE;
  case REAL: return k != CX_KIND_NONE && !cp;
  case FLOAT: return fl;
  case SIGNED: return fl || si;
  case NUMERIC: return fl || si || ui;
  case FLOAT_OR_COMPLEX: return fl || cp;
  case SIGNED_OR_COMPLEX: return fl || si || cp;
  case NUMERIC_OR_COMPLEX: return fl || si || ui || cp;
  case INT: return si || ui;
  case PRED_OR_INT: return k == CX_KIND_PRED || si || ui;
  default: return 0; /* NA: not elementwise */
  }
}

static const struct {
  int count; /* -1: any number */
  const char *role[2];
} k_calls[] = {
  [CX_CALLS_NOCALL] = {0, {NULL, NULL}}, [CX_CALLS_TO_APPLY] = {1, {"to_apply", NULL}},
  [CX_CALLS_COMPARATOR] = {1, {"comparator", NULL}}, [CX_CALLS_CALLS] = {1, {"calls", NULL}},
  [CX_CALLS_COND_BODY] = {2, {"condition", "body"}}, [CX_CALLS_SELECT_SCATTER] = {2, {"select", "scatter"}},
  [CX_CALLS_BRANCHES] = {-1, {"branch", "branch"}}, [CX_CALLS_ANYCALL] = {-1, {"to_apply", "to_apply"}},
};

int cx_op_called_count(cx_op op) { return k_calls[table[op].called].count; }

const char *cx_op_called_role(cx_op op, int k) {
  const char *r = k_calls[table[op].called].role[k > 0];
  return r ? r : "called";
}

const char *cx_op_types_accepted(cx_op op) {
  static const char *const what[] = {
    [NA] = "no element type (not elementwise)", [ANY] = "an array type",
    [REAL] = "an array type that is not complex", [FLOAT] = "a floating-point type",
    [SIGNED] = "a signed integer or floating-point type", [NUMERIC] = "an integer or floating-point type",
    [FLOAT_OR_COMPLEX] = "a floating-point or complex type",
    [SIGNED_OR_COMPLEX] = "a signed integer, floating-point or complex type",
    [NUMERIC_OR_COMPLEX] = "an integer, floating-point or complex type", [INT] = "an integer type",
    [PRED_OR_INT] = "pred or an integer type"};
  return what[table[op].types];
}
