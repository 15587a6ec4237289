/* test_attrs.c — ir/attrs.def is the one description of instruction attributes. Every field it
 * describes, changed on its own from a baseline on every op whose text carries it, must be
 * seen by clone (within a module and into another), by CSE's equality and hash (and the pass
 * itself), and must survive print -> parse. The description must name every member of
 * cx_attrs (read from ir/ir.h), and the text tables must fit the fields they write. */
#include "ir/attrs.h"
#include "ir/clone.h"
#include "ir/conv_dims.h"
#include "ir/groups.h"
#include "passes/pass.h"
#include "text/attr_keys.h"
#include "text/hlo.h"
#include "util/file.h"
#include "test.h"

#define NPARAMS 5
#define CONV_BASE "b01f_01io->b01f"
/* each differs from CONV_BASE in one part: input b/f, kernel i/o, output b/f, the spatial
 * order of input, kernel and output, the number of spatial dims */
static const char *const k_conv_variants[] = {"f01b_01io->b01f", "b01f_01oi->b01f", "b01f_01io->f01b", "b10f_01io->b01f",
                                              "b01f_10io->b01f", "b01f_01io->b10f", "b0f_0io->b0f"};

static cx_shape vec2(void) {
  static const int64_t two[1] = {2};
  return cx_shape_array(CXLA_F32, 1, two);
}

static void set_ints(cx_module *m, cx_ints *v, int n, const int64_t *vals) { CHECK(cx_ints_set(m, v, n, vals)); }

static cx_conv_dims *labels(cx_module *m, const char *text) {
  cx_conv_dims cd;
  char err[160];
  memset(&cd, 0, sizeof cd);
  if (!cx_parse_dim_labels(text, strlen(text), -1, &cd, err, sizeof err)) {
    CHECK_MSG(0, "%s: %s", text, err);
    return NULL;
  }
  return cx_arena_memdup(&m->arena, &cd, sizeof cd);
}

/* A window of `rank` dims of size 2, every other part at its default. */
static cx_window window(cx_module *m, int rank) {
  cx_window w = {rank, NULL};
  if (rank) w.d = cx_arena_alloc(&m->arena, sizeof *w.d * (size_t)rank);
  for (int i = 0; i < rank; i++) w.d[i] = (cx_window_dim){2, 1, 0, 0, 1, 1, 0};
  return w;
}

static cxla_literal *literal(cx_module *m, float second) {
  cx_shape s = vec2();
  cxla_literal *l = cx_literal_new(&s);
  if (!l || !cx_module_own_literal(m, l)) return NULL;
  ((float *)l->data)[0] = 1;
  ((float *)l->data)[1] = second;
  return l;
}

/* Values the text can carry for every field of in's op: defaults, except where a default would
 * not print back (slice and padding need one value per dimension in each of their fields,
 * strings must be there) and where the variants need something to differ from. */
static void baseline(cx_module *m, cx_instr *in) {
  static const int64_t slice[3] = {0, 2, 1}, zero = 0;
  cx_op_key keys[CX_OP_MAX_KEYS];
  int n = cx_op_attr_keys(in->op, keys);
  for (int i = 0; i < n; i++) {
    const cx_attr_key *k = &cx_attr_keys[keys[i].key];
    switch (k->syntax) {
    case CX_SYN_SLICE:
      for (int j = 0; j < 3; j++) set_ints(m, cx_attr_ptr(&in->a, (cx_attr_id)(k->field + j)), 1, &slice[j]);
      break;
    case CX_SYN_PADDING:
      for (int j = 0; j < 3; j++) set_ints(m, cx_attr_ptr(&in->a, (cx_attr_id)(k->field + j)), 1, &zero);
      break;
    case CX_SYN_WINDOW: in->a.window = window(m, 1); break;
    case CX_SYN_DIM_LABELS: in->a.conv = labels(m, CONV_BASE); break;
    case CX_SYN_WORD: *(const char **)cx_attr_ptr(&in->a, k->field) = "kLoop"; break;
    case CX_SYN_STRING: *(const char **)cx_attr_ptr(&in->a, k->field) = "target"; break;
    case CX_SYN_VERBATIM: *(const char **)cx_attr_ptr(&in->a, k->field) = "{}"; break;
    case CX_SYN_I64: case CX_SYN_I32: case CX_SYN_F32: case CX_SYN_BOOL: case CX_SYN_ENUM:
      if (keys[i].required && k->show == CX_SHOW_IF_SET) /* it would not be written at its default */
        cx_attr_set_pod(&in->a, k->field, cx_attr_fields[k->field].dflt + 1);
      break;
    case CX_SYN_INTS: case CX_SYN_COMP: case CX_SYN_BRANCHES: case CX_SYN_GROUPS:
      break;
    }
  }
  if (in->op == CX_OP_CONSTANT) in->a.literal = literal(m, 2);
}

