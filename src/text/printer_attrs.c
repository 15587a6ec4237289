/* printer_attrs.c — the pieces of an instruction in HLO text: integers, computation references,
 * attributes and constant values. Each op's keys and their order
 * (XLA's printer's) are text/attr_keys.c's table; attributes at their default value are left
 * out where XLA leaves them out (show=IF_SET in ir/attrs.def). */
#include <math.h>
#include <string.h>
#include "ir/conv_dims.h"
#include "ir/groups.h"
#include "text/attr_keys.h"
#include "text/printer_int.h"

void cx_print_int(cx_sb *sb, int64_t v) {
  char buf[24];
  size_t n = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    buf[sizeof buf - 1 - n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) buf[sizeof buf - 1 - n++] = '-';
  cx_sb_putn(sb, buf + sizeof buf - n, n);
}

void cx_print_comp_ref(cx_sb *sb, const cx_comp *c, const cx_print_opts *o) {
  if (o->percent) cx_sb_putc(sb, '%');
  cx_sb_puts(sb, c ? c->name : "?");
}


static void put_ints(cx_sb *sb, const cx_ints *v) {
  cx_sb_putc(sb, '{');
  for (int i = 0; i < v->n; i++) {
    if (i) cx_sb_putc(sb, ',');
    cx_print_int(sb, v->v[i]);
  }
  cx_sb_putc(sb, '}');
}

static void put_key(cx_sb *sb, const char *key) {
  cx_sb_putn(sb, ", ", 2);
  cx_sb_puts(sb, key);
  cx_sb_putc(sb, '=');
}

static void put_string(cx_sb *sb, const char *s) {
  cx_sb_putc(sb, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') cx_sb_printf(sb, "\\%c", c);
    else if (c == '\n') cx_sb_puts(sb, "\\n");
    else if (c == '\t') cx_sb_puts(sb, "\\t");
    else if (c < 0x20 || c == 0x7f) cx_sb_printf(sb, "\\%03o", c);
    else cx_sb_putc(sb, (char)c);
  }
  cx_sb_putc(sb, '"');
}

/* One window field as "3x3" / "1_1x0_2"; `which` picks the field. */
static void window_field(cx_sb *sb, const cx_window *w, int which) {
  for (int i = 0; i < w->rank; i++) {
    const cx_window_dim *d = &w->d[i];
    if (i) cx_sb_putc(sb, 'x');
    switch (which) {
    case 0: cx_sb_printf(sb, "%lld", (long long)d->size); break;
    case 1: cx_sb_printf(sb, "%lld", (long long)d->stride); break;
    case 2: cx_sb_printf(sb, "%lld_%lld", (long long)d->pad_lo, (long long)d->pad_hi); break;
    case 3: cx_sb_printf(sb, "%lld", (long long)d->lhs_dilate); break;
    case 4: cx_sb_printf(sb, "%lld", (long long)d->rhs_dilate); break;
    default: cx_sb_printf(sb, "%d", d->reversal); break;
    }
  }
}

static void print_window(cx_sb *sb, const cx_window *w) {
  static const char *const names[6] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  int used[6] = {1, 0, 0, 0, 0, 0};
  for (int i = 0; i < w->rank; i++) {
    const cx_window_dim *d = &w->d[i];
    used[1] |= d->stride != 1;
    used[2] |= d->pad_lo != 0 || d->pad_hi != 0;
    used[3] |= d->lhs_dilate != 1;
    used[4] |= d->rhs_dilate != 1;
    used[5] |= d->reversal != 0;
  }
  cx_sb_putc(sb, '{');
  for (int k = 0, first = 1; k < 6; k++) {
    if (!used[k]) continue;
    cx_sb_printf(sb, "%s%s=", first ? "" : " ", names[k]);
    window_field(sb, w, k);
    first = 0;
  }
  cx_sb_putc(sb, '}');
}

