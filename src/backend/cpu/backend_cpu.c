/* backend_cpu.c — the "cpu" backend: compile = HLO passes + library-op lowering + buffer
 * assignment + LLVM IR (kernels and the sequencer, one module) + ORC JIT; execute = one call
 * of the JIT-compiled cx_entry with this execution's own arena and runtime state.
 *
 * Thread safety: after compile nothing in the state is written except the arena free list
 * (under a mutex); every execution has its own arena, output literal and cx_rt. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include "backend/backend.h"
#include "backend/cpu/collectives.h"
#include "backend/cpu/object_cache.h"
#include "codegen/libmvec.h"
#include "backend/cpu/pools.h"
#include "backend/cpu/sequencer.h"
#include "backend/cpu/sort_scatter.h"
#include "util/fpenv.h"
#include "rt/threadpool.h"
#include "codegen/jit.h"
#include "codegen/llvm_compile.h"
#include "core/context.h"
#include "core/trace.h"
#include "core/transport.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/groups.h"
#include "passes/fusion_plan.h"
#include "passes/pass.h"
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
  unsigned char *code;       /* the code as a disk cache entry, when the compile kept it */
  size_t code_len;
  pthread_mutex_t mu;        /* guards kept[] */
  void *kept[KEPT_ARENAS];
  int nkept;
} cpu_state;

/* An execution's temporaries: the buffer slots, then the split reductions' scratch. */
static size_t temp_bytes(const cpu_state *st) {
  return (size_t)(cx_seq_scratch_offset(&st->bufs) + st->seq.scratch_bytes);
}

/* An arena's allocation: the temporaries and room to align their start to 64 bytes. Large ones
 * are recycled blocks whose first use faults their pages in as huge pages (util/blockcache.c):
 * a new process's first step would otherwise take a page fault for every 4 KiB of them. */
static size_t arena_bytes(const cpu_state *st) { return temp_bytes(st) + 64; }

static void cpu_destroy(void *p) {
  cpu_state *st = p;
  if (!st) return;
  cx_rt_gemm_dnnl_settle(); /* the set-up thread its compile may have started */
  cx_jit_destroy(st->jit); /* before the module: JIT code points at its constants */
  cx_buffers_free(&st->bufs);
  cx_seq_out_free(&st->seq);
  cx_module_free(st->m);
  for (int i = 0; i < st->nkept; i++) cx_block_free(st->kept[i], arena_bytes(st));
  cx_free(st->code);
  pthread_mutex_destroy(&st->mu);
  cx_free(st);
}

/* ---- dumps (--dump-to) ---- */

static cxla_status dump_buffers(cxla_context *ctx, cx_pass_ctx *pc, cpu_state *st) {
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
  cxla_status s = sb.oom ? cx_oom(ctx) : cx_dump_file(pc, st->m, "buffer-assignment.txt", sb.buf ? sb.buf : "", sb.len);
  cx_sb_free(&sb);
  return s;
}

/* ---- compile ---- */

static const cx_jit_symbol runtime_symbols[] = {
    {"cx_rt_parallel_for", (void *)cx_rt_parallel_for},
    {"cx_rt_parallel_parts", (void *)cx_rt_parallel_parts},
    {"cx_rt_gemm", (void *)cx_rt_gemm},
    {"cx_rt_gemm_batch2", (void *)cx_rt_gemm_batch2},
    {"cx_rt_gemm_dnnl", (void *)cx_rt_gemm_dnnl},
    {"cx_rt_gemm_batch2_dnnl", (void *)cx_rt_gemm_batch2_dnnl},
    {"cx_rt_interp_op", (void *)cx_rt_interp_op},
    {"cx_rt_trace_begin", (void *)cx_rt_trace_begin},
    {"cx_rt_trace_end", (void *)cx_rt_trace_end},
    {"cx_rt_conv_im2col", (void *)cx_rt_conv_im2col},
    {"cx_rt_conv_dnnl", (void *)cx_rt_conv_dnnl},
    {"cx_rt_linalg", (void *)cx_rt_linalg},
    {"cx_rt_topk", (void *)cx_rt_topk},
    {"cx_rt_ragged_dot", (void *)cx_rt_ragged_dot},
    {"cx_rt_fft", (void *)cx_rt_fft},
    {"cx_rt_rng_bits", (void *)cx_rt_rng_bits},
    {"cx_rt_rng", (void *)cx_rt_rng},
    {"cx_rt_sort", (void *)cx_rt_sort},
    {"cx_rt_scatter", (void *)cx_rt_scatter},
    {"cx_rt_select_and_scatter", (void *)cx_rt_select_and_scatter},
    {"cx_rt_collective", (void *)cx_rt_collective},
    {"cx_rt_collective_reduce", (void *)cx_rt_collective_reduce},
    {"cx_rt_device_id", (void *)cx_rt_device_id},
};

