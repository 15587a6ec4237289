/* buffers_print.c — a buffer assignment as text (cx_buffers_print): every slot, its kind, size
 * and offset, and the values that live in it; what --dump-to writes as *.buffer-assignment.txt. */
#include "passes/buffers.h"
#include "passes/buffers_int.h"

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
      sum += cx_heap_align_up(b->slots[i].size);
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
