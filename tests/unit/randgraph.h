/* randgraph.h — seeded random HLO graphs for differential testing of compiled backends against
 * the interpreter (tests/unit/test_random_graphs.c), in three parts:
 *
 *  - the generator (randgraph.c, randgraph_ops.c): builds a module through the public builder
 *    API from a seed, with its own PRNG, so a seed names the same graph on every machine;
 *  - the analysis (randgraph_bounds.c, randgraph_rules.c): for every array leaf of every
 *    instruction, a range that holds for the values any correct backend computes, and how far
 *    two correct backends may differ (err + rel*|value|; 0: bit for bit). Ops whose result would not be determined (a compare
 *    of inexact floats, log near 0, exp near overflow, an argmax over inexact values) mark
 *    their leaves `bad`. The generator keeps only values that are not bad, the comparison
 *    takes its tolerances from `err`, and the shrinker rejects candidates with a bad output;
 *  - the shrinker (randgraph_shrink.c): cuts a failing module down while it keeps failing.
 */
#ifndef RANDGRAPH_H
#define RANDGRAPH_H
#include <stdint.h>
#include "ir/ir.h"

/* What the generator may build (all on by default; CXLA_RANDGRAPH_FEATURES="-while,-gather"
 * turns some off when a construct is blocked by a known bug). */
enum {
  RG_F_WHILE = 1 << 0,
  RG_F_COND = 1 << 1,
  RG_F_DOT = 1 << 2,
  RG_F_REDUCE = 1 << 3,
  RG_F_RWINDOW = 1 << 4,
  RG_F_GATHER = 1 << 5,
  RG_F_DYNAMIC = 1 << 6,  /* dynamic-slice, dynamic-update-slice */
  RG_F_HALF = 1 << 7,     /* f16 and bf16 */
  RG_F_INT = 1 << 8,      /* s32, s8, u32 and pred values (beyond indices) */
  RG_F_SPECIAL = 1 << 9,  /* NaN, infinities and -0 among some float inputs */
  RG_F_BIG = 1 << 10,     /* an occasional ~100k-element graph (multi-threaded kernels) */
  RG_F_ZERO = 1 << 11,    /* an occasional zero-sized slice */
  RG_F_TRANSC = 1 << 12,  /* transcendental functions */
  RG_F_LAYOUT = 1 << 13,  /* non-default layouts, layout-changing copies, bitcasts */
  RG_F_LIB = 1 << 14,     /* topk, rng-bit-generator, stochastic-convert, cholesky + triangular-solve */
  RG_F_ALL = (1 << 15) - 1
};

/* Parses "-while,-gather" or "dot,reduce" (only those) into feature bits; unknown names give -1. */
int rg_parse_features(const char *s, unsigned *out);
/* Names of the feature bits, in bit order (for messages). */
const char *rg_feature_name(int bit);

typedef struct rg_config {
  unsigned features; /* RG_F_* */
  int max_dim;       /* every generated dimension is at most this (0: the default, 40) */
  int steps;         /* ops to add (0: 5..32 drawn from the seed) */
  int big;           /* 1: always a ~100k-element graph (0: one in 25, with RG_F_BIG) */
} rg_config;
void rg_config_default(rg_config *c);

/* What the analysis knows about one array leaf. */
typedef struct rg_val {
  double lo, hi;   /* bounds on the finite elements (integers and pred too) */
  double err;      /* how far two correct backends may differ: err + rel * |value| */
  uint8_t special; /* elements may also be NaN or +-inf */
  uint8_t bad;     /* the value is not determined well enough to compare */
  double rel;      /* (err == rel == 0: exactly equal) */
} rg_val;

/* How to fill one ENTRY parameter (per leaf; parameters are arrays). */
typedef struct rg_param {
  rg_val v;        /* range of the values; special: mix in NaN, +-inf and -0 */
} rg_param;