static int dumping(const cx_flags *f) { return f->dump_to && f->dump_to[0]; }

/* Dump files hold every module, the sequencer's first, each starting with "; ModuleID". */
static cxla_status dump_jobs(cxla_context *ctx, cx_pass_ctx *pc, cx_module *m, const cx_llvm_job *jobs, int n) {
  static const char *const suffix[3] = {"ir-before-opt.ll", "ir-after-opt.ll", "s"};
  cxla_status s = CXLA_OK;
  for (int k = 0; k < 3 && s == CXLA_OK; k++) {
    cx_sb sb;
    cx_sb_init(&sb);
    for (int i = 0; i < n; i++) {
      const char *t = k == 0 ? jobs[i].ir_before : k == 1 ? jobs[i].ir_after : jobs[i].asm_text;
      if (k == 2) cx_sb_printf(&sb, "# ---- module %d ----\n", i);
      cx_sb_puts(&sb, t ? t : "; (not available: compilation failed)\n");
    }
    s = sb.oom ? cx_oom(ctx) : cx_dump_file(pc, m, suffix[k], sb.buf ? sb.buf : "", sb.len);
    cx_sb_free(&sb);
  }
  return s;
}

static void free_jobs(cx_llvm_job *jobs, int n) {
  for (int i = 0; i < n; i++) cx_llvm_job_dispose(&jobs[i]);
  cx_free(jobs);
}

typedef struct llvm_times {
  double jit, emit, opt, codegen, wall, link, disk;
  int threads, modules, fast_modules;
  const char *disk_cache; /* the disk cache's result (object_cache.h) */
} llvm_times;

static int defined_functions(LLVMModuleRef mod) {
  int n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) n += !LLVMIsDeclaration(f);
  return n;
}

/* The sequencer module and every shard as compile jobs (taking their modules); NULL on OOM. */
static cx_llvm_job *make_jobs(cxla_context *ctx, LLVMModuleRef mod, cx_shards *sh, int *n) {
  cx_llvm_job *jobs = cx_calloc((size_t)sh->n + 1, sizeof *jobs);
  if (!jobs) {
    cx_oom(ctx);
    return NULL;
  }
  jobs[0].mod = mod;
  jobs[0].weight = cx_llvm_module_size(mod);
  /* the sequencer alone, no kernel of a loop body beside it (those stay here to be inlined):
   * calls only, code generation's fast path (llvm_compile.c) */
  jobs[0].fast_codegen = defined_functions(mod) == 1;
  for (int i = 0; i < sh->n; i++) {
    jobs[i + 1].mod = sh->s[i].mod;
    jobs[i + 1].own_context = 1;
    jobs[i + 1].weight = sh->s[i].weight;
    sh->s[i].mod = NULL;
  }
  *n = sh->n + 1;
  return jobs;
}

static cxla_status verify_ir(cxla_context *ctx, LLVMModuleRef mod) {
  char *msg = NULL;
  cxla_status s = CXLA_OK;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "cpu backend produced invalid LLVM IR: %.1500s", msg ? msg : "");
  LLVMDisposeMessage(msg);
  return s;
}

