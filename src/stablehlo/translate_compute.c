/* translate_compute.c — the ops with dimension numbers, windows and reducer computations:
 * dot_general, convolution, reduce, reduce_window, select_and_scatter, map, sort, gather,
 * scatter, and the library ops (fft, rng, cholesky, triangular_solve, batch norm). */
#include <stdio.h>
#include <string.h>
#include "stablehlo/translate.h"

/* operand_precision={...} from precision_config, kept in the text when not all DEFAULT (cxla
 * computes every dot at the precision of its types). */
static cxla_status precision(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  const cx_mlir_attr *pc = cx_mlir_op_attr(op, "precision_config");
  if (!pc || pc->kind != CX_MLIR_ATTR_ARRAY || !pc->u.array.n) return CXLA_OK;
  cx_sb sb;
  cx_sb_init(&sb);
  int any = 0;
  cx_sb_putc(&sb, '{');
  for (int i = 0; i < pc->u.array.n; i++) {
    const cx_mlir_attr *e = pc->u.array.elems[i];
    if (e->kind != CX_MLIR_ATTR_ENUM || e->u.enm.which != CX_MLIR_ENUM_PRECISION || !e->u.enm.name) {
      cx_sb_free(&sb);
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "precision_config entry %d is not a precision", i);
    }
    char low[16];
    size_t k = 0;
    for (const char *p = e->u.enm.name; *p && k + 1 < sizeof low; p++) low[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    low[k] = 0;
    any |= strcmp(low, "default") != 0;
    cx_sb_printf(&sb, "%s%s", i ? "," : "", low);
  }
  cx_sb_putc(&sb, '}');
  char *v = cx_sb_take(&sb);
  if (!v) return cx_oom(sx->ctx);
  int ok = !any || cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "operand_precision", v);
  cx_free(v);
  return ok ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* x as `parts` bf16 terms whose sum in f32 is x to about 8 * parts bits: each the rounding of
 * what the ones before it leave (the splits of XLA's BF16_BF16_F32_X3 and _X6 algorithms). */
static cxla_status bf16_split(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *x, int parts, cx_instr **out) {
  cx_shape hs = cx_shape_array(CXLA_BF16, x->shape.rank, x->shape.dims);
  cx_instr *rest = x;
  for (int i = 0; i < parts; i++) {
    if (!(out[i] = cx_sx_add(sx, c, CX_OP_CONVERT, &hs, 1, &rest, op))) return CXLA_ERR_OUT_OF_MEMORY;
    if (i + 1 == parts) break;
    cx_instr *back = cx_sx_add(sx, c, CX_OP_CONVERT, &x->shape, 1, &out[i], op);
    cx_instr *sub[2] = {rest, back};
    if (!back || !(rest = cx_sx_add(sx, c, CX_OP_SUBTRACT, &x->shape, 2, sub, op))) return CXLA_ERR_OUT_OF_MEMORY;
  }
  return CXLA_OK;
}

/* operand_type: CXLA_INVALID, or the type a dot algorithm rounds both operands to first.
 * parts > 1 (BF16_BF16_F32_X3: 2, _X6: 3): each f32 operand split into that many bf16 terms
 * (bf16_split), and the result the f32 sum of the dots of the term pairs (i, j) with
 * i + j < parts, smallest first: X3's three and X6's six bf16 dots. */
static cxla_status make_dot(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_dot_dims *d, cxla_type operand_type,
                            int parts) {
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  if (parts > 1) {
    cx_instr *lt[3], *rt[3], *sum = NULL;
    CX_TRY(bf16_split(sx, c, op, ops[0], parts, lt));
    CX_TRY(bf16_split(sx, c, op, ops[1], parts, rt));
    for (int k = parts - 1; k >= 0; k--)
      for (int i = k; i >= 0; i--) {
        cx_instr *pair[2] = {lt[i], rt[k - i]};
        cx_instr *dot = cx_sx_add(sx, c, CX_OP_DOT, &s, 2, pair, op);
        if (!dot) return CXLA_ERR_OUT_OF_MEMORY;
        dot->a.dot = *d;
        cx_instr *add[2] = {sum, dot};
        if (!(sum = sum ? cx_sx_add(sx, c, CX_OP_ADD, &s, 2, add, op) : dot)) return CXLA_ERR_OUT_OF_MEMORY;
      }
    return cx_sx_bind(sx, c, op, sum);
  }
  for (int k = 0; k < 2 && operand_type != CXLA_INVALID; k++) {
    if (ops[k]->shape.type == operand_type) continue;
    cx_shape cs = cx_shape_array(operand_type, ops[k]->shape.rank, ops[k]->shape.dims);
    if (!(ops[k] = cx_sx_add(sx, c, CX_OP_CONVERT, &cs, 1, &ops[k], op))) return CXLA_ERR_OUT_OF_MEMORY;
  }
  cx_instr *in = cx_sx_add(sx, c, CX_OP_DOT, &s, 2, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.dot = *d;
  CX_TRY(precision(sx, op, in));
  return cx_sx_bind(sx, c, op, in);
}

/* dot_general_v2's algorithm (jax's DotAlgorithmPreset; XLA's PrecisionConfig::Algorithm). cxla
 * computes a dot in the operands' type (f16/bf16 accumulating in f32). An algorithm of one pass
 * (one component each, one primitive operation, no imprecise sums) with both inputs of one
 * float type cxla has and accumulation in the result's type (or f32 for 16-bit inputs) is that
 * dot after rounding float operands of another type to the algorithm's (*operand_type); the 3-
 * and 6-pass bf16 splits of an f32 dot (BF16_BF16_F32_X3, _X6) are those bf16 dots (*parts, see
 * make_dot); any other (tf32, X9, imprecise accumulation) is refused by name rather than
 * computed otherwise. */
static const cx_mlir_type *elem_of(const cx_mlir_type *t) {
  return t->kind == CX_MLIR_TYPE_RANKED_TENSOR && t->elem ? t->elem : t;
}

static cxla_status dot_algorithm(cx_sx *sx, const cx_mlir_op *op, cxla_type *operand_type, int *parts) {
  cxla_status st = CXLA_OK;
  *operand_type = CXLA_INVALID;
  *parts = 1;
  const cx_mlir_attr *lp = cx_sx_attr(sx, op, "lhs_precision_type", 0, &st);
  if (st != CXLA_OK) return st;
  if (!lp) {
    static const char *const rest[] = {"rhs_precision_type", "accumulation_type", "lhs_component_count",
                                       "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation"};
    for (int i = 0; i < CX_ARRAY_LEN(rest); i++)
      if (cx_sx_attr(sx, op, rest[i], 0, &st))
        return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: a dot algorithm with %s but no lhs_precision_type",
                         rest[i]);
    return st;
  }
  const cx_mlir_attr *rp = cx_sx_attr(sx, op, "rhs_precision_type", 1, &st);
  const cx_mlir_attr *acc = rp ? cx_sx_attr(sx, op, "accumulation_type", 1, &st) : NULL;
  if (!acc) return st;
  if (lp->kind != CX_MLIR_ATTR_TYPE || rp->kind != CX_MLIR_ATTR_TYPE || acc->kind != CX_MLIR_ATTR_TYPE)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a dot algorithm whose precision or accumulation type is not a type");
  cxla_type l, r, a, lo, ro, res;
  CX_TRY(cx_sx_elem_type(sx, op, lp->u.type, &l));
  CX_TRY(cx_sx_elem_type(sx, op, rp->u.type, &r));
  CX_TRY(cx_sx_elem_type(sx, op, acc->u.type, &a));
  if (op->num_operands != 2 || op->num_results != 1)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "dot_general needs two operands and one result");
  CX_TRY(cx_sx_elem_type(sx, op, elem_of(op->operands[0]->type), &lo));
  CX_TRY(cx_sx_elem_type(sx, op, elem_of(op->operands[1]->type), &ro));
  CX_TRY(cx_sx_elem_type(sx, op, elem_of(op->results[0].type), &res));
  int64_t lc = 1, rc = 1, nops = 1, imprecise = 0;
  CX_TRY(cx_sx_int(sx, op, "lhs_component_count", 0, 1, &lc));
  CX_TRY(cx_sx_int(sx, op, "rhs_component_count", 0, 1, &rc));
  CX_TRY(cx_sx_int(sx, op, "num_primitive_operations", 0, 1, &nops));
  int imp = 0;
  CX_TRY(cx_sx_bool(sx, op, "allow_imprecise_accumulation", 0, 0, &imp));
  imprecise = imp;
  int half = l == CXLA_F16 || l == CXLA_BF16;
  int rounds = l == r && (l == CXLA_BF16 || l == CXLA_F16 || l == CXLA_F32 || l == CXLA_F64) && cx_type_is_float(lo) &&
               cx_type_is_float(ro);
  if (rounds && lc == 1 && rc == 1 && nops == 1 && !imprecise && (a == res || (half && a == CXLA_F32))) {
    /* operands of another float type are rounded to the algorithm's first, as XLA does */
    if (lo != l || ro != l) *operand_type = l;
    return CXLA_OK;
  }
  if (l == CXLA_BF16 && r == CXLA_BF16 && a == CXLA_F32 && lo == CXLA_F32 && ro == CXLA_F32 && res == CXLA_F32 &&
      lc == 1 && rc == 1 && (nops == 3 || nops == 6) && !imprecise) {
    *parts = nops == 3 ? 2 : 3; /* X3: (hi, lo); X6: (hi, mid, lo) */
    return CXLA_OK;
  }
  return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED,
                   "not supported: dot algorithm %s x %s -> %s (%lld x %lld components, %lld operations%s) on %s x %s operands: "
                   "cxla computes a dot in its operands' type",
                   cxla_type_name(l), cxla_type_name(r), cxla_type_name(a), (long long)lc, (long long)rc, (long long)nops,
                   imprecise ? ", imprecise accumulation" : "", cxla_type_name(lo), cxla_type_name(ro));
}

