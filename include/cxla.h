/*
 * cxla.h — the one public header of cxla, a just-in-time compiler for linear algebra.
 *
 * Conventions
 *  - Every fallible call returns a cxla_status (CXLA_OK is 0) or a handle that may be NULL; the
 *    context keeps the last error message: cxla_context_errmsg(ctx).
 *  - Objects are opaque; *_create / *_destroy pair up. Destroying NULL is a no-op.
 *  - Builder calls return cxla_op handles so expressions chain. The first error in a builder
 *    sticks: later calls return an invalid op ({0}) and cxla_builder_finish reports the error.
 *  - Literal data is always dense in row-major (C) order of the logical shape; layouts only
 *    affect how HLO text is printed.
 *  - Thread safety: a context, its modules and builders are used from one thread at a time;
 *    a compiled executable may be run from many threads at once.
 */
#ifndef CXLA_H
#define CXLA_H

#include <stddef.h>
#include <stdint.h>

/* ---- version ---------------------------------------------------------------------------------
 * The one place the version is written: the Makefile (libcxla.so.MAJOR.MINOR.PATCH, soname
 * libcxla.so.MAJOR, cxla.pc), the CLI and the Python package read it from these lines. MAJOR
 * changes when a program built against an older header could break. */
#define CXLA_VERSION_MAJOR 0
#define CXLA_VERSION_MINOR 4
#define CXLA_VERSION_PATCH 0

/* Only the calls declared here are exported from libcxla.so; the library is compiled with
 * -fvisibility=hidden. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library actually loaded, which may be newer than the header a
 * program was built with (same MAJOR). */
const char *cxla_version(void);

/* ---- status ------------------------------------------------------------------------------- */
typedef enum cxla_status {
  CXLA_OK = 0,
  CXLA_ERR_INVALID_ARGUMENT, /* a bad argument to an API call or a bad input value */
  CXLA_ERR_PARSE,            /* malformed HLO text (message starts with FILE:LINE:COL) */
  CXLA_ERR_VERIFY,           /* a module that parses but is ill-formed (shapes, names, attrs) */
  CXLA_ERR_UNSUPPORTED,      /* valid, but not implemented by the chosen backend */
  CXLA_ERR_OUT_OF_MEMORY,
  CXLA_ERR_IO,               /* file system or file format errors (.npy, .hlo) */
  CXLA_ERR_DEVICE,           /* a device is missing or failed */
  CXLA_ERR_COMPILE,          /* code generation failed */
  CXLA_ERR_RUNTIME,          /* execution failed (e.g. a loop-iteration limit) */
  CXLA_ERR_INTERNAL          /* a bug in cxla: please report */
} cxla_status;

/* Static text for a status code ("ok", "parse error", ...). */
const char *cxla_status_str(cxla_status s);

/* ---- element types and shapes ------------------------------------------------------------- */
typedef enum cxla_type {
  CXLA_INVALID = 0,
  CXLA_PRED,
  CXLA_S8, CXLA_S16, CXLA_S32, CXLA_S64,
  CXLA_U8, CXLA_U16, CXLA_U32, CXLA_U64,
  CXLA_F16, CXLA_BF16, CXLA_F32, CXLA_F64,
  CXLA_TUPLE,
  CXLA_TOKEN,
  /* complex numbers: the real part, then the imaginary part, as f32 (c64) or f64 (c128), like
   * C's float complex / double complex and numpy's complex64 / complex128 */
  CXLA_C64, CXLA_C128,
  /* 4-bit integers, one per byte (the low four bits; XLA's unpacked s4/u4, ml_dtypes' int4 and
   * uint4), and the 8- and 4-bit floats of XLA and ml_dtypes, one per byte: f8e4m3fn (no
   * infinities, NaN S.1111.111), f8e5m2 (IEEE-like), f8e4m3fnuz, f8e5m2fnuz and f8e4m3b11fnuz (no
   * infinities, no -0, NaN 0x80), f8e4m3 and f8e3m4 (IEEE-like), f4e2m1fn (no infinities, no
   * NaN). Arithmetic on them is carried out in f32 (docs/numerics.md) */
  CXLA_S4, CXLA_U4,
  CXLA_F8E4M3FN, CXLA_F8E5M2, CXLA_F8E4M3FNUZ, CXLA_F8E5M2FNUZ, CXLA_F8E4M3B11FNUZ, CXLA_F8E4M3, CXLA_F8E3M4,
  CXLA_F4E2M1FN,
  /* 2-bit integers, one per byte (the low two bits; ml_dtypes' int2 and uint2), and f8e8m0fnu,
   * the OCP microscaling scale: a power of two 2^(code - 127), no sign, no zero, NaN 0xff */
  CXLA_S2, CXLA_U2, CXLA_F8E8M0FNU
} cxla_type;

#define CXLA_MAX_RANK 16

/* Bytes per element (0 for tuple/token/invalid); HLO text name ("f32") or NULL. */
size_t cxla_type_size(cxla_type t);
const char *cxla_type_name(cxla_type t);

/* A caller-owned shape description: an array shape (type, rank, dims) or a tuple
 * (type == CXLA_TUPLE, ntuple elements in `elems`). Functions that take one copy it. */
typedef struct cxla_shape {
  cxla_type type;
  int rank;
  const int64_t *dims;
  int ntuple;
  const struct cxla_shape *elems;
} cxla_shape;

/* ---- context -------------------------------------------------------------------------------- */
typedef struct cxla_context cxla_context;

/* Creates a context and reads CXLA_FLAGS from the environment (docs/flags.md lists every flag). If only
 * CXLA_FLAGS is bad, *out is still set (read the message, then destroy it) and an error is
 * returned; on OOM *out is NULL. */
cxla_status cxla_context_create(cxla_context **out);
void cxla_context_destroy(cxla_context *ctx);
/* The last error message of this context ("" if none). The pointer stays valid in the
 * calling thread until its next call into this context. */
const char *cxla_context_errmsg(cxla_context *ctx);
/* What the context is doing now, for a watchdog on another thread: the one call that may run
 * while a compile or an execute of the same context is in progress. buf gets "idle",
 * "compiling <module>: <phase>" or "running <kernel or instruction> on <backend>" (backend
 * "interp" is the reference interpreter, e.g. under --check); *loop_iterations (if not
 * NULL) the while-loop iterations this context has run so far, on every thread. A loop whose
 * count keeps growing is looping; a count that stands still with a kernel named is a slow
 * kernel. */
