/* execute.c — PJRT_LoadedExecutable_Execute: one device (the executable's: the cpu, or the
 * GPU, whose arguments and results stay in its memory), one argument list; the outputs are the
 * elements of a tuple result (moved out without copies) or the one array result. An argument
 * on another device than the executable's is refused, as XLA's clients refuse it (JAX copies
 * it first).
 *
 * The call checks the arguments. On the GPU device (--pjrt-async=auto, the default) or on every
 * device (on) it then returns the outputs at once, their values still to come: the execution
 * runs on the client's stream (stream.c), after every execution queued before it, and each
 * output's ready event completes when it has run, with its error if it failed, so the
 * framework's dispatch of the next step overlaps this one, as on XLA's own clients. On the cpu
 * device the execution runs here by default: it has every core already, and overlapping the
 * framework's dispatch with it gained nothing on two cores (the flax MLP Adam step, 20 steps
 * unblocked: 2.745 ms a step queued, 2.737 here) while the hand-off to the thread and back
 * doubled a tiny call's dispatch (5.5 -> 10.5 µs). A program that calls host callbacks always
 * runs here, once the stream has drained (a callback may need the caller's interpreter lock
 * while the caller waits on the stream).
 *
 * Donation: a parameter the executable consumes (input_output_alias, which JAX writes for
 * donate_argnums) takes the PJRT buffer's memory, and the buffer is deleted at the call, as
 * PJRT's donation semantics have it. Where the memory may not be given away (the buffer reads
 * the caller's memory in place) a private copy is donated instead, and the buffer is deleted
 * all the same; an argument the caller lists as non-donatable is copied and kept. A donated
 * buffer passed as another argument too is refused, as XLA's clients refuse it (the call would
 * read memory it also overwrites), and nothing runs. A buffer with external references (a view of its memory is out) cannot be donated.
 * Arguments that are not donated are never written. Token outputs are PJRT buffers of type
 * TOKEN; a token parameter takes whatever buffer comes (JAX's runtime tokens are bool[0]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

static const char fn[] = "PJRT_LoadedExecutable_Execute";

static int non_donatable(const PJRT_ExecuteOptions *o, size_t i) {
  if (!o || o->struct_size < offsetof(PJRT_ExecuteOptions, num_non_donatable_input_indices) + sizeof(size_t))
    return 0;
  for (size_t k = 0; k < o->num_non_donatable_input_indices; k++)
    if (o->non_donatable_input_indices && o->non_donatable_input_indices[k] == (int64_t)i) return 1;
  return 0;
}

/* "f32[2,3]" */
static void shape_text(cxla_type t, int rank, const int64_t *dims, char *out, size_t n) {
  int k = snprintf(out, n, "%s[", cxla_type_name(t));
  for (int d = 0; d < rank && k > 0 && (size_t)k < n; d++)
    k += snprintf(out + k, n - (size_t)k, "%s%lld", d ? "," : "", (long long)dims[d]);
  if (k > 0 && (size_t)k < n) snprintf(out + k, n - (size_t)k, "]");
}

/* An argument by its buffer, for consumed_twice. */
typedef struct arg_ref {
  const PJRT_Buffer *b;
  size_t i;
} arg_ref;

static int ref_order(const void *x, const void *y) {
  const arg_ref *a = x, *b = y;
  uintptr_t p = (uintptr_t)a->b, q = (uintptr_t)b->b;
  return p != q ? (p < q ? -1 : 1) : (a->i > b->i) - (a->i < b->i);
}

/* A buffer whose memory the call takes (consumed) that is also another of its arguments, as
 * XLA refuses it. The arguments sorted by buffer (O(n log n): a step of a big model passes
 * thousands, nearly all donated). */
static PJRT_Error *consumed_twice(const cx_pjrt_job *j) {
  size_t n = j->n, any = 0;
  for (size_t i = 0; i < n && !any; i++) any = j->consumed[i];
  if (!any) return NULL;
  arg_ref *r = malloc(sizeof *r * n);
  if (!r) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  for (size_t i = 0; i < n; i++) r[i] = (arg_ref){j->in[i], i};
  qsort(r, n, sizeof *r, ref_order);
  PJRT_Error *err = NULL;
  for (size_t a = 0, b; a < n && !err; a = b) {
    size_t c = n; /* the first consumed position of this buffer */
    for (b = a; b < n && r[b].b == r[a].b; b++)
      if (c == n && j->consumed[r[b].i]) c = r[b].i;
    if (c < n && b - a > 1)
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                          "%s: attempt to donate a buffer which is also used by the same call to Execute() "
                          "(argument %zu is argument %zu too)", fn, c, r[a].i == c ? r[a + 1].i : r[a].i);
  }
  free(r);
  return err;
}

/* Checks j's arguments and marks the donated ones: consumed (their memory is taken) or keep
 * (listed as non-donatable: a copy is donated). Nothing is marked when it refuses them. */
