/* shape.h — array and tuple shapes with optional layouts. Shapes are values; a tuple's
 * element array is owned by whoever allocated it (a module arena or a literal). */
#ifndef CX_SHAPE_H
#define CX_SHAPE_H
#include <stdint.h>
#include "ir/types.h"
#include "util/util.h"

typedef struct cx_shape {
  cxla_type type;                        /* element type, CXLA_TUPLE or CXLA_TOKEN */
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  uint32_t dynamic;                      /* bit d set: dims[d] is a bound ("<=N") */
  int has_layout;                        /* minor_to_major given explicitly */
  int8_t minor_to_major[CXLA_MAX_RANK];
  const char *layout_extra;              /* text after ':' in a layout, e.g. "T(8,128)", kept
                                            for printing; NULL if none */
  int ntuple;
  struct cx_shape *tuple;                /* ntuple elements when type == CXLA_TUPLE */
} cx_shape;

cx_shape cx_shape_array(cxla_type type, int rank, const int64_t *dims);
cx_shape cx_shape_scalar(cxla_type type);
/* Element count, or -1 if the product overflows 2^62. Tuples: -1. */
int64_t cx_shape_elems(const cx_shape *s);
/* Bytes of a dense array (elems * type size); -1 on overflow or for tuples. */
int64_t cx_shape_bytes(const cx_shape *s);
/* Bytes of all of a shape's array leaves (a tuple's summed; tokens and overflowing leaves count
 * none; the sum saturates at INT64_MAX). */
int64_t cx_shape_leaves_bytes(const cx_shape *s);
int cx_shape_is_tuple(const cx_shape *s);
/* Same type and dims (recursively for tuples), ignoring layouts and dynamic markers. */
int cx_shape_equal(const cx_shape *a, const cx_shape *b);
/* Same dims ignoring element types. */
int cx_shape_same_dims(const cx_shape *a, const cx_shape *b);
/* Row-major element strides. */
void cx_shape_strides(const cx_shape *s, int64_t *strides);
/* True if the layout is absent or the default row-major one ({rank-1,...,0}). */
int cx_shape_has_default_layout(const cx_shape *s);
/* Whether s's layout suffix moves elements between bytes: tiling (":T(8,128)") or a packed
 * element size (":E(4)"); a memory space (":S(1)") does not. */
int cx_shape_moves_bytes(const cx_shape *s);
/* Whether a bitcast from x to r between tiled layouts (":T(8,128)", as XLA's TPU and GPU
 * layouts write them) keeps every element in its tile: the same element type and layout
 * suffix, the same sizes in the tiled minor-most physical dimensions, and the same sizes
 * other than 1 in the rest, in the same physical order; or one element on both sides. Such a
 * bitcast then reads the bytes as if there were no tiles. (XLA also allows splitting a tiled
 * dimension by a multiple of its tile; that is refused here.) */
int cx_bitcast_tiles_stay(const cx_shape *x, const cx_shape *r);
void cx_shape_set_default_layout(cx_shape *s);
/* Same layouts (recursively for tuples): minor_to_major, a missing layout being the default,
 * and the same text after ':'. Dims and types are not compared. */
int cx_shape_same_layout(const cx_shape *a, const cx_shape *b);
/* The dimensions from most to least major: p[j] is the j-th most major (0, 1, ... without a
 * layout). Only a bitcast reads it: the physical order of the bytes. */
void cx_shape_major_to_minor(const cx_shape *s, int64_t *p);
/* Whether some dimension (of some tuple element) is dynamic ("<=N"). */
int cx_shape_is_dynamic(const cx_shape *s);
/* Prints "f32[2,3]{1,0}" (layout only if with_layout and present) or "(s32[], f32[4])". */
void cx_shape_print(cx_sb *sb, const cx_shape *s, int with_layout);
/* Formats a shape without layout into buf (for error messages); returns buf. */
const char *cx_shape_str(const cx_shape *s, char *buf, size_t n);
/* Deep copies: into an arena (arena != NULL) or the heap (free with cx_shape_free_heap). */
int cx_shape_copy(cx_shape *dst, const cx_shape *src, cx_arena *arena);
void cx_shape_free_heap(cx_shape *s);
/* Converts to/from the public description. cx_shape_to_public needs storage for tuple
 * elements (returned shapes point into s). */
int cx_shape_from_public(cx_shape *dst, const cxla_shape *src, cx_arena *arena);
void cx_shape_to_public(const cx_shape *s, cxla_shape *out, cx_arena *arena);

/* Number of array leaves in a shape (1 for arrays; tokens hold none). */
int cx_shape_leaf_count(const cx_shape *s);
/* The shape of leaf i in DFS order, or NULL. */
const cx_shape *cx_shape_leaf(const cx_shape *s, int i);
/* Leaf offset of tuple element `index` within a tuple shape (DFS leaf numbering). */
int cx_shape_leaf_offset(const cx_shape *s, int index);

#endif
