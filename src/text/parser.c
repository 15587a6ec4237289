/* parser.c — HLO module text to cx_module: the header, computations and instructions, then
 * name resolution. Operands may name instructions defined later in their computation and
 * attributes may name computations defined later in the file (XLA's own dumps do both), so
 * references are recorded as text and resolved once their scope is complete; instructions and
 * computations are then put in dependency order. The module is not verified here. */
#include <string.h>
#include "text/parse_int.h"

/* XLA opcodes cxla does not model: valid HLO, reported as "not supported". */
static const char *const unsupported_ops[] = {
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "real", "imag",
    "complex", "mulhi", "stochastic-convert", "dynamic-reshape", "send", "send-done", "recv",
    "recv-done", "async-start", "async-update", "async-done", "copy-start", "copy-done",
    "all-reduce-start", "all-reduce-done", "all-gather-start", "all-gather-done",
    "collective-permute-start", "collective-permute-done", "collective-broadcast",
    "ragged-all-to-all", "ragged-dot", "scaled-dot", "scan", "shuffle", "custom-call-start",
    "custom-call-update", "custom-call-done", "collective-reduce"};

static int word_eq(const cx_token *t, const char *w) {
  size_t n = strlen(w);
  return t->kind == TK_WORD && t->len == n && !memcmp(t->s, w, n);
}

/* cx_op_lookup without a strlen per table entry (this runs once per instruction). */
static int lookup_op(const cx_token *t) {
  for (int i = 0; i < CX_OP_COUNT; i++) {
    const char *n = cx_op_name((cx_op)i);
    if (n[0] == t->s[0] && !strncmp(n, t->s, t->len) && !n[t->len]) return i;
  }
  return -1;
}

static void push_opref(cx_parser *p, cx_instr *in, const cx_token *name, int slot, int64_t shape) {
  if (!cx_vec_reserve((void **)&p->oprefs, &p->oprefs_cap, p->noprefs + 1, sizeof *p->oprefs)) cx_poom(p);
  cx_ref *r = &p->oprefs[p->noprefs++];
  r->s = name->s;
  r->len = name->len;
  r->loc = cx_tok_loc(name);
  r->in = in;
  r->slot = slot;
  r->shape = shape;
}

static void parse_operands(cx_parser *p, cx_instr *in) {
  int n = 0;
  if (!cx_pis(p, TK_RPAREN)) {
    for (;;) {
      int64_t shape = -1;
      if (cx_pat_shape(p) || cx_pis(p, TK_LPAREN)) {
        if (!cx_vec_reserve((void **)&p->opshapes, &p->opshapes_cap, p->nopshapes + 1, sizeof *p->opshapes)) cx_poom(p);
        cx_opshape *os = &p->opshapes[p->nopshapes];
        os->loc = cx_tok_loc(&p->tok);
        cx_pshape(p, &os->shape, 0);
        shape = p->nopshapes++;
      }
      cx_token name = cx_pname(p, "an operand name");
      if (n == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&name), CXLA_ERR_PARSE, "too many operands");
      push_opref(p, in, &name, n++, shape);
      if (!cx_paccept(p, TK_COMMA)) break;
    }
  }
  cx_pexpect(p, TK_RPAREN, "',' or ')'");
  in->ops = cx_palloc(p, sizeof *in->ops * (size_t)(n ? n : 1));
  in->nops = n;
}

