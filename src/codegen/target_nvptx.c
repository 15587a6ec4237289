/* target_nvptx.c — NVIDIA GPUs as a codegen target (see nvptx.h). */
#include <stdio.h>
#include <string.h>
#include "codegen/cg.h"
#include "codegen/emit.h"
#include "codegen/nvptx.h"

/* ---- the kernel ABI ---- */

static LLVMValueRef nvptx_declare(struct cx_cg *cg, const char *name, int nargs) {
  LLVMTypeRef params[CX_EMIT_MAX_ARGS + 1];
  for (int i = 0; i < nargs; i++) params[i] = cg->t_ptr;
  params[nargs] = cg->t_i64;
  LLVMValueRef fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_void, params, (unsigned)nargs + 1, 0));
  /* every buffer is a whole allocation or arena slot (64-byte aligned at least): saying so lets
   * the NVPTX backend merge a thread's neighbouring accesses into 16-byte vector loads */
  unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
  for (int i = 0; i < nargs; i++)
    LLVMAddAttributeAtIndex(fn, (LLVMAttributeIndex)(i + 1), LLVMCreateEnumAttribute(cg->llctx, align, 16));
  /* LLVM 19's NVPTX backend makes a function a .entry when !nvvm.annotations says "kernel" */
  LLVMValueRef md[3] = {fn, LLVMMDStringInContext(cg->llctx, "kernel", 6), LLVMConstInt(cg->t_i32, 1, 0)};
  LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations", LLVMMDNodeInContext(cg->llctx, md, 3));
  return fn;
}

static LLVMValueRef sreg(struct cx_cg *cg, const char *reg) {
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", reg);
  LLVMValueRef f = LLVMGetNamedFunction(cg->mod, name);
  LLVMTypeRef ft = LLVMFunctionType(cg->t_i32, NULL, 0, 0);
  if (!f) f = LLVMAddFunction(cg->mod, name, ft);
  return LLVMBuildZExt(cg->b, LLVMBuildCall2(cg->b, ft, f, NULL, 0, ""), cg->t_i64, "");
}

/* [i*V, i*V+V) for thread i = ctaid.x * ntid.x + tid.x (V = cg->elems_per_thread, which
 * divides total); threads at or past total / V return at once (the body is called only in the
 * `run` block, where the builder is left). */
static void nvptx_args(struct cx_cg *cg, LLVMValueRef entry, int nargs, LLVMValueRef *args) {
  LLVMBuilderRef b = cg->b;
  int64_t v = cg->elems_per_thread > 1 ? cg->elems_per_thread : 1;
  for (int i = 0; i < nargs; i++) args[i] = LLVMGetParam(entry, (unsigned)i);
  LLVMValueRef i = LLVMBuildAdd(b, LLVMBuildMul(b, sreg(cg, "ctaid.x"), sreg(cg, "ntid.x"), ""), sreg(cg, "tid.x"), "");
  LLVMValueRef threads = LLVMBuildUDiv(b, LLVMGetParam(entry, (unsigned)nargs), LLVMConstInt(cg->t_i64, (unsigned long long)v, 0), "");
  LLVMValueRef in = LLVMBuildICmp(b, LLVMIntULT, i, threads, "");
  LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(cg->llctx, entry, "run");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->llctx, entry, "done");
  LLVMBuildCondBr(b, in, run, done);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildRetVoid(b);
  LLVMPositionBuilderAtEnd(b, run);
  LLVMValueRef first = LLVMBuildMul(b, i, LLVMConstInt(cg->t_i64, (unsigned long long)v, 0), "");
  args[nargs] = first;
  args[nargs + 1] = LLVMBuildAdd(b, first, LLVMConstInt(cg->t_i64, (unsigned long long)v, 0), "");
}

/* ---- math: codegen's own inline code (math*.c: every f32 function, f64 exp, log and
 * logistic, the same code the cpu backend vectorises, so the two backends agree to the bit
 * where FMA contraction allows), llvm.sqrt, and for the other f64 functions CUDA's libdevice
 * (__nv_*, linked into the module by the gpu backend, backend/gpu/libdevice.h) ---- */

