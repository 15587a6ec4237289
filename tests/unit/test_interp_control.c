/* test_interp_control.c — the driver and control flow: while, conditional, call, fusion,
 * tuples, argument checks, unsupported ops, the loop limit, nesting depth, the scalar call
 * fast path and its fallback, and allocation failures at every step. */
#include "core/context.h"
#include "test_interp_util.h"

static cx_shape S32 = {CXLA_S32}, F32 = {CXLA_F32}, PRED = {CXLA_PRED};

/* (s32 i, f32 acc) -> (i + 1, acc * 2) while i < limit */
static cx_module *counting_loop(int limit) {
  cx_module *m = ti_module();
  cx_shape el[2] = {S32, F32};
  cx_shape ts = ti_tuple_sh(2, el);

  cx_comp *cond = ti_comp(m, "cond");
  cx_instr *cp = ti_param(cond, 0, ts);
  cx_instr *ci = ti_op(cond, CX_OP_GET_TUPLE_ELEMENT, S32, 1, cp);
  ci->a.index = 0;
  cx_instr *lt = ti_op(cond, CX_OP_COMPARE, PRED, 2, ci, ti_cscalar(cond, CXLA_S32, limit));
  lt->a.dir = CXLA_LT;
  ti_finish(m, cond, lt, 0);

  cx_comp *body = ti_comp(m, "body");
  cx_instr *bp = ti_param(body, 0, ts);
  cx_instr *bi = ti_op(body, CX_OP_GET_TUPLE_ELEMENT, S32, 1, bp);
  cx_instr *ba = ti_op(body, CX_OP_GET_TUPLE_ELEMENT, F32, 1, bp);
  ba->a.index = 1;
  cx_instr *i1 = ti_op(body, CX_OP_ADD, S32, 2, bi, ti_cscalar(body, CXLA_S32, 1));
  cx_instr *a2 = ti_op(body, CX_OP_MULTIPLY, F32, 2, ba, ti_cscalar(body, CXLA_F32, 2));
  ti_finish(m, body, ti_op(body, CX_OP_TUPLE, ts, 2, i1, a2), 0);

  cx_comp *e = ti_comp(m, "main");
  cx_instr *init = ti_op(e, CX_OP_TUPLE, ts, 2, ti_cscalar(e, CXLA_S32, 0), ti_param(e, 0, F32));
  cx_instr *w = ti_op(e, CX_OP_WHILE, ts, 1, init);
  cx_instr_set_called(w, 2, (cx_comp *[]){cond, body});
  ti_finish(m, e, w, 1);
  return m;
}

TEST(interp_while_counting) {
  cx_module *m = counting_loop(10);
  cxla_literal *x = ti_scalar_f(CXLA_F32, 1.5);
  cxla_literal *r = TI_RUN(m, 1, &x);
  CHECK(r && cxla_literal_tuple_size(r) == 2);
  if (r && cxla_literal_tuple_size(r) == 2) {
    CHECK_EQ_INT(cx_load_i64(CXLA_S32, r->elems[0]->data, 0), 10);
    CHECK_NEAR(cxla_literal_get_f64(r->elems[1], 0), 1536, 0); /* 1.5 * 2^10 */
  }
  cxla_literal_destroy(r);
  cxla_literal_destroy(x);
  cx_module_free(m);
}

TEST(interp_while_loop_limit) {
  cx_module *m = counting_loop(10);
  cxla_literal *x = ti_scalar_f(CXLA_F32, 1), *r = NULL;
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--max-loop-iterations=5"));
  CHECK_EQ_INT(cx_interp_run(m, 1, &x, &r), CXLA_ERR_RUNTIME);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "while loop exceeded --max-loop-iterations=5");
  CHECK(r == NULL);
  /* exactly at the limit is fine */
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--max-loop-iterations=10"));
  CHECK_OK(cx_interp_run(m, 1, &x, &r));
  cxla_literal_destroy(r);
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--max-loop-iterations=0"));
  cxla_literal_destroy(x);
  cx_module_free(m);
}

