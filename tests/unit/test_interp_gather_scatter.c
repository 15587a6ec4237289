/* test_interp_gather_scatter.c — gather and scatter in the reference interpreter, with the
 * classic examples (rows, columns, points, windows), clamped start indices, batching dims,
 * duplicate and out-of-bounds scatter indices, and variadic scatter. Expected values are
 * worked out by hand in the comments. */
#include "heavy_helpers.h"

typedef struct gdims {
  int noff, ncol, nmap, nob, nsb, nslice;
  int64_t off[4], col[4], map[4], ob[4], sb[4], slice[4];
  int64_t ivd;
} gdims;

static cxla_literal *gather(hh *h, cxla_literal *x, cxla_literal *ix, const gdims *g, int rrank,
                            const int64_t *rdims) {
  cxla_literal *ops[2] = {x, ix};
  cx_instr *in = hh_instr1(h, CX_OP_GATHER, x ? x->shape.type : CXLA_F32, rrank, rdims, 2, ops);
  if (!in) return NULL;
  cx_gather_dims *d = &in->a.gather;
  hh_ints(h, &d->offset_dims, g->noff, g->off);
  hh_ints(h, &d->collapsed_slice_dims, g->ncol, g->col);
  hh_ints(h, &d->start_index_map, g->nmap, g->map);
  hh_ints(h, &d->operand_batching_dims, g->nob, g->ob);
  hh_ints(h, &d->start_indices_batching_dims, g->nsb, g->sb);
  hh_ints(h, &d->slice_sizes, g->nslice, g->slice);
  d->index_vector_dim = g->ivd;
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_gather(&h->st, in, ops, &out));
  return out;
}

static cxla_literal *m33(void) {
  return hh_lit(CXLA_F32, 2, HH_DIMS(3, 3), HH_VALS(1, 2, 3, 4, 5, 6, 7, 8, 9));
}

TEST(interp_gather_rows_columns_points) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = m33(), *ix = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(0, 2));
  /* rows 0 and 2 */
  gdims rows = {.noff = 1, .off = {1}, .ncol = 1, .col = {0}, .nmap = 1, .map = {0},
                .nslice = 2, .slice = {1, 3}, .ivd = 1};
  cxla_literal *r1 = gather(&h, x, ix, &rows, 2, HH_DIMS(2, 3));
  HH_EXPECT(r1, CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 7, 8, 9), 0);
  /* columns 0 and 2, the batch dim last */
  gdims cols = {.noff = 1, .off = {0}, .ncol = 1, .col = {1}, .nmap = 1, .map = {1},
                .nslice = 2, .slice = {3, 1}, .ivd = 1};
  cxla_literal *r2 = gather(&h, x, ix, &cols, 2, HH_DIMS(3, 2));
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(3, 2), HH_VALS(1, 3, 4, 6, 7, 9), 0);
  /* points (1,1) and (2,0) with the index vector in dim 1 */
  cxla_literal *pts = hh_lit(CXLA_S64, 2, HH_DIMS(2, 2), HH_VALS(1, 1, 2, 0));
  gdims pt = {.noff = 0, .ncol = 2, .col = {0, 1}, .nmap = 2, .map = {0, 1},
              .nslice = 2, .slice = {1, 1}, .ivd = 1};
  cxla_literal *r3 = gather(&h, x, pts, &pt, 1, HH_DIMS(2));
  HH_EXPECT(r3, CXLA_F32, 1, HH_DIMS(2), HH_VALS(5, 7), 0);
  /* the same points with the index vector in dim 0 (indices transposed): (1,2) and (1,0) */
  gdims pt0 = pt;
  pt0.ivd = 0;
  cxla_literal *r4 = gather(&h, x, pts, &pt0, 1, HH_DIMS(2));
  HH_EXPECT(r4, CXLA_F32, 1, HH_DIMS(2), HH_VALS(6, 4), 0);
  cxla_literal *all[] = {x, ix, r1, r2, pts, r3, r4};
  hh_free_lits(7, all);
  hh_free(&h);
}

