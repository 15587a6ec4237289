/* support.c — cx_emit_supported: which fusions the emitter compiles. Everything else runs on
 * the interpreter (sort, scatter, select-and-scatter, custom calls, collectives, ...). The
 * checks mirror what the generators handle, so a supported fusion never fails to emit. */
#include <string.h>
#include "codegen/emit.h"

static int shape_ok(const cx_shape *s, int allow_tuple) {
  if (s->type == CXLA_TUPLE) {
    if (!allow_tuple) return 0;
    for (int i = 0; i < s->ntuple; i++)
      if (!shape_ok(&s->tuple[i], 0)) return 0;
    return 1;
  }
  /* Buffers hold arrays row-major whatever the layout says (as literals do); only bitcast
   * reads layouts (checked there). */
  return cx_type_is_array(s->type) && !s->dynamic && cx_shape_elems(s) >= 0;
}

static int scalar_comp_ok(const cx_comp *c, const char **why) {
  if (!c || !c->root) return *why = "called computation without a root", 0;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *x = c->instrs[i];
    if (x->op == CX_OP_PARAMETER && x->shape.rank != 0)
      return *why = cx_emit_why("%s: parameter %s of %s is not a scalar", c->name, x->name, c->name), 0;
    if (!cx_emit_instr_ok(x, 1, why)) return 0;
  }
  const cx_shape *r = &c->root->shape;
  if (r->type == CXLA_TUPLE) {
    for (int i = 0; i < r->ntuple; i++)
      if (r->tuple[i].type == CXLA_TUPLE || r->tuple[i].rank != 0) return *why = "reducer result is not scalars", 0;
  } else if (r->rank != 0) {
    return *why = cx_emit_why("%s returns a non-scalar", c->name), 0;
  }
  return 1;
}

static int elementwise_ok(const cx_instr *in, const char **why) {
  if (in->nops < 1 || in->nops > 3) return *why = cx_emit_why("%s: bad operand count", in->name), 0;
  cxla_type t = in->op == CX_OP_SELECT || in->op == CX_OP_CLAMP ? in->ops[1]->shape.type : in->ops[0]->shape.type;
  if (!cx_op_valid_for_type(in->op, t))
    return *why = cx_emit_why("%s: %s is not defined on %s", in->name, cx_op_name(in->op), cxla_type_name(t)), 0;
  return 1;
}

/* ---- what each op needs beyond the shapes (ops without a row need nothing more) ---- */

static int select_ok(const cx_instr *in, const char **why) {
  if (!elementwise_ok(in, why)) return 0;
  if (in->ops[0]->shape.type != CXLA_PRED) return *why = "select needs a pred", 0;
  return 1;
}

static int reduce_precision_ok(const cx_instr *in, const char **why) {
  if (!elementwise_ok(in, why)) return 0;
  if (in->a.exponent_bits < 1 || in->a.mantissa_bits < 0)
    return *why = "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0", 0;
  return 1;
}

static int bitcast_convert_ok(const cx_instr *in, const char **why) {
  if (!elementwise_ok(in, why)) return 0;
  if ((cx_type_is_complex(in->shape.type) || cx_type_is_complex(in->ops[0]->shape.type)) &&
      in->shape.type != in->ops[0]->shape.type)
    return *why = "bitcast-convert between complex types of different widths", 0;
  int a = cx_type_bits(in->ops[0]->shape.type), b = cx_type_bits(in->shape.type); /* XLA's widths: s4 is 4 */
  int ra = in->ops[0]->shape.rank, rb = in->shape.rank;
  if (!(a == b || (a > b && a % b == 0 && rb == ra + 1) || (a < b && b % a == 0 && ra == rb + 1)))
    return *why = "bitcast-convert with inconsistent widths", 0;
  return 1;
}

static int constant_ok(const cx_instr *in, const char **why) {
  if (!in->a.literal || !cx_type_is_array(in->a.literal->shape.type)) return *why = "non-array constant", 0;
  return 1;
}

static int concatenate_ok(const cx_instr *in, const char **why) {
  if (in->nops > 64) return *why = "concatenate of more than 64 operands", 0;
  return 1;
}

