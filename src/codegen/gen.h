/* gen.h — the element generators (XLA's elemental emitter, in C): `value = gen(instr, index)`
 * for every instruction kind that can appear in a fused computation, composed from the
 * operands' generators, so a fusion becomes one loop body. Internal to src/codegen/.
 *
 * Values are LLVM registers of cx_cg_reg_type (pred i1, f16/bf16 as f32 holding a value of
 * that type: every op that could leave its type rounds back, so results equal the
 * interpreter's op-by-op rounding; c64/c128 as a struct of two f32/f64). Generators never return NULL: on an error they record it
 * in g->cg->status (sticky) and return undef, and the kernel emitter checks the status.
 *
 * Values are cached per (instruction, index) so that DAGs do not blow up exponentially. An
 * index is identified by its LLVM values (the same cx_idx passed down through elementwise
 * ops is the same key). A generator that opens a loop or a branch brackets it with
 * cx_gen_mark / cx_gen_restore: values made inside do not dominate the code after it. */
#ifndef CX_GEN_H
#define CX_GEN_H
#include "codegen/cg.h"

/* Most values one instruction yields (variadic reduce / reduce-window outputs). */
#define CX_GEN_MAX_VALS 64

/* A multi-index into an array shape: one i64 per dimension plus the row-major linear index.
 * Both forms are always present (the unused one is dead code LLVM deletes). */
typedef struct cx_idx {
  int rank;
  LLVMValueRef v[CXLA_MAX_RANK];
  LLVMValueRef lin;
} cx_idx;

/* Where a computation's parameters come from: a fused computation loads them from buffers,
 * an inlined scalar computation (reducer, map body, ...) takes register values. */
typedef struct cx_gen_binding {
  const cx_comp *comp;
  LLVMValueRef *ptrs;   /* per parameter number: buffer base pointer (fused computation) */
  LLVMValueRef *vals;   /* per parameter number: register value (scalar computation) */
  int n;
} cx_gen_binding;

typedef struct cx_gen_entry {
  const cx_instr *in;
  int rank;
  LLVMValueRef key[CXLA_MAX_RANK]; /* the index values (rank 0: none) */
  int nvals, at;                   /* values at pool[at .. at+nvals) */
} cx_gen_entry;

/* An instruction whose value is supplied from outside the generators, whatever the index:
 * a reduce's final accumulators in the epilogue of a kInput fusion (the fusion guarantees the
 * epilogue reads it at the output's linear index), or a GEMM result buffer read at the
 * linear index for a kOutput epilogue. */
typedef struct cx_gen_override {
  const cx_instr *in;
  LLVMValueRef ptr;                /* non-NULL: load element lin of this buffer */
  LLVMValueRef lin_off;            /* with ptr, non-NULL: load element lin - lin_off instead (a
                                      row-sized scratch buffer indexed from the row's start) */
  int nvals;
  LLVMValueRef vals[CX_GEN_MAX_VALS];
} cx_gen_override;

typedef struct cx_gen_mark_t {
  int nents, npool;
} cx_gen_mark_t;

typedef struct cx_gen {
  cx_cg *cg;
  LLVMValueRef fn;              /* function being emitted (allocas go to its entry block) */
  const char *kname;            /* kernel name (for globals) */
  cx_gen_entry *ents;
  int nents, capents;
  LLVMValueRef *pool;
  int npool, cappool;
  cx_gen_binding binds[16];
  int nbinds;
  cx_gen_override ovr[16];
  int novr;
  LLVMFastMathFlags fmf;        /* on float add/sub/mul: contract; + reassoc in reductions */
  const cx_instr *fast_div;     /* a divide whose operands the emitter has bounded for the
                                   code now emitted (reduce_emit.c, a softmax row): computed as a
                                   reciprocal multiply and one exact correction, still correctly
                                   rounded there */
  int nglobals;
} cx_gen;

void cx_gen_init(cx_gen *g, cx_cg *cg, LLVMValueRef fn, const char *kname);
void cx_gen_dispose(cx_gen *g);
cx_gen_mark_t cx_gen_mark(cx_gen *g);
void cx_gen_restore(cx_gen *g, cx_gen_mark_t m);
/* Bindings and overrides are stacks; pops return to the state before the matching push. */
int cx_gen_push_binding(cx_gen *g, const cx_gen_binding *b);
void cx_gen_pop_binding(cx_gen *g);
int cx_gen_push_override(cx_gen *g, const cx_gen_override *o);
void cx_gen_pop_override(cx_gen *g);

/* All values of `in` at idx (one per array leaf of its shape); returns the count. */
int cx_gen_elem(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out);
/* The value of an array-shaped instruction at idx. */
LLVMValueRef cx_gen1(cx_gen *g, const cx_instr *in, const cx_idx *idx);
/* Operand k of `in` at idx, where a rank-0 operand of a larger op is read at the empty
 * index (elementwise ops broadcast scalar operands, as the interpreter does). */
