/* mlir.h — a generic, read-only tree of an MLIR module read from MLIR bytecode (a StableHLO
 * portable artifact: the VHLO dialect in bytecode, as JAX hands it to a PJRT plugin and as
 * jax.export's mlir_module_serialized holds it).
 *
 * Why a generic tree and not cxla IR directly: the bytecode container (strings, dialects,
 * attribute/type tables, properties, resources, nested regions) is MLIR's and knows nothing of
 * StableHLO, while the meaning of each vhlo.*_vN op is StableHLO's. Reading into this tree keeps
 * the two apart: the reader (bytecode*.c, vhlo_codes.c, builtin_codes.c) checks every length and
 * index of the untrusted bytes and fails with a byte offset; the translator (translate*.c) then
 * walks well-formed data and only judges meaning, refusing what it does not know by name.
 * Nothing here depends on MLIR, jaxlib or C++.
 *
 * Ownership: everything reachable from a cx_mlir_tree lives in its arena (strings, types, attrs,
 * ops, and the bytes of dense constants, copied out of the input), so the input buffer may be
 * freed after cx_mlirbc_read returns and one cx_mlir_tree_free releases everything. All pointers
 * are const for users; attributes and types may be shared between several users (MLIR uniques
 * them by table index, and so does the reader).
 *
 * Facts the encodings come from: mlir/docs/BytecodeFormat.md and BytecodeReader.cpp (container,
 * versions 0..6), mlir/include/mlir/IR/BuiltinDialectBytecode.td (builtin codes),
 * stablehlo/dialect/VhloBytecode.cpp, VhloEnums.td, VhloOps.td at the StableHLO commit jaxlib
 * 0.10.2 uses (VHLO codes, enum values, the attribute names of each op's properties). */
#ifndef CX_STABLEHLO_MLIR_H
#define CX_STABLEHLO_MLIR_H

#include <stddef.h>
#include <stdint.h>
#include "util/util.h"

typedef struct cx_mlir_type cx_mlir_type;
typedef struct cx_mlir_attr cx_mlir_attr;
typedef struct cx_mlir_value cx_mlir_value;
typedef struct cx_mlir_op cx_mlir_op;
typedef struct cx_mlir_block cx_mlir_block;
typedef struct cx_mlir_region cx_mlir_region;

/* ShapedType::kDynamic: a dynamic dimension (and an unknown bound in type extensions). */
#define CX_MLIR_DYNAMIC INT64_MIN

/* ------------------------------------------------------------------------------------------
 * Types. `dialect` says whose type it is ("vhlo" for everything a portable artifact holds,
 * "builtin" for builtin types); the same kinds serve both, so the translator can treat
 * vhlo.tensor_v1 and builtin tensor alike where it wants to. */
typedef enum cx_mlir_type_kind {
  CX_MLIR_TYPE_INT,             /* width (1 for vhlo's bool_v1 and i1), sign */
  CX_MLIR_TYPE_INDEX,
  CX_MLIR_TYPE_FLOAT,           /* fkind */
  CX_MLIR_TYPE_COMPLEX,         /* elem */
  CX_MLIR_TYPE_RANKED_TENSOR,   /* elem, rank, dims (CX_MLIR_DYNAMIC marks '?'), encoding or NULL */
  CX_MLIR_TYPE_UNRANKED_TENSOR, /* elem */
  CX_MLIR_TYPE_TUPLE,           /* n, types */
  CX_MLIR_TYPE_TOKEN,
  CX_MLIR_TYPE_FUNCTION,        /* n, types (inputs); nout, outputs */
  CX_MLIR_TYPE_NONE,
  CX_MLIR_TYPE_WITNESS,         /* vhlo.witness_v1 (shape dialect leftovers) */
  CX_MLIR_TYPE_FUTURE,          /* vhlo.future_v1: n, types */
  CX_MLIR_TYPE_BUFFER,          /* vhlo.buffer_v1 (RankedBufferV1): elem, rank, dims */
  CX_MLIR_TYPE_QUANT,           /* uniform quantized, per tensor or per axis: quant */
  CX_MLIR_TYPE_OPAQUE           /* not decoded: opaque (the translator refuses it by dialect) */
} cx_mlir_type_kind;

