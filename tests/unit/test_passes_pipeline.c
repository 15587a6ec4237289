/* test_passes_pipeline.c — the pass manager (stats, verification after each pass, fixed
 * points), the CPU pipeline end to end, and the dumps: files, numbering, --dump-pass-re,
 * errors, and GraphViz output that `dot` accepts. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/flags.h"
#include "ir/clone.h"
#include "passes_helpers.h"
#include "text/hlo.h"
#include "util/file.h"


static const char *softmax =
    "HloModule soft\n"
    "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "helper {\n  x = f32[2,3] parameter(0)\n  c = f32[2,3] copy(x)\n  ROOT n = f32[2,3] negate(c)\n}\n"
    "ENTRY main {\n  p = f32[2,3] parameter(0)\n  h = f32[2,3] call(p), to_apply=helper\n"
    "  nn = f32[2,3] negate(h)\n  ninf = f32[] constant(-inf)\n"
    "  r = f32[2] reduce(nn, ninf), dimensions={1}, to_apply=mx\n  r2 = f32[2,1] reshape(r)\n  r1 = f32[2] reshape(r2)\n"
    "  b = f32[2,3] broadcast(r1), dimensions={0}\n  d = f32[2,3] subtract(nn, b)\n  e = f32[2,3] exponential(d)\n"
    "  z = f32[] constant(0)\n  s = f32[2] reduce(e, z), dimensions={1}, to_apply=add\n"
    "  s2 = f32[2] reduce(e, z), dimensions={1}, to_apply=add\n  k1 = f32[] constant(1)\n  k2 = f32[] constant(2)\n"
    "  k3 = f32[] add(k1, k1)\n  k4 = f32[] divide(k3, k2)\n  kb = f32[2] broadcast(k4), dimensions={}\n"
    "  s3 = f32[2] multiply(s2, kb)\n  unused = f32[2,3] sine(p)\n"
    "  bs = f32[2,3] broadcast(s), dimensions={0}\n  ROOT q = f32[2,3] divide(e, bs)\n}\n";

static double sum_stats(const char *stats, const char *name, int *count) {
  double total = 0;
  size_t n = strlen(name);
  *count = 0;
  for (const char *p = stats; p && *p;) {
    while (*p == ' ') p++;
    if (!strncmp(p, name, n) && p[n] == '=') {
      total += atof(p + n + 1);
      (*count)++;
    }
    p = strchr(p, ' ');
  }
  return total;
}

TEST(passes_pipeline_simplification_fixpoint) {
  cx_module *m = TP_PARSE(softmax);
  if (!m) return;
  cx_module *orig = cx_module_clone(m);
  CHECK_OK(tp_optimize(m));
  TP_EQUIV(orig, m, 8);
  /* inlined and simplified: no call, copy, double negation, reshape pair or dead sine; the
   * duplicate reduce merged; 1+1 / 2 folded to 1 and the multiply by it gone */
  CHECK_EQ_INT(m->ncomps, 3);
  CHECK_EQ_INT(tp_count(m, CX_OP_CALL) + tp_count(m, CX_OP_COPY) + tp_count(m, CX_OP_NEGATE), 0);
  CHECK_EQ_INT(tp_count(m, CX_OP_RESHAPE) + tp_count(m, CX_OP_SIN), 0);
  CHECK_EQ_INT(tp_count(m, CX_OP_REDUCE), 2);
  CHECK_EQ_INT(tp_count(m, CX_OP_MULTIPLY), 0);
  cx_module_free(orig);
  cx_module_free(m);
}

TEST(passes_pipeline_cpu_preserves_results_and_reports_stats) {
  for (int fusion = 0; fusion < 2; fusion++) {
    cx_module *m = TP_PARSE(softmax);
    if (!m) return;
    cx_module *orig = cx_module_clone(m);
    cx_flags f;
    cx_flags_init(&f);
    f.fusion = fusion;
    cx_sb stats;
    cx_sb_init(&stats);
    cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
    cx_pass_ctx pc = {&pc_opts, 1, 0, &stats};
    CHECK_OK(cx_pass_pipeline(&pc, m));
    TP_EQUIV(orig, m, 8);
    CHECK_EQ_INT(tp_count(m, CX_OP_CALL), 0);
    /* every pass reported once, with its time accumulated over the rounds */
    const char *names[] = {"inline", "simplify", "fold", "cse", "dce"};
    for (int i = 0; i < 5; i++) {
      int count;
      double ms = sum_stats(stats.buf, names[i], &count);
      CHECK_MSG(count == 1 && ms >= 0, "stats '%s': %s appears %d times", stats.buf ? stats.buf : "", names[i], count);
    }
    cx_sb_free(&stats);
    cx_flags_free(&f);
    cx_module_free(orig);
    cx_module_free(m);
  }
}