LLVMValueRef cx_gen_operand(cx_gen *g, const cx_instr *in, int k, const cx_idx *idx);
/* Inlines a computation whose parameters and result are scalars (or a tuple of scalars):
 * reducers, map bodies. Returns the number of results written to out. */
int cx_gen_scalar_comp(cx_gen *g, const cx_comp *c, int nargs, LLVMValueRef *args, LLVMValueRef *out);
/* Records an error (first one wins) and returns undef of the instruction's register type. */
LLVMValueRef cx_gen_fail(cx_gen *g, const cx_instr *in, const char *fmt, ...) CX_PRINTF(3, 4);

/* ---- indices ---- */
cx_idx cx_idx_scalar(cx_gen *g);
/* From per-dim values (lin computed) or from a linear index (dims computed) of shape s. */
cx_idx cx_idx_from_multi(cx_gen *g, const cx_shape *s, const LLVMValueRef *v);
cx_idx cx_idx_from_linear(cx_gen *g, const cx_shape *s, LLVMValueRef lin);
cx_idx cx_idx_both(const cx_shape *s, const LLVMValueRef *v, LLVMValueRef lin);

/* ---- IR helpers ---- */
LLVMValueRef cx_ir_i64(cx_gen *g, int64_t v);
/* Calls an overloaded LLVM intrinsic ("llvm.fabs") on the given overload types. */
LLVMValueRef cx_ir_intrinsic(cx_gen *g, const char *name, LLVMTypeRef *types, int ntypes,
                             LLVMValueRef *args, int nargs);
LLVMValueRef cx_ir_intr1(cx_gen *g, const char *name, LLVMValueRef x);  /* overloaded on x */
LLVMValueRef cx_ir_intr2(cx_gen *g, const char *name, LLVMValueRef x, LLVMValueRef y);
/* A call to the external function `name` taking and returning args[0]'s type (a math
 * function: the cpu's JIT resolves libm's from the process). */
