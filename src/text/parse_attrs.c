/* parse_attrs.c — instruction attributes. Each op has a set of attributes the IR models (its
 * keys in text/attr_keys.c, parsed into the cx_attrs fields ir/attrs.def names for them and
 * checked for presence); every other "key=value" is kept verbatim
 * as a raw attribute, so metadata, shardings, backend configs and attributes of newer XLA
 * versions survive a parse/print round trip without the parser knowing them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/conv_dims.h"
#include "text/attr_keys.h"
#include "text/parse_int.h"

/* The keys an instruction's text has given: a bit per key. */
typedef struct key_set {
  uint64_t w[(CX_KEY_COUNT + 63) / 64];
} key_set;
static int has_key(const key_set *s, int k) { return (int)(s->w[k / 64] >> (k % 64)) & 1; }
static void add_key(key_set *s, int k) { s->w[k / 64] |= (uint64_t)1 << (k % 64); }

/* ---- raw attributes ---- */

cx_token cx_praw_value(cx_parser *p, const cx_token *eq) {
  cx_lex_rewind_after(&p->lx, eq);
  cx_token v = cx_lex_raw_value(&p->lx);
  if (v.kind == TK_ERROR) cx_perr(p, cx_tok_loc(&v), CXLA_ERR_PARSE, "%s", v.err);
  if (!v.len) cx_perr(p, cx_tok_loc(&v), CXLA_ERR_PARSE, "expected an attribute value");
  p->tok = cx_lex_next(&p->lx);
  return v;
}

void cx_ppush_raw(cx_parser *p, int64_t i, const cx_token *key, const cx_token *value) {
  if (!cx_vec_reserve((void **)&p->rawtok, &p->rawtok_cap, 2 * i + 2, sizeof *p->rawtok)) cx_poom(p);
  p->rawtok[2 * i] = *key;
  p->rawtok[2 * i + 1] = *value;
}

void cx_pstore_raw(cx_parser *p, int n, int *nraw, cx_raw_attr **raw) {
  *nraw = 0;
  *raw = NULL;
  if (!n) return;
  cx_raw_attr *v = cx_palloc(p, sizeof *v * (size_t)n);
  for (int i = 0; i < n; i++) {
    v[i].key = cx_pstrndup(p, p->rawtok[2 * i].s, p->rawtok[2 * i].len);
    v[i].value = cx_pstrndup(p, p->rawtok[2 * i + 1].s, p->rawtok[2 * i + 1].len);
  }
  *raw = v;
  *nraw = n;
}

/* ---- structured values ---- */

/* Splits "3x3" / "1_2x0_0_1" style words: parts separated by `sep`, each an int64. Returns
 * the count, -1 on bad syntax, -2 if more than max parts. */
static int split_ints(const char *s, size_t n, char sep, int64_t *out, int max) {
  int k = 0;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && s[j] != sep) j++;
    if (k == max) return -2;
    if (cx_parse_i64(s + i, j - i, &out[k++])) return -1;
    if (j == n) return k;
    i = j + 1;
  }
}

static cx_token value_word(cx_parser *p, const char *what) { return cx_pexpect(p, TK_WORD, what); }

static void parse_padding(cx_parser *p, cx_ints **f) {
  int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], in[CXLA_MAX_RANK];
  int n = 0;
  /* A rank-0 pad prints as "padding=" with nothing after it. */
  if (p->tok.kind == TK_WORD && (p->tok.s[0] == '-' || (p->tok.s[0] >= '0' && p->tok.s[0] <= '9'))) {
    cx_token w = cx_padvance(p);
    size_t i = 0;
    for (;;) {
      size_t j = i;
      while (j < w.len && w.s[j] != 'x') j++;
      int64_t v[3];
      int k = split_ints(w.s + i, j - i, '_', v, 3);
      if (n == CXLA_MAX_RANK) cx_perr(p, cx_tok_loc(&w), CXLA_ERR_PARSE, "padding has more than %d dimensions", CXLA_MAX_RANK);
      if (k < 2) cx_perr(p, cx_tok_loc(&w), CXLA_ERR_PARSE, "expected padding lo_hi[_interior] per dimension, got '%.*s'", (int)(w.len > 60 ? 60 : w.len), w.s);
      lo[n] = v[0];
      hi[n] = v[1];
      in[n++] = k == 3 ? v[2] : 0;
      if (j == w.len) break;
      i = j + 1;
    }
  }
  if (!cx_ints_set(p->m, f[0], n, lo) || !cx_ints_set(p->m, f[1], n, hi) || !cx_ints_set(p->m, f[2], n, in))
    cx_poom(p);
}

