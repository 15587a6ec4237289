/* infer_control.c — shape rules of ops that run whole computations: call, fusion, while,
 * conditional, and the async chain async-start -> async-update* -> async-done. Arguments must
 * match parameters exactly (layouts aside). */
#include "ir/infer.h"

static cxla_status call_like(cx_infer *ic, cx_shape *out, const char *role) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vcallee(ic, 0, role, -1));
  cx_comp *c = in->called[0];
  if (c->nparams != in->nops)
    return cx_vfail(ic, "expected %d operand%s (the parameters of %s), got %d", c->nparams, c->nparams == 1 ? "" : "s",
                    c->name, in->nops);
  for (int i = 0; i < in->nops; i++) {
    const cx_shape *p = &c->params[i]->shape, *a = cx_vop(ic, i);
    if (!cx_shape_equal(p, a))
      return cx_vfail(ic, "operand %d %s does not match parameter %d of %s, %s", i, cx_vshape(ic, a), i, c->name,
                      cx_vshape(ic, p));
  }
  *out = c->root->shape;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_while(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vcallee(ic, 0, "condition", 1));
  CX_TRY(cx_vcallee(ic, 1, "body", 1));
  cx_comp *cond = in->called[0], *body = in->called[1];
  const cx_shape *init = cx_vop(ic, 0);
  const cx_shape *cp = &cond->params[0]->shape, *bp = &body->params[0]->shape, *br = &body->root->shape;
  const cx_shape *cr = &cond->root->shape;
  if (!cx_varray(cr) || cr->rank != 0 || cr->type != CXLA_PRED)
    return cx_vfail(ic, "condition %s must return pred[], returns %s", cond->name, cx_vshape(ic, cr));
  if (!cx_shape_equal(cp, init))
    return cx_vfail(ic, "condition %s parameter %s must match the operand %s", cond->name, cx_vshape(ic, cp),
                    cx_vshape(ic, init));
  if (!cx_shape_equal(bp, init))
    return cx_vfail(ic, "body %s parameter %s must match the operand %s", body->name, cx_vshape(ic, bp),
                    cx_vshape(ic, init));
  if (!cx_shape_equal(br, init))
    return cx_vfail(ic, "body %s returns %s but must return the loop state shape %s", body->name, cx_vshape(ic, br),
                    cx_vshape(ic, init));
  *out = *init;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_conditional(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 2) return cx_vfail(ic, "expected a branch index and one operand per branch, got %d operands", ic->in->nops);
  cx_instr *in = ic->in;
  const cx_shape *idx = cx_vop(ic, 0);
  if (!cx_varray(idx) || idx->rank != 0 || (idx->type != CXLA_PRED && idx->type != CXLA_S32))
    return cx_vfail(ic, "branch index (operand 0) must be pred[] or s32[], got %s", cx_vshape(ic, idx));
  if (idx->type == CXLA_PRED && in->ncalled != 2)
    return cx_vfail(ic, "a pred branch index needs 2 branch computations (true, false), got %d", in->ncalled);
  if (in->nops != in->ncalled + 1)
    return cx_vfail(ic, "expected %d operands (the branch index and one per branch), got %d", in->ncalled + 1, in->nops);
  for (int i = 0; i < in->ncalled; i++) {
    CX_TRY(cx_vcallee(ic, i, "branch", 1));
    cx_comp *b = in->called[i];
    const cx_shape *p = &b->params[0]->shape, *a = cx_vop(ic, i + 1);
    if (!cx_shape_equal(p, a))
      return cx_vfail(ic, "branch %d %s takes %s but operand %d is %s", i, b->name, cx_vshape(ic, p), i + 1,
                      cx_vshape(ic, a));
    const cx_shape *r0 = &in->called[0]->root->shape, *r = &b->root->shape;
    if (!cx_shape_equal(r, r0))
      return cx_vfail(ic, "branch %d %s returns %s but branch 0 %s returns %s (expected the same shape)", i, b->name,
                      cx_vshape(ic, r), in->called[0]->name, cx_vshape(ic, r0));
  }
  *out = in->called[0]->root->shape;
  cx_vplain(out);
  return CXLA_OK;
}

