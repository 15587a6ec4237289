/* test_runtime_cache.c — the executable cache: a repeat compile is a hit on the same compiled
 * core, options and flags that change code miss, handles outlive each other and the cache
 * (reference counts; run under ASan to see leaks and use-after-free), eviction is bounded and
 * LRU, and the generic cache itself. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "core/context.h"
#include "runtime/cache.h"
#include "runtime/executable.h"
#include "test.h"
#include "util/file.h"

static const char *text_fmt =
    "HloModule cached\n\nENTRY main {\n  x = f32[3]{0} parameter(0)\n  c = f32[3]{0} constant({%d, 2, 3})\n"
    "  ROOT y = f32[3]{0} multiply(x, c)\n}\n";

static cxla_module *module_k(cxla_context *ctx, int k) {
  char text[512];
  snprintf(text, sizeof text, text_fmt, k);
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "cached.hlo", &m));
  return m;
}

/* Runs e on x = {1, 1, 1} and returns element 0 of the result (k for module_k(k)). */
static double run0(cxla_executable *e) {
  int64_t d = 3;
  float ones[3] = {1, 1, 1};
  cxla_literal *l = cxla_literal_from_data(test_ctx(), CXLA_F32, 1, &d, ones, sizeof ones);
  cxla_buffer *b = NULL, *r = NULL;
  cxla_literal *out = NULL;
  double v = -1;
  if (cxla_buffer_from_literal(test_ctx(), NULL, l, &b) == CXLA_OK && cxla_executable_execute(e, 1, &b, &r) == CXLA_OK &&
      cxla_buffer_to_literal(r, &out) == CXLA_OK)
    v = cxla_literal_get_f64(out, 0);
  cxla_literal_destroy(l);
  cxla_literal_destroy(out);
  cxla_buffer_destroy(b);
  cxla_buffer_destroy(r);
  return v;
}

TEST(runtime_cache_second_compile_hits) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = module_k(ctx, 5);
  cxla_executable *e1 = NULL, *e2 = NULL;
  double t0 = cx_now_ms();
  CHECK_OK(cxla_compile(m, NULL, &e1));
  double t1 = cx_now_ms();
  CHECK_OK(cxla_compile(m, NULL, &e2));
  double t2 = cx_now_ms();
  if (!e1 || !e2) return;
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e1), "cache=miss");
  CHECK_STR_CONTAINS(cxla_executable_compile_stats(e1), "clone=");
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e2), "cache=hit");
  CHECK(strstr(cxla_executable_compile_stats(e2), "clone=") == NULL); /* nothing was compiled */
  CHECK(e1 != e2 && e1->core == e2->core);
  CHECK_EQ_INT(atomic_load(&e1->core->refs), 3); /* two handles + the cache entry */
  printf("    interp compile: miss %.3f ms, hit %.3f ms\n", t1 - t0, t2 - t1);
  /* A separately parsed module with the same text hits too. */
  cxla_module *m2 = module_k(ctx, 5);
  cxla_executable *e3 = NULL;
  CHECK_OK(cxla_compile(m2, NULL, &e3));
  CHECK(e3 && e3->core == e1->core);
  cx_cache_stats st = cx_cache_get_stats(cx_context_cache(ctx));
  CHECK_EQ_INT(st.hits, 2);
  CHECK_EQ_INT(st.misses, 1);
  /* Handles are independent: the first may go while the others run. */
  cxla_executable_destroy(e1);
  cxla_module_destroy(m);
  CHECK_NEAR(run0(e2), 5, 0);
  cxla_executable_destroy(e2);
  CHECK_NEAR(run0(e3), 5, 0);
  cxla_executable_destroy(e3);
  cxla_module_destroy(m2);
}

/* The key holds a constant's bytes (not its decimal text, which took 1 us an element: 2 s for
 * the splats of a jax-expanded erf_inv): two modules whose 300-element constants differ only in
 * the last element's lowest bit are two compiles with their own results. */
