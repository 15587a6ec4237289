/* cse.c — common subexpression elimination: within one computation, an instruction identical
 * to an earlier one (same op, operands, shape with layout, attributes, literal bits and called
 * computations) is replaced by it. Instructions are visited in order with operands already
 * redirected, so whole identical trees merge in one sweep; a hash table keeps it linear.
 * Never merged: parameters, ops with side effects or that backends do not model (the OTHER
 * class: rng, custom-call, infeed, after-all, collectives, ...), and calls/loops whose
 * computations have side effects. */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_ints(uint64_t h, const cx_ints *v) {
  h = mix(h, (uint64_t)v->n);
  for (int i = 0; i < v->n; i++) h = mix(h, (uint64_t)v->v[i]);
  return h;
}

static uint64_t hash_instr(const cx_instr *in) {
  uint64_t h = mix((uint64_t)in->op, (uint64_t)in->shape.type);
  for (int i = 0; i < in->shape.rank; i++) h = mix(h, (uint64_t)in->shape.dims[i]);
  for (int j = 0; j < in->nops; j++) h = mix(h, (uint64_t)(uintptr_t)in->ops[j]);
  for (int k = 0; k < in->ncalled; k++) h = mix(h, (uint64_t)(uintptr_t)in->called[k]);
  h = mix(h, (uint64_t)in->a.index);
  h = hash_ints(h, &in->a.dims);
  h = hash_ints(h, &in->a.slice_start);
  const cxla_literal *l = in->a.literal;
  if (l && cx_type_is_array(l->shape.type)) { /* a prefix is enough to spread constants */
    int64_t nb = cx_shape_bytes(&l->shape);
    const unsigned char *d = l->data;
    for (int64_t i = 0; i < nb && i < 64; i++) h = mix(h, d[i]);
  }
  return h;
}

static int ints_eq(const cx_ints *a, const cx_ints *b) {
  return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, sizeof *a->v * (size_t)a->n));
}

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int shapes_eq(const cx_shape *a, const cx_shape *b) {
  if (!cx_shape_equal(a, b) || a->dynamic != b->dynamic || !cx_shape_same_layout(a, b)) return 0;
  if (a->type == CXLA_TUPLE) {
    for (int i = 0; i < a->ntuple; i++)
      if (!shapes_eq(&a->tuple[i], &b->tuple[i])) return 0;
  }
  return 1;
}

/* Unmodelled attributes matter (precision_config, ...), except metadata, which only says
 * where an instruction came from. */
static int raw_eq(const cx_attrs *a, const cx_attrs *b) {
  int na = 0, nb = 0;
  for (int i = 0; i < a->nraw; i++) na += strcmp(a->raw[i].key, "metadata") != 0;
  for (int i = 0; i < b->nraw; i++) nb += strcmp(b->raw[i].key, "metadata") != 0;
  if (na != nb) return 0;
  for (int i = 0; i < a->nraw; i++) {
    if (!strcmp(a->raw[i].key, "metadata")) continue;
    int found = 0;
    for (int j = 0; j < b->nraw && !found; j++)
      found = !strcmp(a->raw[i].key, b->raw[j].key) && !strcmp(a->raw[i].value, b->raw[j].value);
    if (!found) return 0;
  }
  return 1;
}

static int window_eq(const cx_window *a, const cx_window *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++) {
    const cx_window_dim *x = &a->d[i], *y = &b->d[i];
    if (x->size != y->size || x->stride != y->stride || x->pad_lo != y->pad_lo || x->pad_hi != y->pad_hi ||
        x->lhs_dilate != y->lhs_dilate || x->rhs_dilate != y->rhs_dilate || x->reversal != y->reversal)
      return 0;
  }
  return 1;
}

static int conv_eq(const cx_attrs *a, const cx_attrs *b) {
  if (!a->conv != !b->conv) return 0;
  if (!a->conv) return 1;
  const cx_conv_dims *x = a->conv, *y = b->conv;
  if (x->nspatial != y->nspatial || x->in_batch != y->in_batch || x->in_feature != y->in_feature ||
      x->k_in != y->k_in || x->k_out != y->k_out || x->out_batch != y->out_batch || x->out_feature != y->out_feature)
    return 0;
  for (int i = 0; i < x->nspatial && i < CXLA_MAX_RANK; i++)
    if (x->in_spatial[i] != y->in_spatial[i] || x->k_spatial[i] != y->k_spatial[i] ||
        x->out_spatial[i] != y->out_spatial[i])
      return 0;
  return 1;
}

