/* gpu_host.c — the host steps of the GPU's sequence: infeed, outfeed and host callbacks.
 *
 * Feeds: the context's queues (ir/feeds.h, which the interpreter and the cpu backend use
 * too). An outfeed waits for the
 * stream, copies its data's leaves to a new host literal and appends it to the outfeed queue;
 * an infeed takes the next literal of the infeed queue and copies its leaves to the device on
 * the stream (from pageable memory: the copy is staged when the call returns, so the literal
 * can go). The host runs the steps in program order, so the queues see the token chain's
 * order.
 *
 * Host callbacks (the cxla_host_callback custom-call, core/host_callbacks.h): the step waits
 * for the stream, copies the array operands to host memory, runs the callback through the
 * process's dispatcher (as the interpreter does, with the same message when it fails), and
 * copies the results it filled to the device. The compile-time checks (a dispatcher that knows
 * the id, flat operands and results) are the interpreter's (cx_interp_check_module).
 *
 * No host step can be captured into a CUDA graph: gpu_graph.c leaves a loop or conditional
 * holding one to the read-back path. */
#include <stdio.h>
#include "backend/gpu/gpu_run.h"
#include "core/host_callbacks.h"
#include "ir/custom_call.h"
#include "ir/feeds.h"
#include "ir/literal.h"

/* copies between the step's slots and lit's leaves (up: to the device) */
static cxla_status copy(cx_gpu_run *r, const cx_gpu_step *s, cxla_literal *lit, int up) {
  const cx_cuda *cu = r->st->cu;
  enum { MAX = 64 };
  const cxla_literal *leaves[MAX];
  int n = 0;
  if (!cx_literal_leaves(lit, leaves, &n, MAX) || n != s->nargs)
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

static cxla_status feed(cx_gpu_run *r, const cx_gpu_step *s) {
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

/* the callback's argument or result v for a value of shape sh (an array or a token), its data
 * in host memory of its own (NULL for a token or an empty array) */
static int host_value(const cx_shape *sh, cxla_host_value *v) {
  int array = cx_type_is_array(sh->type);
  int64_t bytes = array ? cx_shape_bytes(sh) : 0;
  *v = (cxla_host_value){.type = sh->type, .rank = array ? sh->rank : 0, .dims = sh->dims, .nbytes = (size_t)bytes};
  return !bytes || (v->data = cx_malloc((size_t)bytes)) != NULL;
}

/* the result leaves are the step's first slots, the operands' after them; tokens have none */
static cxla_status callback(cx_gpu_run *r, const cx_gpu_step *s) {
  const cx_instr *in = s->in;
  const cx_cuda *cu = r->st->cu;
  const cx_shape *y = &in->shape;
  int nres = y->type == CXLA_TUPLE ? y->ntuple : 1, nargs = in->nops, n = nargs + nres;
  cxla_host_value *v = cx_calloc((size_t)n, sizeof *v);
  cxla_status st = v ? CXLA_OK : cx_oom(r->ctx);
  for (int i = 0; st == CXLA_OK && i < n; i++)
    if (!host_value(i < nargs ? &in->ops[i]->shape : y->type == CXLA_TUPLE ? &y->tuple[i - nargs] : y, &v[i]))
      st = cx_oom(r->ctx);
  /* slots: the result's array leaves, then the operands' (gpu_build.c) */
  int slot = 0, arg_slot0 = 0;
  for (int i = 0; i < nres; i++) arg_slot0 += cx_type_is_array((y->type == CXLA_TUPLE ? &y->tuple[i] : y)->type);
  CUresult e = 0;
  for (int i = 0, k = arg_slot0; st == CXLA_OK && !e && i < nargs; i++) {
    if (!cx_type_is_array(in->ops[i]->shape.type)) continue;
    if (v[i].nbytes) e = cu->MemcpyDtoHAsync(v[i].data, cx_gpu_run_slot(r, s->slots[k]), v[i].nbytes, r->stream);
    k++;
  }
  if (st == CXLA_OK && !e) e = cu->StreamSynchronize(r->stream); /* the operands are on the host now */
  if (e) st = cx_cuda_error(r->ctx, cu, e, "host callback operands (cuMemcpyDtoHAsync)");
  int64_t id = 0;
  cx_cc_config_int(in, "callback_id", &id); /* checked when compiling */
  char err[1024];
  if (st == CXLA_OK && cx_host_callback_run((uint64_t)id, nargs, v, nres, v + nargs, err, sizeof err) != CXLA_OK)
    st = cx_error_at(r->st->prog.m, in->loc, CXLA_ERR_RUNTIME, "custom-call '%s' (host callback %lld): %s",
                     in->name ? in->name : "?", (long long)id, err);
  for (int i = nargs; st == CXLA_OK && !e && i < n; i++) {
    if (!cx_type_is_array(v[i].type)) continue;
    /* from pageable memory: staged by the time the call returns, so the buffer can go */
    if (v[i].nbytes) e = cu->MemcpyHtoDAsync(cx_gpu_run_slot(r, s->slots[slot]), v[i].data, v[i].nbytes, r->stream);
    slot++;
  }
  if (e) st = cx_cuda_error(r->ctx, cu, e, "host callback results (cuMemcpyHtoDAsync)");
  for (int i = 0; v && i < n; i++) cx_free(v[i].data);
  cx_free(v);
  return st;
}

cxla_status cx_gpu_host_run(cx_gpu_run *r, const cx_gpu_step *s) {
  return s->kind == CX_GPU_CALLBACK ? callback(r, s) : feed(r, s);
}
