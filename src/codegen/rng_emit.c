/* rng_emit.c — rng(a, b) (rng_uniform, rng_normal) as one kernel (see cg.h), the values
 * interp/rng.c defines: Philox4x32-10 keyed by the FNV-1a hash of the instruction's name on
 * the counter (block, run). A thread per Philox block: its four words are elements 4j..4j+3
 * (32 bits or less: a word each; rng_normal's pairs (4j, 4j+1) and (4j+2, 4j+3)) or 2j, 2j+1
 * (64 bits: two words each, one rng_normal pair). Box-Muller's log, sin and cos are
 * ir/rng_dist.c's, built here operation for operation with the same constants, so that the
 * roundings, and the bits, are the interpreter's and the cpu backend's. */
#include "codegen/emit.h"
#include "codegen/loops.h"
#include "codegen/math_ir.h"
#include "codegen/minifloat_ir.h"
#include "ir/minifloat.h"
#include "ir/rng_dist.h"

int cx_emit_rng_ok(const cx_instr *in, const char **why) {
  if (in->op != CX_OP_RNG || in->nops != 2 || !cx_type_is_array(in->shape.type))
    return *why = "not an rng", 0;
  cxla_type t = in->shape.type;
  cx_kind k = cx_type_kind(t);
  int normal = in->a.rng_distribution == CX_RNG_NORMAL;
  if (in->ops[0]->shape.type != t || in->ops[1]->shape.type != t || (normal && k != CX_KIND_FLOAT) ||
      (!normal && in->a.rng_distribution != CX_RNG_UNIFORM) ||
      (k != CX_KIND_FLOAT && k != CX_KIND_SINT && k != CX_KIND_UINT && k != CX_KIND_PRED))
    return *why = "an rng distribution or element type the interpreter does not take either", 0;
  return 1;
}

static LLVMValueRef fsub(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->b, a, b, ""); }
static LLVMValueRef fadd(tb *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->b, a, b, ""); }

/* cx_rng_log, step for step */
static LLVMValueRef rng_log(tb *m, LLVMValueRef x) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef bits = LLVMBuildBitCast(b, x, m->l, "");
  LLVMValueRef e = LLVMBuildSub(b, lshr(m, bits, 52), L(m, 1023), "");
  LLVMValueRef mant = LLVMBuildBitCast(b, LLVMBuildOr(b, iand(m, bits, 0x000FFFFFFFFFFFFFull), L(m, 0x3FF0000000000000ull), ""),
                                       m->d, "");
  LLVMValueRef big = fcmp(m, LLVMRealOGT, mant, D(m, CX_RNG_SQRT2));
  mant = sel(m, big, mul(m, mant, D(m, 0.5)), mant);
  e = sel(m, big, iadd(m, e, L(m, 1)), e);
  LLVMValueRef f = fsub(m, mant, D(m, 1.0));
  LLVMValueRef s = LLVMBuildFDiv(b, f, fadd(m, D(m, 2.0), f), ""), z = mul(m, s, s);
  LLVMValueRef r = mul(m, z, horner(m, z, cx_rng_log_p, CX_RNG_LOG_N));
  LLVMValueRef hfsq = mul(m, D(m, 0.5), mul(m, f, f)), dk = LLVMBuildSIToFP(b, e, m->d, "");
  LLVMValueRef t = mul(m, s, fadd(m, hfsq, r));
  t = fadd(m, t, mul(m, dk, D(m, CX_RNG_LN2_LO)));
  t = fsub(m, fsub(m, hfsq, t), f);
  return fsub(m, mul(m, dk, D(m, CX_RNG_LN2_HI)), t);
}

/* cx_rng_sincos, step for step */
static void rng_sincos(tb *m, LLVMValueRef th, LLVMValueRef *sin_out, LLVMValueRef *cos_out) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef q = fadd(m, mul(m, th, D(m, CX_RNG_2_OVER_PI)), D(m, CX_RNG_SHIFT));
  LLVMValueRef n = fsub(m, q, D(m, CX_RNG_SHIFT)), nn = LLVMBuildFNeg(b, n, "");
  LLVMValueRef r = fma3(m, nn, D(m, CX_RNG_PIO2_2), fma3(m, nn, D(m, CX_RNG_PIO2_1), th));
  LLVMValueRef z = mul(m, r, r), rz = mul(m, r, z);
  LLVMValueRef sn = fma3(m, rz, horner(m, z, cx_rng_sin_p, CX_RNG_SIN_N), r);
  LLVMValueRef hz = mul(m, D(m, 0.5), z), zz = mul(m, z, z);
  LLVMValueRef cs = fma3(m, zz, horner(m, z, cx_rng_cos_p, CX_RNG_COS_N), fsub(m, D(m, 1.0), hz));
  LLVMValueRef quad = iand(m, LLVMBuildFPToSI(b, n, m->l, ""), 3);
  LLVMValueRef nsn = LLVMBuildFNeg(b, sn, ""), ncs = LLVMBuildFNeg(b, cs, "");
  LLVMValueRef q1 = ieq(m, quad, L(m, 1)), q2 = ieq(m, quad, L(m, 2)), q3 = ieq(m, quad, L(m, 3));
  *sin_out = sel(m, q1, cs, sel(m, q2, nsn, sel(m, q3, ncs, sn)));
  *cos_out = sel(m, q1, nsn, sel(m, q2, ncs, sel(m, q3, sn, cs)));
}

