/* cg.h — the target-independent LLVM emission context shared by the CPU backend (and later
 * the GPU backend): types, typed loads/stores, and kernel emission for fusions. */
#ifndef CX_CG_H
#define CX_CG_H
#include <llvm-c/Core.h>
#include "ir/ir.h"
#include "codegen/target.h"

typedef struct cx_cg {
  cxla_context *ctx;
  cx_module *m;              /* the (fused, scheduled) module being compiled */
  LLVMContextRef llctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64;
  LLVMTypeRef t_ptr;         /* a pointer to global memory (the target's address space) */
  const cx_target *target;   /* the machine the kernels run on (must outlive this) */
  cxla_status status;        /* first error (sticky); the context holds the message */
  int nkernels;              /* kernels emitted so far (unique names) */
  int elems_per_thread;      /* GPU targets: each thread of the next kernels computes this many
                                consecutive elements (0 or 1: one); the caller makes sure it
                                divides their iteration space */
} cx_cg;

/* Sets up types and a builder for an existing LLVM context/module, for target t. */
void cx_cg_init(cx_cg *g, cxla_context *ctx, cx_module *m, LLVMContextRef llctx, LLVMModuleRef mod,
                const cx_target *t);
void cx_cg_dispose(cx_cg *g);
/* Records the first error (returns it). */
cxla_status cx_cg_fail(cx_cg *g, cxla_status code, const char *fmt, ...) CX_PRINTF(3, 4);

/* Register type of an element type: pred i1, integers iN (s4/u4 i4), f16/bf16/f8/f4 computed as
 * f32, f32, f64, c64/c128 a struct {re, im} of f32/f64. */
LLVMTypeRef cx_cg_reg_type(cx_cg *g, cxla_type t);
/* Memory type: pred i8, f16/bf16 i16, s4/u4/f8/f4 i8, others as registers. */
LLVMTypeRef cx_cg_mem_type(cx_cg *g, cxla_type t);
/* Loads element `index` (i64) of a typed array at `base` and converts it to the register type. */
LLVMValueRef cx_cg_load(cx_cg *g, cxla_type t, LLVMValueRef base, LLVMValueRef index);
/* Converts v from the register type and stores it as element `index`. */
void cx_cg_store(cx_cg *g, cxla_type t, LLVMValueRef base, LLVMValueRef index, LLVMValueRef v);
LLVMValueRef cx_cg_i64(cx_cg *g, int64_t v);
/* Asks LLVM for 512-bit vectors in fn (the function being built, for NULL) where the target has
 * them: LLVM prefers 256 on AVX-512 CPUs, which loops bound by their arithmetic, or too short
 * for 256-bit vectors interleaved, pay for. No-op on GPUs and narrower targets. */
void cx_cg_prefer_wide_vectors(cx_cg *g, LLVMValueRef fn);
/* Whether fn asked for them. */
int cx_cg_prefers_wide_vectors(LLVMValueRef fn);
/* Register value <-> memory representation (pred i8 0/1, f16/bf16 16-bit patterns rounded to
 * nearest even); other types are unchanged. */
LLVMValueRef cx_cg_to_mem(cx_cg *g, cxla_type t, LLVMValueRef v);
LLVMValueRef cx_cg_from_mem(cx_cg *g, cxla_type t, LLVMValueRef m);
/* Rounds an f32 register to the precision of t (f16/bf16/f8/f4; identity for other types). */
LLVMValueRef cx_cg_round(cx_cg *g, cxla_type t, LLVMValueRef v);

/* One emitted kernel: its entry function called as the target's kernel ABI says (cx_target_cpu:
 * void fn(i8 **args, i64 begin, i64 end)), args = outputs then operands. */
typedef struct cx_kernel {
  LLVMValueRef fn;
  char name[64];             /* LLVM symbol */
  int64_t total;             /* size of the [begin, end) iteration space */
  int64_t grain;             /* smallest worthwhile chunk of it for one thread */
  int nout, nin;             /* pointers in args: nout outputs, then nin operands */
  /* A column reduction split over row blocks (reduce_emit.c) when parts > 0: args has one more
   * pointer, to `scratch` bytes of memory the caller provides; iterations [0, parts) (chunks
   * of at least parts_grain) fill it with partial results, and only once all of them have run,
   * iterations [parts, parts + total) compute the outputs from them. */
  int64_t parts, parts_grain, scratch;
} cx_kernel;

/* Emits the kernel for a fusion instruction (kLoop or kInput). args = one output pointer per
 * array leaf of the fusion's result (DFS order), then the fusion's operands in order. The
 * kernel is correct for any [begin, end) within [0, total) (with parts: as cx_kernel says).
 * Every pointer is assumed not to alias any other (noalias). */
cxla_status cx_emit_kernel(cx_cg *g, cx_instr *fusion, cx_kernel *out);
/* Which kernel arguments share memory (an in-place fusion): bit i of mask (args index, < 64)
 * marks args[i] as sharing its buffer with another argument, and to[i] is the lowest index of
 * an argument with the same buffer (for an operand updated in place: the output it becomes). */
typedef struct cx_kalias {
  uint64_t mask;
  signed char to[64];
} cx_kalias;
/* The pairs from each argument's buffer slot (outputs first): only pairs with an output count,
 * operands that share a buffer with each other are only read. */
void cx_kalias_of_slots(cx_kalias *a, const int *slots, int nout, int n);
/* The same where some arguments share memory (alias; NULL: none). An operand marked so must be
 * read only at the output's own index (checked; CXLA_ERR_INTERNAL otherwise). When each
 * marked operand pairs with one output and outputs share with no other output, marked operands
 * are read through their output's pointer, so the loop vectorises without overlap checks (an
 * optimizer's update writing parameter, moments and all in place included). */