/* A pass run or a dump, as a span of the compile (the pass manager's hook). */
static void trace_span(void *arg, const char *name, const char *cat, double t0_ms, double t1_ms, int changed) {
  cx_trace_args a = {1, {"changed"}, {changed}};
  char full[96];
  snprintf(full, sizeof full, "%s %s", cat, name);
  cx_trace_add(arg, full, "compile", (int64_t)(t0_ms * 1e6), (int64_t)(t1_ms * 1e6), &a);
}

/* One LLVM module's optimisation and code generation, on the thread that did them. */
static void trace_job(cx_trace *tr, const cx_llvm_job *j, int index) {
  if (!tr || !j->tid) return;
  char name[48];
  cx_trace_args a = {3, {"module", "instructions", "cpu_us"}, {index, (int64_t)j->weight, (int64_t)(j->opt_cpu_ms * 1e3)}};
  snprintf(name, sizeof name, "opt module %d", index);
  cx_trace_add_on(tr, j->tid, name, "compile", (int64_t)(j->opt_start_ms * 1e6),
                  (int64_t)((j->opt_start_ms + j->opt_ms) * 1e6), &a);
  a.val[2] = (int64_t)(j->codegen_cpu_ms * 1e3);
  snprintf(name, sizeof name, "codegen module %d", index);
  cx_trace_add_on(tr, j->tid, name, "compile", (int64_t)(j->codegen_start_ms * 1e6),
                  (int64_t)((j->codegen_start_ms + j->codegen_ms) * 1e6), &a);
}

/* The addresses the code refers to by name (cx_seq_out's addrs) as symbols of the JIT. */
static cxla_status define_addrs(cxla_context *ctx, cpu_state *st) {
  int n = st->seq.naddrs;
  if (!n) return CXLA_OK;
  cx_jit_symbol *syms = cx_calloc((size_t)n, sizeof *syms);
  char *names = cx_malloc((size_t)n * 24);
  cxla_status s = syms && names ? CXLA_OK : cx_oom(ctx);
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    snprintf(names + 24 * i, 24, CX_SEQ_ADDR_FMT, i);
    syms[i] = (cx_jit_symbol){names + 24 * i, (void *)st->seq.addrs[i]};
  }
  if (s == CXLA_OK) s = cx_jit_define_data(st->jit, syms, n);
  cx_free(syms);
  cx_free(names);
  return s;
}

/* Optimises and generates code for the modules on `threads` threads and adds the objects to
 * the JIT (and to the disk cache). Takes mod and the shards' modules. */
static cxla_status compile_llvm(cxla_context *ctx, const cx_flags *flags, cx_pass_ctx *pc, cpu_state *st,
                                LLVMModuleRef mod, cx_shards *sh, int threads, cx_object_cache *oc, llvm_times *tm) {
  cxla_status s = verify_ir(ctx, mod);
  for (int i = 0; i < sh->n && s == CXLA_OK; i++) s = verify_ir(ctx, sh->s[i].mod);
  int n = 0;
  cx_llvm_job *jobs = s == CXLA_OK ? make_jobs(ctx, mod, sh, &n) : NULL;
  cx_shards_free(sh);
  if (!jobs) {
    LLVMDisposeModule(mod);
    return s != CXLA_OK ? s : CXLA_ERR_OUT_OF_MEMORY;
  }
  double t1 = cx_now_ms();
  cx_trace *tr = cx_context_trace(ctx);
  cx_context_set_activity(ctx, "compiling (LLVM)", st->m->name);
  cx_llvm_target target = cx_jit_target(st->jit);
  int failed = cx_llvm_compile(&target, jobs, n, threads, dumping(flags));
  double t2 = cx_now_ms();
  tm->wall = t2 - t1;
  tm->threads = threads < n ? threads : n;
  tm->modules = n;
  for (int i = 0; i < n; i++) {
    tm->fast_modules += jobs[i].fast_codegen;
    tm->opt += jobs[i].opt_cpu_ms;
    tm->codegen += jobs[i].codegen_cpu_ms;
    trace_job(tr, &jobs[i], i);
  }
  cx_trace_args la = {2, {"threads", "modules"}, {tm->threads, n}};
  cx_trace_add(tr, "llvm", "compile", (int64_t)(t1 * 1e6), (int64_t)(t2 * 1e6), &la);
  if (dumping(flags)) s = dump_jobs(ctx, pc, st->m, jobs, n);
  if (!failed && s == CXLA_OK) {
    cx_object_cache_store(oc, &st->seq, jobs, n);
    double t3 = cx_now_ms();
    tm->disk += t3 - t2;
    if (oc->key) cx_trace_add_ms(tr, oc->dir ? "disk cache store" : "code kept", "compile", t2, t3);
  }
  for (int i = 0; i < n && !failed && s == CXLA_OK; i++) {
    LLVMMemoryBufferRef obj = jobs[i].obj;
    jobs[i].obj = NULL;
    s = cx_jit_add_object(st->jit, obj);
  }
  if (failed && s == CXLA_OK)
    for (int i = 0; i < n; i++)
      if (jobs[i].err[0]) {
        s = cx_error(ctx, CXLA_ERR_COMPILE, "%s", jobs[i].err);
        break;
      }
  free_jobs(jobs, n);
  return s;
}