void cxla_context_activity(cxla_context *ctx, char *buf, size_t n, int64_t *loop_iterations);
/* Parses a flag string like CXLA_FLAGS ("--threads=2 --fusion=off") into the context. */
cxla_status cxla_context_set_flags(cxla_context *ctx, const char *flags);
/* The value of the context's flag `name` (without "--": "threads", "pjrt-gpu") as it is
 * written in CXLA_FLAGS (on/off, a number, the text; "" for a text flag that is not set),
 * into buf (n bytes, NUL-terminated). CXLA_ERR_INVALID_ARGUMENT for an unknown name or a
 * value longer than buf. */
cxla_status cxla_context_get_flag(cxla_context *ctx, const char *name, char *buf, size_t n);

/* ---- literals: host arrays and tuples -------------------------------------------------------- */
typedef struct cxla_literal cxla_literal;

/* A zero-filled array literal. */
cxla_literal *cxla_literal_create(cxla_context *ctx, cxla_type type, int rank, const int64_t *dims);
/* An array literal that copies `nbytes` of row-major data (nbytes must match the shape). */
cxla_literal *cxla_literal_from_data(cxla_context *ctx, cxla_type type, int rank,
                                     const int64_t *dims, const void *data, size_t nbytes);
/* A tuple literal taking ownership of its n elements (they must not be destroyed by the caller,
 * even if this call fails). */
cxla_literal *cxla_literal_tuple(cxla_context *ctx, int n, cxla_literal **elems);
/* A token (type CXLA_TOKEN): no data; the value of a token[] parameter. */
cxla_literal *cxla_literal_token(cxla_context *ctx);
cxla_literal *cxla_literal_clone(cxla_context *ctx, const cxla_literal *lit);
void cxla_literal_destroy(cxla_literal *lit);

cxla_type cxla_literal_type(const cxla_literal *lit);         /* CXLA_TUPLE for tuples */
int cxla_literal_rank(const cxla_literal *lit);
const int64_t *cxla_literal_dims(const cxla_literal *lit);
int64_t cxla_literal_element_count(const cxla_literal *lit);
size_t cxla_literal_size_bytes(const cxla_literal *lit);
void *cxla_literal_data(cxla_literal *lit);                   /* NULL for tuples */
int cxla_literal_tuple_size(const cxla_literal *lit);         /* -1 for arrays */
cxla_literal *cxla_literal_tuple_get(cxla_literal *lit, int i); /* borrowed */
/* Element i (row-major) converted to double; f16/bf16/integers/pred included (of a complex
 * element: its real part). */
double cxla_literal_get_f64(const cxla_literal *lit, int64_t i);
/* Stores value (converted to the literal's type, as `convert` would: a complex element gets
 * imaginary part 0). */
void cxla_literal_set_f64(cxla_literal *lit, int64_t i, double value);
/* Prints the literal as HLO text ("f32[2] {1, 2}") into a malloc'd string the caller frees. */
char *cxla_literal_to_string(const cxla_literal *lit);
/* Parses HLO literal text such as "f32[2,2] {{1,2},{3,4}}" or "(s32[], pred[]) (1, true)". */
cxla_status cxla_literal_parse(cxla_context *ctx, const char *text, cxla_literal **out);

/* .npy files: format versions 1.0, 2.0 and 3.0, little-endian, C order; dtypes b1 (pred),
 * i1-i8, u1-u8, f2, f4, f8. Writing uses version 1.0 (header padded to 64 bytes, as numpy
 * does). NumPy has no bfloat16, so a bf16 literal is written widened to f4 (exactly) and reads
 * back as f32. Tuples cannot be written. Every malformed file is CXLA_ERR_IO naming the file. */
cxla_status cxla_literal_read_npy(cxla_context *ctx, const char *path, cxla_literal **out);
cxla_status cxla_literal_write_npy(cxla_context *ctx, const cxla_literal *lit, const char *path);

/* ---- modules ---------------------------------------------------------------------------------- */
typedef struct cxla_module cxla_module;

/* Parses and verifies HLO text. `filename` names the text in error messages (may be NULL).
 * Bytes that start with MLIR bytecode's magic "ML\xEFR" are a StableHLO portable artifact and
 * are read as cxla_module_parse_stablehlo does. Textual StableHLO/MLIR, HloModuleProto binaries
 * (.hlo.pb) and XLA's buffer-assignment dumps are recognised and refused with a message that
 * says how to get HLO text (or, for MLIR, bytecode). */
cxla_status cxla_module_parse(cxla_context *ctx, const char *text, size_t len,
                              const char *filename, cxla_module **out);
/* cxla_module_parse of a file's contents (HLO text or a StableHLO portable artifact). */
cxla_status cxla_module_parse_file(cxla_context *ctx, const char *path, cxla_module **out);
/* Reads and verifies a StableHLO portable artifact: MLIR bytecode of the VHLO dialect, as
 * jax.export(jax.jit(f))(*args).mlir_module_serialized or
 * stablehlo.serialize_portable_artifact(module, "1.16.3") write it (VHLO 0.9.0 to 1.16.3).
 * The module is translated as XLA translates StableHLO to HLO: the public function "main" is
 * the ENTRY (several results: a tuple), other functions and regions become computations, and
 * arguments' tf.aliasing_output / jax.buffer_donor become the header's input_output_alias /
 * buffer_donor. Malformed bytes are CXLA_ERR_PARSE naming the byte offset; an op, element type
 * or dynamic dimension cxla cannot express is CXLA_ERR_UNSUPPORTED naming it and the op's MLIR
 * location (FILE:LINE:COL). `filename` names the bytes in error messages (may be NULL). */
cxla_status cxla_module_parse_stablehlo(cxla_context *ctx, const void *bytes, size_t len,
                                        const char *filename, cxla_module **out);
/* An empty module, to be filled with builders. */
cxla_module *cxla_module_create(cxla_context *ctx, const char *name);
void cxla_module_destroy(cxla_module *m);
/* Verifies the module (shape inference for every instruction). */
cxla_status cxla_module_verify(cxla_module *m);
/* Canonical HLO text (malloc'd; the caller frees it), or NULL with an error set. */
char *cxla_module_to_string(cxla_module *m);
/* Number of ENTRY parameters, or -1 if the module has no ENTRY computation. */
int cxla_module_num_parameters(cxla_module *m);
/* Shape of ENTRY parameter i / of the ENTRY result. Pointers stay valid while m lives. */
cxla_status cxla_module_parameter_shape(cxla_module *m, int i, cxla_shape *out);
cxla_status cxla_module_result_shape(cxla_module *m, cxla_shape *out);
/* Name of ENTRY parameter i as the HLO text spells it ("Arg_0.1"), or NULL if out of range.
 * Valid while m lives. */
const char *cxla_module_parameter_name(cxla_module *m, int i);

