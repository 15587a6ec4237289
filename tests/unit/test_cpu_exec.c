/* test_cpu_exec.c — the cpu backend end to end: native sort and scatter, interpreter
 * fallbacks (a scatter whose combiner calls a computation) give the right answers and are
 * counted, errors inside a fallback surface as errors, compile
 * stats and --dump-to files, empty arrays, one executable run from 8 threads at once, and the
 * JAX corpus modules with fusion off (one kernel per op) against the interpreter. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/context.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "runtime/executable.h"
#include "util/file.h"
#include "test_cpu_helpers.h"

static const char sort_text[] =
    "HloModule s\n"
    "lt {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[2,5] parameter(0)\n"
    "  n = f32[2,5] negate(x)\n"
    "  ROOT s = f32[2,5] sort(n), dimensions={1}, to_apply=lt\n"
    "}\n";

static const char scatter_text[] =
    "HloModule sc\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[6] parameter(0)\n"
    "  i = s32[4,1] parameter(1)\n"
    "  u = f32[4] parameter(2)\n"
    "  e = f32[6] exponential(x)\n"
    "  s = f32[6] scatter(e, i, u), update_window_dims={}, inserted_window_dims={0},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "  ROOT r = f32[6] multiply(s, s)\n"
    "}\n";

/* A combiner the emitter cannot compile (it runs a while loop) keeps the scatter on the
 * interpreter: still correct, and counted. */
static const char scatter_call_text[] =
    "HloModule scc\n"
    "cond {\n"
    "  s = (f32[], f32[], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=2\n"
    "  n = s32[] constant(2)\n"
    "  ROOT c = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (f32[], f32[], s32[]) parameter(0)\n"
    "  a = f32[] get-tuple-element(s), index=0\n"
    "  b = f32[] get-tuple-element(s), index=1\n"
    "  i = s32[] get-tuple-element(s), index=2\n"
    "  ab = f32[] add(a, b)\n"
    "  one = s32[] constant(1)\n"
    "  ni = s32[] add(i, one)\n"
    "  ROOT t = (f32[], f32[], s32[]) tuple(ab, b, ni)\n"
    "}\n"
    "comb {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  z = s32[] constant(0)\n"
    "  t = (f32[], f32[], s32[]) tuple(a, b, z)\n"
    "  w = (f32[], f32[], s32[]) while(t), condition=cond, body=body\n"
    "  ROOT c = f32[] get-tuple-element(w), index=0\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[6] parameter(0)\n"
    "  i = s32[4,1] parameter(1)\n"
    "  u = f32[4] parameter(2)\n"
    "  e = f32[6] exponential(x)\n"
    "  ROOT s = f32[6] scatter(e, i, u), update_window_dims={}, inserted_window_dims={0},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb\n"
    "}\n";

TEST(cpu_exec_fallbacks_are_correct_and_counted) {
  const char *in[1] = {"f32[2,5] {{3, 1, 4, 1, 5}, {9, -2, 6, 5, 3}}"};
  char *stats = NULL;
  cxla_literal *got = NULL;
  CHECK(cpu_check(sort_text, 1, in, NULL, 0, 0, &stats, &got));
  CHECK_EQ_INT(cpu_fallbacks(stats), 0); /* sort is native (rt/sort.c) */
  if (got) { /* sorted -x ascending: row 0 = -5 -4 -3 -1 -1 */
    CHECK_NEAR(cxla_literal_get_f64(got, 0), -5, 0);
    CHECK_NEAR(cxla_literal_get_f64(got, 4), -1, 0);
    CHECK_NEAR(cxla_literal_get_f64(got, 5), -9, 0);
  }
  cxla_literal_destroy(got);
  free(stats);
  const char *sin[3] = {"f32[6] {0, 1, 0, -1, 0.5, 2}", "s32[4,1] {{0}, {5}, {0}, {9}}", "f32[4] {1, 2, 3, 4}"};
  CHECK(cpu_check(scatter_text, 3, sin, NULL, 1e-6, 1e-6, &stats, NULL));
  CHECK_EQ_INT(cpu_fallbacks(stats), 0);
  free(stats);
  CHECK(cpu_check(scatter_text, 3, sin, "--fusion=off", 1e-6, 1e-6, &stats, NULL));
  CHECK_EQ_INT(cpu_fallbacks(stats), 0);
  free(stats);
  CHECK(cpu_check(scatter_call_text, 3, sin, NULL, 1e-6, 1e-6, &stats, NULL));
  CHECK_EQ_INT(cpu_fallbacks(stats), 1);
  free(stats);
}

