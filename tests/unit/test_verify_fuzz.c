/* test_verify_fuzz.c — shape inference and module verification must never crash or read out
 * of bounds, whatever the operands, attributes and called computations (run under ASan to
 * see it). Deterministic: a fixed-seed generator builds random instructions of every op. */
#include <time.h>
#include "verify_helpers.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }

static int64_t rint64(void) {
  static const int64_t pool[] = {-1, 0, 1, 1, 2, 2, 3, 4, 5, 16, 17, INT64_MAX, INT64_MIN, 1LL << 40};
  return pool[pick(CX_ARRAY_LEN(pool))];
}

static void rints(cx_ints *v) {
  int n = pick(5);
  int64_t x[4];
  for (int i = 0; i < n; i++) x[i] = pick(4) ? pick(4) : rint64(); /* mostly small valid-looking dims */
  vt_ints(v, n, x);
}

static cx_shape rshape(int depth) {
  static const cxla_type types[] = {CXLA_PRED, CXLA_S32, CXLA_U8, CXLA_S8, CXLA_F32, CXLA_BF16, CXLA_S64};
  cx_shape s;
  memset(&s, 0, sizeof s);
  int k = pick(12);
  if (k == 0 && depth < 2) {
    s.type = CXLA_TUPLE;
    s.ntuple = pick(3);
    s.tuple = cx_arena_alloc(&vt_m->arena, sizeof(cx_shape) * 3);
    for (int i = 0; i < s.ntuple; i++) s.tuple[i] = rshape(depth + 1);
    return s;
  }
  if (k == 1) { s.type = CXLA_TOKEN; return s; }
  s.type = types[pick(CX_ARRAY_LEN(types))];
  s.rank = pick(4);
  for (int i = 0; i < s.rank; i++) s.dims[i] = pick(4);
  return s;
}

static cx_comp *callees[8];
static int ncallees;

static void make_callees(void) {
  ncallees = 0;
  callees[ncallees++] = vt_binary_comp("add", CX_OP_ADD, "f32");
  callees[ncallees++] = vt_binary_comp("lt", CX_OP_COMPARE, "f32");
  callees[ncallees++] = vt_binary_comp("iadd", CX_OP_ADD, "s32");
  vt_comp("one"); /* s32[] -> s32[] */
  callees[ncallees++] = vt_finish(vt_param(0, "x", "s32[]"), 0);
  vt_comp("none"); /* () -> f32[] */
  callees[ncallees++] = vt_finish(vt_const("c", "f32[]"), 0);
  vt_comp("badnums"); /* parameters 0 and 2: never indexed successfully */
  vt_param(0, "a", "f32[]");
  callees[ncallees++] = vt_finish(vt_param(2, "b", "f32[]"), 0);
  callees[ncallees++] = vt_comp("rootless");
  vt_param(0, "a", "f32[]");
}

static void rwindow(cx_instr *in) {
  int rank = pick(4);
  in->a.window.rank = rank;
  in->a.window.d = rank ? cx_arena_alloc(&vt_m->arena, sizeof(cx_window_dim) * (size_t)rank) : NULL;
  for (int i = 0; i < rank; i++) {
    cx_window_dim *d = &in->a.window.d[i];
    d->size = pick(3) ? pick(4) : rint64();
    d->stride = pick(3) ? 1 : rint64();
    d->pad_lo = pick(3) ? 0 : rint64();
    d->pad_hi = pick(3) ? 0 : rint64();
    d->lhs_dilate = pick(3) ? 1 : rint64();
    d->rhs_dilate = pick(3) ? 1 : rint64();
  }
  if (rank && !pick(8)) in->a.window.d = NULL; /* a claimed window without dimensions */
}

static void rconv(cx_instr *in) {
  cx_conv_dims *c = cx_arena_alloc(&in->parent->module->arena, sizeof *c);
  if (!c) return;
  in->a.conv = pick(6) != 0 ? c : NULL;
  c->nspatial = pick(6) - 1;
  int64_t *f[] = {&c->in_batch, &c->in_feature, &c->k_in, &c->k_out, &c->out_batch, &c->out_feature};
  for (int i = 0; i < 6; i++) *f[i] = pick(5) ? pick(4) : rint64();
  for (int i = 0; i < 3; i++) {
    c->in_spatial[i] = pick(5) ? pick(4) : rint64();
    c->k_spatial[i] = pick(5) ? pick(4) : rint64();
    c->out_spatial[i] = pick(5) ? pick(4) : rint64();
  }
  in->a.feature_group_count = pick(4) ? 1 : rint64();
  in->a.batch_group_count = pick(4) ? 1 : rint64();
}

