/* ir.h — the module representation every stage shares: module -> computations ->
 * instructions. Everything a module owns lives in its arena, so destroying a module (also a
 * half-parsed one) is one call. Instructions keep operands in order and their computation
 * keeps them in a topological order (operands before users). */
#ifndef CX_IR_H
#define CX_IR_H
#include <stdint.h>
#include "ir/ops.h"
#include "ir/shape.h"
#include "ir/literal.h"

typedef struct cx_instr cx_instr;
typedef struct cxla_computation cx_comp;
typedef struct cxla_module cx_module;

/* A list of integers (attribute values). */
typedef struct cx_ints {
  int n;
  int64_t *v;
} cx_ints;

/* Where an instruction or computation came from in HLO text (line 0: built by the API). */
typedef struct cx_loc {
  int line, col;
} cx_loc;

typedef struct cx_window_dim {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
  int reversal;
} cx_window_dim;

typedef struct cx_window {
  int rank; /* 0: no window attribute */
  cx_window_dim *d;
} cx_window;

/* Whether no two windows of w (over an operand of this rank) share an element: every dimension
 * has a stride at least its size, no dilation, no reversal and no negative low padding, so an
 * element lies in at most one window, found by division (a 2x2 max-pool with stride 2). */
int cx_window_disjoint(const cx_window *w, int rank);
/* Elements of a window (the product of its sizes), or -1 past INT32_MAX. */
int64_t cx_window_elems(const cx_window *w);
/* The most window elements a window op fused into its consumer walks per element, unrolled:
 * pooling windows are small. */
#define CX_FUSED_WINDOW_TAPS 64
/* Whether a window op may be fused into its consumer and walked per element: disjoint windows
 * of 1 to CX_FUSED_WINDOW_TAPS elements (passes/fusion.c fuses no other; codegen refuses it). */
int cx_window_fusible(const cx_window *w, int rank);

/* dim_labels, e.g. b01f_01io->b01f: which operand dimension is batch/feature/spatial. */
typedef struct cx_conv_dims {
  int nspatial;
  int64_t in_batch, in_feature, in_spatial[CXLA_MAX_RANK];
  int64_t k_in, k_out, k_spatial[CXLA_MAX_RANK];
  int64_t out_batch, out_feature, out_spatial[CXLA_MAX_RANK];
} cx_conv_dims;

typedef struct cx_dot_dims {
  cx_ints lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  cx_ints lhs_ragged, rhs_group; /* ragged-dot only */
} cx_dot_dims;

typedef struct cx_gather_dims {
  cx_ints offset_dims, collapsed_slice_dims, start_index_map;
  cx_ints operand_batching_dims, start_indices_batching_dims, slice_sizes;
  int64_t index_vector_dim;
  int indices_are_sorted;
} cx_gather_dims;

typedef struct cx_scatter_dims {
  cx_ints update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  cx_ints input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim;
  int indices_are_sorted, unique_indices;
} cx_scatter_dims;

typedef enum cx_cmp_type {
  CX_CMP_DEFAULT = 0, /* FLOAT for floats, SIGNED/UNSIGNED for integers */
  CX_CMP_FLOAT, CX_CMP_TOTALORDER, CX_CMP_SIGNED, CX_CMP_UNSIGNED
} cx_cmp_type;

/* triangular-solve's transpose_a= (XLA's TriangularSolveOptions::Transpose; INVALID, proto's
 * default, when the text leaves it out: the verifier refuses it as XLA does). */
typedef enum cx_transpose {
  CX_TRANSPOSE_INVALID = 0, CX_TRANSPOSE_NO, CX_TRANSPOSE_YES, CX_TRANSPOSE_ADJOINT
} cx_transpose;

/* fft's fft_type= (XLA's FftType): complex forward and inverse (normalized by 1/N) transforms,
 * real to half-spectrum and back (IRFFT normalized too). */
typedef enum cx_fft_type { CX_FFT_FFT = 0, CX_FFT_IFFT, CX_FFT_RFFT, CX_FFT_IRFFT } cx_fft_type;

/* rng-bit-generator's algorithm= (XLA's RandomAlgorithm; DEFAULT is Philox, as on XLA:CPU). */
typedef enum cx_rng_algorithm { CX_RNG_DEFAULT = 0, CX_RNG_THREE_FRY, CX_RNG_PHILOX } cx_rng_algorithm;
/* rng's distribution= (XLA's RandomDistribution; the text must say which; INVALID is refused). */
typedef enum cx_rng_distribution { CX_RNG_INVALID = 0, CX_RNG_UNIFORM, CX_RNG_NORMAL } cx_rng_distribution;

