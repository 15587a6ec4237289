/* fusion_util.c — building fusions. Every fusion edit (wrapping one op, fusing a producer into
 * a consumer, a reduce epilogue, sibling and producer-consumer multi-output fusion, dot
 * epilogues) is the same operation: take a set of instructions of a computation (raw ops and
 * existing fusions, whose bodies are inlined), clone them into a fresh fused computation, and
 * put one fusion instruction in their place. Rebuilding the body each time keeps the code
 * simple; bodies are small (FU_MAX_INSTRS). The one edit repeated many times per kernel, a
 * consumer growing by one producer, edits its own body in place instead (fusion_absorb.c). */
#include <stdio.h>
#include <string.h>
#include "passes/fusion_util.h"
#include "ir/clone.h"

/* aux tags while fu_fuse runs: parts are 1..nparts, external operands nparts+1.. */
#define TAG(x) ((intptr_t)(x)->aux)

/* ---- fu_fuse ---- */

typedef struct builder {
  cx_module *m;
  cx_comp *c, *fc;
  const fu_spec *s;
  int *order;            /* part indices in c's (topological) order */
  cx_instr **val;        /* value of part i inside fc (NULL for multi-output parts) */
  cx_instr ***mo_vals;   /* outputs of multi-output parts inside fc */
  cx_instr **ext;        /* external operands, in parameter order */
  cx_instr **param;      /* their parameters in fc */
  int next, cap;
} builder;

static int part_multi(const cx_instr *p) { return p->op == CX_OP_FUSION && fu_is_multi_output(p); }

/* The value inside fc of operand o of some part: a part's clone, or a parameter (created on
 * first use). */
static cxla_status value_of(builder *b, cx_instr *o, cx_instr **out) {
  intptr_t t = TAG(o);
  *out = NULL;
  if (t >= 1 && t <= b->s->nparts) {
    if (!(*out = b->val[t - 1]))
      return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: %s is read before it is built", o->name);
    return CXLA_OK;
  }
  if (t > b->s->nparts) {
    *out = b->param[t - b->s->nparts - 1];
    return CXLA_OK;
  }
  if (b->next >= b->cap) return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: too many operands");
  int k = b->next;
  const char *nm = cx_module_unique_name(b->m, "param"); /* unique already: no index needed */
  cx_instr *p = nm ? cx_instr_new(b->fc, CX_OP_PARAMETER, &o->shape, 0, NULL) : NULL;
  if (!p) return cx_oom(b->m->ctx);
  b->next++;
  p->a.index = k;
  p->name = nm;
  b->ext[k] = o;
  b->param[k] = p;
  o->aux = (void *)(intptr_t)(b->s->nparts + 1 + k);
  *out = p;
  return CXLA_OK;
}

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Names must be unique in a computation, and bodies inlined from fusions written by hand (or
 * by another tool) may reuse names ("r", "p0") across computations: a later instruction whose
 * name an earlier one has gets a fresh one. Once per fusion, hashed: comparing each clone with
 * every instruction before it was an eighth of the fusion pass. */
static cxla_status unique_names(builder *b) {
  cx_comp *fc = b->fc;
  size_t cap = 16;
  while (cap < 2 * (size_t)fc->ninstrs) cap *= 2;
  const char **set = cx_calloc(cap, sizeof *set);
  if (!set) return cx_oom(b->m->ctx);
  cxla_status st = CXLA_OK;
  for (int i = 0; i < fc->ninstrs && st == CXLA_OK; i++) {
    cx_instr *x = fc->instrs[i];
    if (!x->name) continue;
    for (;;) { /* each fresh name takes a new number, so this ends */
      size_t h = (size_t)name_hash(x->name) & (cap - 1);
      while (set[h] && strcmp(set[h], x->name)) h = (h + 1) & (cap - 1);
      if (!set[h]) {
        set[h] = x->name;
        break;
      }
      if (!(x->name = fu_fresh_name(b->m, x->name))) {
        st = cx_oom(b->m->ctx);
        break;
      }
    }
  }
  cx_free(set);
  return st;
}

