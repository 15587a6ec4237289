/* pass.h — HLO-to-HLO passes and the pass manager that runs, times and dumps them. */
#ifndef CX_PASS_H
#define CX_PASS_H
#include "ir/ir.h"
#include "passes/pass_opts.h"

/* A pass edits m in place and sets *changed when it changed anything. */
typedef cxla_status (*cx_pass_fn)(cx_module *m, int *changed);
typedef struct cx_pass {
  const char *name;   /* file-system safe; used in dumps, stats and --dump-pass-re */
  cx_pass_fn run;
} cx_pass;

/* Called after every pass run (cat "pass") and every dump written (cat "dump"), so that the
 * caller can draw them on a timeline; times from cx_now_ms(). */
typedef void (*cx_span_fn)(void *arg, const char *name, const char *cat, double t0_ms, double t1_ms, int changed);

/* State of one compilation's pass pipeline: options (fusion, dumps), a dump counter, stats. */
typedef struct cx_pass_ctx {
  const cx_pass_opts *opts;  /* NULL: fusion on, nothing disabled, no dumps */
  int verify;          /* run cx_verify_module after every pass */
  int ndumps;          /* dump file counter (NN in DIR/<prefix>.<NN>.<pass>.hlo) */
  cx_sb *stats;        /* "name=ms " appended per pass (may be NULL) */
  cx_span_fn span;     /* may be NULL */
  void *span_arg;
  double dump_ms;      /* time spent writing dumps: reported apart, never as a pass's */
  char dump_prefix[160]; /* "module_0003.name", unique in the dump folder (set by the first dump) */
} cx_pass_ctx;

/* Runs one pass: timed (stats), verified when pc->verify (a failure is CXLA_ERR_INTERNAL
 * "pass NAME produced an invalid module: ..."), and dumped when it changed the module (an
 * unchanged module would repeat the previous dump). With --dump-to set, the first run also
 * dumps the module as received, as "<NN>.input". */
cxla_status cx_pass_run(cx_pass_ctx *pc, cx_module *m, const cx_pass *p, int *changed);
/* Runs passes in order, repeating the whole list until nothing changes (at most max_iters). */
cxla_status cx_pass_fixpoint(cx_pass_ctx *pc, cx_module *m, const cx_pass *passes, int n,
                             int max_iters);
/* Writes the module as HLO text and GraphViz (fusions drawn as clusters) under --dump-to,
 * if `pass` matches --dump-pass-re. `pass` names the file. */
cxla_status cx_pass_dump(cx_pass_ctx *pc, cx_module *m, const char *pass);
/* The same whatever --dump-pass-re says (the "input" dump before the first pass). */
cxla_status cx_pass_dump_always(cx_pass_ctx *pc, cx_module *m, const char *pass);
/* Writes DIR/<prefix>.<suffix> (a backend's own dump files: IR, assembly, buffers). */
cxla_status cx_dump_file(cx_pass_ctx *pc, cx_module *m, const char *suffix, const char *data, size_t len);
/* Appends "pass NAME: MS ms, changed|unchanged" to DIR/<prefix>.passes.txt. */
cxla_status cx_dump_pass_time(cx_pass_ctx *pc, cx_module *m, const char *pass, double ms, int changed);
/* Ends a compile's dumps: renders the .svg files when --dump-format has svg. */
cxla_status cx_dump_finish(cx_pass_ctx *pc, cx_module *m);
/* Checks a --dump-format value ("hlo,dot,svg": any of them, at least one). */
cxla_status cx_dump_check_format(cxla_context *ctx, const char *value);

/* The passes (one file each). */
cxla_status cx_pass_layout(cx_module *m, int *changed);         /* layout.c: bitcasts -> logical ops */
/* async.c: each async-start/update/done chain becomes a call of its computation (async-start's
 * value the tuple ((operands), call, zero context)), which the inline pass then inlines, and
 * copy-start/copy-done a copy: on one device a chain is what it wraps. */
