/* verify_helpers.c — see verify_helpers.h. Fails the running test on malformed helper input. */
#include <ctype.h>
#include <stdarg.h>
#include "verify_helpers.h"
#include "ir/types.h"
#include "text/hlo.h"

cx_module *vt_m;
cx_comp *vt_c;
static char result[2048];

void vt_begin(void) {
  vt_m = cx_module_new(test_ctx(), "m");
  if (vt_m) vt_m->filename = "t.hlo";
  vt_c = NULL;
}

void vt_end(void) {
  cx_module_free(vt_m);
  vt_m = NULL;
  vt_c = NULL;
}

cx_comp *vt_comp(const char *name) {
  vt_c = cx_comp_new(vt_m, name);
  return vt_c;
}

cx_comp *vt_finish(cx_instr *root, int is_entry) {
  cx_comp *c = vt_c;
  c->root = root;
  c->is_entry = is_entry;
  cx_module_add_comp(vt_m, c);
  return c;
}

static int64_t num(const char **p) {
  int neg = **p == '-';
  if (neg) (*p)++;
  int64_t v = 0;
  while (isdigit((unsigned char)**p)) v = v * 10 + (*(*p)++ - '0');
  return neg ? -v : v;
}

static cx_shape parse_shape(const char **p) {
  cx_shape s;
  memset(&s, 0, sizeof s);
  if (**p == '(') {
    cx_shape el[32];
    int n = 0;
    (*p)++;
    while (**p && **p != ')') {
      if (n < 32) el[n++] = parse_shape(p);
      while (**p == ',' || **p == ' ') (*p)++;
    }
    if (**p == ')') (*p)++;
    s.type = CXLA_TUPLE;
    s.ntuple = n;
    s.tuple = cx_arena_memdup(&vt_m->arena, el, sizeof(cx_shape) * (size_t)(n ? n : 1));
    return s;
  }
  const char *t = *p;
  while (isalnum((unsigned char)**p)) (*p)++;
  s.type = cx_type_from_name(t, (int)(*p - t));
  if (s.type == CXLA_INVALID) test_fail(__FILE__, __LINE__, "bad type in shape '%s'", t);
  if (**p == '[') {
    (*p)++;
    while (**p && **p != ']') {
      s.dims[s.rank++] = num(p);
      if (**p == ',') (*p)++;
    }
    if (**p == ']') (*p)++;
  }
  if (**p == '{') {
    (*p)++;
    s.has_layout = 1;
    int i = 0;
    while (**p && **p != '}') {
      s.minor_to_major[i++] = (int8_t)num(p);
      if (**p == ',') (*p)++;
    }
    if (**p == '}') (*p)++;
  }
  return s;
}

cx_shape vt_shape(const char *s) { return parse_shape(&s); }

static cx_instr *make(cx_op op, const char *name, const char *shape, int nops, cx_instr **ops) {
  cx_shape s = vt_shape(shape ? shape : "f32[]");
  cx_instr *in = cx_instr_new(vt_c, op, &s, nops, ops);
  if (!in) return NULL;
  if (name) cx_instr_set_name(in, name);
  cx_shape inferred; /* no declared shape: take the inferred one, as the builder does */
  if (!shape && cx_infer_shape(in, &inferred) == CXLA_OK) in->shape = inferred;
  return in;
}

cx_instr *vt_op(cx_op op, const char *name, const char *shape, int nops, ...) {
  cx_instr *ops[64];
  va_list ap;
  va_start(ap, nops);
  for (int i = 0; i < nops && i < 64; i++) ops[i] = va_arg(ap, cx_instr *);
  va_end(ap);
  return make(op, name, shape, nops, ops);
}

cx_instr *vt_param(int64_t number, const char *name, const char *shape) {
  cx_instr *in = make(CX_OP_PARAMETER, name, shape, 0, NULL);
  in->a.index = number;
  return in;
}

cx_instr *vt_const(const char *name, const char *shape) {
  cx_instr *in = make(CX_OP_CONSTANT, name, shape, 0, NULL);
  cxla_literal *lit = cx_literal_new(&in->shape);
  if (lit && cx_module_own_literal(vt_m, lit)) in->a.literal = lit;
  return in;
}

void vt_called(cx_instr *in, int n, ...) {
  cx_comp *c[16];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n && i < 16; i++) c[i] = va_arg(ap, cx_comp *);
  va_end(ap);
  cx_instr_set_called(in, n, c);
}

void vt_at(cx_instr *in, int line, int col) {
  in->loc.line = line;
  in->loc.col = col;
}

