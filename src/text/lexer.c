/* lexer.c — HLO text tokens. Everything is bounded by the buffer length (the text may hold NUL
 * bytes and need not be terminated); errors come back as TK_ERROR tokens so the parser can
 * report them with a location. */
#include <limits.h>
#include <string.h>
#include "text/lexer.h"

void cx_lex_init(cx_lexer *lx, const char *buf, size_t len) {
  lx->buf = buf ? buf : ""; /* no arithmetic on NULL */
  lx->len = buf ? len : 0;
  lx->pos = 0;
  lx->line = 1;
  lx->line_start = 0;
  if (lx->len >= 3 && !memcmp(lx->buf, "\xef\xbb\xbf", 3)) lx->pos = lx->line_start = 3; /* UTF-8 BOM */
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_word_char(int c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }

static int peekc(const cx_lexer *lx, size_t ahead) {
  return lx->pos + ahead < lx->len ? (unsigned char)lx->buf[lx->pos + ahead] : -1;
}

/* Moves one character forward, keeping line bookkeeping for '\n'. */
static void adv(cx_lexer *lx) {
  if (lx->buf[lx->pos] == '\n') {
    if (lx->line < INT_MAX) lx->line++;
    lx->line_start = lx->pos + 1;
  }
  lx->pos++;
}

static int col_of(const cx_lexer *lx, size_t pos) {
  size_t c = pos - lx->line_start + 1;
  return c > INT_MAX ? INT_MAX : (int)c;
}

static cx_token make(const cx_lexer *lx, cx_tok_kind k, size_t start, int line, int col) {
  cx_token t;
  t.kind = k;
  t.s = lx->buf + start;
  t.len = lx->pos - start;
  t.line = line;
  t.col = col;
  t.err = NULL;
  return t;
}

static cx_token error_at(const cx_lexer *lx, size_t start, int line, int col, const char *why) {
  cx_token t;
  t.kind = TK_ERROR;
  t.s = lx->buf + start;
  t.len = start < lx->len ? 1 : 0;
  t.line = line;
  t.col = col;
  t.err = why;
  return t;
}

/* Skips blanks and comments. Returns NULL, or an error token's reason for an unterminated
 * block comment (the lexer then stands at the comment's start). */
static const char *skip_trivia(cx_lexer *lx) {
  while (lx->pos < lx->len) {
    int c = (unsigned char)lx->buf[lx->pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      adv(lx);
    } else if (c == '/' && peekc(lx, 1) == '/') {
      while (lx->pos < lx->len && lx->buf[lx->pos] != '\n') lx->pos++;
    } else if (c == '/' && peekc(lx, 1) == '*') {
      cx_lexer save = *lx;
      lx->pos += 2;
      for (;;) {
        if (lx->pos + 1 >= lx->len) { *lx = save; return "unterminated comment"; }
        if (lx->buf[lx->pos] == '*' && lx->buf[lx->pos + 1] == '/') { lx->pos += 2; break; }
        adv(lx);
      }
    } else {
      break;
    }
  }
  return NULL;
}

/* Scans a quoted string starting at the quote; returns NULL or why it is malformed. */
static const char *scan_string(cx_lexer *lx) {
  char q = lx->buf[lx->pos];
  lx->pos++;
  while (lx->pos < lx->len) {
    char c = lx->buf[lx->pos];
    if (c == q) { lx->pos++; return NULL; }
    if (c == 0) return "NUL byte in string";
    if (c == '\\') {
      if (lx->pos + 1 >= lx->len) break;
      lx->pos++;
      if (lx->buf[lx->pos] == 0) return "NUL byte in string";
    }
    adv(lx);
  }
  return "unterminated string";
}

static cx_token lex_word(cx_lexer *lx, size_t start, int line, int col) {
  int numeric = is_digit(lx->buf[start]) || lx->buf[start] == '-' || lx->buf[start] == '.';
  while (lx->pos < lx->len) {
    int c = (unsigned char)lx->buf[lx->pos];
    if (is_word_char(c)) {
      if (c == '-' && peekc(lx, 1) == '>') break; /* "b01f_01io->b01f" */
      lx->pos++;
    } else if (c == '+' && numeric && strchr("eEpP", lx->buf[lx->pos - 1])) {
      lx->pos++; /* exponent sign: 1e+10 */
    } else {
      break;
    }
  }
  return make(lx, TK_WORD, start, line, col);
}

cx_token cx_lex_next(cx_lexer *lx) {
  const char *why = skip_trivia(lx);
  size_t start = lx->pos;
  int line = lx->line, col = col_of(lx, start);
  if (why) return error_at(lx, start, line, col, why);
  if (lx->pos >= lx->len) return make(lx, TK_EOF, start, line, col);
  int c = (unsigned char)lx->buf[lx->pos];
  int n1 = peekc(lx, 1);
  cx_tok_kind k;
  switch (c) {
  case '=': k = TK_EQ; break;
  case ',': k = TK_COMMA; break;
  case ':': k = TK_COLON; break;
  case '[': k = TK_LBRACKET; break;
  case ']': k = TK_RBRACKET; break;
  case '{': k = TK_LBRACE; break;
  case '}': k = TK_RBRACE; break;
  case '(': k = TK_LPAREN; break;
  case ')': k = TK_RPAREN; break;
  case '?': k = TK_QUESTION; break;
  case '*': k = TK_STAR; break;
  case '#': k = TK_HASH; break;
  case '+': k = TK_PLUS; break;
  case '~': k = TK_TILDE; break;
  case '"':
  case '\'':
    why = scan_string(lx);
    if (why) return error_at(lx, start, line, col, why);
    return make(lx, TK_STRING, start, line, col);
  case '<':
    if (n1 != '=') return error_at(lx, start, line, col, "unexpected character");
    lx->pos += 2;
    return make(lx, TK_LEQ, start, line, col);
  case '-':
    if (n1 == '>') {
      lx->pos += 2;
      return make(lx, TK_ARROW, start, line, col);
    }
    if (n1 < 0 || !(is_alnum(n1) || n1 == '.')) return error_at(lx, start, line, col, "unexpected character");
    lx->pos++;
    return lex_word(lx, start, line, col);
  case '%':
    if (n1 < 0 || !(is_alpha(n1) || n1 == '_')) return error_at(lx, start, line, col, "expected a name after '%'");
    lx->pos++;
    return lex_word(lx, start, line, col);
  default:
    if (is_word_char(c)) return lex_word(lx, start, line, col);
    return error_at(lx, start, line, col, c == 0 ? "unexpected NUL byte" : "unexpected character");
  }
  lx->pos++;
  return make(lx, k, start, line, col);
}

cx_token cx_lex_peek(const cx_lexer *lx) {
  cx_lexer tmp = *lx;
  return cx_lex_next(&tmp);
}

void cx_lex_rewind_after(cx_lexer *lx, const cx_token *t) {
  cx_lex_rewind(lx, t);
  lx->pos += t->len;
}

void cx_lex_rewind(cx_lexer *lx, const cx_token *t) {
  size_t off = (size_t)(t->s - lx->buf);
  lx->pos = off;
  lx->line = t->line;
  lx->line_start = off - (size_t)(t->col - 1);
}

cx_token cx_lex_raw_value(cx_lexer *lx) {
  /* Blanks and block comments may precede the value; a newline may not (it ends the value). */
  for (;;) {
    while (lx->pos < lx->len && (lx->buf[lx->pos] == ' ' || lx->buf[lx->pos] == '\t')) lx->pos++;
    if (peekc(lx, 0) != '/' || peekc(lx, 1) != '*') break;
    size_t at = lx->pos;
    int l = lx->line, c = col_of(lx, at);
    lx->pos += 2;
    for (;;) {
      if (lx->pos + 1 >= lx->len) return error_at(lx, at, l, c, "unterminated comment");
      if (lx->buf[lx->pos] == '*' && lx->buf[lx->pos + 1] == '/') { lx->pos += 2; break; }
      adv(lx);
    }
  }
  size_t start = lx->pos;
  int line = lx->line, col = col_of(lx, start);
  /* Expected closing brackets; deeper nesting than this is not worth keeping verbatim. */
  char want[256];
  size_t depth = 0;
  while (lx->pos < lx->len) {
    char c = lx->buf[lx->pos];
    if (depth == 0) {
      if (c == ',' || c == ')' || c == '}' || c == '\n' || c == '\r') break;
      if (c == '/' && (peekc(lx, 1) == '/' || peekc(lx, 1) == '*')) break;
    }
    if (c == '"' || c == '\'') {
      size_t at = lx->pos;
      int l = lx->line, cc = col_of(lx, at);
      const char *why = scan_string(lx);
      if (why) return error_at(lx, at, l, cc, why);
      continue;
    }
    if (c == 0) return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "unexpected NUL byte");
    if (c == '{' || c == '[' || c == '(') {
      if (depth == sizeof want)
        return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "attribute value nested too deeply");
      want[depth++] = c == '{' ? '}' : c == '[' ? ']' : ')';
    } else if (c == '}' || c == ']' || c == ')') {
      if (depth == 0 || want[depth - 1] != c)
        return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "mismatched bracket in attribute value");
      depth--;
    }
    adv(lx);
  }
  if (depth) return error_at(lx, start, line, col, "unterminated attribute value (unbalanced brackets)");
  size_t end = lx->pos;
  while (end > start && (lx->buf[end - 1] == ' ' || lx->buf[end - 1] == '\t')) end--;
  cx_token t = make(lx, TK_WORD, start, line, col);
  t.len = end - start;
  return t;
}