/* [ROOT] name = shape opcode(operands), attributes */
static void parse_instruction(cx_parser *p, cx_comp *c, cx_instr **root) {
  int is_root = 0;
  if (cx_pis_word(p, "ROOT") && cx_ppeek_kind(p) != TK_EQ) {
    cx_padvance(p);
    is_root = 1;
  }
  cx_token name = cx_pname(p, "an instruction name");
  cx_pexpect(p, TK_EQ, "'='");
  cx_shape shape;
  cx_pshape(p, &shape, 0);
  if (p->tok.kind != TK_WORD) cx_pexpected(p, "an opcode");
  cx_token opt = cx_padvance(p);
  int op = lookup_op(&opt);
  if (op < 0) {
    for (int i = 0; i < CX_ARRAY_LEN(unsupported_ops); i++)
      if (word_eq(&opt, unsupported_ops[i]))
        cx_perr(p, cx_tok_loc(&opt), CXLA_ERR_UNSUPPORTED, "not supported: opcode %s", unsupported_ops[i]);
    cx_perr(p, cx_tok_loc(&opt), CXLA_ERR_PARSE, "unknown opcode '%.*s'", (int)(opt.len > 40 ? 40 : opt.len), opt.s);
  }
  cx_instr *in = cx_instr_new(c, (cx_op)op, &shape, 0, NULL);
  if (!in) cx_poom(p);
  in->name = cx_pstrndup(p, name.s, name.len);
  in->loc = cx_tok_loc(&name);
  void *dup = cx_names_add(&p->instr_names, name.s, name.len, in);
  if (dup == &p->instr_names) cx_poom(p);
  if (dup)
    cx_perr(p, in->loc, CXLA_ERR_PARSE, "duplicate instruction name '%s' (first defined at line %d)", in->name,
            ((cx_instr *)dup)->loc.line);
  if (is_root) {
    if (*root) cx_perr(p, in->loc, CXLA_ERR_PARSE, "second ROOT instruction '%s' (the first is '%s')", in->name, (*root)->name);
    *root = in;
  }
  cx_pexpect(p, TK_LPAREN, "'('");
  if (op == CX_OP_PARAMETER) {
    in->a.index = cx_pint(p, "a parameter number");
    cx_pexpect(p, TK_RPAREN, "')'");
  } else if (op == CX_OP_CONSTANT) {
    in->a.literal = cx_pliteral(p, &in->shape, 1);
    cx_pexpect(p, TK_RPAREN, "')' after the constant's value");
  } else {
    parse_operands(p, in);
  }
  cx_pattrs(p, in, &opt);
}

/* Rejects dependency cycles (which cx_comp_sort would silently break). */
static void check_cycles(cx_parser *p, cx_comp *c) {
  int n = c->ninstrs;
  char *color = cx_calloc((size_t)n + 1, 1);
  int *stack = cx_malloc(sizeof(int) * ((size_t)n + 1)), *next = cx_malloc(sizeof(int) * ((size_t)n + 1));
  if (!color || !stack || !next) { cx_free(color); cx_free(stack); cx_free(next); cx_poom(p); }
  for (int i = 0; i < n; i++) c->instrs[i]->aux = (void *)(intptr_t)i;
  cx_instr *bad = NULL;
  for (int i = 0; i < n && !bad; i++) {
    if (color[i]) continue;
    int sp = 0;
    stack[sp] = i;
    next[sp++] = 0;
    color[i] = 1;
    while (sp && !bad) {
      cx_instr *t = c->instrs[stack[sp - 1]];
      if (next[sp - 1] < t->nops) {
        int o = (int)(intptr_t)t->ops[next[sp - 1]++]->aux;
        if (color[o] == 1) bad = c->instrs[o];
        else if (!color[o]) { color[o] = 1; stack[sp] = o; next[sp++] = 0; }
      } else {
        color[stack[--sp]] = 2;
      }
    }
  }
  for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  cx_free(color);
  cx_free(stack);
  cx_free(next);
  if (bad) cx_perr(p, bad->loc, CXLA_ERR_PARSE, "instruction '%s' depends on itself (a cycle through its operands)", bad->name);
}

static void resolve_operands(cx_parser *p) {
  for (int64_t i = 0; i < p->noprefs; i++) {
    cx_ref *r = &p->oprefs[i];
    cx_instr *o = cx_names_find(&p->instr_names, r->s, r->len);
    if (!o) cx_perr(p, r->loc, CXLA_ERR_PARSE, "use of undefined instruction '%.*s'", (int)(r->len > 60 ? 60 : r->len), r->s);
    r->in->ops[r->slot] = o;
    const cx_opshape *os = r->shape >= 0 ? &p->opshapes[r->shape] : NULL;
    if (os && !cx_shape_equal(&os->shape, &o->shape)) {
      char a[128], b[128];
      cx_perr(p, os->loc, CXLA_ERR_PARSE, "operand %d of '%s' is written with shape %s, but '%s' has shape %s", r->slot,
              r->in->name, cx_shape_str(&os->shape, a, sizeof a), o->name, cx_shape_str(&o->shape, b, sizeof b));
    }
  }
}