/* cx_rng_unit of the element bits w (i64) */
static LLVMValueRef unit(tb *m, LLVMValueRef w, int wide) {
  return mul(m, LLVMBuildUIToFP(m->b, lshr(m, w, wide ? 11 : 8), m->d, ""), D(m, wide ? 0x1p-53 : 0x1p-24));
}

/* cx_rng_box_muller */
static void box_muller(tb *m, LLVMValueRef u1, LLVMValueRef u2, LLVMValueRef *first, LLVMValueRef *second) {
  LLVMValueRef u = sel(m, fcmp(m, LLVMRealOGT, u1, D(m, 1e-7)), u1, D(m, 1e-7));
  LLVMValueRef v = mul(m, D(m, -2.0), rng_log(m, u));
  LLVMValueRef r = cx_ir_intrinsic(m->g, "llvm.sqrt", &m->d, 1, &v, 1), sn, cs;
  rng_sincos(m, mul(m, D(m, CX_RNG_2PI), u2), &sn, &cs);
  *first = mul(m, r, sn);
  *second = mul(m, r, cs);
}

static LLVMValueRef join(cx_cg *cg, LLVMValueRef lo32, LLVMValueRef hi32) {
  LLVMBuilderRef b = cg->b;
  return LLVMBuildOr(b, LLVMBuildZExt(b, lo32, cg->t_i64, ""),
                     LLVMBuildShl(b, LLVMBuildZExt(b, hi32, cg->t_i64, ""), cx_cg_i64(cg, 32), ""), "");
}

/* an operand's value in double (floats are exact there) */
static LLVMValueRef load_f64(cx_cg *cg, cxla_type t, LLVMValueRef p) {
  LLVMValueRef v = cx_cg_load(cg, t, p, cx_cg_i64(cg, 0));
  return t == CXLA_F64 ? v : LLVMBuildFPExt(cg->b, v, cg->t_f64, "");
}

/* a double result rounded to t as cx_store_f64 does: f16/bf16 through f32, the 8- and 4-bit
 * floats directly */
static void store_f64(cx_cg *cg, cxla_type t, LLVMValueRef out, LLVMValueRef i, LLVMValueRef v) {
  if (cx_mf_format_of(t)) {
    LLVMValueRef code = cx_mf_ir_encode(cg->b, t, v);
    LLVMBuildStore(cg->b, code, LLVMBuildInBoundsGEP2(cg->b, cg->t_i8, out, &i, 1, ""));
    return;
  }
  cx_cg_store(cg, t, out, i, t == CXLA_F64 ? v : LLVMBuildFPTrunc(cg->b, v, cg->t_f32, ""));
}

/* interp/rng.c's uniform_int: a + w mod (b - a) for b > a (the difference unsigned), else a;
 * pred: w & 1 for (false, true), else a */
static LLVMValueRef uniform_int(cx_cg *cg, cxla_type t, LLVMValueRef a, LLVMValueRef b, LLVMValueRef w) {
  LLVMBuilderRef bd = cg->b;
  if (t == CXLA_PRED) {
    LLVMValueRef pick = LLVMBuildAnd(bd, LLVMBuildNot(bd, a, ""), b, "");
    return LLVMBuildSelect(bd, pick, LLVMBuildTrunc(bd, w, cg->t_i1, ""), a, "");
  }
  LLVMTypeRef rt = cx_cg_reg_type(cg, t);
  LLVMValueRef above = LLVMBuildICmp(bd, cx_type_kind(t) == CX_KIND_SINT ? LLVMIntSGT : LLVMIntUGT, b, a, "");
  LLVMValueRef range = LLVMBuildSub(bd, b, a, "");
  if (cx_type_bits(t) < 64) range = LLVMBuildZExt(bd, range, cg->t_i64, "");
  range = LLVMBuildSelect(bd, above, range, cx_cg_i64(cg, 1), ""); /* no division by 0 on the other path */
  LLVMValueRef rem = LLVMBuildURem(bd, w, range, "");
  if (cx_type_bits(t) < 64) rem = LLVMBuildTrunc(bd, rem, rt, "");
  return LLVMBuildSelect(bd, above, LLVMBuildAdd(bd, a, rem, ""), a, "");
}

