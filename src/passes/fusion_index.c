/* fusion_index.c — users and reachability inside one computation. Fusion asks "who uses x?"
 * for every producer it offers and rewires users at every edit, so while a pass works on a
 * computation it keeps an index: each instruction's distinct users (in in->users/nusers) and
 * its position in c->instrs, updated by each edit instead of rescanning the computation.
 * c->instrs is laid out with holes (removed instructions get parent NULL and stay in place,
 * the new fusion takes the slot of the last instruction it replaces, and every instruction is
 * followed by spare slots for multi-output edits to re-sort a stretch in place), so positions
 * are array indices and stay a topological numbering; fu_index_end compacts. New fused
 * computations are appended to m->comps and replaced ones dropped there at the end too, where
 * m->comps is put back in callee-before-caller order. Without an index (explanations, tests) the
 * same questions are answered by scanning. One index per thread at a time. */
#include <string.h>
#include "passes/fusion_index.h"

typedef struct entry {
  const cx_instr *key;
  int pos;
  int cap;      /* capacity of key->users; 0: it points into the initial block */
} entry;

typedef struct fu_index {
  cx_comp *c;
  entry *map;   /* open addressing by pointer */
  size_t mask, count;
  cx_instr **block;
  cx_instr *hole;       /* the filler of the gaps in c->instrs */
  cx_comp **dropped;    /* fused computations replaced by new ones: removed at the end */
  int ndropped, capdropped;
  int layouts;          /* times c was laid out afresh (every position renumbered) */
  /* pairs (from, to) found to be connected: an edit never disconnects two instructions (a
   * fusion reads what its parts read and feeds what they fed), and removed instructions stay
   * allocated, so an answer of yes holds until fu_index_end */
  struct reach_pair { const cx_instr *from, *to; } *reached;
  size_t reached_mask, nreached;
} fu_index;

static _Thread_local fu_index *cur;
static int relayout(fu_index *ix);

static fu_index *index_of(const cx_comp *c) { return cur && cur->c == c ? cur : NULL; }

int fu_index_active(const cx_comp *c) { return index_of(c) != NULL; }

