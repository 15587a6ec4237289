/* buffers.c — buffer assignment for the CPU backend (contract in buffers.h).
 *
 * Three steps, in the spirit of XLA's dataflow analysis / BufferAssigner / HeapSimulator:
 *  1. Values: every array leaf that an instruction defines is a value; tuple, get-tuple-element,
 *     parameters of nested computations, calls, reshapes, default-layout bitcasts, opt-barriers
 *     and re-labelling fusions name existing values instead of defining new ones. Each value's
 *     live range is measured on the program timeline (buffers_int.h), extended to the end of
 *     any loop that reads it without defining it.
 *  2. Buffers (= slots): values share a buffer where the program needs no copy — a fusion
 *     writing over an operand that dies there (where its plan says in_place), a
 *     while loop's state taking over an init operand that dies at the loop. ENTRY result
 *     leaves become OUTPUT buffers; where that is impossible (parameter, constant, a value
 *     appearing twice) a `copy` is inserted and the analysis re-run; likewise for while-body
 *     results that sit in another element's state buffer (a swap needs a temporary).
 *  3. Placement: TEMP buffers go into one arena by best fit (buffers_heap.c). */
#include <stdlib.h>
#include <string.h>
#include "ir/edit.h"
#include "passes/buffers.h"
#include "passes/buffers_int.h"
#include "passes/fusion_plan.h"

typedef enum { V_TEMP, V_PARAM, V_CONST } vkind;

typedef struct value {
  vkind kind;
  int64_t size, def, last;
  cx_instr *in;              /* defining instruction (TEMP) */
  int leaf;                  /* PARAM: leaf within the parameter */
  int param;
  const cxla_literal *lit;   /* CONST */
  int buf;
  /* A while loop's state element: the body's time range, and the last time (inner loops
   * counted as a whole) the body reads this element, for updates in place. */
  const cx_instr *state_of;
  int64_t body_s, body_e, body_last;
  /* A loop state element the body passes on unchanged, kept in its init value's buffer
   * (memory the program may not write: a parameter, a constant, a value still read later):
   * never written, so nothing may run in place over it. */
  int borrowed;
} value;

typedef struct buf {
  cx_slot_kind kind;
  int64_t size, start, end;
  int param, leaf;
  int out_leaf;              /* PARAM: the ENTRY result leaf computed in it (donation), or -1 */
  const cxla_literal *lit;
  int owner;                 /* the latest value placed in it */
} buf;

typedef struct an {
  cx_module *m;
  cx_sched s;
  value *v;
  int nv;
  int64_t vcap;
  buf *b;
  int nb;
  int64_t bcap;
  int **vals;                /* [id] -> value per leaf */
  int *nleaves;
  int64_t loop_s[256], loop_e[256];
  int nloops;
  const uint8_t *donated;    /* ENTRY parameters whose memory the program may write */
  int ndonated;
  int *alias_leaf;           /* [ENTRY parameter p] the result leaf input_output_alias pairs p
                                with, or -1: where that result leaf goes first */
} an;

/* ---- values ---- */

static int new_value(an *a, vkind k, int64_t size, int64_t def) {
  if (!cx_vec_reserve((void **)&a->v, &a->vcap, a->nv + 1, sizeof *a->v)) return -1;
  value *x = &a->v[a->nv];
  memset(x, 0, sizeof *x);
  x->kind = k;
  x->size = size;
  x->def = x->last = def;
  x->buf = -1;
  return a->nv++;
}

static void use(an *a, int v, int64_t t) {
  value *x = &a->v[v];
  if (t > x->last) x->last = t;
  /* a loop re-reads what it did not define on every iteration */
  for (int i = 0; i < a->nloops; i++)
    if (x->def <= a->loop_s[i] && a->loop_e[i] > x->last) x->last = a->loop_e[i];
  if (x->state_of && t >= x->body_s && t <= x->body_e) {
    int64_t e = t;
    for (int i = 0; i < a->nloops; i++) /* loops inside the body re-read it until they end */
      if (a->loop_s[i] > x->def && a->loop_e[i] > e) e = a->loop_e[i];
    if (e > x->body_last) x->body_last = e;
  }
}