/* What a module computes, counted as XLA's cost analysis (HloCostAnalysis) counts it (JAX's
 * compiled.cost_analysis() reports cxla_executable_cost, whose bytes are of the compiled
 * module): the module as written (before cxla's passes), each instruction once, except a while loop's body and condition once
 * per trip where the trip count is known before it runs (XLA counts one trip) and a
 * conditional's costliest branch. docs/pjrt.md says what each op counts. */
typedef struct cxla_cost {
  double flops;           /* 2 per multiply-add of dot and convolution, 1 per element of other arithmetic */
  double transcendentals; /* elements of exp, log, tanh, sin, power, ... */
  double bytes_accessed;  /* each instruction's operand and result bytes */
} cxla_cost;
/* Verifies m, then fills *out. */
cxla_status cxla_module_cost(cxla_module *m, cxla_cost *out);

/* Reverse-mode gradient (docs/grad.md). m's ENTRY must return a scalar float (f16, bf16, f32,
 * f64); wrt lists nwrt ENTRY parameter numbers, each a float array (a number may repeat). *out
 * receives a new module (m is unchanged) whose ENTRY takes m's parameters and returns the tuple
 * (value, gradient of value with respect to parameter wrt[0], ..., wrt[nwrt-1]): value is what
 * m's ENTRY returns, and gradient i has the shape of parameter wrt[i]. It prints, compiles and
 * runs like any module. An op on the path from a wrt parameter to the value that has no
 * gradient rule is CXLA_ERR_UNSUPPORTED naming the op and its FILE:LINE:COL; bad arguments are
 * CXLA_ERR_INVALID_ARGUMENT. */
cxla_status cxla_module_grad(cxla_module *m, const int *wrt, int nwrt, cxla_module **out);

/* ---- training: an optimizer step built into the module (docs/train.md) ------------------------ */
typedef enum {
  CXLA_OPTIMIZER_SGD = 0, /* w -= lr * g; with momentum mu: v = mu * v + g, w -= lr * v */
  CXLA_OPTIMIZER_ADAM = 1 /* Kingma & Ba, with bias correction (as optax.adam) */
} cxla_optimizer_kind;

typedef struct {
  cxla_optimizer_kind kind;
  double learning_rate; /* SGD 0.01, Adam 0.001 */
  double momentum;      /* SGD only; 0 (the default) keeps no state */
  int nesterov;         /* SGD with momentum only: w -= lr * (g + mu * v) */
  double beta1, beta2, epsilon; /* Adam: 0.9, 0.999, 1e-8 */
  int steps_per_call;   /* K >= 1 steps in one execution, over a stream of K batches */
  int replicas;         /* data-parallel over N replicas (each its share of the batch): N > 1
                           all-reduces the loss and gradients (their mean over the N devices)
                           inside the step, before the update; 0 (the default) or 1: none */
  int learning_rate_input; /* 1: the learning rate is the step's last parameter, a scalar
                              (f64[] when a weight is f64, else f32[]) given at every call, so
                              one compiled step serves a whole schedule (learning_rate is then
                              unused); 0 (the default): learning_rate, a constant of the step */
} cxla_optimizer;

/* The defaults above for kind. */
void cxla_optimizer_init(cxla_optimizer *opt, cxla_optimizer_kind kind);

/* A training step (docs/train.md): m's ENTRY returns a scalar float loss; wrt lists nwrt
 * distinct ENTRY parameters (the weights, float arrays). *out receives a new module whose ENTRY
 * - takes: the nwrt weights (in wrt's order); then the optimizer state — SGD with momentum: one
 *   velocity per weight; Adam: one first moment per weight, one second moment per weight, then
 *   the step count s32[] (steps already taken); plain SGD: none — each state array has its
 *   weight's shape and type and starts at zero; then m's other parameters in their order (the
 *   batch), each with a leading dimension K added when steps_per_call K > 1 (step k reads
 *   slice k); then, with opt->learning_rate_input, the learning rate (a scalar, the same for
 *   the K steps of one call);
 * - returns the tuple (loss, new weights..., new state...), loss being m's value (K = 1) or the
 *   K losses as a rank-1 array;
 * - with opt->replicas N > 1, runs as one device of N (MPI ranks or threads, docs/collectives.md):
 *   the loss and the gradients are replaced by their mean over the N devices (one all-reduce
 *   per float type, replica_groups={{0..N-1}}, then a division by N) before the update, so
 *   every device takes the same step (docs/train.md, data-parallel);
 * - aliases every weight and state parameter to its new value (input_output_alias), so an
 *   executable updates them in place (donated: parameters 0 to 63) and one execution does
 *   forward, loss, gradients and update, K times over inside one while loop when K > 1.
 * Bad arguments (repeated or non-float wrt, bad hyper-parameters) are CXLA_ERR_INVALID_ARGUMENT;
 * an op without a gradient rule is CXLA_ERR_UNSUPPORTED as in cxla_module_grad. */
cxla_status cxla_module_train_step(cxla_module *m, const int *wrt, int nwrt,
                                   const cxla_optimizer *opt, cxla_module **out);

/* ---- builder: one computation at a time ---------------------------------------------------------
 * A builder builds one computation of a module; several builders may be open on one module
 * (finish a reducer first, then pass it to reduce). Every op's shape is inferred when it is
 * added, so a mistake surfaces at the call that made it: that call and every later one return
 * the invalid op {0}, and cxla_builder_status / cxla_builder_finish report the first error as
 * "builder NAME: OP: message" (CXLA_ERR_VERIFY for shape and attribute errors,
 * CXLA_ERR_INVALID_ARGUMENT for misuse: NULL arrays, negative counts, ops of another builder,
 * computations of another module or not yet finished). Array arguments have one entry per
 * dimension of the operand unless a count says otherwise. Instructions get names like "add.7".
 * A cxla_op is only meaningful to the builder that made it. */
typedef struct cxla_builder cxla_builder;
typedef struct cxla_computation cxla_computation; /* owned by its module */
typedef struct cxla_op { int32_t id; } cxla_op;   /* id 0 is the invalid op */

/* name: the computation's name (NULL: a fresh one); must be unique in the module. NULL only if
 * m is NULL or memory ran out; a bad name is the builder's first (sticky) error. */
cxla_builder *cxla_builder_create(cxla_module *m, const char *name);
/* Ends the builder: sets `root` as the computation's ROOT, verifies, adds the computation to
 * the module (as ENTRY if is_entry), and frees the builder. Returns the first sticky error. */
cxla_status cxla_builder_finish(cxla_builder *b, cxla_op root, int is_entry,
                                cxla_computation **out);
/* Discards a builder that will not be finished. */
void cxla_builder_destroy(cxla_builder *b);
/* CXLA_OK, or the first error recorded in the builder. */
cxla_status cxla_builder_status(cxla_builder *b);
/* Shape of an op built so far (valid while the builder lives). */
cxla_status cxla_builder_get_shape(cxla_builder *b, cxla_op x, cxla_shape *out);

