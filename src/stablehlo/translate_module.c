/* translate_module.c — the module's structure: functions to computations (the public "main" is
 * the ENTRY; several results make a tuple root, as XLA makes for JAX's main), calls, blocks of
 * ops through the op table, and the header attributes XLA derives from the module and the
 * ENTRY's argument attributes (replica/partition counts, input_output_alias, buffer_donor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/edit.h"
#include "stablehlo/translate.h"

#define MAX_REGION_DEPTH 64

/* ---- instructions ---- */

/* Metadata from an MLIR location: op_name from a name location ("jit(f)/add"), source file and
 * line from the innermost file location (the one a callsite location calls first). */
static void loc_parts(const cx_mlir_attr *l, const char **name, const cx_mlir_attr **file, int depth) {
  if (!l || l->kind != CX_MLIR_ATTR_LOC || depth > 32) return;
  switch (l->u.loc.kind) {
  case CX_MLIR_LOC_NAME:
    if (!*name) *name = l->u.loc.name;
    loc_parts(l->u.loc.child, name, file, depth + 1);
    return;
  case CX_MLIR_LOC_FILE:
    if (!*file) *file = l;
    return;
  case CX_MLIR_LOC_CALLSITE:
    loc_parts(l->u.loc.callee, name, file, depth + 1);
    loc_parts(l->u.loc.caller, name, file, depth + 1);
    return;
  case CX_MLIR_LOC_FUSED:
    for (int i = 0; i < l->u.loc.n; i++) loc_parts(l->u.loc.locs[i], name, file, depth + 1);
    return;
  case CX_MLIR_LOC_UNKNOWN:
    return;
  }
}

static void put_quoted(cx_sb *sb, const char *s) {
  cx_sb_putc(sb, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') cx_sb_putc(sb, '\\');
    if ((unsigned char)*s >= 0x20) cx_sb_putc(sb, *s);
  }
  cx_sb_putc(sb, '"');
}

static int add_metadata(cx_sx *sx, cx_instr *in, const cx_mlir_op *op) {
  const char *name = NULL;
  const cx_mlir_attr *file = NULL;
  loc_parts(op->loc, &name, &file, 0);
  /* "-": MLIR parsed from a string without a file name (nothing to point at) */
  if (file && (!file->u.loc.file || !strcmp(file->u.loc.file, "-") || !*file->u.loc.file)) file = NULL;
  if (!name && !file) return 1;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_putc(&sb, '{');
  if (name) {
    cx_sb_puts(&sb, "op_name=");
    put_quoted(&sb, name);
  }
  if (file) {
    cx_sb_puts(&sb, name ? " source_file=" : "source_file=");
    put_quoted(&sb, file->u.loc.file);
    cx_sb_printf(&sb, " source_line=%lld", (long long)file->u.loc.line);
  }
  cx_sb_putc(&sb, '}');
  char *v = cx_sb_take(&sb);
  if (!v) return cx_oom(sx->ctx), 0;
  int ok = cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "metadata", v);
  cx_free(v);
  return ok;
}

/* mhlo.frontend_attributes (a dictionary of strings) as HLO's frontend_attributes={k="v",...},
 * which XLA copies onto the instruction. */
static cxla_status frontend_attributes(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  const cx_mlir_attr *d = cx_mlir_op_attr(op, "mhlo.frontend_attributes");
  if (!d || d->kind != CX_MLIR_ATTR_DICT || !d->u.dict.n) return CXLA_OK;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_putc(&sb, '{');
  for (int i = 0; i < d->u.dict.n; i++) {
    const cx_mlir_attr *v = d->u.dict.entries[i].value;
    cx_sb_printf(&sb, "%s%s=", i ? "," : "", d->u.dict.entries[i].name);
    if (v->kind == CX_MLIR_ATTR_STRING) cx_sx_print_attr(&sb, v);
    else {
      cx_sb_putc(&sb, '"');
      cx_sx_print_attr(&sb, v);
      cx_sb_putc(&sb, '"');
    }
  }
  cx_sb_putc(&sb, '}');
  char *s = cx_sb_take(&sb);
  if (!s) return cx_oom(sx->ctx);
  int ok = cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "frontend_attributes", s);
  cx_free(s);
  return ok ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

