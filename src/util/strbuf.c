/* strbuf.c — growable strings for printers and error messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

void cx_sb_init(cx_sb *sb) { memset(sb, 0, sizeof *sb); }
void cx_sb_free(cx_sb *sb) { cx_free(sb->buf); cx_sb_init(sb); }

static int grow(cx_sb *sb, size_t extra) {
  if (sb->oom) return 0;
  if (sb->len + extra + 1 <= sb->cap) return 1;
  size_t cap = sb->cap ? sb->cap * 2 : 256;
  while (cap < sb->len + extra + 1) cap *= 2;
  char *p = cx_realloc(sb->buf, cap);
  if (!p) { sb->oom = 1; return 0; }
  sb->buf = p;
  sb->cap = cap;
  return 1;
}

void cx_sb_putn(cx_sb *sb, const char *s, size_t n) {
  if (!grow(sb, n)) return;
  memcpy(sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = 0;
}
void cx_sb_puts(cx_sb *sb, const char *s) { cx_sb_putn(sb, s, strlen(s)); }
void cx_sb_putc(cx_sb *sb, char c) { cx_sb_putn(sb, &c, 1); }

void cx_sb_vprintf(cx_sb *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || !grow(sb, (size_t)n)) return;
  vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void cx_sb_printf(cx_sb *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cx_sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

char *cx_sb_take(cx_sb *sb) {
  char *r = NULL;
  if (!sb->oom) {
    if (!sb->buf) grow(sb, 0);
    if (!sb->oom) { r = sb->buf; if (sb->len == 0) r[0] = 0; sb->buf = NULL; }
  }
  cx_sb_free(sb);
  return r;
}

void cx_sb_put_double(cx_sb *sb, double v, int is_f32) {
  if (isnan(v)) { cx_sb_puts(sb, "nan"); return; }
  if (isinf(v)) { cx_sb_puts(sb, v < 0 ? "-inf" : "inf"); return; }
  if (v == floor(v) && fabs(v) < 1e15) { /* integral values print without exponent */
    cx_sb_printf(sb, "%.0f", v);
    return;
  }
  char buf[64];
  for (int p = 1; p <= 17; p++) { /* shortest form that parses back to the same value */
    snprintf(buf, sizeof buf, "%.*g", p, v);
    if (is_f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  cx_sb_puts(sb, buf);
}
