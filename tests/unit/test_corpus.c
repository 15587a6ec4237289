/* test_corpus.c — runs every HLO file under tests/hlo (see tests/hlo/README.md for the
 * directives). Each file is one check: it must parse, verify, print and re-parse to the same
 * text, run on the interpreter and match its OUTPUT (or fail with its ERROR), and give the
 * interpreter's result on every other registered backend. Each file runs in a child process
 * so that a crash or a hang is reported against the file instead of ending the suite
 * (CXLA_CORPUS_FORK=0 runs in-process, for a debugger). CXLA_CORPUS_FILTER=substring runs
 * only the files whose relative path contains it. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/context.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/verify.h"
#include "runtime/executable.h"
#include "test.h"
#include "text/hlo.h"

#define MAX_INPUTS 64
#define FILE_TIME_LIMIT_S 30 /* the corpus is small: anything slower is hung */

typedef struct directives {
  cx_sb input[MAX_INPUTS];
  int ninputs;
  cx_sb output;
  int has_output;
  cx_sb error;
  int has_error;
  double rtol, atol;
  int has_tolerance;
  char backends[256];
  int has_backends;
  int no_roundtrip;
  cx_sb *last;      /* the directive a "// ..." line continues */
} directives;

typedef struct file_result {
  cx_sb why;        /* empty: passed */
} file_result;

static void fail_why(file_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_why(file_result *r, const char *fmt, ...) {
  if (r->why.len) return; /* keep the first reason */
  va_list ap;
  va_start(ap, fmt);
  cx_sb_vprintf(&r->why, fmt, ap);
  va_end(ap);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) cx_sb_putn(&sb, buf, n);
  fclose(f);
  *len = sb.len;
  if (!sb.buf) return calloc(1, 1);
  return cx_sb_take(&sb);
}

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && (*s == ' ' || *s == '\t')) s++;
  return s;
}

static int starts(const char *s, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - s) >= n && memcmp(s, word, n) == 0;
}

/* Parses the directives of one file. Returns 0 and sets r->why on a malformed directive. */
static int parse_directives(const char *text, size_t len, directives *d, file_result *r) {
  const char *p = text, *end = text + len;
  int lineno = 0;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    lineno++;
    const char *s = skip_ws(p, eol), *e = eol;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    if (starts(s, e, "//")) {
      s = skip_ws(s + 2, e);
      if (starts(s, e, "INPUT:")) {
        if (d->ninputs == MAX_INPUTS) { fail_why(r, "line %d: too many INPUTs", lineno); return 0; }
        d->last = &d->input[d->ninputs++];
        s = skip_ws(s + 6, e);
        cx_sb_putn(d->last, s, (size_t)(e - s));
      } else if (starts(s, e, "OUTPUT:")) {
        if (d->has_output) { fail_why(r, "line %d: second OUTPUT", lineno); return 0; }
        d->has_output = 1;
        d->last = &d->output;
        s = skip_ws(s + 7, e);
        cx_sb_putn(d->last, s, (size_t)(e - s));
      } else if (starts(s, e, "ERROR:")) {
        if (d->has_error) { fail_why(r, "line %d: second ERROR", lineno); return 0; }
        d->has_error = 1;
        d->last = NULL;
        s = skip_ws(s + 6, e);
        cx_sb_putn(&d->error, s, (size_t)(e - s));
      } else if (starts(s, e, "TOLERANCE:")) {
        char tmp[128];
        size_t n = (size_t)(e - s - 10) < sizeof tmp - 1 ? (size_t)(e - s - 10) : sizeof tmp - 1;
        memcpy(tmp, s + 10, n);
        tmp[n] = 0;
        if (sscanf(tmp, "%lf %lf", &d->rtol, &d->atol) != 2 || d->rtol < 0 || d->atol < 0) {
          fail_why(r, "line %d: TOLERANCE needs '<rtol> <atol>'", lineno);
          return 0;
        }
        d->has_tolerance = 1;
        d->last = NULL;
      } else if (starts(s, e, "BACKENDS:")) {
        s = skip_ws(s + 9, e);
        size_t n = (size_t)(e - s) < sizeof d->backends - 1 ? (size_t)(e - s) : sizeof d->backends - 1;
        memcpy(d->backends, s, n);
        d->backends[n] = 0;
        d->has_backends = 1;
        d->last = NULL;
      } else if (starts(s, e, "NO-ROUNDTRIP")) {
        d->no_roundtrip = 1;
        d->last = NULL;
      } else if (starts(s, e, "...")) {
        if (!d->last) { fail_why(r, "line %d: '// ...' continues no INPUT or OUTPUT", lineno); return 0; }
        s = skip_ws(s + 3, e);
        cx_sb_putc(d->last, ' ');
        cx_sb_putn(d->last, s, (size_t)(e - s));
      } else {
        d->last = NULL;
      }
    } else if (s < e) {
      d->last = NULL;
    }
    p = eol < end ? eol + 1 : end;
  }
  if (d->has_error && (d->has_output || d->ninputs)) {
    fail_why(r, "ERROR cannot be combined with INPUT/OUTPUT");
    return 0;
  }
  if (!d->has_error && !d->has_output) {
    fail_why(r, "no OUTPUT or ERROR directive");
    return 0;
  }
  return 1;
}