static void use_all(an *a, const cx_instr *x, int64_t t) {
  for (int l = 0; l < a->nleaves[x->id]; l++) use(a, a->vals[x->id][l], t);
}

static const cxla_literal *literal_leaf(const cxla_literal *lit, int *i) {
  if (lit->shape.type != CXLA_TUPLE) {
    if (!cx_type_is_array(lit->shape.type)) return NULL;
    return (*i)-- == 0 ? lit : NULL;
  }
  for (int k = 0; k < lit->nelems; k++) {
    const cxla_literal *r = literal_leaf(lit->elems[k], i);
    if (r) return r;
  }
  return NULL;
}

/* An instruction whose value is its one operand's: an aliasing raw op, or a fusion whose plan
 * says it only re-labels its operand. */
static int names_operand(const cx_instr *in) {
  if (in->nops != 1) return 0;
  if (in->op == CX_OP_FUSION) return in->plan && in->plan->relabels;
  return cx_buffers_instr_is_alias(in);
}

/* Copies of n value ids into a fresh per-instruction array. */
static int set_vals(an *a, const cx_instr *in, const int *src, int n) {
  int *d = cx_malloc(sizeof *d * (size_t)(n ? n : 1));
  if (!d) return 0;
  if (n) memcpy(d, src, sizeof *d * (size_t)n);
  a->vals[in->id] = d;
  a->nleaves[in->id] = n;
  return 1;
}

static int define_all(an *a, cx_instr *in, int64_t t) {
  int n = cx_shape_leaf_count(&in->shape);
  int *d = cx_malloc(sizeof *d * (size_t)(n ? n : 1));
  if (!d) return 0;
  a->vals[in->id] = d;
  a->nleaves[in->id] = n;
  for (int l = 0; l < n; l++) {
    if ((d[l] = new_value(a, V_TEMP, cx_shape_bytes(cx_shape_leaf(&in->shape, l)), t)) < 0) return 0;
    a->v[d[l]].in = in;
    a->v[d[l]].leaf = l;
  }
  return 1;
}

static cxla_status walk(an *a, cx_comp *c, int *const *bind, const int *nbind, int nb);

/* Walks a callee with its parameters bound to the given operands' values. */
static cxla_status walk_with(an *a, cx_comp *c, cx_instr *const *ops, int nops) {
  int *bind_stack[8], nb_stack[8];
  int **bind = nops <= 8 ? bind_stack : cx_malloc(sizeof *bind * (size_t)nops);
  int *nb = nops <= 8 ? nb_stack : cx_malloc(sizeof *nb * (size_t)nops);
  cxla_status s = CXLA_OK;
  if (!bind || !nb) s = cx_oom(a->m->ctx);
  for (int i = 0; s == CXLA_OK && i < nops; i++) {
    bind[i] = a->vals[ops[i]->id];
    nb[i] = a->nleaves[ops[i]->id];
  }
  if (s == CXLA_OK) s = walk(a, c, bind, nb, nops);
  if (bind != bind_stack) cx_free(bind);
  if (nb != nb_stack) cx_free(nb);
  return s;
}

/* How each instruction defines or names values (walk_computed for every op not listed). */
typedef cxla_status (*walker)(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind);

