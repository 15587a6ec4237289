/* infer.c — shape inference entry point: operand and called-computation counts per op, the
 * dispatch to each op's rule through ops.def, and the rules for data plumbing and pass-through
 * ops. */
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

/* Fixed arities come from the table; variadic ops check their own count in their rule. */
static cxla_status check_operand_count(cx_infer *ic) {
  int n = ic->in->nops, arity = cx_op_arity(ic->in->op);
  if (arity < 0 || n == arity) return CXLA_OK;
  return cx_vfail(ic, "expected %d operand%s, got %d", arity, arity == 1 ? "" : "s", n);
}

static cxla_status check_called_count(cx_infer *ic) {
  cx_instr *in = ic->in;
  int want = cx_op_called_count(in->op);
  if (cx_op_calls_of(in->op) == CX_CALLS_BRANCHES && in->ncalled < 1)
    return cx_vfail(ic, "expected at least 1 branch computation, got 0");
  if (want >= 0 && in->ncalled != want) {
    if (want == 0) return cx_vfail(ic, "takes no called computations, got %d", in->ncalled);
    return cx_vfail(ic, "expected %d called computation%s (%s%s%s), got %d", want, want == 1 ? "" : "s",
                    cx_op_called_role(in->op, 0), want > 1 ? ", " : "", want > 1 ? cx_op_called_role(in->op, 1) : "",
                    in->ncalled);
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

cxla_status cx_infer_constant(cx_infer *ic, cx_shape *out) {
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

cxla_status cx_infer_parameter(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  char buf[256];
  const char *p = cx_shape_problem(&in->shape, buf, sizeof buf);
  if (p) return cx_vfail(ic, "declared shape has %s", p);
  if (in->a.index < 0) return cx_vfail(ic, "parameter number %lld must be >= 0", (long long)in->a.index);
  *out = in->shape;
  return CXLA_OK;
}

cxla_status cx_infer_tuple(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  cx_shape *el = cx_vtuple(ic, out, in->nops);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < in->nops; i++) el[i] = in->ops[i]->shape;
  return CXLA_OK;
}

cxla_status cx_infer_get_tuple_element(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  const cx_shape *t = cx_vop(ic, 0);
  if (t->type != CXLA_TUPLE) return cx_vfail(ic, "operand must be a tuple, got %s", cx_vshape(ic, t));
  if (in->a.index < 0 || in->a.index >= t->ntuple)
    return cx_vfail(ic, "index %lld is out of range for a tuple of %d element%s %s", (long long)in->a.index,
                    t->ntuple, t->ntuple == 1 ? "" : "s", cx_vshape(ic, t));
  *out = t->tuple[in->a.index];
  return CXLA_OK;
}

cxla_status cx_infer_copy_start(cx_infer *ic, cx_shape *out) { /* (destination, source, u32[] context) */
  cx_shape *el = cx_vtuple(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[0] = el[1] = ic->in->ops[0]->shape;
  el[2] = cx_shape_scalar(CXLA_U32);
  return CXLA_OK;
}

cxla_status cx_infer_copy_done(cx_infer *ic, cx_shape *out) {
  const cx_shape *t = cx_vop(ic, 0);
  if (t->type != CXLA_TUPLE || t->ntuple < 2 || !cx_shape_equal(&t->tuple[0], &t->tuple[1]))
    return cx_vfail(ic, "operand must be a copy-start's (destination, source, context) with destination and source "
                    "of one shape, got %s", cx_vshape(ic, t));
  *out = t->tuple[0];
  return CXLA_OK;
}

cxla_status cx_infer_iota(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vdeclared_array(ic));
  if (in->shape.rank < 1) return cx_vfail(ic, "iota needs a shape of rank >= 1, got %s", cx_vshape(ic, &in->shape));
  if (in->a.index < 0 || in->a.index >= in->shape.rank)
    return cx_vfail(ic, "iota_dimension=%lld is out of range for %s (expected 0..%d)", (long long)in->a.index,
                    cx_vshape(ic, &in->shape), in->shape.rank - 1);
  *out = in->shape;
  cx_vplain(out);
  return CXLA_OK;
}

/* opt-barrier, domain: the operand's shape. */
cxla_status cx_infer_pass_through(cx_infer *ic, cx_shape *out) {
  *out = ic->in->ops[0]->shape;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_after_all(cx_infer *ic, cx_shape *out) {
  for (int i = 0; i < ic->in->nops; i++)
    if (cx_vop(ic, i)->type != CXLA_TOKEN)
      return cx_vfail(ic, "operand %d must be a token, got %s", i, cx_vshape(ic, cx_vop(ic, i)));
  memset(out, 0, sizeof *out);
  out->type = CXLA_TOKEN;
  return CXLA_OK;
}

/* partition-id, replica-id */
cxla_status cx_infer_u32_scalar(cx_infer *ic, cx_shape *out) {
  (void)ic;
  *out = cx_shape_scalar(CXLA_U32);
  return CXLA_OK;
}

cxla_status cx_infer_add_dependency(cx_infer *ic, cx_shape *out) {
  if (cx_vop(ic, 1)->type != CXLA_TOKEN)
    return cx_vfail(ic, "operand 1 must be a token, got %s", cx_vshape(ic, cx_vop(ic, 1)));
  *out = ic->in->ops[0]->shape;
  cx_vplain(out);
  return CXLA_OK;
}

/* Ops cxla parses and prints but does not model keep their declared shape. */
cxla_status cx_infer_declared(cx_infer *ic, cx_shape *out) {
  char buf[256];
  const char *p = cx_shape_problem(&ic->in->shape, buf, sizeof buf);
  if (p) return cx_vfail(ic, "declared shape has %s", p);
  *out = ic->in->shape;
  return CXLA_OK;
}

typedef cxla_status (*infer_rule)(cx_infer *ic, cx_shape *out);
static const infer_rule k_rules[CX_OP_COUNT] = {
#define X(id, name, arity, cls, cost, runs, shape, types, called, flags, infer, ...) cx_infer_##infer,
#include "ir/ops.def"
#undef X
};

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
  CX_TRY(k_rules[in->op](ic, &r));
  /* Computed dims (pad, concatenate, windows, bitcast-convert) can leave the valid range. */
  if (cx_varray(&r) && cx_shape_elems(&r) < 0)
    return cx_vfail(ic, "result shape %s has too many elements (at most 2^62)", cx_vshape(ic, &r));
  *out = r;
  return CXLA_OK;
}
