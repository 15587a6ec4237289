/* printer_attrs.c — attributes and constant values in HLO text. The order per op follows
 * XLA's printer; attributes at their default value are left out where XLA leaves them out. */
#include <math.h>
#include <string.h>
#include "ir/conv_dims.h"
#include "text/printer_int.h"

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

static void key_ints(cx_sb *sb, const char *key, const cx_ints *v) {
  put_key(sb, key);
  put_ints(sb, v);
}

static void key_ints_nonempty(cx_sb *sb, const char *key, const cx_ints *v) {
  if (v->n) key_ints(sb, key, v);
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
  if (w->rank <= 0 || !w->d) return;
  int used[6] = {1, 0, 0, 0, 0, 0};
  for (int i = 0; i < w->rank; i++) {
    const cx_window_dim *d = &w->d[i];
    used[1] |= d->stride != 1;
    used[2] |= d->pad_lo != 0 || d->pad_hi != 0;
    used[3] |= d->lhs_dilate != 1;
    used[4] |= d->rhs_dilate != 1;
    used[5] |= d->reversal != 0;
  }
  cx_sb_puts(sb, ", window={");
  for (int k = 0, first = 1; k < 6; k++) {
    if (!used[k]) continue;
    cx_sb_printf(sb, "%s%s=", first ? "" : " ", names[k]);
    window_field(sb, w, k);
    first = 0;
  }
  cx_sb_putc(sb, '}');
}

static void print_padding(cx_sb *sb, const cx_attrs *a) {
  int interior = 0;
  for (int i = 0; i < a->pad_interior.n; i++) interior |= a->pad_interior.v[i] != 0;
  cx_sb_puts(sb, ", padding=");
  for (int i = 0; i < a->pad_lo.n && i < a->pad_hi.n; i++) {
    if (i) cx_sb_putc(sb, 'x');
    cx_sb_printf(sb, "%lld_%lld", (long long)a->pad_lo.v[i], (long long)a->pad_hi.v[i]);
    if (interior) cx_sb_printf(sb, "_%lld", (long long)(i < a->pad_interior.n ? a->pad_interior.v[i] : 0));
  }
}

static void print_slice(cx_sb *sb, const cx_attrs *a) {
  int strided = 0, n = a->slice_start.n;
  if (a->slice_limit.n < n) n = a->slice_limit.n;
  for (int i = 0; i < a->slice_stride.n; i++) strided |= a->slice_stride.v[i] != 1;
  cx_sb_puts(sb, ", slice={");
  for (int i = 0; i < n; i++) {
    cx_sb_printf(sb, "%s[%lld:%lld", i ? ", " : "", (long long)a->slice_start.v[i], (long long)a->slice_limit.v[i]);
    if (strided) cx_sb_printf(sb, ":%lld", (long long)(i < a->slice_stride.n ? a->slice_stride.v[i] : 1));
    cx_sb_putc(sb, ']');
  }
  cx_sb_putc(sb, '}');
}

static void print_gather(cx_sb *sb, const cx_gather_dims *g) {
  key_ints(sb, "offset_dims", &g->offset_dims);
  key_ints(sb, "collapsed_slice_dims", &g->collapsed_slice_dims);
  key_ints(sb, "start_index_map", &g->start_index_map);
  key_ints_nonempty(sb, "operand_batching_dims", &g->operand_batching_dims);
  key_ints_nonempty(sb, "start_indices_batching_dims", &g->start_indices_batching_dims);
  cx_sb_printf(sb, ", index_vector_dim=%lld", (long long)g->index_vector_dim);
  key_ints(sb, "slice_sizes", &g->slice_sizes);
  if (g->indices_are_sorted) cx_sb_puts(sb, ", indices_are_sorted=true");
}

static void print_scatter(cx_sb *sb, const cx_scatter_dims *s) {
  key_ints(sb, "update_window_dims", &s->update_window_dims);
  key_ints(sb, "inserted_window_dims", &s->inserted_window_dims);
  key_ints(sb, "scatter_dims_to_operand_dims", &s->scatter_dims_to_operand_dims);
  key_ints_nonempty(sb, "input_batching_dims", &s->input_batching_dims);
  key_ints_nonempty(sb, "scatter_indices_batching_dims", &s->scatter_indices_batching_dims);
  cx_sb_printf(sb, ", index_vector_dim=%lld", (long long)s->index_vector_dim);
  if (s->indices_are_sorted) cx_sb_puts(sb, ", indices_are_sorted=true");
  if (s->unique_indices) cx_sb_puts(sb, ", unique_indices=true");
}