/* A pass that breaks the module: the root claims a shape it does not have. */
static cxla_status break_root(cx_module *m, int *changed) {
  m->entry->root->shape.dims[0] = 99;
  *changed = 1;
  return CXLA_OK;
}

TEST(passes_pipeline_verify_names_the_pass) {
  cx_module *m = TP_PARSE("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n");
  if (!m) return;
  cx_pass_ctx pc = {NULL, 1, 0, NULL};
  cx_pass bad = {"breaker", break_root};
  int ch;
  cxla_status s = cx_pass_run(&pc, m, &bad, &ch);
  CHECK_EQ_INT(s, CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "pass breaker produced an invalid module: ");
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "negate");
  cx_module_free(m);
}

static int counter_runs;
static cxla_status count_down(cx_module *m, int *changed) {
  (void)m;
  *changed = ++counter_runs < 3;
  return CXLA_OK;
}

TEST(passes_pipeline_fixpoint_stops) {
  cx_module *m = TP_PARSE("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  if (!m) return;
  cx_pass_ctx pc = {NULL, 0, 0, NULL};
  cx_pass p = {"count", count_down};
  counter_runs = 0;
  CHECK_OK(cx_pass_fixpoint(&pc, m, &p, 1, 8)); /* changes twice, then a round without change */
  CHECK_EQ_INT(counter_runs, 3);
  counter_runs = -100;
  CHECK_OK(cx_pass_fixpoint(&pc, m, &p, 1, 4)); /* never settles: capped */
  CHECK_EQ_INT(counter_runs, -96);
  cx_module_free(m);
}

/* ---- dumps ---- */

static int have_dot(void) { return system("command -v dot >/dev/null 2>&1") == 0; }

static int exists(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* Names in dir (sorted), joined by spaces. */
static char *list_dir(const char *dir) {
  struct dirent **ents;
  int n = scandir(dir, &ents, NULL, alphasort);
  cx_sb sb;
  cx_sb_init(&sb);
  for (int i = 0; i < n; i++) {
    if (ents[i]->d_name[0] != '.') {
      cx_sb_puts(&sb, ents[i]->d_name);
      cx_sb_putc(&sb, ' ');
    }
    free(ents[i]);
  }
  if (n >= 0) free(ents);
  return cx_sb_take(&sb);
}

static void remove_tree(const char *dir) {
  char cmd[1200];
  if (strncmp(dir, "/tmp/cxla_passes_", 17)) return; /* only what the test made */
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST(passes_dump_files_parse_back) {
  char base[] = "/tmp/cxla_passes_XXXXXX";
  if (!mkdtemp(base)) { CHECK(0); return; }
  char dir[256];
  snprintf(dir, sizeof dir, "%s/a/b", base); /* created on demand, like mkdir -p */
  cx_module *m = TP_PARSE(softmax);
  if (!m) return;
  cx_flags f;
  cx_flags_init(&f);
  f.dump_to = cx_strdup(dir);
  f.dump_format = cx_strdup("hlo,dot,svg");
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 1, 0, NULL};
  CHECK_OK(cx_pass_pipeline(&pc, m));
  CHECK_OK(cx_dump_finish(&pc, m));
  char *ls = list_dir(dir);
  CHECK_STR_CONTAINS(ls, "module_0000.soft.00.input.hlo");
  CHECK_STR_CONTAINS(ls, "module_0000.soft.01.inline.hlo");
  CHECK_STR_CONTAINS(ls, "module_0000.soft.02.simplify.hlo");
  CHECK_STR_CONTAINS(ls, "module_0000.soft.passes.txt");
  CHECK(exists(dir, "module_0000.soft.00.input.dot") && exists(dir, "module_0000.soft.02.simplify.dot"));
  if (have_dot()) {
    CHECK(exists(dir, "module_0000.soft.00.input.svg"));
    CHECK(exists(dir, "module_0000.soft.02.simplify.svg"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "dot -Tcanon '%s/module_0000.soft.01.inline.dot' >/dev/null 2>&1", dir);
    CHECK_MSG(system(cmd) == 0, "dot rejects %s/module_0000.soft.01.inline.dot", dir);
  }
  /* each .hlo is a module that parses and verifies: the last one is the pipeline's result */
  char path[512];
  snprintf(path, sizeof path, "%s/module_0000.soft.01.inline.hlo", dir);
  FILE *fp = fopen(path, "rb");
  CHECK(fp != NULL);
  if (fp) {
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    CHECK_STR_CONTAINS(buf, "// cxla dump 01 of module_0000.soft: the module after pass 'inline'");
    cx_module *back = TP_PARSE(buf);
    CHECK(back && back->ncomps == 3); /* helper inlined and gone */
    cx_module_free(back);
  }
  /* every pass run is timed in the pass-times file, the unchanged ones too */
  snprintf(path, sizeof path, "%s/module_0000.soft.passes.txt", dir);
  fp = fopen(path, "rb");
  if (fp) {
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    CHECK_STR_CONTAINS(buf, "layout ");
    CHECK_STR_CONTAINS(buf, " ms  changed");
    CHECK_STR_CONTAINS(buf, " ms  unchanged");
  } else {
    CHECK_MSG(0, "missing %s", path);
  }
  CHECK(pc.ndumps >= 4);
  CHECK(pc.dump_ms > 0);
  /* a second compile into the same folder gets its own prefix: nothing is overwritten */
  cx_module *m2 = TP_PARSE(softmax);
  cx_pass_opts pc2_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc2 = {&pc2_opts, 0, 0, NULL};
  if (m2) CHECK_OK(cx_pass_pipeline(&pc2, m2));
  CHECK_MSG(!strcmp(pc2.dump_prefix, "module_0001.soft"), "second prefix %s", pc2.dump_prefix);
  CHECK(exists(dir, "module_0001.soft.00.input.hlo") && !exists(dir, "module_0001.soft.00.input.svg"));
  cx_module_free(m2);
  free(ls);
  cx_flags_free(&f);
  cx_module_free(m);
  remove_tree(base);
}

TEST(passes_dump_pass_regex) {
  char base[] = "/tmp/cxla_passes_XXXXXX";
  if (!mkdtemp(base)) { CHECK(0); return; }
  cx_module *m = TP_PARSE(softmax);
  if (!m) return;
  cx_flags f;
  cx_flags_init(&f);
  f.dump_to = cx_strdup(base);
  f.dump_pass_re = cx_strdup("^(dce|fold)$");
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 0, 0, NULL};
  CHECK_OK(cx_pass_pipeline(&pc, m));
  char *ls = list_dir(base);
  CHECK_STR_CONTAINS(ls, "module_0000.soft.00.input.hlo");
  CHECK_STR_CONTAINS(ls, "module_0000.soft.01.");
  CHECK_MSG(ls && !strstr(ls, "simplify") && !strstr(ls, "inline") && strstr(ls, ".dce.hlo") && strstr(ls, ".fold.hlo"),
            "dumped: %s", ls ? ls : "");
  free(ls);
  cx_module_free(m);
  /* a bad regex is the caller's error */
  m = TP_PARSE(softmax);
  cx_free(f.dump_pass_re);
  f.dump_pass_re = cx_strdup("(unclosed");
  cx_pass_opts pc2_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc2 = {&pc2_opts, 0, 0, NULL};
  if (m) {
    CHECK_EQ_INT(cx_pass_pipeline(&pc2, m), CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "--dump-pass-re");
  }
  cx_module_free(m);
  cx_flags_free(&f);
  remove_tree(base);
}

TEST(passes_dump_io_error_names_the_path) {
  char base[] = "/tmp/cxla_passes_XXXXXX";
  if (!mkdtemp(base)) { CHECK(0); return; }
  char file[256], dir[300];
  snprintf(file, sizeof file, "%s/plain", base);
  FILE *fp = fopen(file, "w");
  if (fp) fclose(fp);
  snprintf(dir, sizeof dir, "%s/sub", file); /* a directory under a regular file */
  cx_module *m = TP_PARSE(softmax);
  cx_flags f;
  cx_flags_init(&f);
  f.dump_to = cx_strdup(dir);
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 0, 0, NULL};
  if (m) {
    CHECK_EQ_INT(cx_pass_pipeline(&pc, m), CXLA_ERR_IO);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), file);
  }
  cx_module_free(m);
  cx_flags_free(&f);
  remove_tree(base);
}

