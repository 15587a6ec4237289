/* gen.c — the generator core: the value cache, parameter bindings, overrides, the table of
 * generators by op, parameters, constants, tuples and inlined scalar computations. */
#include <stdio.h>
#include <string.h>
#include "codegen/gen.h"

void cx_gen_init(cx_gen *g, cx_cg *cg, LLVMValueRef fn, const char *kname) {
  memset(g, 0, sizeof *g);
  g->cg = cg;
  g->fn = fn;
  g->kname = kname;
  g->fmf = LLVMFastMathAllowContract;
}

void cx_gen_dispose(cx_gen *g) {
  cx_free(g->ents);
  cx_free(g->pool);
  g->ents = NULL;
  g->pool = NULL;
}

cx_gen_mark_t cx_gen_mark(cx_gen *g) {
  cx_gen_mark_t m = {g->nents, g->npool};
  return m;
}

void cx_gen_restore(cx_gen *g, cx_gen_mark_t m) {
  if (m.nents < g->nents) g->nents = m.nents;
  if (m.npool < g->npool) g->npool = m.npool;
}

int cx_gen_push_binding(cx_gen *g, const cx_gen_binding *b) {
  if (g->nbinds >= CX_ARRAY_LEN(g->binds)) {
    cx_cg_fail(g->cg, CXLA_ERR_UNSUPPORTED, "codegen: computations nested too deeply");
    return 0;
  }
  g->binds[g->nbinds++] = *b;
  return 1;
}
void cx_gen_pop_binding(cx_gen *g) { if (g->nbinds) g->nbinds--; }

int cx_gen_push_override(cx_gen *g, const cx_gen_override *o) {
  if (g->novr >= CX_ARRAY_LEN(g->ovr)) {
    cx_cg_fail(g->cg, CXLA_ERR_UNSUPPORTED, "codegen: too many reduce results in one fusion");
    return 0;
  }
  g->ovr[g->novr++] = *o;
  return 1;
}
void cx_gen_pop_override(cx_gen *g) { if (g->novr) g->novr--; }

static LLVMTypeRef reg_type_of(cx_gen *g, const cx_instr *in) {
  cxla_type t = in->shape.type;
  if (t == CXLA_TUPLE && in->shape.ntuple > 0) t = in->shape.tuple[0].type;
  return cx_cg_reg_type(g->cg, cx_type_is_array(t) ? t : CXLA_S32);
}

LLVMValueRef cx_gen_fail(cx_gen *g, const cx_instr *in, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cx_cg_fail(g->cg, CXLA_ERR_UNSUPPORTED, "codegen: %s %s: %s", cx_op_name(in->op),
             in->name ? in->name : "", msg);
  return LLVMGetUndef(reg_type_of(g, in));
}

/* ---- cache ---- */

static cx_gen_entry *lookup(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  int rank = cx_shape_is_tuple(&in->shape) ? idx->rank : in->shape.rank;
  for (int i = g->nents - 1; i >= 0; i--) {
    cx_gen_entry *e = &g->ents[i];
    if (e->in != in || e->rank != rank) continue;
    int same = 1;
    for (int d = 0; d < rank && same; d++) same = e->key[d] == idx->v[d];
    if (same) return e;
  }
  return NULL;
}

static void insert(cx_gen *g, const cx_instr *in, const cx_idx *idx, int n, const LLVMValueRef *vals) {
  int64_t ce = g->capents, cp = g->cappool;
  if (!cx_vec_reserve((void **)&g->ents, &ce, g->nents + 1, sizeof *g->ents) ||
      !cx_vec_reserve((void **)&g->pool, &cp, g->npool + n, sizeof *g->pool)) {
    g->capents = (int)ce;
    g->cappool = (int)cp;
    cx_cg_fail(g->cg, CXLA_ERR_OUT_OF_MEMORY, "codegen: out of memory");
    return;
  }
  g->capents = (int)ce;
  g->cappool = (int)cp;
  cx_gen_entry *e = &g->ents[g->nents++];
  e->in = in;
  e->rank = cx_shape_is_tuple(&in->shape) ? idx->rank : in->shape.rank;
  for (int d = 0; d < e->rank; d++) e->key[d] = idx->v[d];
  e->nvals = n;
  e->at = g->npool;
  memcpy(g->pool + g->npool, vals, sizeof *vals * (size_t)n);
  g->npool += n;
}