/* LLVM IR for the module: the sequencer in one LLVM module, kernels in up to 2 per compile
 * thread, compiled in parallel and linked by the JIT; or, when the disk cache has them, the
 * objects of an earlier compile of the same key, linked in place of the IR. */
static cxla_status codegen(cxla_context *ctx, const cx_flags *flags, cx_pass_ctx *pc, cpu_state *st, llvm_times *tm) {
  double tj = cx_now_ms();
  CX_TRY(cx_jit_create(ctx, flags->opt_level, runtime_symbols, CX_ARRAY_LEN(runtime_symbols), &st->jit));
  double t0 = cx_now_ms();
  cx_trace_add_ms(cx_context_trace(ctx), "jit", "compile", tj, t0);
  tm->jit = t0 - tj;
  LLVMContextRef llctx = cx_jit_context(st->jit);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(st->m->name ? st->m->name : "module", llctx);
  if (!mod) return cx_oom(ctx);
  int threads = flags->threads > 0 ? flags->threads : cx_threadpool_ncpus();
  cx_target host = cx_target_cpu; /* the description, with this host's vector width */
  host.vector_bits = cx_jit_vector_bits(st->jit);
  host.libmvec = flags->cpu_libmvec ? cx_libmvec_level(cx_jit_target(st->jit).features) : 0;
  cx_cg g;
  cx_cg_init(&g, ctx, st->m, llctx, mod, &host);
  cx_shards sh;
  cx_shards_init(&sh, &g, threads == 1 ? 1 : 2 * threads);
  cxla_status s = cx_seq_emit(&g, &sh, &st->bufs, flags->max_loop_iterations, flags->cpu_onednn, &st->seq);
  cx_cg_dispose(&g);
  double t1 = cx_now_ms();
  tm->emit = t1 - t0;
  cx_trace *tr = cx_context_trace(ctx);
  cx_trace_add_ms(tr, "emit", "compile", t0, t1);
  if (s == CXLA_OK) s = define_addrs(ctx, st);
  cx_object_cache oc;
  int hit = 0;
  if (s == CXLA_OK && !dumping(flags)) s = cx_object_cache_open(ctx, flags, st->jit, threads, &oc);
  else memset(&oc, 0, sizeof oc), oc.result = "off";
  if (s == CXLA_OK) s = cx_object_cache_load(ctx, &oc, &st->seq, st->jit, &hit);
  double t2 = cx_now_ms();
  tm->disk = t2 - t1;
  if (oc.key) {
    char name[300];
    snprintf(name, sizeof name, "disk cache %s%s%s%s%s", oc.result, hit && !strcmp(oc.source, "given") ? " (given code)" : "",
             oc.why[0] ? ": " : "", oc.why, !hit && oc.given ? " (given code)" : "");
    cx_trace_add_ms(tr, name, "compile", t1, t2);
  }
  if (s != CXLA_OK || hit) { /* the IR is not needed: the cached objects are its code */
    cx_shards_free(&sh);
    LLVMDisposeModule(mod);
  } else {
    s = compile_llvm(ctx, flags, pc, st, mod, &sh, threads, &oc, tm);
  }
  tm->disk_cache = oc.result;
  st->code = cx_object_cache_take_entry(&oc, &st->code_len);
  cx_object_cache_close(&oc);
  CX_TRY(s);
  double t3 = cx_now_ms();
  void *addr = NULL;
  CX_TRY(cx_jit_lookup(st->jit, "cx_entry", &addr)); /* links the objects */
  double t4 = cx_now_ms();
  tm->link = t4 - t3;
  cx_trace_add_ms(tr, "link", "compile", t3, t4);
  st->entry = (cx_entry_fn)addr;
  return CXLA_OK;
}

