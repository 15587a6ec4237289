/* parse_late.c — what the parser does once the whole module is read: names for the nested
 * instructions and the computations it made, the computations of async chains, the shapes of
 * instructions written without one, and the checks that had to wait for those shapes. Shapes
 * come from the verifier's own inference (cx_infer_shape), run over computations callees
 * first and over each computation's instructions operands first, as XLA's parser infers them
 * while it reads. */
#include <stdio.h>
#include <string.h>
#include "ir/verify.h"
#include "text/parse_int.h"

cx_late *cx_plate(cx_parser *p, cx_late_kind kind, cx_instr *in, cx_loc loc) {
  if (!cx_vec_reserve((void **)&p->late, &p->late_cap, p->nlate + 1, sizeof *p->late)) cx_poom(p);
  cx_late *l = &p->late[p->nlate++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  l->in = in;
  l->loc = loc;
  return l;
}

/* "<base>", "<base>.1", "<base>.2", ...: the first that is not in t, added to t for val. */
static const char *free_name(cx_parser *p, cx_names *t, const char *base, void *val) {
  char buf[160];
  for (long k = 0;; k++) {
    if (k) snprintf(buf, sizeof buf, "%s.%ld", base, k);
    else snprintf(buf, sizeof buf, "%s", base);
    size_t n = strlen(buf);
    if (cx_names_find(t, buf, n)) continue;
    char *s = cx_pstrndup(p, buf, n);
    if (cx_names_add(t, s, n, val) == t) cx_poom(p);
    return s;
  }
}

void cx_pname_anonymous(cx_parser *p, cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->name) continue;
    char base[64];
    snprintf(base, sizeof base, "%s.anon", cx_op_name(in->op));
    in->name = free_name(p, &p->instr_names, base, in);
  }
}


/* ---- async chains ---- */

/* The computation the parser made for "<op>-start(...)" sugar has a parameter for each
 * operand of the -start. A chain that binds late ("call-start(), to_apply=f" then
 * "call-update(start, x, y)") binds the rest on its -update ops: XLA's parser gives the
 * wrapped op a parameter for every operand the chain binds, and the result shape the
 * -done has where the -start's element {1} is only a prefix of it. */
static void widen_sugar(cx_parser *p, cx_instr *start, cx_comp *w) {
  cx_module *m = p->m;
  const cx_shape *bound = &start->shape.tuple[0], *result = &start->shape.tuple[1];
  const cx_instr *done = NULL;
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      const cx_instr *in = m->comps[i]->instrs[j];
      if (in->ncalled != 1 || in->called[0] != w || in->shape.type == CXLA_INVALID) continue;
      if (in->op == CX_OP_ASYNC_DONE) done = in;
      if (in->op != CX_OP_ASYNC_UPDATE || in->shape.type != CXLA_TUPLE || in->shape.ntuple < 2) continue;
      if (in->shape.tuple[0].type == CXLA_TUPLE && in->shape.tuple[0].ntuple > bound->ntuple) bound = &in->shape.tuple[0];
    }
  cx_instr *root = w->root;
  if (done && result->type == CXLA_TUPLE && !cx_shape_equal(result, &done->shape)) root->shape = done->shape;
  if (bound->ntuple <= w->nparams) return;
  int n = bound->ntuple, k0 = w->nparams;
  cx_instr **ops = cx_palloc(p, sizeof *ops * (size_t)n);
  for (int i = 0; i < k0; i++) ops[i] = w->params[i];
  for (int i = k0; i < n; i++) ops[i] = cx_pasync_param(p, w, &bound->tuple[i], i, start->loc);
  root->ops = ops;
  root->nops = n;
  int r = 0; /* the root after its new operands */
  while (w->instrs[r] != root) r++;
  memmove(&w->instrs[r], &w->instrs[r + 1], sizeof *w->instrs * (size_t)(w->ninstrs - r - 1));
  w->instrs[w->ninstrs - 1] = root;
  if (!cx_comp_index_params(w)) cx_poom(p);
}

/* The ops XLA lets an async chain's value pass through between its ops
 * (HloInstruction::IsAllowedAsyncIntermediary: a parameter of a loop body, say); cxla does
 * not follow it there. */