typedef enum cx_mlir_signedness {
  CX_MLIR_SIGNLESS = 0, /* MLIR's iN and vhlo's IntegerSI (signless) */
  CX_MLIR_SIGNED = 1,   /* builtin siN */
  CX_MLIR_UNSIGNED = 2  /* builtin uiN and vhlo's IntegerUI */
} cx_mlir_signedness;

typedef enum cx_mlir_float_kind {
  CX_MLIR_BF16,
  CX_MLIR_F16,
  CX_MLIR_F32,
  CX_MLIR_F64,
  CX_MLIR_F80,
  CX_MLIR_F128,
  CX_MLIR_TF32,
  CX_MLIR_F8E3M4,
  CX_MLIR_F8E4M3,
  CX_MLIR_F8E4M3FN,
  CX_MLIR_F8E5M2,
  CX_MLIR_F8E4M3FNUZ,
  CX_MLIR_F8E5M2FNUZ,
  CX_MLIR_F8E4M3B11FNUZ,
  CX_MLIR_F8E8M0FNU,
  CX_MLIR_F4E2M1FN,
  CX_MLIR_F6E2M3FN,
  CX_MLIR_F6E3M2FN
} cx_mlir_float_kind;

typedef struct cx_mlir_quant {
  uint64_t flags;                 /* bit 0: signed storage */
  const cx_mlir_type *storage, *expressed;
  int per_axis;                   /* 0: one scale/zero point; 1: per quantized_dim */
  int64_t quantized_dim;
  int64_t storage_min, storage_max;
  int nscales;                    /* 1 when !per_axis */
  const double *scales;
  const int64_t *zero_points;     /* nscales entries */
} cx_mlir_quant;

struct cx_mlir_type {
  cx_mlir_type_kind kind;
  const char *dialect;
  int width;                      /* INT */
  cx_mlir_signedness sign;        /* INT */
  cx_mlir_float_kind fkind;       /* FLOAT */
  const cx_mlir_type *elem;       /* COMPLEX, *_TENSOR, BUFFER */
  int rank;                       /* RANKED_TENSOR, BUFFER */
  const int64_t *dims;
  const cx_mlir_attr *encoding;   /* RANKED_TENSOR: NULL or e.g. vhlo.type_extensions_v1 */
  int n;                          /* TUPLE, FUTURE elements; FUNCTION inputs */
  const cx_mlir_type *const *types;
  int nout;                       /* FUNCTION outputs */
  const cx_mlir_type *const *outputs;
  const cx_mlir_quant *quant;     /* QUANT */
  /* OPAQUE: raw = the dialect's custom encoding (asm == NULL), or asm = the assembly-format
   * text MLIR wrote as a fallback ("!foo.bar<...>"). */
  const uint8_t *raw;
  size_t raw_len;
  const char *asm_text;
};

/* ------------------------------------------------------------------------------------------
 * Attributes. Locations are attributes too (kind LOC), as in MLIR. */
typedef enum cx_mlir_attr_kind {
  CX_MLIR_ATTR_ARRAY,           /* array: n, elems */
  CX_MLIR_ATTR_DICT,            /* dict: n, entries (names in the stored order) */
  CX_MLIR_ATTR_BOOL,            /* boolean */
  CX_MLIR_ATTR_INT,             /* integer: type, bits, value */
  CX_MLIR_ATTR_FLOAT,           /* fp: type, bits, value */
  CX_MLIR_ATTR_STRING,          /* str: bytes (may hold NUL), len; type (builtin typed string) or NULL */
  CX_MLIR_ATTR_TENSOR,          /* dense: vhlo.tensor_v1 and builtin dense int/fp elements */
  CX_MLIR_ATTR_TYPE,            /* type */
  CX_MLIR_ATTR_ENUM,            /* enm: which, value, name */
  CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS, /* alias */
  CX_MLIR_ATTR_SYMBOL_REF,      /* sym: builtin FlatSymbolRef (nnested 0) / SymbolRef */
  CX_MLIR_ATTR_UNIT,
  CX_MLIR_ATTR_TYPE_EXTENSIONS, /* ints: the bounds of vhlo.type_extensions_v1 */
  CX_MLIR_ATTR_RESULT_ACCURACY, /* acc */
  CX_MLIR_ATTR_DENSE_ARRAY,     /* darray: builtin DenseArrayAttr (array<i64: 1, 2>) */
  CX_MLIR_ATTR_DENSE_RESOURCE,  /* res: builtin dense_resource<key> with its blob */
  CX_MLIR_ATTR_RECORD,          /* rec: the sharding attrs of vhlo (mesh_v1, axis_ref_v1, ...) */
  CX_MLIR_ATTR_LOC,             /* loc */
  CX_MLIR_ATTR_OPAQUE           /* opaque: not decoded (the translator refuses it by dialect) */
} cx_mlir_attr_kind;