cx_instr *cx_sx_add(cx_sx *sx, cx_comp *c, cx_op opc, const cx_shape *s, int nops, cx_instr *const *ops,
                    const cx_mlir_op *op) {
  cx_instr *in = cx_instr_new(c, opc, s, nops, ops);
  if (!in) return NULL;
  in->name = cx_module_unique_name(sx->m, cx_op_name(opc));
  if (!in->name) return NULL;
  if (op && !add_metadata(sx, in, op)) return NULL;
  /* one device: a sharding says how to split what cxla keeps whole; kept for the printer */
  const char *shs = op ? cx_sx_str(op, "mhlo.sharding") : NULL;
  if (shs && *shs && !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "sharding", shs)) return NULL;
  if (op && frontend_attributes(sx, op, in) != CXLA_OK) return NULL;
  return in;
}

cxla_status cx_sx_operand(cx_sx *sx, const cx_mlir_op *op, int i, cx_instr **out) {
  const cx_mlir_value *v = op->operands[i];
  if (!v || v->id < 0 || v->id >= sx->nvals || !sx->vals[v->id])
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "operand %d is a value defined nowhere the op can see", i);
  *out = sx->vals[v->id];
  return CXLA_OK;
}

cxla_status cx_sx_operands(cx_sx *sx, const cx_mlir_op *op, int from, cx_instr ***ops, int *n) {
  int k = op->num_operands - from;
  *n = k > 0 ? k : 0;
  *ops = cx_arena_alloc(&sx->m->arena, sizeof **ops * (size_t)(*n ? *n : 1));
  if (!*ops) return cx_oom(sx->ctx);
  for (int i = 0; i < *n; i++) CX_TRY(cx_sx_operand(sx, op, from + i, &(*ops)[i]));
  return CXLA_OK;
}

cxla_status cx_sx_arity(cx_sx *sx, const cx_mlir_op *op, int n, int nres) {
  if (n >= 0 && op->num_operands != n)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected %d operand%s, got %d", n, n == 1 ? "" : "s", op->num_operands);
  if (n < 0 && op->num_operands < -n)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected at least %d operands, got %d", -n, op->num_operands);
  if (nres >= 0 && op->num_results != nres)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected %d result%s, got %d", nres, nres == 1 ? "" : "s", op->num_results);
  return CXLA_OK;
}

cxla_status cx_sx_bind(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *in) {
  if (op->num_results == 1) {
    sx->vals[op->results[0].id] = in;
    return CXLA_OK;
  }
  if (in->shape.type != CXLA_TUPLE || in->shape.ntuple != op->num_results)
    return cx_sx_err(sx, op, CXLA_ERR_INTERNAL, "%d results bound to a value of %d", op->num_results,
                     in->shape.type == CXLA_TUPLE ? in->shape.ntuple : 1);
  for (int i = 0; i < op->num_results; i++) {
    cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &in->shape.tuple[i], 1, &in, op);
    if (!g) return CXLA_ERR_OUT_OF_MEMORY;
    g->a.index = i;
    sx->vals[op->results[i].id] = g;
  }
  return CXLA_OK;
}

cxla_status cx_sx_broadcast_scalar(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *x, const cx_shape *s,
                                   cx_instr **out) {
  *out = x;
  if (x->shape.type == CXLA_TUPLE || x->shape.rank || !s->rank) return CXLA_OK;
  cx_shape bs = cx_shape_array(x->shape.type, s->rank, s->dims);
  cx_instr *b = cx_sx_add(sx, c, CX_OP_BROADCAST, &bs, 1, &x, op);
  if (!b) return CXLA_ERR_OUT_OF_MEMORY;
  *out = b;
  return CXLA_OK;
}

