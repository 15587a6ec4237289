/* reduce_plan.c — analysis of kInput fusions for reduce_emit.c: the reduces (single or
 * variadic, all over the same input dims and reduced dims), row vs column strategy, and how
 * each output is produced: after its reduction (the reduce itself or an epilogue that reads
 * reduce results only at the output's linear index, e.g. log(sum(x)) or sum(x)/N), or while
 * the input is read (an input-shaped output such as the exp of softmax). */
#include <stdio.h>
#include <string.h>
#include "codegen/emit.h"

const char *cx_emit_why(const char *fmt, ...) {
  static _Thread_local char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

/* Depth-first search with a visit budget; running out answers "yes" (the callers then take
 * the conservative path: unsupported, or the slower correct one). */
static int dep_walk(const cx_instr *x, const cx_instr *target, const cx_instr **seen, int *nseen) {
  if (x == target || (!target && x->op == CX_OP_REDUCE)) return 1;
  for (int i = 0; i < *nseen; i++)
    if (seen[i] == x) return 0;
  if (*nseen >= 512) return 1;
  seen[(*nseen)++] = x;
  for (int k = 0; k < x->nops; k++)
    if (dep_walk(x->ops[k], target, seen, nseen)) return 1;
  return 0;
}

int cx_emit_depends_on(const cx_instr *x, const cx_instr *target) {
  const cx_instr *seen[512];
  int n = 0;
  return dep_walk(x, target, seen, &n);
}

static int same_index_walk(const cx_instr *x, const cx_instr *target, int64_t count, int *budget) {
  if (x == target || !cx_emit_depends_on(x, target)) return 1;
  if (--*budget < 0) return 0;
  /* a tuple holds several values: only its elements' users are followed */
  if (x->op == CX_OP_TUPLE || !cx_gen_reads_same_index(x)) return 0;
  if (x->op != CX_OP_GET_TUPLE_ELEMENT && cx_shape_elems(&x->shape) != count) return 0;
  for (int k = 0; k < x->nops; k++)
    if (!same_index_walk(x->ops[k], target, count, budget)) return 0;
  return 1;
}

int cx_emit_reads_at_same_index(const cx_instr *x, const cx_instr *target, int64_t count) {
  int budget = 4096;
  return same_index_walk(x, target, count, &budget);
}

static int same_dim_set(const cx_ints *a, const cx_ints *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) {
    int found = 0;
    for (int j = 0; j < b->n; j++) found |= a->v[i] == b->v[j];
    if (!found) return 0;
  }
  return 1;
}

static int leaf_count(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < s->ntuple; i++) n += leaf_count(&s->tuple[i]);
  return n;
}

static int add_leaf(cx_red_plan *p, const cx_instr *x, int v) {
  if (p->nleaves >= CX_EMIT_MAX_ARGS) return 0;
  p->leaf[p->nleaves] = x;
  p->leaf_val[p->nleaves++] = v;
  return 1;
}

/* Row fusion (passes/fusion_row.c): x, in the input's index space, reads reduce r only as a
 * per-row value: every path from x to r runs through elementwise ops over the input's
 * elements, then a broadcast of r's result onto the leading (kept) dims, then ops that read r
 * at that same output index. Such reads see r's final value for the row being computed. */
static int is_plan_reduce(const cx_red_plan *p, const cx_instr *x) {
  for (int q = 0; q < p->nred; q++)
    if (p->red[q] == x) return 1;
  return 0;
}

/* In the output's index space: x reads r (or another of the plan's reduces, a row value in
 * its own right) only at the same index. */
static int row_value_walk(const cx_instr *x, const cx_instr *r, const cx_red_plan *p, int *budget) {
  if (x == r || is_plan_reduce(p, x) || !cx_emit_depends_on(x, r)) return 1;
  if (--*budget < 0) return 0;
  if (x->op != CX_OP_RESHAPE && x->op != CX_OP_BITCAST && x->op != CX_OP_COPY && !cx_op_is_elementwise(x->op))
    return 0;
  if (cx_shape_elems(&x->shape) != cx_shape_elems(&p->out)) return 0;
  for (int k = 0; k < x->nops; k++)
    if (!row_value_walk(x->ops[k], r, p, budget)) return 0;
  return 1;
}