cxla_status cx_sx_h_dot_general(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  cxla_type operand_type;
  int parts;
  CX_TRY(dot_algorithm(sx, op, &operand_type, &parts));
  cx_dot_dims d;
  memset(&d, 0, sizeof d);
  CX_TRY(cx_sx_ints(sx, op, "lhs_batching_dimensions", 0, &d.lhs_batch));
  CX_TRY(cx_sx_ints(sx, op, "rhs_batching_dimensions", 0, &d.rhs_batch));
  CX_TRY(cx_sx_ints(sx, op, "lhs_contracting_dimensions", 1, &d.lhs_contract));
  CX_TRY(cx_sx_ints(sx, op, "rhs_contracting_dimensions", 1, &d.rhs_contract));
  return make_dot(sx, c, op, &d, operand_type, parts);
}

/* dot_v1: vector/matrix products contracting lhs's last dimension with rhs's first. */
cxla_status cx_sx_h_dot(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_instr *l;
  CX_TRY(cx_sx_operand(sx, op, 0, &l));
  if (l->shape.type == CXLA_TUPLE || l->shape.rank < 1) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "lhs must be a vector or matrix");
  cx_dot_dims d;
  memset(&d, 0, sizeof d);
  int64_t lc = l->shape.rank - 1, rc = 0;
  if (!cx_ints_set(sx->m, &d.lhs_contract, 1, &lc) || !cx_ints_set(sx->m, &d.rhs_contract, 1, &rc)) return CXLA_ERR_OUT_OF_MEMORY;
  return make_dot(sx, c, op, &d, CXLA_INVALID, 1);
}