TEST(cpu_exec_fallback_errors_surface) {
  static const char text[] = "HloModule cc\n"
                             "ENTRY main {\n"
                             "  x = f32[4] parameter(0)\n"
                             "  n = f32[4] negate(x)\n"
                             "  ROOT c = f32[4] custom-call(n), custom_call_target=\"no_such_target\"\n"
                             "}\n";
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, sizeof text - 1, "cc.hlo", &m));
  cxla_literal *x = cpu_lit("f32[4] {1, 2, 3, 4}"), *out = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  cxla_status s = cxla_module_run(m, &o, 1, &x, &out);
  CHECK(s != CXLA_OK && out == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "custom-call");
  cxla_literal_destroy(x);
  cxla_module_destroy(m);
}

/* A dump file whole, NUL-terminated (NULL if missing); the caller frees with cx_free. */
static char *read_dump(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unsigned char *b = NULL;
  size_t n = 0;
  return cx_read_file(test_ctx(), path, &b, &n) == CXLA_OK ? (char *)b : NULL;
}

static void remove_dumps(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[512];
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* A kernel inside a while loop may be inlined into cx_entry, whose vector width then decides
 * its code: a loop body's tanh (which asks for 512-bit vectors on an AVX-512 host) makes
 * cx_entry ask for them too, and only there. */
TEST(cpu_exec_loop_kernels_keep_their_vector_width) {
  static const char text[] =
      "HloModule scan\n"
      "body {\n p = (s32[], f32[64]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " x = f32[64] get-tuple-element(p), index=1\n one = s32[] constant(1)\n n = s32[] add(i, one)\n"
      " t = f32[64] tanh(x)\n ROOT r = (s32[], f32[64]) tuple(n, t)\n}\n"
      "cond {\n p = (s32[], f32[64]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " k = s32[] constant(5)\n ROOT c = pred[] compare(i, k), direction=LT\n}\n"
      "ENTRY e {\n x = f32[64] parameter(0)\n z = s32[] constant(0)\n"
      " s = (s32[], f32[64]) tuple(z, x)\n w = (s32[], f32[64]) while(s), condition=cond, body=body\n"
      " ROOT y = f32[64] get-tuple-element(w), index=1\n}\n";
  char dir[] = "/tmp/cxla_cpu_widthXXXXXX";
  if (!mkdtemp(dir)) { CHECK_MSG(0, "mkdtemp failed"); return; }
  char flags[256];
  snprintf(flags, sizeof flags, "--dump-to=%s", dir);
  char *in = cpu_ramp("f32", 64, 64, 0.05, -1.5);
  const char *inputs[1] = {in};
  CHECK(cpu_check(text, 1, inputs, flags, 1e-6, 1e-6, NULL, NULL));
  free(in);
  char *ir = read_dump(dir, "module_0000.scan.ir-after-opt.ll");
  CHECK_MSG(ir != NULL, "no IR dump in %s", dir);
  /* cx_entry's attribute group, and whether it asks for 512-bit vectors */
  const char *def = ir ? strstr(ir, "define void @cx_entry(") : NULL;
  const char *eol = def ? strchr(def, '\n') : NULL, *hash = def ? strchr(def, '#') : NULL;
  int group = hash && eol && hash < eol ? atoi(hash + 1) : -1, wide = 0;
  if (group >= 0) {
    char key[64];
    snprintf(key, sizeof key, "attributes #%d = {", group);
    const char *a = strstr(ir, key), *end = a ? strchr(a, '\n') : NULL;
    const char *pw = a ? strstr(a, "\"prefer-vector-width\"=\"512\"") : NULL;
    wide = pw && end && pw < end;
  }
#if defined(__x86_64__)
  int avx512 = __builtin_cpu_supports("avx512f") != 0;
#else
  int avx512 = 0;
#endif
  CHECK_MSG(wide == avx512, "cx_entry %s 512-bit vectors on a host %s AVX-512", wide ? "asks for" : "does not ask for",
            avx512 ? "with" : "without");
  cx_free(ir);
  remove_dumps(dir);
}