static int row_walk(const cx_instr *x, const cx_instr *r, const cx_red_plan *p, int *budget) {
  if (!cx_emit_depends_on(x, r)) return 1;
  if (x == r || --*budget < 0) return 0;
  int64_t in_count = cx_shape_elems(&p->in);
  if (x->op == CX_OP_BROADCAST) {
    if (!cx_shape_same_dims(&x->shape, &p->in) || x->a.dims.n != p->out.rank) return 0;
    for (int d = 0; d < p->out.rank; d++)
      if (x->a.dims.v[d] != d) return 0;
    return row_value_walk(x->ops[0], r, p, budget);
  }
  if (!cx_op_is_elementwise(x->op) || cx_shape_elems(&x->shape) != in_count) return 0;
  for (int k = 0; k < x->nops; k++)
    if (!row_walk(x->ops[k], r, p, budget)) return 0;
  return 1;
}

static int reads_rows_of(const cx_instr *x, const cx_instr *r, const cx_red_plan *p) {
  int budget = 4096;
  return row_walk(x, r, p, &budget);
}

/* In the input's index space: x reads `target` (not a reduce) only at its own index, or
 * through the plan's reduces (whose values are overridden, so target is not recomputed). */
static int same_index_input_walk(const cx_instr *x, const cx_instr *target, const cx_red_plan *p, int *budget) {
  if (x == target || is_plan_reduce(p, x) || !cx_emit_depends_on(x, target)) return 1;
  if (--*budget < 0) return 0;
  if (x->op == CX_OP_BROADCAST) return row_value_walk(x->ops[0], target, p, budget);
  if (!cx_op_is_elementwise(x->op) || cx_shape_elems(&x->shape) != cx_shape_elems(&p->in)) return 0;
  for (int k = 0; k < x->nops; k++)
    if (!same_index_input_walk(x->ops[k], target, p, budget)) return 0;
  return 1;
}

/* Picks what the last pass of a row fusion reads back from an output instead of computing
 * it again: the data operand of a last-stage reduce that an output of its type reads at the
 * same index only. */
static void plan_stash(cx_red_plan *p, const cx_shape *const *leaves) {
  p->stash = NULL;
  p->stash_leaf = -1;
  if (p->nstages < 2) return;
  for (int r = 0; r < p->nred && !p->stash; r++) {
    const cx_instr *x = p->red[r]->ops[0];
    if (p->stage[r] != p->nstages - 1 || p->red[r]->nops != 2 || !cx_shape_same_dims(&x->shape, &p->in)) continue;
    for (int i = 0; i < p->nleaves && !p->stash; i++) {
      int budget = 4096;
      if (p->leaf_in[i] == 2 && leaves[i]->type == x->shape.type && p->leaf_val[i] == 0 &&
          cx_emit_depends_on(p->leaf[i], x) && same_index_input_walk(p->leaf[i], x, p, &budget)) {
        p->stash = x;
        p->stash_leaf = i;
      }
    }
  }
}

/* Row fusion needs the reduced dims to be the trailing ones (a row is contiguous). */
static int trailing_reduce(const cx_red_plan *p) {
  int nk = p->out.rank;
  for (int d = 0; d < p->in.rank; d++)
    if (p->reduced[d] != (d >= nk)) return 0;
  return p->row;
}

/* Stages of the reduces; 0 with a reason if a reduce reads another one in a way the row
 * kernel cannot do. */
static int plan_stages(cx_red_plan *p, const char **why) {
  p->nstages = 1;
  for (int r = 0; r < p->nred; r++) {
    const cx_instr *red = p->red[r];
    int n = red->nops / 2;
    for (int k = 0; k < n; k++)
      if (cx_emit_depends_on(red->ops[n + k], NULL))
        return *why = cx_emit_why("%s: init value computed from a reduce", red->name), 0;
    for (int q = 0; q < p->nred; q++) {
      if (q == r) continue;
      int dep = 0;
      for (int k = 0; k < n; k++) dep |= cx_emit_depends_on(red->ops[k], p->red[q]);
      if (!dep) continue;
      if (q > r || !trailing_reduce(p))
        return *why = cx_emit_why("%s reads %s other than as a row value", red->name, p->red[q]->name), 0;
      for (int k = 0; k < n; k++)
        if (!reads_rows_of(red->ops[k], p->red[q], p))
          return *why = cx_emit_why("%s reads %s other than as a row value", red->name, p->red[q]->name), 0;
      if (p->stage[r] < p->stage[q] + 1) p->stage[r] = p->stage[q] + 1;
    }
    if (p->stage[r] + 1 > p->nstages) p->nstages = p->stage[r] + 1;
  }
  return 1;
}