void vt_ints(cx_ints *dst, int n, const int64_t *v) { cx_ints_set(vt_m, dst, n, v); }

/* Reads "AxBxC" into v; returns the count. */
static int xlist(const char **p, int64_t *v, int pairs, int64_t *v2) {
  int n = 0;
  for (;;) {
    v[n] = num(p);
    if (pairs && **p == '_') { (*p)++; v2[n] = num(p); }
    n++;
    if (**p != 'x') return n;
    (*p)++;
  }
}

void vt_window(cx_instr *in, const char *spec) {
  int64_t size[16] = {0}, stride[16], lo[16] = {0}, hi[16] = {0}, ld[16], rd[16];
  for (int i = 0; i < 16; i++) stride[i] = ld[i] = rd[i] = 1;
  int rank = 0;
  const char *p = spec;
  while (*p) {
    while (*p == ' ') p++;
    const char *key = p;
    while (*p && *p != '=') p++;
    if (*p != '=') break;
    size_t klen = (size_t)(p - key);
    p++;
    if (!strncmp(key, "size", klen)) rank = xlist(&p, size, 0, NULL);
    else if (!strncmp(key, "stride", klen)) xlist(&p, stride, 0, NULL);
    else if (!strncmp(key, "pad", klen)) xlist(&p, lo, 1, hi);
    else if (!strncmp(key, "lhs_dilate", klen)) xlist(&p, ld, 0, NULL);
    else if (!strncmp(key, "rhs_dilate", klen)) xlist(&p, rd, 0, NULL);
    else test_fail(__FILE__, __LINE__, "bad window key in '%s'", spec);
  }
  in->a.window.rank = rank;
  in->a.window.d = rank ? cx_arena_alloc(&vt_m->arena, sizeof(cx_window_dim) * (size_t)rank) : NULL;
  for (int i = 0; i < rank; i++)
    in->a.window.d[i] = (cx_window_dim){size[i], stride[i], lo[i], hi[i], ld[i], rd[i], 0};
}

/* One part of dim_labels: two letters and the spatial digits. */
static void label_part(const char *s, int len, char a, char b, int64_t *pa, int64_t *pb, int64_t *sp) {
  for (int i = 0; i < len; i++) {
    if (s[i] == a) *pa = i;
    else if (s[i] == b) *pb = i;
    else sp[s[i] - '0'] = i;
  }
}

void vt_labels(cx_instr *in, const char *spec) {
  cx_conv_dims *d = cx_arena_alloc(&in->parent->module->arena, sizeof *d);
  if (!d) return;
  in->a.conv = d;
  const char *k = strchr(spec, '_'), *o = strstr(spec, "->");
  int n = (int)(k - spec);
  memset(d, 0, sizeof *d);
  d->nspatial = n - 2;
  label_part(spec, n, 'b', 'f', &d->in_batch, &d->in_feature, d->in_spatial);
  label_part(k + 1, (int)(o - k - 1), 'i', 'o', &d->k_in, &d->k_out, d->k_spatial);
  label_part(o + 2, (int)strlen(o + 2), 'b', 'f', &d->out_batch, &d->out_feature, d->out_spatial);
}

cx_comp *vt_binary_comp(const char *name, cx_op op, const char *type) {
  cx_comp *saved = vt_c;
  char sh[32];
  snprintf(sh, sizeof sh, "%s[]", type);
  vt_comp(name);
  cx_instr *x = vt_param(0, "x", sh), *y = vt_param(1, "y", sh);
  cx_comp *c = vt_finish(vt_op(op, "r", op == CX_OP_COMPARE ? "pred[]" : sh, 2, x, y), 0);
  vt_c = saved;
  return c;
}

const char *vt_infer(cx_instr *in) {
  cx_shape s;
  if (!in) return "ERROR: no instruction";
  if (cx_infer_shape(in, &s) != CXLA_OK) {
    snprintf(result, sizeof result, "ERROR: %s", cxla_context_errmsg(test_ctx()));
    return result;
  }
  cx_shape_str(&s, result, sizeof result);
  return result;
}

const char *vt_verify(void) {
  if (cx_verify_module(vt_m) == CXLA_OK) return "ok";
  snprintf(result, sizeof result, "%s", cxla_context_errmsg(test_ctx()));
  return result;
}

const char *vt_verify_body(const char *body) {
  static char msg[512];
  char text[1024];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%s}\n", body);
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  snprintf(msg, sizeof msg, "%s", s == CXLA_OK ? "ok" : cxla_context_errmsg(test_ctx()));
  cx_module_free(m);
  return msg;
}
