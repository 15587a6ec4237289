/* use_counts.c — see use_counts.h. */
#include <stdint.h>
#include "passes/use_counts.h"

void cx_pass_count_uses(cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < c->ninstrs; i++)
    for (int j = 0; j < c->instrs[i]->nops; j++) {
      cx_instr *o = c->instrs[i]->ops[j];
      if (o->parent == c) o->aux = (void *)((uintptr_t)o->aux + 1);
    }
  /* the caller reads the root too: a root read once inside c counts 2 */
  if (c->root) c->root->aux = (void *)((uintptr_t)c->root->aux + 1);
}