cxla_status cx_sx_root(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr **v, int n, int force_tuple,
                       cx_instr **out) {
  if (n == 1 && !force_tuple) {
    *out = v[0];
    return CXLA_OK;
  }
  cx_shape ts;
  memset(&ts, 0, sizeof ts);
  ts.type = CXLA_TUPLE;
  ts.ntuple = n;
  if (n && !(ts.tuple = cx_arena_alloc(&sx->m->arena, sizeof *ts.tuple * (size_t)n))) return cx_oom(sx->ctx);
  for (int i = 0; i < n; i++) ts.tuple[i] = v[i]->shape;
  *out = cx_sx_add(sx, c, CX_OP_TUPLE, &ts, n, v, op);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* ---- blocks ---- */

/* Ops of other dialects that JAX's client leaves in a portable artifact with Shardy on: a
 * sharding constraint or reshard inside a function (jax.random's out_sharding, with_sharding_
 * constraint), written as Shardy's own op between builtin casts that take the value out of
 * VHLO's types and back. On one device each is its operand, as XLA's Shardy import makes a
 * constraint a copy that SPMD partitioning then removes. */
static int passes_through(const char *name) {
  static const char *const names[] = {"builtin.unrealized_conversion_cast", "sdy.sharding_constraint", "sdy.reshard"};
  for (int i = 0; i < CX_ARRAY_LEN(names); i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

static cxla_status translate_op(cx_sx *sx, cx_comp *c, const cx_mlir_op *op) {
  if (passes_through(op->name)) {
    if (op->num_operands != 1 || op->num_results != 1 || op->num_regions)
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: %s with %d operands and %d results", op->name,
                       op->num_operands, op->num_results);
    cx_instr *x;
    CX_TRY(cx_sx_operand(sx, op, 0, &x));
    return cx_sx_bind(sx, c, op, x);
  }
  const cx_sx_rule *r = cx_sx_find_rule(op->name);
  if (r) {
    if (op->num_successors) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: an op with successor blocks");
    return r->fn(sx, c, op, r->arg);
  }
  const char *why = cx_sx_refusal(op->name);
  if (why) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: %s", why);
  if (op->dialect && strcmp(op->dialect, "vhlo"))
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED,
                     "not supported: an op of the '%s' dialect (a StableHLO portable artifact holds only vhlo ops)",
                     op->dialect);
  return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: unknown VHLO op (newer than StableHLO 1.16.3?)");
}

cxla_status cx_sx_block(cx_sx *sx, cx_comp *c, const cx_mlir_block *b, const cx_mlir_op **term, cx_instr ***rets,
                        int *nrets) {
  *term = NULL;
  if (!b->num_ops) return cx_sx_err(sx, NULL, CXLA_ERR_PARSE, "a block without ops in computation %s", c->name);
  const cx_mlir_op *last = b->ops[b->num_ops - 1];
  if (strcmp(last->name, "vhlo.return_v1") && strcmp(last->name, "func.return") && strcmp(last->name, "stablehlo.return"))
    return cx_sx_err(sx, last, CXLA_ERR_PARSE, "a block must end in vhlo.return_v1");
  for (int i = 0; i + 1 < b->num_ops; i++) {
    const cx_mlir_op *op = b->ops[i];
    if (!strcmp(op->name, "vhlo.return_v1")) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a return before the end of its block");
    CX_TRY(translate_op(sx, c, op));
  }
  *term = last;
  return cx_sx_operands(sx, last, 0, rets, nrets);
}

/* ---- functions ---- */

static cx_sx_func *find_func(cx_sx *sx, const char *sym) {
  for (int i = 0; i < sx->nfuncs; i++) {
    const char *s = cx_sx_str(sx->funcs[i].op, "sym_name");
    if (s && !strcmp(s, sym)) return &sx->funcs[i];
  }
  return NULL;
}

/* A valid HLO name from an MLIR symbol (letters, digits, '_', '.', '-'). */
static const char *hlo_name(cx_sx *sx, const char *s) {
  size_t n = strlen(s);
  char *d = cx_arena_alloc(&sx->m->arena, n + 2);
  if (!d) return NULL;
  size_t k = 0;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) d[k++] = '_';
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
    d[k++] = ok ? ch : '_';
  }
  return d;
}

/* The i-th entry of an arg_attrs/res_attrs array: a dictionary, or NULL. */
static const cx_mlir_attr *attrs_at(const cx_mlir_op *f, const char *which, int i) {
  const cx_mlir_attr *a = cx_mlir_op_attr(f, which);
  if (!a || a->kind != CX_MLIR_ATTR_ARRAY || i >= a->u.array.n) return NULL;
  const cx_mlir_attr *d = a->u.array.elems[i];
  return d && d->kind == CX_MLIR_ATTR_DICT ? d : NULL;
}

/* The string entry `key` of dictionary d (NULL when d or the entry is absent or not a string). */
static const char *dict_str(const cx_mlir_attr *d, const char *key) {
  const cx_mlir_attr *a = d ? cx_mlir_dict_get(d, key) : NULL;
  return a && a->kind == CX_MLIR_ATTR_STRING ? cx_mlir_attr_cstr(a) : NULL;
}