/* The module-level debug tables, in the order XLA prints them. */
enum { CX_FRAME_FILES, CX_FRAME_FUNCTIONS, CX_FRAME_LOCATIONS, CX_FRAME_STACKS, CX_FRAME_TABLES };
extern const char *const cx_frame_table_names[CX_FRAME_TABLES];

/* A fusion's kind= as XLA writes it (kLoop, kInput, kOutput, kCustom); NONE on every other
 * instruction. The names are cx_fusion_kind_names[kind]; the parser refuses any other word,
 * as XLA's does. */
typedef enum cx_fusion_kind {
  CX_FUSION_NONE = 0, CX_FUSION_LOOP, CX_FUSION_INPUT, CX_FUSION_OUTPUT, CX_FUSION_CUSTOM, CX_FUSION_KINDS
} cx_fusion_kind;
extern const char *const cx_fusion_kind_names[CX_FUSION_KINDS];

/* replica_groups= and source_target_pairs= of the collectives (docs/collectives.md): n groups
 * of ids, group g being ids[start[g] .. start[g + 1]) in the order written (a pair: source,
 * target). In cx_attrs a NULL pointer is the empty list, {}: every device in one group. The
 * iota form [G,S]<=[dims]T(perm) is expanded into ids and kept as written for the printer
 * (ndims 0: written as a list). */
typedef struct cx_groups {
  int n;
  int64_t *start;           /* n + 1 offsets into ids */
  int64_t *ids;
  int ndims;                /* the iota form's device array and its transpose */
  int64_t dims[CXLA_MAX_RANK];
  int perm[CXLA_MAX_RANK];
} cx_groups;

/* An attribute the IR does not model; kept verbatim so the printer can write it back. */
typedef struct cx_raw_attr {
  const char *key, *value;
} cx_raw_attr;

/* Attributes of every op in one struct; each op uses the fields its HLO text has. Every field
 * is described in ir/attrs.def, which clone, CSE, the printer and the parser follow. */
typedef struct cx_attrs {
  cx_fft_type fft_type;     /* fft */
  cx_ints fft_length;       /* fft: the sizes of the innermost dims it transforms (1 to 3) */
  cx_ints dims;             /* dimensions= (broadcast, transpose, reverse, reduce, map, sort,
                               concatenate); dynamic_slice_sizes= for dynamic-slice */
  int64_t index;            /* parameter number, get-tuple-element index, iota_dimension,
                               batch-norm feature_index */
  cxla_compare_dir dir;     /* compare */
  cx_cmp_type cmp_type;     /* compare type= (DEFAULT when absent) */
  cx_ints slice_start, slice_limit, slice_stride;     /* slice= */
  cx_ints pad_lo, pad_hi, pad_interior;               /* padding= */
  cx_dot_dims dot;
  cx_window window;         /* convolution, reduce-window, select-and-scatter */
  cx_conv_dims *conv;       /* dim_labels= (module arena; NULL when absent): most instructions
                               have none, and inline it would be a third of every instruction */
  int64_t feature_group_count, batch_group_count;     /* 1 when absent */
  cx_gather_dims gather;
  cx_scatter_dims scatter;
  int is_stable;            /* sort */
  cxla_literal *literal;    /* constant (owned by the module) */
  int exponent_bits, mantissa_bits; /* reduce-precision */
  cx_fusion_kind fusion_kind; /* fusion kind= */
  const char *custom_call_target;
  const char *backend_config; /* custom-call: the value as written ("{uplo = 76 : ui8}") */
  int lower, left_side, unit_diagonal; /* cholesky, triangular-solve */
  cx_transpose transpose_a; /* triangular-solve */
  int32_t epsilon_bits;     /* batch-norm epsilon=: an f32's bits (POD fields are integers) */
  cx_rng_algorithm rng_algorithm; /* rng-bit-generator */
  cx_rng_distribution rng_distribution; /* rng */
  int largest;              /* topk largest= (1 when absent, as in XLA; its k= is `index`) */
  int64_t num_carries;      /* scan: the last num_carries operands are the carries' inits */
  int is_reverse;           /* scan: last to first (XLA's is_associative= hint is kept raw) */
  cx_groups *replica_groups; /* collectives (module arena; NULL: {}) */
  cx_groups *source_target_pairs; /* collective-permute: (source, target) pairs */
  int64_t channel_id;       /* collectives: -1 when absent (channel_id=0 is a channel, as in XLA) */
  int use_global_device_ids; /* all-reduce, all-gather, reduce-scatter: ids are device ids */
  int is_host_transfer;     /* send, recv and their -done: with the host, not another device */
  int nraw;                 /* everything else: metadata, sharding, backend_config, ... */
  cx_raw_attr *raw;
} cx_attrs;

