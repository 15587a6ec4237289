/* test_collectives.c — what every collective computes, on 2 and 4 devices run as threads
 * (cxla_executable_execute_replicas): expected values worked out by hand from XLA's
 * definitions and the fold order docs/collectives.md states; each module runs on the
 * interpreter (checked against the hand values) and on the cpu backend (checked bit for bit
 * against the interpreter). Then the errors: groups a run does not have, a device that fails. */
#include "ir/literal.h"
#include "test.h"

#define SUMF "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

static cxla_literal *lit(const char *text) {
  cxla_literal *l = NULL;
  CHECK_MSG(cxla_literal_parse(test_ctx(), text, &l) == CXLA_OK, "literal '%s': %s", text, cxla_context_errmsg(test_ctx()));
  return l;
}

/* Runs text on n devices of backend: device r takes the nargs literals args[r * nargs ...];
 * out[r] gets its result. Returns the status (errors left in the context). */
static cxla_status run(const char *text, const char *backend, int n, int nargs, const char *const *args,
                       cxla_literal **out) {
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *bufs[64] = {0}, *res[16] = {0};
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "c.hlo", &m);
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  if (s == CXLA_OK) s = cxla_compile(m, &o, &e);
  for (int k = 0; k < n * nargs && s == CXLA_OK; k++) {
    cxla_literal *l = lit(args[k]);
    s = l ? cxla_buffer_from_literal(test_ctx(), backend, l, &bufs[k]) : CXLA_ERR_INVALID_ARGUMENT;
    cxla_literal_destroy(l);
  }
  if (s == CXLA_OK) s = cxla_executable_execute_replicas(e, n, nargs, bufs, res);
  for (int r = 0; r < n; r++) {
    out[r] = NULL;
    if (s == CXLA_OK) s = cxla_buffer_to_literal(res[r], &out[r]);
    cxla_buffer_destroy(res[r]);
  }
  for (int k = 0; k < n * nargs; k++) cxla_buffer_destroy(bufs[k]);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return s;
}

/* The module on the interpreter gives want[r] on device r (exactly), and on the cpu the same
 * bytes. */
static void expect(const char *text, int n, int nargs, const char *const *args, const char *const *want, int line) {
  cxla_literal *got[16] = {0}, *cpu[16] = {0};
  cxla_status s = run(text, "interp", n, nargs, args, got);
  if (s != CXLA_OK) {
    test_fail(__FILE__, line, "interp: %s", cxla_context_errmsg(test_ctx()));
    return;
  }
  for (int r = 0; r < n; r++) {
    cxla_literal *w = lit(want[r]);
    cxla_literal *g = got[r];
    int same = w && g && cx_literal_equal(g, w);
    if (!same) {
      cx_sb gs, ws;
      cx_sb_init(&gs);
      cx_sb_init(&ws);
      if (g) cx_literal_print(&gs, g, 1);
      if (w) cx_literal_print(&ws, w, 1);
      test_fail(__FILE__, line, "interp device %d: got %s, want %s", r, gs.buf ? gs.buf : "?", ws.buf ? ws.buf : "?");
      cx_sb_free(&gs);
      cx_sb_free(&ws);
    }
    cxla_literal_destroy(w);
  }
  s = run(text, "cpu", n, nargs, args, cpu);
  if (s == CXLA_ERR_UNSUPPORTED && strstr(cxla_context_errmsg(test_ctx()), "not built into")) s = CXLA_OK;
  else if (s != CXLA_OK) test_fail(__FILE__, line, "cpu: %s", cxla_context_errmsg(test_ctx()));
  for (int r = 0; r < n && s == CXLA_OK; r++)
    if (cpu[r] && got[r] && !cx_literal_equal(cpu[r], got[r])) test_fail(__FILE__, line, "cpu device %d differs from interp", r);
  for (int r = 0; r < n; r++) {
    cxla_literal_destroy(got[r]);
    cxla_literal_destroy(cpu[r]);
  }
}
#define EXPECT(text, n, nargs, args, want) expect((text), (n), (nargs), (args), (want), __LINE__)

