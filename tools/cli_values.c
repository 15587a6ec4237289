/* cli_values.c — values for `cxla run`: shape text, seeded random inputs, result leaves and
 * their summaries. Uses only the public API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

const char *cli_shape_str(const cxla_shape *s, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
  if (s->type == CXLA_TUPLE) {
    PUT("(");
    for (int i = 0; i < s->ntuple && s->elems; i++) {
      char sub[256];
      PUT("%s%s", i ? ", " : "", cli_shape_str(&s->elems[i], sub, sizeof sub));
    }
    PUT(")");
  } else {
    const char *t = cxla_type_name(s->type);
    PUT("%s[", t ? t : "?");
    for (int d = 0; d < s->rank; d++) PUT("%s%lld", d ? "," : "", (long long)s->dims[d]);
    PUT("]");
  }
#undef PUT
  return buf;
}

/* splitmix64: tiny, seedable with any value, and the same stream on every platform. */
static uint64_t next_u64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

cxla_literal *cli_random_literal(cxla_context *ctx, const cxla_shape *s, uint64_t *state) {
  if (s->type == CXLA_TUPLE) {
    cxla_literal **el = calloc((size_t)(s->ntuple ? s->ntuple : 1), sizeof *el);
    if (!el) return NULL;
    for (int i = 0; i < s->ntuple; i++) {
      if (!(el[i] = cli_random_literal(ctx, &s->elems[i], state))) {
        for (int j = 0; j < i; j++) cxla_literal_destroy(el[j]);
        free(el);
        return NULL;
      }
    }
    cxla_literal *t = cxla_literal_tuple(ctx, s->ntuple, el); /* takes the elements */
    free(el);
    return t;
  }
  if (s->type == CXLA_TOKEN) return cxla_literal_token(ctx);
  cxla_literal *lit = cxla_literal_create(ctx, s->type, s->rank, s->dims);
  if (!lit) return NULL;
  int64_t n = cxla_literal_element_count(lit);
  if (s->type == CXLA_C64 || s->type == CXLA_C128) { /* both parts in [-1, 1) */
    void *d = cxla_literal_data(lit);
    for (int64_t i = 0; i < 2 * n; i++) {
      double v = (double)(next_u64(state) >> 11) * 0x1p-53 * 2.0 - 1.0;
      if (s->type == CXLA_C64) ((float *)d)[i] = (float)v;
      else ((double *)d)[i] = v;
    }
    return lit;
  }
  if (s->type == CXLA_F32 || s->type == CXLA_F64) { /* most inputs: stored directly, the same values */
    void *d = cxla_literal_data(lit);
    for (int64_t i = 0; i < n; i++) {
      double v = (double)(next_u64(state) >> 11) * 0x1p-53 * 2.0 - 1.0;
      if (s->type == CXLA_F32) ((float *)d)[i] = (float)v;
      else ((double *)d)[i] = v;
    }
    return lit;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_u64(state);
    double v;
    switch (s->type) {
    case CXLA_PRED: v = (double)(r & 1); break;
    case CXLA_S8: case CXLA_S16: case CXLA_S32: case CXLA_S64: v = (double)(int)(r % 16) - 8; break;
    case CXLA_U8: case CXLA_U16: case CXLA_U32: case CXLA_U64: v = (double)(r % 16); break;
    default: v = (double)(r >> 11) * 0x1p-53 * 2.0 - 1.0; break; /* [-1, 1) */
    }
    cxla_literal_set_f64(lit, i, v);
  }
  return lit;
}

int cli_leaves(cxla_literal *lit, cxla_literal **out, int max) {
  int n = cxla_literal_tuple_size(lit);
  if (n < 0) {
    if (max > 0) out[0] = lit;
    return 1;
  }
  int total = 0;
  for (int i = 0; i < n; i++) {
    int room = max - total;
    total += cli_leaves(cxla_literal_tuple_get(lit, i), room > 0 ? out + total : NULL, room > 0 ? room : 0);
  }
  return total;
}

enum { SMALL = 100, HEAD = 10, LINE = 100 };

/* Integers are read from their own storage: through a double, s64/u64 beyond 2^53 would print
 * rounded, and u64 above 2^63 would not even convert back. */
static int is_signed(cxla_type t) { return t == CXLA_S8 || t == CXLA_S16 || t == CXLA_S32 || t == CXLA_S64; }
static int is_unsigned(cxla_type t) { return t == CXLA_U8 || t == CXLA_U16 || t == CXLA_U32 || t == CXLA_U64; }

static int64_t get_signed(cxla_literal *lit, int64_t i) {
  const void *d = cxla_literal_data(lit);
  switch (cxla_literal_type(lit)) {
  case CXLA_S8: return ((const int8_t *)d)[i];
  case CXLA_S16: return ((const int16_t *)d)[i];
  case CXLA_S32: return ((const int32_t *)d)[i];
  default: return ((const int64_t *)d)[i];
  }
}

static uint64_t get_unsigned(cxla_literal *lit, int64_t i) {
  const void *d = cxla_literal_data(lit);
  switch (cxla_literal_type(lit)) {
  case CXLA_U8: return ((const uint8_t *)d)[i];
  case CXLA_U16: return ((const uint16_t *)d)[i];
  case CXLA_U32: return ((const uint32_t *)d)[i];
  default: return ((const uint64_t *)d)[i];
  }
}

