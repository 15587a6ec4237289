/* test_main.c — runs every registered test (or those whose name contains argv[1]; "=NAME"
 * selects exactly one) and ends with "N passed, N failed".
 *
 * CXLA_TEST_JOBS=N (N > 1) runs them in N worker processes, forked before the first test: each
 * takes the next test from a counter they share and writes its output into a pipe; this
 * process prints a test's lines as one block when its "ok"/"FAIL" line arrives and counts
 * those. A worker that stops in the middle of a test (a crash, a sanitizer's abort) leaves no
 * summary line, as one process would, so tests/run_all.sh runs the tests not reported one at
 * a time. */
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test.h"

#define MAX_TESTS 4096
typedef struct { const char *name; test_fn fn; } test_entry;
static test_entry tests[MAX_TESTS];
static int ntests, cur_failed;
static cxla_context *ctx;

void test_register(const char *name, test_fn fn) {
  if (ntests < MAX_TESTS) { tests[ntests].name = name; tests[ntests].fn = fn; ntests++; }
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (cur_failed < 5) {
    fprintf(stdout, "    %s:%d: ", file, line);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
  }
  va_end(ap);
  cur_failed++;
}

cxla_context *test_ctx(void) { return ctx; }

const char *test_srcdir(void) {
  const char *s = getenv("CXLA_SRC");
  return s && *s ? s : ".";
}

cxla_executable *test_compile_text(const char *text, const char *name, const char *backend, uint64_t donate) {
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), name, &m));
  if (!m) return NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  o.donate = donate;
  cxla_executable *e = NULL;
  cxla_status s = cxla_compile(m, &o, &e);
  /* the backend named: the same text is often compiled for several */
  CHECK_MSG(s == CXLA_OK, "%s on %s -> %s: %s", name, backend ? backend : "the default backend", cxla_status_str(s),
            cxla_context_errmsg(ctx));
  cxla_module_destroy(m);
  return e;
}

cxla_literal *test_run_text(const char *text, const char *name, const char *backend, const cxla_literal *x) {
  cxla_executable *e = test_compile_text(text, name, backend, 0);
  cxla_buffer *arg = NULL, *res = NULL;
  cxla_literal *out = NULL;
  if (e && cxla_buffer_from_literal(ctx, NULL, x, &arg) == CXLA_OK && cxla_executable_execute(e, 1, &arg, &res) == CXLA_OK)
    CHECK_OK(cxla_buffer_to_literal(res, &out));
  CHECK(out != NULL);
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(arg);
  cxla_executable_destroy(e);
  return out;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const test_entry *)a)->name, ((const test_entry *)b)->name);
}

static int selected(int i, const char *filter) {
  return !filter || (filter[0] == '=' ? !strcmp(tests[i].name, filter + 1) : strstr(tests[i].name, filter) != NULL);
}

/* Runs test i with a fresh context and prints its "ok"/"FAIL" line; 1 if it failed. */
static int run_one(int i) {
  int failed = 0;
  if (cxla_context_create(&ctx) != CXLA_OK) {
    printf("FAIL %s: no context\n", tests[i].name);
    failed = 1;
  } else {
    cur_failed = 0;
    tests[i].fn();
    cxla_context_destroy(ctx);
    ctx = NULL;
    failed = cur_failed != 0;
    printf("%s %s\n", failed ? "FAIL" : "ok  ", tests[i].name);
  }
  fflush(stdout);
  return failed;
}

#define WORKER_DONE "=== worker done\n" /* a worker's last line: it did not stop in a test */

static void worker(int *next, const char *filter) {
  for (;;) {
    int i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
    if (i >= ntests) break;
    if (selected(i, filter)) run_one(i);
  }
  fputs(WORKER_DONE, stdout);
  fflush(stdout);
}

typedef struct pending {
  char *buf;
  size_t n, cap;
  int done, open;
} pending;

/* Prints the complete blocks in w's buffer (each ends with its test's "ok"/"FAIL" line) and
 * counts them; a partial block stays. */
