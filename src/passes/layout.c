/* layout.c — makes a module layout-free: the first pass of every compiled pipeline.
 *
 * In HLO a value is a logical array and its layout only says how the array sits in memory.
 * Exactly one op reads that placement: `bitcast`, which reinterprets the operand's bytes in
 * the result's layout. Every other op (copy included) means the same whatever the layouts,
 * which is why XLA's layout assignment can insert `copy` to change a layout and follow it
 * with a `bitcast`. A pass that treats a layout-changing copy as the identity (the simplifier
 * does, rightly, for logical values) would otherwise let the bitcast read the wrong bytes.
 *
 * So this pass rewrites every bitcast into the logical ops it stands for and then drops all
 * layouts, after which no later pass, emitter or buffer decision can depend on one:
 *
 *   bitcast(x: T1[D1]{P1}) -> T2[D2]{P2}
 *     = transpose(reshape(bitcast-convert(transpose(x, P1)), D2 in P2's order), P2^-1)
 *
 * where P1, P2 list the dimensions major to minor: transposing by P1 gives the operand's
 * bytes as a row-major array; a change of element type reinterprets those bytes (flattened,
 * as bitcast-convert adds or removes a minor dimension); the reshape reads them as the
 * result's physical array, and the last transpose puts its dimensions back in logical order.
 * Steps that do nothing are left out, and the bitcast instruction itself becomes the last
 * step, so its users and name are untouched. The interpreter implements bitcast directly on
 * bytes (interp/shape_ops.c), so the two stay independent witnesses of each other.
 *
 * Tiled layouts (":T(8,128)") and packed sub-byte element sizes (":E(4)") change which byte
 * holds which element; a bitcast through one is refused here, at compile time, unless every
 * element stays in its tile (cx_bitcast_tiles_stay: it then reads as if untiled). */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"

static int is_identity(const int64_t *p, int n) {
  for (int i = 0; i < n; i++)
    if (p[i] != i) return 0;
  return 1;
}

/* Appends op(x) of type t and dims to c; dims_attr is set for transposes. */
static cx_instr *step(cx_instr *at, cx_op op, cx_instr *x, cxla_type t, int rank, const int64_t *dims,
                      const int64_t *perm) {
  cx_shape s = cx_shape_array(t, rank, dims);
  cx_instr *y = cx_instr_add(at->parent, op, &s, 1, &x, at->loc);
  if (y && perm && !cx_ints_set(at->parent->module, &y->a.dims, rank, perm)) return NULL;
  return y;
}

/* The unsigned type of a sub-byte type's width (u4 for s4, u4 and f4e2m1fn), else 0. */
static cxla_type byte_route(cxla_type t) {
  int bits = cx_type_bits(t);
  return bits >= 8 * (int)cxla_type_size(t) ? CXLA_INVALID : bits == 4 ? CXLA_U4 : CXLA_U2;
}

