/* infer_util.c — helpers shared by the shape-inference rules: messages, shape well-formedness,
 * dimension lists, called-computation signatures, result types of dot/convolution, windows. */
#include <stdio.h>
#include <string.h>
#include "ir/infer.h"

cxla_status cx_vfail(cx_infer *ic, const char *fmt, ...) {
  char msg[1500];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cx_instr *in = ic->in;
  if (in->name)
    return cx_error_at(ic->m, in->loc, CXLA_ERR_VERIFY, "%s %s: %s", cx_op_name(in->op), in->name, msg);
  return cx_error_at(ic->m, in->loc, CXLA_ERR_VERIFY, "%s: %s", cx_op_name(in->op), msg);
}

static char *next_buf(cx_infer *ic) {
  ic->sidx = (ic->sidx + 1) % CX_ARRAY_LEN(ic->sbuf);
  return ic->sbuf[ic->sidx];
}

const char *cx_vshape(cx_infer *ic, const cx_shape *s) {
  return cx_shape_str(s, next_buf(ic), sizeof ic->sbuf[0]);
}

const char *cx_vints(cx_infer *ic, const cx_ints *v) {
  char *b = next_buf(ic);
  size_t n = sizeof ic->sbuf[0], len = 0;
  len += (size_t)snprintf(b, n, "{");
  for (int i = 0; i < v->n && len < n; i++)
    len += (size_t)snprintf(b + len, n - len, "%s%lld", i ? "," : "", (long long)v->v[i]);
  if (len < n) snprintf(b + len, n - len, "}");
  return b;
}

const char *cx_vtype(cxla_type t) {
  const char *s = cxla_type_name(t);
  return s ? s : "invalid";
}

const char *cx_shape_problem(const cx_shape *s, char *buf, size_t n) {
  if (s->type == CXLA_TUPLE) {
    if (s->ntuple < 0 || (s->ntuple > 0 && !s->tuple)) return "a tuple shape without elements";
    for (int i = 0; i < s->ntuple; i++) {
      const char *p = cx_shape_problem(&s->tuple[i], buf, n);
      if (p) return p;
    }
    return NULL;
  }
  if (s->type == CXLA_TOKEN) return s->rank == 0 ? NULL : "a token with dimensions";
  if (!cx_type_is_array(s->type)) return "an invalid element type";
  if (s->rank < 0 || s->rank > CXLA_MAX_RANK) {
    snprintf(buf, n, "rank %d (at most %d is supported)", s->rank, CXLA_MAX_RANK);
    return buf;
  }
  char tmp[160];
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) {
      snprintf(buf, n, "a negative dimension (%lld) in %s", (long long)s->dims[i],
               cx_shape_str(s, tmp, sizeof tmp));
      return buf;
    }
  if (cx_shape_elems(s) < 0) {
    snprintf(buf, n, "too many elements in %s (at most 2^62)", cx_shape_str(s, tmp, sizeof tmp));
    return buf;
  }
  if (s->rank < 32 && (s->dynamic >> s->rank)) return "a dynamic marker on a dimension it lacks";
  if (s->has_layout) {
    unsigned seen = 0;
    for (int i = 0; i < s->rank; i++) {
      int d = s->minor_to_major[i];
      if (d < 0 || d >= s->rank || (seen & (1u << d))) {
        snprintf(buf, n, "a layout that is not a permutation of 0..%d", s->rank - 1);
        return buf;
      }
      seen |= 1u << d;
    }
  }
  return NULL;
}

cxla_status cx_vneed_array(cx_infer *ic, int i, const char *what) {
  const cx_shape *s = cx_vop(ic, i);
  if (cx_varray(s)) return CXLA_OK;
  return cx_vfail(ic, "%s (operand %d) must be an array, got %s", what, i, cx_vshape(ic, s));
}

cxla_status cx_vneed_scalar(cx_infer *ic, int i, const char *what) {
  const cx_shape *s = cx_vop(ic, i);
  if (cx_varray(s) && s->rank == 0) return CXLA_OK;
  return cx_vfail(ic, "%s (operand %d) must be a scalar, got %s", what, i, cx_vshape(ic, s));
}