/* One random instruction of op `op` in the current computation over `pool` operands. */
static cx_instr *random_instr(cx_op op, cx_instr **pool, int npool) {
  int nops = cx_op_arity(op);
  if (nops < 0 || !pick(6)) nops = pick(6);
  cx_instr *ops[8];
  for (int i = 0; i < nops; i++) ops[i] = pool[pick(npool)];
  cx_shape s = rshape(0);
  cx_instr *in = cx_instr_new(vt_c, op, &s, nops, ops);
  cx_instr_set_name(in, "x");
  cx_attrs *a = &in->a;
  rints(&a->dims);
  a->index = pick(3) ? pick(3) : rint64();
  a->dir = (cxla_compare_dir)pick(7);
  a->cmp_type = (cx_cmp_type)pick(6);
  rints(&a->slice_start);
  rints(&a->slice_limit);
  rints(&a->slice_stride);
  rints(&a->pad_lo);
  rints(&a->pad_hi);
  rints(&a->pad_interior);
  rints(&a->dot.lhs_batch);
  rints(&a->dot.rhs_batch);
  rints(&a->dot.lhs_contract);
  rints(&a->dot.rhs_contract);
  rwindow(in);
  rconv(in);
  cx_ints *gl[] = {&a->gather.offset_dims, &a->gather.collapsed_slice_dims, &a->gather.start_index_map,
                   &a->gather.operand_batching_dims, &a->gather.start_indices_batching_dims, &a->gather.slice_sizes,
                   &a->scatter.update_window_dims, &a->scatter.inserted_window_dims,
                   &a->scatter.scatter_dims_to_operand_dims, &a->scatter.input_batching_dims,
                   &a->scatter.scatter_indices_batching_dims};
  for (int i = 0; i < CX_ARRAY_LEN(gl); i++) rints(gl[i]);
  a->gather.index_vector_dim = pick(4) ? pick(4) : rint64();
  a->scatter.index_vector_dim = pick(4) ? pick(4) : rint64();
  a->exponent_bits = pick(5) - 1;
  a->mantissa_bits = pick(5) - 1;
  if (op == CX_OP_CONSTANT && pick(2)) {
    cxla_literal *lit = cx_literal_new(&in->shape);
    if (lit && cx_module_own_literal(vt_m, lit)) a->literal = lit;
  }
  int ncalled = pick(4);
  cx_comp *called[3];
  for (int i = 0; i < ncalled; i++) called[i] = callees[pick(ncallees)];
  if (ncalled) cx_instr_set_called(in, ncalled, called);
  return in;
}

TEST(verify_fuzz_infer_never_crashes) {
  rng_state = 0x9e3779b97f4a7c15ull;
  int ok = 0, failed = 0;
  for (int round = 0; round < 60; round++) {
    vt_begin();
    make_callees();
    vt_comp("e");
    cx_instr *pool[24];
    int npool = 0;
    for (int i = 0; i < 12; i++) {
      cx_shape s = rshape(0);
      cx_instr *p = cx_instr_new(vt_c, CX_OP_PARAMETER, &s, 0, NULL);
      p->a.index = i;
      pool[npool++] = p;
    }
    for (int op = 0; op < CX_OP_COUNT; op++)
      for (int k = 0; k < 4; k++) {
        cx_instr *in = random_instr((cx_op)op, pool, npool);
        cx_shape out;
        cxla_status st = cx_infer_shape(in, &out);
        if (st == CXLA_OK) {
          ok++;
          in->shape = out; /* usable as an operand from now on */
          if (npool < 24) pool[npool++] = in;
          else pool[pick(24)] = in;
        } else {
          failed++;
          CHECK_MSG(st == CXLA_ERR_VERIFY, "op %s: status %d", cx_op_name((cx_op)op), (int)st);
          CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "error: ");
        }
      }
    vt_finish(pool[npool - 1], 1);
    const char *v = vt_verify(); /* whatever the verdict, it must not crash */
    CHECK(v != NULL);
    vt_end();
  }
  /* both outcomes must occur, or the generator tests nothing */
  CHECK(ok > 500);
  CHECK(failed > 5000);
}

/* ---- mutation fuzzing: valid instructions of the complex ops with a few fields changed, so
 * the checks deep inside each rule run too ---- */

