/* parser.c — HLO module text to cx_module: the header, computations and instructions, then
 * name resolution. Operands may name instructions defined later in their computation and
 * attributes may name computations defined later in the file (XLA's own dumps do both), so
 * references are recorded as text and resolved once their scope is complete; instructions and
 * computations are then put in dependency order. The module is not verified here. */
#include <stdio.h>
#include <string.h>
#include "text/parse_int.h"

/* XLA opcodes cxla does not model: valid HLO, reported as "not supported". */
static const char *const unsupported_ops[] = {
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "real", "imag",
    "complex", "mulhi", "stochastic-convert", "dynamic-reshape", "send", "send-done", "recv",
    "recv-done", "ragged-dot", "scaled-dot", "scan", "shuffle", "collective-reduce"};

static int word_eq(const cx_token *t, const char *w) {
  size_t n = strlen(w);
  return t->kind == TK_WORD && t->len == n && !memcmp(t->s, w, n);
}

/* cx_op_lookup without a strlen per table entry (this runs once per instruction). */
static int lookup_op(const char *s, size_t len) {
  for (int i = 0; i < CX_OP_COUNT; i++) {
    const char *n = cx_op_name((cx_op)i);
    if (n[0] == s[0] && !strncmp(n, s, len) && !n[len]) return i;
  }
  return -1;
}

_Noreturn static void unknown_opcode(cx_parser *p, const cx_token *t) {
  for (int i = 0; i < CX_ARRAY_LEN(unsupported_ops); i++)
    if (word_eq(t, unsupported_ops[i]))
      cx_perr(p, cx_tok_loc(t), CXLA_ERR_UNSUPPORTED, "not supported: opcode %s", unsupported_ops[i]);
  cx_perr(p, cx_tok_loc(t), CXLA_ERR_PARSE, "unknown opcode '%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s);
}

/* The opcode, or XLA's async sugar "<op>-start", "<op>-update", "<op>-done" for an async op
 * wrapping <op> (*wrapped; -1 for a plain opcode). */
static cx_op parse_opcode(cx_parser *p, const cx_token *t, int *wrapped) {
  static const char *const suffix[3] = {"-start", "-update", "-done"};
  static const cx_op async[3] = {CX_OP_ASYNC_START, CX_OP_ASYNC_UPDATE, CX_OP_ASYNC_DONE};
  *wrapped = -1;
  int op = lookup_op(t->s, t->len);
  if (op >= 0) return (cx_op)op;
  for (int k = 0; k < 3; k++) {
    size_t n = strlen(suffix[k]);
    if (t->len <= n || memcmp(t->s + t->len - n, suffix[k], n)) continue;
    int w = lookup_op(t->s, t->len - n);
    if (w < 0) break;
    if (w == CX_OP_PARAMETER || w == CX_OP_CONSTANT || w == CX_OP_ASYNC_START || w == CX_OP_ASYNC_UPDATE ||
        w == CX_OP_ASYNC_DONE)
      cx_perr(p, cx_tok_loc(t), CXLA_ERR_PARSE, "%.*s: %s cannot run asynchronously", (int)t->len, t->s,
              cx_op_name((cx_op)w));
    *wrapped = w;
    return async[k];
  }
  unknown_opcode(p, t);
}

static cx_ref *push_ref(cx_parser *p, cx_instr *in, int slot, cx_loc loc) {
  if (!cx_vec_reserve((void **)&p->oprefs, &p->oprefs_cap, p->noprefs + 1, sizeof *p->oprefs)) cx_poom(p);
  cx_ref *r = &p->oprefs[p->noprefs++];
  memset(r, 0, sizeof *r);
  r->loc = loc;
  r->in = in;
  r->slot = slot;
  r->shape = -1;
  return r;
}

static cx_instr *parse_rhs(cx_parser *p, cx_comp *c, const cx_shape *written, cx_loc loc, int nested);

/* Whether the word at the current token is followed by '(': an opcode, so the operand is a
 * nested instruction. Names are followed by ',' or ')' (checked without lexing first). */
static int at_nested(cx_parser *p) {
  if (p->tok.kind != TK_WORD) return 0;
  const char *e = p->tok.s + p->tok.len;
  if (e < p->lx.buf + p->lx.len && (*e == ',' || *e == ')')) return 0;
  if (e < p->lx.buf + p->lx.len && *e == '(') return 1;
  return cx_ppeek_kind(p) == TK_LPAREN;
}

/* operand ::= shape? name | shape? opcode(operands)   (XLA's nested instructions) */
static void parse_operands(cx_parser *p, cx_comp *c, cx_instr *in) {
  int n = 0;
  if (!cx_pis(p, TK_RPAREN)) {
    for (;;) {
      int64_t shape = -1;
      cx_token at = p->tok;
      if (cx_pat_shape(p) || cx_pis(p, TK_LPAREN)) {
        if (!cx_vec_reserve((void **)&p->opshapes, &p->opshapes_cap, p->nopshapes + 1, sizeof *p->opshapes)) cx_poom(p);
        cx_opshape *os = &p->opshapes[p->nopshapes];
        os->loc = cx_tok_loc(&p->tok);
        cx_pshape(p, &os->shape, 0);
        shape = p->nopshapes++;
      }
      if (n == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "too many operands");
      if (at_nested(p)) {
        cx_shape own; /* the nested instruction's own shape, not a check on an operand */
        if (shape >= 0) own = p->opshapes[--p->nopshapes].shape;
        if (++p->nest > CX_PARSE_MAX_DEPTH)
          cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "instructions nested deeper than %d", CX_PARSE_MAX_DEPTH);
        cx_instr *sub = parse_rhs(p, c, shape >= 0 ? &own : NULL, cx_tok_loc(&at), 1);
        p->nest--;
        push_ref(p, in, n++, sub->loc)->target = sub;
      } else {
        cx_token name = cx_pname(p, "an operand name");
        cx_ref *r = push_ref(p, in, n++, cx_tok_loc(&name));
        r->s = name.s;
        r->len = name.len;
        r->shape = shape;
      }
      if (!cx_paccept(p, TK_COMMA)) break;
    }
  }
  cx_pexpect(p, TK_RPAREN, "',' or ')'");
  in->ops = cx_palloc(p, sizeof *in->ops * (size_t)(n ? n : 1));
  in->nops = n;
}

