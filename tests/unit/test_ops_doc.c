/* test_ops_doc.c — docs/ops.md, the op reference, generated from the op table and the
 * library's own predicates, and the test that keeps the checked-in file equal to it.
 * `make docs` runs this test with CXLA_WRITE_OPS_DOC=docs/ops.md, which writes the file
 * instead of comparing. The per-op answers come from cx_op_class_of / cx_op_arity (ops.def),
 * cx_interp_runs_op (the interpreter's one gate), cx_emit_handles_op (the emitter's),
 * fu_needs_kernel_wrap (what the pipeline puts in kernels) and cx_op_gpu_of (the gpu column);
 * the few ops the CPU sequencer treats on their own (sequencer.c emit_instr,
 * passes/dot_lowering.c) are spelled out below. */
#include <errno.h>
#include "codegen/cg.h"
#include "interp/interp.h"
#include "passes/fusion_util.h"
#include "util/file.h"
#include "test.h"

static const char *class_name(cx_op_class c) {
  switch (c) {
  case CX_CLASS_DATA: return "data";
  case CX_CLASS_ELEMENTWISE: return "elementwise";
  case CX_CLASS_SHAPE: return "shape";
  case CX_CLASS_REDUCE: return "reduce";
  case CX_CLASS_LIBRARY: return "library";
  case CX_CLASS_CONTROL: return "control";
  default: return "other";
  }
}

/* The op table's DISJOINT fuse column, as both backends act on it. */
#define DISJOINT_FUSED "compiled into its consumer's kernel where its windows are disjoint (a max-pool's gradient)"
/* ... and its UPDATE value. */
#define UPDATE_FUSED "one kernel with its update's producers (writing only the update window where the operand's buffer can be reused)"

/* What --backend=cpu does with an instruction of this op, in the usual case. */
static const char *cpu_column(cx_op op) {
  switch (op) {
  case CX_OP_PARAMETER: case CX_OP_CONSTANT: case CX_OP_TUPLE: case CX_OP_GET_TUPLE_ELEMENT:
    return "no code (buffers alias)";
  case CX_OP_BITCAST: return "no code (aliases its operand); compiled inside a fusion";
  case CX_OP_OPT_BARRIER: return "no code (aliases its operand)";
  case CX_OP_FUSION: return "compiled: kLoop and kInput fusions are kernels (the unit of code generation)";
  case CX_OP_CALL: return "control flow (the pipeline inlines calls)";
  case CX_OP_ASYNC_START: case CX_OP_ASYNC_UPDATE: case CX_OP_ASYNC_DONE:
    return "control flow (the async pass makes the chain a call, which the pipeline inlines)";
  case CX_OP_COPY_START: case CX_OP_COPY_DONE: return "no code (the async pass makes it a copy)";
  case CX_OP_ALL_REDUCE_START: case CX_OP_ALL_REDUCE_DONE: case CX_OP_ALL_GATHER_START: case CX_OP_ALL_GATHER_DONE:
  case CX_OP_COLLECTIVE_PERMUTE_START: case CX_OP_COLLECTIVE_PERMUTE_DONE:
    return "the async pass makes the pair its collective (a library routine)";
  case CX_OP_BATCH_NORM_TRAINING: case CX_OP_BATCH_NORM_INFERENCE: case CX_OP_BATCH_NORM_GRAD:
    return "compiled (the batchnorm-expand pass makes it reduces and elementwise ops)";
  case CX_OP_WHILE: case CX_OP_CONDITIONAL: return "control flow";
  case CX_OP_SCAN: return "control flow (the scan-expand pass makes it a while loop over dynamic slices)";
  case CX_OP_DOT: return "library: GEMM for f32/f64 (f16/bf16 computed in f32); integer dots compiled";
  case CX_OP_CONVOLUTION:
    return "compiled; library (im2col + GEMM) for large f32 and f64 convolutions with up to 2 spatial dims";
  case CX_OP_SEND: case CX_OP_SEND_DONE: case CX_OP_RECV: case CX_OP_RECV_DONE:
    return "refused when compiling: a host transfer, which a run has no host or peer for";
  case CX_OP_SCALED_DOT:
    return "library: the scaled-dot-expand pass makes it converts, broadcasts, multiplies and a dot (GEMM for f32)";
  case CX_OP_RAGGED_DOT:
    return "library: a GEMM per group (f32/f64/c64/c128; f16/bf16 in f32, integers in s64 loops); a ragged batch dim is a dot";
  default: break;
  }
  cx_instr probe; /* fu_needs_kernel_wrap decides by the op alone */
  memset(&probe, 0, sizeof probe);
  probe.op = op;
  if (cx_op_is_collective(op) && cx_op_runs_on(op) == CX_RUNS_LIBRARY)
    return "library: a runtime routine over the run's transport (docs/collectives.md)";
  if (cx_op_runs_on(op) == CX_RUNS_LIBRARY && cx_op_fuses_when_disjoint(op))
    return "library: a runtime routine of the cpu backend; " DISJOINT_FUSED;
  if (cx_op_runs_on(op) == CX_RUNS_LIBRARY) return "library: a runtime routine of the cpu backend";
  if (cx_emit_handles_op(op) && fu_needs_kernel_wrap(&probe))
    return cx_op_fuses_as_update(op) ? "compiled: " UPDATE_FUSED : "compiled";
  return cx_interp_runs_op(op) ? "interpreter" : "not supported";
}

