/* parse_util.c — the parser's small tools: error exits, token handling, integers and integer
 * lists, arena helpers, the name tables used to resolve forward references, and the parameters
 * of the computations the parser makes (parser.c and parse_late.c both make them). */
#include <stdio.h>
#include <string.h>
#include "text/parse_int.h"

/* ---- errors ---- */

_Noreturn void cx_perr(cx_parser *p, cx_loc loc, cxla_status code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cx_error_at(p->m, loc, code, "%s", msg);
  p->status = code;
  longjmp(p->jb, 1);
}

_Noreturn void cx_poom(cx_parser *p) {
  cx_oom(p->m->ctx);
  p->status = CXLA_ERR_OUT_OF_MEMORY;
  longjmp(p->jb, 1);
}

cx_loc cx_tok_loc(const cx_token *t) {
  cx_loc l;
  l.line = t->line;
  l.col = t->col;
  return l;
}

/* How a token reads in "got ..." messages. */
static void describe(const cx_token *t, char *buf, size_t n) {
  switch (t->kind) {
  case TK_EOF: snprintf(buf, n, "end of file"); break;
  case TK_STRING: snprintf(buf, n, "a string"); break;
  case TK_WORD:
    if (t->len > 40) snprintf(buf, n, "'%.40s...'", t->s);
    else snprintf(buf, n, "'%.*s'", (int)t->len, t->s);
    break;
  default: snprintf(buf, n, "'%.*s'", (int)t->len, t->s); break;
  }
}

_Noreturn void cx_pexpected(cx_parser *p, const char *what) {
  if (p->tok.kind == TK_ERROR) {
    unsigned char c = p->tok.len ? (unsigned char)p->tok.s[0] : 0;
    if (!strcmp(p->tok.err, "unexpected character") && c > 32 && c < 127)
      cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "unexpected character '%c'", c);
    if (!strcmp(p->tok.err, "unexpected character"))
      cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "unexpected byte 0x%02x", c);
    cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "%s", p->tok.err);
  }
  char got[64];
  describe(&p->tok, got, sizeof got);
  cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "expected %s, got %s", what, got);
}

/* ---- tokens ---- */

cx_token cx_padvance(cx_parser *p) {
  cx_token t = p->tok;
  if (t.kind != TK_EOF && t.kind != TK_ERROR) p->tok = cx_lex_next(&p->lx);
  return t;
}

int cx_pis(cx_parser *p, cx_tok_kind k) { return p->tok.kind == k; }

int cx_pis_word(cx_parser *p, const char *w) {
  size_t n = strlen(w);
  return p->tok.kind == TK_WORD && p->tok.len == n && !memcmp(p->tok.s, w, n);
}

cx_token cx_pexpect(cx_parser *p, cx_tok_kind k, const char *what) {
  if (p->tok.kind != k) cx_pexpected(p, what);
  return cx_padvance(p);
}

int cx_paccept(cx_parser *p, cx_tok_kind k) {
  if (p->tok.kind != k) return 0;
  cx_padvance(p);
  return 1;
}

cx_tok_kind cx_ppeek_kind(cx_parser *p) { return cx_lex_peek(&p->lx).kind; }

void cx_strip_percent(cx_token *t) {
  if (t->len && t->s[0] == '%') { t->s++; t->len--; }
}

cx_token cx_pname(cx_parser *p, const char *what) {
  /* Names start with a letter or '_' as in XLA; "3r" or "-x" would not print back as names. */
  char c = p->tok.kind == TK_WORD ? p->tok.s[p->tok.s[0] == '%'] : 0;
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) cx_pexpected(p, what);
  cx_token t = cx_padvance(p);
  cx_strip_percent(&t);
  return t;
}

/* ---- arena ---- */

void *cx_palloc(cx_parser *p, size_t n) {
  void *v = cx_arena_alloc(&p->m->arena, n ? n : 1);
  if (!v) cx_poom(p);
  return v;
}

char *cx_pstrndup(cx_parser *p, const char *s, size_t n) {
  char *d = cx_arena_strndup(&p->m->arena, s, n);
  if (!d) cx_poom(p);
  return d;
}

char *cx_pstring(cx_parser *p, const cx_token *t) {
  char *d = cx_palloc(p, t->len + 1);
  const char *bad = NULL;
  int64_t n = cx_lex_unescape(t, d, &bad);
  if (n < 0) {
    cx_loc l = cx_tok_loc(t);
    l.col += (int)(bad - t->s);
    cx_perr(p, l, CXLA_ERR_PARSE, "bad escape sequence in string");
  }
  d[n] = 0;
  return d;
}