static void parse_slice(cx_parser *p, cx_ints **f) {
  cx_pexpect(p, TK_LBRACE, "'{'");
  int64_t n = 0;
  while (!cx_pis(p, TK_RBRACE)) {
    if (n) cx_pexpect(p, TK_COMMA, "',' or '}'");
    int64_t v[3];
    cx_pexpect(p, TK_LBRACKET, "'['");
    v[0] = cx_pint(p, "a slice start");
    cx_pexpect(p, TK_COLON, "':'");
    v[1] = cx_pint(p, "a slice limit");
    v[2] = cx_paccept(p, TK_COLON) ? cx_pint(p, "a slice stride") : 1;
    cx_pexpect(p, TK_RBRACKET, "']'");
    if (n >= CXLA_MAX_RANK) cx_perr(p, cx_tok_loc(&p->tok), CXLA_ERR_PARSE, "slice has more than %d dimensions", CXLA_MAX_RANK);
    if (!cx_vec_reserve((void **)&p->ints, &p->ints_cap, 3 * (n + 1), sizeof *p->ints)) cx_poom(p);
    memcpy(p->ints + 3 * n, v, sizeof v);
    n++;
  }
  cx_padvance(p);
  for (int k = 0; k < 3; k++) {
    int64_t tmp[CXLA_MAX_RANK];
    for (int64_t i = 0; i < n; i++) tmp[i] = p->ints[3 * i + k];
    if (!cx_ints_set(p->m, f[k], (int)n, tmp)) cx_poom(p);
  }
}

static void parse_window(cx_parser *p, cx_window *w) {
  static const char *const sub[6] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  int64_t v[6][CXLA_MAX_RANK], hi[CXLA_MAX_RANK];
  int cnt[6] = {-1, -1, -1, -1, -1, -1};
  cx_token open = cx_pexpect(p, TK_LBRACE, "'{'");
  while (!cx_paccept(p, TK_RBRACE)) {
    cx_token key = value_word(p, "a window attribute (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal) or '}'");
    int k = 0;
    while (k < 6 && !(strlen(sub[k]) == key.len && !memcmp(sub[k], key.s, key.len))) k++;
    if (k == 6) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "unknown window attribute '%.*s'", (int)(key.len > 40 ? 40 : key.len), key.s);
    if (cnt[k] >= 0) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "window attribute %s given twice", sub[k]);
    cx_pexpect(p, TK_EQ, "'='");
    cx_token val = value_word(p, "a window value such as 3x3");
    int n;
    if (k == 2) { /* pad=lo_hi x lo_hi ... */
      n = 0;
      for (size_t i = 0;;) {
        size_t j = i;
        while (j < val.len && val.s[j] != 'x') j++;
        int64_t lh[2];
        if (n == CXLA_MAX_RANK || split_ints(val.s + i, j - i, '_', lh, 2) != 2) { n = -1; break; }
        v[2][n] = lh[0];
        hi[n++] = lh[1];
        if (j == val.len) break;
        i = j + 1;
      }
    } else {
      n = split_ints(val.s, val.len, 'x', v[k], CXLA_MAX_RANK);
    }
    if (n < 0) cx_perr(p, cx_tok_loc(&val), CXLA_ERR_PARSE, "bad window %s value '%.*s'", sub[k], (int)(val.len > 60 ? 60 : val.len), val.s);
    cnt[k] = n;
  }
  int rank = cnt[0];
  for (int k = 1; k < 6; k++) {
    if (cnt[k] < 0) continue;
    if (rank < 0) cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "window needs size=");
    if (cnt[k] != rank)
      cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "window %s has %d dimensions, size has %d", sub[k], cnt[k], rank);
  }
  if (rank <= 0) return;
  w->d = cx_palloc(p, sizeof *w->d * (size_t)rank);
  w->rank = rank;
  for (int i = 0; i < rank; i++) {
    cx_window_dim *d = &w->d[i];
    d->size = v[0][i];
    d->stride = cnt[1] >= 0 ? v[1][i] : 1;
    d->pad_lo = cnt[2] >= 0 ? v[2][i] : 0;
    d->pad_hi = cnt[2] >= 0 ? hi[i] : 0;
    d->lhs_dilate = cnt[3] >= 0 ? v[3][i] : 1;
    d->rhs_dilate = cnt[4] >= 0 ? v[4][i] : 1;
    if (cnt[5] >= 0 && (v[5][i] < 0 || v[5][i] > 1))
      cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "window rhs_reversal entries must be 0 or 1");
    d->reversal = cnt[5] >= 0 ? (int)v[5][i] : 0;
  }
}