TEST(interp_gather_clamps_start_indices) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = m33();
  /* 2x2 windows at (2,2) -> clamped to (1,1); at (-1,0) -> (0,0); at (0,7) -> (0,1) */
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(3, 2), HH_VALS(2, 2, -1, 0, 0, 7));
  gdims g = {.noff = 2, .off = {1, 2}, .nmap = 2, .map = {0, 1}, .nslice = 2, .slice = {2, 2}, .ivd = 1};
  cxla_literal *r = gather(&h, x, ix, &g, 3, HH_DIMS(3, 2, 2));
  HH_EXPECT(r, CXLA_F32, 3, HH_DIMS(3, 2, 2), HH_VALS(5, 6, 8, 9, 1, 2, 4, 5, 2, 3, 5, 6), 0);
  /* u64 indices beyond INT64_MAX clamp to the top, not the bottom */
  cxla_literal *ux = hh_lit(CXLA_U64, 1, HH_DIMS(1), NULL);
  if (ux) ((uint64_t *)ux->data)[0] = UINT64_MAX;
  gdims rows = {.noff = 1, .off = {1}, .ncol = 1, .col = {0}, .nmap = 1, .map = {0},
                .nslice = 2, .slice = {1, 3}, .ivd = 1};
  cxla_literal *r2 = gather(&h, x, ux, &rows, 2, HH_DIMS(1, 3));
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(1, 3), HH_VALS(7, 8, 9), 0);
  cxla_literal *all[] = {x, ix, r, ux, r2};
  hh_free_lits(5, all);
  hh_free(&h);
}

TEST(interp_gather_offset_dims_interleaved) {
  hh h;
  if (!hh_init(&h)) return;
  /* operand[r][c] = 3r + c (4x3); starts {3, 1} (implicit index vector) clamp to {2, 1};
   * slices of 2 rows x 3 cols; result dims: offset(2), batch(2), offset(3):
   * out[o0][b][o2] = operand[start_b + o0][o2] */
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  cxla_literal *x = hh_lit(CXLA_S32, 2, HH_DIMS(4, 3), v);
  cxla_literal *ix = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(3, 1));
  gdims g = {.noff = 2, .off = {0, 2}, .nmap = 1, .map = {0}, .nslice = 2, .slice = {2, 3}, .ivd = 1};
  cxla_literal *r = gather(&h, x, ix, &g, 3, HH_DIMS(2, 2, 3));
  HH_EXPECT(r, CXLA_S32, 3, HH_DIMS(2, 2, 3), HH_VALS(6, 7, 8, 3, 4, 5, 9, 10, 11, 6, 7, 8), 0);
  cxla_literal *all[] = {x, ix, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_gather_batching_dims) {
  hh h;
  if (!hh_init(&h)) return;
  /* operand {{1,2,3},{4,5,6}}, batch b picks column idx[b] of row b: {3, 4} */
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(2, 1), HH_VALS(2, 0));
  gdims g = {.ncol = 1, .col = {1}, .nmap = 1, .map = {1}, .nob = 1, .ob = {0}, .nsb = 1,
             .sb = {0}, .nslice = 2, .slice = {1, 1}, .ivd = 1};
  cxla_literal *r = gather(&h, x, ix, &g, 1, HH_DIMS(2));
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(2), HH_VALS(3, 4), 0);
  /* indices [3][2] with the batching dim second and an implicit vector dim:
   * out[i][b] = operand[b][idx[i][b]] */
  cxla_literal *ix2 = hh_lit(CXLA_S32, 2, HH_DIMS(3, 2), HH_VALS(0, 1, 2, 2, 1, 0));
  gdims g2 = {.ncol = 1, .col = {1}, .nmap = 1, .map = {1}, .nob = 1, .ob = {0}, .nsb = 1,
              .sb = {1}, .nslice = 2, .slice = {1, 1}, .ivd = 2};
  cxla_literal *r2 = gather(&h, x, ix2, &g2, 2, HH_DIMS(3, 2));
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(3, 2), HH_VALS(1, 5, 3, 6, 2, 4), 0);
  /* batching with an offset dim: each batch takes a 2-wide window of its own row:
   * row 0 from 1 -> {2,3}; row 1 from 5 (clamped to 1) -> {5,6} */
  cxla_literal *ix3 = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(1, 5));
  gdims g3 = {.noff = 1, .off = {1}, .nmap = 1, .map = {1}, .nob = 1, .ob = {0}, .nsb = 1,
              .sb = {0}, .nslice = 2, .slice = {1, 2}, .ivd = 1};
  cxla_literal *r3 = gather(&h, x, ix3, &g3, 2, HH_DIMS(2, 2));
  HH_EXPECT(r3, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(2, 3, 5, 6), 0);
  cxla_literal *all[] = {x, ix, r, ix2, r2, ix3, r3};
  hh_free_lits(7, all);
  hh_free(&h);
}