static void print_padding(cx_sb *sb, const cx_ints *const *f) {
  const cx_ints *lo = f[0], *hi = f[1], *in = f[2];
  int interior = 0;
  for (int i = 0; i < in->n; i++) interior |= in->v[i] != 0;
  for (int i = 0; i < lo->n && i < hi->n; i++) {
    if (i) cx_sb_putc(sb, 'x');
    cx_sb_printf(sb, "%lld_%lld", (long long)lo->v[i], (long long)hi->v[i]);
    if (interior) cx_sb_printf(sb, "_%lld", (long long)(i < in->n ? in->v[i] : 0));
  }
}

static void print_slice(cx_sb *sb, const cx_ints *const *f) {
  const cx_ints *start = f[0], *limit = f[1], *stride = f[2];
  int strided = 0, n = start->n < limit->n ? start->n : limit->n;
  for (int i = 0; i < stride->n; i++) strided |= stride->v[i] != 1;
  cx_sb_putc(sb, '{');
  for (int i = 0; i < n; i++) {
    cx_sb_printf(sb, "%s[%lld:%lld", i ? ", " : "", (long long)start->v[i], (long long)limit->v[i]);
    if (strided) cx_sb_printf(sb, ":%lld", (long long)(i < stride->n ? stride->v[i] : 1));
    cx_sb_putc(sb, ']');
  }
  cx_sb_putc(sb, '}');
}

/* Whether key k (show=IF_SET) has something to write: XLA leaves out empty lists, values at
 * their default and absent windows, labels and strings. */
static int is_set(const cx_attrs *a, cx_attr_key_id k) {
  const cx_attr_key *key = &cx_attr_keys[k];
  const void *f = cx_attr_cptr(a, key->field);
  switch (key->syntax) {
  case CX_SYN_INTS: case CX_SYN_SLICE: case CX_SYN_PADDING: return ((const cx_ints *)f)->n > 0;
  case CX_SYN_I64: case CX_SYN_I32: case CX_SYN_F32: case CX_SYN_BOOL:
    return cx_attr_get_pod(a, key->field) != cx_attr_fields[key->field].dflt;
  case CX_SYN_ENUM: {
    const cx_attr_enum *e = cx_attr_key_enum(k);
    int64_t v = cx_attr_get_pod(a, key->field);
    return v != cx_attr_fields[key->field].dflt && v >= e->base && v < e->base + e->n;
  }
  case CX_SYN_WINDOW: return ((const cx_window *)f)->rank > 0 && ((const cx_window *)f)->d;
  case CX_SYN_DIM_LABELS: return *(cx_conv_dims *const *)f != NULL;
  case CX_SYN_WORD: case CX_SYN_STRING: case CX_SYN_VERBATIM: return *(const char *const *)f != NULL;
  case CX_SYN_COMP: case CX_SYN_BRANCHES: return 1;
  case CX_SYN_GROUPS: return *(cx_groups *const *)f != NULL;
  }
  return 1;
}

/* {{0,1},{2,3}}, {} for none, or the iota form they were written in ([2,2]<=[2,2]T(1,0)). */
static void print_groups(cx_sb *sb, const cx_groups *g) {
  if (g && g->ndims) {
    cx_sb_printf(sb, "[%d,%lld]<=[", g->n, (long long)(g->n ? cx_groups_size(g, 0) : 0));
    for (int i = 0; i < g->ndims; i++) cx_sb_printf(sb, "%s%lld", i ? "," : "", (long long)g->dims[i]);
    cx_sb_putc(sb, ']');
    if (g->ndims > 1) {
      cx_sb_puts(sb, "T(");
      for (int i = 0; i < g->ndims; i++) cx_sb_printf(sb, "%s%d", i ? "," : "", g->perm[i]);
      cx_sb_putc(sb, ')');
    }
    return;
  }
  cx_sb_putc(sb, '{');
  for (int k = 0; g && k < g->n; k++) {
    if (k) cx_sb_putc(sb, ',');
    cx_sb_putc(sb, '{');
    for (int64_t i = g->start[k]; i < g->start[k + 1]; i++) {
      if (i > g->start[k]) cx_sb_putc(sb, ',');
      cx_print_int(sb, g->ids[i]);
    }
    cx_sb_putc(sb, '}');
  }
  cx_sb_putc(sb, '}');
}

