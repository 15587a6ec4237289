/* builder_library.c — the builder's calls for the library ops jax.lax exposes one by one:
 * top_k, fft, cholesky, triangular_solve, rng_bit_generator and stochastic-convert. Each sets
 * the op's attributes from the public enums and leaves every shape rule to the verifier
 * (cx_b_done), so the builder refuses exactly what a module written as text is refused. */
#include <string.h>
#include "api/api.h"

/* Public enums to the IR's, by table: a value outside the table is the caller's error. */
static const cx_fft_type k_fft[] = {[CXLA_FFT_FFT] = CX_FFT_FFT, [CXLA_FFT_IFFT] = CX_FFT_IFFT,
                                    [CXLA_FFT_RFFT] = CX_FFT_RFFT, [CXLA_FFT_IRFFT] = CX_FFT_IRFFT};
static const cx_transpose k_transpose[] = {[CXLA_TRANSPOSE_NO] = CX_TRANSPOSE_NO, [CXLA_TRANSPOSE_YES] = CX_TRANSPOSE_YES,
                                           [CXLA_TRANSPOSE_ADJOINT] = CX_TRANSPOSE_ADJOINT};
static const cx_rng_algorithm k_rng[] = {[CXLA_RNG_DEFAULT] = CX_RNG_DEFAULT, [CXLA_RNG_THREE_FRY] = CX_RNG_THREE_FRY,
                                         [CXLA_RNG_PHILOX] = CX_RNG_PHILOX};

cxla_op cxla_builder_topk(cxla_builder *b, cxla_op x, int64_t k, int largest) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "topk", 0);
  if (!opnd) return none;
  cx_instr *in = cx_b_new(b, CX_OP_TOPK, 1, &opnd, NULL);
  if (!in) return none;
  in->a.index = k;
  in->a.largest = largest != 0;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_fft(cxla_builder *b, cxla_op x, cxla_fft_type type, int n, const int64_t *fft_length) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "fft", 0);
  if (!opnd) return none;
  if ((unsigned)type >= CX_ARRAY_LEN(k_fft))
    return cx_b_fail(b, "fft", CXLA_ERR_INVALID_ARGUMENT, "unknown fft type %d", (int)type);
  if (n < 1 || n > 3 || !fft_length)
    return cx_b_fail(b, "fft", CXLA_ERR_INVALID_ARGUMENT, "fft_length must list 1 to 3 lengths, got %d%s", n,
                     fft_length ? "" : " (NULL)");
  cx_instr *in = cx_b_new(b, CX_OP_FFT, 1, &opnd, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.fft_length, n, fft_length)) return none;
  in->a.fft_type = k_fft[type];
  return cx_b_done(b, in);
}

cxla_op cxla_builder_cholesky(cxla_builder *b, cxla_op a, int lower) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, a, "cholesky", 0);
  if (!opnd) return none;
  cx_instr *in = cx_b_new(b, CX_OP_CHOLESKY, 1, &opnd, NULL);
  if (!in) return none;
  in->a.lower = lower != 0;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_triangular_solve(cxla_builder *b, cxla_op a, cxla_op rhs, int left_side, int lower,
                                      int unit_diagonal, cxla_transpose transpose_a) {
  cxla_op none = {0}, xs[2] = {a, rhs};
  cx_instr *ops[2];
  if (!cx_b_get_n(b, 2, xs, ops, "triangular-solve", 0)) return none;
  if ((unsigned)transpose_a >= CX_ARRAY_LEN(k_transpose))
    return cx_b_fail(b, "triangular-solve", CXLA_ERR_INVALID_ARGUMENT, "unknown transpose option %d",
                     (int)transpose_a);
  cx_instr *in = cx_b_new(b, CX_OP_TRIANGULAR_SOLVE, 2, ops, NULL);
  if (!in) return none;
  in->a.left_side = left_side != 0;
  in->a.lower = lower != 0;
  in->a.unit_diagonal = unit_diagonal != 0;
  in->a.transpose_a = k_transpose[transpose_a];
  return cx_b_done(b, in);
}

cxla_op cxla_builder_rng_bit_generator(cxla_builder *b, cxla_op state, cxla_rng_algorithm algorithm, cxla_type type,
                                       int rank, const int64_t *dims) {
  cxla_op none = {0};
  cx_instr *st = cx_b_get(b, state, "rng-bit-generator", 0);
  if (!st) return none;
  if ((unsigned)algorithm >= CX_ARRAY_LEN(k_rng))
    return cx_b_fail(b, "rng-bit-generator", CXLA_ERR_INVALID_ARGUMENT, "unknown algorithm %d", (int)algorithm);
  if (rank < 0 || rank > CXLA_MAX_RANK || (rank && !dims))
    return cx_b_fail(b, "rng-bit-generator", CXLA_ERR_INVALID_ARGUMENT, "bad rank %d or NULL dims", rank);
  for (int d = 0; d < rank; d++)
    if (dims[d] < 0)
      return cx_b_fail(b, "rng-bit-generator", CXLA_ERR_INVALID_ARGUMENT, "negative dimension %lld",
                       (long long)dims[d]);
  /* XLA's result is written, not inferred: (the state's shape, the bits' shape) */
  cx_shape parts[2] = {st->shape, cx_shape_array(type, rank, dims)};
  cx_shape decl = {.type = CXLA_TUPLE, .ntuple = 2, .tuple = parts};
  cx_instr *in = cx_b_new(b, CX_OP_RNG_BIT_GENERATOR, 1, &st, &decl);
  if (!in) return none;
  in->a.rng_algorithm = k_rng[algorithm];
  return cx_b_done(b, in);
}

cxla_op cxla_builder_stochastic_convert(cxla_builder *b, cxla_op x, cxla_op random_bits, cxla_type type) {
  cxla_op none = {0}, xs[2] = {x, random_bits};
  cx_instr *ops[2];
  if (!cx_b_get_n(b, 2, xs, ops, "stochastic-convert", 0)) return none;
  cx_shape decl = cx_shape_array(type, ops[0]->shape.type == CXLA_TUPLE ? 0 : ops[0]->shape.rank, ops[0]->shape.dims);
  cx_instr *in = cx_b_new(b, CX_OP_STOCHASTIC_CONVERT, 2, ops, &decl);
  return in ? cx_b_done(b, in) : none;
}