static void parse_dim_labels(cx_parser *p, cx_conv_dims **dst, const char *what) {
  cx_token in = value_word(p, what);
  cx_pexpect(p, TK_ARROW, "'->' in dim_labels");
  cx_token out = value_word(p, "output dim_labels");
  char buf[128], err[160];
  if (in.len + out.len + 2 >= sizeof buf)
    cx_perr(p, cx_tok_loc(&in), CXLA_ERR_PARSE, "dim_labels too long");
  memcpy(buf, in.s, in.len);
  memcpy(buf + in.len, "->", 2);
  memcpy(buf + in.len + 2, out.s, out.len);
  cx_conv_dims cd;
  if (!cx_parse_dim_labels(buf, in.len + 2 + out.len, -1, &cd, err, sizeof err))
    cx_perr(p, cx_tok_loc(&in), CXLA_ERR_PARSE, "%s", err);
  if (!(*dst = cx_arena_memdup(&p->m->arena, &cd, sizeof cd))) cx_poom(p);
}

static int parse_enum(cx_parser *p, const char *const *names, int n, const char *what) {
  for (int i = 0; i < n; i++)
    if (cx_pis_word(p, names[i])) { cx_padvance(p); return i; }
  cx_pexpected(p, what);
}

static cx_ref *new_callref(cx_parser *p, cx_instr *in, int slot, cx_loc loc) {
  if (!cx_vec_reserve((void **)&p->callrefs, &p->callrefs_cap, p->ncallrefs + 1, sizeof *p->callrefs)) cx_poom(p);
  cx_ref *r = &p->callrefs[p->ncallrefs++];
  memset(r, 0, sizeof *r);
  r->loc = loc;
  r->in = in;
  r->slot = slot;
  return r;
}

static void push_callref(cx_parser *p, cx_instr *in, const cx_token *name, int slot) {
  cx_ref *r = new_callref(p, in, slot, cx_tok_loc(name));
  r->s = name->s;
  r->len = name->len;
}

void cx_ppush_made_callref(cx_parser *p, cx_instr *in, cx_comp *c, int slot, cx_loc loc) {
  new_callref(p, in, slot, loc)->target = c;
}

static void int_list(cx_parser *p, cx_ints *dst) { cx_pset_ints(p, dst, cx_pint_list(p)); }

static int small_int(cx_parser *p, const char *what) {
  cx_token at = p->tok;
  int64_t v = cx_pint(p, what);
  if (v < INT32_MIN || v > INT32_MAX) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "%s out of range", what);
  return (int)v;
}

/* A finite float as XLA's kFloat attributes take it (a decimal or hex number), rounded once
 * to f32; returns its bits. */
static int32_t f32_bits(cx_parser *p, const char *what) {
  cx_token t = cx_pexpect(p, TK_WORD, what);
  char buf[64], *end = NULL;
  float v = 0;
  if (t.len < sizeof buf) {
    memcpy(buf, t.s, t.len);
    buf[t.len] = 0;
    v = strtof(buf, &end);
  }
  if (!end || end == buf || *end || !isfinite(v)) cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "expected %s", what);
  int32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

/* Parses the value of key k into the fields it writes. Called-computation names go to
 * refs[k] (and a computation written inline to made[k]); branch_computations are pushed
 * straight to p->callrefs. */