static cxla_status walk_while(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  int64_t t0 = a->s.t0[in->id], t1 = a->s.t1[in->id];
  use_all(a, in->ops[0], t0);
  if (!define_all(a, in, t0)) return cx_oom(a->m->ctx);
  /* The state lives through the whole loop even where nothing in it reads an element: every
   * trip ends by writing the body's results into it. */
  int64_t bs = cx_sched_ret(&a->s, in->called[0]) + 1, be = cx_sched_ret(&a->s, in->called[1]);
  for (int l = 0; l < a->nleaves[in->id]; l++) {
    value *x = &a->v[a->vals[in->id][l]];
    x->state_of = in;
    x->body_s = bs;
    x->body_e = be;
    x->body_last = -1;
    use(a, a->vals[in->id][l], t1);
  }
  if (a->nloops >= CX_ARRAY_LEN(a->loop_s)) return cx_error(a->m->ctx, CXLA_ERR_UNSUPPORTED, "while loops nested too deep");
  a->loop_s[a->nloops] = t0;
  a->loop_e[a->nloops] = t1;
  a->nloops++;
  for (int k = 0; k < 2; k++) {
    cx_comp *c = in->called[k];
    CX_TRY(walk_with(a, c, &in, 1)); /* parameter = the loop state (this instruction's values) */
    use_all(a, c->root, cx_sched_ret(&a->s, c));
  }
  a->nloops--;
  return CXLA_OK;
}

static cxla_status walk_parameter(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  int n = cx_shape_leaf_count(&in->shape);
  int64_t p = in->a.index;
  if (bind) {
    if (p < 0 || nbind[p] != n) return cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "%s: parameter %s does not match its operand", c->name, in->name);
    return set_vals(a, in, bind[p], n) ? CXLA_OK : cx_oom(a->m->ctx);
  }
  if (!define_all(a, in, -1)) return cx_oom(a->m->ctx);
  for (int l = 0; l < n; l++) {
    value *x = &a->v[a->vals[in->id][l]];
    x->kind = V_PARAM;
    x->param = (int)p;
    x->leaf = l;
  }
  return CXLA_OK;
}

static cxla_status walk_constant(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  cx_module *m = a->m;
  int n = cx_shape_leaf_count(&in->shape);
  if (!in->a.literal) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "constant %s has no literal", in->name);
  if (!define_all(a, in, a->s.t0[in->id])) return cx_oom(m->ctx);
  for (int l = 0; l < n; l++) {
    int i = l;
    value *x = &a->v[a->vals[in->id][l]];
    x->kind = V_CONST;
    if (!(x->lit = literal_leaf(in->a.literal, &i))) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "constant %s: literal does not match its shape", in->name);
  }
  return CXLA_OK;
}

static cxla_status walk_tuple(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  cx_module *m = a->m;
  int n = cx_shape_leaf_count(&in->shape);
  int *tmp = cx_malloc(sizeof *tmp * (size_t)(n ? n : 1)), k = 0;
  if (!tmp) return cx_oom(m->ctx);
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < a->nleaves[in->ops[j]->id] && k < n; l++) tmp[k++] = a->vals[in->ops[j]->id][l];
  int ok = k == n && set_vals(a, in, tmp, n);
  cx_free(tmp);
  return ok ? CXLA_OK : k != n ? cx_error(m->ctx, CXLA_ERR_INTERNAL, "tuple %s: leaf count mismatch", in->name) : cx_oom(m->ctx);
}

static cxla_status walk_gte(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  int n = cx_shape_leaf_count(&in->shape);
  const cx_instr *t = in->ops[0];
  int off = cx_shape_leaf_offset(&t->shape, (int)in->a.index);
  if (off + n > a->nleaves[t->id]) return cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "%s: element out of range", in->name);
  return set_vals(a, in, a->vals[t->id] + off, n) ? CXLA_OK : cx_oom(a->m->ctx);
}