/* ", key=value" for modelled attribute k. */
static void print_key(cx_sb *sb, const cx_attrs *a, cx_attr_key_id k) {
  const cx_attr_key *key = &cx_attr_keys[k];
  if (key->show == CX_SHOW_IF_SET && !is_set(a, k)) return;
  const void *f = cx_attr_cptr(a, key->field);
  put_key(sb, key->name);
  switch (key->syntax) {
  case CX_SYN_INTS: put_ints(sb, f); break;
  case CX_SYN_I64: case CX_SYN_I32: cx_print_int(sb, cx_attr_get_pod(a, key->field)); break;
  case CX_SYN_F32: {
    int32_t bits = (int32_t)cx_attr_get_pod(a, key->field);
    float v;
    memcpy(&v, &bits, sizeof v);
    cx_sb_put_double(sb, v, 1);
    break;
  }
  case CX_SYN_BOOL: cx_sb_puts(sb, cx_attr_get_pod(a, key->field) ? "true" : "false"); break;
  case CX_SYN_ENUM: {
    const cx_attr_enum *e = cx_attr_key_enum(k);
    int64_t v = cx_attr_get_pod(a, key->field) - e->base;
    cx_sb_puts(sb, v >= 0 && v < e->n ? e->names[v] : "?");
    break;
  }
  case CX_SYN_SLICE: case CX_SYN_PADDING: {
    const cx_ints *three[3];
    for (int i = 0; i < 3; i++) three[i] = cx_attr_cptr(a, (cx_attr_id)(key->field + i));
    if (key->syntax == CX_SYN_SLICE) print_slice(sb, three);
    else print_padding(sb, three);
    break;
  }
  case CX_SYN_WINDOW: print_window(sb, f); break;
  case CX_SYN_DIM_LABELS: cx_print_dim_labels(sb, *(cx_conv_dims *const *)f); break;
  case CX_SYN_WORD: cx_sb_puts(sb, *(const char *const *)f); break;
  case CX_SYN_STRING: put_string(sb, *(const char *const *)f); break;
  case CX_SYN_VERBATIM: cx_sb_puts(sb, *(const char *const *)f); break;
  case CX_SYN_GROUPS: print_groups(sb, *(cx_groups *const *)f); break;
  case CX_SYN_COMP: case CX_SYN_BRANCHES: break; /* print_called */
  }
}

static void key_comp(cx_sb *sb, const char *key, const cx_instr *in, int i, const cx_print_opts *o) {
  if (i >= in->ncalled) return;
  put_key(sb, key);
  cx_print_comp_ref(sb, in->called[i], o);
}

static void print_branches(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  cx_sb_puts(sb, ", branch_computations={");
  for (int i = 0; i < in->ncalled; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_print_comp_ref(sb, in->called[i], o);
  }
  cx_sb_putc(sb, '}');
}

/* Called computations by their keys, in called[] order. A conditional with a pred operand and
 * two branches is written in XLA's pair form (true_computation=, false_computation=). */
static void print_called(cx_sb *sb, const cx_instr *in, const cx_op_key *keys, int nkeys, const cx_print_opts *o) {
  if (!in->ncalled) return;
  int slot = 0, branches = 0;
  for (int i = 0; i < nkeys; i++) branches |= cx_attr_keys[keys[i].key].syntax == CX_SYN_BRANCHES;
  if (branches && !(in->ncalled == 2 && in->nops && in->ops[0]->shape.type == CXLA_PRED)) {
    print_branches(sb, in, o);
    return;
  }
  for (int i = 0; i < nkeys; i++)
    if (cx_attr_keys[keys[i].key].syntax == CX_SYN_COMP) key_comp(sb, cx_attr_keys[keys[i].key].name, in, slot++, o);
  if (!slot) key_comp(sb, "to_apply", in, 0, o); /* an op whose text names none: XLA's usual key */
}