/* XLA's parser rejects an async op whose shape is not ((operands), result, context...). */
static void check_async_shape(cx_parser *p, cx_op op, const cx_shape *s, const cx_token *opt) {
  if (op != CX_OP_ASYNC_START && op != CX_OP_ASYNC_UPDATE) return;
  if (s->type == CXLA_TUPLE && s->ntuple >= 2 && s->tuple[0].type == CXLA_TUPLE) return;
  char b[128];
  cx_perr(p, cx_tok_loc(opt), CXLA_ERR_PARSE,
          "%s needs the shape ((operands), result, context...), got %s", cx_op_name(op), cx_shape_str(s, b, sizeof b));
}

/* "custom-call-start(a, b), custom_call_target=..." is an async-start of a computation XLA's
 * parser makes: parameters for the operands (their shapes from element {0} of the async shape)
 * and the wrapped op on them, returning element {1}. The wrapped op takes the attributes. */
static void make_async_wrapped(cx_parser *p, cx_instr *start, cx_op op, const cx_token *opt) {
  cx_module *m = p->m;
  const cx_shape *ops = &start->shape.tuple[0];
  cx_comp *w = cx_comp_new(m, "async_wrapped");
  if (!w) cx_poom(p);
  w->loc = start->loc;
  cx_instr **params = cx_palloc(p, sizeof *params * (size_t)(ops->ntuple ? ops->ntuple : 1));
  for (int i = 0; i < ops->ntuple; i++) params[i] = cx_pasync_param(p, w, &ops->tuple[i], i, start->loc);
  cx_instr *root = cx_instr_new(w, op, &start->shape.tuple[1], ops->ntuple, params);
  if (!root) cx_poom(p);
  root->name = "async_op";
  root->loc = start->loc;
  w->root = root;
  cx_pattrs(p, root, opt);
  cx_psplit_async_attrs(p, start, root);
  if (!cx_comp_index_params(w) || !cx_module_add_comp(m, w)) cx_poom(p);
  start->called = cx_palloc(p, sizeof *start->called);
  start->called[0] = w;
  start->ncalled = 1;
  cx_ppush_made_callref(p, start, w, 0, start->loc);
  cx_plate(p, CX_LATE_COMP_NAME, start, start->loc)->comp = w;
}

/* shape? opcode(operands) attributes: an instruction's right-hand side, or (nested) an operand
 * written as an instruction, which has no name and no attributes. */