/* Parameters must end up numbered 0..n-1. name may be NULL ("Arg_<number>.<id>"). */
cxla_op cxla_builder_parameter(cxla_builder *b, int64_t number, const cxla_shape *shape,
                               const char *name);
cxla_op cxla_builder_constant(cxla_builder *b, const cxla_literal *lit);   /* copies lit */
cxla_op cxla_builder_constant_scalar(cxla_builder *b, cxla_type type, double value);

/* Any elementwise op by its HLO name ("add", "exponential", ...), except those that take
 * attributes (compare, convert, bitcast-convert, reduce-precision: use their own calls). */
cxla_op cxla_builder_unary(cxla_builder *b, const char *opname, cxla_op x);
cxla_op cxla_builder_binary(cxla_builder *b, const char *opname, cxla_op x, cxla_op y);

/* Unary elementwise. */
cxla_op cxla_builder_abs(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_negate(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_sign(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_exp(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_expm1(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_log(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_log1p(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_logistic(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_sqrt(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_rsqrt(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_cbrt(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_sin(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_cos(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_tan(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_tanh(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_floor(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_ceil(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_round_afz(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_round_even(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_is_finite(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_not(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_popcnt(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_clz(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_erf(cxla_builder *b, cxla_op x);
cxla_op cxla_builder_copy(cxla_builder *b, cxla_op x);

/* Binary elementwise (operands of equal shape; broadcast explicitly first). */
cxla_op cxla_builder_add(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_sub(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_mul(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_div(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_rem(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_pow(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_atan2(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_max(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_min(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_and(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_or(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_xor(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_shl(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_shr_arith(cxla_builder *b, cxla_op x, cxla_op y);
cxla_op cxla_builder_shr_logical(cxla_builder *b, cxla_op x, cxla_op y);

typedef enum cxla_compare_dir { CXLA_EQ, CXLA_NE, CXLA_LT, CXLA_LE, CXLA_GT, CXLA_GE } cxla_compare_dir;
/* cmp_type: NULL for the default of the element type, or "FLOAT", "TOTALORDER", "SIGNED",
 * "UNSIGNED". */
cxla_op cxla_builder_compare(cxla_builder *b, cxla_op x, cxla_op y, cxla_compare_dir dir,
                             const char *cmp_type);
cxla_op cxla_builder_select(cxla_builder *b, cxla_op pred, cxla_op on_true, cxla_op on_false);
cxla_op cxla_builder_clamp(cxla_builder *b, cxla_op lo, cxla_op x, cxla_op hi);
cxla_op cxla_builder_convert(cxla_builder *b, cxla_op x, cxla_type to);
/* Between types of different widths the last dimension grows or shrinks, as in XLA. */
cxla_op cxla_builder_bitcast_convert(cxla_builder *b, cxla_op x, cxla_type to);
cxla_op cxla_builder_reduce_precision(cxla_builder *b, cxla_op x, int exponent_bits,
                                      int mantissa_bits);

/* Shape ops. */
cxla_op cxla_builder_broadcast(cxla_builder *b, cxla_op x, int rank, const int64_t *dims,
                               const int64_t *operand_to_result_dims);
cxla_op cxla_builder_reshape(cxla_builder *b, cxla_op x, int rank, const int64_t *dims);
cxla_op cxla_builder_transpose(cxla_builder *b, cxla_op x, const int64_t *permutation);
/* strides may be NULL (all 1). */
cxla_op cxla_builder_slice(cxla_builder *b, cxla_op x, const int64_t *starts,
                           const int64_t *limits, const int64_t *strides);
cxla_op cxla_builder_dynamic_slice(cxla_builder *b, cxla_op x, const cxla_op *start_indices,
                                   const int64_t *sizes);
cxla_op cxla_builder_dynamic_update_slice(cxla_builder *b, cxla_op x, cxla_op update,
                                          const cxla_op *start_indices);
cxla_op cxla_builder_concatenate(cxla_builder *b, int n, const cxla_op *xs, int64_t dimension);
/* lo/hi may be negative; interior >= 0 (NULL: all 0); one entry per dimension. */
cxla_op cxla_builder_pad(cxla_builder *b, cxla_op x, cxla_op pad_value, const int64_t *lo,
                         const int64_t *hi, const int64_t *interior);
cxla_op cxla_builder_reverse(cxla_builder *b, cxla_op x, int n, const int64_t *dimensions);
cxla_op cxla_builder_iota(cxla_builder *b, cxla_type type, int rank, const int64_t *dims,
                          int64_t iota_dimension);

/* Reductions and computations. `to_apply` etc. come from cxla_builder_finish. reduce and
 * reduce_window take n operands and n init values; map maps every dimension. */
cxla_op cxla_builder_reduce(cxla_builder *b, int n, const cxla_op *operands,
                            const cxla_op *init_values, int ndims, const int64_t *dimensions,
                            cxla_computation *to_apply);
cxla_op cxla_builder_map(cxla_builder *b, int n, const cxla_op *operands,
                         cxla_computation *to_apply);
cxla_op cxla_builder_sort(cxla_builder *b, int n, const cxla_op *operands, int64_t dimension,
                          int is_stable, cxla_computation *comparator);

typedef struct cxla_window_dim {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate; /* 0 stride/dilate means 1 */
  int reversal;
} cxla_window_dim;
cxla_op cxla_builder_reduce_window(cxla_builder *b, int n, const cxla_op *operands,
                                   const cxla_op *init_values, const cxla_window_dim *window,
                                   cxla_computation *to_apply);
cxla_op cxla_builder_select_and_scatter(cxla_builder *b, cxla_op operand, cxla_op source,
                                        cxla_op init_value, const cxla_window_dim *window,
                                        cxla_computation *select, cxla_computation *scatter);

typedef struct cxla_dot_dims {
  int nbatch, ncontract;
  const int64_t *lhs_batch, *rhs_batch, *lhs_contract, *rhs_contract;
} cxla_dot_dims;
cxla_op cxla_builder_dot(cxla_builder *b, cxla_op lhs, cxla_op rhs, const cxla_dot_dims *dims);
/* A plain matrix product: contracts lhs's last dimension with rhs's first. */
cxla_op cxla_builder_matmul(cxla_builder *b, cxla_op lhs, cxla_op rhs);
/* ragged-dot: a dot whose lhs dimension lhs_ragged_dim is cut into consecutive groups of
 * group_sizes (an integer array [G], or [batch..., earlier dims..., G]) elements. A
 * non-contracting lhs_ragged_dim multiplies group g's rows by rhs's slice g along rhs_group_dim
 * (jax.lax.ragged_dot); a contracting one gives one result per group in a leading dimension
 * (rhs_group_dim -1); a batch one is a plain dot (rhs_group_dim -1). */
cxla_op cxla_builder_ragged_dot(cxla_builder *b, cxla_op lhs, cxla_op rhs, cxla_op group_sizes,
                                const cxla_dot_dims *dims, int64_t lhs_ragged_dim, int64_t rhs_group_dim);

/* dim_labels as in HLO text, e.g. "b01f_01io->b01f"; window has one entry per spatial dim. */
cxla_op cxla_builder_convolution(cxla_builder *b, cxla_op lhs, cxla_op rhs,
                                 const char *dim_labels, const cxla_window_dim *window,
                                 int64_t feature_group_count, int64_t batch_group_count);

typedef struct cxla_gather_dims {
  int noffset, ncollapsed, nstart_index_map, noperand_batching;
  const int64_t *offset_dims, *collapsed_slice_dims, *start_index_map;
  const int64_t *operand_batching_dims, *start_indices_batching_dims;
  int64_t index_vector_dim;
  int nslice_sizes;
  const int64_t *slice_sizes;
} cxla_gather_dims;
cxla_op cxla_builder_gather(cxla_builder *b, cxla_op operand, cxla_op start_indices,
                            const cxla_gather_dims *dims);

typedef struct cxla_scatter_dims {
  int nupdate_window, ninserted_window, nscatter_to_operand, ninput_batching;
  const int64_t *update_window_dims, *inserted_window_dims, *scatter_dims_to_operand_dims;
  const int64_t *input_batching_dims, *scatter_indices_batching_dims;
  int64_t index_vector_dim;
} cxla_scatter_dims;
cxla_op cxla_builder_scatter(cxla_builder *b, cxla_op operand, cxla_op indices, cxla_op updates,
                             const cxla_scatter_dims *dims, cxla_computation *to_apply);
/* Variadic scatter: n operands and n updates (one indices array); to_apply takes 2n scalars
 * (the operands' current values, then the updates') and returns an n-tuple; the result is an
 * n-tuple (n == 1: the array itself). */
cxla_op cxla_builder_scatter_n(cxla_builder *b, int n, const cxla_op *operands, cxla_op indices,
                               const cxla_op *updates, const cxla_scatter_dims *dims, cxla_computation *to_apply);

/* Library ops (XLA's semantics, docs/ops.md; shapes are checked as for HLO text).
 * topk: the k largest (largest != 0) or smallest elements of each row of x's last dimension,
 * in order (TOTALORDER, ties by lower index), and their indices: (x's type [..., k], s32[..., k]).
 * fft: over x's n (1 to 3) innermost dimensions of lengths fft_length; FFT and IFFT map c64 /
 * c128 to the same shape, RFFT f32 / f64 to [..., n/2 + 1] complex, IRFFT back to real.
 * cholesky: the lower (lower != 0) or upper factor of each matrix of a batch [..., n, n].
 * triangular_solve: x with op(a) x = rhs (left_side) or x op(a) = rhs, a triangular.
 * rng_bit_generator: (new state, random bits of type[dims]) from a u64[2] (Threefry) or u64[2
 * or 3] (Philox, the default) state, bit-exact with XLA.
 * stochastic_convert: x (float) to a signed integer type, rounding up with a probability given
 * by random_bits (unsigned, x's width and dims). */
typedef enum cxla_fft_type { CXLA_FFT_FFT, CXLA_FFT_IFFT, CXLA_FFT_RFFT, CXLA_FFT_IRFFT } cxla_fft_type;
typedef enum cxla_transpose { CXLA_TRANSPOSE_NO, CXLA_TRANSPOSE_YES, CXLA_TRANSPOSE_ADJOINT } cxla_transpose;
typedef enum cxla_rng_algorithm { CXLA_RNG_DEFAULT, CXLA_RNG_THREE_FRY, CXLA_RNG_PHILOX } cxla_rng_algorithm;
cxla_op cxla_builder_topk(cxla_builder *b, cxla_op x, int64_t k, int largest);
cxla_op cxla_builder_fft(cxla_builder *b, cxla_op x, cxla_fft_type type, int n, const int64_t *fft_length);
cxla_op cxla_builder_cholesky(cxla_builder *b, cxla_op a, int lower);
cxla_op cxla_builder_triangular_solve(cxla_builder *b, cxla_op a, cxla_op rhs, int left_side, int lower,
                                      int unit_diagonal, cxla_transpose transpose_a);
cxla_op cxla_builder_rng_bit_generator(cxla_builder *b, cxla_op state, cxla_rng_algorithm algorithm,
                                       cxla_type type, int rank, const int64_t *dims);
cxla_op cxla_builder_stochastic_convert(cxla_builder *b, cxla_op x, cxla_op random_bits, cxla_type type);

/* Tuples and control flow. */
cxla_op cxla_builder_tuple(cxla_builder *b, int n, const cxla_op *elems);
cxla_op cxla_builder_get_tuple_element(cxla_builder *b, cxla_op t, int64_t index);
cxla_op cxla_builder_call(cxla_builder *b, int n, const cxla_op *args, cxla_computation *c);
cxla_op cxla_builder_while(cxla_builder *b, cxla_op init, cxla_computation *condition,
                           cxla_computation *body);
/* branch_index is pred (2 branches: true, false) or s32 (n branches, out of range -> last). */
cxla_op cxla_builder_conditional(cxla_builder *b, cxla_op branch_index, int n,
                                 const cxla_op *branch_operands, cxla_computation **branches);

/* ---- compile and execute --------------------------------------------------------------------- */
typedef struct cxla_executable cxla_executable;
typedef struct cxla_buffer cxla_buffer;

typedef struct cxla_compile_options {
  const char *backend; /* "interp" (default), "cpu", "gpu" */
  int opt_level;       /* -1: from flags (default 2) */
  int threads;         /* 0: from flags / all cores */
  /* Parameter donation, like jax's donate_argnums: bit p set donates ENTRY parameter p (p <
   * 64; donate_params below names any). Every execute then consumes that argument buffer: afterwards it holds no value (using
   * it again is CXLA_ERR_INVALID_ARGUMENT), and a result may be computed in its memory instead
   * of new memory. Memory read from it in place (cxla_buffer_data) then holds that result or
   * nothing meaningful, and stays allocated until the donated buffer and the call's result
   * (or its elements) are all destroyed. A wrapped buffer (cxla_buffer_wrap) cannot be
   * donated. A module whose header has input_output_alias={...} (as jax prints it for donated
   * arguments) donates the parameters it names as well. */
  uint64_t donate;
  /* Machine code between processes without a cache folder (what the PJRT plugin's serialized
   * executables carry). keep_code: the executable keeps its cpu code, for
   * cxla_executable_code. code, code_size: such bytes from an earlier compile of the same
   * module; when they are a valid entry of this very compile (same module text, flags,
   * donations, CPU, LLVM release, thread count, cxla build: the --cache-dir key, docs/flags.md)
   * they are linked instead of running LLVM; when not (another CPU or build, damaged bytes),
   * they are never loaded and the module compiles as usual. The compile counts say which
   * (disk_cache=hit|rejected, and --trace's "disk cache" span why). cpu backend only; the
   * bytes are only read during cxla_compile. */
  int keep_code;
  const void *code;
  size_t code_size;
  /* More donated parameters, by index (any ENTRY parameter; together with donate's bits):
   * donate_params[0 .. num_donate_params-1]. Read only during cxla_compile. */
  const int *donate_params;
  int num_donate_params;
} cxla_compile_options;
/* backend "interp", opt_level -1, threads 0, donate 0, keep_code 0, code NULL, no
 * donate_params. */
void cxla_compile_options_init(cxla_compile_options *o);

/* Verifies the module and compiles its ENTRY computation (opts NULL: defaults). The
 * executable keeps its own copy of what it needs, so the module may be destroyed after. An
 * unknown backend is CXLA_ERR_INVALID_ARGUMENT; a known one missing from this build ("cpu",
 * "gpu" until they land) is CXLA_ERR_UNSUPPORTED "backend 'cpu' is not built into this cxla". */
cxla_status cxla_compile(cxla_module *m, const cxla_compile_options *opts,
                         cxla_executable **out);
void cxla_executable_destroy(cxla_executable *e);
/* Runs once. args: one buffer per ENTRY parameter, each of exactly the parameter's shape
 * (otherwise CXLA_ERR_INVALID_ARGUMENT "argument 1 (parameter 'w'): expected f32[2,3], got
 * f32[3,2]"; arguments count from 0 like parameter numbers). *result receives a new buffer (a
 * tuple buffer when the ENTRY result is a tuple). Safe to call from several threads at once,
 * except that a donated argument buffer (cxla_compile_options.donate) is consumed by the call
 * (even a failed one, once it has started) and must not be in use anywhere else. */
cxla_status cxla_executable_execute(cxla_executable *e, int nargs, cxla_buffer *const *args,
                                    cxla_buffer **result);
/* Wall-clock milliseconds of each compile phase, as "name=ms" pairs joined by spaces:
 * "parse=0.412 verify=0.051 clone=0.020" (parse only for modules from text), then the
 * backend's own phases (cpu: passes, buffers, jit (making the JIT session), emit, llvm,
 * link, and disk with a disk cache or code kept or given; llvm is the wall clock of
 * optimising and generating code on all compile threads). Valid while e lives. */
const char *cxla_executable_compile_stats(cxla_executable *e);
/* What the compile produced, as "name=N" pairs: for cpu "kernels=12 gemms=3 convolutions=0
 * copies=1 fallbacks=0 llvm_threads=2 llvm_modules=5 opt_cpu_ms=31 codegen_cpu_ms=40
 * temp_bytes=98304 library_macs=1048576" (opt and codegen: LLVM's time summed over its threads;
 * temp_bytes: the memory an execution takes for temporaries, the largest set live at once as
 * buffer assignment packs them; library_macs: the multiply-adds of the GEMM and convolution
 * calls, each call counted once, a loop body's once), then "cache=hit|miss|off". Valid while e
 * lives. */
const char *cxla_executable_compile_counts(cxla_executable *e);

/* The machine code of an executable compiled with keep_code, as bytes in the format of a
 * --cache-dir entry (versioned, keyed, crc32-checked; docs/flags.md), valid while e lives: give
 * them to a later compile as cxla_compile_options.code. CXLA_ERR_UNSUPPORTED when e has none
 * (another backend, compiled without keep_code or with --dump-to). */
cxla_status cxla_executable_code(cxla_executable *e, const void **bytes, size_t *n);

/* The memory an execution of an executable holds, in bytes, as XLA's CompiledMemoryStats
 * counts it (what JAX's compiled.memory_analysis() reports through the PJRT plugin): at least
 * code_bytes + argument_bytes + output_bytes - alias_bytes + temp_bytes while it runs. Bytes
 * of the backend's memory: host memory for interp and cpu, the GPU's for gpu (gpu-emu's
 * emulated device memory). */
typedef struct cxla_footprint {
  int64_t argument_bytes; /* the ENTRY parameters' arrays (a tuple's leaves) */
  int64_t output_bytes;   /* the result's arrays */
  int64_t alias_bytes;    /* of the parameters, those whose memory a result is computed in
                           * (donated ones, where the buffer assignment placed a result) */
  int64_t temp_bytes;     /* temporaries: the most live at once, as the buffer assignment packs
                           * them, and the split reductions' scratch; on a GPU also the
                           * libraries' workspaces. Not the host libraries' own scratch (oneDNN,
                           * OpenBLAS) nor a fallback's (interp: 0, it allocates each value as
                           * it computes it) */
  int64_t code_bytes;     /* the generated code: cpu's object code, gpu's PTX (gpu-emu: its
                           * kernels' LLVM IR text; interp: 0) */
} cxla_footprint;
cxla_status cxla_executable_footprint(cxla_executable *e, cxla_footprint *out);

/* The cost of what an executable runs (what the PJRT plugin reports): flops and
 * transcendentals as cxla_module_cost counts the module compiled, bytes accessed as the
 * backend's kernels move them: each instruction of the module after the backend's passes, a
 * fusion its operands and results only (XLA counts its compiled module so too). interp runs
 * the module as written: the same bytes as cxla_module_cost. */
cxla_status cxla_executable_cost(cxla_executable *e, cxla_cost *out);

/* Buffers live in their backend's memory: host memory for interp and cpu, the GPU's for gpu
 * and gpu-emu. backend NULL means "interp". from_literal and to_literal copy (to and from the
 * device for a GPU backend). Destroying a buffer frees what cxla owns of it (a donated
 * buffer's memory included), never memory it wraps.
 *
 * On a GPU: cxla_buffer_from_literal / cxla_buffer_from_data copy to the device, results of a
 * GPU executable stay on the device, and an argument already on the executable's device is
 * read in place (a donated one lends its memory to the result). An argument in host memory
 * (a wrapped array, a cpu buffer) is copied in for that call; a GPU buffer given to a host
 * backend is copied out once and the copy kept with the buffer. Device memory comes from a
 * cache per context and device (as XLA's BFC allocator): memory a destroyed or donated buffer
 * gives back is handed out again, so a training loop asks the driver for nothing after its
 * first step (cxla_context_memory_stats). Copies to a GPU return once the data is in pinned
 * host memory cxla keeps for staging (the caller's array is free again) and run while earlier
 * kernels do; the kernels that read the value wait for them. Reading a GPU buffer on the host
 * waits for the work that makes it. */
cxla_status cxla_buffer_from_literal(cxla_context *ctx, const char *backend,
                                     const cxla_literal *lit, cxla_buffer **out);
cxla_status cxla_buffer_to_literal(cxla_buffer *buf, cxla_literal **out);
void cxla_buffer_destroy(cxla_buffer *buf);
/* A copy of buf in backend's memory: to or from a GPU, or within one (device to device). */
cxla_status cxla_buffer_copy_to(cxla_buffer *buf, const char *backend, cxla_buffer **out);
/* Where buf's value is: "host", or the name of the GPU backend whose device holds it ("gpu",
 * "gpu-emu"); NULL for NULL or a buffer that holds no value. */
const char *cxla_buffer_memory(cxla_buffer *buf);

/* A context's device memory for a GPU backend, in bytes (counts for the driver calls). */
typedef struct cxla_memory_stats {
  int64_t in_use;         /* held by buffers, arguments and results being made, and by the
                           * loaded executables (temporaries, constants, workspaces) */
  int64_t peak_in_use;
  int64_t cached;         /* given back and kept for reuse */
  int64_t driver_allocs;  /* cuMemAlloc calls for that memory so far */
  int64_t driver_frees;
  /* Transfers: host memory is staged through pinned host blocks kept for reuse, uploads run
   * on a stream of their own that the kernels wait for (docs/design/gpu-backend.md). */
  int64_t pinned;         /* bytes of pinned host memory held for staging */
  int64_t pinned_allocs;  /* cuMemHostAlloc calls so far */
  int64_t pinned_hits;    /* transfers staged in a block from the cache */
  int64_t staged_bytes;   /* bytes copied through staging, both ways */
  int64_t direct_bytes;   /* bytes copied straight from or to the caller's pinned memory */
  int64_t upload_waits;   /* uploads that waited for earlier kernels using their memory */
} cxla_memory_stats;
/* CXLA_ERR_UNSUPPORTED for a backend with no device memory (interp, cpu); CXLA_ERR_DEVICE
 * when the GPU cannot be used. */
cxla_status cxla_context_memory_stats(cxla_context *ctx, const char *backend, cxla_memory_stats *out);

/* ---- buffers without copies ------------------------------------------------------------------
 * An execution reads its arguments where they are and writes its result into memory it owns:
 * wrap the caller's arrays with cxla_buffer_wrap, read the result with cxla_buffer_data (split
 * a tuple result with cxla_buffer_untuple first), and one call copies nothing.
 *
 * cxla_buffer_wrap makes an array buffer over the caller's `data`: `nbytes` of dense row-major
 * elements of the shape (type, rank, dims), exactly cxla_type_size(type) times the element
 * count, else CXLA_ERR_INVALID_ARGUMENT. Alignment: data must be a multiple of the element
 * size (numpy's ALIGNED flag; malloc'd memory always is); a misaligned pointer is refused with
 * CXLA_ERR_INVALID_ARGUMENT (copy it with cxla_buffer_from_data instead). data may be NULL
 * only when nbytes is 0. Lifetime: the memory stays the caller's. cxla never writes to it or
 * frees it; it must stay valid, and unchanged while an execution that reads it runs, until
 * the buffer is destroyed. A wrapped buffer cannot be donated: an execute that would consume
 * it fails with CXLA_ERR_INVALID_ARGUMENT before it runs (cxla cannot give memory it does not
 * own to a result), and the buffer stays usable. */
cxla_status cxla_buffer_wrap(cxla_context *ctx, const char *backend, cxla_type type, int rank,
                             const int64_t *dims, const void *data, size_t nbytes,
                             cxla_buffer **out);
/* The same, but the data (any alignment) is copied once into memory cxla owns; such a buffer
 * may be donated. */
cxla_status cxla_buffer_from_data(cxla_context *ctx, const char *backend, cxla_type type,
                                  int rank, const int64_t *dims, const void *data, size_t nbytes,
                                  cxla_buffer **out);
/* The array's dense row-major data in place: the caller's memory for a wrapped buffer, else
 * cxla's (an execution's result is read where it was computed; writing to it changes the
 * buffer's value). Valid until the buffer is destroyed, donated or untupled. NULL for NULL, a
 * tuple, or a buffer that holds no value (donated, or untupled). A buffer on a GPU is copied
 * to the host at the first call (NULL if that fails) and this is the copy: writing to it does
 * not change the value on the device. */
void *cxla_buffer_data(cxla_buffer *buf);
/* The value's shape: an array's type, rank and dims, or a tuple's (CXLA_TUPLE, ntuple, elems).
 * Pointers stay valid while the buffer holds its value. CXLA_ERR_INVALID_ARGUMENT for NULL
 * arguments or a buffer that holds no value. */
cxla_status cxla_buffer_shape(cxla_buffer *buf, cxla_shape *out);
/* Bytes of an array buffer's data (0 for a tuple or a buffer that holds no value). */
size_t cxla_buffer_size_bytes(cxla_buffer *buf);
/* Moves the n elements of a tuple buffer into n new buffers (elems[i], each destroyed by the
 * caller), without copying. n must be the tuple's size. Afterwards `buf` holds no value:
 * destroy it (pointers read from it before stay valid through the elements). On failure
 * nothing moves and elems are NULL. */
cxla_status cxla_buffer_untuple(cxla_buffer *buf, int n, cxla_buffer **elems);
/* The parameters every execute of e consumes, bit p for parameter p < 64: the compile options'
 * donations and what the module's input_output_alias (or buffer_donor) names. */
uint64_t cxla_executable_donated_parameters(const cxla_executable *e);
/* Whether every execute of e consumes parameter p (any p; 0 for a parameter it does not
 * have, or a NULL e). */
int cxla_executable_parameter_donated(const cxla_executable *e, int p);

/* One argument of cxla_executable_execute_args: a buffer, or else the caller's array. */
typedef struct cxla_arg {
  cxla_buffer *buffer;  /* if not NULL, this buffer is the argument and the rest is ignored */
  const void *data;     /* else an array in the caller's memory, under cxla_buffer_wrap's rules */
  size_t nbytes;
  cxla_type type;
  int rank;
  const int64_t *dims;
} cxla_arg;
/* cxla_executable_execute, with each argument a buffer or an array read in place for this call
 * only: no buffer object is made for the arrays, so a call from a language binding costs one
 * call into cxla and no copies. An array argument must stay valid until the call returns and
 * cannot be donated; a bad one is CXLA_ERR_INVALID_ARGUMENT naming it ("argument 1: ..."). */
cxla_status cxla_executable_execute_args(cxla_executable *e, int nargs, const cxla_arg *args,
                                         cxla_buffer **result);

/* Convenience: compile with opts, run once on borrowed literals, return a new literal. The
 * literals stay the caller's (a donated parameter consumes a copy). */
cxla_status cxla_module_run(cxla_module *m, const cxla_compile_options *opts, int nargs,
                            cxla_literal *const *args, cxla_literal **result);

/* ---- devices: one program on several devices (docs/collectives.md) ---------------------------
 * A module with collectives (all-reduce, all-gather, reduce-scatter, all-to-all,
 * collective-permute, ...), replica-id or partition-id runs as one device of a run of several:
 * replicas x partitions devices (num_partitions= from the module header, else 1), device d
 * being replica d / partitions and partition d % partitions. A run is either the ranks of an MPI
 * job, one device per process (cxla_executable_execute under mpirun, or on the communicator
 * given below), or n threads of this process (cxla_executable_execute_replicas); outside both,
 * an execution is a run of one device, which a module whose groups need more refuses with
 * CXLA_ERR_INVALID_ARGUMENT. Reductions fold in the order each group lists its members, so a
 * result is the same bit for bit whatever the transport, the timing or the number of threads.
 * A collective that waits longer than --collective-timeout for the other devices fails. */

/* Runs e once on each of n devices, each on a thread of this process: device r takes
 * args[r * nargs .. r * nargs + nargs) and gives results[r]. If any device fails, every result
 * is NULL and the message names the device that failed first (the others stop at their next
 * collective). */
cxla_status cxla_executable_execute_replicas(cxla_executable *e, int n, int nargs, cxla_buffer *const *args,
                                             cxla_buffer **results);
/* The MPI communicator the executions of ctx run on: mpi_comm points to an MPI_Comm (pass
 * &comm), which cxla duplicates, so this is collective: every rank of the communicator calls it,
 * after MPI_Init. cxla then never initialises or finalises MPI itself; NULL goes back to the
 * default: MPI_COMM_WORLD when the process runs under mpirun (MPI initialised on the first
 * execution that needs it, finalised at exit), else a run of one device. CXLA_ERR_UNSUPPORTED
 * in a cxla built without MPI. */
cxla_status cxla_context_set_communicator(cxla_context *ctx, const void *mpi_comm);
/* This process's device in the run of ctx and how many devices the run has: the rank and size
 * of its communicator (under mpirun, without initialising MPI), or 0 and 1. */
cxla_status cxla_context_device(cxla_context *ctx, int *device, int *ndevices);

/* ---- host transfers: infeed and outfeed ------------------------------------------------------
 * An infeed instruction (infeed(token) -> (data, token)) takes the next literal of its
 * context's infeed queue; an outfeed (outfeed(data, token) -> token) appends a copy of its
 * data to the context's outfeed queue. One pair of queues per context, as XLA has one per
 * device (PjRt's TransferToInfeed / TransferFromOutfeed): every executable of the context
 * shares them, on every backend, in the order the program's tokens chain its infeeds and
 * outfeeds. An infeed that finds the queue empty (and no source set) or a literal of another
 * shape than its data fails the execution with CXLA_ERR_RUNTIME, naming the instruction; the
 * mismatched literal is consumed. An outfeed that finds 2^20 values waiting fails the same way
 * (nobody pops them). Thread safe. */
/* Appends a copy of lit (an array or a tuple without tokens) to the infeed queue. */
cxla_status cxla_infeed_push(cxla_context *ctx, const cxla_literal *lit);
/* Takes the oldest outfeed literal into *out (the caller destroys it); CXLA_ERR_INVALID_ARGUMENT
 * when the queue is empty. */
cxla_status cxla_outfeed_pop(cxla_context *ctx, cxla_literal **out);
/* How many literals wait in each queue. */
int64_t cxla_infeed_count(cxla_context *ctx);
int64_t cxla_outfeed_count(cxla_context *ctx);
/* Empties both queues. */
void cxla_feeds_clear(cxla_context *ctx);
/* A source of infeed values, asked for one of `shape` when an infeed finds the queue empty
 * (a generator of inputs, so a loop may take as many as it runs for): fills *out with a new
 * literal of that shape, which the infeed takes over. NULL (the default) unsets it. The
 * source is called from the executing thread, without the queue's lock held. */
typedef cxla_status (*cxla_infeed_source)(void *user, const cxla_shape *shape, cxla_literal **out);
void cxla_infeed_set_source(cxla_context *ctx, cxla_infeed_source fn, void *user);

/* ---- host callbacks --------------------------------------------------------------------------
 * A program may call back into its host process: a custom-call with
 * custom_call_target="cxla_host_callback" and backend_config={callback_id = N : ui64} (what the
 * Python package lowers jax.debug.print, jax.pure_callback and io_callback to, docs/python.md)
 * runs callback N of the process's dispatcher, on the interpreter and on the cpu backend (the gpu
 * backend refuses it when compiling). Its operands and results are arrays and tokens (a token
 * orders it among other effects and carries no data); its results come back with the shapes it
 * declares. One dispatcher per process, shared by every context, executable and thread: ids are
 * the dispatcher's own (a Python process numbers its callables). A compile refuses a
 * callback_id the dispatcher does not know (or any, when none is set), naming the instruction
 * and the id; an execution whose callback fails stops with CXLA_ERR_RUNTIME and the callback's
 * message. */
typedef struct cxla_host_value {
  cxla_type type;      /* CXLA_TOKEN for a token: no data, rank 0 */
  int rank;
  const int64_t *dims;
  void *data;          /* dense row-major; an operand's is only read, a result's is to be written */
  size_t nbytes;       /* cxla_type_size(type) times the element count */
} cxla_host_value;

typedef struct cxla_host_callbacks {
  /* Runs callback id: reads the nargs operands, writes every array result in place (the memory
   * is cxla's, of the declared shape: write all of it). Returns 0, or non-zero with a message in
   * err (errlen bytes, NUL-terminated) when the callback failed. May be called from any thread
   * cxla executes on, and from several at once. */
  int (*call)(void *user, uint64_t id, int nargs, const cxla_host_value *args, int nresults,
              cxla_host_value *results, char *err, size_t errlen);
  /* 1 if id is a callback call can run, else 0; either way it may write a name for id (the
   * callable's) into name, for messages. Asked when compiling; NULL takes every id as known. */
  int (*lookup)(void *user, uint64_t id, char *name, size_t namelen);
  void *user;          /* given back to call and lookup */
} cxla_host_callbacks;

/* Sets the process's dispatcher (copied; NULL, or a NULL call, unsets it). Thread safe: each
 * callback runs with the dispatcher set when it started. */
void cxla_host_callbacks_set(const cxla_host_callbacks *cb);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
