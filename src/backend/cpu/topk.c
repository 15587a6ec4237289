/* topk.c — top-k on the cpu, the sequencer's side: one call of the run-time routine
 * cx_rt_topk (rt/topk.c) per topk instruction and per XLA:CPU "TopK" custom-call. */
#include <stdio.h>
#include "backend/cpu/sequencer_int.h"

/* ---- the sequencer's side: one cx_rt_topk call per topk instruction, over the rows of the
 * operand's last dimension, writing the result's two leaves ---- */
static cxla_status emit(cx_seq *s, cx_instr *in, int64_t k, int largest) {
  const cx_shape *xs = &in->ops[0]->shape;
  int64_t n = xs->rank ? xs->dims[xs->rank - 1] : 0;
  int64_t rows = n ? cx_shape_elems(xs) / n : 0;
  int x = cx_seq_leaf_slot(s, in->ops[0], 0), v = cx_seq_leaf_slot(s, in, 0), i = cx_seq_leaf_slot(s, in, 1);
  if (x < 0 || v < 0 || i < 0) return s->g->status;
  char name[256];
  snprintf(name, sizeof name, "%s [topk %lldx%lld k=%lld]", in->name ? in->name : "topk", (long long)rows,
           (long long)n, (long long)k);
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  LLVMTypeRef P = g->t_ptr, I32 = g->t_i32, I64 = g->t_i64;
  LLVMTypeRef ps[10] = {P, I32, I32, I64, I64, I64, P, P, P, I32};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 10, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, "cx_rt_topk");
  if (!f) f = LLVMAddFunction(g->mod, "cx_rt_topk", ft);
  LLVMValueRef args[10] = {s->rt, LLVMConstInt(I32, (unsigned long long)xs->type, 0),
                           LLVMConstInt(I32, largest != 0, 0), cx_cg_i64(g, rows), cx_cg_i64(g, n),
                           cx_cg_i64(g, k), cx_seq_slot(s, x), cx_seq_slot(s, v), cx_seq_slot(s, i),
                           LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 10, "");
  return s->g->status;
}

cxla_status cx_seq_topk(cx_seq *s, cx_instr *in) { return emit(s, in, in->a.index, in->a.largest); }

/* XLA:CPU's "TopK" custom-call: the largest, k from the result's values (verified). */
cxla_status cx_seq_topk_custom_call(cx_seq *s, cx_instr *in) {
  const cx_shape *v = &in->shape.tuple[0];
  return emit(s, in, v->dims[v->rank - 1], 1);
}