static cxla_status walk_conditional(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  int64_t t0 = a->s.t0[in->id];
  int n = cx_shape_leaf_count(&in->shape);
  use_all(a, in->ops[0], t0);
  for (int k = 0; k < in->ncalled; k++) {
    cx_comp *b = in->called[k];
    CX_TRY(walk_with(a, b, &in->ops[k + 1], 1));
    use_all(a, b->root, cx_sched_ret(&a->s, b));
  }
  /* Each branch writes the results when it ends, and on the timeline the branches follow
   * one another: the results must be live from the start so that no branch's temporaries
   * share their bytes. */
  if (!define_all(a, in, t0)) return cx_oom(a->m->ctx);
  for (int l = 0; l < n; l++) use(a, a->vals[in->id][l], a->s.t1[in->id]); /* written, if unread */
  return CXLA_OK;
}

static cxla_status walk_call(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  CX_TRY(walk_with(a, in->called[0], in->ops, in->nops));
  return set_vals(a, in, a->vals[in->called[0]->root->id], a->nleaves[in->called[0]->root->id]) ? CXLA_OK : cx_oom(a->m->ctx);
}

/* Everything else reads its operands when it runs and defines fresh values, unless it only
 * names its operand's. */
static cxla_status walk_computed(an *a, cx_comp *c, cx_instr *in, int *const *bind, const int *nbind) {
  (void)c, (void)bind, (void)nbind;
  int64_t t0 = a->s.t0[in->id];
  int n = cx_shape_leaf_count(&in->shape);
  if (names_operand(in) && a->nleaves[in->ops[0]->id] == n)
    return set_vals(a, in, a->vals[in->ops[0]->id], n) ? CXLA_OK : cx_oom(a->m->ctx);
  for (int j = 0; j < in->nops; j++) use_all(a, in->ops[j], t0);
  if (!define_all(a, in, t0)) return cx_oom(a->m->ctx);
  for (int l = 0; l < n; l++) use(a, a->vals[in->id][l], a->s.t1[in->id]); /* written, if unread */
  return CXLA_OK;
}

static const walker k_walk[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = walk_parameter, [CX_OP_CONSTANT] = walk_constant, [CX_OP_TUPLE] = walk_tuple,
  [CX_OP_GET_TUPLE_ELEMENT] = walk_gte, [CX_OP_WHILE] = walk_while, [CX_OP_CONDITIONAL] = walk_conditional,
  [CX_OP_CALL] = walk_call,
};

static cxla_status walk(an *a, cx_comp *c, int *const *bind, const int *nbind, int nb) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->op == CX_OP_PARAMETER && bind && (in->a.index < 0 || in->a.index >= nb))
      return cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "%s: parameter %s has no operand", c->name, in->name);
    CX_TRY((k_walk[in->op] ? k_walk[in->op] : walk_computed)(a, c, in, bind, nbind));
  }
  return CXLA_OK;
}

/* ---- buffers ---- */

static int new_buf(an *a, cx_slot_kind k, int64_t size) {
  if (!cx_vec_reserve((void **)&a->b, &a->bcap, a->nb + 1, sizeof *a->b)) return -1;
  buf *b = &a->b[a->nb];
  memset(b, 0, sizeof *b);
  b->kind = k;
  b->size = size;
  b->owner = -1;
  b->out_leaf = -1;
  return a->nb++;
}

/* 1 if value v is leaf i of computation c's result and no other leaf of it. */
static int sole_root_leaf(an *a, const cx_comp *c, int v, int i) {
  const int *rv = a->vals[c->root->id];
  int n = a->nleaves[c->root->id], count = 0;
  for (int l = 0; l < n; l++) count += rv[l] == v;
  return i < n && rv[i] == v && count == 1;
}

/* A value whose buffer a new value may take over once it dies: a temporary, or a leaf of a
 * donated ENTRY parameter. */
static int reusable(const an *a, const value *y) {
  if (y->borrowed) return 0;
  return y->kind == V_TEMP || (y->kind == V_PARAM && y->param >= 0 && y->param < a->ndonated && a->donated[y->param]);
}

