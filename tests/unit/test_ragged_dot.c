/* test_ragged_dot.c — ragged-dot: the shape rule (XLA's InferRaggedDotOpShape) on good and bad
 * dimension numbers, and the cpu backend's per-group GEMMs (rt/ragged_dot.c) against
 * the interpreter's plain loops in each mode, with the dimensions in unusual orders, group_sizes
 * of rank 1 and with a prefix, empty groups, groups past the end and negative sizes, several
 * element types and several threads; the cpu compile must run it natively (no interpreter
 * fallback). jax's own results are in tests/hlo/jax_ops/lax_ragged_dot*.hlo. */
#include <string.h>
#include "test_cpu_helpers.h"
#include "util/util.h"
#include "verify_helpers.h"

static const char *rd(const char *line) {
  static char body[1024];
  snprintf(body, sizeof body,
           "  l = f32[2,6,3] parameter(0)\n  r = f32[3,2,3,4] parameter(1)\n  g = s32[2,3] parameter(2)\n"
           "  g1 = s32[3] parameter(3)\n  lk = f32[9,2,3] parameter(4)\n  rk = f32[2,9,5] parameter(5)\n"
           "  ROOT x = %s\n",
           line);
  return vt_verify_body(body);
}

#define NC_DIMS "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={2}"

TEST(ragged_dot_shape_rule) {
  /* the three modes, with [prefix..., G] and [G] group sizes */
  CHECK_STR_EQ(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={1}, rhs_group_dims={0}"), "ok");
  CHECK_STR_EQ(rd("f32[2,6,4] ragged-dot(l, r, g1), " NC_DIMS ", lhs_ragged_dims={1}, rhs_group_dims={0}"), "ok");
  CHECK_STR_EQ(rd("f32[3,2,3,5] ragged-dot(lk, rk, g1), lhs_batch_dims={1}, lhs_contracting_dims={0}, "
                  "rhs_batch_dims={0}, rhs_contracting_dims={1}, lhs_ragged_dims={0}"),
               "ok");
  CHECK_STR_EQ(rd("f32[2,3,5] ragged-dot(lk, rk, g1), lhs_batch_dims={1}, lhs_contracting_dims={0}, "
                  "rhs_batch_dims={0}, rhs_contracting_dims={1}, lhs_ragged_dims={1}"),
               "ok");
  /* what XLA refuses */
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", rhs_group_dims={0}"),
                     "there must be exactly one ragged dimension in the lhs");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={3}, rhs_group_dims={0}"),
                     "lhs_ragged_dims {3}: dimension 3 is out of range for rank 3");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={1}"),
                     "exactly one group dimension in the rhs");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={1}, rhs_group_dims={1}"),
                     "rhs group dimension cannot be a batch or contracting dimension");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={1}, rhs_group_dims={3}"),
                     "rhs group dimension 3 is expected to have size 3 (the number of groups), got 4");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, s32[3,3] parameter(6)), " NC_DIMS
                        ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
                     "group_sizes is expected to have shape [2,3] (or [3]), got s32[3,3]");
  CHECK_STR_CONTAINS(rd("f32[2,6,4] ragged-dot(l, r, f32[3] parameter(6)), " NC_DIMS
                        ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
                     "group_sizes must be an integer array");
  CHECK_STR_CONTAINS(rd("f32[3,2,3,5] ragged-dot(lk, rk, g1), lhs_batch_dims={1}, lhs_contracting_dims={0}, "
                        "rhs_batch_dims={0}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={2}"),
                     "zero group dimensions in the rhs when the ragged dimension is contracting");
  CHECK_STR_CONTAINS(rd("f32[2,6,5] ragged-dot(l, r, g), " NC_DIMS ", lhs_ragged_dims={1}, rhs_group_dims={0}"),
                     "f32[2,6,4]"); /* the declared shape against the inferred one */
}

