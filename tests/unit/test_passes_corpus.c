/* test_passes_corpus.c — the simplification pipeline over every module of the HLO corpus
 * (tests/hlo) that has INPUT directives: the optimized module must verify, print and parse
 * back, and compute on the interpreter exactly what the original computes on those inputs
 * (NaN matches NaN, everything else bit for bit). Real JAX-style modules exercise the passes
 * on code nobody wrote for them. */
#include <dirent.h>
#include <sys/stat.h>
#include "core/context.h"
#include "core/flags.h"
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes_helpers.h"
#include "text/hlo.h"

#define MAX_ARGS 32

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) cx_sb_putn(&sb, buf, n);
  fclose(f);
  return cx_sb_take(&sb);
}

/* The "// INPUT:" literals, continuation lines ("// ...") appended. Returns the count, or -1
 * if one does not parse. */
static int read_inputs(const char *text, cxla_literal **args) {
  cx_sb cur[MAX_ARGS];
  int n = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *q = p;
    while (q < p + len && (*q == ' ' || *q == '\t')) q++;
    if (!strncmp(q, "// INPUT:", 9) && n < MAX_ARGS) {
      cx_sb_init(&cur[n]);
      cx_sb_putn(&cur[n], q + 9, len - (size_t)(q + 9 - p));
      n++;
    } else if (!strncmp(q, "// ...", 6) && n > 0) {
      cx_sb_putc(&cur[n - 1], ' ');
      cx_sb_putn(&cur[n - 1], q + 6, len - (size_t)(q + 6 - p));
    } else if (!strncmp(q, "//", 2) && n > 0 && strncmp(q, "// INPUT", 8)) {
      /* another directive ends continuation of the last INPUT */
    }
    p += len + (e ? 1 : 0);
  }
  int ok = 1;
  for (int i = 0; i < n; i++) {
    args[i] = NULL;
    if (ok && cxla_literal_parse(test_ctx(), cur[i].buf ? cur[i].buf : "", &args[i]) != CXLA_OK) ok = 0;
    cx_sb_free(&cur[i]);
  }
  if (!ok) {
    tp_free_args(n, args);
    return -1;
  }
  return n;
}

static int checked;

/* mode 0: the simplification fixpoint; 1, 2: the whole CPU pipeline with fusion on / off */
static cxla_status optimize(cx_module *m, int mode) {
  if (mode == 0) return tp_optimize(m);
  cx_flags f;
  cx_flags_init(&f);
  f.fusion = mode == 1;
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 1, 0, NULL};
  return cx_pass_pipeline(&pc, m);
}

static void check_file(const char *path, const char *rel, int mode) {
  char *text = slurp(path);
  if (!text) return;
  cxla_literal *args[MAX_ARGS];
  int n = strstr(text, "// INPUT:") || strstr(text, "// OUTPUT:") ? read_inputs(text, args) : -1;
  cx_module *m = NULL;
  if (n >= 0 && !strstr(text, "// ERROR:") &&
      cx_parse_module(test_ctx(), text, strlen(text), rel, &m) == CXLA_OK && cx_verify_module(m) == CXLA_OK) {
    cxla_literal *want = NULL, *got = NULL;
    /* only modules the interpreter runs on their inputs are a reference */
    if (cx_interp_run(m, n, args, &want) == CXLA_OK) {
      cx_module *opt = cx_module_clone(m);
      cxla_status s = opt ? optimize(opt, mode) : CXLA_ERR_OUT_OF_MEMORY;
      CHECK_MSG(s == CXLA_OK, "%s (mode %d): pipeline failed: %s", rel, mode, cxla_context_errmsg(test_ctx()));
      if (s == CXLA_OK) {
        checked++;
        s = cx_interp_run(opt, n, args, &got);
        cx_sb why;
        cx_sb_init(&why);
        CHECK_MSG(s == CXLA_OK && tp_same(want, got, &why), "%s (mode %d): optimized module computes something else: %s %s", rel, mode,
                  s == CXLA_OK ? "" : cxla_context_errmsg(test_ctx()), why.buf ? why.buf : "");
        cx_sb_free(&why);
        char *t = tp_print(opt);
        cx_module *back = NULL;
        CHECK_MSG(t && cx_parse_module(test_ctx(), t, strlen(t), rel, &back) == CXLA_OK &&
                      cx_verify_module(back) == CXLA_OK,
                  "%s (mode %d): optimized text does not parse back: %s\n%s", rel, mode, cxla_context_errmsg(test_ctx()), t ? t : "");
        cx_module_free(back);
        cx_free(t);
      }
      cx_module_free(opt);
    }
    cxla_literal_destroy(want);
    cxla_literal_destroy(got);
  }
  if (n > 0) tp_free_args(n, args);
  cx_module_free(m);
  free(text);
}

static void walk(const char *dir, const char *rel, int mode) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[1024], r[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) walk(path, r, mode);
    else if (strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".hlo")) check_file(path, r, mode);
  }
  closedir(d);
}

static void corpus(int mode) {
  char root[512];
  snprintf(root, sizeof root, "%s/tests/hlo", test_srcdir());
  /* loops in the corpus are bounded, but a broken pass must not hang the suite */
  test_ctx()->flags.max_loop_iterations = 1000000;
  checked = 0;
  walk(root, "", mode);
  CHECK_MSG(checked >= 20, "only %d corpus modules were checked (is CXLA_SRC right?)", checked);
}

TEST(passes_corpus_modules_keep_their_results) { corpus(0); }
/* The whole CPU pipeline, fusion passes included (the interpreter runs fusions as calls). */
TEST(passes_corpus_cpu_pipeline_fusion_on) { corpus(1); }
TEST(passes_corpus_cpu_pipeline_fusion_off) { corpus(2); }