static int nparam;
static cx_instr *P(const char *shape) { return vt_param(nparam++, NULL, shape); }
static cx_comp *callee(const char *name) {
  for (int i = 0; i < vt_m->ncomps; i++)
    if (!strcmp(vt_m->comps[i]->name, name)) return vt_m->comps[i];
  return NULL;
}

static cx_instr *template(int k) {
  cx_instr *in;
  switch (k) {
  case 0:
    in = vt_op(CX_OP_DOT, "d", NULL, 2, P("f32[5,2,3]"), P("f32[5,3,4]"));
    VT_INTS(in->a.dot.lhs_batch, 0); VT_INTS(in->a.dot.rhs_batch, 0);
    VT_INTS(in->a.dot.lhs_contract, 2); VT_INTS(in->a.dot.rhs_contract, 1);
    return in;
  case 1:
    in = vt_op(CX_OP_CONVOLUTION, "c", NULL, 2, P("f32[2,5,5,4]"), P("f32[3,3,2,6]"));
    vt_labels(in, "b01f_01io->b01f");
    vt_window(in, "size=3x3 stride=2x1 pad=1_1x0_2 lhs_dilate=1x2");
    in->a.feature_group_count = 2;
    return in;
  case 2:
    in = vt_op(CX_OP_GATHER, "g", NULL, 2, P("f32[3,10,8]"), P("s32[3,4,1]"));
    VT_INTS(in->a.gather.offset_dims, 2); VT_INTS(in->a.gather.collapsed_slice_dims, 1);
    VT_INTS(in->a.gather.operand_batching_dims, 0); VT_INTS(in->a.gather.start_indices_batching_dims, 0);
    VT_INTS(in->a.gather.start_index_map, 1); VT_INTS(in->a.gather.slice_sizes, 1, 1, 8);
    in->a.gather.index_vector_dim = 2;
    return in;
  case 3:
    in = vt_op(CX_OP_SCATTER, "s", NULL, 3, P("f32[3,10,8]"), P("s32[3,4,1]"), P("f32[3,4,8]"));
    VT_INTS(in->a.scatter.update_window_dims, 2); VT_INTS(in->a.scatter.inserted_window_dims, 1);
    VT_INTS(in->a.scatter.input_batching_dims, 0); VT_INTS(in->a.scatter.scatter_indices_batching_dims, 0);
    VT_INTS(in->a.scatter.scatter_dims_to_operand_dims, 1);
    in->a.scatter.index_vector_dim = 2;
    vt_called(in, 1, callee("add"));
    return in;
  case 4:
    in = vt_op(CX_OP_REDUCE, "r", NULL, 2, P("f32[2,3,4]"), P("f32[]"));
    VT_INTS(in->a.dims, 0, 2);
    vt_called(in, 1, callee("add"));
    return in;
  case 5:
    in = vt_op(CX_OP_REDUCE_WINDOW, "rw", NULL, 2, P("f32[4,6]"), P("f32[]"));
    vt_window(in, "size=2x3 stride=2x1 pad=0_1x1_1 rhs_dilate=2x1");
    vt_called(in, 1, callee("add"));
    return in;
  case 6:
    in = vt_op(CX_OP_SELECT_AND_SCATTER, "ss", NULL, 3, P("f32[4,6]"), P("f32[2,2]"), P("f32[]"));
    vt_window(in, "size=2x3 stride=2x3");
    vt_called(in, 2, callee("lt"), callee("add"));
    return in;
  case 7:
    in = vt_op(CX_OP_SORT, "so", NULL, 1, P("f32[5,4]"));
    VT_INTS(in->a.dims, 1);
    vt_called(in, 1, callee("lt"));
    return in;
  case 8:
    in = vt_op(CX_OP_PAD, "p", NULL, 2, P("f32[3,4]"), P("f32[]"));
    VT_INTS(in->a.pad_lo, 1, -1); VT_INTS(in->a.pad_hi, 2, 0); VT_INTS(in->a.pad_interior, 1, 0);
    return in;
  case 9:
    in = vt_op(CX_OP_SLICE, "sl", NULL, 1, P("f32[10,5]"));
    VT_INTS(in->a.slice_start, 2, 0); VT_INTS(in->a.slice_limit, 9, 5); VT_INTS(in->a.slice_stride, 3, 1);
    return in;
  case 10: {
    cx_instr *i = P("s32[]");
    in = vt_op(CX_OP_DYNAMIC_UPDATE_SLICE, "dus", NULL, 4, P("f32[8,6]"), P("f32[2,6]"), i, i);
    return in;
  }
  case 11:
    in = vt_op(CX_OP_BROADCAST, "b", "f32[2,3,4]", 1, P("f32[3,1]"));
    VT_INTS(in->a.dims, 1, 2);
    return in;
  case 12:
    in = vt_op(CX_OP_CONCATENATE, "cat", NULL, 2, P("f32[2,3]"), P("f32[4,3]"));
    VT_INTS(in->a.dims, 0);
    return in;
  case 13: {
    cx_instr *i = P("s32[]");
    in = vt_op(CX_OP_DYNAMIC_SLICE, "ds", NULL, 3, P("f32[8,6]"), i, i);
    VT_INTS(in->a.dims, 2, 6);
    return in;
  }
  case 14:
    in = vt_op(CX_OP_CONDITIONAL, "cond", NULL, 3, P("s32[]"), P("s32[]"), P("s32[]"));
    vt_called(in, 2, callee("one"), callee("one"));
    return in;
  default:
    in = vt_op(CX_OP_TRANSPOSE, "t", NULL, 1, P("f32[2,3,4]"));
    VT_INTS(in->a.dims, 2, 0, 1);
    return in;
  }
}

