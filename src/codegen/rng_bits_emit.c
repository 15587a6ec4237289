/* rng_bits_emit.c — rng-bit-generator as one kernel (see cg.h), bit-exact with the cpu's
 * routine (rt/rng.c) and XLA's RngBitGeneratorExpander: a thread per generator invocation.
 * Philox4x32-10 (the default) turns counter (lo + b, hi with its carry) into 4 32-bit words,
 * elements 4b..4b+3 (2 64-bit ones); Threefry2x32-20 turns counter lo + h into two words, for
 * 64-bit elements element h, for narrower ones elements j and j+1 of the dimension XLA splits
 * in halves (outer x d x inner around it). Thread 0 also writes the new state: the key, then
 * the counter advanced by the invocations. */
#include "codegen/emit.h"
#include "codegen/loops.h"

int cx_emit_rng_bits_ok(const cx_instr *in, const char **why) {
  if (in->op != CX_OP_RNG_BIT_GENERATOR || in->nops != 1 || in->shape.type != CXLA_TUPLE || in->shape.ntuple != 2)
    return *why = "not an rng-bit-generator", 0;
  const cx_shape *st = &in->ops[0]->shape, *ds = &in->shape.tuple[1];
  int philox = in->a.rng_algorithm != CX_RNG_THREE_FRY;
  int64_t w = cxla_type_size(ds->type);
  if (st->type != CXLA_U64 || st->rank != 1 || st->dims[0] < 2 || st->dims[0] > 2 + philox ||
      !(w == 1 || w == 2 || w == 4 || w == 8) || cx_type_is_complex(ds->type))
    return *why = "an rng-bit-generator state or result the cpu's routine does not take either", 0;
  return 1;
}

/* XLA's split of a narrow Threefry result (as backend/cpu/rng_bits.c works it out) */
static void split_dim(const cx_shape *ds, int64_t *outer, int64_t *d, int64_t *inner) {
  *outer = *d = *inner = 1;
  if (ds->rank == 0) return;
  int sd = -1;
  for (int k = 0; k < ds->rank && sd < 0; k++)
    if (ds->dims[k] % 2 == 0) sd = k;
  if (sd < 0) {
    sd = 0;
    for (int k = 1; k < ds->rank; k++)
      if (ds->dims[k] > ds->dims[sd]) sd = k;
  }
  for (int k = 0; k < ds->rank; k++) {
    if (k < sd) *outer *= ds->dims[k];
    else if (k > sd) *inner *= ds->dims[k];
  }
  *d = ds->dims[sd];
}

static LLVMValueRef i32c(cx_cg *cg, uint32_t v) { return LLVMConstInt(cg->t_i32, v, 0); }

static LLVMValueRef rotl(cx_cg *cg, LLVMValueRef v, int r) {
  LLVMBuilderRef b = cg->b;
  return LLVMBuildOr(b, LLVMBuildShl(b, v, i32c(cg, (uint32_t)r), ""), LLVMBuildLShr(b, v, i32c(cg, (uint32_t)(32 - r)), ""), "");
}

/* Threefry2x32-20 of counter c (i64) with key words k[0..2] (i32) */
static void threefry(cx_cg *cg, LLVMValueRef c, LLVMValueRef *k, LLVMValueRef *o0, LLVMValueRef *o1) {
  LLVMBuilderRef b = cg->b;
  static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  LLVMValueRef x0 = LLVMBuildAdd(b, LLVMBuildTrunc(b, c, cg->t_i32, ""), k[0], "");
  LLVMValueRef x1 = LLVMBuildAdd(b, LLVMBuildTrunc(b, LLVMBuildLShr(b, c, cx_cg_i64(cg, 32), ""), cg->t_i32, ""), k[1], "");
  for (int g = 0; g < 5; g++) {
    for (int r = 0; r < 4; r++) {
      x0 = LLVMBuildAdd(b, x0, x1, "");
      x1 = LLVMBuildXor(b, rotl(cg, x1, rot[g & 1][r]), x0, "");
    }
    x0 = LLVMBuildAdd(b, x0, k[(g + 1) % 3], "");
    x1 = LLVMBuildAdd(b, x1, LLVMBuildAdd(b, k[(g + 2) % 3], i32c(cg, (uint32_t)g + 1), ""), "");
  }
  *o0 = x0, *o1 = x1;
}

