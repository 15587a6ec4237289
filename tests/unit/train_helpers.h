/* train_helpers.h — what the training-step tests share: the small models they train, building
 * a step (cxla_module_train_step), running it on literals, and the optimizers' updates worked
 * out in double from the formulas of docs/train.md. */
#ifndef CX_TRAIN_HELPERS_H
#define CX_TRAIN_HELPERS_H
#include "test.h"

/* The quadratic model in element type `type` ("f64", ...): parameters x T[4] (data), w T[4],
 * b T[] (the weights: wrt = {1, 2}); loss sum((w + b - x)^2). Into buf. */
const char *th_quad_text(char *buf, size_t n, const char *type);
/* A small MLP with softmax cross-entropy, f32: w1 [16,8], b1 [8], w2 [8,4], b2 [4] (the weights:
 * parameters 0-3), x [B,16], one-hot y [B,4]. */
extern const char th_mlp_text[];
enum { TH_MLP_BATCH = 6 };

cxla_module *th_parse(const char *text);
/* The step of text's module for wrt and o (NULL after a failed check). */
cxla_module *th_step(const char *text, const int *wrt, int nwrt, const cxla_optimizer *o);
/* An array literal of type t, rank 1 of n elements (n < 0: a scalar), from v. */
cxla_literal *th_lit(cxla_type t, int n, const double *v);
/* A literal of the shape of m's ENTRY parameter i filled with a seeded ramp in [-1, 1]
 * (zeros: all 0; the one-hot kind for labels is made by the test). */
cxla_literal *th_param_lit(cxla_module *m, int i, uint64_t seed, int zeros);
/* Runs m once on backend ("interp", "cpu"); NULL (test failure recorded) on error. */
cxla_literal *th_run(cxla_module *m, const char *backend, int nargs, cxla_literal *const *args);

/* ---- the reference: one step in double over a flat vector of every weight element ---- */
typedef struct th_ref {
  cxla_optimizer o;
  int n;
  double w[8], g[8], s0[8], s1[8]; /* s0: velocity or Adam's first moment; s1: second moment */
  int count;
} th_ref;
/* The quadratic model's loss and gradients at w[0..3], b = w[4], x. */
double th_quad_grad(th_ref *r, const double *x);
/* One update of r->w and the state from r->g. */
void th_ref_update(th_ref *r);

/* |got - want| <= tol * max(1, |want|), else a failure naming what and i. */
void th_near(const char *what, int i, double got, double want, double tol);

#endif
