/* dump.c — --dump-to=DIR: after each pass that matches --dump-pass-re (a POSIX extended
 * regex, matched anywhere in the pass name), writes DIR/<module>.<NN>.<pass>.hlo (HLO text),
 * .dot (GraphViz) and, when GraphViz `dot` is on PATH, .svg. NN counts dumps in pipeline order
 * so the files sort in the order the module went through the passes. */
#include <errno.h>
#include <fcntl.h>
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

extern char **environ;

/* Whether `pass` matches --dump-pass-re (no regex: every pass). */
static cxla_status pass_matches(cx_pass_ctx *pc, cxla_context *ctx, const char *pass, int *match) {
  const char *re = pc->flags->dump_pass_re;
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

/* Renders the .svg with `dot` if it is installed; every failure is silent (the .dot is there,
 * and GraphViz is optional). The child gets its arguments directly, never through a shell, so
 * odd characters in paths are harmless. */
static void render_svg(const char *dot_path, const char *svg_path) {
  char exe[4096];
  if (!find_dot(exe, sizeof exe)) return;
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
static void put_safe(cx_sb *sb, const char *s) {
  for (; s && *s; s++) {
    char c = *s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    cx_sb_putc(sb, ok ? c : '_');
  }
}

cxla_status cx_pass_dump_always(cx_pass_ctx *pc, cx_module *m, const char *pass) {
  cxla_context *ctx = m->ctx;
  if (!pc->flags || !pc->flags->dump_to || !pc->flags->dump_to[0]) return CXLA_OK;
  int match;
  CX_TRY(pass_matches(pc, ctx, pass, &match)); /* a bad regex is reported even before a match */
  CX_TRY(make_dirs(ctx, pc->flags->dump_to));
  cx_sb base, text, dot;
  cx_sb_init(&base);
  cx_sb_init(&text);
  cx_sb_init(&dot);
  cx_sb_puts(&base, pc->flags->dump_to);
  cx_sb_putc(&base, '/');
  put_safe(&base, m->name ? m->name : "module");
  cx_sb_printf(&base, ".%02d.", pc->ndumps);
  put_safe(&base, pass);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&text, m, &o);
  cx_dot_graph(&dot, m);
  char *b = cx_sb_take(&base);
  size_t bl = b ? strlen(b) : 0;
  char *path = b ? cx_malloc(bl + 8) : NULL, *svg = b ? cx_malloc(bl + 8) : NULL;
  cxla_status s = CXLA_OK;
  if (!path || !svg || text.oom || dot.oom) {
    s = cx_oom(ctx);
  } else {
    snprintf(path, bl + 8, "%s.hlo", b);
    s = write_file(ctx, path, text.buf ? text.buf : "", text.len);
    snprintf(path, bl + 8, "%s.dot", b);
    if (s == CXLA_OK) s = write_file(ctx, path, dot.buf ? dot.buf : "", dot.len);
    snprintf(svg, bl + 8, "%s.svg", b);
    if (s == CXLA_OK) render_svg(path, svg);
  }
  if (s == CXLA_OK) pc->ndumps++;
  cx_free(b);
  cx_free(path);
  cx_free(svg);
  cx_sb_free(&text);
  cx_sb_free(&dot);
  return s;
}

cxla_status cx_pass_dump(cx_pass_ctx *pc, cx_module *m, const char *pass) {
  if (!pc->flags || !pc->flags->dump_to || !pc->flags->dump_to[0]) return CXLA_OK;
  int match;
  CX_TRY(pass_matches(pc, m->ctx, pass, &match));
  return match ? cx_pass_dump_always(pc, m, pass) : CXLA_OK;
}