typedef enum cx_mlir_enum_kind {
  CX_MLIR_ENUM_COMPARISON_DIRECTION, /* EQ NE GE GT LE LT */
  CX_MLIR_ENUM_COMPARISON_TYPE,      /* NOTYPE FLOAT TOTALORDER SIGNED UNSIGNED */
  CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION, /* API_VERSION_UNSPECIFIED ... API_VERSION_TYPED_FFI */
  CX_MLIR_ENUM_FFT_TYPE,             /* FFT IFFT RFFT IRFFT */
  CX_MLIR_ENUM_PRECISION,            /* DEFAULT HIGH HIGHEST */
  CX_MLIR_ENUM_RNG_ALGORITHM,        /* DEFAULT THREE_FRY PHILOX */
  CX_MLIR_ENUM_RNG_DISTRIBUTION,     /* UNIFORM=1 NORMAL=2 */
  CX_MLIR_ENUM_TRANSPOSE,            /* TRANSPOSE_INVALID NO_TRANSPOSE TRANSPOSE ADJOINT */
  CX_MLIR_ENUM_RESULT_ACCURACY_MODE  /* DEFAULT HIGHEST TOLERANCE */
} cx_mlir_enum_kind;

typedef enum cx_mlir_loc_kind {
  CX_MLIR_LOC_UNKNOWN,
  CX_MLIR_LOC_FILE,      /* file, line, col (and end_line/end_col for a range, else 0) */
  CX_MLIR_LOC_NAME,      /* name, child (may be NULL when the child is unknown) */
  CX_MLIR_LOC_CALLSITE,  /* callee, caller */
  CX_MLIR_LOC_FUSED      /* n, locs; metadata or NULL */
} cx_mlir_loc_kind;

typedef struct cx_mlir_named_attr {
  const char *name;
  const cx_mlir_attr *value;
} cx_mlir_named_attr;

struct cx_mlir_attr {
  cx_mlir_attr_kind kind;
  const char *dialect;          /* "vhlo", "builtin", or the owning dialect of an OPAQUE one */
  union {
    struct { int n; const cx_mlir_attr *const *elems; } array;
    struct { int n; const cx_mlir_named_attr *entries; } dict;
    int boolean;
    /* bits: the value's low 64 bits as stored (two's complement, zero above width);
     * value: bits sign-extended from width for signless/signed types, zero-extended for
     * unsigned. Wider than 64 bits (builtin only) keeps the low word. */
    struct { const cx_mlir_type *type; uint64_t bits; int64_t value; } integer;
    /* bits: the IEEE-style encoding in the type's own width; value: what it means (exact for
     * every vhlo float type; NaN for f80/f128). */
    struct { const cx_mlir_type *type; uint64_t bits; double value; } fp;
    struct { const char *bytes; size_t len; const cx_mlir_type *type; } str;
    /* Dense elements exactly as MLIR's DenseElementsAttr keeps its raw data: row-major,
     * little-endian, each element in its storage size (ceil(bits/8) bytes: i1/bool and i2/i4,
     * f4/f6/f8 one byte each, bf16/f16 two, tf32/f32 four; complex = real then imaginary).
     * vhlo's bit-packed i1 blobs are unpacked to one byte (0 or 1) per element, as
     * VhloBytecode.cpp does. splat: size holds one element that stands for all of them
     * (MLIR's rule: a buffer of one element for a type of more than one element). */
    struct { const cx_mlir_type *type; const uint8_t *data; size_t size; int splat; int64_t count; } dense;
    const cx_mlir_type *type;
    struct { cx_mlir_enum_kind which; uint32_t value; const char *name; } enm;
    struct {
      int nout; const int64_t *output_tuple_indices;
      int64_t operand_index;
      int nop; const int64_t *operand_tuple_indices;
    } alias;
    struct { const char *root; int nnested; const char *const *nested; } sym;
    struct { int n; const int64_t *v; } ints;
    struct { double atol, rtol; int64_t ulps; const cx_mlir_attr *mode; } acc;
    struct { const cx_mlir_type *elem; int64_t count; const uint8_t *data; size_t size; } darray;
    /* key: the resource's name; data/size: its blob (NULL/0 when the file declares the key but
     * holds no blob: the reader refuses such a file unless the attr is never used). */
    struct { const cx_mlir_type *type; const char *key; const uint8_t *data; size_t size; uint64_t align; } res;
    /* name: "vhlo.mesh_v1" ...; ints/attrs in VhloBytecode.cpp's field order, absent optional
     * attrs as NULL. */
    struct { const char *name; int nints; const int64_t *ints; int nattrs; const cx_mlir_attr *const *attrs; } rec;
    struct {
      cx_mlir_loc_kind kind;
      const char *file;          /* FILE */
      int64_t line, col, end_line, end_col;
      const char *name;          /* NAME */
      const cx_mlir_attr *child; /* NAME */
      const cx_mlir_attr *callee, *caller; /* CALLSITE */
      int n; const cx_mlir_attr *const *locs; const cx_mlir_attr *metadata; /* FUSED */
    } loc;
    /* raw: the custom encoding (asm_text NULL) or asm_text: MLIR's assembly-format fallback. */
    struct { const uint8_t *raw; size_t raw_len; const char *asm_text; } opaque;
  } u;
};

