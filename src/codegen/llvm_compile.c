/* llvm_compile.c — optimisation and object code for a batch of LLVM modules, in parallel.
 *
 * Compile time is the JIT's budget: a small model must compile in tens of milliseconds, and
 * nearly all of it is LLVM (bench/README.md). Two things buy it back. The sequencer puts
 * kernels into several modules, each in its own LLVMContext, so that they optimise and
 * generate code on every core at once (LLVM allows concurrent use of distinct contexts; a
 * target machine caches subtargets without a lock, so each thread makes its own). And cxla's
 * kernels are simple counted loops emitted without redundancy, so a lean pipeline (inline the
 * kernel bodies, promote, CSE, hoist, rotate, vectorise, clean up) and the "Less" code
 * generator give the run time of LLVM's O2 for about half its compile time. The sequencer's
 * module, when it holds the sequencer alone, takes the fast code generator at every level
 * (cx_llvm_job.fast_codegen: its code only calls kernels).
 * --opt-level=3 runs LLVM's full O3 pipeline and aggressive code generation; --opt-level=1
 * the fast (spilling) register allocator; --opt-level=0 no optimisation at all. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <llvm-c/Error.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "codegen/llvm_compile.h"
#include "core/trace.h"

/* No indvars: it was a quarter of this pipeline's time on the transformer step's kernels (9 of
 * 27 ms a module), and the kernels' loops already count with one i64 induction variable each
 * (loops.h); without it the vector bodies were the same and only some loop exits compared
 * differently, and the bench modules ran as fast (bench/README.md, "Compile time"). */
static const char LEAN_PIPELINE[] =
    "cgscc(inline),function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm),"
    "loop(loop-rotate),loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)";

const char *cx_llvm_pipeline(int opt) { return opt <= 0 ? "default<O0>" : opt >= 3 ? "default<O3>" : LEAN_PIPELINE; }

LLVMCodeGenOptLevel cx_llvm_codegen_level(int opt) {
  return opt <= 1 ? LLVMCodeGenLevelNone : opt == 2 ? LLVMCodeGenLevelLess : LLVMCodeGenLevelAggressive;
}

/* Loop strength reduction took a quarter of code generation for the MLP's kernels (19 of 76 ms)
 * and epilogue vectorisation a third more vector code per loop, for no run time measured on
 * cxla's benchmarks (bench/README.md). LLVM has no per-module switch for either, so these are
 * process-wide; a program that parses LLVM options itself should not also set these two. */
static void set_options(void) {
  const char *argv[] = {"cxla", "-disable-lsr", "-enable-epilogue-vectorization=false"};
  LLVMParseCommandLineOptions((int)(sizeof argv / sizeof argv[0]), argv, "cxla");
}

void cx_llvm_set_global_options(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, set_options);
}

