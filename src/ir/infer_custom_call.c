/* infer_custom_call.c — the shape rule of custom-call: a target cxla knows (ir/custom_calls.def)
 * has its result inferred from its operands and checked like any op's, its backend_config
 * attributes too; any other target keeps the shape its text declares (and is refused when
 * compiling, not here: a module may hold what cxla cannot run). */
#include <string.h>
#include "ir/custom_call.h"
#include "ir/infer.h"

/* One rule per kind of target, cx_cc_check_<check> (custom_calls.def). */
#define CX_CC_KIND(id, check) static cxla_status cx_cc_check_##check(cx_infer *ic, const cx_cc_info *t, cx_shape *out);
#include "ir/custom_calls.def"

typedef cxla_status (*cc_check)(cx_infer *ic, const cx_cc_info *t, cx_shape *out);
static const cc_check k_checks[CX_CC_KIND_COUNT] = {
#define CX_CC_KIND(id, check) [CX_CC_##id] = cx_cc_check_##check,
#include "ir/custom_calls.def"
};

cxla_status cx_infer_custom_call(cx_infer *ic, cx_shape *out) {
  int t = cx_cc_target_of(ic->in);
  if (t < 0) return cx_infer_declared(ic, out);
  const cx_cc_info *info = cx_cc_info_of((cx_cc_target)t);
  return k_checks[info->kind](ic, info, out);
}

/* ---- LAPACK ---- */

static cxla_status nops(cx_infer *ic, const cx_cc_info *t, int n) {
  if (ic->in->nops != n) return cx_vfail(ic, "%s takes %d operand%s, got %d", t->name, n, n == 1 ? "" : "s", ic->in->nops);
  return CXLA_OK;
}

/* Operand i: an array of the target's type with rank >= 2 (a batch of matrices). */
static cxla_status matrices(cx_infer *ic, const cx_cc_info *t, int i, const char *what) {
  CX_TRY(cx_vneed_array(ic, i, what));
  const cx_shape *a = cx_vop(ic, i);
  if (a->type != t->type) return cx_vfail(ic, "%s: %s must be %s, got %s", t->name, what, cx_vtype(t->type), cx_vshape(ic, a));
  if (a->rank < 2) return cx_vfail(ic, "%s: %s must have rank >= 2, got %s", t->name, what, cx_vshape(ic, a));
  return CXLA_OK;
}

static cxla_status square(cx_infer *ic, const cx_cc_info *t, int i, const char *what) {
  CX_TRY(matrices(ic, t, i, what));
  const cx_shape *a = cx_vop(ic, i);
  if (a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return cx_vfail(ic, "%s: %s must be square matrices, got %s", t->name, what, cx_vshape(ic, a));
  return CXLA_OK;
}

/* A backend_config attribute that must be one of LAPACK's character codes in `allowed`. */
static cxla_status code(cx_infer *ic, const cx_cc_info *t, const char *key, const char *allowed, char *c) {
  int64_t v = 0;
  if (!cx_cc_config_int(ic->in, key, &v) || v <= 0 || v > 127 || !strchr(allowed, (int)v))
    return cx_vfail(ic, "%s needs backend_config %s = one of '%s' as ui8", t->name, key, allowed);
  *c = (char)v;
  return CXLA_OK;
}

/* An array of type `type` with a's batch dimensions, then `extra` more. */
static void batch_array(cx_shape *s, const cx_shape *a, cxla_type type, int extra, const int64_t *dims) {
  cx_vset_array(s, type, a->rank - 2 + extra, NULL);
  for (int d = 0; d < a->rank - 2; d++) s->dims[d] = a->dims[d];
  for (int d = 0; d < extra; d++) s->dims[a->rank - 2 + d] = dims[d];
}

/* The tuple (a's shape, ...) most LAPACK targets return; n elements, the first a's. */
static cx_shape *tuple_with_a(cx_infer *ic, cx_shape *out, int n) {
  cx_shape *el = cx_vtuple(ic, out, n);
  if (el) {
    el[0] = *cx_vop(ic, 0);
    cx_vplain(&el[0]);
  }
  return el;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static cxla_status cx_cc_check_potrf(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char c;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "uplo", "LU", &c));
  cx_shape *el = tuple_with_a(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], cx_vop(ic, 0), CXLA_S32, 0, NULL);
  return CXLA_OK;
}

