/* mlir_print.c — a text form of a cx_mlir_tree for tests and debugging: MLIR's generic op form
 * with types in builtin syntax (tensor<2x3xf32>, i1 for vhlo's bool), so the types can be
 * compared with what jaxlib prints for the same program. Attributes print compactly; big dense
 * constants print as their first bytes in hex. */
#include <stdio.h>
#include <string.h>
#include "stablehlo/bytecode_int.h"

/* Attributes and types are shared (a table entry may be referred to many times), so a small
 * file can describe a DAG whose printed tree is exponentially large; printing stops adding once
 * the text passes this size. */
#define PRINT_MAX ((size_t)1 << 24)

static const char *const float_names[] = {
    [CX_MLIR_BF16] = "bf16", [CX_MLIR_F16] = "f16", [CX_MLIR_F32] = "f32", [CX_MLIR_F64] = "f64",
    [CX_MLIR_F80] = "f80", [CX_MLIR_F128] = "f128", [CX_MLIR_TF32] = "tf32",
    [CX_MLIR_F8E3M4] = "f8E3M4", [CX_MLIR_F8E4M3] = "f8E4M3", [CX_MLIR_F8E4M3FN] = "f8E4M3FN",
    [CX_MLIR_F8E5M2] = "f8E5M2", [CX_MLIR_F8E4M3FNUZ] = "f8E4M3FNUZ",
    [CX_MLIR_F8E5M2FNUZ] = "f8E5M2FNUZ", [CX_MLIR_F8E4M3B11FNUZ] = "f8E4M3B11FNUZ",
    [CX_MLIR_F8E8M0FNU] = "f8E8M0FNU", [CX_MLIR_F4E2M1FN] = "f4E2M1FN",
    [CX_MLIR_F6E2M3FN] = "f6E2M3FN", [CX_MLIR_F6E3M2FN] = "f6E3M2FN"};

static void type_list(cx_sb *sb, int n, const cx_mlir_type *const *t) {
  for (int i = 0; i < n; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_mlir_print_type(sb, t[i]);
  }
}

static void dims(cx_sb *sb, const cx_mlir_type *t) {
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] == CX_MLIR_DYNAMIC) cx_sb_puts(sb, "?x");
    else cx_sb_printf(sb, "%lldx", (long long)t->dims[i]);
  }
}

void cx_mlir_print_type(cx_sb *sb, const cx_mlir_type *t) {
  if (sb->len > PRINT_MAX) return;
  if (!t) {
    cx_sb_puts(sb, "<<null type>>");
    return;
  }
  switch (t->kind) {
  case CX_MLIR_TYPE_INT:
    cx_sb_printf(sb, "%s%d", t->sign == CX_MLIR_UNSIGNED ? "ui" : t->sign == CX_MLIR_SIGNED ? "si" : "i", t->width);
    return;
  case CX_MLIR_TYPE_INDEX: cx_sb_puts(sb, "index"); return;
  case CX_MLIR_TYPE_FLOAT: cx_sb_puts(sb, float_names[t->fkind]); return;
  case CX_MLIR_TYPE_COMPLEX:
    cx_sb_puts(sb, "complex<");
    cx_mlir_print_type(sb, t->elem);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_TYPE_RANKED_TENSOR:
  case CX_MLIR_TYPE_BUFFER:
    cx_sb_puts(sb, t->kind == CX_MLIR_TYPE_BUFFER ? "memref<" : "tensor<");
    dims(sb, t);
    cx_mlir_print_type(sb, t->elem);
    if (t->encoding) {
      cx_sb_puts(sb, ", ");
      cx_mlir_print_attr(sb, t->encoding);
    }
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_TYPE_UNRANKED_TENSOR:
    cx_sb_puts(sb, "tensor<*x");
    cx_mlir_print_type(sb, t->elem);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_TYPE_TUPLE:
    cx_sb_puts(sb, "tuple<");
    type_list(sb, t->n, t->types);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_TYPE_TOKEN: cx_sb_puts(sb, "!stablehlo.token"); return;
  case CX_MLIR_TYPE_FUNCTION:
    cx_sb_putc(sb, '(');
    type_list(sb, t->n, t->types);
    cx_sb_puts(sb, ") -> ");
    if (t->nout == 1 && t->outputs[0]->kind != CX_MLIR_TYPE_FUNCTION) {
      cx_mlir_print_type(sb, t->outputs[0]);
    } else {
      cx_sb_putc(sb, '(');
      type_list(sb, t->nout, t->outputs);
      cx_sb_putc(sb, ')');
    }
    return;
  case CX_MLIR_TYPE_NONE: cx_sb_puts(sb, "none"); return;
  case CX_MLIR_TYPE_WITNESS: cx_sb_puts(sb, "!shape.witness"); return;
  case CX_MLIR_TYPE_FUTURE:
    cx_sb_puts(sb, "!stablehlo.future<");
    type_list(sb, t->n, t->types);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_TYPE_QUANT: {
    const cx_mlir_quant *q = t->quant;
    cx_sb_puts(sb, "!quant.uniform<");
    cx_mlir_print_type(sb, q->storage);
    cx_sb_putc(sb, ':');
    cx_mlir_print_type(sb, q->expressed);
    if (q->per_axis) cx_sb_printf(sb, ":%lld", (long long)q->quantized_dim);
    cx_sb_puts(sb, ", ");
    if (q->per_axis) cx_sb_putc(sb, '{');
    for (int i = 0; i < q->nscales; i++)
      cx_sb_printf(sb, "%s%.17g:%lld", i ? "," : "", q->scales[i], (long long)q->zero_points[i]);
    if (q->per_axis) cx_sb_putc(sb, '}');
    cx_sb_putc(sb, '>');
    return;
  }
  case CX_MLIR_TYPE_OPAQUE:
    if (t->asm_text) cx_sb_puts(sb, t->asm_text);
    else cx_sb_printf(sb, "!%s.opaque<%zu bytes>", t->dialect, t->raw_len);
    return;
  }
}

