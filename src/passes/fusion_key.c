/* fusion_key.c — the text that is equal for two fusions exactly when they compute the same
 * thing (fusion_key.h). */
#include <stdio.h>
#include <string.h>
#include "passes/fusion_key.h"
#include "text/hlo.h"

/* Prints c's instructions under the names "r<position>" (put back afterwards): names then
 * appear only where the printer writes them (definitions and operands), so two texts are equal
 * exactly when the computations are equal up to a renaming. 0 when out of memory. */
static int print_renamed(cx_sb *sb, const cx_comp *c, const cx_print_opts *o) {
  int n = c->ninstrs;
  const char **saved = cx_malloc((size_t)(n ? n : 1) * sizeof *saved);
  char *names = cx_malloc((size_t)(n ? n : 1) * 16);
  if (!saved || !names) {
    cx_free(saved);
    cx_free(names);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    saved[i] = c->instrs[i]->name;
    snprintf(names + 16 * i, 16, "r%d", i);
    c->instrs[i]->name = names + 16 * i;
  }
  for (int i = 0; i < n; i++) {
    cx_print_instr(sb, c->instrs[i], o);
    cx_sb_puts(sb, c->instrs[i] == c->root ? " root\n" : "\n");
  }
  for (int i = 0; i < n; i++) c->instrs[i]->name = saved[i];
  cx_free(saved);
  cx_free(names);
  return 1;
}

/* The computations the fused body calls (a reduce's reducer), each once. */
typedef struct callees {
  cx_comp **c;
  const char **name;
  char **text;
  int n;
} callees;

static int collect_callees(const cx_comp *body, callees *cs) {
  int cap = 0;
  for (int i = 0; i < body->ninstrs; i++) cap += body->instrs[i]->ncalled;
  memset(cs, 0, sizeof *cs);
  if (!cap) return 1;
  cs->c = cx_calloc((size_t)cap, sizeof *cs->c);
  cs->name = cx_calloc((size_t)cap, sizeof *cs->name);
  cs->text = cx_calloc((size_t)cap, sizeof *cs->text);
  if (!cs->c || !cs->name || !cs->text) return 0;
  for (int i = 0; i < body->ninstrs; i++)
    for (int k = 0; k < body->instrs[i]->ncalled; k++) {
      cx_comp *y = body->instrs[i]->called[k];
      int seen = !y;
      for (int q = 0; q < cs->n && !seen; q++) seen = cs->c[q] == y;
      if (!seen) cs->c[cs->n++] = y;
    }
  return 1;
}

static void free_callees(callees *cs) {
  for (int i = 0; i < cs->n; i++) {
    if (cs->name[i]) cs->c[i]->name = cs->name[i];
    cx_free(cs->text[i]);
  }
  cx_free(cs->c);
  cx_free(cs->name);
  cx_free(cs->text);
}

char *cx_fusion_key(const cx_instr *fusion, const char *extra) {
  /* Raw attributes (metadata, sharding, backend_config: cx_attrs.raw) stay out: they differ
   * between copies of one update, and code generation reads none of them. */
  cx_print_opts o = cx_print_opts_canonical();
  o.metadata = 0;
  cx_sb key;
  cx_sb_init(&key);
  /* A called computation (a reducer) goes in by its text, not its name: jax writes one
   * reducer per reduce (region_12.87, region_40.311, all the same add), which kept every
   * layer's layer norm and softmax from sharing a kernel. A reducer that itself calls one
   * keeps that name: a different name costs a compile, never a wrong result. */
  callees cs;
  int ok = collect_callees(fusion->called[0], &cs);
  for (int i = 0; ok && i < cs.n; i++) {
    cx_sb t;
    cx_sb_init(&t);
    cx_sb_putc(&t, '{');
    ok = print_renamed(&t, cs.c[i], &o);
    cx_sb_putc(&t, '}');
    ok = ok && !t.oom;
    cs.text[i] = ok ? cx_sb_take(&t) : NULL;
    if (!ok) cx_sb_free(&t);
  }
  for (int i = 0; ok && i < cs.n; i++) {
    cs.name[i] = cs.c[i]->name;
    cs.c[i]->name = cs.text[i];
  }
  cx_sb_printf(&key, "kind %d %s\n", (int)fusion->a.fusion_kind, extra ? extra : "");
  ok = ok && print_renamed(&key, fusion->called[0], &o);
  free_callees(&cs);
  if (!ok || key.oom) {
    cx_sb_free(&key);
    return NULL;
  }
  return cx_sb_take(&key);
}
