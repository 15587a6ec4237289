/* infer.h — private to the verifier: the state one shape inference carries, message helpers,
 * and the per-op-group inference functions (src/ir/infer*.c). */
#ifndef CX_INFER_H
#define CX_INFER_H
#include "ir/verify.h"

typedef struct cx_infer {
  cx_instr *in;
  cx_module *m;
  /* Where tuple element arrays of the result go: the module arena for cx_infer_shape (the
   * builder keeps the result), a scratch arena while verifying (so verifying a module between
   * passes leaves no garbage in it). */
  cx_arena *arena;
  /* Set by verify_module, which indexes every computation's parameters first; otherwise a
   * callee without c->params gets indexed (or scanned, when it has none) on use. */
  int callees_indexed;
  char sbuf[6][256]; /* rotating buffers for shapes and lists quoted in messages */
  int sidx;
} cx_infer;

/* Runs inference for ic->in (operand counts, called-computation counts, then the op's rule). */
cxla_status cx_infer_run(cx_infer *ic, cx_shape *out);

/* ---- messages: every error reads "<op> <name>: <what was wrong and what was expected>" ---- */
cxla_status cx_vfail(cx_infer *ic, const char *fmt, ...) CX_PRINTF(2, 3);
const char *cx_vshape(cx_infer *ic, const cx_shape *s);    /* "f32[2,3]" */
const char *cx_vints(cx_infer *ic, const cx_ints *v);      /* "{0,1}" */
const char *cx_vtype(cxla_type t);                         /* "f32", "tuple", "invalid" */

/* ---- shapes ---- */
static inline int cx_varray(const cx_shape *s) { return cx_type_is_array(s->type); }
static inline const cx_shape *cx_vop(cx_infer *ic, int i) { return &ic->in->ops[i]->shape; }
/* Why s is not a well-formed shape (type, rank, dims, element count, layout), or NULL. */
const char *cx_shape_problem(const cx_shape *s, char *buf, size_t n);
/* Operand i must be an array; `what` names it in the message ("lhs"). */
cxla_status cx_vneed_array(cx_infer *ic, int i, const char *what);
/* Operand i must be a scalar array. */
cxla_status cx_vneed_scalar(cx_infer *ic, int i, const char *what);
/* The declared shape (in->shape) must be well formed and an array. */
cxla_status cx_vdeclared_array(cx_infer *ic);
/* An array result without layout; dims NULL leaves zeros for the caller to fill. */
void cx_vset_array(cx_shape *out, cxla_type t, int rank, const int64_t *dims);
/* Makes *out a tuple of n elements allocated in ic->arena (zeroed); returns them or NULL (OOM
 * reported). */
cx_shape *cx_vtuple(cx_infer *ic, cx_shape *out, int n);
/* Drops the layout of a copied top-level shape (inferred shapes carry none). */
void cx_vplain(cx_shape *s);
/* Checks a list of dimension numbers: each in [0, rank) and no number twice. `what` names the
 * attribute. used (CXLA_MAX_RANK flags, may be NULL) collects and checks against earlier lists. */
cxla_status cx_vdims(cx_infer *ic, const cx_ints *v, int rank, const char *what, char *used);
/* Whether a list is strictly increasing. */
int cx_vsorted(const cx_ints *v);

/* ---- called computations ---- */
/* Called computation k must exist, have a ROOT and parameters numbered 0..n-1; with
 * nparams >= 0 it must take exactly that many. `role` names it ("to_apply"). */
cxla_status cx_vcallee(cx_infer *ic, int k, const char *role, int nparams);
/* Checks a reducer: 2n scalar parameters (accumulators of acc[i], then elements of elem[i]),
 * returning a scalar of acc[0] (n == 1) or an n-tuple of scalars of acc[i]. *is_tuple tells
 * which form it returns. */
cxla_status cx_vreducer(cx_infer *ic, int k, const char *role, int n, const cxla_type *acc,
                        const cxla_type *elem, int *is_tuple);

/* ---- dot / convolution result types ---- */
/* The element type a dot or convolution of lhs x rhs produces when its declared type is
 * `declared`: the declared type if the operands may widen to it, else the operand type. */
cxla_type cx_vaccum_type(cxla_type lhs, cxla_type rhs, cxla_type declared);

/* ---- window arithmetic (reduce-window, select-and-scatter, convolution) ---- */
/* Output size of one window dimension over an input of size `dim`. */
cxla_status cx_vwindow_dim(cx_infer *ic, int i, int64_t dim, const cx_window_dim *w, int64_t *out);

static inline int cx_add_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static inline int cx_mul_ovf(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

/* ---- per-op rules, named by ops.def's `infer` column; each fills *out or reports an error.
 * Variadic ops check their own operand count: what the operands mean differs per op. ---- */
/* The rule of custom-call __op$block_scaled_dot (infer_scaled_dot.c). */
cxla_status cx_infer_block_scaled_dot(cx_infer *ic, cx_shape *out);
#define X(id, name, arity, cls, cost, runs, shape, types, called, flags, infer, ...) \
  cxla_status cx_infer_##infer(cx_infer *ic, cx_shape *out);
#include "ir/ops.def"
#undef X
/* Elementwise operand i must have an element type the op accepts (ops.def's `types`). */
cxla_status cx_vcheck_type(cx_infer *ic, int i);

#endif
