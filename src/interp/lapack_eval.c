/* lapack_eval.c — the LAPACK custom-calls jax emits on CPU, on the interpreter: each matrix
 * of the batch in complex doubles through the reference algorithms (linalg.h), results as
 * jaxlib's FFI kernels define them (ir/custom_call.h reads the options). Where LAPACK leaves
 * an output unspecified (a destroyed input, the singular vectors mode 'N' does not compute)
 * this gives the input back, or zeros. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"
#include "interp/linalg.h"
#include "ir/custom_call.h"

/* The results of one call: n arrays of the instruction's result shapes, and scratch space. */
typedef struct la_job {
  cx_lapack_call c;
  cxla_literal *res[6];
  int nres;
  cx_z *w;
} la_job;

static cxla_status begin(cx_interp *st, cx_instr *in, la_job *j, int nres) {
  memset(j, 0, sizeof *j);
  if (!cx_lapack_call_of(in, &j->c)) return cx_hv_bad(st, in, "not a LAPACK call cxla knows");
  j->nres = nres;
  for (int i = 0; i < nres; i++) {
    const cx_shape *s = cx_hv_result_shape(st, in, i, nres);
    if (!s) return CXLA_ERR_VERIFY;
    if (!(j->res[i] = cx_hv_literal(st, in, s))) return CXLA_ERR_OUT_OF_MEMORY;
  }
  return CXLA_OK;
}

/* n complex doubles of scratch space for one matrix at a time. */
static cxla_status scratch(cx_interp *st, cx_instr *in, la_job *j, cxla_status s, int64_t n) {
  if (s != CXLA_OK) return s;
  j->w = cx_malloc(sizeof *j->w * (size_t)(n + 1));
  return j->w ? CXLA_OK : cx_hv_oom(st, in);
}

/* Hands the results over (or frees them after a failure). */
static cxla_status finish(cx_interp *st, cx_instr *in, la_job *j, cxla_status s, cxla_literal **out) {
  cx_free(j->w);
  if (s == CXLA_OK) return cx_hv_finish(st, in, j->nres, j->res, out);
  for (int i = 0; i < j->nres; i++) cxla_literal_destroy(j->res[i]);
  return s;
}

static void store_int(cxla_literal *x, int64_t i, int64_t v) { cx_store_i64(x->shape.type, x->data, i, v); }
/* Real values (eigenvalues, singular values) into a real array. */
static void store_real(cxla_literal *x, int64_t base, int64_t n, const double *v) {
  for (int64_t i = 0; i < n; i++) cx_store_f64(x->shape.type, x->data, base + i, v[i]);
}

/* (a, info) = potrf(a): the factor in the triangle uplo names, the other left as it was. */
CX_INTERP_EVALUATOR(cx_interp_lapack_potrf) {
  la_job j;
  cxla_status s = begin(st, in, &j, 2);
  int64_t n = j.c.n, per = n * n;
  s = scratch(st, in, &j, s, per);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    if (!j.c.lower) cx_la_transpose(n, j.w);
    int info = cx_ref_potrf_lower(n, j.w);
    if (!j.c.lower) cx_la_transpose(n, j.w);
    cx_la_store(j.res[0], b * per, per, j.w);
    store_int(j.res[1], b, info);
  }
  return finish(st, in, &j, s, out);
}

CX_INTERP_EVALUATOR(cx_interp_lapack_trsm) {
  la_job j;
  cxla_status s = begin(st, in, &j, 1);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, bper = m * n, aper = k * k;
  s = scratch(st, in, &j, s, aper + bper);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * aper, aper, j.w);
    cx_la_load(ops[1], b * bper, bper, j.w + aper);
    cx_ref_trsm(j.c.left, j.c.lower, j.c.trans, j.c.unit_diag, m, n, j.w, j.w + aper);
    cx_la_store(j.res[0], b * bper, bper, j.w + aper);
  }
  return finish(st, in, &j, s, out);
}