static void mutate(cx_instr *in) {
  cx_attrs *a = &in->a;
  cx_ints *lists[] = {&a->dims, &a->slice_start, &a->slice_limit, &a->slice_stride, &a->pad_lo, &a->pad_hi,
                      &a->pad_interior, &a->dot.lhs_batch, &a->dot.rhs_batch, &a->dot.lhs_contract,
                      &a->dot.rhs_contract, &a->gather.offset_dims, &a->gather.collapsed_slice_dims,
                      &a->gather.start_index_map, &a->gather.operand_batching_dims,
                      &a->gather.start_indices_batching_dims, &a->gather.slice_sizes, &a->scatter.update_window_dims,
                      &a->scatter.inserted_window_dims, &a->scatter.scatter_dims_to_operand_dims,
                      &a->scatter.input_batching_dims, &a->scatter.scatter_indices_batching_dims};
  switch (pick(6)) {
  case 0: { /* one operand's shape */
    if (!in->nops) return;
    cx_shape *s = &in->ops[pick(in->nops)]->shape;
    if (!pick(8)) { *s = rshape(0); return; }
    if (s->type == CXLA_TUPLE || s->type == CXLA_TOKEN) return;
    if (!pick(4) && s->rank < 4) s->dims[s->rank++] = pick(4);
    else if (!pick(3) && s->rank > 0) s->rank--;
    else if (s->rank) s->dims[pick(s->rank)] = pick(6) ? pick(7) : (1 << 20);
    if (!pick(6)) s->type = (cxla_type)(CXLA_PRED + pick(CXLA_F64));
    return;
  }
  case 1: case 2: { /* one entry of an attribute list, or its length */
    cx_ints *v = lists[pick(CX_ARRAY_LEN(lists))];
    if (v->n && pick(3)) v->v[pick(v->n)] = pick(3) ? pick(5) : rint64();
    else rints(v);
    return;
  }
  case 3: {
    cx_window *w = &a->window;
    if (!w->rank || !w->d || !pick(5)) { rwindow(in); return; }
    cx_window_dim *d = &w->d[pick(w->rank)];
    int64_t *f[] = {&d->size, &d->stride, &d->pad_lo, &d->pad_hi, &d->lhs_dilate, &d->rhs_dilate};
    *f[pick(6)] = pick(2) ? pick(4) : rint64();
    return;
  }
  case 4: {
    if (!a->conv) { rconv(in); return; }
    cx_conv_dims *c = a->conv;
    int64_t *f[] = {&c->in_batch, &c->in_feature, &c->k_in, &c->k_out, &c->out_batch, &c->out_feature,
                    &c->in_spatial[0], &c->k_spatial[1], &c->out_spatial[0], &a->feature_group_count,
                    &a->batch_group_count};
    if (!pick(6)) c->nspatial = pick(5) - 1;
    else *f[pick(CX_ARRAY_LEN(f))] = pick(2) ? pick(4) : rint64();
    return;
  }
  default:
    a->gather.index_vector_dim = a->scatter.index_vector_dim = pick(2) ? pick(4) : rint64();
    return;
  }
}

