/* kernel.c — kernels for fusions: kLoop fusions (one loop nest over the output; multi-output
 * fusions compute every root element in the same iteration), kInput fusions (reduce_emit.c)
 * and kOutput epilogues around a GEMM (cx_emit_epilogue).
 *
 * The parallel iteration space of a loop kernel is the output's linear index [0, total): a
 * chunk [begin, end) may start and end anywhere. Pure elementwise fusions (and any output
 * with at most one dimension above 1) run one flat counted loop over the linear index, with
 * no division; the others loop over rows (the multi-index of a row computed once) with the
 * innermost non-trivial dimension as the counted inner loop, which LLVM vectorises. */
#include <string.h>
#include "codegen/emit.h"
#include "codegen/loops.h"
#include "ir/fusion_plan.h"

/* Ops that read their operands at the output's linear index, no multi-index needed (the op
 * table's index column): always, or (bitcast-convert) where the rank stays, i.e. the element
 * size does. A dot here is a kOutput epilogue's GEMM result, read at the output's index. */
static int linear_op(const cx_instr *in) {
  cx_op_index k = cx_op_index_of(in->op);
  if (k == CX_INDEX_SAME_RANK) return in->shape.rank == in->ops[0]->shape.rank;
  return k == CX_INDEX_LINEAR;
}

/* The fusion's plan (passes/fusion_plan.c made it before code generation), or NULL after
 * reporting an internal error. */
static const cx_fusion_plan *plan_of(cx_cg *cg, const cx_instr *fusion) {
  if (cx_fusion_plan_fits(fusion->plan, fusion)) return fusion->plan;
  cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s has no fusion plan (cx_fusion_plan_module runs first)",
             fusion->name ? fusion->name : "fusion");
  return NULL;
}

static int effective_rank(const cx_shape *s) {
  int n = 0;
  for (int d = 0; d < s->rank; d++) n += s->dims[d] != 1;
  return n;
}

static void store_all(cx_kfn *k, const cx_comp *c, int nout, const cx_shape **leaves, const cx_idx *idx) {
  LLVMValueRef v[CX_GEN_MAX_VALS];
  int n = cx_gen_elem(&k->g, c->root, idx, v);
  if (n != nout) {
    cx_gen_fail(&k->g, c->root, "yields %d values for %d outputs", n, nout);
    return;
  }
  for (int i = 0; i < nout; i++) cx_cg_store(k->cg, leaves[i]->type, k->ptr[i], idx->lin, v[i]);
}

/* Rows narrower than this many elements are vectorised without interleaving. */
#define SHORT_ROW 64

