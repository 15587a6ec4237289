/* test_host_feed.c — infeed and outfeed through the public API (cxla.h's host transfers): the
 * context's queues on the interpreter, the cpu backend and the GPU's (on gpu-emu) (push, run,
 * pop, in order), an infeed source feeding a loop, a loop whose trip count is data (a CUDA
 * graph were it not for its feeds), and the errors: an empty queue, a literal of the wrong shape, popping
 * an empty outfeed queue, bad pushes, and a refusal at compile time rather than mid-run.
 * Expected values are worked out by hand. */
#include <string.h>
#include "test.h"

/* gpu-emu: the GPU's host steps (backend/gpu/gpu_host.c) on the emulated driver */
static const char *const k_backends[] = {"interp", "cpu", "gpu-emu"};
enum { NB = sizeof k_backends / sizeof *k_backends };

/* Runs e without arguments; the status, and the result in *out (NULL on failure). */
static cxla_status run0(cxla_executable *e, cxla_literal **out) {
  cxla_buffer *res = NULL;
  *out = NULL;
  cxla_status s = cxla_executable_execute(e, 0, NULL, &res);
  if (s == CXLA_OK) s = cxla_buffer_to_literal(res, out);
  cxla_buffer_destroy(res);
  return s;
}

static cxla_literal *f32s(int n, const float *v) {
  int64_t d = n;
  return cxla_literal_from_data(test_ctx(), CXLA_F32, 1, &d, v, sizeof *v * (size_t)n);
}

/* in: f32[3] from the queue; outfeeds x + x, then (x, x * x); the result is the infeed's
 * second value, a pred, selecting x or -x. */
static const char *k_feed =
    "HloModule feed\nENTRY e {\n  t0 = token[] after-all()\n"
    "  in = ((f32[3], pred[]), token[]) infeed(t0), infeed_config=\"any\"\n"
    "  d = (f32[3], pred[]) get-tuple-element(in), index=0\n  x = f32[3] get-tuple-element(d), index=0\n"
    "  p = pred[] get-tuple-element(d), index=1\n  t1 = token[] get-tuple-element(in), index=1\n"
    "  x2 = f32[3] add(x, x)\n  o1 = token[] outfeed(x2, t1), outfeed_shape=f32[3]{0}\n"
    "  sq = f32[3] multiply(x, x)\n  pair = (f32[3], f32[3]) tuple(x, sq)\n"
    "  o2 = token[] outfeed(pair, o1)\n"
    "  nx = f32[3] negate(x)\n  pb = pred[3] broadcast(p), dimensions={}\n"
    "  ROOT r = f32[3] select(pb, x, nx)\n}\n";

