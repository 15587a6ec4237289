/* module.c — creating and editing modules, computations and instructions. */
#include <stdio.h>
#include <string.h>
#include "ir/attrs.h"

const char *const cx_fusion_kind_names[CX_FUSION_KINDS] = {"", "kLoop", "kInput", "kOutput", "kCustom"};

cx_module *cx_module_new(cxla_context *ctx, const char *name) {
  cx_module *m = cx_calloc(1, sizeof *m);
  if (!m) { cx_oom(ctx); return NULL; }
  m->ctx = ctx;
  cx_arena_init(&m->arena);
  m->name = cx_arena_strdup(&m->arena, name ? name : "module");
  m->filename = "<builder>";
  if (!m->name) { cx_module_free(m); cx_oom(ctx); return NULL; }
  return m;
}

void cx_module_free(cx_module *m) {
  if (!m) return;
  for (int i = 0; i < m->nlits; i++) cxla_literal_destroy(m->lits[i]);
  cx_free(m->lits);
  cx_arena_free(&m->arena);
  cx_free(m);
}

/* Grows an arena-held pointer vector; the old block stays in the arena until the module dies
 * (at most doubling the space used). */
static int arena_vec_push(cx_arena *a, void ***v, int *n, int64_t *cap, void *x) {
  if (*n >= *cap) {
    int64_t nc = *cap ? *cap * 2 : 8;
    void **nv = cx_arena_alloc(a, sizeof(void *) * (size_t)nc);
    if (!nv) return 0;
    if (*n) memcpy(nv, *v, sizeof(void *) * (size_t)*n);
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = x;
  return 1;
}

cx_comp *cx_comp_new(cx_module *m, const char *name) {
  cx_comp *c = cx_arena_alloc(&m->arena, sizeof *c);
  if (!c || !(c->name = cx_arena_strdup(&m->arena, name ? name : "computation"))) {
    cx_oom(m->ctx);
    return NULL;
  }
  c->module = m;
  return c;
}

int cx_module_add_comp(cx_module *m, cx_comp *c) {
  if (!arena_vec_push(&m->arena, (void ***)&m->comps, &m->ncomps, &m->cap, c)) { cx_oom(m->ctx); return 0; }
  if (c->is_entry) m->entry = c;
  return 1;
}

cx_comp *cx_module_find_comp(cx_module *m, const char *name) {
  for (int i = 0; i < m->ncomps; i++)
    if (!strcmp(m->comps[i]->name, name)) return m->comps[i];
  return NULL;
}

int cx_module_comp_index(cx_module *m, cx_comp *c) {
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i] == c) return i;
  return -1;
}

cx_instr *cx_instr_new(cx_comp *c, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops) {
  cx_module *m = c->module;
  cx_instr *in = cx_arena_alloc(&m->arena, sizeof *in);
  if (!in) goto oom;
  in->op = op;
  in->id = ++m->next_id;
  in->parent = c;
  cx_attrs_init(&in->a);
  if (!cx_shape_copy(&in->shape, shape, &m->arena)) goto oom;
  if (nops) {
    in->ops = cx_arena_alloc(&m->arena, sizeof(cx_instr *) * (size_t)nops);
    if (!in->ops) goto oom;
    memcpy(in->ops, ops, sizeof(cx_instr *) * (size_t)nops);
  }
  in->nops = nops;
  if (!arena_vec_push(&m->arena, (void ***)&c->instrs, &c->ninstrs, &c->cap, in)) goto oom;
  return in;
oom:
  cx_oom(m->ctx);
  return NULL;
}

int cx_instr_set_called(cx_instr *in, int n, cx_comp *const *called) {
  cx_module *m = in->parent->module;
  cx_comp **v = n ? cx_arena_alloc(&m->arena, sizeof(cx_comp *) * (size_t)n) : NULL;
  if (n && !v) { cx_oom(m->ctx); return 0; }
  if (n) memcpy(v, called, sizeof(cx_comp *) * (size_t)n);
  in->called = v;
  in->ncalled = n;
  return 1;
}

int cx_instr_set_name(cx_instr *in, const char *name) {
  cx_module *m = in->parent->module;
  const char *s = cx_arena_strdup(&m->arena, name);
  if (!s) { cx_oom(m->ctx); return 0; }
  in->name = s;
  return 1;
}

/* Without printf: the fusion passes name every clone they make, and formatting was a sixth
 * of their time. */
const char *cx_module_unique_name(cx_module *m, const char *prefix) {
  char digits[12];
  int nd = 0;
  for (unsigned v = (unsigned)++m->next_id; v || !nd; v /= 10) digits[nd++] = (char)('0' + v % 10);
  size_t np = strlen(prefix);
  if (np > 240) np = 240;
  char *s = cx_arena_alloc(&m->arena, np + 2 + (size_t)nd);
  if (!s) {
    cx_oom(m->ctx);
    return NULL;
  }
  memcpy(s, prefix, np);
  s[np] = '.';
  for (int i = 0; i < nd; i++) s[np + 1 + i] = digits[nd - 1 - i];
  s[np + 1 + nd] = 0;
  return s;
}