cxla_status cx_emit_rng_kernel(cx_cg *cg, cx_instr *in, int counted, cx_kernel *out) {
  const char *why = NULL;
  if (!cx_emit_rng_ok(in, &why)) return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s: %s", in->name, why);
  cxla_type t = in->shape.type;
  int wide = cx_type_bits(t) == 64, normal = in->a.rng_distribution == CX_RNG_NORMAL, flt = cx_type_is_float(t);
  int64_t n = cx_shape_elems(&in->shape), per = wide ? 2 : 4, blocks = (n + per - 1) / per;
  uint64_t key = cx_rng_key(in->name);
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, in, counted ? 4 : 3, 0, 0)); /* result, a, b[, run counter] */
  LLVMBuilderRef b = cg->b;
  tb m0 = tb_make(&k.g), *m = &m0;
  LLVMValueRef run = counted ? cx_cg_load(cg, CXLA_U64, k.ptr[3], cx_cg_i64(cg, 0)) : cx_cg_i64(cg, 0);
  LLVMValueRef k0 = LLVMConstInt(cg->t_i32, (uint32_t)key, 0), k1 = LLVMConstInt(cg->t_i32, (uint32_t)(key >> 32), 0);
  LLVMValueRef af = NULL, bf = NULL, ai = NULL, bi = NULL;
  if (flt) af = load_f64(cg, t, k.ptr[1]), bf = load_f64(cg, t, k.ptr[2]);
  else ai = cx_cg_load(cg, t, k.ptr[1], cx_cg_i64(cg, 0)), bi = cx_cg_load(cg, t, k.ptr[2], cx_cg_i64(cg, 0));
  cx_loop e;
  cx_loop_begin(cg, &e, k.begin, k.end, "block");
  cx_if real; /* an empty result still launches one thread */
  cx_if_begin(cg, &real, LLVMBuildICmp(b, LLVMIntSLT, e.iv, cx_cg_i64(cg, blocks), ""));
  LLVMValueRef o[4], w[4], pair[2] = {NULL, NULL};
  cx_emit_philox(cg, e.iv, run, k0, k1, o);
  for (int j = 0; j < per; j++) w[j] = wide ? join(cg, o[2 * j], o[2 * j + 1]) : LLVMBuildZExt(b, o[j], cg->t_i64, "");
  LLVMValueRef i0 = LLVMBuildMul(b, e.iv, cx_cg_i64(cg, per), "");
  for (int j = 0; j < per; j++) {
    /* Box-Muller once per pair, before the pair's first element is stored (the second may
     * be past the end while the first is not) */
    if (normal && j % 2 == 0)
      box_muller(m, unit(m, wide ? w[0] : w[j], wide), unit(m, wide ? w[1] : w[j + 1], wide), &pair[0], &pair[1]);
    LLVMValueRef i = LLVMBuildAdd(b, i0, cx_cg_i64(cg, j), "");
    cx_if in_range;
    cx_if_begin(cg, &in_range, LLVMBuildICmp(b, LLVMIntSLT, i, cx_cg_i64(cg, n), ""));
    if (normal) {
      LLVMValueRef x = mul(m, bf, pair[j % 2]);
      store_f64(cg, t, k.ptr[0], i, fadd(m, af, x));
    } else if (flt) {
      LLVMValueRef x = mul(m, unit(m, w[j], wide), fsub(m, bf, af));
      store_f64(cg, t, k.ptr[0], i, fadd(m, af, x));
    } else {
      cx_cg_store(cg, t, k.ptr[0], i, uniform_int(cg, t, ai, bi, w[j]));
    }
    cx_if_end(cg, &in_range);
  }
  cx_if_end(cg, &real);
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, blocks > 0 ? blocks : 1, 1, 1, counted ? 3 : 2);
}

cxla_status cx_emit_rng_count_kernel(cx_cg *cg, cx_instr *in, cx_kernel *out) {
  cx_kfn k;
  CX_TRY(cx_kfn_begin(&k, cg, in, 1, 0, 0));
  LLVMValueRef zero = cx_cg_i64(cg, 0), v = cx_cg_load(cg, CXLA_U64, k.ptr[0], zero);
  cx_loop e; /* the one thread of [0, 1) */
  cx_loop_begin(cg, &e, k.begin, k.end, "count");
  cx_cg_store(cg, CXLA_U64, k.ptr[0], zero, LLVMBuildAdd(cg->b, v, cx_cg_i64(cg, 1), ""));
  cx_loop_end(cg, &e);
  return cx_kfn_end(&k, out, 1, 1, 1, 0);
}