static cxla_status cx_cc_check_trsm(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char side, c;
  CX_TRY(nops(ic, t, 2));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(matrices(ic, t, 1, "b"));
  CX_TRY(code(ic, t, "side", "LR", &side));
  CX_TRY(code(ic, t, "uplo", "LU", &c));
  CX_TRY(code(ic, t, "trans_x", "NTC", &c));
  CX_TRY(code(ic, t, "diag", "NU", &c));
  const cx_shape *a = cx_vop(ic, 0), *b = cx_vop(ic, 1);
  int r = b->rank, ok = a->rank == r && a->dims[r - 1] == b->dims[side == 'L' ? r - 2 : r - 1];
  for (int d = 0; ok && d < r - 2; d++) ok = a->dims[d] == b->dims[d];
  if (!ok) return cx_vfail(ic, "%s: a %s does not fit b %s (side %c)", t->name, cx_vshape(ic, a), cx_vshape(ic, b), side);
  *out = *b;
  cx_vplain(out);
  return CXLA_OK;
}

static cxla_status cx_cc_check_getrf(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  CX_TRY(nops(ic, t, 1));
  CX_TRY(matrices(ic, t, 0, "a"));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t k = min64(a->dims[a->rank - 2], a->dims[a->rank - 1]);
  cx_shape *el = tuple_with_a(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, CXLA_S32, 1, &k);
  batch_array(&el[2], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

static cxla_status cx_cc_check_geqrf(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  CX_TRY(nops(ic, t, 1));
  CX_TRY(matrices(ic, t, 0, "a"));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t k = min64(a->dims[a->rank - 2], a->dims[a->rank - 1]);
  cx_shape *el = tuple_with_a(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, t->type, 1, &k);
  return CXLA_OK;
}

/* LAPACK's orgqr needs m >= n >= k: a's columns hold the first n columns of Q. */
static cxla_status cx_cc_check_orgqr(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  CX_TRY(nops(ic, t, 2));
  CX_TRY(matrices(ic, t, 0, "a"));
  CX_TRY(cx_vneed_array(ic, 1, "tau"));
  const cx_shape *a = cx_vop(ic, 0), *tau = cx_vop(ic, 1);
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  int ok = tau->type == t->type && tau->rank == a->rank - 1 && m >= n && tau->dims[tau->rank - 1] <= n;
  for (int d = 0; ok && d < a->rank - 2; d++) ok = tau->dims[d] == a->dims[d];
  if (!ok)
    return cx_vfail(ic, "%s: a %s (m >= n) and tau %s (a's batch, then k <= n) do not fit", t->name, cx_vshape(ic, a),
                    cx_vshape(ic, tau));
  *out = *a;
  cx_vplain(out);
  return CXLA_OK;
}

static cxla_status cx_cc_check_syevd(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char c;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "uplo", "LU", &c));
  CX_TRY(code(ic, t, "mode", "VN", &c));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t n = a->dims[a->rank - 1];
  cx_shape *el = tuple_with_a(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, cx_type_part(t->type), 1, &n); /* real for heevd */
  batch_array(&el[2], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

/* u and vt are m x m and n x n ('A'), m x min and min x n ('S'); with 'N' LAPACK writes
 * neither, and jax passes either pair (its full_matrices): the text's own, told by both
 * (for m < n, u is m x m in either pair, so u alone cannot tell). */
static cxla_status cx_cc_check_gesvd(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char mode;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(matrices(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "mode", "ASN", &mode));
  const cx_shape *a = cx_vop(ic, 0), *decl = &ic->in->shape;
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1], k = min64(m, n);
  int full = mode == 'A';
  if (mode == 'N' && decl->type == CXLA_TUPLE && decl->ntuple == 5 && decl->tuple[2].rank == a->rank)
    full = decl->tuple[2].dims[a->rank - 1] == m && decl->tuple[3].rank == a->rank &&
           decl->tuple[3].dims[a->rank - 2] == n;
  int64_t u[2] = {m, full ? m : k}, vt[2] = {full ? n : k, n};
  cx_shape *el = tuple_with_a(ic, out, 5);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, cx_type_part(t->type), 1, &k); /* real singular values */
  batch_array(&el[2], a, t->type, 2, u);
  batch_array(&el[3], a, t->type, 2, vt);
  batch_array(&el[4], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

/* Real a: (wr, wi, vl, vr, info), the eigenvalues' real and imaginary parts apart and the
 * vectors complex; complex a: (w, vl, vr, info). */
static cxla_status cx_cc_check_geev(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char c;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "compute_left", "VN", &c));
  CX_TRY(code(ic, t, "compute_right", "VN", &c));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t nn[2] = {a->dims[a->rank - 1], a->dims[a->rank - 1]};
  int real = cx_type_part(t->type) == t->type, nw = real ? 2 : 1;
  cxla_type vt = real ? (t->type == CXLA_F32 ? CXLA_C64 : CXLA_C128) : t->type;
  cx_shape *el = cx_vtuple(ic, out, nw + 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < nw; i++) batch_array(&el[i], a, t->type, 1, nn);
  batch_array(&el[nw], a, vt, 2, nn);
  batch_array(&el[nw + 1], a, vt, 2, nn);
  batch_array(&el[nw + 2], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

/* Vectors (dl, d, du: b's batch, then n) and b (batch, n x nrhs); dl[0] and du[n-1] are not
 * read (gtsv takes dl from its second element). */
static cxla_status cx_cc_check_gtsv(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  static const char *const names[3] = {"dl", "d", "du"};
  CX_TRY(nops(ic, t, 4));
  CX_TRY(matrices(ic, t, 3, "b"));
  const cx_shape *b = cx_vop(ic, 3);
  for (int i = 0; i < 3; i++) {
    CX_TRY(cx_vneed_array(ic, i, names[i]));
    const cx_shape *v = cx_vop(ic, i);
    int ok = v->type == t->type && v->rank == b->rank - 1;
    for (int d = 0; ok && d < v->rank; d++) ok = v->dims[d] == b->dims[d];
    if (!ok)
      return cx_vfail(ic, "%s: %s must be %s with b's batch, then b's %lld rows, got %s (b %s)", t->name, names[i],
                      cx_vtype(t->type), (long long)b->dims[b->rank - 2], cx_vshape(ic, v), cx_vshape(ic, b));
  }
  cx_shape *el = cx_vtuple(ic, out, 5);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < 4; i++) {
    el[i] = *cx_vop(ic, i);
    cx_vplain(&el[i]);
  }
  batch_array(&el[4], b, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

static cxla_status cx_cc_check_geqp3(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  CX_TRY(nops(ic, t, 2));
  CX_TRY(matrices(ic, t, 0, "a"));
  CX_TRY(cx_vneed_array(ic, 1, "jpvt"));
  const cx_shape *a = cx_vop(ic, 0), *p = cx_vop(ic, 1);
  int ok = p->type == CXLA_S32 && p->rank == a->rank - 1;
  for (int d = 0; ok && d < p->rank; d++) ok = p->dims[d] == a->dims[d + (d == p->rank - 1)];
  if (!ok)
    return cx_vfail(ic, "%s: jpvt must be s32 with a's batch, then a's %lld columns, got %s (a %s)", t->name,
                    (long long)a->dims[a->rank - 1], cx_vshape(ic, p), cx_vshape(ic, a));
  int64_t k = min64(a->dims[a->rank - 2], a->dims[a->rank - 1]);
  cx_shape *el = tuple_with_a(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[1] = *p;
  cx_vplain(&el[1]);
  batch_array(&el[2], a, t->type, 1, &k);
  return CXLA_OK;
}

/* low and high: LAPACK's ilo and ihi, 1 <= low <= high <= n (low 1, high 0 when n = 0). */
static cxla_status cx_cc_check_gehrd(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  int64_t lo, hi;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t n = a->dims[a->rank - 1], k = n > 0 ? n - 1 : 0;
  if (!cx_cc_config_int(ic->in, "low", &lo) || !cx_cc_config_int(ic->in, "high", &hi) || lo < 1 ||
      hi < (n ? lo : 0) || hi > n)
    return cx_vfail(ic, "%s needs backend_config low and high with 1 <= low <= high <= %lld", t->name, (long long)n);
  cx_shape *el = tuple_with_a(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, t->type, 1, &k);
  batch_array(&el[2], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

static cxla_status cx_cc_check_sytrd(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char c;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "uplo", "LU", &c));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t n = a->dims[a->rank - 1], k = n > 0 ? n - 1 : 0;
  cx_shape *el = tuple_with_a(ic, out, 5);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  batch_array(&el[1], a, cx_type_part(t->type), 1, &n); /* real for hetrd */
  batch_array(&el[2], a, cx_type_part(t->type), 1, &k);
  batch_array(&el[3], a, t->type, 1, &k);
  batch_array(&el[4], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

/* a (batch, nq x ka) holds k <= min(nq, ka) reflectors below its diagonal, tau (batch, k) their
 * factors; c (batch, m x n) with nq = m (left) or n (right). */
static cxla_status cx_cc_check_ormqr(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  int64_t v, tr;
  CX_TRY(nops(ic, t, 3));
  CX_TRY(matrices(ic, t, 0, "a"));
  CX_TRY(cx_vneed_array(ic, 1, "tau"));
  CX_TRY(matrices(ic, t, 2, "c"));
  if (!cx_cc_config_int(ic->in, "left", &v) || !cx_cc_config_int(ic->in, "transpose", &tr))
    return cx_vfail(ic, "%s needs backend_config left and transpose (true or false)", t->name);
  const cx_shape *a = cx_vop(ic, 0), *tau = cx_vop(ic, 1), *c = cx_vop(ic, 2);
  int r = a->rank;
  int64_t nq = a->dims[r - 2], ka = a->dims[r - 1], k = tau->rank ? tau->dims[tau->rank - 1] : -1;
  int ok = c->rank == r && tau->type == t->type && tau->rank == r - 1 && k <= min64(nq, ka) &&
           c->dims[v ? r - 2 : r - 1] == nq;
  for (int d = 0; ok && d < r - 2; d++) ok = tau->dims[d] == a->dims[d] && c->dims[d] == a->dims[d];
  if (!ok)
    return cx_vfail(ic, "%s: a %s, tau %s (a's batch, then k <= a's rows and columns) and c %s (a's batch, its %s a's rows) do not fit",
                    t->name, cx_vshape(ic, a), cx_vshape(ic, tau), cx_vshape(ic, c), v ? "rows" : "columns");
  *out = *c;
  cx_vplain(out);
  return CXLA_OK;
}

/* Real a: (t, z, wr, wi, sdim, info); complex a: (t, z, w, sdim, info); t and z a's shape. The
 * sort jaxlib's kernel refuses ('S', no select function reaches it) is refused here too. */
static cxla_status cx_cc_check_gees(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  char c;
  CX_TRY(nops(ic, t, 1));
  CX_TRY(square(ic, t, 0, "a"));
  CX_TRY(code(ic, t, "mode", "VN", &c));
  CX_TRY(code(ic, t, "sort", "N", &c));
  const cx_shape *a = cx_vop(ic, 0);
  int64_t n = a->dims[a->rank - 1];
  int nw = cx_type_part(t->type) == t->type ? 2 : 1;
  cx_shape *el = tuple_with_a(ic, out, nw + 4);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[1] = el[0];
  for (int i = 0; i < nw; i++) batch_array(&el[2 + i], a, t->type, 1, &n);
  batch_array(&el[2 + nw], a, CXLA_S32, 0, NULL);
  batch_array(&el[3 + nw], a, CXLA_S32, 0, NULL);
  return CXLA_OK;
}

/* dl, d, du (b's batch, then n) and b (batch, n x nrhs), all of one of the four LAPACK types
 * (the target's name has none); x is b's shape. */
static cxla_status cx_cc_check_gtsv_perturbed(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  static const char *const names[3] = {"dl", "d", "du"};
  CX_TRY(nops(ic, t, 4));
  CX_TRY(cx_vneed_array(ic, 3, "b"));
  const cx_shape *b = cx_vop(ic, 3);
  cxla_type ty = b->type;
  if ((ty != CXLA_F32 && ty != CXLA_F64 && ty != CXLA_C64 && ty != CXLA_C128) || b->rank < 2)
    return cx_vfail(ic, "%s: b must be f32, f64, c64 or c128 of rank >= 2, got %s", t->name, cx_vshape(ic, b));
  for (int i = 0; i < 3; i++) {
    CX_TRY(cx_vneed_array(ic, i, names[i]));
    const cx_shape *v = cx_vop(ic, i);
    int ok = v->type == ty && v->rank == b->rank - 1;
    for (int d = 0; ok && d < v->rank; d++) ok = v->dims[d] == b->dims[d];
    if (!ok)
      return cx_vfail(ic, "%s: %s must be %s with b's batch, then b's %lld rows, got %s (b %s)", t->name, names[i],
                      cx_vtype(ty), (long long)b->dims[b->rank - 2], cx_vshape(ic, v), cx_vshape(ic, b));
  }
  *out = *b;
  cx_vplain(out);
  return CXLA_OK;
}

/* ---- annotations and TopK ---- */

/* Any shape, as XLA's verifier: one that changes it (a sharded program's
 * SPMDFullToShardShape) is refused when compiling, not here. Several operands (Shardy's
 * GlobalToLocalShape of a shard_map's arguments) return a tuple, one element each. */
static cxla_status cx_cc_check_annotation(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  const cx_shape *d = &ic->in->shape;
  if (ic->in->nops < 1) return cx_vfail(ic, "%s takes at least one operand", t->name);
  if (ic->in->nops > 1 && (d->type != CXLA_TUPLE || d->ntuple != ic->in->nops))
    return cx_vfail(ic, "%s of %d operands returns a tuple of %d, declared %s", t->name, ic->in->nops, ic->in->nops,
                    cx_vshape(ic, d));
  return cx_infer_declared(ic, out);
}

/* (x's type with the last dimension k, s32 of the same dims), k the declared result's last
 * dimension, at most x's; x of rank 1 or 2, as XLA:CPU's TopK takes it. */
static cxla_status cx_cc_check_topk(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  CX_TRY(nops(ic, t, 1));
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0), *d = &ic->in->shape;
  cx_kind kind = cx_type_kind(x->type);
  if (x->rank < 1 || x->rank > 2 || (kind != CX_KIND_FLOAT && kind != CX_KIND_SINT && kind != CX_KIND_UINT))
    return cx_vfail(ic, "%s takes a rank 1 or 2 array of reals, got %s", t->name, cx_vshape(ic, x));
  if (d->type != CXLA_TUPLE || d->ntuple != 2 || d->tuple[0].rank != x->rank)
    return cx_vfail(ic, "%s returns (values, s32 indices) of the operand's rank, declared %s", t->name, cx_vshape(ic, d));
  int64_t k = d->tuple[0].dims[x->rank - 1];
  if (k > x->dims[x->rank - 1])
    return cx_vfail(ic, "%s: k=%lld is more than the last dimension of %s", t->name, (long long)k, cx_vshape(ic, x));
  cx_shape *el = cx_vtuple(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  cx_vset_array(&el[0], x->type, x->rank, x->dims);
  el[0].dims[x->rank - 1] = k;
  el[1] = el[0];
  el[1].type = CXLA_S32;
  return CXLA_OK;
}

/* A sink returns nothing: the empty tuple, whatever its operands. */
static cxla_status cx_cc_check_sink(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  const cx_shape *d = &ic->in->shape;
  if (d->type != CXLA_TUPLE || d->ntuple != 0)
    return cx_vfail(ic, "%s returns the empty tuple (), declared %s", t->name, cx_vshape(ic, d));
  return cx_infer_declared(ic, out);
}

/* A host callback keeps its declared shape: it is refused when compiling, not here. */
static cxla_status cx_cc_check_host_callback(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  (void)t;
  return cx_infer_declared(ic, out);
}

/* XLA:GPU's block-scaled dot: its rule lives with scaled-dot's (infer_scaled_dot.c). */
static cxla_status cx_cc_check_block_scaled_dot(cx_infer *ic, const cx_cc_info *t, cx_shape *out) {
  (void)t;
  return cx_infer_block_scaled_dot(ic, out);
}

/* ---- what the runtimes read ---- */

int cx_lapack_call_of(const cx_instr *in, cx_lapack_call *c) {
  int t = cx_cc_target_of(in);
  if (t < 0 || in->nops < 1) return 0;
  const cx_cc_info *info = cx_cc_info_of((cx_cc_target)t);
  memset(c, 0, sizeof *c);
  c->kind = info->kind;
  c->type = info->type;
  /* the matrices of m x n: b for trsm and gtsv, c for ormqr, a for geqp3 (jpvt last) */
  const cx_shape *a = &in->ops[info->kind == CX_CC_GEQP3 ? 0 : in->nops - 1 - (info->kind == CX_CC_ORGQR)]->shape;
  if (a->rank < 2) return 0;
  if (info->type == CXLA_INVALID) c->type = a->type; /* tridiagonal_solve_perturbed_ffi: b's type */
  c->m = a->dims[a->rank - 2];
  c->n = a->dims[a->rank - 1];
  c->k = min64(c->m, c->n);
  c->batch = 1;
  for (int d = 0; d < a->rank - 2; d++) c->batch *= a->dims[d];
  int64_t v;
  if (cx_cc_config_int(in, "uplo", &v)) c->lower = v == 'L';
  if (cx_cc_config_int(in, "side", &v)) c->left = v == 'L';
  if (cx_cc_config_int(in, "trans_x", &v)) c->trans = v == 'T' ? 1 : v == 'C' ? 2 : 0;
  if (cx_cc_config_int(in, "diag", &v)) c->unit_diag = v == 'U';
  if (cx_cc_config_int(in, "mode", &v)) c->mode = (char)v;
  if (cx_cc_config_int(in, "compute_right", &v)) c->mode = (char)v;
  if (cx_cc_config_int(in, "compute_left", &v)) c->mode_left = (char)v;
  if (info->kind == CX_CC_TRSM) c->k = in->ops[0]->shape.dims[a->rank - 1];
  if (info->kind == CX_CC_ORGQR || info->kind == CX_CC_ORMQR) {
    const cx_shape *tau = &in->ops[1]->shape;
    c->k = tau->dims[tau->rank - 1];
  }
  if (info->kind == CX_CC_GEHRD && cx_cc_config_int(in, "low", &v)) c->ilo = v;
  if (info->kind == CX_CC_GEHRD && cx_cc_config_int(in, "high", &v)) c->ihi = v;
  if (info->kind == CX_CC_ORMQR) {
    const cx_shape *q = &in->ops[0]->shape;
    c->acols = q->dims[q->rank - 1];
    if (cx_cc_config_int(in, "left", &v)) c->left = v != 0;
    if (cx_cc_config_int(in, "transpose", &v)) c->trans = v ? (cx_type_kind(info->type) == CX_KIND_COMPLEX ? 2 : 1) : 0;
  }
  return 1;
}
