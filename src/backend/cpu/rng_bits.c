/* rng_bits.c — random numbers on the cpu, the sequencer's side: one call of a run-time
 * routine of rt/rng.c per rng-bit-generator (cx_rt_rng_bits) and per rng (cx_rt_rng). */
#include <stdio.h>
#include "backend/cpu/sequencer_int.h"
#include "ir/rng_dist.h"

/* ---- the sequencer's side: one cx_rt_rng_bits call per instruction, with XLA's split of a
 * narrow Threefry result worked out here ---- */
cxla_status cx_seq_rng_bit_generator(cx_seq *s, cx_instr *in) {
  const cx_shape *ds = &in->shape.tuple[1];
  int64_t outer = 1, d = 1, inner = 1;
  if (ds->rank > 0) {
    int sd = -1;
    for (int k = 0; k < ds->rank && sd < 0; k++)
      if (ds->dims[k] % 2 == 0) sd = k;
    if (sd < 0) { /* no even one: the first largest */
      sd = 0;
      for (int k = 1; k < ds->rank; k++)
        if (ds->dims[k] > ds->dims[sd]) sd = k;
    }
    for (int k = 0; k < ds->rank; k++) {
      if (k < sd) outer *= ds->dims[k];
      else if (k > sd) inner *= ds->dims[k];
    }
    d = ds->dims[sd];
  }
  int st = cx_seq_leaf_slot(s, in->ops[0], 0), ns = cx_seq_leaf_slot(s, in, 0), bits = cx_seq_leaf_slot(s, in, 1);
  if (st < 0 || ns < 0 || bits < 0) return s->g->status;
  char name[256];
  snprintf(name, sizeof name, "%s [rng-bit-generator %s]", in->name ? in->name : "rng-bit-generator",
           in->a.rng_algorithm == CX_RNG_THREE_FRY ? "threefry" : "philox");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  LLVMTypeRef P = g->t_ptr, I32 = g->t_i32, I64 = g->t_i64;
  LLVMTypeRef ps[11] = {P, I32, I32, I64, I64, I64, P, I64, P, P, I32};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 11, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, "cx_rt_rng_bits");
  if (!f) f = LLVMAddFunction(g->mod, "cx_rt_rng_bits", ft);
  LLVMValueRef args[11] = {s->rt, LLVMConstInt(I32, (unsigned long long)in->a.rng_algorithm, 0),
                           LLVMConstInt(I32, cxla_type_size(ds->type), 0), cx_cg_i64(g, outer), cx_cg_i64(g, d),
                           cx_cg_i64(g, inner), cx_seq_slot(s, st), cx_cg_i64(g, in->ops[0]->shape.dims[0]),
                           cx_seq_slot(s, ns), cx_seq_slot(s, bits), LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 11, "");
  return s->g->status;
}
/* The run counter lives in cx_entry's frame: 0 when an execution starts, one more each time
 * the instruction runs (a while loop's trips). */
cxla_status cx_seq_rng(cx_seq *s, cx_instr *in) {
  int a = cx_seq_leaf_slot(s, in->ops[0], 0), b = cx_seq_leaf_slot(s, in->ops[1], 0), o = cx_seq_leaf_slot(s, in, 0);
  if (a < 0 || b < 0 || o < 0) return s->g->status;
  char name[256];
  snprintf(name, sizeof name, "%s [rng %s]", in->name ? in->name : "rng",
           in->a.rng_distribution == CX_RNG_NORMAL ? "normal" : "uniform");
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  uint64_t key = cx_rng_key(in->name); /* as interp/rng.c */
  LLVMBuilderRef eb = LLVMCreateBuilderInContext(g->llctx);
  LLVMPositionBuilderBefore(eb, s->entry_term);
  LLVMValueRef runs = LLVMBuildAlloca(eb, g->t_i64, "rng.runs");
  LLVMBuildStore(eb, cx_cg_i64(g, 0), runs);
  LLVMDisposeBuilder(eb);
  LLVMTypeRef P = g->t_ptr, I32 = g->t_i32, I64 = g->t_i64;
  LLVMTypeRef ps[10] = {P, I32, I32, I64, P, P, I64, P, P, I32};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 10, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, "cx_rt_rng");
  if (!f) f = LLVMAddFunction(g->mod, "cx_rt_rng", ft);
  LLVMValueRef args[10] = {s->rt, LLVMConstInt(I32, (unsigned long long)in->a.rng_distribution, 0),
                           LLVMConstInt(I32, (unsigned long long)in->shape.type, 0), cx_cg_i64(g, cx_shape_elems(&in->shape)),
                           cx_seq_slot(s, a), cx_seq_slot(s, b), LLVMConstInt(I64, key, 0), runs, cx_seq_slot(s, o),
                           LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 10, "");
  return s->g->status;
}
