/* feeds.c — a context's infeed and outfeed queues (ir/feeds.h): singly linked lists of
 * literals under one lock. */
#include <stdio.h>
#include <string.h>
#include "core/context.h"
#include "ir/feeds.h"
#include "ir/literal.h"

struct cx_feed_node {
  cxla_literal *lit;
  struct cx_feed_node *next;
};

static void put(cx_feed_queue *q, struct cx_feed_node *n) {
  n->next = NULL;
  if (q->tail) q->tail->next = n;
  else q->head = n;
  q->tail = n;
  q->n++;
}

static cxla_literal *take(cx_feed_queue *q) {
  struct cx_feed_node *n = q->head;
  if (!n) return NULL;
  q->head = n->next;
  if (!q->head) q->tail = NULL;
  q->n--;
  cxla_literal *l = n->lit;
  cx_free(n);
  return l;
}

static void clear(cx_feed_queue *q) {
  cxla_literal *l;
  while ((l = take(q))) cxla_literal_destroy(l);
}

static void *make_feeds(void *arg) {
  (void)arg;
  cx_feeds *f = cx_calloc(1, sizeof *f);
  if (f) pthread_mutex_init(&f->mu, NULL);
  return f;
}

/* The queues' literals, the lock and the pair. */
static void destroy_feeds(void *p) {
  cx_feeds *f = p;
  clear(&f->in);
  clear(&f->out);
  pthread_mutex_destroy(&f->mu);
  cx_free(f);
}

cx_feeds *cx_context_feeds(cxla_context *ctx) { return cx_context_slot(ctx, CX_SLOT_FEEDS, make_feeds, NULL, destroy_feeds); }

void cx_feeds_clear(cx_feeds *f) {
  pthread_mutex_lock(&f->mu);
  clear(&f->in);
  clear(&f->out);
  pthread_mutex_unlock(&f->mu);
}

cxla_status cx_feeds_put(cxla_context *ctx, cx_feeds *f, int outfeed, cxla_literal *lit) {
  struct cx_feed_node *n = cx_calloc(1, sizeof *n);
  if (!n) {
    cxla_literal_destroy(lit);
    return cx_oom(ctx);
  }
  n->lit = lit;
  pthread_mutex_lock(&f->mu);
  int full = outfeed && f->out.n >= CX_OUTFEED_MAX;
  if (!full) put(outfeed ? &f->out : &f->in, n);
  pthread_mutex_unlock(&f->mu);
  if (full) {
    cxla_literal_destroy(lit);
    cx_free(n);
    return CXLA_ERR_RUNTIME;
  }
  return CXLA_OK;
}

cxla_literal *cx_feeds_pop_outfeed(cx_feeds *f) {
  pthread_mutex_lock(&f->mu);
  cxla_literal *l = take(&f->out);
  pthread_mutex_unlock(&f->mu);
  return l;
}

int64_t cx_feeds_count(cx_feeds *f, int outfeed) {
  pthread_mutex_lock(&f->mu);
  int64_t n = outfeed ? f->out.n : f->in.n;
  pthread_mutex_unlock(&f->mu);
  return n;
}

void cx_feeds_set_source(cx_feeds *f, cxla_infeed_source fn, void *user) {
  pthread_mutex_lock(&f->mu);
  f->source = fn;
  f->user = user;
  pthread_mutex_unlock(&f->mu);
}

const char *cx_feeds_take_infeed(cx_feeds *f, const cx_shape *want, cxla_literal **out, char *buf, size_t n) {
  *out = NULL;
  pthread_mutex_lock(&f->mu);
  cxla_literal *l = take(&f->in);
  cxla_infeed_source fn = f->source;
  void *user = f->user;
  pthread_mutex_unlock(&f->mu);
  if (!l && fn) { /* called unlocked: it may push, or ask for counts */
    cx_arena a;
    cx_arena_init(&a);
    cxla_shape s;
    cx_shape_to_public(want, &s, &a);
    cxla_status st = fn(user, &s, &l);
    cx_arena_free(&a);
    if (st != CXLA_OK || !l) {
      cxla_literal_destroy(l);
      snprintf(buf, n, "the infeed source failed (status %d%s)", (int)st, st == CXLA_OK ? ", but gave no literal" : "");
      return buf;
    }
  }
  if (!l) return "the infeed queue is empty (push a literal with cxla_infeed_push before running)";
  if (!cx_shape_equal(&l->shape, want)) {
    char a[256], b[256];
    snprintf(buf, n, "the next infeed literal is %s, the infeed takes %s", cx_shape_str(&l->shape, a, sizeof a),
             cx_shape_str(want, b, sizeof b));
    cxla_literal_destroy(l);
    return buf;
  }
  *out = l;
  return NULL;
}