CX_INTERP_EVALUATOR(cx_interp_lapack_getrf) {
  la_job j;
  cxla_status s = begin(st, in, &j, 3);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, per = m * n;
  int32_t *piv = cx_malloc(sizeof *piv * (size_t)(k + 1));
  s = scratch(st, in, &j, s, per);
  if (s == CXLA_OK && !piv) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    int info = cx_ref_getrf(m, n, j.w, piv);
    cx_la_store(j.res[0], b * per, per, j.w);
    for (int64_t i = 0; i < k; i++) store_int(j.res[1], b * k + i, piv[i]);
    store_int(j.res[2], b, info);
  }
  cx_free(piv);
  return finish(st, in, &j, s, out);
}

CX_INTERP_EVALUATOR(cx_interp_lapack_geqrf) {
  la_job j;
  cxla_status s = begin(st, in, &j, 2);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, per = m * n;
  s = scratch(st, in, &j, s, per + k);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    cx_ref_geqrf(m, n, j.w, j.w + per);
    cx_la_store(j.res[0], b * per, per, j.w);
    cx_la_store(j.res[1], b * k, k, j.w + per);
  }
  return finish(st, in, &j, s, out);
}

CX_INTERP_EVALUATOR(cx_interp_lapack_orgqr) {
  la_job j;
  cxla_status s = begin(st, in, &j, 1);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, per = m * n;
  s = scratch(st, in, &j, s, per + k);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    cx_la_load(ops[1], b * k, k, j.w + per);
    cx_ref_orgqr(m, n, k, j.w, j.w + per);
    cx_la_store(j.res[0], b * per, per, j.w);
  }
  return finish(st, in, &j, s, out);
}

/* (v, w, info) = syevd(a) or heevd(a): the triangle uplo names is the symmetric (Hermitian)
 * matrix. */
CX_INTERP_EVALUATOR(cx_interp_lapack_syevd) {
  la_job j;
  cxla_status s = begin(st, in, &j, 3);
  int64_t n = j.c.n, per = n * n;
  double *w = cx_malloc(sizeof *w * (size_t)(n + 1));
  s = scratch(st, in, &j, s, 2 * per);
  if (s == CXLA_OK && !w) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *v = j.w + per;
    cx_la_load(ops[0], b * per, per, j.w);
    for (int64_t r = 0; r < n; r++) /* the Hermitian matrix the triangle stands for */
      for (int64_t c = r + 1; c < n; c++) {
        if (j.c.lower) j.w[r * n + c] = conj(j.w[c * n + r]);
        else j.w[c * n + r] = conj(j.w[r * n + c]);
      }
    for (int64_t r = 0; r < n; r++) j.w[r * n + r] = creal(j.w[r * n + r]); /* LAPACK reads no imaginary part there */
    int info = cx_ref_syev(n, j.w, w, v);
    if (j.c.mode == 'V') cx_la_store(j.res[0], b * per, per, v);
    else memcpy((char *)j.res[0]->data + b * per * cxla_type_size(j.c.type),
                (const char *)ops[0]->data + b * per * cxla_type_size(j.c.type), (size_t)per * cxla_type_size(j.c.type));
    store_real(j.res[1], b * n, n, w);
    store_int(j.res[2], b, info);
  }
  cx_free(w);
  return finish(st, in, &j, s, out);
}

/* (a, s, u, vt, info) = gesdd(a) or gesvd(a); a comes back as it was, and with mode 'N' the
 * vectors are zeros. */
