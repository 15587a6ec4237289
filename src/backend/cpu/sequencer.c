/* sequencer.c — the one LLVM function per executable that runs the schedule:
 *   void cx_entry(i8 **params, i8 **outputs, i8 *arena, cx_rt *rt)
 * params holds the leaves of every ENTRY parameter in order (tuples flattened), outputs the
 * ENTRY result leaves, arena the per-execution temporaries (buffers.h). Each step is a kernel
 * call through cx_rt_parallel_for, a library call, a copy, LLVM control flow for while and
 * conditional, or cx_rt_interp_op for what nothing compiles yet (counted and named, never
 * silently wrong). The sequencer uses its own builder; the emitter owns g->b. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/sequencer_int.h"
#include "backend/cpu/collectives.h"
#include "backend/cpu/sort_scatter.h"
#include "ir/clone.h"
#include "ir/fusion_plan.h"
#include "passes/fusion_key.h"

void cx_seq_out_free(cx_seq_out *o) {
  for (int i = 0; i < o->nnames; i++) cx_free(o->names[i]);
  cx_free(o->names);
  cx_free(o->origins);
  cx_free(o->fallbacks);
  cx_free(o->addrs);
  memset(o, 0, sizeof *o);
}

LLVMValueRef cx_seq_addr(cx_seq *s, const void *p) {
  cx_seq_out *o = s->out;
  if (!p) return LLVMConstNull(s->g->t_ptr); /* an empty constant's: never read */
  if (!cx_vec_reserve((void **)&o->addrs, &o->addrs_cap, o->naddrs + 1, sizeof *o->addrs)) {
    cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return LLVMConstNull(s->g->t_ptr);
  }
  char name[32];
  snprintf(name, sizeof name, CX_SEQ_ADDR_FMT, o->naddrs);
  o->addrs[o->naddrs++] = p;
  /* declared, never defined here: the JIT defines it at link time (an absolute symbol), so
   * the object code holds no address of this process and can be loaded by another one */
  return LLVMAddGlobal(s->g->mod, s->g->t_i8, name);
}

int32_t cx_seq_name(cx_seq *s, const char *name) {
  cx_seq_out *o = s->out;
  char *d = cx_strdup(name);
  if (!d || !cx_vec_reserve((void **)&o->names, &o->names_cap, o->nnames + 1, sizeof *o->names) ||
      !cx_vec_reserve((void **)&o->origins, &o->origins_cap, o->nnames + 1, sizeof *o->origins)) {
    cx_free(d);
    cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return -1;
  }
  o->names[o->nnames] = d;
  memset(&o->origins[o->nnames], 0, sizeof *o->origins);
  return o->nnames++;
}

/* "fusion.3 [exponential,subtract,reduce]": the ops a kernel computes, for traces. */
static int32_t name_fusion(cx_seq *s, const cx_instr *in, const char *prefix) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s%s", prefix, in->name ? in->name : cx_op_name(in->op));
  if (in->op == CX_OP_FUSION && in->ncalled == 1) {
    const cx_comp *fc = in->called[0];
    int n = 0;
    cx_op last = CX_OP_COUNT;
    for (int i = 0; i < fc->ninstrs && sb.len < 160; i++) {
      cx_op op = fc->instrs[i]->op;
      if (op == CX_OP_PARAMETER || op == CX_OP_CONSTANT || op == CX_OP_TUPLE || op == last) continue;
      cx_sb_printf(&sb, "%s%s", n++ ? "," : " [", cx_op_name(op));
      last = op;
    }
    if (n) cx_sb_putc(&sb, ']');
  } else if (in->op != CX_OP_FUSION) {
    cx_sb_printf(&sb, " [%s]", cx_op_name(in->op));
  }
  if (sb.oom) {
    cx_sb_free(&sb);
    cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return -1;
  }
  int32_t id = cx_seq_name(s, sb.buf ? sb.buf : "?");
  cx_sb_free(&sb);
  if (id >= 0) cx_kernel_origin(in, &s->out->origins[id]); /* the jax line it came from */
  return id;
}

/* ---- slots and arguments ---- */

LLVMValueRef cx_seq_slot(cx_seq *s, int slot) {
  const cx_slot *sl = &s->bufs->slots[slot];
  if (sl->kind != CX_SLOT_TEMP) return s->slot_ptr[slot];
  if (!sl->offset) return s->arena;
  LLVMValueRef off = cx_cg_i64(s->g, sl->offset);
  return LLVMBuildGEP2(s->b, s->g->t_i8, s->arena, &off, 1, "");
}