/* What --backend=gpu (and gpu-emu) does with it: ops.def's gpu column. */
static void gpu_column(cx_sb *sb, cx_op op) {
  switch (cx_op_gpu_of(op)) {
  case CX_GPU_EMIT: cx_sb_puts(sb, cx_op_fuses_as_update(op) ? "compiled: " UPDATE_FUSED : "compiled"); return;
  case CX_GPU_EMIT_F32: cx_sb_puts(sb, "compiled on f16, bf16, f32; refused on f64 and complex"); return;
  case CX_GPU_LIBRARY: cx_sb_puts(sb, "library: cuBLASLt (integer dots compiled)"); return;
  case CX_GPU_HOST:
    cx_sb_puts(sb, op == CX_OP_FUSION                                    ? "compiled: kLoop and kInput fusions are kernels"
                   : op == CX_OP_WHILE || op == CX_OP_CONDITIONAL ? "control flow (the host runs the steps it calls)"
                   : op == CX_OP_OPT_BARRIER                      ? "no code (aliases its operand)"
                   : op == CX_OP_AFTER_ALL                        ? "no code (a token holds no bytes)"
                   : op == CX_OP_ADD_DEPENDENCY                   ? "its data, copied on the device where buffers differ"
                   : op == CX_OP_INFEED || op == CX_OP_OUTFEED    ? "a host step on the context's queues (backend/gpu/gpu_host.c)"
                                                                  : "a kernel of its own (backend/gpu)");
    if (cx_op_fuses_when_disjoint(op)) cx_sb_puts(sb, "; " DISJOINT_FUSED);
    return;
  case CX_GPU_REWRITTEN: cx_sb_puts(sb, "rewritten into other ops by the pass pipeline"); return;
  case CX_GPU_NONE: cx_sb_puts(sb, "not supported"); return;
  case CX_GPU_REFUSED: cx_sb_printf(sb, "refused: %s", cx_op_gpu_why(op)); return;
  }
}