static void flush_blocks(pending *w, int *passed, int *failed) {
  size_t start = 0, line = 0;
  for (size_t i = 0; i < w->n; i++) {
    if (w->buf[i] != '\n') continue;
    const char *l = w->buf + line;
    size_t len = i + 1 - line;
    if (len == sizeof WORKER_DONE - 1 && !memcmp(l, WORKER_DONE, len)) {
      w->done = 1;
      fwrite(w->buf + start, 1, line - start, stdout);
      start = i + 1;
    } else if (!strncmp(l, "ok   ", 5) || !strncmp(l, "FAIL ", 5)) {
      *(l[0] == 'o' ? passed : failed) += 1;
      fwrite(w->buf + start, 1, i + 1 - start, stdout);
      start = i + 1;
    }
    line = i + 1;
  }
  memmove(w->buf, w->buf + start, w->n - start);
  w->n -= start;
  fflush(stdout);
}

static int run_parallel(int jobs, const char *filter) {
  int *next = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (next == MAP_FAILED) return -1;
  *next = 0;
  pending w[jobs];
  struct pollfd pf[jobs];
  pid_t pid[jobs];
  memset(w, 0, sizeof w);
  fflush(stdout);
  for (int k = 0; k < jobs; k++) {
    int p[2] = {-1, -1};
    pid[k] = pipe(p) ? -1 : fork();
    if (pid[k] < 0) { /* none of the tests ran yet: stop the workers, run them here */
      if (p[0] >= 0) { close(p[0]); close(p[1]); }
      for (int q = 0; q < k; q++) {
        kill(pid[q], SIGKILL);
        waitpid(pid[q], NULL, 0);
        close(pf[q].fd);
      }
      munmap(next, sizeof *next);
      return -1;
    }
    if (!pid[k]) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* a runner stopped by a time limit takes its workers */
      for (int q = 0; q < k; q++) close(pf[q].fd);
      close(p[0]);
      dup2(p[1], STDOUT_FILENO);
      close(p[1]);
      worker(next, filter);
      exit(0); /* not _exit: LeakSanitizer checks at exit */
    }
    close(p[1]);
    pf[k] = (struct pollfd){.fd = p[0], .events = POLLIN};
    w[k].open = 1;
  }
  int passed = 0, failed = 0, open = jobs, ok = 1;
  while (open && ok) {
    if (poll(pf, (nfds_t)jobs, -1) < 0) continue;
    for (int k = 0; k < jobs && ok; k++) {
      if (!w[k].open || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (w[k].cap - w[k].n < 4096) {
        char *b = realloc(w[k].buf, w[k].cap * 2 + 8192);
        if (!b) { ok = 0; break; }
        w[k].buf = b;
        w[k].cap = w[k].cap * 2 + 8192;
      }
      ssize_t r = read(pf[k].fd, w[k].buf + w[k].n, w[k].cap - w[k].n);
      if (r > 0) {
        w[k].n += (size_t)r;
        flush_blocks(&w[k], &passed, &failed);
      } else {
        w[k].open = 0;
        pf[k].fd = -1;
        open--;
      }
    }
  }
  int status = 0, all_done = ok;
  for (int k = 0; k < jobs; k++) {
    int st = 0;
    waitpid(pid[k], &st, 0);
    if (w[k].n) fwrite(w[k].buf, 1, w[k].n, stdout); /* the test a worker stopped in */
    if (!w[k].done) {
      all_done = 0;
      printf("=== worker %d stopped in a test (%s %d)\n", k, WIFSIGNALED(st) ? "signal" : "exit status",
             WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    } else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
      status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); /* a leak report at exit */
    }
    free(w[k].buf);
    if (pf[k].fd >= 0) close(pf[k].fd);
  }
  munmap(next, sizeof *next);
  if (!all_done) return 1;
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : status;
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  qsort(tests, (size_t)ntests, sizeof tests[0], by_name);
  const char *j = getenv("CXLA_TEST_JOBS");
  int jobs = j ? atoi(j) : 1;
  if (jobs > 64) jobs = 64;
  if (jobs > 1) {
    int rc = run_parallel(jobs, filter);
    if (rc >= 0) return rc;
    printf("test runner: could not start %d workers; running in this process\n", jobs);
  }
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests; i++) {
    if (!selected(i, filter)) continue;
    if (run_one(i)) failed++;
    else passed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