TEST(runtime_cache_key_holds_every_constant_byte) {
  cxla_context *ctx = test_ctx();
  cxla_executable *e[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    cx_sb sb;
    cx_sb_init(&sb);
    cx_sb_puts(&sb, "HloModule big\n\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                    "  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY main {\n  z = f32[] constant(0)\n"
                    "  c = f32[300] constant({");
    for (int i = 0; i < 300; i++) cx_sb_printf(&sb, "%s%s", i ? ", " : "", i < 299 ? "0.5" : k ? "1.00000012" : "1");
    cx_sb_puts(&sb, "})\n  ROOT r = f32[] reduce(c, z), dimensions={0}, to_apply=mx\n}\n");
    char *text = cx_sb_take(&sb);
    cxla_module *m = NULL;
    if (text) CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "big.hlo", &m));
    free(text);
    if (m) CHECK_OK(cxla_compile(m, NULL, &e[k]));
    if (e[k]) CHECK_STR_CONTAINS(cxla_executable_compile_counts(e[k]), "cache=miss");
    cxla_module_destroy(m);
  }
  if (e[0] && e[1]) {
    CHECK(e[0]->core != e[1]->core);
    cxla_buffer *r[2] = {NULL, NULL};
    cxla_literal *l[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
      if (cxla_executable_execute(e[k], 0, NULL, &r[k]) == CXLA_OK) CHECK_OK(cxla_buffer_to_literal(r[k], &l[k]));
    CHECK(l[0] && l[1]);
    if (l[0] && l[1]) {
      CHECK_NEAR(cxla_literal_get_f64(l[0], 0), 1.0, 0);
      CHECK(cxla_literal_get_f64(l[1], 0) > 1.0);
    }
    for (int k = 0; k < 2; k++) {
      cxla_literal_destroy(l[k]);
      cxla_buffer_destroy(r[k]);
    }
  }
  for (int k = 0; k < 2; k++) cxla_executable_destroy(e[k]);
}