static int backend_selected(const directives *d, const char *name) {
  if (!d->has_backends) return 1;
  const char *s = d->backends;
  size_t n = strlen(name);
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    const char *e = s;
    while (*e && *e != ' ' && *e != ',') e++;
    if ((size_t)(e - s) == n && memcmp(s, name, n) == 0) return 1;
    s = e;
  }
  return 0;
}

/* Compares leaf by leaf so that each leaf gets its element type's default tolerance. */
static int compare_lit(const cxla_literal *got, const cxla_literal *want, const directives *d,
                       cx_sb *why) {
  if (got->shape.type == CXLA_TUPLE && want->shape.type == CXLA_TUPLE &&
      cx_shape_equal(&got->shape, &want->shape)) {
    for (int i = 0; i < got->nelems; i++)
      if (!compare_lit(got->elems[i], want->elems[i], d, why)) {
        cx_sb_printf(why, " (in tuple element %d)", i);
        return 0;
      }
    return 1;
  }
  double rtol = 1e-5, atol = 1e-6;
  if (want->shape.type == CXLA_F16 || want->shape.type == CXLA_BF16) rtol = 1e-2, atol = 1e-3;
  if (d->has_tolerance) rtol = d->rtol, atol = d->atol;
  return cx_literal_compare(got, want, rtol, atol, why);
}

static char *print_module(cx_module *m) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  return cx_sb_take(&sb);
}

/* Parses and verifies text; on failure copies the message into *msg (malloc'd). */
static cxla_status parse_verify(const char *text, size_t len, const char *name, cx_module **m,
                                char **msg) {
  cxla_context *ctx = test_ctx();
  *m = NULL;
  cxla_status s = cx_parse_module(ctx, text, len, name, m);
  if (s == CXLA_OK && !*m) {
    *msg = strdup("parser returned OK without a module");
    return CXLA_ERR_INTERNAL;
  }
  if (s == CXLA_OK) s = cx_verify_module(*m);
  if (s != CXLA_OK) {
    *msg = strdup(cxla_context_errmsg(ctx));
    cx_module_free(*m);
    *m = NULL;
  }
  return s;
}

