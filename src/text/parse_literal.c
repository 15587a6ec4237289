/* parse_literal.c — literal values ("{ {1, 2}, {3, 4} }", "(1.5, {2, 3})", "-inf", "true")
 * checked against their shape, and cx_parse_literal for stand-alone literals with a shape. */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "text/parse_int.h"
#include "util/fpenv.h"

/* Whether s is a decimal float ("-1.5e-3", "7", ".5") or a hex float ("0x1.8p3"). strtod
 * alone accepts more ("infinity", "0x1"), and its result must mean the same in every libc. */
static int float_syntax(const char *s, size_t n) {
  size_t i = 0, digits = 0;
  if (i < n && s[i] == '-') i++;
  if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    i += 2;
    for (; i < n && strchr("0123456789abcdefABCDEF", s[i]); i++) digits++;
    if (i < n && s[i] == '.')
      for (i++; i < n && strchr("0123456789abcdefABCDEF", s[i]); i++) digits++;
    if (!digits || i >= n || (s[i] != 'p' && s[i] != 'P')) return 0;
  } else {
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) digits++;
    if (i < n && s[i] == '.')
      for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) digits++;
    if (!digits) return 0;
    if (i == n) return 1;
    if (s[i] != 'e' && s[i] != 'E') return 0;
  }
  i++;
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  if (i >= n) return 0;
  for (; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

static int word_is(const cx_token *t, const char *w) {
  size_t n = strlen(w);
  return t->len == n && !memcmp(t->s, w, n);
}

/* The largest constant XLA's one-value shorthand may make ("f32[4096,4096] constant(0)" is
 * 64 MiB): a few bytes of text must not allocate without bound. */
#define CX_SHORTHAND_MAX_BYTES ((int64_t)64 << 20)

_Noreturn static void bad_value(cx_parser *p, const cx_token *t, cxla_type type) {
  if (t->kind == TK_WORD && word_is(t, "..."))
    cx_perr(p, cx_tok_loc(t), CXLA_ERR_PARSE, "'...' (elided values) may stand only for a whole array constant, {...}");
  const char *what = type == CXLA_PRED ? "true or false" : cx_type_kind(type) >= CX_KIND_FLOAT ? "a number" : "an integer";
  char buf[64];
  snprintf(buf, sizeof buf, "%s (%s value)", what, cxla_type_name(type));
  cx_pexpected(p, buf);
}

/* A float value of type `type`; nan(0x...) payloads are accepted and dropped. */
static double float_value(cx_parser *p, cxla_type type) {
  cx_token t = p->tok;
  double v;
  if (t.kind != TK_WORD) bad_value(p, &t, type);
  if (word_is(&t, "inf")) v = INFINITY;
  else if (word_is(&t, "-inf")) v = -INFINITY;
  else if (word_is(&t, "nan")) v = NAN;
  else if (word_is(&t, "-nan")) v = -NAN;
  else {
    char buf[128];
    if (!float_syntax(t.s, t.len)) bad_value(p, &t, type);
    if (t.len >= sizeof buf) cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "number too long");
    memcpy(buf, t.s, t.len);
    buf[t.len] = 0;
    errno = 0;
    if (type == CXLA_F64) v = strtod(buf, NULL);
    else v = strtof(buf, NULL); /* one rounding, straight to float */
    if (isinf(v) || isinf(cx_round_to_type(type, v)))
      cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "value %.*s out of range for %s", (int)t.len, t.s, cxla_type_name(type));
  }
  cx_padvance(p);
  if (isnan(v) && cx_pis(p, TK_LPAREN)) { /* nan(0x7fc00001) */
    cx_padvance(p);
    cx_pexpect(p, TK_WORD, "a NaN payload");
    cx_pexpect(p, TK_RPAREN, "')'");
  }
  return v;
}

static void store_float(cx_parser *p, cxla_literal *lit, int64_t i) {
  cxla_type type = lit->shape.type;
  double v = float_value(p, type);
  switch (type) {
  case CXLA_F64: ((double *)lit->data)[i] = v; break;
  case CXLA_F32: ((float *)lit->data)[i] = (float)v; break;
  default: cx_store_f64(type, lit->data, i, v); break;
  }
}

