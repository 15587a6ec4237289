/* collectives_plan.c — the sequencer's side of the collectives: a plan per instruction (its
 * operands' sizes and the dimension it cuts along, the reducer recognised as one add) and one
 * call of a run-time routine of rt/collectives.c. A reducer the emitter cannot compile sends
 * the instruction to the interpreter, which takes part in the run just the same. */
#include <stdio.h>
#include "backend/cpu/collectives.h"

static const int8_t k_kind[CX_OP_COUNT] = {
  [CX_OP_ALL_REDUCE] = COLL_ALL_REDUCE + 1, [CX_OP_REDUCE_SCATTER] = COLL_REDUCE_SCATTER + 1,
  [CX_OP_ALL_GATHER] = COLL_ALL_GATHER + 1, [CX_OP_ALL_TO_ALL] = COLL_ALL_TO_ALL + 1,
  [CX_OP_COLLECTIVE_PERMUTE] = COLL_PERMUTE + 1, [CX_OP_COLLECTIVE_BROADCAST] = COLL_BROADCAST + 1,
};

/* to_apply as one add of its two parameters, on a type whose add is a plain loop that rounds
 * as the interpreter does (IEEE f32/f64; integers wrap). */
static int fast_kind(const cx_instr *in) {
  const cx_comp *c = in->ncalled == 1 ? in->called[0] : NULL;
  const cx_instr *r = c ? c->root : NULL;
  if (!r || r->op != CX_OP_ADD || r->nops != 2 || r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER ||
      r->ops[0]->a.index == r->ops[1]->a.index)
    return COLL_CALL;
  switch (r->shape.type) {
  case CXLA_F32: return COLL_ADD_F32;
  case CXLA_F64: return COLL_ADD_F64;
  case CXLA_S32: case CXLA_U32: return COLL_ADD_S32;
  case CXLA_S64: case CXLA_U64: return COLL_ADD_S64;
  default: return COLL_CALL;
  }
}

static int plan(const cx_instr *in, const char *file, coll_desc *d) {
  d->in = in;
  d->file = file;
  d->kind = k_kind[in->op] - 1;
  d->nops = in->nops;
  d->d = in->a.dims.n == 1 ? (int)in->a.dims.v[0] : -1;
  d->fast = d->kind == COLL_ALL_REDUCE || d->kind == COLL_REDUCE_SCATTER ? fast_kind(in) : COLL_CALL;
  if (in->nops > COLL_MAX_OPS) return 0;
  for (int i = 0; i < in->nops; i++) {
    const cx_shape *x = &in->ops[i]->shape;
    if (x->type == CXLA_TUPLE || (d->d >= 0 && d->d >= x->rank)) return 0;
    d->elems[i] = cx_shape_elems(x);
    d->es[i] = cxla_type_size(x->type);
    d->outer[i] = 1;
    d->dim[i] = d->d >= 0 ? x->dims[d->d] : 1;
    d->inner[i] = (int64_t)d->es[i];
    for (int k = 0; d->d >= 0 && k < x->rank; k++) {
      if (k < d->d) d->outer[i] *= x->dims[k];
      if (k > d->d) d->inner[i] *= x->dims[k];
    }
  }
  return 1;
}

cxla_status cx_seq_collective(cx_seq *s, cx_instr *in) {
  const char *why = "a collective of more than 64 operands";
  coll_desc *d = cx_arena_alloc(&s->g->m->arena, sizeof *d);
  if (!d) return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  int reduces = in->op == CX_OP_ALL_REDUCE || in->op == CX_OP_REDUCE_SCATTER;
  if (plan(in, s->g->m->filename, d) &&
      cx_seq_native_call(s, in, reduces ? "cx_rt_collective_reduce" : "cx_rt_collective", d, reduces, &why))
    return s->g->status;
  return cx_seq_fallback(s, in, why);
}

cxla_status cx_seq_device_id(cx_seq *s, cx_instr *in) {
  int o = cx_seq_leaf_slot(s, in, 0);
  if (o < 0) return s->g->status;
  cx_cg *g = s->g;
  LLVMTypeRef ps[3] = {g->t_ptr, g->t_i32, g->t_ptr};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 3, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, "cx_rt_device_id");
  if (!f) f = LLVMAddFunction(g->mod, "cx_rt_device_id", ft);
  LLVMValueRef args[3] = {s->rt, LLVMConstInt(g->t_i32, in->op == CX_OP_PARTITION_ID, 0), cx_seq_slot(s, o)};
  LLVMBuildCall2(s->b, ft, f, args, 3, "");
  return g->status;
}