/* ---- scatter ---- */

typedef struct sdims {
  int nuw, niw, nmap, nib, nsb;
  int64_t uw[4], iw[4], map[4], ib[4], sb[4];
  int64_t ivd;
} sdims;

static cxla_literal *scatter(hh *h, int n, cxla_literal *const *ops, const sdims *s, cx_comp *f) {
  cx_shape rs[4];
  for (int i = 0; i < 2 * n + 1; i++)
    if (!ops[i]) return NULL;
  for (int i = 0; i < n; i++) rs[i] = ops[i]->shape;
  cx_instr *in = hh_instr(h, CX_OP_SCATTER, n, rs, 2 * n + 1, ops);
  if (!in || !f) return NULL;
  cx_scatter_dims *d = &in->a.scatter;
  hh_ints(h, &d->update_window_dims, s->nuw, s->uw);
  hh_ints(h, &d->inserted_window_dims, s->niw, s->iw);
  hh_ints(h, &d->scatter_dims_to_operand_dims, s->nmap, s->map);
  hh_ints(h, &d->input_batching_dims, s->nib, s->ib);
  hh_ints(h, &d->scatter_indices_batching_dims, s->nsb, s->sb);
  d->index_vector_dim = s->ivd;
  cx_instr_set_called(in, 1, &f);
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_scatter(&h->st, in, ops, &out));
  return out;
}

/* (current, update) -> update */
static cx_comp *assign_comp(hh *h, cxla_type t) {
  cx_comp *c = hh_comp(h, "assign");
  hh_param(c, 0, t);
  return hh_end(h, c, hh_param(c, 1, t));
}

TEST(interp_scatter_add_duplicates) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 0, 0, 0, 100));
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(4, 1), HH_VALS(1, 3, 1, 4));
  cxla_literal *u = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(1, 2, 3, 4));
  cxla_literal *ops[3] = {x, ix, u};
  sdims s = {.niw = 1, .iw = {0}, .nmap = 1, .map = {0}, .ivd = 1};
  cxla_literal *r = scatter(&h, 1, ops, &s, hh_binary(&h, CX_OP_ADD, CXLA_F32));
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 4, 0, 2, 104), 0);
  /* with assignment the later update of a duplicate index wins (row-major update order) */
  cxla_literal *r2 = scatter(&h, 1, ops, &s, assign_comp(&h, CXLA_F32));
  HH_EXPECT(r2, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 3, 0, 2, 4), 0);
  cxla_literal *all[] = {x, ix, u, r, r2};
  hh_free_lits(5, all);
  hh_free(&h);
}

