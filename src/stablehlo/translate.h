/* translate.h — a StableHLO portable artifact (the VHLO op tree stablehlo/mlir.h reads) to a
 * cx_module, as XLA translates StableHLO to HLO (xla/hlo/translate/mhlo_to_hlo): the public
 * function "main" is the ENTRY, other functions and every region become computations, values
 * a region uses from outside it become parameters of its computation (XLA's implicit captures),
 * and each op cxla has becomes that instruction. What cxla cannot express (an op, an element
 * type, a dynamic dimension, an attribute value) is refused by name with the op's MLIR location.
 *
 * The translation is split by concept: translate_module.c (functions, calls, the ENTRY and its
 * header), translate_types.c (types, layouts, attribute readers, dense constants),
 * translate_ops.c (the op table, elementwise and re-indexing ops), translate_compute.c (dots,
 * convolutions, reductions, windows, gather/scatter, sort and the library ops),
 * translate_control.c (regions, while, if/case, tuples, tokens) and translate_custom.c
 * (custom_call, composite, the sharding annotations). */
#ifndef CX_STABLEHLO_TRANSLATE_H
#define CX_STABLEHLO_TRANSLATE_H
#include "ir/ir.h"
#include "stablehlo/mlir.h"

/* Reads the bytes (cx_mlirbc_read) and translates the tree; the module is not verified. Errors:
 * CXLA_ERR_PARSE (malformed bytes, with a byte offset; or a tree that is not a StableHLO
 * module), CXLA_ERR_UNSUPPORTED (an op, type or attribute cxla cannot express), each naming
 * the op and its location. On error *out is NULL. */
cxla_status cx_stablehlo_parse_module(cxla_context *ctx, const void *bytes, size_t len, const char *filename,
                                      cx_module **out);
/* Translates a tree read by cx_mlirbc_read. */
cxla_status cx_stablehlo_to_module(cxla_context *ctx, const cx_mlir_tree *t, const char *filename, cx_module **out);

/* ---- shared by translate*.c ---------------------------------------------------------------- */

typedef struct cx_sx_func {
  const cx_mlir_op *op;
  cx_comp *comp;
  int state; /* 0: not yet, 1: being translated (a call now is recursion), 2: done */
} cx_sx_func;

typedef struct cx_sx {
  cxla_context *ctx;
  cx_module *m;
  const cx_mlir_tree *t;
  const cx_mlir_op *module_op;
  const char *filename;
  int64_t nvals;
  cx_instr **vals;          /* the instruction standing for each value (by id) in the scope now */
  uint32_t *mark;           /* per value id: the capture scan that saw it defined inside */
  uint32_t mark_now;
  int nfuncs;
  cx_sx_func *funcs;
  int depth;                /* region nesting, bounded */
  int nregions;             /* computations made for regions, for their names */
} cx_sx;

/* An op handler: reads op's operands (sx->vals), makes its instructions in c and binds its
 * results (cx_sx_bind). */
typedef cxla_status (*cx_sx_handler)(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg);

typedef struct cx_sx_rule {
  const char *name;         /* without "vhlo." */
  cx_sx_handler fn;
  int arg;                  /* the handler's argument: a cx_op for the table-driven ones */
} cx_sx_rule;

/* The rule for an op name ("vhlo.add_v1"), or NULL. */
const cx_sx_rule *cx_sx_find_rule(const char *name);
/* Why an op cxla has no rule for is refused (NULL: not a known VHLO op). */
const char *cx_sx_refusal(const char *name);

/* op's string attribute `name` (vhlo.string_v1 or builtin), or NULL when absent or not a string. */
static inline const char *cx_sx_str(const cx_mlir_op *op, const char *name) {
  const cx_mlir_attr *a = cx_mlir_op_attr(op, name);
  return a && a->kind == CX_MLIR_ATTR_STRING ? cx_mlir_attr_cstr(a) : NULL;
}

/* ---- errors: "FILE: error: LOC: vhlo.op_v1: message" ---- */
cxla_status cx_sx_err(cx_sx *sx, const cx_mlir_op *op, cxla_status code, const char *fmt, ...) CX_PRINTF(4, 5);

/* ---- types (translate_types.c) ---- */
/* The element type of a scalar MLIR type; refused by name when cxla has none. */
cxla_status cx_sx_elem_type(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_type *t, cxla_type *out);
/* The shape of a value's type: tensors (static dimensions only; a bounded dynamic dimension
 * becomes cxla's "<=N"), tuples (elements in the module arena), tokens. */