cxla_status cx_vdeclared_array(cx_infer *ic) {
  char buf[256];
  const cx_shape *s = &ic->in->shape;
  const char *p = cx_shape_problem(s, buf, sizeof buf);
  if (p) return cx_vfail(ic, "declared shape has %s", p);
  if (!cx_varray(s)) return cx_vfail(ic, "declared shape must be an array, got %s", cx_vshape(ic, s));
  return CXLA_OK;
}

void cx_vset_array(cx_shape *out, cxla_type t, int rank, const int64_t *dims) {
  *out = cx_shape_array(t, dims ? rank : 0, dims);
  out->rank = rank; /* dims NULL: zeros the caller fills in */
}

cx_shape *cx_vtuple(cx_infer *ic, cx_shape *out, int n) {
  memset(out, 0, sizeof *out);
  out->type = CXLA_TUPLE;
  if (n <= 0) return out; /* callers only index elements when n > 0 */
  cx_shape *el = cx_arena_alloc(ic->arena, sizeof(cx_shape) * (size_t)n);
  if (!el) { cx_oom(ic->m->ctx); return NULL; }
  out->tuple = el;
  out->ntuple = n;
  return el;
}

void cx_vplain(cx_shape *s) {
  s->has_layout = 0;
  s->layout_extra = NULL;
}

cxla_status cx_vdims(cx_infer *ic, const cx_ints *v, int rank, const char *what, char *used) {
  char local[CXLA_MAX_RANK] = {0};
  char *seen = used ? used : local;
  for (int i = 0; i < v->n; i++) {
    int64_t d = v->v[i];
    if (d < 0 || d >= rank || d >= CXLA_MAX_RANK)
      return cx_vfail(ic, "%s %s: dimension %lld is out of range for rank %d", what,
                      cx_vints(ic, v), (long long)d, rank);
    if (seen[d])
      return cx_vfail(ic, "%s %s: dimension %lld is used more than once", what, cx_vints(ic, v),
                      (long long)d);
    seen[d] = 1;
  }
  return CXLA_OK;
}

int cx_vsorted(const cx_ints *v) {
  for (int i = 1; i < v->n; i++)
    if (v->v[i - 1] >= v->v[i]) return 0;
  return 1;
}

/* Parameters get indexed lazily: a callee verified on its own already has c->params, but
 * verify_module may meet callers before callees and the builder may hand us any order. */
static cxla_status index_params(cx_infer *ic, cx_comp *c, const char *role) {
  if (!c->params && c->nparams == 0 && !ic->callees_indexed) {
    int n = 0;
    for (int i = 0; i < c->ninstrs; i++) n += c->instrs[i]->op == CX_OP_PARAMETER;
    if (n && !cx_comp_index_params(c) && !c->params) return CXLA_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < c->nparams; i++)
    if (!c->params || !c->params[i])
      return cx_vfail(ic, "%s %s: parameters are not numbered 0..%d", role, c->name, c->nparams - 1);
  return CXLA_OK;
}

cxla_status cx_vcallee(cx_infer *ic, int k, const char *role, int nparams) {
  cx_comp *c = ic->in->called[k];
  if (!c) return cx_vfail(ic, "%s computation is missing", role);
  if (!c->root) return cx_vfail(ic, "%s %s has no ROOT instruction", role, c->name);
  CX_TRY(index_params(ic, c, role));
  if (nparams >= 0 && c->nparams != nparams)
    return cx_vfail(ic, "%s %s must take %d parameter%s, has %d", role, c->name, nparams,
                    nparams == 1 ? "" : "s", c->nparams);
  return CXLA_OK;
}

