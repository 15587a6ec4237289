/* parse_attrs.c — instruction attributes. Each op has a set of attributes the IR models
 * (parsed into cx_attrs and checked for presence); every other "key=value" is kept verbatim
 * as a raw attribute, so metadata, shardings, backend configs and attributes of newer XLA
 * versions survive a parse/print round trip without the parser knowing them. */
#include <string.h>
#include "ir/conv_dims.h"
#include "text/parse_int.h"

enum {
  K_DIMENSIONS, K_INDEX, K_IOTA_DIMENSION, K_DIRECTION, K_TYPE, K_SLICE, K_PADDING, K_DYN_SIZES,
  K_LHS_BATCH, K_LHS_CONTRACT, K_RHS_BATCH, K_RHS_CONTRACT, K_WINDOW, K_DIM_LABELS,
  K_FEATURE_GROUPS, K_BATCH_GROUPS, K_OFFSET_DIMS, K_COLLAPSED, K_START_INDEX_MAP,
  K_INDEX_VECTOR_DIM, K_SLICE_SIZES, K_SORTED, K_OPERAND_BATCHING, K_START_INDICES_BATCHING,
  K_UPDATE_WINDOW, K_INSERTED_WINDOW, K_SCATTER_TO_OPERAND, K_UNIQUE, K_INPUT_BATCHING,
  K_SCATTER_INDICES_BATCHING, K_IS_STABLE, K_EXPONENT_BITS, K_MANTISSA_BITS, K_KIND, K_TARGET,
  K_TO_APPLY, K_CALLS, K_CONDITION, K_BODY, K_SELECT, K_SCATTER, K_BRANCHES, K_TRUE, K_FALSE,
  K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "dimensions", "index", "iota_dimension", "direction", "type", "slice", "padding",
    "dynamic_slice_sizes", "lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
    "rhs_contracting_dims", "window", "dim_labels", "feature_group_count", "batch_group_count",
    "offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim", "slice_sizes",
    "indices_are_sorted", "operand_batching_dims", "start_indices_batching_dims",
    "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
    "unique_indices", "input_batching_dims", "scatter_indices_batching_dims", "is_stable",
    "exponent_bits", "mantissa_bits", "kind", "custom_call_target", "to_apply", "calls",
    "condition", "body", "select", "scatter", "branch_computations", "true_computation",
    "false_computation"};

#define B(k) ((uint64_t)1 << (k))
#define GATHER_KEYS (B(K_OFFSET_DIMS) | B(K_COLLAPSED) | B(K_START_INDEX_MAP) | B(K_INDEX_VECTOR_DIM) | B(K_SLICE_SIZES))
#define SCATTER_KEYS (B(K_UPDATE_WINDOW) | B(K_INSERTED_WINDOW) | B(K_SCATTER_TO_OPERAND) | B(K_INDEX_VECTOR_DIM) | B(K_TO_APPLY))