/* conditional over an s32 index with branches b_k(x) = x * 10^k (k = 0, 1, 2) */
static cxla_literal *cond3(int64_t idx, const char *file, int line) {
  cx_module *m = ti_module();
  cx_comp *br[3];
  for (int k = 0; k < 3; k++) {
    char name[8] = {'b', (char)('0' + k), 0};
    br[k] = ti_comp(m, name);
    cx_instr *p = ti_param(br[k], 0, F32);
    ti_finish(m, br[k], ti_op(br[k], CX_OP_MULTIPLY, F32, 2, p, ti_cscalar(br[k], CXLA_F32, k == 0 ? 1 : k == 1 ? 10 : 100)), 0);
  }
  cx_comp *e = ti_comp(m, "main");
  cx_instr *i = ti_param(e, 0, S32), *x = ti_param(e, 1, F32);
  cx_instr *c = ti_op(e, CX_OP_CONDITIONAL, F32, 4, i, x, x, x);
  cx_instr_set_called(c, 3, br);
  ti_finish(m, e, c, 1);
  cxla_literal *args[2] = {ti_scalar_i(CXLA_S32, idx), ti_scalar_f(CXLA_F32, 2)};
  cxla_literal *r = ti_run(m, 2, args, file, line);
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cx_module_free(m);
  return r;
}

TEST(interp_conditional) {
  TI_CHECK_F(cond3(0, __FILE__, __LINE__), -1, 2);
  TI_CHECK_F(cond3(1, __FILE__, __LINE__), -1, 20);
  TI_CHECK_F(cond3(2, __FILE__, __LINE__), -1, 200);
  TI_CHECK_F(cond3(-1, __FILE__, __LINE__), -1, 200); /* out of range: the last branch */
  TI_CHECK_F(cond3(7, __FILE__, __LINE__), -1, 200);
  TI_CHECK_F(cond3(INT32_MIN, __FILE__, __LINE__), -1, 200);

  /* pred form: true -> branch 0 (negate), false -> branch 1 (copy) */
  for (int t = 0; t < 2; t++) {
    cx_module *m = ti_module();
    cx_comp *bt = ti_comp(m, "t"), *bf = ti_comp(m, "f");
    ti_finish(m, bt, ti_op(bt, CX_OP_NEGATE, S32, 1, ti_param(bt, 0, S32)), 0);
    ti_finish(m, bf, ti_op(bf, CX_OP_COPY, S32, 1, ti_param(bf, 0, S32)), 0);
    cx_comp *e = ti_comp(m, "main");
    cx_instr *p = ti_param(e, 0, PRED), *a = ti_param(e, 1, S32), *b = ti_param(e, 2, S32);
    cx_instr *c = ti_op(e, CX_OP_CONDITIONAL, S32, 3, p, a, b);
    cx_instr_set_called(c, 2, (cx_comp *[]){bt, bf});
    ti_finish(m, e, c, 1);
    cxla_literal *args[3] = {ti_scalar_i(CXLA_PRED, t), ti_scalar_i(CXLA_S32, 5), ti_scalar_i(CXLA_S32, 7)};
    TI_CHECK_I(TI_RUN(m, 3, args), t ? -5 : 7);
    for (int k = 0; k < 3; k++) cxla_literal_destroy(args[k]);
    cx_module_free(m);
  }
}