/* A window over `rank` dimensions of sizes `size` from the optional strides, padding (an
 * [N, 2] list), base/lhs and window/rhs dilations and reversal. */
static cxla_status window(cx_sx *sx, const cx_mlir_op *op, int rank, const int64_t *size, const char *strides,
                          const char *pad, const char *lhs_dil, const char *rhs_dil, const char *rev, cx_window *w) {
  cx_ints st = {0, NULL}, pd = {0, NULL}, ld = {0, NULL}, rd = {0, NULL}, rv = {0, NULL};
  CX_TRY(cx_sx_ints(sx, op, strides, 0, &st));
  CX_TRY(cx_sx_ints(sx, op, pad, 0, &pd));
  CX_TRY(cx_sx_ints(sx, op, lhs_dil, 0, &ld));
  CX_TRY(cx_sx_ints(sx, op, rhs_dil, 0, &rd));
  if (rev) CX_TRY(cx_sx_ints(sx, op, rev, 0, &rv));
  const char *bad = (st.n && st.n != rank) ? strides : (pd.n && pd.n != 2 * rank) ? pad : (ld.n && ld.n != rank) ? lhs_dil
                  : (rd.n && rd.n != rank) ? rhs_dil : (rv.n && rv.n != rank) ? rev : NULL;
  if (bad) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' does not have one entry per window dimension (%d)", bad, rank);
  w->rank = rank;
  w->d = rank ? cx_arena_alloc(&sx->m->arena, sizeof *w->d * (size_t)rank) : NULL;
  if (rank && !w->d) return cx_oom(sx->ctx);
  for (int i = 0; i < rank; i++) {
    cx_window_dim *d = &w->d[i];
    d->size = size[i];
    d->stride = st.n ? st.v[i] : 1;
    d->pad_lo = pd.n ? pd.v[2 * i] : 0;
    d->pad_hi = pd.n ? pd.v[2 * i + 1] : 0;
    d->lhs_dilate = ld.n ? ld.v[i] : 1;
    d->rhs_dilate = rd.n ? rd.v[i] : 1;
    d->reversal = rv.n ? rv.v[i] != 0 : 0;
  }
  return CXLA_OK;
}