/* Runs m on a non-interpreter backend through its compile/execute hooks. */
static cxla_status run_backend(const cx_backend *b, cx_module *m, int nargs,
                               cxla_literal *const *args, cxla_literal **out) {
  cxla_context *ctx = test_ctx();
  *out = NULL;
  cx_module *clone = cx_module_clone(m);
  if (!clone) return cx_oom(ctx);
  void *state = NULL;
  cx_stats stats;
  cx_sb_init(&stats.times);
  cx_sb_init(&stats.counts);
  cxla_status s = b->compile(ctx, clone, &ctx->flags, &state, &stats);
  cx_sb_free(&stats.times);
  cx_sb_free(&stats.counts);
  if (s != CXLA_OK) return s;
  /* what cxla_executable_cost and _footprint read of the compiled module: counts that are
   * finite and not negative, on every module the backend compiles */
  cx_cost k = {0, 0, 0};
  cxla_footprint f = {0, 0, 0, 0, 0};
  if (b->compiled) cx_module_cost(b->compiled(state), &k);
  if (b->footprint) b->footprint(state, &f);
  if (!isfinite(k.flops + k.transcendentals + k.bytes) || k.flops < 0 || k.transcendentals < 0 || k.bytes < 0 ||
      f.temp_bytes < 0 || f.alias_bytes < 0 || f.code_bytes < 0)
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "compiled module's cost (flops %g, transcendentals %g, bytes %g) or footprint "
                 "(temp %lld, alias %lld, code %lld)", k.flops, k.transcendentals, k.bytes, (long long)f.temp_bytes,
                 (long long)f.alias_bytes, (long long)f.code_bytes);
  if (s == CXLA_OK) s = b->execute(state, ctx, nargs, args, out);
  b->destroy(state);
  return s;
}