/* mhlo.layout_mode = "{1,0}" sets the layout; "default" and "auto" leave it to cxla. */
static cxla_status layout_mode(cx_sx *sx, const cx_mlir_op *f, const cx_mlir_attr *d, cx_shape *s) {
  const char *lm = dict_str(d, "mhlo.layout_mode");
  if (!lm || lm[0] != '{' || s->type == CXLA_TUPLE || s->type == CXLA_TOKEN) return CXLA_OK;
  int k = 0;
  const char *p = lm + 1;
  uint32_t seen = 0;
  while (*p && *p != '}') {
    char *e;
    long v = strtol(p, &e, 10);
    if (e == p || v < 0 || v >= s->rank || k >= s->rank || (seen >> v & 1))
      return cx_sx_err(sx, f, CXLA_ERR_PARSE, "mhlo.layout_mode '%s' is not a layout of rank %d", lm, s->rank);
    seen |= 1u << v;
    s->minor_to_major[k++] = (int8_t)v;
    p = e;
    while (*p == ',' || *p == ' ') p++;
  }
  if (k != s->rank) return cx_sx_err(sx, f, CXLA_ERR_PARSE, "mhlo.layout_mode '%s' is not a layout of rank %d", lm, s->rank);
  s->has_layout = 1;
  return CXLA_OK;
}

static cxla_status translate_func(cx_sx *sx, cx_sx_func *fn, int is_entry) {
  const cx_mlir_op *f = fn->op;
  const char *sym = cx_sx_str(f, "sym_name");
  if (f->num_regions != 1 || f->regions[0].num_blocks != 1)
    return cx_sx_err(sx, f, CXLA_ERR_UNSUPPORTED, "not supported: a function of %d regions / several blocks", f->num_regions);
  const cx_mlir_block *b = &f->regions[0].blocks[0];
  const char *name = hlo_name(sx, sym ? sym : "function");
  cx_comp *c = name ? cx_comp_new(sx->m, name) : NULL;
  if (!c) return cx_oom(sx->ctx);
  c->is_entry = is_entry;
  fn->state = 1;
  for (int i = 0; i < b->num_args; i++) {
    cx_shape s;
    CX_TRY(cx_sx_shape(sx, f, b->args[i].type, &s));
    const cx_mlir_attr *d = attrs_at(f, "arg_attrs", i);
    if (d) CX_TRY(layout_mode(sx, f, d, &s));
    cx_instr *p = cx_instr_new(c, CX_OP_PARAMETER, &s, 0, NULL);
    char pn[32];
    snprintf(pn, sizeof pn, "Arg_%d", i);
    if (!p || !(p->name = cx_module_unique_name(sx->m, pn))) return CXLA_ERR_OUT_OF_MEMORY;
    p->a.index = i;
    const char *shs = dict_str(d, "mhlo.sharding");
    if (shs && *shs && !cx_attr_add_raw(sx->m, &p->a.nraw, &p->a.raw, "sharding", shs))
      return CXLA_ERR_OUT_OF_MEMORY;
    sx->vals[b->args[i].id] = p;
  }
  const cx_mlir_op *term;
  cx_instr **rets;
  int n;
  CX_TRY(cx_sx_block(sx, c, b, &term, &rets, &n));
  /* result layouts the ENTRY promises (mhlo.layout_mode on res_attrs): a copy to that layout */
  for (int i = 0; is_entry && i < n; i++) {
    const cx_mlir_attr *d = attrs_at(f, "res_attrs", i);
    if (!dict_str(d, "mhlo.layout_mode")) continue;
    cx_shape s = rets[i]->shape;
    CX_TRY(layout_mode(sx, f, d, &s));
    if (!s.has_layout || cx_shape_same_layout(&s, &rets[i]->shape)) continue;
    if (!(rets[i] = cx_sx_add(sx, c, CX_OP_COPY, &s, 1, &rets[i], term))) return CXLA_ERR_OUT_OF_MEMORY;
  }
  CX_TRY(cx_sx_root(sx, c, term, rets, n, 0, &c->root));
  if (!cx_comp_index_params(c)) return cx_sx_err(sx, f, CXLA_ERR_INTERNAL, "parameters of %s", c->name);
  if (!cx_module_add_comp(sx->m, c)) return CXLA_ERR_OUT_OF_MEMORY;
  fn->comp = c;
  fn->state = 2;
  return CXLA_OK;
}