static void generate(cx_sb *sb) {
  cx_sb_puts(sb,
             "# Ops\n\n"
             "<!-- Generated by `make docs` (tests/unit/test_ops_doc.c) from src/ir/ops.def and the library's\n"
             "     own predicates: change those, not this file. The unit test docs_ops_md fails when this file\n"
             "     is out of date. -->\n\n"
             "Every op cxla parses, from the op table `src/ir/ops.def`, and where it runs. XLA opcodes outside\n"
             "this table (`sinh`, `dynamic-reshape`, ...) are refused by the parser with \"not supported:\n"
             "opcode NAME\". XLA's async sugar `<op>-start`, `<op>-update`, `<op>-done` reads as `async-start`,\n"
             "`async-update`, `async-done` of a computation that runs `<op>`.\n\n"
             "- **class**: the op's class in `ops.def`: *data* (parameters, constants, tuple plumbing),\n"
             "  *elementwise*, *shape* (re-indexing), *reduce* (reductions, windows, sort, scatter, map),\n"
             "  *library* (dot, convolution), *control* (calls into computations), *other* (parsed, printed\n"
             "  and verified; run only where a backend says so).\n"
             "- **arity**: the operand count; *variadic* where the verifier checks a rule of the op's own.\n"
             "- **interp**: whether the reference interpreter evaluates the op (`cx_interp_runs_op`, the\n"
             "  gate every instruction passes). A *yes* can still refuse particular instructions:\n"
             "  dynamic dimensions, window reversal, `map` over a subset of dimensions, element types the\n"
             "  op is not defined on. Every refusal happens when compiling, on every backend\n"
             "  (`cx_interp_check_module`), naming the instruction and its line, never during a run; a\n"
             "  module with several lists them all in one error, in file order (a custom-call with its\n"
             "  target): \"FILE:LINE:COL: error: not supported: 3 instructions: FILE:LINE:COL OP 'NAME'\n"
             "  (why), ...\".\n"
             "- **cpu**: what `--backend=cpu` does with an instruction of this op in the usual case (dense\n"
             "  arrays of element types the op is defined on):\n"
             "  - *compiled*: part of a generated kernel (the emitter handles the op and the pipeline puts it\n"
             "    in a fusion), fused with its neighbours unless `--fusion=off`;\n"
             "  - *library*: a call into OpenBLAS (GEMM), or im2col + GEMM, or a runtime routine of the cpu\n"
             "    backend (top-k, random bits);\n"
             "  - *control flow*: compiled loops and branches around the computations it calls;\n"
             "  - *no code*: its result aliases buffers that exist anyway;\n"
             "  - *interpreter*: the compiled program calls the reference interpreter for this one\n"
             "    instruction (correct, not fast);\n"
             "  - *not supported*: `cxla_compile` refuses the instruction, on every backend: \"FILE:LINE:COL:\n"
             "    error: not supported: OP 'NAME' (cxla does not run this op yet)\";\n"
             "  - *refused when compiling*: the same for collectives, which need the distributed runtime\n"
             "    (cxla runs one device), also inside an async op.\n\n"
             "  The column is per op, not per instruction, so it is approximate: an instruction the emitter\n"
             "  cannot handle (an element type, a layout, a dynamic shape) also goes to the interpreter. The\n"
             "  exact answer for one module: `cxla compile model.hlo --backend=cpu` prints `fallbacks N`, and\n"
             "  with `--dump-to=DIR` the file `DIR/*.buffer-assignment.txt` ends with every fallback and why.\n"
             "- **gpu**: what `--backend=gpu` (and `gpu-emu`) does with it, from the op table's `gpu` column:\n"
             "  *compiled* in a kernel, a *library* call, a *host step*, *rewritten* by the pass pipeline\n"
             "  both backends run, or *refused* when compiling with the reason given here. There is no\n"
             "  interpreter fallback on the GPU: `cxla compile --backend=gpu --emit-ptx=-` names what a\n"
             "  module uses that the GPU refuses.\n\n"
             "| op | class | arity | interp | cpu | gpu |\n"
             "|---|---|---|---|---|---|\n");
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    char arity[16];
    if (cx_op_arity(op) < 0) snprintf(arity, sizeof arity, "variadic");
    else snprintf(arity, sizeof arity, "%d", cx_op_arity(op));
    cx_sb_printf(sb, "| `%s` | %s | %s | %s | %s | ", cx_op_name(op), class_name(cx_op_class_of(op)), arity,
                 cx_interp_runs_op(op) ? "yes" : "not supported", cpu_column(op));
    gpu_column(sb, op);
    cx_sb_puts(sb, " |\n");
  }
}

/* 1-based number of the first line where a and b differ. */
static int first_diff_line(const char *a, const char *b) {
  int line = 1;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') line++;
  return line;
}

TEST(docs_ops_md_up_to_date) {
  cx_sb sb;
  cx_sb_init(&sb);
  generate(&sb);
  CHECK(!sb.oom && sb.buf);
  if (sb.oom || !sb.buf) { cx_sb_free(&sb); return; }
  const char *out = getenv("CXLA_WRITE_OPS_DOC");
  if (out && *out) {
    FILE *f = fopen(out, "wb");
    CHECK_MSG(f, "cannot write %s: %s", out, strerror(errno));
    if (f) {
      CHECK_MSG(fwrite(sb.buf, 1, sb.len, f) == sb.len && fclose(f) == 0, "cannot write %s", out);
      printf("    wrote %s\n", out);
    }
    cx_sb_free(&sb);
    return;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/docs/ops.md", test_srcdir());
  unsigned char *text = NULL;
  size_t len = 0;
  if (cx_read_file(test_ctx(), path, &text, &len) != CXLA_OK) {
    test_fail(__FILE__, __LINE__, "%s (regenerate it with `make docs`)", cxla_context_errmsg(test_ctx()));
  } else if (len != sb.len || memcmp(text, sb.buf, len)) {
    test_fail(__FILE__, __LINE__, "%s is out of date from line %d on: regenerate it with `make docs`", path,
              first_diff_line((const char *)text, sb.buf));
  }
  cx_free(text);
  cx_sb_free(&sb);
}