TEST(host_feed_push_run_pop) {
  for (int b = 0; b < NB; b++) {
    cxla_executable *e = test_compile_text(k_feed, "t.hlo", k_backends[b], 0);
    if (!e) continue;
    cxla_feeds_clear(test_ctx());
    const float xv[3] = {1, -2, 0.5f};
    for (int k = 0; k < 2; k++) { /* two runs, two values queued ahead: taken in order */
      cxla_literal *el[2] = {f32s(3, xv), cxla_literal_create(test_ctx(), CXLA_PRED, 0, NULL)};
      cxla_literal_set_f64(el[1], 0, k == 0); /* true, then false */
      cxla_literal *v = cxla_literal_tuple(test_ctx(), 2, el);
      CHECK_OK(cxla_infeed_push(test_ctx(), v));
      cxla_literal_destroy(v); /* pushed a copy */
    }
    CHECK_EQ_INT((int)cxla_infeed_count(test_ctx()), 2);
    for (int k = 0; k < 2; k++) {
      cxla_literal *r = NULL;
      CHECK_MSG(run0(e, &r) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
      if (!r) break;
      double sign = k == 0 ? 1 : -1;
      for (int i = 0; i < 3; i++) CHECK_NEAR(cxla_literal_get_f64(r, i), sign * xv[i], 0);
      cxla_literal_destroy(r);
    }
    CHECK_EQ_INT((int)cxla_infeed_count(test_ctx()), 0);
    CHECK_EQ_INT((int)cxla_outfeed_count(test_ctx()), 4);
    for (int k = 0; k < 2; k++) {
      cxla_literal *a = NULL, *pair = NULL;
      CHECK_OK(cxla_outfeed_pop(test_ctx(), &a));
      CHECK_OK(cxla_outfeed_pop(test_ctx(), &pair));
      if (!a || !pair) break;
      CHECK_EQ_INT(cxla_literal_type(a), CXLA_F32);
      for (int i = 0; i < 3; i++) CHECK_NEAR(cxla_literal_get_f64(a, i), 2 * xv[i], 0);
      CHECK_EQ_INT(cxla_literal_tuple_size(pair), 2);
      cxla_literal *x = cxla_literal_tuple_get(pair, 0), *sq = cxla_literal_tuple_get(pair, 1);
      for (int i = 0; x && sq && i < 3; i++) {
        CHECK_NEAR(cxla_literal_get_f64(x, i), xv[i], 0);
        CHECK_NEAR(cxla_literal_get_f64(sq, i), (double)xv[i] * xv[i], 0);
      }
      cxla_literal_destroy(a);
      cxla_literal_destroy(pair);
    }
    cxla_executable_destroy(e);
  }
}

TEST(host_feed_errors) {
  for (int b = 0; b < NB; b++) {
    cxla_executable *e = test_compile_text(k_feed, "t.hlo", k_backends[b], 0);
    if (!e) continue;
    cxla_feeds_clear(test_ctx());
    cxla_literal *r = NULL;
    /* nothing queued: an error naming the infeed, not a hang */
    CHECK_EQ_INT(run0(e, &r), CXLA_ERR_RUNTIME);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.hlo:4:3: error: infeed 'in': the infeed queue is empty");
    CHECK(r == NULL);
    /* a value of another shape: named with both shapes, and consumed */
    const float v[2] = {1, 2};
    cxla_literal *wrong = f32s(2, v);
    CHECK_OK(cxla_infeed_push(test_ctx(), wrong));
    cxla_literal_destroy(wrong);
    CHECK_EQ_INT(run0(e, &r), CXLA_ERR_RUNTIME);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()),
                       "infeed 'in': the next infeed literal is f32[2], the infeed takes (f32[3], pred[])");
    CHECK_EQ_INT((int)cxla_infeed_count(test_ctx()), 0);
    CHECK_EQ_INT((int)cxla_outfeed_count(test_ctx()), 0); /* nothing ran past the infeed */
    cxla_executable_destroy(e);
  }
  cxla_literal *out = (cxla_literal *)1;
  CHECK_EQ_INT(cxla_outfeed_pop(test_ctx(), &out), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "the outfeed queue is empty");
  CHECK(out == NULL);
  CHECK_EQ_INT(cxla_infeed_push(test_ctx(), NULL), CXLA_ERR_INVALID_ARGUMENT);
  cxla_literal *tok = cxla_literal_token(test_ctx());
  CHECK_EQ_INT(cxla_infeed_push(test_ctx(), tok), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "an infeed value holds no token");
  cxla_literal_destroy(tok);
  CHECK_EQ_INT(cxla_outfeed_pop(NULL, &out), CXLA_ERR_INVALID_ARGUMENT);
}

/* The source counts its calls and gives s32[] 10 * call. */
static cxla_status counting_source(void *user, const cxla_shape *shape, cxla_literal **out) {
  int *calls = user;
  if (shape->type != CXLA_S32 || shape->rank != 0) return CXLA_ERR_INVALID_ARGUMENT;
  *out = cxla_literal_create(test_ctx(), CXLA_S32, 0, NULL);
  if (*out) cxla_literal_set_f64(*out, 0, 10.0 * ++*calls);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* A loop of 3 iterations whose token rides in its state: each takes an infeed value and
 * outfeeds the running sum; an infeed whose value nobody uses still runs. */
static const char *k_loop =
    "HloModule loop\ncond {\n  s = (s32[], s32[], token[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  s = (s32[], s32[], token[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  acc = s32[] get-tuple-element(s), index=1\n  t = token[] get-tuple-element(s), index=2\n"
    "  in = (s32[], token[]) infeed(t)\n  v = s32[] get-tuple-element(in), index=0\n"
    "  t1 = token[] get-tuple-element(in), index=1\n  acc2 = s32[] add(acc, v)\n"
    "  t2 = token[] outfeed(acc2, t1)\n  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], s32[], token[]) tuple(i2, acc2, t2)\n}\n"
    "ENTRY e {\n  z = s32[] constant(0)\n  t0 = token[] after-all()\n"
    "  w = (s32[], s32[], token[]) while((s32[], s32[], token[]) tuple(z, z, t0)), condition=cond, body=body\n"
    "  wt = token[] get-tuple-element(w), index=2\n  unused = (s32[], token[]) infeed(wt)\n"
    "  ROOT acc = s32[] get-tuple-element(w), index=1\n}\n";

TEST(host_feed_source_feeds_a_loop) {
  for (int b = 0; b < NB; b++) {
    cxla_executable *e = test_compile_text(k_loop, "t.hlo", k_backends[b], 0);
    if (!e) continue;
    cxla_feeds_clear(test_ctx());
    int calls = 0;
    cxla_infeed_set_source(test_ctx(), counting_source, &calls);
    cxla_literal *r = NULL;
    CHECK_MSG(run0(e, &r) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
    cxla_infeed_set_source(test_ctx(), NULL, NULL);
    CHECK_EQ_INT(calls, 4); /* 3 iterations and the unused infeed */
    if (r) CHECK_NEAR(cxla_literal_get_f64(r, 0), 10 + 20 + 30, 0);
    cxla_literal_destroy(r);
    const double sums[3] = {10, 30, 60};
    CHECK_EQ_INT((int)cxla_outfeed_count(test_ctx()), 3);
    for (int k = 0; k < 3; k++) {
      cxla_literal *o = NULL;
      CHECK_OK(cxla_outfeed_pop(test_ctx(), &o));
      if (o) CHECK_NEAR(cxla_literal_get_f64(o, 0), sums[k], 0);
      cxla_literal_destroy(o);
    }
    cxla_executable_destroy(e);
  }
}

/* What cannot run is refused by cxla_compile, located, before anything is taken from a queue. */
TEST(host_feed_refused_at_compile_time) {
  const char *text = "HloModule m\nENTRY e {\n  t0 = token[] after-all()\n"
                     "  ROOT in = (s32[<=4], token[]) infeed(t0)\n}\n";
  for (int b = 0; b < NB; b++) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "t.hlo", &m));
    if (!m) continue;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = k_backends[b];
    cxla_executable *e = NULL;
    CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.hlo:4:8: error: not supported: infeed 'in'");
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "dynamic dimensions");
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