int cx_red_plan_make(const cx_instr *fusion, cx_red_plan *p, const char **why) {
  const cx_comp *c = fusion->called[0];
  memset(p, 0, sizeof *p);
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *r = c->instrs[i];
    if (r->op != CX_OP_REDUCE) continue;
    if (p->nred >= CX_EMIT_MAX_REDUCES) return *why = "too many reduces in one fusion", 0;
    int n = r->nops / 2;
    if (n < 1 || r->nops != 2 * n || r->ncalled != 1 || n > CX_GEN_MAX_VALS)
      return *why = cx_emit_why("%s: malformed reduce", r->name), 0;
    for (int k = 0; k < n; k++)
      if (!cx_shape_same_dims(&r->ops[k]->shape, &r->ops[0]->shape) || r->ops[n + k]->shape.rank != 0)
        return *why = cx_emit_why("%s: operands of different dims", r->name), 0;
    if (p->nred && (!cx_shape_same_dims(&r->ops[0]->shape, &p->red[0]->ops[0]->shape) ||
                    !same_dim_set(&r->a.dims, &p->red[0]->a.dims)))
      return *why = cx_emit_why("%s: reduces over different dims in one fusion", r->name), 0;
    p->red[p->nred++] = r;
  }
  if (!p->nred) return *why = "no reduce", 0;
  const cx_instr *r0 = p->red[0];
  p->in = cx_shape_array(CXLA_F32, r0->ops[0]->shape.rank, r0->ops[0]->shape.dims);
  int64_t od[CXLA_MAX_RANK];
  int ro = 0;
  for (int i = 0; i < r0->a.dims.n; i++) {
    int64_t d = r0->a.dims.v[i];
    if (d < 0 || d >= p->in.rank || p->reduced[d]) return *why = "bad reduce dimensions", 0;
    p->reduced[d] = 1;
  }
  for (int d = 0; d < p->in.rank; d++)
    if (!p->reduced[d]) od[ro++] = p->in.dims[d];
  p->out = cx_shape_array(CXLA_F32, ro, od);
  p->inner = p->in.rank - 1;
  while (p->inner >= 0 && p->in.dims[p->inner] == 1) p->inner--;
  p->row = p->inner < 0 || p->reduced[p->inner];
  if (!plan_stages(p, why)) return 0;

  /* the outputs, in the fusion's DFS order */
  const cx_instr *root = c->root;
  int ok = 1;
  if (root->op == CX_OP_TUPLE) {
    for (int k = 0; k < root->nops && ok; k++)
      for (int v = 0; v < leaf_count(&root->ops[k]->shape) && ok; v++) ok = add_leaf(p, root->ops[k], v);
  } else {
    for (int v = 0; v < leaf_count(&root->shape) && ok; v++) ok = add_leaf(p, root, v);
  }
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  if (!ok || nout != p->nleaves) return *why = "unsupported output structure", 0;
  int64_t ocount = cx_shape_elems(&p->out);
  for (int i = 0; i < p->nleaves; i++) {
    const cx_instr *x = p->leaf[i];
    int dep = cx_emit_depends_on(x, NULL);
    int rows = dep && cx_shape_same_dims(leaves[i], &p->in) && trailing_reduce(p);
    for (int r = 0; r < p->nred && rows; r++) rows = reads_rows_of(x, p->red[r], p);
    if (rows) {
      p->leaf_in[i] = 2;
    } else if (dep) {
      for (int r = 0; r < p->nred; r++) {
        int budget = 4096; /* through a later-stage reduce, r is read as that reduce's input */
        if (!cx_emit_reads_at_same_index(x, p->red[r], ocount) && !row_value_walk(x, p->red[r], p, &budget))
          return *why = cx_emit_why("%s reads a reduce result other than at its own index", x->name), 0;
      }
      if (cx_shape_elems(leaves[i]) != ocount) return *why = "output size differs from the reduce's", 0;
    } else if (cx_shape_same_dims(leaves[i], &p->in)) {
      p->leaf_in[i] = 1;
    } else if (cx_shape_elems(leaves[i]) != ocount) {
      return *why = cx_emit_why("output %d has neither the reduce input nor output size", i), 0;
    }
  }
  plan_stash(p, leaves);
  return 1;
}