static void quoted(cx_sb *sb, const char *s, size_t n) {
  cx_sb_putc(sb, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') cx_sb_printf(sb, "\\%c", ch);
    else if (ch < 32 || ch > 126) cx_sb_printf(sb, "\\%02X", ch);
    else cx_sb_putc(sb, (char)ch);
  }
  cx_sb_putc(sb, '"');
}

static void hex(cx_sb *sb, const uint8_t *d, size_t n) {
  const size_t max = 64;
  cx_sb_puts(sb, "\"0x");
  for (size_t i = 0; i < n && i < max; i++) cx_sb_printf(sb, "%02X", d[i]);
  if (n > max) cx_sb_printf(sb, "...(%zu bytes)", n);
  cx_sb_putc(sb, '"');
}

static void ints(cx_sb *sb, int n, const int64_t *v) {
  for (int i = 0; i < n; i++) {
    if (i) cx_sb_puts(sb, ", ");
    if (v[i] == CX_MLIR_DYNAMIC) cx_sb_putc(sb, '?');
    else cx_sb_printf(sb, "%lld", (long long)v[i]);
  }
}

static void print_loc(cx_sb *sb, const cx_mlir_attr *a) {
  switch (a->u.loc.kind) {
  case CX_MLIR_LOC_UNKNOWN: cx_sb_puts(sb, "unknown"); return;
  case CX_MLIR_LOC_FILE:
    quoted(sb, a->u.loc.file, strlen(a->u.loc.file));
    cx_sb_printf(sb, ":%lld:%lld", (long long)a->u.loc.line, (long long)a->u.loc.col);
    if (a->u.loc.end_line || a->u.loc.end_col)
      cx_sb_printf(sb, " to %lld:%lld", (long long)a->u.loc.end_line, (long long)a->u.loc.end_col);
    return;
  case CX_MLIR_LOC_NAME:
    quoted(sb, a->u.loc.name, strlen(a->u.loc.name));
    if (a->u.loc.child) {
      cx_sb_putc(sb, '(');
      print_loc(sb, a->u.loc.child);
      cx_sb_putc(sb, ')');
    }
    return;
  case CX_MLIR_LOC_CALLSITE:
    cx_sb_puts(sb, "callsite(");
    cx_mlir_print_attr(sb, a->u.loc.callee);
    cx_sb_puts(sb, " at ");
    cx_mlir_print_attr(sb, a->u.loc.caller);
    cx_sb_putc(sb, ')');
    return;
  case CX_MLIR_LOC_FUSED:
    cx_sb_puts(sb, "fused");
    if (a->u.loc.metadata) {
      cx_sb_putc(sb, '<');
      cx_mlir_print_attr(sb, a->u.loc.metadata);
      cx_sb_putc(sb, '>');
    }
    cx_sb_putc(sb, '[');
    for (int i = 0; i < a->u.loc.n; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_mlir_print_attr(sb, a->u.loc.locs[i]);
    }
    cx_sb_putc(sb, ']');
    return;
  }
}