int cx_seq_leaf_slot(cx_seq *s, const cx_instr *in, int leaf) {
  int slot = cx_buffers_slot(s->bufs, in, leaf);
  if (slot < 0)
    cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "sequencer: %s (%s) leaf %d has no buffer", in->name ? in->name : "?",
               cx_op_name(in->op), leaf);
  return slot;
}

LLVMValueRef cx_seq_args(cx_seq *s, const int *slots, int n) { return cx_seq_args_room(s, slots, n, 0); }

LLVMValueRef cx_seq_args_room(cx_seq *s, const int *slots, int n, int room) {
  LLVMTypeRef at = LLVMArrayType(s->g->t_ptr, (unsigned)(n + room ? n + room : 1));
  LLVMBuilderRef eb = LLVMCreateBuilderInContext(s->g->llctx);
  LLVMPositionBuilderBefore(eb, s->entry_term);
  LLVMValueRef arr = LLVMBuildAlloca(eb, at, "args");
  LLVMSetAlignment(arr, 16);
  LLVMDisposeBuilder(eb);
  for (int i = 0; i < n; i++) {
    LLVMValueRef idx[2] = {cx_cg_i64(s->g, 0), cx_cg_i64(s->g, i)};
    LLVMBuildStore(s->b, cx_seq_slot(s, slots[i]), LLVMBuildGEP2(s->b, at, arr, idx, 2, ""));
  }
  return arr;
}

/* Slots of `in`'s result leaves followed by its operands' leaves (kernel and fallback ABI). */
static int *gather_slots(cx_seq *s, const cx_instr *in, int *nout, int *n) {
  int no = s->bufs->nleaves[in->id], total = no;
  for (int j = 0; j < in->nops; j++) total += s->bufs->nleaves[in->ops[j]->id];
  int *v = cx_malloc(sizeof *v * (size_t)(total ? total : 1));
  if (!v) {
    cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  int k = 0;
  for (int l = 0; l < no; l++) v[k++] = cx_seq_leaf_slot(s, in, l);
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < s->bufs->nleaves[in->ops[j]->id]; l++) v[k++] = cx_seq_leaf_slot(s, in->ops[j], l);
  for (int i = 0; i < k; i++)
    if (v[i] < 0) {
      cx_free(v);
      return NULL;
    }
  *nout = no;
  *n = k;
  return v;
}

LLVMValueRef cx_seq_failed(cx_seq *s) {
  LLVMValueRef off = cx_cg_i64(s->g, (int64_t)offsetof(cx_rt, status));
  LLVMValueRef p = LLVMBuildGEP2(s->b, s->g->t_i8, s->rt, &off, 1, "");
  LLVMValueRef st = LLVMBuildLoad2(s->b, s->g->t_i32, p, "status");
  return LLVMBuildICmp(s->b, LLVMIntNE, st, LLVMConstInt(s->g->t_i32, 0, 0), "failed");
}

