/* pass.c — the pass manager: runs passes timed, verified and dumped, repeats a list to a fixed
 * point, and defines the CPU pipeline as a table (which --disable-pass and
 * `cxla compile --list-passes` read). */
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
  return pc->opts && pc->opts->dump_to && pc->opts->dump_to[0];
}

cxla_status cx_pass_run(cx_pass_ctx *pc, cx_module *m, const cx_pass *p, int *changed) {
  int ch = 0;
  if (changed) *changed = 0;
  /* the module as the pipeline received it, before the first pass touches it */
  if (dumping(pc) && pc->ndumps == 0) CX_TRY(cx_pass_dump_always(pc, m, "input"));
  double t0 = cx_now_ms();
  cxla_status s = p->run(m, &ch);
  double t1 = cx_now_ms(), ms = t1 - t0;
  if (pc->stats) stats_add(pc->stats, p->name, ms);
  if (pc->span) pc->span(pc->span_arg, p->name, "pass", t0, t1, ch != 0);
  if (s != CXLA_OK) return s;
  if (dumping(pc)) CX_TRY(cx_dump_pass_time(pc, m, p->name, ms, ch != 0));
  cxla_status v = pc->verify ? cx_verify_module(m) : CXLA_OK;
  if (v == CXLA_ERR_OUT_OF_MEMORY) return v; /* the verifier's own failure, not the pass's */
  if (v != CXLA_OK) {
    char why[1800];
    snprintf(why, sizeof why, "%s", cx_errmsg(m->ctx));
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

/* The CPU pipeline as data, in the order it runs. Consecutive CX_STEP_FIXPOINT rows repeat
 * together until a round changes nothing; CX_STEP_FUSION rows run only with --fusion=on.
 * A required row is what the emitter relies on (--disable-pass refuses it): layout leaves no
 * bitcast or layout behind, and wrap-singletons gives every op that needs a kernel a fusion of
 * its own. After the fusion pass it finds nothing left to wrap; it runs anyway, so that
 * --fusion=off and a disabled "fusion" both still leave a module the backend can compile. */
static const cx_pipeline_step steps[] = {
    {{"layout", cx_pass_layout}, CX_STEP_ONCE, 1,
     "rewrites every bitcast as logical ops, then drops all layouts (runs first)"},
    {{"remove-annotations", cx_pass_remove_annotations}, CX_STEP_ONCE, 0,
     "drops Sharding, SPMD and MoveToHost/MoveToDevice custom-calls: one device, each is its operand"},
    {{"async", cx_pass_async}, CX_STEP_ONCE, 1,
     "runs each async-start/update/done chain as a call of its computation, copy-start/done as a copy"},
    {{"broadcast-order", cx_pass_broadcast_order}, CX_STEP_ONCE, 1,
     "a broadcast with out-of-order dimensions becomes a transpose and an in-order broadcast"},
    {{"batchnorm-expand", cx_pass_batchnorm_expand}, CX_STEP_ONCE, 0,
     "batch-norm-training/-inference/-grad become the reduces and elementwise ops they stand for"},
    {{"scan-expand", cx_pass_scan_expand}, CX_STEP_ONCE, 0,
     "scan becomes a while loop over dynamic slices that calls its computation once per step"},
    {{"inline", cx_pass_inline_calls}, CX_STEP_ONCE, 0, "replaces every call, and every fusion the input brings (XLA's), by a copy of its callee's instructions"},
    {{"simplify", cx_pass_simplify}, CX_STEP_FIXPOINT, 0,
     "algebraic simplification: identities, no-op shape ops, reduce and shape rewrites"},
    {{"fold", cx_pass_fold_constants}, CX_STEP_FIXPOINT, 0,
     "evaluates instructions whose operands are all constants (with the interpreter)"},
    {{"cse", cx_pass_cse}, CX_STEP_FIXPOINT, 0, "merges identical instructions"},
    {{"dot-transpose", cx_pass_dot_transpose}, CX_STEP_FIXPOINT, 0,
     "a transpose that swaps its dot's free dimensions becomes the dot of the swapped operands; a dot reads a transposed operand's source in place where its free dims keep their order"},
    {{"dce", cx_pass_dce}, CX_STEP_FIXPOINT, 0, "removes instructions nothing uses"},
    {{"relu-mask", cx_pass_relu_mask}, CX_STEP_ONCE, 0,
     "x > k reads max(x, c) where that maximum is computed too (c <= k): a relu's gradient mask reads the relu, so x can end in the dot's epilogue"},
    {{"dot-orient", cx_pass_dot_orient}, CX_STEP_ONCE, 0,
     "a transposed dot whose GEMM reads both operands transposed becomes the dot of the swapped operands"},
    {{"scaled-dot-expand", cx_pass_scaled_dot_expand}, CX_STEP_ONCE, 0,
     "scaled-dot and __op$block_scaled_dot become converts, broadcasts, multiplies and a dot"},
    {{"reduce-accumulate", cx_pass_reduce_accumulate}, CX_STEP_ONCE, 0,
     "float sums: 16-bit data summed in f32, sums of over 32768 elements as a tree (docs/numerics.md)"},
    {{"fusion", cx_pass_fusion}, CX_STEP_FUSION, 0,
     "loop and input fusion: producers into their consumers, dot epilogues, constants"},
    {{"wrap-singletons", cx_pass_wrap_singletons}, CX_STEP_ONCE, 1,
     "a single-op fusion for every op that still needs a kernel (all of them with --fusion=off)"},
    {{"multi-output-fusion", cx_pass_multi_output_fusion}, CX_STEP_FUSION, 0,
     "producer and consumer, or siblings reading one operand, become one multi-output fusion"},
    {{"row-fusion", cx_pass_row_fusion}, CX_STEP_FUSION, 0,
     "a row reduction and the fusion that reads it once per row become one kernel"},
    {{"dot-epilogue-fusion", cx_pass_dot_epilogue_fusion}, CX_STEP_FUSION, 0,
     "a dot and the elementwise ops on its result become one fusion (GEMM, then epilogue)"},
    {{"dce", cx_pass_dce}, CX_STEP_ONCE, 0, "removes instructions nothing uses"},
};

const cx_pipeline_step *cx_pipeline_steps(int *n) {
  *n = CX_ARRAY_LEN(steps);
  return steps;
}

/* Whether `name` is an item of the comma-separated list. */
static int listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && !strncmp(p, name, n)) return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

static const cx_pipeline_step *find_step(const char *name, size_t len) {
  for (int i = 0; i < CX_ARRAY_LEN(steps); i++)
    if (strlen(steps[i].pass.name) == len && !strncmp(steps[i].pass.name, name, len)) return &steps[i];
  return NULL;
}

/* "a, b, c": the pipeline's pass names that are (required) or are not, each once. */
static void list_names(cx_sb *sb, int required) {
  int k = 0;
  for (int i = 0; i < CX_ARRAY_LEN(steps); i++) {
    const cx_pipeline_step *s = &steps[i];
    if (s->required != required || find_step(s->pass.name, strlen(s->pass.name)) != s) continue;
    cx_sb_printf(sb, "%s%s", k++ ? ", " : "", s->pass.name);
  }
}

cxla_status cx_pipeline_check_disabled(cxla_context *ctx, const char *list) {
  for (const char *p = list ? list : ""; *p;) {
    size_t len = strcspn(p, ",");
    const cx_pipeline_step *s = len ? find_step(p, len) : NULL;
    if (!s || s->required) {
      cx_sb names;
      cx_sb_init(&names);
      list_names(&names, 0);
      cx_sb_puts(&names, " (required: ");
      list_names(&names, 1);
      cx_sb_putc(&names, ')');
      cxla_status st;
      if (s)
        st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT,
                      "flag --disable-pass: pass '%s' is required (the backend cannot compile without it); "
                      "passes that may be disabled: %s",
                      s->pass.name, names.buf ? names.buf : "");
      else
        st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT,
                      "flag --disable-pass: unknown pass '%.*s'; passes that may be disabled: %s", (int)len, p,
                      names.buf ? names.buf : "");
      cx_sb_free(&names);
      return st;
    }
    p += len + (p[len] == ',');
  }
  return CXLA_OK;
}

