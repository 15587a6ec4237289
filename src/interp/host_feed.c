/* host_feed.c — the ops of the token chain. after-all joins tokens into one and add-dependency
 * passes its data on once its token exists: a token holds no value, it only orders side
 * effects, which the interpreter runs in program order anyway. infeed takes the next literal of
 * its context's infeed queue, outfeed appends a copy of its data to the outfeed queue (ir/feeds.h:
 * one pair per context, as XLA has one per device). The cpu backend calls these for them. */
#include <stdio.h>
#include "core/context.h"
#include "interp/internal.h"
#include "ir/feeds.h"
#include "ir/literal.h"

static cxla_literal *new_token(void) {
  cx_shape t = {0};
  t.type = CXLA_TOKEN;
  return cx_literal_new(&t);
}

CX_INTERP_EVALUATOR(cx_interp_after_all) {
  (void)ops;
  if (in->shape.type != CXLA_TOKEN) return cx_interp_bad(st, in, "the result must be a token");
  return (*out = new_token()) ? CXLA_OK : cx_oom(st->ctx);
}

/* data, unchanged: the token only orders */
CX_INTERP_EVALUATOR(cx_interp_add_dependency) {
  (void)in;
  return (*out = cxla_literal_clone(st->ctx, ops[0])) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* (data, token[]): the data of the next infeed literal */
CX_INTERP_EVALUATOR(cx_interp_infeed) {
  (void)ops;
  const cx_shape *s = &in->shape;
  if (s->type != CXLA_TUPLE || s->ntuple != 2 || s->tuple[1].type != CXLA_TOKEN)
    return cx_interp_bad(st, in, "the result must be (data, token[])");
  char buf[512];
  cx_feeds *f = cx_context_feeds(st->ctx);
  cxla_literal *el[2] = {NULL, f ? new_token() : NULL};
  const char *why = el[1] ? cx_feeds_take_infeed(f, &s->tuple[0], &el[0], buf, sizeof buf) : NULL;
  if (!el[1]) return cx_oom(st->ctx);
  if (why) {
    cxla_literal_destroy(el[1]);
    return cx_error_at(st->m, in->loc, CXLA_ERR_RUNTIME, "infeed '%s': %s", in->name ? in->name : "?", why);
  }
  *out = cxla_literal_tuple(st->ctx, 2, el); /* owns el's literals even when it fails */
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

CX_INTERP_EVALUATOR(cx_interp_outfeed) {
  cx_feeds *f = cx_context_feeds(st->ctx);
  cxla_literal *copy = f ? cxla_literal_clone(st->ctx, ops[0]) : NULL;
  if (!copy) return cx_oom(st->ctx);
  cxla_status s = cx_feeds_put(st->ctx, f, 1, copy);
  if (s == CXLA_ERR_RUNTIME)
    return cx_error_at(st->m, in->loc, s, "outfeed '%s': %d values wait in the outfeed queue, which nobody pops",
                       in->name ? in->name : "?", CX_OUTFEED_MAX);
  CX_TRY(s);
  return (*out = new_token()) ? CXLA_OK : cx_oom(st->ctx);
}
