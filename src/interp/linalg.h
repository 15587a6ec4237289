/* linalg.h — the interpreter's reference linear algebra: plain textbook algorithms on one
 * row-major matrix of doubles, written for clarity, independent of the LAPACK and BLAS the cpu
 * backend calls (so each checks the other). Used by the cholesky and triangular-solve ops and
 * by the LAPACK custom-calls jax emits. */
#ifndef CX_INTERP_LINALG_H
#define CX_INTERP_LINALG_H
#include <stdint.h>
#include "interp/interp.h"

/* Elements base .. base+n-1 of the array x as doubles, and back (rounded to x's type); the
 * transpose of the n x n matrix a in place (linalg_ops.c). */
void cx_la_load(const cxla_literal *x, int64_t base, int64_t n, double *dst);
void cx_la_store(cxla_literal *x, int64_t base, int64_t n, const double *src);
void cx_la_transpose(int64_t n, double *a);

/* cholesky as XLA defines it (its CholeskyExpander, which XLA:CPU runs): the lower factor L of
 * the n x n matrix a (only its lower triangle read), written to l with zeros above the
 * diagonal. Pivot j is t = a[j][j] - sum_k l[j][k]^2; its column is divided by sqrt(t), and
 * its diagonal entry is t / sqrt(t) (exactly sqrt(t) for t > 0, NaN for t = 0) except when the
 * pivot is alone in its 128-column block, where it is sqrt(t). A pivot whose sqrt is NaN
 * (t < 0 or NaN) makes the whole result NaN. Returns 1 when it did. */
int cx_ref_cholesky_xla(int64_t n, const double *a, double *l);

/* LAPACK's potrf on the lower triangle (a[i][j], i >= j): L in place of it, the strict upper
 * triangle untouched. Returns info: 0, or j + 1 when pivot j is not positive (then columns
 * < j hold L, pivot j's value is left at a[j][j] and the rest of the triangle is unspecified). */
int cx_ref_potrf_lower(int64_t n, double *a);

/* Solves op(a) x = b (left) or x op(a) = b (right) for the m x n matrix b, in place: a is
 * m x m (left) or n x n (right); only its `lower` (else upper) triangle is read, its diagonal
 * taken as 1 when unit_diag; op is a itself, its transpose (trans = 1) or adjoint (trans = 2,
 * the transpose of a real matrix). Division by a zero diagonal gives infinities and NaNs. */
void cx_ref_trsm(int left, int lower, int trans, int unit_diag, int64_t m, int64_t n, const double *a, double *b);

/* LU with partial pivoting as LAPACK's getrf: P A = L U of the m x n matrix a in place (L
 * unit lower, below the diagonal; U on and above it); ipiv[j] (1-based) is the row swapped
 * with row j, the first of the largest |value| in column j at or below the diagonal. Returns
 * info: 0, or j + 1 for the first exactly zero pivot U[j][j] (the factorization still
 * completes, as LAPACK's does). */
int cx_ref_getrf(int64_t m, int64_t n, double *a, int32_t *ipiv);

/* Householder QR as LAPACK's geqrf: R on and above the diagonal of the m x n a, the reflectors
 * below it, tau[min(m, n)]. Reflector j is LAPACK's (dlarfg): H = I - tau v v^T with v[j] = 1,
 * beta = -sign(alpha) * norm, so R's diagonal has the opposite sign of the column's pivot. */
void cx_ref_geqrf(int64_t m, int64_t n, double *a, double *tau);
/* LAPACK's orgqr: the first n columns of Q = H(0) ... H(k-1) from geqrf's reflectors in the
 * m x n a (m >= n >= k), written over a. */
void cx_ref_orgqr(int64_t m, int64_t n, int64_t k, double *a, const double *tau);

/* Eigenvalues (ascending, w[n]) and orthonormal eigenvectors (the columns of v, n x n) of the
 * symmetric n x n a, by cyclic Jacobi rotations until the off-diagonal part is negligible.
 * Eigenvectors are unique only up to sign (and within repeated eigenvalues): compare them by
 * what they reconstruct. a is overwritten. Returns 0 (1 if it did not converge). */
int cx_ref_syev(int64_t n, double *a, double *w, double *v);

/* Singular values (descending, s[min(m, n)]) of the m x n a, and with u/vt non-NULL the
 * singular vectors, by one-sided Jacobi rotations: u is m x ucols and vt vrows x n, where
 * full (ucols = m, vrows = n) completes the bases orthonormally and otherwise both are
 * min(m, n). Unique only up to signs (and within repeated values). a is overwritten.
 * Returns 0 (1 if it did not converge, or on allocation failure). */
int cx_ref_gesvd(int64_t m, int64_t n, double *a, double *s, double *u, double *vt, int full);

#endif
