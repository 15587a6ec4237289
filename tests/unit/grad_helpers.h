/* grad_helpers.h — gradient checks for the grad tests: a case is an HLO module (f64) written
 * by a generator from a seeded random source (shapes, dims in any position), the parameters
 * to differentiate and input ranges. gh_check differentiates it (cxla_module_grad), runs the
 * gradient module on the interpreter and compares every gradient element with a central
 * finite difference of the original module (also on the interpreter), then runs the gradient
 * module on the cpu backend and compares it with the interpreter. */
#ifndef CX_GRAD_HELPERS_H
#define CX_GRAD_HELPERS_H
#include <stdint.h>
#include "test.h"

#define GH_MAX_PARAMS 16
#define GH_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct gh_case {
  char text[32768];
  int len;
  int nparams;
  int wrt[GH_MAX_PARAMS], nwrt;
  /* inputs: floats uniform in [lo, hi], integers uniform in [lo, hi] (default -1..1, 0..3) */
  double lo[GH_MAX_PARAMS], hi[GH_MAX_PARAMS];
  int is_int[GH_MAX_PARAMS];
  double zero_share[GH_MAX_PARAMS]; /* floats: the share of elements set to exactly 0 (default none) */
  double fd_h;          /* finite-difference step relative to 1 + |x| (default 1e-6) */
  double fd_tol;        /* tolerance scale (default 1: 1e-6 abs + 1e-6 rel) */
  uint64_t rng;
  char sbuf[8][96];
  int sidx;
} gh_case;

typedef void (*gh_gen)(gh_case *c);
/* A named generator; tables of them are the per-op gradient tests. */
typedef struct gh_entry {
  const char *name;
  gh_gen gen;
} gh_entry;

/* The per-op tables (test_grad_*.c); test_grad_errors.c checks that together they reach
 * every op that has a gradient rule. */
extern const gh_entry gh_elementwise_cases[], gh_shape_cases[], gh_index_cases[], gh_reduce_cases[],
    gh_dot_conv_cases[], gh_control_cases[], gh_model_cases[];
extern const int gh_elementwise_ncases, gh_shape_ncases, gh_index_ncases, gh_reduce_ncases, gh_dot_conv_ncases,
    gh_control_ncases, gh_model_ncases;

/* ---- writing a case ---- */
void gh_init(gh_case *c, uint64_t seed);
/* A random integer in [lo, hi]. */
int64_t gh_int(gh_case *c, int64_t lo, int64_t hi);
void gh_add(gh_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "f64[2,3]" (or another type) from dims; valid for the next few calls. */
const char *gh_shape(gh_case *c, const char *type, const int64_t *dims, int rank);
/* "{0,2}" from a list. */
const char *gh_list(gh_case *c, const int64_t *v, int n);
/* Random dims: rank r, each in [1, max]. */
void gh_dims(gh_case *c, int64_t *dims, int r, int max);
/* A random permutation of 0..n-1. */
void gh_perm(gh_case *c, int64_t *p, int n);
/* The module header and the scalar computations add/max/min/mul (f64) and add_f32,
 * then "ENTRY e {". */
void gh_begin(gh_case *c);
/* Declares the next parameter `name` of shape; wrt: differentiate with respect to it. */
void gh_param(gh_case *c, const char *name, const char *shape, int wrt);
/* Ends ENTRY with loss = sum(out * w) over a new random parameter w of out's shape (so the
 * cotangent reaching out is not uniform). out is f64 of dims/rank. */
void gh_end_loss(gh_case *c, const char *out, const int64_t *dims, int rank);
/* Ends ENTRY with the scalar `out` as ROOT. */
void gh_end_scalar(gh_case *c, const char *out);

/* ---- checking ---- */
/* Differentiates the case and checks it as described above; failures are test failures
 * naming `what`. */
void gh_check(const gh_case *c, const char *what, int on_cpu);
/* Runs each table entry for `seeds` seeds (seed 0 also on the cpu backend). */
void gh_run_table(const gh_entry *t, int n, int seeds);

#endif
