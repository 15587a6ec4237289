/* linalg.h — the interpreter's reference linear algebra: plain textbook algorithms on one
 * row-major matrix of complex doubles (a real matrix is one with zero imaginary parts, and
 * every algorithm then computes what its real form does), written for clarity, independent of
 * the LAPACK and BLAS the cpu backend calls (so each checks the other). Used by the cholesky
 * and triangular-solve ops and by the LAPACK custom-calls jax emits. */
#ifndef CX_INTERP_LINALG_H
#define CX_INTERP_LINALG_H
#include <complex.h>
#include <stdint.h>
#include "interp/interp.h"

typedef double _Complex cx_z;

/* re + i im, exact for infinities and NaN (re + im * I is not). C11's CMPLX does this, but
 * glibc defines it only for GCC, not for clang (the ASan build). C guarantees a complex double
 * is laid out as double[2]. */
static inline cx_z cx_z_make(double re, double im) {
  cx_z z;
  ((double *)&z)[0] = re;
  ((double *)&z)[1] = im;
  return z;
}

/* Elements base .. base+n-1 of the array x (real or complex) as complex doubles, and back
 * (rounded to x's type; a real x keeps the real parts); the transpose of the n x n matrix a in
 * place (linalg_ops.c). */
void cx_la_load(const cxla_literal *x, int64_t base, int64_t n, cx_z *dst);
void cx_la_store(cxla_literal *x, int64_t base, int64_t n, const cx_z *src);
void cx_la_transpose(int64_t n, cx_z *a);

/* cholesky as XLA defines it (its CholeskyExpander, which XLA:CPU runs): the lower factor L,
 * L L^H = a, of the n x n matrix a (only its lower triangle read), written to l with zeros
 * above the diagonal. Pivot j is t = a[j][j] - sum_k |l[j][k]|^2 and s = sqrt(re t); the
 * column is divided by s, and the diagonal entry is t / s (exactly s for a real t > 0, NaN for
 * t = 0) except when the pivot is alone in its 128-column block, where it is s. A pivot whose
 * s is NaN (re t < 0 or NaN) makes the whole result NaN. Returns 1 when it did. */
int cx_ref_cholesky_xla(int64_t n, const cx_z *a, cx_z *l);

/* LAPACK's potrf on the lower triangle (a[i][j], i >= j): L in place of it (its diagonal real,
 * from the real part of a's), the strict upper triangle untouched. Returns info: 0, or j + 1
 * when pivot j is not positive (then columns < j hold L, pivot j's value is left at a[j][j]
 * and the rest of the triangle is unspecified). */
int cx_ref_potrf_lower(int64_t n, cx_z *a);

/* Solves op(a) x = b (left) or x op(a) = b (right) for the m x n matrix b, in place: a is
 * m x m (left) or n x n (right); only its `lower` (else upper) triangle is read, its diagonal
 * taken as 1 when unit_diag; op is a itself, its transpose (trans = 1) or adjoint (trans = 2,
 * the conjugate transpose). Division by a zero diagonal gives infinities and NaNs. */
void cx_ref_trsm(int left, int lower, int trans, int unit_diag, int64_t m, int64_t n, const cx_z *a, cx_z *b);

/* LU with partial pivoting as LAPACK's getrf: P A = L U of the m x n matrix a in place (L
 * unit lower, below the diagonal; U on and above it); ipiv[j] (1-based) is the row swapped
 * with row j, the first of the largest |re| + |im| in column j at or below the diagonal (BLAS's
 * i?amax). Returns info: 0, or j + 1 for the first exactly zero pivot U[j][j] (the
 * factorization still completes, as LAPACK's does). */
int cx_ref_getrf(int64_t m, int64_t n, cx_z *a, int32_t *ipiv);

/* Householder QR as LAPACK's geqrf: R on and above the diagonal of the m x n a, the reflectors
 * below it, tau[min(m, n)]. Reflector j is LAPACK's (?larfg): H = I - tau v v^H with v[j] = 1
 * and beta = -sign(re alpha) * |(alpha, x)| (real), so R's diagonal is real with the opposite
 * sign of the column's pivot's real part; geqrf applies H^H to the columns right of it. */
void cx_ref_geqrf(int64_t m, int64_t n, cx_z *a, cx_z *tau);
/* LAPACK's orgqr/ungqr: the first n columns of Q = H(0) ... H(k-1) from geqrf's reflectors in
 * the m x n a (m >= n >= k), written over a. */
void cx_ref_orgqr(int64_t m, int64_t n, int64_t k, cx_z *a, const cx_z *tau);

/* QR with column pivoting as LAPACK's geqp3: A P = Q R of the m x n a in place (geqrf's
 * reflectors and tau[min(m, n)]). Columns with jpvt[j] != 0 go first, unpivoted; then each step
 * takes the free column whose norm below the diagonal is the largest (the first of ties;
 * LAPACK downdates the norms, this recomputes them: near-ties may pick differently). jpvt[j]
 * becomes the 1-based original index of column j. */
void cx_ref_geqp3(int64_t m, int64_t n, cx_z *a, int32_t *jpvt, cx_z *tau);

/* LAPACK's gehrd: Q^H A Q = H upper Hessenberg for the n x n a in place, H on and above the
 * subdiagonal, the reflectors below it (reflector i covers rows i+1 .. ihi of column i, its
 * first element 1 implied), tau[n-1] (zero outside ilo .. ihi-1); ilo and ihi 0-based (jax's
 * low and high less one), the rows and columns outside them already triangular. */
void cx_ref_gehrd(int64_t n, int64_t ilo, int64_t ihi, cx_z *a, cx_z *tau);