TEST(cpu_exec_stats_and_dumps) {
  char dir[] = "/tmp/cxla_cpu_dumpXXXXXX";
  if (!mkdtemp(dir)) { CHECK_MSG(0, "mkdtemp failed"); return; }
  char flags[256];
  snprintf(flags, sizeof flags, "--dump-to=%s", dir);
  const char *in[3] = {"f32[6] {0, 1, 0, -1, 0.5, 2}", "s32[4,1] {{0}, {5}, {0}, {9}}", "f32[4] {1, 2, 3, 4}"};
  char *stats = NULL;
  CHECK(cpu_check(scatter_call_text, 3, in, flags, 1e-6, 1e-6, &stats, NULL));
  /* phases (wall clock) before the bar, counts after it: none of one kind among the other */
  static const char *keys[] = {"passes=", "buffers=", "emit=", "llvm=", "link=", "| ", "kernels=", "fallbacks=",
                               "opt_cpu_ms=", "codegen_cpu_ms=", "llvm_threads="};
  for (int i = 0; i < 11; i++) CHECK_STR_CONTAINS(stats, keys[i]);
  const char *bar = stats ? strstr(stats, " | ") : NULL;
  CHECK(bar && !strstr(bar, "llvm=") && strstr(stats, "llvm_threads=") > bar && strstr(stats, "fallbacks=") > bar);
  free(stats);
  static const char *files[] = {"module_0000.scc.buffer-assignment.txt", "module_0000.scc.ir-before-opt.ll",
                                "module_0000.scc.ir-after-opt.ll", "module_0000.scc.s"};
  for (int i = 0; i < 4; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    struct stat st;
    CHECK_MSG(stat(path, &st) == 0 && st.st_size > 0, "missing dump %s", path);
  }
  char path[512];
  snprintf(path, sizeof path, "%s/module_0000.scc.buffer-assignment.txt", dir);
  FILE *f = fopen(path, "r");
  char buf[8192] = {0};
  if (f) {
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
  }
  CHECK_STR_CONTAINS(buf, "fallbacks=1");
  CHECK_STR_CONTAINS(buf, "(scatter) runs on the interpreter");
  CHECK_STR_CONTAINS(buf, "output");
  remove_dumps(dir);
}

/* Four kernels (two reductions over different axes, their broadcast uses, a sum) that no
 * fusion merges: with 2 compile threads they spread over shards (modules compiled in
 * parallel), with 1 thread they share one; either way the answers are the interpreter's. */
static const char shards_text[] =
    "HloModule sh\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[3,4] parameter(0)\n"
    "  z = f32[] constant(0)\n"
    "  e = f32[3,4] exponential(x)\n"
    "  r = f32[3] reduce(e, z), dimensions={1}, to_apply=add\n"
    "  c = f32[4] reduce(e, z), dimensions={0}, to_apply=add\n"
    "  rb = f32[3,4] broadcast(r), dimensions={0}\n"
    "  cb = f32[3,4] broadcast(c), dimensions={1}\n"
    "  d = f32[3,4] divide(e, rb)\n"
    "  t = f32[] reduce(d, z), dimensions={0,1}, to_apply=add\n"
    "  tb = f32[3,4] broadcast(t), dimensions={}\n"
    "  ROOT o = f32[3,4] add(cb, tb)\n"
    "}\n";