/* The loop nest over [begin, end) of the linear index of shape s. */
static void loop_nest(cx_kfn *k, const cx_comp *c, int nout, const cx_shape **leaves, int flat) {
  cx_cg *cg = k->cg;
  LLVMBuilderRef b = cg->b;
  const cx_shape *s = leaves[0];
  cx_gen *g = &k->g;
  /* An empty output has nothing to compute; emitting the loops anyway would divide row
   * indices by a zero dimension (the kernel body stays empty: its range is always empty). */
  if (cx_shape_elems(s) == 0) return;
  cx_gen_mark_t m0 = cx_gen_mark(g);
  int inner = s->rank - 1;
  while (inner >= 0 && s->dims[inner] == 1) inner--;
  if (flat || inner <= 0) {
    cx_loop l;
    cx_loop_begin(cg, &l, k->begin, k->end, "flat");
    cx_idx idx = cx_idx_from_linear(g, s, l.iv);
    store_all(k, c, nout, leaves, &idx);
    cx_loop_end(cg, &l);
    if (cg->elems_per_thread > 1) cx_loop_unroll_full(cg, &l);
    cx_gen_restore(g, m0);
    return;
  }
  /* rows of W elements; the first and last row of the chunk may be partial */
  int64_t W = s->dims[inner];
  LLVMValueRef w = cx_ir_i64(g, W);
  LLVMValueRef r0 = LLVMBuildSDiv(b, k->begin, w, "");
  LLVMValueRef r1 = LLVMBuildSDiv(b, LLVMBuildAdd(b, k->end, cx_ir_i64(g, W - 1), ""), w, "");
  cx_loop rl;
  cx_loop_begin(cg, &rl, r0, r1, "row");
  LLVMValueRef rb = LLVMBuildMul(b, rl.iv, w, "");
  LLVMValueRef j0 = cx_ir_smax(g, LLVMBuildSub(b, k->begin, rb, ""), cx_ir_i64(g, 0));
  LLVMValueRef j1 = cx_ir_smin(g, LLVMBuildSub(b, k->end, rb, ""), w);
  cx_shape outer = cx_shape_array(s->type, inner, s->dims);
  cx_idx oi = cx_idx_from_linear(g, &outer, rl.iv);
  cx_gen_mark_t m1 = cx_gen_mark(g);
  cx_loop jl;
  cx_loop_begin(cg, &jl, j0, j1, "col");
  LLVMValueRef v[CXLA_MAX_RANK];
  for (int d = 0; d < s->rank; d++) v[d] = d < inner ? oi.v[d] : d == inner ? jl.iv : cx_ir_i64(g, 0);
  LLVMValueRef lin = LLVMBuildAdd(b, rb, jl.iv, "");
  LLVMSetNSW(lin, 1);
  cx_idx idx = cx_idx_both(s, v, lin);
  store_all(k, c, nout, leaves, &idx);
  cx_loop_end(cg, &jl);
  /* Short rows (LeNet's 16 channels): LLVM's vector loop of 8 lanes interleaved 4 times needs
   * 32 elements, so every 16-wide row ran in the scalar remainder (its bias + ReLU 5x slower
   * than with one vector body per 8 elements). */
  if (W < SHORT_ROW) cx_loop_interleave(cg, &jl, 1);
  /* Rows of 16 to 112 f32 (a multiple of 16) in 512-bit vectors: one or a few trips instead of
   * twice as many, each behind the row's set-up. The LeNet step's bias + ReLU + max-pool over
   * 16 and 32 channels: 114 -> 95 and 48 -> 33 us (the step 2.43 -> 2.39 ms, cxla run,
   * interleaved); wider rows keep LLVM's 256-bit vectors, interleaved (no change measured). */
  if (W % 16 == 0 && W < 128) cx_cg_prefer_wide_vectors(cg, NULL);
  cx_gen_restore(g, m1);
  cx_loop_end(cg, &rl);
  cx_gen_restore(g, m0);
}

/* The grain: enough elements for ~128 KiB of memory traffic (~5-10 µs of work on one core),
 * so that splitting a kernel over threads pays for waking them. Operands read only by a dot
 * whose value comes from elsewhere (the GEMM of a split kOutput fusion) move no bytes here. */
static int64_t grain_for(const cx_instr *fusion, const cx_fusion_plan *plan, int nout, const cx_shape **leaves,
                         int64_t total) {
  int64_t bytes = 0, work = 1;
  for (int i = 0; i < nout; i++) bytes += (int64_t)cxla_type_size(leaves[i]->type);
  for (int i = 0; i < fusion->nops; i++) {
    int64_t e = cx_shape_elems(&fusion->ops[i]->shape);
    const cx_fusion_use *u = &plan->use[i];
    if (u->dot_operand && !u->elementwise && !u->reused) continue;
    if (e < total || total <= 0) continue;
    /* Larger than the output with no reduce or window in the body: a slice of it is read (a
     * dynamic-slice of a scan's stacked input), one element an output element, not e / total
     * of them: counting the whole operand made a loop trip's 256-element kernel four chunks
     * for the pool, and waking it cost ten times the work. */
    int64_t per = e / total;
    if (per > 1 && !plan->nreduces && !u->reused) per = 1;
    bytes += (int64_t)cxla_type_size(fusion->ops[i]->shape.type) * per;
  }
  if (plan->expensive) work = 4; /* transcendentals: fewer elements fill a chunk */
  int64_t g = (131072 / (bytes ? bytes : 1)) / work;
  g = (g + 63) / 64 * 64;
  return g < 64 ? 64 : g;
}