/* Philox4x32-10 of the counter (lo, hi) (i64) with key words k0, k1 (i32); rng_emit.c's too */
void cx_emit_philox(cx_cg *cg, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef k0, LLVMValueRef k1, LLVMValueRef *o) {
  LLVMBuilderRef b = cg->b;
  LLVMValueRef c32 = cx_cg_i64(cg, 32);
  LLVMValueRef x0 = LLVMBuildTrunc(b, lo, cg->t_i32, ""), x1 = LLVMBuildTrunc(b, LLVMBuildLShr(b, lo, c32, ""), cg->t_i32, "");
  LLVMValueRef x2 = LLVMBuildTrunc(b, hi, cg->t_i32, ""), x3 = LLVMBuildTrunc(b, LLVMBuildLShr(b, hi, c32, ""), cg->t_i32, "");
  for (int r = 0; r < 10; r++) {
    LLVMValueRef a = LLVMBuildMul(b, cx_cg_i64(cg, 0xD2511F53u), LLVMBuildZExt(b, x0, cg->t_i64, ""), "");
    LLVMValueRef m = LLVMBuildMul(b, cx_cg_i64(cg, 0xCD9E8D57u), LLVMBuildZExt(b, x2, cg->t_i64, ""), "");
    LLVMValueRef n0 = LLVMBuildXor(b, LLVMBuildXor(b, LLVMBuildTrunc(b, LLVMBuildLShr(b, m, c32, ""), cg->t_i32, ""), x1, ""), k0, "");
    LLVMValueRef n2 = LLVMBuildXor(b, LLVMBuildXor(b, LLVMBuildTrunc(b, LLVMBuildLShr(b, a, c32, ""), cg->t_i32, ""), x3, ""), k1, "");
    x0 = n0, x1 = LLVMBuildTrunc(b, m, cg->t_i32, ""), x2 = n2, x3 = LLVMBuildTrunc(b, a, cg->t_i32, "");
    k0 = LLVMBuildAdd(b, k0, i32c(cg, 0x9E3779B9u), "");
    k1 = LLVMBuildAdd(b, k1, i32c(cg, 0xBB67AE85u), "");
  }
  o[0] = x0, o[1] = x1, o[2] = x2, o[3] = x3;
}

/* element i of the bits (width w bytes) = the low bytes of v (i64) */
static void put(cx_cg *cg, LLVMValueRef out, int64_t w, LLVMValueRef i, LLVMValueRef v) {
  LLVMTypeRef t = LLVMIntTypeInContext(cg->llctx, (unsigned)(8 * w));
  LLVMBuildStore(cg->b, LLVMBuildTrunc(cg->b, v, t, ""), LLVMBuildGEP2(cg->b, t, out, &i, 1, ""));
}

static LLVMValueRef join(cx_cg *cg, LLVMValueRef lo32, LLVMValueRef hi32) {
  LLVMBuilderRef b = cg->b;
  return LLVMBuildOr(b, LLVMBuildZExt(b, lo32, cg->t_i64, ""),
                     LLVMBuildShl(b, LLVMBuildZExt(b, hi32, cg->t_i64, ""), cx_cg_i64(cg, 32), ""), "");
}

