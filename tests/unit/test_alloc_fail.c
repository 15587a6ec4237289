/* test_alloc_fail.c — allocation-failure injection over the whole text-to-result path.
 * For a few representative corpus modules, parse + verify + print + interpret runs with
 * cx_alloc_fail_after(n) for n = 0, 1, 2, ... until a run completes without an injected
 * failure. Every run must either succeed or fail cleanly with CXLA_ERR_OUT_OF_MEMORY; the ASan build turns leaks and bad frees on these error paths into failures. */
#include "core/context.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/verify.h"
#include "runtime/executable.h"
#include "test.h"
#include "text/hlo.h"

#define MAX_INPUTS 16
#define MAX_RUNS 200000 /* a bound on n, far above the allocations any of these modules makes */

typedef struct loaded {
  char *text;
  size_t len;
  cxla_literal *args[MAX_INPUTS];
  int nargs;
} loaded;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  fclose(f);
  if (!s) return NULL;
  s[n] = 0;
  *len = (size_t)n;
  return s;
}

/* Loads a corpus file and parses its "// INPUT:" literals (one line each, plus "// ..."
 * continuation lines), with allocation failures off. */
static int load(const char *rel, loaded *L) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/hlo/%s", test_srcdir(), rel);
  memset(L, 0, sizeof *L);
  L->text = slurp(path, &L->len);
  CHECK_MSG(L->text != NULL, "cannot read %s", path);
  if (!L->text) return 0;
  char *line = L->text, buf[8192];
  buf[0] = 0;
  int have = 0;
  for (;;) {
    char *eol = strchr(line, '\n');
    size_t n = eol ? (size_t)(eol - line) : strlen(line);
    int is_input = n > 9 && !strncmp(line, "// INPUT:", 9);
    int is_cont = n > 6 && !strncmp(line, "// ...", 6);
    if (have && !is_cont) {
      if (L->nargs == MAX_INPUTS) return 0;
      CHECK_OK(cx_parse_literal(test_ctx(), buf, strlen(buf), &L->args[L->nargs]));
      if (!L->args[L->nargs]) return 0;
      L->nargs++;
      have = 0;
    }
    if (is_input || (have && is_cont)) {
      size_t skip = is_input ? 9 : 6, used = have ? strlen(buf) : 0;
      if (used + n - skip + 2 < sizeof buf) {
        if (have) buf[used++] = ' ';
        memcpy(buf + used, line + skip, n - skip);
        buf[used + n - skip] = 0;
      }
      have = 1;
    }
    if (!eol) break;
    line = eol + 1;
  }
  if (have) {
    CHECK_OK(cx_parse_literal(test_ctx(), buf, strlen(buf), &L->args[L->nargs]));
    if (L->args[L->nargs]) L->nargs++;
  }
  return 1;
}

static void unload(loaded *L) {
  for (int i = 0; i < L->nargs; i++) cxla_literal_destroy(L->args[i]);
  free(L->text);
}

/* One run of the pipeline; returns its status (CXLA_OK when every step succeeded) and the
 * number of injected failures. Injection is off when it returns. */
static cxla_status pipeline(const char *rel, loaded *L, int64_t *injected) {
  cxla_context *ctx = test_ctx();
  cx_module *m = NULL, *m2 = NULL;
  cxla_literal *out = NULL;
  char *text = NULL;
  cxla_status s = cx_parse_module(ctx, L->text, L->len, rel, &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s == CXLA_OK) {
    cx_sb sb;
    cx_sb_init(&sb);
    cx_print_opts o = cx_print_opts_canonical();
    cx_print_module(&sb, m, &o);
    text = cx_sb_take(&sb); /* NULL if an append failed */
    if (!text) s = CXLA_ERR_OUT_OF_MEMORY;
  }
  if (s == CXLA_OK) s = cx_parse_module(ctx, text, strlen(text), rel, &m2);
  if (s == CXLA_OK) s = cx_verify_module(m2);
  if (s == CXLA_OK) s = cx_interp_run(m2, L->nargs, L->args, &out);
  *injected = cx_alloc_failures(); /* read before cx_alloc_fail_after resets the count */
  cx_alloc_fail_after(-1);
  cxla_literal_destroy(out);
  cx_module_free(m);
  cx_module_free(m2);
  cx_free(text);
  return s;
}

static void fail_every_allocation(const char *rel) {
  loaded L;
  if (!load(rel, &L)) { unload(&L); return; }
  int64_t n;
  int bad = 0;
  for (n = 0; n < MAX_RUNS && bad < 3; n++) {
    cx_alloc_fail_after(n);
    int64_t injected = 0;
    cxla_status s = pipeline(rel, &L, &injected);
    if (injected == 0) {
      /* Nothing failed on purpose: the run must simply work, and then we are done. */
      CHECK_MSG(s == CXLA_OK, "%s: run with no injected failure failed: %s: %s", rel,
                cxla_status_str(s), cxla_context_errmsg(test_ctx()));
      break;
    }
    if (s != CXLA_OK && s != CXLA_ERR_OUT_OF_MEMORY) {
      test_fail(__FILE__, __LINE__, "%s: allocation %lld failed and the run returned %s ('%s'), expected out of memory",
                rel, (long long)n, cxla_status_str(s), cxla_context_errmsg(test_ctx()));
      bad++;
    }
  }
  printf("    %s: %lld allocation points failed in turn\n", rel, (long long)n);
  CHECK_MSG(n < MAX_RUNS, "%s: still injecting failures after %d runs", rel, MAX_RUNS);
  CHECK_MSG(n > 0, "%s: the pipeline allocated nothing, so nothing was tested", rel);
  unload(&L);
}