/* A complex element, as XLA writes it: (real, imaginary). */
static void store_complex(cx_parser *p, cxla_literal *lit, int64_t i) {
  cxla_type type = lit->shape.type, part = cx_type_part(type);
  char what[64];
  snprintf(what, sizeof what, "'(' (a %s value is written (real, imaginary))", cxla_type_name(type));
  cx_pexpect(p, TK_LPAREN, what);
  double re = float_value(p, part);
  cx_pexpect(p, TK_COMMA, "',' (between the real and imaginary parts)");
  double im = float_value(p, part);
  cx_pexpect(p, TK_RPAREN, "')' (end of the complex value)");
  cx_store_complex(type, lit->data, i, re, im);
}

static void store_int(cx_parser *p, cxla_literal *lit, int64_t i) {
  cx_token t = p->tok;
  cxla_type type = lit->shape.type;
  if (t.kind != TK_WORD) bad_value(p, &t, type);
  if (type == CXLA_PRED && (word_is(&t, "true") || word_is(&t, "false"))) {
    cx_store_i64(type, lit->data, i, word_is(&t, "true"));
    cx_padvance(p);
    return;
  }
  uint64_t mag;
  int neg, r = cx_parse_u64(t.s, t.len, &mag, &neg);
  if (r == 1) bad_value(p, &t, type);
  int bits = type == CXLA_PRED ? 1 : cx_type_bits(type);
  int ok;
  if (r == 2) ok = 0;
  else if (type == CXLA_PRED) ok = mag <= 1 && !(neg && mag);
  else if (cx_type_kind(type) == CX_KIND_UINT) ok = (!neg || !mag) && (bits == 64 || mag <= (((uint64_t)1 << bits) - 1));
  else ok = neg ? mag <= ((uint64_t)1 << (bits - 1)) : mag <= ((uint64_t)1 << (bits - 1)) - 1;
  if (!ok)
    cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "value %.*s out of range for %s", (int)(t.len > 40 ? 40 : t.len), t.s,
            cxla_type_name(type));
  cx_store_i64(type, lit->data, i, neg ? (int64_t)(0 - mag) : (int64_t)mag);
  cx_padvance(p);
}

static void store_scalar(cx_parser *p, cxla_literal *lit, int64_t i) {
  if (cx_type_is_float(lit->shape.type)) store_float(p, lit, i);
  else if (cx_type_is_complex(lit->shape.type)) store_complex(p, lit, i);
  else store_int(p, lit, i);
}

/* Dimension d of an array literal: '{' v, v, ... '}' with dims[d] entries. */
/* A constant printed without its values, "{...}": XLA's parser (default options,
 * fill_shortform_constants_with_random_values) fills its bytes with the 32-bit words 0, 1, 2,
 * ... of one counter that runs on over the constants of the text, each word masked to
 * 0x01010101 for pred (a bool byte must be 0 or 1); bytes past the last whole word stay zero.
 * A fresh XLA process reading this text makes the same values. Types narrower than a byte
 * keep their low bits (sign-extended for s4 and s2), as cxla stores them one to a byte. */
static void fill_elided(cx_parser *p, cxla_literal *lit) {
  const cx_shape *s = &lit->shape;
  int64_t bytes = cx_shape_bytes(s);
  uint8_t *d = lit->data;
  uint32_t mask = s->type == CXLA_PRED ? 0x01010101u : 0xffffffffu;
  for (int64_t i = 0; i + 4 <= bytes; i += 4) {
    uint32_t w = p->elided_next++ & mask;
    memcpy(d + i, &w, 4);
  }
  int bits = cx_type_bits(s->type);
  if (bits < 8)
    for (int64_t i = 0; i < bytes; i++) {
      int v = d[i] & ((1 << bits) - 1);
      if (cx_type_kind(s->type) == CX_KIND_SINT && v >= 1 << (bits - 1)) v -= 1 << bits;
      d[i] = (uint8_t)(int8_t)v;
    }
}