static void parse_value(cx_parser *p, cx_instr *in, cx_attr_key_id k, const cx_token *eq, cx_token *refs, cx_comp **made,
                        int *nbranches) {
  const cx_attr_key *key = &cx_attr_keys[k];
  cx_attrs *a = &in->a;
  void *f = key->field == CX_ATTR_NONE ? NULL : cx_attr_ptr(a, key->field);
  switch (key->syntax) {
  case CX_SYN_INTS: int_list(p, f); break;
  case CX_SYN_I64: cx_attr_set_pod(a, key->field, cx_pint(p, key->what)); break;
  case CX_SYN_I32: cx_attr_set_pod(a, key->field, small_int(p, key->what)); break;
  case CX_SYN_F32: cx_attr_set_pod(a, key->field, f32_bits(p, key->what)); break;
  case CX_SYN_BOOL: cx_attr_set_pod(a, key->field, cx_pbool(p)); break;
  case CX_SYN_ENUM: {
    const cx_attr_enum *e = cx_attr_key_enum(k);
    cx_attr_set_pod(a, key->field, e->base + parse_enum(p, e->names, e->n, key->what));
    break;
  }
  case CX_SYN_SLICE: case CX_SYN_PADDING: {
    cx_ints *three[3];
    for (int i = 0; i < 3; i++) three[i] = cx_attr_ptr(a, (cx_attr_id)(key->field + i));
    if (key->syntax == CX_SYN_SLICE) parse_slice(p, three);
    else parse_padding(p, three);
    break;
  }
  case CX_SYN_WINDOW: parse_window(p, f); break;
  case CX_SYN_DIM_LABELS: parse_dim_labels(p, f, key->what); break;
  case CX_SYN_WORD: {
    cx_token t = value_word(p, key->what);
    *(const char **)f = cx_pstrndup(p, t.s, t.len);
    break;
  }
  case CX_SYN_STRING: {
    cx_token t = cx_pexpect(p, TK_STRING, key->what);
    *(const char **)f = cx_pstring(p, &t);
    break;
  }
  case CX_SYN_VERBATIM: {
    cx_token t = cx_praw_value(p, eq);
    *(const char **)f = cx_pstrndup(p, t.s, t.len);
    break;
  }
  case CX_SYN_GROUPS: cx_pgroups(p, f, k == CX_KEY_SOURCE_TARGET_PAIRS); break;
  case CX_SYN_COMP: /* a name, or the computation itself written inline */
    if (cx_pis(p, TK_LBRACE)) {
      refs[k] = p->tok;
      made[k] = cx_pinline_comp(p);
    } else
      refs[k] = cx_pname(p, key->what);
    break;
  case CX_SYN_BRANCHES:
    cx_pexpect(p, TK_LBRACE, "'{'");
    while (!cx_paccept(p, TK_RBRACE)) {
      if (*nbranches) cx_pexpect(p, TK_COMMA, "',' or '}'");
      cx_token t = p->tok;
      cx_comp *c = cx_pis(p, TK_LBRACE) ? cx_pinline_comp(p) : NULL;
      if (!c) t = cx_pname(p, key->what);
      if (*nbranches == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "too many branches");
      if (c) cx_ppush_made_callref(p, in, c, (*nbranches)++, cx_tok_loc(&t));
      else push_callref(p, in, &t, (*nbranches)++);
    }
    break;
  }
}

/* A conditional names its branches as a list or (pred form) as a true/false pair; npair of
 * the pair's keys were given. Returns whether it is the pair. */
static int branches_or_pair(cx_parser *p, int npair, int list, const cx_token *op_tok) {
  if (npair && list)
    cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional has both branch_computations and true/false_computation");
  if (!npair && !list)
    cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional needs branch_computations= or true_computation= and false_computation=");
  if (npair == 1)
    cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional needs both true_computation= and false_computation=");
  return npair != 0;
}

/* Fills in->called in the order ir.h documents: the op's called-computation keys in the
 * order its table lists them. */
static void set_called(cx_parser *p, cx_instr *in, const cx_op_key *keys, int nkeys, const key_set *seen, cx_token *refs,
                       cx_comp *const *made, int nbranches, const cx_token *op_tok) {
  int order[CX_OP_MAX_KEYS], n = 0, list = -1;
  for (int i = 0; i < nkeys; i++) {
    cx_attr_syntax syn = cx_attr_keys[keys[i].key].syntax;
    if (syn == CX_SYN_BRANCHES) list = keys[i].key;
    else if (syn == CX_SYN_COMP && has_key(seen, keys[i].key)) order[n++] = keys[i].key;
  }
  if (list >= 0 && !branches_or_pair(p, n, has_key(seen, list), op_tok)) {
    in->called = cx_palloc(p, sizeof *in->called * (size_t)(nbranches ? nbranches : 1));
    in->ncalled = nbranches;
    return;
  }
  if (!n) return;
  in->called = cx_palloc(p, sizeof *in->called * (size_t)n);
  in->ncalled = n;
  for (int i = 0; i < n; i++)
    if (made[order[i]]) cx_ppush_made_callref(p, in, made[order[i]], i, cx_tok_loc(&refs[order[i]]));
    else push_callref(p, in, &refs[order[i]], i);
}

