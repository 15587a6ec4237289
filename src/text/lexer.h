/* lexer.h — tokens of HLO text. The lexer works on a (text, len) buffer that need not be
 * NUL-terminated, tracks 1-based line and column, skips // and block comments, and never reads
 * past len. HLO's grammar is context dependent (dim labels, paddings, window sizes and numbers
 * all look alike), so "words" are kept as raw text and the parser interprets them in context. */
#ifndef CX_LEXER_H
#define CX_LEXER_H
#include <stddef.h>
#include <stdint.h>

typedef enum cx_tok_kind {
  TK_EOF,
  TK_ERROR,    /* s points at the offending text; err says why */
  TK_WORD,     /* [%]?[A-Za-z0-9_.-]+ : names, opcodes, keywords, numbers, paddings, ... */
  TK_STRING,   /* "..." or '...' with backslash escapes; s/len include the quotes */
  TK_EQ, TK_COMMA, TK_COLON, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE, TK_LPAREN,
  TK_RPAREN, TK_ARROW, TK_LEQ, TK_QUESTION, TK_STAR, TK_HASH, TK_PLUS, TK_TILDE
} cx_tok_kind;

typedef struct cx_token {
  cx_tok_kind kind;
  const char *s;
  size_t len;
  int line, col;
  const char *err;
} cx_token;

/* The position part of the lexer; copying it saves and restores the lexer (backtracking). */
typedef struct cx_lexer {
  const char *buf;
  size_t len, pos;
  int line;
  size_t line_start;
} cx_lexer;

void cx_lex_init(cx_lexer *lx, const char *buf, size_t len);
/* Consumes and returns the next token. */
cx_token cx_lex_next(cx_lexer *lx);
/* Returns the next token without consuming it. */
cx_token cx_lex_peek(const cx_lexer *lx);
/* Moves the lexer back so that `t` (a token it returned) is the next one read. */
void cx_lex_rewind(cx_lexer *lx, const cx_token *t);
/* Moves the lexer to just after `t`, a single-line token it returned. */
void cx_lex_rewind_after(cx_lexer *lx, const cx_token *t);

/* Scans an attribute value verbatim at the character level: balanced {...} / [...] / (...)
 * groups, quoted strings and other text, up to the next top-level ',', ')', '}', end of line
 * or comment. Groups may span lines and hold anything but mismatched brackets. On success the
 * returned TK_WORD token covers the value with surrounding blanks trimmed; an empty value is
 * returned with len 0. */
cx_token cx_lex_raw_value(cx_lexer *lx);
/* Scans the text after ':' in a layout up to (not including) the '}' that closes the layout. */
cx_token cx_lex_layout_extra(cx_lexer *lx);

/* Decodes the body of a TK_STRING token (C-style escapes) into out (at least tok->len bytes).
 * Returns the decoded length, or -1 with *bad set to the offending escape. */
int64_t cx_lex_unescape(const cx_token *tok, char *out, const char **bad);

/* Integer parsing of a whole word: optional '-', decimal digits. Returns 0 on success; 1 if
 * the text is not an integer; 2 if it overflows. For unsigned values, u64 up to 2^64-1. */
int cx_parse_i64(const char *s, size_t n, int64_t *out);
int cx_parse_u64(const char *s, size_t n, uint64_t *out, int *negative);

#endif