static void run_file(const char *path, const char *rel, file_result *r) {
  cxla_context *ctx = test_ctx();
  size_t len = 0;
  char *text = read_file(path, &len);
  if (!text) { fail_why(r, "cannot read: %s", strerror(errno)); return; }
  directives d;
  memset(&d, 0, sizeof d);
  cx_module *m = NULL, *m2 = NULL;
  cxla_literal *args[MAX_INPUTS] = {0};
  cxla_literal *want = NULL, *got = NULL, *got2 = NULL;
  char *msg = NULL, *text1 = NULL, *text2 = NULL;
  cx_sb why;
  cx_sb_init(&why);
  if (!parse_directives(text, len, &d, r)) goto done;

  /* Parse, verify and run; an ERROR file must fail somewhere along this path. */
  cxla_status s = parse_verify(text, len, rel, &m, &msg);
  if (d.has_error) {
    if (s == CXLA_OK) {
      cxla_literal *res = NULL;
      s = cx_interp_run(m, 0, NULL, &res);
      cxla_literal_destroy(res);
      if (s != CXLA_OK) msg = strdup(cxla_context_errmsg(ctx));
    }
    if (s == CXLA_OK) fail_why(r, "expected error '%s', but the module parsed, verified and ran", d.error.buf);
    else if (!msg || !strstr(msg, d.error.buf))
      fail_why(r, "expected error '%s', got '%s'", d.error.buf, msg ? msg : "(no message)");
    goto done;
  }
  if (s != CXLA_OK) { fail_why(r, "%s: %s", cxla_status_str(s), msg); goto done; }

  /* Print -> parse -> print must be a fixed point, and the re-parsed module must run the same. */
  text1 = print_module(m);
  if (!text1) { fail_why(r, "printing failed"); goto done; }
  if (!d.no_roundtrip) {
    s = parse_verify(text1, strlen(text1), rel, &m2, &msg);
    if (s != CXLA_OK) { fail_why(r, "printed text does not parse back: %s\n%s", msg, text1); goto done; }
    text2 = print_module(m2);
    if (!text2 || strcmp(text1, text2) != 0) {
      fail_why(r, "print/parse/print is not a fixed point:\n--- first\n%s--- second\n%s", text1,
               text2 ? text2 : "(print failed)");
      goto done;
    }
  }

  /* Cost analysis reads every op's attributes and called computations: each module's counts
   * are finite and not negative. */
  cxla_cost cost = {0, 0, 0};
  if (cxla_module_cost(m, &cost) != CXLA_OK || !isfinite(cost.flops + cost.transcendentals + cost.bytes_accessed) ||
      cost.flops < 0 || cost.transcendentals < 0 || cost.bytes_accessed < 0) {
    fail_why(r, "cost analysis: %s (flops %g, transcendentals %g, bytes %g)", cxla_context_errmsg(ctx), cost.flops,
             cost.transcendentals, cost.bytes_accessed);
    goto done;
  }

  /* Inputs and expected output. */
  int nparams = m->entry ? m->entry->nparams : -1;
  if (nparams != d.ninputs) { fail_why(r, "%d INPUTs for %d ENTRY parameters", d.ninputs, nparams); goto done; }
  for (int i = 0; i < d.ninputs; i++) {
    if (cx_parse_literal(ctx, d.input[i].buf, d.input[i].len, &args[i]) != CXLA_OK) {
      fail_why(r, "INPUT %d does not parse: %s", i, cxla_context_errmsg(ctx));
      goto done;
    }
    if (!cx_shape_equal(&args[i]->shape, &m->entry->params[i]->shape)) {
      char a[256], b[256];
      fail_why(r, "INPUT %d has shape %s, parameter %d is %s", i,
               cx_shape_str(&args[i]->shape, a, sizeof a), i,
               cx_shape_str(&m->entry->params[i]->shape, b, sizeof b));
      goto done;
    }
  }
  if (cx_parse_literal(ctx, d.output.buf, d.output.len, &want) != CXLA_OK) {
    fail_why(r, "OUTPUT does not parse: %s", cxla_context_errmsg(ctx));
    goto done;
  }

  /* The interpreter is the reference. */
  if (!backend_selected(&d, "interp")) {
    fail_why(r, "BACKENDS must include interp (it judges the others)");
    goto done;
  }
  s = cx_interp_run(m, d.ninputs, args, &got);
  if (s != CXLA_OK) { fail_why(r, "interp: %s: %s", cxla_status_str(s), cxla_context_errmsg(ctx)); goto done; }
  if (!compare_lit(got, want, &d, &why)) { fail_why(r, "interp: %s", why.buf ? why.buf : "mismatch"); goto done; }
  if (m2) {
    s = cx_interp_run(m2, d.ninputs, args, &got2);
    if (s != CXLA_OK) { fail_why(r, "interp (re-parsed module): %s", cxla_context_errmsg(ctx)); goto done; }
    if (!cx_literal_equal(got, got2)) { fail_why(r, "interp: the re-parsed module gives a different result"); goto done; }
    cxla_literal_destroy(got2);
    got2 = NULL;
  }

  /* Every other backend is compared with the interpreter. */
  const cx_backend *const *bs = cx_backend_list();
  for (int i = 0; bs && bs[i]; i++) {
    if (!strcmp(bs[i]->name, "interp") || bs[i]->needs_device || !backend_selected(&d, bs[i]->name)) continue;
    s = run_backend(bs[i], m, d.ninputs, args, &got2);
    if (s != CXLA_OK) {
      fail_why(r, "%s: %s: %s", bs[i]->name, cxla_status_str(s), cxla_context_errmsg(ctx));
      goto done;
    }
    cx_sb_free(&why);
    if (!compare_lit(got2, got, &d, &why)) {
      fail_why(r, "%s differs from interp: %s", bs[i]->name, why.buf ? why.buf : "mismatch");
      goto done;
    }
    cxla_literal_destroy(got2);
    got2 = NULL;
  }

done:
  for (int i = 0; i < MAX_INPUTS; i++) {
    cx_sb_free(&d.input[i]);
    cxla_literal_destroy(args[i]);
  }
  cx_sb_free(&d.output);
  cx_sb_free(&d.error);
  cx_sb_free(&why);
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  cxla_literal_destroy(got2);
  cx_module_free(m);
  cx_module_free(m2);
  free(msg);
  free(text1);
  free(text2);
  free(text);
}

/* ---- walking the tree ---- */

typedef struct file_list {
  char **v;
  int n, cap;
} file_list;

static void list_add(file_list *l, const char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    if (!l->v) { perror("realloc"); exit(2); }
  }
  l->v[l->n++] = strdup(s);
}

