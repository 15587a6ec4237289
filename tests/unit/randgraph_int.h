/* randgraph_int.h — the generator's internals shared by randgraph.c (pool, shapes, adapting a
 * value to a wanted shape), randgraph_ops.c (elementwise, shape, reduce, dot, gather, window
 * ops) and randgraph_ctrl.c (while loops, conditionals). */
#ifndef RANDGRAPH_INT_H
#define RANDGRAPH_INT_H
#include "randgraph.h"
#include "api/api.h"

#define RG_MAX_POOL 512

/* A value the generator may use: an op of the current builder with its array shape. */
typedef struct gval {
  cxla_op op;
  cx_instr *in;
} gval;

/* One computation under construction. */
typedef struct gcomp {
  cxla_builder *b;
  gval pool[RG_MAX_POOL];
  int npool;
  int analysed;      /* instructions of b->c analysed so far */
  int depth;         /* 0: ENTRY; control-flow bodies nest */
  const rg_val *pleaves; /* leaves of parameter 0 of a nested computation */
  int npleaves;
} gcomp;

typedef struct gen {
  cxla_context *ctx;
  cx_module *m;
  rg_config cfg;
  rg_rng rs;         /* structure: which op, which operands */
  rg_rng rz;         /* sizes and values: dims, slice bounds, constants */
  rg_bounds bd;
  gcomp *cur;
  rg_param *params;  /* ENTRY parameters */
  int nparams, pcap;
  int ncomps;        /* for unique computation names */
  int budget;        /* element count cap for new shapes */
  int big;           /* a ~100k-element graph */
  int failed;        /* a builder call failed (generator bug); the builder holds the message */
  cxla_computation *reducers[64];
  char reducer_names[64][24];
  int nreducers;
} gen;

/* ---- randgraph.c ---- */
int rg_has(const gen *g, unsigned feature);
int rg_chance(gen *g, double p);     /* structure stream */
int rg_size(gen *g, int lo, int hi); /* size stream, in [lo, hi] */
/* Analyses the instructions the builder added since the last call; the value of op. */
gval rg_v(gen *g, cxla_op op);
/* Info of a value's first leaf. */
rg_val rg_info(gen *g, gval v);
#define RG_SHAPE(v) (&(v).in->shape)
int rg_ok(gval v);                    /* built (op id != 0) */
/* Adds v to the pool if it is usable (built, an array, not bad). Returns v. */
gval rg_keep(gen *g, gval v);
int rg_is_exact(gen *g, gval v);      /* err == 0, no NaN/inf */
double rg_mag(gen *g, gval v);

/* Value picking and shaping. */
typedef int (*gfilter)(gen *g, gval v, const void *arg);
int rg_pick(gen *g, gfilter f, const void *arg, gval *out); /* a pool value, recent ones first */
cxla_type rg_pick_type(gen *g);
void rg_pick_shape(gen *g, int *rank, int64_t *dims);
/* A value of exactly this type and shape: a pool value adapted (convert, broadcast, reshape,
 * slice, pad, transpose), or a fresh parameter / iota / constant. exact: only exact values. */
gval rg_get(gen *g, cxla_type t, int rank, const int64_t *dims, int exact);
gval rg_fit(gen *g, gval v, cxla_type t, int rank, const int64_t *dims); /* invalid if it cannot */
gval rg_fresh(gen *g, cxla_type t, int rank, const int64_t *dims, int exact);
gval rg_param_new(gen *g, cxla_type t, int rank, const int64_t *dims, rg_val range);
gval rg_const(gen *g, cxla_type t, double v);                           /* scalar */
gval rg_splat(gen *g, cxla_type t, int rank, const int64_t *dims, double v);
gval rg_bcast_to(gen *g, gval scalar, const cx_shape *s);
/* An index type (s32 mostly) for dimensions up to max_dim, and an exact scalar of it in
 * [lo, hi] (a constant or a parameter with that range). */
cxla_type rg_index_type(gen *g, int64_t max_dim);
gval rg_index_scalar(gen *g, cxla_type t, int64_t lo, int64_t hi);
/* A computation reducing (T, T) -> T with op (add, maximum, ...), cached per module. */
cxla_computation *rg_reducer(gen *g, cxla_type t, const char *op);
cxla_computation *rg_argmax_reducer(gen *g, cxla_type t, int is_min);
/* A fresh computation name with this prefix. */
const char *rg_comp_name(gen *g, const char *prefix, char *buf, size_t n);
/* Runs one random step in the current computation (nested computations included). */
void rg_step(gen *g);

/* ---- randgraph_ops.c ---- */
void rg_op_unary(gen *g);
void rg_op_binary(gen *g);
void rg_op_compare_select(gen *g);
void rg_op_clamp(gen *g);
void rg_op_convert(gen *g);
void rg_op_shape(gen *g);
void rg_op_dynamic(gen *g);
void rg_op_gather(gen *g);
void rg_op_reduce(gen *g);
void rg_op_argmax(gen *g);
void rg_op_dot(gen *g);
void rg_op_reduce_window(gen *g);
/* Domain helpers: a value of the same shape bounded by B in magnitude / with elements > m. */
gval rg_bounded(gen *g, gval v, double B);
gval rg_positive(gen *g, gval v, double m);

/* ---- randgraph_lib.c ---- */
void rg_op_topk(gen *g);
void rg_op_random_bits(gen *g);
void rg_op_stochastic_convert(gen *g);
void rg_op_cholesky(gen *g);

/* ---- randgraph_layout.c ---- */
void rg_op_layout(gen *g);

/* ---- randgraph_ctrl.c ---- */
void rg_op_while(gen *g);
void rg_op_conditional(gen *g);

#endif