cxla_status cx_sx_h_convolution(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_conv_dims *cd = cx_arena_alloc(&sx->m->arena, sizeof *cd);
  if (!cd) return cx_oom(sx->ctx);
  cx_ints is, ks, os;
  CX_TRY(cx_sx_int(sx, op, "input_batch_dimension", 1, 0, &cd->in_batch));
  CX_TRY(cx_sx_int(sx, op, "input_feature_dimension", 1, 0, &cd->in_feature));
  CX_TRY(cx_sx_ints(sx, op, "input_spatial_dimensions", 1, &is));
  CX_TRY(cx_sx_int(sx, op, "kernel_input_feature_dimension", 1, 0, &cd->k_in));
  CX_TRY(cx_sx_int(sx, op, "kernel_output_feature_dimension", 1, 0, &cd->k_out));
  CX_TRY(cx_sx_ints(sx, op, "kernel_spatial_dimensions", 1, &ks));
  CX_TRY(cx_sx_int(sx, op, "output_batch_dimension", 1, 0, &cd->out_batch));
  CX_TRY(cx_sx_int(sx, op, "output_feature_dimension", 1, 0, &cd->out_feature));
  CX_TRY(cx_sx_ints(sx, op, "output_spatial_dimensions", 1, &os));
  if (is.n != ks.n || is.n != os.n || is.n > CXLA_MAX_RANK - 2)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "spatial dimensions: input %d, kernel %d, output %d", is.n, ks.n, os.n);
  const cx_shape *k = &ops[1]->shape;
  int64_t size[CXLA_MAX_RANK];
  cd->nspatial = is.n;
  for (int i = 0; i < is.n; i++) {
    cd->in_spatial[i] = is.v[i];
    cd->k_spatial[i] = ks.v[i];
    cd->out_spatial[i] = os.v[i];
    if (k->type == CXLA_TUPLE || ks.v[i] < 0 || ks.v[i] >= k->rank)
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "kernel spatial dimension %lld is not a kernel dimension", (long long)ks.v[i]);
    size[i] = k->dims[ks.v[i]];
  }
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CONVOLUTION, &s, 2, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.conv = cd;
  CX_TRY(window(sx, op, is.n, size, "window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal", &in->a.window));
  CX_TRY(cx_sx_int(sx, op, "feature_group_count", 0, 1, &in->a.feature_group_count));
  CX_TRY(cx_sx_int(sx, op, "batch_group_count", 0, 1, &in->a.batch_group_count));
  CX_TRY(precision(sx, op, in));
  return cx_sx_bind(sx, c, op, in);
}

/* An op with one region whose computation is to_apply (reduce, reduce_window, map, sort,
 * scatter), on all operands, result shape from op's results. */
static cxla_status region_op(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_op opc, cx_instr **out) {
  if (op->num_regions != 1) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected one region, got %d", op->num_regions);
  if (!op->num_results) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected results");
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_comp *body;
  CX_TRY(cx_sx_scalar_region(sx, op, 0, &body));
  cx_instr *in = cx_sx_add(sx, c, opc, &s, n, ops, op);
  if (!in || !cx_instr_set_called(in, 1, &body)) return CXLA_ERR_OUT_OF_MEMORY;
  *out = in;
  return CXLA_OK;
}

