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

static int by_offset(const void *a, const void *b) {
  const cx_heap_item *x = *(cx_heap_item *const *)a, *y = *(cx_heap_item *const *)b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return 0;
}

/* Big buffers first: they constrain the layout most, and small ones fill the gaps they leave
 * (XLA's GlobalDecreasingSizeBestFitHeap). Within the buffers live at the same time as the one
 * being placed, the smallest free gap that holds it wins; otherwise it goes above them all. */
int64_t cx_heap_place(cx_heap_item *items, int n) {
  if (n <= 0) return 0;
  cx_heap_item **order = cx_malloc(sizeof *order * (size_t)n);
  cx_heap_item **live = cx_malloc(sizeof *live * (size_t)n);
  if (!order || !live) {
    cx_free(order);
    cx_free(live);
    return -1;
  }
  for (int i = 0; i < n; i++) order[i] = &items[i];
  qsort(order, (size_t)n, sizeof *order, by_size_desc);
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    cx_heap_item *it = order[i];
    it->offset = 0;
    if (it->size <= 0) continue; /* empty arrays need no bytes */
    int nl = 0;
    for (int j = 0; j < i; j++) { /* order[0..i) are placed */
      cx_heap_item *p = order[j];
      if (p->size > 0 && !(p->end < it->start || it->end < p->start)) live[nl++] = p;
    }
    qsort(live, (size_t)nl, sizeof *live, by_offset);
    int64_t cursor = 0, best = -1, best_gap = 0;
    for (int j = 0; j < nl; j++) {
      int64_t gap = live[j]->offset - cursor;
      if (gap >= it->size && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      int64_t e = cx_heap_align_up(live[j]->offset + live[j]->size);
      if (e > cursor) cursor = e;
    }
    it->offset = best >= 0 ? best : cursor;
    if (it->offset + it->size > total) total = it->offset + it->size;
  }
  cx_free(order);
  cx_free(live);
  return cx_heap_align_up(total);
}
