/* passes_helpers.c — see passes_helpers.h. */
#include <math.h>
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes_helpers.h"
#include "text/hlo.h"

cx_module *tp_parse(const char *text, const char *file, int line) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s != CXLA_OK) {
    test_fail(file, line, "parse/verify: %s", cxla_context_errmsg(test_ctx()));
    cx_module_free(m);
    return NULL;
  }
  return m;
}

char *tp_print(const cx_module *m) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  o.metadata = 0;
  cx_print_module(&sb, m, &o);
  return cx_sb_take(&sb);
}

char *tp_instr(const cx_instr *in) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  o.metadata = 0;
  o.layouts = 0;
  cx_print_instr(&sb, in, &o);
  char *s = cx_sb_take(&sb);
  if (!s) return NULL;
  /* drop "ROOT " and "name = " */
  char *p = strstr(s, " = ");
  if (p) memmove(s, p + 3, strlen(p + 3) + 1);
  return s;
}

cx_instr *tp_find(const cx_module *m, const char *name) {
  const cx_comp *c = m->entry;
  for (int i = 0; c && i < c->ninstrs; i++)
    if (c->instrs[i]->name && !strcmp(c->instrs[i]->name, name)) return c->instrs[i];
  return NULL;
}

int tp_count(const cx_module *m, cx_op op) {
  int n = 0;
  for (int i = 0; m->entry && i < m->entry->ninstrs; i++) n += m->entry->instrs[i]->op == op;
  return n;
}

void tp_run_pass(cx_module *m, cx_pass_fn pass, int expect_changed, const char *file, int line) {
  int changed = -7;
  cxla_status s = pass(m, &changed);
  if (s != CXLA_OK) {
    test_fail(file, line, "pass failed: %s", cxla_context_errmsg(test_ctx()));
    return;
  }
  if (expect_changed >= 0 && (changed != 0) != (expect_changed != 0))
    test_fail(file, line, "changed == %d, expected %s", changed, expect_changed ? "a change" : "no change");
  if (cx_verify_module(m) != CXLA_OK) {
    char *t = tp_print(m);
    test_fail(file, line, "module no longer verifies: %s\n%s", cxla_context_errmsg(test_ctx()), t ? t : "");
    cx_free(t);
  }
}

/* ---- random arguments ---- */

static uint64_t next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static const double fspecial[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1.0, -1.0, 0.5, -2.5, 3.0, 1e30, -7e-3};

static int64_t ispecial(cxla_type t, int k) {
  cx_kind kind = cx_type_kind(t);
  int bits = cx_type_bits(t);
  int64_t mn = kind == CX_KIND_SINT ? cx_wrap_int(t, (int64_t)(UINT64_C(1) << (bits - 1))) : 0;
  int64_t mx = kind == CX_KIND_SINT ? cx_wrap_int(t, (int64_t)((UINT64_C(1) << (bits - 1)) - 1)) : cx_wrap_int(t, -1);
  const int64_t v[] = {0, 1, -1, mn, mx, 2, 7, -8};
  return v[k % 8];
}

static cxla_literal *random_lit(const cx_shape *s, uint64_t seed, uint64_t *st) {
  if (s->type == CXLA_TUPLE) {
    cxla_literal **el = calloc((size_t)(s->ntuple ? s->ntuple : 1), sizeof *el);
    for (int i = 0; i < s->ntuple; i++) el[i] = random_lit(&s->tuple[i], seed, st);
    cxla_literal *t = cxla_literal_tuple(test_ctx(), s->ntuple, el);
    free(el);
    return t;
  }
  cx_shape a = cx_shape_array(s->type, s->rank, s->dims);
  cxla_literal *l = cx_literal_new(&a);
  if (!l) return NULL;
  int64_t n = cx_shape_elems(&a);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next(st);
    int special = seed == 0 || r % 10 < 3;
    uint64_t k = seed == 0 ? (uint64_t)i + (uint64_t)(i / 12) : next(st);
    if (s->type == CXLA_PRED) {
      cx_store_i64(s->type, l->data, i, (int64_t)(r & 1));
    } else if (cx_type_is_float(s->type)) {
      double v = special ? fspecial[k % CX_ARRAY_LEN(fspecial)] : ((double)(int64_t)(next(st) % 81) - 40) / 4;
      cx_store_f64(s->type, l->data, i, v);
    } else {
      int64_t v = special ? ispecial(s->type, (int)(k % 8)) : (int64_t)(next(st) % 41) - 20;
      cx_store_i64(s->type, l->data, i, v);
    }
  }
  return l;
}