cxla_status cx_sx_func_comp(cx_sx *sx, const cx_mlir_op *op, const char *sym, cx_comp **out) {
  cx_sx_func *fn = sym ? find_func(sx, sym) : NULL;
  if (!fn) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "calls '%s', which the module does not define", sym ? sym : "?");
  if (fn->state == 1) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: '%s' calls itself (recursion)", sym);
  if (fn->state == 0) {
    /* a function's values are its own (functions are isolated from above): translate it with
     * the caller's region depth, which bounds nesting through calls as well */
    if (++sx->depth > MAX_REGION_DEPTH) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "calls nested deeper than %d", MAX_REGION_DEPTH);
    CX_TRY(translate_func(sx, fn, 0));
    sx->depth--;
  }
  *out = fn->comp;
  return CXLA_OK;
}

/* ---- the module ---- */

static cxla_status header(cx_sx *sx, const cx_mlir_op *mod) {
  static const char *const counts[2][2] = {{"mhlo.num_replicas", "replica_count"}, {"mhlo.num_partitions", "num_partitions"}};
  for (int k = 0; k < 2; k++) {
    const cx_mlir_attr *a = cx_mlir_op_attr(mod, counts[k][0]);
    if (!a || a->kind != CX_MLIR_ATTR_INT || a->u.integer.value == 1) continue;
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)a->u.integer.value);
    if (!cx_attr_add_raw(sx->m, &sx->m->nraw, &sx->m->raw, counts[k][1], v)) return CXLA_ERR_OUT_OF_MEMORY;
  }
  return CXLA_OK;
}

/* tf.aliasing_output = N on argument i: result N lives in argument i's memory (XLA's
 * SetUpAlias: output {N}, or {} when the ENTRY has one result); jax.buffer_donor: argument i
 * may be reused for any result. */
static cxla_status aliasing(cx_sx *sx, const cx_mlir_op *f, int nargs, int nres) {
  cx_sb al, dn;
  cx_sb_init(&al);
  cx_sb_init(&dn);
  int nal = 0, ndn = 0;
  cxla_status st = CXLA_OK;
  for (int i = 0; i < nargs && st == CXLA_OK; i++) {
    const cx_mlir_attr *d = attrs_at(f, "arg_attrs", i);
    const cx_mlir_attr *to = d ? cx_mlir_dict_get(d, "tf.aliasing_output") : NULL;
    const cx_mlir_attr *bd = d ? cx_mlir_dict_get(d, "jax.buffer_donor") : NULL;
    if (to) {
      if (to->kind != CX_MLIR_ATTR_INT || to->u.integer.value < 0 || to->u.integer.value >= (nres ? nres : 1)) {
        st = cx_sx_err(sx, f, CXLA_ERR_PARSE, "argument %d: tf.aliasing_output must name one of the %d results", i, nres);
        break;
      }
      if (nres == 1) cx_sb_printf(&al, "%s{}: (%d, {}, may-alias)", nal++ ? ", " : " ", i);
      else cx_sb_printf(&al, "%s{%lld}: (%d, {}, may-alias)", nal++ ? ", " : " ", (long long)to->u.integer.value, i);
    }
    if (bd && bd->kind == CX_MLIR_ATTR_BOOL && bd->u.boolean) cx_sb_printf(&dn, "%s(%d, {})", ndn++ ? ", " : " ", i);
  }
  if (st == CXLA_OK && nal) {
    cx_sb_puts(&al, " }");
    char *v = cx_sb_take(&al);
    char *w = v ? cx_arena_alloc(&sx->m->arena, strlen(v) + 2) : NULL;
    if (w) w[0] = '{', strcpy(w + 1, v);
    if (!w || !cx_attr_add_raw(sx->m, &sx->m->nraw, &sx->m->raw, "input_output_alias", w)) st = cx_oom(sx->ctx);
    cx_free(v);
  }
  if (st == CXLA_OK && ndn) {
    cx_sb_puts(&dn, " }");
    char *v = cx_sb_take(&dn);
    char *w = v ? cx_arena_alloc(&sx->m->arena, strlen(v) + 2) : NULL;
    if (w) w[0] = '{', strcpy(w + 1, v);
    if (!w || !cx_attr_add_raw(sx->m, &sx->m->nraw, &sx->m->raw, "buffer_donor", w)) st = cx_oom(sx->ctx);
    cx_free(v);
  }
  cx_sb_free(&al);
  cx_sb_free(&dn);
  return st;
}