static const char *const x4[] = {"f32[4] {1, 2, 3, 4}", "f32[4] {10, 20, 30, 40}", "f32[4] {100, 200, 300, 400}",
                                 "f32[4] {1000, 2000, 3000, 4000}"};

TEST(collectives_all_reduce_groups) {
#define AR(groups) "HloModule m\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n" \
                   "  ROOT r = f32[4] all-reduce(x), replica_groups=" groups ", to_apply=sum\n}\n"
  const char *two[] = {"f32[4] {11, 22, 33, 44}", "f32[4] {11, 22, 33, 44}"};
  EXPECT(AR("{}"), 2, 1, x4, two);
  EXPECT(AR("{{0,1}}"), 2, 1, x4, two);
  const char *all4[] = {"f32[4] {1111, 2222, 3333, 4444}", "f32[4] {1111, 2222, 3333, 4444}",
                        "f32[4] {1111, 2222, 3333, 4444}", "f32[4] {1111, 2222, 3333, 4444}"};
  EXPECT(AR("{}"), 4, 1, x4, all4);
  /* [2,2]<=[4] = {{0,1},{2,3}}; [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}} */
  const char *pairs[] = {"f32[4] {11, 22, 33, 44}", "f32[4] {11, 22, 33, 44}", "f32[4] {1100, 2200, 3300, 4400}",
                         "f32[4] {1100, 2200, 3300, 4400}"};
  EXPECT(AR("[2,2]<=[4]"), 4, 1, x4, pairs);
  EXPECT(AR("{{0,1},{2,3}}"), 4, 1, x4, pairs);
  const char *cross[] = {"f32[4] {101, 202, 303, 404}", "f32[4] {1010, 2020, 3030, 4040}",
                         "f32[4] {101, 202, 303, 404}", "f32[4] {1010, 2020, 3030, 4040}"};
  EXPECT(AR("[2,2]<=[2,2]T(1,0)"), 4, 1, x4, cross);
  /* one device alone in its group keeps its value */
  const char *alone[] = {"f32[4] {1, 2, 3, 4}", "f32[4] {1010, 2020, 3030, 4040}", "f32[4] {100, 200, 300, 400}",
                         "f32[4] {1010, 2020, 3030, 4040}"};
  EXPECT(AR("{{0},{3,1},{2}}"), 4, 1, x4, alone);
#undef AR
}

/* The fold follows the group's order: ((x0 + x1) + x2) + x3 in f32 with x = 1e8, -1e8, 1, 1e-8
 * is (0 + 1) + 1e-8 = 1 (1e-8 is below half an ulp of 1); the reversed group folds
 * ((1e-8 + 1) + -1e8) + 1e8 = (1 - 1e8, which rounds to -1e8) + 1e8 = 0. */
TEST(collectives_fold_order) {
  const char *x[] = {"f32[] 1e8", "f32[] -1e8", "f32[] 1", "f32[] 1e-8"};
  const char *ordered = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[] parameter(0)\n"
                        "  ROOT r = f32[] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=sum\n}\n";
  const char *reversed = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[] parameter(0)\n"
                         "  ROOT r = f32[] all-reduce(x), replica_groups={{3,2,1,0}}, to_apply=sum\n}\n";
  const char *one[] = {"f32[] 1", "f32[] 1", "f32[] 1", "f32[] 1"}, *zero[] = {"f32[] 0", "f32[] 0", "f32[] 0", "f32[] 0"};
  EXPECT(ordered, 4, 1, x, one);
  EXPECT(reversed, 4, 1, x, zero);
}

