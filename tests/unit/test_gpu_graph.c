/* test_gpu_graph.c — GPU loops and conditionals as CUDA graphs (backend/gpu/gpu_graph.h) on
 * the grid emulation: loops whose trip count only the data decides (0, 1 and many trips),
 * nested loops, conditionals inside loops, --max-loop-iterations (the read-back path's error,
 * an overrun in a nested loop stopping its parents), one executable run on several inputs (a
 * graph captured again when its buffers move), and the fallbacks (--gpu-graphs=off, a driver
 * older than 12.4, a library call or a host step in the body), every result against the interpreter; and
 * the emulated graph API's own rules. With CXLA_TEST_GPU_BACKEND=gpu (`make test-gpu`) the
 * same on a real GPU, but for what only the emulation can pretend (an old driver). */
#include "backend/backend.h"
#include "backend/gpu/emu.h"
#include "core/context.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/literal.h"
#include "ir/verify.h"
#include "runtime/backends.h"
#include "test.h"
#include "text/hlo.h"

static cx_module *parse_text(const char *text) {
  cx_module *m = NULL;
  if (cx_parse_module(test_ctx(), text, strlen(text), "graph.hlo", &m) != CXLA_OK || cx_verify_module(m) != CXLA_OK) {
    cx_module_free(m);
    return NULL;
  }
  return m;
}

/* the backend under test: the emulation, or with CXLA_TEST_GPU_BACKEND=gpu a real GPU */
static const char *backend_name(void) {
  const char *b = getenv("CXLA_TEST_GPU_BACKEND");
  return b && *b ? b : "gpu-emu";
}

/* the loops and conditionals expected in graphs: n where the driver runs conditional nodes */
static int graphs_expected(int n) {
  const cx_cuda *cu = cx_cuda_emu();
  if (strcmp(backend_name(), "gpu-emu") && cx_cuda_get(test_ctx(), &cu) != CXLA_OK) return -1;
  return cu->driver_version >= CX_CU_GRAPHS_DRIVER && cu->GraphCreate ? n : 0;
}

/* a compiled executable on the backend under test and its counts */
typedef struct exe {
  const cx_backend *b;
  void *state;
  int loops_graph, conds_graph, host_linalg;
} exe;

static int count_of(const char *counts, const char *key) {
  const char *c = counts ? strstr(counts, key) : NULL;
  return c ? atoi(c + strlen(key)) : -1;
}

static cxla_status compile(cx_module *m, exe *e) {
  memset(e, 0, sizeof *e);
  e->b = cx_backend_find(backend_name());
  cx_module *clone = e->b ? cx_module_clone(m) : NULL;
  if (!clone) return CXLA_ERR_INTERNAL;
  cx_stats stats;
  cx_sb_init(&stats.times);
  cx_sb_init(&stats.counts);
  cxla_status s = e->b->compile(test_ctx(), clone, &test_ctx()->flags, &e->state, &stats);
  e->loops_graph = count_of(stats.counts.buf, "loops_graph=");
  e->conds_graph = count_of(stats.counts.buf, "conds_graph=");
  e->host_linalg = count_of(stats.counts.buf, "host_linalg=");
  cx_sb_free(&stats.times);
  cx_sb_free(&stats.counts);
  return s;
}

static void drop(exe *e) {
  if (e->state) e->b->destroy(e->state);
  e->state = NULL;
}

/* the executable and the interpreter on args: the same result, or both failing (the messages
 * are each one's own: the callers check the gpu backend's) */
static void same_as_interp(cx_module *m, exe *e, cxla_literal **args, const char *where) {
  cxla_literal *want = NULL, *got = NULL;
  int np = m->entry->nparams;
  cxla_status si = cx_interp_run(m, np, args, &want);
  char interp_msg[512];
  snprintf(interp_msg, sizeof interp_msg, "%s", cxla_context_errmsg(test_ctx()));
  cxla_status sg = e->b->execute(e->state, test_ctx(), np, args, &got);
  CHECK_MSG(si == sg, "%s: interp %s (%s), %s %s (%s)", where, cxla_status_str(si), interp_msg, backend_name(),
            cxla_status_str(sg), cxla_context_errmsg(test_ctx()));
  if (si == CXLA_OK && sg == CXLA_OK) {
    cx_sb why;
    cx_sb_init(&why);
    CHECK_MSG(cx_literal_compare(got, want, 1e-5, 1e-6, &why), "%s: differs from interp: %s", where, why.buf ? why.buf : "");
    cx_sb_free(&why);
  }
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
}