cxla_status cx_emit_kernel_ex(cx_cg *g, cx_instr *fusion, const cx_kalias *alias, cx_kernel *out);
/* The elementwise epilogue of a kOutput fusion, run after the GEMM computed its dot: args =
 * [outputs..., gemm_result, fusion operands...]; the dot instruction reads its element from
 * gemm_result at the output's index. Output 0 may be gemm_result itself (in place). total =
 * the output's element count. */
cxla_status cx_emit_epilogue(cx_cg *g, cx_instr *fusion, cx_kernel *out);
/* Instructions that are kernels of their own (not fusions), for targets without the cpu's
 * run-time routines (the gpu backend). Each kernel takes the instruction's result leaves,
 * then its operands' (which must not share memory with them), and `ok` says whether it can
 * (`why`: a static string when not):
 *   sort               a thread per element placed at its stable rank (sort_emit.c)
 *   topk, "TopK"       the same with XLA's TOTALORDER keys, ranks below k (topk_emit.c)
 *   scatter            over the updates; the results must already hold copies of the
 *                      operands (scatter_emit.c)
 *   select-and-scatter a thread per result element gathering its windows (select_scatter_emit.c)
 *   rng-bit-generator  a thread per Philox/Threefry invocation, bit-exact with the cpu
 *                      (rng_bits_emit.c) */
typedef struct cx_instr_kernel {
  int (*ok)(const cx_instr *in, const char **why);
  cxla_status (*emit)(cx_cg *g, cx_instr *in, cx_kernel *out);
} cx_instr_kernel;
/* The kernel of `in`, or NULL when it has none (instr_kernels.c). */
const cx_instr_kernel *cx_emit_instr_kernel(const cx_instr *in);
/* A sort's row too long for one kernel (n^2 comparisons a row) runs as passes, each a kernel
 * of sort's arguments (the caller gives each pass its own destination and source): rank
 * placement within tiles of `tile` elements, then merges of sorted runs of `width` into runs
 * of 2 * width (a binary search a thread); a width at least the row's is a copy. */
cxla_status cx_emit_sort_tiles(cx_cg *g, cx_instr *sort, int64_t tile, cx_kernel *out);
cxla_status cx_emit_sort_merge(cx_cg *g, cx_instr *sort, int64_t width, cx_kernel *out);
/* A top-k's row too long for one kernel (n^2 comparisons a row) runs as passes over runs of
 * candidate indices (int32, scratch memory the caller gives): per row, ntiles runs of cap0
 * entries from rank placement within tiles (args: runs, x), then merges of pairs of runs
 * (m_in runs of cap_in entries into (m_in + 1) / 2 runs of cap_out; args: runs out, x, runs
 * in), the last (one run left, cap_out k) writing the values and indices (args: values,
 * indices, x, runs in). plan: 0 when in is no top-k the emitter takes. */
typedef struct cx_topk_plan {
  int64_t rows, n, k, tile, ntiles, cap0;
} cx_topk_plan;
int cx_emit_topk_plan(const cx_instr *topk, int64_t tile, cx_topk_plan *p);
cxla_status cx_emit_topk_tiles(cx_cg *g, cx_instr *topk, const cx_topk_plan *p, cx_kernel *out);
cxla_status cx_emit_topk_merge(cx_cg *g, cx_instr *topk, const cx_topk_plan *p, int64_t m_in, int64_t cap_in,
                               int64_t cap_out, cx_kernel *out);
/* rng (rng_uniform, rng_normal) as a kernel, bit-exact with interp/rng.c's values (rng_emit.c):
 * args are the result, a and b, then, when `counted`, the instruction's run counter (a u64 in
 * device memory: how often it ran before in this execution; the caller zeroes it when an
 * execution starts and runs cx_emit_rng_count_kernel after each run); without one the run is
 * 0 (an instruction that runs once an execution). A thread per Philox block. */
int cx_emit_rng_ok(const cx_instr *rng, const char **why);
cxla_status cx_emit_rng_kernel(cx_cg *g, cx_instr *rng, int counted, cx_kernel *out);
/* One thread adding 1 to the run counter (its only argument, an output). */
cxla_status cx_emit_rng_count_kernel(cx_cg *g, cx_instr *rng, cx_kernel *out);
/* True if the emitter can generate code for every instruction of this fusion (for a kOutput
 * fusion: its epilogue); otherwise the sequencer runs it on the interpreter. `why` (a
 * thread-local string, valid until the next call) names the first unsupported instruction. */
int cx_emit_supported(cx_instr *fusion, const char **why);
/* Whether the emitter generates code for op at all: ops.def says it runs compiled (`runs` EMIT)
 * and the emitter has a generator for it (cx_emit_instr_ok refuses every other op first); an
 * instruction of such an op can still be refused for its types, layout or shape. */
int cx_emit_handles_op(cx_op op);
/* Whether the element generators have a hook for op (gen.c's table, or an elementwise builder
 * table of elemental*.c). Reduce and dot have one that refuses: their values come from the
 * kInput and kOutput kernel emitters. */
int cx_emit_has_generator(cx_op op);
/* A scalar called computation (parameters and results scalars: a sort comparator, a scatter
 * combiner) as a function `void f(i8 **p)` of g's module: p holds the addresses of the result
 * elements, then of the parameters' (memory form, pred one byte). Runtime routines call it
 * through a pointer. CXLA_ERR_UNSUPPORTED with `why` set when the emitter cannot compile it
 * (nothing recorded in g then). */
cxla_status cx_emit_scalar_fn(cx_cg *g, const cx_comp *c, LLVMValueRef *fn, const char **why);
/* Whether the emitter compiles every instruction of a scalar computation. */
int cx_emit_scalar_comp_ok(const cx_comp *c, const char **why);

#endif
