/* backend_cpu.c — the "cpu" backend: compile = HLO passes + library-op lowering + buffer
 * assignment + LLVM IR (kernels and the sequencer, one module) + ORC JIT; execute = one call
 * of the JIT-compiled cx_entry with this execution's own arena and runtime state.
 *
 * Thread safety: after compile nothing in the state is written except the arena free list
 * (under a mutex); every execution has its own arena, output literal and cx_rt. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "backend/cpu/jit.h"
#include "backend/cpu/sequencer.h"
#include "passes/pass.h"
#include "runtime/context.h"
#include "runtime/executable.h"
#include "util/file.h"

typedef void (*cx_entry_fn)(void **params, void **outputs, char *arena, cx_rt *rt);

/* Arenas kept for reuse: a fresh big allocation per execution would be a fresh mmap whose
 * pages fault in again on every run. */
#define KEPT_ARENAS 4

typedef struct cpu_state {
  cx_module *m;              /* the compiled module: constants and fallback computations */
  cx_jit *jit;
  cx_entry_fn entry;
  cx_buffers bufs;
  cx_seq_out seq;
  cx_fallback_table table;
  int threads;
  int nparam_leaves;
  pthread_mutex_t mu;        /* guards kept[] */
  void *kept[KEPT_ARENAS];
  int nkept;
} cpu_state;

static void cpu_destroy(void *p) {
  cpu_state *st = p;
  if (!st) return;
  cx_jit_destroy(st->jit); /* before the module: JIT code points at its constants */
  cx_buffers_free(&st->bufs);
  cx_seq_out_free(&st->seq);
  cx_module_free(st->m);
  for (int i = 0; i < st->nkept; i++) cx_free(st->kept[i]);
  pthread_mutex_destroy(&st->mu);
  cx_free(st);
}

/* ---- dumps (--dump-to) ---- */

static cxla_status write_text(cxla_context *ctx, const cx_flags *f, const cx_module *m, const char *suffix,
                              const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", f->dump_to, m->name ? m->name : "module", suffix);
  for (char *p = path + strlen(f->dump_to) + 1; *p; p++) /* module names may hold odd characters */
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
          *p == '_' || *p == '-'))
      *p = '_';
  FILE *fp = fopen(path, "wb");
  if (!fp) return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text), w = fwrite(text, 1, n, fp);
  if (fclose(fp) != 0 || w != n) return cx_error(ctx, CXLA_ERR_IO, "cannot write %s", path);
  return CXLA_OK;
}

static cxla_status dump_buffers(cxla_context *ctx, const cx_flags *f, cpu_state *st) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_buffers_print(&sb, st->m, &st->bufs);
  cx_sb_printf(&sb, "\nkernels=%d gemms=%d convolutions=%d copies=%d fallbacks=%d\n", st->seq.nkernels,
               st->seq.ngemms, st->seq.nconvs, st->seq.ncopies, st->seq.nfallbacks);
  for (int i = 0; i < st->seq.nfallbacks; i++) {
    const cx_fallback_op *o = &st->seq.fallbacks[i];
    cx_sb_printf(&sb, "fallback %d: %s (%s) runs on the interpreter: %s\n", i, o->in->name ? o->in->name : "?",
                 cx_op_name(o->in->op), o->why);
  }
  cxla_status s = sb.oom ? cx_oom(ctx) : write_text(ctx, f, st->m, "buffer-assignment.txt", sb.buf ? sb.buf : "");
  cx_sb_free(&sb);
  return s;
}

static cxla_status dump_ir(cxla_context *ctx, const cx_flags *f, const cx_module *m, LLVMModuleRef mod,
                           const char *suffix) {
  char *ir = LLVMPrintModuleToString(mod);
  cxla_status s = ir ? write_text(ctx, f, m, suffix, ir) : cx_oom(ctx);
  LLVMDisposeMessage(ir);
  return s;
}

/* The optimised IR and the assembly: the JIT optimises the module it is given and keeps it,
 * so the dump optimises a copy the same way (only when dumping). */