/* The buffer value v may share with an operand, or -1. */
static int shared_buffer(an *a, int v) {
  value *x = &a->v[v];
  cx_instr *in = x->in;
  int64_t t0 = a->s.t0[in->id];
  if (in->op == CX_OP_WHILE) {
    const cx_instr *init = in->ops[0];
    int iv = a->vals[init->id][x->leaf], count = 0;
    for (int l = 0; l < a->nleaves[init->id]; l++) count += a->vals[init->id][l] == iv;
    value *y = &a->v[iv];
    if (count != 1 || y->buf < 0 || a->b[y->buf].owner != iv || a->b[y->buf].size != x->size) return -1;
    if (reusable(a, y) && y->last == t0) return y->buf;
    /* Read only (the body returns the element as it got it: a batch stream, a constant
     * table): it stays where the init value is, with no copy into the loop. */
    const cx_comp *body = in->called[1];
    if (a->nleaves[body->root->id] == a->nleaves[in->id] && a->vals[body->root->id][x->leaf] == v) {
      x->borrowed = 1;
      return y->buf;
    }
    return -1;
  }
  /* A scatter's result i starts as a copy of its operand i, which its runtime skips when the
   * two share a buffer: it may take over that operand only, one that no other operand position
   * (indices, updates) holds. A fusion may take over any operand its plan writes in place. */
  int scatter = in->op == CX_OP_SCATTER;
  if (!scatter && (in->op != CX_OP_FUSION || !in->plan)) return -1;
  /* In place over an operand that dies here, or over a loop state element that the body reads
   * for the last time here and that this result replaces (body result leaf i is state leaf i:
   * the trip then ends with nothing to copy for it). Best first: the state element this result
   * replaces, then a donated parameter (the result then needs no memory of its own), then a
   * temporary that dies (an output of a multi-output fusion takes one operand; the others go
   * to its other outputs or stay). */
  int best = -1, best_rank = 0;
  for (int k = scatter ? x->leaf : 0; k < (scatter ? x->leaf + 1 : in->nops); k++) {
    const cx_instr *o = in->ops[k];
    if (a->nleaves[o->id] != 1) continue;
    int ov = a->vals[o->id][0];
    value *y = &a->v[ov];
    int dies = y->last == t0;
    int updates = !dies && y->state_of && y->state_of->called[1] == in->parent && y->body_last == t0 &&
                  sole_root_leaf(a, in->parent, v, y->leaf);
    if (!reusable(a, y) || !(dies || updates) || y->buf < 0 || a->b[y->buf].owner != ov ||
        a->b[y->buf].size != x->size || cx_shape_elems(&o->shape) != cx_shape_elems(cx_shape_leaf(&in->shape, x->leaf)))
      continue;
    int ok = 1; /* every operand position holding the same value must be safe */
    for (int j = 0; j < in->nops && ok; j++)
      if (a->nleaves[in->ops[j]->id] == 1 && a->vals[in->ops[j]->id][0] == ov) ok = scatter ? j == k : in->plan->use[j].in_place;
    int paired = y->kind == V_PARAM && in->parent == a->m->entry && y->param >= 0 && y->param < a->m->entry->nparams &&
                 a->alias_leaf[y->param] >= 0 && sole_root_leaf(a, in->parent, v, a->alias_leaf[y->param]);
    int rank = updates || paired ? 3 : y->kind == V_PARAM ? 2 : 1;
    if (ok && rank > best_rank) best = y->buf, best_rank = rank;
  }
  return best;
}

static cxla_status assign_buffers(an *a) {
  for (int v = 0; v < a->nv; v++) {
    value *x = &a->v[v];
    int b = -1;
    if (x->kind == V_TEMP) b = shared_buffer(a, v);
    if (b < 0) {
      cx_slot_kind k = x->kind == V_PARAM ? CX_SLOT_PARAM : x->kind == V_CONST ? CX_SLOT_CONST : CX_SLOT_TEMP;
      if ((b = new_buf(a, k, x->size)) < 0) return cx_oom(a->m->ctx);
      a->b[b].param = x->param;
      a->b[b].leaf = x->leaf;
      a->b[b].lit = x->lit;
      a->b[b].start = x->def;
      a->b[b].end = x->last;
    }
    x->buf = b;
    buf *bb = &a->b[b];
    bb->owner = v;
    if (x->def < bb->start) bb->start = x->def;
    if (x->last > bb->end) bb->end = x->last;
  }
  return CXLA_OK;
}

