/* execute.c — PJRT_LoadedExecutable_Execute: one device (the executable's: the cpu, or the
 * GPU, whose arguments and results stay in its memory), one argument list, run by
 * cxla_executable_execute on the calling thread; the outputs are the elements of a tuple
 * result (moved out without copies) or the one array result. An argument on another device
 * than the executable's is refused, as XLA's clients refuse it (JAX copies it first).
 *
 * Donation: a parameter the executable consumes (input_output_alias, which JAX writes for
 * donate_argnums) takes the PJRT buffer's memory, and the buffer is deleted afterwards, as
 * PJRT's donation semantics have it. Where the memory may not be given away (the buffer reads
 * the caller's memory in place) a private copy is donated instead, and the buffer is deleted
 * all the same; an argument the caller lists as non-donatable is copied and kept. A donated
 * buffer passed as another argument too is refused, as XLA's clients refuse it (the call would
 * read memory it also overwrites), and nothing runs. A buffer with external references (a view of its memory is out) cannot be donated.
 * Arguments that are not donated are never written. Token outputs are PJRT buffers of type
 * TOKEN; a token parameter takes whatever buffer comes (JAX's runtime tokens are bool[0]). */
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

/* Runs e; on success out[0..noutputs) hold the outputs' cxla buffers. consumed[i] is set for
 * each argument the call consumed (a donated one), which the caller deletes once it has let go
 * of the client's lock: deleting a zero-copy buffer runs the framework's callbacks. Call under
 * the lock. */
static PJRT_Error *run(PJRT_Client *c, PJRT_Executable *e, PJRT_Buffer *const *in, size_t n,
                       const PJRT_ExecuteOptions *opts, cxla_buffer **out, char *consumed) {
  cxla_buffer **args = calloc(n + 1, sizeof *args);
  cxla_buffer **copies = calloc(n + 1, sizeof *copies);
  PJRT_Error *err = NULL;
  if (!args || !copies) {
    err = cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
    goto done;
  }
  for (size_t i = 0; i < n && !err; i++) {
    PJRT_Buffer *b = in[i];
    if (!b) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %zu is NULL", fn, i);
      break;
    }
    if (!b->buf) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: argument %zu has been deleted or donated", fn, i);
      break;
    }
    args[i] = b->buf;
    PJRT_Device *dev = e->device;
    if (!e->token_params[i] && b->device != dev) {
      err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                          "%s: argument %zu is on device %d (%s) but '%s' runs on device %d (%s)", fn, i,
                          b->device->desc.id, b->device->desc.kind, e->name, dev->desc.id, dev->desc.kind);
      break;
    }
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
    if (i >= 64 || !(e->donated >> i & 1)) continue;
    int keep = non_donatable(opts, i);
    if (!keep && b->external_refs > 0) {
      err = cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                          "%s: argument %zu is donated but has external references to its memory", fn, i);
      break;
    }
    for (size_t j = 0; j < n && !keep && !err; j++)
      if (j != i && in[j] == b)
        err = cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                            "%s: attempt to donate a buffer which is also used by the same call to Execute() "
                            "(argument %zu is argument %zu too)", fn, i, j);
    if (err) break;
    int shared = b->wrapped || keep;
    if (!keep) consumed[i] = 1;
    if (!shared) continue;
    /* On the GPU a device-to-device copy (a GPU buffer is never wrapped: only kept ones). */
    cxla_status s = dev->host ? cxla_buffer_from_data(c->ctx, dev->backend, b->type, b->rank, b->dims,
                                                      cxla_buffer_data(b->buf), b->nbytes, &copies[i])
                              : cxla_buffer_copy_to(b->buf, dev->backend, &copies[i]);
    if (s != CXLA_OK) err = cx_pjrt_error_cxla(c->ctx, s, fn);
    args[i] = copies[i];
  }
  if (err) {
    memset(consumed, 0, n); /* nothing ran: nothing is consumed */
    goto done;
  }
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
  cxla_buffer **outs = calloc((size_t)e->noutputs + 1, sizeof *outs);
  PJRT_Buffer **pouts = calloc((size_t)e->noutputs + 1, sizeof *pouts);
  char *consumed = calloc(args->num_args + 1, 1);
  PJRT_Error *err = NULL;
  if (!outs || !pouts || !consumed) err = cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  if (!err) {
    PJRT_Buffer *const *in = args->num_args ? args->argument_lists[0] : NULL;
    cx_pjrt_lock(c);
    err = run(c, e, in, args->num_args, args->options, outs, consumed);
    cx_pjrt_unlock(c);
    /* A donated buffer is consumed even by a failed run (nothing is when run() refuses the
     * arguments). */
    for (size_t i = 0; i < args->num_args; i++)
      if (consumed[i] && in[i]->buf) cx_pjrt_buffer_drop(in[i]);
  }
  free(consumed);
  for (int k = 0; k < (outs ? e->noutputs : 0); k++) {
    if (err) {
      cxla_buffer_destroy(outs[k]);
    } else {
      err = cx_pjrt_buffer_wrap(e->device, outs[k], &pouts[k]); /* takes outs[k] */
    }
  }
  PJRT_Event *done = NULL;
  if (!err && args->device_complete_events && !(done = cx_pjrt_event_new(1, NULL)))
    err = cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  if (err) {
    for (int k = 0; k < (pouts ? e->noutputs : 0); k++)
      if (pouts[k]) {
        cx_pjrt_buffer_drop(pouts[k]);
        free(pouts[k]);
      }
  } else {
    for (int k = 0; k < e->noutputs; k++) args->output_lists[0][k] = pouts[k];
    if (args->device_complete_events) args->device_complete_events[0] = done;
  }
  free(outs);
  free(pouts);
  return err;
}