cxla_status cx_sx_h_reduce(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  if (op->num_operands < 2 || op->num_operands % 2 || op->num_results != op->num_operands / 2)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected N inputs, N init values and N results, got %d operands and %d results",
                     op->num_operands, op->num_results);
  cx_ints dims;
  CX_TRY(cx_sx_ints(sx, op, "dimensions", 1, &dims));
  cx_instr *in;
  CX_TRY(region_op(sx, c, op, CX_OP_REDUCE, &in));
  in->a.dims = dims;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_reduce_window(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  if (op->num_operands < 2 || op->num_operands % 2 || op->num_results != op->num_operands / 2)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected N inputs, N init values and N results, got %d operands and %d results",
                     op->num_operands, op->num_results);
  cx_ints wd;
  CX_TRY(cx_sx_ints(sx, op, "window_dimensions", 1, &wd));
  cx_instr *in;
  CX_TRY(region_op(sx, c, op, CX_OP_REDUCE_WINDOW, &in));
  CX_TRY(window(sx, op, wd.n, wd.v, "window_strides", "padding", "base_dilations", "window_dilations", NULL, &in->a.window));
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_select_and_scatter(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 3, 1));
  if (op->num_regions != 2) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected 2 regions (select, scatter), got %d", op->num_regions);
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_ints wd;
  CX_TRY(cx_sx_ints(sx, op, "window_dimensions", 1, &wd));
  cx_comp *sel[2];
  CX_TRY(cx_sx_scalar_region(sx, op, 0, &sel[0]));
  CX_TRY(cx_sx_scalar_region(sx, op, 1, &sel[1]));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_SELECT_AND_SCATTER, &s, 3, ops, op);
  if (!in || !cx_instr_set_called(in, 2, sel)) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(window(sx, op, wd.n, wd.v, "window_strides", "padding", "", "", NULL, &in->a.window));
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_map(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -1, 1));
  cx_ints dims;
  CX_TRY(cx_sx_ints(sx, op, "dimensions", 0, &dims));
  cx_instr *in;
  CX_TRY(region_op(sx, c, op, CX_OP_MAP, &in));
  in->a.dims = dims;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_sort(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -1, op->num_operands));
  int64_t d;
  int stable;
  CX_TRY(cx_sx_int(sx, op, "dimension", 0, -1, &d));
  CX_TRY(cx_sx_bool(sx, op, "is_stable", 0, 0, &stable));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  if (x->shape.type == CXLA_TUPLE || x->shape.type == CXLA_TOKEN) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "sorts a tuple or token");
  if (d < 0) d += x->shape.rank; /* StableHLO counts a negative dimension from the end */
  cx_instr *in;
  CX_TRY(region_op(sx, c, op, CX_OP_SORT, &in));
  in->a.is_stable = stable;
  if (!cx_ints_set(sx->m, &in->a.dims, 1, &d)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_gather(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_gather_dims g;
  memset(&g, 0, sizeof g);
  CX_TRY(cx_sx_ints(sx, op, "offset_dims", 0, &g.offset_dims));
  CX_TRY(cx_sx_ints(sx, op, "collapsed_slice_dims", 0, &g.collapsed_slice_dims));
  CX_TRY(cx_sx_ints(sx, op, "operand_batching_dims", 0, &g.operand_batching_dims));
  CX_TRY(cx_sx_ints(sx, op, "start_indices_batching_dims", 0, &g.start_indices_batching_dims));
  CX_TRY(cx_sx_ints(sx, op, "start_index_map", 0, &g.start_index_map));
  CX_TRY(cx_sx_ints(sx, op, "slice_sizes", 1, &g.slice_sizes));
  CX_TRY(cx_sx_int(sx, op, "index_vector_dim", 1, 0, &g.index_vector_dim));
  CX_TRY(cx_sx_bool(sx, op, "indices_are_sorted", 0, 0, &g.indices_are_sorted));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_GATHER, &s, 2, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.gather = g;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_scatter(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  if (op->num_operands < 3 || op->num_operands % 2 == 0 || op->num_results != op->num_operands / 2)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected N inputs, indices, N updates and N results, got %d operands and %d results",
                     op->num_operands, op->num_results);
  cx_scatter_dims g;
  memset(&g, 0, sizeof g);
  CX_TRY(cx_sx_ints(sx, op, "update_window_dims", 0, &g.update_window_dims));
  CX_TRY(cx_sx_ints(sx, op, "inserted_window_dims", 0, &g.inserted_window_dims));
  CX_TRY(cx_sx_ints(sx, op, "input_batching_dims", 0, &g.input_batching_dims));
  CX_TRY(cx_sx_ints(sx, op, "scatter_indices_batching_dims", 0, &g.scatter_indices_batching_dims));
  CX_TRY(cx_sx_ints(sx, op, "scatter_dims_to_operand_dims", 0, &g.scatter_dims_to_operand_dims));
  CX_TRY(cx_sx_int(sx, op, "index_vector_dim", 1, 0, &g.index_vector_dim));
  CX_TRY(cx_sx_bool(sx, op, "indices_are_sorted", 0, 0, &g.indices_are_sorted));
  CX_TRY(cx_sx_bool(sx, op, "unique_indices", 0, 0, &g.unique_indices));
  cx_instr *in;
  CX_TRY(region_op(sx, c, op, CX_OP_SCATTER, &in));
  in->a.scatter = g;
  return cx_sx_bind(sx, c, op, in);
}

/* ---- library ops ---- */

cxla_status cx_sx_h_fft(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  uint32_t t;
  CX_TRY(cx_sx_enum(sx, op, "fft_type", CX_MLIR_ENUM_FFT_TYPE, 1, 0, &t));
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"}; /* cx_fft_type order */
  const char *tn = cx_mlir_enum_name(CX_MLIR_ENUM_FFT_TYPE, t);
  int ti = -1;
  for (int i = 0; i < 4; i++)
    if (tn && !strcmp(tn, names[i])) ti = i;
  if (ti < 0) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "unknown fft_type %s", tn ? tn : "?");
  cx_ints len;
  CX_TRY(cx_sx_ints(sx, op, "fft_length", 1, &len));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_FFT, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.fft_type = (cx_fft_type)ti;
  in->a.fft_length = len;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_rng_bit_generator(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 2));
  uint32_t a;
  CX_TRY(cx_sx_enum(sx, op, "rng_algorithm", CX_MLIR_ENUM_RNG_ALGORITHM, 0, 0, &a));
  const char *an = cx_mlir_enum_name(CX_MLIR_ENUM_RNG_ALGORITHM, a);
  cx_rng_algorithm alg = CX_RNG_DEFAULT;
  if (an && !strcmp(an, "THREE_FRY")) alg = CX_RNG_THREE_FRY;
  else if (an && !strcmp(an, "PHILOX")) alg = CX_RNG_PHILOX;
  else if (an && strcmp(an, "DEFAULT")) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: rng_algorithm %s", an);
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_RNG_BIT_GENERATOR, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.rng_algorithm = alg;
  return cx_sx_bind(sx, c, op, in);
}