/* Attributes the IR models, before called computations. */
static void print_modelled(cx_sb *sb, const cx_instr *in) {
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  static const char *const types[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  const cx_attrs *a = &in->a;
  switch (in->op) {
  case CX_OP_BROADCAST: case CX_OP_TRANSPOSE: case CX_OP_REVERSE: case CX_OP_CONCATENATE: case CX_OP_REDUCE:
    key_ints(sb, "dimensions", &a->dims);
    break;
  case CX_OP_MAP: key_ints_nonempty(sb, "dimensions", &a->dims); break;
  case CX_OP_SORT:
    key_ints(sb, "dimensions", &a->dims);
    if (a->is_stable) cx_sb_puts(sb, ", is_stable=true");
    break;
  case CX_OP_GET_TUPLE_ELEMENT: cx_sb_printf(sb, ", index=%lld", (long long)a->index); break;
  case CX_OP_IOTA: cx_sb_printf(sb, ", iota_dimension=%lld", (long long)a->index); break;
  case CX_OP_COMPARE:
    cx_sb_printf(sb, ", direction=%s", (unsigned)a->dir < 6 ? dirs[a->dir] : "?");
    if (a->cmp_type > CX_CMP_DEFAULT && a->cmp_type <= CX_CMP_UNSIGNED) cx_sb_printf(sb, ", type=%s", types[a->cmp_type]);
    break;
  case CX_OP_SLICE: print_slice(sb, a); break;
  case CX_OP_PAD: print_padding(sb, a); break;
  case CX_OP_DYNAMIC_SLICE: key_ints(sb, "dynamic_slice_sizes", &a->dims); break;
  case CX_OP_DOT:
    key_ints_nonempty(sb, "lhs_batch_dims", &a->dot.lhs_batch);
    key_ints(sb, "lhs_contracting_dims", &a->dot.lhs_contract);
    key_ints_nonempty(sb, "rhs_batch_dims", &a->dot.rhs_batch);
    key_ints(sb, "rhs_contracting_dims", &a->dot.rhs_contract);
    break;
  case CX_OP_CONVOLUTION:
    print_window(sb, &a->window);
    if (a->conv) {
      cx_sb_puts(sb, ", dim_labels=");
      cx_print_dim_labels(sb, a->conv);
    }
    if (a->feature_group_count != 1) cx_sb_printf(sb, ", feature_group_count=%lld", (long long)a->feature_group_count);
    if (a->batch_group_count != 1) cx_sb_printf(sb, ", batch_group_count=%lld", (long long)a->batch_group_count);
    break;
  case CX_OP_REDUCE_WINDOW: case CX_OP_SELECT_AND_SCATTER: print_window(sb, &a->window); break;
  case CX_OP_GATHER: print_gather(sb, &a->gather); break;
  case CX_OP_SCATTER: print_scatter(sb, &a->scatter); break;
  case CX_OP_REDUCE_PRECISION:
    cx_sb_printf(sb, ", exponent_bits=%d, mantissa_bits=%d", a->exponent_bits, a->mantissa_bits);
    break;
  case CX_OP_FUSION:
    if (a->fusion_kind) cx_sb_printf(sb, ", kind=%s", a->fusion_kind);
    break;
  case CX_OP_CUSTOM_CALL:
    if (a->custom_call_target) {
      cx_sb_puts(sb, ", custom_call_target=");
      put_string(sb, a->custom_call_target);
    }
    break;
  default: break;
  }
}

static void key_comp(cx_sb *sb, const char *key, const cx_instr *in, int i, const cx_print_opts *o) {
  if (i >= in->ncalled) return;
  put_key(sb, key);
  cx_print_comp_ref(sb, in->called[i], o);
}

static void print_called(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  if (!in->ncalled) return;
  switch (in->op) {
  case CX_OP_WHILE: key_comp(sb, "condition", in, 0, o); key_comp(sb, "body", in, 1, o); break;
  case CX_OP_SELECT_AND_SCATTER: key_comp(sb, "select", in, 0, o); key_comp(sb, "scatter", in, 1, o); break;
  case CX_OP_FUSION: case CX_OP_ASYNC_START: case CX_OP_ASYNC_UPDATE: case CX_OP_ASYNC_DONE:
    key_comp(sb, "calls", in, 0, o);
    break;
  case CX_OP_CONDITIONAL:
    if (in->ncalled == 2 && in->nops && in->ops[0]->shape.type == CXLA_PRED) {
      key_comp(sb, "true_computation", in, 0, o);
      key_comp(sb, "false_computation", in, 1, o);
    } else {
      cx_sb_puts(sb, ", branch_computations={");
      for (int i = 0; i < in->ncalled; i++) {
        if (i) cx_sb_puts(sb, ", ");
        cx_print_comp_ref(sb, in->called[i], o);
      }
      cx_sb_putc(sb, '}');
    }
    break;
  default: key_comp(sb, "to_apply", in, 0, o); break;
  }
}

void cx_print_attrs(cx_sb *sb, const cx_instr *in, const cx_print_opts *o) {
  print_modelled(sb, in);
  print_called(sb, in, o);
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

void cx_print_literal_value(cx_sb *sb, const cxla_literal *lit) {
  if (lit->shape.type == CXLA_TUPLE) {
    cx_sb_putc(sb, '(');
    for (int i = 0; i < lit->nelems; i++) {
      if (i) cx_sb_puts(sb, ", ");
      cx_print_literal_value(sb, lit->elems[i]);
    }
    cx_sb_putc(sb, ')');
    return;
  }
  if (lit->shape.rank == 0) {
    put_elem(sb, lit, 0);
    return;
  }
  int64_t pos = 0;
  put_dims(sb, lit, 0, &pos);
}
