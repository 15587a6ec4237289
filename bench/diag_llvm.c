/* diag_llvm.c — where cxla's compile time goes inside LLVM, outside cxla: takes the IR cxla
 * hands to LLVM (DIR/module_NNNN.<module>.ir-before-opt.ll from `cxla compile M.hlo --backend=cpu
 * --dump-to=DIR`) and times the optimisation pipeline and object code generation for the host
 * under several settings, each on a fresh parse of the file (best of N, thread CPU time). The
 * file holds several modules (the sequencer's and the kernel shards cxla compiles in
 * parallel, each starting with "; ModuleID"): times are their sum, as on one thread.
 *
 *   cc -std=c11 -O2 $(llvm-config-19 --cflags) bench/diag_llvm.c -o diag_llvm \
 *      $(llvm-config-19 --ldflags) -lLLVM-19
 *   ./diag_llvm /tmp/d/module_0000.jit_mlp.ir-before-opt.ll [reps]
 *
 * Built by bench/run.sh as BUILD/diag_llvm. A diagnostic for the backend's owners, not a
 * benchmark; cxla's own JIT adds ORC linking on top of the codegen numbers here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* cxla's --opt-level=2 pipeline (src/backend/cpu/llvm_compile.c) */
#define LEAN                                                                                                  \
  "cgscc(inline),function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm),"        \
  "loop(loop-rotate),loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)"

typedef struct config {
  const char *name;
  const char *pipeline;
  LLVMCodeGenOptLevel cg;
  int vectorize, interleave, unroll; /* PassBuilderOptions (1: LLVM's default for the level) */
} config;

static char *text;              /* the whole file */
static size_t starts[256], nmods; /* offsets of each "; ModuleID" */

static void load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "diag_llvm: cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = malloc((size_t)n + 1);
  if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) exit(1);
  text[n] = 0;
  fclose(f);
  for (char *p = text; p && *p && nmods < 256; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (!strncmp(p, "; ModuleID", 10) || (p == text && nmods == 0)) starts[nmods++] = (size_t)(p - text);
}

static LLVMModuleRef parse(LLVMContextRef c, size_t k) {
  size_t end = k + 1 < nmods ? starts[k + 1] : strlen(text);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text + starts[k], end - starts[k], "ir");
  LLVMModuleRef m;
  char *err = NULL;
  if (LLVMParseIRInContext(c, buf, &m, &err)) { /* takes the buffer */
    fprintf(stderr, "diag_llvm: module %zu: %s\n", k, err ? err : "cannot parse");
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
  /* cxla's process-wide LLVM options (llvm_compile.c), unless DIAG_LLVM_PLAIN=1 */
  const char *plain = getenv("DIAG_LLVM_PLAIN");
  if (!plain || strcmp(plain, "1")) {
    const char *opts[] = {"diag_llvm", "-disable-lsr", "-enable-epilogue-vectorization=false"};
    LLVMParseCommandLineOptions(3, opts, "diag_llvm");
  }
  printf("LLVM options: %s\n", plain && !strcmp(plain, "1") ? "LLVM's defaults" : "cxla's (-disable-lsr -enable-epilogue-vectorization=false)");
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures(), *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) return 1;
  const config cfgs[] = {
      {"cxla's default (lean pipeline, codegen Less)", LEAN, LLVMCodeGenLevelLess, 1, 0, 0},
      {"O2, codegen Default", "default<O2>", LLVMCodeGenLevelDefault, 1, 1, 1},
      {"O3, codegen Aggressive (--opt-level=3)", "default<O3>", LLVMCodeGenLevelAggressive, 1, 1, 1},
      {"O2 without loop interleaving/unrolling", "default<O2>", LLVMCodeGenLevelDefault, 1, 0, 0},
      {"O2, codegen None (FastISel, fast regalloc)", "default<O2>", LLVMCodeGenLevelNone, 1, 1, 1},
      {"O2 no interleave/unroll, codegen None", "default<O2>", LLVMCodeGenLevelNone, 1, 0, 0},
      {"O2 without vectorisers", "default<O2>", LLVMCodeGenLevelDefault, 0, 1, 1},
      {"lean pipeline, codegen None (--opt-level=1)", LEAN, LLVMCodeGenLevelNone, 1, 0, 0},
      {"O0, codegen None (--opt-level=0)", "default<O0>", LLVMCodeGenLevelNone, 1, 1, 1},
  };
  load(argv[1]);
  int nfn = 0;
  for (size_t k = 0; k < nmods; k++) {
    LLVMContextRef c0 = LLVMContextCreate();
    LLVMModuleRef m0 = parse(c0, k);
    nfn += count_defined(m0);
    LLVMDisposeModule(m0);
    LLVMContextDispose(c0);
  }
  printf("%s: %zu modules, %d defined functions; host %s (%s); best of %d, thread CPU ms summed over modules\n",
         argv[1], nmods, nfn, cpu, triple, reps);
  printf("%-44s %9s %9s %9s %9s\n", "setting", "opt", "codegen", "total", "obj KiB");
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    const config *k = &cfgs[i];
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, feat, k->cg, LLVMRelocPIC,
                                                      LLVMCodeModelJITDefault);
    double best_opt = 1e30, best_cg = 1e30, best_tot = 1e30;
    size_t obj = 0;
    for (int r = 0; r < reps; r++) {
      double opt = 0, cg = 0;
      obj = 0;
      for (size_t mi = 0; mi < nmods; mi++) {
        LLVMContextRef c = LLVMContextCreate();
        LLVMModuleRef m = parse(c, mi);
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
        obj += LLVMGetBufferSize(out);
        LLVMDisposeMemoryBuffer(out);
        LLVMDisposeModule(m);
        LLVMContextDispose(c);
        opt += t1 - t0;
        cg += t2 - t1;
      }
      if (opt < best_opt) best_opt = opt;
      if (cg < best_cg) best_cg = cg;
      if (opt + cg < best_tot) best_tot = opt + cg;
    }
    printf("%-44s %9.1f %9.1f %9.1f %9.1f\n", k->name, best_opt, best_cg, best_tot, obj / 1024.0);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  return 0;
}