/* Signature "(x: f32[], y: s32[2]) -> f32[]" against the parameter and root instructions. */
static void check_signature(cx_parser *p, cx_comp *c, int nsig, const cx_shape *sig, const cx_shape *result) {
  char a[128], b[128];
  int np = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->op != CX_OP_PARAMETER) continue;
    np++;
    if (in->a.index < 0 || in->a.index >= nsig)
      cx_perr(p, in->loc, CXLA_ERR_PARSE, "parameter number %lld is not in the signature of '%s' (%d parameters)",
              (long long)in->a.index, c->name, nsig);
    if (!cx_shape_equal(&in->shape, &sig[in->a.index]))
      cx_perr(p, in->loc, CXLA_ERR_PARSE, "parameter '%s' has shape %s, the signature of '%s' says %s", in->name,
              cx_shape_str(&in->shape, a, sizeof a), c->name, cx_shape_str(&sig[in->a.index], b, sizeof b));
  }
  if (np != nsig)
    cx_perr(p, c->loc, CXLA_ERR_PARSE, "the signature of '%s' has %d parameters, the computation has %d", c->name, nsig, np);
  if (!cx_shape_equal(&c->root->shape, result))
    cx_perr(p, c->root->loc, CXLA_ERR_PARSE, "ROOT '%s' has shape %s, the signature of '%s' says %s", c->root->name,
            cx_shape_str(&c->root->shape, a, sizeof a), c->name, cx_shape_str(result, b, sizeof b));
}

static cx_shape *parse_signature(cx_parser *p, int *nsig, cx_shape *result) {
  cx_shape *sig = NULL;
  int n = 0, cap = 0;
  cx_padvance(p); /* '(' */
  while (!cx_paccept(p, TK_RPAREN)) {
    if (n) cx_pexpect(p, TK_COMMA, "',' or ')'");
    cx_pname(p, "a parameter name");
    cx_pexpect(p, TK_COLON, "':'");
    if (n == cap) {
      if (cap > (1 << 28)) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "signature too long");
      int nc = cap ? cap * 2 : 8;
      cx_shape *v = cx_palloc(p, sizeof *v * (size_t)nc);
      if (n) memcpy(v, sig, sizeof *v * (size_t)n);
      sig = v;
      cap = nc;
    }
    cx_pshape(p, &sig[n++], 0);
  }
  cx_pexpect(p, TK_ARROW, "'->'");
  cx_pshape(p, result, 0);
  *nsig = n;
  return sig;
}

static void parse_computation(cx_parser *p) {
  cx_module *m = p->m;
  int is_entry = 0;
  if (cx_pis_word(p, "ENTRY")) { cx_padvance(p); is_entry = 1; }
  cx_token name = cx_pname(p, "a computation name");
  cx_comp *c = cx_comp_new(m, "");
  if (!c) cx_poom(p);
  c->name = cx_pstrndup(p, name.s, name.len);
  c->loc = cx_tok_loc(&name);
  void *dup = cx_names_add(&p->comp_names, name.s, name.len, c);
  if (dup == &p->comp_names) cx_poom(p);
  if (dup) cx_perr(p, c->loc, CXLA_ERR_PARSE, "duplicate computation name '%s' (first defined at line %d)", c->name, ((cx_comp *)dup)->loc.line);
  if (is_entry) {
    if (m->entry) cx_perr(p, c->loc, CXLA_ERR_PARSE, "second ENTRY computation '%s' (the first is '%s')", c->name, m->entry->name);
    c->is_entry = 1;
    m->entry = c;
  }
  int nsig = -1;
  cx_shape *sig = NULL, result;
  if (cx_pis(p, TK_LPAREN)) sig = parse_signature(p, &nsig, &result);
  cx_pexpect(p, TK_LBRACE, nsig < 0 ? "'{' or a signature '(...) -> shape'" : "'{'");
  cx_names_free(&p->instr_names);
  p->noprefs = 0;
  p->nopshapes = 0;
  cx_instr *root = NULL;
  while (!cx_pis(p, TK_RBRACE)) {
    if (cx_pis(p, TK_EOF)) cx_pexpected(p, "'}' at the end of the computation");
    parse_instruction(p, c, &root);
  }
  cx_padvance(p);
  if (!c->ninstrs) cx_perr(p, c->loc, CXLA_ERR_PARSE, "computation '%s' has no instructions", c->name);
  c->root = root ? root : c->instrs[c->ninstrs - 1];
  resolve_operands(p);
  check_cycles(p, c);
  if (cx_comp_sort(c) <= 0) cx_poom(p);
  int has_params = 0;
  for (int i = 0; i < c->ninstrs; i++) has_params |= c->instrs[i]->op == CX_OP_PARAMETER;
  int numbered = cx_comp_index_params(c);
  if (!numbered && has_params && !c->params) cx_poom(p);
  /* With parameter numbers that are not 0..n-1 the signature cannot line up; the verifier
   * reports the numbering itself. */
  if (nsig >= 0 && numbered) check_signature(p, c, nsig, sig, &result);
  if (!cx_module_add_comp(m, c)) cx_poom(p);
  while (cx_paccept(p, TK_COMMA)) { /* ", execution_thread=..." is accepted and ignored */
    cx_pexpect(p, TK_WORD, "an attribute name");
    cx_token eq = cx_pexpect(p, TK_EQ, "'='");
    cx_praw_value(p, &eq);
  }
}

