/* fusion_plan.c — cx_fusion_plan_get: the facts about a fusion that buffer assignment and the
 * emitter act on, decided here once (see ir/fusion_plan.h). */
#include <string.h>
#include "passes/fusion_plan.h"
#include "passes/fusion_util.h"

/* Raw ops whose result is their operand's bytes (the op table's alias column): always, or for
 * a bitcast only between default layouts of the same size (anything else moves bytes). */
int cx_buffers_instr_is_alias(const cx_instr *in) {
  cx_op_alias a = cx_op_alias_of(in->op);
  if (a != CX_ALIAS_SAME_BYTES) return a == CX_ALIAS_ALWAYS;
  return cx_shape_has_default_layout(&in->shape) && cx_shape_has_default_layout(&in->ops[0]->shape) &&
         cx_shape_bytes(&in->shape) == cx_shape_bytes(&in->ops[0]->shape);
}

/* A reshape or aliasing bitcast of the one parameter. */
static int relabels(const cx_instr *f) {
  if (f->nops != 1 || !cx_type_is_array(f->shape.type)) return 0;
  const cx_instr *r = f->called[0]->root;
  return r && r->nops == 1 && r->ops[0]->op == CX_OP_PARAMETER && (r->op == CX_OP_RESHAPE || r->op == CX_OP_BITCAST) &&
         cx_buffers_instr_is_alias(r);
}

/* The outputs of a multi-output fusion: a root tuple of arrays, none of them a parameter. */
static int tuple_of_computed_arrays(const cx_instr *root) {
  if (root->op != CX_OP_TUPLE || !root->nops) return 0;
  for (int i = 0; i < root->nops; i++)
    if (!cx_type_is_array(root->ops[i]->shape.type) || root->ops[i]->op == CX_OP_PARAMETER) return 0;
  return 1;
}

/* Whether a kLoop or kInput fusion may write a result over operand k: every path from the
 * parameter to the root goes through elementwise ops, reshapes or aliasing bitcasts of the same
 * element count, so element i of the result is computed from element i of the operand only,
 * which the kernel reads before it writes element i. A multi-output fusion computes element i
 * of every output before it stores one (codegen/kernel.c, reduce_emit.c), so any output of the
 * operand's size and element count may take its memory (buffer assignment compares them). In a
 * kInput fusion such an operand never reaches a reduce: only the epilogue reads it, at the
 * output element it is about to store (a bias updated from its gradient's column sum). A
 * dynamic-update-slice over its operand qualifies too (dus_in_place). */
/* A kLoop fusion whose root is a dynamic-update-slice of parameter k, which nothing else in
 * the fusion reads: written in place, the kernel stores only the update window
 * (codegen/kernel.c) and the rest of the operand's memory already holds the result. A loop
 * that fills a stacked output one slice per trip (a scan) then costs the slice, not the
 * whole array, per trip. */
static int dus_in_place(const cx_instr *f, int k) {
  const cx_comp *fc = f->called[0];
  const cx_instr *root = fc->root;
  if (f->a.fusion_kind != CX_FUSION_LOOP || !root || root->op != CX_OP_DYNAMIC_UPDATE_SLICE || root->nops < 2) return 0;
  const cx_instr *p = root->ops[0];
  if (p->op != CX_OP_PARAMETER || p->a.index != k || !cx_type_is_array(f->shape.type) ||
      cx_shape_bytes(&p->shape) != cx_shape_bytes(&f->shape))
    return 0;
  for (int i = 0; i < fc->ninstrs; i++)
    for (int j = 0; j < fc->instrs[i]->nops; j++)
      if (fc->instrs[i]->ops[j] == p && (fc->instrs[i] != root || j != 0)) return 0;
  return 1;
}