static int stat_int(const char *stats, const char *key) {
  const char *p = stats ? strstr(stats, key) : NULL;
  return p ? atoi(p + strlen(key)) : -1;
}

TEST(cpu_exec_kernels_compile_in_parallel_modules) {
  const char *in[1] = {"f32[3,4] {{0.5, -1, 2, 0}, {1, 1, -3, 0.25}, {0, 2, 1, -1}}"};
  char *stats = NULL;
  CHECK(cpu_check(shards_text, 1, in, "--threads=2", 1e-6, 1e-6, &stats, NULL));
  int modules = stat_int(stats, "llvm_modules="), threads = stat_int(stats, "llvm_threads=");
  CHECK_MSG(modules >= 4, "expected the sequencer and 3+ kernel modules: %s", stats ? stats : "");
  CHECK_EQ_INT(threads, 2);
  CHECK(stat_int(stats, "fallbacks=") == 0);
  free(stats);
  stats = NULL;
  CHECK(cpu_check(shards_text, 1, in, "--threads=1", 1e-6, 1e-6, &stats, NULL));
  CHECK_EQ_INT(stat_int(stats, "llvm_modules="), 2);
  CHECK_EQ_INT(stat_int(stats, "llvm_threads="), 1);
  free(stats);
}

/* The sequencer's module takes LLVM's fast code generator when it holds the sequencer alone
 * (llvm_compile.c): a sort's comparator goes to a kernel module, called through its address
 * from there; a kernel inside a while loop stays beside the sequencer, to be inlined, and then
 * the module keeps the optimising code generator. */
static const char loop_kernel_text[] = "HloModule wl\n"
                                       "cond {\n"
                                       "  s = (s32[], f32[8]) parameter(0)\n"
                                       "  i = s32[] get-tuple-element(s), index=0\n"
                                       "  n = s32[] constant(3)\n"
                                       "  ROOT c = pred[] compare(i, n), direction=LT\n"
                                       "}\n"
                                       "body {\n"
                                       "  s = (s32[], f32[8]) parameter(0)\n"
                                       "  i = s32[] get-tuple-element(s), index=0\n"
                                       "  one = s32[] constant(1)\n"
                                       "  j = s32[] add(i, one)\n"
                                       "  x = f32[8] get-tuple-element(s), index=1\n"
                                       "  y = f32[8] multiply(x, x)\n"
                                       "  ROOT t = (s32[], f32[8]) tuple(j, y)\n"
                                       "}\n"
                                       "ENTRY main {\n"
                                       "  x = f32[8] parameter(0)\n"
                                       "  z = s32[] constant(0)\n"
                                       "  t = (s32[], f32[8]) tuple(z, x)\n"
                                       "  w = (s32[], f32[8]) while(t), condition=cond, body=body\n"
                                       "  ROOT r = f32[8] get-tuple-element(w), index=1\n"
                                       "}\n";

TEST(cpu_exec_sequencer_alone_fast_codegen) {
  const char *sin[1] = {"f32[2,5] {{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}"};
  char *stats = NULL;
  for (int t = 1; t <= 2; t++) {
    CHECK(cpu_check(sort_text, 1, sin, t == 1 ? "--threads=1" : "--threads=2", 0, 0, &stats, NULL));
    CHECK_MSG(stat_int(stats, "llvm_fast_modules=") == 1 && stat_int(stats, "fallbacks=") == 0,
              "--threads=%d: the sort's comparator beside the sequencer: %s", t, stats ? stats : "");
    free(stats);
    stats = NULL;
  }
  const char *lin[1] = {"f32[8] {1, -1, 0.5, 2, -2, 0.25, 3, 1.5}"};
  CHECK(cpu_check(loop_kernel_text, 1, lin, "--threads=2", 1e-6, 1e-6, &stats, NULL));
  CHECK_MSG(stat_int(stats, "llvm_fast_modules=") == 0 && stat_int(stats, "fallbacks=") == 0,
            "a loop body's kernel beside the sequencer: %s", stats ? stats : "");
  free(stats);
}