cxla_status cx_pass_async(cx_module *m, int *changed);
cxla_status cx_pass_reduce_accumulate(cx_module *m, int *changed); /* reduce_accumulate.c: float sums */
cxla_status cx_pass_broadcast_order(cx_module *m, int *changed); /* broadcast_order.c: dims in order */
/* batchnorm_expand.c: batch-norm ops as reduces, broadcasts and elementwise ops */
cxla_status cx_pass_batchnorm_expand(cx_module *m, int *changed);
/* scaled_dot_expand.c: scaled-dot and __op$block_scaled_dot as converts, broadcasts, multiplies, a dot */
cxla_status cx_pass_scaled_dot_expand(cx_module *m, int *changed);
/* scan_expand.c: scan as the while loop over dynamic slices it stands for */
cxla_status cx_pass_scan_expand(cx_module *m, int *changed);
/* annotations.c: sharding and memory-space custom-calls replaced by their operands */
cxla_status cx_pass_remove_annotations(cx_module *m, int *changed);
cxla_status cx_pass_inline_calls(cx_module *m, int *changed);   /* inline.c */
cxla_status cx_pass_simplify(cx_module *m, int *changed);       /* simplify.c */
cxla_status cx_pass_fold_constants(cx_module *m, int *changed); /* fold.c (via the interpreter) */
cxla_status cx_pass_cse(cx_module *m, int *changed);            /* cse.c */
cxla_status cx_pass_dce(cx_module *m, int *changed);            /* dce.c */
/* dot_transpose.c: transpose(dot(a, b)) that swaps the free dims is dot(b, a) */
cxla_status cx_pass_dot_transpose(cx_module *m, int *changed);
/* dot_orient.c: transpose(dot(a, b)) whose GEMM reads both sides transposed is transpose'(dot(b, a)) */
cxla_status cx_pass_dot_orient(cx_module *m, int *changed);
/* relu_mask.c: x > k reads max(x, c) (c <= k) where that maximum exists: a relu's mask reads the relu */
cxla_status cx_pass_relu_mask(cx_module *m, int *changed);
cxla_status cx_pass_fusion(cx_module *m, int *changed);         /* fusion.c */
cxla_status cx_pass_multi_output_fusion(cx_module *m, int *changed); /* fusion_multi.c */
cxla_status cx_pass_row_fusion(cx_module *m, int *changed);          /* fusion_row.c */
cxla_status cx_pass_dot_epilogue_fusion(cx_module *m, int *changed); /* fusion_dot.c */
/* --fusion=off: every op that needs memory becomes its own single-op fusion. */
cxla_status cx_pass_wrap_singletons(cx_module *m, int *changed);    /* fusion_wrap.c */

/* One row of a pipeline table. */
typedef enum cx_step_kind {
  CX_STEP_ONCE,     /* runs once */
  CX_STEP_FIXPOINT, /* consecutive FIXPOINT rows repeat together until nothing changes */
  CX_STEP_FUSION,   /* runs once, only with --fusion=on */
} cx_step_kind;
typedef struct cx_pipeline_step {
  cx_pass pass;
  cx_step_kind kind;
  int required;     /* the backend cannot compile without it: --disable-pass refuses it */
  const char *desc; /* one line for `cxla compile --list-passes` */
} cx_pipeline_step;

/* The standard pipeline before code generation (simplification fixpoint then fusion or
 * singleton wrapping per flags), skipping the passes named by --disable-pass. */
cxla_status cx_pass_pipeline(cx_pass_ctx *pc, cx_module *m);
/* Its steps in the order they run (a pass may appear twice: dce); *n receives the count. */
const cx_pipeline_step *cx_pipeline_steps(int *n);
/* Checks a --disable-pass value ("simplify,cse"): CXLA_ERR_INVALID_ARGUMENT naming an unknown
 * or required pass and listing those that may be disabled. */
cxla_status cx_pipeline_check_disabled(cxla_context *ctx, const char *list);

/* GraphViz rendering of a module: fusions as clusters, control-flow computations as
 * subgraphs. */
void cx_dot_graph(cx_sb *sb, const cx_module *m);

#endif