cxla_status cx_vreducer(cx_infer *ic, int k, const char *role, int n, const cxla_type *acc,
                        const cxla_type *elem, int *is_tuple) {
  CX_TRY(cx_vcallee(ic, k, role, 2 * n));
  cx_comp *c = ic->in->called[k];
  for (int i = 0; i < 2 * n; i++) {
    const cx_shape *p = &c->params[i]->shape;
    cxla_type want = i < n ? acc[i] : elem[i - n];
    if (!cx_varray(p) || p->rank != 0 || p->type != want)
      return cx_vfail(ic, "%s %s: parameter %d must be %s[] (%s), got %s", role, c->name, i,
                      cx_vtype(want), i < n ? "an accumulator" : "an element", cx_vshape(ic, p));
  }
  const cx_shape *r = &c->root->shape;
  *is_tuple = r->type == CXLA_TUPLE;
  if (!*is_tuple) {
    if (n == 1 && cx_varray(r) && r->rank == 0 && r->type == acc[0]) return CXLA_OK;
    return cx_vfail(ic, "%s %s must return %s%s[]%s, returns %s", role, c->name, n > 1 ? "a tuple of " : "",
                    cx_vtype(acc[0]), n > 1 ? ", ..." : "", cx_vshape(ic, r));
  }
  if (r->ntuple != n)
    return cx_vfail(ic, "%s %s must return %d value%s, returns %s", role, c->name, n, n == 1 ? "" : "s",
                    cx_vshape(ic, r));
  for (int i = 0; i < n; i++) {
    const cx_shape *e = &r->tuple[i];
    if (!cx_varray(e) || e->rank != 0 || e->type != acc[i])
      return cx_vfail(ic, "%s %s: result element %d must be %s[], got %s", role, c->name, i,
                      cx_vtype(acc[i]), cx_vshape(ic, e));
  }
  return CXLA_OK;
}

/* XLA lets dot and convolution name a wider result type than their operands
 * (preferred_element_type): floats may become any float, integers and pred any integer or
 * float at least as wide. */
static int widens_to(cxla_type from, cxla_type to) {
  if (from == to) return 1;
  if (!cx_type_is_array(to) || to == CXLA_PRED) return 0;
  if (cx_type_is_complex(from) || cx_type_is_complex(to)) /* c64 -> c128 only */
    return cx_type_is_complex(from) && cx_type_is_complex(to) && cx_type_bits(to) >= cx_type_bits(from);
  if (cx_type_is_float(from)) return cx_type_is_float(to);
  return cx_type_bits(to) >= cx_type_bits(from);
}

cxla_type cx_vaccum_type(cxla_type lhs, cxla_type rhs, cxla_type declared) {
  cxla_type base = lhs;
  if (lhs != rhs) {
    int lf = cx_type_is_float(lhs), rf = cx_type_is_float(rhs);
    if (lf != rf) base = lf ? lhs : rhs;
    else if (cx_type_bits(rhs) > cx_type_bits(lhs)) base = rhs;
    else if (cx_type_bits(rhs) == cx_type_bits(lhs) && rhs == CXLA_F16) base = rhs; /* f16 keeps more mantissa than bf16 */
  }
  return widens_to(lhs, declared) && widens_to(rhs, declared) ? declared : base;
}

/* The extent of a dilated sequence of n points spaced d apart: (n-1)*d+1, 0 when n is 0. */
static int dilated(int64_t n, int64_t d, int64_t *out) {
  if (n == 0) { *out = 0; return 1; }
  return !cx_mul_ovf(n - 1, d, out) && !cx_add_ovf(*out, 1, out);
}

cxla_status cx_vwindow_dim(cx_infer *ic, int i, int64_t dim, const cx_window_dim *w, int64_t *out) {
  if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1)
    return cx_vfail(ic, "window dimension %d: size, stride and dilations must be >= 1, got size=%lld "
                    "stride=%lld lhs_dilate=%lld rhs_dilate=%lld", i, (long long)w->size,
                    (long long)w->stride, (long long)w->lhs_dilate, (long long)w->rhs_dilate);
  int64_t base, padded, extent;
  if (!dilated(dim, w->lhs_dilate, &base) || cx_add_ovf(base, w->pad_lo, &padded) ||
      cx_add_ovf(padded, w->pad_hi, &padded) || !dilated(w->size, w->rhs_dilate, &extent))
    return cx_vfail(ic, "window dimension %d: sizes overflow 64-bit integers", i);
  *out = padded < extent ? 0 : (padded - extent) / w->stride + 1;
  return CXLA_OK;
}