TEST(passes_graphviz_fusions_and_loops) {
  /* fusions are clusters holding the fused computation; loop bodies get clusters with dashed
   * edges from the while; labels escape quotes */
  cx_module *m = TP_PARSE(
      "HloModule g\n"
      "fused {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}\n"
      "cond {\n  c = s32[] parameter(0)\n  k = s32[] constant(3)\n  ROOT lt = pred[] compare(c, k), direction=LT\n}\n"
      "body {\n  b = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(b, one)\n}\n"
      "ENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[2] parameter(1)\n"
      "  f = f32[2] fusion(p, q), kind=kLoop, calls=fused\n  z = s32[] constant(0)\n"
      "  w = s32[] while(z), condition=cond, body=body\n  ROOT t = (f32[2], s32[]) tuple(f, w)\n}\n");
  if (!m) return;
  m->name = cx_arena_strdup(&m->arena, "g\"quoted\\"); /* API-made modules may have any name */
  cx_sb sb;
  cx_sb_init(&sb);
  cx_dot_graph(&sb, m);
  CHECK_STR_CONTAINS(sb.buf, "digraph \"g\\\"quoted\\\\\"");
  CHECK_STR_CONTAINS(sb.buf, "subgraph cluster_f");
  CHECK_STR_CONTAINS(sb.buf, "kLoop");
  CHECK_STR_CONTAINS(sb.buf, "label=\"body\"");
  CHECK_STR_CONTAINS(sb.buf, "label=\"condition\"");
  /* the fusion's operands feed the fused parameters */
  cx_instr *p = tp_find(m, "p");
  cx_comp *fused = cx_module_find_comp(m, "fused");
  char edge[64];
  snprintf(edge, sizeof edge, "n%d -> n%d", p ? p->id : -1, fused && fused->params ? fused->params[0]->id : -1);
  CHECK_STR_CONTAINS(sb.buf, edge);
  if (have_dot()) {
    char path[] = "/tmp/cxla_passes_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
      CHECK(write(fd, sb.buf, sb.len) == (ssize_t)sb.len);
      close(fd);
      char cmd[256];
      snprintf(cmd, sizeof cmd, "dot -Tcanon '%s' >/dev/null 2>&1", path);
      CHECK_MSG(system(cmd) == 0, "dot rejects the graph:\n%s", sb.buf);
      unlink(path);
    }
  }
  cx_sb_free(&sb);
  cx_module_free(m);
}