static PJRT_Error *check_args(cx_pjrt_job *j, const PJRT_ExecuteOptions *opts) {
  PJRT_Executable *e = j->e;
  PJRT_Device *dev = e->device;
  PJRT_Error *err = NULL;
  for (size_t i = 0; i < j->n && !err; i++) {
    PJRT_Buffer *b = j->in[i];
    if (!b) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %zu is NULL", fn, i);
      break;
    }
    if (b->deleted) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %zu has been deleted or donated", fn, i);
      break;
    }
    if (e->token_params[i]) continue; /* any buffer passes a token */
    const struct cx_pjrt_param *ps = &e->param_shapes[i];
    int same = ps->type == b->type && ps->rank == b->rank;
    for (int d = 0; same && d < b->rank; d++) same = ps->dims[d] == b->dims[d];
    if (!same && ps->type != CXLA_TUPLE && ps->type != CXLA_INVALID) {
      char have[160], want[160];
      shape_text(b->type, b->rank, b->dims, have, sizeof have);
      shape_text(ps->type, ps->rank, ps->dims, want, sizeof want);
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %zu is %s but parameter %zu of '%s' is %s", fn,
                          i, have, i, e->name, want);
      break;
    }
    if (b->device != dev) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                          "%s: argument %zu is on device %d (%s) but '%s' runs on device %d (%s)", fn, i,
                          b->device->desc.id, b->device->desc.kind, e->name, dev->desc.id, dev->desc.kind);
      break;
    }
    if (!cxla_executable_parameter_donated(e->exe, (int)i)) continue;
    int keep = non_donatable(opts, i);
    if (!keep && b->external_refs > 0) {
      err = cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                          "%s: argument %zu is donated but has external references to its memory", fn, i);
      break;
    }
    j->consumed[i] = !keep;
    j->keep[i] = (char)keep;
  }
  if (!err) err = consumed_twice(j);
  if (err) {
    memset(j->consumed, 0, j->n);
    memset(j->keep, 0, j->n);
  }
  return err;
}

PJRT_Error *cx_pjrt_run(PJRT_Client *c, const cx_pjrt_job *j, cxla_buffer **out) {
  PJRT_Executable *e = j->e;
  PJRT_Device *dev = e->device;
  size_t n = j->n;
  cxla_buffer **args = calloc(n + 1, sizeof *args);
  cxla_buffer **copies = calloc(n + 1, sizeof *copies);
  PJRT_Error *err = NULL;
  if (!args || !copies) {
    err = cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
    goto done;
  }
  for (size_t i = 0; i < n && !err; i++) {
    PJRT_Buffer *b = j->in[i];
    if (e->token_params[i] && (b->type != CXLA_TOKEN || b->device != dev)) {
      /* JAX passes an ordered effect's runtime token as a bool[0] array, and a token made
       * outside jit the same way: a token parameter takes any argument as a token. */
      cxla_literal *t = cxla_literal_token(c->ctx);
      cxla_status s = t ? cxla_buffer_from_literal(c->ctx, dev->backend, t, &copies[i]) : CXLA_ERR_OUT_OF_MEMORY;
      cxla_literal_destroy(t);
      if (s != CXLA_OK) err = cx_pjrt_error_cxla(c->ctx, s, fn);
      args[i] = copies[i];
      continue;
    }
    if (!b->buf) { /* the execution that was to make it failed */
      err = cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION, "%s: argument %zu has no value: %.*s", fn, i,
                          b->error ? (int)b->error->len : 13, b->error ? b->error->msg : "it was lost");
      break;
    }
    args[i] = b->buf;
    if (!(j->consumed[i] && b->wrapped) && !j->keep[i]) continue;
    /* A private copy is donated. On the GPU a device-to-device copy (a GPU buffer is never
     * wrapped: only kept ones). */
    cxla_status s = dev->host ? cxla_buffer_from_data(c->ctx, dev->backend, b->type, b->rank, b->dims,
                                                      cxla_buffer_data(b->buf), b->nbytes, &copies[i])
                              : cxla_buffer_copy_to(b->buf, dev->backend, &copies[i]);
    if (s != CXLA_OK) err = cx_pjrt_error_cxla(c->ctx, s, fn);
    args[i] = copies[i];
  }
  if (err) goto done;
  cxla_buffer *result = NULL;
  cxla_status s = cxla_executable_execute(e->exe, (int)n, args, &result);
  if (s != CXLA_OK) {
    err = cx_pjrt_error_cxla(c->ctx, s, fn);
    goto done;
  }
  if (!e->tuple_result) {
    out[0] = result;
  } else {
    s = cxla_buffer_untuple(result, e->noutputs, out);
    if (s != CXLA_OK) err = cx_pjrt_error_cxla(c->ctx, s, fn);
    cxla_buffer_destroy(result);
  }
done:
  if (copies)
    for (size_t i = 0; i < n; i++) cxla_buffer_destroy(copies[i]);
  free(args);
  free(copies);
  return err;
}

/* The call on this thread: after the stream (its arguments may be queued executions'
 * outputs), then the outputs made from the results. */