/* ------------------------------------------------------------------------------------------
 * IR. Values are numbered (id) 0, 1, 2, ... in the order the reader defines them (block
 * arguments, then op results, depth first), unique over the whole tree; the printer names them
 * %<id>. */
struct cx_mlir_value {
  const cx_mlir_type *type;
  cx_mlir_op *def;              /* the defining op, or NULL for a block argument */
  cx_mlir_block *block;         /* the owning block of a block argument, else NULL */
  int index;                    /* result number or argument number */
  const cx_mlir_attr *loc;      /* a block argument's location (NULL: unknown) */
  int64_t id;
};

struct cx_mlir_block {
  cx_mlir_region *parent;       /* NULL for the tree's top-level block */
  int num_args;
  cx_mlir_value *args;
  int num_ops;
  cx_mlir_op **ops;
};

struct cx_mlir_region {
  cx_mlir_op *parent;
  int num_blocks;
  cx_mlir_block *blocks;
};

struct cx_mlir_op {
  const char *name;             /* dialect-qualified: "vhlo.add_v1", "builtin.module" */
  const char *dialect;          /* "vhlo", "builtin", ... */
  const cx_mlir_attr *loc;      /* a CX_MLIR_ATTR_LOC (or OPAQUE for a location of another dialect) */
  int num_operands;
  cx_mlir_value **operands;
  int num_results;
  cx_mlir_value *results;
  /* Inherent attributes (MLIR properties, for vhlo ops in ODS order: sorted by name) first,
   * then the discardable ones from the op's attribute dictionary, in stored (sorted) order.
   * num_props says how many of the first ones were properties. An op whose properties this
   * reader has no names for (not a vhlo op of VhloOps.td, not builtin.module) has one property
   * named "(properties)": OPAQUE with the raw bytes (or, for an op written while unregistered,
   * the entries of the dictionary MLIR stored instead). */
  int num_attrs, num_props;
  cx_mlir_named_attr *attrs;
  int num_successors;
  cx_mlir_block **successors;
  int num_regions;
  cx_mlir_region *regions;
  int isolated;                 /* regions are isolated from above (vhlo.func_v1, builtin.module) */
  cx_mlir_block *parent;
  size_t offset;                /* byte offset of the op's encoding in the input (for messages) */
};

typedef struct cx_mlir_dialect {
  const char *name;
  const uint8_t *version;       /* the dialect's version blob, or NULL */
  size_t version_len;
} cx_mlir_dialect;

typedef struct cx_mlir_tree {
  cx_arena arena;
  const char *filename;
  uint64_t bytecode_version;    /* 0..6 */
  const char *producer;         /* e.g. "StableHLO_v1.16.3" */
  int num_dialects;
  const cx_mlir_dialect *dialects;
  cx_mlir_block top;            /* usually one op: builtin.module */
  int64_t num_values;
} cx_mlir_tree;

