/* bytecode_int.h — what the parts of the MLIR bytecode reader share: a bounds-checked cursor
 * over the input, the reader's tables (strings, dialects, op names, the attribute/type table,
 * properties, resources) and the error path. Every read goes through a cursor, so no length or
 * count from the file is trusted before it is compared with the bytes that remain. */
#ifndef CX_STABLEHLO_BYTECODE_INT_H
#define CX_STABLEHLO_BYTECODE_INT_H

#include "stablehlo/mlir.h"

/* A window [p, end) of the input; base is the input's first byte, so offsets are file offsets. */
typedef struct cx_bc_cur {
  const uint8_t *base, *p, *end;
} cx_bc_cur;

/* One entry of the attribute or type table: its dialect, encoding and bytes, and once read
 * what it decoded to (state: 0 not yet, 1 being read (a cycle if met again), 2 done). */
typedef struct cx_bc_entry {
  int64_t dialect;
  int custom;
  const uint8_t *data;
  size_t len;
  int state;
  const void *value;
} cx_bc_entry;

typedef struct cx_bc_opname {
  int64_t dialect;
  const char *name; /* "dialect.op" */
  int registered;   /* -1 when the bytecode version does not say */
} cx_bc_opname;

typedef struct cx_bc_resource {
  const char *key;
  const uint8_t *data; /* NULL when the entry is not a blob or is empty */
  size_t size;
  uint64_t align;
} cx_bc_resource;

/* The values a run of regions can refer to: MLIR's ValueScope (one per isolated region). */
typedef struct cx_bc_scope {
  cx_mlir_value **slots;
  int64_t n, cap;
} cx_bc_scope;

typedef struct cx_bc {
  cxla_context *ctx;
  const char *filename;
  const uint8_t *buf;
  size_t size;
  cx_mlir_tree *tree;
  cx_arena *A;
  uint64_t version;
  int failed;
  int depth;                     /* nesting of attribute/type reads and of regions */
  const cx_mlir_op *cur_op;      /* the op being read, for messages */
  const char *cur_opname;
  int64_t nstrings;
  const char **strings;          /* NUL-terminated copies */
  size_t *string_lens;
  int64_t ndialects;
  const char **dialect_names;
  int64_t nopnames;
  cx_bc_opname *opnames;
  int64_t nattrs, ntypes;
  cx_bc_entry *attrs, *types;
  int64_t nprops;
  const uint8_t **props;         /* where each properties entry starts */
  const uint8_t *props_end;
  int64_t nresources;
  cx_bc_resource *resources;     /* dialect resources, in handle order */
  int64_t next_value_id;
} cx_bc;

/* Limits on nesting: deeper input is refused (with an offset) rather than risking the stack. */
#define CX_BC_MAX_DEPTH 256

/* ---- errors (bytecode.c): the first failure wins; later ones return the same status. ---- */
cxla_status cx_bc_fail(cx_bc *bc, const uint8_t *at, const char *fmt, ...) CX_PRINTF(3, 4);
cxla_status cx_bc_oom(cx_bc *bc);
void *cx_bc_alloc(cx_bc *bc, size_t n);              /* zeroed arena memory; sets the error */
void *cx_bc_array(cx_bc *bc, int64_t n, size_t elem); /* n elements, n >= 0 checked */

/* ---- cursor primitives (bytecode_attrs.c) ---- */
static inline size_t cx_bc_left(const cx_bc_cur *c) { return (size_t)(c->end - c->p); }
cxla_status cx_bc_byte(cx_bc *bc, cx_bc_cur *c, uint8_t *v);
cxla_status cx_bc_bytes(cx_bc *bc, cx_bc_cur *c, size_t n, const uint8_t **v);
cxla_status cx_bc_varint(cx_bc *bc, cx_bc_cur *c, uint64_t *v);
cxla_status cx_bc_svarint(cx_bc *bc, cx_bc_cur *c, int64_t *v);
cxla_status cx_bc_varint_flag(cx_bc *bc, cx_bc_cur *c, uint64_t *v, int *flag);
/* A count of things of at least min_bytes each that must fit in what is left. */
cxla_status cx_bc_count(cx_bc *bc, cx_bc_cur *c, size_t min_bytes, const char *what, int64_t *n);
cxla_status cx_bc_string(cx_bc *bc, cx_bc_cur *c, const char **s, size_t *len);
cxla_status cx_bc_blob(cx_bc *bc, cx_bc_cur *c, const uint8_t **data, size_t *len);
cxla_status cx_bc_align(cx_bc *bc, cx_bc_cur *c, uint64_t align);
/* A section header: id (alignment bit stripped) and its data as a cursor. */
cxla_status cx_bc_section(cx_bc *bc, cx_bc_cur *c, int *id, cx_bc_cur *data);
/* APInt of a known width (MLIR's readAPIntWithKnownWidth); keeps the low 64 bits. */
cxla_status cx_bc_apint(cx_bc *bc, cx_bc_cur *c, unsigned width, uint64_t *bits);
cxla_status cx_bc_svarints(cx_bc *bc, cx_bc_cur *c, int *n, const int64_t **v);

/* ---- the attribute/type table (bytecode_attrs.c) ---- */
cxla_status cx_bc_attr_table(cx_bc *bc, cx_bc_cur sect, cx_bc_cur offs);
cxla_status cx_bc_attr_at(cx_bc *bc, const uint8_t *at, uint64_t idx, const cx_mlir_attr **out);
cxla_status cx_bc_type_at(cx_bc *bc, const uint8_t *at, uint64_t idx, const cx_mlir_type **out);
/* A reference (varint index) read from c. */
cxla_status cx_bc_attr_ref(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out);
cxla_status cx_bc_type_ref(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out);
cxla_status cx_bc_attr_refs(cx_bc *bc, cx_bc_cur *c, int *n, const cx_mlir_attr *const **out);
cxla_status cx_bc_type_refs(cx_bc *bc, cx_bc_cur *c, int *n, const cx_mlir_type *const **out);
cxla_status cx_bc_string_ref(cx_bc *bc, cx_bc_cur *c, const char **s, size_t *len);
cx_mlir_attr *cx_bc_new_attr(cx_bc *bc, cx_mlir_attr_kind kind, const char *dialect);
cx_mlir_type *cx_bc_new_type(cx_bc *bc, cx_mlir_type_kind kind, const char *dialect);

/* ---- the dialects' custom encodings: decode one entry from c (which holds exactly it) ---- */
cxla_status cx_vhlo_read_attr(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out);
cxla_status cx_vhlo_read_type(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out);
cxla_status cx_builtin_read_attr(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **out);
cxla_status cx_builtin_read_type(cx_bc *bc, cx_bc_cur *c, const cx_mlir_type **out);
/* The sorted attribute names of a vhlo op's properties ("vhlo.add_v1" -> none), or -1 when the
 * op is not one VHLO knows (vhlo_props.c). */
int cx_vhlo_prop_names(const char *opname, const char *const **names);
/* Dense data checks shared by vhlo.tensor_v1 and builtin dense elements (vhlo_codes.c). */
cxla_status cx_bc_dense(cx_bc *bc, const uint8_t *at, const cx_mlir_type *type, const uint8_t *blob,
                        size_t len, int unpack_bool, cx_mlir_attr *a);
/* Sets a->u.integer from the stored bits of an integer of type t (builtin_codes.c). */
void cx_bc_set_int(cx_mlir_attr *a, const cx_mlir_type *t, uint64_t bits);

/* ---- the IR section (bytecode_ir.c) ---- */
cxla_status cx_bc_read_ir(cx_bc *bc, cx_bc_cur c);

#endif