TEST(interp_scatter_rows) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_S32, 2, HH_DIMS(3, 3), NULL);
  cxla_literal *ix = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(0, 2));
  cxla_literal *u = hh_lit(CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 7, 8, 9));
  cxla_literal *ops[3] = {x, ix, u};
  sdims s = {.nuw = 1, .uw = {1}, .niw = 1, .iw = {0}, .nmap = 1, .map = {0}, .ivd = 1};
  cxla_literal *r = scatter(&h, 1, ops, &s, assign_comp(&h, CXLA_S32));
  HH_EXPECT(r, CXLA_S32, 2, HH_DIMS(3, 3), HH_VALS(1, 2, 3, 0, 0, 0, 7, 8, 9), 0);
  /* columns: the window dim first in the updates, [3][2] */
  cxla_literal *uc = hh_lit(CXLA_S32, 2, HH_DIMS(3, 2), HH_VALS(1, 7, 2, 8, 3, 9));
  cxla_literal *opc[3] = {x, ix, uc};
  sdims sc = {.nuw = 1, .uw = {0}, .niw = 1, .iw = {1}, .nmap = 1, .map = {1}, .ivd = 1};
  cxla_literal *r2 = scatter(&h, 1, opc, &sc, assign_comp(&h, CXLA_S32));
  HH_EXPECT(r2, CXLA_S32, 2, HH_DIMS(3, 3), HH_VALS(1, 0, 7, 2, 0, 8, 3, 0, 9), 0);
  cxla_literal *all[] = {x, ix, u, r, uc, r2};
  hh_free_lits(6, all);
  hh_free(&h);
}

TEST(interp_scatter_out_of_bounds_window_skipped) {
  hh h;
  if (!hh_init(&h)) return;
  /* windows of 2 at starts 0, 3 and -1 in an operand of 4: only the first fits. The second
   * is not clamped to start 2 and not partly applied: it is dropped whole. */
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(0, 0, 0, 0));
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(3, 1), HH_VALS(0, 3, -1));
  cxla_literal *u = hh_lit(CXLA_F32, 2, HH_DIMS(3, 2), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *ops[3] = {x, ix, u};
  sdims s = {.nuw = 1, .uw = {1}, .nmap = 1, .map = {0}, .ivd = 1};
  cxla_literal *r = scatter(&h, 1, ops, &s, hh_binary(&h, CX_OP_ADD, CXLA_F32));
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(4), HH_VALS(1, 2, 0, 0), 0);
  /* a start of 2 fits exactly */
  cxla_literal *ix2 = hh_lit(CXLA_S32, 2, HH_DIMS(3, 1), HH_VALS(2, 4, 2));
  cxla_literal *ops2[3] = {x, ix2, u};
  cxla_literal *r2 = scatter(&h, 1, ops2, &s, hh_binary(&h, CX_OP_ADD, CXLA_F32));
  HH_EXPECT(r2, CXLA_F32, 1, HH_DIMS(4), HH_VALS(0, 0, 6, 8), 0);
  cxla_literal *all[] = {x, ix, u, r, ix2, r2};
  hh_free_lits(6, all);
  hh_free(&h);
}

TEST(interp_scatter_variadic_sum_and_count) {
  hh h;
  if (!hh_init(&h)) return;
  cx_comp *c = hh_comp(&h, "sum_count");
  cx_instr *s0 = hh_param(c, 0, CXLA_F32), *c0 = hh_param(c, 1, CXLA_S32);
  cx_instr *s1 = hh_param(c, 2, CXLA_F32), *c1 = hh_param(c, 3, CXLA_S32);
  cx_instr *el[2] = {hh_op2(c, CX_OP_ADD, s0, s1), hh_op2(c, CX_OP_ADD, c0, c1)};
  cx_comp *f = hh_end(&h, c, hh_tuple(c, 2, el));
  cxla_literal *sum = hh_lit(CXLA_F32, 1, HH_DIMS(3), NULL), *cnt = hh_lit(CXLA_S32, 1, HH_DIMS(3), NULL);
  cxla_literal *ix = hh_lit(CXLA_S32, 1, HH_DIMS(4), HH_VALS(2, 0, 2, 2));
  cxla_literal *us = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(1.5, 2, 3, 4));
  cxla_literal *uc = hh_lit(CXLA_S32, 1, HH_DIMS(4), HH_VALS(1, 1, 1, 1));
  cxla_literal *ops[5] = {sum, cnt, ix, us, uc};
  sdims s = {.niw = 1, .iw = {0}, .nmap = 1, .map = {0}, .ivd = 1};
  cxla_literal *r = scatter(&h, 2, ops, &s, f);
  if (r) {
    HH_EXPECT(cxla_literal_tuple_get(r, 0), CXLA_F32, 1, HH_DIMS(3), HH_VALS(2, 0, 8.5), 0);
    HH_EXPECT(cxla_literal_tuple_get(r, 1), CXLA_S32, 1, HH_DIMS(3), HH_VALS(1, 0, 3), 0);
  }
  cxla_literal *all[] = {sum, cnt, ix, us, uc, r};
  hh_free_lits(6, all);
  hh_free(&h);
}