static void fill_dim(cx_parser *p, cxla_literal *lit, int d, int64_t *pos) {
  const cx_shape *s = &lit->shape;
  if (!cx_pis(p, TK_LBRACE)) {
    char what[200], sh[128];
    if (p->tok.kind == TK_WORD && word_is(&p->tok, "...")) bad_value(p, &p->tok, s->type);
    snprintf(what, sizeof what, "'{' (dimension %d of %s)", d, cx_shape_str(s, sh, sizeof sh));
    cx_pexpected(p, what);
  }
  cx_padvance(p);
  if (d == 0 && p->in_constant && p->tok.kind == TK_WORD && word_is(&p->tok, "...")) {
    cx_padvance(p);
    cx_pexpect(p, TK_RBRACE, "'}' after '...' (an elided constant)");
    fill_elided(p, lit);
    *pos = cx_shape_elems(s);
    return;
  }
  int64_t n = s->dims[d];
  for (int64_t i = 0; i < n; i++) {
    if (i) {
      if (cx_pis(p, TK_RBRACE))
        cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "too few values in dimension %d: %lld of %lld", d,
                (long long)i, (long long)n);
      cx_pexpect(p, TK_COMMA, "','");
    }
    if (d + 1 == s->rank) store_scalar(p, lit, (*pos)++);
    else fill_dim(p, lit, d + 1, pos);
  }
  if (cx_pis(p, TK_COMMA) || (n == 0 && !cx_pis(p, TK_RBRACE) && !cx_pis(p, TK_EOF)))
    cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "too many values in dimension %d (size %lld)", d, (long long)n);
  cx_pexpect(p, TK_RBRACE, "'}'");
}

static void check_prefix(cx_parser *p, const cx_shape *want) {
  cx_token at = p->tok;
  cx_shape got;
  cx_pshape(p, &got, 1);
  if (!cx_shape_equal(&got, want)) {
    char a[128], b[128];
    cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "literal shape %s does not match %s", cx_shape_str(&got, a, sizeof a),
            cx_shape_str(want, b, sizeof b));
  }
}

static void fill(cx_parser *p, cxla_literal *lit) {
  const cx_shape *s = &lit->shape;
  if (s->type != CXLA_TUPLE) {
    if (s->rank == 0) {
      store_scalar(p, lit, 0);
    } else if (p->in_constant && p->tok.kind == TK_WORD && !word_is(&p->tok, "...")) {
      /* XLA's shorthand "f32[8,2048] constant(0)": its parser stores the one value at index 0
       * of a zero-filled array (and ignores that the braces are missing). */
      if (cx_shape_elems(s) == 0) {
        char b[128];
        cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "a value for %s, which has no elements", cx_shape_str(s, b, sizeof b));
      }
      store_scalar(p, lit, 0);
    } else {
      int64_t pos = 0;
      fill_dim(p, lit, 0, &pos);
    }
    return;
  }
  cx_pexpect(p, TK_LPAREN, "'(' (tuple value)");
  for (int i = 0; i < lit->nelems; i++) {
    if (i) cx_pexpect(p, TK_COMMA, "','");
    if (cx_pat_shape(p)) check_prefix(p, &s->tuple[i]);
    fill(p, lit->elems[i]);
  }
  cx_pexpect(p, TK_RPAREN, lit->nelems ? "')' (end of tuple value)" : "')' (empty tuple value)");
}

/* Elements of all arrays in s, saturating; every element takes at least one byte of text, so
 * a shape with more elements than the rest of the text has bytes cannot match it (and must
 * not be allocated: "f32[1000000000000] {1}" is cheap to write). */
static int64_t total_elems(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return s->type == CXLA_TOKEN ? 0 : cx_shape_elems(s);
  int64_t n = 0;
  for (int i = 0; i < s->ntuple; i++) {
    int64_t e = total_elems(&s->tuple[i]);
    if (e < 0 || n > INT64_MAX / 2 - e) return -1;
    n += e;
  }
  return n;
}

/* Bytes of all arrays in s, saturating to -1. */
static int64_t total_bytes(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return s->type == CXLA_TOKEN ? 0 : cx_shape_bytes(s);
  int64_t n = 0;
  for (int i = 0; i < s->ntuple; i++) {
    int64_t e = total_bytes(&s->tuple[i]);
    if (e < 0 || n > INT64_MAX / 2 - e) return -1;
    n += e;
  }
  return n;
}

static int has_token(const cx_shape *s) {
  if (s->type == CXLA_TOKEN) return 1;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++)
    if (has_token(&s->tuple[i])) return 1;
  return 0;
}