/* ---- copies the program needs ---- */

/* Marks ENTRY result leaves that cannot be output buffers, and while-body results that sit in
 * another element's state buffer. Returns the number of copies inserted. */
static cxla_status fix_copies(an *a, int *ninserted) {
  *ninserted = 0;
  for (int ci = 0; ci < a->s.ncomps; ci++) {
    cx_comp *c = a->s.comps[ci];
    for (int i = 0; i < c->ninstrs; i++) {
      cx_instr *w = c->instrs[i];
      if (w->op != CX_OP_WHILE) continue;
      cx_comp *body = w->called[1];
      int n = a->nleaves[w->id], need_any = 0;
      uint8_t *need = cx_calloc((size_t)n + 1, 1);
      if (!need) return cx_oom(a->m->ctx);
      for (int l = 0; l < n; l++) {
        int rb = a->v[a->vals[body->root->id][l]].buf, sb = a->v[a->vals[w->id][l]].buf;
        if (rb == sb) continue;
        for (int j = 0; j < n; j++)
          if (j != l && a->v[a->vals[w->id][j]].buf == rb) need[l] = 1;
        need_any |= need[l];
      }
      cxla_status s = need_any ? cx_buffers_copy_root_leaves(body, need) : CXLA_OK;
      cx_free(need);
      CX_TRY(s);
      *ninserted += need_any;
    }
  }
  cx_comp *e = a->m->entry;
  int n = a->nleaves[e->root->id], need_any = 0;
  uint8_t *need = cx_calloc((size_t)n + 1, 1);
  if (!need) return cx_oom(a->m->ctx);
  for (int l = 0; l < n; l++) {
    value *x = &a->v[a->vals[e->root->id][l]];
    need[l] = x->kind != V_TEMP || x->borrowed;
    for (int j = 0; j < l; j++) need[l] |= a->v[a->vals[e->root->id][j]].buf == x->buf;
    need_any |= need[l];
  }
  cxla_status s = need_any ? cx_buffers_copy_root_leaves(e, need) : CXLA_OK;
  cx_free(need);
  *ninserted += need_any;
  return s;
}

/* ---- driver ---- */

static void an_free(an *a) {
  if (a->vals)
    for (int i = 0; i < a->s.max_id; i++) cx_free(a->vals[i]);
  cx_free(a->vals);
  cx_free(a->nleaves);
  cx_free(a->v);
  cx_free(a->b);
  cx_free(a->alias_leaf);
  cx_sched_free(&a->s);
  memset(a, 0, sizeof *a);
}

/* " {N}: (P, {}, may-alias)" entries of the header's input_output_alias: output N (a tuple
 * element, or {} for the whole result) belongs in parameter P's memory. */
static void header_alias_leaves(const cx_module *m, int *leaf) {
  int np = m->entry->nparams;
  for (int i = 0; i < np; i++) leaf[i] = -1;
  const cx_shape *rs = &m->entry->root->shape;
  for (int r = 0; r < m->nraw; r++) {
    if (strcmp(m->raw[r].key, "input_output_alias") || !m->raw[r].value) continue;
    for (const char *p = strchr(m->raw[r].value, '{'); p; p = strchr(p + 1, '{')) {
      const char *q = p + 1;
      char *end;
      long out = -1;
      while (*q == ' ') q++;
      if (*q != '}') {
        out = strtol(q, &end, 10);
        if (end == q || out < 0) continue;
        for (q = end; *q == ' ';) q++;
        if (*q != '}') continue;
      }
      for (q++; *q == ' ';) q++;
      if (*q++ != ':') continue;
      while (*q == ' ') q++;
      if (*q != '(') continue;
      long par = strtol(q + 1, &end, 10);
      if (end == q + 1 || par < 0 || par >= np) continue;
      if (out < 0) leaf[par] = rs->type == CXLA_TUPLE ? -1 : 0;
      else if (rs->type == CXLA_TUPLE && out < rs->ntuple && cx_type_is_array(rs->tuple[out].type))
        leaf[par] = cx_shape_leaf_offset(rs, (int)out);
    }
  }
}