/* ---- parameters and constants ---- */

static LLVMValueRef gen_param(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  for (int i = g->nbinds - 1; i >= 0; i--) {
    const cx_gen_binding *b = &g->binds[i];
    if (b->comp != in->parent) continue;
    int64_t p = in->a.index;
    if (p < 0 || p >= b->n) return cx_gen_fail(g, in, "parameter number out of range");
    if (b->vals) return b->vals[p];
    return cx_cg_load(g->cg, in->shape.type, b->ptrs[p], idx->lin);
  }
  return cx_gen_fail(g, in, "parameter of a computation that is not being emitted");
}

/* One element of a literal as a register constant. */
static LLVMValueRef const_elem(cx_gen *g, const cxla_literal *lit, int64_t i) {
  cxla_type t = lit->shape.type;
  LLVMTypeRef rt = cx_cg_reg_type(g->cg, t);
  if (t == CXLA_PRED) return LLVMConstInt(rt, cx_load_i64(t, lit->data, i) != 0, 0);
  if (cx_type_is_float(t)) return LLVMConstReal(rt, cx_load_f64(t, lit->data, i));
  if (cx_type_is_complex(t)) {
    double re, im;
    cx_load_complex(t, lit->data, i, &re, &im);
    LLVMTypeRef pt = cx_cg_reg_type(g->cg, cx_type_part(t));
    LLVMValueRef parts[2] = {LLVMConstReal(pt, re), LLVMConstReal(pt, im)};
    return LLVMConstStructInContext(g->cg->llctx, parts, 2, 0);
  }
  return LLVMConstInt(rt, (unsigned long long)cx_load_i64(t, lit->data, i), 1);
}

static LLVMValueRef gen_constant(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  const cxla_literal *lit = in->a.literal;
  if (!lit || !cx_type_is_array(lit->shape.type)) return cx_gen_fail(g, in, "not an array constant");
  int64_t n = cx_shape_elems(&lit->shape);
  if (n == 1) return const_elem(g, lit, 0);
  /* Array constants become module globals in memory format, read like a parameter. */
  char name[160];
  snprintf(name, sizeof name, "%s.const.%d", g->kname ? g->kname : "k", in->id);
  LLVMValueRef gv = LLVMGetNamedGlobal(g->cg->mod, name);
  if (!gv) {
    int64_t bytes = cx_shape_bytes(&lit->shape);
    if (bytes < 0 || bytes > ((int64_t)1 << 31)) return cx_gen_fail(g, in, "constant too large");
    LLVMValueRef init = LLVMConstStringInContext2(g->cg->llctx, lit->data, (size_t)bytes, 1);
    gv = LLVMAddGlobalInAddressSpace(g->cg->mod, LLVMTypeOf(init), name, g->cg->target->addrspace_global);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(gv, 64);
  }
  return cx_cg_load(g->cg, lit->shape.type, gv, idx->lin);
}

/* ---- tuples ---- */

static int leaf_count(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < s->ntuple; i++) n += leaf_count(&s->tuple[i]);
  return n;
}

static int gen_tuple(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  int n = 0;
  LLVMValueRef tmp[CX_GEN_MAX_VALS];
  for (int k = 0; k < in->nops; k++) {
    int c = leaf_count(&in->ops[k]->shape);
    if (n + c > CX_GEN_MAX_VALS) { out[0] = cx_gen_fail(g, in, "tuple too large"); return 1; }
    int got = cx_gen_elem(g, in->ops[k], idx, tmp);
    for (int j = 0; j < c; j++) out[n + j] = j < got ? tmp[j] : LLVMGetUndef(g->cg->t_i32);
    n += c;
  }
  return n;
}

