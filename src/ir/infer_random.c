/* infer_random.c — shape rules of the random-number ops: rng-bit-generator and rng. */
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

/* rng(a, b), distribution=D: XLA's verifier (HandleRng): two scalars of the result's element
 * type; uniform over [a, b) for floats, integers and pred, normal (mean a, deviation b) for
 * floats. The result shape is written (XLA's parser requires it). */
cxla_status cx_infer_rng(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vdeclared_array(ic));
  cxla_type t = in->shape.type;
  for (int i = 0; i < 2; i++) {
    CX_TRY(cx_vneed_scalar(ic, i, i ? "b" : "a"));
    if (cx_vop(ic, i)->type != t)
      return cx_vfail(ic, "operand %d %s must have the result's element type %s", i, cx_vshape(ic, cx_vop(ic, i)),
                      cx_vtype(t));
  }
  cx_kind k = cx_type_kind(t);
  switch (in->a.rng_distribution) {
  case CX_RNG_UNIFORM:
    if (k != CX_KIND_FLOAT && k != CX_KIND_SINT && k != CX_KIND_UINT && k != CX_KIND_PRED)
      return cx_vfail(ic, "rng_uniform needs a float, integer or pred result, got %s", cx_vtype(t));
    break;
  case CX_RNG_NORMAL:
    if (k != CX_KIND_FLOAT) return cx_vfail(ic, "rng_normal needs a floating-point result, got %s", cx_vtype(t));
    break;
  case CX_RNG_INVALID: return cx_vfail(ic, "needs distribution=rng_uniform or rng_normal");
  }
  return cx_infer_declared(ic, out);
}
