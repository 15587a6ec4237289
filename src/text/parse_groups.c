/* parse_groups.c — replica_groups= and source_target_pairs= of the collectives. XLA writes
 * them as lists of ids, {{0,1},{2,3}}, and replica groups also in its iota form
 * [G,S]<=[d0,...,dk]T(p0,...,pk): the ids 0..N-1 laid out as an array of dims d, transposed by
 * p (left out when k is 0), then read row by row as G groups of S. So [2,2]<=[4] is
 * {{0,1},{2,3}} and [2,2]<=[2,2]T(1,0) is {{0,2},{1,3}}. Both are read into a cx_groups (the
 * iota form kept for printing); the verifier checks what the ids mean (ir/infer_collective.c). */
#include <stdio.h>
#include <string.h>
#include "ir/groups.h"
#include "text/parse_int.h"

/* '[' int (',' int)* ']' into v (at most max); returns the count, *close the ']' token. */
static int bracket_ints(cx_parser *p, int64_t *v, int max, const char *what, cx_token *close) {
  cx_pexpect(p, TK_LBRACKET, "'['");
  int n = 0;
  for (;;) {
    cx_token at = p->tok;
    int64_t x = cx_pint(p, what);
    if (n == max) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "more than %d entries in iota replica groups", max);
    v[n++] = x;
    if (!cx_paccept(p, TK_COMMA)) break;
  }
  *close = cx_pexpect(p, TK_RBRACKET, "',' or ']'");
  return n;
}

/* The product of v[0..n), or -1 when it passes 2^62 (no device count is that large). */
static int64_t product(const int64_t *v, int n) {
  int64_t r = 1;
  for (int i = 0; i < n; i++) {
    if (v[i] > ((int64_t)1 << 62) / r) return -1;
    r *= v[i];
  }
  return r;
}

static void ints_text(const int64_t *v, int n, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k + 24 < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)v[i]);
}

/* The iota form into *out (when out is not NULL); returns its last token. */
static cx_token iota_groups(cx_parser *p, cx_groups **out) {
  int64_t g[CXLA_MAX_RANK], d[CXLA_MAX_RANK], t[CXLA_MAX_RANK];
  cx_token gat = p->tok, dat, last;
  int ng = bracket_ints(p, g, CXLA_MAX_RANK, "a group dimension", &last);
  if (ng != 2)
    cx_perr(p, cx_tok_loc(&gat), CXLA_ERR_PARSE,
            "iota replica groups need 2 dimensions [groups,group_size], got %d", ng);
  cx_pexpect(p, TK_LEQ, "'<=' (iota replica groups: [groups,group_size]<=[device dims])");
  dat = p->tok;
  int nd = bracket_ints(p, d, CXLA_MAX_RANK, "a device dimension", &last);
  int nt = 0;
  if (cx_pis_word(p, "T") && cx_ppeek_kind(p) == TK_LPAREN) {
    cx_padvance(p);
    cx_padvance(p);
    for (;;) {
      cx_token at = p->tok;
      int64_t x = cx_pint(p, "a transpose dimension");
      if (x < 0 || x >= nd)
        cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "transpose dimension %lld out of range for %d device dimensions",
                (long long)x, nd);
      for (int i = 0; i < nt; i++)
        if (t[i] == x) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "transpose names dimension %lld twice", (long long)x);
      if (nt == CXLA_MAX_RANK) cx_perr(p, cx_tok_loc(&at), CXLA_ERR_PARSE, "transpose too long");
      t[nt++] = x;
      if (!cx_paccept(p, TK_COMMA)) break;
    }
    last = cx_pexpect(p, TK_RPAREN, "',' or ')'");
    if (nt != nd)
      cx_perr(p, cx_tok_loc(&last), CXLA_ERR_PARSE, "transpose has %d dimensions, the device array has %d", nt, nd);
  } else if (nd > 1) {
    cx_pexpected(p, "'T(' (a transpose of the device array, as XLA writes it when it has several dimensions)");
  }
  char a[128], b[128];
  ints_text(g, ng, a, sizeof a);
  ints_text(d, nd, b, sizeof b);
  for (int i = 0; i < ng; i++)
    if (g[i] < 1) cx_perr(p, cx_tok_loc(&gat), CXLA_ERR_PARSE, "iota replica groups [%s]: sizes must be >= 1", a);
  for (int i = 0; i < nd; i++)
    if (d[i] < 1) cx_perr(p, cx_tok_loc(&dat), CXLA_ERR_PARSE, "iota replica groups <=[%s]: sizes must be >= 1", b);
  int64_t pg = product(g, ng), pd = product(d, nd);
  if (pg < 0 || pg != pd)
    cx_perr(p, cx_tok_loc(&dat), CXLA_ERR_PARSE,
            "iota replica groups [%s]<=[%s]: the groups hold %lld devices but the device array has %lld", a, b,
            (long long)pg, (long long)pd);
  if (pg > ((int64_t)1 << 24) || g[0] > INT32_MAX / 2)
    cx_perr(p, cx_tok_loc(&gat), CXLA_ERR_PARSE, "iota replica groups [%s]: more devices than cxla takes", a);
  if (!out) return last;
  cx_groups *r = cx_palloc(p, sizeof *r);
  memset(r, 0, sizeof *r);
  r->n = (int)g[0];
  r->start = cx_palloc(p, sizeof *r->start * (size_t)(g[0] + 1));
  r->ids = cx_palloc(p, sizeof *r->ids * (size_t)pg);
  for (int64_t k = 0; k <= g[0]; k++) r->start[k] = k * g[1];
  int perm[CXLA_MAX_RANK];
  for (int i = 0; i < nd; i++) perm[i] = nt ? (int)t[i] : i;
  cx_groups_iota_ids(nd, d, perm, pg, r->ids);
  r->ndims = nd;
  memcpy(r->dims, d, sizeof *d * (size_t)nd);
  memcpy(r->perm, perm, sizeof *perm * (size_t)nd);
  *out = r;
  return last;
}

