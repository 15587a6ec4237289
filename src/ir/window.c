/* window.c — geometry of a window attribute that passes and emitters both decide by. */
#include <stdint.h>
#include "ir/ir.h"

int cx_window_disjoint(const cx_window *w, int rank) {
  if (w->rank != rank) return 0;
  for (int d = 0; d < rank; d++) {
    const cx_window_dim *x = &w->d[d];
    if (x->size < 1 || x->stride < x->size || x->pad_lo < 0 || x->lhs_dilate != 1 || x->rhs_dilate != 1 || x->reversal)
      return 0;
  }
  return 1;
}

int cx_window_fusible(const cx_window *w, int rank) {
  int64_t n = cx_window_elems(w);
  return cx_window_disjoint(w, rank) && n >= 1 && n <= CX_FUSED_WINDOW_TAPS;
}

int64_t cx_window_elems(const cx_window *w) {
  int64_t n = 1;
  for (int d = 0; d < w->rank; d++) {
    if (w->d[d].size < 0 || (w->d[d].size && n > INT32_MAX / w->d[d].size)) return -1;
    n *= w->d[d].size;
  }
  return n;
}