static int gen_gte(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  const cx_shape *ts = &in->ops[0]->shape;
  LLVMValueRef tmp[CX_GEN_MAX_VALS];
  if (ts->type != CXLA_TUPLE || in->a.index < 0 || in->a.index >= ts->ntuple ||
      leaf_count(ts) > CX_GEN_MAX_VALS) {
    out[0] = cx_gen_fail(g, in, "bad tuple index");
    return 1;
  }
  int got = cx_gen_elem(g, in->ops[0], idx, tmp), at = 0;
  for (int i = 0; i < in->a.index; i++) at += leaf_count(&ts->tuple[i]);
  int c = leaf_count(&ts->tuple[in->a.index]);
  for (int j = 0; j < c; j++) out[j] = at + j < got ? tmp[at + j] : cx_gen_fail(g, in, "missing value");
  return c;
}

/* ---- dispatch ---- */

LLVMValueRef cx_gen_operand(cx_gen *g, const cx_instr *in, int k, const cx_idx *idx) {
  const cx_instr *x = in->ops[k];
  if (x->shape.rank == 0 && in->shape.rank != 0) {
    cx_idx s = cx_idx_scalar(g);
    return cx_gen1(g, x, &s);
  }
  return cx_gen1(g, x, idx);
}

/* Ops whose values come from the kernel emitters (as overrides), never from a generator. */
static LLVMValueRef gen_reduce(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  (void)idx;
  return cx_gen_fail(g, in, "a reduce is only emitted as the result of a kInput fusion");
}
static LLVMValueRef gen_dot(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  (void)idx;
  return cx_gen_fail(g, in, "a dot is only emitted as the GEMM input of a kOutput epilogue");
}

static int gen_elementwise(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  LLVMValueRef a[3];
  if (in->nops < 1 || in->nops > 3) {
    out[0] = cx_gen_fail(g, in, "not supported by the emitter (runs on the interpreter)");
    return 1;
  }
  for (int k = 0; k < in->nops; k++) a[k] = cx_gen_operand(g, in, k, idx);
  out[0] = cx_gen_elementwise(g, in, a);
  return 1;
}

/* The generator of every op that is not plain elementwise (those have a row of builders in
 * an elemental*.c table instead): one value (one) or several (many); same_index: reads its
 * operands at its own linear index (elementwise ops all do). */
static const struct { cx_gen1_fn one; cx_gen_fn many; int same_index; } k_gen[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = {gen_param, .same_index = 1},
  [CX_OP_CONSTANT] = {gen_constant, .same_index = 1},
  [CX_OP_TUPLE] = {.many = gen_tuple, .same_index = 1},
  [CX_OP_GET_TUPLE_ELEMENT] = {.many = gen_gte, .same_index = 1},
  [CX_OP_IOTA] = {cx_gen_iota},
  [CX_OP_BROADCAST] = {cx_gen_broadcast},
  [CX_OP_RESHAPE] = {cx_gen_reshape, .same_index = 1},
  [CX_OP_BITCAST] = {cx_gen_reshape, .same_index = 1},
  [CX_OP_TRANSPOSE] = {cx_gen_transpose},
  [CX_OP_SLICE] = {cx_gen_slice},
  [CX_OP_REVERSE] = {cx_gen_reverse},
  [CX_OP_PAD] = {cx_gen_pad},
  [CX_OP_CONCATENATE] = {cx_gen_concatenate},
  [CX_OP_DYNAMIC_SLICE] = {cx_gen_dynamic_slice},
  [CX_OP_DYNAMIC_UPDATE_SLICE] = {cx_gen_dynamic_update_slice},
  [CX_OP_GATHER] = {cx_gen_gather},
  [CX_OP_BITCAST_CONVERT] = {cx_gen_bitcast_convert},
  [CX_OP_REDUCE_WINDOW] = {.many = cx_gen_reduce_window},
  [CX_OP_MAP] = {cx_gen_map},
  [CX_OP_SELECT_AND_SCATTER] = {cx_gen_select_and_scatter}, /* fused only where its windows are disjoint */
  [CX_OP_CONVOLUTION] = {cx_gen_convolution},
  [CX_OP_REDUCE] = {gen_reduce},
  [CX_OP_DOT] = {gen_dot, .same_index = 1}, /* the epilogue's override reads the GEMM result */
};

