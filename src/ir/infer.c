/* infer.c — shape inference entry point: operand and called-computation counts per op, the
 * dispatch to each op group's rule, and the rules for data plumbing and pass-through ops. */
#include <string.h>
#include "ir/infer.h"

cxla_status cx_infer_shape(cx_instr *in, cx_shape *out) {
  if (!in || !out || !in->parent || !in->parent->module) return CXLA_ERR_INVALID_ARGUMENT;
  cx_infer ic;
  memset(&ic, 0, sizeof ic);
  ic.in = in;
  ic.m = in->parent->module;
  ic.arena = &ic.m->arena;
  return cx_infer_run(&ic, out);
}

/* Operand-count rules of the variadic ops (ops.def says -1); fixed arities come from the table. */
static cxla_status check_operand_count(cx_infer *ic) {
  int n = ic->in->nops, arity = cx_op_arity(ic->in->op);
  if (arity >= 0) {
    if (n == arity) return CXLA_OK;
    return cx_vfail(ic, "expected %d operand%s, got %d", arity, arity == 1 ? "" : "s", n);
  }
  switch (ic->in->op) {
  case CX_OP_DYNAMIC_SLICE:
    if (n < 1) return cx_vfail(ic, "expected an operand followed by start indices, got %d operands", n);
    break;
  case CX_OP_DYNAMIC_UPDATE_SLICE:
    if (n < 2) return cx_vfail(ic, "expected an operand, an update and start indices, got %d operands", n);
    break;
  case CX_OP_CONCATENATE: case CX_OP_MAP: case CX_OP_SORT:
    if (n < 1) return cx_vfail(ic, "expected at least 1 operand, got 0");
    break;
  case CX_OP_REDUCE: case CX_OP_REDUCE_WINDOW:
    if (n < 2 || n % 2)
      return cx_vfail(ic, "expected N inputs followed by N init values (an even number >= 2), got %d operands", n);
    break;
  case CX_OP_SCATTER:
    if (n < 3 || n % 2 == 0)
      return cx_vfail(ic, "expected N operands, the indices and N updates (an odd number >= 3), got %d operands", n);
    break;
  case CX_OP_CONDITIONAL:
    if (n < 2) return cx_vfail(ic, "expected a branch index and one operand per branch, got %d operands", n);
    break;
  default: break; /* tuple, call, fusion, custom-call and the OTHER ops take any number */
  }
  return CXLA_OK;
}

static cxla_status check_called_count(cx_infer *ic) {
  cx_instr *in = ic->in;
  int want = 0;
  const char *roles = NULL;
  switch (in->op) {
  case CX_OP_REDUCE: case CX_OP_REDUCE_WINDOW: case CX_OP_MAP: case CX_OP_SCATTER:
  case CX_OP_CALL:
    want = 1; roles = "to_apply"; break;
  case CX_OP_SORT: want = 1; roles = "comparator"; break;
  case CX_OP_FUSION: case CX_OP_ASYNC_START: case CX_OP_ASYNC_UPDATE: case CX_OP_ASYNC_DONE:
    want = 1; roles = "calls"; break;
  case CX_OP_WHILE: want = 2; roles = "condition, body"; break;
  case CX_OP_SELECT_AND_SCATTER: want = 2; roles = "select, scatter"; break;
  case CX_OP_CONDITIONAL:
    if (in->ncalled < 1) return cx_vfail(ic, "expected at least 1 branch computation, got 0");
    want = -1;
    break;
  default:
    if (cx_op_class_of(in->op) == CX_CLASS_OTHER) want = -1; /* e.g. all-reduce's to_apply */
    break;
  }
  if (want >= 0 && in->ncalled != want) {
    if (want == 0) return cx_vfail(ic, "takes no called computations, got %d", in->ncalled);
    return cx_vfail(ic, "expected %d called computation%s (%s), got %d", want, want == 1 ? "" : "s",
                    roles, in->ncalled);
  }
  if (in->ncalled > 0 && !in->called) return cx_vfail(ic, "called computations are missing");
  for (int i = 0; i < in->ncalled; i++)
    if (!in->called[i]) return cx_vfail(ic, "called computation %d is missing", i);
  return CXLA_OK;
}