TEST(runtime_cache_flags_and_options_miss) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = module_k(ctx, 2);
  cxla_executable *base = NULL, *e = NULL;
  CHECK_OK(cxla_compile(m, NULL, &base));
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.opt_level = 0; /* differs from the default 2 */
  CHECK_OK(cxla_compile(m, &o, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=miss");
  cxla_executable_destroy(e);
  cxla_compile_options_init(&o);
  o.threads = 3;
  CHECK_OK(cxla_compile(m, &o, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=miss");
  cxla_executable_destroy(e);
  CHECK_OK(cxla_context_set_flags(ctx, "--fusion=off"));
  CHECK_OK(cxla_compile(m, NULL, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=miss");
  CHECK(e && base && e->core != base->core);
  cxla_executable_destroy(e);
  /* --trace does not change what compiles. */
  CHECK_OK(cxla_context_set_flags(ctx, "--fusion=on --trace=/dev/null"));
  CHECK_OK(cxla_compile(m, NULL, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=hit");
  CHECK(e && base && e->core == base->core);
  cxla_executable_destroy(e);
  /* A different module text misses. */
  cxla_module *m3 = module_k(ctx, 3);
  CHECK_OK(cxla_compile(m3, NULL, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=miss");
  cxla_executable_destroy(e);
  /* --dump-to always compiles (the dumps are what the caller wants). */
  CHECK_OK(cxla_context_set_flags(ctx, "--dump-to=/tmp/cxla_cache_dump_test"));
  CHECK_OK(cxla_compile(m, NULL, &e));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=off");
  cxla_executable_destroy(e);
  cxla_executable_destroy(base);
  cxla_module_destroy(m);
  cxla_module_destroy(m3);
}

TEST(runtime_cache_is_bounded_lru) {
  cxla_context *ctx = test_ctx();
  enum { N = CX_CACHE_DEFAULT_CAPACITY + 6 };
  cxla_executable *keep = NULL;
  for (int k = 0; k < N; k++) {
    cxla_module *m = module_k(ctx, k);
    cxla_executable *e = NULL;
    CHECK_OK(cxla_compile(m, NULL, &e));
    if (k == 0) keep = e; /* held by the caller past its eviction */
    else cxla_executable_destroy(e);
    cxla_module_destroy(m);
    if (k == 10) { /* touch module 1: now 2..10 are older than it */
      cxla_module *m1 = module_k(ctx, 1);
      CHECK_OK(cxla_compile(m1, NULL, &e));
      CHECK_STR_CONTAINS(cxla_executable_compile_counts(e), "cache=hit");
      cxla_executable_destroy(e);
      cxla_module_destroy(m1);
    }
  }
  cx_cache_stats st = cx_cache_get_stats(cx_context_cache(ctx));
  CHECK_EQ_INT(st.size, CX_CACHE_DEFAULT_CAPACITY);
  CHECK_EQ_INT(st.evictions, N - CX_CACHE_DEFAULT_CAPACITY);
  /* Entry 0 was evicted but its handle still works. */
  CHECK_NEAR(run0(keep), 0, 0);
  cxla_executable_destroy(keep);
  /* Oldest first: 0 and 2..6 went; 1 was used after them and stays. */
  cxla_module *m1 = module_k(ctx, 1), *m2 = module_k(ctx, 2);
  cxla_executable *e1 = NULL, *e2 = NULL;
  CHECK_OK(cxla_compile(m1, NULL, &e1));
  CHECK_OK(cxla_compile(m2, NULL, &e2));
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e1), "cache=hit");
  CHECK_STR_CONTAINS(cxla_executable_compile_counts(e2), "cache=miss");
  cxla_executable_destroy(e1);
  cxla_executable_destroy(e2);
  cxla_module_destroy(m1);
  cxla_module_destroy(m2);
}

/* Handles sharing one core, executed and released from several threads at once. */
typedef struct {
  cxla_executable *e;
  int bad;
} worker_arg;
static void *exec_and_release(void *arg) {
  worker_arg *w = arg;
  for (int i = 0; i < 20; i++) w->bad += run0(w->e) != 7;
  cxla_executable_destroy(w->e);
  return NULL;
}

TEST(runtime_cache_handles_across_threads) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = module_k(ctx, 7);
  worker_arg w[6];
  for (int i = 0; i < 6; i++) {
    w[i] = (worker_arg){NULL, 0};
    CHECK_OK(cxla_compile(m, NULL, &w[i].e));
  }
  cxla_module_destroy(m);
  pthread_t th[6];
  for (int i = 0; i < 6; i++) pthread_create(&th[i], NULL, exec_and_release, &w[i]);
  for (int i = 0; i < 6; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(w[i].bad, 0);
  }
}

/* ---- the generic cache ---- */
static int live;
static void ref(void *v) { (*(int *)v)++; }
static void unref(void *v) {
  if (--(*(int *)v) == 0) live--;
}

TEST(runtime_cache_generic_refcounts) {
  int a = 1, b = 1, c = 1; /* each starts with its creator's reference */
  live = 3;
  cx_cache *k = cx_cache_create(2, ref, unref);
  CHECK(cx_cache_insert(k, "a", 1, cx_cache_hash("a", 1), &a));
  CHECK(cx_cache_insert(k, "b", 1, cx_cache_hash("b", 1), &b));
  CHECK_EQ_INT(a, 2);
  int *got = cx_cache_lookup(k, "a", 1, cx_cache_hash("a", 1));
  CHECK(got == &a && a == 3);
  unref(got);
  CHECK(cx_cache_lookup(k, "ab", 2, cx_cache_hash("ab", 2)) == NULL);
  CHECK(cx_cache_insert(k, "c", 1, cx_cache_hash("c", 1), &c)); /* evicts b (a was used) */
  CHECK_EQ_INT(b, 1);
  CHECK(cx_cache_lookup(k, "b", 1, cx_cache_hash("b", 1)) == NULL);
  /* Replacing the value of a key drops the old one. */
  CHECK(cx_cache_insert(k, "c", 1, cx_cache_hash("c", 1), &b));
  CHECK_EQ_INT(c, 1);
  CHECK_EQ_INT(b, 2);
  cx_cache_stats st = cx_cache_get_stats(k);
  CHECK_EQ_INT(st.size, 2);
  CHECK_EQ_INT(st.evictions, 1);
  CHECK_EQ_INT(st.hits, 1);
  CHECK_EQ_INT(st.misses, 2);
  cx_cache_destroy(k);
  CHECK(a == 1 && b == 1 && c == 1);
  CHECK_EQ_INT(live, 3);
  /* Insert under allocation failure leaves the cache as it was. */
  k = cx_cache_create(2, ref, unref);
  cx_alloc_fail_after(0);
  CHECK(!cx_cache_insert(k, "a", 1, cx_cache_hash("a", 1), &a));
  cx_alloc_fail_after(-1);
  CHECK_EQ_INT(a, 1);
  CHECK_EQ_INT(cx_cache_get_stats(k).size, 0);
  cx_cache_destroy(k);
}

/* With a compiling backend the second compile is a hit that runs the first one's code (its
 * counts say so; the times are printed, not asserted: the machines are shared and noisy). */
TEST(runtime_cache_hit_skips_cpu_compile) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = module_k(ctx, 4);
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  cxla_executable *e1 = NULL, *e2 = NULL;
  double t0 = cx_now_ms();
  CHECK_OK(cxla_compile(m, &o, &e1));
  double t1 = cx_now_ms();
  CHECK_OK(cxla_compile(m, &o, &e2));
  double t2 = cx_now_ms();
  if (e1 && e2) {
    printf("    cpu compile: miss %.3f ms, hit %.3f ms\n", t1 - t0, t2 - t1);
    CHECK_STR_CONTAINS(cxla_executable_compile_counts(e2), "cache=hit");
    CHECK_NEAR(run0(e2), 4, 0);
    cxla_executable_destroy(e1);
    CHECK_NEAR(run0(e2), 4, 0); /* the shared JIT code outlives the first handle */
  }
  cxla_executable_destroy(e2);
  cxla_module_destroy(m);
}
