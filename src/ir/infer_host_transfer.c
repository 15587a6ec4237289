/* infer_host_transfer.c — the shape rules of infeed and outfeed (infeed(token) gives the
 * written (data, token[]), outfeed(data, token) a token) and of send, send-done, recv and recv-done, as XLA's
 * verifier has them: send(data, token) gives (data, u32[] context, token[]) and send-done of
 * it a token; recv(token) gives (the written data shape, u32[], token[]) and recv-done of it
 * (data, token[]). A -done's channel_id is its start's. They move data between a device and
 * its host or another program, which cxla does not run: they load and verify, and compiling
 * refuses them (ops.def runs NONE). */
#include <string.h>
#include "ir/infer.h"

static void token(cx_shape *s) {
  memset(s, 0, sizeof *s);
  s->type = CXLA_TOKEN;
}

static cxla_status need_token(cx_infer *ic, int i) {
  if (cx_vop(ic, i)->type != CXLA_TOKEN)
    return cx_vfail(ic, "operand %d must be a token, got %s", i, cx_vshape(ic, cx_vop(ic, i)));
  return CXLA_OK;
}

/* (data, u32[], token[]) with data = *d */
static cxla_status started(cx_infer *ic, const cx_shape *d, cx_shape *out) {
  cx_shape *el = cx_vtuple(ic, out, 3);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[0] = *d;
  cx_vplain(&el[0]);
  el[1] = cx_shape_scalar(CXLA_U32);
  token(&el[2]);
  return CXLA_OK;
}

/* The operand of a -done: the (data, u32[], token[]) of its start, whose channel it keeps. */
static cxla_status start_of(cx_infer *ic, cx_op start, const cx_shape **data) {
  const cx_instr *s = ic->in->ops[0];
  const cx_shape *t = &s->shape;
  if (t->type != CXLA_TUPLE || t->ntuple != 3 || t->tuple[1].type != CXLA_U32 || t->tuple[1].rank != 0 ||
      t->tuple[2].type != CXLA_TOKEN)
    return cx_vfail(ic, "operand must be the (data, u32[], token[]) of a %s, got %s", cx_op_name(start), cx_vshape(ic, t));
  if (s->op == start && s->a.channel_id != ic->in->a.channel_id)
    return cx_vfail(ic, "channel_id=%lld differs from its %s's channel_id=%lld", (long long)ic->in->a.channel_id,
                    cx_op_name(start), (long long)s->a.channel_id);
  *data = &t->tuple[0];
  return CXLA_OK;
}

cxla_status cx_infer_send(cx_infer *ic, cx_shape *out) {
  CX_TRY(need_token(ic, 1));
  if (cx_vop(ic, 0)->type == CXLA_TOKEN) return cx_vfail(ic, "operand 0 is the data to send, got a token");
  return started(ic, cx_vop(ic, 0), out);
}

cxla_status cx_infer_send_done(cx_infer *ic, cx_shape *out) {
  const cx_shape *d;
  CX_TRY(start_of(ic, CX_OP_SEND, &d));
  token(out);
  return CXLA_OK;
}

cxla_status cx_infer_recv(cx_infer *ic, cx_shape *out) {
  CX_TRY(need_token(ic, 0));
  const cx_shape *s = &ic->in->shape;
  if (s->type != CXLA_TUPLE || s->ntuple != 3)
    return cx_vfail(ic, "the written shape must be (data, u32[], token[]), got %s", cx_vshape(ic, s));
  return started(ic, &s->tuple[0], out);
}

cxla_status cx_infer_recv_done(cx_infer *ic, cx_shape *out) {
  const cx_shape *d;
  CX_TRY(start_of(ic, CX_OP_RECV, &d));
  cx_shape *el = cx_vtuple(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[0] = *d;
  cx_vplain(&el[0]);
  token(&el[1]);
  return CXLA_OK;
}

static int holds_token(const cx_shape *s) {
  if (s->type == CXLA_TOKEN) return 1;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++)
    if (holds_token(&s->tuple[i])) return 1;
  return 0;
}

cxla_status cx_infer_infeed(cx_infer *ic, cx_shape *out) {
  CX_TRY(need_token(ic, 0));
  const cx_shape *s = &ic->in->shape;
  if (s->type != CXLA_TUPLE || s->ntuple != 2 || s->tuple[1].type != CXLA_TOKEN || holds_token(&s->tuple[0]))
    return cx_vfail(ic, "the written shape must be (data, token[]) with data free of tokens, got %s", cx_vshape(ic, s));
  cx_shape *el = cx_vtuple(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  el[0] = s->tuple[0];
  token(&el[1]);
  return CXLA_OK;
}

cxla_status cx_infer_outfeed(cx_infer *ic, cx_shape *out) {
  CX_TRY(need_token(ic, 1));
  if (holds_token(cx_vop(ic, 0))) return cx_vfail(ic, "operand 0 is the data to send to the host, got %s", cx_vshape(ic, cx_vop(ic, 0)));
  token(out);
  return CXLA_OK;
}
