/* kernel_reuse.c — fusions that differ only in instruction names share a kernel (see the
 * header for why). */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernel_reuse.h"
#include "text/hlo.h"

char *cx_kreuse_key(const cx_instr *fusion, const cx_kalias *alias) {
  const cx_comp *c = fusion->called[0];
  int n = c->ninstrs;
  /* Each instruction is printed under the name "r<position>" (put back afterwards): names then
   * appear only where the printer writes them (definitions and operands), so two keys are equal
   * exactly when the computations are equal up to a renaming. Called computations keep their
   * names: different names mean no sharing, which costs a compile, never a wrong result. */
  const char **saved = cx_malloc((size_t)(n ? n : 1) * sizeof *saved);
  char *names = cx_malloc((size_t)(n ? n : 1) * 16);
  cx_sb key;
  cx_sb_init(&key);
  if (!saved || !names) {
    cx_free(saved);
    cx_free(names);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    saved[i] = c->instrs[i]->name;
    snprintf(names + 16 * i, 16, "r%d", i);
    c->instrs[i]->name = names + 16 * i;
  }
  /* Raw attributes (metadata, sharding, backend_config: cx_attrs.raw) stay out: they differ
   * between copies of one update, and code generation reads none of them. */
  cx_print_opts o = cx_print_opts_canonical();
  o.metadata = 0;
  /* the pairs too: the same mask with other pairs reads other pointers in place */
  cx_sb_printf(&key, "kind %d alias %llx", (int)fusion->a.fusion_kind, (unsigned long long)alias->mask);
  for (int i = 0; i < 64; i++)
    if (alias->mask >> i & 1) cx_sb_printf(&key, " %d>%d", i, alias->to[i]);
  cx_sb_puts(&key, "\n");
  for (int i = 0; i < n; i++) {
    cx_print_instr(&key, c->instrs[i], &o);
    cx_sb_puts(&key, c->instrs[i] == c->root ? " root\n" : "\n");
  }
  for (int i = 0; i < n; i++) c->instrs[i]->name = saved[i];
  cx_free(saved);
  cx_free(names);
  if (key.oom) {
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
