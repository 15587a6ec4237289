/* kernel_shards.c — see kernel_shards.h. */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernel_shards.h"

void cx_shards_init(cx_shards *sh, const cx_cg *main, int max) {
  memset(sh, 0, sizeof *sh);
  sh->main = main;
  sh->max = max < 1 ? 1 : max > CX_MAX_SHARDS ? CX_MAX_SHARDS : max;
}

static cx_shard *new_shard(cx_shards *sh, cx_cg *main) {
  LLVMContextRef c = LLVMContextCreate();
  char name[64];
  snprintf(name, sizeof name, "kernels.%d", sh->n);
  LLVMModuleRef mod = c ? LLVMModuleCreateWithNameInContext(name, c) : NULL;
  if (!mod) {
    if (c) LLVMContextDispose(c);
    cx_cg_fail(main, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  cx_shard *s = &sh->s[sh->n++];
  cx_cg_init(&s->cg, main->ctx, main->m, c, mod, main->target);
  s->mod = mod;
  return s;
}

cx_cg *cx_shards_pick(cx_shards *sh, cx_cg *main) {
  cx_shard *best = NULL;
  for (int i = 0; i < sh->n; i++)
    if (!best || sh->s[i].weight < best->weight) best = &sh->s[i];
  if (!best || (best->weight > 0 && sh->n < sh->max)) best = new_shard(sh, main);
  if (!best) return NULL;
  best->cg.nkernels = main->nkernels;
  best->cg.status = CXLA_OK;
  return &best->cg;
}

static size_t function_size(LLVMValueRef f) {
  size_t n = 0;
  for (LLVMBasicBlockRef b = f ? LLVMGetFirstBasicBlock(f) : NULL; b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

void cx_shards_done(cx_shards *sh, cx_cg *cg, cx_cg *main, const char *kernel_name) {
  main->nkernels = cg->nkernels;
  if (cg->status != CXLA_OK && main->status == CXLA_OK) main->status = cg->status; /* message is in ctx */
  for (int i = 0; i < sh->n; i++) {
    cx_shard *s = &sh->s[i];
    if (&s->cg != cg || !kernel_name) continue;
    char body[96];
    snprintf(body, sizeof body, "%s.body", kernel_name);
    /* +16: a kernel's fixed cost (function, loop setup) in LLVM is more than its size says */
    s->weight += 16 + function_size(LLVMGetNamedFunction(s->mod, kernel_name)) +
                 function_size(LLVMGetNamedFunction(s->mod, body));
  }
}

void cx_shards_free(cx_shards *sh) {
  for (int i = 0; i < sh->n; i++) {
    cx_shard *s = &sh->s[i];
    cx_cg_dispose(&s->cg);
    if (s->mod) {
      LLVMContextRef c = LLVMGetModuleContext(s->mod);
      LLVMDisposeModule(s->mod);
      LLVMContextDispose(c);
      s->mod = NULL;
    }
  }
  sh->n = 0;
}