/* Attributes modelled per op, and which of them must be present (as XLA's parser requires). */
static void op_keys(cx_op op, uint64_t *allowed, uint64_t *required) {
  uint64_t a = 0, r = 0;
  switch (op) {
  case CX_OP_TRANSPOSE: case CX_OP_REVERSE: case CX_OP_CONCATENATE: a = r = B(K_DIMENSIONS); break;
  case CX_OP_BROADCAST: a = B(K_DIMENSIONS); break; /* a scalar operand needs none (checked late) */
  case CX_OP_REDUCE: a = r = B(K_DIMENSIONS) | B(K_TO_APPLY); break;
  case CX_OP_MAP: a = B(K_DIMENSIONS) | B(K_TO_APPLY); r = B(K_TO_APPLY); break;
  case CX_OP_SORT: a = B(K_DIMENSIONS) | B(K_IS_STABLE) | B(K_TO_APPLY); r = B(K_DIMENSIONS) | B(K_TO_APPLY); break;
  case CX_OP_GET_TUPLE_ELEMENT: a = r = B(K_INDEX); break;
  case CX_OP_IOTA: a = r = B(K_IOTA_DIMENSION); break;
  case CX_OP_COMPARE: a = B(K_DIRECTION) | B(K_TYPE); r = B(K_DIRECTION); break;
  case CX_OP_SLICE: a = r = B(K_SLICE); break;
  case CX_OP_PAD: a = r = B(K_PADDING); break;
  case CX_OP_DYNAMIC_SLICE: a = r = B(K_DYN_SIZES); break;
  case CX_OP_DOT: a = B(K_LHS_BATCH) | B(K_LHS_CONTRACT) | B(K_RHS_BATCH) | B(K_RHS_CONTRACT); break;
  case CX_OP_CONVOLUTION: a = B(K_WINDOW) | B(K_DIM_LABELS) | B(K_FEATURE_GROUPS) | B(K_BATCH_GROUPS); break;
  case CX_OP_REDUCE_WINDOW: a = B(K_WINDOW) | B(K_TO_APPLY); r = B(K_TO_APPLY); break;
  case CX_OP_SELECT_AND_SCATTER: a = B(K_WINDOW) | B(K_SELECT) | B(K_SCATTER); r = B(K_SELECT) | B(K_SCATTER); break;
  case CX_OP_GATHER:
    r = GATHER_KEYS;
    a = r | B(K_SORTED) | B(K_OPERAND_BATCHING) | B(K_START_INDICES_BATCHING);
    break;
  case CX_OP_SCATTER:
    r = SCATTER_KEYS;
    a = r | B(K_SORTED) | B(K_UNIQUE) | B(K_INPUT_BATCHING) | B(K_SCATTER_INDICES_BATCHING);
    break;
  case CX_OP_REDUCE_PRECISION: a = r = B(K_EXPONENT_BITS) | B(K_MANTISSA_BITS); break;
  case CX_OP_FUSION: a = r = B(K_KIND) | B(K_CALLS); break;
  case CX_OP_CUSTOM_CALL: a = r = B(K_TARGET); break;
  case CX_OP_CALL: case CX_OP_ALL_REDUCE: case CX_OP_REDUCE_SCATTER: case CX_OP_ALL_REDUCE_START:
    a = r = B(K_TO_APPLY); break;
  case CX_OP_ASYNC_START: a = r = B(K_CALLS); break;
  case CX_OP_ASYNC_UPDATE: case CX_OP_ASYNC_DONE: a = B(K_CALLS); break; /* else the chain's */
  case CX_OP_WHILE: a = r = B(K_CONDITION) | B(K_BODY); break;
  case CX_OP_CONDITIONAL: a = B(K_BRANCHES) | B(K_TRUE) | B(K_FALSE); break;
  default: break;
  }
  *allowed = a;
  *required = r;
}

static int lookup_key(const cx_token *t) {
  for (int k = 0; k < K_COUNT; k++) /* strncmp stops at the table name's end */
    if (key_names[k][0] == t->s[0] && !strncmp(key_names[k], t->s, t->len) && !key_names[k][t->len]) return k;
  return -1;
}

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

static void parse_padding(cx_parser *p, cx_attrs *a) {
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
  if (!cx_ints_set(p->m, &a->pad_lo, n, lo) || !cx_ints_set(p->m, &a->pad_hi, n, hi) ||
      !cx_ints_set(p->m, &a->pad_interior, n, in))
    cx_poom(p);
}