static cxla_status clone_raw(builder *b, int i) {
  cx_instr *p = b->s->parts[i];
  if ((b->val[i] = fu_same_constant(b->fc, p))) return CXLA_OK;
  /* a get-tuple-element of a multi-output part is that part's output (built before it) */
  intptr_t t = p->op == CX_OP_GET_TUPLE_ELEMENT ? TAG(p->ops[0]) : 0;
  if (t >= 1 && t <= b->s->nparts && part_multi(b->s->parts[t - 1])) {
    if (!b->mo_vals[t - 1] || p->a.index < 0 || p->a.index >= fu_nouts(b->s->parts[t - 1]))
      return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: %s reads an output not built yet", p->name);
    b->val[i] = b->mo_vals[t - 1][p->a.index];
    return CXLA_OK;
  }
  cx_instr *ops[p->nops ? p->nops : 1];
  for (int j = 0; j < p->nops; j++) CX_TRY(value_of(b, p->ops[j], &ops[j]));
  cx_instr *cl = cx_instr_clone(b->fc, p, ops);
  if (!cl) return cx_oom(b->m->ctx);
  if (b->s->keep && b->s->keep[i]) {
    const char *nm = fu_fresh_name(b->m, p->name);
    if (!nm) return cx_oom(b->m->ctx);
    cl->name = nm;
  }
  b->val[i] = cl;
  return CXLA_OK;
}