/* Changes field f of a (holding the baseline) to its variant v; 0 if f has no variant v. */
/* Whether field f is written as true/false (its other value is the negation, not one more). */
static int is_bool(cx_attr_id f) {
  for (int k = 0; k < CX_KEY_COUNT; k++)
    if (cx_attr_keys[k].field == f && cx_attr_keys[k].syntax == CX_SYN_BOOL) return 1;
  return 0;
}

/* Groups as lists ({{0,1}}, {{0,1},{2,3}}, {{1,0}}) and, for replica groups, in the iota form
 * ([2,2]<=[4] and [2,2]<=[2,2]T(1,0)); source-target pairs are lists of pairs only. */
static int groups_variant(cx_module *m, void *p, int pairs, int v) {
  static const int64_t ids[3][4] = {{0, 1}, {0, 1, 2, 3}, {1, 0}}, sizes[2] = {2, 2};
  static const int ngroups[3] = {1, 2, 1};
  cx_groups **g = p;
  if (v < 3) {
    *g = cx_groups_new(m, ngroups[v], sizes, ids[v]);
    return *g != NULL;
  }
  if (pairs || v > 4) return 0;
  static const int64_t flat[4] = {0, 1, 2, 3}, transposed[4] = {0, 2, 1, 3};
  if (!(*g = cx_groups_new(m, 2, sizes, v == 3 ? flat : transposed))) return 0;
  (*g)->ndims = v == 3 ? 1 : 2;
  (*g)->dims[0] = v == 3 ? 4 : 2;
  (*g)->dims[1] = 2;
  (*g)->perm[0] = v == 3 ? 0 : 1;
  (*g)->perm[1] = 0;
  return 1;
}

static int variant(cx_module *m, cx_attrs *a, cx_attr_id f, int v) {
  void *p = cx_attr_ptr(a, f);
  switch (cx_attr_fields[f].kind) {
  case CX_ATTR_KIND_POD:
    if (v) return 0;
    cx_attr_set_pod(a, f, is_bool(f) ? !cx_attr_get_pod(a, f) : cx_attr_get_pod(a, f) + 1);
    return 1;
  case CX_ATTR_KIND_INTS: {
    cx_ints *x = p;
    int64_t vals[CXLA_MAX_RANK] = {3};
    if (v || x->n > CXLA_MAX_RANK) return 0;
    for (int i = 0; i < x->n; i++) vals[i] = x->v[i] + 1;
    set_ints(m, x, x->n ? x->n : 1, vals);
    return 1;
  }
  case CX_ATTR_KIND_WINDOW: { /* absent, then one part of one dim at a time, then rank 2 */
    if (v > 8) return 0;
    cx_window *w = p;
    *w = window(m, v == 0 ? 0 : v == 8 ? 2 : 1);
    if (v == 0 || v == 8) return 1;
    int64_t *part[6] = {&w->d[0].size, &w->d[0].stride, &w->d[0].pad_lo, &w->d[0].pad_hi, &w->d[0].lhs_dilate,
                        &w->d[0].rhs_dilate};
    if (v <= 6) *part[v - 1] += 1;
    else w->d[0].reversal = 1;
    return 1;
  }
  case CX_ATTR_KIND_CONV:
    if (v > CX_ARRAY_LEN(k_conv_variants)) return 0;
    *(cx_conv_dims **)p = v ? labels(m, k_conv_variants[v - 1]) : NULL;
    return 1;
  case CX_ATTR_KIND_STR: {
    const char *s = *(const char **)p;
    if (v || !s) return 0;
    size_t n = strlen(s);
    char *t = cx_arena_alloc(&m->arena, n + 2);
    memcpy(t, s, n);
    t[n] = '2';
    *(const char **)p = t;
    return 1;
  }
  case CX_ATTR_KIND_LITERAL:
    if (v) return 0;
    a->literal = literal(m, 3);
    return 1;
  case CX_ATTR_KIND_RAW:
    if (v) return 0;
    CHECK(cx_attr_add_raw(m, &a->nraw, &a->raw, "sharding", "{replicated}"));
    return 1;
  case CX_ATTR_KIND_GROUPS: return groups_variant(m, p, f == CX_ATTR_SOURCE_TARGET_PAIRS, v);
  }
  return 0;
}

