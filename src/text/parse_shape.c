/* parse_shape.c — shapes: "f32[2,3]{1,0}", "pred[]", "s32[<=10]", "(f32[], (s32[2]))",
 * "token[]", and tiled layouts "{1,0:T(8,128)}" (the text after ':' is kept for printing). */
#include <string.h>
#include "text/parse_int.h"

/* XLA element types cxla does not model: valid HLO, so they are "not supported" rather than
 * parse errors. */
static const char *const unsupported_types[] = {"s1", "u1", "opaque"};

static int is_unsupported_type(const cx_token *t) {
  for (int i = 0; i < CX_ARRAY_LEN(unsupported_types); i++) {
    size_t n = strlen(unsupported_types[i]);
    if (t->len == n && !memcmp(t->s, unsupported_types[i], n)) return 1;
  }
  return 0;
}

int cx_pat_shape(cx_parser *p) {
  if (p->tok.kind == TK_WORD) {
    /* Fast answer from the next character (this runs for every operand). */
    const char *e = p->tok.s + p->tok.len;
    if (e < p->lx.buf + p->lx.len && (*e == '[' || *e == ',' || *e == ')')) return *e == '[';
    return cx_ppeek_kind(p) == TK_LBRACKET;
  }
  if (p->tok.kind != TK_LPAREN) return 0;
  /* A tuple shape opens with '(' ... '(' then an element type followed by '[', or is "()"
   * followed by something that is not a literal value separator. */
  cx_lexer lx = p->lx;
  cx_token t = cx_lex_next(&lx);
  for (int i = 0; t.kind == TK_LPAREN && i < CX_PARSE_MAX_DEPTH; i++) t = cx_lex_next(&lx);
  if (t.kind == TK_WORD) return cx_lex_next(&lx).kind == TK_LBRACKET;
  if (t.kind == TK_RPAREN) {
    cx_token u = cx_lex_next(&lx);
    return u.kind == TK_LPAREN || u.kind == TK_WORD;
  }
  return 0;
}

/* Whether the '{' at the current token is a layout: it holds only integers and commas (or a
 * ':' part), and a literal value follows its '}'. Only needed where a literal may follow the
 * shape ("f32[2] {1, 2}" has no layout, "f32[2]{0} {1, 2}" has one). */
static int layout_follows_value(cx_parser *p) {
  cx_lexer lx = p->lx;
  cx_token t = cx_lex_next(&lx);
  while (t.kind == TK_WORD || t.kind == TK_COMMA) {
    if (t.kind == TK_WORD) {
      int64_t v;
      if (cx_parse_i64(t.s, t.len, &v)) return 0;
    }
    t = cx_lex_next(&lx);
  }
  if (t.kind == TK_COLON) return 1;
  if (t.kind != TK_RBRACE) return 0;
  t = cx_lex_next(&lx);
  return t.kind == TK_LBRACE || t.kind == TK_WORD || t.kind == TK_LPAREN;
}

/* Whether the '{' at the current token opens a layout rather than a computation body (the
 * signature's result shape is followed by the body: "-> f32[] {"). */
static int layout_starts(cx_parser *p) {
  cx_token t = cx_lex_peek(&p->lx);
  int64_t v;
  return t.kind == TK_RBRACE || t.kind == TK_COLON || (t.kind == TK_WORD && !cx_parse_i64(t.s, t.len, &v));
}

static void parse_layout(cx_parser *p, cx_shape *s) {
  cx_token open = cx_pexpect(p, TK_LBRACE, "'{'");
  int n = 0;
  uint32_t seen = 0;
  if (!cx_pis(p, TK_RBRACE) && !cx_pis(p, TK_COLON)) {
    for (;;) {
      cx_token at = p->tok;
      int64_t v = cx_pint(p, "a layout dimension");
      if (v < 0 || v >= s->rank)
        cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "layout dimension %lld out of range for rank %d", (long long)v, s->rank);
      if (seen & (1u << v)) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "layout names dimension %lld twice", (long long)v);
      seen |= 1u << v;
      s->minor_to_major[n++] = (int8_t)v;
      if (!cx_paccept(p, TK_COMMA)) break;
    }
  }
  if (n != s->rank)
    cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "layout has %d dimensions, the shape has rank %d", n, s->rank);
  if (cx_pis(p, TK_COLON)) {
    /* The token after ':' is already read; scan the raw text from its start instead. */
    cx_padvance(p);
    cx_lex_rewind(&p->lx, &p->tok);
    cx_token extra = cx_lex_layout_extra(&p->lx);
    if (extra.kind == TK_ERROR) cx_perr(p, cx_tok_loc(&extra), CXLA_ERR_PARSE, "%s", extra.err);
    p->tok = cx_lex_next(&p->lx);
    if (extra.len) s->layout_extra = cx_pstrndup(p, extra.s, extra.len);
  }
  cx_pexpect(p, TK_RBRACE, "'}'");
  s->has_layout = 1;
}