/* Whether a dot of m as written is of oneDNN's sgemm class already (the sequencer decides
 * after the passes, which may still transpose an operand or fuse a dot away; this is a hint). */
static int dnnl_gemm_likely(const cx_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      const cx_instr *in = m->comps[c]->instrs[i];
      cx_gemm_plan p;
      const char *why;
      if (in->op == CX_OP_DOT && cx_dot_plan(in, &cx_cpu_gemm, &p, &why) &&
          cx_rt_gemm_dnnl_suits(p.type, p.trans_a, p.trans_b, p.m, p.n, p.k, p.batch))
        return 1;
    }
  return 0;
}

static cxla_status compile_state(cxla_context *ctx, const cx_flags *flags, cpu_state *st, cx_stats *stats) {
  cx_module *m = st->m;
  double t0 = cx_now_ms();
  /* oneDNN's sgemm sets itself up on a background thread while this compiles (rt/gemm_dnnl.c):
   * a new process's first step would otherwise wait for it (the sequencer asks too, once it
   * has chosen oneDNN for a product) */
  if (flags->cpu_onednn && dnnl_gemm_likely(m)) cx_rt_gemm_dnnl_warm();
  /* OpenBLAS on one thread, and its idle workers stopped before they spin beside this compile
   * (rt/blas_core.c); executions set it again */
  cx_rt_blas_tune();
  cx_trace *tr = cx_context_trace(ctx);
  cx_pass_opts po = cx_pass_opts_from_flags(flags);
  cx_pass_ctx pc = {.opts = &po, .verify = 0, .ndumps = 0, .stats = NULL, .span = tr ? trace_span : NULL, .span_arg = tr};
  CX_TRY(cx_interp_check_module(m)); /* what neither a kernel nor the fallback could run */
  CX_TRY(cx_pass_pipeline(&pc, m));
  CX_TRY(cx_module_compact(&st->m)); /* the executable keeps it: fusion's dead clones go */
  m = st->m;
  CX_TRY(cx_lower_library_ops(m, cx_cpu_gemm_target(flags->cpu_onednn)));
  CX_TRY(cx_fusion_plan_module(m)); /* fusions are final: what buffers and codegen read about each */
  double t1 = cx_now_ms(), pass_dumps = pc.dump_ms;
  cx_trace_add_ms(tr, "passes", "compile", t0, t1);
  CX_TRY(cx_buffers_assign_donated(m, flags->donated, flags->ndonated, &st->bufs));
  double t2 = cx_now_ms();
  cx_trace_add_ms(tr, "buffers", "compile", t1, t2);
  if (dumping(flags)) CX_TRY(cx_pass_dump_always(&pc, m, "cpu-final"));
  const cx_comp *e = m->entry;
  for (int p = 0; p < e->nparams; p++) st->nparam_leaves += cx_shape_leaf_count(&e->params[p]->shape);
  llvm_times tm = {.disk_cache = "off"};
  CX_TRY(codegen(ctx, flags, &pc, st, &tm));
  st->table = (cx_fallback_table){m, st->seq.fallbacks, st->seq.nfallbacks, flags->max_loop_iterations};
  if (dumping(flags)) CX_TRY(dump_buffers(ctx, &pc, st));
  CX_TRY(cx_dump_finish(&pc, m));
  /* times are spans of wall clock (llvm: optimisation + code generation on llvm_threads
   * threads; passes without the dumps they wrote); the CPU time LLVM spent (each compiling
   * thread's own clock, so not stretched by other load), summed over its threads, is a count,
   * and so are the modules that took the fast code generator (the sequencer alone) */
  cx_sb_printf(&stats->times, "passes=%.3f buffers=%.3f jit=%.3f emit=%.3f llvm=%.3f link=%.3f ", t1 - t0 - pass_dumps,
               t2 - t1, tm.jit, tm.emit, tm.wall, tm.link);
  if (strcmp(tm.disk_cache, "off")) cx_sb_printf(&stats->times, "disk=%.3f ", tm.disk);
  if (dumping(flags)) cx_sb_printf(&stats->times, "dump=%.3f ", pc.dump_ms);
  const cx_seq_out *q = &st->seq;
  cx_sb_printf(&stats->counts, "kernels=%d gemms=%d gemms_onednn=%d convolutions=%d copies=%d fallbacks=%d kernels_reused=%d ",
               q->nkernels, q->ngemms, q->ngemms_onednn, q->nconvs, q->ncopies, q->nfallbacks, q->nreused);
  cx_sb_printf(&stats->counts, "llvm_threads=%d llvm_modules=%d llvm_fast_modules=%d opt_cpu_ms=%.0f codegen_cpu_ms=%.0f ",
               tm.threads, tm.modules, tm.fast_modules, tm.opt, tm.codegen);
  /* the arena: the largest set of temporaries live at once, as the assignment packed them */
  cx_sb_printf(&stats->counts, "temp_bytes=%zu ", temp_bytes(st));
  cx_sb_printf(&stats->counts, "library_macs=%lld ", (long long)q->library_macs);
  cx_sb_printf(&stats->counts, "disk_cache=%s ", tm.disk_cache);
  return CXLA_OK;
}

