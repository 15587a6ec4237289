/* use_counts.c — how many times each instruction of a computation is read, for the rewrites
 * that may change a value only where nothing else reads it. */
#include <stdint.h>
#include "passes/pass.h"

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