int cx_ints_set(cx_module *m, cx_ints *dst, int n, const int64_t *v) {
  dst->n = 0;
  dst->v = NULL;
  if (n <= 0) return 1;
  dst->v = cx_arena_memdup(&m->arena, v, sizeof(int64_t) * (size_t)n);
  if (!dst->v) { cx_oom(m->ctx); return 0; }
  dst->n = n;
  return 1;
}

int cx_ints_has(const cx_ints *s, int64_t v) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i] == v) return 1;
  return 0;
}

int cx_attr_add_raw(cx_module *m, int *n, cx_raw_attr **raw, const char *key, const char *value) {
  cx_raw_attr *v = cx_arena_alloc(&m->arena, sizeof *v * (size_t)(*n + 1));
  if (!v) { cx_oom(m->ctx); return 0; }
  if (*n) memcpy(v, *raw, sizeof *v * (size_t)*n);
  v[*n].key = cx_arena_strdup(&m->arena, key);
  v[*n].value = cx_arena_strdup(&m->arena, value);
  if (!v[*n].key || !v[*n].value) { cx_oom(m->ctx); return 0; }
  *raw = v;
  (*n)++;
  return 1;
}

int cx_module_own_literal(cx_module *m, cxla_literal *lit) {
  if (!cx_vec_reserve((void **)&m->lits, &m->litcap, m->nlits + 1, sizeof *m->lits)) {
    cxla_literal_destroy(lit);
    cx_oom(m->ctx);
    return 0;
  }
  m->lits[m->nlits++] = lit;
  return 1;
}

int cx_comp_index_params(cx_comp *c) {
  cx_module *m = c->module;
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op == CX_OP_PARAMETER) n++;
  c->nparams = n;
  c->params = n ? cx_arena_alloc(&m->arena, sizeof(cx_instr *) * (size_t)n) : NULL;
  if (n && !c->params) { cx_oom(m->ctx); c->nparams = 0; return 0; }
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *p = c->instrs[i];
    if (p->op != CX_OP_PARAMETER) continue;
    if (p->a.index < 0 || p->a.index >= n || c->params[p->a.index]) return 0;
    c->params[p->a.index] = p;
  }
  return 1;
}

const cx_instr *cx_comp_binary_of_params(const cx_comp *c) {
  if (!c || c->nparams != 2 || !c->root || c->root->nops != 2) return NULL;
  const cx_instr *x = c->root;
  int direct = x->ops[0] == c->params[0] && x->ops[1] == c->params[1];
  return direct || (x->ops[0] == c->params[1] && x->ops[1] == c->params[0]) ? x : NULL;
}

void cx_comp_replace_uses(cx_comp *c, cx_instr *old_, cx_instr *new_) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    for (int j = 0; j < in->nops; j++)
      if (in->ops[j] == old_) in->ops[j] = new_;
  }
  if (c->root == old_) c->root = new_;
}

static void mark_live(cx_instr *in) {
  if (in->aux) return;
  in->aux = in;
  for (int j = 0; j < in->nops; j++) mark_live(in->ops[j]);
}

void cx_comp_remove_dead(cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  if (c->root) mark_live(c->root);
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->aux || in->op == CX_OP_PARAMETER) c->instrs[n++] = in;
  }
  c->ninstrs = n;
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
}

/* Depth-first post-order from each instruction in the current order: operands land first. */
int cx_comp_sort(cx_comp *c) {
  int n = c->ninstrs;
  cx_instr **out = cx_malloc(sizeof(cx_instr *) * (size_t)(n ? n : 1));
  cx_instr **stack = cx_malloc(sizeof(cx_instr *) * (size_t)(n ? n : 1));
  int *next = cx_malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!out || !stack || !next) {
    cx_free(out); cx_free(stack); cx_free(next);
    cx_oom(c->module->ctx);
    return -1;
  }
  static char on_stack, done; /* aux: NULL unvisited */
  for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  int k = 0, outside = 0;
  for (int i = 0; i < n; i++) {
    if (c->instrs[i]->aux) continue;
    int sp = 0;
    stack[sp] = c->instrs[i];
    next[sp++] = 0;
    c->instrs[i]->aux = &on_stack;
    while (sp) {
      cx_instr *t = stack[sp - 1];
      if (next[sp - 1] < t->nops) {
        cx_instr *o = t->ops[next[sp - 1]++];
        if (o->parent != c) outside = 1; /* a bug in the caller: reported, never followed */
        else if (!o->aux) {
          o->aux = &on_stack;
          stack[sp] = o;
          next[sp++] = 0;
        }
      } else {
        t->aux = &done;
        out[k++] = t;
        sp--;
      }
    }
  }
  for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  int ok = !outside && k == n;
  if (ok) memcpy(c->instrs, out, sizeof *out * (size_t)n);
  cx_free(out);
  cx_free(stack);
  cx_free(next);
  return ok;
}

cxla_status cx_error_at(cx_module *m, cx_loc loc, cxla_status code, const char *fmt, ...) {
  char msg[1800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (loc.line > 0)
    return cx_error(m->ctx, code, "%s:%d:%d: error: %s", m->filename, loc.line, loc.col, msg);
  return cx_error(m->ctx, code, "%s: error: %s", m->filename, msg);
}