/* LAPACK's sytrd/hetrd: Q^H A Q = T real symmetric tridiagonal for the Hermitian n x n a, of
 * which only the triangle `lower` names is read or written (the other stays as it was). T's
 * diagonal goes to d[n] and its off-diagonal to e[n-1], also in a next to the diagonal; the
 * reflectors stay in the triangle beyond (lower: reflector i in rows i+2.. of column i, its
 * 1 at row i+1; upper: reflector i in rows 0..i-1 of column i+1, its 1 at row i), tau[n-1].
 * x: n elements of scratch. */
void cx_ref_sytrd(int lower, int64_t n, cx_z *a, double *d, double *e, cx_z *tau, cx_z *x);

/* LAPACK's ormqr/unmqr: c (m x n) replaced by Q c, Q^H c (left; trans) or c Q, c Q^H, where
 * Q = H(0) ... H(k-1) from geqrf's reflectors in the columns of a (rows m if left, else n;
 * ka columns), H(j) = I - tau[j] v v^H. */
void cx_ref_ormqr(int left, int trans, int64_t m, int64_t n, int64_t k, const cx_z *a, int64_t ka, const cx_z *tau,
                  cx_z *c);

/* LAPACK's gtsv: solves the n x n tridiagonal system (subdiagonal dl[n-1], diagonal d[n],
 * superdiagonal du[n-1]) for the n x nrhs b in place, by elimination with partial pivoting
 * between rows i and i+1 (the larger |re| + |im| leads). It leaves U in d, du and dl (its
 * second superdiagonal, dl[n-2] untouched). Returns info: 0, or i + 1 when U[i][i] is exactly
 * zero (then b and the factors are where elimination stopped, as LAPACK's). */
int cx_ref_gtsv(int64_t n, int64_t nrhs, cx_z *dl, cx_z *d, cx_z *du, cx_z *b);

/* Eigenvalues (real, ascending, w[n]) and orthonormal eigenvectors (the columns of v, n x n)
 * of the Hermitian n x n a, by cyclic Jacobi rotations until the off-diagonal part is
 * negligible. Eigenvectors are unique only up to a unit factor (a sign, for real matrices) and
 * within repeated eigenvalues: compare them by what they reconstruct. a is overwritten.
 * Returns 0 (1 if it did not converge). */
int cx_ref_syev(int64_t n, cx_z *a, double *w, cx_z *v);

/* Singular values (descending, s[min(m, n)]) of the m x n a, and with u/vt non-NULL the
 * singular vectors, a = u diag(s) vt, by one-sided Jacobi rotations: u is m x ucols and vt
 * vrows x n (vt = V^H), where full (ucols = m, vrows = n) completes the bases orthonormally
 * and otherwise both are min(m, n). Unique only up to unit factors (and within repeated
 * values). a is overwritten. Returns 0 (1 if it did not converge, or on allocation failure). */
int cx_ref_gesvd(int64_t m, int64_t n, cx_z *a, double *s, cx_z *u, cx_z *vt, int full);

/* Eigenvalues w[n] and eigenvectors of the general n x n a (geev_ref.c): column j of the n x n
 * vr (right: a v = w_j v) and vl (left: u^H a = w_j u^H), each of unit 2-norm with its largest
 * component real and positive; NULL for a side not wanted. The eigenvalues come in the order of
 * this reference's Schur form, which is not LAPACK's. a is overwritten. Returns 0 (1 if it did
 * not converge, or on allocation failure). */
int cx_ref_geev(int64_t n, cx_z *a, cx_z *w, cx_z *vl, cx_z *vr);

/* Householder reduction to Hessenberg form (geev_ref.c): a becomes Q^H a Q, upper Hessenberg
 * (zeros below the subdiagonal), and the n x n z = Q; v: n elements of scratch. Each reflector
 * is real for a real a, so a real a stays real. */
void cx_ref_hessenberg(int64_t n, cx_z *a, cx_z *z, cx_z *v);

/* The complex Schur form a = z t z^H of the n x n a (geev_ref.c): t upper triangular in place
 * of a, z unitary, the eigenvalues on t's diagonal in this reference's order (not LAPACK's).
 * Returns 0 (1 if it did not converge, a non-finite a among them, or on allocation failure). */
int cx_ref_schur(int64_t n, cx_z *a, cx_z *z);

/* The real Schur form a = z t z^T of the real n x n a (schur_ref.c; imaginary parts ignored):
 * t quasi upper triangular in place of a, with a 2 x 2 block on the diagonal for each complex
 * pair of eigenvalues and 1 x 1 blocks for the real ones, z orthogonal. w[n] gets the
 * eigenvalues, each pair's positive imaginary part first. Returns 0 (1 if it did not converge,
 * a non-finite a among them, or on allocation failure). */
int cx_ref_schur_real(int64_t n, cx_z *a, cx_z *z, cx_z *w);

/* jax's tridiagonal solve with perturb_singular (tridiag_ref.c): the system of gtsv's matrix
 * (dl[1..n-1], d[n], du[0..n-2]; dl[0] and du[n-1] unread) for the n x nrhs b in place, by
 * elimination with row interchanges chosen on pivots scaled by their rows' 1-norms, then back
 * substitution where a pivot below 1 in magnitude is perturbed away from overflow (xLAGTS's
 * rule, against the row's largest right-hand side, starting from eps * max|U|) with the
 * element type's eps and smallest normal number tiny. */
void cx_ref_gtsv_perturbed(int64_t n, int64_t nrhs, const cx_z *dl, const cx_z *d, const cx_z *du, cx_z *b,
                           double eps, double tiny);

#endif