cx_token cx_lex_layout_extra(cx_lexer *lx) {
  size_t start = lx->pos;
  int line = lx->line, col = col_of(lx, start);
  size_t depth = 0;
  while (lx->pos < lx->len) {
    char c = lx->buf[lx->pos];
    if (c == '}' && depth == 0) break;
    if (c == 0 || c == '\n' || c == '{' || c == '"' || c == '\'')
      return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "unexpected character in layout");
    if (c == '}' && depth) return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "unbalanced '(' in layout");
    if (c == '(') depth++;
    if (c == ')') {
      if (!depth) return error_at(lx, lx->pos, lx->line, col_of(lx, lx->pos), "unbalanced ')' in layout");
      depth--;
    }
    adv(lx);
  }
  if (lx->pos >= lx->len) return error_at(lx, start, line, col, "unterminated layout");
  size_t end = lx->pos;
  while (end > start && (lx->buf[end - 1] == ' ' || lx->buf[end - 1] == '\t')) end--;
  cx_token t = make(lx, TK_WORD, start, line, col);
  t.len = end - start;
  return t;
}

static int hexval(int c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int64_t cx_lex_unescape(const cx_token *tok, char *out, const char **bad) {
  const char *s = tok->s + 1;
  size_t n = tok->len >= 2 ? tok->len - 2 : 0, o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c != '\\') { out[o++] = c; continue; }
    const char *esc = s + i;
    if (++i >= n) { *bad = esc; return -1; }
    char e = s[i];
    switch (e) {
    case 'n': out[o++] = '\n'; break;
    case 't': out[o++] = '\t'; break;
    case 'r': out[o++] = '\r'; break;
    case 'a': out[o++] = '\a'; break;
    case 'b': out[o++] = '\b'; break;
    case 'f': out[o++] = '\f'; break;
    case 'v': out[o++] = '\v'; break;
    case '\\': case '"': case '\'': case '?': out[o++] = e; break;
    case 'x': {
      int v = 0, k = 0;
      while (k < 2 && i + 1 < n && hexval((unsigned char)s[i + 1]) >= 0) v = v * 16 + hexval((unsigned char)s[++i]), k++;
      if (!k) { *bad = esc; return -1; }
      out[o++] = (char)v;
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        int v = e - '0', k = 1;
        while (k < 3 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') v = v * 8 + (s[++i] - '0'), k++;
        if (v > 255) { *bad = esc; return -1; }
        out[o++] = (char)v;
        break;
      }
      *bad = esc;
      return -1;
    }
  }
  return (int64_t)o;
}

int cx_parse_u64(const char *s, size_t n, uint64_t *out, int *negative) {
  size_t i = 0;
  *negative = 0;
  if (n && s[0] == '-') { *negative = 1; i = 1; }
  if (i >= n) return 1;
  uint64_t v = 0;
  for (; i < n; i++) {
    if (!is_digit((unsigned char)s[i])) return 1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) {
      for (; i < n; i++) if (!is_digit((unsigned char)s[i])) return 1;
      return 2;
    }
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int cx_parse_i64(const char *s, size_t n, int64_t *out) {
  uint64_t v;
  int neg, r = cx_parse_u64(s, n, &v, &neg);
  if (r) return r;
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1) return 2;
    *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX) return 2;
    *out = (int64_t)v;
  }
  return 0;
}