static entry *find(const fu_index *ix, const cx_instr *x) {
  size_t h = (size_t)(((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull) & ix->mask;
  while (ix->map[h].key && ix->map[h].key != x) h = (h + 1) & ix->mask;
  return &ix->map[h];
}

static int grow_map(fu_index *ix) {
  size_t ncap = (ix->mask + 1) * 2;
  entry *old = ix->map;
  size_t oldn = ix->mask + 1;
  entry *nm = cx_calloc(ncap, sizeof *nm);
  if (!nm) return 0;
  ix->map = nm;
  ix->mask = ncap - 1;
  for (size_t i = 0; i < oldn; i++)
    if (old[i].key) *find(ix, old[i].key) = old[i];
  cx_free(old);
  return 1;
}

/* The entry of x, added (with no users) if new. NULL on OOM. */
static entry *entry_of(fu_index *ix, cx_instr *x, int pos) {
  if (2 * (ix->count + 1) > ix->mask + 1 && !grow_map(ix)) return NULL;
  entry *e = find(ix, x);
  if (!e->key) {
    e->key = x;
    e->pos = pos;
    e->cap = 0;
    x->users = NULL;
    x->nusers = 0;
    ix->count++;
  }
  return e;
}

cxla_status fu_index_begin(cx_comp *c) {
  fu_index_end();
  int n = c->ninstrs;
  int64_t ne = 0;
  for (int i = 0; i < n; i++) ne += c->instrs[i]->nops;
  fu_index *ix = cx_calloc(1, sizeof *ix);
  size_t cap = 16;
  while (cap < 4 * (size_t)n + 4) cap *= 2;
  if (ix) {
    ix->map = cx_calloc(cap, sizeof *ix->map);
    ix->block = cx_malloc(sizeof *ix->block * (size_t)(ne + 1));
  }
  if (!ix || !ix->map || !ix->block) {
    if (ix) { cx_free(ix->map); cx_free(ix->block); }
    cx_free(ix);
    return cx_oom(c->module->ctx);
  }
  ix->c = c;
  ix->mask = cap - 1;
  for (int i = 0; i < n; i++) {
    cx_instr *x = c->instrs[i];
    x->aux = NULL; /* fusion code tags instructions through aux and resets them */
    entry_of(ix, x, i); /* cannot grow: the map was sized for n */
  }
  /* distinct users: an instruction reading x twice is one user */
  for (int i = 0; i < n; i++) {
    cx_instr *u = c->instrs[i];
    for (int j = 0; j < u->nops; j++) {
      int dup = 0;
      for (int k = 0; k < j && !dup; k++) dup = u->ops[k] == u->ops[j];
      if (!dup) u->ops[j]->nusers++;
    }
  }
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    cx_instr *x = c->instrs[i];
    x->users = ix->block + off;
    off += x->nusers;
    x->nusers = 0;
  }
  for (int i = 0; i < n; i++) {
    cx_instr *u = c->instrs[i];
    for (int j = 0; j < u->nops; j++) {
      int dup = 0;
      for (int k = 0; k < j && !dup; k++) dup = u->ops[k] == u->ops[j];
      if (!dup) u->ops[j]->users[u->ops[j]->nusers++] = u;
    }
  }
  cur = ix;
  if (!relayout(ix)) {
    fu_index_end();
    return cx_oom(c->module->ctx);
  }
  return CXLA_OK;
}

/* m->comps without the dropped computations, callees before callers (new fused computations
 * were appended at the end; a stable depth-first order puts them before their callers). */
static cxla_status finish_comps(fu_index *ix) {
  cx_module *m = ix->c->module;
  static char dead, open_, done;
  for (int i = 0; i < ix->ndropped; i++) ix->dropped[i]->aux = &dead;
  int k = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i]->aux != &dead) m->comps[k++] = m->comps[i];
  m->ncomps = k;
  for (int i = 0; i < ix->ndropped; i++) ix->dropped[i]->aux = NULL;
  int n = m->ncomps;
  cx_comp **out = cx_malloc(sizeof *out * ((size_t)n + 1));
  cx_comp **stack = cx_malloc(sizeof *stack * ((size_t)n + 1));
  int *ni = cx_malloc(sizeof *ni * ((size_t)n + 1)), *nj = cx_malloc(sizeof *nj * ((size_t)n + 1));
  if (!out || !stack || !ni || !nj) {
    cx_free(out); cx_free(stack); cx_free(ni); cx_free(nj);
    return cx_oom(m->ctx);
  }
  int q = 0;
  for (int r = 0; r < n; r++) {
    if (m->comps[r]->aux) continue;
    int sp = 0;
    stack[sp] = m->comps[r];
    ni[sp] = nj[sp] = 0;
    sp++;
    m->comps[r]->aux = &open_;
    while (sp) {
      cx_comp *t = stack[sp - 1], *callee = NULL;
      /* the next unvisited callee of t, walking (instruction ni, called nj) */
      while (!callee && ni[sp - 1] < t->ninstrs) {
        cx_instr *x = t->instrs[ni[sp - 1]];
        if (nj[sp - 1] >= x->ncalled) { ni[sp - 1]++; nj[sp - 1] = 0; continue; }
        cx_comp *y = x->called[nj[sp - 1]++];
        if (y && !y->aux) callee = y;
      }
      if (callee && sp < n) {
        callee->aux = &open_;
        stack[sp] = callee;
        ni[sp] = nj[sp] = 0;
        sp++;
      } else if (!callee) {
        t->aux = &done;
        if (q < n) out[q++] = t;
        sp--;
      }
    }
  }
  for (int i = 0; i < n; i++) m->comps[i]->aux = NULL;
  if (q == n) memcpy(m->comps, out, sizeof *out * (size_t)n);
  cx_free(out);
  cx_free(stack);
  cx_free(ni);
  cx_free(nj);
  return q == n ? CXLA_OK : cx_error(m->ctx, CXLA_ERR_INTERNAL, "fusion: computations call outside the module");
}

cxla_status fu_index_end(void) {
  fu_index *ix = cur;
  if (!ix) return CXLA_OK;
  cx_comp *c = ix->c;
  int k = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->parent == c) c->instrs[k++] = c->instrs[i];
  c->ninstrs = k;
  /* users pointed into our memory: leave nothing dangling (removed instructions included) */
  for (size_t i = 0; i <= ix->mask; i++) {
    entry *e = &ix->map[i];
    if (!e->key) continue;
    cx_instr *x = (cx_instr *)e->key;
    if (e->cap) cx_free(x->users);
    x->users = NULL;
    x->nusers = 0;
  }
  cxla_status st = finish_comps(ix);
  cx_free(ix->map);
  cx_free(ix->block);
  cx_free(ix->dropped);
  cx_free(ix->reached);
  cx_free(ix);
  cur = NULL;
  return st;
}

int fu_index_drop_comp(const cx_comp *c, cx_comp *fc) {
  fu_index *ix = index_of(c);
  if (!ix) return 0;
  if (ix->ndropped >= ix->capdropped) {
    int nc = ix->capdropped ? 2 * ix->capdropped : 16;
    cx_comp **v = cx_realloc(ix->dropped, sizeof *v * (size_t)nc);
    if (!v) return 0;
    ix->dropped = v;
    ix->capdropped = nc;
  }
  ix->dropped[ix->ndropped++] = fc;
  return 1;
}