/* Reads MLIR bytecode `bytes[0..n)`. `filename` (may be NULL) only names the input in messages.
 * Every malformed or truncated input is one error through ctx naming the byte offset (and the
 * op and its location when known): CXLA_ERR_PARSE; CXLA_ERR_OUT_OF_MEMORY when allocation fails.
 * Unknown attributes/types of any dialect become OPAQUE (the translator refuses them by name);
 * bytes that contradict the format never do. On error *out is NULL. */
cxla_status cx_mlirbc_read(cxla_context *ctx, const void *bytes, size_t n, const char *filename,
                           cx_mlir_tree **out);
/* 1 when the bytes start with MLIR bytecode's magic "ML\xEFR". */
int cx_mlirbc_sniff(const void *bytes, size_t n);
void cx_mlir_tree_free(cx_mlir_tree *t);

/* ---- lookups ---- */
/* The attribute `name` of op (properties and discardable alike), or NULL. */
const cx_mlir_attr *cx_mlir_op_attr(const cx_mlir_op *op, const char *name);
/* The entry `name` of a DICT attribute, or NULL (also when d is not a DICT). */
const cx_mlir_attr *cx_mlir_dict_get(const cx_mlir_attr *d, const char *name);
/* The first op named `name` directly in block b, or NULL. */
cx_mlir_op *cx_mlir_block_find(const cx_mlir_block *b, const char *name);
/* The vhlo.func_v1 (or func.func) in module op `module` whose sym_name is `sym`, or NULL. */
cx_mlir_op *cx_mlir_find_func(const cx_mlir_op *module, const char *sym);
/* A string attribute's text as a NUL-terminated string (vhlo.string_v1, builtin string), else
 * NULL. The bytes may hold a NUL themselves: use u.str.len when that matters. */
const char *cx_mlir_attr_cstr(const cx_mlir_attr *a);
/* Number of elements of a RANKED_TENSOR/BUFFER type (-1 if a dimension is dynamic or the
 * product overflows); 1 for rank 0. */
int64_t cx_mlir_type_numel(const cx_mlir_type *t);
/* Storage bytes of one element of a scalar (INT/INDEX/FLOAT/COMPLEX) type in dense data, or 0. */
size_t cx_mlir_elem_bytes(const cx_mlir_type *t);
/* The bit width of a float kind (19 for tf32, 4 for f4E2M1FN, 80/128 for f80/f128). */
unsigned cx_mlir_float_bits(cx_mlir_float_kind k);
/* What the encoding `bits` (low cx_mlir_float_bits(k) bits) of a float of kind k means: exact for
 * every kind but f80/f128 (NaN); NaN/inf as each format defines them (FN: no inf; FNUZ: 0x80 is
 * the NaN; E8M0: powers of two). For reading dense data of narrow floats. */
double cx_mlir_float_value(cx_mlir_float_kind k, uint64_t bits);
/* "EQ", "FLOAT", ... for an enum value, or NULL when the value is not one of the kind's. */
const char *cx_mlir_enum_name(cx_mlir_enum_kind which, uint32_t value);
/* The file:line:col (or name) of a location for messages: writes "file:line:col" or "name" or
 * "unknown" into buf (always NUL-terminated). */
void cx_mlir_loc_str(const cx_mlir_attr *loc, char *buf, size_t n);

/* ---- printing (tests, debugging): MLIR's generic form with types in builtin syntax:
 *   %3 = "vhlo.add_v1"(%1, %2) <{...}> {...} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
 * Regions nest with two-space indentation; locations are left out unless with_locs. Shared
 * attributes print once per use, so output stops growing past 16 MiB (a DAG of attributes can
 * stand for an exponentially large tree: walkers of attributes should bound their work too). */
void cx_mlir_print_type(cx_sb *sb, const cx_mlir_type *t);
void cx_mlir_print_attr(cx_sb *sb, const cx_mlir_attr *a);
void cx_mlir_print_op(cx_sb *sb, const cx_mlir_op *op, int indent, int with_locs);
/* The whole tree; returns the text (caller frees with cx_free) or NULL on OOM. */
char *cx_mlir_print_tree(const cx_mlir_tree *t, int with_locs);

#endif