static cx_instr *find(cx_module *m, const char *name) {
  for (int j = 0; m->entry && j < m->entry->ninstrs; j++)
    if (m->entry->instrs[j]->name && !strcmp(m->entry->instrs[j]->name, name)) return m->entry->instrs[j];
  return NULL;
}

static cx_instr *carrier(cx_comp *e, cx_op op, cx_instr *const *params, cx_comp *callee, const char *name) {
  cx_shape s = vec2();
  int nops = cx_op_arity(op) >= 0 ? cx_op_arity(op) : 2;
  CHECK_MSG(nops <= NPARAMS, "%s takes %d operands: raise NPARAMS", cx_op_name(op), nops);
  if (nops > NPARAMS) return NULL;
  cx_instr *in = cx_instr_new(e, op, &s, nops, params);
  if (!in || !cx_instr_set_name(in, name)) return NULL;
  cx_op_key keys[CX_OP_MAX_KEYS];
  cx_comp *called[CX_OP_MAX_KEYS];
  int n = cx_op_attr_keys(op, keys), ncalled = 0;
  for (int i = 0; i < n; i++)
    if (cx_attr_keys[keys[i].key].syntax == CX_SYN_COMP) called[ncalled++] = callee;
  if (!cx_instr_set_called(in, ncalled, called)) return NULL;
  baseline(e->module, in);
  return in;
}

static cx_instr *clone_as(cx_instr *in, const char *name) {
  cx_instr *c = cx_instr_clone(in->parent, in, in->ops);
  return c && cx_instr_set_name(c, name) ? c : NULL;
}

/* ENTRY e: parameters, x (the baseline), y (field f at variant v), x2 and y2 (their clones),
 * ROOT y; f is the callee of ops that call one. NULL if f has no variant v. */
static cx_module *build(cx_op op, cx_attr_id f, int v) {
  cx_module *m = cx_module_new(test_ctx(), "attrs");
  cx_comp *callee = m ? cx_comp_new(m, "f") : NULL;
  if (!callee) return m;
  cx_shape sc = cx_shape_scalar(CXLA_F32), s = vec2();
  cx_instr *a = cx_instr_new(callee, CX_OP_PARAMETER, &sc, 0, NULL), *b = cx_instr_new(callee, CX_OP_PARAMETER, &sc, 0, NULL);
  if (!a || !b) return m;
  b->a.index = 1;
  cx_instr *ab[2] = {a, b};
  callee->root = cx_instr_new(callee, CX_OP_ADD, &sc, 2, ab);
  if (!cx_comp_index_params(callee) || !cx_module_add_comp(m, callee)) return m;
  cx_comp *e = cx_comp_new(m, "e");
  if (!e) return m;
  e->is_entry = 1;
  cx_instr *params[NPARAMS];
  for (int i = 0; i < NPARAMS; i++) {
    char name[8];
    snprintf(name, sizeof name, "p%d", i);
    if (!(params[i] = cx_instr_new(e, CX_OP_PARAMETER, &s, 0, NULL)) || !cx_instr_set_name(params[i], name)) return m;
    params[i]->a.index = i;
  }
  cx_instr *x = carrier(e, op, params, callee, "x"), *y = carrier(e, op, params, callee, "y");
  if (!x || !y) return m;
  if (!variant(m, &y->a, f, v)) {
    cx_module_free(m);
    return NULL;
  }
  e->root = y;
  if (clone_as(x, "x2") && clone_as(y, "y2") && cx_comp_index_params(e)) cx_module_add_comp(m, e);
  return m;
}