static void walk(const char *root, const char *rel, file_list *out) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
  DIR *dp = opendir(dir);
  if (!dp) return;
  struct dirent *de;
  while ((de = readdir(dp))) {
    if (de->d_name[0] == '.') continue;
    char sub[4096], full[8192];
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
    snprintf(full, sizeof full, "%s/%s", root, sub);
    struct stat st;
    if (stat(full, &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && !strcmp(sub, "devices")) continue; /* several devices: test_collective_corpus.c */
    if (S_ISDIR(st.st_mode)) walk(root, sub, out);
    else {
      size_t n = strlen(sub);
      if (n > 4 && !strcmp(sub + n - 4, ".hlo")) list_add(out, sub);
    }
  }
  closedir(dp);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one file, in a child process unless CXLA_CORPUS_FORK=0. Returns 1 if it passed; on
 * failure *why receives the reason (malloc'd). */
static int check_file(const char *path, const char *rel, int use_fork, char **why) {
  *why = NULL;
  if (!use_fork) {
    file_result r;
    cx_sb_init(&r.why);
    run_file(path, rel, &r);
    if (!r.why.len) return 1;
    *why = cx_sb_take(&r.why);
    return 0;
  }
  int fd[2];
  if (pipe(fd) != 0) { *why = strdup("pipe failed"); return 0; }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) { close(fd[0]); close(fd[1]); *why = strdup("fork failed"); return 0; }
  if (pid == 0) {
    close(fd[0]);
    alarm(FILE_TIME_LIMIT_S);
    file_result r;
    cx_sb_init(&r.why);
    run_file(path, rel, &r);
    int failed = r.why.len != 0;
    if (failed) {
      size_t off = 0;
      while (off < r.why.len) {
        ssize_t w = write(fd[1], r.why.buf + off, r.why.len - off);
        if (w <= 0) break;
        off += (size_t)w;
      }
    }
    cx_sb_free(&r.why);
    close(fd[1]);
    /* exit (not _exit) so that LeakSanitizer checks this file's run. */
    exit(failed ? 1 : 0);
  }
  close(fd[1]);
  cx_sb msg;
  cx_sb_init(&msg);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) cx_sb_putn(&msg, buf, (size_t)n);
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) { cx_sb_free(&msg); return 1; }
  if (!msg.len) {
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      cx_sb_printf(&msg, "timed out after %d s", FILE_TIME_LIMIT_S);
    else if (WIFSIGNALED(status))
      cx_sb_printf(&msg, "crashed with signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      cx_sb_printf(&msg, "exited with status %d (a sanitizer report above?)", WEXITSTATUS(status));
  }
  *why = cx_sb_take(&msg);
  if (!*why) *why = strdup("failed");
  return 0;
}

TEST(corpus) {
  char root[4096];
  snprintf(root, sizeof root, "%s/tests/hlo", test_srcdir());
  const char *filter = getenv("CXLA_CORPUS_FILTER");
  const char *fork_env = getenv("CXLA_CORPUS_FORK");
  int use_fork = !(fork_env && !strcmp(fork_env, "0"));
  file_list files = {0};
  walk(root, "", &files);
  CHECK_MSG(files.n > 0, "no .hlo files under %s (set CXLA_SRC to the source tree)", root);
  qsort(files.v, (size_t)files.n, sizeof *files.v, cmp_str);
  int passed = 0, failed = 0;
  for (int i = 0; i < files.n; i++) {
    if (filter && *filter && !strstr(files.v[i], filter)) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, files.v[i]);
    char *why = NULL;
    if (check_file(path, files.v[i], use_fork, &why)) {
      passed++;
    } else {
      /* One check per file. test_fail prints only a test's first 5 failures; print the rest. */
      if (failed >= 5) printf("    FAIL %s: %s\n", files.v[i], why);
      test_fail(__FILE__, __LINE__, "FAIL %s: %s", files.v[i], why);
      failed++;
    }
    free(why);
    fflush(stdout);
  }
  printf("    corpus: %d files passed, %d failed\n", passed, failed);
  CHECK_MSG(passed + failed > 0, "no corpus file matches CXLA_CORPUS_FILTER=%s", filter ? filter : "");
  for (int i = 0; i < files.n; i++) free(files.v[i]);
  free(files.v);
}