/* OpenBLAS runs on one thread during every execution, with a pool or without (--threads=1),
 * even where the program set it to more since (rt/blas_core.c): cxla splits GEMMs over its own
 * pool, and OpenBLAS's idle threads spin in sched_yield, taking the cores. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
TEST(cpu_exec_openblas_on_one_thread) {
  static const char text[] = "HloModule g\n"
                             "ENTRY main {\n"
                             "  a = f32[2,3] parameter(0)\n"
                             "  b = f32[3,2] parameter(1)\n"
                             "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                             "}\n";
  const char *in[2] = {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[3,2] {{1, 0}, {0, 1}, {1, 1}}"};
  for (int t = 1; t <= 2; t++) {
    openblas_set_num_threads(2);
    CHECK(cpu_check(text, 2, in, t == 1 ? "--threads=1" : "--threads=2", 1e-6, 1e-6, NULL, NULL));
    CHECK_MSG(openblas_get_num_threads() == 1, "--threads=%d: OpenBLAS on %d threads after an execution", t,
              openblas_get_num_threads());
  }
}

/* A cpu compile stops the workers OpenBLAS's pthread build keeps (they spin for their first
 * 0.1 s, and after each job, beside the compile: rt/blas_core.c), and sets one thread before
 * any execution. blas_thread_init starts them and blas_server_avail says whether they run
 * (OpenBLAS's own exports, looked up: another BLAS has neither, and then only the thread count
 * is checked). */
TEST(cpu_exec_compile_stops_openblas_workers) {
  int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_init");
  int *avail = (int *)dlsym(RTLD_DEFAULT, "blas_server_avail");
  static const char text[] = "HloModule w\nENTRY main {\n  a = f32[4] parameter(0)\n"
                             "  ROOT n = f32[4] negate(a)\n}\n";
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, sizeof text - 1, "w.hlo", &m));
  if (!m) return;
  openblas_set_num_threads(2);
  if (start && avail) {
    start();
    CHECK_MSG(*avail, "blas_thread_init started no workers");
  }
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, &o, &e));
  CHECK_EQ_INT(openblas_get_num_threads(), 1);
  if (start && avail) CHECK_MSG(!*avail, "OpenBLAS's workers still run after a cpu compile");
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

TEST(cpu_exec_empty_arrays) {
  static const char text[] = "HloModule z\n"
                             "ENTRY main {\n"
                             "  a = f32[3,0] parameter(0)\n"
                             "  b = f32[0,4] parameter(1)\n"
                             "  x = f32[0] parameter(2)\n"
                             "  d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                             "  e = f32[0] exponential(x)\n"
                             "  ROOT t = (f32[3,4], f32[0]) tuple(d, e)\n"
                             "}\n";
  const char *in[3] = {"f32[3,0] {{}, {}, {}}", "f32[0,4] {}", "f32[0] {}"};
  CHECK(cpu_check(text, 3, in, NULL, 0, 0, NULL, NULL));
  /* A kernel over zero elements must not even be called: its index arithmetic may divide by
   * a zero dimension, and a direct call after the reduce-window once let LLVM treat the rest
   * of cx_entry as unreachable (a crash; found by the random graph tests). */
  static const char text2[] =
      "HloModule s1\n"
      "minimum_f16 {\n"
      "  a = f16[] parameter(0)\n"
      "  b = f16[] parameter(1)\n"
      "  ROOT m = f16[] minimum(a, b)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f16[2,8,22] parameter(0)\n"
      "  c = f16[] constant(inf)\n"
      "  rw = f16[3,4,21] reduce-window(x, c), window={size=1x3x3 stride=2x1x2 pad=2_2x0_0x0_0 lhs_dilate=1x1x2 "
      "rhs_dilate=1x2x1}, to_apply=minimum_f16\n"
      "  n = f16[3,4,21] negate(rw)\n"
      "  s = f16[3,0,0] slice(n), slice={[0:3], [2:2], [9:9]}\n"
      "  ROOT r = (f16[3,0,0]) tuple(s)\n"
      "}\n";
  int64_t dims[3] = {2, 8, 22};
  char *x = cpu_ramp_nd("f16", dims, 3, 7, 0.5, -1);
  const char *in2[1] = {x};
  CHECK(cpu_check(text2, 1, in2, NULL, 0, 0, NULL, NULL));
  CHECK(cpu_check(text2, 1, in2, "--fusion=off", 0, 0, NULL, NULL));
  free(x);
}