static cxla_literal *scalar_f32(float v) {
  cx_shape s = {.type = CXLA_F32};
  cxla_literal *l = cx_literal_new_uninit(&s);
  if (l) ((float *)l->data)[0] = v;
  return l;
}

static cxla_literal *vec_f32(int n, float seed) {
  cx_shape s = {.type = CXLA_F32, .rank = 1, .dims = {n}};
  cxla_literal *l = cx_literal_new_uninit(&s);
  for (int i = 0; l && i < n; i++) ((float *)l->data)[i] = seed + 0.01f * (float)i;
  return l;
}

/* A loop that runs while i < n, n an argument: its trip count is the data's. The body holds a
 * conditional on the trip (s32 index i mod 3, three branches) and a nested loop `iw` of
 * (i + 1) * %d trips, so the graph has a WHILE node holding IF nodes and another WHILE node. */
#define NESTED                                                                                                         \
  "HloModule nested\n"                                                                                                 \
  "icond {\n p = (s32[], s32[], f32[16]) parameter(0)\n j = s32[] get-tuple-element(p), index=0\n"                   \
  " k = s32[] get-tuple-element(p), index=1\n ROOT lt = pred[] compare(j, k), direction=LT\n}\n"                      \
  "ibody {\n p = (s32[], s32[], f32[16]) parameter(0)\n j = s32[] get-tuple-element(p), index=0\n"                   \
  " k = s32[] get-tuple-element(p), index=1\n x = f32[16] get-tuple-element(p), index=2\n one = s32[] constant(1)\n"  \
  " j1 = s32[] add(j, one)\n h = f32[] constant(0.9)\n hb = f32[16] broadcast(h), dimensions={}\n"                    \
  " y = f32[16] multiply(x, hb)\n ROOT o = (s32[], s32[], f32[16]) tuple(j1, k, y)\n}\n"                              \
  "b0 {\n x = f32[16] parameter(0)\n ROOT y = f32[16] sine(x)\n}\n"                                                    \
  "b1 {\n x = f32[16] parameter(0)\n ROOT y = f32[16] negate(x)\n}\n"                                                  \
  "b2 {\n x = f32[16] parameter(0)\n c = f32[] constant(0.5)\n cb = f32[16] broadcast(c), dimensions={}\n"            \
  " ROOT y = f32[16] add(x, cb)\n}\n"                                                                                  \
  "cond {\n p = (s32[], f32[], f32[16]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"                     \
  " n = f32[] get-tuple-element(p), index=1\n fi = f32[] convert(i)\n ROOT lt = pred[] compare(fi, n), direction=LT\n}\n" \
  "body {\n p = (s32[], f32[], f32[16]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"                     \
  " n = f32[] get-tuple-element(p), index=1\n x = f32[16] get-tuple-element(p), index=2\n three = s32[] constant(3)\n" \
  " k = s32[] remainder(i, three)\n c = f32[16] conditional(k, x, x, x), branch_computations={b0, b1, b2}\n"          \
  " z = s32[] constant(0)\n one = s32[] constant(1)\n i1 = s32[] add(i, one)\n m = s32[] constant(%d)\n"               \
  " im = s32[] multiply(i1, m)\n t = (s32[], s32[], f32[16]) tuple(z, im, c)\n"                                        \
  " iw = (s32[], s32[], f32[16]) while(t), condition=icond, body=ibody\n y = f32[16] get-tuple-element(iw), index=2\n ROOT o = (s32[], f32[], f32[16]) tuple(i1, n, y)\n}\n"               \
  "ENTRY e {\n n = f32[] parameter(0)\n x = f32[16] parameter(1)\n z = s32[] constant(0)\n"                          \
  " t = (s32[], f32[], f32[16]) tuple(z, n, x)\n w = (s32[], f32[], f32[16]) while(t), condition=cond, body=body\n"  \
  " ROOT r = f32[16] get-tuple-element(w), index=2\n}\n"