CX_INTERP_EVALUATOR(cx_interp_lapack_gesvd) {
  la_job j;
  cxla_status s = begin(st, in, &j, 5);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, per = m * n;
  int want = j.c.mode != 'N', full = j.c.mode == 'A';
  int64_t uper = s == CXLA_OK ? cx_shape_elems(&j.res[2]->shape) / (j.c.batch ? j.c.batch : 1) : 0;
  int64_t vper = s == CXLA_OK ? cx_shape_elems(&j.res[3]->shape) / (j.c.batch ? j.c.batch : 1) : 0;
  double *sv = cx_malloc(sizeof *sv * (size_t)(k + 1));
  s = scratch(st, in, &j, s, per + uper + vper);
  if (s == CXLA_OK && !sv) s = cx_hv_oom(st, in);
  if (s == CXLA_OK) memcpy(j.res[0]->data, ops[0]->data, (size_t)cx_shape_bytes(&ops[0]->shape));
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *u = j.w + per, *vt = u + uper;
    cx_la_load(ops[0], b * per, per, j.w);
    int info = cx_ref_gesvd(m, n, j.w, sv, want ? u : NULL, want ? vt : NULL, full);
    store_real(j.res[1], b * k, k, sv);
    if (want) {
      cx_la_store(j.res[2], b * uper, uper, u);
      cx_la_store(j.res[3], b * vper, vper, vt);
    }
    store_int(j.res[4], b, info);
  }
  cx_free(sv);
  return finish(st, in, &j, s, out);
}

/* (wr, wi, vl, vr, info) of a real a, (w, vl, vr, info) of a complex one, as jaxlib's geev
 * kernels (ir/custom_calls.def): the eigenvalues in the reference's order (linalg.h), which is
 * not LAPACK's, so a result is compared as a set; a side not asked for is zeros; a matrix with a
 * non-finite entry (info -4) or that does not converge (info 1) has NaN values and vectors. */
CX_INTERP_EVALUATOR(cx_interp_lapack_geev) {
  la_job j;
  int nw = in->shape.type == CXLA_TUPLE && in->shape.ntuple == 5 ? 2 : 1;
  cxla_status s = begin(st, in, &j, nw + 3);
  int64_t n = j.c.n, per = n * n;
  int want[2] = {j.c.mode_left == 'V', j.c.mode == 'V'};
  double *part = cx_malloc(sizeof *part * (size_t)(2 * n + 1));
  s = scratch(st, in, &j, s, 3 * per + n);
  if (s == CXLA_OK && !part) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *v[2] = {j.w + per, j.w + 2 * per}, *w = j.w + 3 * per;
    cx_la_load(ops[0], b * per, per, j.w);
    int finite = 1;
    for (int64_t i = 0; i < per; i++) finite &= isfinite(creal(j.w[i])) && isfinite(cimag(j.w[i]));
    int info = finite ? cx_ref_geev(n, j.w, w, want[0] ? v[0] : NULL, want[1] ? v[1] : NULL) : -4;
    for (int64_t i = 0; info && i < per; i++) v[0][i] = v[1][i] = cx_z_make(NAN, NAN);
    for (int64_t i = 0; info && i < n; i++) w[i] = cx_z_make(NAN, NAN);
    for (int side = 0; side < 2; side++) {
      if (!want[side]) memset(v[side], 0, sizeof *v[side] * (size_t)per);
      cx_la_store(j.res[nw + side], b * per, per, v[side]);
    }
    if (nw == 1) cx_la_store(j.res[0], b * n, n, w);
    for (int64_t i = 0; nw == 2 && i < n; i++) part[i] = creal(w[i]), part[n + i] = cimag(w[i]);
    if (nw == 2) store_real(j.res[0], b * n, n, part), store_real(j.res[1], b * n, n, part + n);
    store_int(j.res[nw + 2], b, info);
  }
  cx_free(part);
  return finish(st, in, &j, s, out);
}

/* (dl', d', du', x, info) = gtsv(dl, d, du, b): the reference's factor and solution, dl[0]
 * (not part of the matrix) as it came. */
