/* literal_diff.c — element-by-element distance between a literal and its reference. Integers
 * are compared in their own storage: through a double, s64/u64 values beyond 2^53 that differ
 * could round to the same number. */
#include <math.h>
#include "ir/literal_diff.h"

void cx_diff_default_tol(cxla_type t, double *rtol, double *atol) {
  /* Backends may reassociate float sums (as XLA allows) and contract into FMAs, so the
   * tolerance has to cover a reordered sum of many terms, not one rounding. */
  switch (cx_type_part(t)) { /* complex numbers: their parts' */
  case CXLA_F64: *rtol = 1e-12; *atol = 1e-13; break;
  case CXLA_F32: *rtol = 1e-5; *atol = 1e-6; break;
  case CXLA_F16: *rtol = 1e-2; *atol = 1e-3; break;
  case CXLA_BF16: *rtol = 4e-2; *atol = 1e-2; break;
  default: *rtol = 0; *atol = 0; break;
  }
}

void cx_diff_index(cx_sb *sb, const cx_shape *s, int64_t i) {
  int64_t st[CXLA_MAX_RANK];
  cx_shape_strides(s, st);
  cx_sb_putc(sb, '[');
  for (int d = 0; d < s->rank; d++)
    cx_sb_printf(sb, "%s%lld", d ? "," : "", (long long)(st[d] && s->dims[d] ? (i / st[d]) % s->dims[d] : 0));
  cx_sb_putc(sb, ']');
}

/* |g - w| of two integers of type t, exactly up to the double's rounding. */
static double int_distance(cxla_type t, int64_t g, int64_t w) {
  if (cx_type_kind(t) == CX_KIND_UINT) {
    uint64_t a = (uint64_t)g, b = (uint64_t)w;
    return (double)(a > b ? a - b : b - a);
  }
  return g > w ? (double)((uint64_t)g - (uint64_t)w) : (double)((uint64_t)w - (uint64_t)g);
}

static double int_magnitude(cxla_type t, int64_t w) {
  if (cx_type_kind(t) == CX_KIND_UINT) return (double)(uint64_t)w;
  return w < 0 ? (double)(0 - (uint64_t)w) : (double)w;
}

/* One part of a complex number: a NaN or an infinity that matches adds nothing, one that
 * does not is infinitely far. */
static double part_distance(double g, double w) {
  if ((isnan(g) && isnan(w)) || (isinf(g) && g == w)) return 0;
  if (!isfinite(g) || !isfinite(w)) return INFINITY;
  return fabs(g - w);
}

cxla_status cx_literal_diff(cxla_context *ctx, const cxla_literal *got, const cxla_literal *want, double rtol,
                            double atol, cx_diff *d) {
  return cx_literal_diff_allow(ctx, got, want, rtol, atol, NULL, d);
}

cxla_status cx_literal_diff_allow(cxla_context *ctx, const cxla_literal *got, const cxla_literal *want, double rtol,
                                  double atol, const cxla_literal *allow, cx_diff *d) {
  d->n = d->nbad = d->ndiff = 0;
  d->max_abs = d->max_rel = 0;
  d->first_bad = d->first_diff = -1;
  if (got->shape.type == CXLA_TUPLE || want->shape.type == CXLA_TUPLE || !cx_shape_equal(&got->shape, &want->shape)) {
    char a[256], b[256];
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cannot compare %s with %s (arrays of one shape only)",
                    cx_shape_str(&got->shape, a, sizeof a), cx_shape_str(&want->shape, b, sizeof b));
  }
  cxla_type t = got->shape.type;
  int64_t n = cx_shape_elems(&got->shape);
  int is_float = cx_type_is_float(t);
  if (allow && (allow->shape.type != CXLA_F64 || cx_shape_elems(&allow->shape) != n)) {
    char a[256], b[256];
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "an allowance of shape %s does not fit a leaf of shape %s",
                    cx_shape_str(&allow->shape, a, sizeof a), cx_shape_str(&got->shape, b, sizeof b));
  }
  d->n = n;
  for (int64_t i = 0; i < n; i++) {
    double err, mag;
    int ok;
    if (cx_type_is_complex(t)) {
      double gr, gi, wr, wi;
      cx_load_complex(t, got->data, i, &gr, &gi);
      cx_load_complex(t, want->data, i, &wr, &wi);
      if ((gr == wr || (isnan(gr) && isnan(wr))) && (gi == wi || (isnan(gi) && isnan(wi)))) continue;
      ok = cx_complex_close(t, got->data, want->data, i, rtol, atol);
      err = hypot(part_distance(gr, wr), part_distance(gi, wi));
      mag = hypot(isfinite(wr) ? wr : 0, isfinite(wi) ? wi : 0);
    } else if (is_float) {
      double g = cx_load_f64(t, got->data, i), w = cx_load_f64(t, want->data, i);
      if (g == w || (isnan(g) && isnan(w))) continue;
      if (isnan(g) || isnan(w) || isinf(g) || isinf(w)) {
        err = INFINITY; /* a NaN or an infinity matches only itself */
        mag = 1;
        ok = 0;
      } else {
        err = fabs(g - w);
        mag = fabs(w);
        /* A bound that is not finite bounds nothing: NaN (the analysis met 0 * inf or
         * inf - inf) or infinity (an error that no finite allowance covers, e.g. exp of a
         * value that may be off by more than 709), where the fixed tolerance alone decides, as
         * it would without the analysis and as the quotient and square-root rules do where
         * the denominator may reach 0. An infinite allowance would pass anything. */
        double extra = allow ? ((const double *)allow->data)[i] : 0;
        ok = err <= atol + rtol * mag + (isfinite(extra) ? extra : 0);
      }
    } else {
      int64_t g = cx_load_i64(t, got->data, i), w = cx_load_i64(t, want->data, i);
      if (g == w) continue;
      err = int_distance(t, g, w);
      mag = int_magnitude(t, w);
      ok = 0;
    }
    double rel = isinf(err) ? INFINITY : mag > 0 ? err / mag : INFINITY;
    if (d->first_diff < 0) d->first_diff = i;
    d->ndiff++;
    if (err > d->max_abs) d->max_abs = err;
    if (rel > d->max_rel) d->max_rel = rel;
    if (!ok) {
      if (d->first_bad < 0) d->first_bad = i;
      d->nbad++;
    }
  }
  return CXLA_OK;
}