TEST(interp_scatter_batching_dims) {
  hh h;
  if (!hh_init(&h)) return;
  /* batch b writes its update at column idx[b] of row b */
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), NULL);
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(2, 1), HH_VALS(2, 0));
  cxla_literal *u = hh_lit(CXLA_F32, 1, HH_DIMS(2), HH_VALS(10, 20));
  cxla_literal *ops[3] = {x, ix, u};
  sdims s = {.niw = 1, .iw = {1}, .nmap = 1, .map = {1}, .nib = 1, .ib = {0}, .nsb = 1,
             .sb = {0}, .ivd = 1};
  cxla_literal *r = scatter(&h, 1, ops, &s, hh_binary(&h, CX_OP_ADD, CXLA_F32));
  HH_EXPECT(r, CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(0, 0, 10, 20, 0, 0), 0);
  /* indices [3][2], batching dim second, implicit vector dim; updates [3][2]:
   * row b gets u[i][b] added at column idx[i][b] */
  cxla_literal *ix2 = hh_lit(CXLA_S32, 2, HH_DIMS(3, 2), HH_VALS(0, 1, 2, 1, 0, 0));
  cxla_literal *u2 = hh_lit(CXLA_F32, 2, HH_DIMS(3, 2), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *ops2[3] = {x, ix2, u2};
  sdims s2 = {.niw = 1, .iw = {1}, .nmap = 1, .map = {1}, .nib = 1, .ib = {0}, .nsb = 1,
              .sb = {1}, .ivd = 2};
  cxla_literal *r2 = scatter(&h, 1, ops2, &s2, hh_binary(&h, CX_OP_ADD, CXLA_F32));
  /* row 0: col 0 += 1, col 2 += 3, col 0 += 5 -> {6,0,3}; row 1: col 1 += 2, col 1 += 4,
   * col 0 += 6 -> {6,6,0} */
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(6, 0, 3, 6, 6, 0), 0);
  cxla_literal *all[] = {x, ix, u, r, ix2, u2, r2};
  hh_free_lits(7, all);
  hh_free(&h);
}

/* Every allocation failure must come back as an error without leaks or crashes. */
TEST(interp_heavy_alloc_failures) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 0, 0, 0, 100));
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(4, 1), HH_VALS(1, 3, 1, 4));
  cxla_literal *u = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(1, 2, 3, 4));
  cxla_literal *ops[3] = {x, ix, u};
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cx_shape rs = x ? x->shape : cx_shape_scalar(CXLA_F32);
  cx_instr *in = hh_instr(&h, CX_OP_SCATTER, 1, &rs, 3, ops);
  if (in && add) {
    hh_ints(&h, &in->a.scatter.inserted_window_dims, 1, HH_DIMS(0));
    hh_ints(&h, &in->a.scatter.scatter_dims_to_operand_dims, 1, HH_DIMS(0));
    in->a.scatter.index_vector_dim = 1;
    cx_instr_set_called(in, 1, &add);
    int ok = 0;
    for (int k = 0; k < 50 && !ok; k++) {
      cxla_literal *out = NULL;
      cx_alloc_fail_after(k);
      cxla_status s = cx_interp_scatter(&h.st, in, ops, &out);
      cx_alloc_fail_after(-1);
      if (s == CXLA_OK) {
        ok = 1;
        HH_EXPECT(out, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 4, 0, 2, 104), 0);
      } else {
        CHECK(s == CXLA_ERR_OUT_OF_MEMORY);
        CHECK(out == NULL);
      }
      cxla_literal_destroy(out);
    }
    CHECK(ok);
  }
  hh_free_lits(3, ops);
  hh_free(&h);
}
