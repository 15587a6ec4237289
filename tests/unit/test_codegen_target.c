/* test_codegen_target.c — the emitter's per-op hooks and its target description: every
 * elementwise op has a builder for every element type it is defined on, in exactly one table
 * (each target's math rows: test_ops_targets.c); and a second target (a GPU-like kernel ABI, math
 * calls of its own, another address space, a triple) changes the emitted kernel through
 * cx_target alone. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include "codegen/emit.h"
#include "codegen_harness.h"
#include "passes/fusion_plan.h"

static const cxla_type k_types[] = {CXLA_PRED, CXLA_S8,  CXLA_S16, CXLA_S32, CXLA_S64, CXLA_U8,  CXLA_U16,
                                    CXLA_U32,  CXLA_U64, CXLA_F16, CXLA_BF16, CXLA_F32, CXLA_F64, CXLA_C64,
                                    CXLA_C128, CXLA_S4, CXLA_U4, CXLA_F8E4M3FN, CXLA_F8E5M2, CXLA_F8E4M3FNUZ,
                                    CXLA_F8E5M2FNUZ, CXLA_F8E4M3B11FNUZ, CXLA_F8E4M3, CXLA_F8E3M4, CXLA_F4E2M1FN,
                                    CXLA_S2, CXLA_U2, CXLA_F8E8M0FNU};

TEST(codegen_elementwise_builders_cover_types) {
  const cx_elem_hooks *tables[] = {cx_elem_arith, cx_elem_math, cx_elem_convert};
  for (int op = 0; op < CX_OP_COUNT; op++) {
    int rows = 0;
    for (int i = 0; i < 3; i++) {
      const cx_elem_hooks *h = &tables[i][op];
      rows += h->f || h->i || h->pred || h->c;
    }
    CHECK_MSG(rows <= 1, "%s has builders in %d tables", cx_op_name((cx_op)op), rows);
    const cx_elem_hooks *h = cx_elem_hooks_of((cx_op)op);
    if (h) CHECK_MSG(cx_op_is_elementwise((cx_op)op), "%s has builders but is not elementwise", cx_op_name((cx_op)op));
    if (!cx_op_is_elementwise((cx_op)op) || cx_op_runs_on((cx_op)op) != CX_RUNS_EMIT) continue;
    CHECK_MSG(cx_emit_has_generator((cx_op)op), "%s runs compiled but has no generator", cx_op_name((cx_op)op));
    if (op == CX_OP_BITCAST_CONVERT) continue; /* its own generator: it may re-index */
    for (size_t k = 0; k < CX_ARRAY_LEN(k_types); k++) {
      cxla_type t = k_types[k];
      /* select picks by its pred operand; every row of it is the same builder */
      cxla_type pick = op == CX_OP_SELECT ? CXLA_PRED : t;
      if (cx_op_valid_for_type((cx_op)op, t))
        CHECK_MSG(cx_elem_pick(h, pick), "%s is defined on %s but has no builder for it", cx_op_name((cx_op)op),
                  cxla_type_name(t));
    }
  }
  CHECK(!cx_emit_has_generator(CX_OP_SORT));
  CHECK(!cx_emit_handles_op(CX_OP_SORT));
  CHECK(cx_emit_handles_op(CX_OP_ADD) && cx_emit_handles_op(CX_OP_GATHER) && cx_emit_handles_op(CX_OP_REDUCE));
}

/* ---- a second target ---- */

/* void name(ptr addrspace(1) p0, ..., i64 i): one element per call, as a GPU thread would */
static LLVMValueRef gpu_declare(cx_cg *cg, const char *name, int nargs) {
  LLVMTypeRef params[CX_EMIT_MAX_ARGS + 1];
  for (int i = 0; i < nargs; i++) params[i] = cg->t_ptr;
  params[nargs] = cg->t_i64;
  return LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_void, params, (unsigned)nargs + 1, 0));
}

static void gpu_args(cx_cg *cg, LLVMValueRef entry, int nargs, LLVMValueRef *args) {
  for (int i = 0; i < nargs; i++) args[i] = LLVMGetParam(entry, (unsigned)i);
  args[nargs] = LLVMGetParam(entry, (unsigned)nargs);
  args[nargs + 1] = LLVMBuildAdd(cg->b, args[nargs], LLVMConstInt(cg->t_i64, 1, 0), "");
}