/* Values in [-4, 4] (signed), [0, 13] (unsigned) or quarters in [-1.5, 2.25], as literal text. */
static char *values(const char *type, const int64_t *dims, int rank, unsigned seed) {
  int is_int = type[0] == 's' || type[0] == 'u';
  double lo = type[0] == 'u' ? 0 : is_int ? -4 : -1.0 - 0.25 * (seed % 3);
  return cpu_ramp_nd(type, dims, rank, 9 + (int)(seed % 5), is_int ? 1 : 0.25, lo);
}

/* One module: ragged-dot(lhs, rhs, gs) with the dims below, checked on the cpu against the
 * interpreter with group sizes `gs` (a literal). */
static void check(const char *type, const char *out_type, const char *lhs, const int64_t *ld, int lr, const char *rhs,
                  const int64_t *rdm, int rr, const char *gs, const char *out, const char *attrs, unsigned seed) {
  char text[1024], gshape[64];
  snprintf(gshape, sizeof gshape, "%.*s", (int)strcspn(gs, " "), gs);
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  l = %s%s parameter(0)\n  r = %s%s parameter(1)\n  g = %s parameter(2)\n"
           "  ROOT x = %s%s ragged-dot(l, r, g), %s\n}\n",
           type, lhs, type, rhs, gshape, out_type, out, attrs);
  char *a = values(type, ld, lr, seed), *b = values(type, rdm, rr, seed + 1), *stats = NULL;
  const char *inputs[3] = {a, b, gs};
  int fp = type[0] == 'f' || type[0] == 'b' || type[0] == 'c';
  CHECK_MSG(cpu_check(text, 3, inputs, "--threads=4", fp ? 1e-5 : 0, fp ? 1e-5 : 0, &stats, NULL), "%s", text);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "ragged-dot ran on the interpreter: %s", stats);
  free(stats);
  cx_free(a);
  cx_free(b);
}

TEST(ragged_dot_cpu_matches_interpreter) {
  /* non-contracting, jax's form: groups of 3, 0, 4 and 2 rows (the last row in none) */
  const char *std = "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}";
  static const char *const types[] = {"f32", "f64", "bf16", "f16", "s32", "s8", "u16"};
  for (size_t i = 0; i < CX_ARRAY_LEN(types); i++)
    check(types[i], types[i], "[10,5]", (int64_t[]){10, 5}, 2, "[4,5,3]", (int64_t[]){4, 5, 3}, 3,
          "s32[4] {3, 0, 4, 2}", "[10,3]", std, (unsigned)i);
  /* bf16 operands, f32 result; s64 group sizes past the end and negative */
  check("bf16", "f32", "[10,5]", (int64_t[]){10, 5}, 2, "[4,5,3]", (int64_t[]){4, 5, 3}, 3, "s64[4] {4, -2, 5, 9}",
        "[10,3]", std, 7);
  /* the ragged dim between free dims, the contracting dim first, the group dim last in the rhs,
   * a batch dim in the middle, and one group_sizes row per (batch, earlier free dim) */
  check("f32", "f32", "[4,2,3,6,2]", (int64_t[]){4, 2, 3, 6, 2}, 5, "[2,4,5,3]", (int64_t[]){2, 4, 5, 3}, 4,
        "s32[2,3,3] {{{1, 2, 3}, {0, 6, 0}, {2, 2, 1}}, {{5, 1, 0}, {0, 0, 0}, {3, 3, 3}}}", "[2,3,6,2,5]",
        "lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
        "lhs_ragged_dims={3}, rhs_group_dims={3}",
        8);
  /* contracting: one result per group (a weight gradient), [G] and a per-batch row */
  check("f32", "f32", "[9,3]", (int64_t[]){9, 3}, 2, "[9,4]", (int64_t[]){9, 4}, 2, "s32[3] {2, 4, 3}", "[3,3,4]",
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}, lhs_ragged_dims={0}", 9);
  check("f64", "f64", "[9,3]", (int64_t[]){9, 3}, 2, "[9,4]", (int64_t[]){9, 4}, 2, "s32[4] {2, -1, 0, 7}",
        "[4,3,4]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}, lhs_ragged_dims={0}", 10);
  check("s32", "s32", "[9,3]", (int64_t[]){9, 3}, 2, "[9,4]", (int64_t[]){9, 4}, 2, "s32[2] {5, 4}", "[2,3,4]",
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}, lhs_ragged_dims={0}", 11);
  /* contracting over two dims, the ragged one second in the list: group_sizes indexed by the
   * batch and the first contracting dim */
  check("f32", "f32", "[3,2,7,4]", (int64_t[]){3, 2, 7, 4}, 4, "[7,3,2,5]", (int64_t[]){7, 3, 2, 5}, 4,
        "s32[2,3,2] {{{3, 4}, {0, 7}, {2, 2}}, {{7, 0}, {1, 1}, {6, 3}}}", "[2,2,4,5]",
        "lhs_batch_dims={1}, lhs_contracting_dims={0,2}, rhs_batch_dims={2}, rhs_contracting_dims={1,0}, "
        "lhs_ragged_dims={2}",
        12);
  /* batch: a plain dot */
  check("f32", "f32", "[3,2,4]", (int64_t[]){3, 2, 4}, 3, "[3,4,5]", (int64_t[]){3, 4, 5}, 3, "s32[2] {1, 2}",
        "[3,2,5]",
        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
        "lhs_ragged_dims={0}",
        13);
  /* big enough for several blocks on the pool and GEMMs of many rows */
  check("f32", "f32", "[4,300,64]", (int64_t[]){4, 300, 64}, 3, "[8,4,64,48]", (int64_t[]){8, 4, 64, 48}, 4,
        "s32[8] {40, 10, 0, 90, 60, 50, 30, 20}", "[4,300,48]",
        "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={2}, "
        "lhs_ragged_dims={1}, rhs_group_dims={0}",
        14);
}

