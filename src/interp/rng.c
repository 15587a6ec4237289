/* rng.c — rng(a, b), distribution=rng_uniform|rng_normal. XLA leaves its values to the
 * implementation; cxla defines them here, and the cpu backend and the GPU compute the same
 * (bit for bit; ir/rng_dist.h holds the arithmetic they share):
 *
 * - The bits: a stream of 32-bit words w[0], w[1], ... from Philox4x32-10 keyed by the
 *   FNV-1a 64-bit hash of the instruction's name (low word first), block j = words 4j..4j+3
 *   from the 128-bit counter (j, k), k the number of times this instruction has run before in
 *   the same execution (so a while loop's body draws fresh numbers every trip, and every
 *   execution repeats the last one's). A 64-bit element i takes w[2i] | w[2i+1] << 32, any
 *   other element w[i].
 * - uniform, floats: a + u * (b - a) in double (b - a, then the product, then the sum, each
 *   rounded), rounded to the type, with u = (w >> 8) / 2^24 (64-bit: (w >> 11) / 2^53) in [0, 1).
 * - uniform, integers: a + w mod (b - a) for b > a (the difference taken unsigned), else a;
 *   pred: w & 1 for (false, true), else a.
 * - normal: Box-Muller on the pair of elements 2p, 2p + 1 (XLA's BoxMullerTransform): from
 *   their uniforms u1, u2 (as above), r = sqrt(-2 log max(u1, 1e-7)); element 2p is
 *   a + b (r sin(2 pi u2)), element 2p + 1 is a + b (r cos(2 pi u2)), in double, rounded;
 *   log, sin and cos are cxla's own (ir/rng_dist.c: IEEE operations only, so that a GPU
 *   computes the same bits; within an ulp or two of libm's).
 *
 * The same name in two places (a computation inlined at two call sites gets copies under new
 * names) gives independent streams, so cxla's passes can change which numbers a program
 * draws: another freedom XLA's definition allows. */
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"
#include "ir/rng_dist.h"

struct cx_rng_count {
  const cx_instr *in;
  uint64_t n;
};

/* k for this run of `in` (then counted), or -1 on OOM. */
static int64_t next_run(cx_interp *st, const cx_instr *in) {
  for (int i = 0; i < st->nrng_counts; i++)
    if (st->rng_counts[i].in == in) return (int64_t)st->rng_counts[i].n++;
  struct cx_rng_count *c = cx_realloc(st->rng_counts, sizeof *c * (size_t)(st->nrng_counts + 1));
  if (!c) return -1;
  st->rng_counts = c;
  c[st->nrng_counts++] = (struct cx_rng_count){in, 1};
  return 0;
}

/* The word stream, one Philox block remembered. */
typedef struct {
  uint64_t key, run;
  int64_t block;
  uint32_t w[4];
} stream;

static uint32_t word(stream *s, int64_t j) {
  if (j / 4 != s->block) {
    s->block = j / 4;
    uint32_t c[4] = {(uint32_t)s->block, (uint32_t)((uint64_t)s->block >> 32), (uint32_t)s->run, (uint32_t)(s->run >> 32)};
    cx_philox4x32(c, (uint32_t)s->key, (uint32_t)(s->key >> 32), s->w);
  }
  return s->w[j % 4];
}

static uint64_t bits(stream *s, int64_t i, int wide) {
  return wide ? word(s, 2 * i) | (uint64_t)word(s, 2 * i + 1) << 32 : word(s, i);
}

static cx_scalar uniform_int(cxla_type t, cx_scalar a, cx_scalar b, uint64_t w) {
  if (t == CXLA_PRED) return (cx_scalar){.i = !a.i && b.i ? (int64_t)(w & 1) : a.i};
  int nb = cx_type_bits(t);
  int above = cx_type_kind(t) == CX_KIND_SINT ? b.i > a.i : cx_zext(nb, b.i) > cx_zext(nb, a.i);
  if (!above) return a;
  uint64_t range = cx_zext(nb, (int64_t)((uint64_t)b.i - (uint64_t)a.i));
  return (cx_scalar){.i = cx_wrap_int(t, (int64_t)((uint64_t)a.i + w % range))};
}

CX_INTERP_EVALUATOR(cx_interp_rng) {
  *out = NULL;
  cxla_type t = in->shape.type;
  for (int i = 0; i < 2; i++) {
    CX_TRY(cx_hv_check_array(st, in, ops[i], 0, i ? "b" : "a"));
    if (ops[i]->shape.type != t) return cx_hv_bad(st, in, "operands must have the result's element type");
  }
  int normal = in->a.rng_distribution == CX_RNG_NORMAL;
  if ((normal && !cx_type_is_float(t)) || (!normal && in->a.rng_distribution != CX_RNG_UNIFORM))
    return cx_hv_bad(st, in, "bad distribution for %s", cxla_type_name(t));
  int64_t run = next_run(st, in);
  if (run < 0) return cx_hv_oom(st, in);
  CX_TRY(cx_interp_new_array(st, in, &in->shape, out));
  cx_scalar a = cx_scalar_load(t, ops[0]->data, 0), b = cx_scalar_load(t, ops[1]->data, 0);
  int wide = cx_type_bits(t) == 64;
  stream s = {.key = cx_rng_key(in->name), .run = (uint64_t)run, .block = -1};
  int64_t n = cx_shape_elems(&in->shape);
  for (int64_t i = 0; i < n; i++) {
    cx_scalar v;
    if (normal) {
      int64_t p = i / 2;
      double first, second;
      cx_rng_box_muller(cx_rng_unit(bits(&s, 2 * p, wide), wide), cx_rng_unit(bits(&s, 2 * p + 1, wide), wide), &first,
                        &second);
      v.f = cx_rng_scale(a.f, b.f, i % 2 ? second : first);
    } else if (cx_type_is_float(t)) {
      v.f = cx_rng_between(a.f, b.f, cx_rng_unit(bits(&s, i, wide), wide));
    } else {
      v = uniform_int(t, a, b, bits(&s, i, wide));
    }
    cx_scalar_store(t, (*out)->data, i, v);
  }
  return CXLA_OK;
}