int fu_index_add_user(const cx_comp *c, cx_instr *x, cx_instr *u) {
  fu_index *ix = index_of(c);
  if (!ix) return 1;
  entry *e = entry_of(ix, x, -1);
  if (!e) return 0;
  for (int i = 0; i < x->nusers; i++)
    if (x->users[i] == u) return 1;
  if (x->nusers >= e->cap) {
    int nc = x->nusers < 4 ? 8 : 2 * x->nusers;
    cx_instr **v = cx_malloc(sizeof *v * (size_t)nc);
    if (!v) return 0;
    if (x->nusers) memcpy(v, x->users, sizeof *v * (size_t)x->nusers);
    if (e->cap) cx_free(x->users);
    x->users = v;
    e->cap = nc;
  }
  x->users[x->nusers++] = u;
  return 1;
}

void fu_index_remove_user(const cx_comp *c, cx_instr *x, const cx_instr *u) {
  if (!index_of(c)) return;
  for (int i = 0; i < x->nusers; i++)
    if (x->users[i] == u) {
      x->users[i] = x->users[--x->nusers];
      return;
    }
}

int fu_index_pos(const cx_comp *c, const cx_instr *x) {
  fu_index *ix = index_of(c);
  if (!ix) return -1;
  entry *e = find(ix, x);
  return e->key ? e->pos : -1;
}

int fu_index_span(const cx_comp *c, cx_instr *const *xs, int n, int *lo, int *hi) {
  int a = INT32_MAX, b = -1;
  for (int i = 0; i < n; i++) {
    int p = fu_index_pos(c, xs[i]);
    if (p < 0) return 0;
    if (p < a) a = p;
    if (p > b) b = p;
  }
  *lo = a;
  *hi = b;
  return n > 0;
}

int fu_index_place(const cx_comp *c, cx_instr *x, int pos) {
  fu_index *ix = index_of(c);
  if (!ix) return 1;
  entry *e = entry_of(ix, x, pos);
  if (!e) return 0;
  e->pos = pos;
  return 1;
}

/* Lays the live instructions of c (in their order) out with FU_GAP holes after each, so that
 * multi-output edits can re-sort a stretch in place, and renumbers positions. The holes are
 * one dead sentinel instruction (parent NULL). 0 on OOM (c is left as it was). */
#define FU_GAP 2
static int relayout(fu_index *ix) {
  cx_comp *c = ix->c;
  cx_module *m = c->module;
  ix->layouts++;
  if (!ix->hole && !(ix->hole = cx_arena_alloc(&m->arena, sizeof *ix->hole))) return 0;
  int live = 0;
  for (int i = 0; i < c->ninstrs; i++) live += c->instrs[i]->parent == c;
  int64_t cap = (int64_t)live * (FU_GAP + 1) + 16;
  if (cap > INT32_MAX) return 1; /* keep the plain layout: edits fall back to full sorts */
  cx_instr **v = cx_arena_alloc(&m->arena, sizeof *v * (size_t)cap);
  if (!v) return 0;
  int k = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *x = c->instrs[i];
    if (x->parent != c) continue;
    v[k] = x;
    entry *e = find(ix, x);
    if (e->key) e->pos = k;
    k++;
    for (int g = 0; g < FU_GAP; g++) v[k++] = ix->hole;
  }
  c->instrs = v;
  c->ninstrs = k;
  c->cap = cap;
  return 1;
}

int fu_index_layouts(const cx_comp *c) {
  fu_index *ix = index_of(c);
  return ix ? ix->layouts : -1;
}

int fu_index_relayout(const cx_comp *c) {
  fu_index *ix = index_of(c);
  return ix ? relayout(ix) : 1;
}

/* ---- queries ---- */

int fu_nusers(const cx_comp *c, const cx_instr *x) {
  if (index_of(c)) return x->nusers + (c->root == x);
  int n = c->root == x;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *u = c->instrs[i];
    if (u->parent != c) continue;
    for (int j = 0; j < u->nops; j++)
      if (u->ops[j] == x) { n++; break; }
  }
  return n;
}

int fu_only_user_is(const cx_comp *c, const cx_instr *x, const cx_instr *u) {
  if (c->root == x) return 0;
  if (index_of(c)) return x->nusers == 1 && x->users[0] == u;
  int seen = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *v = c->instrs[i];
    if (v->parent != c) continue;
    for (int j = 0; j < v->nops; j++)
      if (v->ops[j] == x) {
        if (v != u) return 0;
        seen = 1;
      }
  }
  return seen;
}