TEST(interp_call_fusion_tuples) {
  cx_module *m = ti_module();
  cx_comp *sub = ti_comp(m, "sub");
  cx_instr *x = ti_param(sub, 0, F32), *y = ti_param(sub, 1, F32);
  ti_finish(m, sub, ti_op(sub, CX_OP_SUBTRACT, F32, 2, x, y), 0);
  cx_comp *e = ti_comp(m, "main");
  cx_instr *a = ti_param(e, 0, F32), *b = ti_param(e, 1, F32);
  cx_instr *c1 = ti_op(e, CX_OP_CALL, F32, 2, b, a); /* b - a */
  cx_instr_set_called(c1, 1, &sub);
  cx_instr *c2 = ti_op(e, CX_OP_FUSION, F32, 2, a, b); /* a - b */
  cx_instr_set_called(c2, 1, &sub);
  /* ((c1, c2), a) then get-tuple-element chains */
  cx_shape inner_el[2] = {F32, F32};
  cx_shape outer_el[2] = {ti_tuple_sh(2, inner_el), F32};
  cx_instr *inner = ti_op(e, CX_OP_TUPLE, outer_el[0], 2, c1, c2);
  cx_instr *outer = ti_op(e, CX_OP_TUPLE, ti_tuple_sh(2, outer_el), 2, inner, a);
  cx_instr *g0 = ti_op(e, CX_OP_GET_TUPLE_ELEMENT, outer_el[0], 1, outer);
  cx_instr *g01 = ti_op(e, CX_OP_GET_TUPLE_ELEMENT, F32, 1, g0);
  g01->a.index = 1;
  cx_instr *g1 = ti_op(e, CX_OP_GET_TUPLE_ELEMENT, F32, 1, outer);
  g1->a.index = 1;
  cx_instr *g00 = ti_op(e, CX_OP_GET_TUPLE_ELEMENT, F32, 1, g0);
  cx_shape res_el[4] = {F32, F32, F32, outer_el[0]};
  ti_finish(m, e, ti_op(e, CX_OP_TUPLE, ti_tuple_sh(4, res_el), 4, g00, g01, g1, inner), 1);
  cxla_literal *args[2] = {ti_scalar_f(CXLA_F32, 5), ti_scalar_f(CXLA_F32, 3)};
  cxla_literal *r = TI_RUN(m, 2, args);
  CHECK(r && cxla_literal_tuple_size(r) == 4);
  if (r && cxla_literal_tuple_size(r) == 4) {
    CHECK_NEAR(cxla_literal_get_f64(r->elems[0], 0), -2, 0);
    CHECK_NEAR(cxla_literal_get_f64(r->elems[1], 0), 2, 0);
    CHECK_NEAR(cxla_literal_get_f64(r->elems[2], 0), 5, 0);
    CHECK(cxla_literal_tuple_size(r->elems[3]) == 2);
    CHECK_NEAR(cxla_literal_get_f64(r->elems[3]->elems[1], 0), 2, 0);
  }
  cxla_literal_destroy(r);
  cxla_literal_destroy(args[0]);
  cxla_literal_destroy(args[1]);
  cx_module_free(m);
}

/* ENTRY (f32[2] p0) -> op(p0) for errors and OTHER-class ops */
static cx_module *single(cx_op op, cx_shape rs, cx_shape ps) {
  cx_module *m = ti_module();
  cx_comp *e = ti_comp(m, "main");
  cx_instr *p = ti_param(e, 0, ps);
  ti_finish(m, e, ti_op(e, op, rs, cx_op_arity(op) == 0 ? 0 : 1, p), 1);
  return m;
}

TEST(interp_argument_checks) {
  cx_module *m = single(CX_OP_NEGATE, ti_sh(CXLA_F32, 1, 2), ti_sh(CXLA_F32, 1, 2));
  cxla_literal *good = TI_F(CXLA_F32, 1, 2), *bad = TI_F(CXLA_F32, 1, 2, 3), *r = NULL;
  CHECK_EQ_INT(cx_interp_run(m, 0, NULL, &r), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "takes 1 argument, 0 given");
  CHECK_EQ_INT(cx_interp_run(m, 1, &bad, &r), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "parameter 0: expected f32[2], given f32[3]");
  cxla_literal *s32 = TI_I(CXLA_S32, 1, 2);
  CHECK_EQ_INT(cx_interp_run(m, 1, &s32, &r), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "expected f32[2], given s32[2]");
  CHECK(r == NULL);
  TI_CHECK_F(TI_RUN(m, 1, &good), -1, -1, -2);
  cxla_literal_destroy(good);
  cxla_literal_destroy(bad);
  cxla_literal_destroy(s32);
  cx_module_free(m);
}

