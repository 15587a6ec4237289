/* gpu_feed.c — infeed and outfeed as host steps of the GPU's sequence (the context's queues,
 * ir/feeds.h, which the interpreter and the cpu backend use too). An outfeed waits for the
 * stream, copies its data's leaves to a new host literal and appends it to the outfeed queue;
 * an infeed takes the next literal of the infeed queue and copies its leaves to the device on
 * the stream (from pageable memory: the copy is staged when the call returns, so the literal
 * can go). The host runs the steps in program order, so the queues see the token chain's
 * order. Neither can be captured into a CUDA graph: gpu_graph.c leaves a loop or conditional
 * holding one to the read-back path. */
#include "backend/gpu/gpu_run.h"
#include "ir/feeds.h"
#include "ir/literal.h"

/* the array leaves of l, depth first, into out[*k...] (at most cap); 0 when there are more */
static int leaves_of(cxla_literal *l, cxla_literal **out, int *k, int cap) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!leaves_of(l->elems[i], out, k, cap)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = l;
  return 1;
}

/* copies between the step's slots and lit's leaves (up: to the device) */
static cxla_status copy(cx_gpu_run *r, const cx_gpu_step *s, cxla_literal *lit, int up) {
  const cx_cuda *cu = r->st->cu;
  enum { MAX = 64 };
  cxla_literal *leaves[MAX];
  int n = 0;
  if (!leaves_of(lit, leaves, &n, MAX) || n != s->nargs)
    return cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: %d value leaves for %d slots", s->in->name, n, s->nargs);
  for (int k = 0; k < n; k++) {
    size_t bytes = (size_t)cx_shape_bytes(&leaves[k]->shape);
    if (!bytes) continue;
    CUdeviceptr p = cx_gpu_run_slot(r, s->slots[k]);
    CUresult e = up ? cu->MemcpyHtoDAsync(p, leaves[k]->data, bytes, r->stream)
                    : cu->MemcpyDtoHAsync(leaves[k]->data, p, bytes, r->stream);
    if (e) return cx_cuda_error(r->ctx, cu, e, up ? "infeed (cuMemcpyHtoDAsync)" : "outfeed (cuMemcpyDtoHAsync)");
  }
  CUresult e = up ? 0 : cu->StreamSynchronize(r->stream); /* the data is on the host now */
  return e ? cx_cuda_error(r->ctx, cu, e, "outfeed (cuStreamSynchronize)") : CXLA_OK;
}

cxla_status cx_gpu_feed_run(cx_gpu_run *r, const cx_gpu_step *s) {
  const cx_instr *in = s->in;
  cx_module *m = r->st->prog.m;
  const char *name = in->name ? in->name : "?";
  cx_feeds *f = cx_context_feeds(r->ctx);
  if (!f) return cx_oom(r->ctx);
  if (s->kind == CX_GPU_INFEED) {
    char buf[512];
    cxla_literal *lit = NULL;
    const char *why = cx_feeds_take_infeed(f, &in->shape.tuple[0], &lit, buf, sizeof buf);
    if (why) return cx_error_at(m, in->loc, CXLA_ERR_RUNTIME, "infeed '%s': %s", name, why);
    cxla_status st = copy(r, s, lit, 1);
    cxla_literal_destroy(lit);
    return st;
  }
  cxla_literal *lit = cx_literal_new_uninit(&in->ops[0]->shape);
  if (!lit) return cx_oom(r->ctx);
  cxla_status st = copy(r, s, lit, 0);
  if (st != CXLA_OK) {
    cxla_literal_destroy(lit);
    return st;
  }
  st = cx_feeds_put(r->ctx, f, 1, lit); /* takes lit */
  if (st == CXLA_ERR_RUNTIME)
    return cx_error_at(m, in->loc, st, "outfeed '%s': %d values wait in the outfeed queue, which nobody pops", name,
                       CX_OUTFEED_MAX);
  return st;
}