static int is_complex(cxla_type t) { return t == CXLA_C64 || t == CXLA_C128; }

/* Part k (0 real, 1 imaginary) of complex element i. */
static double part(cxla_literal *lit, int64_t i, int k) {
  const void *d = cxla_literal_data(lit);
  return cxla_literal_type(lit) == CXLA_C64 ? ((const float *)d)[2 * i + k] : ((const double *)d)[2 * i + k];
}

static void print_value(FILE *f, cxla_literal *lit, int64_t i) {
  cxla_type t = cxla_literal_type(lit);
  if (is_complex(t)) fprintf(f, "(%.6g, %.6g)", part(lit, i, 0), part(lit, i, 1));
  else if (is_signed(t)) fprintf(f, "%lld", (long long)get_signed(lit, i));
  else if (is_unsigned(t)) fprintf(f, "%llu", (unsigned long long)get_unsigned(lit, i));
  else if (t == CXLA_PRED) fputs(cxla_literal_get_f64(lit, i) != 0 ? "true" : "false", f);
  else fprintf(f, "%.6g", cxla_literal_get_f64(lit, i));
}

/* Elements [first, first + count) of dims[d..] as nested braces, like HLO literal text. */
static void print_block(FILE *f, cxla_literal *lit, int d, int64_t first, int64_t count) {
  int rank = cxla_literal_rank(lit);
  if (d == rank) { print_value(f, lit, first); return; }
  int64_t n = cxla_literal_dims(lit)[d], sub = n ? count / n : 0;
  fputc('{', f);
  for (int64_t i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    print_block(f, lit, d + 1, first + i * sub, sub);
  }
  fputc('}', f);
}

/* Small arrays: one line if it is short, else one line per outermost row. */
static void print_small(FILE *f, cxla_literal *lit) {
  char *line = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&line, &len);
  if (m) {
    print_block(m, lit, 0, 0, cxla_literal_element_count(lit));
    fclose(m);
  }
  int rank = cxla_literal_rank(lit);
  if (line && (len <= LINE || rank < 2)) {
    fprintf(f, " %s\n", line);
  } else {
    int64_t n = cxla_literal_dims(lit)[0], sub = n ? cxla_literal_element_count(lit) / n : 0;
    fputs("\n", f);
    for (int64_t i = 0; i < n; i++) {
      fputs("    ", f);
      print_block(f, lit, 1, i * sub, sub);
      fputc('\n', f);
    }
  }
  free(line);
}

/* Exact min and max for integers (the mean is approximate, as a double). */
static void print_int_stats(FILE *f, cxla_literal *leaf, int64_t n) {
  double sum = 0;
  if (is_signed(cxla_literal_type(leaf))) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
      int64_t v = get_signed(leaf, i);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += (double)v;
    }
    fprintf(f, "; min %lld, max %lld", (long long)lo, (long long)hi);
  } else {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = get_unsigned(leaf, i);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += (double)v;
    }
    fprintf(f, "; min %llu, max %llu", (unsigned long long)lo, (unsigned long long)hi);
  }
  fprintf(f, ", mean %.6g\n", sum / (double)n);
}

void cli_print_leaf(FILE *f, int index, cxla_literal *leaf) {
  cxla_type t = cxla_literal_type(leaf);
  if (t == CXLA_TOKEN) { /* orders side effects; no value */
    fprintf(f, "[%d] token[]\n", index);
    return;
  }
  int64_t n = cxla_literal_element_count(leaf);
  cxla_shape s = {t, cxla_literal_rank(leaf), cxla_literal_dims(leaf), 0, NULL};
  char buf[512];
  fprintf(f, "[%d] %s", index, cli_shape_str(&s, buf, sizeof buf));
  if (n <= SMALL) {
    print_small(f, leaf);
    return;
  }
  fprintf(f, " (%lld values) first %d: ", (long long)n, HEAD);
  for (int64_t i = 0; i < HEAD; i++) {
    if (i) fputs(", ", f);
    print_value(f, leaf, i);
  }
  if (is_signed(t) || is_unsigned(t)) {
    print_int_stats(f, leaf, n);
    return;
  }
  if (is_complex(t)) { /* the largest modulus and the mean */
    double big = 0, re = 0, im = 0;
    for (int64_t i = 0; i < n; i++) {
      double a = hypot(part(leaf, i, 0), part(leaf, i, 1));
      big = a > big || isnan(a) ? a : big;
      re += part(leaf, i, 0), im += part(leaf, i, 1);
    }
    fprintf(f, "; max |z| %.6g, mean (%.6g, %.6g)\n", big, re / (double)n, im / (double)n);
    return;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = cxla_literal_get_f64(leaf, i);
    if (isnan(v)) { nans++; continue; }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    sum += v;
  }
  if (nans == n) fprintf(f, "; all nan\n");
  else fprintf(f, "; min %.6g, max %.6g, mean %.6g%s\n", lo, hi, sum / (double)(n - nans), nans ? " (ignoring nan)" : "");
  if (nans && nans != n) fprintf(f, "    %lld nan values\n", (long long)nans);
}
