/* emu_warp.c — a warp of the grid emulation whose kernel exchanges registers between lanes
 * (shfl.sync): its lanes run as cooperating contexts (ucontext) on the launching host thread.
 * Each lane runs the kernel until it reaches a shuffle, where it parks; when every lane of the
 * warp is parked at the same shuffle, each gets the value of its partner lane and all resume,
 * as the warp does in lockstep on the GPU. A lane that returns while others wait at a shuffle,
 * or lanes at different shuffle masks, is the kernel bug it would be on a GPU: an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "backend/gpu/emu.h"

enum { READY, AT_SHUFFLE, DONE, FAULTED };
enum { LANES = 32, STACK_BYTES = 256 << 10 };

typedef struct lane {
  ucontext_t ctx;
  int state;
  uint32_t v, lane_mask, member_mask, out;
} lane;

struct cx_emu_warp {
  lane lanes[LANES];
  int n, cur;
  ucontext_t sched;
  const cx_emu_fn *fn;
  void **params;
  char *stacks;           /* LANES stacks of STACK_BYTES */
};
typedef struct cx_emu_warp warp;

static _Thread_local warp *t_warp;

static void lane_main(void) {
  warp *w = t_warp;
  w->fn->entry(w->params);
  w->lanes[w->cur].state = DONE; /* and on to uc_link: the scheduler */
}

uint32_t cx_emu_shfl_bfly(uint32_t member_mask, uint32_t v, uint32_t lane_mask, uint32_t clamp) {
  warp *w = t_warp;
  (void)clamp;
  if (!w) return v; /* not reached: a kernel with shuffles always runs as warps (emu_module.c) */
  lane *l = &w->lanes[w->cur];
  l->v = v, l->lane_mask = lane_mask, l->member_mask = member_mask, l->state = AT_SHUFFLE;
  swapcontext(&l->ctx, &w->sched);
  return l->out;
}

int cx_emu_warp_fault(void) {
  warp *w = t_warp;
  if (!w) return 0;
  lane *l = &w->lanes[w->cur];
  l->state = FAULTED;
  swapcontext(&l->ctx, &w->sched); /* never resumed: its stack is dropped */
  return 1;
}

/* every lane parked at one shuffle: exchange; 0, or -1 with why */
static int exchange(warp *w, char *why, size_t whylen) {
  uint32_t mask = w->lanes[0].lane_mask;
  for (int i = 0; i < w->n; i++) {
    const lane *l = &w->lanes[i];
    if (l->lane_mask != mask || l->member_mask != 0xffffffffu || w->n != LANES) {
      snprintf(why, whylen, "lanes of one warp reached different or partial shuffles (lane %d: mask %u, members %#x)", i,
               l->lane_mask, l->member_mask);
      return -1;
    }
  }
  for (int i = 0; i < w->n; i++) w->lanes[i].out = w->lanes[(uint32_t)i ^ mask].v;
  for (int i = 0; i < w->n; i++) w->lanes[i].state = READY;
  return 0;
}

cx_emu_warp *cx_emu_warp_new(void) {
  warp *w = calloc(1, sizeof *w); /* zeroed: sched's uc_stack reads as "no stack" (ASan reads it) */
  if (w && !(w->stacks = malloc((size_t)LANES * STACK_BYTES))) {
    free(w);
    w = NULL;
  }
  return w;
}

void cx_emu_warp_free(cx_emu_warp *w) {
  if (w) free(w->stacks);
  free(w);
}

int cx_emu_warp_run(cx_emu_warp *w, const cx_emu_fn *fn, void **params, int nlanes, void (*enter)(void *arg, int lane),
                    void *arg, char *why, size_t whylen) {
  w->n = nlanes < LANES ? nlanes : LANES, w->fn = fn, w->params = params;
  for (int i = 0; i < w->n; i++) {
    lane *l = &w->lanes[i];
    memset(l, 0, sizeof *l);
    getcontext(&l->ctx);
    l->ctx.uc_stack.ss_sp = w->stacks + (size_t)i * STACK_BYTES;
    l->ctx.uc_stack.ss_size = STACK_BYTES;
    l->ctx.uc_link = &w->sched;
    makecontext(&l->ctx, lane_main, 0);
  }
  warp *saved = t_warp;
  t_warp = w;
  int rc = 0;
  for (;;) {
    int done = 0, parked = 0;
    for (int i = 0; i < w->n && rc == 0; i++) {
      if (w->lanes[i].state == READY) {
        enter(arg, i);
        w->cur = i;
        swapcontext(&w->sched, &w->lanes[i].ctx);
      }
      if (w->lanes[i].state == FAULTED) rc = 1;
      done += w->lanes[i].state == DONE, parked += w->lanes[i].state == AT_SHUFFLE;
    }
    if (rc || done == w->n) break;
    if (done) {
      snprintf(why, whylen, "%d lanes of a warp returned while %d wait at a shuffle", done, parked);
      rc = -1;
      break;
    }
    if (exchange(w, why, whylen)) {
      rc = -1;
      break;
    }
  }
  t_warp = saved;
  return rc;
}