/* XLA's ShapeUtil::IsPrefix: a equals b, or a is the empty tuple, or both are tuples and each
 * element of a is a prefix of b's element at its index. An async op's element {0} is a prefix
 * of the computation's parameters and {1} of its result while the chain binds them late. */
static int is_prefix(const cx_shape *a, const cx_shape *b) {
  if (cx_shape_equal(a, b)) return 1;
  if (a->type != CXLA_TUPLE) return 0;
  if (!a->ntuple) return 1;
  if (b->type != CXLA_TUPLE || a->ntuple > b->ntuple) return 0;
  for (int i = 0; i < a->ntuple; i++)
    if (!is_prefix(&a->tuple[i], &b->tuple[i])) return 0;
  return 1;
}

int cx_async_fully_bound(const cx_instr *in) {
  const cx_comp *c = in->ncalled == 1 ? in->called[0] : NULL;
  const cx_shape *s = &in->shape;
  if (!c || !c->root || s->type != CXLA_TUPLE || s->ntuple < 2 || s->tuple[0].ntuple != c->nparams) return 0;
  return cx_shape_equal(&s->tuple[1], &c->root->shape);
}

/* An async shape is ((bound parameters of the computation), its result or a prefix of it,
 * context...), as XLA's verifier (CheckAsyncOpComputationShapes) requires of every op in the
 * chain but async-done. */
static cxla_status async_shape(cx_infer *ic, const cx_shape *s, const char *what) {
  cx_comp *c = ic->in->called[0];
  if (s->type != CXLA_TUPLE || s->ntuple < 2 || s->tuple[0].type != CXLA_TUPLE)
    return cx_vfail(ic, "%s %s must be ((operands), result, context...)", what, cx_vshape(ic, s));
  const cx_shape *ps = &s->tuple[0];
  if (ps->ntuple > c->nparams)
    return cx_vfail(ic, "%s %s: element {0} has %d operand shapes, computation %s takes %d parameters", what,
                    cx_vshape(ic, s), ps->ntuple, c->name, c->nparams);
  for (int i = 0; i < ps->ntuple; i++)
    if (!cx_shape_equal(&ps->tuple[i], &c->params[i]->shape))
      return cx_vfail(ic, "%s element {0,%d} %s does not match parameter %d of %s, %s", what, i,
                      cx_vshape(ic, &ps->tuple[i]), i, c->name, cx_vshape(ic, &c->params[i]->shape));
  if (!is_prefix(&s->tuple[1], &c->root->shape))
    return cx_vfail(ic, "%s element {1} %s is neither the result of %s, %s, nor a prefix of it", what,
                    cx_vshape(ic, &s->tuple[1]), c->name, cx_vshape(ic, &c->root->shape));
  return CXLA_OK;
}

/* async-start(bound...): the first parameters of its computation, element {0} of its shape. */
static cxla_status async_start(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  cx_comp *c = in->called[0];
  if (in->nops > c->nparams)
    return cx_vfail(ic, "expected at most %d operand%s (the parameters of %s), got %d", c->nparams,
                    c->nparams == 1 ? "" : "s", c->name, in->nops);
  for (int i = 0; i < in->nops; i++)
    if (!cx_shape_equal(cx_vop(ic, i), &c->params[i]->shape))
      return cx_vfail(ic, "operand %d %s does not match parameter %d of %s, %s", i, cx_vshape(ic, cx_vop(ic, i)), i,
                      c->name, cx_vshape(ic, &c->params[i]->shape));
  CX_TRY(async_shape(ic, &in->shape, "declared shape"));
  if (in->shape.tuple[0].ntuple != in->nops)
    return cx_vfail(ic, "declared shape %s binds %d parameters in element {0}, but it has %d operand%s",
                    cx_vshape(ic, &in->shape), in->shape.tuple[0].ntuple, in->nops, in->nops == 1 ? "" : "s");
  *out = in->shape; /* the context elements are the op's own */
  cx_vplain(out);
  return CXLA_OK;
}