/* LLVM's modules, passes and code buffers are freed by now, but glibc keeps freed heap (in
 * each compile thread's arena too) resident for reuse; hand it back to the system so that a
 * run's inputs and results are not stacked on top of the compile's peak. */
static void release_compile_memory(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

static cxla_status cpu_compile(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state, cx_stats *stats) {
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
  release_compile_memory();
  return CXLA_OK;
}

/* ---- execute ---- */

/* The array leaves of l in DFS order into out[*k ...], each its data (data) or the leaf
 * literal itself; 0 past cap. */
static int leaf_ptrs(cxla_literal *l, void **out, int *k, int cap, int data) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!leaf_ptrs(l->elems[i], out, k, cap, data)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = data ? l->data : (void *)l;
  return 1;
}

/* Array leaf k (DFS order) of a literal, or NULL. */
static cxla_literal *leaf_literal(cxla_literal *l, int *k) {
  if (l->shape.type != CXLA_TUPLE) {
    if (!cx_type_is_array(l->shape.type)) return NULL;
    return (*k)-- == 0 ? l : NULL;
  }
  for (int i = 0; i < l->nelems; i++) {
    cxla_literal *r = leaf_literal(l->elems[i], k);
    if (r) return r;
  }
  return NULL;
}

/* Result leaves computed in a donated parameter's memory take that memory over; the argument
 * gets the result's unused block in exchange (the caller destroys it: it was donated). The
 * result's leaf literals come as a list (res_leaves, in leaf order): a step of a model with
 * hundreds of arrays donates most of them, and finding each by walking the tuple was
 * quadratic. */
static void take_donated(cpu_state *st, cxla_literal *const *args, void *const *res_leaves) {
  for (int i = 0; i < st->bufs.nslots; i++) {
    const cx_slot *sl = &st->bufs.slots[i];
    if (sl->kind != CX_SLOT_PARAM || sl->out_leaf < 0 || sl->out_leaf >= st->bufs.noutputs) continue;
    int pk = sl->leaf;
    cxla_literal *from = leaf_literal(args[sl->param], &pk), *to = res_leaves[sl->out_leaf];
    if (!from || cx_shape_bytes(&from->shape) != cx_shape_bytes(&to->shape)) continue; /* assignment made sure */
    void *d = to->data;
    to->data = from->data;
    from->data = d;
  }
}