static int passes_chain_on(cx_op op) {
  return op == CX_OP_TUPLE || op == CX_OP_GET_TUPLE_ELEMENT || op == CX_OP_PARAMETER || op == CX_OP_COPY ||
         op == CX_OP_OPT_BARRIER || op == CX_OP_WHILE;
}

/* async-update and async-done run the computation of the async-start they follow; a calls=
 * written on them must name it. Each computation is wrapped by at most one async-start. */
static void finish_async(cx_parser *p) {
  cx_module *m = p->m;
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  for (int i = 0; i < m->ncomps; i++) {
    cx_comp *c = m->comps[i];
    for (int j = 0; j < c->ninstrs; j++) {
      cx_instr *in = c->instrs[j];
      if (in->op == CX_OP_ASYNC_START && in->ncalled == 1) {
        cx_comp *w = in->called[0];
        if (w->aux)
          cx_perr(p, in->loc, CXLA_ERR_PARSE, "computation '%s' is already run by async-start '%s' (each async-start "
                  "needs a computation of its own)", w->name, ((cx_instr *)w->aux)->name);
        w->aux = in;
      }
      if (in->op != CX_OP_ASYNC_UPDATE && in->op != CX_OP_ASYNC_DONE) continue;
      /* async-update(chain, new operands...) binds parameters late; async-done(chain) */
      cx_instr *o = in->nops == 1 || (in->nops > 1 && in->op == CX_OP_ASYNC_UPDATE) ? in->ops[0] : NULL;
      if (!o || (o->op != CX_OP_ASYNC_START && o->op != CX_OP_ASYNC_UPDATE)) {
        int through = o && passes_chain_on(o->op) && !(o->op == CX_OP_PARAMETER && c->is_entry);
        cx_perr(p, in->loc, through ? CXLA_ERR_UNSUPPORTED : CXLA_ERR_PARSE,
                "%s '%s' needs %s, an async-start or async-update%s%s%s%s", cx_op_name(in->op), in->name,
                in->op == CX_OP_ASYNC_UPDATE ? "the op of its chain as operand 0" : "one operand", o ? " (got " : "",
                o ? cx_op_name(o->op) : "", o ? ")" : "",
                through ? "; not supported: a chain passed on through tuples, copies or loop state, as XLA allows" : "");
      }
      cx_comp *w = o->ncalled == 1 ? o->called[0] : NULL;
      if (in->ncalled == 1 && in->called[0] != w)
        cx_perr(p, in->loc, CXLA_ERR_PARSE, "%s '%s' names computation '%s', but its async-start runs '%s'",
                cx_op_name(in->op), in->name, in->called[0]->name, w ? w->name : "?");
      if (!in->ncalled) {
        in->called = cx_palloc(p, sizeof *in->called);
        in->called[0] = w;
        in->ncalled = 1;
      }
    }
  }
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  for (int64_t i = 0; i < p->nlate; i++) {
    const cx_late *l = &p->late[i];
    if (l->kind == CX_LATE_COMP_NAME && l->in->op == CX_OP_ASYNC_START && l->in->called[0] == l->comp)
      widen_sugar(p, l->in, l->comp);
  }
  /* "custom-call-done(...)": the chain must wrap that op */
  for (int64_t i = 0; i < p->nlate; i++) {
    const cx_late *l = &p->late[i];
    if (l->kind != CX_LATE_ASYNC_OP) continue;
    const cx_comp *w = l->in->called[0];
    if (w && w->root && (int)w->root->op != l->op)
      cx_perr(p, l->loc, CXLA_ERR_PARSE, "%s-%s: the async-start it follows wraps %s, not %s", cx_op_name((cx_op)l->op),
              l->in->op == CX_OP_ASYNC_DONE ? "done" : "update", cx_op_name(w->root->op), cx_op_name((cx_op)l->op));
  }
}

/* ---- shapes left out ---- */

_Noreturn static void fail_status(cx_parser *p, cxla_status s) {
  if (s == CXLA_ERR_OUT_OF_MEMORY) cx_poom(p);
  p->status = s;
  longjmp(p->jb, 1);
}