/* trips 0 (n <= 0), 1, many, on one executable (each run's buffers may move: recaptured) */
static void nested_runs(cx_module *m, exe *e, const char *where) {
  static const float ns[] = {-1, 0.5f, 1, 7, 0, 12};
  for (size_t i = 0; i < CX_ARRAY_LEN(ns); i++) {
    cxla_literal *args[2] = {scalar_f32(ns[i]), vec_f32(16, 0.1f * (float)i)};
    char what[96];
    snprintf(what, sizeof what, "%s, n = %g", where, (double)ns[i]);
    same_as_interp(m, e, args, what);
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
  }
}

/* NESTED with (i + 1) * mult inner trips */
static cx_module *nested(int mult) {
  char text[4096];
  snprintf(text, sizeof text, NESTED, mult);
  return parse_text(text);
}

TEST(gpu_graph_loops_and_conditionals) {
  cx_module *m = nested(1);
  CHECK_MSG(m != NULL, "%s", cxla_context_errmsg(test_ctx()));
  if (!m) return;
  exe e;
  CHECK_OK(compile(m, &e));
  CHECK_EQ_INT(e.loops_graph, graphs_expected(2)); /* the outer loop and the one in its body */
  CHECK_EQ_INT(e.conds_graph, graphs_expected(1));
  if (e.state) nested_runs(m, &e, "graphs");
  /* more executions than graphs wait to be destroyed (gpu_graph.c's RETIRED_MAX): each one's
   * buffers may have moved, and a replaced graph may still be queued */
  for (int i = 0; e.state && i < 20; i++) {
    cxla_literal *args[2] = {scalar_f32((float)(i % 4)), vec_f32(16, 0.05f * (float)i)};
    same_as_interp(m, &e, args, "many executions");
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
  }
  drop(&e);
  cx_module_free(m);
}

/* A loop whose state is the result's memory moves with every execution whose earlier results
 * are still alive: captured again each time, and the instantiated graph updated with the new
 * capture's arguments (cuGraphExecUpdate) rather than instantiated again; every result as the
 * interpreter's. */
TEST(gpu_graph_moved_buffers_update_the_graph) {
  if (strcmp(backend_name(), "gpu-emu") || graphs_expected(1) != 1) {
    printf("    skipped: counts the emulated driver's graphs\n");
    return;
  }
  char text[4096];
  snprintf(text, sizeof text, NESTED, 1);
  cx_module *m = parse_text(text);
  cxla_executable *e = test_compile_text(text, "nested.hlo", "gpu-emu", 0);
  enum { RUNS = 6 };
  cxla_buffer *kept[RUNS] = {0};
  long inst0, upd0, inst1, upd1;
  cx_emu_graph_counts(&inst0, &upd0);
  for (int i = 0; m && e && i < RUNS; i++) {
    cxla_literal *args[2] = {scalar_f32((float)(2 + i % 3)), vec_f32(16, 0.1f * (float)i)};
    cxla_buffer *bufs[2] = {NULL, NULL};
    for (int a = 0; a < 2; a++) CHECK_OK(cxla_buffer_from_literal(test_ctx(), "gpu-emu", args[a], &bufs[a]));
    CHECK_OK(cxla_executable_execute(e, 2, bufs, &kept[i])); /* kept alive: the next result lands elsewhere */
    cxla_literal *want = NULL, *got = NULL;
    CHECK_OK(cx_interp_run(m, 2, args, &want));
    if (kept[i]) CHECK_OK(cxla_buffer_to_literal(kept[i], &got));
    cx_sb why;
    cx_sb_init(&why);
    CHECK_MSG(got && want && cx_literal_compare(got, want, 1e-5, 1e-6, &why), "run %d differs from interp: %s", i,
              why.buf ? why.buf : "");
    cx_sb_free(&why);
    cxla_literal_destroy(want);
    cxla_literal_destroy(got);
    for (int a = 0; a < 2; a++) {
      cxla_buffer_destroy(bufs[a]);
      cxla_literal_destroy(args[a]);
    }
  }
  cx_emu_graph_counts(&inst1, &upd1);
  /* the outer loop's graph, its nested loop and conditional inside it: one instantiation */
  CHECK_MSG(inst1 - inst0 == 1 && upd1 - upd0 == RUNS - 1, "%ld instantiations and %ld updates in %d runs",
            inst1 - inst0, upd1 - upd0, RUNS);
  for (int i = 0; i < RUNS; i++) cxla_buffer_destroy(kept[i]);
  cxla_executable_destroy(e);
  cx_module_free(m);
}