TEST(interp_unsupported_and_other_ops) {
  cx_module *m = single(CX_OP_CUSTOM_CALL, ti_sh(CXLA_F32, 1, 2), ti_sh(CXLA_F32, 1, 2));
  m->entry->root->loc = (cx_loc){3, 14};
  m->filename = "x.hlo";
  cxla_literal *x = TI_F(CXLA_F32, 1, 2), *r = NULL;
  CHECK_EQ_INT(cx_interp_run(m, 1, &x, &r), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "x.hlo:3:14: error: not supported: custom-call");
  cx_module_free(m);

  m = single(CX_OP_GET_DIMENSION_SIZE, ti_sh(CXLA_F32, 1, 2), ti_sh(CXLA_F32, 1, 2));
  CHECK_EQ_INT(cx_interp_run(m, 1, &x, &r), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "not supported: get-dimension-size");
  cx_module_free(m);

  /* dynamic dimensions are refused */
  cx_shape dyn = ti_sh(CXLA_F32, 1, 2);
  dyn.dynamic = 1;
  m = single(CX_OP_NEGATE, dyn, ti_sh(CXLA_F32, 1, 2));
  CHECK_EQ_INT(cx_interp_run(m, 1, &x, &r), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "dynamic");
  cx_module_free(m);

  /* copy of a tuple copies the whole tuple */
  m = ti_module();
  cx_comp *ce = ti_comp(m, "main");
  cx_shape cel[2] = {F32, S32};
  cx_instr *cp0 = ti_param(ce, 0, F32);
  cx_instr *ct = ti_op(ce, CX_OP_TUPLE, ti_tuple_sh(2, cel), 2, cp0, ti_cscalar(ce, CXLA_S32, 9));
  cx_instr *cg = ti_op(ce, CX_OP_GET_TUPLE_ELEMENT, S32, 1, ti_op(ce, CX_OP_COPY, ti_tuple_sh(2, cel), 1, ct));
  cg->a.index = 1;
  ti_finish(m, ce, cg, 1);
  cxla_literal *cx = ti_scalar_f(CXLA_F32, 1);
  TI_CHECK_I(TI_RUN(m, 1, &cx), 9);
  cxla_literal_destroy(cx);
  cx_module_free(m);

  /* opt-barrier is the identity */
  m = single(CX_OP_OPT_BARRIER, ti_sh(CXLA_F32, 1, 2), ti_sh(CXLA_F32, 1, 2));
  TI_CHECK_F(TI_RUN(m, 1, &x), -1, 1, 2);
  cx_module_free(m);
  cxla_literal_destroy(x);

  /* partition-id and replica-id are 0 on one device */
  m = ti_module();
  cx_comp *e = ti_comp(m, "main");
  cx_shape u32 = {CXLA_U32}, el[2] = {u32, u32};
  cx_instr *pid = ti_op(e, CX_OP_PARTITION_ID, u32, 0), *rid = ti_op(e, CX_OP_REPLICA_ID, u32, 0);
  ti_finish(m, e, ti_op(e, CX_OP_TUPLE, ti_tuple_sh(2, el), 2, pid, rid), 1);
  r = TI_RUN(m, 0, NULL);
  if (r) {
    CHECK_EQ_INT(cx_load_i64(CXLA_U32, r->elems[0]->data, 0), 0);
    CHECK_EQ_INT(cx_load_i64(CXLA_U32, r->elems[1]->data, 0), 0);
  }
  cxla_literal_destroy(r);
  cx_module_free(m);

  /* an unsupported op that the root does not need is never run */
  m = ti_module();
  e = ti_comp(m, "main");
  cx_instr *p = ti_param(e, 0, F32);
  ti_op(e, CX_OP_CUSTOM_CALL, F32, 1, p);
  ti_finish(m, e, ti_op(e, CX_OP_NEGATE, F32, 1, p), 1);
  x = ti_scalar_f(CXLA_F32, 4);
  TI_CHECK_F(TI_RUN(m, 1, &x), -1, -4);
  cxla_literal_destroy(x);
  cx_module_free(m);
}