/* "FileNames", "FunctionNames", "FileLocations", "StackFrames": numbered lines of strings or
 * {...} records that metadata stack_frame_id refers to, kept in the module's frame tables. */
static int frame_section(cx_parser *p, cx_module *m) {
  int k = 0;
  while (k < CX_FRAME_TABLES && !cx_pis_word(p, cx_frame_table_names[k])) k++;
  if (k == CX_FRAME_TABLES || cx_ppeek_kind(p) == TK_LPAREN || cx_ppeek_kind(p) == TK_LBRACE) return 0;
  cx_padvance(p);
  int64_t v;
  while (p->tok.kind == TK_WORD && cx_parse_i64(p->tok.s, p->tok.len, &v) == 0) {
    cx_token num = cx_padvance(p);
    cx_token text = cx_praw_value(p, &num);
    const char *key = cx_pstrndup(p, num.s, num.len), *val = cx_pstrndup(p, text.s, text.len);
    if (!cx_attr_add_raw(m, &m->nframes[k], &m->frames[k], key, val)) cx_poom(p);
  }
  return 1;
}

/* Puts m->comps in an order where every computation comes after the ones it calls (depth-
 * first post-order from each computation in file order, so an ordered file keeps its order),
 * and rejects recursion. */
static void order_comps(cx_parser *p) {
  cx_module *m = p->m;
  int n = m->ncomps;
  int64_t ne = p->ncallrefs;
  int *first = cx_calloc((size_t)n + 2, sizeof(int)), *edge = cx_malloc(sizeof(int) * ((size_t)ne + 1));
  int *stack = cx_malloc(sizeof(int) * ((size_t)n + 1)), *next = cx_malloc(sizeof(int) * ((size_t)n + 1));
  char *color = cx_calloc((size_t)n + 1, 1);
  cx_comp **out = cx_arena_alloc(&m->arena, sizeof *out * ((size_t)n + 1));
  const cx_ref *bad = NULL;
  if (!first || !edge || !stack || !next || !color || !out) goto done;
  for (int i = 0; i < n; i++) m->comps[i]->aux = (void *)(intptr_t)i;
  /* adjacency in CSR form: edges of comp i are edge[first[i] .. first[i+1]) */
  for (int64_t e = 0; e < ne; e++) first[(intptr_t)p->callrefs[e].in->parent->aux + 1]++;
  for (int i = 0; i < n; i++) first[i + 1] += first[i];
  int *fill = next; /* reused as insertion cursors before the search */
  for (int i = 0; i < n; i++) fill[i] = first[i];
  for (int64_t e = 0; e < ne; e++) {
    const cx_ref *r = &p->callrefs[e];
    edge[fill[(intptr_t)r->in->parent->aux]++] = (int)e;
  }
  int k = 0;
  for (int i = 0; i < n && !bad; i++) {
    if (color[i]) continue;
    int sp = 0;
    stack[sp] = i;
    next[sp++] = first[i];
    color[i] = 1;
    while (sp && !bad) {
      int t = stack[sp - 1];
      if (next[sp - 1] < first[t + 1]) {
        const cx_ref *r = &p->callrefs[edge[next[sp - 1]++]];
        int o = (int)(intptr_t)r->in->called[r->slot]->aux;
        if (color[o] == 1) bad = r;
        else if (!color[o]) { color[o] = 1; stack[sp] = o; next[sp++] = first[o]; }
      } else {
        color[t] = 2;
        out[k++] = m->comps[t];
        sp--;
      }
    }
  }
  for (int i = 0; i < n; i++) m->comps[i]->aux = NULL;
  if (!bad) memcpy(m->comps, out, sizeof *out * (size_t)n);
done:;
  int oom = !first || !edge || !stack || !next || !color || !out;
  cx_free(first); cx_free(edge); cx_free(stack); cx_free(next); cx_free(color);
  if (oom) cx_poom(p);
  if (bad)
    cx_perr(p, bad->loc, CXLA_ERR_PARSE, "computation '%s' calls itself (directly or through '%s')",
            bad->in->called[bad->slot]->name, bad->in->parent->name);
}

