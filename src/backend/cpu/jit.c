/* jit.c — host target machine, optimisation pipeline and ORC LLJIT. The only file that uses
 * LLVM's (self-declared experimental) LLJIT C API. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <llvm-c/Error.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include "backend/cpu/jit.h"

struct cx_jit {
  cxla_context *ctx;
  LLVMOrcThreadSafeContextRef tsc;
  LLVMOrcLLJITRef lljit;
  LLVMTargetMachineRef tm;    /* for the optimisation pipeline and asm dumps */
  char *triple, *cpu, *features;
  int opt_level, vector_bits;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_ok;
/* LLVM ends the process after an internal error and this handler returns; all cxla can do is
 * say clearly whose error it was (cxla never generates IR that LLVM should reject; a report
 * here is a cxla bug to file with the module that caused it). */
static void llvm_fatal(const char *reason) {
  fprintf(stderr, "cxla: internal error inside LLVM code generation: %s\n"
                  "cxla: this is a bug in cxla; please report it with the module\n", reason ? reason : "?");
}

static void init_llvm(void) {
  init_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter();
  LLVMInstallFatalErrorHandler(llvm_fatal);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Turns an LLVMErrorRef into a context error (consuming it). */
static cxla_status llvm_error(cxla_context *ctx, LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  cxla_status s = cx_error(ctx, CXLA_ERR_COMPILE, "%s: %s", what, msg ? msg : "unknown LLVM error");
  LLVMDisposeErrorMessage(msg);
  return s;
}

/* Compile time is the JIT's budget: a small model must compile in tens of milliseconds, and
 * LLVM's full O2 pipeline plus default code generation cost ~120 ms of CPU for the six kernels
 * of an MLP (bench/README.md). cxla's kernels are simple counted loops emitted without
 * redundancy, so a lean pipeline (inline the kernel bodies, promote, CSE, hoist, rotate,
 * vectorise, clean up) and the "Less" code generator give the same run time for about half the
 * compile time. --opt-level=3 runs LLVM's full O3 pipeline for the last few percent;
 * --opt-level=1 uses the fast (spilling) register allocator: cheapest with vector code;
 * --opt-level=0 does no optimisation at all. */
static const char LEAN_PIPELINE[] =
    "cgscc(inline),function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm),"
    "loop(loop-rotate,indvars),loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)";

static LLVMCodeGenOptLevel codegen_level(int opt) {
  return opt <= 1 ? LLVMCodeGenLevelNone : opt == 2 ? LLVMCodeGenLevelLess : LLVMCodeGenLevelAggressive;
}

static const char *pipeline(int opt) { return opt <= 0 ? "default<O0>" : opt >= 3 ? "default<O3>" : LEAN_PIPELINE; }

static LLVMTargetMachineRef make_tm(cx_jit *j) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(j->triple, &target, &err)) {
    cx_error(j->ctx, CXLA_ERR_COMPILE, "no LLVM target for %s: %s", j->triple, err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  return LLVMCreateTargetMachine(target, j->triple, j->cpu, j->features, codegen_level(j->opt_level),
                                 LLVMRelocDefault, LLVMCodeModelJITDefault);
}

static char *dup_llvm(char *s) { /* LLVM strings must be freed with LLVMDisposeMessage */
  char *d = s ? cx_strdup(s) : NULL;
  LLVMDisposeMessage(s);
  return d;
}

static cxla_status define_symbols(cx_jit *j, const cx_jit_symbol *syms, int n) {
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  LLVMErrorRef e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
  if (e) return llvm_error(j->ctx, e, "process symbol generator");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  if (n <= 0) return CXLA_OK;
  LLVMOrcCSymbolMapPair *pairs = cx_calloc((size_t)n, sizeof *pairs);
  if (!pairs) return cx_oom(j->ctx);
  for (int i = 0; i < n; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, syms[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, (size_t)n);
  cx_free(pairs);
  e = LLVMOrcJITDylibDefine(jd, mu);
  if (e) {
    LLVMOrcDisposeMaterializationUnit(mu);
    return llvm_error(j->ctx, e, "defining runtime symbols");
  }
  return CXLA_OK;
}

cxla_status cx_jit_create(cxla_context *ctx, int opt_level, const cx_jit_symbol *syms, int nsyms,
                          cx_jit **out) {
  *out = NULL;
  pthread_once(&init_once, init_llvm);
  if (!init_ok) return cx_error(ctx, CXLA_ERR_COMPILE, "LLVM has no native target for this host");
  cx_jit *j = cx_calloc(1, sizeof *j);
  if (!j) return cx_oom(ctx);
  j->ctx = ctx;
  j->opt_level = opt_level;
  j->triple = dup_llvm(LLVMGetDefaultTargetTriple());
  j->cpu = dup_llvm(LLVMGetHostCPUName());
  j->features = dup_llvm(LLVMGetHostCPUFeatures());
  cxla_status st = CXLA_OK;
  if (!j->triple || !j->cpu || !j->features) { st = cx_oom(ctx); goto fail; }
  j->vector_bits = strstr(j->features, "+avx512f") ? 512 : strstr(j->features, "+avx") ? 256 : 128;
  j->tm = make_tm(j);
  LLVMTargetMachineRef jit_tm = j->tm ? make_tm(j) : NULL; /* owned by the JIT builder */
  if (!j->tm || !jit_tm) {
    if (jit_tm) LLVMDisposeTargetMachine(jit_tm);
    st = cx_error(ctx, CXLA_ERR_COMPILE, "cannot create a target machine for %s (%s)", j->triple, j->cpu);
    goto fail;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, builder); /* consumes builder */
  if (e) { j->lljit = NULL; st = llvm_error(ctx, e, "creating the JIT"); goto fail; }
  j->tsc = LLVMOrcCreateNewThreadSafeContext();
  if ((st = define_symbols(j, syms, nsyms)) != CXLA_OK) goto fail;
  *out = j;
  return CXLA_OK;
fail:
  cx_jit_destroy(j);
  return st;
}

void cx_jit_destroy(cx_jit *j) {
  if (!j) return;
  if (j->lljit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->lljit);
    if (e) LLVMConsumeError(e);
  }
  if (j->tsc) LLVMOrcDisposeThreadSafeContext(j->tsc);
  if (j->tm) LLVMDisposeTargetMachine(j->tm);
  cx_free(j->triple);
  cx_free(j->cpu);
  cx_free(j->features);
  cx_free(j);
}

LLVMContextRef cx_jit_context(cx_jit *j) { return LLVMOrcThreadSafeContextGetContext(j->tsc); }
const char *cx_jit_triple(cx_jit *j) { return j->triple; }
const char *cx_jit_cpu(cx_jit *j) { return j->cpu; }
int cx_jit_vector_bits(cx_jit *j) { return j->vector_bits; }

static void set_target(cx_jit *j, LLVMModuleRef mod) {
  LLVMSetTarget(mod, j->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(j->tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
}

cxla_status cx_jit_add_module(cx_jit *j, LLVMModuleRef mod, double *opt_ms, double *codegen_ms) {
  set_target(j, mod);
  double t0 = now_ms();
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  if (j->opt_level < 3) { /* interleaving and unrolling double code size for little gain here */
    LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 0);
  }
  LLVMErrorRef e = LLVMRunPasses(mod, pipeline(j->opt_level), j->tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) { LLVMDisposeModule(mod); return llvm_error(j->ctx, e, "LLVM optimisation"); }
  double t1 = now_ms();
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, j->tsc);
  e = LLVMOrcLLJITAddLLVMIRModule(j->lljit, LLVMOrcLLJITGetMainJITDylib(j->lljit), tsm);
  if (e) { LLVMOrcDisposeThreadSafeModule(tsm); return llvm_error(j->ctx, e, "adding code to the JIT"); }
  if (opt_ms) *opt_ms = t1 - t0;
  if (codegen_ms) *codegen_ms = 0; /* code generation happens at the first lookup */
  return CXLA_OK;
}

cxla_status cx_jit_lookup(cx_jit *j, const char *name, void **addr) {
  LLVMOrcExecutorAddress a = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->lljit, &a, name);
  if (e) { *addr = NULL; return llvm_error(j->ctx, e, "JIT code generation / symbol lookup"); }
  *addr = (void *)(uintptr_t)a;
  return CXLA_OK;
}

char *cx_jit_emit_asm(cx_jit *j, LLVMModuleRef mod) {
  LLVMModuleRef copy = LLVMCloneModule(mod);
  set_target(j, copy);
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  char *text = NULL;
  if (!LLVMTargetMachineEmitToMemoryBuffer(j->tm, copy, LLVMAssemblyFile, &err, &buf)) {
    text = cx_strndup(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
    LLVMDisposeMemoryBuffer(buf);
  } else {
    cx_error(j->ctx, CXLA_ERR_COMPILE, "emitting assembly: %s", err ? err : "");
    LLVMDisposeMessage(err);
  }
  LLVMDisposeModule(copy);
  return text;
}