static void *arena_get(cpu_state *st, void **base) {
  void *p = NULL;
  pthread_mutex_lock(&st->mu);
  if (st->nkept) p = st->kept[--st->nkept];
  pthread_mutex_unlock(&st->mu);
  if (!p) p = cx_block_alloc(arena_bytes(st));
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
  if (base) cx_block_free(base, arena_bytes(st));
}

static cxla_status cpu_execute_on(void *state, cxla_context *ctx, const cx_replica *rep, int nargs,
                                  cxla_literal *const *args, cxla_literal **out) {
  cpu_state *st = state;
  if (rep) CX_TRY(cx_module_check_run(st->m, rep->dv));
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
    if (!leaf_ptrs(args[i], params, &np, st->nparam_leaves, 1)) s = cx_error(ctx, CXLA_ERR_INTERNAL, "argument %d: leaf count", i);
  if (s == CXLA_OK && (np != st->nparam_leaves || !leaf_ptrs(res, outs, &no, b->noutputs, 1) || no != b->noutputs))
    s = cx_error(ctx, CXLA_ERR_INTERNAL, "cpu backend: arguments or result do not match the compiled signature");
  if (s == CXLA_OK) {
    cx_rt rt;
    memset(&rt, 0, sizeof rt);
    rt.pool = st->threads == 1 ? NULL : cx_cpu_pool(ctx, st->threads);
    cx_threadpool_set_idle_spin(rt.pool, (int64_t)ctx->flags.cpu_idle_spin_us * 1000);
    cx_rt_blas_tune(); /* OpenBLAS on one thread, pool or not, whoever set it since (rt/blas_core.c) */
    rt.trace = cx_context_trace(ctx);
    rt.names = (const char *const *)st->seq.names;
    rt.origins = st->seq.origins;
    rt.ctx = ctx;
    rt.loop_trips = &ctx->loop_trips;
    rt.exe = &st->table;
    rt.rep = rep;
    rt.fallback = cx_cpu_fallback;
    /* --cpu-flush-denormals: the execution (and the pool's share of it) with FTZ and DAZ, as
     * XLA:CPU's; without it IEEE, whatever the calling thread set; the caller's two bits back
     * afterwards (the exception flags raised stay raised) */
    unsigned env = cx_fpenv_enter(ctx->flags.cpu_flush_denormals ? CX_FPENV_FTZ | CX_FPENV_DAZ : 0);
    cx_threadpool_hold(rt.pool, 1);
    st->entry(params, outs, arena, &rt);
    cx_threadpool_hold(rt.pool, 0);
    cx_fpenv_leave(env);
    if (rt.status != CXLA_OK) s = cx_error(ctx, rt.status, "%s", rt.errmsg[0] ? rt.errmsg : "execution failed");
    else { /* outs, read by the run, now lists the result's leaf literals for the hand-over */
      no = 0;
      if (leaf_ptrs(res, outs, &no, b->noutputs, 0)) take_donated(st, args, outs);
    }
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

static cxla_status cpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args,
                               cxla_literal **out) {
  return cpu_execute_on(state, ctx, NULL, nargs, args, out);
}

static int cpu_code(void *state, const unsigned char **bytes, size_t *n) {
  cpu_state *st = state;
  *bytes = st->code;
  *n = st->code_len;
  return st->code != NULL;
}

static const cx_module *cpu_compiled(void *state) { return ((cpu_state *)state)->m; }

static void cpu_footprint(void *state, cxla_footprint *out) {
  cpu_state *st = state;
  out->temp_bytes = (int64_t)temp_bytes(st);
  out->alias_bytes = cx_buffers_alias_bytes(&st->bufs);
  out->code_bytes = (int64_t)cx_jit_code_bytes(st->jit);
}

const cx_backend cx_backend_cpu = {.name = "cpu", .compile = cpu_compile, .execute = cpu_execute,
                                   .destroy = cpu_destroy, .execute_on = cpu_execute_on, .code = cpu_code,
                                   .footprint = cpu_footprint, .compiled = cpu_compiled};