static int all_linear(const cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++)
    if (!linear_op(c->instrs[i])) return 0;
  return 1;
}

/* A dynamic-update-slice root computed in place over its operand (fusion_plan.c dus_in_place;
 * buffer assignment gave the output the operand's memory, so may_alias pairs them): the
 * kernel's iteration space is the update, each element stored at its clamped window
 * position; the rest of the memory already holds the operand. */
static int dus_window(const cx_instr *fusion, uint64_t may_alias, int first) {
  const cx_instr *root = fusion->called[0]->root;
  if (fusion->a.fusion_kind != CX_FUSION_LOOP || root->op != CX_OP_DYNAMIC_UPDATE_SLICE ||
      root->ops[0]->op != CX_OP_PARAMETER || first != 1 || !(may_alias & 1))
    return 0;
  int64_t k = root->ops[0]->a.index;
  return k >= 0 && k < fusion->nops && first + k < 64 && (may_alias >> (first + k) & 1);
}

static cxla_status emit_dus_window(cx_cg *cg, const cx_instr *fusion, const cx_fusion_plan *plan,
                                   const cx_kalias *alias, cx_kernel *out) {
  const cx_comp *c = fusion->called[0];
  const cx_instr *dus = c->root;
  const cx_shape *xs = &dus->shape, *us = &dus->ops[1]->shape;
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, fusion, 1 + fusion->nops, alias, 1));
  cx_kfn_bind_params(&k, c, 1);
  int64_t total = cx_shape_elems(us);
  if (total > 0) {
    cx_gen *g = &k.g;
    cx_gen_mark_t m0 = cx_gen_mark(g);
    cx_loop l;
    cx_loop_begin(cg, &l, k.begin, k.end, "window");
    cx_idx ui = cx_idx_from_linear(g, us, l.iv);
    LLVMValueRef ov[CXLA_MAX_RANK];
    for (int d = 0; d < xs->rank; d++) ov[d] = LLVMBuildAdd(cg->b, cx_gen_dus_start(g, dus, d), ui.v[d], "");
    cx_idx oi = cx_idx_from_multi(g, xs, ov);
    cx_cg_store(cg, xs->type, k.ptr[0], oi.lin, cx_gen1(g, dus->ops[1], &ui));
    cx_loop_end(cg, &l);
    cx_gen_restore(g, m0);
  }
  const cx_shape *leaf = us;
  return cx_kfn_end(&k, out, total, grain_for(fusion, plan, 1, &leaf, total), 1, fusion->nops);
}

/* Emits a loop kernel; params of the fused computation start at args[first]; `dot` (kOutput)
 * reads from args[nout]. */
static cxla_status emit_loop(cx_cg *cg, const cx_instr *fusion, const cx_fusion_plan *plan, const cx_kalias *alias,
                             const cx_instr *dot, cx_kernel *out) {
  uint64_t may_alias = alias ? alias->mask : 0;
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  const cx_comp *c = fusion->called[0];
  if (nout < 1) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: unsupported result shape", fusion->name);
  for (int i = 1; i < nout; i++)
    if (!cx_shape_same_dims(leaves[i], leaves[0]))
      return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: outputs of different dims", fusion->name);
  int first = nout + (dot ? 1 : 0);
  if (!dot && nout == 1 && dus_window(fusion, may_alias, first)) return emit_dus_window(cg, fusion, plan, alias, out);
  cx_kfn k;
  /* the epilogue's output may or may not be the GEMM buffer; sequencer masks are exact */
  CX_TRY(cx_kfn_begin(&k, cg, fusion, first + fusion->nops, alias, dot == NULL));
  cx_kfn_bind_params(&k, c, first);
  if (dot) {
    cx_gen_override o;
    memset(&o, 0, sizeof o);
    o.in = dot;
    o.ptr = k.ptr[nout];
    cx_gen_push_override(&k.g, &o);
  }
  int64_t total = cx_shape_elems(leaves[0]);
  /* a GPU thread's few elements: one flat loop, fully unrolled (its neighbouring accesses then
   * merge into vector loads) */
  int few = cg->elems_per_thread > 1;
  loop_nest(&k, c, nout, leaves, few || all_linear(c) || effective_rank(leaves[0]) <= 1);
  return cx_kfn_end(&k, out, total, grain_for(fusion, plan, nout, leaves, total), nout, first - nout + fusion->nops);
}

