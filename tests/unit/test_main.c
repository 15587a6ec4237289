/* test_main.c — runs every registered test (or those whose name contains argv[1]; "=NAME"
 * selects exactly one) and ends with "N passed, N failed". */
#include <stdarg.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  int passed = 0, failed = 0;
  qsort(tests, (size_t)ntests, sizeof tests[0], by_name);
  for (int i = 0; i < ntests; i++) {
    if (filter && (filter[0] == '=' ? strcmp(tests[i].name, filter + 1) : !strstr(tests[i].name, filter)))
      continue;
    if (cxla_context_create(&ctx) != CXLA_OK) { printf("FAIL %s: no context\n", tests[i].name); failed++; continue; }
    cur_failed = 0;
    tests[i].fn();
    cxla_context_destroy(ctx);
    ctx = NULL;
    if (cur_failed) { printf("FAIL %s\n", tests[i].name); failed++; }
    else { printf("ok   %s\n", tests[i].name); passed++; }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