/* ---- numbers ---- */

int64_t cx_pint(cx_parser *p, const char *what) {
  if (p->tok.kind != TK_WORD) cx_pexpected(p, what);
  int64_t v;
  int r = cx_parse_i64(p->tok.s, p->tok.len, &v);
  if (r == 1) cx_pexpected(p, what);
  if (r == 2) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "integer '%.*s' out of range", (int)(p->tok.len > 40 ? 40 : p->tok.len), p->tok.s);
  cx_padvance(p);
  return v;
}

int cx_pbool(cx_parser *p) {
  if (cx_pis_word(p, "true")) { cx_padvance(p); return 1; }
  if (cx_pis_word(p, "false")) { cx_padvance(p); return 0; }
  cx_pexpected(p, "true or false");
}

static void push_int(cx_parser *p, int n, int64_t v) {
  if (!cx_vec_reserve((void **)&p->ints, &p->ints_cap, (int64_t)n + 1, sizeof *p->ints)) cx_poom(p);
  p->ints[n] = v;
}

int cx_pint_list(cx_parser *p) {
  int n = 0;
  cx_pexpect(p, TK_LBRACE, "'{'");
  if (cx_paccept(p, TK_RBRACE)) return 0;
  for (;;) {
    int64_t v = cx_pint(p, "an integer");
    if (n == INT32_MAX - 1) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "list too long");
    push_int(p, n++, v);
    if (cx_paccept(p, TK_RBRACE)) return n;
    cx_pexpect(p, TK_COMMA, "',' or '}'");
  }
}

void cx_pset_ints(cx_parser *p, cx_ints *dst, int n) {
  if (!cx_ints_set(p->m, dst, n, p->ints)) cx_poom(p);
}

/* ---- name tables ---- */

struct cx_name_slot {
  const char *s;
  size_t len;
  uint64_t hash; /* compared before the text: most probes end there */
  void *val;
};

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static void *find_hashed(const cx_names *t, const char *s, size_t len, uint64_t h) {
  if (!t->cap) return NULL;
  for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    struct cx_name_slot *e = &t->slots[i];
    if (!e->s) return NULL;
    if (e->hash == h && e->len == len && !memcmp(e->s, s, len)) return e->val;
  }
}

void *cx_names_find(const cx_names *t, const char *s, size_t len) { return find_hashed(t, s, len, hash(s, len)); }

static int grow(cx_names *t) {
  size_t cap = t->cap ? t->cap * 2 : 16;
  struct cx_name_slot *v = cx_calloc(cap, sizeof *v);
  if (!v) return 0;
  for (size_t i = 0; i < t->cap; i++) {
    struct cx_name_slot *e = &t->slots[i];
    if (!e->s) continue;
    size_t j = e->hash & (cap - 1);
    while (v[j].s) j = (j + 1) & (cap - 1);
    v[j] = *e;
  }
  cx_free(t->slots);
  t->slots = v;
  t->cap = cap;
  return 1;
}

void *cx_names_add(cx_names *t, const char *s, size_t len, void *val) {
  uint64_t h = hash(s, len);
  void *old = find_hashed(t, s, len, h);
  if (old) return old;
  if ((t->n + 1) * 2 > t->cap && !grow(t)) return t;
  size_t i = h & (t->cap - 1);
  while (t->slots[i].s) i = (i + 1) & (t->cap - 1);
  t->slots[i].s = s;
  t->slots[i].len = len;
  t->slots[i].hash = h;
  t->slots[i].val = val;
  t->n++;
  return NULL;
}

void cx_names_free(cx_names *t) {
  cx_free(t->slots);
  memset(t, 0, sizeof *t);
}

/* ---- parameters of the computations the parser makes (async-start sugar) ---- */

cx_instr *cx_pasync_param(cx_parser *p, cx_comp *w, const cx_shape *s, int i, cx_loc loc) {
  char name[48];
  snprintf(name, sizeof name, i ? "async_param.%d" : "async_param", i);
  cx_instr *x = cx_instr_new(w, CX_OP_PARAMETER, s, 0, NULL);
  if (!x) cx_poom(p);
  x->name = cx_pstrndup(p, name, strlen(name));
  x->a.index = i;
  x->loc = loc;
  return x;
}
