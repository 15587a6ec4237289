/* conv_dims.c — dim_labels text <-> cx_conv_dims. XLA writes one character per dimension in
 * dimension order, so the position of a label is the dimension number it names. */
#include <stdio.h>
#include <string.h>
#include "ir/conv_dims.h"

/* One part (input, kernel or output): `a` and `b` are the two non-spatial labels. */
static int parse_part(const char *s, size_t n, char a, char b, const char *what, int64_t *pa,
                      int64_t *pb, int64_t *spatial, int nspatial, char *err, size_t errlen) {
  int64_t seen[CXLA_MAX_RANK];
  for (int i = 0; i < CXLA_MAX_RANK; i++) seen[i] = -1;
  *pa = *pb = -1;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == a || c == b) {
      int64_t *slot = c == a ? pa : pb;
      if (*slot >= 0) { snprintf(err, errlen, "%s labels '%.*s' name '%c' twice", what, (int)n, s, c); return 0; }
      *slot = (int64_t)i;
    } else if (c >= '0' && c <= '9') {
      int d = c - '0';
      if (d >= nspatial) {
        snprintf(err, errlen, "%s labels '%.*s': spatial dim %d out of range for %d spatial dims", what,
                 (int)n, s, d, nspatial);
        return 0;
      }
      if (seen[d] >= 0) { snprintf(err, errlen, "%s labels '%.*s' name spatial dim %d twice", what, (int)n, s, d); return 0; }
      seen[d] = (int64_t)i;
    } else {
      snprintf(err, errlen, "%s labels '%.*s': unexpected '%c' (expected %c, %c or a digit)", what, (int)n, s,
               c, a, b);
      return 0;
    }
  }
  if (*pa < 0 || *pb < 0) {
    snprintf(err, errlen, "%s labels '%.*s' need '%c'", what, (int)n, s, *pa < 0 ? a : b);
    return 0;
  }
  for (int d = 0; d < nspatial; d++) spatial[d] = seen[d];
  return 1;
}

int cx_parse_dim_labels(const char *text, size_t len, int rank, cx_conv_dims *out, char *err, size_t errlen) {
  char dummy[8];
  if (!err || !errlen) { err = dummy; errlen = sizeof dummy; }
  err[0] = 0;
  const char *us = memchr(text, '_', len);
  const char *arrow = NULL;
  for (size_t i = 0; i + 1 < len; i++)
    if (text[i] == '-' && text[i + 1] == '>') { arrow = text + i; break; }
  if (!us || !arrow || us > arrow) {
    snprintf(err, errlen, "dim_labels '%.*s' must look like b01f_01io->b01f", (int)(len < 64 ? len : 64), text);
    return 0;
  }
  size_t nin = (size_t)(us - text), nk = (size_t)(arrow - us - 1), nout = len - (size_t)(arrow + 2 - text);
  if (nin != nk || nin != nout) {
    snprintf(err, errlen, "dim_labels '%.*s': input, kernel and output labels must have the same length",
             (int)(len < 64 ? len : 64), text);
    return 0;
  }
  if (nin < 2 || nin > CXLA_MAX_RANK) {
    snprintf(err, errlen, "dim_labels '%.*s': rank %zu out of range [2, %d]", (int)(len < 64 ? len : 64), text,
             nin, CXLA_MAX_RANK);
    return 0;
  }
  if (rank >= 0 && (size_t)rank != nin) {
    snprintf(err, errlen, "dim_labels '%.*s' have rank %zu, operands have rank %d", (int)(len < 64 ? len : 64),
             text, nin, rank);
    return 0;
  }
  cx_conv_dims d;
  memset(&d, 0, sizeof d);
  d.nspatial = (int)nin - 2;
  if (!parse_part(text, nin, 'b', 'f', "input", &d.in_batch, &d.in_feature, d.in_spatial, d.nspatial, err, errlen) ||
      !parse_part(us + 1, nk, 'i', 'o', "kernel", &d.k_in, &d.k_out, d.k_spatial, d.nspatial, err, errlen) ||
      !parse_part(arrow + 2, nout, 'b', 'f', "output", &d.out_batch, &d.out_feature, d.out_spatial, d.nspatial,
                  err, errlen))
    return 0;
  *out = d;
  return 1;
}

static void print_part(cx_sb *sb, int rank, int64_t pa, char a, int64_t pb, char b, const int64_t *spatial,
                       int nspatial) {
  char s[CXLA_MAX_RANK + 1];
  memset(s, '?', sizeof s);
  if (pa >= 0 && pa < rank) s[pa] = a;
  if (pb >= 0 && pb < rank) s[pb] = b;
  for (int i = 0; i < nspatial; i++)
    if (spatial[i] >= 0 && spatial[i] < rank) s[spatial[i]] = (char)('0' + i);
  cx_sb_putn(sb, s, (size_t)rank);
}

void cx_print_dim_labels(cx_sb *sb, const cx_conv_dims *d) {
  int rank = d->nspatial + 2;
  if (rank > CXLA_MAX_RANK) rank = CXLA_MAX_RANK;
  print_part(sb, rank, d->in_batch, 'b', d->in_feature, 'f', d->in_spatial, d->nspatial);
  cx_sb_putc(sb, '_');
  print_part(sb, rank, d->k_in, 'i', d->k_out, 'o', d->k_spatial, d->nspatial);
  cx_sb_puts(sb, "->");
  print_part(sb, rank, d->out_batch, 'b', d->out_feature, 'f', d->out_spatial, d->nspatial);
}