/* A generated graph: the module (in the context it was built in), its parameters' value
 * ranges, and its canonical text. */
typedef struct rg_graph {
  cx_module *m;
  int nparams;
  rg_param *params;
  char *text;
} rg_graph;

/* Builds the graph for `seed`. Non-OK only on a generator bug or OOM (the message is in ctx). */
cxla_status rg_generate(cxla_context *ctx, uint64_t seed, const rg_config *cfg, rg_graph *out);
void rg_graph_free(rg_graph *g);

/* ---- analysis ---- */
typedef struct rg_slot {
  int n;           /* leaves (0: not analysed yet) */
  rg_val *v;       /* heap: stays put while other slots are set */
} rg_slot;

typedef struct rg_bounds {
  cx_module *m;
  int cap;
  rg_slot *slot;   /* by instruction id */
  char why[200];   /* the last reason a value was marked bad */
  int depth;       /* nesting of called computations */
} rg_bounds;

void rg_bounds_init(rg_bounds *bd, cx_module *m);
void rg_bounds_free(rg_bounds *bd);
/* Leaves of an analysed instruction (NULL with *n == 0 if not analysed); valid until that
 * instruction is analysed again. */
const rg_val *rg_bounds_get(rg_bounds *bd, const cx_instr *in, int *n);
int rg_bounds_set(rg_bounds *bd, const cx_instr *in, const rg_val *v, int n);
/* Analyses `in` from its already analysed operands (parameters must have been set). */
int rg_bounds_instr(rg_bounds *bd, cx_instr *in);
/* Analyses every instruction of c with its parameters set from args (nargs parameters; leaf
 * arrays args[i] of nleaves[i] leaves). The root's leaves are then rg_bounds_get(c->root). */
int rg_bounds_comp(rg_bounds *bd, cx_comp *c, int nargs, const rg_val *const *args, const int *nleaves);
/* Analyses the ENTRY computation with parameters from params. Returns the root's leaves
 * (heap, *n of them; NULL on OOM). */
rg_val *rg_analyze(cx_module *m, const rg_param *params, int nparams, int *n, char *why, size_t whylen);

/* One line per ENTRY instruction: its leaves' ranges and errors (for debugging the rules). */
void rg_bounds_print(cx_module *m, const rg_param *params, int nparams, cx_sb *sb);

/* Machine epsilon (half an ulp of 1) of a float type, 0 for others. */
double rg_eps(cxla_type t);
/* Tolerance used to compare one leaf: |got - want| <= atol + rtol * |want|. */
void rg_tolerance(const rg_val *v, cxla_type t, double *rtol, double *atol);

/* ---- inputs ---- */
/* A literal of shape s filled from p (seeded). NULL on OOM. */
cxla_literal *rg_make_input(const cx_shape *s, const rg_param *p, uint64_t seed);

/* ---- shrinking ---- */
/* The failure predicate: 1 if the module in `text` (parameters as in params) still fails the
 * same way. The shrinker only calls it on candidates that parse, verify and analyse stable. */
typedef int (*rg_fails_fn)(void *user, const char *text, const rg_param *params, int nparams);
/* Shrinks text (which fails) while fails() holds; returns the smallest failing text found
 * (malloc'd) and updates *params / *nparams to match it. At most max_tries candidates are
 * tried. ctx is used for parsing. */
char *rg_shrink(cxla_context *ctx, const char *text, rg_param **params, int *nparams, rg_fails_fn fails,
                void *user, int max_tries, int *tries_out);

/* ---- small shared helpers ---- */
typedef struct rg_rng {
  uint64_t s;
} rg_rng;
uint64_t rg_next(rg_rng *r);                /* splitmix64 */
int rg_below(rg_rng *r, int n);             /* uniform in [0, n) (0 if n <= 0) */
double rg_unit(rg_rng *r);                  /* uniform in [0, 1) */
int rg_leaf_count(const cx_shape *s);

#endif