static cx_math_lowering gpu_math(cx_op op, cxla_type t) {
  if (op == CX_OP_EXP && t == CXLA_F32) return (cx_math_lowering){CX_MATH_CALL, "__nv_expf", 0};
  if (op == CX_OP_SIN && t == CXLA_F32) return (cx_math_lowering){CX_MATH_CALL, "__nv_sinf", 0};
  return cx_target_cpu.lower_math(op, t);
}

TEST(codegen_target_second_target) {
  const char *text = "HloModule g\nfc {\n x = f32[100] parameter(0)\n"
                     " c = f32[4] constant({1, 2, 3, 4})\n cb = f32[25,4] broadcast(c), dimensions={1}\n"
                     " cr = f32[100] reshape(cb)\n a = f32[100] exponential(x)\n s = f32[100] sine(a)\n"
                     " ROOT r = f32[100] add(s, cr)\n}\n"
                     "ENTRY e {\n x = f32[100] parameter(0)\n ROOT f = f32[100] fusion(x), kind=kLoop, calls=fc\n}\n";
  cx_target gpu = cx_target_cpu;
  gpu.name = "test-gpu";
  gpu.triple = "nvptx64-nvidia-cuda";
  gpu.addrspace_global = 1;
  gpu.kernel_declare = gpu_declare;
  gpu.kernel_args = gpu_args;
  gpu.lower_math = gpu_math;
  cx_module *m = cgt_parse(text, __FILE__, __LINE__);
  if (!m) return;
  CHECK_OK(cx_fusion_plan_module(m));
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("g", c);
  cx_cg cg;
  cx_cg_init(&cg, test_ctx(), m, c, mod, &gpu);
  cx_kernel k;
  CHECK_EQ_INT(m->entry->root->op, CX_OP_FUSION);
  CHECK_OK(cx_emit_kernel(&cg, m->entry->root, &k));
  char *err = NULL;
  CHECK_MSG(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &err), "invalid module: %s", err ? err : "");
  LLVMDisposeMessage(err);
  CHECK_EQ_INT(LLVMCountParams(k.fn), k.nout + k.nin + 1);
  CHECK_STR_CONTAINS(LLVMGetTarget(mod), "nvptx64");
  char *ir = LLVMPrintModuleToString(mod);
  CHECK_STR_CONTAINS(ir, "declare float @__nv_expf(float)");
  CHECK_STR_CONTAINS(ir, "declare float @__nv_sinf(float)");
  CHECK_STR_CONTAINS(ir, "addrspace(1) constant");   /* the constant array */
  CHECK_STR_CONTAINS(ir, "ptr addrspace(1) noalias"); /* the body's buffers */
  CHECK(!strstr(ir, "@sin(") && !strstr(ir, "double"));
  LLVMDisposeMessage(ir);
  cx_cg_dispose(&cg);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  cx_module_free(m);
}

/* The op table's columns that codegen and buffer assignment read agree with the ops' other
 * facts, so a new row cannot leave one out unnoticed (the emit columns, one per target, have
 * test_ops_targets.c): an elementwise op reads its operands at the output's linear index; a
 * re-indexing op that fuses is a shape op the emitter generates; an aliasing op has one
 * operand. */
TEST(ops_table_emit_columns_agree) {
  int emitted = 0, reindex = 0, linear = 0;
  for (int i = 0; i < CX_OP_COUNT; i++) {
    cx_op op = (cx_op)i;
    const char *name = cx_op_name(op);
    emitted += cx_op_runs_on(op) == CX_RUNS_EMIT;
    if (cx_op_is_elementwise(op))
      CHECK_MSG(cx_op_index_of(op) != CX_INDEX_MULTI, "%s: elementwise, but its index column says MULTI", name);
    if (cx_op_index_of(op) != CX_INDEX_MULTI) linear++;
    if (cx_op_fuses_as_reindex(op)) {
      reindex++;
      CHECK_MSG(cx_op_class_of(op) == CX_CLASS_SHAPE, "%s: fuses as a re-indexing op but is not a shape op", name);
      CHECK_MSG(cx_op_runs_on(op) == CX_RUNS_EMIT && cx_emit_has_generator(op),
                "%s: fuses as a re-indexing op but has no generator", name);
    }
    if (cx_op_alias_of(op) != CX_ALIAS_NEVER) CHECK_MSG(cx_op_arity(op) == 1, "%s: aliases but has not one operand", name);
  }
  CHECK(emitted > 60 && reindex == 10 && linear > 50);
  CHECK_EQ_INT(cx_op_alias_of(CX_OP_BITCAST), CX_ALIAS_SAME_BYTES);
  CHECK_EQ_INT(cx_op_index_of(CX_OP_BITCAST_CONVERT), CX_INDEX_SAME_RANK);
}
