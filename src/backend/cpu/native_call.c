/* native_call.c — the sequencer's side of sort, scatter and select-and-scatter: compile the
 * instruction's called computations into scalar functions and emit one routine call with the
 * plan made at compile time (sort_scatter.h). */
#include <stdio.h>
#include "backend/cpu/sort_scatter.h"

/* A called computation as a scalar function in a kernel shard (declared in the sequencer's
 * module), or in that module without shards. Routines call it through a pointer, so it gains
 * nothing from sitting beside the sequencer, whose module then holds calls only and takes
 * LLVM's fast code generation (backend_cpu.c, make_jobs). Returns 0 with *why set when the
 * computation cannot be a scalar function. */
static int scalar_fn(cx_seq *s, const cx_comp *c, LLVMValueRef *fn, const char **why) {
  cx_cg *g = s->g, *kg = s->shards ? cx_shards_pick(s->shards, g) : g;
  if (!kg) return *why = "out of memory", 0;
  LLVMValueRef f = NULL;
  cxla_status st = cx_emit_scalar_fn(kg, c, &f, why);
  if (kg == g) return *fn = f, st == CXLA_OK;
  size_t len = 0;
  const char *name = st == CXLA_OK ? LLVMGetValueName2(f, &len) : NULL;
  cx_shards_done(s->shards, kg, g, name);
  if (st != CXLA_OK) return 0;
  LLVMTypeRef pt = g->t_ptr;
  *fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->t_void, &pt, 1, 0));
  return 1;
}

int cx_seq_native_call(cx_seq *s, cx_instr *in, const char *routine, const void *desc, int nfns, const char **why) {
  cx_cg *g = s->g;
  LLVMValueRef fns[2] = {NULL, NULL};
  if (nfns > 2 || in->ncalled < nfns) return *why = "malformed called computations", 0;
  for (int i = 0; i < nfns; i++)
    if (!scalar_fn(s, in->called[i], &fns[i], why)) return 0;
  int no = s->bufs->nleaves[in->id], n = no;
  for (int j = 0; j < in->nops; j++) n += s->bufs->nleaves[in->ops[j]->id];
  int *slots = cx_malloc(sizeof *slots * (size_t)n), k = 0;
  if (!slots) {
    cx_cg_fail(g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return 1;
  }
  for (int l = 0; l < no; l++) slots[k++] = cx_seq_leaf_slot(s, in, l);
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < s->bufs->nleaves[in->ops[j]->id]; l++) slots[k++] = cx_seq_leaf_slot(s, in->ops[j], l);
  for (int i = 0; i < k; i++)
    if (slots[i] < 0) {
      cx_free(slots);
      return 1; /* error recorded */
    }
  char name[256];
  snprintf(name, sizeof name, "%s [%s]", in->name ? in->name : cx_op_name(in->op), cx_op_name(in->op));
  int32_t id = cx_seq_name(s, name);
  LLVMValueRef args = id >= 0 ? cx_seq_args(s, slots, n) : NULL;
  cx_free(slots);
  if (id < 0) return 1;
  cx_kernel_origin(in, &s->out->origins[id]);
  LLVMTypeRef P = g->t_ptr, I32 = g->t_i32;
  LLVMTypeRef ps[6] = {P, P, P, P, P, I32};
  int np = 4 + nfns;
  ps[np - 1] = I32;
  ps[np - 2] = P;
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, (unsigned)np, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, routine);
  if (!f) f = LLVMAddFunction(g->mod, routine, ft);
  LLVMValueRef a[6];
  a[0] = s->rt;
  a[1] = cx_seq_addr(s, desc);
  for (int i = 0; i < nfns; i++) a[2 + i] = fns[i];
  a[2 + nfns] = args;
  a[3 + nfns] = LLVMConstInt(I32, (unsigned long long)id, 1);
  LLVMBuildCall2(s->b, ft, f, a, (unsigned)np, "");
  return 1;
}
