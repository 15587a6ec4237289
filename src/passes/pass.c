/* pass.c — the pass manager: runs passes timed, verified and dumped, repeats a list to a fixed
 * point, and defines the CPU pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/verify.h"
#include "passes/pass.h"
#include "util/file.h"

/* Adds ms to the "name=ms " entry of stats, appending the entry the first time: a pass that
 * runs in every round of a fixed point reports its total. */
static void stats_add(cx_sb *sb, const char *name, double ms) {
  size_t nl = strlen(name);
  const char *p = sb->buf ? sb->buf : "";
  cx_sb out;
  cx_sb_init(&out);
  int found = 0;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *e = strchr(p, ' ');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (!found && len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
      cx_sb_printf(&out, "%s=%.3f ", name, strtod(p + nl + 1, NULL) + ms);
      found = 1;
    } else {
      cx_sb_putn(&out, p, len);
      cx_sb_putc(&out, ' ');
    }
    p += len;
  }
  if (!found) cx_sb_printf(&out, "%s=%.3f ", name, ms);
  if (out.oom) { /* keep the old text rather than lose it */
    cx_sb_free(&out);
    sb->oom = 1;
    return;
  }
  cx_sb_free(sb);
  *sb = out;
}

static int dumping(const cx_pass_ctx *pc) {
  return pc->flags && pc->flags->dump_to && pc->flags->dump_to[0];
}

cxla_status cx_pass_run(cx_pass_ctx *pc, cx_module *m, const cx_pass *p, int *changed) {
  int ch = 0;
  if (changed) *changed = 0;
  /* the module as the pipeline received it, before the first pass touches it */
  if (dumping(pc) && pc->ndumps == 0) CX_TRY(cx_pass_dump_always(pc, m, "input"));
  double t0 = cx_now_ms();
  cxla_status s = p->run(m, &ch);
  double ms = cx_now_ms() - t0;
  if (pc->stats) stats_add(pc->stats, p->name, ms);
  if (s != CXLA_OK) return s;
  cxla_status v = pc->verify ? cx_verify_module(m) : CXLA_OK;
  if (v == CXLA_ERR_OUT_OF_MEMORY) return v; /* the verifier's own failure, not the pass's */
  if (v != CXLA_OK) {
    char why[1800];
    snprintf(why, sizeof why, "%s", cxla_context_errmsg(m->ctx));
    return cx_error(m->ctx, CXLA_ERR_INTERNAL, "pass %s produced an invalid module: %s", p->name, why);
  }
  /* An unchanged module would dump the same text as the previous file: only changes are
   * written, so the files list exactly the decisions the pipeline made. */
  if (ch) CX_TRY(cx_pass_dump(pc, m, p->name));
  if (changed) *changed = ch != 0;
  return CXLA_OK;
}

cxla_status cx_pass_fixpoint(cx_pass_ctx *pc, cx_module *m, const cx_pass *passes, int n, int max_iters) {
  for (int it = 0; it < max_iters; it++) {
    int any = 0;
    for (int i = 0; i < n; i++) {
      int ch = 0;
      CX_TRY(cx_pass_run(pc, m, &passes[i], &ch));
      any |= ch;
    }
    if (!any) break;
  }
  return CXLA_OK;
}

cxla_status cx_pass_pipeline_cpu(cx_pass_ctx *pc, cx_module *m) {
  static const cx_pass inline_pass = {"inline", cx_pass_inline_calls};
  static const cx_pass simplify[] = {
      {"simplify", cx_pass_simplify},
      {"fold", cx_pass_fold_constants},
      {"cse", cx_pass_cse},
      {"dce", cx_pass_dce},
  };
  static const cx_pass dce = {"dce", cx_pass_dce};
  /* first: every later pass and the emitter may then ignore layouts */
  static const cx_pass layout = {"layout", cx_pass_layout};
  int ch;
  CX_TRY(cx_pass_run(pc, m, &layout, &ch));
  CX_TRY(cx_pass_run(pc, m, &inline_pass, &ch));
  CX_TRY(cx_pass_fixpoint(pc, m, simplify, CX_ARRAY_LEN(simplify), 8));
  static const cx_pass accumulate = {"reduce-accumulate", cx_pass_reduce_accumulate};
  CX_TRY(cx_pass_run(pc, m, &accumulate, &ch));
  static const cx_pass fusion[] = {
      {"fusion", cx_pass_fusion},
      {"multi-output-fusion", cx_pass_multi_output_fusion},
      {"row-fusion", cx_pass_row_fusion},
      {"dot-epilogue-fusion", cx_pass_dot_epilogue_fusion},
  };
  static const cx_pass wrap = {"wrap-singletons", cx_pass_wrap_singletons};
  if (!pc->flags || pc->flags->fusion) {
    for (int i = 0; i < CX_ARRAY_LEN(fusion); i++) CX_TRY(cx_pass_run(pc, m, &fusion[i], &ch));
  } else {
    CX_TRY(cx_pass_run(pc, m, &wrap, &ch));
  }
  return cx_pass_run(pc, m, &dce, &ch);
}
