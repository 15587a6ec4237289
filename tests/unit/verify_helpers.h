/* verify_helpers.h — builds modules through the IR API for the verifier tests (until the HLO
 * parser lands): shapes, windows and dim_labels come from short strings in HLO syntax. */
#ifndef VERIFY_HELPERS_H
#define VERIFY_HELPERS_H
#include "ir/ir.h"
#include "ir/verify.h"
#include "test.h"

/* The module and computation being built. */
extern cx_module *vt_m;
extern cx_comp *vt_c;

/* Starts a module (its file name is "t.hlo" so errors read "t.hlo:LINE:COL: error: ..."). */
void vt_begin(void);
void vt_end(void); /* frees the module */
/* Starts a computation; vt_finish sets its ROOT and adds it to the module. */
cx_comp *vt_comp(const char *name);
cx_comp *vt_finish(cx_instr *root, int is_entry);

/* "f32[2,3]", "pred[]", "f32[2,3]{0,1}", "(f32[], s32[2])", "token[]". */
cx_shape vt_shape(const char *s);
/* An instruction named `name` with a declared shape and operands; with shape NULL it takes the
 * inferred shape when inference succeeds (as the builder does), else f32[]. */
cx_instr *vt_op(cx_op op, const char *name, const char *shape, int nops, ...);
cx_instr *vt_param(int64_t number, const char *name, const char *shape);
/* A zero constant of that shape. */
cx_instr *vt_const(const char *name, const char *shape);
void vt_called(cx_instr *in, int n, ...);
void vt_at(cx_instr *in, int line, int col);
void vt_ints(cx_ints *dst, int n, const int64_t *v);
#define VT_INTS(field, ...) \
  vt_ints(&(field), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
/* "size=2x2 stride=2x1 pad=0_1x0_0 lhs_dilate=1x2 rhs_dilate=1x1" (omitted parts default). */
void vt_window(cx_instr *in, const char *spec);
/* "b01f_01io->b01f" */
void vt_labels(cx_instr *in, const char *spec);
/* A computation (x, y) -> x OP y over scalars of `type` ("f32"), added to the module. */
cx_comp *vt_binary_comp(const char *name, cx_op op, const char *type);

/* Parses "HloModule m / ENTRY e { body }" as t.hlo and verifies it: "ok", or the error message
 * (a static buffer, overwritten by the next call). */
const char *vt_verify_body(const char *body);

/* Inference result as text ("f32[2,3]"), or "ERROR: <message>". */
const char *vt_infer(cx_instr *in);
/* Module verification: "ok" or the error message. */
const char *vt_verify(void);

#define CHECK_INFER(in, want) CHECK_STR_EQ(vt_infer(in), want)
#define CHECK_STR_EQ(got, want)                                                        \
  do {                                                                                 \
    const char *g_ = (got), *w_ = (want);                                              \
    if (strcmp(g_, w_)) test_fail(__FILE__, __LINE__, "got '%s', expected '%s'", g_, w_); \
  } while (0)
/* The inference fails with a message containing `want`. */
#define CHECK_INFER_ERR(in, want) CHECK_STR_CONTAINS(vt_infer(in), want)

#endif