/* ---- splitting a column reduction over blocks of its reduced positions ----
 * Threads that split a column reduction's outputs each read a narrow strided slice of every
 * input row (a bias gradient's 512 columns: two threads took 45-68 us where one took 39), so
 * few outputs over many rows are split over blocks of rows instead: each block folds into a
 * partial row of every output, then the partial rows are combined. The split depends on the
 * shapes only, never on the threads, so a result has the same bits on any pool. */
#define SPLIT_OUT_MAX 4096                        /* more outputs: their slices are wide enough */
#define SPLIT_BLOCK_BYTES ((int64_t)64 << 10)     /* the least input of a block (4-byte elements) */
#define SPLIT_BLOCKS_MAX 16                       /* partial rows each output combines */
#define SPLIT_CHUNK_BYTES ((int64_t)128 << 10)    /* the least input of a thread's share */

/* The init value x of a reduce is a constant +0 or -0 inside the fused computation (the fusion
 * passes fuse scalar constants; an operand's value is not looked at, a kernel may be called
 * with any). */
static int zero_constant(const cx_instr *x) {
  if (x->op != CX_OP_CONSTANT || !x->a.literal || !x->a.literal->data || cx_shape_elems(&x->shape) != 1) return 0;
  size_t n = cxla_type_size(x->shape.type);
  const unsigned char *d = x->a.literal->data;
  for (size_t i = 0; i < n; i++) /* little-endian: the sign is the last byte's top bit */
    if (d[i] & (i + 1 == n && cx_type_is_float(x->shape.type) ? 0x7f : 0xff)) return 0;
  return 1;
}

/* Partial results of reduce r combine like its terms: one add, maximum, minimum, and or or of
 * its two parameters, on a real type the emitter keeps exactly (f16, bf16, f32, f64) or an
 * integer or pred, and an init value that every block may start from (combined with itself
 * it stays the same: any for max, min, and, or; zero for add). */
static int combinable(const cx_instr *r) {
  if (r->nops != 2 || r->ncalled != 1) return 0;
  cxla_type t = r->shape.type;
  int real = t == CXLA_F16 || t == CXLA_BF16 || t == CXLA_F32 || t == CXLA_F64;
  if (!real && t != CXLA_PRED && !(cx_type_is_int(t) && cx_type_bits(t) >= 8)) return 0;
  const cx_instr *x = cx_comp_binary_of_params(r->called[0]);
  if (!x) return 0;
  return cx_op_is_idempotent(x->op) || (x->op == CX_OP_ADD && zero_constant(r->ops[1]));
}

void cx_red_plan_split(cx_red_plan *p) {
  p->blocks = p->block_rows = p->scratch = p->parts_grain = 0;
  int64_t outs = cx_shape_elems(&p->out), rows = 1;
  for (int d = 0; d < p->in.rank; d++)
    if (p->reduced[d]) rows *= p->in.dims[d];
  if (p->row || p->nstages != 1 || outs < 1 || outs > SPLIT_OUT_MAX || rows < 2) return;
  for (int r = 0; r < p->nred; r++)
    if (!combinable(p->red[r])) return;
  int64_t nb = rows * outs * 4 / SPLIT_BLOCK_BYTES;
  if (nb > SPLIT_BLOCKS_MAX) nb = SPLIT_BLOCKS_MAX;
  if (nb < 2) return;
  int64_t br = (rows + nb - 1) / nb;
  /* whole runs of the innermost reduced dim, so a block's loop over them needs no division
   * per position (emit_column); the same for any pool still */
  int64_t run = 1;
  for (int d = p->in.rank - 1; d >= 0 && run == 1; d--)
    if (p->reduced[d]) run = p->in.dims[d];
  if (run > 1 && run <= br) br = (br + run - 1) / run * run;
  p->blocks = (rows + br - 1) / br;
  p->block_rows = br;
  for (int r = 0; r < p->nred; r++)
    p->scratch += (p->blocks * outs * (int64_t)cxla_type_size(p->red[r]->shape.type) + 63) / 64 * 64;
  p->parts_grain = (SPLIT_CHUNK_BYTES + br * outs * 4 - 1) / (br * outs * 4);
}
