/* ptx.c — PTX text from LLVM IR (see ptx.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "backend/gpu/ptx.h"

static void init_nvptx(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

/* A declaration that is not an intrinsic would be an undefined symbol in the PTX, which the
 * driver's JIT refuses at load: say which at compile time instead. The exception is the
 * device runtime's builtin that the driver's JIT resolves itself (gpu_graph.c's control kernel
 * calls it; ptxas alone wants --compile-only for it). */
static cxla_status check_calls(cxla_context *ctx, LLVMModuleRef mod) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f)) continue;
    size_t len = 0;
    const char *name = LLVMGetValueName2(f, &len);
    if (!LLVMGetFirstUse(f) || !strcmp(name, "cudaGraphSetConditional")) continue;
    return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: a kernel calls %.*s, which has no GPU implementation",
                    (int)len, name);
  }
  return CXLA_OK;
}

/* LLVM 19's NVPTX backend keeps each module's nvvm.annotations (is this function a kernel?) in
 * a process-wide map keyed by the addresses of the Module and of each Function; its IR passes
 * fill it (NVVMIntrRange asks every function: 12 entries for one sine kernel) and only its
 * AsmPrinter's finalisation drops a module's. A module optimised here but never printed as PTX
 * (the emulation's LLVM image, a build that failed) left its entries behind, and a later module
 * at the same addresses could read them: a kernel taken for a device function, its .entry
 * missing from the PTX (the likely cause of gpu_ptx_graph_control_kernel failing now and then).
 * Printing the emptied module runs that finalisation. */
static void forget_annotations(LLVMTargetMachineRef tm, LLVMModuleRef mod) {
  LLVMValueRef v;
  while ((v = LLVMGetFirstFunction(mod))) {
    LLVMReplaceAllUsesWith(v, LLVMGetPoison(LLVMTypeOf(v)));
    LLVMDeleteFunction(v);
  }
  while ((v = LLVMGetFirstGlobal(mod))) {
    LLVMReplaceAllUsesWith(v, LLVMGetPoison(LLVMTypeOf(v)));
    LLVMDeleteGlobal(v);
  }
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) LLVMDisposeMessage(err);
  else LLVMDisposeMemoryBuffer(buf);
}

/* The NVPTX target machine for arch and LLVM's default<O> pipeline run on mod with it; every
 * call left must be to an intrinsic. *tm is the caller's on success. */
static cxla_status optimise(cxla_context *ctx, LLVMModuleRef mod, const cx_nvptx_arch *arch, int opt_level,
                            LLVMTargetMachineRef *tm_out) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_nvptx);
  *tm_out = NULL;
  char *err = NULL;
  LLVMTargetRef t = NULL;
  if (LLVMGetTargetFromTriple(CX_NVPTX_TRIPLE, &t, &err)) {
    cxla_status s = cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: this LLVM has no NVPTX target: %s", err ? err : "");
    LLVMDisposeMessage(err);
    return s;
  }
  if (opt_level < 0) opt_level = 0;
  if (opt_level > 3) opt_level = 3;
  static const LLVMCodeGenOptLevel levels[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
                                                LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(t, CX_NVPTX_TRIPLE, arch->sm, arch->features, levels[opt_level],
                                                    LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm) return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: no NVPTX target machine for %s", arch->sm);
  char pipeline[48]; /* globaldce first: libdevice's functions no kernel calls go at every level */
  snprintf(pipeline, sizeof pipeline, "globaldce,default<O%d>", opt_level);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  cxla_status s = CXLA_OK;
  if (e) {
    char *msg = LLVMGetErrorMessage(e);
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: LLVM passes failed: %s", msg);
    LLVMDisposeErrorMessage(msg);
  }
  if (s == CXLA_OK) s = check_calls(ctx, mod);
  if (s != CXLA_OK) {
    forget_annotations(tm, mod);
    LLVMDisposeTargetMachine(tm);
    return s;
  }
  *tm_out = tm;
  return CXLA_OK;
}

static char *dup_text(const char *p, size_t n) {
  char *d = cx_malloc(n + 1);
  if (d) {
    memcpy(d, p, n);
    d[n] = 0;
  }
  return d;
}

cxla_status cx_ptx_emit(cxla_context *ctx, LLVMModuleRef mod, const cx_nvptx_arch *arch, int opt_level, char **ptx) {
  *ptx = NULL;
  LLVMTargetMachineRef tm;
  CX_TRY(optimise(ctx, mod, arch, opt_level, &tm));
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  cxla_status s = CXLA_OK;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: PTX generation for %s failed: %s", arch->sm, err ? err : "");
    LLVMDisposeMessage(err);
    forget_annotations(tm, mod);
  }
  LLVMDisposeTargetMachine(tm);
  if (s != CXLA_OK) return s;
  *ptx = dup_text(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
  LLVMDisposeMemoryBuffer(buf);
  return *ptx ? CXLA_OK : cx_oom(ctx);
}

cxla_status cx_ptx_emit_llvm(cxla_context *ctx, LLVMModuleRef mod, const cx_nvptx_arch *arch, int opt_level,
                             char **ir) {
  *ir = NULL;
  LLVMTargetMachineRef tm;
  CX_TRY(optimise(ctx, mod, arch, opt_level, &tm));
  char *text = LLVMPrintModuleToString(mod);
  *ir = dup_text(text, strlen(text));
  LLVMDisposeMessage(text);
  forget_annotations(tm, mod);
  LLVMDisposeTargetMachine(tm);
  return *ir ? CXLA_OK : cx_oom(ctx);
}