void cx_seq_trace_begin(cx_seq *s, int32_t id) {
  LLVMValueRef a[2] = {s->rt, LLVMConstInt(s->g->t_i32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, s->t_trace, s->f_tbegin, a, 2, "");
}

void cx_seq_trace_end(cx_seq *s, int32_t id) {
  LLVMValueRef a[2] = {s->rt, LLVMConstInt(s->g->t_i32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, s->t_trace, s->f_tend, a, 2, "");
}

/* ---- fallback ---- */

/* A computation whose only work is `in` on parameters, for the interpreter. */
static cx_comp *wrapper_comp(cx_seq *s, const cx_instr *in) {
  cx_module *m = s->g->m;
  const char *name = cx_module_unique_name(m, "fallback");
  cx_comp *w = name ? cx_comp_new(m, name) : NULL;
  cx_instr **ps = cx_calloc((size_t)in->nops + 1, sizeof *ps);
  cx_comp *r = NULL;
  if (w && ps) {
    int ok = 1;
    for (int j = 0; j < in->nops && ok; j++) {
      ps[j] = cx_instr_new(w, CX_OP_PARAMETER, &in->ops[j]->shape, 0, NULL);
      const char *pn = ps[j] ? cx_module_unique_name(m, "param") : NULL;
      ok = pn != NULL;
      if (ok) {
        ps[j]->a.index = j;
        ps[j]->name = pn;
      }
    }
    cx_instr *x = ok ? cx_instr_clone(w, in, ps) : NULL;
    if (x) {
      w->root = x;
      if (cx_comp_index_params(w) && cx_module_add_comp(m, w)) r = w;
    }
  }
  cx_free(ps);
  if (!r) cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  return r;
}

cxla_status cx_seq_fallback(cx_seq *s, const cx_instr *in, const char *why) {
  cx_seq_out *o = s->out;
  cx_comp *comp = in->op == CX_OP_FUSION && in->ncalled == 1 ? in->called[0] : wrapper_comp(s, in);
  if (!comp) return s->g->status;
  if (!cx_comp_index_params(comp) || comp->nparams != in->nops)
    return cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "fallback for %s: computation %s does not take its %d operands",
                      in->name ? in->name : "?", comp->name, in->nops);
  int nout = 0, n = 0;
  int *slots = gather_slots(s, in, &nout, &n);
  if (!slots) return s->g->status;
  if (!cx_vec_reserve((void **)&o->fallbacks, &o->fallbacks_cap, o->nfallbacks + 1, sizeof *o->fallbacks)) {
    cx_free(slots);
    return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  }
  int index = o->nfallbacks++;
  /* the emitter's reasons live in a thread-local buffer: keep a copy */
  const char *keep = cx_arena_strdup(&s->g->m->arena, why ? why : "not compiled");
  if (!keep) {
    cx_free(slots);
    return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  }
  o->fallbacks[index] = (cx_fallback_op){in, comp, nout, keep};
  int32_t id = name_fusion(s, in, "interp: ");
  LLVMValueRef args = cx_seq_args(s, slots, n);
  cx_free(slots);
  if (id < 0) return s->g->status;
  LLVMValueRef a[4] = {s->rt, LLVMConstInt(s->g->t_i32, (unsigned long long)index, 0), args,
                       LLVMConstInt(s->g->t_i32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, s->t_interp, s->f_interp, a, 4, "");
  return s->g->status;
}

/* ---- kernels ---- */

/* Arguments that share memory with an output (in-place fusions, buffers.c) must not be
 * noalias in the kernel: bit i of the mask for args[i]. Operands sharing memory with each
 * other are only read, which noalias allows. */
static cxla_status call_kernel(cx_seq *s, const cx_instr *in) {
  int nout = 0, n = 0;
  int *slots = gather_slots(s, in, &nout, &n);
  if (!slots) return s->g->status;
  cx_kernel k;
  memset(&k, 0, sizeof k);
  cx_kalias alias;
  cx_kalias_of_slots(&alias, slots, nout, n);
  /* Outside loops, a fusion the same as an earlier one but for names calls that one's kernel
   * (codegen/kernel_reuse.h); inside loops each kernel stays where LLVM may inline it. */
  char extra[CX_KALIAS_TEXT], *key = NULL;
  if (!s->loop_depth) {
    cx_kalias_describe(&alias, extra);
    if (!(key = cx_fusion_key(in, extra))) {
      cx_free(slots);
      return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    }
  }
  const cx_kreuse_entry *same = key ? cx_kreuse_find(&s->reuse, key) : NULL;
  cxla_status st = CXLA_OK;
  if (same) {
    k = same->k; /* declared in this module when it was emitted (here or in a shard) */
    k.fn = LLVMGetNamedFunction(s->g->mod, k.name);
    cx_free(key);
    key = NULL;
    s->out->nreused++;
    if (!k.fn) st = cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "sequencer: kernel %s is not declared", k.name);
  } else {
    /* Kernels called inside loops stay in this module, where LLVM may inline them; the others
     * go to the shards that compile in parallel. */
    cx_cg *kg = s->shards && !s->loop_depth ? cx_shards_pick(s->shards, s->g) : s->g;
    st = !kg ? s->g->status
         : alias.mask ? cx_emit_kernel_ex(kg, (cx_instr *)in, &alias, &k)
                     : cx_emit_kernel(kg, (cx_instr *)in, &k);
    if (kg && kg != s->g) {
      cx_shards_done(s->shards, kg, s->g, st == CXLA_OK ? k.name : NULL);
      if (st == CXLA_OK) k.fn = LLVMAddFunction(s->g->mod, k.name, s->t_kernel); /* defined in the shard */
    }
    if (st == CXLA_OK && key && !cx_kreuse_add(&s->reuse, key, &k, s->reuse.n))
      st = cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    else if (st != CXLA_OK)
      cx_free(key);
  }
  if (st != CXLA_OK) {
    cx_free(slots);
    return st;
  }
  if (k.nout != nout || k.nout + k.nin != n) {
    cx_free(slots);
    return cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "kernel %s takes %d+%d pointers, the fusion has %d+%d leaves", k.name,
                      k.nout, k.nin, nout, n - nout);
  }
  /* A kernel in a loop may be inlined into cx_entry, where its own vector width no longer
   * applies: cx_entry asks for the same. compare_jax.py's scan (4096 trips of a tanh over 256
   * elements, bench/hlo/jax_scan_4096x256.hlo): 0.975 -> 0.84 ms on one thread, 1.15 -> 1.04
   * on two. */
  if (s->loop_depth && k.fn && cx_cg_prefers_wide_vectors(k.fn)) cx_cg_prefer_wide_vectors(s->g, s->fn);
  int32_t id = name_fusion(s, in, "");
  LLVMValueRef args = cx_seq_args_room(s, slots, n, k.parts > 0);
  cx_free(slots);
  if (id < 0) return s->g->status;
  s->out->nkernels++;
  cx_cg *g = s->g;
  /* An empty iteration space has nothing to do: the pool never calls a kernel for it either,
   * and a direct call could run index arithmetic over zero-sized dimensions. */
  if (k.total <= 0) return CXLA_OK;
  int64_t grain = k.grain > 0 ? k.grain : 1;
  if (k.parts > 0) { /* a split reduction: its scratch past the arena's slots, both phases by the runtime */
    LLVMValueRef idx[2] = {cx_cg_i64(g, 0), cx_cg_i64(g, n)}, off = cx_cg_i64(g, cx_seq_scratch_offset(s->bufs));
    LLVMBuildStore(s->b, LLVMBuildGEP2(s->b, g->t_i8, s->arena, &off, 1, "scratch"),
                   LLVMBuildGEP2(s->b, LLVMArrayType(g->t_ptr, (unsigned)n + 1), args, idx, 2, ""));
    if (k.scratch > s->out->scratch_bytes) s->out->scratch_bytes = k.scratch;
    LLVMValueRef pp[8] = {s->rt, k.fn, args, cx_cg_i64(g, k.parts), cx_cg_i64(g, k.parts_grain), cx_cg_i64(g, k.total),
                          cx_cg_i64(g, grain), LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
    LLVMBuildCall2(s->b, s->t_parts, s->f_parts, pp, 8, "");
    return CXLA_OK;
  }
  LLVMValueRef pf[6] = {s->rt, k.fn, args, cx_cg_i64(g, k.total), cx_cg_i64(g, grain),
                        LLVMConstInt(g->t_i32, (unsigned long long)id, 1)};
  if (k.total >= 2 * grain || !s->loop_depth) {
    LLVMBuildCall2(s->b, s->t_pfor, s->f_pfor, pf, 6, "");
    return CXLA_OK;
  }
  /* One chunk inside a loop: call the kernel directly, unless the call is to be traced. LLVM
   * may then inline it, which is what small loop bodies need (no call, no hand-off per trip).
   * Outside loops a call per kernel costs nothing measurable, and inlining every kernel of a
   * large program into one function makes register allocation superlinear. */
  LLVMBasicBlockRef direct = LLVMAppendBasicBlockInContext(g->llctx, s->fn, "direct");
  LLVMBasicBlockRef traced = LLVMAppendBasicBlockInContext(g->llctx, s->fn, "traced");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->llctx, s->fn, "next");
  LLVMBuildCondBr(s->b, s->tracing, traced, direct);
  LLVMPositionBuilderAtEnd(s->b, direct);
  LLVMValueRef ka[3] = {args, cx_cg_i64(g, 0), cx_cg_i64(g, k.total)};
  LLVMBuildCall2(s->b, s->t_kernel, k.fn, ka, 3, "");
  LLVMBuildBr(s->b, next);
  LLVMPositionBuilderAtEnd(s->b, traced);
  LLVMBuildCall2(s->b, s->t_pfor, s->f_pfor, pf, 6, "");
  LLVMBuildBr(s->b, next);
  LLVMPositionBuilderAtEnd(s->b, next);
  return CXLA_OK;
}