TEST(collectives_all_reduce_reducers) {
  /* max and min propagate NaN (XLA); and/or of pred; multiply of s32; a tuple all-reduce */
  const char *mm = "HloModule m\n"
                   "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
                   "mn {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] minimum(a, b)\n}\n"
                   "ENTRY e {\n  x = f32[3] parameter(0)\n"
                   "  a = f32[3] all-reduce(x), to_apply=mx\n  b = f32[3] all-reduce(x), to_apply=mn\n"
                   "  ROOT t = (f32[3], f32[3]) tuple(a, b)\n}\n";
  const char *xm[] = {"f32[3] {1, -inf, nan}", "f32[3] {-2, 5, 0}", "f32[3] {7, 3, 1}"};
  const char *wm[] = {"(f32[3], f32[3]) ({7, 5, nan}, {-2, -inf, nan})", "(f32[3], f32[3]) ({7, 5, nan}, {-2, -inf, nan})",
                      "(f32[3], f32[3]) ({7, 5, nan}, {-2, -inf, nan})"};
  EXPECT(mm, 3, 1, xm, wm);
  const char *logic = "HloModule m\n"
                      "and {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n  ROOT s = pred[] and(a, b)\n}\n"
                      "or {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n  ROOT s = pred[] or(a, b)\n}\n"
                      "mul {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] multiply(a, b)\n}\n"
                      "ENTRY e {\n  p = pred[4] parameter(0)\n  i = s32[2] parameter(1)\n"
                      "  a = pred[4] all-reduce(p), replica_groups={{0,1}}, to_apply=and\n"
                      "  o = pred[4] all-reduce(p), replica_groups={{0,1}}, to_apply=or\n"
                      "  m = s32[2] all-reduce(i), replica_groups={{0,1}}, to_apply=mul\n"
                      "  ROOT t = (pred[4], pred[4], s32[2]) tuple(a, o, m)\n}\n";
  const char *xl[] = {"pred[4] {1, 1, 0, 0}", "s32[2] {-3, 7}", "pred[4] {1, 0, 1, 0}", "s32[2] {5, -2}"};
  const char *wl[] = {"(pred[4], pred[4], s32[2]) ({1, 0, 0, 0}, {1, 1, 1, 0}, {-15, -14})",
                      "(pred[4], pred[4], s32[2]) ({1, 0, 0, 0}, {1, 1, 1, 0}, {-15, -14})"};
  EXPECT(logic, 2, 2, xl, wl);
  /* one all-reduce of two operands: each reduced on its own */
  const char *tup = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n"
                    "  ROOT r = (f32[2], f32[3]) all-reduce(x, y), replica_groups={}, to_apply=sum\n}\n";
  const char *xt[] = {"f32[2] {1, 2}", "f32[3] {0.5, 0.25, 0}", "f32[2] {3, 4}", "f32[3] {1, 2, -1}"};
  const char *wt[] = {"(f32[2], f32[3]) ({4, 6}, {1.5, 2.25, -1})", "(f32[2], f32[3]) ({4, 6}, {1.5, 2.25, -1})"};
  EXPECT(tup, 2, 2, xt, wt);
}

TEST(collectives_gather_scatter) {
  /* all-gather concatenates in member order; along dimension 1 of a 2x2 */
  const char *ag = "HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n"
                   "  a = f32[4,2] all-gather(x), replica_groups={{1,0}}, dimensions={0}\n"
                   "  b = f32[2,4] all-gather(x), replica_groups={}, dimensions={1}\n"
                   "  ROOT t = (f32[4,2], f32[2,4]) tuple(a, b)\n}\n";
  const char *xg[] = {"f32[2,2] {{1, 2}, {3, 4}}", "f32[2,2] {{5, 6}, {7, 8}}"};
  const char *wg = "(f32[4,2], f32[2,4]) ({{5, 6}, {7, 8}, {1, 2}, {3, 4}}, {{1, 2, 5, 6}, {3, 4, 7, 8}})";
  const char *wga[] = {wg, wg};
  EXPECT(ag, 2, 1, xg, wga);
  /* reduce-scatter: member k gets the sum of block k; with {1,0} device 1 is member 0 */
  const char *rs = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n"
                   "  a = f32[2] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=sum\n"
                   "  b = f32[2] reduce-scatter(x), replica_groups={{1,0}}, dimensions={0}, to_apply=sum\n"
                   "  ROOT t = (f32[2], f32[2]) tuple(a, b)\n}\n";
  const char *wrs[] = {"(f32[2], f32[2]) ({11, 22}, {33, 44})", "(f32[2], f32[2]) ({33, 44}, {11, 22})"};
  EXPECT(rs, 2, 1, x4, wrs);
  /* 4 devices, groups of 2, scattering dimension 1 of a 2x2 */
  const char *rs4 = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[2,2] parameter(0)\n"
                    "  ROOT r = f32[2,1] reduce-scatter(x), replica_groups=[2,2]<=[4], dimensions={1}, to_apply=sum\n}\n";
  const char *x22[] = {"f32[2,2] {{1, 2}, {3, 4}}", "f32[2,2] {{10, 20}, {30, 40}}", "f32[2,2] {{100, 200}, {300, 400}}",
                       "f32[2,2] {{1000, 2000}, {3000, 4000}}"};
  const char *w22[] = {"f32[2,1] {{11}, {33}}", "f32[2,1] {{22}, {44}}", "f32[2,1] {{1100}, {3300}}",
                       "f32[2,1] {{2200}, {4400}}"};
  EXPECT(rs4, 4, 1, x22, w22);
}

