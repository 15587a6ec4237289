/* train_int.h — private to the training step (train_step.c, optimizer.c, train_loop.c): the
 * optimizer's update of one weight, and the while loop that runs K steps in one execution.
 *
 * The step is built on the gradient module's ENTRY, edited in place: its parameters are
 * renumbered (weights first, then the optimizer state, then the batch), the update of every
 * weight is appended, and the ROOT becomes (loss, new weights..., new state...). For K > 1 that
 * computation becomes the body of a loop whose ENTRY feeds it one slice of the batch stream per
 * trip. */
#ifndef CX_TRAIN_INT_H
#define CX_TRAIN_INT_H
#include "grad/grad_int.h"

/* State arrays per weight (SGD with momentum: the velocity; Adam: first and second moment)
 * and state scalars after them (Adam: the step count). */
int tr_state_per_weight(const cxla_optimizer *o);
int tr_state_scalars(const cxla_optimizer *o);

/* The updates of one step, built with emitter e. count: Adam's s32[] steps already taken
 * (NULL otherwise). */
typedef struct tr_opt {
  gr_em *e;
  const cxla_optimizer *o;
  cx_instr *count, *next_count;  /* Adam: count, count + 1 (= t, the step being taken) */
  cx_instr *learning_rate;       /* the parameter that carries it, or NULL: o->learning_rate */
  cx_instr *bias[2][2];          /* Adam: 1/(1 - b1^t), 1/(1 - b2^t), in f32 [0] and f64 [1] */
} tr_opt;

/* The new weight and new state arrays (state[i], new_state[i]: tr_state_per_weight entries)
 * of weight w with gradient g; NULL results leave the error in e->st. */
void tr_update(tr_opt *t, cx_instr *w, cx_instr *g, cx_instr *const *state, cx_instr **new_w, cx_instr **new_state);

/* Data-parallel (replicas > 1): each of the n values (the loss, the gradients) becomes its
 * mean over the replicas, through one all-reduce per float type (train_replicas.c); vals[i]
 * is replaced. Nothing for replicas <= 1. */
void tr_replica_mean(gr_em *e, int n, cx_instr **vals, int replicas);

/* Turns step computation S (parameters: ncarry carried arrays, then the batch, then nfixed
 * values every step reads whole (the learning rate); ROOT (loss, new carry...)) into the body
 * of a loop of K trips, and makes a new ENTRY for the module that takes the carried arrays,
 * each batch parameter with a leading dimension K and the nfixed values as they are, and
 * returns (the K losses, the final carry...). S must not be in the module's list of
 * computations; the new ENTRY and the loop's computations are added to it. */
cxla_status tr_loop(gr_module *g, cx_comp *S, int ncarry, int nfixed, int64_t K);

#endif