/* The emulated cuGraphExecUpdate refuses a graph of another shape, naming the result. */
TEST(gpu_emu_graph_update_rules) {
  const cx_cuda *cu = cx_cuda_emu();
  CUstream s = NULL;
  CUdeviceptr p = 0;
  CUgraph a = NULL, b = NULL;
  CUgraphExec x = NULL;
  CHECK_EQ_INT(cu->StreamCreate(&s, 0), 0);
  CHECK_EQ_INT(cu->MemAlloc(&p, 64), 0);
  CHECK_EQ_INT(cu->GraphCreate(&a, 0), 0);
  CHECK_EQ_INT(cu->GraphCreate(&b, 0), 0);
  if (!s || !p || !a || !b) return;
  CHECK_EQ_INT(cu->MemsetD8Async(p, 0, 64, s), 0);
  /* a: one memset; b: a memset then a copy */
  CHECK_EQ_INT(cu->StreamBeginCaptureToGraph(s, a, NULL, NULL, 0, CX_CU_CAPTURE_THREAD_LOCAL), 0);
  CHECK_EQ_INT(cu->MemsetD8Async(p, 1, 16, s), 0);
  CUgraph ended = NULL;
  CHECK_EQ_INT(cu->StreamEndCapture(s, &ended), 0);
  CHECK_EQ_INT(cu->StreamBeginCaptureToGraph(s, b, NULL, NULL, 0, CX_CU_CAPTURE_THREAD_LOCAL), 0);
  CHECK_EQ_INT(cu->MemsetD8Async(p + 16, 2, 16, s), 0);
  CHECK_EQ_INT(cu->MemcpyDtoDAsync(p + 32, p + 16, 16, s), 0);
  CHECK_EQ_INT(cu->StreamEndCapture(s, &ended), 0);
  CHECK_EQ_INT(cu->GraphInstantiate(&x, a, 0), 0);
  cx_cu_graph_update_info info = {0};
  CHECK_EQ_INT(cu->GraphExecUpdate(x, b, &info), 910); /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
  CHECK_EQ_INT(info.result, 2);                         /* CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED */
  CHECK_EQ_INT(cu->GraphLaunch(x, s), 0);               /* still a's */
  unsigned char host[48] = {0};
  CHECK_EQ_INT(cu->MemcpyDtoH(host, p, 48), 0);
  CHECK(host[0] == 1 && host[16] == 0);
  CHECK_EQ_INT(cu->GraphExecDestroy(x), 0);
  CHECK_EQ_INT(cu->GraphDestroy(a), 0);
  CHECK_EQ_INT(cu->GraphDestroy(b), 0);
  CHECK_EQ_INT(cu->MemFree(p), 0);
  CHECK_EQ_INT(cu->StreamDestroy(s), 0);
}

/* --max-loop-iterations: the limit exactly met passes; one past it fails with the read-back
 * path's (and the interpreter's) message, naming the loop, also when the loop that overruns is
 * the nested one (its parents stop too: the execution ends) */
TEST(gpu_graph_max_loop_iterations) {
  static const struct { int mult; float n; const char *max, *error; } cases[] = {
    {1, 7, "--max-loop-iterations=7", NULL},  /* outer 7 trips, inner at most 7: met exactly */
    {1, 7, "--max-loop-iterations=6", "while loop w did not finish within 6 iterations"},
    {2, 3, "--max-loop-iterations=3", "while loop iw did not finish within 3 iterations"}, /* 4 in the 2nd trip */
    {2, 3, "--max-loop-iterations=6", NULL},
    {1, 0, "--max-loop-iterations=1", NULL},  /* no trips at all */
  };
  for (size_t i = 0; i < CX_ARRAY_LEN(cases); i++) {
    cx_module *m = nested(cases[i].mult);
    CHECK(m != NULL);
    if (!m) continue;
    CHECK_OK(cxla_context_set_flags(test_ctx(), cases[i].max));
    exe e;
    CHECK_OK(compile(m, &e));
    cxla_literal *args[2] = {scalar_f32(cases[i].n), vec_f32(16, 0.25f)};
    if (e.state) same_as_interp(m, &e, args, cases[i].max);
    if (e.state && cases[i].error) CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), cases[i].error);
    /* the executable again after a failure: the overrun word is cleared per execution */
    if (e.state && i == 1) {
      ((float *)args[0]->data)[0] = 2;
      same_as_interp(m, &e, args, "after an overrun");
    }
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
    drop(&e);
    cx_module_free(m);
  }
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--max-loop-iterations=0"));
}

