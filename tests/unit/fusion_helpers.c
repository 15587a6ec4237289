/* fusion_helpers.c — see fusion_helpers.h. */
#include <stdlib.h>
#include "fusion_helpers.h"

char *fh_subst(const char *text, const char *from, const char *to) {
  cx_sb sb;
  cx_sb_init(&sb);
  size_t fl = strlen(from);
  for (const char *p = text; *p;) {
    const char *q = strstr(p, from);
    if (!q) { cx_sb_puts(&sb, p); break; }
    cx_sb_putn(&sb, p, (size_t)(q - p));
    cx_sb_puts(&sb, to);
    p = q + fl;
  }
  return cx_sb_take(&sb);
}

char *fh_full_size(const char *text) {
  char *a = fh_subst(text, "[8,16]", "[4096,1024]");
  char *b = a ? fh_subst(a, "[8,1]", "[4096,1]") : NULL;
  char *c = b ? fh_subst(b, "[8]", "[4096]") : NULL;
  char *d = c ? fh_subst(c, "[16]", "[1024]") : NULL;
  char *e = d ? fh_subst(d, "constant(16)", "constant(1024)") : NULL;
  cx_free(a); cx_free(b); cx_free(c); cx_free(d);
  return e;
}

void fh_run_fusion(cx_module *m, const char *file, int line) {
  tp_run_pass(m, cx_pass_fusion, -1, file, line);
  tp_run_pass(m, cx_pass_multi_output_fusion, -1, file, line);
  tp_run_pass(m, cx_pass_dot_epilogue_fusion, -1, file, line);
}

static void maybe_print(cx_module *m) {
  if (!getenv("CXLA_FUSION_TEST_PRINT")) return;
  char *t = tp_print(m);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_fusion_explain(m, &sb);
  printf("%s\n%s\n", t ? t : "", sb.buf ? sb.buf : "");
  cx_free(t);
  cx_sb_free(&sb);
}

static cx_module *equiv(const char *text, cx_pass_fn pass, const char *file, int line) {
  cx_module *m = tp_parse(text, file, line);
  if (!m) return NULL;
  cx_module *orig = cx_module_clone(m);
  if (!orig) { test_fail(file, line, "clone failed"); cx_module_free(m); return NULL; }
  if (pass) tp_run_pass(m, pass, -1, file, line);
  else fh_run_fusion(m, file, line);
  maybe_print(m);
  char *t = tp_print(m); /* dumps must read back: names unique, fusions printable */
  cx_module *back = t ? tp_parse(t, file, line) : NULL;
  if (!back) test_fail(file, line, "the fused module does not parse back:\n%s", t ? t : "");
  cx_module_free(back);
  cx_free(t);
  tp_check_equivalent(orig, m, 6, file, line);
  cx_module_free(orig);
  if (!pass) { /* every decision holds as well for the fusions as for the raw ops: a no-op */
    tp_run_pass(m, cx_pass_fusion, 0, file, line);
    tp_run_pass(m, cx_pass_multi_output_fusion, 0, file, line);
    tp_run_pass(m, cx_pass_dot_epilogue_fusion, 0, file, line);
  }
  return m;
}

cx_module *fh_fuse_equiv(const char *text, const char *file, int line) { return equiv(text, NULL, file, line); }

cx_module *fh_pass_equiv(const char *text, cx_pass_fn pass, const char *file, int line) {
  return equiv(text, pass, file, line);
}

int fh_full_size_kernels(const char *text, const char *file, int line) {
  char *big = fh_full_size(text);
  cx_module *m = big ? tp_parse(big, file, line) : NULL;
  cx_free(big);
  if (!m) return -1;
  fh_run_fusion(m, file, line);
  int k = cx_count_kernels(m);
  cx_module_free(m);
  return k;
}

static int is_fused(const cx_module *m, const cx_comp *c) {
  for (int i = 0; i < m->ncomps; i++)
    for (int k = 0; k < m->comps[i]->ninstrs; k++) {
      const cx_instr *x = m->comps[i]->instrs[k];
      if (x->op == CX_OP_FUSION && x->ncalled == 1 && x->called[0] == c) return 1;
    }
  return 0;
}

int fh_count_fused(const cx_module *m, cx_op op) {
  int n = 0;
  for (int i = 0; i < m->ncomps; i++) {
    const cx_comp *c = m->comps[i];
    if (!is_fused(m, c)) continue;
    for (int k = 0; k < c->ninstrs; k++) n += c->instrs[k]->op == op;
  }
  return n;
}

int fh_count_fusions(const cx_module *m, cx_fusion_kind kind, int multi) {
  int n = 0;
  for (int i = 0; i < m->entry->ninstrs; i++) {
    const cx_instr *x = m->entry->instrs[i];
    n += fu_kind_of(x) == kind && (!multi || fu_is_multi_output(x));
  }
  return n;
}

static int max_fused(const cx_module *m, int reduces) {
  int mx = 0;
  for (int i = 0; i < m->ncomps; i++) {
    const cx_comp *c = m->comps[i];
    if (!is_fused(m, c)) continue;
    int n = 0;
    for (int k = 0; k < c->ninstrs; k++)
      n += reduces ? c->instrs[k]->op == CX_OP_REDUCE : c->instrs[k]->op != CX_OP_PARAMETER;
    if (n > mx) mx = n;
  }
  return mx;
}

int fh_max_fused_size(const cx_module *m) { return max_fused(m, 0); }
int fh_max_fused_reduces(const cx_module *m) { return max_fused(m, 1); }

void fh_check_comp_order(const cx_module *m, const char *file, int line) {
  for (int i = 0; i < m->ncomps; i++)
    for (int k = 0; k < m->comps[i]->ninstrs; k++) {
      const cx_instr *x = m->comps[i]->instrs[k];
      for (int j = 0; j < x->ncalled; j++) {
        int at = cx_module_comp_index((cx_module *)m, x->called[j]);
        if (at < 0 || at >= i)
          test_fail(file, line, "%s calls %s, which is not before %s", x->name, x->called[j]->name, m->comps[i]->name);
      }
    }
}