static PJRT_Error *execute_here(PJRT_Client *c, cx_pjrt_job *j) {
  PJRT_Executable *e = j->e;
  cxla_buffer **outs = calloc((size_t)e->noutputs + 1, sizeof *outs);
  if (!outs) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  cx_pjrt_stream_drain(c);
  cx_pjrt_lock(c);
  PJRT_Error *err = cx_pjrt_run(c, j, outs);
  cx_pjrt_unlock(c);
  /* A donated buffer is consumed even by a failed run (nothing is when the arguments are
   * refused); dropped outside the lock: a zero-copy one runs the framework's callbacks. */
  for (size_t i = 0; i < j->n; i++)
    if (j->consumed[i] && !j->in[i]->deleted) {
      j->in[i]->deleted = 1;
      cx_pjrt_buffer_drop(j->in[i]);
    }
  for (int k = 0; k < e->noutputs; k++) {
    if (err) cxla_buffer_destroy(outs[k]);
    else err = cx_pjrt_buffer_wrap(e->device, outs[k], &j->out[k]); /* takes outs[k] */
  }
  free(outs);
  return err;
}

/* The outputs as pending buffers (into outputs[], before the job is the stream's), the
 * arguments counted as in use and the donated ones deleted, and the job queued. */
static PJRT_Error *execute_queued(PJRT_Client *c, cx_pjrt_job *j, PJRT_Buffer **outputs) {
  PJRT_Executable *e = j->e;
  PJRT_Error *err = NULL;
  const int64_t *dims = e->out_dims;
  for (int k = 0; k < e->noutputs && !err; k++) {
    err = cx_pjrt_buffer_pending(e->device, e->out_types[k], e->out_ranks[k], dims, &j->out[k]);
    dims += e->out_ranks[k];
  }
  if (err) return err;
  for (int k = 0; k < e->noutputs; k++) outputs[k] = j->out[k];
  pthread_mutex_lock(&c->stream.m);
  for (size_t i = 0; i < j->n; i++) {
    j->in[i]->uses++;
    if (j->consumed[i]) j->in[i]->deleted = 1;
  }
  pthread_mutex_unlock(&c->stream.m);
  err = cx_pjrt_stream_push(c, j);
  if (!err) return NULL;
  /* The stream could not start: nothing ran, nothing is consumed, there are no outputs. */
  for (int k = 0; k < e->noutputs; k++) outputs[k] = NULL;
  pthread_mutex_lock(&c->stream.m);
  for (size_t i = 0; i < j->n; i++) {
    j->in[i]->uses--;
    if (j->consumed[i]) j->in[i]->deleted = 0;
  }
  pthread_mutex_unlock(&c->stream.m);
  return err;
}

PJRT_Error *cx_PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_Execute_Args, device_complete_events);
  PJRT_LoadedExecutable *le = args->executable;
  if (!le) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL executable", fn);
  PJRT_Client *c = le->client;
  PJRT_Executable *e = le->exec;
  if (le->deleted) return cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION, "%s: the executable has been deleted", fn);
  if (args->num_devices != 1)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %zu devices; cxla's PJRT plugin has one", fn, args->num_devices);
  int has_device = args->struct_size >= offsetof(PJRT_LoadedExecutable_Execute_Args, execute_device) + sizeof(void *);
  if (has_device && args->execute_device && args->execute_device != e->device)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: execute_device is not device %d (%s), which '%s' was "
                         "compiled for", fn, e->device->desc.id, e->device->desc.kind, e->name);
  if ((int64_t)args->num_args != e->nparams)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %zu arguments; '%s' takes %d", fn, args->num_args,
                         e->name, e->nparams);
  /* An empty list may come as NULL (JAX passes an empty vector's data() for a program without
   * results or arguments). */
  if ((e->noutputs && (!args->output_lists || !args->output_lists[0])) ||
      (args->num_args && (!args->argument_lists || !args->argument_lists[0])))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL argument or output lists", fn);
  cx_pjrt_job *j = cx_pjrt_job_new(e, args->num_args ? args->argument_lists[0] : NULL, args->num_args);
  if (!j) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  PJRT_Error *err = check_args(j, args->options);
  int queued = !err && !e->host_callbacks &&
               (c->async == CX_PJRT_ASYNC_ALL || (c->async == CX_PJRT_ASYNC_GPU && !e->device->host));
  PJRT_Event *done = NULL;
  if (!err && args->device_complete_events && !(done = cx_pjrt_event_new(!queued, NULL)))
    err = cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  if (!err && queued && done) {
    cx_pjrt_event_retain(done); /* the stream's reference, released when it completes it */
    j->done = done;
  }
  if (!err) err = queued ? execute_queued(c, j, args->output_lists[0]) : execute_here(c, j);
  if (err) {
    if (j->done) cx_pjrt_event_release(j->done);
    cx_pjrt_event_release(done);
    for (int k = 0; k < e->noutputs; k++)
      if (j->out[k]) {
        cx_pjrt_buffer_drop(j->out[k]);
        cx_pjrt_buffer_free(j->out[k]);
      }
    cx_pjrt_job_free(j);
    return err;
  }
  if (args->device_complete_events) args->device_complete_events[0] = done;
  if (queued) return NULL; /* the job is the stream's now, and may be gone already */
  for (int k = 0; k < e->noutputs; k++) args->output_lists[0][k] = j->out[k];
  cx_pjrt_job_free(j);
  return NULL;
}
