/* fallback.c — the rt->fallback hook: runs one instruction of a compiled program on the
 * reference interpreter. Operands are wrapped as borrowed literal views of the slot memory (the
 * interpreter never writes its arguments), the computation (a fused computation, or a wrapper
 * around a single instruction) is interpreted, and the result leaves are copied into the
 * result slots. Everything it allocates is per call, so concurrent executions are safe. */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/sequencer.h"
#include "core/context.h"
#include "interp/interp.h"

/* A literal view of shape s over args[*k...] (tuples: one pointer per array leaf). */
static cxla_literal *view(const cx_shape *s, void **args, int *k) {
  cxla_literal *l = cx_calloc(1, sizeof *l);
  if (!l) return NULL;
  l->shape = *s;
  if (s->type != CXLA_TUPLE) {
    if (!cx_type_is_array(s->type)) return l; /* token: no data */
    l->shape.tuple = NULL;
    l->shape.ntuple = 0;
    l->data = args[(*k)++];
    return l;
  }
  l->elems = cx_calloc((size_t)(s->ntuple ? s->ntuple : 1), sizeof *l->elems);
  if (!l->elems) {
    cx_free(l);
    return NULL;
  }
  l->nelems = s->ntuple;
  for (int i = 0; i < s->ntuple; i++)
    if (!(l->elems[i] = view(&s->tuple[i], args, k))) return NULL; /* caller frees the partial tree */
  return l;
}

static void free_view(cxla_literal *l) {
  if (!l) return;
  for (int i = 0; i < l->nelems; i++) free_view(l->elems[i]);
  cx_free(l->elems);
  cx_free(l);
}

static void write_leaves(const cxla_literal *l, void **args, int *k, int nout) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++) write_leaves(l->elems[i], args, k, nout);
    return;
  }
  if (!cx_type_is_array(l->shape.type) || *k >= nout) return;
  int64_t bytes = cx_shape_bytes(&l->shape);
  if (bytes > 0) memcpy(args[*k], l->data, (size_t)bytes);
  (*k)++;
}

int cx_cpu_fallback(void *exe, const struct cx_replica *rep, int32_t index, void **args, char *errmsg, size_t errlen) {
  const cx_fallback_table *t = exe;
  if (index < 0) {
    snprintf(errmsg, errlen, "while loop exceeded --max-loop-iterations=%lld", (long long)t->max_loop_iterations);
    return CXLA_ERR_RUNTIME;
  }
  if (index >= t->nops) {
    snprintf(errmsg, errlen, "interpreter fallback %d does not exist", (int)index);
    return CXLA_ERR_INTERNAL;
  }
  const cx_fallback_op *op = &t->ops[index];
  cx_comp *c = op->comp;
  int n = c->nparams, k = op->nout;
  cxla_literal *stack[8] = {0}, **lits = n <= 8 ? stack : cx_calloc((size_t)n, sizeof *lits);
  if (!lits) {
    snprintf(errmsg, errlen, "out of memory");
    return CXLA_ERR_OUT_OF_MEMORY;
  }
  cxla_status s = CXLA_OK;
  for (int p = 0; p < n && s == CXLA_OK; p++)
    if (!(lits[p] = view(&c->params[p]->shape, args, &k))) s = CXLA_ERR_OUT_OF_MEMORY;
  cxla_literal *out = NULL;
  if (s == CXLA_OK) {
    cx_interp st;
    cx_interp_init(&st, t->m);
    st.rep = rep; /* a collective takes part in its run */
    s = cx_interp_call(&st, c, n, lits, &out);
    if (s != CXLA_OK) {
      /* the context is shared by every execution; its message is the best there is */
      snprintf(errmsg, errlen, "%s (run on the interpreter: %s): %s", op->in->name ? op->in->name : "?",
               cx_op_name(op->in->op), cxla_context_errmsg(t->m->ctx));
    }
  } else {
    snprintf(errmsg, errlen, "out of memory");
  }
  if (s == CXLA_OK) {
    int j = 0;
    write_leaves(out, args, &j, op->nout);
  }
  cxla_literal_destroy(out);
  for (int p = 0; p < n; p++) free_view(lits[p]);
  if (lits != stack) cx_free(lits);
  return s;
}
