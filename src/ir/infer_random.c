/* infer_random.c — shape rules of the random-number ops. */
#include "ir/infer.h"

/* rng-bit-generator(state), algorithm=A: (state', bits) with state' of the state's shape
 * (XLA's verifier) and bits of any integer or float array (the generator's raw bits). The
 * state is u64[N] as XLA's RngBitGeneratorExpander reads it: [key, counter] for Threefry
 * (N = 2), [key, counter low, counter high] for Philox (N = 3) or [key, counter] (N = 2: the
 * key is the counter's high word), and Philox is the default, as on XLA:CPU. */
cxla_status cx_infer_rng_bit_generator(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "state"));
  const cx_shape *st = cx_vop(ic, 0), *d = &in->shape;
  int philox = in->a.rng_algorithm != CX_RNG_THREE_FRY;
  if (st->type != CXLA_U64 || st->rank != 1 || st->dims[0] < 2 || st->dims[0] > 2 + philox)
    return cx_vfail(ic, "the state must be u64[2]%s, got %s", philox ? " or u64[3] for Philox" : " for Threefry",
                    cx_vshape(ic, st));
  if ((unsigned)in->a.rng_algorithm > CX_RNG_PHILOX)
    return cx_vfail(ic, "invalid algorithm %d", (int)in->a.rng_algorithm);
  if (d->type != CXLA_TUPLE || d->ntuple != 2)
    return cx_vfail(ic, "result must be a tuple (state, bits), got %s", cx_vshape(ic, d));
  if (!cx_shape_same_dims(&d->tuple[0], st) || d->tuple[0].type != st->type)
    return cx_vfail(ic, "result state %s must have the state's shape %s", cx_vshape(ic, &d->tuple[0]),
                    cx_vshape(ic, st));
  cx_kind k = cx_type_kind(d->tuple[1].type);
  if (k != CX_KIND_SINT && k != CX_KIND_UINT && k != CX_KIND_FLOAT)
    return cx_vfail(ic, "random bits of %s: integer or floating-point types only",
                    cx_vtype(d->tuple[1].type));
  return cx_infer_declared(ic, out);
}