static void parse_slice(cx_parser *p, cx_attrs *a) {
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
  cx_ints *dst[3] = {&a->slice_start, &a->slice_limit, &a->slice_stride};
  for (int k = 0; k < 3; k++) {
    int64_t tmp[CXLA_MAX_RANK];
    for (int64_t i = 0; i < n; i++) tmp[i] = p->ints[3 * i + k];
    if (!cx_ints_set(p->m, dst[k], (int)n, tmp)) cx_poom(p);
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

static void parse_dim_labels(cx_parser *p, cx_attrs *a) {
  cx_token in = value_word(p, "dim_labels such as b01f_01io->b01f");
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
  if (!(a->conv = cx_arena_memdup(&p->m->arena, &cd, sizeof cd))) cx_poom(p);
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

/* Parses the value of modelled attribute k. Called-computation names go to refs[k];
 * branch_computations are pushed straight to p->callrefs. */
static void parse_value(cx_parser *p, cx_instr *in, int k, cx_token *refs, int *nbranches) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  static const char *const types[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  cx_attrs *a = &in->a;
  int gather = in->op == CX_OP_GATHER;
  switch (k) {
  case K_DIMENSIONS: case K_DYN_SIZES: int_list(p, &a->dims); break;
  case K_INDEX: a->index = cx_pint(p, "a tuple index"); break;
  case K_IOTA_DIMENSION: a->index = cx_pint(p, "an iota dimension"); break;
  case K_DIRECTION: a->dir = (cxla_compare_dir)parse_enum(p, dirs, 6, "a comparison direction (EQ, NE, LT, LE, GT, GE)"); break;
  case K_TYPE: a->cmp_type = (cx_cmp_type)(1 + parse_enum(p, types, 4, "a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)")); break;
  case K_SLICE: parse_slice(p, a); break;
  case K_PADDING: parse_padding(p, a); break;
  case K_LHS_BATCH: int_list(p, &a->dot.lhs_batch); break;
  case K_LHS_CONTRACT: int_list(p, &a->dot.lhs_contract); break;
  case K_RHS_BATCH: int_list(p, &a->dot.rhs_batch); break;
  case K_RHS_CONTRACT: int_list(p, &a->dot.rhs_contract); break;
  case K_WINDOW: parse_window(p, &a->window); break;
  case K_DIM_LABELS: parse_dim_labels(p, a); break;
  case K_FEATURE_GROUPS: a->feature_group_count = cx_pint(p, "a feature group count"); break;
  case K_BATCH_GROUPS: a->batch_group_count = cx_pint(p, "a batch group count"); break;
  case K_OFFSET_DIMS: int_list(p, &a->gather.offset_dims); break;
  case K_COLLAPSED: int_list(p, &a->gather.collapsed_slice_dims); break;
  case K_START_INDEX_MAP: int_list(p, &a->gather.start_index_map); break;
  case K_OPERAND_BATCHING: int_list(p, &a->gather.operand_batching_dims); break;
  case K_START_INDICES_BATCHING: int_list(p, &a->gather.start_indices_batching_dims); break;
  case K_SLICE_SIZES: int_list(p, &a->gather.slice_sizes); break;
  case K_INDEX_VECTOR_DIM: {
    int64_t v = cx_pint(p, "an index vector dimension");
    if (gather) a->gather.index_vector_dim = v;
    else a->scatter.index_vector_dim = v;
    break;
  }
  case K_SORTED: {
    int v = cx_pbool(p);
    if (gather) a->gather.indices_are_sorted = v;
    else a->scatter.indices_are_sorted = v;
    break;
  }
  case K_UPDATE_WINDOW: int_list(p, &a->scatter.update_window_dims); break;
  case K_INSERTED_WINDOW: int_list(p, &a->scatter.inserted_window_dims); break;
  case K_SCATTER_TO_OPERAND: int_list(p, &a->scatter.scatter_dims_to_operand_dims); break;
  case K_INPUT_BATCHING: int_list(p, &a->scatter.input_batching_dims); break;
  case K_SCATTER_INDICES_BATCHING: int_list(p, &a->scatter.scatter_indices_batching_dims); break;
  case K_UNIQUE: a->scatter.unique_indices = cx_pbool(p); break;
  case K_IS_STABLE: a->is_stable = cx_pbool(p); break;
  case K_EXPONENT_BITS: a->exponent_bits = small_int(p, "exponent_bits"); break;
  case K_MANTISSA_BITS: a->mantissa_bits = small_int(p, "mantissa_bits"); break;
  case K_KIND: {
    cx_token t = value_word(p, "a fusion kind such as kLoop");
    a->fusion_kind = cx_pstrndup(p, t.s, t.len);
    break;
  }
  case K_TARGET: {
    cx_token t = cx_pexpect(p, TK_STRING, "a quoted custom-call target");
    a->custom_call_target = cx_pstring(p, &t);
    break;
  }
  case K_BRANCHES:
    cx_pexpect(p, TK_LBRACE, "'{'");
    while (!cx_paccept(p, TK_RBRACE)) {
      if (*nbranches) cx_pexpect(p, TK_COMMA, "',' or '}'");
      cx_token t = cx_pname(p, "a computation name");
      if (*nbranches == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "too many branches");
      push_callref(p, in, &t, (*nbranches)++);
    }
    break;
  default: /* to_apply, calls, condition, body, select, scatter, true/false_computation */
    refs[k] = cx_pname(p, "a computation name");
    break;
  }
}

/* Fills in->called in the order ir.h documents. */
static void set_called(cx_parser *p, cx_instr *in, uint64_t seen, cx_token *refs, int nbranches, const cx_token *op_tok) {
  int order[2], n = 0;
  switch (in->op) {
  case CX_OP_WHILE: order[0] = K_CONDITION; order[1] = K_BODY; n = 2; break;
  case CX_OP_SELECT_AND_SCATTER: order[0] = K_SELECT; order[1] = K_SCATTER; n = 2; break;
  case CX_OP_CONDITIONAL: {
    int pair = (seen & B(K_TRUE)) || (seen & B(K_FALSE));
    if (pair && (seen & B(K_BRANCHES)))
      cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional has both branch_computations and true/false_computation");
    if (!pair && !(seen & B(K_BRANCHES)))
      cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional needs branch_computations= or true_computation= and false_computation=");
    if (pair && !((seen & B(K_TRUE)) && (seen & B(K_FALSE))))
      cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "conditional needs both true_computation= and false_computation=");
    if (!pair) {
      in->called = cx_palloc(p, sizeof *in->called * (size_t)(nbranches ? nbranches : 1));
      in->ncalled = nbranches;
      return;
    }
    order[0] = K_TRUE; order[1] = K_FALSE; n = 2;
    break;
  }
  default:
    if (seen & B(K_TO_APPLY)) order[n++] = K_TO_APPLY;
    if (seen & B(K_CALLS)) order[n++] = K_CALLS;
    break;
  }
  if (!n) return;
  in->called = cx_palloc(p, sizeof *in->called * (size_t)n);
  in->ncalled = n;
  for (int i = 0; i < n; i++) push_callref(p, in, &refs[order[i]], i);
}

void cx_pattrs(cx_parser *p, cx_instr *in, const cx_token *op_tok) {
  uint64_t allowed, required, seen = 0;
  cx_token refs[K_COUNT];
  int nbranches = 0, nraw = 0;
  op_keys(in->op, &allowed, &required);
  while (cx_paccept(p, TK_COMMA)) {
    cx_token key = cx_pexpect(p, TK_WORD, "an attribute name");
    int k = lookup_key(&key);
    cx_token eq = cx_pexpect(p, TK_EQ, "'=' after the attribute name");
    if (k >= 0 && (allowed & B(k))) {
      if (seen & B(k)) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "attribute %s given twice", key_names[k]);
      seen |= B(k);
      parse_value(p, in, k, refs, &nbranches);
    } else {
      cx_token v = key.len == 14 && !memcmp(key.s, "replica_groups", 14) ? cx_preplica_groups(p) : cx_praw_value(p, &eq);
      if (nraw == INT32_MAX / 4) cx_perr(p, cx_tok_loc(&key), CXLA_ERR_PARSE, "too many attributes");
      cx_ppush_raw(p, nraw++, &key, &v);
    }
  }
  cx_pstore_raw(p, nraw, &in->a.nraw, &in->a.raw);
  if (in->op == CX_OP_BROADCAST && !(seen & B(K_DIMENSIONS))) cx_plate(p, CX_LATE_BCAST_DIMS, in, cx_tok_loc(op_tok));
  uint64_t missing = required & ~seen;
  if (missing) {
    int k = 0;
    while (!(missing & B(k))) k++;
    cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "%.*s needs attribute %s=", (int)op_tok->len, op_tok->s, key_names[k]);
  }
  set_called(p, in, seen, refs, nbranches, op_tok);
}

void cx_pattrs_none(cx_parser *p, cx_instr *in, const cx_token *op_tok) {
  uint64_t allowed, required;
  op_keys(in->op, &allowed, &required);
  if (in->op == CX_OP_BROADCAST) cx_plate(p, CX_LATE_BCAST_DIMS, in, cx_tok_loc(op_tok));
  if (!required) return;
  int k = 0;
  while (!(required & B(k))) k++;
  cx_perr(p, cx_tok_loc(op_tok), CXLA_ERR_PARSE, "%.*s needs attribute %s=, which a nested instruction cannot have",
          (int)op_tok->len, op_tok->s, key_names[k]);
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