CX_INTERP_EVALUATOR(cx_interp_lapack_gtsv) {
  la_job j;
  cxla_status s = begin(st, in, &j, 5);
  int64_t n = j.c.m, per = n * j.c.n;
  s = scratch(st, in, &j, s, 3 * n + per);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *x = j.w + 3 * n;
    for (int i = 0; i < 3; i++) cx_la_load(ops[i], b * n, n, j.w + i * n);
    cx_la_load(ops[3], b * per, per, x);
    int info = n ? cx_ref_gtsv(n, j.c.n, j.w + 1, j.w + n, j.w + 2 * n, x) : 0;
    for (int i = 0; i < 3; i++) cx_la_store(j.res[i], b * n, n, j.w + i * n);
    cx_la_store(j.res[3], b * per, per, x);
    store_int(j.res[4], b, info);
  }
  return finish(st, in, &j, s, out);
}

/* c' = Q c, Q^H c, c Q or c Q^H = ormqr(a, tau, c). */
CX_INTERP_EVALUATOR(cx_interp_lapack_ormqr) {
  la_job j;
  cxla_status s = begin(st, in, &j, 1);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, ka = j.c.acols, per = m * n, aper = (j.c.left ? m : n) * ka;
  s = scratch(st, in, &j, s, per + aper + k);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *a = j.w + per, *tau = a + aper;
    cx_la_load(ops[0], b * aper, aper, a);
    cx_la_load(ops[1], b * k, k, tau);
    cx_la_load(ops[2], b * per, per, j.w);
    cx_ref_ormqr(j.c.left, j.c.trans != 0, m, n, k, a, ka, tau, j.w);
    cx_la_store(j.res[0], b * per, per, j.w);
  }
  return finish(st, in, &j, s, out);
}

/* (qr, jpvt', tau) = geqp3(a, jpvt). */
CX_INTERP_EVALUATOR(cx_interp_lapack_geqp3) {
  la_job j;
  cxla_status s = begin(st, in, &j, 3);
  int64_t m = j.c.m, n = j.c.n, k = j.c.k, per = m * n;
  int32_t *p = cx_malloc(sizeof *p * (size_t)(n + 1));
  s = scratch(st, in, &j, s, per + k);
  if (s == CXLA_OK && !p) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    for (int64_t i = 0; i < n; i++) p[i] = (int32_t)cx_load_i64(ops[1]->shape.type, ops[1]->data, b * n + i);
    cx_ref_geqp3(m, n, j.w, p, j.w + per);
    cx_la_store(j.res[0], b * per, per, j.w);
    for (int64_t i = 0; i < n; i++) store_int(j.res[1], b * n + i, p[i]);
    cx_la_store(j.res[2], b * k, k, j.w + per);
  }
  cx_free(p);
  return finish(st, in, &j, s, out);
}

/* (a', tau, info) = gehrd(a): info is always 0. */
CX_INTERP_EVALUATOR(cx_interp_lapack_gehrd) {
  la_job j;
  cxla_status s = begin(st, in, &j, 3);
  int64_t n = j.c.n, per = n * n, nt = n > 0 ? n - 1 : 0;
  s = scratch(st, in, &j, s, per + nt);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    if (n) cx_ref_gehrd(n, j.c.ilo - 1, j.c.ihi - 1, j.w, j.w + per);
    cx_la_store(j.res[0], b * per, per, j.w);
    cx_la_store(j.res[1], b * nt, nt, j.w + per);
    store_int(j.res[2], b, 0);
  }
  return finish(st, in, &j, s, out);
}

/* (a', d, e, tau, info) = sytrd(a) or hetrd(a): info is always 0. */
CX_INTERP_EVALUATOR(cx_interp_lapack_sytrd) {
  la_job j;
  cxla_status s = begin(st, in, &j, 5);
  int64_t n = j.c.n, per = n * n, nt = n > 0 ? n - 1 : 0;
  double *de = cx_malloc(sizeof *de * (size_t)(2 * n + 1));
  s = scratch(st, in, &j, s, per + 2 * n);
  if (s == CXLA_OK && !de) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_la_load(ops[0], b * per, per, j.w);
    cx_ref_sytrd(j.c.lower, n, j.w, de, de + n, j.w + per, j.w + per + n);
    cx_la_store(j.res[0], b * per, per, j.w);
    store_real(j.res[1], b * n, n, de);
    store_real(j.res[2], b * nt, nt, de + n);
    cx_la_store(j.res[3], b * nt, nt, j.w + per);
    store_int(j.res[4], b, 0);
  }
  cx_free(de);
  return finish(st, in, &j, s, out);
}