/* {{0,1},{2,3}} (or {} for none) into *out (when out is not NULL; {} gives NULL): p->ints
 * holds each group's size followed by its ids while reading. pairs: every group is a pair.
 * Returns the closing token. */
static cx_token list_groups(cx_parser *p, cx_groups **out, int pairs) {
  cx_padvance(p);
  int n = 0;
  int64_t used = 0;
  while (!cx_pis(p, TK_RBRACE)) {
    if (n) cx_pexpect(p, TK_COMMA, "',' or '}'");
    if (!cx_pis(p, TK_LBRACE))
      cx_pexpected(p, pairs ? "'{' (a pair such as {0,1})" : "'{' (a replica group such as {0,1})");
    cx_token open = cx_padvance(p);
    int64_t at = used++, size = 0;
    while (!cx_pis(p, TK_RBRACE)) {
      if (size) cx_pexpect(p, TK_COMMA, "',' or '}'");
      cx_token t = p->tok;
      int64_t v = cx_pint(p, "an id");
      if (v < 0) cx_perr(p, cx_tok_loc(&t), CXLA_ERR_PARSE, "ids must be >= 0, got %lld", (long long)v);
      if (!cx_vec_reserve((void **)&p->ints, &p->ints_cap, used + 1, sizeof *p->ints)) cx_poom(p);
      p->ints[used++] = v;
      size++;
    }
    if (pairs && size != 2)
      cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "a source-target pair has 2 ids (source, target), not %lld",
              (long long)size);
    if (!cx_vec_reserve((void **)&p->ints, &p->ints_cap, used + 1, sizeof *p->ints)) cx_poom(p);
    p->ints[at] = size;
    cx_padvance(p);
    if (n == INT32_MAX / 2) cx_perr(p, cx_tok_loc(&open), CXLA_ERR_PARSE, "too many groups");
    n++;
  }
  cx_token last = cx_padvance(p);
  if (!out || !n) return last;
  cx_groups *r = cx_palloc(p, sizeof *r);
  memset(r, 0, sizeof *r);
  r->n = n;
  r->start = cx_palloc(p, sizeof *r->start * (size_t)(n + 1));
  r->ids = cx_palloc(p, sizeof *r->ids * (size_t)(used - n + 1));
  r->start[0] = 0;
  for (int64_t k = 0, i = 0; k < n; k++) {
    int64_t size = p->ints[i++];
    memcpy(r->ids + r->start[k], p->ints + i, sizeof *r->ids * (size_t)size);
    i += size;
    r->start[k + 1] = r->start[k] + size;
  }
  *out = r;
  return last;
}

void cx_pgroups(cx_parser *p, cx_groups **out, int pairs) {
  *out = NULL;
  if (!pairs && cx_pis(p, TK_LBRACKET)) iota_groups(p, out);
  else if (cx_pis(p, TK_LBRACE)) list_groups(p, out, pairs);
  else if (pairs) cx_pexpected(p, "source-target pairs such as {{0,1},{1,0}}");
  else cx_pexpected(p, "replica groups ({{0,1},{2,3}} or [groups,group_size]<=[device dims])");
}

cx_token cx_preplica_groups(cx_parser *p) {
  cx_token first = p->tok, last;
  if (cx_pis(p, TK_LBRACKET)) last = iota_groups(p, NULL);
  else if (cx_pis(p, TK_LBRACE)) last = list_groups(p, NULL, 0);
  else cx_pexpected(p, "replica groups ({{0,1},{2,3}} or [groups,group_size]<=[device dims])");
  cx_token v = first;
  v.kind = TK_WORD;
  v.len = (size_t)(last.s + last.len - first.s);
  return v;
}