/* XLA infers a broadcast as its operand with dimensions= read as sizes of new major dims
 * (InferBroadcastShape), so only a scalar broadcast without dimensions= comes out sensible;
 * the verifier judges the rest. */
static void infer_broadcast(cx_parser *p, cx_instr *in) {
  const cx_shape *x = &in->ops[0]->shape;
  const cx_ints *d = &in->a.dims;
  if (!cx_type_is_array(x->type) || x->rank + d->n > CXLA_MAX_RANK)
    cx_perr(p, in->loc, CXLA_ERR_PARSE, "broadcast '%s': cannot infer its shape from an operand of %d dimensions and "
            "dimensions= of %d", in->name, x->rank, d->n);
  cx_shape s = cx_shape_array(x->type, 0, NULL);
  for (int i = 0; i < d->n; i++) {
    if (d->v[i] < 0)
      cx_perr(p, in->loc, CXLA_ERR_PARSE, "broadcast '%s': dimensions= read as sizes (XLA's rule without a shape) "
              "holds the negative size %lld", in->name, (long long)d->v[i]);
    s.dims[s.rank++] = d->v[i];
  }
  for (int i = 0; i < x->rank; i++) s.dims[s.rank++] = x->dims[i];
  in->shape = s;
}

static void infer_shapes(cx_parser *p) {
  cx_module *m = p->m;
  for (int i = 0; i < m->ncomps; i++) { /* callees first (order_comps) */
    cx_comp *c = m->comps[i];
    for (int j = 0; j < c->ninstrs; j++) { /* operands first */
      cx_instr *in = c->instrs[j];
      if (in->shape.type != CXLA_INVALID) continue;
      if (in->op == CX_OP_BROADCAST && in->nops == 1) {
        infer_broadcast(p, in);
        continue;
      }
      cx_shape s;
      cxla_status st = cx_infer_shape(in, &s);
      if (st != CXLA_OK) fail_status(p, st);
      /* a copy of its own: inferred tuples share element arrays with the operands' shapes */
      if (!cx_shape_copy(&in->shape, &s, &m->arena)) cx_poom(p);
    }
  }
}

static void late_checks(cx_parser *p) {
  char a[128], b[128];
  for (int64_t i = 0; i < p->nlate; i++) {
    const cx_late *l = &p->late[i];
    cx_instr *in = l->in;
    switch (l->kind) {
    case CX_LATE_OPSHAPE: {
      const cx_instr *o = in->ops[l->slot];
      if (!cx_shape_equal(&l->shape, &o->shape))
        cx_perr(p, l->loc, CXLA_ERR_PARSE, "operand %d of '%s' is written with shape %s, but '%s' has shape %s",
                l->slot, in->name, cx_shape_str(&l->shape, a, sizeof a), o->name, cx_shape_str(&o->shape, b, sizeof b));
      break;
    }
    case CX_LATE_SIGNATURE:
      if (!cx_shape_equal(&in->shape, &l->shape))
        cx_perr(p, in->loc, CXLA_ERR_PARSE, "ROOT '%s' has shape %s, the signature of '%s' says %s", in->name,
                cx_shape_str(&in->shape, a, sizeof a), l->comp->name, cx_shape_str(&l->shape, b, sizeof b));
      break;
    case CX_LATE_BCAST_DIMS: {
      const cx_shape *x = in->nops == 1 ? &in->ops[0]->shape : NULL;
      if (x && !(cx_type_is_array(x->type) && x->rank == 0))
        cx_perr(p, l->loc, CXLA_ERR_PARSE, "broadcast needs attribute dimensions= (only a scalar operand may leave it "
                "out; '%s' is %s)", in->ops[0]->name, cx_shape_str(x, a, sizeof a));
      break;
    }
    default: break;
    }
  }
}

void cx_pfinish(cx_parser *p) {
  for (int64_t i = 0; i < p->nlate; i++) /* names first: the messages below use them */
    if (p->late[i].kind == CX_LATE_COMP_NAME) {
      cx_comp *w = p->late[i].comp;
      w->name = free_name(p, &p->comp_names, w->name, w); /* "async_wrapped", "inline" */
    }
  finish_async(p);
  infer_shapes(p);
  late_checks(p);
}