void cx_mlir_print_attr(cx_sb *sb, const cx_mlir_attr *a) {
  if (sb->len > PRINT_MAX) return;
  if (!a) {
    cx_sb_puts(sb, "<<absent>>");
    return;
  }
  switch (a->kind) {
  case CX_MLIR_ATTR_ARRAY:
    cx_sb_putc(sb, '[');
    for (int i = 0; i < a->u.array.n; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_mlir_print_attr(sb, a->u.array.elems[i]);
    }
    cx_sb_putc(sb, ']');
    return;
  case CX_MLIR_ATTR_DICT:
    cx_sb_putc(sb, '{');
    for (int i = 0; i < a->u.dict.n; i++) {
      cx_sb_printf(sb, "%s%s = ", i ? ", " : "", a->u.dict.entries[i].name);
      cx_mlir_print_attr(sb, a->u.dict.entries[i].value);
    }
    cx_sb_putc(sb, '}');
    return;
  case CX_MLIR_ATTR_BOOL: cx_sb_puts(sb, a->u.boolean ? "true" : "false"); return;
  case CX_MLIR_ATTR_INT:
    if (a->u.integer.type->sign == CX_MLIR_UNSIGNED) cx_sb_printf(sb, "%llu : ", (unsigned long long)a->u.integer.bits);
    else cx_sb_printf(sb, "%lld : ", (long long)a->u.integer.value);
    cx_mlir_print_type(sb, a->u.integer.type);
    return;
  case CX_MLIR_ATTR_FLOAT:
    cx_sb_put_double(sb, a->u.fp.value, a->u.fp.type->fkind != CX_MLIR_F64);
    cx_sb_puts(sb, " : ");
    cx_mlir_print_type(sb, a->u.fp.type);
    return;
  case CX_MLIR_ATTR_STRING:
    quoted(sb, a->u.str.bytes, a->u.str.len);
    if (a->u.str.type) {
      cx_sb_puts(sb, " : ");
      cx_mlir_print_type(sb, a->u.str.type);
    }
    return;
  case CX_MLIR_ATTR_TENSOR:
    cx_sb_puts(sb, a->u.dense.splat ? "dense<splat " : "dense<");
    hex(sb, a->u.dense.data, a->u.dense.size);
    cx_sb_puts(sb, "> : ");
    cx_mlir_print_type(sb, a->u.dense.type);
    return;
  case CX_MLIR_ATTR_TYPE: cx_mlir_print_type(sb, a->u.type); return;
  case CX_MLIR_ATTR_ENUM: cx_sb_printf(sb, "#%s", a->u.enm.name); return;
  case CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS:
    cx_sb_puts(sb, "#alias<output_tuple_indices = [");
    ints(sb, a->u.alias.nout, a->u.alias.output_tuple_indices);
    cx_sb_printf(sb, "], operand_index = %lld, operand_tuple_indices = [", (long long)a->u.alias.operand_index);
    ints(sb, a->u.alias.nop, a->u.alias.operand_tuple_indices);
    cx_sb_puts(sb, "]>");
    return;
  case CX_MLIR_ATTR_SYMBOL_REF:
    cx_sb_printf(sb, "@%s", a->u.sym.root);
    for (int i = 0; i < a->u.sym.nnested; i++) cx_sb_printf(sb, "::@%s", a->u.sym.nested[i]);
    return;
  case CX_MLIR_ATTR_UNIT: cx_sb_puts(sb, "unit"); return;
  case CX_MLIR_ATTR_TYPE_EXTENSIONS:
    cx_sb_puts(sb, "#stablehlo.bounds<");
    ints(sb, a->u.ints.n, a->u.ints.v);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_ATTR_RESULT_ACCURACY:
    cx_sb_printf(sb, "#result_accuracy<atol = %.17g, rtol = %.17g, ulps = %lld, mode = ", a->u.acc.atol,
                 a->u.acc.rtol, (long long)a->u.acc.ulps);
    cx_mlir_print_attr(sb, a->u.acc.mode);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_ATTR_DENSE_ARRAY:
    cx_sb_puts(sb, "array<");
    cx_mlir_print_type(sb, a->u.darray.elem);
    cx_sb_printf(sb, ": %lld elements ", (long long)a->u.darray.count);
    hex(sb, a->u.darray.data, a->u.darray.size);
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_ATTR_DENSE_RESOURCE:
    cx_sb_printf(sb, "dense_resource<%s> : ", a->u.res.key);
    cx_mlir_print_type(sb, a->u.res.type);
    return;
  case CX_MLIR_ATTR_RECORD:
    cx_sb_printf(sb, "#%s<", a->u.rec.name);
    ints(sb, a->u.rec.nints, a->u.rec.ints);
    for (int i = 0; i < a->u.rec.nattrs; i++) {
      if (i || a->u.rec.nints) cx_sb_puts(sb, ", ");
      cx_mlir_print_attr(sb, a->u.rec.attrs[i]);
    }
    cx_sb_putc(sb, '>');
    return;
  case CX_MLIR_ATTR_LOC:
    cx_sb_puts(sb, "loc(");
    print_loc(sb, a);
    cx_sb_putc(sb, ')');
    return;
  case CX_MLIR_ATTR_OPAQUE:
    if (a->u.opaque.asm_text) cx_sb_puts(sb, a->u.opaque.asm_text);
    else cx_sb_printf(sb, "#%s.opaque<%zu bytes>", a->dialect, a->u.opaque.raw_len);
    return;
  }
}