static const cx_instr *single_op_root(const cx_instr *fusion, cx_op op) {
  const cx_comp *fc = fusion->called[0];
  const cx_instr *r = fc->root;
  if (!r || r->op != op) return NULL;
  for (int j = 0; j < r->nops; j++)
    if (r->ops[j]->op != CX_OP_PARAMETER) return NULL;
  return r;
}

static cxla_status emit_fusion(cx_seq *s, cx_instr *in) {
  if (in->ncalled != 1) return cx_seq_fallback(s, in, "fusion without a fused computation");
  if (!cx_fusion_plan_fits(in->plan, in))
    return cx_cg_fail(s->g, CXLA_ERR_INTERNAL, "sequencer: %s has no fusion plan", in->name ? in->name : "fusion");
  if (in->plan->relabels) return cx_seq_copy_leaves(s, in, in->ops[0], "copy");
  const char *why = NULL, *conv_why = NULL;
  if (in->a.fusion_kind == CX_FUSION_OUTPUT && cx_seq_dot_out(s, in, &why)) return s->g->status;
  int loop_kind = in->a.fusion_kind == CX_FUSION_LOOP || in->a.fusion_kind == CX_FUSION_INPUT;
  int supported = loop_kind && cx_emit_supported(in, &why);
  const cx_instr *conv = single_op_root(in, CX_OP_CONVOLUTION);
  if (conv && cx_seq_conv(s, in, conv, supported, &conv_why)) return s->g->status;
  if (supported) return call_kernel(s, in);
  if (!loop_kind && !why) why = "not a kLoop/kInput fusion";
  return cx_seq_fallback(s, in, why);
}