/* Operands must exist and carry a shape of a known kind, so rules can index dims safely. */
static cxla_status check_operands(cx_infer *ic) {
  cx_instr *in = ic->in;
  if (in->nops < 0 || (in->nops > 0 && !in->ops)) return cx_vfail(ic, "operands are missing");
  for (int i = 0; i < in->nops; i++) {
    const cx_instr *o = in->ops[i];
    if (!o) return cx_vfail(ic, "operand %d is missing", i);
    const cx_shape *s = &o->shape;
    int kind_ok = s->type == CXLA_TUPLE ? s->ntuple >= 0 && (s->ntuple == 0 || s->tuple)
                                        : (cx_type_is_array(s->type) || s->type == CXLA_TOKEN);
    if (!kind_ok || s->rank < 0 || s->rank > CXLA_MAX_RANK)
      return cx_vfail(ic, "operand %d (%s) has an invalid shape", i, o->name ? o->name : "?");
  }
  return CXLA_OK;
}

static cxla_status infer_constant(cx_infer *ic, cx_shape *out) {
  const cxla_literal *lit = ic->in->a.literal;
  char buf[256];
  const char *p = cx_shape_problem(&ic->in->shape, buf, sizeof buf);
  if (p) return cx_vfail(ic, "declared shape has %s", p);
  if (!lit) return cx_vfail(ic, "constant has no literal");
  if (!cx_shape_equal(&lit->shape, &ic->in->shape))
    return cx_vfail(ic, "literal has shape %s but the declared shape is %s", cx_vshape(ic, &lit->shape),
                    cx_vshape(ic, &ic->in->shape));
  *out = ic->in->shape;
  return CXLA_OK;
}

static cxla_status infer_data(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  char buf[256];
  switch (in->op) {
  case CX_OP_PARAMETER: {
    const char *p = cx_shape_problem(&in->shape, buf, sizeof buf);
    if (p) return cx_vfail(ic, "declared shape has %s", p);
    if (in->a.index < 0) return cx_vfail(ic, "parameter number %lld must be >= 0", (long long)in->a.index);
    *out = in->shape;
    return CXLA_OK;
  }
  case CX_OP_CONSTANT: return infer_constant(ic, out);
  case CX_OP_TUPLE: {
    cx_shape *el = cx_vtuple(ic, out, in->nops);
    if (!el) return CXLA_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < in->nops; i++) el[i] = in->ops[i]->shape;
    return CXLA_OK;
  }
  case CX_OP_GET_TUPLE_ELEMENT: {
    const cx_shape *t = cx_vop(ic, 0);
    if (t->type != CXLA_TUPLE) return cx_vfail(ic, "operand must be a tuple, got %s", cx_vshape(ic, t));
    if (in->a.index < 0 || in->a.index >= t->ntuple)
      return cx_vfail(ic, "index %lld is out of range for a tuple of %d element%s %s", (long long)in->a.index,
                      t->ntuple, t->ntuple == 1 ? "" : "s", cx_vshape(ic, t));
    *out = t->tuple[in->a.index];
    return CXLA_OK;
  }
  case CX_OP_COPY_START: { /* (destination, source, u32[] context) */
    cx_shape *el = cx_vtuple(ic, out, 3);
    if (!el) return CXLA_ERR_OUT_OF_MEMORY;
    el[0] = el[1] = in->ops[0]->shape;
    el[2] = cx_shape_scalar(CXLA_U32);
    return CXLA_OK;
  }
  case CX_OP_COPY_DONE: {
    const cx_shape *t = cx_vop(ic, 0);
    if (t->type != CXLA_TUPLE || t->ntuple < 2 || !cx_shape_equal(&t->tuple[0], &t->tuple[1]))
      return cx_vfail(ic, "operand must be a copy-start's (destination, source, context) with destination and source "
                      "of one shape, got %s", cx_vshape(ic, t));
    *out = t->tuple[0];
    return CXLA_OK;
  }
  case CX_OP_IOTA: {
    CX_TRY(cx_vdeclared_array(ic));
    if (in->shape.rank < 1) return cx_vfail(ic, "iota needs a shape of rank >= 1, got %s", cx_vshape(ic, &in->shape));
    if (in->a.index < 0 || in->a.index >= in->shape.rank)
      return cx_vfail(ic, "iota_dimension=%lld is out of range for %s (expected 0..%d)", (long long)in->a.index,
                      cx_vshape(ic, &in->shape), in->shape.rank - 1);
    *out = in->shape;
    cx_vplain(out);
    return CXLA_OK;
  }
  default: return cx_vfail(ic, "no shape rule for this op");
  }
}

