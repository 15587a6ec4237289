/* shape.c — shape construction, comparison and printing. */
#include <stdio.h>
#include <string.h>
#include "ir/shape.h"

cx_shape cx_shape_array(cxla_type type, int rank, const int64_t *dims) {
  cx_shape s;
  memset(&s, 0, sizeof s);
  s.type = type;
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

cx_shape cx_shape_scalar(cxla_type type) { return cx_shape_array(type, 0, NULL); }

int cx_shape_is_tuple(const cx_shape *s) { return s->type == CXLA_TUPLE; }

int64_t cx_shape_elems(const cx_shape *s) {
  if (s->type == CXLA_TUPLE) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return -1;
    if (s->dims[i] && n > ((int64_t)1 << 62) / s->dims[i]) return -1;
    n *= s->dims[i];
  }
  return n;
}

int64_t cx_shape_bytes(const cx_shape *s) {
  int64_t n = cx_shape_elems(s);
  size_t sz = cxla_type_size(s->type);
  if (n < 0 || (sz && n > ((int64_t)1 << 62) / (int64_t)sz)) return -1;
  return n * (int64_t)sz;
}

int64_t cx_shape_leaves_bytes(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) {
    int64_t b = cx_type_is_array(s->type) ? cx_shape_bytes(s) : 0;
    return b > 0 ? b : 0;
  }
  int64_t n = 0;
  for (int i = 0; i < s->ntuple; i++) {
    int64_t b = cx_shape_leaves_bytes(&s->tuple[i]);
    n = b > INT64_MAX - n ? INT64_MAX : n + b;
  }
  return n;
}

int cx_shape_same_dims(const cx_shape *a, const cx_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

int cx_shape_equal(const cx_shape *a, const cx_shape *b) {
  if (a->type != b->type) return 0;
  if (a->type == CXLA_TUPLE) {
    if (a->ntuple != b->ntuple) return 0;
    for (int i = 0; i < a->ntuple; i++)
      if (!cx_shape_equal(&a->tuple[i], &b->tuple[i])) return 0;
    return 1;
  }
  return cx_shape_same_dims(a, b);
}

void cx_shape_strides(const cx_shape *s, int64_t *strides) {
  int64_t st = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = st;
    st *= s->dims[i];
  }
}

int cx_shape_has_default_layout(const cx_shape *s) {
  if (!s->has_layout) return 1;
  for (int i = 0; i < s->rank; i++)
    if (s->minor_to_major[i] != s->rank - 1 - i) return 0;
  return s->layout_extra == NULL;
}