/* ---- dispatch: what each op becomes in the sequencer (emit_other for ops not listed) ---- */

typedef cxla_status (*emitter)(cx_seq *s, cx_instr *in);

static cxla_status emit_nothing(cx_seq *s, cx_instr *in) { /* slots alias their sources (buffers.c) */
  (void)s, (void)in;
  return CXLA_OK;
}

static cxla_status emit_while(cx_seq *s, cx_instr *in) { return cx_seq_while(s, in); }
static cxla_status emit_conditional(cx_seq *s, cx_instr *in) { return cx_seq_conditional(s, in); }
/* the callee's parameters alias the call's operands */
static cxla_status emit_call(cx_seq *s, cx_instr *in) { return cx_seq_emit_comp(s, in->called[0]); }
static cxla_status emit_copy(cx_seq *s, cx_instr *in) { return cx_seq_copy_leaves(s, in, in->ops[0], "copy"); }

static cxla_status emit_dot(cx_seq *s, cx_instr *in) {
  const char *why = NULL;
  if (cx_seq_dot(s, in, &why)) return s->g->status;
  return cx_seq_fallback(s, in, why);
}

static cxla_status emit_other(cx_seq *s, cx_instr *in) {
  if (in->nops == 1 && cx_buffers_instr_is_alias(in)) return cx_seq_copy_leaves(s, in, in->ops[0], "copy");
  return cx_seq_fallback(s, in, "no compiled code for this op");
}

static const emitter k_emit[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = emit_nothing, [CX_OP_CONSTANT] = emit_nothing, [CX_OP_TUPLE] = emit_nothing,
  [CX_OP_GET_TUPLE_ELEMENT] = emit_nothing, [CX_OP_WHILE] = emit_while, [CX_OP_CONDITIONAL] = emit_conditional,
  [CX_OP_CALL] = emit_call, [CX_OP_COPY] = emit_copy, [CX_OP_FUSION] = emit_fusion, [CX_OP_DOT] = emit_dot,
  [CX_OP_CHOLESKY] = cx_seq_cholesky, [CX_OP_TRIANGULAR_SOLVE] = cx_seq_triangular_solve, /* LAPACK, BLAS */
  [CX_OP_CUSTOM_CALL] = cx_seq_custom_call, /* by target */
  [CX_OP_TOPK] = cx_seq_topk, /* a run-time routine (rt/topk.c) */
  [CX_OP_RAGGED_DOT] = cx_seq_ragged_dot, /* a GEMM per group (rt/ragged_dot.c) */
  [CX_OP_FFT] = cx_seq_fft,   /* FFTW (rt/fft.c) */
  [CX_OP_RNG_BIT_GENERATOR] = cx_seq_rng_bit_generator, /* a run-time routine (rt/rng.c) */
  [CX_OP_RNG] = cx_seq_rng, /* a run-time routine (rt/rng.c) */
  [CX_OP_SORT] = cx_seq_sort, [CX_OP_SCATTER] = cx_seq_scatter, /* runtime routines (sort_scatter.h) */
  [CX_OP_SELECT_AND_SCATTER] = cx_seq_select_and_scatter,
  /* the devices of a run: runtime routines over its transport (collectives.h) */
  [CX_OP_REPLICA_ID] = cx_seq_device_id, [CX_OP_PARTITION_ID] = cx_seq_device_id,
  [CX_OP_ALL_REDUCE] = cx_seq_collective, [CX_OP_REDUCE_SCATTER] = cx_seq_collective,
  [CX_OP_ALL_GATHER] = cx_seq_collective, [CX_OP_ALL_TO_ALL] = cx_seq_collective,
  [CX_OP_COLLECTIVE_PERMUTE] = cx_seq_collective, [CX_OP_COLLECTIVE_BROADCAST] = cx_seq_collective,
};