TEST(interp_nesting_depth_guard) {
  /* c_0(x) = -x, c_k(x) = call c_{k-1}(x): 300 levels exceed the limit, 100 do not */
  for (int levels = 100; levels <= 300; levels += 200) {
    cx_module *m = ti_module();
    cx_comp *prev = ti_comp(m, "c0");
    ti_finish(m, prev, ti_op(prev, CX_OP_NEGATE, F32, 1, ti_param(prev, 0, F32)), 0);
    for (int k = 1; k <= levels; k++) {
      cx_comp *c = ti_comp(m, "c");
      cx_instr *call = ti_op(c, CX_OP_CALL, F32, 1, ti_param(c, 0, F32));
      cx_instr_set_called(call, 1, &prev);
      ti_finish(m, c, call, k == levels);
      prev = c;
    }
    cxla_literal *x = ti_scalar_f(CXLA_F32, 1), *r = NULL;
    cxla_status s = cx_interp_run(m, 1, &x, &r);
    if (levels == 100) {
      CHECK_OK(s);
      TI_CHECK_F(r, -1, -1);
    } else {
      CHECK_EQ_INT(s, CXLA_ERR_RUNTIME);
      CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "nested deeper than");
      CHECK(r == NULL);
    }
    cxla_literal_destroy(x);
    cx_module_free(m);
  }
}

/* ---- cx_interp_call_scalar ---- */

static cx_comp *scalar_binary_comp(cx_module *m, cx_op op, cx_shape t, cx_shape rt) {
  cx_comp *c = ti_comp(m, "f");
  cx_instr *a = ti_param(c, 0, t), *b = ti_param(c, 1, t);
  return ti_finish(m, c, ti_op(c, op, rt, 2, a, b), 0);
}