/* The read-back path still runs, with the same results: --gpu-graphs=off, and a driver older
 * than conditional nodes (the emulation told to report 12.3) */
TEST(gpu_graph_fallbacks) {
  cx_module *m = nested(1);
  CHECK(m != NULL);
  if (!m) return;
  exe e;
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--gpu-graphs=off"));
  CHECK_OK(compile(m, &e));
  CHECK_EQ_INT(e.loops_graph, 0);
  CHECK_EQ_INT(e.conds_graph, 0);
  if (e.state) nested_runs(m, &e, "--gpu-graphs=off");
  drop(&e);
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--gpu-graphs=on"));
  if (!strcmp(backend_name(), "gpu-emu")) {
    cx_emu_set_driver_version(12030);
    CHECK_OK(compile(m, &e));
    cx_emu_set_driver_version(12040);
    CHECK_EQ_INT(e.loops_graph, 0);
    if (e.state) nested_runs(m, &e, "driver 12.3");
    drop(&e);
  }
  /* --max-loop-iterations on the fallback: the same message */
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--gpu-graphs=off --max-loop-iterations=6"));
  CHECK_OK(compile(m, &e));
  cxla_literal *args[2] = {scalar_f32(7), vec_f32(16, 0.25f)};
  if (e.state) same_as_interp(m, &e, args, "read-back, over the limit");
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "while loop w did not finish within 6 iterations");
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  drop(&e);
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--gpu-graphs=on --max-loop-iterations=0"));
  cx_module_free(m);
}

/* A loop whose body calls cuBLASLt (a dot) keeps the read-back path; a conditional outside any
 * loop, on a data-dependent pred, is a graph of its own. */
#define DOT_LOOP                                                                                                       \
  "HloModule dl\ncond {\n p = (f32[], f32[], f32[8,8]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"     \
  " n = f32[] get-tuple-element(p), index=1\n ROOT lt = pred[] compare(s, n), direction=LT\n}\n"                      \
  "body {\n p = (f32[], f32[], f32[8,8]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"                    \
  " n = f32[] get-tuple-element(p), index=1\n x = f32[8,8] get-tuple-element(p), index=2\n one = f32[] constant(1)\n" \
  " s1 = f32[] add(s, one)\n d = f32[8,8] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"            \
  " y = f32[8,8] tanh(d)\n ROOT o = (f32[], f32[], f32[8,8]) tuple(s1, n, y)\n}\n"                                    \
  "ENTRY e {\n n = f32[] parameter(0)\n x = f32[8,8] parameter(1)\n z = f32[] constant(0)\n"                          \
  " t = (f32[], f32[], f32[8,8]) tuple(z, n, x)\n w = (f32[], f32[], f32[8,8]) while(t), condition=cond, body=body\n" \
  " ROOT r = f32[8,8] get-tuple-element(w), index=2\n}\n"
#define PRED_COND                                                                                                      \
  "HloModule pc\nt {\n x = f32[8] parameter(0)\n ROOT y = f32[8] negate(x)\n}\n"                                      \
  "f {\n x = f32[8] parameter(0)\n ROOT y = f32[8] exponential(x)\n}\n"                                               \
  "ENTRY e {\n n = f32[] parameter(0)\n x = f32[8] parameter(1)\n z = f32[] constant(0)\n"                            \
  " c = pred[] compare(n, z), direction=GT\n ROOT r = f32[8] conditional(c, x, x), true_computation=t, false_computation=f\n}\n"

