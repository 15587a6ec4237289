/* translate_custom.c — custom_call (target, backend_config as XLA hands it to HLO, layouts,
 * aliasing, called computations), composite (a call of its decomposition), and the sharding
 * annotations Shardy leaves as custom-calls (identities on one device). */
#include <stdio.h>
#include <string.h>
#include "stablehlo/translate.h"

/* output_to_operand_aliasing={{0}: (0, {})} from output_operand_aliases. */
static cxla_status aliases(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  const cx_mlir_attr *a = cx_mlir_op_attr(op, "output_operand_aliases");
  if (!a || a->kind != CX_MLIR_ATTR_ARRAY || !a->u.array.n) return CXLA_OK;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_putc(&sb, '{');
  for (int i = 0; i < a->u.array.n; i++) {
    const cx_mlir_attr *e = a->u.array.elems[i];
    if (e->kind != CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS) {
      cx_sb_free(&sb);
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "output_operand_aliases entry %d is not an alias", i);
    }
    if (e->u.alias.operand_index < 0 || e->u.alias.operand_index >= op->num_operands) {
      cx_sb_free(&sb);
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "output_operand_aliases entry %d names operand %lld of %d", i,
                       (long long)e->u.alias.operand_index, op->num_operands);
    }
    cx_sb_puts(&sb, i ? ", {" : "{");
    for (int k = 0; k < e->u.alias.nout; k++) cx_sb_printf(&sb, "%s%lld", k ? "," : "", (long long)e->u.alias.output_tuple_indices[k]);
    cx_sb_printf(&sb, "}: (%lld, {", (long long)e->u.alias.operand_index);
    for (int k = 0; k < e->u.alias.nop; k++) cx_sb_printf(&sb, "%s%lld", k ? "," : "", (long long)e->u.alias.operand_tuple_indices[k]);
    cx_sb_puts(&sb, "})");
  }
  cx_sb_putc(&sb, '}');
  char *s = cx_sb_take(&sb);
  if (!s) return cx_oom(sx->ctx);
  int ok = cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "output_to_operand_aliasing", s);
  cx_free(s);
  return ok ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* operand_layout_constraints={f32[3,3]{0,1}, ...} from operand_layouts (the operands' shapes with
 * those layouts), kept for the text; cxla's values are logical arrays, whatever their layout. */
static cxla_status operand_layouts(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  const cx_mlir_attr *a = cx_mlir_op_attr(op, "operand_layouts");
  if (!a || a->kind != CX_MLIR_ATTR_ARRAY || !a->u.array.n) return CXLA_OK;
  if (a->u.array.n != in->nops)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "operand_layouts has %d entries for %d operands", a->u.array.n, in->nops);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_putc(&sb, '{');
  for (int i = 0; i < in->nops; i++) {
    cx_shape s = in->ops[i]->shape;
    cxla_status st = cx_sx_set_layout(sx, op, &s, a->u.array.elems[i]);
    if (st != CXLA_OK) {
      cx_sb_free(&sb);
      return st;
    }
    if (i) cx_sb_puts(&sb, ", ");
    cx_shape_print(&sb, &s, 1);
  }
  cx_sb_putc(&sb, '}');
  char *s = cx_sb_take(&sb);
  if (!s) return cx_oom(sx->ctx);
  int ok = cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "operand_layout_constraints", s);
  cx_free(s);
  return ok ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* backend_config as XLA's translation passes it on: a typed-FFI call's dictionary printed in
 * MLIR syntax ({uplo = 76 : ui8}), any other call's string as it is. jax writes typed-FFI calls
 * as api_version ORIGINAL with the dictionary in mhlo.backend_config (XLA's StableHLO import
 * makes them typed FFI again). */
static cxla_status backend_config(cx_sx *sx, const cx_mlir_op *op, cx_instr *in, int *typed_ffi) {
  uint32_t api;
  CX_TRY(cx_sx_enum(sx, op, "api_version", CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION, 0, 1, &api));
  const char *an = cx_mlir_enum_name(CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION, api);
  const cx_mlir_attr *bc = cx_mlir_op_attr(op, "backend_config");
  const cx_mlir_attr *mbc = cx_mlir_op_attr(op, "mhlo.backend_config");
  *typed_ffi = (an && !strcmp(an, "API_VERSION_TYPED_FFI")) || (mbc && mbc->kind == CX_MLIR_ATTR_DICT);
  const cx_mlir_attr *dict = bc && bc->kind == CX_MLIR_ATTR_DICT ? bc : mbc && mbc->kind == CX_MLIR_ATTR_DICT ? mbc : NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  if (*typed_ffi) {
    if (dict) cx_sx_print_attr(&sb, dict);
    else cx_sb_puts(&sb, "{}");
  } else if (bc && bc->kind == CX_MLIR_ATTR_STRING) {
    if (!bc->u.str.len) return CXLA_OK;
    cx_sx_print_attr(&sb, bc); /* quoted, as HLO text writes backend_config="..." */
  } else if (bc) {
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "backend_config must be a string (api_version %s)", an ? an : "?");
  } else {
    return CXLA_OK;
  }
  char *s = cx_sb_take(&sb);
  if (!s) return cx_oom(sx->ctx);
  in->a.backend_config = cx_arena_strdup(&sx->m->arena, s);
  cx_free(s);
  if (!in->a.backend_config) return cx_oom(sx->ctx);
  if (!*typed_ffi && an && strcmp(an, "API_VERSION_ORIGINAL") && strcmp(an, "API_VERSION_UNSPECIFIED") &&
      !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "api_version", an))
    return CXLA_ERR_OUT_OF_MEMORY;
  return CXLA_OK;
}

