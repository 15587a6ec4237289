/* printer_int.h — private to the HLO printer (printer.c, printer_attrs.c). */
#ifndef CX_PRINTER_INT_H
#define CX_PRINTER_INT_H
#include "text/hlo.h"

/* Decimal integer and shape ("f32[2,3]{1,0}", "(s32[], token[])") without printf: the
 * printer writes millions of them for large modules. */
void cx_print_int(cx_sb *sb, int64_t v);
void cx_print_shape(cx_sb *sb, const cx_shape *s, int with_layout);
/* The instruction's name as printed: its own, or "<opcode>.<id>" for unnamed ones. */
void cx_print_name(cx_sb *sb, const cx_instr *in, const cx_print_opts *o);
/* A computation reference ("region_0.4" or "%region_0.4"). */
void cx_print_comp_ref(cx_sb *sb, const cx_comp *c, const cx_print_opts *o);
/* ", key=value" for every attribute of in: modelled ones in a fixed order per op, then called
 * computations, then kept (raw) attributes in their original order. */
void cx_print_attrs(cx_sb *sb, const cx_instr *in, const cx_print_opts *o);
/* A constant's value: "42", "{1, 2}", "{ { 1, 2 }, { 3, 4 } }", "(1, {2, 3})". */
void cx_print_literal_value(cx_sb *sb, const cxla_literal *lit);
/* A constant's bytes in hex ("0x0000803f"; tuples "(0x.., 0x..)"): cx_print_opts.literal_bytes. */
void cx_print_literal_bytes(cx_sb *sb, const cxla_literal *lit);

#endif