static int bitcast_ok(const cx_instr *in, const char **why) {
  if (cxla_type_size(in->shape.type) != cxla_type_size(in->ops[0]->shape.type))
    return *why = cx_emit_why("%s: bitcast that changes the element size", in->name), 0;
  if (!cx_shape_has_default_layout(&in->shape) || !cx_shape_has_default_layout(&in->ops[0]->shape) ||
      in->shape.layout_extra || in->ops[0]->shape.layout_extra)
    return *why = cx_emit_why("%s: bitcast between non-default layouts", in->name), 0;
  return 1;
}

int cx_emit_scalar_comp_ok(const cx_comp *c, const char **why) { return scalar_comp_ok(c, why); }

static int reduce_ok(const cx_instr *in, const char **why) {
  return scalar_comp_ok(in->ncalled == 1 ? in->called[0] : NULL, why);
}

static int reduce_window_ok(const cx_instr *in, const char **why) {
  if (in->nops < 2 || in->nops % 2 || in->a.window.rank != in->ops[0]->shape.rank)
    return *why = cx_emit_why("%s: malformed reduce-window", in->name), 0;
  for (int d = 0; d < in->a.window.rank; d++)
    if (in->a.window.d[d].reversal || in->a.window.d[d].size < 1) return *why = "reduce-window with window reversal", 0;
  return scalar_comp_ok(in->ncalled == 1 ? in->called[0] : NULL, why);
}

static int map_ok(const cx_instr *in, const char **why) {
  if (in->a.dims.n) {
    for (int d = 0; d < in->a.dims.n; d++)
      if (in->a.dims.v[d] != d || in->a.dims.n != in->ops[0]->shape.rank) return *why = "map over a subset of dimensions", 0;
  }
  return scalar_comp_ok(in->ncalled == 1 ? in->called[0] : NULL, why);
}

static int convolution_ok(const cx_instr *in, const char **why) {
  if (!in->a.conv || in->shape.type == CXLA_PRED) return *why = "convolution without dim_labels or on pred", 0;
  return 1;
}

typedef int (*check_fn)(const cx_instr *in, const char **why);
static const check_fn k_check[CX_OP_COUNT] = {
  [CX_OP_CONSTANT] = constant_ok,
  [CX_OP_CONCATENATE] = concatenate_ok,
  [CX_OP_BITCAST] = bitcast_ok,
  [CX_OP_SELECT] = select_ok,
  [CX_OP_REDUCE_PRECISION] = reduce_precision_ok,
  [CX_OP_BITCAST_CONVERT] = bitcast_convert_ok,
  [CX_OP_REDUCE] = reduce_ok,
  [CX_OP_REDUCE_WINDOW] = reduce_window_ok,
  [CX_OP_MAP] = map_ok,
  [CX_OP_CONVOLUTION] = convolution_ok,
  [CX_OP_SELECT_AND_SCATTER] = cx_emit_select_scatter_fused_ok,
  /* dot: only as the GEMM result of a kOutput fusion (epilogue_ok) */
};

/* A DISJOINT window op (the op table's fuse column) runs as a routine of its own where it is
 * alone, and as its generator where a fusion holds it. */
int cx_emit_handles_op(cx_op op) {
  return (cx_op_runs_on(op) == CX_RUNS_EMIT || cx_op_fuses_when_disjoint(op)) && cx_emit_has_generator(op);
}

int cx_emit_instr_ok(const cx_instr *in, int scalar, const char **why) {
  int tuple_ok = in->op == CX_OP_TUPLE || in->op == CX_OP_REDUCE || in->op == CX_OP_REDUCE_WINDOW;
  if (!shape_ok(&in->shape, tuple_ok))
    return *why = cx_emit_why("%s: unsupported shape (tuple, layout, dynamic or too large)", in->name), 0;
  for (int k = 0; k < in->nops; k++)
    if (!shape_ok(&in->ops[k]->shape, 1)) return *why = cx_emit_why("%s: unsupported operand shape", in->name), 0;
  if (scalar && !(in->op == CX_OP_PARAMETER || in->op == CX_OP_CONSTANT || in->op == CX_OP_TUPLE ||
                  in->op == CX_OP_GET_TUPLE_ELEMENT || cx_op_is_elementwise(in->op)))
    return *why = cx_emit_why("%s: %s inside a reducer/map body", in->name, cx_op_name(in->op)), 0;
  if (!cx_emit_handles_op(in->op))
    return *why = cx_emit_why("%s: %s is not emitted (runs on the interpreter)", in->name, cx_op_name(in->op)), 0;
  check_fn check = k_check[in->op];
  if (!check && cx_op_is_elementwise(in->op)) check = elementwise_ok;
  return check ? check(in, why) : 1;
}