static int in_place(const cx_instr *f, int k, const cx_fusion_use *u) {
  int single = cx_type_is_array(f->shape.type);
  if (dus_in_place(f, k)) return 1;
  if ((f->a.fusion_kind != CX_FUSION_LOOP && f->a.fusion_kind != CX_FUSION_INPUT) || !u->elementwise || u->reused)
    return 0;
  const cx_comp *fc = f->called[0];
  const cx_instr *p = NULL, *root = fc->root;
  if (!root || (!single && !tuple_of_computed_arrays(root))) return 0;
  for (int i = 0; i < fc->ninstrs; i++)
    if (fc->instrs[i]->op == CX_OP_PARAMETER && fc->instrs[i]->a.index == k) p = fc->instrs[i];
  if (!p || root == p || !cx_type_is_array(p->shape.type)) return 0;
  /* a kInput fusion stores its input-shaped outputs while it reads the input: only operands
   * shaped as the reductions' results (read by the epilogue alone) qualify */
  if (f->a.fusion_kind == CX_FUSION_INPUT)
    for (int i = 0; i < fc->ninstrs; i++)
      if (fc->instrs[i]->op == CX_OP_REDUCE && cx_shape_elems(&fc->instrs[i]->ops[0]->shape) == cx_shape_elems(&p->shape))
        return 0;
  /* one output: of the operand's size; several: buffer assignment matches sizes and counts */
  if (single && (cx_shape_elems(&p->shape) != cx_shape_elems(&f->shape) || cx_shape_bytes(&p->shape) != cx_shape_bytes(&f->shape)))
    return 0;
  /* forward reachability from p in topological order: every reader must be index-preserving */
  uint8_t reach_stack[128], *reach = fc->ninstrs <= 128 ? reach_stack : cx_calloc((size_t)fc->ninstrs, 1);
  if (!reach) return 0;
  memset(reach, 0, fc->ninstrs <= 128 ? sizeof reach_stack : 0);
  int ok = 1;
  for (int i = 0; i < fc->ninstrs && ok; i++) {
    const cx_instr *x = fc->instrs[i];
    if (x == p) { reach[i] = 1; continue; }
    int reads = 0;
    for (int j = 0; j < x->nops; j++)
      for (int q = 0; q < i; q++)
        if (reach[q] && fc->instrs[q] == x->ops[j]) reads = 1;
    if (!reads) continue;
    reach[i] = 1;
    if (x == root && x->op == CX_OP_TUPLE) continue; /* the outputs themselves */
    int preserving = cx_op_is_elementwise(x->op) || x->op == CX_OP_RESHAPE ||
                     (x->op == CX_OP_BITCAST && cx_buffers_instr_is_alias(x));
    if (!preserving || !cx_type_is_array(x->shape.type) || cx_shape_elems(&x->shape) != cx_shape_elems(&p->shape)) ok = 0;
  }
  if (reach != reach_stack) cx_free(reach);
  return ok;
}

static const cx_instr *only_dot(const cx_comp *fc) {
  const cx_instr *dot = NULL;
  for (int i = 0; i < fc->ninstrs; i++) {
    if (fc->instrs[i]->op != CX_OP_DOT) continue;
    if (dot) return NULL;
    dot = fc->instrs[i];
  }
  return dot;
}

static cx_fusion_plan *make(cx_instr *f) {
  cx_module *m = f->parent->module;
  cx_fusion_plan *p = cx_arena_alloc(&m->arena, sizeof *p);
  cx_fusion_use *use = f->nops ? cx_arena_alloc(&m->arena, sizeof *use * (size_t)f->nops) : NULL;
  fu_param_use *u = f->nops ? cx_malloc(sizeof *u * (size_t)f->nops) : NULL;
  if (!p || (f->nops && (!use || !u)) || !fu_analyze_operands(f, u)) {
    cx_free(u);
    cx_oom(m->ctx);
    return NULL;
  }
  memset(p, 0, sizeof *p);
  p->kind = f->a.fusion_kind;
  p->body = f->called[0];
  p->nops = f->nops;
  p->nreduces = fu_count_reduces(f);
  p->dot = only_dot(f->called[0]);
  p->expensive = fu_is_expensive(f);
  p->relabels = relabels(f);
  p->use = use;
  for (int k = 0; k < f->nops; k++) {
    cx_fusion_use *x = &use[k];
    x->elementwise = (uint8_t)u[k].elementwise;
    x->reused = (uint8_t)u[k].reused;
    x->dot_operand = (uint8_t)u[k].dot_operand;
    x->in_place = (uint8_t)in_place(f, k, x);
  }
  cx_free(u);
  return p;
}

const cx_fusion_plan *cx_fusion_plan_get(cx_instr *f) {
  if (!f || f->op != CX_OP_FUSION || f->ncalled != 1 || !f->called[0] || !f->parent) return NULL;
  if (!cx_fusion_plan_fits(f->plan, f)) f->plan = make(f);
  return f->plan;
}

cxla_status cx_fusion_plan_module(cx_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      cx_instr *x = m->comps[c]->instrs[i];
      if (x->op == CX_OP_FUSION && x->ncalled == 1 && x->called[0] && !cx_fusion_plan_get(x))
        return cx_oom(m->ctx);
    }
  return CXLA_OK;
}