TEST(interp_call_scalar_fast_path) {
  cx_module *m = ti_module();
  cx_interp st;
  cx_interp_init(&st, m);
  cx_scalar args[4], outs[2];

  cx_comp *add = scalar_binary_comp(m, CX_OP_ADD, F32, F32);
  args[0].f = 1.25;
  args[1].f = 2.25;
  /* the fast path allocates nothing: it must work with every allocation failing */
  cx_alloc_fail_after(0);
  cxla_status s = cx_interp_call_scalar(&st, add, 2, args, 1, outs);
  int64_t failures = cx_alloc_failures();
  cx_alloc_fail_after(-1);
  CHECK_OK(s);
  CHECK_EQ_INT(failures, 0);
  CHECK_NEAR(outs[0].f, 3.5, 0);

  cx_comp *div = scalar_binary_comp(m, CX_OP_DIVIDE, (cx_shape){CXLA_S8}, (cx_shape){CXLA_S8});
  args[0].i = -128;
  args[1].i = -1;
  CHECK_OK(cx_interp_call_scalar(&st, div, 2, args, 1, outs));
  CHECK_EQ_INT(outs[0].i, -128);

  cx_comp *hadd = scalar_binary_comp(m, CX_OP_ADD, (cx_shape){CXLA_F16}, (cx_shape){CXLA_F16});
  args[0].f = 1;
  args[1].f = 0x1p-11; /* a tie at f16 precision: stays 1 */
  CHECK_OK(cx_interp_call_scalar(&st, hadd, 2, args, 1, outs));
  CHECK_NEAR(outs[0].f, 1, 0);

  /* a comparator-shaped computation: (s32 a, s32 b, f32 c, f32 d) ->
   * (a < b, max(c, d), convert<s8>(c), c - d through tuple and get-tuple-element, and a constant) */
  cx_comp *c = ti_comp(m, "cmp");
  cx_instr *a = ti_param(c, 0, S32), *b = ti_param(c, 1, S32), *cc = ti_param(c, 2, F32), *d = ti_param(c, 3, F32);
  cx_instr *lt = ti_op(c, CX_OP_COMPARE, PRED, 2, a, b);
  lt->a.dir = CXLA_LT;
  cx_instr *mx = ti_op(c, CX_OP_MAXIMUM, F32, 2, cc, d);
  cx_instr *cv = ti_op(c, CX_OP_CONVERT, (cx_shape){CXLA_S8}, 1, cc);
  cx_shape el2[2] = {F32, F32};
  cx_instr *t = ti_op(c, CX_OP_TUPLE, ti_tuple_sh(2, el2), 2, cc, d);
  cx_instr *g0 = ti_op(c, CX_OP_GET_TUPLE_ELEMENT, F32, 1, t), *g1 = ti_op(c, CX_OP_GET_TUPLE_ELEMENT, F32, 1, t);
  g1->a.index = 1;
  cx_instr *diff = ti_op(c, CX_OP_SUBTRACT, F32, 2, g0, g1);
  cx_instr *k = ti_op(c, CX_OP_ADD, F32, 2, diff, ti_cscalar(c, CXLA_F32, 0.5));
  cx_shape el4[4] = {PRED, F32, (cx_shape){CXLA_S8}, F32};
  ti_finish(m, c, ti_op(c, CX_OP_TUPLE, ti_tuple_sh(4, el4), 4, lt, mx, cv, k), 0);
  cx_scalar a4[4], o4[4];
  a4[0].i = -3;
  a4[1].i = 2;
  a4[2].f = 300;
  a4[3].f = NAN;
  cx_alloc_fail_after(0);
  s = cx_interp_call_scalar(&st, c, 4, a4, 4, o4);
  cx_alloc_fail_after(-1);
  CHECK_OK(s);
  CHECK_EQ_INT(o4[0].i, 1);
  CHECK(isnan(o4[1].f));
  CHECK_EQ_INT(o4[2].i, 127);
  CHECK(isnan(o4[3].f));
  a4[3].f = 100;
  CHECK_OK(cx_interp_call_scalar(&st, c, 4, a4, 4, o4));
  CHECK_NEAR(o4[1].f, 300, 0);
  CHECK_NEAR(o4[3].f, 200.5, 0);
  cx_module_free(m);
}

TEST(interp_call_scalar_fallback) {
  /* f(x, y) = call g(reshape(x), y) where g(v, y) = reshape(v) * y: not scalar-only, so it goes
   * through literals (and therefore allocates) but gives the same answer */
  cx_module *m = ti_module();
  cx_shape v1 = ti_sh(CXLA_F32, 1, 1);
  cx_comp *g = ti_comp(m, "g");
  cx_instr *gv = ti_param(g, 0, v1), *gy = ti_param(g, 1, F32);
  ti_finish(m, g, ti_op(g, CX_OP_MULTIPLY, F32, 2, ti_op(g, CX_OP_RESHAPE, F32, 1, gv), gy), 0);
  cx_comp *f = ti_comp(m, "f");
  cx_instr *x = ti_param(f, 0, F32), *y = ti_param(f, 1, F32);
  cx_instr *call = ti_op(f, CX_OP_CALL, F32, 2, ti_op(f, CX_OP_RESHAPE, v1, 1, x), y);
  cx_instr_set_called(call, 1, &g);
  ti_finish(m, f, call, 0);
  cx_interp st;
  cx_interp_init(&st, m);
  cx_scalar args[2], out;
  args[0].f = 3;
  args[1].f = -2.5;
  CHECK_OK(cx_interp_call_scalar(&st, f, 2, args, 1, &out));
  CHECK_NEAR(out.f, -7.5, 0);
  cx_alloc_fail_after(0);
  cxla_status s = cx_interp_call_scalar(&st, f, 2, args, 1, &out);
  cx_alloc_fail_after(-1);
  CHECK_EQ_INT(s, CXLA_ERR_OUT_OF_MEMORY);
  /* a wrong output count is an error, not a crash */
  cx_scalar outs[2];
  CHECK(cx_interp_call_scalar(&st, f, 2, args, 2, outs) != CXLA_OK);
  cx_module_free(m);
}