/* The first required key missing from seen, in the order of attrs.def, or -1. */
static int first_missing(const cx_op_key *keys, int nkeys, const key_set *seen) {
  int first = -1;
  for (int i = 0; i < nkeys; i++)
    if (keys[i].required && !has_key(seen, keys[i].key) && (first < 0 || (int)keys[i].key < first)) first = keys[i].key;
  return first;
}

void cx_pattrs(cx_parser *p, cx_instr *in, const cx_token *op_tok) {
  cx_op_key keys[CX_OP_MAX_KEYS];
  int nkeys = cx_op_attr_keys(in->op, keys);
  key_set seen = {{0}};
  cx_token refs[CX_KEY_COUNT];
  cx_comp *made[CX_KEY_COUNT] = {0};
  int nbranches = 0, nraw = 0;
  while (cx_paccept(p, TK_COMMA)) {
    cx_token key = cx_pexpect(p, TK_WORD, "an attribute name");
    int k = cx_op_attr_key_lookup(in->op, key.s, key.len);
    cx_token eq = cx_pexpect(p, TK_EQ, "'=' after the attribute name");
    if (k >= 0) {
      if (has_key(&seen, k)) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "attribute %s given twice", cx_attr_keys[k].name);
      add_key(&seen, k);
      parse_value(p, in, (cx_attr_key_id)k, &eq, refs, made, &nbranches);
    } else {
      cx_token v = key.len == 14 && !memcmp(key.s, "replica_groups", 14) ? cx_preplica_groups(p) : cx_praw_value(p, &eq);
      if (nraw == INT32_MAX / 4) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "too many attributes");
      cx_ppush_raw(p, nraw++, &key, &v);
    }
  }
  cx_pstore_raw(p, nraw, &in->a.nraw, &in->a.raw);
  if (in->op == CX_OP_BROADCAST && !has_key(&seen, CX_KEY_DIMENSIONS)) cx_plate(p, CX_LATE_BCAST_DIMS, in, cx_tok_loc(op_tok));
  int missing = first_missing(keys, nkeys, &seen);
  if (missing >= 0)
    cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "%.*s needs attribute %s=", (int)op_tok->len, op_tok->s,
            cx_attr_keys[missing].name);
  set_called(p, in, keys, nkeys, &seen, refs, made, nbranches, op_tok);
}

void cx_pattrs_none(cx_parser *p, cx_instr *in, const cx_token *op_tok) {
  cx_op_key keys[CX_OP_MAX_KEYS];
  key_set none = {{0}};
  int missing = first_missing(keys, cx_op_attr_keys(in->op, keys), &none);
  if (in->op == CX_OP_BROADCAST) cx_plate(p, CX_LATE_BCAST_DIMS, in, cx_tok_loc(op_tok));
  if (missing < 0) return;
  cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "%.*s needs attribute %s=, which a nested instruction cannot have",
          (int)op_tok->len, op_tok->s, cx_attr_keys[missing].name);
}

/* Attributes of the async op itself (XLA reads them into async-start) and those XLA gives both
 * the async op and the op it wraps. */
static const char *const async_own[] = {"async_execution_thread", "output_to_operand_aliasing", "sharding",
                                        "control-predecessors"};
static const char *const async_shared[] = {"metadata", "backend_config", "frontend_attributes", "statistics", "origin"};

static int key_in(const char *key, const char *const *list, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(key, list[i])) return 1;
  return 0;
}

void cx_psplit_async_attrs(cx_parser *p, cx_instr *start, cx_instr *wrapped) {
  const cx_attrs *from = wrapped ? &wrapped->a : &start->a;
  int n = from->nraw, ns = 0, nw = 0;
  cx_raw_attr *s = cx_palloc(p, sizeof *s * (size_t)(n ? n : 1)), *w = cx_palloc(p, sizeof *w * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    const cx_raw_attr *r = &from->raw[i];
    int own = key_in(r->key, async_own, CX_ARRAY_LEN(async_own));
    int shared = key_in(r->key, async_shared, CX_ARRAY_LEN(async_shared));
    if (own || shared) s[ns++] = *r;
    if (!own) w[nw++] = *r;
  }
  start->a.raw = s;
  start->a.nraw = ns;
  if (wrapped) { /* otherwise (a -update or -done) the wrapped op's attributes go: XLA ignores them */
    wrapped->a.raw = w;
    wrapped->a.nraw = nw;
  }
}