static int same_text(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

int cx_shape_same_layout(const cx_shape *a, const cx_shape *b) {
  if (a->type == CXLA_TUPLE || b->type == CXLA_TUPLE) {
    if (a->type != b->type || a->ntuple != b->ntuple) return 0;
    for (int i = 0; i < a->ntuple; i++)
      if (!cx_shape_same_layout(&a->tuple[i], &b->tuple[i])) return 0;
    return 1;
  }
  if (!same_text(a->layout_extra, b->layout_extra)) return 0;
  if (cx_shape_has_default_layout(a) && cx_shape_has_default_layout(b)) return 1;
  return a->has_layout && b->has_layout && a->rank == b->rank &&
         !memcmp(a->minor_to_major, b->minor_to_major, (size_t)a->rank);
}

int cx_shape_moves_bytes(const cx_shape *s) {
  return s->layout_extra && (strchr(s->layout_extra, 'T') || strchr(s->layout_extra, 'E'));
}

/* How many minor-most dimensions the first tile of a layout suffix covers: "T(8,128)" 2. */
static int tile_rank(const char *extra) {
  const char *t = extra ? strstr(extra, "T(") : NULL;
  if (!t) return 0;
  int k = 1;
  for (t += 2; *t && *t != ')'; t++) k += *t == ',';
  return k;
}

int cx_bitcast_tiles_stay(const cx_shape *x, const cx_shape *r) {
  if (x->type == r->type && cx_type_is_array(x->type) && cx_shape_elems(x) == 1 && cx_shape_elems(r) == 1)
    return 1; /* one element, in one place */
  if (x->type != r->type || !cx_type_is_array(x->type) || !x->layout_extra || !same_text(x->layout_extra, r->layout_extra) ||
      strstr(x->layout_extra, "E("))
    return 0;
  int k = tile_rank(x->layout_extra);
  if (k > x->rank || k > r->rank) return 0;
  int64_t xp[CXLA_MAX_RANK], rp[CXLA_MAX_RANK];
  cx_shape_major_to_minor(x, xp);
  cx_shape_major_to_minor(r, rp);
  for (int j = 1; j <= k; j++) /* the tiled dimensions */
    if (x->dims[xp[x->rank - j]] != r->dims[rp[r->rank - j]]) return 0;
  int i = 0, j = 0; /* the others, size-1 dimensions aside */
  for (;;) {
    while (i < x->rank - k && x->dims[xp[i]] == 1) i++;
    while (j < r->rank - k && r->dims[rp[j]] == 1) j++;
    if (i == x->rank - k || j == r->rank - k) return i == x->rank - k && j == r->rank - k;
    if (x->dims[xp[i++]] != r->dims[rp[j++]]) return 0;
  }
}

void cx_shape_set_default_layout(cx_shape *s) {
  s->has_layout = 1;
  for (int i = 0; i < s->rank; i++) s->minor_to_major[i] = (int8_t)(s->rank - 1 - i);
}

void cx_shape_print(cx_sb *sb, const cx_shape *s, int with_layout) {
  if (s->type == CXLA_TUPLE) {
    cx_sb_putc(sb, '(');
    for (int i = 0; i < s->ntuple; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_shape_print(sb, &s->tuple[i], with_layout);
    }
    cx_sb_putc(sb, ')');
    return;
  }
  if (s->type == CXLA_TOKEN) { cx_sb_puts(sb, "token[]"); return; }
  const char *n = cxla_type_name(s->type);
  cx_sb_puts(sb, n ? n : "invalid");
  cx_sb_putc(sb, '[');
  for (int i = 0; i < s->rank; i++) {
    if (i) cx_sb_putc(sb, ',');
    if (s->dynamic & (1u << i)) cx_sb_puts(sb, "<=");
    cx_sb_printf(sb, "%lld", (long long)s->dims[i]);
  }
  cx_sb_putc(sb, ']');
  if (with_layout && s->has_layout) {
    cx_sb_putc(sb, '{');
    for (int i = 0; i < s->rank; i++) cx_sb_printf(sb, "%s%d", i ? "," : "", s->minor_to_major[i]);
    if (s->layout_extra) cx_sb_printf(sb, ":%s", s->layout_extra);
    cx_sb_putc(sb, '}');
  }
}

const char *cx_shape_str(const cx_shape *s, char *buf, size_t n) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_shape_print(&sb, s, 0);
  snprintf(buf, n, "%s", sb.buf ? sb.buf : "?");
  cx_sb_free(&sb);
  return buf;
}

static void *alloc_in(cx_arena *arena, size_t n) {
  return arena ? cx_arena_alloc(arena, n) : cx_calloc(1, n);
}

int cx_shape_copy(cx_shape *dst, const cx_shape *src, cx_arena *arena) {
  cx_shape tmp = *src;
  if (src->type == CXLA_TUPLE && src->ntuple) {
    tmp.tuple = alloc_in(arena, sizeof(cx_shape) * (size_t)src->ntuple);
    if (!tmp.tuple) return 0;
    for (int i = 0; i < src->ntuple; i++) {
      if (!cx_shape_copy(&tmp.tuple[i], &src->tuple[i], arena)) {
        if (!arena) {
          for (int j = 0; j < i; j++) cx_shape_free_heap(&tmp.tuple[j]);
          cx_free(tmp.tuple);
        }
        return 0;
      }
    }
  } else {
    tmp.tuple = NULL;
  }
  /* layout_extra is only meaningful inside a module arena; heap copies drop it. */
  if (!arena) tmp.layout_extra = NULL;
  *dst = tmp;
  return 1;
}