/* async-update(chain, new...): binds the next parameters; its element {0} and {1} grow from
 * the operand's (XLA's CheckAsyncUpdateOperands). Without new operands and a written shape it
 * is the operand's shape. */
static cxla_status async_update(cx_infer *ic, const cx_shape *prev, cx_shape *out) {
  cx_instr *in = ic->in;
  if (in->shape.type == CXLA_INVALID) { /* shape left out: XLA's parser would not have it */
    if (in->nops != 1) return cx_vfail(ic, "an async-update with new operands needs its shape written");
    *out = *prev;
    cx_vplain(out);
    return CXLA_OK;
  }
  const cx_shape *s = &in->shape;
  CX_TRY(async_shape(ic, s, "declared shape"));
  int before = prev->tuple[0].ntuple, now = s->tuple[0].ntuple;
  if (!is_prefix(&prev->tuple[0], &s->tuple[0]) || !is_prefix(&prev->tuple[1], &s->tuple[1]))
    return cx_vfail(ic, "declared shape %s does not extend its operand's %s (elements {0} and {1} may only grow)",
                    cx_vshape(ic, s), cx_vshape(ic, prev));
  if (now - before != in->nops - 1)
    return cx_vfail(ic, "has %d new operand%s, but its shape binds %d more parameters than its operand's", in->nops - 1,
                    in->nops == 2 ? "" : "s", now - before);
  for (int i = 1; i < in->nops; i++)
    if (!cx_shape_equal(cx_vop(ic, i), &s->tuple[0].tuple[before + i - 1]))
      return cx_vfail(ic, "operand %d %s does not match element {0,%d} of its shape, %s", i, cx_vshape(ic, cx_vop(ic, i)),
                      before + i - 1, cx_vshape(ic, &s->tuple[0].tuple[before + i - 1]));
  *out = *s;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_async(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vcallee(ic, 0, "async computation", -1));
  if (in->op == CX_OP_ASYNC_START) return async_start(ic, out);
  if (in->nops < 1) return cx_vfail(ic, "needs the async-start or async-update it follows as operand 0");
  if (in->op == CX_OP_ASYNC_DONE && in->nops != 1) return cx_vfail(ic, "takes one operand, got %d", in->nops);
  const cx_instr *o = in->ops[0];
  if (o->op != CX_OP_ASYNC_START && o->op != CX_OP_ASYNC_UPDATE)
    return cx_vfail(ic, "operand must be an async-start or async-update, got %s %s", cx_op_name(o->op),
                    o->name ? o->name : "?");
  if (o->ncalled != 1 || o->called[0] != in->called[0])
    return cx_vfail(ic, "calls %s but its operand %s calls %s", in->called[0]->name, o->name ? o->name : "?",
                    o->ncalled == 1 && o->called[0] ? o->called[0]->name : "nothing");
  CX_TRY(async_shape(ic, &o->shape, "operand shape"));
  if (in->op == CX_OP_ASYNC_UPDATE) return async_update(ic, &o->shape, out);
  cx_comp *c = in->called[0];
  if (o->shape.tuple[0].ntuple != c->nparams)
    return cx_vfail(ic, "its operand %s binds %d of the %d parameters of %s (all must be bound by async-done)",
                    o->name ? o->name : "?", o->shape.tuple[0].ntuple, c->nparams, c->name);
  *out = c->root->shape;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_call(cx_infer *ic, cx_shape *out) { return call_like(ic, out, "to_apply"); }
cxla_status cx_infer_fusion(cx_infer *ic, cx_shape *out) { return call_like(ic, out, "fused computation"); }