/* Whether b holds a pointer into a's memory (a clone must copy everything). */
static const char *shared(const cx_attrs *a, const cx_attrs *b) {
  for (int f = 0; f < CX_ATTR_COUNT; f++) {
    const void *p = cx_attr_cptr(a, (cx_attr_id)f), *q = cx_attr_cptr(b, (cx_attr_id)f);
    int same = 0;
    switch (cx_attr_fields[f].kind) {
    case CX_ATTR_KIND_POD: break;
    case CX_ATTR_KIND_INTS: same = ((const cx_ints *)p)->n && ((const cx_ints *)p)->v == ((const cx_ints *)q)->v; break;
    case CX_ATTR_KIND_WINDOW: same = ((const cx_window *)p)->rank && ((const cx_window *)p)->d == ((const cx_window *)q)->d; break;
    case CX_ATTR_KIND_CONV: case CX_ATTR_KIND_STR: case CX_ATTR_KIND_LITERAL:
      same = *(void *const *)p && *(void *const *)p == *(void *const *)q;
      break;
    case CX_ATTR_KIND_RAW: same = a->nraw && a->raw == b->raw; break;
    case CX_ATTR_KIND_GROUPS: {
      const cx_groups *x = *(cx_groups *const *)p, *y = *(cx_groups *const *)q;
      same = x && (x == y || x->ids == y->ids || x->start == y->start);
      break;
    }
    }
    if (same) return cx_attr_fields[f].name;
  }
  return NULL;
}

/* The same instruction's attributes after a clone or a print -> parse. */
static void check_kept(const char *how, const char *what, const cx_instr *orig, const cx_instr *got, int show_text) {
  if (!got) {
    CHECK_MSG(0, "%s: %s lost instruction %s", what, how, orig->name);
    return;
  }
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  if (show_text) {
    cx_sb_puts(&sb, ", printed as: ");
    cx_print_instr(&sb, orig, &o);
  }
  char *text = cx_sb_take(&sb);
  CHECK_MSG(cx_attrs_equal(&orig->a, &got->a), "%s: %s of %s does not keep it%s", what, how, orig->name, text ? text : "");
  CHECK_MSG(cx_attrs_hash(0, &orig->a) == cx_attrs_hash(0, &got->a), "%s: %s of %s hashes differently", what, how, orig->name);
  cx_free(text);
}

static void check_one(cx_op op, cx_attr_id f, int v) {
  cx_module *m = build(op, f, v);
  if (!m) return;
  char what[160];
  snprintf(what, sizeof what, "%s, %s, variant %d", cx_op_name(op), cx_attr_fields[f].name, v);
  cx_instr *x = find(m, "x"), *y = find(m, "y"), *x2 = find(m, "x2"), *y2 = find(m, "y2");
  if (!m->entry || !x || !y || !x2 || !y2) {
    CHECK_MSG(0, "%s: could not build the module: %s", what, cxla_context_errmsg(test_ctx()));
    cx_module_free(m);
    return;
  }
  CHECK_MSG(!cx_attrs_equal(&x->a, &y->a), "%s: CSE equality does not see the field", what);
  CHECK_MSG(cx_attrs_hash(0, &x->a) != cx_attrs_hash(0, &y->a), "%s: the hash does not see the field", what);
  check_kept("clone", what, x, x2, 0);
  check_kept("clone", what, y, y2, 0);
  const char *s = shared(&y->a, &y2->a);
  CHECK_MSG(!s, "%s: the clone of y shares %s with it", what, s);

  cx_module *mc = cx_module_clone(m);
  CHECK_MSG(mc, "%s: module clone failed", what);
  if (mc) {
    check_kept("module clone", what, y, find(mc, "y"), 0);
    s = find(mc, "y") ? shared(&y->a, &find(mc, "y")->a) : NULL;
    CHECK_MSG(!s, "%s: the module clone of y shares %s with it", what, s);
    if (cx_op_class_of(op) != CX_CLASS_OTHER) { /* the pass merges x2 into x and y2 into y, no more */
      int changed = 0;
      CHECK_OK(cx_pass_cse(mc, &changed));
      CHECK_MSG(changed == 2, "%s: CSE merged %d instructions, want 2 (x2 into x, y2 into y)", what, changed);
    }
    cx_module_free(mc);
  }

  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  char *text = cx_sb_take(&sb);
  cx_module *back = NULL;
  cxla_status st = text ? cx_parse_module(test_ctx(), text, strlen(text), "attrs.hlo", &back) : CXLA_ERR_OUT_OF_MEMORY;
  CHECK_MSG(st == CXLA_OK, "%s: the printed module does not parse: %s\n%s", what, cxla_context_errmsg(test_ctx()),
            text ? text : "");
  if (back) {
    check_kept("print -> parse", what, x, find(back, "x"), 1);
    check_kept("print -> parse", what, y, find(back, "y"), 1);
  }
  cx_module_free(back);
  cx_free(text);
  cx_module_free(m);
}