static cxla_status analyze(cx_module *m, const uint8_t *donated, int ndonated, an *a) {
  memset(a, 0, sizeof *a);
  a->m = m;
  a->donated = donated;
  a->ndonated = donated ? ndonated : 0;
  if (!(a->alias_leaf = cx_calloc((size_t)m->entry->nparams + 1, sizeof *a->alias_leaf))) return cx_oom(m->ctx);
  header_alias_leaves(m, a->alias_leaf);
  CX_TRY(cx_sched_build(m, &a->s));
  a->vals = cx_calloc((size_t)a->s.max_id, sizeof *a->vals);
  a->nleaves = cx_calloc((size_t)a->s.max_id, sizeof *a->nleaves);
  if (!a->vals || !a->nleaves) return cx_oom(m->ctx);
  CX_TRY(walk(a, m->entry, NULL, NULL, 0));
  use_all(a, m->entry->root, a->s.end);
  return assign_buffers(a);
}

static cxla_status build_result(an *a, cx_buffers *out) {
  cx_module *m = a->m;
  const cx_instr *root = m->entry->root;
  memset(out, 0, sizeof *out);
  out->max_id = a->s.max_id;
  out->noutputs = a->nleaves[root->id];
  for (int j = 0; j < out->noutputs; j++) {
    buf *b = &a->b[a->v[a->vals[root->id][j]].buf];
    if (b->kind == CX_SLOT_PARAM) { /* computed in a donated parameter's memory */
      b->out_leaf = j;
      continue;
    }
    b->kind = CX_SLOT_OUTPUT;
    b->leaf = j;
  }
  int64_t total_leaves = 0;
  for (int i = 0; i < a->s.max_id; i++) total_leaves += a->vals[i] ? a->nleaves[i] : 0;
  out->nslots = a->nb;
  out->slots = cx_calloc((size_t)(a->nb ? a->nb : 1), sizeof *out->slots);
  out->nleaves = cx_calloc((size_t)out->max_id, sizeof *out->nleaves);
  /* one block: the pointer table, then every instruction's leaf slots */
  out->leaf_slots = cx_calloc(1, sizeof(int *) * (size_t)out->max_id + sizeof(int) * (size_t)(total_leaves + 1));
  out->output_shapes = cx_calloc((size_t)(out->noutputs ? out->noutputs : 1), sizeof *out->output_shapes);
  cx_heap_item *items = cx_calloc((size_t)(a->nb ? a->nb : 1), sizeof *items);
  int *temps = cx_calloc((size_t)(a->nb ? a->nb : 1), sizeof *temps);
  cxla_status st = CXLA_OK;
  if (!out->slots || !out->nleaves || !out->leaf_slots || !out->output_shapes || !items || !temps) {
    st = cx_oom(m->ctx);
    goto done;
  }
  int nt = 0;
  for (int i = 0; i < a->nb; i++) {
    const buf *b = &a->b[i];
    cx_slot *s = &out->slots[i];
    s->kind = b->kind;
    s->size = b->size;
    s->param = b->kind == CX_SLOT_PARAM ? b->param : -1;
    s->leaf = b->kind == CX_SLOT_PARAM || b->kind == CX_SLOT_OUTPUT ? b->leaf : -1;
    s->out_leaf = b->kind == CX_SLOT_PARAM ? b->out_leaf : -1;
    s->constant = b->kind == CX_SLOT_CONST ? b->lit : NULL;
    if (b->kind != CX_SLOT_TEMP) continue;
    items[nt] = (cx_heap_item){b->start, b->end, b->size, 0};
    temps[nt++] = i;
  }
  out->arena_size = cx_heap_place(items, nt);
  if (out->arena_size < 0) {
    st = cx_oom(m->ctx);
    goto done;
  }
  for (int k = 0; k < nt; k++) out->slots[temps[k]].offset = items[k].offset;
  int *pool = (int *)((char *)out->leaf_slots + sizeof(int *) * (size_t)out->max_id);
  for (int i = 0; i < a->s.max_id; i++) {
    if (!a->vals[i]) continue;
    out->leaf_slots[i] = pool;
    out->nleaves[i] = a->nleaves[i];
    for (int l = 0; l < a->nleaves[i]; l++) pool[l] = a->v[a->vals[i][l]].buf;
    pool += a->nleaves[i];
  }
  for (int j = 0; j < out->noutputs; j++) {
    cx_shape sh = *cx_shape_leaf(&root->shape, j);
    sh.layout_extra = NULL; /* a module-arena pointer; outputs are plain row-major arrays */
    out->output_shapes[j] = sh;
  }
done:
  cx_free(items);
  cx_free(temps);
  if (st != CXLA_OK) cx_buffers_free(out);
  return st;
}

