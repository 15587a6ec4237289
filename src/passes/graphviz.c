/* graphviz.c — a module as a GraphViz digraph. Every instruction is a node labelled with its
 * name, op and shape; edges run from operand to user. A fusion is a cluster holding its fused
 * computation (the fusion's operands feed the fused parameters, the fused root feeds the
 * fusion node, which feeds the fusion's users), so fusion decisions show at a glance. Every
 * other computation (ENTRY, while bodies and conditions, branches, reducers) is a cluster of
 * its own; a dashed edge runs from the instruction that calls it to its root. */
#include <string.h>
#include "ir/ir.h"
#include "passes/pass.h"

/* Text inside a double-quoted dot string: quotes and backslashes escaped, newlines as \n. */
static void put_escaped(cx_sb *sb, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') cx_sb_putc(sb, '\\');
    if (*s == '\n') { cx_sb_puts(sb, "\\n"); continue; }
    cx_sb_putc(sb, *s);
  }
}

static void put_shape(cx_sb *sb, const cx_shape *s) {
  cx_sb tmp;
  cx_sb_init(&tmp);
  cx_shape_print(&tmp, s, 0);
  put_escaped(sb, tmp.buf);
  cx_sb_free(&tmp);
}

typedef struct gv {
  cx_sb *sb;
  const cx_module *m;
  const cx_instr **owner; /* by position in m->comps: the fusion that draws it, or NULL */
} gv;

static int comp_index(const gv *g, const cx_comp *c) {
  for (int i = 0; i < g->m->ncomps; i++)
    if (g->m->comps[i] == c) return i;
  return -1;
}

static const cx_comp *fused_of(const gv *g, const cx_instr *in, int indent) {
  if (indent > 64) return NULL; /* fusions nested absurdly deep (or in a cycle): plain nodes */
  if (in->op != CX_OP_FUSION || in->ncalled != 1 || !in->called[0]) return NULL;
  int k = comp_index(g, in->called[0]);
  return k >= 0 && g->owner[k] == in ? in->called[0] : NULL;
}

static void node(gv *g, const cx_instr *in, int indent) {
  cx_sb *sb = g->sb;
  cx_sb_printf(sb, "%*sn%d [label=\"", indent, "", in->id);
  put_escaped(sb, in->name ? in->name : "?");
  cx_sb_puts(sb, "\\n");
  put_escaped(sb, cx_op_name(in->op));
  if (in->op == CX_OP_FUSION && in->a.fusion_kind) {
    cx_sb_putc(sb, ' ');
    put_escaped(sb, cx_fusion_kind_names[in->a.fusion_kind]);
  }
  if (in->op == CX_OP_PARAMETER) cx_sb_printf(sb, " %lld", (long long)in->a.index);
  cx_sb_putc(sb, ' ');
  put_shape(sb, &in->shape);
  const cxla_literal *l = in->a.literal;
  if (in->op == CX_OP_CONSTANT && l && cx_type_is_array(l->shape.type) && l->shape.rank == 0) {
    cx_sb tmp;
    cx_sb_init(&tmp);
    cx_literal_print_elem(&tmp, l, 0);
    cx_sb_puts(sb, " = ");
    put_escaped(sb, tmp.buf);
    cx_sb_free(&tmp);
  }
  cx_sb_puts(sb, "\"");
  if (in->op == CX_OP_PARAMETER) cx_sb_puts(sb, ", shape=ellipse");
  else if (in->op == CX_OP_CONSTANT) cx_sb_puts(sb, ", shape=plain");
  else if (in->op == CX_OP_FUSION) cx_sb_puts(sb, ", style=filled, fillcolor=\"#cfe2f3\"");
  else if (cx_op_class_of(in->op) == CX_CLASS_LIBRARY) cx_sb_puts(sb, ", style=filled, fillcolor=\"#f4cccc\"");
  else if (cx_op_class_of(in->op) == CX_CLASS_CONTROL) cx_sb_puts(sb, ", style=filled, fillcolor=\"#fff2cc\"");
  if (in->parent && in == in->parent->root) cx_sb_puts(sb, ", penwidth=2");
  cx_sb_puts(sb, "];\n");
}