int fu_users(const cx_comp *c, const cx_instr *x, cx_instr ***out) {
  *out = NULL;
  if (index_of(c)) {
    if (!x->nusers) return 0;
    cx_instr **v = cx_malloc(sizeof *v * (size_t)x->nusers);
    if (!v) return -1;
    memcpy(v, x->users, sizeof *v * (size_t)x->nusers);
    *out = v;
    return x->nusers;
  }
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < c->ninstrs; i++) {
      cx_instr *u = c->instrs[i];
      if (u->parent != c) continue;
      for (int j = 0; j < u->nops; j++)
        if (u->ops[j] == x) {
          if (pass) (*out)[n] = u;
          n++;
          break;
        }
    }
    if (pass || !n) break;
    if (!(*out = cx_malloc(sizeof **out * (size_t)n))) return -1;
    n = 0;
  }
  return n;
}

static size_t pair_slot(const fu_index *ix, const cx_instr *from, const cx_instr *to) {
  uint64_t h = ((uint64_t)(uintptr_t)from >> 4) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(uintptr_t)to >> 4) * 0xC2B2AE3D27D4EB4Full;
  size_t i = (size_t)(h ^ h >> 29) & ix->reached_mask;
  while (ix->reached[i].from && (ix->reached[i].from != from || ix->reached[i].to != to)) i = (i + 1) & ix->reached_mask;
  return i;
}

static int known_reached(const fu_index *ix, const cx_instr *from, const cx_instr *to) {
  return ix->reached && ix->reached[pair_slot(ix, from, to)].from == from;
}

/* Remembers that `from` reaches `to`; forgetting (on OOM) only costs a search later. */
static void remember_reached(fu_index *ix, const cx_instr *from, const cx_instr *to) {
  if (2 * (ix->nreached + 1) > (ix->reached ? ix->reached_mask + 1 : 0)) {
    size_t ncap = ix->reached ? 2 * (ix->reached_mask + 1) : 1024;
    struct reach_pair *old = ix->reached, *v = cx_calloc(ncap, sizeof *v);
    if (!v) return;
    size_t oldcap = old ? ix->reached_mask + 1 : 0;
    ix->reached = v;
    ix->reached_mask = ncap - 1;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].from) ix->reached[pair_slot(ix, old[i].from, old[i].to)] = old[i];
    cx_free(old);
  }
  size_t i = pair_slot(ix, from, to);
  if (!ix->reached[i].from) {
    ix->reached[i] = (struct reach_pair){from, to};
    ix->nreached++;
  }
}

/* Reachability by operand paths. With an index only instructions between `from` and `to` in
 * topological order are explored, and a pair found connected is remembered (multi-output
 * fusion asks the same question again in every sweep: 60% of a 32-layer model's searches);
 * without one, positions come from a scan. */
int fu_reaches(const cx_comp *c, const cx_instr *from, const cx_instr *to) {
  if (from == to) return 1;
  fu_index *ix = index_of(c);
  int n = c->ninstrs, pf, pt;
  if (ix) {
    pf = fu_index_pos(c, from);
    pt = fu_index_pos(c, to);
  } else {
    for (int i = 0; i < n; i++) c->instrs[i]->aux = (void *)(intptr_t)(i + 1);
    pf = (int)(intptr_t)from->aux - 1;
    pt = (int)(intptr_t)to->aux - 1;
  }
  int found = 0;
  char *seen = NULL;
  const cx_instr **stack = NULL;
  if (pf < 0 || pt < 0 || pf > pt) goto done;
  if (ix && known_reached(ix, from, to)) {
    found = 1;
    goto done;
  }
  seen = cx_calloc((size_t)(pt - pf) + 1, 1);
  stack = cx_malloc(sizeof *stack * ((size_t)(pt - pf) + 1));
  if (!seen || !stack) { found = -1; goto done; }
  int sp = 0;
  stack[sp++] = to;
  while (sp && !found) {
    const cx_instr *t = stack[--sp];
    for (int j = 0; j < t->nops && !found; j++) {
      const cx_instr *o = t->ops[j];
      if (o == from) { found = 1; break; }
      int p = ix ? fu_index_pos(c, o) : (int)(intptr_t)o->aux - 1;
      if (p <= pf || p > pt || seen[p - pf]) continue; /* before `from`: cannot lead to it */
      seen[p - pf] = 1;
      stack[sp++] = o;
    }
  }
  if (ix && found == 1) remember_reached(ix, from, to);
done:
  if (!ix)
    for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  cx_free(seen);
  cx_free(stack);
  return found;
}
