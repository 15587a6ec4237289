/* simplify.c — algebraic simplification: the driver, which finds each instruction's rule
 * through a table indexed by op (an op without a rule is left alone), and the rules for
 * tuples. Elementwise rules live in simplify_elementwise.c, shape ops in simplify_shape.c,
 * reduce and map in simplify_reduce.c, scatter in simplify_scatter.c. No rule exists for ops with side effects. */
#include "passes/pass.h"
#include "passes/simplify.h"

/* get-tuple-element(tuple(...)) is the element. */
static cxla_status get_tuple_element(cx_instr *in, cx_instr **out) {
  cx_instr *t = in->ops[0];
  if (t->op == CX_OP_TUPLE && in->a.index >= 0 && in->a.index < t->nops) *out = t->ops[in->a.index];
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) *out = NULL;
  return CXLA_OK;
}

/* tuple(gte(t, 0), ..., gte(t, n-1)) is t. */
static cxla_status tuple(cx_instr *in, cx_instr **out) {
  if (in->nops == 0) return CXLA_OK;
  cx_instr *t = in->ops[0]->op == CX_OP_GET_TUPLE_ELEMENT ? in->ops[0]->ops[0] : NULL;
  for (int i = 0; t && i < in->nops; i++)
    if (in->ops[i]->op != CX_OP_GET_TUPLE_ELEMENT || in->ops[i]->ops[0] != t || in->ops[i]->a.index != i) t = NULL;
  if (t && t->shape.type == CXLA_TUPLE && t->shape.ntuple == in->nops) *out = t;
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) *out = NULL;
  return CXLA_OK;
}

typedef cxla_status (*simp_rule)(cx_instr *in, cx_instr **out);
static const simp_rule k_rules[CX_OP_COUNT] = {
  [CX_OP_TUPLE] = tuple, [CX_OP_GET_TUPLE_ELEMENT] = get_tuple_element,
  /* elementwise */
  [CX_OP_ADD] = cx_simp_add, [CX_OP_SUBTRACT] = cx_simp_subtract, [CX_OP_MULTIPLY] = cx_simp_multiply,
  [CX_OP_DIVIDE] = cx_simp_divide, [CX_OP_POWER] = cx_simp_power, [CX_OP_MAXIMUM] = cx_simp_minmax,
  [CX_OP_MINIMUM] = cx_simp_minmax, [CX_OP_AND] = cx_simp_and, [CX_OP_OR] = cx_simp_or,
  [CX_OP_XOR] = cx_simp_xor, [CX_OP_SHIFT_LEFT] = cx_simp_shift, [CX_OP_SHIFT_RIGHT_ARITHMETIC] = cx_simp_shift,
  [CX_OP_SHIFT_RIGHT_LOGICAL] = cx_simp_shift, [CX_OP_COMPARE] = cx_simp_compare,
  [CX_OP_NEGATE] = cx_simp_involution, [CX_OP_NOT] = cx_simp_involution, [CX_OP_ABS] = cx_simp_abs,
  [CX_OP_COPY] = cx_simp_same_layout, [CX_OP_BITCAST_CONVERT] = cx_simp_bitcast_convert,
  [CX_OP_CONVERT] = cx_simp_convert, [CX_OP_REDUCE_PRECISION] = cx_simp_reduce_precision,
  [CX_OP_SELECT] = cx_simp_select,
  /* shape */
  [CX_OP_RESHAPE] = cx_simp_reshape_op, [CX_OP_BITCAST] = cx_simp_same_layout,
  [CX_OP_TRANSPOSE] = cx_simp_transpose, [CX_OP_BROADCAST] = cx_simp_broadcast, [CX_OP_SLICE] = cx_simp_slice,
  [CX_OP_DYNAMIC_SLICE] = cx_simp_dynamic_slice, [CX_OP_DYNAMIC_UPDATE_SLICE] = cx_simp_dynamic_update_slice,
  [CX_OP_PAD] = cx_simp_pad, [CX_OP_CONCATENATE] = cx_simp_concatenate, [CX_OP_REVERSE] = cx_simp_reverse,
  /* reductions */
  [CX_OP_REDUCE] = cx_simp_reduce, [CX_OP_MAP] = cx_simp_map,
  /* a one-hot scatter-add (simplify_scatter.c) */
  [CX_OP_SCATTER] = cx_simp_scatter,
};

static cxla_status simplify_instr(cx_instr *in, cx_instr **out) {
  *out = NULL;
  simp_rule rule = k_rules[in->op];
  return rule ? rule(in, out) : CXLA_OK;
}

/* One sweep over c in order. A replaced instruction records its replacement in aux; later
 * instructions see their operands through those records, so chains collapse in one sweep. */
static cxla_status simplify_comp(cx_comp *c, int *changed) {
  int n0 = c->ninstrs, nrep = 0;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n0; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < n0 && s == CXLA_OK; i++) {
    cx_instr *in = c->instrs[i], *r = NULL;
    for (int j = 0; j < in->nops; j++)
      while (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux;
    s = simplify_instr(in, &r);
    if (s == CXLA_OK && r && r != in) {
      in->aux = r;
      nrep++;
    }
  }
  if (nrep || c->ninstrs != n0) {
    for (int i = 0; i < c->ninstrs; i++) {
      cx_instr *in = c->instrs[i];
      for (int j = 0; j < in->nops; j++)
        while (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux;
    }
    while (c->root && c->root->aux) c->root = c->root->aux;
    int n = 0;
    for (int i = 0; i < c->ninstrs; i++)
      if (!c->instrs[i]->aux) c->instrs[n++] = c->instrs[i];
    c->ninstrs = n;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  if (s != CXLA_OK) return s;
  if (c->ninstrs != n0 - nrep) CX_TRY(cx_comp_resort(c, "simplify"));
  *changed += nrep;
  return CXLA_OK;
}

cxla_status cx_pass_simplify(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(simplify_comp(m->comps[i], changed));
  return CXLA_OK;
}