static cxla_status translate_module(cx_sx *sx) {
  const cx_mlir_op *mod = cx_mlir_block_find(&sx->t->top, "builtin.module");
  if (!mod || mod->num_regions != 1 || mod->regions[0].num_blocks != 1)
    return cx_sx_err(sx, NULL, CXLA_ERR_PARSE, "the bytecode holds no builtin.module with one block");
  sx->module_op = mod;
  const char *mname = cx_sx_str(mod, "sym_name");
  if (mname && *mname && !(sx->m->name = hlo_name(sx, mname))) return cx_oom(sx->ctx);
  const cx_mlir_block *b = &mod->regions[0].blocks[0];
  sx->funcs = cx_arena_alloc(&sx->m->arena, sizeof *sx->funcs * (size_t)(b->num_ops ? b->num_ops : 1));
  if (!sx->funcs) return cx_oom(sx->ctx);
  cx_sx_func *entry = NULL;
  for (int i = 0; i < b->num_ops; i++) {
    const cx_mlir_op *op = b->ops[i];
    /* JAX's client writes Shardy's device meshes (sdy.mesh, on by default with the Shardy
     * partitioner) beside the functions: they only name the axes the shardings refer to, and
     * on one device there is nothing to partition, as the sharding attributes themselves. */
    if (!strcmp(op->name, "sdy.mesh") && op->num_regions == 0 && op->num_results == 0) continue;
    if (op->dialect && strcmp(op->dialect, "vhlo"))
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED,
                       "not supported: an op of the '%s' dialect: this MLIR bytecode is not a StableHLO portable "
                       "artifact (VHLO); write one with jax.export or stablehlo.serialize_portable_artifact",
                       op->dialect);
    if (strcmp(op->name, "vhlo.func_v1")) {
      const char *why = cx_sx_refusal(op->name);
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported at module level%s%s", why ? ": " : "", why ? why : "");
    }
    const char *sym = cx_sx_str(op, "sym_name");
    if (!sym) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a function without sym_name");
    if (find_func(sx, sym)) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "function '%s' defined twice", sym);
    sx->funcs[sx->nfuncs].op = op;
    if (!strcmp(sym, "main")) entry = &sx->funcs[sx->nfuncs];
    sx->nfuncs++;
  }
  if (!entry) return cx_sx_err(sx, NULL, CXLA_ERR_PARSE, "the module has no function 'main' (the entry point)");
  const char *vis = cx_sx_str(entry->op, "sym_visibility");
  if (vis && strcmp(vis, "public"))
    return cx_sx_err(sx, entry->op, CXLA_ERR_PARSE, "function 'main' is %s; the entry point must be public", vis);
  CX_TRY(header(sx, mod));
  CX_TRY(translate_func(sx, entry, 1));
  const cx_mlir_block *eb = &entry->op->regions[0].blocks[0];
  const cx_mlir_op *term = eb->ops[eb->num_ops - 1];
  return aliasing(sx, entry->op, eb->num_args, term->num_operands);
}

cxla_status cx_stablehlo_to_module(cxla_context *ctx, const cx_mlir_tree *t, const char *filename, cx_module **out) {
  *out = NULL;
  cx_sx sx;
  memset(&sx, 0, sizeof sx);
  sx.ctx = ctx;
  sx.t = t;
  sx.filename = filename ? filename : "<bytecode>";
  sx.m = cx_module_new(ctx, "module");
  if (!sx.m) return CXLA_ERR_OUT_OF_MEMORY;
  sx.m->filename = cx_arena_strdup(&sx.m->arena, sx.filename);
  sx.nvals = t->num_values;
  sx.vals = cx_calloc((size_t)(sx.nvals ? sx.nvals : 1), sizeof *sx.vals);
  sx.mark = cx_calloc((size_t)(sx.nvals ? sx.nvals : 1), sizeof *sx.mark);
  cxla_status st = !sx.m->filename || !sx.vals || !sx.mark ? cx_oom(ctx) : translate_module(&sx);
  cx_free(sx.vals);
  cx_free(sx.mark);
  if (st != CXLA_OK) {
    cx_module_free(sx.m);
    return st;
  }
  *out = sx.m;
  return CXLA_OK;
}

cxla_status cx_stablehlo_parse_module(cxla_context *ctx, const void *bytes, size_t len, const char *filename,
                                      cx_module **out) {
  *out = NULL;
  cx_mlir_tree *t = NULL;
  CX_TRY(cx_mlirbc_read(ctx, bytes, len, filename, &t));
  cxla_status st = cx_stablehlo_to_module(ctx, t, filename, out);
  cx_mlir_tree_free(t);
  return st;
}