static void parse_array_shape(cx_parser *p, cx_shape *s, int literal_ctx) {
  cx_token tt = p->tok;
  if (tt.kind != TK_WORD) cx_pexpected(p, "a shape");
  cxla_type t = cx_type_from_name(tt.s, (int)(tt.len > 16 ? 16 : tt.len));
  if (t == CXLA_INVALID || tt.len > 16) {
    if (is_unsupported_type(&tt))
      cx_perr(p, cx_tok_loc(&tt), CXLA_ERR_UNSUPPORTED, "not supported: element type %.*s", (int)tt.len, tt.s);
    if (cx_ppeek_kind(p) == TK_LBRACKET)
      cx_perr(p, cx_tok_loc(&tt), CXLA_ERR_PARSE, "unknown element type '%.*s'", (int)(tt.len > 40 ? 40 : tt.len), tt.s);
    cx_pexpected(p, "a shape");
  }
  cx_padvance(p);
  s->type = t;
  cx_pexpect(p, TK_LBRACKET, "'['");
  if (!cx_pis(p, TK_RBRACKET)) {
    for (;;) {
      int dynamic = 0;
      if (cx_pis(p, TK_QUESTION))
        cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_UNSUPPORTED, "not supported: unbounded dynamic dimension");
      if (cx_paccept(p, TK_LEQ)) dynamic = 1;
      cx_token at = p->tok;
      int64_t d = cx_pint(p, "a dimension size");
      if (d < 0) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "negative dimension size %lld", (long long)d);
      if (s->rank == CXLA_MAX_RANK)
        cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "rank exceeds the maximum of %d", CXLA_MAX_RANK);
      if (dynamic) s->dynamic |= 1u << s->rank;
      s->dims[s->rank++] = d;
      if (!cx_paccept(p, TK_COMMA)) break;
    }
  }
  cx_pexpect(p, TK_RBRACKET, "',' or ']'");
  if (t == CXLA_TOKEN && s->rank)
    cx_perr(p, cx_tok_loc(&tt), CXLA_ERR_PARSE, "a token shape has no dimensions (token[])");
  if (t != CXLA_TOKEN && cx_pis(p, TK_LBRACE) && layout_starts(p) && (!literal_ctx || layout_follows_value(p)))
    parse_layout(p, s);
}

void cx_pshape(cx_parser *p, cx_shape *out, int literal_ctx) {
  memset(out, 0, sizeof *out);
  if (!cx_pis(p, TK_LPAREN)) {
    parse_array_shape(p, out, literal_ctx);
    return;
  }
  cx_token open = cx_padvance(p);
  if (++p->depth > CX_PARSE_MAX_DEPTH)
    cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "tuple nesting deeper than %d", CX_PARSE_MAX_DEPTH);
  out->type = CXLA_TUPLE;
  int64_t cap = 0;
  cx_shape *el = NULL;
  if (!cx_pis(p, TK_RPAREN)) {
    for (;;) {
      if (out->ntuple == cap) { /* arena vectors: the old block stays until the module dies */
        if (cap > (int64_t)1 << 28) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "tuple too large");
        int64_t nc = cap ? cap * 2 : 4;
        cx_shape *v = cx_palloc(p, sizeof *v * (size_t)nc);
        if (out->ntuple) memcpy(v, el, sizeof *v * (size_t)out->ntuple);
        el = v;
        cap = nc;
      }
      cx_pshape(p, &el[out->ntuple++], 0);
      if (!cx_paccept(p, TK_COMMA)) break;
    }
  }
  cx_pexpect(p, TK_RPAREN, "',' or ')'");
  out->tuple = el;
  p->depth--;
  (void)literal_ctx;
}