/* A literal's shape carries no layout or dynamic bounds: data is always row-major. */
static void plain(cx_shape *s) {
  s->has_layout = 0;
  s->layout_extra = NULL;
  s->dynamic = 0;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++) plain(&s->tuple[i]);
}

/* Whether the text at the current token is an elided array constant "{...}" that cxla may
 * allocate (an elided constant is as short to write as a one-value one). */
static int elided_at(cx_parser *p, const cx_shape *shape) {
  if (!p->in_constant || shape->type == CXLA_TUPLE || !cx_pis(p, TK_LBRACE)) return 0;
  int64_t b = cx_shape_bytes(shape);
  if (b < 0 || b > CX_SHORTHAND_MAX_BYTES) return 0;
  const char *s = p->tok.s + 1, *e = p->lx.buf + p->lx.len;
  while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
  return e - s >= 3 && !memcmp(s, "...", 3);
}

cxla_literal *cx_pliteral(cx_parser *p, const cx_shape *shape, int allow_shape_prefix) {
  cx_token at = p->tok;
  char buf[128];
  if (has_token(shape))
    cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "a literal cannot have token shape %s", cx_shape_str(shape, buf, sizeof buf));
  int64_t n = total_elems(shape);
  size_t left = p->lx.len - (size_t)(at.s - p->lx.buf);
  /* A constant may be written as one value per array; up to a limit its size is then not
   * bounded by the text's. */
  int64_t bytes = p->in_constant ? total_bytes(shape) : -1;
  if (n < 0 || ((uint64_t)n > (uint64_t)left && (bytes < 0 || bytes > CX_SHORTHAND_MAX_BYTES) &&
                 !elided_at(p, shape))) {
    if (p->in_constant && at.kind == TK_WORD && !cx_pat_shape(p))
      cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "constant of shape %s written as one value: larger than the %d MiB "
              "cxla allocates for that", cx_shape_str(shape, buf, sizeof buf), (int)(CX_SHORTHAND_MAX_BYTES >> 20));
    cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "literal of shape %s: the text is too short for %s elements",
            cx_shape_str(shape, buf, sizeof buf), n < 0 ? "that many" : "its");
  }
  if (allow_shape_prefix && cx_pat_shape(p)) check_prefix(p, shape);
  cx_shape s;
  if (!cx_shape_copy(&s, shape, &p->m->arena)) cx_poom(p);
  plain(&s);
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit || !cx_module_own_literal(p->m, lit)) cx_poom(p);
  fill(p, lit);
  return lit;
}

cxla_literal *cx_pconstant(cx_parser *p, const cx_shape *shape) {
  p->in_constant = 1;
  cxla_literal *lit = cx_pliteral(p, shape, 1);
  p->in_constant = 0;
  return lit;
}

cxla_status cx_parse_literal(cxla_context *ctx, const char *text, size_t len, cxla_literal **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cx_parse_literal: out is NULL");
  *out = NULL;
  cx_module *m = cx_module_new(ctx, "literal");
  cx_parser *p = m ? cx_calloc(1, sizeof *p) : NULL;
  if (!p) {
    cx_module_free(m);
    return cx_oom(ctx);
  }
  m->filename = "<literal>";
  p->m = m;
  cx_lex_init(&p->lx, text, text ? len : 0);
  cxla_literal *volatile lit = NULL; /* set between setjmp and a possible longjmp */
  cxla_status st = CXLA_OK;
  if (setjmp(p->jb) == 0) {
    p->tok = cx_lex_next(&p->lx);
    cx_shape s;
    cx_pshape(p, &s, 1);
    lit = cx_pliteral(p, &s, 0);
    if (!cx_pis(p, TK_EOF)) cx_pexpected(p, "end of literal");
    m->nlits--; /* hand the literal to the caller instead of the scratch module */
  } else {
    st = p->status;
    lit = NULL;
  }
  cx_free(p->ints);
  cx_free(p);
  cx_module_free(m);
  *out = lit;
  return st;
}

cxla_status cxla_literal_parse(cxla_context *ctx, const char *text, cxla_literal **out) {
  if (!text) {
    if (out) *out = NULL;
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_parse: text is NULL");
  }
  unsigned env = cx_fpenv_enter(0); /* a denormal value is read as itself (util/fpenv.h) */
  cxla_status s = cx_parse_literal(ctx, text, strlen(text), out);
  cx_fpenv_leave(env);
  return s;
}