/* Fields written outside key=value, and an op that carries each. */
static const struct {
  cx_attr_id field;
  cx_op op;
} k_unkeyed[] = {{CX_ATTR_LITERAL, CX_OP_CONSTANT}, {CX_ATTR_RAW, CX_OP_ADD}};

TEST(attrs_every_field_seen_by_clone_cse_and_text) {
  int carriers[CX_ATTR_COUNT] = {0};
  for (int op = 0; op < CX_OP_COUNT; op++) {
    cx_op_key keys[CX_OP_MAX_KEYS];
    int n = cx_op_attr_keys((cx_op)op, keys);
    for (int i = 0; i < n; i++) {
      const cx_attr_key *k = &cx_attr_keys[keys[i].key];
      for (int j = 0; j < cx_attr_syntax_of(k->syntax)->nfields; j++) {
        cx_attr_id f = (cx_attr_id)(k->field + j);
        carriers[f]++;
        for (int v = 0; v < 16; v++) check_one((cx_op)op, f, v);
      }
    }
  }
  for (int i = 0; i < CX_ARRAY_LEN(k_unkeyed); i++) {
    carriers[k_unkeyed[i].field]++;
    check_one(k_unkeyed[i].op, k_unkeyed[i].field, 0);
  }
  for (int f = 0; f < CX_ATTR_COUNT; f++)
    CHECK_MSG(carriers[f], "field %s: no op's text carries it (add a key, or an op to k_unkeyed)", cx_attr_fields[f].name);
}

/* ---- the description names every member of cx_attrs ---- */

static int described(const char *name) {
  for (int f = 0; f < CX_ATTR_COUNT; f++)
    if (!strcmp(cx_attr_fields[f].name, name)) return 1;
  return 0;
}

/* Whether member `full` ("nraw") is the count of a RAW field ("raw"). */
static int raw_count(const char *full) {
  const char *dot = strrchr(full, '.'), *base = dot ? dot + 1 : full;
  size_t pre = (size_t)(base - full);
  for (int f = 0; f < CX_ATTR_COUNT; f++) {
    const char *fn = cx_attr_fields[f].name;
    if (cx_attr_fields[f].kind == CX_ATTR_KIND_RAW && base[0] == 'n' && !strncmp(fn, full, pre) && !strcmp(fn + pre, base + 1))
      return 1;
  }
  return 0;
}

/* The body of "typedef struct TYPE { ... } TYPE;" in src, comments blanked (caller frees). */
static char *struct_body(const char *src, const char *type) {
  char open[96], close[96];
  snprintf(open, sizeof open, "typedef struct %s {", type);
  snprintf(close, sizeof close, "} %s;", type);
  const char *b = strstr(src, open), *e = b ? strstr(b, close) : NULL;
  if (!e) return NULL;
  b += strlen(open);
  char *body = strndup(b, (size_t)(e - b));
  for (char *c = body; c && (c = strstr(c, "/*"));) {
    char *end = strstr(c, "*/");
    size_t n = end ? (size_t)(end + 2 - c) : strlen(c);
    memset(c, ' ', n);
    c += n;
  }
  return body;
}