/* Inlines a fusion part's body; its parameters bind to the part's operands. */
static cxla_status clone_body(builder *b, int i) {
  cx_instr *p = b->s->parts[i];
  cx_comp *body = p->called[0];
  int n = body->ninstrs, multi = part_multi(p);
  cx_instr **map = cx_calloc((size_t)n + 1, sizeof *map);
  if (!map) return cx_oom(b->m->ctx);
  cxla_status st = CXLA_OK;
  for (int k = 0; k < n; k++) body->instrs[k]->aux = (void *)(intptr_t)(k + 1);
  for (int k = 0; k < n && st == CXLA_OK; k++) {
    cx_instr *x = body->instrs[k];
    if (x->op == CX_OP_PARAMETER) {
      if (x->a.index < 0 || x->a.index >= p->nops) { st = cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: bad parameter in %s", body->name); break; }
      /* The part's operands are c's instructions, tagged apart from the body's. */
      st = value_of(b, p->ops[x->a.index], &map[k]);
      continue;
    }
    if (multi && x == body->root) continue; /* outputs are taken element by element */
    if ((map[k] = fu_same_constant(b->fc, x))) continue;
    cx_instr *ops[x->nops ? x->nops : 1];
    for (int j = 0; j < x->nops; j++) ops[j] = map[(intptr_t)x->ops[j]->aux - 1];
    if (!(map[k] = cx_instr_clone(b->fc, x, ops))) st = cx_oom(b->m->ctx);
  }
  if (st == CXLA_OK) {
    if (multi) {
      cx_instr *r = body->root;
      b->mo_vals[i] = cx_arena_alloc(&b->m->arena, sizeof(cx_instr *) * (size_t)r->nops);
      if (!b->mo_vals[i]) st = cx_oom(b->m->ctx);
      for (int j = 0; st == CXLA_OK && j < r->nops; j++) b->mo_vals[i][j] = map[(intptr_t)r->ops[j]->aux - 1];
    } else {
      b->val[i] = map[(intptr_t)body->root->aux - 1];
    }
  }
  for (int k = 0; k < n; k++) body->instrs[k]->aux = NULL;
  cx_free(map);
  return st;
}

/* Flattened outputs: values inside fc, and (part, element) they came from (element -1: the
 * whole value of a single-output part). */
typedef struct outs {
  int n;
  cx_instr **v;
  int *part, *elem;
} outs;

static cxla_status collect_outs(builder *b, outs *o) {
  const fu_spec *s = b->s;
  int n = 0;
  for (int k = 0; k < s->nouts; k++) n += part_multi(s->outs[k]) ? fu_nouts(s->outs[k]) : 1;
  o->n = n;
  o->v = cx_arena_alloc(&b->m->arena, sizeof(cx_instr *) * (size_t)n);
  o->part = cx_arena_alloc(&b->m->arena, sizeof(int) * (size_t)n);
  o->elem = cx_arena_alloc(&b->m->arena, sizeof(int) * (size_t)n);
  if (!o->v || !o->part || !o->elem) return cx_oom(b->m->ctx);
  int q = 0;
  for (int k = 0; k < s->nouts; k++) {
    int i = (int)TAG(s->outs[k]) - 1;
    if (i < 0 || i >= s->nparts) return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: an output is not a part");
    if (part_multi(s->parts[i])) {
      for (int e = 0; e < fu_nouts(s->parts[i]); e++) { o->v[q] = b->mo_vals[i][e]; o->part[q] = i; o->elem[q++] = e; }
    } else {
      o->v[q] = b->val[i]; o->part[q] = i; o->elem[q++] = -1;
    }
  }
  return CXLA_OK;
}

static cxla_status make_root(builder *b, const outs *o, cx_shape *shape) {
  if (o->n == 1 && o->elem[0] < 0) {
    b->fc->root = o->v[0];
    *shape = o->v[0]->shape;
    return CXLA_OK;
  }
  cx_shape t;
  memset(&t, 0, sizeof t);
  t.type = CXLA_TUPLE;
  t.ntuple = o->n;
  t.tuple = cx_arena_alloc(&b->m->arena, sizeof(cx_shape) * (size_t)o->n);
  if (!t.tuple) return cx_oom(b->m->ctx);
  for (int k = 0; k < o->n; k++) t.tuple[k] = o->v[k]->shape;
  cx_instr *r = cx_instr_new(b->fc, CX_OP_TUPLE, &t, o->n, o->v);
  const char *nm = r ? cx_module_unique_name(b->m, "tuple") : NULL;
  if (!nm) return cx_oom(b->m->ctx);
  r->name = nm;
  b->fc->root = r;
  *shape = r->shape;
  return CXLA_OK;
}

static int is_dropped(const fu_spec *s, const cx_instr *x) {
  intptr_t t = TAG(x);
  return t >= 1 && t <= s->nparts && !(s->keep && s->keep[t - 1]);
}

/* Makes every user of p outside the dropped parts read `to` instead (and the root). */
static cxla_status rewire(builder *b, cx_instr *p, cx_instr *to) {
  cx_comp *c = b->c;
  cx_instr **users;
  int nu = fu_users(c, p, &users);
  if (nu < 0) return cx_oom(b->m->ctx);
  cxla_status st = CXLA_OK;
  for (int k = 0; k < nu && st == CXLA_OK; k++) {
    cx_instr *u = users[k];
    if (is_dropped(b->s, u)) continue;
    for (int j = 0; j < u->nops; j++)
      if (u->ops[j] == p) u->ops[j] = to;
    fu_index_remove_user(c, p, u);
    if (!fu_index_add_user(c, to, u)) st = cx_oom(b->m->ctx);
  }
  if (c->root == p) c->root = to;
  cx_free(users);
  return st;
}

/* Users of the parts' outputs now read fusion f (through new get-tuple-elements when it has
 * several outputs). */
static cxla_status redirect(builder *b, const outs *o, cx_instr *f, cx_instr ***gtes, int *ngtes) {
  cx_comp *c = b->c;
  *ngtes = 0;
  *gtes = cx_arena_alloc(&b->m->arena, sizeof(cx_instr *) * (size_t)o->n);
  if (!*gtes) return cx_oom(b->m->ctx);
  if (o->n == 1 && o->elem[0] < 0) return rewire(b, b->s->parts[o->part[0]], f);
  for (int k = 0; k < o->n; k++) {
    cx_instr *p = b->s->parts[o->part[k]];
    if (o->elem[k] >= 0) {
      /* A multi-output part: its users are get-tuple-elements; renumber them. */
      cx_instr **users;
      int nu = fu_users(c, p, &users);
      if (nu < 0) return cx_oom(b->m->ctx);
      int ok = 1;
      for (int q = 0; q < nu; q++) {
        cx_instr *u = users[q];
        if (u->op != CX_OP_GET_TUPLE_ELEMENT || u->ops[0] != p || u->a.index != o->elem[k]) continue;
        u->ops[0] = f;
        u->a.index = k;
        fu_index_remove_user(c, p, u);
        ok &= fu_index_add_user(c, f, u);
      }
      cx_free(users);
      if (!ok) return cx_oom(b->m->ctx);
      continue;
    }
    cx_instr *g = cx_instr_new(c, CX_OP_GET_TUPLE_ELEMENT, &o->v[k]->shape, 1, &f);
    const char *nm = g ? cx_module_unique_name(b->m, "get-tuple-element") : NULL;
    if (!nm) return cx_oom(b->m->ctx);
    g->name = nm;
    g->a.index = k;
    g->loc = p->loc;
    (*gtes)[(*ngtes)++] = g;
    if (!fu_index_add_user(c, f, g) || !fu_index_place(c, g, -1)) return cx_oom(b->m->ctx);
    CX_TRY(rewire(b, p, g));
  }
  return CXLA_OK;
}

/* The fusion's operands and the kept parts lose the dropped parts as users; the operands
 * gain the fusion. */
static cxla_status update_users(builder *b, cx_instr *f) {
  const fu_spec *s = b->s;
  cx_comp *c = b->c;
  for (int i = 0; i < b->next + s->nparts; i++) {
    cx_instr *x = i < b->next ? b->ext[i] : s->parts[i - b->next];
    if (i >= b->next && !(s->keep && s->keep[i - b->next])) continue;
    for (int q = 0; q < s->nparts; q++)
      if (!(s->keep && s->keep[q])) fu_index_remove_user(c, x, s->parts[q]);
    if (i < b->next && !fu_index_add_user(c, x, f)) return cx_oom(b->m->ctx);
  }
  return CXLA_OK;
}

/* Removes the dropped parts (they stay as holes while an index is active) and puts f where
 * the last part was, or re-sorts c when that would not be topological. */
static cxla_status place(builder *b, cx_instr *f, int topo_ok, int *sort) {
  cx_comp *c = b->c;
  const fu_spec *s = b->s;
  for (int i = 0; i < s->nparts; i++) {
    cx_instr *p = s->parts[i];
    if (s->keep && s->keep[i]) continue;
    if (c->root == p) return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: %s is still the root", p->name);
    cx_instr **users;
    int nu = fu_users(c, p, &users);
    if (nu < 0) return cx_oom(b->m->ctx);
    for (int k = 0; k < nu; k++) {
      const cx_instr *u = users[k];
      int reads = 0;
      for (int j = 0; j < u->nops; j++) reads |= u->ops[j] == p;
      if (reads && !is_dropped(s, u) && u->parent == c) {
        cx_free(users);
        return cx_error(b->m->ctx, CXLA_ERR_INTERNAL, "fusion: %s still has user %s", p->name, u->name);
      }
    }
    cx_free(users);
  }
  cx_instr *last = s->parts[b->order[s->nparts - 1]];
  int pos = fu_index_active(c) ? fu_index_pos(c, last) : -1;
  if (pos < 0)
    for (int i = 0; i < c->ninstrs && pos < 0; i++)
      if (c->instrs[i] == last) pos = i;
  for (int i = 0; i < s->nparts; i++) {
    cx_instr *p = s->parts[i];
    if (s->keep && s->keep[i]) continue;
    if (p->op == CX_OP_FUSION && p->ncalled == 1 && !fu_index_drop_comp(c, p->called[0]))
      fu_remove_comp(b->m, p->called[0]);
    p->parent = NULL;
  }
  *sort = !topo_ok || last->parent == c || pos < 0 || c->instrs[c->ninstrs - 1] != f;
  if (!*sort) {
    /* f was appended last: move it into the slot of the (removed) last part */
    c->ninstrs--;
    c->instrs[pos] = f;
    if (!fu_index_place(c, f, pos)) return cx_oom(b->m->ctx);
  } else if (!fu_index_place(c, f, -1)) {
    return cx_oom(b->m->ctx);
  }
  if (!fu_index_active(c)) { /* no holes without an index */
    int k = 0;
    for (int i = 0; i < c->ninstrs; i++)
      if (c->instrs[i]->parent == c) c->instrs[k++] = c->instrs[i];
    c->ninstrs = k;
  }
  return CXLA_OK;
}

/* Re-sorts only the stretch of c->instrs between the first and the last part, where f and
 * its get-tuple-elements (appended at the end) go: everything before it cannot depend on the
 * parts, everything after it comes after all of them anyway. Needs an index (positions) and
 * enough holes in the stretch. 1 done, 0 not possible (sort everything), -1 OOM. */
static int sort_segment(builder *b, cx_instr *f, cx_instr **gtes, int ngtes) {
  cx_comp *c = b->c;
  const fu_spec *s = b->s;
  int lo, hi, extra = 1 + ngtes, n = c->ninstrs;
  if (!fu_index_span(c, s->parts, s->nparts, &lo, &hi)) return 0;
  cx_instr *hole = NULL;
  for (int i = 0; i < s->nparts; i++)
    if (s->parts[i]->parent != c) hole = s->parts[i];
  if (!hole || n - extra <= hi || c->instrs[n - extra] != f) return 0;
  int live = 0;
  for (int i = lo; i <= hi; i++) live += c->instrs[i]->parent == c;
  if (live + extra > hi - lo + 1) return 0;
  int m = live + extra;
  cx_instr **set = cx_malloc(sizeof *set * (size_t)m), **out = cx_malloc(sizeof *out * (size_t)m);
  int *stack = cx_malloc(sizeof(int) * (size_t)m), *next = cx_malloc(sizeof(int) * (size_t)m);
  char *state = cx_calloc((size_t)m, 1);
  if (!set || !out || !stack || !next || !state) {
    cx_free(set); cx_free(out); cx_free(stack); cx_free(next); cx_free(state);
    return -1;
  }
  int k = 0;
  for (int i = lo; i <= hi; i++)
    if (c->instrs[i]->parent == c) set[k++] = c->instrs[i];
  set[k++] = f;
  for (int g = 0; g < ngtes; g++) set[k++] = gtes[g];
  /* tag the stretch (the parts' tags are no longer needed: the body is built) */
  for (int i = 0; i < s->nparts; i++) s->parts[i]->aux = NULL;
  for (int i = 0; i < b->next; i++) b->ext[i]->aux = NULL;
  for (int i = 0; i < m; i++) set[i]->aux = (void *)(intptr_t)(i + 1);
  int q = 0;
  for (int r = 0; r < m; r++) {
    if (state[r]) continue;
    int sp = 0;
    stack[sp] = r;
    next[sp++] = 0;
    state[r] = 1;
    while (sp) {
      int i = stack[sp - 1];
      if (next[sp - 1] < set[i]->nops) {
        intptr_t t = (intptr_t)set[i]->ops[next[sp - 1]++]->aux;
        if (t < 1 || t > m || state[t - 1]) continue; /* before the stretch */
        state[t - 1] = 1;
        stack[sp] = (int)t - 1;
        next[sp++] = 0;
      } else {
        state[i] = 2;
        out[q++] = set[i];
        sp--;
      }
    }
  }
  for (int i = 0; i < m; i++) set[i]->aux = NULL;
  int ok = 1;
  for (int i = lo; i <= hi; i++) {
    int j = i - lo;
    c->instrs[i] = j < m ? out[j] : hole;
    if (j < m) ok &= fu_index_place(c, out[j], i);
  }
  c->ninstrs = n - extra;
  cx_free(set); cx_free(out); cx_free(stack); cx_free(next); cx_free(state);
  return ok ? 1 : -1;
}

/* Topological order of the parts (operands first), by their edges among themselves. */
static int order_parts(builder *b) {
  const fu_spec *s = b->s;
  int n = s->nparts, k = 0;
  char *state = cx_calloc((size_t)n, 1); /* 0 new, 1 open, 2 done */
  int *stack = cx_malloc(sizeof(int) * (size_t)n), *next = cx_malloc(sizeof(int) * (size_t)n);
  int ok = state && stack && next;
  for (int r = 0; ok && r < n; r++) {
    if (state[r]) continue;
    int sp = 0;
    stack[sp] = r;
    next[sp++] = 0;
    state[r] = 1;
    while (sp) {
      int i = stack[sp - 1];
      cx_instr *p = s->parts[i];
      if (next[sp - 1] < p->nops) {
        intptr_t t = TAG(p->ops[next[sp - 1]++]);
        if (t < 1 || t > n || state[t - 1]) continue;
        state[t - 1] = 1;
        stack[sp] = (int)t - 1;
        next[sp++] = 0;
      } else {
        state[i] = 2;
        b->order[k++] = i;
        sp--;
      }
    }
  }
  cx_free(state);
  cx_free(stack);
  cx_free(next);
  return ok ? 1 : -1;
}

/* Parameters first, as XLA prints fused computations (a stable partition keeps the rest in
 * topological order). */
static void params_first(cx_comp *fc) {
  int n = fc->ninstrs, k = 0;
  cx_instr **v = fc->instrs;
  for (int i = 0; i < n; i++) {
    cx_instr *x = v[i];
    if (x->op != CX_OP_PARAMETER) continue;
    memmove(v + k + 1, v + k, sizeof *v * (size_t)(i - k));
    v[k++] = x;
  }
}

static cxla_status fuse_tagged(builder *b, int topo_ok, cx_instr **out) {
  const fu_spec *s = b->s;
  cx_module *m = b->m;
  cx_comp *c = b->c;
  for (int i = 0; i < s->nparts; i++)
    if (s->parts[i]->parent != c) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: a part is not in %s", c->name);
  if (order_parts(b) < 0) return cx_oom(m->ctx);
  const char *cname = fu_comp_name(m, "fused_computation");
  if (!cname || !(b->fc = cx_comp_new(m, cname))) return cx_oom(m->ctx);
  for (int q = 0; q < s->nparts; q++) {
    int i = b->order[q];
    cx_instr *p = s->parts[i];
    for (int j = 0; j < p->nops; j++) {
      intptr_t t = TAG(p->ops[j]);
      if (t >= 1 && t <= s->nparts && part_multi(s->parts[t - 1]) && p->op != CX_OP_GET_TUPLE_ELEMENT)
        return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: %s reads multi-output part %s", p->name, p->ops[j]->name);
    }
    CX_TRY(p->op == CX_OP_FUSION && p->ncalled == 1 ? clone_body(b, i) : clone_raw(b, i));
  }
  CX_TRY(unique_names(b));
  outs o;
  cx_shape shape;
  CX_TRY(collect_outs(b, &o));
  CX_TRY(make_root(b, &o, &shape));
  params_first(b->fc);
  if (!cx_comp_index_params(b->fc)) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: bad parameters");
  cx_instr *f = cx_instr_new(c, CX_OP_FUSION, &shape, b->next, b->ext);
  const char *fname = f ? cx_module_unique_name(m, "fusion") : NULL;
  if (!fname || !cx_instr_set_called(f, 1, &b->fc)) return cx_oom(m->ctx);
  f->a.fusion_kind = s->kind;
  f->name = fname;
  f->loc = s->outs[0]->loc;
  cx_instr **gtes;
  int ngtes, sort = 1;
  CX_TRY(redirect(b, &o, f, &gtes, &ngtes));
  CX_TRY(update_users(b, f));
  CX_TRY(place(b, f, topo_ok && !ngtes, &sort));
  /* with an index, m->comps is put in order once at the end */
  if (!(fu_index_active(c) ? cx_module_add_comp(m, b->fc) : fu_insert_comp_before(m, b->fc, c))) return cx_oom(m->ctx);
  int done = sort && fu_index_active(c) ? sort_segment(b, f, gtes, ngtes) : 0;
  if (done < 0) return cx_oom(m->ctx);
  if (sort && !done) {
    int sorted = fu_sort(c);
    if (sorted < 0) return cx_oom(m->ctx);
    if (!sorted) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: cycle in %s", c->name);
    if (!fu_index_relayout(c)) return cx_oom(m->ctx);
  }
  *out = f;
  return CXLA_OK;
}

cxla_status fu_fuse(cx_comp *c, const fu_spec *s, int topo_ok, cx_instr **out) {
  cx_module *m = c->module;
  *out = NULL;
  if (s->nparts < 1 || s->nouts < 1) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: nothing to fuse");
  int cap = 0;
  for (int i = 0; i < s->nparts; i++) cap += s->parts[i]->nops;
  builder b;
  memset(&b, 0, sizeof b);
  b.m = m;
  b.c = c;
  b.s = s;
  b.cap = cap;
  b.order = cx_malloc(sizeof(int) * (size_t)s->nparts);
  b.val = cx_calloc((size_t)s->nparts, sizeof *b.val);
  b.mo_vals = cx_calloc((size_t)s->nparts, sizeof *b.mo_vals);
  b.ext = cx_arena_alloc(&m->arena, sizeof(cx_instr *) * (size_t)(cap + 1));
  b.param = cx_malloc(sizeof(cx_instr *) * (size_t)(cap + 1));
  cxla_status st;
  if (!b.order || !b.val || !b.mo_vals || !b.ext || !b.param) {
    st = cx_oom(m->ctx);
  } else {
    /* c's instructions have aux == NULL between edits (fusion code resets what it tags); an
     * index guarantees it, otherwise make sure */
    if (!fu_index_active(c))
      for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
    for (int i = 0; i < s->nparts; i++) s->parts[i]->aux = (void *)(intptr_t)(i + 1);
    st = fuse_tagged(&b, topo_ok, out);
    for (int i = 0; i < s->nparts; i++) s->parts[i]->aux = NULL;
    for (int i = 0; i < b.next; i++) b.ext[i]->aux = NULL;
  }
  cx_free(b.order);
  cx_free(b.val);
  cx_free(b.mo_vals);
  cx_free(b.param);
  return st;
}

cxla_status fu_wrap(cx_comp *c, cx_instr *in, cx_instr **out) {
  fu_spec s = {.parts = &in, .nparts = 1, .outs = &in, .nouts = 1,
               .kind = in->op == CX_OP_REDUCE ? CX_FUSION_INPUT : CX_FUSION_LOOP};
  return fu_fuse(c, &s, 1, out);
}

cxla_status fu_absorb_constants(cx_comp *c, cx_instr **f, int *changed) {
  cx_instr *x = *f;
  int n = 0;
  for (int j = 0; j < x->nops; j++) n += fu_is_scalar_constant(x->ops[j]);
  if (!n) return CXLA_OK;
  cx_instr **parts = cx_malloc(sizeof *parts * (size_t)(n + 1));
  int *keep = cx_calloc((size_t)n + 1, sizeof *keep);
  cxla_status st = CXLA_OK;
  if (!parts || !keep) {
    st = cx_oom(c->module->ctx);
  } else {
    int k = 0;
    for (int j = 0; j < x->nops; j++) {
      cx_instr *o = x->ops[j];
      if (!fu_is_scalar_constant(o)) continue;
      int dup = 0;
      for (int q = 0; q < k; q++) dup |= parts[q] == o;
      if (dup) continue;
      keep[k] = !fu_only_user_is(c, o, x);
      parts[k++] = o;
    }
    parts[k++] = x;
    fu_spec s = {.parts = parts, .nparts = k, .keep = keep, .outs = &x, .nouts = 1, .kind = fu_kind_of(x)};
    st = fu_fuse(c, &s, 1, f);
    if (st == CXLA_OK) *changed = 1;
  }
  cx_free(parts);
  cx_free(keep);
  return st;
}

cxla_status fu_each_control_comp(cx_module *m, int *changed, cxla_status (*fn)(cx_comp *c, int *changed)) {
  cx_comp **cs;
  int n;
  *changed = 0;
  fu_reserve_names(m);
  CX_TRY(fu_control_comps(m, &cs, &n));
  cxla_status st = CXLA_OK;
  for (int i = 0; i < n && st == CXLA_OK; i++) {
    st = fu_index_begin(cs[i]);
    if (st == CXLA_OK) st = fn(cs[i], changed);
    cxla_status end = fu_index_end();
    if (st == CXLA_OK) st = end;
  }
  cx_free(cs);
  return st;
}
