/* fusion_index.h — users, positions and reachability inside one computation, with the index
 * that keeps them cheap while a pass edits (fusion_index.c). */
#ifndef CX_FUSION_INDEX_H
#define CX_FUSION_INDEX_H
#include "ir/ir.h"

/* A pass brackets its work on computation c with fu_index_begin(c) / fu_index_end(): the
 * queries then use an index (users in in->users/nusers, positions in c->instrs) that fu_fuse
 * keeps up to date; without one they scan c. While an index is active, c->instrs may hold
 * removed instructions (parent != c: skip them); fu_index_end compacts. Instructions of c
 * have aux == NULL between edits. One index per thread at a time. */
cxla_status fu_index_begin(cx_comp *c);
/* Compacts c->instrs and puts m->comps in order (see fu_index_drop_comp). OOM possible. */
cxla_status fu_index_end(void);
int fu_index_active(const cx_comp *c);
/* Edits for fu_fuse: user lists, positions (-1 if unknown), renumbering after a re-sort.
 * The int-returning ones return 0 on OOM. */
int fu_index_add_user(const cx_comp *c, cx_instr *x, cx_instr *u);
void fu_index_remove_user(const cx_comp *c, cx_instr *x, const cx_instr *u);
int fu_index_pos(const cx_comp *c, const cx_instr *x);
/* The least and greatest position of xs[0..n); 0 (lo, hi unset) when one is unknown. */
int fu_index_span(const cx_comp *c, cx_instr *const *xs, int n, int *lo, int *hi);
int fu_index_place(const cx_comp *c, cx_instr *x, int pos);
/* A fused computation no fusion calls any more: while an index is active it stays in m->comps
 * until fu_index_end (new ones are appended; fu_index_end restores callee-before-caller
 * order). Returns 0 when there is no index (or on OOM): the caller removes it itself. */
int fu_index_drop_comp(const cx_comp *c, cx_comp *fc);
/* After c->instrs was re-sorted: lays it out again with spare slots; 0 on OOM. */
int fu_index_relayout(const cx_comp *c);
/* How many times c was laid out afresh since fu_index_begin (-1 without an index). While it
 * stays the same, an edit moved nothing before the position of its first part: a pass can
 * go on from there instead of from the start. */
int fu_index_layouts(const cx_comp *c);
/* Distinct users of x in c; the computation root counts as one extra user. */
int fu_nusers(const cx_comp *c, const cx_instr *x);
/* 1 if x is not the root and every user of x is u. */
int fu_only_user_is(const cx_comp *c, const cx_instr *x, const cx_instr *u);
/* Users of x in c as a heap array (caller frees); -1 on OOM. Does not list the root. */
int fu_users(const cx_comp *c, const cx_instr *x, cx_instr ***out);
/* 1 if `from` is `to` or an operand path leads from `to` back to `from` (to depends on from);
 * -1 on OOM. */
int fu_reaches(const cx_comp *c, const cx_instr *from, const cx_instr *to);

#endif
