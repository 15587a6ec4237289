/* rules_control.c — gradients of tuples and of ops that call computations. A call (and a
 * fusion, which is a call of its fused computation) calls the callee's vjp, which recomputes
 * the callee's forward inside; a conditional runs, in the same branch, that branch's vjp and
 * returns a cotangent for every branch operand (zeros for the others). While loops are in
 * while_tape.c. */
#include "grad/grad_int.h"

#define E (&s->e)

cxla_status gr_rule_tuple(gr_state *s, cx_instr *in, const gr_ct *ct) {
  for (int k = 0; ct->e && k < in->nops; k++)
    if (gr_wants(s, in, k)) gr_acc_tree(s, in->ops[k], -1, &ct->e[k]);
  return s->e.st;
}

cxla_status gr_rule_get_tuple_element(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (gr_wants(s, in, 0)) gr_acc_tree(s, in->ops[0], (int)in->a.index, ct);
  return s->e.st;
}

cxla_status gr_rule_opt_barrier(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (gr_wants(s, in, 0)) gr_acc_tree(s, in->ops[0], -1, ct);
  return s->e.st;
}

cxla_status gr_rule_call(gr_state *s, cx_instr *in, const gr_ct *ct) {
  cx_comp *vjp;
  cxla_status st = gr_vjp_comp(s->e.g, in->called[0], &vjp);
  if (st != CXLA_OK) return s->e.st = st;
  cx_instr **ops = cx_calloc((size_t)in->nops + 1, sizeof *ops);
  if (!ops) return s->e.st = cx_oom(s->e.g->m->ctx);
  for (int k = 0; k < in->nops; k++) ops[k] = gr_x(s, in, k);
  ops[in->nops] = gr_ct_value(E, ct, &in->shape);
  cx_instr *r = gr_call(E, vjp, in->nops + 1, ops);
  cx_free(ops);
  for (int k = 0; k < in->nops; k++)
    if (gr_wants(s, in, k)) gr_acc(s, in->ops[k], gr_gte(E, r, k));
  return s->e.st;
}

/* Branch k of the backward conditional: takes (operand k, cotangent), returns the tuple of
 * every branch operand's cotangent, zeros but for its own. */
static cx_comp *backward_branch(gr_state *s, cx_instr *in, int k, cx_comp *vjp) {
  gr_module *g = s->e.g;
  cx_comp *c = gr_comp_begin(g, "grad_branch_", in->called[k]->name);
  if (!c) return NULL;
  gr_em e = {g, c, in->loc, CXLA_OK};
  cx_shape pair[2] = {in->ops[1 + k]->shape, in->shape};
  cx_shape ps = {.type = CXLA_TUPLE, .ntuple = 2, .tuple = pair};
  cx_instr *p = gr_param(&e, 0, &ps);
  cx_instr *args[2] = {gr_gte(&e, p, 0), gr_gte(&e, p, 1)};
  cx_instr *mine = gr_gte(&e, gr_call(&e, vjp, 2, args), 0);
  int n = in->nops - 1;
  cx_instr **v = cx_calloc((size_t)n, sizeof *v);
  for (int j = 0; v && j < n; j++) v[j] = j == k ? mine : gr_zeros(&e, &in->ops[1 + j]->shape);
  cx_instr *root = v ? gr_tuple(&e, n, v) : NULL;
  cx_free(v);
  if (e.st != CXLA_OK || gr_comp_end(g, c, root) != CXLA_OK) {
    s->e.st = e.st != CXLA_OK ? e.st : CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return c;
}

cxla_status gr_rule_conditional(gr_state *s, cx_instr *in, const gr_ct *ct) {
  int n = in->ncalled;
  cx_comp **branches = cx_calloc((size_t)n, sizeof *branches);
  cx_instr **ops = cx_calloc((size_t)n + 1, sizeof *ops);
  if (!branches || !ops) {
    cx_free(branches);
    cx_free(ops);
    return s->e.st = cx_oom(s->e.g->m->ctx);
  }
  cx_instr *ctv = gr_ct_value(E, ct, &in->shape);
  ops[0] = gr_x(s, in, 0);
  for (int k = 0; k < n && s->e.st == CXLA_OK; k++) {
    cx_comp *vjp;
    cxla_status st = gr_vjp_comp(s->e.g, in->called[k], &vjp);
    if (st != CXLA_OK) {
      s->e.st = st;
      break;
    }
    branches[k] = backward_branch(s, in, k, vjp);
    ops[1 + k] = gr_tuple(E, 2, (cx_instr *[]){gr_x(s, in, 1 + k), ctv});
  }
  cx_instr *r = gr_new(E, CX_OP_CONDITIONAL, NULL, n + 1, ops);
  if (r && !cx_instr_set_called(r, n, branches)) r = NULL;
  r = gr_done(E, r);
  cx_free(branches);
  cx_free(ops);
  for (int k = 0; k < n; k++)
    if (gr_wants(s, in, 1 + k)) gr_acc(s, in->ops[1 + k], gr_gte(E, r, k));
  return s->e.st;
}