static void indent_by(cx_sb *sb, int n) {
  for (int i = 0; i < n; i++) cx_sb_puts(sb, "  ");
}

static void attr_group(cx_sb *sb, const cx_mlir_named_attr *e, int n, const char *open, const char *close) {
  if (!n) return;
  cx_sb_puts(sb, open);
  for (int i = 0; i < n; i++) {
    cx_sb_printf(sb, "%s%s = ", i ? ", " : "", e[i].name);
    cx_mlir_print_attr(sb, e[i].value);
  }
  cx_sb_puts(sb, close);
}

void cx_mlir_print_op(cx_sb *sb, const cx_mlir_op *op, int indent, int with_locs) {
  indent_by(sb, indent);
  for (int i = 0; i < op->num_results; i++)
    cx_sb_printf(sb, "%s%%%lld", i ? ", " : "", (long long)op->results[i].id);
  if (op->num_results) cx_sb_puts(sb, " = ");
  cx_sb_printf(sb, "\"%s\"(", op->name);
  for (int i = 0; i < op->num_operands; i++)
    cx_sb_printf(sb, "%s%%%lld", i ? ", " : "", (long long)op->operands[i]->id);
  cx_sb_putc(sb, ')');
  if (op->num_successors) {
    cx_sb_puts(sb, "[");
    for (int i = 0; i < op->num_successors; i++) {
      const cx_mlir_block *b = op->successors[i];
      cx_sb_printf(sb, "%s^bb%d", i ? ", " : "", (int)(b - b->parent->blocks));
    }
    cx_sb_puts(sb, "]");
  }
  attr_group(sb, op->attrs, op->num_props, " <{", "}>");
  if (op->num_attrs > op->num_props)
    attr_group(sb, op->attrs + op->num_props, op->num_attrs - op->num_props, " {", "}");
  if (op->num_regions) {
    cx_sb_puts(sb, " (");
    for (int r = 0; r < op->num_regions; r++) {
      const cx_mlir_region *reg = &op->regions[r];
      cx_sb_puts(sb, r ? ", {\n" : "{\n");
      for (int b = 0; b < reg->num_blocks; b++) {
        const cx_mlir_block *blk = &reg->blocks[b];
        if (b || blk->num_args) {
          indent_by(sb, indent);
          cx_sb_printf(sb, "^bb%d", b);
          if (blk->num_args) {
            cx_sb_putc(sb, '(');
            for (int i = 0; i < blk->num_args; i++) {
              cx_sb_printf(sb, "%s%%%lld: ", i ? ", " : "", (long long)blk->args[i].id);
              cx_mlir_print_type(sb, blk->args[i].type);
            }
            cx_sb_putc(sb, ')');
          }
          cx_sb_puts(sb, ":\n");
        }
        for (int i = 0; i < blk->num_ops; i++) cx_mlir_print_op(sb, blk->ops[i], indent + 1, with_locs);
      }
      indent_by(sb, indent);
      cx_sb_putc(sb, '}');
    }
    cx_sb_putc(sb, ')');
  }
  cx_sb_puts(sb, " : (");
  for (int i = 0; i < op->num_operands; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_mlir_print_type(sb, op->operands[i]->type);
  }
  cx_sb_puts(sb, ") -> ");
  if (op->num_results != 1) cx_sb_putc(sb, '(');
  for (int i = 0; i < op->num_results; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_mlir_print_type(sb, op->results[i].type);
  }
  if (op->num_results != 1) cx_sb_putc(sb, ')');
  if (with_locs && op->loc) {
    cx_sb_putc(sb, ' ');
    cx_mlir_print_attr(sb, op->loc);
  }
  cx_sb_putc(sb, '\n');
}

char *cx_mlir_print_tree(const cx_mlir_tree *t, int with_locs) {
  cx_sb sb;
  cx_sb_init(&sb);
  for (int i = 0; i < t->top.num_ops; i++) cx_mlir_print_op(&sb, t->top.ops[i], 0, with_locs);
  return cx_sb_take(&sb);
}