TEST(collectives_all_to_all_permute_broadcast) {
  /* all-to-all: block j of device i goes to device j, placed at i */
  const char *a2a = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                    "  ROOT r = f32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}\n}\n";
  const char *x[] = {"f32[4] {1, 2, 3, 4}", "f32[4] {5, 6, 7, 8}"};
  const char *w[] = {"f32[4] {1, 2, 5, 6}", "f32[4] {3, 4, 7, 8}"};
  EXPECT(a2a, 2, 1, x, w);
  const char *tup = "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  y = f32[1] parameter(1)\n"
                    "  ROOT r = (f32[1], f32[1]) all-to-all(x, y), replica_groups={{0,1}}\n}\n";
  const char *xt[] = {"f32[1] {1}", "f32[1] {2}", "f32[1] {3}", "f32[1] {4}"};
  const char *wt[] = {"(f32[1], f32[1]) ({1}, {3})", "(f32[1], f32[1]) ({2}, {4})"};
  EXPECT(tup, 2, 2, xt, wt);
  /* a permute around three of four devices: device 0 is nobody's target and gets zeros */
  const char *cp = "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n"
                   "  ROOT r = s32[2] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3}}\n}\n";
  const char *xp[] = {"s32[2] {1, -1}", "s32[2] {2, -2}", "s32[2] {3, -3}", "s32[2] {4, -4}"};
  const char *wp[] = {"s32[2] {0, 0}", "s32[2] {1, -1}", "s32[2] {2, -2}", "s32[2] {3, -3}"};
  EXPECT(cp, 4, 1, xp, wp);
  /* collective-broadcast: the first member of each group ({1,0}: device 1; {3,2}: device 3) */
  const char *cb = "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n"
                   "  ROOT r = s32[2] collective-broadcast(x), replica_groups={{1,0},{3,2}}\n}\n";
  const char *wb[] = {"s32[2] {2, -2}", "s32[2] {2, -2}", "s32[2] {4, -4}", "s32[2] {4, -4}"};
  EXPECT(cb, 4, 1, xp, wb);
}

TEST(collectives_device_ids_and_modes) {
  /* 2 replicas x 2 partitions: device d is replica d / 2, partition d % 2 */
  const char *ids = "HloModule m, num_partitions=2\nENTRY e {\n  r = u32[] replica-id()\n  p = u32[] partition-id()\n"
                    "  ROOT t = (u32[], u32[]) tuple(r, p)\n}\n";
  const char *w[] = {"(u32[], u32[]) (0, 0)", "(u32[], u32[]) (0, 1)", "(u32[], u32[]) (1, 0)", "(u32[], u32[]) (1, 1)"};
  EXPECT(ids, 4, 0, NULL, w);
  /* with a channel: all-reduce over replica 0's and 1's groups with every partition (4
   * devices), and a cross-partition permute within each replica; use_global_device_ids */
  const char *modes = "HloModule m, num_partitions=2\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n"
                      "  a = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, to_apply=sum\n"
                      "  c = f32[4] collective-permute(x), channel_id=2, source_target_pairs={{0,1},{1,0}}\n"
                      "  g = f32[4] all-reduce(x), channel_id=3, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=sum\n"
                      "  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, c, g)\n}\n";
  const char *wm[] = {"(f32[4], f32[4], f32[4]) ({1111, 2222, 3333, 4444}, {10, 20, 30, 40}, {1001, 2002, 3003, 4004})",
                      "(f32[4], f32[4], f32[4]) ({1111, 2222, 3333, 4444}, {1, 2, 3, 4}, {110, 220, 330, 440})",
                      "(f32[4], f32[4], f32[4]) ({1111, 2222, 3333, 4444}, {1000, 2000, 3000, 4000}, {110, 220, 330, 440})",
                      "(f32[4], f32[4], f32[4]) ({1111, 2222, 3333, 4444}, {100, 200, 300, 400}, {1001, 2002, 3003, 4004})"};
  EXPECT(modes, 4, 1, x4, wm);
}

