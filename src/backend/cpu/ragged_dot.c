/* ragged_dot.c — ragged-dot on the cpu, the sequencer's side: one call of the run-time
 * routine cx_rt_ragged_dot (rt/ragged_dot.c) per ragged-dot in the canonical form
 * passes/ragged_dot_lowering.c gives it, with its sizes from the operand shapes. */
#include <stdio.h>
#include "backend/cpu/sequencer_int.h"

/* ---- the sequencer's side: sizes from the canonical operand shapes ---- */
cxla_status cx_seq_ragged_dot(cx_seq *s, cx_instr *in) {
  const cx_shape *l = &in->ops[0]->shape, *r = &in->ops[1]->shape, *gs = &in->ops[2]->shape;
  int contracting = in->shape.rank == 4;
  if (l->rank != 5 || gs->rank != 3 || gs->type != CXLA_S64 || r->rank != (contracting ? 5 : 4))
    return cx_seq_fallback(s, in, "ragged-dot not in the canonical form (passes/ragged_dot_lowering.c)");
  int64_t sizes[7] = {l->dims[0], l->dims[1], l->dims[2], l->dims[3], l->dims[4], r->dims[r->rank - 1], gs->dims[2]};
  int a = cx_seq_leaf_slot(s, in->ops[0], 0), b = cx_seq_leaf_slot(s, in->ops[1], 0);
  int g = cx_seq_leaf_slot(s, in->ops[2], 0), o = cx_seq_leaf_slot(s, in, 0);
  if (a < 0 || b < 0 || g < 0 || o < 0) return s->g->status;
  char name[256];
  snprintf(name, sizeof name, "%s [ragged-dot %lld groups]", in->name ? in->name : "ragged-dot", (long long)sizes[6]);
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *cg = s->g;
  LLVMTypeRef P = cg->t_ptr, I32 = cg->t_i32, I64 = cg->t_i64;
  /* the sizes as a constant array in the module */
  LLVMValueRef sv[7];
  for (int i = 0; i < 7; i++) sv[i] = cx_cg_i64(cg, sizes[i]);
  LLVMTypeRef at = LLVMArrayType(I64, 7);
  LLVMValueRef arr = LLVMAddGlobal(cg->mod, at, "ragged_dot_sizes");
  LLVMSetInitializer(arr, LLVMConstArray(I64, sv, 7));
  LLVMSetGlobalConstant(arr, 1);
  LLVMSetLinkage(arr, LLVMPrivateLinkage);
  LLVMTypeRef ps[9] = {P, I32, I32, P, P, P, P, P, I32};
  LLVMTypeRef ft = LLVMFunctionType(cg->t_void, ps, 9, 0);
  LLVMValueRef f = LLVMGetNamedFunction(cg->mod, "cx_rt_ragged_dot");
  if (!f) f = LLVMAddFunction(cg->mod, "cx_rt_ragged_dot", ft);
  LLVMValueRef args[9] = {s->rt, LLVMConstInt(I32, (unsigned long long)in->shape.type, 0), LLVMConstInt(I32, contracting, 0),
                          arr, cx_seq_slot(s, a), cx_seq_slot(s, b), cx_seq_slot(s, g), cx_seq_slot(s, o),
                          LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 9, "");
  return s->g->status;
}