/* Each member of TYPE (declarations "type a, *b, c[4];") must be a described field, the count
 * of a RAW field ("nraw"), or a struct of ir.h whose members are described ("dot."). */
static void check_members(const char *src, const char *type, const char *prefix) {
  char *body = struct_body(src, type);
  CHECK_MSG(body, "ir/ir.h has no 'typedef struct %s {'", type);
  for (char *save = NULL, *decl = body ? strtok_r(body, ";", &save) : NULL; decl; decl = strtok_r(NULL, ";", &save)) {
    char ctype[64];
    int used = 0;
    while (*decl == ' ' || *decl == '\n') decl++;
    if (!strncmp(decl, "const ", 6)) decl += 6;
    if (sscanf(decl, "%63[A-Za-z0-9_]%n", ctype, &used) != 1) continue;
    for (char *save2 = NULL, *d = strtok_r(decl + used, ",", &save2); d; d = strtok_r(NULL, ",", &save2)) {
      char name[64], full[160];
      while (*d == ' ' || *d == '*' || *d == '\n') d++;
      if (sscanf(d, "%63[A-Za-z0-9_]", name) != 1) continue;
      snprintf(full, sizeof full, "%s%s", prefix, name);
      if (described(full) || raw_count(full)) continue;
      char *nested = struct_body(src, ctype);
      free(nested);
      if (nested) {
        char sub[168];
        snprintf(sub, sizeof sub, "%s.", full);
        check_members(src, ctype, sub);
      } else {
        CHECK_MSG(0, "cx_attrs member %s (%s) is not described in ir/attrs.def", full, ctype);
      }
    }
  }
  free(body);
}

TEST(attrs_description_names_every_member) {
  char path[512];
  unsigned char *src = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/src/ir/ir.h", test_srcdir());
  CHECK_OK(cx_read_file(test_ctx(), path, &src, &len));
  if (!src) return;
  char *text = strndup((const char *)src, len);
  check_members(text, "cx_attrs", "");
  free(text);
  cx_free(src);
}

/* ---- the text tables fit the fields ---- */

TEST(attrs_text_tables_fit_the_fields) {
  for (int k = 0; k < CX_KEY_COUNT; k++) {
    const cx_attr_key *key = &cx_attr_keys[k];
    const cx_attr_syntax_info *si = cx_attr_syntax_of(key->syntax);
    CHECK_MSG((si->nfields == 0) == (key->field == CX_ATTR_NONE), "key %s: field and syntax disagree", key->name);
    if (key->syntax == CX_SYN_ENUM) CHECK_MSG(cx_attr_key_enum((cx_attr_key_id)k)->n > 0, "key %s has no names", key->name);
    for (int j = 0; j < si->nfields; j++) {
      int f = key->field + j;
      CHECK_MSG(f < CX_ATTR_COUNT && cx_attr_fields[f].kind == si->kind, "key %s writes field %d of the wrong kind", key->name, f);
      if (f < CX_ATTR_COUNT && si->kind == CX_ATTR_KIND_POD)
        CHECK_MSG(cx_attr_fields[f].size == si->pod_size, "key %s: field %s is %zu bytes, the syntax writes %zu", key->name,
                  cx_attr_fields[f].name, cx_attr_fields[f].size, si->pod_size);
    }
  }
  for (int op = 0; op < CX_OP_COUNT; op++) {
    cx_op_key keys[CX_OP_MAX_KEYS];
    int n = cx_op_attr_keys((cx_op)op, keys), called = 0;
    for (int i = 0; i < n; i++) {
      const cx_attr_key *key = &cx_attr_keys[keys[i].key];
      CHECK_MSG(cx_op_attr_key_lookup((cx_op)op, key->name, strlen(key->name)) == (int)keys[i].key,
                "%s: two keys spelled %s", cx_op_name((cx_op)op), key->name);
      if (key->field == CX_ATTR_NONE) called = 1;
      else CHECK_MSG(!called, "%s: %s after a called computation (the printer writes those last)", cx_op_name((cx_op)op), key->name);
    }
  }
}