/* ---- 8 threads, one executable ---- */

static const char mt_text[] =
    "HloModule mt\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n"
    "}\n"
    "cond {\n"
    "  s = (s32[], f32[16,16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[16,16]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[16,16] get-tuple-element(s), index=1\n"
    "  d = f32[16,16] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  z = f32[] constant(0)\n"
    "  r = f32[16] reduce(d, z), dimensions={1}, to_apply=add\n"
    "  rb = f32[16,16] broadcast(r), dimensions={0}\n"
    "  q = f32[16,16] divide(d, rb)\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[16,16]) tuple(i2, q)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[16,16] parameter(0)\n"
    "  e = f32[16,16] exponential(x)\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[16,16]) tuple(z, e)\n"
    "  w = (s32[], f32[16,16]) while(init), condition=cond, body=body\n"
    "  ROOT o = f32[16,16] get-tuple-element(w), index=1\n"
    "}\n";

typedef struct job {
  cxla_executable *e;
  cxla_literal *in[4], *want[4];
  int bad;
} job;

static void *worker(void *p) {
  job *j = p;
  for (int it = 0; it < 24; it++) {
    int k = it % 4;
    cxla_buffer *a = NULL, *r = NULL;
    cxla_literal *got = NULL;
    if (cxla_buffer_from_literal(test_ctx(), "cpu", j->in[k], &a) != CXLA_OK ||
        cxla_executable_execute(j->e, 1, &a, &r) != CXLA_OK || cxla_buffer_to_literal(r, &got) != CXLA_OK ||
        !cx_literal_compare(got, j->want[k], 1e-5, 1e-6, NULL))
      j->bad++;
    cxla_literal_destroy(got);
    cxla_buffer_destroy(a);
    cxla_buffer_destroy(r);
  }
  return NULL;
}

TEST(cpu_exec_eight_threads_one_executable) {
  cxla_context *ctx = test_ctx();
  CHECK_OK(cxla_context_set_flags(ctx, "--threads=2"));
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, mt_text, sizeof mt_text - 1, "mt.hlo", &m));
  if (!m) return;
  job jobs[8];
  memset(jobs, 0, sizeof jobs);
  cxla_literal *in[4] = {0}, *want[4] = {0};
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  int64_t dims[2] = {16, 16};
  for (int k = 0; k < 4; k++) {
    char *text = cpu_ramp_nd("f32", dims, 2, 11 + k, 0.125, -0.5 * k);
    in[k] = text ? cpu_lit(text) : NULL;
    free(text);
    CHECK_OK(cxla_module_run(m, &o, 1, &in[k], &want[k])); /* the interpreter */
  }
  o.backend = "cpu";
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(m, &o, &e));
  pthread_t th[8];
  for (int t = 0; t < 8 && e; t++) {
    jobs[t].e = e;
    for (int k = 0; k < 4; k++) jobs[t].in[k] = in[(k + t) % 4], jobs[t].want[k] = want[(k + t) % 4];
    pthread_create(&th[t], NULL, worker, &jobs[t]);
  }
  for (int t = 0; t < 8 && e; t++) {
    pthread_join(th[t], NULL);
    CHECK_EQ_INT(jobs[t].bad, 0);
  }
  cxla_executable_destroy(e);
  for (int k = 0; k < 4; k++) {
    cxla_literal_destroy(in[k]);
    cxla_literal_destroy(want[k]);
  }
  cxla_module_destroy(m);
  CHECK_OK(cxla_context_set_flags(ctx, "--threads=0"));
}