void cx_print_attrs(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  cx_op_key keys[CX_OP_MAX_KEYS];
  int n = cx_op_attr_keys(in->op, keys);
  for (int i = 0; i < n; i++)
    if (cx_attr_keys[keys[i].key].field != CX_ATTR_NONE) print_key(sb, &in->a, keys[i].key);
  print_called(sb, in, keys, n, o);
  if (!o->metadata) return;
  for (int i = 0; i < in->a.nraw; i++) {
    put_key(sb, in->a.raw[i].key);
    cx_sb_puts(sb, in->a.raw[i].value);
  }
}

/* ---- constant values ---- */

static void put_elem(cx_sb *sb, const cxla_literal *lit, int64_t i) {
  cxla_type t = lit->shape.type;
  if (cx_type_is_float(t)) {
    double v = cx_load_f64(t, lit->data, i);
    if (isnan(v)) cx_sb_puts(sb, signbit(v) ? "-nan" : "nan");
    else cx_sb_put_double(sb, v, t != CXLA_F64);
    return;
  }
  cx_literal_print_elem(sb, lit, i);
}

/* Rank-1 arrays print as "{1, 2}", higher ranks with inner spaces "{ { 1, 2 }, { 3, 4 } }"
 * as XLA does. */
static void put_dims(cx_sb *sb, const cxla_literal *lit, int d, int64_t *pos) {
  const cx_shape *s = &lit->shape;
  int spaced = s->rank > 1 && s->dims[d] > 0;
  cx_sb_puts(sb, spaced ? "{ " : "{");
  for (int64_t i = 0; i < s->dims[d]; i++) {
    if (i) cx_sb_puts(sb, ", ");
    if (d + 1 == s->rank) put_elem(sb, lit, (*pos)++);
    else put_dims(sb, lit, d + 1, pos);
    if (sb->oom) return;
  }
  cx_sb_puts(sb, spaced ? " }" : "}");
}

/* An array literal's value: "42", "{1, 2}", "{ { 1, 2 }, { 3, 4 } }". */
static void put_array_value(cx_sb *sb, const cxla_literal *lit) {
  if (lit->shape.rank == 0) {
    put_elem(sb, lit, 0);
    return;
  }
  int64_t pos = 0;
  put_dims(sb, lit, 0, &pos);
}

/* An array literal's bytes in hex: "0x0000803f". */
static void put_array_bytes(cx_sb *sb, const cxla_literal *lit) {
  static const char hex[] = "0123456789abcdef";
  const uint8_t *b = lit->data;
  int64_t n = cx_shape_bytes(&lit->shape);
  char buf[1024];
  size_t k = 0;
  cx_sb_puts(sb, "0x");
  for (int64_t i = 0; i < n; i++) {
    buf[k++] = hex[b[i] >> 4];
    buf[k++] = hex[b[i] & 15];
    if (k == sizeof buf) {
      cx_sb_putn(sb, buf, k);
      k = 0;
    }
  }
  cx_sb_putn(sb, buf, k);
}

/* A literal with put_array for each array leaf, tuples as "(a, b)". */
static void put_literal(cx_sb *sb, const cxla_literal *lit, void (*put_array)(cx_sb *, const cxla_literal *)) {
  if (lit->shape.type != CXLA_TUPLE) {
    put_array(sb, lit);
    return;
  }
  cx_sb_putc(sb, '(');
  for (int i = 0; i < lit->nelems; i++) {
    if (i) cx_sb_puts(sb, ", ");
    put_literal(sb, lit->elems[i], put_array);
  }
  cx_sb_putc(sb, ')');
}

void cx_print_literal_value(cx_sb *sb, const cxla_literal *lit) { put_literal(sb, lit, put_array_value); }

void cx_print_literal_bytes(cx_sb *sb, const cxla_literal *lit) { put_literal(sb, lit, put_array_bytes); }