static cx_instr *parse_rhs(cx_parser *p, cx_comp *c, const cx_shape *written, cx_loc loc, int nested) {
  cx_shape shape;
  if (written) shape = *written;
  else memset(&shape, 0, sizeof shape); /* type invalid: inferred at the end of the module */
  if (p->tok.kind != TK_WORD) cx_pexpected(p, written ? "an opcode" : "a shape or an opcode");
  cx_token opt = cx_padvance(p);
  int wrapped;
  cx_op op = parse_opcode(p, &opt, &wrapped);
  if (nested && wrapped >= 0) cx_perr(p, cx_tok_loc(&opt), CXLA_ERR_PARSE, "an async op cannot be a nested instruction");
  const char *why = NULL;
  if (!written && !cx_op_shape_inferable(op, &why))
    cx_perr(p, cx_tok_loc(&opt), CXLA_ERR_PARSE, "the shape of %.*s cannot be left out: %s", (int)opt.len, opt.s, why);
  if (written) check_async_shape(p, op, &shape, &opt);
  cx_instr *in = cx_instr_new(c, op, &shape, 0, NULL);
  if (!in) cx_poom(p);
  in->loc = loc;
  cx_pexpect(p, TK_LPAREN, "'('");
  if (op == CX_OP_PARAMETER) {
    in->a.index = cx_pint(p, "a parameter number");
    cx_pexpect(p, TK_RPAREN, "')'");
  } else if (op == CX_OP_CONSTANT) {
    in->a.literal = cx_pconstant(p, &in->shape);
    cx_pexpect(p, TK_RPAREN, "')' after the constant's value");
  } else {
    parse_operands(p, c, in);
  }
  if (nested) {
    cx_pattrs_none(p, in, &opt);
  } else if (wrapped >= 0 && op == CX_OP_ASYNC_START) {
    make_async_wrapped(p, in, (cx_op)wrapped, &opt);
  } else {
    cx_pattrs(p, in, &opt);
    if (wrapped >= 0) { /* -update / -done: the chain's computation is checked at the end */
      cx_psplit_async_attrs(p, in, NULL);
      cx_plate(p, CX_LATE_ASYNC_OP, in, cx_tok_loc(&opt))->op = wrapped;
    }
  }
  return in;
}