static int attrs_eq(const cx_attrs *a, const cx_attrs *b) {
  const cx_gather_dims *g = &a->gather, *h = &b->gather;
  const cx_scatter_dims *s = &a->scatter, *t = &b->scatter;
  return ints_eq(&a->dims, &b->dims) && a->index == b->index && a->dir == b->dir && a->cmp_type == b->cmp_type &&
         ints_eq(&a->slice_start, &b->slice_start) && ints_eq(&a->slice_limit, &b->slice_limit) &&
         ints_eq(&a->slice_stride, &b->slice_stride) && ints_eq(&a->pad_lo, &b->pad_lo) &&
         ints_eq(&a->pad_hi, &b->pad_hi) && ints_eq(&a->pad_interior, &b->pad_interior) &&
         ints_eq(&a->dot.lhs_batch, &b->dot.lhs_batch) && ints_eq(&a->dot.rhs_batch, &b->dot.rhs_batch) &&
         ints_eq(&a->dot.lhs_contract, &b->dot.lhs_contract) && ints_eq(&a->dot.rhs_contract, &b->dot.rhs_contract) &&
         window_eq(&a->window, &b->window) && conv_eq(a, b) &&
         a->feature_group_count == b->feature_group_count && a->batch_group_count == b->batch_group_count &&
         ints_eq(&g->offset_dims, &h->offset_dims) && ints_eq(&g->collapsed_slice_dims, &h->collapsed_slice_dims) &&
         ints_eq(&g->start_index_map, &h->start_index_map) &&
         ints_eq(&g->operand_batching_dims, &h->operand_batching_dims) &&
         ints_eq(&g->start_indices_batching_dims, &h->start_indices_batching_dims) &&
         ints_eq(&g->slice_sizes, &h->slice_sizes) && g->index_vector_dim == h->index_vector_dim &&
         g->indices_are_sorted == h->indices_are_sorted &&
         ints_eq(&s->update_window_dims, &t->update_window_dims) &&
         ints_eq(&s->inserted_window_dims, &t->inserted_window_dims) &&
         ints_eq(&s->scatter_dims_to_operand_dims, &t->scatter_dims_to_operand_dims) &&
         ints_eq(&s->input_batching_dims, &t->input_batching_dims) &&
         ints_eq(&s->scatter_indices_batching_dims, &t->scatter_indices_batching_dims) &&
         s->index_vector_dim == t->index_vector_dim && s->indices_are_sorted == t->indices_are_sorted &&
         s->unique_indices == t->unique_indices && a->is_stable == b->is_stable &&
         a->exponent_bits == b->exponent_bits && a->mantissa_bits == b->mantissa_bits &&
         str_eq(a->fusion_kind, b->fusion_kind) && str_eq(a->custom_call_target, b->custom_call_target) &&
         (a->literal == b->literal || (a->literal && b->literal && cx_literal_equal(a->literal, b->literal))) &&
         raw_eq(a, b);
}

static int instr_eq(const cx_instr *a, const cx_instr *b) {
  if (a->op != b->op || a->nops != b->nops || a->ncalled != b->ncalled || !shapes_eq(&a->shape, &b->shape)) return 0;
  for (int j = 0; j < a->nops; j++)
    if (a->ops[j] != b->ops[j]) return 0;
  for (int k = 0; k < a->ncalled; k++)
    if (a->called[k] != b->called[k]) return 0;
  return attrs_eq(&a->a, &b->a);
}

static int mergeable(const cx_instr *in) {
  return in->op != CX_OP_PARAMETER && cx_op_class_of(in->op) != CX_CLASS_OTHER && !cx_instr_is_effectful(in);
}

static cxla_status cse_comp(cx_comp *c, int *changed) {
  size_t cap = 16;
  while (cap < 2 * (size_t)c->ninstrs) cap *= 2;
  cx_instr **table = cx_calloc(cap, sizeof *table);
  if (!table) return cx_oom(c->module->ctx);
  int merged = 0;
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    for (int j = 0; j < in->nops; j++)
      if (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux; /* representatives are never replaced */
    if (!mergeable(in)) continue;
    size_t h = (size_t)hash_instr(in) & (cap - 1);
    while (table[h] && !instr_eq(table[h], in)) h = (h + 1) & (cap - 1);
    if (table[h]) {
      in->aux = table[h];
      merged++;
    } else {
      table[h] = in;
    }
  }
  cx_free(table);
  if (merged) {
    /* the representative comes earlier than every instruction it replaces, so the order
     * stays topological once the replaced ones are gone */
    if (c->root && c->root->aux) c->root = c->root->aux;
    int n = 0;
    for (int i = 0; i < c->ninstrs; i++)
      if (!c->instrs[i]->aux) c->instrs[n++] = c->instrs[i];
    c->ninstrs = n;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  *changed += merged;
  return CXLA_OK;
}

cxla_status cx_pass_cse(cx_module *m, int *changed) {
  *changed = 0;
  cx_module_mark_effectful(m);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) s = cse_comp(m->comps[i], changed);
  cx_module_clear_comp_aux(m);
  return s;
}