cxla_status cx_emit_rng_bits_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  const char *why = NULL;
  if (!cx_emit_rng_bits_ok(in, &why)) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why);
  const cx_shape *ds = &in->shape.tuple[1];
  int philox_alg = in->a.rng_algorithm != CX_RNG_THREE_FRY;
  int64_t w = cxla_type_size(ds->type), n = cx_shape_elems(ds), nstate = in->ops[0]->shape.dims[0];
  int64_t outer, d, inner;
  split_dim(ds, &outer, &d, &inner);
  int64_t per = w == 8 ? 2 : 4, half = (d + 1) / 2;
  int64_t calls = philox_alg ? (n + per - 1) / per : w == 8 ? n : outer * half * inner;
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, in, 3, 0, 0)); /* new state, bits, state */
  LLVMBuilderRef b = cg->b;
  LLVMValueRef key = cx_cg_load(cg, CXLA_U64, k.ptr[2], cx_cg_i64(cg, 0));
  LLVMValueRef lo0 = cx_cg_load(cg, CXLA_U64, k.ptr[2], cx_cg_i64(cg, 1));
  LLVMValueRef hi0 = nstate == 3 ? cx_cg_load(cg, CXLA_U64, k.ptr[2], cx_cg_i64(cg, 2)) : key;
  LLVMValueRef k0 = LLVMBuildTrunc(b, key, cg->t_i32, ""), k1 = LLVMBuildTrunc(b, LLVMBuildLShr(b, key, cx_cg_i64(cg, 32), ""), cg->t_i32, "");
  cx_loop e;
  cx_loop_begin(cg, &e, k.begin, k.end, "call");
  LLVMValueRef lo = LLVMBuildAdd(b, lo0, e.iv, "");
  cx_if first;
  cx_if_begin(cg, &first, LLVMBuildICmp(b, LLVMIntEQ, e.iv, cx_cg_i64(cg, 0), ""));
  { /* the new state, by the first invocation's thread */
    LLVMValueRef nlo = LLVMBuildAdd(b, lo0, cx_cg_i64(cg, calls), "");
    LLVMValueRef nhi = LLVMBuildAdd(b, hi0, LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntULT, nlo, lo0, ""), cg->t_i64, ""), "");
    cx_cg_store(cg, CXLA_U64, k.ptr[0], cx_cg_i64(cg, 0), key);
    cx_cg_store(cg, CXLA_U64, k.ptr[0], cx_cg_i64(cg, 1), nlo);
    if (nstate == 3) cx_cg_store(cg, CXLA_U64, k.ptr[0], cx_cg_i64(cg, 2), philox_alg ? nhi : hi0);
  }
  cx_if_end(cg, &first);
  cx_if real; /* with no invocation at all (an empty result) thread 0 writes the state only */
  cx_if_begin(cg, &real, LLVMBuildICmp(b, LLVMIntSLT, e.iv, cx_cg_i64(cg, calls), ""));
  if (philox_alg) {
    LLVMValueRef hi = LLVMBuildAdd(b, hi0, LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntULT, lo, lo0, ""), cg->t_i64, ""), "");
    LLVMValueRef o[4];
    cx_emit_philox(cg, lo, hi, k0, k1, o);
    LLVMValueRef i0 = LLVMBuildMul(b, e.iv, cx_cg_i64(cg, per), "");
    for (int j = 0; j < per; j++) {
      LLVMValueRef i = LLVMBuildAdd(b, i0, cx_cg_i64(cg, j), "");
      cx_if in_range;
      cx_if_begin(cg, &in_range, LLVMBuildICmp(b, LLVMIntSLT, i, cx_cg_i64(cg, n), ""));
      put(cg, k.ptr[1], w, i, per == 2 ? join(cg, o[2 * j], o[2 * j + 1]) : LLVMBuildZExt(b, o[j], cg->t_i64, ""));
      cx_if_end(cg, &in_range);
    }
  } else {
    LLVMValueRef kw[3] = {k0, k1, NULL}, o0, o1;
    kw[2] = LLVMBuildXor(b, LLVMBuildXor(b, i32c(cg, 0x1BD11BDA), k0, ""), k1, "");
    threefry(cg, lo, kw, &o0, &o1);
    if (w == 8) {
      put(cg, k.ptr[1], w, e.iv, join(cg, o0, o1));
    } else {
      LLVMValueRef c_in = cx_cg_i64(cg, inner), c_half = cx_cg_i64(cg, half);
      LLVMValueRef r = LLVMBuildURem(b, e.iv, c_in, ""), q = LLVMBuildUDiv(b, e.iv, c_in, "");
      LLVMValueRef jh = LLVMBuildURem(b, q, c_half, ""), ou = LLVMBuildUDiv(b, q, c_half, "");
      LLVMValueRef j2 = LLVMBuildMul(b, jh, cx_cg_i64(cg, 2), "");
      LLVMValueRef i = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildMul(b, ou, cx_cg_i64(cg, d), ""), j2, ""), c_in, ""), r, "");
      put(cg, k.ptr[1], w, i, LLVMBuildZExt(b, o0, cg->t_i64, ""));
      cx_if second;
      cx_if_begin(cg, &second, LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildAdd(b, j2, cx_cg_i64(cg, 1), ""), cx_cg_i64(cg, d), ""));
      put(cg, k.ptr[1], w, LLVMBuildAdd(b, i, c_in, ""), LLVMBuildZExt(b, o1, cg->t_i64, ""));
      cx_if_end(cg, &second);
    }
  }
  cx_if_end(cg, &real);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, calls > 0 ? calls : 1, 1, 2, 1);
}