TEST(collectives_async_forms) {
  /* what optimized dumps hold: -start/-done pairs, a permute-start with u32 context, and an
   * async reduce-scatter written as sugar */
  const char *text = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n"
                     "  ars = f32[4] all-reduce-start(x), replica_groups={}, to_apply=sum\n"
                     "  ard = f32[4] all-reduce-done(ars)\n"
                     "  ags = (f32[4], f32[8]) all-gather-start(x), replica_groups={}, dimensions={0}\n"
                     "  agd = f32[8] all-gather-done(ags)\n"
                     "  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}\n"
                     "  cpd = f32[4] collective-permute-done(cps)\n"
                     "  rss = ((f32[4]), f32[2]) reduce-scatter-start(x), replica_groups={}, dimensions={0}, to_apply=sum\n"
                     "  rsd = f32[2] reduce-scatter-done(rss)\n"
                     "  ROOT t = (f32[4], f32[8], f32[4], f32[2]) tuple(ard, agd, cpd, rsd)\n}\n";
  const char *w[] = {"(f32[4], f32[8], f32[4], f32[2]) ({11, 22, 33, 44}, {1, 2, 3, 4, 10, 20, 30, 40}, {10, 20, 30, 40}, {11, 22})",
                     "(f32[4], f32[8], f32[4], f32[2]) ({11, 22, 33, 44}, {1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 3, 4}, {33, 44})"};
  EXPECT(text, 2, 1, x4, w);
}

/* Runs text as a plain execution (one device, or the context's run) and expects the error. */
static void expect_single_error(const char *text, const char *msg, int line) {
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *arg = NULL, *res = NULL;
  cxla_literal *x = lit("f32[4] {1, 2, 3, 4}");
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "c.hlo", &m);
  if (s == CXLA_OK) s = cxla_compile(m, NULL, &e);
  if (s == CXLA_OK) s = cxla_buffer_from_literal(test_ctx(), NULL, x, &arg);
  if (s == CXLA_OK) s = cxla_executable_execute(e, 1, &arg, &res);
  if (s != CXLA_ERR_INVALID_ARGUMENT || !strstr(cxla_context_errmsg(test_ctx()), msg))
    test_fail(__FILE__, line, "%s: '%s', want '%s'", cxla_status_str(s), cxla_context_errmsg(test_ctx()), msg);
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(arg);
  cxla_literal_destroy(x);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
}