TEST(alloc_fail_jax_mlp) { fail_every_allocation("jax/jit_mlp.hlo"); }
TEST(alloc_fail_while) { fail_every_allocation("ops/while.hlo"); }
TEST(alloc_fail_reduce) { fail_every_allocation("ops/reduce_variadic.hlo"); }
TEST(alloc_fail_sort) { fail_every_allocation("ops/sort_variadic.hlo"); }
TEST(alloc_fail_conditional_legacy) { fail_every_allocation("legacy/conditional_legacy.hlo"); }

/* The public API path: parse, print, compile and run through cxla.h. */
TEST(alloc_fail_public_api) {
  loaded L;
  if (!load("jax/jit_softmax.hlo", &L)) { unload(&L); return; }
  cxla_context *ctx = test_ctx();
  int64_t n;
  for (n = 0; n < MAX_RUNS; n++) {
    cx_alloc_fail_after(n);
    cxla_module *m = NULL;
    cxla_literal *out = NULL;
    char *text = NULL;
    cxla_status s = cxla_module_parse(ctx, L.text, L.len, "jax/jit_softmax.hlo", &m);
    if (s == CXLA_OK) {
      text = cxla_module_to_string(m);
      if (!text) s = CXLA_ERR_OUT_OF_MEMORY;
    }
    if (s == CXLA_OK) {
      cxla_compile_options o;
      cxla_compile_options_init(&o);
      s = cxla_module_run(m, &o, L.nargs, L.args, &out);
    }
    int64_t injected = cx_alloc_failures(); /* read before cx_alloc_fail_after resets it */
    cx_alloc_fail_after(-1);
    free(text);
    cxla_literal_destroy(out);
    cxla_module_destroy(m);
    if (injected == 0) {
      CHECK_MSG(s == CXLA_OK, "run with no injected failure failed: %s: %s", cxla_status_str(s),
                cxla_context_errmsg(ctx));
      break;
    }
    if (s != CXLA_OK && s != CXLA_ERR_OUT_OF_MEMORY) {
      test_fail(__FILE__, __LINE__, "allocation %lld failed and the API returned %s ('%s'), expected out of memory",
                (long long)n, cxla_status_str(s), cxla_context_errmsg(ctx));
      break;
    }
  }
  CHECK(n > 0 && n < MAX_RUNS);
  unload(&L);
}

/* Every registered compiled backend, compiling (passes, buffer plans, code generation) and
 * running a small module through its hooks, so the executable cache cannot skip the
 * compile. Allocation failures inside the backend (not in LLVM's own memory) must also come
 * back as CXLA_ERR_OUT_OF_MEMORY. */
static cxla_status compile_and_run(const cx_backend *b, cx_module *m, loaded *L, int64_t *injected) {
  cxla_context *ctx = test_ctx();
  cxla_literal *out = NULL;
  void *state = NULL;
  cx_stats stats;
  cx_sb_init(&stats.times);
  cx_sb_init(&stats.counts);
  cxla_status s = CXLA_OK;
  cx_module *clone = cx_module_clone(m);
  if (!clone) s = CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = b->compile(ctx, clone, &ctx->flags, &state, &stats); /* owns clone */
  if (s == CXLA_OK) s = b->execute(state, ctx, L->nargs, L->args, &out);
  *injected = cx_alloc_failures();
  cx_alloc_fail_after(-1);
  if (state) b->destroy(state);
  cx_sb_free(&stats.times);
  cx_sb_free(&stats.counts);
  cxla_literal_destroy(out);
  return s;
}

TEST(alloc_fail_compiled_backends) {
  loaded L;
  if (!load("jax/jit_mlp.hlo", &L)) { unload(&L); return; }
  cxla_context *ctx = test_ctx();
  cx_module *m = NULL;
  CHECK_OK(cx_parse_module(ctx, L.text, L.len, "jax/jit_mlp.hlo", &m));
  if (m) CHECK_OK(cx_verify_module(m));
  const cx_backend *const *bs = cx_backend_list();
  for (int b = 0; m && bs[b]; b++) {
    if (!strcmp(bs[b]->name, "interp") || bs[b]->needs_device) continue;
    int64_t n, injected = 0;
    for (n = 0; n < MAX_RUNS; n++) {
      cx_alloc_fail_after(n);
      cxla_status s = compile_and_run(bs[b], m, &L, &injected);
      if (injected == 0) {
        CHECK_MSG(s == CXLA_OK, "%s: run with no injected failure failed: %s: %s", bs[b]->name,
                  cxla_status_str(s), cxla_context_errmsg(ctx));
        break;
      }
      if (s != CXLA_OK && s != CXLA_ERR_OUT_OF_MEMORY) {
        test_fail(__FILE__, __LINE__, "%s: allocation %lld failed and the run returned %s ('%s'), expected out of memory",
                  bs[b]->name, (long long)n, cxla_status_str(s), cxla_context_errmsg(ctx));
        break;
      }
    }
    printf("    %s backend: %lld allocation points failed in turn\n", bs[b]->name, (long long)n);
    CHECK(n < MAX_RUNS);
  }
  cx_module_free(m);
  unload(&L);
}
