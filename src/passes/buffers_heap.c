/* buffers_heap.c — placing temporaries in the arena (best fit by decreasing size over live
 * intervals). */
#include <stdlib.h>
#include <string.h>
#include "passes/buffers_int.h"


static int by_size_desc(const void *a, const void *b) {
  const cx_heap_item *x = *(cx_heap_item *const *)a, *y = *(cx_heap_item *const *)b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* Big buffers first: they constrain the layout most, and small ones fill the gaps they leave
 * (XLA's GlobalDecreasingSizeBestFitHeap). Within the buffers live at the same time as the one
 * being placed, the smallest free gap that holds it wins; otherwise it goes above them all.
 * The buffers placed so far are kept in order of offset, each new one inserted where it goes:
 * sorting those live with each new buffer made this n^2 log n, and a deep model keeps most of
 * its activations live at once (64 stacked transformer blocks: 876M instructions, 110 ms). */
int64_t cx_heap_place(cx_heap_item *items, int n) {
  if (n <= 0) return 0;
  cx_heap_item **order = cx_malloc(sizeof *order * (size_t)n);
  cx_heap_item **placed = cx_malloc(sizeof *placed * (size_t)n);
  if (!order || !placed) {
    cx_free(order);
    cx_free(placed);
    return -1;
  }
  for (int i = 0; i < n; i++) order[i] = &items[i];
  qsort(order, (size_t)n, sizeof *order, by_size_desc);
  int64_t total = 0;
  int np = 0;
  for (int i = 0; i < n; i++) {
    cx_heap_item *it = order[i];
    it->offset = 0;
    if (it->size <= 0) continue; /* empty arrays need no bytes */
    /* among those live at the same time, by offset (ties in any order: the second of two at
     * one offset leaves no gap) */
    int64_t cursor = 0, best = -1, best_gap = 0;
    for (int j = 0; j < np; j++) {
      const cx_heap_item *p = placed[j];
      if (p->end < it->start || it->end < p->start) continue;
      int64_t gap = p->offset - cursor;
      if (gap >= it->size && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      int64_t e = cx_heap_align_up(p->offset + p->size);
      if (e > cursor) cursor = e;
    }
    it->offset = best >= 0 ? best : cursor;
    if (it->offset + it->size > total) total = it->offset + it->size;
    int lo = 0, hi = np; /* the first placed at a higher offset */
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (placed[mid]->offset <= it->offset) lo = mid + 1;
      else hi = mid;
    }
    memmove(placed + lo + 1, placed + lo, sizeof *placed * (size_t)(np - lo));
    placed[lo] = it;
    np++;
  }
  cx_free(order);
  cx_free(placed);
  return cx_heap_align_up(total);
}