/* rng_v1(a, b, shape): HLO's rng(a, b) of the result's shape (the shape operand says it again). */
cxla_status cx_sx_h_rng(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 3, 1));
  uint32_t d;
  CX_TRY(cx_sx_enum(sx, op, "rng_distribution", CX_MLIR_ENUM_RNG_DISTRIBUTION, 1, 0, &d));
  const char *dn = cx_mlir_enum_name(CX_MLIR_ENUM_RNG_DISTRIBUTION, d);
  cx_rng_distribution dist = dn && !strcmp(dn, "UNIFORM") ? CX_RNG_UNIFORM : dn && !strcmp(dn, "NORMAL") ? CX_RNG_NORMAL : CX_RNG_INVALID;
  if (dist == CX_RNG_INVALID) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "unknown rng_distribution %s", dn ? dn : "?");
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_RNG, &s, 2, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.rng_distribution = dist;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_cholesky(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CHOLESKY, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(cx_sx_bool(sx, op, "lower", 0, 0, &in->a.lower));
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_triangular_solve(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_TRIANGULAR_SOLVE, &s, 2, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(cx_sx_bool(sx, op, "left_side", 1, 0, &in->a.left_side));
  CX_TRY(cx_sx_bool(sx, op, "lower", 1, 0, &in->a.lower));
  CX_TRY(cx_sx_bool(sx, op, "unit_diagonal", 1, 0, &in->a.unit_diagonal));
  uint32_t t;
  CX_TRY(cx_sx_enum(sx, op, "transpose_a", CX_MLIR_ENUM_TRANSPOSE, 1, 0, &t));
  const char *tn = cx_mlir_enum_name(CX_MLIR_ENUM_TRANSPOSE, t);
  in->a.transpose_a = tn && !strcmp(tn, "NO_TRANSPOSE") ? CX_TRANSPOSE_NO : tn && !strcmp(tn, "TRANSPOSE") ? CX_TRANSPOSE_YES
                    : tn && !strcmp(tn, "ADJOINT") ? CX_TRANSPOSE_ADJOINT : CX_TRANSPOSE_INVALID;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_batch_norm(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  cx_op opc = (cx_op)arg;
  CX_TRY(cx_sx_arity(sx, op, cx_op_arity(opc), opc == CX_OP_BATCH_NORM_INFERENCE ? 1 : 3));
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  float eps;
  CX_TRY(cx_sx_f32(sx, op, "epsilon", &eps));
  cx_instr *in = cx_sx_add(sx, c, opc, &s, n, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  memcpy(&in->a.epsilon_bits, &eps, sizeof eps);
  CX_TRY(cx_sx_int(sx, op, "feature_index", 1, 0, &in->a.index));
  return cx_sx_bind(sx, c, op, in);
}