TEST(gpu_graph_library_body_and_top_conditional) {
  cx_module *m = parse_text(DOT_LOOP);
  CHECK(m != NULL);
  exe e;
  if (m) {
    CHECK_OK(compile(m, &e));
    CHECK_EQ_INT(e.loops_graph, 0); /* the GEMM step cannot be captured (yet) */
    for (int n = 0; e.state && n < 3; n++) {
      cx_shape s = {.type = CXLA_F32, .rank = 2, .dims = {8, 8}};
      cxla_literal *args[2] = {scalar_f32((float)n), cx_literal_new_uninit(&s)};
      for (int i = 0; i < 64; i++) ((float *)args[1]->data)[i] = 0.05f * (float)(i % 9) - 0.2f;
      same_as_interp(m, &e, args, "dot loop");
      cxla_literal_destroy(args[0]);
      cxla_literal_destroy(args[1]);
    }
    drop(&e);
  }
  cx_module_free(m);
  m = parse_text(PRED_COND);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_OK(compile(m, &e));
  CHECK_EQ_INT(e.conds_graph, graphs_expected(1));
  for (int n = -1; e.state && n <= 1; n += 2) {
    cxla_literal *args[2] = {scalar_f32((float)n), vec_f32(8, 0.3f)};
    same_as_interp(m, &e, args, "pred conditional");
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
  }
  drop(&e);
  cx_module_free(m);
}

/* A loop whose body holds a host step (jaxlib's perturbed tridiagonal solve, which no NVIDIA
 * library has: the cpu's routine between copies) keeps the read-back path too, for 0, 1 and
 * several trips, and the step is counted. */
#define HOST_LOOP                                                                                                      \
  "HloModule hl\ncond {\n p = (f32[], f32[], f32[1,4,1]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"  \
  " n = f32[] get-tuple-element(p), index=1\n ROOT lt = pred[] compare(s, n), direction=LT\n}\n"                     \
  "body {\n p = (f32[], f32[], f32[1,4,1]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"                 \
  " n = f32[] get-tuple-element(p), index=1\n x = f32[1,4,1] get-tuple-element(p), index=2\n one = f32[] constant(1)\n" \
  " s1 = f32[] add(s, one)\n dl = f32[1,4] constant({{0, 1, -1, 0.5}})\n d = f32[1,4] constant({{4, 5, 4, 6}})\n"    \
  " du = f32[1,4] constant({{1, 0.5, 1, 0}})\n"                                                                     \
  " y = f32[1,4,1] custom-call(dl, d, du, x), custom_call_target=\"tridiagonal_solve_perturbed_ffi\"\n"              \
  " z = f32[1,4,1] add(y, x)\n ROOT o = (f32[], f32[], f32[1,4,1]) tuple(s1, n, z)\n}\n"                             \
  "ENTRY e {\n n = f32[] parameter(0)\n x = f32[1,4,1] parameter(1)\n z = f32[] constant(0)\n"                       \
  " t = (f32[], f32[], f32[1,4,1]) tuple(z, n, x)\n w = (f32[], f32[], f32[1,4,1]) while(t), condition=cond, body=body\n" \
  " ROOT r = f32[1,4,1] get-tuple-element(w), index=2\n}\n"

TEST(gpu_graph_host_step_in_a_loop) {
  cx_module *m = parse_text(HOST_LOOP);
  CHECK(m != NULL);
  if (!m) return;
  exe e;
  CHECK_OK(compile(m, &e));
  CHECK_EQ_INT(e.loops_graph, 0); /* the host step waits for the stream: no capture */
  CHECK_EQ_INT(e.host_linalg, 1);
  for (int n = 0; e.state && n < 4; n += n ? 2 : 1) {
    cx_shape s = {.type = CXLA_F32, .rank = 3, .dims = {1, 4, 1}};
    cxla_literal *args[2] = {scalar_f32((float)n), cx_literal_new_uninit(&s)};
    for (int i = 0; i < 4; i++) ((float *)args[1]->data)[i] = 0.5f * (float)i - 0.7f;
    same_as_interp(m, &e, args, "host step loop");
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
  }
  drop(&e);
  cx_module_free(m);
}