/* (t, z, wr, wi, sdim, info) of a real a, (t, z, w, sdim, info) of a complex one, as jaxlib's
 * gees kernels (ir/custom_calls.def), unsorted (sdim 0): the reference's Schur form, which is a
 * Schur form of a but not LAPACK's (compare a = z t z^H and t's shape, not t). z is zeros when
 * mode is 'N'; a matrix that does not converge (a non-finite one among them: info 1) has NaN
 * t, z and eigenvalues. */
CX_INTERP_EVALUATOR(cx_interp_lapack_gees) {
  la_job j;
  int nw = in->shape.type == CXLA_TUPLE && in->shape.ntuple == 6 ? 2 : 1;
  cxla_status s = begin(st, in, &j, nw + 4);
  int64_t n = j.c.n, per = n * n;
  double *part = cx_malloc(sizeof *part * (size_t)(2 * n + 1));
  s = scratch(st, in, &j, s, 2 * per + n);
  if (s == CXLA_OK && !part) s = cx_hv_oom(st, in);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *t = j.w, *z = t + per, *w = z + per;
    cx_la_load(ops[0], b * per, per, t);
    int info = nw == 2 ? cx_ref_schur_real(n, t, z, w) : cx_ref_schur(n, t, z);
    for (int64_t i = 0; !info && nw == 1 && i < n; i++) w[i] = t[i * n + i];
    for (int64_t i = 0; info && i < per; i++) t[i] = z[i] = cx_z_make(NAN, NAN);
    for (int64_t i = 0; info && i < n; i++) w[i] = cx_z_make(NAN, NAN);
    if (j.c.mode != 'V') memset(z, 0, sizeof *z * (size_t)per);
    cx_la_store(j.res[0], b * per, per, t);
    cx_la_store(j.res[1], b * per, per, z);
    if (nw == 1) cx_la_store(j.res[2], b * n, n, w);
    for (int64_t i = 0; nw == 2 && i < n; i++) part[i] = creal(w[i]), part[n + i] = cimag(w[i]);
    if (nw == 2) store_real(j.res[2], b * n, n, part), store_real(j.res[3], b * n, n, part + n);
    store_int(j.res[nw + 2], b, 0);
    store_int(j.res[nw + 3], b, info);
  }
  cx_free(part);
  return finish(st, in, &j, s, out);
}

/* x = jax's perturbed tridiagonal solve of (dl, d, du, b), with the eps and smallest normal
 * number of the element type (f32's for f32 and c64), as jaxlib computes in that type. */
CX_INTERP_EVALUATOR(cx_interp_gtsv_perturbed) {
  la_job j;
  cxla_status s = begin(st, in, &j, 1);
  int64_t n = j.c.m, per = n * j.c.n;
  int dbl = cx_type_part(j.c.type) == CXLA_F64;
  s = scratch(st, in, &j, s, 3 * n + per);
  for (int64_t b = 0; s == CXLA_OK && b < j.c.batch; b++) {
    cx_z *x = j.w + 3 * n;
    for (int i = 0; i < 3; i++) cx_la_load(ops[i], b * n, n, j.w + i * n);
    cx_la_load(ops[3], b * per, per, x);
    cx_ref_gtsv_perturbed(n, j.c.n, j.w, j.w + n, j.w + 2 * n, x, dbl ? DBL_EPSILON : FLT_EPSILON,
                          dbl ? DBL_MIN : FLT_MIN);
    cx_la_store(j.res[0], b * per, per, x);
  }
  return finish(st, in, &j, s, out);
}