LLVMValueRef cx_ir_call(cx_gen *g, const char *name, int nargs, LLVMValueRef *args);
/* Sets fast-math flags if v is an instruction that can carry them. */
LLVMValueRef cx_ir_fmf(LLVMValueRef v, LLVMFastMathFlags f);
LLVMValueRef cx_ir_smin(cx_gen *g, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cx_ir_smax(cx_gen *g, LLVMValueRef a, LLVMValueRef b);
/* clamp(v, lo, hi) on i64 (signed) */
LLVMValueRef cx_ir_clamp(cx_gen *g, LLVMValueRef v, int64_t lo, int64_t hi);
/* An alloca in the function's entry block (so mem2reg can promote it, and loops do not grow
 * the stack); count > 1 gives an array. */
LLVMValueRef cx_gen_alloca(cx_gen *g, LLVMTypeRef t, int64_t count);
/* An integer value of type t (possibly narrower/unsigned) as an i64 start index: signed types
 * sign-extend, unsigned zero-extend, and u64 values above INT64_MAX read as INT64_MAX (so
 * clamping sees them as too large, as the interpreter does). */
LLVMValueRef cx_ir_index_i64(cx_gen *g, cxla_type t, LLVMValueRef v);

/* ---- per-op hooks ----
 * Every op the emitter generates has one: gen.c's table of generators (cx_gen_elem dispatches
 * through it), or, for an elementwise op, a row of builders in one of the tables below (one
 * file each: the row and its builders live together). cx_emit_has_generator says which ops
 * have one. */

/* A generator writing every value of `in` at idx (tuples, variadic reduce-window). */
typedef int (*cx_gen_fn)(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out);
/* A generator of an array-shaped op's one value. */
typedef LLVMValueRef (*cx_gen1_fn)(cx_gen *g, const cx_instr *in, const cx_idx *idx);

/* An elementwise op's builder: the result register from the operand registers a[] (in->nops
 * of them); t is the first operand's element type. */
typedef LLVMValueRef (*cx_elem_fn)(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a);
/* An elementwise op's builders by the first operand's type (f16/bf16 in f32 registers, f32,
 * f64 / integers / pred / c64, c128: codegen/complex.h); NULL: the op is not defined there. */
typedef struct cx_elem_hooks {
  cx_elem_fn f, i, pred, c;
} cx_elem_hooks;
extern const cx_elem_hooks cx_elem_arith[CX_OP_COUNT];   /* elemental.c: arithmetic, logic, compare, select */
extern const cx_elem_hooks cx_elem_math[CX_OP_COUNT];    /* elemental_math.c: transcendental, power */
extern const cx_elem_hooks cx_elem_convert[CX_OP_COUNT]; /* elemental_convert.c: convert, reduce-precision */
/* The row of op in whichever table has one, or NULL. */
const cx_elem_hooks *cx_elem_hooks_of(cx_op op);
/* The builder of row h for operands of type t, or NULL. */
cx_elem_fn cx_elem_pick(const cx_elem_hooks *h, cxla_type t);
/* 1 if in's value at a linear index reads each operand (tuple elements for a tuple) at that
 * same linear index only, so no multi-index is needed: elementwise ops, reshapes, bitcasts,
 * same-width bitcast-converts, the data ops, and a dot read from its GEMM result. */
int cx_gen_reads_same_index(const cx_instr *in);
/* Any elementwise op on operand register values a[] (types from in->ops). */
LLVMValueRef cx_gen_elementwise(cx_gen *g, const cx_instr *in, LLVMValueRef *a);

/* Op pieces the other generators reuse. */
LLVMValueRef cx_gen_convert(cx_gen *g, cxla_type from, cxla_type to, LLVMValueRef v);
LLVMValueRef cx_gen_round(cx_gen *g, cxla_type t, LLVMValueRef v);
LLVMValueRef cx_gen_to_bits(cx_gen *g, cxla_type t, LLVMValueRef v);   /* -> iN of the memory width */
LLVMValueRef cx_gen_from_bits(cx_gen *g, cxla_type t, LLVMValueRef bits);
LLVMValueRef cx_gen_reduce_precision(cx_gen *g, cxla_type t, LLVMValueRef v, int ebits, int mbits);
LLVMValueRef cx_gen_compare(cx_gen *g, cxla_compare_dir dir, cx_cmp_type ct, cxla_type t,
                            LLVMValueRef a, LLVMValueRef b);
/* Math op `op` on float registers args[0..nargs) of element type t, lowered as the target
 * says (elemental_math.c). Not rounded to f16/bf16. t = c128: f64 registers holding parts of
 * complex values, computed with the functions the interpreter's complex formulas use. */
LLVMValueRef cx_gen_math(cx_gen *g, cx_op op, cxla_type t, int nargs, LLVMValueRef *args);

/* The generators of gen.c's table, by file. Re-indexing (elemental_shape.c, elemental_index.c,
 * elemental_convert.c): */
LLVMValueRef cx_gen_iota(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_reshape(cx_gen *g, const cx_instr *in, const cx_idx *idx);  /* and bitcast */
LLVMValueRef cx_gen_broadcast(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_transpose(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_reverse(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_pad(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_concatenate(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_gather(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_dynamic_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_dynamic_update_slice(cx_gen *g, const cx_instr *in, const cx_idx *idx);
/* A dynamic-update-slice's start index in dimension d, clamped as the op clamps it (the update
 * stays inside the operand): the window an in-place update writes (kernel.c). */
LLVMValueRef cx_gen_dus_start(cx_gen *g, const cx_instr *dus, int d);
LLVMValueRef cx_gen_bitcast_convert(cx_gen *g, const cx_instr *in, const cx_idx *idx);
/* Ops with inner loops (elemental_window.c, elemental_conv.c). */
int cx_gen_reduce_window(cx_gen *g, const cx_instr *in, const cx_idx *idx, LLVMValueRef *out);
LLVMValueRef cx_gen_convolution(cx_gen *g, const cx_instr *in, const cx_idx *idx);
LLVMValueRef cx_gen_map(cx_gen *g, const cx_instr *in, const cx_idx *idx);
/* A select-and-scatter fused into its consumer, its windows disjoint (select_scatter_emit.c). */
LLVMValueRef cx_gen_select_and_scatter(cx_gen *g, const cx_instr *in, const cx_idx *idx);
/* Operand coordinate of window tap j (i64) for output coordinate o along one dimension of
 * in_size > 0 elements, clamped into range; *valid: not padding or a base-dilation hole. w must
 * have stride and dilations >= 1. */
LLVMValueRef cx_gen_window_tap(cx_gen *g, const cx_window_dim *w, int64_t in_size, LLVMValueRef o,
                               LLVMValueRef j, LLVMValueRef *valid);

/* One of n alternatives, chosen by `which` (i64 in [0, n)). f(k) generates alternative k and
 * must be safe (in bounds) whichever k is chosen when `branch` is 0: then every alternative
 * is computed and selected (straight-line code that vectorises); with `branch` only the
 * chosen one runs (a switch; worth it when alternatives are expensive). */
typedef LLVMValueRef (*cx_gen_alt_fn)(cx_gen *g, const cx_instr *in, const cx_idx *idx, int k, void *ctx);
LLVMValueRef cx_gen_choose(cx_gen *g, const cx_instr *in, const cx_idx *idx, int n,
                           LLVMValueRef which, int branch, cx_gen_alt_fn f, void *ctx);

/* 1 if the op chooses between operands whose generators contain an EXPENSIVE op (then a
 * branch beats computing every candidate and selecting). */
int cx_gen_subtree_expensive(const cx_instr *in);

#endif
