/* kernel_reuse.c — fusions that differ only in instruction names share a kernel (see the
 * header for why). */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernel_reuse.h"
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

char *cx_kreuse_key(const cx_instr *fusion, const cx_kalias *alias) {
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
  /* the pairs too: the same mask with other pairs reads other pointers in place */
  cx_sb_printf(&key, "kind %d alias %llx", (int)fusion->a.fusion_kind, (unsigned long long)alias->mask);
  for (int i = 0; i < 64; i++)
    if (alias->mask >> i & 1) cx_sb_printf(&key, " %d>%d", i, alias->to[i]);
  cx_sb_puts(&key, "\n");
  ok = ok && print_renamed(&key, fusion->called[0], &o);
  free_callees(&cs);
  if (!ok || key.oom) {
    cx_sb_free(&key);
    return NULL;
  }
  return cx_sb_take(&key);
}

const cx_kernel *cx_kreuse_find(const cx_kreuse *r, const char *key) {
  for (int64_t i = 0; i < r->n; i++)
    if (!strcmp(r->e[i].key, key)) return &r->e[i].k;
  return NULL;
}

int cx_kreuse_add(cx_kreuse *r, char *key, const cx_kernel *k) {
  if (!cx_vec_reserve((void **)&r->e, &r->cap, r->n + 1, sizeof *r->e)) {
    cx_free(key);
    return 0;
  }
  r->e[r->n].key = key;
  r->e[r->n].k = *k;
  r->n++;
  return 1;
}

void cx_kreuse_free(cx_kreuse *r) {
  for (int64_t i = 0; i < r->n; i++) cx_free(r->e[i].key);
  cx_free(r->e);
  memset(r, 0, sizeof *r);
}