TEST(collectives_runs_that_do_not_fit) {
  /* one device: groups that allow it run, groups of two are refused before anything runs */
  const char *one = "HloModule m\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n"
                    "  ROOT r = f32[4] all-reduce(x), replica_groups={{0}}, to_apply=sum\n}\n";
  cxla_literal *got[1];
  const char *x[] = {"f32[4] {1, 2, 3, 4}"};
  CHECK_OK(run(one, "interp", 1, 1, x, got));
  cxla_literal *want = lit("f32[4] {1, 2, 3, 4}");
  CHECK(got[0] && want && cx_literal_equal(got[0], want));
  cxla_literal_destroy(got[0]);
  cxla_literal_destroy(want);
  expect_single_error("HloModule m\n" SUMF "ENTRY e {\n  x = f32[4] parameter(0)\n"
                      "  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=sum\n}\n",
                      "c.hlo:9:8: error: all-reduce 'r': its replica groups (cross-replica) name 2 replicas, but this run "
                      "has 1 (1 replica x 1 partition); run it with --replicas=2 or under mpirun -np 2", __LINE__);
  expect_single_error("HloModule m, num_partitions=4\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = u32[] partition-id()\n}\n",
                      "module m is for 4 devices (replica_count=1 x num_partitions=4); this run has 1", __LINE__);
  /* a header's count that the run does not have: refused on n threads too */
  cxla_literal *out[2];
  CHECK(run("HloModule m, replica_count=4\nENTRY e {\n  ROOT r = u32[] replica-id()\n}\n", "interp", 2, 0, NULL, out) ==
        CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "is for 4 devices (replica_count=4 x num_partitions=1); this run has 2");
}

/* Device 1 stops at --max-loop-iterations before the all-reduce its peer waits in: the run
 * fails at once with device 1's error (not after the collective timeout). */
TEST(collectives_failing_device) {
  const char *text = "HloModule m\n" SUMF
                     "cond {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                     "  n = s32[] get-tuple-element(s), index=1\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
                     "body {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                     "  n = s32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
                     "  ROOT t = (s32[], s32[]) tuple(j, n)\n}\n"
                     "ENTRY e {\n  n = s32[] parameter(0)\n  zero = s32[] constant(0)\n  init = (s32[], s32[]) tuple(zero, n)\n"
                     "  w = (s32[], s32[]) while(init), condition=cond, body=body\n  c = s32[] get-tuple-element(w), index=0\n"
                     "  f = f32[] convert(c)\n  ROOT r = f32[] all-reduce(f), to_apply=sum\n}\n";
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--max-loop-iterations=50 --collective-timeout=600"));
  const char *x[] = {"s32[] 3", "s32[] 1000"};
  cxla_literal *got[2];
  for (int b = 0; b < 2; b++) {
    cxla_status s = run(text, b ? "cpu" : "interp", 2, 1, x, got);
    if (b && s == CXLA_ERR_UNSUPPORTED) continue;
    CHECK_MSG(s == CXLA_ERR_RUNTIME, "%s: %s", cxla_status_str(s), cxla_context_errmsg(test_ctx()));
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "device 1");
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "max-loop-iterations");
  }
  /* both under the limit: the loop counts reduce to 3 + 7 */
  const char *ok[] = {"s32[] 3", "s32[] 7"}, *w[] = {"f32[] 10", "f32[] 10"};
  EXPECT(text, 2, 1, ok, w);
}

/* A device that never reaches a collective its peer waits in (a conditional only device 0
 * takes): the peer gives up after --collective-timeout with an error naming it. */
TEST(collectives_timeout_names_the_missing_device) {
  const char *text = "HloModule m\n" SUMF
                     "yes {\n  x = f32[] parameter(0)\n  ROOT r = f32[] all-reduce(x), replica_groups={}, to_apply=sum\n}\n"
                     "no {\n  ROOT x = f32[] parameter(0)\n}\n"
                     "ENTRY e {\n  x = f32[] parameter(0)\n  id = u32[] replica-id()\n  zero = u32[] constant(0)\n"
                     "  first = pred[] compare(id, zero), direction=EQ\n"
                     "  ROOT c = f32[] conditional(first, x, x), true_computation=yes, false_computation=no\n}\n";
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--collective-timeout=1"));
  const char *x[] = {"f32[] 1", "f32[] 2"};
  cxla_literal *got[2];
  for (int b = 0; b < 2; b++) {
    cxla_status s = run(text, b ? "cpu" : "interp", 2, 1, x, got);
    if (b && s == CXLA_ERR_UNSUPPORTED) continue;
    CHECK_MSG(s == CXLA_ERR_RUNTIME, "%s: %s", cxla_status_str(s), cxla_context_errmsg(test_ctx()));
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()),
                       "all-reduce 'r': timed out after 1 s (--collective-timeout) waiting for device 1");
  }
}
