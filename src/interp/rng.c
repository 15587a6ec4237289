/* rng.c — rng(a, b), distribution=rng_uniform|rng_normal. XLA leaves its values to the
 * implementation; cxla defines them here, and the cpu backend computes the same (bit for bit):
 *
 * - The bits: a stream of 32-bit words w[0], w[1], ... from Philox4x32-10 keyed by the
 *   FNV-1a 64-bit hash of the instruction's name (low word first), block j = words 4j..4j+3
 *   from the 128-bit counter (j, k), k the number of times this instruction has run before in
 *   the same execution (so a while loop's body draws fresh numbers every trip, and every
 *   execution repeats the last one's). A 64-bit element i takes w[2i] | w[2i+1] << 32, any
 *   other element w[i].
 * - uniform, floats: a + u * (b - a) in double, rounded to the type, with u = (w >> 8) / 2^24
 *   (64-bit: (w >> 11) / 2^53) in [0, 1).
 * - uniform, integers: a + w mod (b - a) for b > a (the difference taken unsigned), else a;
 *   pred: w & 1 for (false, true), else a.
 * - normal: Box-Muller on the pair of elements 2p, 2p + 1 (XLA's BoxMullerTransform): from
 *   their uniforms u1, u2 (as above), r = sqrt(-2 log max(u1, 1e-7)); element 2p is
 *   a + b r sin(2 pi u2), element 2p + 1 is a + b r cos(2 pi u2), in double, rounded.
 *
 * The same name in two places (a computation inlined at two call sites gets copies under new
 * names) gives independent streams, so cxla's passes can change which numbers a program
 * draws: another freedom XLA's definition allows. */
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"

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

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
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

static double unit(uint64_t w, int wide) { return wide ? (double)(w >> 11) * 0x1p-53 : (double)(w >> 8) * 0x1p-24; }

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
  stream s = {.key = fnv1a(in->name), .run = (uint64_t)run, .block = -1};
  int64_t n = cx_shape_elems(&in->shape);
  for (int64_t i = 0; i < n; i++) {
    cx_scalar v;
    if (normal) {
      int64_t p = i / 2;
      double u1 = unit(bits(&s, 2 * p, wide), wide), u2 = unit(bits(&s, 2 * p + 1, wide), wide);
      double r = sqrt(-2.0 * log(u1 > 1e-7 ? u1 : 1e-7)), th = 2.0 * M_PI * u2;
      v.f = a.f + b.f * r * (i % 2 ? cos(th) : sin(th));
    } else if (cx_type_is_float(t)) {
      v.f = a.f + unit(bits(&s, i, wide), wide) * (b.f - a.f);
    } else {
      v = uniform_int(t, a, b, bits(&s, i, wide));
    }
    cx_scalar_store(t, (*out)->data, i, v);
  }
  return CXLA_OK;
}