void cx_shape_free_heap(cx_shape *s) {
  if (s->type == CXLA_TUPLE) {
    for (int i = 0; i < s->ntuple; i++) cx_shape_free_heap(&s->tuple[i]);
    cx_free(s->tuple);
    s->tuple = NULL;
    s->ntuple = 0;
  }
}

int cx_shape_from_public(cx_shape *dst, const cxla_shape *src, cx_arena *arena) {
  memset(dst, 0, sizeof *dst);
  dst->type = src->type;
  if (src->type == CXLA_TUPLE) {
    if (src->ntuple < 0) return 0;
    dst->ntuple = src->ntuple;
    if (src->ntuple) {
      dst->tuple = alloc_in(arena, sizeof(cx_shape) * (size_t)src->ntuple);
      if (!dst->tuple) return 0;
      for (int i = 0; i < src->ntuple; i++)
        if (!cx_shape_from_public(&dst->tuple[i], &src->elems[i], arena)) return 0;
    }
    return 1;
  }
  if (src->rank < 0 || src->rank > CXLA_MAX_RANK || (src->rank && !src->dims)) return 0;
  dst->rank = src->rank;
  for (int i = 0; i < src->rank; i++) dst->dims[i] = src->dims[i];
  return 1;
}

void cx_shape_to_public(const cx_shape *s, cxla_shape *out, cx_arena *arena) {
  memset(out, 0, sizeof *out);
  out->type = s->type;
  out->rank = s->rank;
  out->dims = s->dims;
  if (s->type == CXLA_TUPLE) {
    out->ntuple = s->ntuple;
    cxla_shape *el = s->ntuple && arena ? cx_arena_alloc(arena, sizeof *el * (size_t)s->ntuple) : NULL;
    for (int i = 0; el && i < s->ntuple; i++) cx_shape_to_public(&s->tuple[i], &el[i], arena);
    out->elems = el;
    if (!el) out->ntuple = 0;
  }
}

void cx_shape_major_to_minor(const cx_shape *s, int64_t *p) {
  for (int j = 0; j < s->rank; j++) p[j] = s->has_layout ? s->minor_to_major[s->rank - 1 - j] : j;
}

int cx_shape_is_dynamic(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return s->dynamic != 0;
  for (int i = 0; i < s->ntuple; i++)
    if (cx_shape_is_dynamic(&s->tuple[i])) return 1;
  return 0;
}

/* ---- tuple leaves (DFS order; tokens hold no data) ---- */

int cx_shape_leaf_count(const cx_shape *s) {
  if (s->type == CXLA_TUPLE) {
    int n = 0;
    for (int i = 0; i < s->ntuple; i++) n += cx_shape_leaf_count(&s->tuple[i]);
    return n;
  }
  return cx_type_is_array(s->type) ? 1 : 0; /* tokens hold no data */
}

static const cx_shape *leaf_rec(const cx_shape *s, int *i) {
  if (s->type != CXLA_TUPLE) {
    if (!cx_type_is_array(s->type)) return NULL;
    return (*i)-- == 0 ? s : NULL;
  }
  for (int k = 0; k < s->ntuple; k++) {
    const cx_shape *r = leaf_rec(&s->tuple[k], i);
    if (r) return r;
  }
  return NULL;
}

const cx_shape *cx_shape_leaf(const cx_shape *s, int i) { return i < 0 ? NULL : leaf_rec(s, &i); }

int cx_shape_leaf_offset(const cx_shape *s, int index) {
  int n = 0;
  for (int k = 0; k < index && k < s->ntuple; k++) n += cx_shape_leaf_count(&s->tuple[k]);
  return n;
}