#define POLY {CX_MATH_INLINE, NULL, 0}
#define SQRT {CX_MATH_INTRINSIC, "llvm.sqrt", 0}
#define NV(fn) {CX_MATH_CALL, "__nv_" fn, 0}
static const cx_math_lowering k_math[CX_OP_COUNT][2] = { /* [op][0: f32, 1: f64] */
  [CX_OP_EXP] = {POLY, POLY},
  [CX_OP_EXPM1] = {POLY, NV("expm1")},
  [CX_OP_LOG] = {POLY, POLY},
  [CX_OP_LOG1P] = {POLY, NV("log1p")},
  [CX_OP_TANH] = {POLY, NV("tanh")},
  [CX_OP_ERF] = {POLY, NV("erf")},
  [CX_OP_LOGISTIC] = {POLY, POLY},                     /* f64: 1/(1+exp(-x)) with the f64 exp */
  [CX_OP_RSQRT] = {{CX_MATH_INLINE, NULL, 1}, POLY},   /* 1/sqrt(x) in double: rounds as the interpreter */
  [CX_OP_SQRT] = {SQRT, SQRT},
  [CX_OP_CBRT] = {POLY, NV("cbrt")},
  [CX_OP_SIN] = {POLY, NV("sin")},
  [CX_OP_COS] = {POLY, NV("cos")},
  [CX_OP_TAN] = {POLY, NV("tan")},
  [CX_OP_POWER] = {POLY, NV("pow")},
  [CX_OP_ATAN2] = {POLY, NV("atan2")},
};
#undef NV
#undef POLY
#undef SQRT

static cx_math_lowering nvptx_math(cx_op op, cxla_type t) {
  cx_math_lowering none = {CX_MATH_NONE, NULL, 0};
  if (cx_type_is_complex(t)) t = CXLA_F64;
  if ((unsigned)op >= CX_OP_COUNT || !cx_type_is_float(t)) return none;
  return k_math[op][t == CXLA_F64];
}

/* shfl.sync.bfly over the full warp (every lane of a row's warp takes part) */
static LLVMValueRef nvptx_warp_xor(struct cx_cg *cg, LLVMValueRef v, int mask) {
  const char *name = "llvm.nvvm.shfl.sync.bfly.i32";
  LLVMTypeRef pt[4] = {cg->t_i32, cg->t_i32, cg->t_i32, cg->t_i32};
  LLVMTypeRef ft = LLVMFunctionType(cg->t_i32, pt, 4, 0);
  LLVMValueRef f = LLVMGetNamedFunction(cg->mod, name);
  if (!f) f = LLVMAddFunction(cg->mod, name, ft);
  LLVMValueRef args[4] = {LLVMConstInt(cg->t_i32, 0xffffffffu, 0), v, LLVMConstInt(cg->t_i32, (unsigned)mask, 0),
                          LLVMConstInt(cg->t_i32, 0x1f, 0)};
  return LLVMBuildCall2(cg->b, ft, f, args, 4, "");
}

const cx_target cx_target_nvptx = {
  .name = "nvptx",
  .triple = CX_NVPTX_TRIPLE,
  .data_layout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64", /* LLVM 19's nvptx64 */
  .vector_bits = 128,
  .addrspace_global = 1,
  .addrspace_shared = 3,
  .kernel_declare = nvptx_declare,
  .kernel_args = nvptx_args,
  .lower_math = nvptx_math,
  .warp_size = 32,
  .warp_xor = nvptx_warp_xor,
};

/* ---- which PTX target ---- */

typedef struct known_arch {
  const char *sm;
  int cc, min_ptx, exact;  /* exact: runs only on that very capability (the "a" targets) */
} known_arch;

/* newest first; min_ptx: the first PTX ISA version that has the target */
static const known_arch k_archs[] = {
  {"sm_90a", 90, 80, 1}, {"sm_90", 90, 78, 0}, {"sm_89", 89, 78, 0}, {"sm_87", 87, 74, 0},
  {"sm_86", 86, 71, 0},  {"sm_80", 80, 70, 0}, {"sm_75", 75, 63, 0},
};
enum { MAX_PTX = 85 }; /* the newest PTX ISA LLVM 19 emits */

int cx_nvptx_driver_ptx(int driver) {
  int major = driver / 1000, minor = driver % 1000 / 10;
  if (major < 10) return 0;
  int base = major == 10 ? 63 : major == 11 ? 70 : 80 + 10 * (major - 12); /* CUDA 12.0: 8.0, 13.0: 9.0 */
  return base + minor;
}

static void fill(const known_arch *a, int ptx, cx_nvptx_arch *out) {
  out->sm = a->sm;
  out->cc = a->cc;
  out->ptx = ptx;
  snprintf(out->features, sizeof out->features, "+ptx%d", ptx);
}

