/* test_cpu_buffers.c — buffer assignment on hand-written modules (no passes), checked against
 * what the rules say by hand: arena reuse along a chain, in-place fusions and when they are
 * refused, output slots and the copies for parameters/constants/duplicates, while loop state
 * (pass-through, swaps, init reuse), conditionals, shared computations. */
#include <stdlib.h>
#include "passes/buffers.h"
#include "test_cpu_helpers.h"

static int slot_of(cx_buffers *b, cx_module *m, const char *name, int leaf) {
  cx_instr *in = cpu_find(m, name);
  CHECK_MSG(in != NULL, "no instruction %s", name);
  return in ? cx_buffers_slot(b, in, leaf) : -2;
}

static const cx_slot *slot_ptr(cx_buffers *b, int s) {
  static const cx_slot none = {.kind = CX_SLOT_TEMP, .offset = -1, .size = -1, .param = -1, .leaf = -1, .out_leaf = -1};
  return s >= 0 && s < b->nslots ? &b->slots[s] : &none;
}

/* Six transposes in a row: each dies at the next, so two 16 KiB buffers take turns. */
TEST(cpu_buffers_chain_reuses_memory) {
  cx_module *m = cpu_parse("HloModule chain\n"
                           "ENTRY main {\n"
                           "  p = f32[64,64] parameter(0)\n"
                           "  t1 = f32[64,64] transpose(p), dimensions={1,0}\n"
                           "  t2 = f32[64,64] transpose(t1), dimensions={1,0}\n"
                           "  t3 = f32[64,64] transpose(t2), dimensions={1,0}\n"
                           "  t4 = f32[64,64] transpose(t3), dimensions={1,0}\n"
                           "  t5 = f32[64,64] transpose(t4), dimensions={1,0}\n"
                           "  t6 = f32[64,64] transpose(t5), dimensions={1,0}\n"
                           "  ROOT n = f32[64,64] negate(t6)\n"
                           "}\n");
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  int64_t sum = 0;
  for (int i = 0; i < b.nslots; i++)
    if (b.slots[i].kind == CX_SLOT_TEMP) sum += b.slots[i].size;
  CHECK_EQ_INT(sum, 6 * 16384);
  CHECK_EQ_INT(b.arena_size, 2 * 16384);
  /* neighbours overlap in time and must not share bytes; t1 and t3 may */
  const cx_slot *s1 = slot_ptr(&b, slot_of(&b, m, "t1", 0)), *s2 = slot_ptr(&b, slot_of(&b, m, "t2", 0));
  CHECK(s1->kind == CX_SLOT_TEMP && s2->kind == CX_SLOT_TEMP && s1->offset != s2->offset);
  CHECK_EQ_INT(s1->offset % 64, 0);
  CHECK_EQ_INT(s2->offset % 64, 0);
  CHECK(slot_ptr(&b, slot_of(&b, m, "n", 0))->kind == CX_SLOT_OUTPUT);
  CHECK(slot_ptr(&b, slot_of(&b, m, "p", 0))->kind == CX_SLOT_PARAM);
  CHECK_EQ_INT(b.noutputs, 1);
  cx_buffers_free(&b);
  cx_module_free(m);
}

static const char inplace_text[] =
    "HloModule inplace\n"
    "fadd {\n"
    "  a = f32[256] parameter(0)\n"
    "  b = f32[256] parameter(1)\n"
    "  ROOT s = f32[256] add(a, b)\n"
    "}\n"
    "frev {\n"
    "  a = f32[256] parameter(0)\n"
    "  r = f32[256] reverse(a), dimensions={0}\n"
    "  ROOT n = f32[256] negate(r)\n"
    "}\n"
    "fdus {\n"
    "  a = f32[256] parameter(0)\n"
    "  u = f32[8] parameter(1)\n"
    "  i = s32[] parameter(2)\n"
    "  ROOT d = f32[256] dynamic-update-slice(a, u, i)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[256] parameter(0)\n"
    "  y = f32[256] parameter(1)\n"
    "  u = f32[8] parameter(2)\n"
    "  i = s32[] parameter(3)\n"
    "  e = f32[256] exponential(x)\n"
    "  f = f32[256] fusion(e, y), kind=kLoop, calls=fadd\n"      /* e dies here: in place */
    "  g = f32[256] exponential(f)\n"
    "  h = f32[256] fusion(g, y), kind=kLoop, calls=fadd\n"      /* g is read again below: not */
    "  k = f32[256] fusion(g), kind=kLoop, calls=frev\n"         /* reversed read: never */
    "  l = f32[256] add(h, k)\n"
    "  upd = f32[256] fusion(l, u, i), kind=kLoop, calls=fdus\n" /* l dies here: the update window in place */
    "  ROOT t = (f32[256], f32[256]) tuple(upd, f)\n"
    "}\n";