/* The emulated graph API itself (emu_graph.c): capture turns a memset into a node and refuses
 * what would wait for the stream, ending a capture that is not on fails, a dependency from
 * another graph or a handle of another graph is refused, and an IF node runs its body by its
 * handle's default value (CU_GRAPH_COND_ASSIGN_DEFAULT). */
TEST(gpu_emu_graph_api) {
  const cx_cuda *cu = cx_cuda_emu();
  CUcontext ctx = NULL;
  CUstream s = NULL;
  CUdeviceptr p = 0;
  CHECK_EQ_INT(cu->DevicePrimaryCtxRetain(&ctx, 0), 0);
  CHECK_EQ_INT(cu->StreamCreate(&s, 0), 0);
  CHECK_EQ_INT(cu->MemAlloc(&p, 16), 0);
  CUgraph g = NULL, other = NULL, ended = NULL;
  CHECK_EQ_INT(cu->GraphCreate(&g, 0), 0);
  CHECK_EQ_INT(cu->GraphCreate(&other, 0), 0);
  for (unsigned dflt = 0; dflt < 2; dflt++) {
    CUgraphConditionalHandle h = 0, foreign = 0;
    CHECK_EQ_INT(cu->GraphConditionalHandleCreate(&h, g, ctx, dflt, 1), 0);
    CHECK_EQ_INT(cu->GraphConditionalHandleCreate(&foreign, other, ctx, 1, 1), 0);
    cx_cu_graph_node_params np;
    memset(&np, 0, sizeof np);
    np.type = CX_CU_GRAPH_NODE_CONDITIONAL;
    np.cond.handle = foreign, np.cond.type = CX_CU_COND_IF, np.cond.size = 1, np.cond.ctx = ctx;
    CUgraphNode node = NULL;
    CHECK_EQ_INT(cu->GraphAddNode(&node, g, NULL, NULL, 0, &np), 1); /* CUDA_ERROR_INVALID_VALUE */
    np.cond.handle = h;
    CHECK_EQ_INT(cu->GraphAddNode(&node, g, NULL, NULL, 0, &np), 0);
    CUgraph body = np.cond.graphs_out ? np.cond.graphs_out[0] : NULL;
    CHECK(body != NULL);
    if (!body) break;
    CHECK_EQ_INT(cu->StreamBeginCaptureToGraph(s, body, &node, NULL, 1, CX_CU_CAPTURE_THREAD_LOCAL), 1); /* not body's */
    CHECK_EQ_INT(cu->StreamBeginCaptureToGraph(s, body, NULL, NULL, 0, CX_CU_CAPTURE_THREAD_LOCAL), 0);
    CHECK_EQ_INT(cu->MemsetD8Async(p, 0xab, 16, s), 0); /* a node, not run now */
    CHECK_EQ_INT(cu->StreamSynchronize(s), 900);        /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
    unsigned char host[16] = {0};
    CHECK_EQ_INT(cu->MemcpyDtoH(host, p, 16), 900);
    CHECK_EQ_INT(cu->StreamEndCapture(s, &ended), 0);
    CHECK(ended == body);
    CHECK_EQ_INT(cu->StreamEndCapture(s, &ended), 903); /* CUDA_ERROR_STREAM_CAPTURE_UNMATCHED */
    CHECK_EQ_INT(cu->MemsetD8Async(p, 0, 16, s), 0);
    CUgraphExec x = NULL;
    CHECK_EQ_INT(cu->GraphInstantiate(&x, g, 0), 0);
    CHECK_EQ_INT(cu->GraphLaunch(x, s), 0);
    CHECK_EQ_INT(cu->MemcpyDtoH(host, p, 16), 0);
    CHECK_EQ_INT(host[7], dflt ? 0xab : 0); /* the body ran only with the default 1 */
    CHECK_EQ_INT(cu->GraphExecDestroy(x), 0);
    CHECK_EQ_INT(cu->GraphDestroy(g), 0);
    CHECK_EQ_INT(cu->GraphCreate(&g, 0), 0);
  }
  CHECK_EQ_INT(cu->GraphDestroy(g), 0);
  CHECK_EQ_INT(cu->GraphDestroy(other), 0);
  CHECK_EQ_INT(cu->MemFree(p), 0);
  CHECK_EQ_INT(cu->StreamDestroy(s), 0);
}
