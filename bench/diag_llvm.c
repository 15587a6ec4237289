/* diag_llvm.c — where cxla's compile time goes inside LLVM, outside cxla: takes the IR cxla
 * hands to LLVM (DIR/<module>.ir-before-opt.ll from `cxla compile M.hlo --backend=cpu
 * --dump-to=DIR`) and times the optimisation pipeline and object code generation for the host
 * under several settings, each on a fresh parse of the file (best of N, thread CPU time).
 *
 *   cc -std=c11 -O2 $(llvm-config-19 --cflags) bench/diag_llvm.c -o diag_llvm \
 *      $(llvm-config-19 --ldflags) -lLLVM-19
 *   ./diag_llvm /tmp/d/jit_mlp.ir-before-opt.ll [reps]
 *
 * Built by bench/run.sh as BUILD/diag_llvm. A diagnostic for the backend's owners, not a
 * benchmark; cxla's own JIT adds ORC linking on top of the codegen numbers here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct config {
  const char *name;
  const char *pipeline;
  LLVMCodeGenOptLevel cg;
  int vectorize, interleave, unroll; /* PassBuilderOptions (1: LLVM's default for the level) */
} config;

static LLVMModuleRef parse(LLVMContextRef c, const char *path) {
  LLVMMemoryBufferRef buf;
  char *err = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &err)) {
    fprintf(stderr, "diag_llvm: %s: %s\n", path, err ? err : "cannot read");
    exit(1);
  }
  LLVMModuleRef m;
  if (LLVMParseIRInContext(c, buf, &m, &err)) { /* takes the buffer */
    fprintf(stderr, "diag_llvm: %s: %s\n", path, err ? err : "cannot parse");
    exit(1);
  }
  return m;
}

static int count_defined(LLVMModuleRef m) {
  int n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) n += !LLVMIsDeclaration(f);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: diag_llvm MODULE.ir-before-opt.ll [reps]\n");
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  if (reps < 1) reps = 1;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) return 1;
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures(), *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) return 1;
  const config cfgs[] = {
      {"O2, codegen Default (cxla's default)", "default<O2>", LLVMCodeGenLevelDefault, 1, 1, 1},
      {"O3, codegen Aggressive (--opt-level=3)", "default<O3>", LLVMCodeGenLevelAggressive, 1, 1, 1},
      {"O2 without loop interleaving/unrolling", "default<O2>", LLVMCodeGenLevelDefault, 1, 0, 0},
      {"O2, codegen None (FastISel, fast regalloc)", "default<O2>", LLVMCodeGenLevelNone, 1, 1, 1},
      {"O2 no interleave/unroll, codegen None", "default<O2>", LLVMCodeGenLevelNone, 1, 0, 0},
      {"O2 without vectorisers", "default<O2>", LLVMCodeGenLevelDefault, 0, 1, 1},
      {"O1, codegen Less (--opt-level=1)", "default<O1>", LLVMCodeGenLevelLess, 1, 1, 1},
      {"O0, codegen None (--opt-level=0)", "default<O0>", LLVMCodeGenLevelNone, 1, 1, 1},
  };
  LLVMContextRef c0 = LLVMContextCreate();
  LLVMModuleRef m0 = parse(c0, argv[1]);
  printf("%s: %d defined functions; host %s (%s); best of %d, thread CPU ms\n", argv[1], count_defined(m0), cpu,
         triple, reps);
  LLVMDisposeModule(m0);
  LLVMContextDispose(c0);
  printf("%-44s %9s %9s %9s %9s\n", "setting", "opt", "codegen", "total", "obj KiB");
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    const config *k = &cfgs[i];
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, feat, k->cg, LLVMRelocDefault,
                                                      LLVMCodeModelJITDefault);
    double best_opt = 1e30, best_cg = 1e30, best_tot = 1e30;
    size_t obj = 0;
    for (int r = 0; r < reps; r++) {
      LLVMContextRef c = LLVMContextCreate();
      LLVMModuleRef m = parse(c, argv[1]);
      LLVMSetTarget(m, triple);
      LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
      LLVMSetModuleDataLayout(m, dl);
      LLVMDisposeTargetData(dl);
      LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
      if (!k->vectorize) {
        LLVMPassBuilderOptionsSetLoopVectorization(po, 0);
        LLVMPassBuilderOptionsSetSLPVectorization(po, 0);
      }
      if (!k->interleave) LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
      if (!k->unroll) LLVMPassBuilderOptionsSetLoopUnrolling(po, 0);
      double t0 = cpu_ms();
      LLVMErrorRef e = LLVMRunPasses(m, k->pipeline, tm, po);
      double t1 = cpu_ms();
      LLVMDisposePassBuilderOptions(po);
      if (e) {
        char *msg = LLVMGetErrorMessage(e);
        fprintf(stderr, "diag_llvm: passes: %s\n", msg);
        LLVMDisposeErrorMessage(msg);
        return 1;
      }
      LLVMMemoryBufferRef out = NULL;
      if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &out)) {
        fprintf(stderr, "diag_llvm: codegen: %s\n", err ? err : "");
        return 1;
      }
      double t2 = cpu_ms();
      obj = LLVMGetBufferSize(out);
      LLVMDisposeMemoryBuffer(out);
      LLVMDisposeModule(m);
      LLVMContextDispose(c);
      if (t1 - t0 < best_opt) best_opt = t1 - t0;
      if (t2 - t1 < best_cg) best_cg = t2 - t1;
      if (t2 - t0 < best_tot) best_tot = t2 - t0;
    }
    printf("%-44s %9.1f %9.1f %9.1f %9.1f\n", k->name, best_opt, best_cg, best_tot, obj / 1024.0);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  return 0;
}