static int epilogue_ok(const cx_instr *fusion, const cx_shape **leaves, int nout, const char **why) {
  const cx_comp *c = fusion->called[0];
  const cx_instr *dot = NULL;
  for (int i = 0; i < c->ninstrs; i++) {
    if (c->instrs[i]->op == CX_OP_REDUCE) return *why = "reduce in a kOutput fusion", 0;
    if (c->instrs[i]->op != CX_OP_DOT) continue;
    if (dot) return *why = "more than one dot in a kOutput fusion", 0;
    dot = c->instrs[i];
  }
  if (!dot) return *why = "kOutput fusion without a dot", 0;
  if (dot->shape.type != CXLA_F32 && dot->shape.type != CXLA_F64) return *why = "GEMM result must be f32 or f64", 0;
  int64_t n = cx_shape_elems(&dot->shape);
  for (int i = 0; i < nout; i++)
    if (cx_shape_elems(leaves[i]) != n) return *why = "epilogue output size differs from the dot's", 0;
  if (!cx_emit_reads_at_same_index(c->root, dot, n))
    return *why = "the epilogue reads the dot result other than at its own index", 0;
  return 1;
}

int cx_emit_supported(cx_instr *fusion, const char **why) {
  const char *dummy;
  if (!why) why = &dummy;
  *why = NULL;
  if (!fusion || fusion->op != CX_OP_FUSION || fusion->ncalled != 1 || !fusion->called[0] || !fusion->called[0]->root)
    return *why = "not a fusion instruction", 0;
  cx_fusion_kind kind = fusion->a.fusion_kind;
  if (kind == CX_FUSION_CUSTOM) return *why = "a kCustom fusion (another compiler's kernel)", 0;
  if (kind == CX_FUSION_NONE) return *why = "fusion without a kind", 0;
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  if (nout < 1 || !shape_ok(&fusion->shape, 1)) return *why = "result is not an array or a flat tuple of arrays", 0;
  if (nout + fusion->nops + 1 > CX_EMIT_MAX_ARGS) return *why = "too many kernel arguments", 0;
  for (int i = 0; i < fusion->nops; i++)
    if (!shape_ok(&fusion->ops[i]->shape, 0)) return *why = cx_emit_why("operand %d is not a dense array", i), 0;
  const cx_comp *c = fusion->called[0];
  int nred = 0, ndot = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *x = c->instrs[i];
    if (x->op == CX_OP_PARAMETER && (x->a.index < 0 || x->a.index >= fusion->nops))
      return *why = "parameter number out of range", 0;
    if (!cx_emit_instr_ok(x, 0, why)) return 0;
    nred += x->op == CX_OP_REDUCE;
    ndot += x->op == CX_OP_DOT;
  }
  if (kind == CX_FUSION_OUTPUT) return epilogue_ok(fusion, leaves, nout, why);
  if (ndot) return *why = "a dot outside a kOutput fusion (runs as a library call)", 0;
  if (nred) {
    cx_red_plan p;
    return cx_red_plan_make(fusion, &p, why);
  }
  for (int i = 1; i < nout; i++)
    if (!cx_shape_same_dims(leaves[i], leaves[0])) return *why = "outputs of a loop fusion with different dims", 0;
  const cx_instr *root = c->root;
  if (root->op == CX_OP_TUPLE)
    for (int k = 0; k < root->nops; k++)
      if (root->ops[k]->shape.type == CXLA_TUPLE) return *why = "nested tuple outputs", 0;
  return 1;
}