TEST(cpu_buffers_in_place) {
  cx_module *m = cpu_parse(inplace_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  CHECK_EQ_INT(slot_of(&b, m, "f", 0), slot_of(&b, m, "e", 0));
  CHECK(slot_of(&b, m, "h", 0) != slot_of(&b, m, "g", 0));
  CHECK(slot_of(&b, m, "k", 0) != slot_of(&b, m, "g", 0));
  CHECK_EQ_INT(slot_of(&b, m, "upd", 0), slot_of(&b, m, "l", 0));
  /* f is an output, so e was computed straight into the output buffer */
  CHECK(slot_ptr(&b, slot_of(&b, m, "e", 0))->kind == CX_SLOT_OUTPUT);
  CHECK_EQ_INT(slot_ptr(&b, slot_of(&b, m, "e", 0))->leaf, 1);
  CHECK_EQ_INT(slot_ptr(&b, slot_of(&b, m, "upd", 0))->leaf, 0);
  cx_buffers_free(&b);
  cx_module_free(m);
  char *x = cpu_ramp("f32", 256, 17, 0.125, -1), *y = cpu_ramp("f32", 256, 5, 0.5, 0);
  const char *in[4] = {x, y, "f32[8] {1,2,3,4,5,6,7,8}", "s32[] 100"};
  CHECK(cpu_check(inplace_text, 4, in, NULL, 1e-6, 1e-6, NULL, NULL));
  CHECK(cpu_check(inplace_text, 4, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  free(x);
  free(y);
}

/* Output leaves that are a parameter, a constant or one value twice need copies. */
TEST(cpu_buffers_output_copies) {
  static const char text[] = "HloModule outs\n"
                             "ENTRY main {\n"
                             "  p = f32[3] parameter(0)\n"
                             "  c = f32[3] constant({7, 8, 9})\n"
                             "  n = f32[3] negate(p)\n"
                             "  tp = (f32[3]) tuple(p)\n"
                             "  ROOT t = (f32[3], f32[3], f32[3], f32[3], (f32[3])) tuple(p, c, n, n, tp)\n"
                             "}\n";
  cx_module *m = cpu_parse(text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  CHECK_EQ_INT(b.noutputs, 5);
  int seen[5] = {0};
  for (int i = 0; i < b.nslots; i++)
    if (b.slots[i].kind == CX_SLOT_OUTPUT && b.slots[i].leaf >= 0 && b.slots[i].leaf < 5) seen[b.slots[i].leaf]++;
  for (int j = 0; j < 5; j++) CHECK_EQ_INT(seen[j], 1);
  /* every root leaf is its own output slot */
  for (int j = 0; j < 5; j++) {
    int s = cx_buffers_slot(&b, m->entry->root, j);
    CHECK(slot_ptr(&b, s)->kind == CX_SLOT_OUTPUT && slot_ptr(&b, s)->leaf == j);
  }
  cx_buffers_free(&b);
  cx_module_free(m);
  const char *in[1] = {"f32[3] {1, 2, 3}"};
  cxla_literal *got = NULL;
  CHECK(cpu_check(text, 1, in, NULL, 0, 0, NULL, &got));
  cxla_literal_destroy(got);
}

static const char while_text[] =
    "HloModule loops\n"
    "cond {\n"
    "  s = (s32[], f32[1000], f32[1000], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(5)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[1000], f32[1000], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  a = f32[1000] get-tuple-element(s), index=1\n"
    "  b = f32[1000] get-tuple-element(s), index=2\n"
    "  k = f32[4] get-tuple-element(s), index=3\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], f32[1000], f32[1000], f32[4]) tuple(i2, b, a, k)\n" /* swap a/b, k passes */
    "}\n"
    "ENTRY main {\n"
    "  x = f32[1000] parameter(0)\n"
    "  y = f32[1000] parameter(1)\n"
    "  z = f32[4] parameter(2)\n"
    "  e = f32[1000] exponential(x)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[1000], f32[1000], f32[4]) tuple(zero, e, y, z)\n"
    "  w = (s32[], f32[1000], f32[1000], f32[4]) while(init), condition=cond, body=body\n"
    "  ROOT o = f32[1000] get-tuple-element(w), index=1\n"
    "}\n";

TEST(cpu_buffers_while_state) {
  cx_module *m = cpu_parse(while_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  cx_instr *w = cpu_find(m, "w");
  cx_comp *body = w ? w->called[1] : NULL;
  if (w && body) {
    /* pass-through: k is the state's own slot, so nothing is copied for it */
    CHECK_EQ_INT(cx_buffers_slot(&b, body->root, 3), cx_buffers_slot(&b, w, 3));
    /* swapped elements go through fresh copies, never straight from one state slot to another */
    for (int l = 1; l <= 2; l++) {
      int r = cx_buffers_slot(&b, body->root, l);
      for (int j = 0; j < 4; j++) CHECK(r != cx_buffers_slot(&b, w, j));
    }
    /* e dies at the loop: the state takes its buffer; y is a parameter: copied into state */
    CHECK_EQ_INT(cx_buffers_slot(&b, w, 1), slot_of(&b, m, "e", 0));
    CHECK(slot_ptr(&b, cx_buffers_slot(&b, w, 2))->kind != CX_SLOT_PARAM);
    /* the result is state leaf 1, which is the output */
    CHECK(slot_ptr(&b, cx_buffers_slot(&b, w, 1))->kind == CX_SLOT_OUTPUT);
    /* the loop counter temporaries of the body never share bytes with the state */
    const cx_slot *st0 = slot_ptr(&b, cx_buffers_slot(&b, w, 0));
    const cx_slot *ii = slot_ptr(&b, cx_buffers_slot(&b, cpu_find(m, "i2"), 0));
    CHECK(st0->kind == CX_SLOT_TEMP && ii->kind == CX_SLOT_TEMP);
    CHECK(st0->offset + st0->size <= ii->offset || ii->offset + ii->size <= st0->offset);
  }
  cx_buffers_free(&b);
  cx_module_free(m);
  char *x = cpu_ramp("f32", 1000, 13, 0.25, -1.5), *y = cpu_ramp("f32", 1000, 7, -0.5, 2);
  const char *in[3] = {x, y, "f32[4] {1, 2, 3, 4}"};
  CHECK(cpu_check(while_text, 3, in, NULL, 1e-6, 1e-6, NULL, NULL));
  CHECK(cpu_check(while_text, 3, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  free(x);
  free(y);
}

/* A state element that nothing in the loop reads is still rewritten by every trip, so the
 * body's temporaries must never share its bytes (found by the random graph tests). */
static const char unread_state_text[] =
    "HloModule unread\n"
    "cond {\n"
    "  s = (s32[], f32[36,6], f32[36,6]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(5)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[36,6], f32[36,6]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  a = f32[36,6] iota(), iota_dimension=1\n"
    "  b = f32[36,6] iota(), iota_dimension=0\n"
    "  ROOT r = (s32[], f32[36,6], f32[36,6]) tuple(i2, a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[36,6] parameter(0)\n"
    "  e = f32[36,6] exponential(x)\n"
    "  t = f32[36,6] tanh(x)\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[36,6], f32[36,6]) tuple(z, e, t)\n"
    "  w = (s32[], f32[36,6], f32[36,6]) while(init), condition=cond, body=body\n"
    "  ROOT o = f32[36,6] get-tuple-element(w), index=1\n"
    "}\n";

TEST(cpu_buffers_unread_loop_state_stays_live) {
  cx_module *m = cpu_parse(unread_state_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  cx_instr *w = cpu_find(m, "w");
  cx_comp *body = w ? w->called[1] : NULL;
  for (int i = 0; body && i < body->ninstrs; i++) {
    const cx_slot *t = slot_ptr(&b, cx_buffers_slot(&b, body->instrs[i], 0));
    if (body->instrs[i]->op == CX_OP_PARAMETER || t->kind != CX_SLOT_TEMP) continue;
    for (int l = 0; l < 3; l++) {
      const cx_slot *st = slot_ptr(&b, cx_buffers_slot(&b, w, l));
      if (st == t || st->kind != CX_SLOT_TEMP) continue;
      CHECK_MSG(t->offset + t->size <= st->offset || st->offset + st->size <= t->offset,
                "%s overlaps loop state leaf %d", body->instrs[i]->name, l);
    }
  }
  cx_buffers_free(&b);
  cx_module_free(m);
  int64_t dims[2] = {36, 6};
  char *x = cpu_ramp_nd("f32", dims, 2, 9, 0.25, -1);
  const char *in[1] = {x};
  CHECK(cpu_check(unread_state_text, 1, in, NULL, 1e-6, 1e-6, NULL, NULL));
  CHECK(cpu_check(unread_state_text, 1, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  free(x);
}

/* Every branch writes every result leaf when it ends, read or not: no branch temporary may
 * share bytes with a result (found by the random graph tests). */
static const char cond_results_text[] =
    "HloModule condres\n"
    "b0 {\n"
    "  x = f32[500] parameter(0)\n"
    "  e = f32[500] exponential(x)\n"
    "  i = s32[125] iota(), iota_dimension=0\n"
    "  ROOT t = (f32[500], s32[125]) tuple(e, i)\n"
    "}\n"
    "b1 {\n"
    "  x = f32[500] parameter(0)\n"
    "  i = s32[125] iota(), iota_dimension=0\n"
    "  n = s32[125] negate(i)\n"
    "  ROOT t = (f32[500], s32[125]) tuple(x, n)\n"
    "}\n"
    "ENTRY main {\n"
    "  k = s32[] parameter(0)\n"
    "  x = f32[500] parameter(1)\n"
    "  c = (f32[500], s32[125]) conditional(k, x, x), branch_computations={b0, b1}\n"
    "  ROOT r = s32[125] get-tuple-element(c), index=1\n"
    "}\n";

TEST(cpu_buffers_conditional_results_outlive_branches) {
  cx_module *m = cpu_parse(cond_results_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  cx_instr *c = cpu_find(m, "c");
  for (int k = 0; c && k < c->ncalled; k++) {
    cx_comp *br = c->called[k];
    for (int i = 0; i < br->ninstrs; i++) {
      const cx_slot *t = slot_ptr(&b, cx_buffers_slot(&b, br->instrs[i], 0));
      if (br->instrs[i]->op == CX_OP_PARAMETER || br->instrs[i]->op == CX_OP_TUPLE || t->kind != CX_SLOT_TEMP) continue;
      for (int l = 0; l < 2; l++) {
        const cx_slot *r = slot_ptr(&b, cx_buffers_slot(&b, c, l));
        if (r->kind != CX_SLOT_TEMP) continue;
        CHECK_MSG(t->offset + t->size <= r->offset || r->offset + r->size <= t->offset,
                  "%s/%s overlaps conditional result leaf %d", br->name, br->instrs[i]->name, l);
      }
    }
  }
  cx_buffers_free(&b);
  cx_module_free(m);
  char *x = cpu_ramp("f32", 500, 9, 0.25, -1);
  for (int k = -1; k <= 2; k++) {
    char ks[32];
    snprintf(ks, sizeof ks, "s32[] %d", k);
    const char *in[2] = {ks, x};
    CHECK(cpu_check(cond_results_text, 2, in, NULL, 1e-6, 1e-6, NULL, NULL));
    CHECK(cpu_check(cond_results_text, 2, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  }
  free(x);
}

/* A body result computed elementwise from its own state element, which the body reads for the
 * last time there, is written straight into the state: no copy at the end of the trip. When
 * the old value is still read afterwards (or ends up elsewhere in the result) it is not. */
static const char loop_update_text[] =
    "HloModule upd\n"
    "fstep {\n"
    "  x = f32[256] parameter(0)\n"
    "  g = f32[256] parameter(1)\n"
    "  c = f32[] constant(0.5)\n"
    "  cb = f32[256] broadcast(c), dimensions={}\n"
    "  m = f32[256] multiply(g, cb)\n"
    "  ROOT s = f32[256] subtract(x, m)\n"
    "}\n"
    "fstep2 {\n"
    "  x = f32[256] parameter(0)\n"
    "  g = f32[256] parameter(1)\n"
    "  ROOT s = f32[256] add(x, g)\n"
    "}\n"
    "cond {\n"
    "  s = (s32[], f32[256], f32[256], f32[256], f32[256]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(4)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[256], f32[256], f32[256], f32[256]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  w = f32[256] get-tuple-element(s), index=1\n"
    "  v = f32[256] get-tuple-element(s), index=2\n"
    "  g = f32[256] get-tuple-element(s), index=3\n"
    "  w2 = f32[256] fusion(w, g), kind=kLoop, calls=fstep\n"  /* last read of w: in place */
    "  v2 = f32[256] fusion(v, g), kind=kLoop, calls=fstep2\n" /* v is read again below: not */
    "  vv = f32[256] multiply(v, g)\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], f32[256], f32[256], f32[256], f32[256]) tuple(i2, w2, v2, g, vv)\n"
    "}\n"
    "ENTRY main {\n"
    "  w = f32[256] parameter(0)\n"
    "  v = f32[256] parameter(1)\n"
    "  g = f32[256] parameter(2)\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[256], f32[256], f32[256], f32[256]) tuple(z, w, v, g, g)\n"
    "  l = (s32[], f32[256], f32[256], f32[256], f32[256]) while(init), condition=cond, body=body\n"
    "  a = f32[256] get-tuple-element(l), index=1\n"
    "  b = f32[256] get-tuple-element(l), index=2\n"
    "  c = f32[256] get-tuple-element(l), index=4\n"
    "  ROOT t = (f32[256], f32[256], f32[256]) tuple(a, b, c)\n"
    "}\n";

TEST(cpu_buffers_loop_state_updated_in_place) {
  cx_module *m = cpu_parse(loop_update_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  cx_instr *l = cpu_find(m, "l");
  if (l) {
    CHECK_EQ_INT(slot_of(&b, m, "w2", 0), cx_buffers_slot(&b, l, 1));
    CHECK(slot_of(&b, m, "v2", 0) != cx_buffers_slot(&b, l, 2));
    CHECK(slot_of(&b, m, "vv", 0) != cx_buffers_slot(&b, l, 2));
    CHECK(slot_of(&b, m, "v2", 0) != slot_of(&b, m, "v", 0));
  }
  cx_buffers_free(&b);
  cx_module_free(m);
  char *w = cpu_ramp("f32", 256, 11, 0.5, -2), *v = cpu_ramp("f32", 256, 3, 1, 0), *g = cpu_ramp("f32", 256, 7, 0.25, -1);
  const char *in[3] = {w, v, g};
  CHECK(cpu_check(loop_update_text, 3, in, NULL, 1e-6, 1e-6, NULL, NULL));
  CHECK(cpu_check(loop_update_text, 3, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  free(w);
  free(v);
  free(g);
}

/* Donation: a dead donated parameter's memory is reused in place like a temporary's and may
 * hold a result leaf; not while the parameter is still read, not for a reversed read, and
 * never without donation. */
static const char donate_text[] =
    "HloModule donate\n"
    "fadd {\n"
    "  a = f32[256] parameter(0)\n"
    "  b = f32[256] parameter(1)\n"
    "  ROOT s = f32[256] add(a, b)\n"
    "}\n"
    "fexp {\n"
    "  a = f32[256] parameter(0)\n"
    "  ROOT e = f32[256] exponential(a)\n"
    "}\n"
    "frev {\n"
    "  a = f32[256] parameter(0)\n"
    "  r = f32[256] reverse(a), dimensions={0}\n"
    "  ROOT n = f32[256] negate(r)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[256] parameter(0)\n"
    "  y = f32[256] parameter(1)\n"
    "  f = f32[256] fusion(x), kind=kLoop, calls=fexp\n"        /* x is read again by g */
    "  g = f32[256] fusion(x, y), kind=kLoop, calls=fadd\n"     /* x dies here, y does not */
    "  rv = f32[256] fusion(y), kind=kLoop, calls=frev\n"       /* reversed: never in place */
    "  ROOT t = (f32[256], f32[256], f32[256]) tuple(g, rv, f)\n"
    "}\n";

TEST(cpu_buffers_donated_parameters) {
  cx_module *m = cpu_parse(donate_text);
  if (!m) return;
  cx_buffers b;
  const uint8_t both[2] = {1, 1};
  CHECK_OK(cx_buffers_assign_donated(m, both, 2, &b));
  const cx_slot *f = slot_ptr(&b, slot_of(&b, m, "f", 0)), *g = slot_ptr(&b, slot_of(&b, m, "g", 0));
  const cx_slot *rev = slot_ptr(&b, slot_of(&b, m, "rv", 0));
  CHECK(f->kind == CX_SLOT_OUTPUT && f->leaf == 2);
  CHECK(g->kind == CX_SLOT_PARAM && g->param == 0 && g->leaf == 0 && g->out_leaf == 0);
  CHECK_EQ_INT(slot_of(&b, m, "g", 0), slot_of(&b, m, "x", 0));
  CHECK(rev->kind == CX_SLOT_OUTPUT && rev->leaf == 1);
  CHECK_EQ_INT(slot_ptr(&b, slot_of(&b, m, "y", 0))->out_leaf, -1);
  cx_buffers_free(&b);
  /* without donation both results get output memory */
  CHECK_OK(cx_buffers_assign(m, &b));
  CHECK(slot_ptr(&b, slot_of(&b, m, "g", 0))->kind == CX_SLOT_OUTPUT);
  CHECK(slot_ptr(&b, slot_of(&b, m, "x", 0))->out_leaf == -1);
  cx_buffers_free(&b);
  cx_module_free(m);
}

/* A multi-output elementwise fusion writes each output over a donated operand: the one the
 * header's input_output_alias pairs it with, whatever the operand order. */
static const char multi_text[] =
    "HloModule multi, input_output_alias={ {0}: (2, {}, may-alias), {1}: (0, {}, may-alias), {2}: (1, {}, may-alias) }\n"
    "fused {\n"
    "  a = f32[256] parameter(0)\n"
    "  b = f32[256] parameter(1)\n"
    "  c = f32[256] parameter(2)\n"
    "  s = f32[256] add(a, b)\n"
    "  m = f32[256] multiply(b, c)\n"
    "  d = f32[256] subtract(c, a)\n"
    "  ROOT t = (f32[256], f32[256], f32[256]) tuple(s, m, d)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[256] parameter(0)\n"
    "  y = f32[256] parameter(1)\n"
    "  z = f32[256] parameter(2)\n"
    "  f = (f32[256], f32[256], f32[256]) fusion(x, y, z), kind=kLoop, calls=fused\n"
    "  s = f32[256] get-tuple-element(f), index=0\n"
    "  m = f32[256] get-tuple-element(f), index=1\n"
    "  d = f32[256] get-tuple-element(f), index=2\n"
    "  ROOT r = (f32[256], f32[256], f32[256]) tuple(s, m, d)\n"
    "}\n";

TEST(cpu_buffers_multi_output_in_place) {
  cx_module *m = cpu_parse(multi_text);
  if (!m) return;
  cx_buffers b;
  const uint8_t all3[3] = {1, 1, 1};
  CHECK_OK(cx_buffers_assign_donated(m, all3, 3, &b));
  cx_instr *f = cpu_find(m, "f");
  static const char *const pair[3] = {"z", "x", "y"};
  for (int l = 0; f && l < 3; l++) {
    CHECK_EQ_INT(cx_buffers_slot(&b, f, l), slot_of(&b, m, pair[l], 0));
    CHECK_EQ_INT(slot_ptr(&b, cx_buffers_slot(&b, f, l))->out_leaf, l);
  }
  cx_buffers_free(&b);
  /* without donation: outputs of their own */
  CHECK_OK(cx_buffers_assign(m, &b));
  for (int l = 0; f && l < 3; l++) CHECK(slot_ptr(&b, cx_buffers_slot(&b, f, l))->kind == CX_SLOT_OUTPUT);
  cx_buffers_free(&b);
  cx_module_free(m);
  /* the kernel with three outputs over its operands computes what the interpreter does */
  char *x = cpu_ramp("f32", 256, 11, 0.5, -2), *y = cpu_ramp("f32", 256, 3, 1, 0), *z = cpu_ramp("f32", 256, 7, 0.25, -1);
  const char *in[3] = {x, y, z};
  CHECK(cpu_check(multi_text, 3, in, NULL, 0, 0, NULL, NULL));
  free(x);
  free(y);
  free(z);
}

/* A loop state element the body passes on unchanged (a table the loop only reads) stays in the
 * parameter's memory without a copy into the loop; nothing after the loop may then run in place
 * over it (ex would, were it a temporary that dies there), and returning it copies it. */
static const char passthrough_head[] =
    "HloModule passthrough\n"
    "cond {\n"
    "  s = (s32[], f32[256], f32[256]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(4)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "fadd {\n"
    "  a = f32[256] parameter(0)\n"
    "  b = f32[256] parameter(1)\n"
    "  ROOT s = f32[256] add(a, b)\n"
    "}\n"
    "fexp {\n"
    "  a = f32[256] parameter(0)\n"
    "  ROOT e = f32[256] exponential(a)\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[256], f32[256]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  acc = f32[256] get-tuple-element(s), index=1\n"
    "  tbl = f32[256] get-tuple-element(s), index=2\n"
    "  one = s32[] constant(1)\n"
    "  i1 = s32[] add(i, one)\n"
    "  acc2 = f32[256] fusion(acc, tbl), kind=kLoop, calls=fadd\n"
    "  ROOT t = (s32[], f32[256], f32[256]) tuple(i1, acc2, tbl)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[256] parameter(0)\n"
    "  tb = f32[256] parameter(1)\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[256], f32[256]) tuple(z, x, tb)\n"
    "  l = (s32[], f32[256], f32[256]) while(init), condition=cond, body=body\n"
    "  a = f32[256] get-tuple-element(l), index=1\n"
    "  b = f32[256] get-tuple-element(l), index=2\n"
    "  ex = f32[256] fusion(b), kind=kLoop, calls=fexp\n";

TEST(cpu_buffers_loop_passes_a_parameter_through) {
  static const char *const roots[2] = {"  ROOT r = (f32[256], f32[256]) tuple(a, ex)\n}\n",
                                       "  ROOT r = (f32[256], f32[256], f32[256]) tuple(a, ex, b)\n}\n"};
  for (int k = 0; k < 2; k++) {
    char text[4096];
    snprintf(text, sizeof text, "%s%s", passthrough_head, roots[k]);
    cx_module *m = cpu_parse(text);
    if (!m) return;
    cx_buffers b;
    CHECK_OK(cx_buffers_assign(m, &b));
    cx_instr *l = cpu_find(m, "l");
    int tb = slot_of(&b, m, "tb", 0);
    if (l) CHECK_EQ_INT(cx_buffers_slot(&b, l, 2), tb);
    CHECK(slot_of(&b, m, "ex", 0) != tb && slot_ptr(&b, slot_of(&b, m, "ex", 0))->kind == CX_SLOT_OUTPUT);
    cx_instr *r = m->entry->root;
    if (k) CHECK(cx_buffers_slot(&b, r, 2) != tb && slot_ptr(&b, cx_buffers_slot(&b, r, 2))->kind == CX_SLOT_OUTPUT);
    cx_buffers_free(&b);
    cx_module_free(m);
    char *x = cpu_ramp("f32", 256, 11, 0.5, -2), *t = cpu_ramp("f32", 256, 5, 0.25, -0.5);
    const char *in[2] = {x, t};
    CHECK(cpu_check(text, 2, in, NULL, 1e-6, 1e-6, NULL, NULL));
    free(x);
    free(t);
  }
}

/* A reduction fusion whose epilogue reads an operand at the output's index (a bias and its
 * gradient's column sum) writes over it; the other output still reads the operand's old
 * values (every output of an element is computed before one is stored). */
static const char bias_text[] =
    "HloModule bias, input_output_alias={ {0}: (1, {}, may-alias) }\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "fb {\n"
    "  g = f32[64,32] parameter(0)\n"
    "  b = f32[32] parameter(1)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[32] reduce(g, z), dimensions={0}, to_apply=add\n"
    "  k = f32[] constant(0.1)\n"
    "  kb = f32[32] broadcast(k), dimensions={}\n"
    "  d = f32[32] multiply(kb, s)\n"
    "  n = f32[32] subtract(b, d)\n"
    "  m = f32[32] add(b, s)\n"
    "  ROOT t = (f32[32], f32[32]) tuple(n, m)\n"
    "}\n"
    "ENTRY main {\n"
    "  g = f32[64,32] parameter(0)\n"
    "  b = f32[32] parameter(1)\n"
    "  f = (f32[32], f32[32]) fusion(g, b), kind=kInput, calls=fb\n"
    "  n = f32[32] get-tuple-element(f), index=0\n"
    "  m = f32[32] get-tuple-element(f), index=1\n"
    "  ROOT r = (f32[32], f32[32]) tuple(n, m)\n"
    "}\n";

TEST(cpu_buffers_reduction_epilogue_in_place) {
  cx_module *m = cpu_parse(bias_text);
  if (!m) return;
  cx_buffers b;
  const uint8_t second[2] = {0, 1};
  CHECK_OK(cx_buffers_assign_donated(m, second, 2, &b));
  cx_instr *f = m->entry->root->ops[0]->ops[0];
  CHECK_EQ_INT(cx_buffers_slot(&b, f, 0), cx_buffers_slot(&b, m->entry->params[1], 0));
  CHECK(slot_ptr(&b, cx_buffers_slot(&b, f, 1))->kind == CX_SLOT_OUTPUT);
  cx_buffers_free(&b);
  cx_module_free(m);
  int64_t gd[2] = {64, 32};
  char *g = cpu_ramp_nd("f32", gd, 2, 13, 0.125, -0.75), *bb = cpu_ramp("f32", 32, 7, 0.5, -1);
  const char *in[2] = {g, bb};
  CHECK(cpu_check(bias_text, 2, in, NULL, 1e-5, 1e-6, NULL, NULL));
  free(g);
  free(bb);
}

/* A scatter's result starts as its operand: over an operand that dies there (or a loop state
 * element the body reads for the last time), the result takes its buffer and the runtime copies
 * nothing. Not over an operand read later, not over one that is also the updates, and result i
 * only over operand i. Rows of 13 (the vector row add and its tail) with a repeated index. */
static const char scatter_text[] =
    "HloModule sc\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "add2 {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  c = f32[] parameter(2)\n"
    "  d = f32[] parameter(3)\n"
    "  s = f32[] add(a, c)\n"
    "  t = f32[] add(b, d)\n"
    "  ROOT r = (f32[], f32[]) tuple(s, t)\n"
    "}\n"
    "cond {\n"
    "  s = (s32[], f32[6,13]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(5)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[6,13]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  accb = f32[6,13] get-tuple-element(s), index=1\n"
    "  ix = s32[1] reshape(i)\n"
    "  c = f32[] convert(i)\n"
    "  row = f32[1,13] broadcast(c), dimensions={}\n"
    "  acc2 = f32[6,13] scatter(accb, ix, row), update_window_dims={0,1}, inserted_window_dims={},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add\n" /* last read of acc */
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], f32[6,13]) tuple(i2, acc2)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[6,13] parameter(0)\n"
    "  ix = s32[4] parameter(1)\n"
    "  u = f32[4,13] parameter(2)\n"
    "  e = f32[6,13] exponential(x)\n"
    "  s1 = f32[6,13] scatter(e, ix, u), update_window_dims={1}, inserted_window_dims={0},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n" /* e dies: in place */
    "  n = f32[6,13] negate(x)\n"
    "  s2 = f32[6,13] scatter(n, ix, u), update_window_dims={1}, inserted_window_dims={0},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n" /* n read below: not */
    "  a = f32[6,13] add(s2, n)\n"
    "  w = f32[6,13] sine(x)\n"
    "  z = s32[1] constant({0})\n"
    "  s3 = f32[6,13] scatter(w, z, w), update_window_dims={0,1}, inserted_window_dims={},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add\n" /* w is the updates too: not */
    "  p = f32[6,13] cosine(x)\n"
    "  q = f32[6,13] tanh(x)\n"
    "  s4 = (f32[6,13], f32[6,13]) scatter(p, q, ix, u, u), update_window_dims={1}, inserted_window_dims={0},\n"
    "      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2\n" /* each result over its own operand */
    "  s40 = f32[6,13] get-tuple-element(s4), index=0\n"
    "  s41 = f32[6,13] get-tuple-element(s4), index=1\n"
    "  z0 = s32[] constant(0)\n"
    "  init = (s32[], f32[6,13]) tuple(z0, s1)\n"
    "  l = (s32[], f32[6,13]) while(init), condition=cond, body=body\n"
    "  res = f32[6,13] get-tuple-element(l), index=1\n"
    "  ROOT t = (f32[6,13], f32[6,13], f32[6,13], f32[6,13], f32[6,13], f32[6,13]) tuple(s1, a, s3, s40, s41, res)\n"
    "}\n";

TEST(cpu_buffers_scatter_in_place) {
  cx_module *m = cpu_parse(scatter_text);
  if (!m) return;
  cx_buffers b;
  CHECK_OK(cx_buffers_assign(m, &b));
  CHECK_EQ_INT(slot_of(&b, m, "s1", 0), slot_of(&b, m, "e", 0));
  CHECK(slot_of(&b, m, "s2", 0) != slot_of(&b, m, "n", 0));
  CHECK(slot_of(&b, m, "s3", 0) != slot_of(&b, m, "w", 0));
  CHECK_EQ_INT(slot_of(&b, m, "s4", 0), slot_of(&b, m, "p", 0));
  CHECK_EQ_INT(slot_of(&b, m, "s4", 1), slot_of(&b, m, "q", 0));
  CHECK_EQ_INT(slot_of(&b, m, "acc2", 0), slot_of(&b, m, "accb", 0));
  cx_buffers_free(&b);
  cx_module_free(m);
  int64_t xd[2] = {6, 13}, ud[2] = {4, 13};
  char *x = cpu_ramp_nd("f32", xd, 2, 11, 0.125, -0.5);
  char *u = cpu_ramp_nd("f32", ud, 2, 7, 0.25, -1);
  const char *in[3] = {x, "s32[4] {2, 5, 2, 0}", u};
  CHECK(cpu_check(scatter_text, 3, in, NULL, 1e-6, 1e-6, NULL, NULL));
  CHECK(cpu_check(scatter_text, 3, in, "--fusion=off", 1e-6, 1e-6, NULL, NULL));
  free(x);
  free(u);
}