/* Shardy's markers (xla.sdy.*: sharding constraints, function result shardings, ...) say how
 * to split values over devices; on one device a marker that keeps its operands' shapes passes
 * them through. Those that change shapes (the edges of a manual computation, global to local
 * shape) stay custom-calls, as in XLA's HLO before its partitioner runs: cxla refuses them when
 * compiling, as it refuses them in HLO text. */
static int is_identity_marker(cx_sx *sx, const cx_mlir_op *op, const char *target, cx_instr **ops, int n) {
  if (strncmp(target, "xla.sdy.", 8) || op->num_results != n) return 0;
  for (int i = 0; i < n; i++) {
    cx_shape s;
    if (op->results[i].type->kind != CX_MLIR_TYPE_RANKED_TENSOR) return 0;
    if (cx_sx_shape(sx, op, op->results[i].type, &s) != CXLA_OK) return 0;
    if (!cx_shape_equal(&s, &ops[i]->shape)) return 0;
  }
  return 1;
}

cxla_status cx_sx_h_custom_call(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  const char *target = cx_sx_str(op, "call_target_name");
  if (!target) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "missing attribute 'call_target_name'");
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  if (is_identity_marker(sx, op, target, ops, n)) {
    for (int i = 0; i < n; i++) sx->vals[op->results[i].id] = ops[i];
    return CXLA_OK;
  }
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  const cx_mlir_attr *rl = cx_mlir_op_attr(op, "result_layouts");
  if (rl && rl->kind == CX_MLIR_ATTR_ARRAY && rl->u.array.n) {
    if (rl->u.array.n != op->num_results)
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "result_layouts has %d entries for %d results", rl->u.array.n, op->num_results);
    if (op->num_results == 1) CX_TRY(cx_sx_set_layout(sx, op, &s, rl->u.array.elems[0]));
    else
      for (int i = 0; i < op->num_results; i++) CX_TRY(cx_sx_set_layout(sx, op, &s.tuple[i], rl->u.array.elems[i]));
  }
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CUSTOM_CALL, &s, n, ops, op);
  if (!in || !(in->a.custom_call_target = cx_arena_strdup(&sx->m->arena, target))) return cx_oom(sx->ctx);
  int typed;
  CX_TRY(backend_config(sx, op, in, &typed));
  if (typed && !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "api_version", "API_VERSION_TYPED_FFI"))
    return CXLA_ERR_OUT_OF_MEMORY;
  int side;
  CX_TRY(cx_sx_bool(sx, op, "has_side_effect", 0, 0, &side));
  if (side && !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "custom_call_has_side_effect", "true"))
    return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(operand_layouts(sx, op, in));
  CX_TRY(aliases(sx, op, in));
  const cx_mlir_attr *cc = cx_mlir_op_attr(op, "called_computations");
  if (cc && cc->kind == CX_MLIR_ATTR_ARRAY && cc->u.array.n) {
    cx_comp **called = cx_arena_alloc(&sx->m->arena, sizeof *called * (size_t)cc->u.array.n);
    if (!called) return cx_oom(sx->ctx);
    for (int i = 0; i < cc->u.array.n; i++) {
      const cx_mlir_attr *e = cc->u.array.elems[i];
      const char *sym = e->kind == CX_MLIR_ATTR_SYMBOL_REF ? e->u.sym.root : e->kind == CX_MLIR_ATTR_STRING ? cx_mlir_attr_cstr(e) : NULL;
      if (!sym) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "called_computations entry %d is not a function name", i);
      CX_TRY(cx_sx_func_comp(sx, op, sym, &called[i]));
    }
    if (!cx_instr_set_called(in, cc->u.array.n, called)) return CXLA_ERR_OUT_OF_MEMORY;
  }
  return cx_sx_bind(sx, c, op, in);
}

/* composite: a named op with its meaning in a decomposition function; HLO's composite call is
 * a call of that function (the name and attributes only help other compilers match it). */
cxla_status cx_sx_h_composite(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  const char *dec = cx_sx_str(op, "decomposition");
  const cx_mlir_attr *da = cx_mlir_op_attr(op, "decomposition");
  if (!dec && da && da->kind == CX_MLIR_ATTR_SYMBOL_REF) dec = da->u.sym.root;
  if (!dec) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "missing attribute 'decomposition'");
  if (op->num_regions && op->regions[0].num_blocks)
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: a composite with regions");
  cx_comp *f;
  CX_TRY(cx_sx_func_comp(sx, op, dec, &f));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  if (n != f->nparams) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "decomposition '%s' takes %d arguments, given %d", dec, f->nparams, n);
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CALL, &s, n, ops, op);
  if (!in || !cx_instr_set_called(in, 1, &f)) return CXLA_ERR_OUT_OF_MEMORY;
  const char *name = cx_sx_str(op, "name");
  if (name && !cx_mlir_op_attr(op, "mhlo.frontend_attributes")) {
    char fa[400];
    snprintf(fa, sizeof fa, "{composite.name=\"%s\"}", name);
    if (!cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "frontend_attributes", fa)) return CXLA_ERR_OUT_OF_MEMORY;
  }
  return cx_sx_bind(sx, c, op, in);
}
