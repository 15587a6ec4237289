/* printer.c — placeholder until the HLO printer lands. */
#include "text/hlo.h"
cx_print_opts cx_print_opts_canonical(void) { cx_print_opts o = {0, 0, 1, 1}; return o; }
void cx_print_module(cx_sb *sb, const cx_module *m, const cx_print_opts *o) { (void)o; cx_sb_printf(sb, "HloModule %s\n", m->name); }
void cx_print_comp(cx_sb *sb, const cx_comp *c, const cx_print_opts *o) { (void)o; cx_sb_puts(sb, c->name); }
void cx_print_instr(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) { (void)o; cx_sb_puts(sb, in->name ? in->name : "?"); }