/* ---- allocation failures ---- */

/* Runs m with the n-th allocation failing for n = 0, 1, ...: every run must either succeed
 * with the right answer or fail with CXLA_ERR_OUT_OF_MEMORY (ASan checks for leaks). */
static void alloc_fail_sweep(cx_module *m, int nargs, cxla_literal **args) {
  cxla_literal *want = TI_RUN(m, nargs, args);
  if (!want) return;
  int n, done = 0;
  for (n = 0; n < 20000 && !done; n++) {
    cxla_literal *r = NULL;
    cx_alloc_fail_after(n);
    cxla_status s = cx_interp_run(m, nargs, args, &r);
    int injected = cx_alloc_failures() > 0;
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) {
      CHECK(cx_literal_equal(r, want));
      done = !injected;
    } else {
      CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY, "n=%d: %s: %s", n, cxla_status_str(s), cxla_context_errmsg(test_ctx()));
      CHECK(r == NULL);
    }
    cxla_literal_destroy(r);
  }
  CHECK_MSG(done && n > 5, "no clean run after %d injected failures", n);
  cxla_literal_destroy(want);
}

TEST(interp_alloc_failures) {
  cx_module *m = counting_loop(3);
  cxla_literal *x = ti_scalar_f(CXLA_F32, 1);
  alloc_fail_sweep(m, 1, &x);
  cxla_literal_destroy(x);
  cx_module_free(m);

  /* shape and elementwise ops: concatenate(reverse(x), pad(x)) + broadcast(x[0]) */
  m = ti_module();
  cx_comp *e = ti_comp(m, "main");
  cx_shape s3 = ti_sh(CXLA_F32, 1, 3), s6 = ti_sh(CXLA_F32, 1, 6);
  cx_instr *p = ti_param(e, 0, s3);
  cx_instr *rev = ti_op(e, CX_OP_REVERSE, s3, 1, p);
  ti_ints(e, &rev->a.dims, 1, 0);
  cx_instr *pad = ti_op(e, CX_OP_PAD, s3, 2, p, ti_cscalar(e, CXLA_F32, 0));
  ti_ints(e, &pad->a.pad_lo, 1, 1);
  ti_ints(e, &pad->a.pad_hi, 1, -1);
  cx_instr *cat = ti_op(e, CX_OP_CONCATENATE, s6, 2, rev, pad);
  ti_ints(e, &cat->a.dims, 1, 0);
  cx_instr *sl = ti_op(e, CX_OP_SLICE, ti_sh(CXLA_F32, 1, 1), 1, p);
  ti_ints(e, &sl->a.slice_start, 1, 0);
  ti_ints(e, &sl->a.slice_limit, 1, 1);
  cx_instr *bc = ti_op(e, CX_OP_BROADCAST, s6, 1, ti_op(e, CX_OP_RESHAPE, F32, 1, sl));
  cx_instr *sum = ti_op(e, CX_OP_ADD, s6, 2, cat, bc);
  cx_shape el[2] = {s6, s3};
  ti_finish(m, e, ti_op(e, CX_OP_TUPLE, ti_tuple_sh(2, el), 2, sum, p), 1);
  x = TI_F(CXLA_F32, 1, 2, 3);
  cxla_literal *r = TI_RUN(m, 1, &x);
  if (r && cxla_literal_tuple_size(r) == 2) {
    /* [3,2,1] ++ [0,1,2] plus 1 */
    TI_CHECK_F(cxla_literal_clone(test_ctx(), r->elems[0]), -1, 4, 3, 2, 1, 2, 3);
    TI_CHECK_F(cxla_literal_clone(test_ctx(), r->elems[1]), -1, 1, 2, 3);
  }
  cxla_literal_destroy(r);
  alloc_fail_sweep(m, 1, &x);
  cxla_literal_destroy(x);
  cx_module_free(m);
}