int tp_random_args(const cx_module *m, uint64_t seed, cxla_literal **args, int max) {
  const cx_comp *c = m->entry;
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) n += c->instrs[i]->op == CX_OP_PARAMETER;
  if (n > max) return -1;
  uint64_t st = seed * 0x9E3779B97F4A7C15ull + 12345;
  for (int k = 0; k < n; k++) args[k] = NULL;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *p = c->instrs[i];
    if (p->op == CX_OP_PARAMETER && p->a.index >= 0 && p->a.index < n) args[p->a.index] = random_lit(&p->shape, seed, &st);
  }
  return n;
}

void tp_free_args(int n, cxla_literal **args) {
  for (int i = 0; i < n; i++) cxla_literal_destroy(args[i]);
}

int tp_same(const cxla_literal *a, const cxla_literal *b, cx_sb *why) {
  char x[256], y[256];
  if (!cx_shape_equal(&a->shape, &b->shape)) {
    if (why) cx_sb_printf(why, "shapes differ: %s vs %s", cx_shape_str(&a->shape, x, sizeof x), cx_shape_str(&b->shape, y, sizeof y));
    return 0;
  }
  if (a->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < a->nelems; i++)
      if (!tp_same(a->elems[i], b->elems[i], why)) return 0;
    return 1;
  }
  cxla_type t = a->shape.type;
  size_t es = cxla_type_size(t);
  int64_t n = cx_shape_elems(&a->shape);
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *p = (const unsigned char *)a->data + (size_t)i * es, *q = (const unsigned char *)b->data + (size_t)i * es;
    if (cx_type_is_float(t) && isnan(cx_load_f64(t, a->data, i)) && isnan(cx_load_f64(t, b->data, i))) continue;
    if (memcmp(p, q, es)) {
      if (why) {
        cx_sb_printf(why, "element %lld: ", (long long)i);
        cx_literal_print_elem(why, a, i);
        cx_sb_puts(why, " vs ");
        cx_literal_print_elem(why, b, i);
      }
      return 0;
    }
  }
  return 1;
}

void tp_check_equivalent(cx_module *before, cx_module *after, int trials, const char *file, int line) {
  for (int t = 0; t < trials; t++) {
    cxla_literal *args[64], *r1 = NULL, *r2 = NULL;
    int n = tp_random_args(before, (uint64_t)t, args, 64);
    if (n < 0) { test_fail(file, line, "too many parameters"); return; }
    cxla_status s1 = cx_interp_run(before, n, args, &r1);
    char msg1[512];
    snprintf(msg1, sizeof msg1, "%s", cxla_context_errmsg(test_ctx()));
    cxla_status s2 = cx_interp_run(after, n, args, &r2);
    if (s1 != CXLA_OK) {
      if (s2 == CXLA_OK) test_fail(file, line, "trial %d: the original failed (%s) but the result ran", t, msg1);
    } else if (s2 != CXLA_OK) {
      test_fail(file, line, "trial %d: the result failed to run: %s", t, cxla_context_errmsg(test_ctx()));
    } else {
      cx_sb why;
      cx_sb_init(&why);
      if (!tp_same(r1, r2, &why)) {
        char *txt = tp_print(after);
        test_fail(file, line, "trial %d: results differ: %s\nafter:\n%s", t, why.buf ? why.buf : "", txt ? txt : "");
        cx_free(txt);
        trials = 0; /* one report is enough */
      }
      cx_sb_free(&why);
    }
    cxla_literal_destroy(r1);
    cxla_literal_destroy(r2);
    tp_free_args(n, args);
  }
}

cx_module *tp_pass_equiv(const char *text, cx_pass_fn pass, int expect_changed, int trials, const char *file,
                         int line) {
  cx_module *m = tp_parse(text, file, line);
  if (!m) return NULL;
  cx_module *orig = cx_module_clone(m);
  if (!orig) { test_fail(file, line, "clone failed"); cx_module_free(m); return NULL; }
  tp_run_pass(m, pass, expect_changed, file, line);
  tp_check_equivalent(orig, m, trials, file, line);
  cx_module_free(orig);
  return m;
}

cxla_status tp_optimize(cx_module *m) {
  static const cx_pass passes[] = {
      {"simplify", cx_pass_simplify}, {"fold", cx_pass_fold_constants}, {"cse", cx_pass_cse}, {"dce", cx_pass_dce}};
  static const cx_pass inl = {"inline", cx_pass_inline_calls}, layout = {"layout", cx_pass_layout};
  cx_pass_ctx pc = {0};
  pc.verify = 1;
  int ch;
  CX_TRY(cx_pass_run(&pc, m, &layout, &ch)); /* the passes below assume logical values only */
  CX_TRY(cx_pass_run(&pc, m, &inl, &ch));
  return cx_pass_fixpoint(&pc, m, passes, 4, 8);
}

int tp_count_all(const cx_module *m, cx_op op) {
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) n += m->comps[i]->instrs[j]->op == op;
  return n;
}
