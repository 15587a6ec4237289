/* comps.c — the computations grad makes besides the ENTRY: small scalar ones (reducers,
 * select comparisons), made once per module, and the bookkeeping that adds a finished
 * computation to the module (callees before callers, as the printer and verifier expect). */
#include <string.h>
#include "grad/grad_int.h"

enum { CACHE_SCALAR = 1 };

cx_comp *gr_comp_begin(gr_module *g, const char *prefix, const char *base) {
  /* "region_0.4" -> "vjp_region_0.<fresh>": the source's numeric suffix says nothing here */
  char buf[200];
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) n = (size_t)(dot - base);
  if (n > 120) n = 120;
  snprintf(buf, sizeof buf, "%s%.*s", prefix, (int)n, base);
  const char *name = cx_module_unique_name(g->m, buf);
  return name ? cx_comp_new(g->m, name) : NULL;
}

cxla_status gr_comp_end(gr_module *g, cx_comp *c, cx_instr *root) {
  if (!c || !root) return CXLA_ERR_OUT_OF_MEMORY;
  c->root = root;
  if (!cx_comp_index_params(c)) return cx_error(g->m->ctx, CXLA_ERR_INTERNAL, "grad: %s: bad parameter numbers", c->name);
  CX_TRY(cx_comp_resort(c, "grad"));
  return cx_module_add_comp(g->m, c) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

static cx_comp *cached(gr_module *g, int kind, cx_comp *src) {
  for (int i = 0; i < g->ncache; i++)
    if (g->cache[i].kind == kind && g->cache[i].src == src) return g->cache[i].made;
  return NULL;
}

static int remember(gr_module *g, int kind, cx_comp *src, cx_comp *made) {
  if (!cx_vec_reserve((void **)&g->cache, &g->cap, g->ncache + 1, sizeof *g->cache)) return 0;
  g->cache[g->ncache++] = (gr_cache_entry){src, made, kind};
  return 1;
}

cx_comp *gr_scalar_comp(gr_module *g, cx_op op, cxla_type t, cxla_compare_dir dir) {
  /* keyed by (op, type, direction) packed into the kind; src is unused */
  int kind = CACHE_SCALAR + 16 * ((int)op * 64 + (int)t * 8 + (int)dir);
  cx_comp *c = cached(g, kind, NULL);
  if (c) return c;
  char prefix[64];
  const char *what = op != CX_OP_COMPARE ? cx_op_name(op) : dir == CXLA_GE ? "ge" : dir == CXLA_LE ? "le" : "compare";
  snprintf(prefix, sizeof prefix, "grad_%s_%s", what, cxla_type_name(t));
  c = gr_comp_begin(g, prefix, "");
  if (!c) return NULL;
  gr_em e = {g, c, {0, 0}, CXLA_OK};
  cx_shape s = cx_shape_scalar(t);
  cx_instr *a = gr_param(&e, 0, &s), *b = gr_param(&e, 1, &s);
  cx_instr *r = op == CX_OP_COMPARE ? gr_cmp(&e, a, b, dir) : gr_bin(&e, op, a, b);
  if (e.st != CXLA_OK || gr_comp_end(g, c, r) != CXLA_OK || !remember(g, kind, NULL, c)) return NULL;
  return c;
}

int gr_reducer_op(const cx_comp *c) {
  static const cx_op ops[] = {CX_OP_ADD, CX_OP_MAXIMUM, CX_OP_MINIMUM, CX_OP_MULTIPLY, CX_OP_AND, CX_OP_OR};
  const cx_instr *r = c->root;
  if (!r || r->nops != 2 || r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER ||
      r->ops[0]->a.index == r->ops[1]->a.index)
    return -1;
  for (int i = 0; i < CX_ARRAY_LEN(ops); i++)
    if (r->op == ops[i]) return (int)r->op;
  return -1;
}

/* vjp computations are cached with the same table (kind 0, keyed by source computation) */
cx_comp *gr_cached_vjp(gr_module *g, cx_comp *src) { return cached(g, 0, src); }
int gr_remember_vjp(gr_module *g, cx_comp *src, cx_comp *vjp) { return remember(g, 0, src, vjp); }