TEST(verify_fuzz_mutated_templates) {
  rng_state = 0x243f6a8885a308d3ull;
  int ok = 0, failed = 0, template_ok = 0;
  for (int round = 0; round < 400; round++) {
    vt_begin();
    make_callees();
    vt_comp("e");
    nparam = 0;
    for (int k = 0; k < 16; k++) {
      cx_instr *in = template(k);
      template_ok += cx_infer_shape(in, &(cx_shape){0}) == CXLA_OK;
      for (int j = 0, n = 1 + pick(3); j < n; j++) mutate(in);
      cx_shape out;
      cxla_status st = cx_infer_shape(in, &out);
      if (st == CXLA_OK) ok++;
      else {
        failed++;
        CHECK_MSG(st == CXLA_ERR_VERIFY, "template %d: status %d", k, (int)st);
      }
    }
    vt_end();
  }
  CHECK_EQ_INT(template_ok, 400 * 16); /* every template is valid before mutation */
  CHECK(ok > 1000);
  CHECK(failed > 1000);
}

/* Verification is linear: a long chain, a wide tuple read by many get-tuple-elements and a
 * deep call chain must verify quickly (quadratic work here would take minutes). */
TEST(verify_large_module_is_fast) {
  vt_begin();
  cx_comp *prev = NULL;
  for (int k = 0; k < 2000; k++) { /* c_k calls c_{k-1} */
    char name[32];
    snprintf(name, sizeof name, "c%d", k);
    vt_comp(name);
    cx_instr *x = vt_param(0, "x", "f32[]");
    cx_instr *r = x;
    if (prev) {
      r = vt_op(CX_OP_CALL, "call", "f32[]", 1, x);
      vt_called(r, 1, prev);
    }
    prev = vt_finish(r, 0);
  }
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[]");
  cx_instr *ops[2000];
  for (int i = 0; i < 2000; i++) ops[i] = x;
  cx_instr *t = cx_instr_new(vt_c, CX_OP_TUPLE, &(cx_shape){.type = CXLA_TUPLE}, 2000, ops);
  cx_shape ts;
  CHECK_OK(cx_infer_shape(t, &ts));
  t->shape = ts;
  cx_instr *acc = x;
  for (int i = 0; i < 100000; i++) {
    cx_instr *g = vt_op(CX_OP_GET_TUPLE_ELEMENT, NULL, "f32[]", 1, t);
    g->a.index = i % 2000;
    acc = vt_op(CX_OP_ADD, NULL, "f32[]", 2, acc, g);
  }
  cx_instr *c = vt_op(CX_OP_CALL, NULL, "f32[]", 1, acc);
  vt_called(c, 1, prev);
  vt_finish(c, 1);
  clock_t t0 = clock();
  CHECK_STR_EQ(vt_verify(), "ok");
  CHECK_STR_EQ(vt_verify(), "ok");
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  CHECK_MSG(secs < 10, "verifying twice took %.1f s", secs);
  vt_end();
}

/* Allocation failures anywhere in verification give CXLA_ERR_OUT_OF_MEMORY (never a crash, a
 * leak or a bogus verdict), and the module verifies once memory is back. */
TEST(verify_allocation_failures) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  vt_comp("pair");
  cx_instr *a = vt_param(0, "a", "f32[]"), *b = vt_param(1, "b", "f32[]");
  vt_param(2, "c", "f32[]");
  vt_param(3, "d", "f32[]");
  cx_comp *pair = vt_finish(vt_op(CX_OP_TUPLE, "t", NULL, 2, a, b), 0);
  vt_comp("e");
  cx_instr *v = vt_param(0, "v", "f32[4]"), *z = vt_param(1, "z", "f32[]");
  cx_instr *r = vt_op(CX_OP_REDUCE, "r", "(f32[], f32[])", 4, v, v, z, z);
  VT_INTS(r->a.dims, 0);
  vt_called(r, 1, pair);
  cx_instr *s = vt_op(CX_OP_REDUCE, "s", "f32[]", 2, v, z);
  VT_INTS(s->a.dims, 0);
  vt_called(s, 1, add);
  vt_finish(vt_op(CX_OP_TUPLE, "t", "((f32[], f32[]), f32[])", 2, r, s), 1);
  int64_t k;
  for (k = 0; k < 1000; k++) {
    cx_alloc_fail_after(k);
    cxla_status st = cx_verify_module(vt_m);
    int64_t failures = cx_alloc_failures();
    cx_alloc_fail_after(-1);
    if (failures == 0) {
      CHECK_OK(st);
      break;
    }
    CHECK_MSG(st == CXLA_ERR_OUT_OF_MEMORY, "after %lld allocations: status %d", (long long)k, (int)st);
  }
  CHECK(k > 0 && k < 1000);
  CHECK_STR_EQ(vt_verify(), "ok");
  vt_end();
}
