/* test_passes_alloc.c — allocation failures inside the passes: the simplification pipeline
 * (and its dumps) runs with cx_alloc_fail_after(n) for n = 0, 1, 2, ... until a run completes
 * without an injected failure. Each run must succeed or fail with CXLA_ERR_OUT_OF_MEMORY,
 * never crash; the ASan build turns leaks on these paths into failures. */
#include <unistd.h>
#include "core/flags.h"
#include "ir/clone.h"
#include "passes_helpers.h"

static const char *text =
    "HloModule oom\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "helper {\n  x = f32[2,3] parameter(0)\n  c = f32[2,3] copy(x)\n  ROOT n = f32[2,3] negate(c)\n}\n"
    "ENTRY main {\n  p = f32[2,3] parameter(0)\n  q = s32[4] parameter(1)\n  h = f32[2,3] call(p), to_apply=helper\n"
    "  nn = f32[2,3] negate(h)\n  r = f32[2,1,3] reshape(nn)\n  z = f32[] constant(0)\n"
    "  d = f32[2,3] reduce(r, z), dimensions={1}, to_apply=add\n  t = f32[3,2] transpose(d), dimensions={1,0}\n"
    "  t2 = f32[2,3] transpose(t), dimensions={1,0}\n  k = s32[4] constant({1, 2, 3, 4})\n  k2 = s32[4] add(k, k)\n"
    "  zi = s32[] constant(0)\n  zb = s32[4] broadcast(zi), dimensions={}\n  qa = s32[4] add(q, zb)\n"
    "  qb = s32[4] multiply(qa, k2)\n  qc = s32[4] multiply(qa, k2)\n  i = s32[] constant(1)\n"
    "  ds = s32[2] dynamic-slice(qb, i), dynamic_slice_sizes={2}\n  s1 = s32[2] slice(qc), slice={[0:2]}\n"
    "  ROOT o = (f32[2,3], s32[2], s32[2]) tuple(t2, ds, s1)\n}\n";

static cxla_status run_pipeline(cx_module *m, const char *dump_dir) {
  cx_flags f;
  cx_flags_init(&f);
  f.fusion = 0;
  f.dump_to = (char *)dump_dir; /* borrowed: not freed below */
  f.dump_pass_re = (char *)"^cse$"; /* the input and one pass: every dump path, fewer files */
  cx_sb stats;
  cx_sb_init(&stats);
  static const cx_pass passes[] = {
      {"simplify", cx_pass_simplify}, {"fold", cx_pass_fold_constants}, {"cse", cx_pass_cse}, {"dce", cx_pass_dce}};
  static const cx_pass inl = {"inline", cx_pass_inline_calls};
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 1, 0, &stats};
  int ch;
  cxla_status s = cx_pass_run(&pc, m, &inl, &ch);
  if (s == CXLA_OK) s = cx_pass_fixpoint(&pc, m, passes, 4, 8);
  cx_sb_free(&stats);
  return s;
}

static void sweep(const char *dump_dir) {
  cx_module *m = TP_PARSE(text);
  if (!m) return;
  int completed = 0;
  for (int64_t n = 0; n < 100000 && !completed; n++) {
    cx_module *c = cx_module_clone(m);
    if (!c) { CHECK(0); break; }
    cx_alloc_fail_after(n); /* also resets the failure count */
    cxla_status s = run_pipeline(c, dump_dir);
    int injected = cx_alloc_failures() > 0;
    cx_alloc_fail_after(-1);
    if (!injected) {
      completed = 1;
      CHECK_MSG(s == CXLA_OK, "n=%lld: %s", (long long)n, cxla_context_errmsg(test_ctx()));
      TP_EQUIV(m, c, 2);
    } else {
      CHECK_MSG(s == CXLA_OK || s == CXLA_ERR_OUT_OF_MEMORY, "n=%lld: status %d: %s", (long long)n, s,
                cxla_context_errmsg(test_ctx()));
    }
    cx_module_free(c);
  }
  CHECK(completed);
  cx_module_free(m);
}

TEST(passes_alloc_failures_pipeline) { sweep(NULL); }

TEST(passes_alloc_failures_with_dumps) {
  char base[] = "/tmp/cxla_passes_XXXXXX";
  if (!mkdtemp(base)) { CHECK(0); return; }
  /* without `dot` on PATH: hundreds of renderings would only slow the sweep down */
  const char *path = getenv("PATH");
  char *saved = path ? strdup(path) : NULL;
  setenv("PATH", "/nonexistent", 1);
  sweep(base);
  if (saved) setenv("PATH", saved, 1);
  free(saved);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  CHECK(system(cmd) == 0);
}
