/* dump.c — --dump-to=DIR: after each pass that matches --dump-pass-re (a POSIX extended
 * regex, matched anywhere in the pass name), writes DIR/<prefix>.<NN>.<pass>.hlo (HLO text)
 * and .dot (GraphViz), as --dump-format says; with svg, GraphViz renders every .dot once the
 * compile is done. NN counts dumps in pipeline order so the files sort in the order the module
 * went through the passes; <prefix> is module_NNNN.<module>, new for every compile (XLA's
 * naming), so no compile overwrites another's files. DIR/<prefix>.passes.txt lists every pass
 * run with its time. Time spent here is counted in pc->dump_ms, never in a pass's time. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <regex.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "passes/pass.h"
#include "text/hlo.h"
#include "util/file.h"

extern char **environ;

/* Whether `pass` matches --dump-pass-re (no regex: every pass). */
static cxla_status pass_matches(cx_pass_ctx *pc, cxla_context *ctx, const char *pass, int *match) {
  const char *re = pc->opts->dump_pass_re;
  *match = 1;
  if (!re || !*re) return CXLA_OK;
  regex_t rx;
  int rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);
  if (rc) {
    char why[256];
    regerror(rc, &rx, why, sizeof why);
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "--dump-pass-re: bad regular expression '%s': %s", re, why);
  }
  *match = regexec(&rx, pass, 0, NULL, 0) == 0;
  regfree(&rx);
  return CXLA_OK;
}

/* mkdir -p: creates every missing directory of path. */
static cxla_status make_dirs(cxla_context *ctx, const char *path) {
  size_t n = strlen(path);
  char *p = cx_malloc(n + 1);
  if (!p) return cx_oom(ctx);
  memcpy(p, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char c = p[i];
    p[i] = 0;
    struct stat st;
    if (mkdir(p, 0777) != 0 && (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
      int e = errno == EEXIST ? ENOTDIR : errno;
      cxla_status s = cx_error(ctx, CXLA_ERR_IO, "cannot create directory %s: %s", p, strerror(e));
      cx_free(p);
      return s;
    }
    p[i] = c;
  }
  cx_free(p);
  return CXLA_OK;
}

static cxla_status write_file(cxla_context *ctx, const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  size_t w = len ? fwrite(data, 1, len, f) : 0;
  int e = w == len ? 0 : errno;
  if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
  if (w != len || e) return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(e ? e : EIO));
  return CXLA_OK;
}

/* The full path of `dot` on PATH, or 0. */
static int find_dot(char *out, size_t n) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  while (*path) {
    const char *e = strchr(path, ':');
    size_t len = e ? (size_t)(e - path) : strlen(path);
    if (len && len + 5 < n) {
      memcpy(out, path, len);
      memcpy(out + len, "/dot", 5);
      if (access(out, X_OK) == 0) return 1;
    }
    path += len + (e ? 1 : 0);
  }
  return 0;
}

/* Renders the .svg with `dot`; every failure is silent (the .dot is there, and GraphViz is
 * optional). The child gets its arguments directly, never through a shell, so odd characters
 * in paths are harmless. */
static void render_svg(const char *exe, const char *dot_path, const char *svg_path) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return;
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  char *argv[] = {"dot", "-Tsvg", (char *)dot_path, "-o", (char *)svg_path, NULL};
  pid_t pid;
  if (posix_spawn(&pid, exe, &fa, NULL, argv, environ) == 0) {
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  }
  posix_spawn_file_actions_destroy(&fa);
}

/* Keeps file names portable: letters, digits, '.', '_' and '-'; anything else becomes '_'. */
static void put_safe(char *out, size_t n, const char *s) {
  size_t k = 0;
  for (; s && *s && k + 1 < n; s++) {
    char c = *s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    out[k++] = ok ? c : '_';
  }
  out[k] = 0;
}

enum { FMT_HLO = 1, FMT_DOT = 2, FMT_SVG = 4 };

/* The --dump-format bits; -1 for a bad list. */
static int formats(const char *v) {
  if (!v || !*v) return FMT_HLO | FMT_DOT;
  int f = 0;
  for (const char *p = v; *p;) {
    size_t n = strcspn(p, ",");
    if (n == 3 && !strncmp(p, "hlo", 3)) f |= FMT_HLO;
    else if (n == 3 && !strncmp(p, "dot", 3)) f |= FMT_DOT;
    else if (n == 3 && !strncmp(p, "svg", 3)) f |= FMT_SVG | FMT_DOT; /* rendered from the .dot */
    else return -1;
    p += n + (p[n] == ',');
  }
  return f ? f : -1;
}

cxla_status cx_dump_check_format(cxla_context *ctx, const char *value) {
  if (formats(value) >= 0) return CXLA_OK;
  return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "--dump-format=%s: expected a list of hlo, dot and svg, e.g. hlo,dot,svg",
                  value);
}

static int dumping(const cx_pass_ctx *pc) { return pc->opts && pc->opts->dump_to && pc->opts->dump_to[0]; }

/* Picks this compile's file prefix "module_NNNN.<name>": the first NNNN whose pass-time file
 * it can create exclusively, so that no compile, in this process or another, overwrites the
 * files of an earlier one. */