cxla_status cx_buffers_assign(cx_module *m, cx_buffers *out) { return cx_buffers_assign_donated(m, NULL, 0, out); }

cxla_status cx_buffers_assign_donated(cx_module *m, const uint8_t *donated, int ndonated, cx_buffers *out) {
  memset(out, 0, sizeof *out);
  if (!m || !m->entry || !m->entry->root)
    return cx_error(m ? m->ctx : NULL, CXLA_ERR_INVALID_ARGUMENT, "buffer assignment needs an ENTRY computation with a ROOT");
  CX_TRY(cx_sched_flatten(m));
  CX_TRY(cx_fusion_plan_module(m)); /* the fusions flattening cloned have none yet */
  an a;
  /* Inserting copies changes the program, so the analysis runs again; one round fixes every
   * case (the copies define fresh values), the second only confirms it. */
  for (int round = 0; round < 4; round++) {
    cxla_status s = analyze(m, donated, ndonated, &a);
    int ninserted = 0;
    if (s == CXLA_OK) s = fix_copies(&a, &ninserted);
    if (s == CXLA_OK && !ninserted) {
      s = build_result(&a, out);
      an_free(&a);
      return s;
    }
    an_free(&a);
    CX_TRY(s);
  }
  return cx_error(m->ctx, CXLA_ERR_INTERNAL, "buffer assignment: copies for outputs and loop state did not converge");
}

int64_t cx_buffers_alias_bytes(const cx_buffers *b) {
  int64_t n = 0;
  for (int i = 0; i < b->nslots; i++)
    if (b->slots[i].kind == CX_SLOT_PARAM && b->slots[i].out_leaf >= 0) n += b->slots[i].size;
  return n;
}

void cx_buffers_free(cx_buffers *b) {
  if (!b) return;
  cx_free(b->slots);
  cx_free(b->leaf_slots);
  cx_free(b->nleaves);
  cx_free(b->output_shapes);
  memset(b, 0, sizeof *b);
}

int cx_buffers_slot(const cx_buffers *b, const cx_instr *in, int leaf) {
  if (!b || !in || in->id < 0 || in->id >= b->max_id || !b->leaf_slots || !b->leaf_slots[in->id]) return -1;
  if (leaf < 0 || leaf >= b->nleaves[in->id]) return -1;
  return b->leaf_slots[in->id][leaf];
}