static cxla_status dump_optimised(cxla_context *ctx, const cx_flags *f, cpu_state *st, LLVMModuleRef mod) {
  LLVMModuleRef copy = LLVMCloneModule(mod);
  if (!copy) return cx_oom(ctx);
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures(), *err = NULL;
  LLVMTargetRef target;
  cxla_status s = CXLA_OK;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    s = cx_error(ctx, CXLA_ERR_COMPILE, "dump: no target for %s: %s", triple, err ? err : "");
  } else {
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, feat, LLVMCodeGenLevelDefault,
                                                      LLVMRelocDefault, LLVMCodeModelJITDefault);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetTarget(copy, triple);
    LLVMSetModuleDataLayout(copy, dl);
    LLVMDisposeTargetData(dl);
    char passes[32];
    snprintf(passes, sizeof passes, "default<O%d>", f->opt_level < 0 ? 0 : f->opt_level > 3 ? 3 : f->opt_level);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(copy, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) LLVMConsumeError(e);
    s = dump_ir(ctx, f, st->m, copy, "ir-after-opt.ll");
    char *asm_text = s == CXLA_OK ? cx_jit_emit_asm(st->jit, copy) : NULL;
    if (asm_text) s = write_text(ctx, f, st->m, "s", asm_text);
    cx_free(asm_text);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  LLVMDisposeModule(copy);
  return s;
}

/* ---- compile ---- */

static const cx_jit_symbol runtime_symbols[] = {
    {"cx_rt_parallel_for", (void *)cx_rt_parallel_for},
    {"cx_rt_gemm", (void *)cx_rt_gemm},
    {"cx_rt_interp_op", (void *)cx_rt_interp_op},
    {"cx_rt_trace_begin", (void *)cx_rt_trace_begin},
    {"cx_rt_trace_end", (void *)cx_rt_trace_end},
    {"cx_rt_conv_im2col", (void *)cx_rt_conv_im2col},
};

static int dumping(const cx_flags *f) { return f->dump_to && f->dump_to[0]; }

/* LLVM IR for the module, JIT-compiled; *emit_ms etc. for the stats. */
static cxla_status codegen(cxla_context *ctx, const cx_flags *flags, cpu_state *st, double *emit_ms, double *opt_ms,
                           double *cg_ms) {
  double t0 = cx_now_ms();
  CX_TRY(cx_jit_create(ctx, flags->opt_level, runtime_symbols, CX_ARRAY_LEN(runtime_symbols), &st->jit));
  LLVMContextRef llctx = cx_jit_context(st->jit);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(st->m->name ? st->m->name : "module", llctx);
  if (!mod) return cx_oom(ctx);
  cx_cg g;
  cx_cg_init(&g, ctx, st->m, flags, llctx, mod);
  g.vector_bits = cx_jit_vector_bits(st->jit);
  cxla_status s = cx_seq_emit(&g, &st->bufs, flags->max_loop_iterations, &st->seq);
  cx_cg_dispose(&g);
  char *msg = NULL;
  if (s == CXLA_OK && LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "cpu backend produced invalid LLVM IR: %.1500s", msg ? msg : "");
  LLVMDisposeMessage(msg);
  *emit_ms = cx_now_ms() - t0;
  if (s == CXLA_OK && dumping(flags)) {
    s = dump_ir(ctx, flags, st->m, mod, "ir-before-opt.ll");
    if (s == CXLA_OK) s = dump_optimised(ctx, flags, st, mod);
  }
  if (s != CXLA_OK) {
    LLVMDisposeModule(mod);
    return s;
  }
  CX_TRY(cx_jit_add_module(st->jit, mod, opt_ms, cg_ms)); /* takes mod */
  double t1 = cx_now_ms();
  void *addr = NULL;
  CX_TRY(cx_jit_lookup(st->jit, "cx_entry", &addr)); /* machine code is generated here */
  *cg_ms += cx_now_ms() - t1;
  st->entry = (cx_entry_fn)addr;
  return CXLA_OK;
}

static cxla_status compile_state(cxla_context *ctx, const cx_flags *flags, cpu_state *st, cx_sb *stats) {
  cx_module *m = st->m;
  double t0 = cx_now_ms();
  cx_pass_ctx pc = {.flags = flags, .verify = 0, .ndumps = 0, .stats = NULL};
  CX_TRY(cx_pass_pipeline_cpu(&pc, m));
  CX_TRY(cx_cpu_lower_library_ops(m));
  double t1 = cx_now_ms();
  CX_TRY(cx_buffers_assign(m, &st->bufs));
  double t2 = cx_now_ms();
  if (dumping(flags)) CX_TRY(cx_pass_dump_always(&pc, m, "cpu-final"));
  const cx_comp *e = m->entry;
  for (int p = 0; p < e->nparams; p++) st->nparam_leaves += cx_shape_leaf_count(&e->params[p]->shape);
  double emit_ms = 0, opt_ms = 0, cg_ms = 0;
  CX_TRY(codegen(ctx, flags, st, &emit_ms, &opt_ms, &cg_ms));
  st->table = (cx_fallback_table){m, st->seq.fallbacks, st->seq.nfallbacks, flags->max_loop_iterations};
  if (dumping(flags)) CX_TRY(dump_buffers(ctx, flags, st));
  cx_sb_printf(stats, "passes=%.3f buffers=%.3f emit=%.3f opt=%.3f codegen=%.3f fallbacks=%d ", t1 - t0, t2 - t1,
               emit_ms, opt_ms, cg_ms, st->seq.nfallbacks);
  return CXLA_OK;
}