int cx_nvptx_pick(int major, int minor, int driver, cx_nvptx_arch *out, const char **why) {
  static _Thread_local char msg[160];
  int cc = major * 10 + minor;
  int ptx = driver ? cx_nvptx_driver_ptx(driver) : MAX_PTX;
  if (ptx > MAX_PTX) ptx = MAX_PTX;
  for (size_t i = 0; i < sizeof k_archs / sizeof *k_archs; i++) {
    const known_arch *a = &k_archs[i];
    if (a->exact ? cc != a->cc : cc < a->cc) continue;
    if (ptx < a->min_ptx) continue;
    fill(a, ptx, out);
    return 0;
  }
  if (cc < 75)
    snprintf(msg, sizeof msg, "compute capability %d.%d is older than the oldest cxla supports (7.5)", major, minor);
  else
    snprintf(msg, sizeof msg, "the CUDA driver (version %d.%d) is too old: cxla needs CUDA 10.0 or newer", driver / 1000,
             driver % 1000 / 10);
  if (why) *why = msg;
  return -1;
}

int cx_nvptx_arch_named(const char *sm, cx_nvptx_arch *out) {
  for (size_t i = 0; sm && i < sizeof k_archs / sizeof *k_archs; i++)
    if (!strcmp(k_archs[i].sm, sm)) {
      fill(&k_archs[i], MAX_PTX, out);
      return 0;
    }
  return -1;
}

/* ---- what the target cannot compute ---- */

/* The complex functions (codegen/elemental_complex.c) compute in double with these: each must
 * be EMIT in ops.def's gpu column (and so have its f64 row here, test_ops_targets.c). */
static const cx_op k_complex_needs[] = {CX_OP_EXP, CX_OP_EXPM1, CX_OP_LOG, CX_OP_LOG1P, CX_OP_SIN, CX_OP_COS, CX_OP_ATAN2};

/* The gpu column refuses in on the GPU: why, naming the instruction; NULL when it may run. */
static const char *refusal(const cx_instr *in) {
  cx_op_gpu g = cx_op_gpu_of(in->op);
  const char *name = in->name ? in->name : "?";
  cxla_type t = in->nops ? in->ops[0]->shape.type : in->shape.type;
  /* a DISJOINT window op inside a fusion is its generator's, whatever it is on its own */
  if (g != CX_GPU_EMIT && g != CX_GPU_EMIT_F32 && !cx_op_fuses_when_disjoint(in->op))
    return cx_emit_why("%s (%s): %s", cx_op_name(in->op), name, cx_op_gpu_why(in->op));
  if (g == CX_GPU_EMIT_F32 && cx_elem_math[in->op].f && (in->shape.type == CXLA_F64 || cx_type_is_complex(t)))
    return cx_emit_why("%s on %s (%s): %s", cx_op_name(in->op), cxla_type_name(cx_type_is_complex(t) ? t : in->shape.type),
                       name, cx_op_gpu_why(in->op));
  if (cx_elem_math[in->op].c && cx_type_is_complex(t))
    for (size_t i = 0; i < sizeof k_complex_needs / sizeof *k_complex_needs; i++)
      if (cx_op_gpu_of(k_complex_needs[i]) != CX_GPU_EMIT)
        return cx_emit_why("%s on %s (%s): complex functions compute in f64 with %s, which the GPU refuses on f64: %s",
                           cx_op_name(in->op), cxla_type_name(t), name, cx_op_name(k_complex_needs[i]),
                           cx_op_gpu_why(k_complex_needs[i]));
  /* the column says EMIT, so the row is there (test_ops_targets.c); a missing one still refuses */
  if (cx_elem_math[in->op].f && cx_type_is_float(in->shape.type) && nvptx_math(in->op, in->shape.type).how == CX_MATH_NONE)
    return cx_emit_why("%s on %s (%s): no math row in target_nvptx.c", cx_op_name(in->op), cxla_type_name(in->shape.type),
                       name);
  return NULL;
}

static int comp_ok(const cx_comp *c, int depth, const char **why) {
  if (!c || depth > 16) return 1;
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *in = c->instrs[i];
    for (int k = 0; k < in->ncalled; k++)
      if (!comp_ok(in->called[k], depth + 1, why)) return 0;
    const char *r = refusal(in);
    if (r) return *why = r, 0;
  }
  return 1;
}

int cx_nvptx_supports(const cx_instr *fusion, const char **why) {
  for (int k = 0; k < fusion->ncalled; k++)
    if (!comp_ok(fusion->called[k], 0, why)) return 0;
  return 1;
}