static cxla_status lower_bitcast(cx_instr *b) {
  cx_module *m = b->parent->module;
  cx_instr *x = b->ops[0];
  const cx_shape *xs = &x->shape, *bs = &b->shape;
  if ((cx_shape_moves_bytes(xs) || cx_shape_moves_bytes(bs)) && !cx_bitcast_tiles_stay(xs, bs))
    return cx_error_at(m, b->loc, CXLA_ERR_UNSUPPORTED,
                       "not supported: bitcast '%s' through a tiled or sub-byte layout (%s -> %s)", b->name,
                       xs->layout_extra ? xs->layout_extra : "", bs->layout_extra ? bs->layout_extra : "");
  int64_t p1[CXLA_MAX_RANK], p2[CXLA_MAX_RANK], d[CXLA_MAX_RANK], inv[CXLA_MAX_RANK];
  cx_shape_major_to_minor(xs, p1);
  cx_shape_major_to_minor(bs, p2);
  cx_instr *y = x;
  if (!is_identity(p1, xs->rank)) {
    for (int j = 0; j < xs->rank; j++) d[j] = xs->dims[p1[j]];
    if (!(y = step(b, CX_OP_TRANSPOSE, y, xs->type, xs->rank, d, p1))) return cx_oom(m->ctx);
  }
  if (xs->type != bs->type) {
    /* bitcast moves bytes, bitcast-convert counts bit widths: a sub-byte element, stored one to
     * a byte, goes through that byte (u8) on either side */
    cxla_type from = xs->type, to = byte_route(bs->type) ? CXLA_U8 : bs->type;
    if (byte_route(from)) {
      if (!(y = step(b, CX_OP_BITCAST_CONVERT, y, byte_route(from), y->shape.rank, y->shape.dims, NULL)) ||
          !(y = step(b, CX_OP_CONVERT, y, CXLA_U8, y->shape.rank, y->shape.dims, NULL)))
        return cx_oom(m->ctx);
      from = CXLA_U8;
    }
    int64_t n = cx_shape_elems(xs), s1 = (int64_t)cxla_type_size(from), s2 = (int64_t)cxla_type_size(to);
    if (s1 <= 0 || s2 <= 0 || (s1 > s2 ? s1 % s2 : s2 % s1))
      return cx_error_at(m, b->loc, CXLA_ERR_UNSUPPORTED, "not supported: bitcast '%s' from %s to %s", b->name,
                         cxla_type_name(xs->type), cxla_type_name(bs->type));
    if (from != to) {
      /* bitcast-convert to a narrower type adds a minor dimension, to a wider one removes it */
      int64_t flat[2] = {s1 >= s2 ? n : n * s1 / s2, s1 >= s2 ? 1 : s2 / s1};
      if (!(y = step(b, CX_OP_RESHAPE, y, from, s1 < s2 ? 2 : 1, flat, NULL))) return cx_oom(m->ctx);
      int64_t conv[2] = {flat[0], s1 / s2};
      if (!(y = step(b, CX_OP_BITCAST_CONVERT, y, to, s1 > s2 ? 2 : 1, conv, NULL))) return cx_oom(m->ctx);
    }
    if (to != bs->type) /* the byte's low bits (convert wraps), read as the sub-byte type */
      if (!(y = step(b, CX_OP_CONVERT, y, byte_route(bs->type), y->shape.rank, y->shape.dims, NULL)) ||
          !(y = step(b, CX_OP_BITCAST_CONVERT, y, bs->type, y->shape.rank, y->shape.dims, NULL)))
        return cx_oom(m->ctx);
  }
  for (int j = 0; j < bs->rank; j++) d[j] = bs->dims[p2[j]];
  if (is_identity(p2, bs->rank)) { /* the bitcast itself becomes the reshape */
    b->op = CX_OP_RESHAPE;
    b->ops[0] = y;
    return CXLA_OK;
  }
  if (!(y = step(b, CX_OP_RESHAPE, y, bs->type, bs->rank, d, NULL))) return cx_oom(m->ctx);
  for (int j = 0; j < bs->rank; j++) inv[p2[j]] = j;
  if (!cx_ints_set(m, &b->a.dims, bs->rank, inv)) return cx_oom(m->ctx);
  b->op = CX_OP_TRANSPOSE;
  b->ops[0] = y;
  return CXLA_OK;
}

/* Drops s's layouts (a shape without one stays without); 1 if that changed anything. */
static int strip(cx_shape *s) {
  int ch = 0;
  if (s->type == CXLA_TUPLE) {
    for (int i = 0; i < s->ntuple; i++) ch |= strip(&s->tuple[i]);
    return ch;
  }
  ch = s->layout_extra != NULL || !cx_shape_has_default_layout(s);
  s->layout_extra = NULL;
  if (ch && cx_type_is_array(s->type)) cx_shape_set_default_layout(s);
  return ch;
}

static int is_bitcast(const cx_instr *in) { return in->op == CX_OP_BITCAST && in->nops == 1; }

cxla_status cx_pass_layout(cx_module *m, int *changed) {
  *changed = 0;
  CX_TRY(cx_module_rewrite(m, "layout", is_bitcast, lower_bitcast, changed));
  for (int i = 0; i < m->ncomps; i++)
    for (int k = 0; k < m->comps[i]->ninstrs; k++) *changed |= strip(&m->comps[i]->instrs[k]->shape);
  return CXLA_OK;
}