static cxla_status cpu_compile(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state, cx_sb *stats) {
  *state = NULL;
  cpu_state *st = cx_calloc(1, sizeof *st);
  if (!st) {
    cx_module_free(m);
    return cx_oom(ctx);
  }
  st->m = m;
  st->threads = flags->threads;
  pthread_mutex_init(&st->mu, NULL);
  cxla_status s = compile_state(ctx, flags, st, stats);
  if (s != CXLA_OK) {
    cpu_destroy(st);
    return s;
  }
  *state = st;
  return CXLA_OK;
}

/* ---- execute ---- */

static int leaf_ptrs(cxla_literal *l, void **out, int *k, int cap) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!leaf_ptrs(l->elems[i], out, k, cap)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = l->data;
  return 1;
}

static void *arena_get(cpu_state *st, void **base) {
  void *p = NULL;
  pthread_mutex_lock(&st->mu);
  if (st->nkept) p = st->kept[--st->nkept];
  pthread_mutex_unlock(&st->mu);
  if (!p) p = cx_malloc((size_t)st->bufs.arena_size + 64);
  *base = p;
  return p ? (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL; /* slots are 64-byte aligned */
}

static void arena_put(cpu_state *st, void *base) {
  if (!base) return;
  pthread_mutex_lock(&st->mu);
  if (st->nkept < KEPT_ARENAS) {
    st->kept[st->nkept++] = base;
    base = NULL;
  }
  pthread_mutex_unlock(&st->mu);
  cx_free(base);
}

static cxla_status cpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args,
                               cxla_literal **out) {
  cpu_state *st = state;
  *out = NULL;
  const cx_buffers *b = &st->bufs;
  /* Every output element is written by the program, so the (recycled) block needs no zeroing. */
  cxla_literal *res = cx_literal_new_uninit(&st->m->entry->root->shape);
  void *pstack[32], *ostack[32];
  void **params = st->nparam_leaves <= 32 ? pstack : cx_malloc(sizeof *params * (size_t)st->nparam_leaves);
  void **outs = b->noutputs <= 32 ? ostack : cx_malloc(sizeof *outs * (size_t)b->noutputs);
  void *base = NULL, *arena = NULL;
  cxla_status s = CXLA_OK;
  if (!res || !params || !outs || !(arena = arena_get(st, &base))) s = cx_oom(ctx);
  int np = 0, no = 0;
  for (int i = 0; i < nargs && s == CXLA_OK; i++)
    if (!leaf_ptrs(args[i], params, &np, st->nparam_leaves)) s = cx_error(ctx, CXLA_ERR_INTERNAL, "argument %d: leaf count", i);
  if (s == CXLA_OK && (np != st->nparam_leaves || !leaf_ptrs(res, outs, &no, b->noutputs) || no != b->noutputs))
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "cpu backend: arguments or result do not match the compiled signature");
  if (s == CXLA_OK) {
    cx_rt rt;
    memset(&rt, 0, sizeof rt);
    rt.pool = st->threads == 1 ? NULL : cx_context_pool(ctx, st->threads);
    rt.trace = cx_context_trace(ctx);
    rt.names = (const char *const *)st->seq.names;
    rt.exe = &st->table;
    rt.fallback = cx_cpu_fallback;
    st->entry(params, outs, arena, &rt);
    if (rt.status != CXLA_OK) s = cx_error(ctx, rt.status, "%s", rt.errmsg[0] ? rt.errmsg : "execution failed");
  }
  arena_put(st, base);
  if (params != pstack) cx_free(params);
  if (outs != ostack) cx_free(outs);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

const cx_backend cx_backend_cpu = {"cpu", cpu_compile, cpu_execute, cpu_destroy};