cxla_status cx_seq_emit_comp(cx_seq *s, cx_comp *c) {
  for (int i = 0; i < c->ninstrs && s->g->status == CXLA_OK; i++) {
    cx_instr *in = c->instrs[i];
    CX_TRY((k_emit[in->op] ? k_emit[in->op] : emit_other)(s, in));
  }
  return s->g->status;
}

/* ---- setup ---- */

static LLVMValueRef declare(cx_seq *s, const char *name, LLVMTypeRef *t, LLVMTypeRef ret, LLVMTypeRef *ps, int n) {
  *t = LLVMFunctionType(ret, ps, (unsigned)n, 0);
  LLVMValueRef f = LLVMGetNamedFunction(s->g->mod, name);
  return f ? f : LLVMAddFunction(s->g->mod, name, *t);
}

static void declare_runtime(cx_seq *s) {
  cx_cg *g = s->g;
  LLVMTypeRef P = g->t_ptr, I64 = g->t_i64, I32 = g->t_i32, V = g->t_void;
  LLVMTypeRef kp[3] = {P, I64, I64};
  s->t_kernel = LLVMFunctionType(V, kp, 3, 0);
  LLVMTypeRef pf[6] = {P, P, P, I64, I64, I32};
  s->f_pfor = declare(s, "cx_rt_parallel_for", &s->t_pfor, V, pf, 6);
  LLVMTypeRef pp[8] = {P, P, P, I64, I64, I64, I64, I32};
  s->f_parts = declare(s, "cx_rt_parallel_parts", &s->t_parts, V, pp, 8);
  LLVMTypeRef gm[18] = {P, I32, I32, I32, I64, I64, I64, P, I64, I64, P, I64, I64, P, I64, I64, I64, I32};
  s->f_gemm = declare(s, "cx_rt_gemm", &s->t_gemm, V, gm, 18);
  s->f_gemm_dnnl = declare(s, "cx_rt_gemm_dnnl", &s->t_gemm, V, gm, 18);
  LLVMTypeRef gm2[22] = {P, I32, I32, I32, I64, I64, I64, P, I64, I64, I64, P, I64, I64, I64, P, I64, I64, I64, I64, I64, I32};
  s->f_gemm2 = declare(s, "cx_rt_gemm_batch2", &s->t_gemm2, V, gm2, 22);
  s->f_gemm2_dnnl = declare(s, "cx_rt_gemm_batch2_dnnl", &s->t_gemm2, V, gm2, 22);
  LLVMTypeRef ip[4] = {P, I32, P, I32};
  s->f_interp = declare(s, "cx_rt_interp_op", &s->t_interp, V, ip, 4);
  LLVMTypeRef tp[2] = {P, I32};
  s->f_tbegin = declare(s, "cx_rt_trace_begin", &s->t_trace, V, tp, 2);
  s->f_tend = declare(s, "cx_rt_trace_end", &s->t_trace, V, tp, 2);
  LLVMTypeRef cp[7] = {P, I32, P, P, P, P, I32};
  s->f_conv = declare(s, "cx_rt_conv_im2col", &s->t_conv, V, cp, 7);
  s->f_conv_dnnl = declare(s, "cx_rt_conv_dnnl", &s->t_conv, V, cp, 7);
}