/* ---- the JAX corpus, one kernel per op ---- */

/* INPUT directives of a corpus file ("// INPUT: ..." plus "// ..." continuation lines); more
 * than `max` count as max + 1 (the caller's check then fails on the count). */
static int read_inputs(const char *text, char **inputs, int max) {
  int n = 0, more = 0;
  cx_sb *cur = NULL, sbs[CPU_CHECK_MAX_ARGS];
  const char *p = text;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *q = p;
    while (q < p + len && (*q == ' ' || *q == '\t')) q++;
    if (!strncmp(q, "// INPUT:", 9) && n >= max) more = 1;
    if (!strncmp(q, "// INPUT:", 9) && n < max) {
      cur = &sbs[n++];
      cx_sb_init(cur);
      cx_sb_putn(cur, q + 9, len - (size_t)(q + 9 - p));
    } else if (!strncmp(q, "// ...", 6) && cur) {
      cx_sb_putc(cur, ' ');
      cx_sb_putn(cur, q + 6, len - (size_t)(q + 6 - p));
    } else {
      cur = NULL;
    }
    p += len + (e ? 1 : 0);
  }
  for (int i = 0; i < n; i++) {
    char *t = cx_sb_take(&sbs[i]);
    inputs[i] = t ? strdup(t) : NULL;
    cx_free(t);
  }
  return n + more;
}

TEST(cpu_exec_jax_corpus_fusion_off) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/hlo/jax", test_srcdir());
  DIR *d = opendir(dir);
  CHECK_MSG(d != NULL, "cannot open %s (set CXLA_SRC)", dir);
  struct dirent *e;
  int files = 0;
  while (d && (e = readdir(d))) {
    size_t nl = strlen(e->d_name);
    if (nl < 5 || strcmp(e->d_name + nl - 4, ".hlo")) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    cx_sb sb;
    cx_sb_init(&sb);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) cx_sb_putn(&sb, buf, n);
    fclose(f);
    char *text = cx_sb_take(&sb), *inputs[CPU_CHECK_MAX_ARGS] = {0};
    int ni = text ? read_inputs(text, inputs, CPU_CHECK_MAX_ARGS) : 0;
    const char *in[CPU_CHECK_MAX_ARGS + 1];
    for (int i = 0; i < ni; i++) in[i] = i < CPU_CHECK_MAX_ARGS ? inputs[i] : NULL;
    CHECK_MSG(text && cpu_check(text, ni, in, "--fusion=off", 1e-4, 1e-5, NULL, NULL), "%s with --fusion=off", e->d_name);
    for (int i = 0; i < ni && i < CPU_CHECK_MAX_ARGS; i++) free(inputs[i]);
    cx_free(text);
    files++;
  }
  if (d) closedir(d);
  CHECK(files >= 10);
}

/* Every allocation the cpu backend makes (passes, lowering, buffers, sequencer, fallbacks,
 * execution) may fail: the run then reports out of memory, never crashes or returns a wrong
 * result. Through the backend hooks, so the executable cache cannot skip the compile. */
