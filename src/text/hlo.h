/* hlo.h — HLO text: parsing modules and literals, and printing them back. */
#ifndef CX_HLO_H
#define CX_HLO_H
#include "ir/ir.h"

/* Parses HLO text into a module without verifying it. Errors (CXLA_ERR_PARSE, or
 * CXLA_ERR_UNSUPPORTED for valid syntax cxla does not model) read
 * "FILE:LINE:COL: error: expected ..., got ...". Accepts what JAX and TensorFlow dump, old and
 * new: %names or bare names, optional signatures and operand shapes (written operand shapes
 * must match the operand), forward references to instructions and computations, comments.
 * Also what XLA's parser reads beyond its dumps: result shapes left out where XLA infers them
 * (the verifier's inference fills them in; a failure there is CXLA_ERR_VERIFY), operands
 * written as nested instructions (named "<opcode>.anon..."), modules without the HloModule
 * line (named "module_<entry>"), "f32[4] constant(0)", iota replica groups, and async chains
 * with their "<op>-start" sugar (the computation it implies is made and named "async_wrapped").
 * Attributes the IR does not model are kept verbatim in a.raw / m->raw. A file that is not HLO
 * text at all (StableHLO/MLIR, an HloModuleProto binary, a buffer-assignment dump, LLVM IR)
 * gets one error at its first token (1:1 for binary data) naming it and how to get HLO text. */
cxla_status cx_parse_module(cxla_context *ctx, const char *text, size_t len, const char *filename,
                            cx_module **out);
/* Parses a literal with its shape: "f32[2,2] {{1,2},{3,4}}", "(f32[], s32[2]) (1, {2, 3})". */
cxla_status cx_parse_literal(cxla_context *ctx, const char *text, size_t len, cxla_literal **out);

typedef struct cx_print_opts {
  int percent;          /* "%name" instead of "name" */
  int operand_shapes;   /* "add(f32[2]{0} %a, ...)" */
  int layouts;          /* "{1,0}" after array shapes */
  int metadata;         /* metadata= and other kept attributes */
  int literal_bytes;    /* constants as their bytes in hex, "0x0000803f": not HLO, but exact and
                           fast for compile-cache keys (decimal text took 1 us an element) */
} cx_print_opts;
/* Canonical text: bare names, layouts, no operand shapes, kept attributes. For any module
 * the parser accepts, printing, re-parsing and printing again gives the same text (in every
 * style); unnamed instructions print as "<opcode>.<id>". */
cx_print_opts cx_print_opts_canonical(void);
void cx_print_module(cx_sb *sb, const cx_module *m, const cx_print_opts *o);
void cx_print_comp(cx_sb *sb, const cx_comp *c, const cx_print_opts *o);
void cx_print_instr(cx_sb *sb, const cx_instr *in, const cx_print_opts *o);

#endif
