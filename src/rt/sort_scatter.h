/* sort_scatter.h — the run-time routines of native sort, scatter and select-and-scatter
 * (rt/sort.c, rt/scatter.c, rt/select_scatter.c; training runs them every step: argsort and
 * top-k metrics, embedding gradients, max-pool gradients), and the descriptors they run: the
 * sequencer plans an instruction's shapes at compile time into one, kept in the module's
 * arena, which lives as long as the executable (backend/cpu/sort_scatter_plan.c). The called
 * computations (comparator, combiner, select) arrive as compiled scalar functions
 * (cx_scalar_fn); each routine's bufs holds the instruction's result leaves, then its
 * operands' (the sequencer's order). */
#ifndef CX_RT_SORT_SCATTER_H
#define CX_RT_SORT_SCATTER_H
#include "ir/ir.h"
#include "rt/rt.h"

/* ---- sort ---- */

#define SORT_MAX_OPS 64

/* A comparator that is one compare of the first operand's two f32 elements runs inline, on
 * (key, index) pairs in a contiguous buffer, and gives the permutation the emitted function
 * would (fast_order). */
typedef enum sort_fast { SORT_CALL, SORT_F32_LT, SORT_F32_GT, SORT_F32_TOTAL_LT, SORT_F32_TOTAL_GT } sort_fast;

typedef struct sort_desc {
  int n, fast;
  uint64_t used; /* bit k: the comparator reads operand k (others' addresses are not set) */
  int64_t outer, len, inner; /* dims before, along and after the sort dimension */
  size_t esize[SORT_MAX_OPS];
} sort_desc;

void cx_rt_sort(cx_rt *rt, const void *desc, cx_scalar_fn cmp, void **bufs, int32_t id);

/* ---- scatter ---- */

#define SC_MAX_OPS 32

typedef enum sc_fast { SC_CALL, SC_ADD_F32, SC_MAX_F32, SC_MIN_F32 } sc_fast;

typedef struct scatter_desc {
  int n, orank, nsd, nwd, fast;
  int64_t nidx, ivec_stride;
  int32_t itype;
  int64_t sdims[CXLA_MAX_RANK], wdims[CXLA_MAX_RANK];
  int64_t idx_stride[CXLA_MAX_RANK], upd_sstride[CXLA_MAX_RANK], upd_wstride[CXLA_MAX_RANK];
  int64_t op_wstride[CXLA_MAX_RANK], start_map[CXLA_MAX_RANK], wsize[CXLA_MAX_RANK];
  int batching_from[CXLA_MAX_RANK];
  int64_t odims[CXLA_MAX_RANK], ostride[CXLA_MAX_RANK];
  int64_t oelems;
  size_t oes[SC_MAX_OPS], ues[SC_MAX_OPS];
} scatter_desc;

void cx_rt_scatter(cx_rt *rt, const void *desc, cx_scalar_fn comb, void **bufs, int32_t id);

/* ---- select-and-scatter ---- */

typedef struct sas_desc {
  int rank, indep;   /* leading dims that are independent slices */
  int fast;          /* 0: call; 1: select GE, 2: select GT (f32, scatter add) */
  cx_window_dim w[CXLA_MAX_RANK];
  int64_t odims[CXLA_MAX_RANK], sdims[CXLA_MAX_RANK], ostride[CXLA_MAX_RANK];
  int64_t oelems, selems, slice_o, slice_s; /* elements per independent slice */
  size_t oes, res, ses;
} sas_desc;

void cx_rt_select_and_scatter(cx_rt *rt, const void *desc, cx_scalar_fn sel, cx_scalar_fn sct, void **bufs,
                              int32_t id);

#endif