static void comp_body(gv *g, const cx_comp *c, int indent);

/* A fusion: its cluster with the fused computation and the fusion node itself. */
static void fusion_cluster(gv *g, const cx_instr *in, const cx_comp *f, int indent) {
  cx_sb *sb = g->sb;
  cx_sb_printf(sb, "%*ssubgraph cluster_f%d {\n", indent, "", in->id);
  cx_sb_printf(sb, "%*slabel=\"", indent + 2, "");
  put_escaped(sb, in->name ? in->name : "fusion");
  cx_sb_puts(sb, " (");
  put_escaped(sb, f->name);
  cx_sb_printf(sb, ")\"; style=filled; fillcolor=\"#eef5fb\";\n");
  comp_body(g, f, indent + 2);
  node(g, in, indent + 2);
  if (f->root) cx_sb_printf(sb, "%*sn%d -> n%d;\n", indent + 2, "", f->root->id, in->id);
  cx_sb_printf(sb, "%*s}\n", indent, "");
}

/* Nodes of c (fusions as nested clusters) and the edges between them. */
static void comp_body(gv *g, const cx_comp *c, int indent) {
  cx_sb *sb = g->sb;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *in = c->instrs[i];
    const cx_comp *f = fused_of(g, in, indent);
    if (f) fusion_cluster(g, in, f, indent);
    else node(g, in, indent);
  }
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *in = c->instrs[i];
    const cx_comp *f = fused_of(g, in, indent);
    for (int j = 0; j < in->nops; j++) {
      int dst = in->id;
      if (f && j < f->nparams && f->params && f->params[j]) dst = f->params[j]->id;
      cx_sb_printf(sb, "%*sn%d -> n%d", indent, "", in->ops[j]->id, dst);
      if (in->nops > 1) cx_sb_printf(sb, " [label=\"%d\"]", j);
      cx_sb_puts(sb, ";\n");
    }
  }
}

void cx_dot_graph(cx_sb *sb, const cx_module *m) {
  gv g = {sb, m, NULL};
  int n = m->ncomps;
  g.owner = cx_calloc((size_t)(n ? n : 1), sizeof *g.owner);
  if (!g.owner) {
    sb->oom = 1;
    return;
  }
  /* the first fusion that calls a computation draws it inside its cluster */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      const cx_instr *in = m->comps[i]->instrs[j];
      int k = in->op == CX_OP_FUSION && in->ncalled == 1 ? comp_index(&g, in->called[0]) : -1;
      if (k >= 0 && !g.owner[k]) g.owner[k] = in;
    }
  cx_sb_puts(sb, "digraph \"");
  put_escaped(sb, m->name);
  cx_sb_puts(sb, "\" {\n  compound=true;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                 "  edge [fontsize=8];\n");
  for (int i = 0; i < n; i++) {
    const cx_comp *c = m->comps[i];
    if (g.owner[i]) continue; /* drawn inside its fusion */
    cx_sb_printf(sb, "  subgraph cluster_c%d {\n    label=\"%s", i, c->is_entry ? "ENTRY " : "");
    put_escaped(sb, c->name);
    cx_sb_puts(sb, "\";\n");
    comp_body(&g, c, 4);
    cx_sb_puts(sb, "  }\n");
  }
  /* calls into computations drawn on their own: dashed, to the callee's root */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      const cx_instr *in = m->comps[i]->instrs[j];
      for (int k = 0; k < in->ncalled; k++) {
        int ci = in->called[k] ? comp_index(&g, in->called[k]) : -1;
        if (ci < 0 || g.owner[ci] || !in->called[k]->root) continue;
        cx_sb_printf(sb, "  n%d -> n%d [style=dashed, lhead=cluster_c%d, label=\"%s", in->id,
                     in->called[k]->root->id, ci, cx_op_called_role(in->op, k));
        if (in->op == CX_OP_CONDITIONAL) cx_sb_printf(sb, " %d", k);
        cx_sb_puts(sb, "\"];\n");
      }
    }
  cx_sb_puts(sb, "}\n");
  cx_free(g.owner);
}
