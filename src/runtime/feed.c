/* feed.c — the public calls of the host transfer queues (cxla.h: cxla_infeed_push,
 * cxla_outfeed_pop, ...) on the context's pair (ir/feeds.h). */
#include "core/context.h"
#include "ir/feeds.h"
#include "ir/literal.h"

static int holds_token(const cx_shape *s) {
  if (s->type == CXLA_TOKEN) return 1;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++)
    if (holds_token(&s->tuple[i])) return 1;
  return 0;
}

cxla_status cxla_infeed_push(cxla_context *ctx, const cxla_literal *lit) {
  if (!ctx) return CXLA_ERR_INVALID_ARGUMENT;
  if (!lit) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_infeed_push: no literal");
  if (holds_token(&lit->shape))
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_infeed_push: an infeed value holds no token");
  cx_feeds *f = cx_context_feeds(ctx);
  cxla_literal *copy = f ? cxla_literal_clone(ctx, lit) : NULL;
  return copy ? cx_feeds_put(ctx, f, 0, copy) : cx_oom(ctx);
}

cxla_status cxla_outfeed_pop(cxla_context *ctx, cxla_literal **out) {
  if (!ctx || !out) return CXLA_ERR_INVALID_ARGUMENT;
  cx_feeds *f = cx_context_feeds(ctx);
  if (!f) return cx_oom(ctx);
  if (!(*out = cx_feeds_pop_outfeed(f)))
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "cxla_outfeed_pop: the outfeed queue is empty (no outfeed has run since the last pop)");
  return CXLA_OK;
}

/* The calls below never fail: without memory for the queues there is nothing in them. */
int64_t cxla_infeed_count(cxla_context *ctx) {
  cx_feeds *f = cx_context_feeds(ctx);
  return f ? cx_feeds_count(f, 0) : 0;
}

int64_t cxla_outfeed_count(cxla_context *ctx) {
  cx_feeds *f = cx_context_feeds(ctx);
  return f ? cx_feeds_count(f, 1) : 0;
}

void cxla_feeds_clear(cxla_context *ctx) {
  cx_feeds *f = cx_context_feeds(ctx);
  if (f) cx_feeds_clear(f);
}

void cxla_infeed_set_source(cxla_context *ctx, cxla_infeed_source fn, void *user) {
  cx_feeds *f = cx_context_feeds(ctx);
  if (f) cx_feeds_set_source(f, fn, user);
}