int cx_gen_reads_same_index(const cx_instr *in) {
  /* a width-changing one adds or consumes a trailing dimension */
  if (in->op == CX_OP_BITCAST_CONVERT) return in->shape.rank == in->ops[0]->shape.rank;
  return ((unsigned)in->op < CX_OP_COUNT && k_gen[in->op].same_index) || cx_op_is_elementwise(in->op);
}

int cx_emit_has_generator(cx_op op) {
  if ((unsigned)op >= CX_OP_COUNT) return 0;
  return k_gen[op].one || k_gen[op].many || cx_elem_hooks_of(op);
}

static int dispatch(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  if ((unsigned)in->op < CX_OP_COUNT && k_gen[in->op].many) return k_gen[in->op].many(g, in, idx, out);
  if ((unsigned)in->op < CX_OP_COUNT && k_gen[in->op].one) {
    out[0] = k_gen[in->op].one(g, in, idx);
    return 1;
  }
  if (cx_elem_hooks_of(in->op)) return gen_elementwise(g, in, idx, out);
  out[0] = cx_gen_fail(g, in, "not supported by the emitter (runs on the interpreter)");
  return 1;
}

int cx_gen_elem(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out) {
  for (int i = g->novr - 1; i >= 0; i--) {
    const cx_gen_override *o = &g->ovr[i];
    if (o->in != in) continue;
    if (o->ptr) {
      LLVMValueRef at = o->lin_off ? LLVMBuildSub(g->cg->b, idx->lin, o->lin_off, "") : idx->lin;
      out[0] = cx_cg_load(g->cg, in->shape.type, o->ptr, at);
      return 1;
    }
    memcpy(out, o->vals, sizeof *out * (size_t)o->nvals);
    return o->nvals;
  }
  cx_gen_entry *e = lookup(g, in, idx);
  if (e) {
    memcpy(out, g->pool + e->at, sizeof *out * (size_t)e->nvals);
    return e->nvals;
  }
  int n = dispatch(g, in, idx, out);
  insert(g, in, idx, n, out);
  return n;
}

LLVMValueRef cx_gen1(cx_gen *g, const cx_instr *in, const cx_idx *idx) {
  LLVMValueRef v[CX_GEN_MAX_VALS];
  int n = cx_gen_elem(g, in, idx, v);
  if (n != 1) return cx_gen_fail(g, in, "expected an array value, got %d values", n);
  return v[0];
}

int cx_gen_scalar_comp(cx_gen *g, const cx_comp *c, int nargs, LLVMValueRef *args, LLVMValueRef *out) {
  cx_gen_binding b = {c, NULL, args, nargs};
  if (!c || !c->root) {
    cx_cg_fail(g->cg, CXLA_ERR_INTERNAL, "codegen: called computation without a root");
    out[0] = LLVMGetUndef(g->cg->t_i32);
    return 1;
  }
  if (!cx_gen_push_binding(g, &b)) {
    out[0] = LLVMGetUndef(reg_type_of(g, c->root));
    return 1;
  }
  /* A computation inlined several times sees different arguments each time: nothing of it
   * may stay cached. */
  cx_gen_mark_t m = cx_gen_mark(g);
  cx_idx s = cx_idx_scalar(g);
  int n = cx_gen_elem(g, c->root, &s, out);
  cx_gen_restore(g, m);
  cx_gen_pop_binding(g);
  return n;
}

/* Bounded walk: a DAG with much sharing counts as expensive rather than taking long. */
static int expensive_walk(const cx_instr *in, int *budget) {
  if (in->op == CX_OP_PARAMETER || in->op == CX_OP_CONSTANT) return 0;
  if (cx_op_is_expensive(in->op) || --*budget < 0) return 1;
  for (int k = 0; k < in->nops; k++)
    if (expensive_walk(in->ops[k], budget)) return 1;
  return 0;
}

int cx_gen_subtree_expensive(const cx_instr *in) {
  int budget = 256;
  return expensive_walk(in, &budget);
}
