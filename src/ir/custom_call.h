/* custom_call.h — the custom-call targets cxla understands (ir/custom_calls.def), looked up
 * from an instruction's custom_call_target=, and their backend_config attributes. */
#ifndef CX_CUSTOM_CALL_H
#define CX_CUSTOM_CALL_H
#include "ir/ir.h"

typedef enum cx_cc_kind {
#define CX_CC_KIND(id, check) CX_CC_##id,
#include "ir/custom_calls.def"
  CX_CC_KIND_COUNT
} cx_cc_kind;

typedef enum cx_cc_target {
#define CX_CC_TARGET(id, name, kind, type) CX_CCT_##id,
#include "ir/custom_calls.def"
  CX_CC_TARGET_COUNT
} cx_cc_target;

typedef struct cx_cc_info {
  const char *name;   /* as custom_call_target= spells it */
  cx_cc_kind kind;
  cxla_type type;     /* of its matrices; CXLA_INVALID where the kind decides */
} cx_cc_info;

/* The target of custom-call `in` (CX_CCT_*), or -1 when it is no custom-call cxla knows. */
int cx_cc_target_of(const cx_instr *in);
const cx_cc_info *cx_cc_info_of(cx_cc_target t);
/* The integer value of `key` in in's backend_config dictionary, as jax writes typed-FFI
 * attributes ({uplo = 76 : ui8, mode = 86 : ui8}; true/false read as 1/0; the dictionary
 * may also be a quoted string): 1 and *v, or 0 when the key is absent or not an integer. */
int cx_cc_config_int(const cx_instr *in, const char *key, int64_t *v);

/* A LAPACK call (kinds POTRF..GEEV, GTSV, GEQP3, GEHRD, SYTRD, ORMQR, GEES, and jaxlib's
 * GTSV_PERTURBED) as the interpreter and the cpu backend both run it, read
 * from the instruction once its shapes are verified: batches of m x n matrices (the operand
 * a; b for trsm, whose a is k x k), and the options in LAPACK's terms. */
typedef struct cx_lapack_call {
  cx_cc_kind kind;
  cxla_type type;
  int64_t batch, m, n, k;  /* k: trsm a's order, orgqr/ormqr tau's length, the others min(m, n) */
  int64_t acols;           /* ormqr: a's columns (its rows are m when left, else n) */
  int64_t ilo, ihi;        /* gehrd: low and high, 1-based as LAPACK's */
  int lower;               /* uplo 'L' */
  int left;                /* trsm side 'L'; ormqr left */
  int trans;               /* trsm trans_x: 0 'N', 1 'T', 2 'C'; ormqr transpose (T real, C complex) */
  int unit_diag;           /* trsm diag 'U' */
  char mode;               /* syevd 'V'/'N', gesdd/gesvd 'A'/'S'/'N', geev compute_right 'V'/'N', gees 'V'/'N' */
  char mode_left;          /* geev compute_left 'V'/'N' */
} cx_lapack_call;
/* 1 and *c for a LAPACK custom-call of a verified module, else 0. */
int cx_lapack_call_of(const cx_instr *in, cx_lapack_call *c);

#endif
