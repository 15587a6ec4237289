/* buffers_heap.c — placing temporaries in the arena (best fit by decreasing size over live
 * intervals) and the human-readable assignment dump. */
#include <stdlib.h>
#include <string.h>
#include "passes/buffers_int.h"

#define ALIGN 64

static int64_t align_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

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
      int64_t e = align_up(live[j]->offset + live[j]->size);
      if (e > cursor) cursor = e;
    }
    it->offset = best >= 0 ? best : cursor;
    if (it->offset + it->size > total) total = it->offset + it->size;
  }
  cx_free(order);
  cx_free(live);
  return align_up(total);
}

/* ---- dump ---- */

static const char *kind_name(cx_slot_kind k) {
  switch (k) {
  case CX_SLOT_TEMP: return "temp";
  case CX_SLOT_PARAM: return "param";
  case CX_SLOT_OUTPUT: return "output";
  case CX_SLOT_CONST: return "constant";
  }
  return "?";
}

void cx_buffers_print(cx_sb *sb, const cx_module *m, const cx_buffers *b) {
  int64_t sum = 0;
  int ntemp = 0;
  for (int i = 0; i < b->nslots; i++)
    if (b->slots[i].kind == CX_SLOT_TEMP) {
      sum += align_up(b->slots[i].size);
      ntemp++;
    }
  cx_sb_printf(sb, "BufferAssignment for module %s\n", m->name);
  cx_sb_printf(sb, "arena: %lld bytes for %d temporaries of %lld bytes in all (%.1f%%)\n",
               (long long)b->arena_size, ntemp, (long long)sum,
               sum ? 100.0 * (double)b->arena_size / (double)sum : 100.0);
  cx_sb_printf(sb, "outputs: %d\n\n", b->noutputs);
  for (int i = 0; i < b->nslots; i++) {
    const cx_slot *s = &b->slots[i];
    cx_sb_printf(sb, "slot %d: %s size=%lld", i, kind_name(s->kind), (long long)s->size);
    if (s->kind == CX_SLOT_TEMP) cx_sb_printf(sb, " offset=%lld", (long long)s->offset);
    if (s->kind == CX_SLOT_PARAM) cx_sb_printf(sb, " parameter=%d leaf=%d", s->param, s->leaf);
    if (s->kind == CX_SLOT_PARAM && s->out_leaf >= 0) cx_sb_printf(sb, " donated: holds output leaf %d", s->out_leaf);
    if (s->kind == CX_SLOT_OUTPUT) cx_sb_printf(sb, " leaf=%d", s->leaf);
    cx_sb_puts(sb, "\n");
    /* every value that lives in this slot, computation by computation */
    for (int c = 0; c < m->ncomps; c++) {
      const cx_comp *comp = m->comps[c];
      for (int k = 0; k < comp->ninstrs; k++) {
        const cx_instr *in = comp->instrs[k];
        if (in->id < 0 || in->id >= b->max_id || !b->leaf_slots[in->id]) continue;
        for (int l = 0; l < b->nleaves[in->id]; l++)
          if (b->leaf_slots[in->id][l] == i) {
            cx_sb_printf(sb, "    %s/%s", comp->name, in->name ? in->name : "?");
            if (b->nleaves[in->id] > 1 || in->shape.type == CXLA_TUPLE) cx_sb_printf(sb, "{%d}", l);
            cx_sb_puts(sb, "\n");
          }
      }
    }
  }
}