/* Ops cxla parses and prints but does not model: most keep their declared shape. */
static cxla_status infer_other(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  char buf[256];
  switch (in->op) {
  case CX_OP_OPT_BARRIER: case CX_OP_DOMAIN:
    *out = in->ops[0]->shape;
    cx_vplain(out);
    return CXLA_OK;
  case CX_OP_AFTER_ALL:
    for (int i = 0; i < in->nops; i++)
      if (cx_vop(ic, i)->type != CXLA_TOKEN)
        return cx_vfail(ic, "operand %d must be a token, got %s", i, cx_vshape(ic, cx_vop(ic, i)));
    memset(out, 0, sizeof *out);
    out->type = CXLA_TOKEN;
    return CXLA_OK;
  case CX_OP_PARTITION_ID: case CX_OP_REPLICA_ID:
    *out = cx_shape_scalar(CXLA_U32);
    return CXLA_OK;
  case CX_OP_ADD_DEPENDENCY:
    if (cx_vop(ic, 1)->type != CXLA_TOKEN)
      return cx_vfail(ic, "operand 1 must be a token, got %s", cx_vshape(ic, cx_vop(ic, 1)));
    *out = in->ops[0]->shape;
    cx_vplain(out);
    return CXLA_OK;
  default: {
    const char *p = cx_shape_problem(&in->shape, buf, sizeof buf);
    if (p) return cx_vfail(ic, "declared shape has %s", p);
    *out = in->shape;
    return CXLA_OK;
  }
  }
}

static cxla_status dispatch(cx_infer *ic, cx_shape *out) {
  cx_op op = ic->in->op;
  switch (op) {
  case CX_OP_DOT: return cx_infer_dot(ic, out);
  case CX_OP_CONVOLUTION: return cx_infer_conv(ic, out);
  case CX_OP_GATHER: return cx_infer_gather(ic, out);
  case CX_OP_SCATTER: return cx_infer_scatter(ic, out);
  case CX_OP_IOTA: return infer_data(ic, out);
  default: break;
  }
  switch (cx_op_class_of(op)) {
  case CX_CLASS_DATA: return infer_data(ic, out);
  case CX_CLASS_ELEMENTWISE: return cx_infer_elementwise(ic, out);
  case CX_CLASS_SHAPE: return cx_infer_shape_op(ic, out);
  case CX_CLASS_REDUCE: return cx_infer_reduce_op(ic, out);
  case CX_CLASS_CONTROL: return cx_infer_control(ic, out);
  case CX_CLASS_OTHER: return infer_other(ic, out);
  default: return cx_vfail(ic, "no shape rule for this op");
  }
}

cxla_status cx_infer_run(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  if ((unsigned)in->op >= CX_OP_COUNT)
    return cx_error_at(ic->m, in->loc, CXLA_ERR_VERIFY, "instruction %s has an unknown opcode %d",
                       in->name ? in->name : "?", (int)in->op);
  CX_TRY(check_operands(ic));
  CX_TRY(check_operand_count(ic));
  CX_TRY(check_called_count(ic));
  cx_shape r;
  memset(&r, 0, sizeof r);
  CX_TRY(dispatch(ic, &r));
  /* Computed dims (pad, concatenate, windows, bitcast-convert) can leave the valid range. */
  if (cx_varray(&r) && cx_shape_elems(&r) < 0)
    return cx_vfail(ic, "result shape %s has too many elements (at most 2^62)", cx_vshape(ic, &r));
  *out = r;
  return CXLA_OK;
}
