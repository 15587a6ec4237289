/* test_interp_hooks.c — the interpreter's per-op hooks against the op table: an op has an
 * evaluator exactly when ops.def's `runs` column says the interpreter runs it, every
 * elementwise op it runs has a scalar rule, and each rule has a function for exactly the
 * element types cx_op_valid_for_type accepts, of the op's arity. So a new op can neither fall
 * through to another op's code nor run on a type XLA does not define it for. */
#include "heavy_helpers.h"
#include "interp/internal.h"

TEST(interp_hooks_match_runs_column) {
  for (int op = 0; op < CX_OP_COUNT; op++) {
    int runs = cx_op_runs_on(op) >= CX_RUNS_INTERP;
    CHECK_MSG(cx_interp_has_evaluator(op) == runs, "%s: evaluator %d, runs column %d", cx_op_name(op),
              cx_interp_has_evaluator(op), runs);
    CHECK_MSG(cx_interp_runs_op(op) == runs, "%s", cx_op_name(op));
    cx_interp_hook h = cx_interp_hook_of(op);
    CHECK_MSG(!(h.frame && h.eval), "%s has two hooks", cx_op_name(op));
  }
  CHECK(!cx_interp_has_evaluator(CX_OP_COUNT));
  CHECK(!cx_interp_runs_op(CX_OP_COUNT));
}

static int typed_for(const cx_ew_rule *r, int arity, cx_kind k) {
  switch (k) {
  case CX_KIND_FLOAT: return arity == 1 ? r->f1 || r->fp1 : r->f2 != NULL;
  case CX_KIND_SINT: return arity == 1 ? r->s1 != NULL : r->s2 != NULL;
  case CX_KIND_UINT: return arity == 1 ? r->u1 != NULL : r->u2 != NULL;
  case CX_KIND_PRED: return arity == 1 ? r->p1 != NULL : r->p2 != NULL;
  case CX_KIND_COMPLEX: return arity == 1 ? r->c1 || r->cr1 : r->c2 != NULL;
  case CX_KIND_NONE: return 0;
  }
  return 0;
}

TEST(interp_ew_rules_cover_exactly_the_valid_types) {
  for (int op = 0; op < CX_OP_COUNT; op++) {
    const cx_ew_rule *r = cx_ew_rule_of(op);
    const char *name = cx_op_name(op);
    if (cx_op_is_elementwise(op) && cx_op_runs_on(op) >= CX_RUNS_INTERP) CHECK_MSG(r, "%s has no rule", name);
    if (!r) continue;
    CHECK_MSG(cx_op_is_elementwise(op), "%s has a rule but is not elementwise", name);
    int arity = cx_op_arity(op);
    CHECK_MSG(r->type_operand >= 0 && r->type_operand < arity, "%s: type_operand", name);
    int unary = r->f1 || r->fp1 || r->s1 || r->u1 || r->p1 || r->c1 || r->cr1;
    int binary = r->f2 || r->s2 || r->u2 || r->p2 || r->c2;
    if (r->eval) {
      CHECK_MSG(!unary && !binary, "%s: eval and typed functions", name);
      continue;
    }
    CHECK_MSG(arity == 1 ? !binary : arity == 2 && !unary, "%s: functions of another arity", name);
    for (cxla_type t = CXLA_PRED; t <= CXLA_F4E2M1FN; t++)
      if (cx_type_is_array(t))
        CHECK_MSG(typed_for(r, arity, cx_type_kind(t)) == cx_op_valid_for_type(op, t), "%s on %s: function %d, valid %d",
                  name, cxla_type_name(t), typed_for(r, arity, cx_type_kind(t)), cx_op_valid_for_type(op, t));
  }
}

TEST(interp_scalar_rules_never_fall_back) {
  /* a type or op without a rule gives 0, not the operand (the old identity fallback) */
  cx_scalar five = {.i = 5}, x = {.f = 2.5};
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_EXP, CXLA_S32, five).i, 0);
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_ABS, CXLA_U8, five).i, 0);
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_DOT, CXLA_F32, x).i, 0);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_AND, CXLA_F64, x, x).i, 0);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_COUNT, CXLA_S32, five, five).i, 0);
  /* and the rules themselves */
  CHECK_EQ_INT(cx_scalar_unary(CX_OP_ABS, CXLA_S8, (cx_scalar){.i = -128}).i, -128);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_ADD, CXLA_PRED, (cx_scalar){.i = 1}, (cx_scalar){.i = 1}).i, 1);
  CHECK_EQ_INT(cx_scalar_binary(CX_OP_MINIMUM, CXLA_U32, (cx_scalar){.i = 4000000000}, five).i, 5);
  CHECK_NEAR(cx_scalar_unary(CX_OP_NEGATE, CXLA_F32, x).f, -2.5, 0);
}

TEST(interp_reducer_on_an_undefined_type_is_refused) {
  /* and of f32 in a reducer: refused by the elementwise evaluator, not folded as some value */
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(2), HH_VALS(1, 2)), *z = hh_scalar(CXLA_F32, 0);
  cx_comp *and = hh_binary(&h, CX_OP_AND, CXLA_F32);
  cxla_literal *ops[2] = {x, z}, *out = NULL;
  cx_instr *in = hh_instr1(&h, CX_OP_REDUCE, CXLA_F32, 0, NULL, 2, ops);
  if (in && and) {
    hh_ints(&h, &in->a.dims, 1, HH_DIMS(0));
    cx_instr_set_called(in, 1, &and);
    CHECK_EQ_INT(cx_interp_reduce(&h.st, in, ops, &out), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "not supported: and: operand type f32");
    CHECK(out == NULL);
  }
  cxla_literal *all[] = {x, z};
  hh_free_lits(2, all);
  hh_free(&h);
}