/* Loads every PARAM and OUTPUT pointer once, on entry; constants are link-time symbols (the
 * executable keeps the module, and so the literals, alive). */
static cxla_status entry_block(cx_seq *s) {
  cx_cg *g = s->g;
  const cx_buffers *b = s->bufs;
  const cx_comp *e = g->m->entry;
  s->param_base = cx_calloc((size_t)e->nparams + 1, sizeof *s->param_base);
  s->slot_ptr = cx_calloc((size_t)b->nslots + 1, sizeof *s->slot_ptr);
  if (!s->param_base || !s->slot_ptr) return cx_cg_fail(g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  for (int p = 0; p < e->nparams; p++) s->param_base[p + 1] = s->param_base[p] + cx_shape_leaf_count(&e->params[p]->shape);
  for (int i = 0; i < b->nslots; i++) {
    const cx_slot *sl = &b->slots[i];
    LLVMValueRef idx;
    switch (sl->kind) {
    case CX_SLOT_PARAM:
      if (sl->param < 0 || sl->param >= e->nparams) return cx_cg_fail(g, CXLA_ERR_INTERNAL, "slot %d: bad parameter", i);
      idx = cx_cg_i64(g, s->param_base[sl->param] + sl->leaf);
      s->slot_ptr[i] = LLVMBuildLoad2(s->b, g->t_ptr, LLVMBuildGEP2(s->b, g->t_ptr, s->params, &idx, 1, ""), "param");
      break;
    case CX_SLOT_OUTPUT:
      idx = cx_cg_i64(g, sl->leaf);
      s->slot_ptr[i] = LLVMBuildLoad2(s->b, g->t_ptr, LLVMBuildGEP2(s->b, g->t_ptr, s->outputs, &idx, 1, ""), "out");
      break;
    case CX_SLOT_CONST:
      s->slot_ptr[i] = cx_seq_addr(s, sl->constant->data);
      break;
    default: break;
    }
  }
  LLVMValueRef off = cx_cg_i64(g, (int64_t)offsetof(cx_rt, trace));
  LLVMValueRef tr = LLVMBuildLoad2(s->b, g->t_ptr, LLVMBuildGEP2(s->b, g->t_i8, s->rt, &off, 1, ""), "trace");
  s->tracing = LLVMBuildIsNotNull(s->b, tr, "tracing");
  return CXLA_OK;
}

cxla_status cx_seq_emit(cx_cg *g, cx_shards *shards, const cx_buffers *b, int64_t max_loop_iterations,
                        int onednn, cx_seq_out *out) {
  cx_seq s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.shards = shards;
  s.bufs = b;
  s.out = out;
  s.max_loop_iterations = max_loop_iterations;
  s.onednn = onednn;
  s.b = LLVMCreateBuilderInContext(g->llctx);
  declare_runtime(&s);
  LLVMTypeRef ep[4] = {g->t_ptr, g->t_ptr, g->t_ptr, g->t_ptr};
  s.fn = LLVMAddFunction(g->mod, "cx_entry", LLVMFunctionType(g->t_void, ep, 4, 0));
  s.params = LLVMGetParam(s.fn, 0);
  s.outputs = LLVMGetParam(s.fn, 1);
  s.arena = LLVMGetParam(s.fn, 2);
  s.rt = LLVMGetParam(s.fn, 3);
  /* params, outputs, arena and rt never overlap each other */
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (unsigned i = 1; i <= 4; i++)
    LLVMAddAttributeAtIndex(s.fn, i, LLVMCreateEnumAttribute(g->llctx, noalias, 0));
  s.entry_bb = LLVMAppendBasicBlockInContext(g->llctx, s.fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(g->llctx, s.fn, "start");
  LLVMPositionBuilderAtEnd(s.b, s.entry_bb);
  cxla_status st = entry_block(&s);
  s.entry_term = LLVMBuildBr(s.b, start);
  LLVMPositionBuilderAtEnd(s.b, start);
  if (st == CXLA_OK) st = cx_seq_emit_comp(&s, g->m->entry);
  if (st == CXLA_OK) LLVMBuildRetVoid(s.b);
  if (st == CXLA_OK && g->status != CXLA_OK) st = g->status;
  LLVMDisposeBuilder(s.b);
  cx_kreuse_free(&s.reuse);
  cx_free(s.slot_ptr);
  cx_free(s.param_base);
  return st;
}
