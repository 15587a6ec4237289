/* feeds.h — host transfer queues: the literals the host pushed for infeed instructions to take,
 * and the ones outfeed instructions put for the host to pop. A context holds one pair (in
 * one of its slots), as XLA has one per device (PjRtDevice::TransferToInfeed, TransferFromOutfeed):
 * every executable of the context reads and writes the same queues, in the order its
 * program's token chain runs its infeeds and outfeeds. Thread safe. The public calls
 * (cxla_infeed_push, cxla_outfeed_pop, ...) are runtime/feed.c's. */
#ifndef CX_FEEDS_H
#define CX_FEEDS_H
#include <pthread.h>
#include "ir/ir.h"

struct cx_feed_node;
typedef struct cx_feed_queue {
  struct cx_feed_node *head, *tail;
  int64_t n;
} cx_feed_queue;

typedef struct cx_feeds {
  pthread_mutex_t mu;
  cx_feed_queue in, out;
  cxla_infeed_source source; /* asked when the infeed queue is empty; NULL: none */
  void *user;
} cx_feeds;

/* An outfeed that finds this many values waiting fails: the host is not popping them (an
 * endless loop that outfeeds fails instead of filling memory). */
#define CX_OUTFEED_MAX (1 << 20)

/* The context's pair, made on first use in its CX_SLOT_FEEDS (core/context.h) and freed with
 * it; NULL when memory runs out (ctx NULL: NULL). */
cx_feeds *cx_context_feeds(cxla_context *ctx);
void cx_feeds_clear(cx_feeds *f);  /* empties both queues */
/* Appends lit (taken over; freed on failure) to the infeed or the outfeed queue. The outfeed
 * queue refuses it with CXLA_ERR_RUNTIME, and no message, past CX_OUTFEED_MAX values. */
cxla_status cx_feeds_put(cxla_context *ctx, cx_feeds *f, int outfeed, cxla_literal *lit);
/* The oldest literal of the outfeed queue, or NULL when it is empty. */
cxla_literal *cx_feeds_pop_outfeed(cx_feeds *f);
int64_t cx_feeds_count(cx_feeds *f, int outfeed);
void cx_feeds_set_source(cx_feeds *f, cxla_infeed_source fn, void *user);
/* Takes the next infeed literal (or asks the source when the queue is empty) into *out. NULL
 * on success; else why not ("the infeed queue is empty", "the next infeed literal is f32[2],
 * the infeed takes s32[3]", ...), in buf when it needs formatting. A literal of the wrong
 * shape is consumed. */
const char *cx_feeds_take_infeed(cx_feeds *f, const cx_shape *want, cxla_literal **out, char *buf, size_t n);

#endif