/* The runner itself must notice each kind of failure; a corpus that cannot fail proves
 * nothing. Writes small files to a temporary folder and checks the verdicts. */
typedef struct runner_case {
  const char *name, *text;
  int pass;           /* expected verdict */
  const char *why;    /* a piece of the expected reason when it fails */
} runner_case;

static const runner_case runner_cases[] = {
  {"good.hlo", "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  ROOT y = s32[2] negate(x)\n}\n"
               "// INPUT: s32[2] {1, -2}\n// OUTPUT: s32[2] {-1, 2}\n", 1, NULL},
  {"continued.hlo", "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  ROOT y = (s32[2], s32[2]) tuple(x, x)\n}\n"
                    "// INPUT: s32[2] {1, -2}\n// OUTPUT: (s32[2], s32[2])\n// ...  ({1, -2},\n// ...   {1, -2})\n", 1, NULL},
  {"wrong_output.hlo", "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  ROOT y = s32[2] negate(x)\n}\n"
                       "// INPUT: s32[2] {1, -2}\n// OUTPUT: s32[2] {-1, 3}\n", 0, "element [1]"},
  {"wrong_shape.hlo", "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  ROOT y = s32[2] negate(x)\n}\n"
                      "// INPUT: s32[2] {1, -2}\n// OUTPUT: s32[3] {-1, 2, 0}\n", 0, "shape"},
  {"tolerance.hlo", "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] multiply(x, x)\n}\n"
                    "// INPUT: f32[1] {3}\n// OUTPUT: f32[1] {9.001}\n", 0, "element [0]"},
  {"tolerance_ok.hlo", "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT y = f32[1] multiply(x, x)\n}\n"
                       "// INPUT: f32[1] {3}\n// TOLERANCE: 1e-3 0\n// OUTPUT: f32[1] {9.001}\n", 1, NULL},
  {"no_directive.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] constant(1)\n}\n", 0, "no OUTPUT or ERROR"},
  {"missing_input.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] parameter(0)\n}\n// OUTPUT: s32[] 1\n", 0,
   "0 INPUTs for 1 ENTRY parameters"},
  {"input_shape.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[2] parameter(0)\n}\n// INPUT: s32[3] {1, 2, 3}\n"
                      "// OUTPUT: s32[2] {1, 2}\n", 0, "INPUT 0 has shape"},
  {"error_ok.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] add(nope, nope)\n}\n"
                   "// ERROR: error_ok.hlo:3:22: error: use of undefined instruction 'nope'\n", 1, NULL},
  {"error_wrong_place.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] add(nope, nope)\n}\n"
                            "// ERROR: error_wrong_place.hlo:3:3: error:\n", 0, "expected error"},
  {"error_not_raised.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] constant(1)\n}\n// ERROR: anything\n", 0,
   "the module parsed, verified and ran"},
  {"bad_continuation.hlo", "HloModule m\nENTRY e {\n  ROOT x = s32[] constant(1)\n}\n// ... 1\n// OUTPUT: s32[] 1\n", 0,
   "continues no INPUT or OUTPUT"},
};

TEST(corpus_runner_detects_failures) {
  char dir[] = "/tmp/cxla_corpus_selftest_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  for (int i = 0; i < (int)(sizeof runner_cases / sizeof runner_cases[0]); i++) {
    const runner_case *c = &runner_cases[i];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, c->name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) continue;
    fputs(c->text, f);
    fclose(f);
    char *why = NULL;
    int pass = check_file(path, c->name, 1, &why);
    CHECK_MSG(pass == c->pass, "%s: verdict %s, expected %s (%s)", c->name, pass ? "pass" : "fail",
              c->pass ? "pass" : "fail", why ? why : "");
    if (!pass && c->why) CHECK_MSG(why && strstr(why, c->why), "%s: reason '%s' lacks '%s'", c->name, why ? why : "", c->why);
    free(why);
    remove(path);
  }
  rmdir(dir);
}