/* The builder's call: jax's form and the contracting one, and a bad group dimension refused
 * with the shape rule's message. */
TEST(ragged_dot_builder) {
  cxla_module *m = cxla_module_create(test_ctx(), "rd");
  cxla_builder *b = cxla_builder_create(m, "main");
  int64_t d104[2] = {10, 4}, d345[3] = {3, 4, 5}, d3[1] = {3}, d105[2] = {10, 5};
  cxla_shape ls = {.type = CXLA_F32, .rank = 2, .dims = d104}, rs = {.type = CXLA_F32, .rank = 3, .dims = d345};
  cxla_shape gs = {.type = CXLA_S32, .rank = 1, .dims = d3}, ks = {.type = CXLA_F32, .rank = 2, .dims = d105};
  cxla_op l = cxla_builder_parameter(b, 0, &ls, "l"), r = cxla_builder_parameter(b, 1, &rs, "r");
  cxla_op g = cxla_builder_parameter(b, 2, &gs, "g"), k = cxla_builder_parameter(b, 3, &ks, "k");
  int64_t one = 1, zero = 0;
  cxla_dot_dims dd = {0, 1, NULL, NULL, &one, &one};
  cxla_op x = cxla_builder_ragged_dot(b, l, r, g, &dd, 0, 0);
  cxla_shape s;
  CHECK(x.id != 0 && cxla_builder_get_shape(b, x, &s) == CXLA_OK && s.rank == 2 && s.dims[0] == 10 && s.dims[1] == 5);
  cxla_dot_dims dk = {0, 1, NULL, NULL, &zero, &zero}; /* l^T k in three groups of rows */
  cxla_op y = cxla_builder_ragged_dot(b, l, k, g, &dk, 0, -1);
  CHECK(y.id != 0 && cxla_builder_get_shape(b, y, &s) == CXLA_OK && s.rank == 3 && s.dims[0] == 3 && s.dims[1] == 4 &&
        s.dims[2] == 5);
  cxla_op z = cxla_builder_ragged_dot(b, l, r, g, &dd, 0, 1);
  CHECK(z.id == 0);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "rhs group dimension cannot be a batch or contracting dimension");
  cxla_builder_destroy(b);
  cxla_module_destroy(m);
}