size_t cx_llvm_module_size(LLVMModuleRef mod) {
  size_t n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double thread_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void fail(cx_llvm_job *job, const char *what, const char *msg) {
  snprintf(job->err, sizeof job->err, "%s: %s", what, msg && *msg ? msg : "unknown LLVM error");
}

static void set_target(const cx_llvm_target *t, LLVMTargetMachineRef tm, LLVMModuleRef mod) {
  LLVMSetTarget(mod, t->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
}

static int optimise(const cx_llvm_target *t, LLVMTargetMachineRef tm, cx_llvm_job *job) {
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* interleaving and unrolling double code size for little gain here. These two reach only the
   * default<On> pipelines: the lean pipeline's loop-vectorize takes the parameters its text gives
   * (none), so it does interleave; loop-vectorize<interleave-forced-only> compiled the
   * transformer step's kernels 4% faster, but its row reductions (softmax cross-entropy, layer
   * norm) ran 3-7% slower, so it stays. */
  if (t->opt_level < 3) {
    LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 0);
  }
  LLVMErrorRef e = LLVMRunPasses(job->mod, cx_llvm_pipeline(t->opt_level), tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (!e) return 1;
  char *msg = LLVMGetErrorMessage(e);
  fail(job, "LLVM optimisation", msg);
  LLVMDisposeErrorMessage(msg);
  return 0;
}

static int emit(LLVMTargetMachineRef tm, LLVMModuleRef mod, LLVMCodeGenFileType type, LLVMMemoryBufferRef *out,
                cx_llvm_job *job) {
  char *err = NULL;
  if (!LLVMTargetMachineEmitToMemoryBuffer(tm, mod, type, &err, out)) return 1;
  fail(job, "LLVM code generation", err);
  LLVMDisposeMessage(err);
  *out = NULL;
  return 0;
}

/* Code generation rewrites the IR it is given (CodeGenPrepare): assembly comes from a copy. */
static void emit_asm(LLVMTargetMachineRef tm, cx_llvm_job *job) {
  LLVMModuleRef copy = LLVMCloneModule(job->mod);
  LLVMMemoryBufferRef buf = NULL;
  if (copy && emit(tm, copy, LLVMAssemblyFile, &buf, job)) {
    size_t n = LLVMGetBufferSize(buf);
    char *tmp = malloc(n + 1); /* the buffer is not NUL-terminated; LLVMCreateMessage copies */
    if (tmp) {
      memcpy(tmp, LLVMGetBufferStart(buf), n);
      tmp[n] = 0;
      job->asm_text = LLVMCreateMessage(tmp);
      free(tmp);
    }
    LLVMDisposeMemoryBuffer(buf);
  }
  if (copy) LLVMDisposeModule(copy);
}

static void drop_module(cx_llvm_job *job) {
  if (!job->mod) return;
  LLVMContextRef c = LLVMGetModuleContext(job->mod);
  LLVMDisposeModule(job->mod);
  if (job->own_context) LLVMContextDispose(c);
  job->mod = NULL;
}

void cx_llvm_job_dispose(cx_llvm_job *job) {
  drop_module(job);
  if (job->obj) LLVMDisposeMemoryBuffer(job->obj);
  LLVMDisposeMessage(job->ir_before);
  LLVMDisposeMessage(job->ir_after);
  LLVMDisposeMessage(job->asm_text);
  memset(job, 0, sizeof *job);
}

static void run_job(const cx_llvm_target *t, LLVMTargetMachineRef tm, cx_llvm_job *job, int dumps) {
  set_target(t, tm, job->mod);
  if (dumps) job->ir_before = LLVMPrintModuleToString(job->mod);
  job->tid = cx_trace_thread_id();
  double t0 = wall_ms(), c0 = thread_cpu_ms();
  int ok = optimise(t, tm, job);
  double t1 = wall_ms(), c1 = thread_cpu_ms();
  if (ok && dumps) {
    job->ir_after = LLVMPrintModuleToString(job->mod);
    emit_asm(tm, job);
  }
  double t2 = wall_ms(), c2 = thread_cpu_ms();
  if (ok) emit(tm, job->mod, LLVMObjectFile, &job->obj, job);
  job->opt_ms = t1 - t0, job->opt_cpu_ms = c1 - c0;
  job->codegen_ms = wall_ms() - t2, job->codegen_cpu_ms = thread_cpu_ms() - c2;
  job->opt_start_ms = t0, job->codegen_start_ms = t2;
  drop_module(job);
}

typedef struct pool {
  const cx_llvm_target *t;
  cx_llvm_job *jobs;
  const int *order;    /* job indices, biggest first (NULL: as given) */
  int n, dumps;
  int next;            /* the next job to take (atomic) */
} pool;

static LLVMTargetMachineRef make_tm(const cx_llvm_target *t, LLVMCodeGenOptLevel level) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    LLVMDisposeMessage(err);
    return NULL;
  }
  /* PIC: kernels in one object are called through addresses taken in another */
  return LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, level, LLVMRelocPIC, LLVMCodeModelJITDefault);
}

/* The sequencer of the transformer step (one function of 112 calls, 1,700 instructions) took 25 ms
 * of code generation at the Less level, as long as a module of 20 kernels, and 6 at None: its
 * one long block is what SelectionDAG's scheduling and the greedy allocator are slowest on, and
 * its code only moves pointers into argument arrays between calls. */
static void *worker(void *arg) {
  pool *p = arg;
  LLVMCodeGenOptLevel level = cx_llvm_codegen_level(p->t->opt_level);
  LLVMTargetMachineRef tm = make_tm(p->t, level), fast = NULL;
  for (;;) {
    int i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (i >= p->n) break;
    if (p->order) i = p->order[i];
    LLVMTargetMachineRef use = tm;
    if (p->jobs[i].fast_codegen && level != LLVMCodeGenLevelNone) {
      if (!fast) fast = make_tm(p->t, LLVMCodeGenLevelNone);
      use = fast;
    }
    if (use) {
      run_job(p->t, use, &p->jobs[i], p->dumps);
    } else {
      fail(&p->jobs[i], "LLVM", "cannot create a target machine for the host");
      drop_module(&p->jobs[i]);
    }
  }
  if (tm) LLVMDisposeTargetMachine(tm);
  if (fast) LLVMDisposeTargetMachine(fast);
  return NULL;
}

static int by_weight(const void *a, const void *b, void *jobs) {
  size_t x = ((cx_llvm_job *)jobs)[*(const int *)a].weight, y = ((cx_llvm_job *)jobs)[*(const int *)b].weight;
  return x < y ? 1 : x > y ? -1 : 0;
}

int cx_llvm_compile(const cx_llvm_target *t, cx_llvm_job *jobs, int n, int threads, int dumps) {
  cx_llvm_set_global_options();
  /* longest first, so the last job to start is a short one */
  int *order = malloc(sizeof *order * (size_t)(n > 0 ? n : 1));
  if (order) {
    for (int i = 0; i < n; i++) order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_weight, jobs);
  }
  pool p = {t, jobs, order, n, dumps, 0};
  if (threads > n) threads = n;
  pthread_t tid[64];
  int started = 0;
  for (int i = 1; i < threads && i < 64; i++) {
    if (pthread_create(&tid[started], NULL, worker, &p) != 0) break; /* fewer threads, same result */
    started++;
  }
  worker(&p);
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
  free(order);
  int failed = 0;
  for (int i = 0; i < n; i++) failed += jobs[i].err[0] != 0;
  return failed;
}
