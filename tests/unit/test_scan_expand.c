/* test_scan_expand.c — scan as a while loop on the cpu (passes/scan_expand.c), checked against
 * the interpreter, which evaluates scan itself; and dynamic-update-slice in place (the loop's
 * stacked outputs are written one window per trip, codegen/kernel.c), clamping included. */
#include <stdlib.h>
#include <string.h>
#include "passes/pass.h"
#include "passes_helpers.h"
#include "test_cpu_helpers.h"

/* Two inputs, two carries (one of them an s32 counter), two stacked outputs, run last to
 * first: every part of the state has its own place in the loop. */
static const char *k_scan =
    "HloModule s\n"
    "step {\n  x = f32[3] parameter(0)\n  y = s32[] parameter(1)\n  acc = f32[3] parameter(2)\n"
    "  n = s32[] parameter(3)\n  a = f32[3] add(acc, x)\n  yf = f32[] convert(y)\n"
    "  b = f32[3] broadcast(yf), dimensions={}\n  m = f32[3] multiply(a, b)\n  one = s32[] constant(1)\n"
    "  n1 = s32[] add(n, one)\n  big = pred[] compare(y, n), direction=GT\n"
    "  ROOT t = (f32[3], pred[], f32[3], s32[]) tuple(m, big, a, n1)\n}\n"
    "ENTRY e {\n  xs = f32[5,3] parameter(0)\n  ys = s32[5] parameter(1)\n  z = f32[3] parameter(2)\n"
    "  k = s32[] constant(0)\n"
    "  ROOT r = (f32[5,3], pred[5], f32[3], s32[]) scan(xs, ys, z, k), dimensions={0}, num_carries=2, "
    "is_reverse=true, to_apply=step\n}\n";

TEST(scan_expand_makes_a_while_loop) {
  cx_module *m = TP_PARSE(k_scan);
  if (!m) return;
  TP_RUN(m, cx_pass_scan_expand, 1);
  CHECK_EQ_INT(tp_count_all(m, CX_OP_WHILE), 1);
  CHECK_EQ_INT(tp_count_all(m, CX_OP_CALL), 1); /* the step, for the inline pass */
  TP_RUN(m, cx_pass_dce, 1);
  CHECK_EQ_INT(tp_count_all(m, CX_OP_SCAN), 0);
  cx_module_free(m);
}

TEST(scan_runs_natively_on_the_cpu) {
  const char *in[3] = {"f32[5,3] {{1, 2, 3}, {-1, 0.5, 4}, {2, 2, 2}, {0, -3, 1}, {7, 1, -2}}", "s32[5] {3, -1, 0, 2, 5}",
                       "f32[3] {0.25, -1, 2}"};
  char *stats = NULL;
  CHECK(cpu_check(k_scan, 3, in, NULL, 0, 0, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "%s", stats);
  free(stats);
  /* with the pass off the interpreter runs the scan for the cpu: the same values */
  CHECK(cpu_check(k_scan, 3, in, "--disable-pass=scan-expand", 0, 0, &stats, NULL));
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 1, "%s", stats);
  free(stats);
}

/* A loop that writes rows i*3 .. i*3+1 of an 8-row buffer on trip i = 0..3: the starts 0, 3,
 * 6 and 9 are clamped to at most 6, so trips 2 and 3 both write rows 6 and 7 (the last one
 * wins). Computed in place: the update window only. A second buffer's update reads the buffer
 * itself (rows shifted): the slice is read before the window is stored. */
TEST(dynamic_update_slice_in_place_in_a_loop) {
  const char *text =
      "HloModule w\n"
      "cond {\n  p = (s32[], f32[8,3], f32[8,3]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(4)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s32[], f32[8,3], f32[8,3]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  buf = f32[8,3] get-tuple-element(p), index=1\n  sh = f32[8,3] get-tuple-element(p), index=2\n"
      "  three = s32[] constant(3)\n  row = s32[] multiply(i, three)\n  zero = s32[] constant(0)\n"
      "  fi = f32[] convert(i)\n  u = f32[2,3] broadcast(fi), dimensions={}\n  io = f32[2,3] iota(), iota_dimension=1\n"
      "  v = f32[2,3] add(u, io)\n  nb = f32[8,3] dynamic-update-slice(buf, v, row, zero)\n"
      "  top = f32[2,3] slice(sh), slice={[1:3], [0:3]}\n  w = f32[2,3] add(top, v)\n"
      "  ns = f32[8,3] dynamic-update-slice(sh, w, row, zero)\n  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n  ROOT t = (s32[], f32[8,3], f32[8,3]) tuple(i1, nb, ns)\n}\n"
      "ENTRY e {\n  b0 = f32[8,3] parameter(0)\n  k = s32[] constant(0)\n"
      "  s = (s32[], f32[8,3], f32[8,3]) tuple(k, b0, b0)\n"
      "  ROOT r = (s32[], f32[8,3], f32[8,3]) while(s), condition=cond, body=body\n}\n";
  int64_t d[2] = {8, 3};
  char *b0 = cpu_ramp_nd("f32", d, 2, 24, -1, 100);
  const char *in[1] = {b0};
  cxla_literal *got = NULL;
  CHECK(cpu_check(text, 1, in, NULL, 0, 0, NULL, &got));
  /* by hand: rows 6 and 7 hold trip 3's update {3, 4, 5} */
  if (got && cxla_literal_tuple_size(got) == 3) {
    cxla_literal *buf = cxla_literal_tuple_get(got, 1);
    for (int j = 0; j < 3; j++) {
      CHECK_NEAR(cxla_literal_get_f64(buf, 6 * 3 + j), 3 + j, 0);
      CHECK_NEAR(cxla_literal_get_f64(buf, 7 * 3 + j), 3 + j, 0);
      CHECK_NEAR(cxla_literal_get_f64(buf, 2 * 3 + j), 100 - (2 * 3 + j), 0); /* never written */
    }
  }
  cxla_literal_destroy(got);
  free(b0);
}
