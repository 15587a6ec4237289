/* printer.c — cx_module to HLO text in the style XLA prints today (bare names, layouts,
 * computations without signatures), or the older style with %names, operand shapes and
 * signatures. The parser reads both back to the same module. */
#include <stdlib.h>
#include <string.h>
#include "text/printer_int.h"

cx_print_opts cx_print_opts_canonical(void) {
  cx_print_opts o;
  o.percent = 0;
  o.operand_shapes = 0;
  o.layouts = 1;
  o.metadata = 1;
  o.literal_bytes = 0;
  return o;
}

/* Same text as cx_shape_print. */
void cx_print_shape(cx_sb *sb, const cx_shape *s, int with_layout) {
  if (s->type == CXLA_TUPLE) {
    cx_sb_putc(sb, '(');
    for (int i = 0; i < s->ntuple; i++) {
      if (i) cx_sb_putn(sb, ", ", 2);
      cx_print_shape(sb, &s->tuple[i], with_layout);
    }
    cx_sb_putc(sb, ')');
    return;
  }
  if (s->type == CXLA_TOKEN) {
    cx_sb_putn(sb, "token[]", 7);
    return;
  }
  const char *n = cxla_type_name(s->type);
  cx_sb_puts(sb, n ? n : "invalid");
  cx_sb_putc(sb, '[');
  for (int i = 0; i < s->rank; i++) {
    if (i) cx_sb_putc(sb, ',');
    if (s->dynamic & (1u << i)) cx_sb_putn(sb, "<=", 2);
    cx_print_int(sb, s->dims[i]);
  }
  cx_sb_putc(sb, ']');
  if (!with_layout || !s->has_layout) return;
  cx_sb_putc(sb, '{');
  for (int i = 0; i < s->rank; i++) {
    if (i) cx_sb_putc(sb, ',');
    cx_print_int(sb, s->minor_to_major[i]);
  }
  if (s->layout_extra) {
    cx_sb_putc(sb, ':');
    cx_sb_puts(sb, s->layout_extra);
  }
  cx_sb_putc(sb, '}');
}

void cx_print_name(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  if (o->percent) cx_sb_putc(sb, '%');
  if (in->name) cx_sb_puts(sb, in->name);
  else cx_sb_printf(sb, "%s.%d", cx_op_name(in->op), in->id);
}

void cx_print_instr(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  if (in->parent && in->parent->root == in) cx_sb_puts(sb, "ROOT ");
  cx_print_name(sb, in, o);
  cx_sb_puts(sb, " = ");
  cx_print_shape(sb, &in->shape, o->layouts);
  cx_sb_putc(sb, ' ');
  cx_sb_puts(sb, cx_op_name(in->op));
  cx_sb_putc(sb, '(');
  if (in->op == CX_OP_PARAMETER) {
    cx_print_int(sb, in->a.index);
  } else if (in->op == CX_OP_CONSTANT && in->a.literal) {
    if (o->literal_bytes) cx_print_literal_bytes(sb, in->a.literal);
    else cx_print_literal_value(sb, in->a.literal);
  } else {
    for (int i = 0; i < in->nops; i++) {
      if (i) cx_sb_puts(sb, ", ");
      if (o->operand_shapes) {
        cx_print_shape(sb, &in->ops[i]->shape, o->layouts);
        cx_sb_putc(sb, ' ');
      }
      cx_print_name(sb, in->ops[i], o);
    }
  }
  cx_sb_putc(sb, ')');
  cx_print_attrs(sb, in, o);
}

typedef struct {
  int64_t index;
  int pos;
  const cx_instr *in;
} param_ref;

static int by_index(const void *a, const void *b) {
  const param_ref *x = a, *y = b;
  if (x->index != y->index) return x->index < y->index ? -1 : 1;
  return x->pos - y->pos;
}

/* "(x: f32[], y: s32[2]) -> f32[]": parameters by number, as the old style wrote them. */
static void print_signature(cx_sb *sb, const cx_comp *c, const cx_print_opts *o) {
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) n += c->instrs[i]->op == CX_OP_PARAMETER;
  param_ref *v = cx_malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v) { sb->oom = 1; return; }
  n = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op == CX_OP_PARAMETER) {
      v[n].index = c->instrs[i]->a.index;
      v[n].pos = i;
      v[n++].in = c->instrs[i];
    }
  qsort(v, (size_t)n, sizeof *v, by_index);
  cx_print_opts bare = *o;
  bare.percent = 0;
  cx_sb_puts(sb, " (");
  for (int i = 0; i < n; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_print_name(sb, v[i].in, &bare);
    cx_sb_puts(sb, ": ");
    cx_print_shape(sb, &v[i].in->shape, 0);
  }
  cx_sb_puts(sb, ") -> ");
  if (c->root) cx_print_shape(sb, &c->root->shape, 0);
  else cx_sb_puts(sb, "()");
  cx_free(v);
}

void cx_print_comp(cx_sb *sb, const cx_comp *c, const cx_print_opts *o) {
  if (c->is_entry || (c->module && c->module->entry == c)) cx_sb_puts(sb, "ENTRY ");
  if (o->percent) cx_sb_putc(sb, '%');
  cx_sb_puts(sb, c->name);
  if (o->percent) print_signature(sb, c, o);
  cx_sb_puts(sb, " {\n");
  for (int i = 0; i < c->ninstrs; i++) {
    cx_sb_puts(sb, "  ");
    cx_print_instr(sb, c->instrs[i], o);
    cx_sb_putc(sb, '\n');
  }
  cx_sb_puts(sb, "}\n");
}

void cx_print_module(cx_sb *sb, const cx_module *m, const cx_print_opts *o) {
  cx_sb_puts(sb, "HloModule ");
  cx_sb_puts(sb, m->name);
  for (int i = 0; i < m->nraw; i++) {
    cx_sb_putn(sb, ", ", 2);
    cx_sb_puts(sb, m->raw[i].key);
    cx_sb_putc(sb, '=');
    cx_sb_puts(sb, m->raw[i].value);
  }
  cx_sb_putc(sb, '\n');
  for (int t = 0; t < CX_FRAME_TABLES; t++) {
    if (!m->nframes[t]) continue;
    cx_sb_printf(sb, "\n%s\n", cx_frame_table_names[t]);
    for (int i = 0; i < m->nframes[t]; i++) cx_sb_printf(sb, "%s %s\n", m->frames[t][i].key, m->frames[t][i].value);
  }
  for (int i = 0; i < m->ncomps; i++) {
    cx_sb_putc(sb, '\n');
    cx_print_comp(sb, m->comps[i], o);
  }
}