cxla_status cx_sx_shape(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_type *t, cx_shape *out);
/* The shape of op's results: the one result's, or a tuple of all of them (none: ()). */
cxla_status cx_sx_result_shape(cx_sx *sx, const cx_mlir_op *op, cx_shape *out);
/* A layout from a minor_to_major list (operand_layouts/result_layouts entries, layout_mode). */
cxla_status cx_sx_set_layout(cx_sx *sx, const cx_mlir_op *op, cx_shape *s, const cx_mlir_attr *a);

/* ---- attributes (translate_types.c): each refuses a missing required attribute or one of
 * the wrong kind with a message naming it ---- */
const cx_mlir_attr *cx_sx_attr(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, cxla_status *st);
/* An integer list: a dense integer tensor, a dense array, or an array of integers. */
cxla_status cx_sx_ints(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, cx_ints *out);
/* The same for an attribute already looked up (what: its name for messages). */
cxla_status cx_sx_ints_of(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_attr *a, const char *what, cx_ints *out);
cxla_status cx_sx_int(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, int64_t dflt, int64_t *out);
cxla_status cx_sx_bool(cx_sx *sx, const cx_mlir_op *op, const char *name, int required, int dflt, int *out);
/* An enum of kind `which`; *out its value (dflt when absent and not required). */
cxla_status cx_sx_enum(cx_sx *sx, const cx_mlir_op *op, const char *name, cx_mlir_enum_kind which, int required,
                       uint32_t dflt, uint32_t *out);
cxla_status cx_sx_f32(cx_sx *sx, const cx_mlir_op *op, const char *name, float *out);
/* A constant's literal from a dense attribute of the given result shape (exact bytes). A splat
 * of more than one element comes back as its one element (rank 0) with *one set: the caller
 * broadcasts it rather than keep an array of copies. */
cxla_status cx_sx_literal(cx_sx *sx, const cx_mlir_op *op, const cx_mlir_attr *a, const cx_shape *s,
                          cxla_literal **out, int *one);
/* MLIR's attribute syntax of a, as XLA writes a typed-FFI backend_config ("{uplo = 76 : ui8}"). */
void cx_sx_print_attr(cx_sb *sb, const cx_mlir_attr *a);

/* ---- instructions (translate_module.c) ---- */
/* A new instruction at the end of c, named after its opcode, with op's location as metadata. */
cx_instr *cx_sx_add(cx_sx *sx, cx_comp *c, cx_op opc, const cx_shape *s, int nops, cx_instr *const *ops,
                    const cx_mlir_op *op);
/* The instruction for op's operand i (an error when the tree uses a value it never defined). */
cxla_status cx_sx_operand(cx_sx *sx, const cx_mlir_op *op, int i, cx_instr **out);
/* All operands from `from` on into *ops (an arena array); n their count. */
cxla_status cx_sx_operands(cx_sx *sx, const cx_mlir_op *op, int from, cx_instr ***ops, int *n);
/* Checks op has n operands (n < 0: at least -n) and nres results (-1: any). */
cxla_status cx_sx_arity(cx_sx *sx, const cx_mlir_op *op, int n, int nres);
/* Binds op's results to `in`: the one result, or get-tuple-elements of a tuple-shaped `in`. */
cxla_status cx_sx_bind(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *in);
/* Broadcasts a scalar x to shape s (the implicit scalar operands of select and clamp). */
cxla_status cx_sx_broadcast_scalar(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *x, const cx_shape *s,
                                   cx_instr **out);
/* The computation for the function named sym (translated on first use). */
cxla_status cx_sx_func_comp(cx_sx *sx, const cx_mlir_op *op, const char *sym, cx_comp **out);
/* Translates the ops of a block into c (the block's arguments already bound), then returns
 * the operands of its terminator (vhlo.return_v1) as instructions. */
cxla_status cx_sx_block(cx_sx *sx, cx_comp *c, const cx_mlir_block *b, const cx_mlir_op **term, cx_instr ***rets,
                        int *nrets);
/* A root for n values: the value itself when n == 1 and !force_tuple, else a tuple. */
cxla_status cx_sx_root(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr **v, int n, int force_tuple,
                       cx_instr **out);

/* ---- regions (translate_control.c) ---- */
/* A computation for region r of op whose parameters are the block's arguments, one parameter
 * each (reducers, comparators, bodies of map/scatter/select-and-scatter); a region that uses
 * values from outside is refused here, as XLA refuses it. The root is a tuple when the region
 * returns several values. */
cxla_status cx_sx_scalar_region(cx_sx *sx, const cx_mlir_op *op, int r, cx_comp **out);

#endif