TEST(cpu_exec_allocation_failures) {
  static const char text[] =
      "HloModule oom\n"
      "lt {\n"
      "  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(a, b), direction=LT\n"
      "}\n"
      "cond {\n"
      "  s = (s32[], f32[4,3]) parameter(0)\n"
      "  i = s32[] get-tuple-element(s), index=0\n"
      "  n = s32[] constant(2)\n"
      "  ROOT p = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  s = (s32[], f32[4,3]) parameter(0)\n"
      "  i = s32[] get-tuple-element(s), index=0\n"
      "  x = f32[4,3] get-tuple-element(s), index=1\n"
      "  y = f32[4,3] sort(x), dimensions={1}, to_apply=lt\n"
      "  one = s32[] constant(1)\n"
      "  i2 = s32[] add(i, one)\n"
      "  ROOT r = (s32[], f32[4,3]) tuple(i2, y)\n"
      "}\n"
      "neg {\n"
      "  x = f32[3,4] parameter(0)\n"
      "  ROOT n = f32[3,4] negate(x)\n"
      "}\n"
      "id {\n"
      "  x = f32[3,4] parameter(0)\n"
      "  ROOT c = f32[3,4] copy(x)\n"
      "}\n"
      "ENTRY main {\n"
      "  a = f32[4,3] parameter(0)\n"
      "  p = pred[] parameter(1)\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[4,3]) tuple(z, a)\n"
      "  w = (s32[], f32[4,3]) while(init), condition=cond, body=body\n"
      "  b = f32[4,3] get-tuple-element(w), index=1\n"
      "  d = f32[3,3] dot(b, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
      "  t = f32[3,4] transpose(a), dimensions={1,0}\n"
      "  c = f32[3,4] conditional(p, t, t), true_computation=neg, false_computation=id\n"
      "  ROOT r = (f32[3,3], f32[3,4], f32[4,3]) tuple(d, c, a)\n"
      "}\n";
  cxla_context *ctx = test_ctx();
  cx_module *m = cpu_parse(text);
  const cx_backend *be = cx_backend_find("cpu");
  cxla_literal *args[2] = {cpu_lit("f32[4,3] {{3, 1, 2}, {0.5, -1, 4}, {2, 2, 1}, {-3, 0, 1}}"), cpu_lit("pred[] true")};
  cxla_literal *want = NULL;
  if (m) CHECK_OK(cx_interp_run(m, 2, args, &want));
  int64_t n = 0;
  for (; m && be && want && n < 5000; n++) {
    cx_module *clone = cx_module_clone(m);
    if (!clone) break;
    void *state = NULL;
    cxla_literal *out = NULL;
    cx_stats stats;
    cx_sb_init(&stats.times);
    cx_sb_init(&stats.counts);
    cx_alloc_fail_after(n);
    cxla_status s = be->compile(ctx, clone, &ctx->flags, &state, &stats);
    if (s == CXLA_OK) s = be->execute(state, ctx, 2, args, &out);
    int64_t injected = cx_alloc_failures();
    cx_alloc_fail_after(-1);
    if (state) be->destroy(state);
    cx_sb_free(&stats.times);
    cx_sb_free(&stats.counts);
    if (s == CXLA_OK) CHECK_MSG(cx_literal_compare(out, want, 1e-6, 1e-6, NULL), "allocation %lld: wrong result", (long long)n);
    cxla_literal_destroy(out);
    if (!injected) {
      CHECK_MSG(s == CXLA_OK, "no failure injected, yet: %s", cxla_context_errmsg(ctx));
      break;
    }
    if (s != CXLA_OK && s != CXLA_ERR_OUT_OF_MEMORY) {
      CHECK_MSG(0, "allocation %lld failed and the run returned %s ('%s')", (long long)n, cxla_status_str(s),
                cxla_context_errmsg(ctx));
      break;
    }
  }
  printf("    cpu backend: %lld allocation points failed in turn\n", (long long)n);
  CHECK(n > 50 && n < 5000);
  cxla_literal_destroy(want);
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cx_module_free(m);
}
