/* jit.c — host target machine, optimisation pipeline and ORC LLJIT. The only file that uses
 * LLVM's (self-declared experimental) LLJIT C API. */
#include <stdio.h>
#include <string.h>
#include <llvm-c/Error.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include "codegen/jit.h"
#include "codegen/llvm_compile.h"

struct cx_jit {
  cxla_context *ctx;
  LLVMOrcThreadSafeContextRef tsc;
  LLVMOrcLLJITRef lljit;
  char *triple, *cpu, *features;
  int opt_level, vector_bits;
  size_t code_bytes; /* the object files added: what cxla_executable_footprint reports */
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
  cx_llvm_set_global_options();
}

/* Turns an LLVMErrorRef into a context error (consuming it). */
static cxla_status llvm_error(cxla_context *ctx, LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  cxla_status s = cx_error(ctx, CXLA_ERR_COMPILE, "%s: %s", what, msg ? msg : "unknown LLVM error");
  LLVMDisposeErrorMessage(msg);
  return s;
}

static LLVMTargetMachineRef make_tm(cx_jit *j) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(j->triple, &target, &err)) {
    cx_error(j->ctx, CXLA_ERR_COMPILE, "no LLVM target for %s: %s", j->triple, err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  return LLVMCreateTargetMachine(target, j->triple, j->cpu, j->features, cx_llvm_codegen_level(j->opt_level),
                                 LLVMRelocDefault, LLVMCodeModelJITDefault);
}

static char *dup_llvm(char *s) { /* LLVM strings must be freed with LLVMDisposeMessage */
  char *d = s ? cx_strdup(s) : NULL;
  LLVMDisposeMessage(s);
  return d;
}

/* Absolute symbols in the JIT's main library: functions (callable) or data. */
static cxla_status define_absolute(cx_jit *j, const cx_jit_symbol *syms, int n, int callable) {
  if (n <= 0) return CXLA_OK;
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  LLVMOrcCSymbolMapPair *pairs = cx_calloc((size_t)n, sizeof *pairs);
  if (!pairs) return cx_oom(j->ctx);
  for (int i = 0; i < n; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, syms[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | (callable ? LLVMJITSymbolGenericFlagsCallable : 0);
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, (size_t)n);
  cx_free(pairs);
  LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, mu);
  if (e) {
    LLVMOrcDisposeMaterializationUnit(mu);
    return llvm_error(j->ctx, e, "defining symbols for the JIT");
  }
  return CXLA_OK;
}

static cxla_status define_symbols(cx_jit *j, const cx_jit_symbol *syms, int n) {
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  LLVMErrorRef e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
  if (e) return llvm_error(j->ctx, e, "process symbol generator");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return define_absolute(j, syms, n, 1);
}

cxla_status cx_jit_define_data(cx_jit *j, const cx_jit_symbol *syms, int n) { return define_absolute(j, syms, n, 0); }

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
  /* The JIT's only target machine (the builder owns it): LLVM's optimisation and code
   * generation make their own per compile thread (llvm_compile.c), and a disk cache hit needs
   * none of theirs. */
  LLVMTargetMachineRef jit_tm = make_tm(j);
  if (!jit_tm) {
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
  cx_free(j->triple);
  cx_free(j->cpu);
  cx_free(j->features);
  cx_free(j);
}

LLVMContextRef cx_jit_context(cx_jit *j) { return LLVMOrcThreadSafeContextGetContext(j->tsc); }
int cx_jit_vector_bits(cx_jit *j) { return j->vector_bits; }

cx_llvm_target cx_jit_target(cx_jit *j) { return (cx_llvm_target){j->triple, j->cpu, j->features, j->opt_level}; }

size_t cx_jit_code_bytes(cx_jit *j) { return j->code_bytes; }

cxla_status cx_jit_add_object(cx_jit *j, LLVMMemoryBufferRef obj) {
  j->code_bytes += LLVMGetBufferSize(obj); /* the JIT takes obj over, failing or not */
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->lljit, LLVMOrcLLJITGetMainJITDylib(j->lljit), obj);
  return e ? llvm_error(j->ctx, e, "adding code to the JIT") : CXLA_OK;
}

cxla_status cx_jit_add_module(cx_jit *j, LLVMModuleRef mod, double *opt_ms, double *codegen_ms) {
  cx_llvm_job job;
  memset(&job, 0, sizeof job);
  job.mod = mod;
  job.own_context = LLVMGetModuleContext(mod) != cx_jit_context(j);
  cx_llvm_target t = cx_jit_target(j);
  if (cx_llvm_compile(&t, &job, 1, 1, 0)) return cx_error(j->ctx, CXLA_ERR_COMPILE, "%s", job.err);
  if (opt_ms) *opt_ms = job.opt_ms;
  if (codegen_ms) *codegen_ms = job.codegen_ms;
  return cx_jit_add_object(j, job.obj);
}

cxla_status cx_jit_lookup(cx_jit *j, const char *name, void **addr) {
  LLVMOrcExecutorAddress a = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->lljit, &a, name);
  if (e) { *addr = NULL; return llvm_error(j->ctx, e, "JIT symbol lookup"); }
  *addr = (void *)(uintptr_t)a;
  return CXLA_OK;
}