static cxla_status begin(cx_pass_ctx *pc, cx_module *m) {
  if (pc->dump_prefix[0]) return CXLA_OK;
  cxla_context *ctx = m->ctx;
  CX_TRY(make_dirs(ctx, pc->opts->dump_to));
  char name[100], path[4096];
  put_safe(name, sizeof name, m->name ? m->name : "module");
  for (int k = 0; k < 100000; k++) {
    snprintf(pc->dump_prefix, sizeof pc->dump_prefix, "module_%04d.%s", k, name);
    snprintf(path, sizeof path, "%s/%s.passes.txt", pc->opts->dump_to, pc->dump_prefix);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd >= 0) {
      close(fd);
      return CXLA_OK;
    }
    if (errno != EEXIST) {
      pc->dump_prefix[0] = 0;
      return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
  }
  pc->dump_prefix[0] = 0;
  return cx_error(ctx, CXLA_ERR_IO, "cannot write under %s: every module_NNNN prefix is taken", pc->opts->dump_to);
}

static void path_of(const cx_pass_ctx *pc, const char *suffix, char *out, size_t n) {
  snprintf(out, n, "%s/%s.%s", pc->opts->dump_to, pc->dump_prefix, suffix);
}

cxla_status cx_dump_file(cx_pass_ctx *pc, cx_module *m, const char *suffix, const char *data, size_t len) {
  if (!dumping(pc)) return CXLA_OK;
  double t0 = cx_now_ms();
  cxla_status s = begin(pc, m);
  char path[4096];
  path_of(pc, suffix, path, sizeof path);
  if (s == CXLA_OK) s = write_file(m->ctx, path, data, len);
  pc->dump_ms += cx_now_ms() - t0;
  return s;
}

cxla_status cx_dump_pass_time(cx_pass_ctx *pc, cx_module *m, const char *pass, double ms, int changed) {
  if (!dumping(pc)) return CXLA_OK;
  double t0 = cx_now_ms();
  cxla_status s = begin(pc, m);
  char path[4096];
  path_of(pc, "passes.txt", path, sizeof path);
  FILE *f = s == CXLA_OK ? fopen(path, "a") : NULL;
  if (s == CXLA_OK && !f) s = cx_error(m->ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  if (f) {
    fprintf(f, "%-24s %10.3f ms  %s\n", pass, ms, changed ? "changed" : "unchanged");
    if (fclose(f) != 0) s = cx_error(m->ctx, CXLA_ERR_IO, "cannot write %s", path);
  }
  pc->dump_ms += cx_now_ms() - t0;
  return s;
}

cxla_status cx_pass_dump_always(cx_pass_ctx *pc, cx_module *m, const char *pass) {
  cxla_context *ctx = m->ctx;
  if (!dumping(pc)) return CXLA_OK;
  int match;
  CX_TRY(pass_matches(pc, ctx, pass, &match)); /* a bad regex is reported even before a match */
  double t0 = cx_now_ms();
  cxla_status s = begin(pc, m);
  int fmt = formats(pc->opts->dump_format);
  char file[200], suffix[260];
  put_safe(file, sizeof file, pass);
  cx_sb text, dot;
  cx_sb_init(&text);
  cx_sb_init(&dot);
  if (s == CXLA_OK && (fmt & FMT_HLO)) {
    cx_sb_printf(&text, "// cxla dump %02d of %s: the module after pass '%s'\n", pc->ndumps, pc->dump_prefix, pass);
    cx_print_opts o = cx_print_opts_canonical();
    cx_print_module(&text, m, &o);
    snprintf(suffix, sizeof suffix, "%02d.%s.hlo", pc->ndumps, file);
    s = text.oom ? cx_oom(ctx) : cx_dump_file(pc, m, suffix, text.buf ? text.buf : "", text.len);
  }
  if (s == CXLA_OK && (fmt & FMT_DOT)) {
    cx_dot_graph(&dot, m);
    snprintf(suffix, sizeof suffix, "%02d.%s.dot", pc->ndumps, file);
    s = dot.oom ? cx_oom(ctx) : cx_dump_file(pc, m, suffix, dot.buf ? dot.buf : "", dot.len);
  }
  if (s == CXLA_OK) pc->ndumps++;
  cx_sb_free(&text);
  cx_sb_free(&dot);
  double t1 = cx_now_ms();
  if (pc->span) pc->span(pc->span_arg, pass, "dump", t0, t1, 1);
  return s;
}

cxla_status cx_pass_dump(cx_pass_ctx *pc, cx_module *m, const char *pass) {
  if (!dumping(pc)) return CXLA_OK;
  int match;
  CX_TRY(pass_matches(pc, m->ctx, pass, &match));
  return match ? cx_pass_dump_always(pc, m, pass) : CXLA_OK;
}

/* The SVGs are drawn once the compile is done, from this compile's .dot files: GraphViz takes
 * longer than the passes themselves on big modules. */
cxla_status cx_dump_finish(cx_pass_ctx *pc, cx_module *m) {
  if (!dumping(pc) || !pc->dump_prefix[0] || !(formats(pc->opts->dump_format) & FMT_SVG)) return CXLA_OK;
  double t0 = cx_now_ms();
  char exe[4096];
  DIR *d = find_dot(exe, sizeof exe) ? opendir(pc->opts->dump_to) : NULL;
  size_t pl = strlen(pc->dump_prefix);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n <= pl + 4 || strncmp(e->d_name, pc->dump_prefix, pl) || e->d_name[pl] != '.' || strcmp(e->d_name + n - 4, ".dot"))
      continue;
    char dot[4096], svg[4096];
    snprintf(dot, sizeof dot, "%s/%s", pc->opts->dump_to, e->d_name);
    snprintf(svg, sizeof svg, "%s/%.*s.svg", pc->opts->dump_to, (int)(n - 4), e->d_name);
    render_svg(exe, dot, svg);
  }
  if (d) closedir(d);
  double t1 = cx_now_ms();
  pc->dump_ms += t1 - t0;
  if (pc->span) pc->span(pc->span_arg, "svg", "dump", t0, t1, 1);
  (void)m;
  return CXLA_OK;
}
