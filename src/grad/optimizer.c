/* optimizer.c — the update math the training step builds after the gradients, as optax
 * computes it (docs/train.md):
 *   SGD:            w' = w - lr g
 *   with momentum:  v' = g + mu v;  w' = w - lr v'   (nesterov: w' = w - lr (g + mu v'))
 *   Adam:           m' = (1 - b1) g + b1 m;  v' = (1 - b2) g^2 + b2 v;  t = count + 1;
 *                   w' = w - lr (m' c1) / (sqrt(v' c2) + eps),  c1 = 1/(1 - b1^t), c2 = 1/(1 - b2^t)
 * The bias corrections are scalars: their reciprocals are taken once per step and multiply
 * every element, where optax divides every element by them. That leaves one divide and one
 * square root per element instead of three divides and a root (the divider bounds Adam's
 * kernels on the cpu: docs/train.md); m^ and v^ may differ from optax's by an ulp.
 * f32 and f64 weights are updated in their own type; f16 and bf16 weights (and their state)
 * are widened to f32, updated there and rounded once, so that lr g does not vanish below the
 * narrow type's precision before it meets w. Hyper-parameters are rounded to the type they are
 * used in, as jax rounds Python floats; a learning rate given as a parameter is converted to
 * it the same way (f64 -> f32), so both forms give the same step. */
#include "grad/train_int.h"

int tr_state_per_weight(const cxla_optimizer *o) {
  return o->kind == CXLA_OPTIMIZER_ADAM ? 2 : o->momentum > 0 ? 1 : 0;
}

int tr_state_scalars(const cxla_optimizer *o) { return o->kind == CXLA_OPTIMIZER_ADAM; }

static cxla_type compute_type(cxla_type t) { return t == CXLA_F64 ? CXLA_F64 : CXLA_F32; }

/* v as an array like x (x's dims, type t) */
static cx_instr *full(gr_em *e, cx_instr *x, cxla_type t, double v) { return x ? gr_full(e, t, &x->shape, v) : NULL; }

/* a * x */
static cx_instr *scale(gr_em *e, double a, cx_instr *x) {
  return x ? gr_bin(e, CX_OP_MULTIPLY, full(e, x, x->shape.type, a), x) : NULL;
}

/* Adam's 1/(1 - b^t) in type ct, made once per type. */
static cx_instr *bias_correction(tr_opt *t, cxla_type ct, int which) {
  int k = ct == CXLA_F64;
  if (!t->bias[k][which]) {
    gr_em *e = t->e;
    double b = which ? t->o->beta2 : t->o->beta1;
    cx_instr *step = gr_convert(e, t->next_count, ct);
    cx_instr *pw = gr_bin(e, CX_OP_POWER, gr_scalar(e, ct, b), step);
    cx_instr *corr = gr_bin(e, CX_OP_SUBTRACT, gr_scalar(e, ct, 1), pw);
    t->bias[k][which] = gr_bin(e, CX_OP_DIVIDE, gr_scalar(e, ct, 1), corr);
  }
  return t->bias[k][which];
}

static cx_instr *bcast_like(gr_em *e, cx_instr *scalar, cx_instr *x) {
  return x && x->shape.rank ? gr_bcast(e, scalar, x->shape.rank, x->shape.dims, NULL) : scalar;
}

void tr_update(tr_opt *t, cx_instr *w, cx_instr *g, cx_instr *const *state, cx_instr **new_w, cx_instr **new_state) {
  gr_em *e = t->e;
  const cxla_optimizer *o = t->o;
  cxla_type wt = w->shape.type, ct = compute_type(wt);
  cx_instr *wc = gr_convert(e, w, ct), *gc = gr_convert(e, g, ct), *step;
  if (o->kind == CXLA_OPTIMIZER_ADAM) {
    cx_instr *m = gr_convert(e, state[0], ct), *v = gr_convert(e, state[1], ct);
    cx_instr *m1 = gr_bin(e, CX_OP_ADD, scale(e, 1 - o->beta1, gc), scale(e, o->beta1, m));
    cx_instr *g2 = gr_bin(e, CX_OP_MULTIPLY, gc, gc);
    cx_instr *v1 = gr_bin(e, CX_OP_ADD, scale(e, 1 - o->beta2, g2), scale(e, o->beta2, v));
    cx_instr *mhat = gr_bin(e, CX_OP_MULTIPLY, m1, bcast_like(e, bias_correction(t, ct, 0), m1));
    cx_instr *vhat = gr_bin(e, CX_OP_MULTIPLY, v1, bcast_like(e, bias_correction(t, ct, 1), v1));
    cx_instr *den = gr_bin(e, CX_OP_ADD, gr_un(e, CX_OP_SQRT, vhat), full(e, vhat, ct, o->epsilon));
    step = gr_bin(e, CX_OP_DIVIDE, mhat, den);
    new_state[0] = gr_convert(e, m1, wt);
    new_state[1] = gr_convert(e, v1, wt);
  } else if (o->momentum > 0) {
    cx_instr *v1 = gr_bin(e, CX_OP_ADD, gc, scale(e, o->momentum, gr_convert(e, state[0], ct)));
    step = o->nesterov ? gr_bin(e, CX_OP_ADD, gc, scale(e, o->momentum, v1)) : v1;
    new_state[0] = gr_convert(e, v1, wt);
  } else {
    step = gc;
  }
  cx_instr *lr_step = t->learning_rate ? gr_bin(e, CX_OP_MULTIPLY, bcast_like(e, gr_convert(e, t->learning_rate, ct), step), step)
                                        : scale(e, o->learning_rate, step);
  *new_w = gr_convert(e, gr_bin(e, CX_OP_SUBTRACT, wc, lr_step), wt);
}