struct cx_instr {
  cx_op op;
  int id;                   /* unique within the module */
  const char *name;
  cx_shape shape;
  int nops;
  cx_instr **ops;
  int ncalled;              /* to_apply; while: condition, body; conditional: branches
                               (pred form: true, false); select-and-scatter: select, scatter;
                               fusion/call: the callee; sort: comparator */
  cx_comp **called;
  cx_attrs a;
  cx_loc loc;
  cx_comp *parent;
  int nusers;               /* filled by cx_comp_compute_users */
  cx_instr **users;
  void *aux;                /* scratch for the pass or backend that runs now */
  /* A fusion's plan for buffer assignment and the emitter (ir/fusion_plan.h), made by
   * passes/fusion_plan.c; never cloned, printed or compared: it is derived from the fusion. */
  const struct cx_fusion_plan *plan;
};

struct cxla_computation {
  const char *name;
  cx_module *module;
  int ninstrs;
  int64_t cap;
  cx_instr **instrs;        /* topological order */
  cx_instr *root;
  int nparams;
  cx_instr **params;        /* by parameter number (filled by cx_comp_index_params) */
  int is_entry;
  cx_loc loc;
  void *aux;
};

struct cxla_module {
  cxla_context *ctx;
  cx_arena arena;
  const char *name;
  const char *filename;     /* for error messages; "<builder>" when built by the API */
  int ncomps;
  int64_t cap;
  cx_comp **comps;          /* callees before callers */
  cx_comp *entry;
  int next_id;
  int nraw;                 /* header attributes (entry_computation_layout, ...) */
  cx_raw_attr *raw;
  /* The debug tables newer dumps carry (FileNames, FunctionNames, FileLocations,
   * StackFrames), entry by entry: key the id, value its text ("x.py" or {...}); metadata's
   * stack_frame_id points into them (ir/metadata.h). */
  int nframes[CX_FRAME_TABLES];
  cx_raw_attr *frames[CX_FRAME_TABLES];
  int nlits;
  int64_t litcap;
  cxla_literal **lits;      /* constants' literals, freed with the module */
  double parse_ms;          /* wall time cxla_module_parse took (compile stats); 0 if built */
};

/* ---- construction (all return NULL / 0 on OOM; the module's ctx then holds the error) ---- */
cx_module *cx_module_new(cxla_context *ctx, const char *name);
void cx_module_free(cx_module *m);
cx_comp *cx_comp_new(cx_module *m, const char *name);
/* Appends a finished computation (callees must have been added first). */
int cx_module_add_comp(cx_module *m, cx_comp *c);
cx_comp *cx_module_find_comp(cx_module *m, const char *name);
/* Creates an instruction at the end of c. The shape is deep-copied into the arena. */
cx_instr *cx_instr_new(cx_comp *c, cx_op op, const cx_shape *shape, int nops, cx_instr *const *ops);
int cx_instr_set_called(cx_instr *in, int n, cx_comp *const *called);
int cx_instr_set_name(cx_instr *in, const char *name);
/* A fresh unique name from a prefix ("add.12"). */
const char *cx_module_unique_name(cx_module *m, const char *prefix);
int cx_ints_set(cx_module *m, cx_ints *dst, int n, const int64_t *v);
/* Whether v is one of s's values. */
int cx_ints_has(const cx_ints *s, int64_t v);
int cx_attr_add_raw(cx_module *m, int *n, cx_raw_attr **raw, const char *key, const char *value);
/* Takes ownership of lit (freed with the module, also when this fails). */
int cx_module_own_literal(cx_module *m, cxla_literal *lit);
/* Fills c->params/nparams from the parameter instructions (number = a.index). Returns 0 if
 * numbers are not 0..n-1 exactly once (the verifier reports that case). */
int cx_comp_index_params(cx_comp *c);
/* A combiner's root when it is one binary op of its two parameters, in either order (add(p0, p1)
 * or add(p1, p0)); NULL for anything else (c NULL included). */
const cx_instr *cx_comp_binary_of_params(const cx_comp *c);

/* ---- queries and edits used by passes ---- */
/* Replaces every use of old_ by new_ (operands and root). */
void cx_comp_replace_uses(cx_comp *c, cx_instr *old_, cx_instr *new_);
/* Drops instructions not reachable from the root (parameters are kept). */
void cx_comp_remove_dead(cx_comp *c);
/* Re-sorts instrs topologically (operands first), keeping the existing order where it can.
 * 1; 0 (order unchanged) if an operand is not in c; -1 on OOM (error set). */
int cx_comp_sort(cx_comp *c);
/* The computation's position in m->comps, or -1. */
int cx_module_comp_index(cx_module *m, cx_comp *c);

/* ---- errors with source locations: "FILE:LINE:COL: error: ..." ---- */
cxla_status cx_error_at(cx_module *m, cx_loc loc, cxla_status code, const char *fmt, ...)
    CX_PRINTF(4, 5);

#endif