TEST(passes_pipeline_large_module_is_linear) {
  /* 60000 instructions: x + 0, duplicates and dead code in a long chain. Quadratic work in
   * any pass would take minutes here; linear passes take well under a second. */
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule big\nENTRY e {\n  v0 = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
                  "  zb = s32[4] broadcast(z), dimensions={}\n");
  int n = 20000;
  for (int i = 1; i <= n; i++) {
    cx_sb_printf(&sb, "  a%d = s32[4] add(v%d, zb)\n", i, i - 1);
    cx_sb_printf(&sb, "  d%d = s32[4] multiply(a%d, a%d)\n", i, i, i);
    cx_sb_printf(&sb, "  v%d = s32[4] negate(a%d)\n", i, i);
  }
  cx_sb_printf(&sb, "  ROOT r = s32[4] add(v%d, v%d)\n}\n", n, n);
  char *text = cx_sb_take(&sb);
  cx_module *m = text ? TP_PARSE(text) : NULL;
  free(text);
  if (!m) return;
  double t0 = cx_now_ms();
  CHECK_OK(tp_optimize(m));
  double ms = cx_now_ms() - t0;
  /* negate(negate(...)) pairs cancel: an even chain is the parameter itself */
  CHECK(m->entry->root->op == CX_OP_ADD && m->entry->root->ops[0]->op == CX_OP_PARAMETER);
  CHECK_MSG(ms < 5000, "the pipeline took %.0f ms on %d instructions", ms, 3 * n);
  cx_module_free(m);
}

TEST(passes_dump_format_flag) {
  cxla_context *ctx = test_ctx();
  CHECK_OK(cxla_context_set_flags(ctx, "--dump-format=hlo"));
  CHECK_OK(cxla_context_set_flags(ctx, "--dump-format=dot,svg"));
  CHECK_EQ_INT(cxla_context_set_flags(ctx, "--dump-format=hlo,png"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "--dump-format=hlo,png: expected a list of hlo, dot and svg");
  CHECK_EQ_INT(cxla_context_set_flags(ctx, "--dump-format=,"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_OK(cxla_context_set_flags(ctx, "--dump-format=hlo,dot"));
}