/* An output may share memory with an operand only where the plan says so (the operand is read
 * at the output's own index): otherwise the kernel would read elements it already overwrote.
 * Buffer assignment shares buffers by the same plan, so this only catches a caller's bug. */
static cxla_status check_in_place(cx_cg *cg, const cx_instr *fusion, const cx_fusion_plan *plan, uint64_t may_alias,
                                  int first) {
  for (int i = first; i < first + fusion->nops && i < 64; i++)
    if ((may_alias >> i) & 1 && !plan->use[i - first].in_place)
      return cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: %s: operand %d may alias an output but is not "
                        "read elementwise", fusion->name, i - first);
  return CXLA_OK;
}

cxla_status cx_emit_kernel_ex(cx_cg *cg, cx_instr *fusion, const cx_kalias *alias, cx_kernel *out) {
  const char *why = NULL;
  uint64_t may_alias = alias ? alias->mask : 0;
  memset(out, 0, sizeof *out);
  if (!cx_emit_supported(fusion, &why))
    return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", fusion->name ? fusion->name : "fusion", why);
  if (fusion->a.fusion_kind == CX_FUSION_OUTPUT)
    return cx_cg_fail(cg, CXLA_ERR_INVALID_ARGUMENT, "codegen: %s is a kOutput fusion: use cx_emit_epilogue",
                      fusion->name);
  const cx_fusion_plan *plan = plan_of(cg, fusion);
  if (!plan) return cg->status;
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  CX_TRY(check_in_place(cg, fusion, plan, may_alias, nout));
  cx_red_plan p;
  const cx_comp *c = fusion->called[0];
  if (!plan->nreduces) return emit_loop(cg, fusion, plan, alias, NULL, out);
  if (!cx_red_plan_make(fusion, &p, &why))
    return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", fusion->name, why);
  /* a split column reduction (cpu only) takes its scratch as one more argument */
  if (!cg->target->warp_size && nout + fusion->nops < CX_EMIT_MAX_ARGS) cx_red_plan_split(&p);
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, fusion, nout + fusion->nops + (p.blocks > 0), alias, 1));
  cx_kfn_bind_params(&k, c, nout);
  int64_t total = 0, grain = 1;
  cx_emit_reduce_body(&k, fusion, &p, may_alias, &total, &grain);
  CX_TRY(cx_kfn_end(&k, out, total, grain, nout, fusion->nops));
  out->parts = p.blocks;
  out->parts_grain = p.parts_grain;
  out->scratch = p.scratch;
  return CXLA_OK;
}

cxla_status cx_emit_kernel(cx_cg *cg, cx_instr *fusion, cx_kernel *out) {
  return cx_emit_kernel_ex(cg, fusion, NULL, out);
}

cxla_status cx_emit_epilogue(cx_cg *cg, cx_instr *fusion, cx_kernel *out) {
  const char *why = NULL;
  memset(out, 0, sizeof *out);
  if (fusion->a.fusion_kind != CX_FUSION_OUTPUT || !cx_emit_supported(fusion, &why))
    return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", fusion->name ? fusion->name : "fusion",
                      why ? why : "not a kOutput fusion");
  const cx_fusion_plan *plan = plan_of(cg, fusion);
  if (!plan) return cg->status;
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  /* output 0 runs in place over the GEMM result; everything else keeps noalias */
  cx_kalias alias;
  int slots[CX_EMIT_MAX_ARGS + 1];
  int nargs = nout + 1 + fusion->nops;
  for (int i = 0; i < nargs && i <= CX_EMIT_MAX_ARGS; i++) slots[i] = i == nout ? 0 : i;
  cx_kalias_of_slots(&alias, slots, nout, nargs <= CX_EMIT_MAX_ARGS ? nargs : CX_EMIT_MAX_ARGS);
  return emit_loop(cg, fusion, plan, &alias, plan->dot, out);
}