/* [ROOT] name = shape? opcode(operands), attributes */
static void parse_instruction(cx_parser *p, cx_comp *c, cx_instr **root) {
  int is_root = 0;
  if (cx_pis_word(p, "ROOT") && cx_ppeek_kind(p) != TK_EQ) {
    cx_padvance(p);
    is_root = 1;
  }
  cx_token name = cx_pname(p, "an instruction name");
  cx_pexpect(p, TK_EQ, "'='");
  cx_shape shape;
  int has_shape = cx_pat_shape(p) || cx_pis(p, TK_LPAREN); /* no opcode starts with '(' */
  if (has_shape) cx_pshape(p, &shape, 0);
  cx_instr *in = parse_rhs(p, c, has_shape ? &shape : NULL, cx_tok_loc(&name), 0);
  in->name = cx_pstrndup(p, name.s, name.len);
  void *dup = cx_names_add(&p->instr_names, name.s, name.len, in);
  if (dup == &p->instr_names) cx_poom(p);
  if (dup)
    cx_perr(p, in->loc, CXLA_ERR_PARSE, "duplicate instruction name '%s' (first defined at line %d)", in->name,
            ((cx_instr *)dup)->loc.line);
  if (is_root) {
    if (*root) cx_perr(p, in->loc, CXLA_ERR_PARSE, "second ROOT instruction '%s' (the first is '%s')", in->name, (*root)->name);
    *root = in;
  }
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

/* The operand references from `base` on: the computation being read. */
static void resolve_operands(cx_parser *p, int64_t base) {
  for (int64_t i = base; i < p->noprefs; i++) {
    cx_ref *r = &p->oprefs[i];
    cx_instr *o = r->s ? cx_names_find(&p->instr_names, r->s, r->len) : r->target;
    if (!o) cx_perr(p, r->loc, CXLA_ERR_PARSE, "use of undefined instruction '%.*s'", (int)(r->len > 60 ? 60 : r->len), r->s);
    r->in->ops[r->slot] = o;
    const cx_opshape *os = r->shape >= 0 ? &p->opshapes[r->shape] : NULL;
    if (os && o->shape.type == CXLA_INVALID) { /* o's shape is inferred later */
      cx_late *l = cx_plate(p, CX_LATE_OPSHAPE, r->in, os->loc);
      l->slot = r->slot;
      l->shape = os->shape;
    } else if (os && !cx_shape_equal(&os->shape, &o->shape)) {
      char a[128], b[128];
      cx_perr(p, os->loc, CXLA_ERR_PARSE, "operand %d of '%s' is written with shape %s, but '%s' has shape %s", r->slot,
              r->in->name, cx_shape_str(&os->shape, a, sizeof a), o->name, cx_shape_str(&o->shape, b, sizeof b));
    }
  }
}

/* Signature "(x: f32[], y: s32[2]) -> f32[]": XLA's parser (ParseParamListToShape) reads the
 * parameter list and drops it; the computation's parameters are its parameter instructions,
 * whatever the list says. Only the result must match the ROOT. */
static void check_signature(cx_parser *p, cx_comp *c, const cx_shape *result) {
  char a[128], b[128];
  if (c->root->shape.type == CXLA_INVALID) { /* the ROOT's shape is inferred later */
    cx_late *l = cx_plate(p, CX_LATE_SIGNATURE, c->root, c->root->loc);
    l->comp = c;
    l->shape = *result;
  } else if (!cx_shape_equal(&c->root->shape, result))
    cx_perr(p, c->root->loc, CXLA_ERR_PARSE, "ROOT '%s' has shape %s, the signature of '%s' says %s", c->root->name,
            cx_shape_str(&c->root->shape, a, sizeof a), c->name, cx_shape_str(result, b, sizeof b));
}

/* "(x: f32[], y: s32[2]) -> f32[]": the number of parameters listed (read and dropped, as
 * XLA's parser does) and the result shape. */
static int parse_signature(cx_parser *p, cx_shape *result) {
  int n = 0;
  cx_padvance(p); /* '(' */
  while (!cx_paccept(p, TK_RPAREN)) {
    if (n) cx_pexpect(p, TK_COMMA, "',' or ')'");
    cx_pname(p, "a parameter name");
    cx_pexpect(p, TK_COLON, "':'");
    cx_shape dropped;
    cx_pshape(p, &dropped, 0);
    if (n == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "signature too long");
    n++;
  }
  cx_pexpect(p, TK_ARROW, "'->'");
  cx_pshape(p, result, 0);
  return n;
}

/* The instructions of c up to its '}' (the '{' read), their operand references from `base` on
 * resolved; returns whether its parameters are numbered 0..n-1. */
static int parse_body(cx_parser *p, cx_comp *c, int64_t base) {
  cx_instr *root = NULL;
  while (!cx_pis(p, TK_RBRACE)) {
    if (cx_pis(p, TK_EOF)) cx_pexpected(p, "'}' at the end of the computation");
    parse_instruction(p, c, &root);
  }
  cx_padvance(p);
  if (!c->ninstrs) cx_perr(p, c->loc, CXLA_ERR_PARSE, "computation '%s' has no instructions", c->name);
  /* the last instruction written, not a nested one parsed after it */
  int last = c->ninstrs - 1;
  while (last > 0 && !c->instrs[last]->name) last--;
  c->root = root ? root : c->instrs[last];
  cx_pname_anonymous(p, c);
  resolve_operands(p, base);
  check_cycles(p, c);
  if (cx_comp_sort(c) <= 0) cx_poom(p);
  int has_params = 0;
  for (int i = 0; i < c->ninstrs; i++) has_params |= c->instrs[i]->op == CX_OP_PARAMETER;
  int numbered = cx_comp_index_params(c);
  if (!numbered && has_params && !c->params) cx_poom(p);
  return numbered;
}

typedef struct cx_pscope {
  cx_names names;
  struct cx_pscope *next;
} cx_pscope;

cx_comp *cx_pinline_comp(cx_parser *p) {
  cx_loc loc = cx_tok_loc(&p->tok);
  if (++p->nest > CX_PARSE_MAX_DEPTH)
    cx_perr(p, loc, CXLA_ERR_PARSE, "computations and instructions nested deeper than %d", CX_PARSE_MAX_DEPTH);
  cx_pexpect(p, TK_LBRACE, "'{'");
  /* the enclosing computation's names wait on the scope stack (freed with the parser on an
   * error); its operand references stay below `base` */
  cx_pscope *s = cx_malloc(sizeof *s);
  if (!s) cx_poom(p);
  s->names = p->instr_names;
  s->next = p->scopes;
  p->scopes = s;
  memset(&p->instr_names, 0, sizeof p->instr_names);
  int64_t base = p->noprefs, sbase = p->nopshapes;
  cx_comp *c = cx_comp_new(p->m, "inline");
  if (!c) cx_poom(p);
  c->loc = loc;
  parse_body(p, c, base);
  if (!cx_module_add_comp(p->m, c)) cx_poom(p);
  cx_plate(p, CX_LATE_COMP_NAME, c->root, loc)->comp = c;
  cx_names_free(&p->instr_names);
  p->instr_names = s->names;
  p->scopes = s->next;
  cx_free(s);
  p->noprefs = base;
  p->nopshapes = sbase;
  p->nest--;
  return c;
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
  cx_shape result;
  if (cx_pis(p, TK_LPAREN)) nsig = parse_signature(p, &result);
  cx_pexpect(p, TK_LBRACE, nsig < 0 ? "'{' or a signature '(...) -> shape'" : "'{'");
  cx_names_free(&p->instr_names);
  p->noprefs = 0;
  p->nopshapes = 0;
  parse_body(p, c, 0);
  if (nsig >= 0) check_signature(p, c, &result);
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

/* HloModule name, attributes */
static void parse_header(cx_parser *p) {
  cx_module *m = p->m;
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
}

static void parse_module(cx_parser *p) {
  cx_module *m = p->m;
  p->tok = cx_lex_next(&p->lx);
  int headerless = 0;
  if (!cx_pis_word(p, "HloModule")) {
    cx_loc at;
    const char *what = cx_sniff_foreign(p->lx.buf, p->lx.len, m->filename, &p->tok, &at);
    if (what) cx_perr(p, at, CXLA_ERR_PARSE, "%s", what);
    /* XLA's parser also takes bare computations ("ENTRY e {...}" or "name {...}" first), as
     * XLA's own tests write them, and names the module "module_<entry>"; "name (sig) {" is
     * taken too (sniff.c calls all three HLO). */
    cx_tok_kind next = p->tok.kind == TK_WORD ? cx_ppeek_kind(p) : TK_EOF;
    headerless = cx_pis_word(p, "ENTRY") || next == TK_LBRACE || next == TK_LPAREN;
    if (!headerless) cx_pexpected(p, "'HloModule'");
  }
  if (!headerless) parse_header(p);
  while (!cx_pis(p, TK_EOF))
    if (!frame_section(p, m)) parse_computation(p);
  if (!m->ncomps) cx_pexpected(p, "a computation");
  for (int64_t i = 0; i < p->ncallrefs; i++) {
    cx_ref *r = &p->callrefs[i];
    if (!r->s) { /* made by the parser (inline, or async sugar's wrapped computation) */
      r->in->called[r->slot] = r->target;
      continue;
    }
    cx_comp *c = cx_names_find(&p->comp_names, r->s, r->len);
    if (!c) cx_perr(p, r->loc, CXLA_ERR_PARSE, "use of undefined computation '%.*s'", (int)(r->len > 60 ? 60 : r->len), r->s);
    r->in->called[r->slot] = c;
  }
  if (!m->entry) { /* XLA's rule: without ENTRY the last computation is the entry */
    m->entry = m->comps[m->ncomps - 1]; /* computations the parser makes come before their caller */
    m->entry->is_entry = 1;
  }
  if (headerless) {
    size_t n = strlen(m->entry->name);
    char *name = cx_palloc(p, n + 8);
    memcpy(name, "module_", 7);
    memcpy(name + 7, m->entry->name, n + 1);
    m->name = name;
  }
  order_comps(p);
  cx_pfinish(p);
}

static void free_scratch(cx_parser *p) {
  cx_free(p->ints);
  cx_free(p->oprefs);
  cx_free(p->opshapes);
  cx_free(p->callrefs);
  cx_free(p->rawtok);
  cx_free(p->late);
  cx_names_free(&p->instr_names);
  cx_names_free(&p->comp_names);
  while (p->scopes) {
    cx_pscope *s = p->scopes;
    p->scopes = s->next;
    cx_names_free(&s->names);
    cx_free(s);
  }
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