cxla_status cx_pass_pipeline(cx_pass_ctx *pc, cx_module *m) {
  const char *off = pc->opts ? pc->opts->disable_pass : NULL;
  int fusion = !pc->opts || pc->opts->fusion;
  cx_pass group[CX_ARRAY_LEN(steps)];
  int ch;
  for (int i = 0; i < CX_ARRAY_LEN(steps);) {
    const cx_pipeline_step *s = &steps[i];
    if (s->kind == CX_STEP_FIXPOINT) {
      int n = 0;
      for (; i < CX_ARRAY_LEN(steps) && steps[i].kind == CX_STEP_FIXPOINT; i++)
        if (!listed(off, steps[i].pass.name)) group[n++] = steps[i].pass;
      if (n) CX_TRY(cx_pass_fixpoint(pc, m, group, n, 8));
      continue;
    }
    i++;
    if (s->kind == CX_STEP_FUSION && !fusion) continue;
    if (!s->required && listed(off, s->pass.name)) continue;
    CX_TRY(cx_pass_run(pc, m, &s->pass, &ch));
  }
  return CXLA_OK;
}

cx_pass_opts cx_pass_opts_from_flags(const cx_flags *f) {
  cx_pass_opts o = {f->fusion, f->disable_pass, f->dump_to, f->dump_pass_re, f->dump_format};
  return o;
}

cxla_status cx_pass_check_flags(cxla_context *ctx, const cx_flags *f) {
  if (f->disable_pass) CX_TRY(cx_pipeline_check_disabled(ctx, f->disable_pass));
  if (f->dump_format) CX_TRY(cx_dump_check_format(ctx, f->dump_format));
  return CXLA_OK;
}
