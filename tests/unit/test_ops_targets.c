/* test_ops_targets.c — ops.def's emit columns, one per target (`runs` for the cpu, `gpu` for
 * the gpu backend), held to the code that emits: an op a target's column marks emitted has
 * its element generator (gen.c's k_gen, or a builder table of elemental*.c) and, when it is a
 * math op (elemental_math.c's builder asks the target how to compute it), that target's math
 * row (target_cpu.c, target_nvptx.c) on every float type the column promises. Without these,
 * a missing gen.c row silently runs the op on the interpreter and a missing target row
 * silently refuses it. The other way round, an op the gpu column refuses that has gained its
 * rows fails too, so the column never understates what the GPU does. One test per omission,
 * so the failing test's name says which row is missing. */
#include "codegen/emit.h"
#include "codegen/nvptx.h"
#include "test.h"

static const cxla_type k_float[] = {CXLA_F16, CXLA_BF16, CXLA_F32, CXLA_F64};

/* a math op: its float builder computes through the target's lower_math */
static int is_math(cx_op op) { return cx_elem_math[op].f != NULL; }

static int gpu_emits(cx_op op) { return cx_op_gpu_of(op) == CX_GPU_EMIT || cx_op_gpu_of(op) == CX_GPU_EMIT_F32; }

static const char *gpu_value(cx_op op) { return cx_op_gpu_of(op) == CX_GPU_EMIT ? "EMIT" : "EMIT_F32"; }

TEST(ops_targets_cpu_emit_has_generator) {
  int n = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    if (cx_op_runs_on(op) != CX_RUNS_EMIT) continue;
    n++;
    CHECK_MSG(cx_emit_has_generator(op),
              "cpu: %s is EMIT in ops.def's runs column but has no generator (gen.c's k_gen or an elemental*.c table)",
              cx_op_name(op));
  }
  CHECK(n > 60);
}

TEST(ops_targets_cpu_emit_has_math_row) {
  int n = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    if (cx_op_runs_on(op) != CX_RUNS_EMIT || !is_math(op)) continue;
    n++;
    for (int k = 0; k < CX_ARRAY_LEN(k_float); k++) {
      cx_math_lowering l = cx_target_cpu.lower_math(op, k_float[k]);
      CHECK_MSG(l.how != CX_MATH_NONE, "cpu: %s is EMIT in ops.def's runs column but target_cpu.c has no math row for it on %s",
                cx_op_name(op), cxla_type_name(k_float[k]));
      if (l.how == CX_MATH_CALL || l.how == CX_MATH_INTRINSIC) CHECK(l.name && *l.name);
    }
  }
  CHECK(n >= 15);
  CHECK(cx_target_cpu.lower_math(CX_OP_ADD, CXLA_F32).how == CX_MATH_NONE);
  CHECK(cx_target_cpu.lower_math(CX_OP_EXP, CXLA_S32).how == CX_MATH_NONE);
}

TEST(ops_targets_gpu_emit_has_generator) {
  int n = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    if (!gpu_emits(op)) continue;
    n++;
    CHECK_MSG(cx_emit_has_generator(op),
              "gpu: %s is %s in ops.def's gpu column but has no generator (gen.c's k_gen or an elemental*.c table)",
              cx_op_name(op), gpu_value(op));
    /* both targets share the emitter, whose gate (cx_emit_handles_op) reads the runs column */
    CHECK_MSG(cx_op_runs_on(op) == CX_RUNS_EMIT,
              "gpu: %s is %s in the gpu column but not EMIT in the runs column: the emitter both targets share refuses it",
              cx_op_name(op), gpu_value(op));
  }
  CHECK(n > 60);
}

TEST(ops_targets_gpu_emit_has_math_row) {
  int n = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    if (!is_math(op)) continue;
    for (int k = 0; k < CX_ARRAY_LEN(k_float); k++) {
      cxla_type t = k_float[k];
      int want = cx_op_gpu_of(op) == CX_GPU_EMIT || (cx_op_gpu_of(op) == CX_GPU_EMIT_F32 && t != CXLA_F64);
      int has = cx_target_nvptx.lower_math(op, t).how != CX_MATH_NONE;
      n += want;
      if (want)
        CHECK_MSG(has, "gpu: %s is %s in ops.def's gpu column but target_nvptx.c has no math row for it on %s",
                  cx_op_name(op), gpu_value(op), cxla_type_name(t));
      else
        CHECK_MSG(!has, "gpu: target_nvptx.c lowers %s on %s now, but ops.def's gpu column refuses it there: make it %s",
                  cx_op_name(op), cxla_type_name(t), t == CXLA_F64 ? "EMIT" : "EMIT_F32 or EMIT");
    }
  }
  CHECK(n >= 20);
}

/* The column's other values say what they promise: a refusal has its reason, what no backend
 * compiles is NONE in both columns, the complex functions' f64 needs are spelled out. */
TEST(ops_targets_gpu_column_values) {
  int refused = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    cx_op_gpu g = cx_op_gpu_of(op);
    const char *why = cx_op_gpu_why(op);
    if (g == CX_GPU_REFUSED || g == CX_GPU_NONE || g == CX_GPU_REWRITTEN || g == CX_GPU_EMIT_F32)
      CHECK_MSG(why && strlen(why) > 10, "gpu: %s is refused (or partly) without a reason", cx_op_name(op));
    else
      CHECK_MSG(!why, "gpu: %s is not refused but has a refusal reason", cx_op_name(op));
    CHECK_MSG((g == CX_GPU_NONE) == (cx_op_runs_on(op) == CX_RUNS_NONE), "%s: NONE in one target's column only",
              cx_op_name(op));
    if (g == CX_GPU_EMIT_F32) CHECK_MSG(is_math(op), "gpu: %s is EMIT_F32 but is no math op", cx_op_name(op));
    refused += g == CX_GPU_REFUSED;
  }
  CHECK(refused >= 10); /* the collectives, feeds, rng, ...: the column is read, not all LIBRARY or EMIT */
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_DOT), CX_GPU_LIBRARY);
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_CHOLESKY), CX_GPU_LIBRARY); /* cuSOLVER */
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_TRIANGULAR_SOLVE), CX_GPU_LIBRARY); /* cuBLAS */
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_FFT), CX_GPU_LIBRARY); /* cuFFT */
  /* cuDNN where it takes the convolution, the emitter's kernels where it declines: EMIT, so
   * that those compile (a LIBRARY op is refused by the nvptx target) */
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_CONVOLUTION), CX_GPU_EMIT);
  CHECK_EQ_INT(cx_op_gpu_of(CX_OP_FUSION), CX_GPU_HOST);
  CHECK_EQ_INT(cx_op_gpu_of((cx_op)CX_OP_COUNT), CX_GPU_NONE);
}