/* A loop whose trip count is data (the first infeed's value), so the gpu backend would run it
 * as a CUDA graph; its infeed and outfeed are host steps a graph cannot hold, and the loop
 * reads its predicate back instead. acc = acc / 2 + v each trip, v_k[j] = (k + 1)(j + 1):
 * acc is 1, 2.5, 4.25 times (j + 1) after trips 1, 2, 3. */
static const char *k_data_loop =
    "HloModule data_loop\ncond {\n  s = (s32[], s32[], f32[4], token[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] get-tuple-element(s), index=1\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  s = (s32[], s32[], f32[4], token[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  acc = f32[4] get-tuple-element(s), index=2\n"
    "  t = token[] get-tuple-element(s), index=3\n  in = (f32[4], token[]) infeed(t)\n"
    "  v = f32[4] get-tuple-element(in), index=0\n  t1 = token[] get-tuple-element(in), index=1\n"
    "  h = f32[] constant(0.5)\n  hb = f32[4] broadcast(h), dimensions={}\n  half = f32[4] multiply(acc, hb)\n"
    "  acc2 = f32[4] add(half, v)\n  t2 = token[] outfeed(acc2, t1)\n  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n  ROOT r = (s32[], s32[], f32[4], token[]) tuple(i2, n, acc2, t2)\n}\n"
    "ENTRY e {\n  t0 = token[] after-all()\n  nin = (s32[], token[]) infeed(t0)\n"
    "  n = s32[] get-tuple-element(nin), index=0\n  t1 = token[] get-tuple-element(nin), index=1\n"
    "  z = s32[] constant(0)\n  zf = f32[] constant(0)\n  zb = f32[4] broadcast(zf), dimensions={}\n"
    "  w = (s32[], s32[], f32[4], token[]) while((s32[], s32[], f32[4], token[]) tuple(z, n, zb, t1)), "
    "condition=cond, body=body\n  ROOT acc = f32[4] get-tuple-element(w), index=2\n}\n";

TEST(host_feed_data_dependent_loop) {
  static const double after[4] = {0, 1, 2.5, 4.25};
  for (int b = 0; b < NB; b++) {
    cxla_executable *e = test_compile_text(k_data_loop, "t.hlo", k_backends[b], 0);
    if (!e) continue;
    for (int trips = 0; trips <= 3; trips += 3) { /* one executable, two executions */
      cxla_feeds_clear(test_ctx());
      cxla_literal *n = cxla_literal_create(test_ctx(), CXLA_S32, 0, NULL);
      cxla_literal_set_f64(n, 0, trips);
      CHECK_OK(cxla_infeed_push(test_ctx(), n));
      cxla_literal_destroy(n);
      for (int k = 0; k < trips; k++) {
        float v[4];
        for (int j = 0; j < 4; j++) v[j] = (float)((k + 1) * (j + 1));
        cxla_literal *l = f32s(4, v);
        CHECK_OK(cxla_infeed_push(test_ctx(), l));
        cxla_literal_destroy(l);
      }
      cxla_literal *r = NULL;
      CHECK_MSG(run0(e, &r) == CXLA_OK, "%s: %s", k_backends[b], cxla_context_errmsg(test_ctx()));
      for (int j = 0; r && j < 4; j++) CHECK_NEAR(cxla_literal_get_f64(r, j), after[trips] * (j + 1), 0);
      cxla_literal_destroy(r);
      CHECK_EQ_INT((int)cxla_infeed_count(test_ctx()), 0);
      CHECK_EQ_INT((int)cxla_outfeed_count(test_ctx()), trips);
      for (int k = 0; k < trips; k++) {
        cxla_literal *o = NULL;
        CHECK_OK(cxla_outfeed_pop(test_ctx(), &o));
        for (int j = 0; o && j < 4; j++) CHECK_NEAR(cxla_literal_get_f64(o, j), after[k + 1] * (j + 1), 0);
        cxla_literal_destroy(o);
      }
    }
    cxla_executable_destroy(e);
  }
}