static void parse_module(cx_parser *p) {
  cx_module *m = p->m;
  p->tok = cx_lex_next(&p->lx);
  if (!cx_pis_word(p, "HloModule")) {
    cx_loc at;
    const char *what = cx_sniff_foreign(p->lx.buf, p->lx.len, m->filename, &p->tok, &at);
    if (what) cx_perr(p, at, CXLA_ERR_PARSE, "%s", what);
    cx_pexpected(p, "'HloModule'");
  }
  cx_padvance(p);
  cx_token name = cx_pname(p, "a module name");
  m->name = cx_pstrndup(p, name.s, name.len);
  int nraw = 0;
  while (cx_paccept(p, TK_COMMA)) {
    cx_token key = cx_pexpect(p, TK_WORD, "a module attribute name");
    cx_token eq = cx_pexpect(p, TK_EQ, "'='");
    cx_token v = cx_praw_value(p, &eq);
    if (nraw == INT32_MAX / 4) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "too many attributes");
    cx_ppush_raw(p, nraw++, &key, &v);
  }
  cx_pstore_raw(p, nraw, &m->nraw, &m->raw);
  while (!cx_pis(p, TK_EOF))
    if (!frame_section(p, m)) parse_computation(p);
  if (!m->ncomps) cx_pexpected(p, "a computation");
  for (int64_t i = 0; i < p->ncallrefs; i++) {
    cx_ref *r = &p->callrefs[i];
    cx_comp *c = cx_names_find(&p->comp_names, r->s, r->len);
    if (!c) cx_perr(p, r->loc, CXLA_ERR_PARSE, "use of undefined computation '%.*s'", (int)(r->len > 60 ? 60 : r->len), r->s);
    r->in->called[r->slot] = c;
  }
  if (!m->entry) { /* XLA's rule: without ENTRY the last computation is the entry */
    m->entry = m->comps[m->ncomps - 1];
    m->entry->is_entry = 1;
  }
  order_comps(p);
}

static void free_scratch(cx_parser *p) {
  cx_free(p->ints);
  cx_free(p->oprefs);
  cx_free(p->opshapes);
  cx_free(p->callrefs);
  cx_free(p->rawtok);
  cx_names_free(&p->instr_names);
  cx_names_free(&p->comp_names);
}

cxla_status cx_parse_module(cxla_context *ctx, const char *text, size_t len, const char *filename, cx_module **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cx_parse_module: out is NULL");
  *out = NULL;
  cx_module *m = cx_module_new(ctx, "module");
  if (!m) return CXLA_ERR_OUT_OF_MEMORY;
  m->filename = cx_arena_strdup(&m->arena, filename ? filename : "<input>");
  cx_parser *p = m->filename ? cx_calloc(1, sizeof *p) : NULL;
  if (!p) {
    cx_module_free(m);
    return cx_oom(ctx);
  }
  p->m = m;
  cx_lex_init(&p->lx, text, text ? len : 0);
  cxla_status st = CXLA_OK;
  if (setjmp(p->jb) == 0) parse_module(p);
  else st = p->status;
  free_scratch(p);
  cx_free(p);
  if (st != CXLA_OK) {
    cx_module_free(m);
    return st;
  }
  *out = m;
  return CXLA_OK;
}
