/* gpu_gemm.c — dots on cuBLASLt. The step's plan is the cpu backend's: a batch of row-major
 * GEMMs C[M,N] = op(A)[M,K] op(B)[K,N] over the operands as they lie in memory. cuBLASLt is
 * column-major, and a row-major matrix is the column-major view of its transpose, so each is
 * computed as C^T[N,M] = op(B)^T op(A)^T: cuBLASLt's A is the dot's rhs, its B the dot's lhs,
 * with the same leading dimensions and batch strides, and no copy of anything. */
#include <string.h>
#include "backend/gpu/gpu_state.h"

/* what cuBLASLt may use as scratch per GEMM (its own default preference asks for none, which
 * rules out the fastest kernels for large shapes) */
enum { WORKSPACE_BYTES = 32 << 20 };

/* a column-major layout of rows x cols with leading dimension ld, batched */
static int layout(const cx_blaslt *lt, void **out, int type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                  int64_t stride) {
  int r = lt->MatrixLayoutCreate(out, type, (uint64_t)rows, (uint64_t)cols, ld);
  if (r || batch == 1) return r;
  int32_t n = (int32_t)batch;
  if ((r = lt->MatrixLayoutSetAttribute(*out, CX_LT_LAYOUT_BATCH_COUNT, &n, sizeof n))) return r;
  return lt->MatrixLayoutSetAttribute(*out, CX_LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
}

static cxla_status prepare(cxla_context *ctx, gpu_state *st, const cx_gpu_step *s, cx_gpu_gemm_rt *g, void *pref) {
  const cx_blaslt *lt = st->lt;
  const cx_gemm_plan *p = &s->gemm;
  if (!p->m || !p->n || !p->k || !p->batch) return CXLA_OK; /* nothing for cuBLASLt to do (gemm_run) */
  if (p->batch > INT32_MAX)
    return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: %s: %lld GEMMs in one batch", s->in->name, (long long)p->batch);
  /* f16/bf16 accumulate in f32 and round once (XLA's rule); f32 is exact f32 unless --gpu-tf32 */
  /* complex: c64 computes in f32 and c128 in f64, scaled by complex alpha and beta */
  int f64 = p->type == CXLA_F64 || p->type == CXLA_C128, cplx = p->type == CXLA_C64 || p->type == CXLA_C128;
  int type = p->type == CXLA_C128 ? CX_LT_C_64F : p->type == CXLA_C64 ? CX_LT_C_32F : f64 ? CX_LT_R_64F
             : p->type == CXLA_BF16 ? CX_LT_R_16BF : p->type == CXLA_F16 ? CX_LT_R_16F : CX_LT_R_32F;
  int compute = f64 ? CX_LT_COMPUTE_64F : st->tf32 && p->type == CXLA_F32 ? CX_LT_COMPUTE_32F_FAST_TF32 : CX_LT_COMPUTE_32F;
  int scale = cplx ? type : f64 ? CX_LT_R_64F : CX_LT_R_32F;
  int32_t ta = p->trans_b ? CX_LT_OP_T : CX_LT_OP_N, tb = p->trans_a ? CX_LT_OP_T : CX_LT_OP_N;
  int r = lt->MatmulDescCreate(&g->desc, compute, scale);
  if (!r) r = lt->MatmulDescSetAttribute(g->desc, CX_LT_DESC_TRANSA, &ta, sizeof ta);
  if (!r) r = lt->MatmulDescSetAttribute(g->desc, CX_LT_DESC_TRANSB, &tb, sizeof tb);
  /* stored shapes: rhs is K x N row-major (N x K column-major), or N x K when transposed */
  if (!r) r = p->trans_b ? layout(lt, &g->a, type, p->k, p->n, p->ldb, p->batch, p->stride_b)
                         : layout(lt, &g->a, type, p->n, p->k, p->ldb, p->batch, p->stride_b);
  if (!r) r = p->trans_a ? layout(lt, &g->b, type, p->m, p->k, p->lda, p->batch, p->stride_a)
                         : layout(lt, &g->b, type, p->k, p->m, p->lda, p->batch, p->stride_a);
  if (!r) r = layout(lt, &g->c, type, p->n, p->m, p->ldc, p->batch, p->stride_c);
  if (r) return cx_blaslt_error(ctx, lt, r, "describing a GEMM (cublasLtMatmulDescCreate / MatrixLayoutCreate)");
  cx_lt_heuristic h;
  int got = 0;
  r = lt->MatmulAlgoGetHeuristic(st->lt_handle, g->desc, g->a, g->b, g->c, g->c, pref, 1, &h, &got);
  if (r) return cx_blaslt_error(ctx, lt, r, "cublasLtMatmulAlgoGetHeuristic");
  if (got < 1)
    return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: %s: cuBLASLt has no algorithm for this %lldx%lldx%lld GEMM",
                    s->in->name, (long long)p->m, (long long)p->n, (long long)p->k);
  g->algo = h.algo;
  return CXLA_OK;
}

cxla_status cx_gpu_gemm_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  if (!p->ngemms) return CXLA_OK;
  if (st->build_mode & CX_GPU_LLVM_IMAGE) st->lt = cx_blaslt_emu();
  else CX_TRY(cx_blaslt_get(ctx, &st->lt));
  const cx_blaslt *lt = st->lt;
  int r = lt->Create(&st->lt_handle);
  if (r) {
    st->lt_handle = NULL;
    return cx_blaslt_error(ctx, lt, r, "cublasLtCreate");
  }
  if (!(st->gemms = cx_calloc((size_t)p->nsteps, sizeof *st->gemms))) return cx_oom(ctx);
  st->lt_workspace_size = st->build_mode & CX_GPU_LLVM_IMAGE ? 0 : WORKSPACE_BYTES;
  if (st->lt_workspace_size)
    CX_TRY(cx_gpu_alloc(ctx, st->device, st->lt_workspace_size, &st->lt_workspace, &st->lt_workspace_got));
  void *pref = NULL;
  uint64_t ws = st->lt_workspace_size;
  if ((r = lt->MatmulPreferenceCreate(&pref)) || (r = lt->MatmulPreferenceSetAttribute(pref, CX_LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws))) {
    if (pref) lt->MatmulPreferenceDestroy(pref);
    return cx_blaslt_error(ctx, lt, r, "cublasLtMatmulPreferenceCreate");
  }
  cxla_status s = CXLA_OK;
  for (int i = 0; i < p->nsteps && s == CXLA_OK; i++)
    if (p->steps[i].kind == CX_GPU_GEMM) s = prepare(ctx, st, &p->steps[i], &st->gemms[i], pref);
  lt->MatmulPreferenceDestroy(pref);
  return s;
}

cxla_status cx_gpu_gemm_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, CUdeviceptr out,
                            CUdeviceptr lhs, CUdeviceptr rhs) {
  const cx_gpu_step *s = &st->prog.steps[step];
  const cx_gemm_plan *p = &s->gemm;
  if (!p->m || !p->n || !p->batch) return CXLA_OK;
  if (!p->k) { /* an empty sum: zeros */
    int64_t bytes = st->prog.bufs.slots[s->slots[0]].size;
    CUresult e = st->cu->MemsetD8Async(out, 0, (size_t)bytes, stream);
    return e ? cx_cuda_error(ctx, st->cu, e, "cuMemsetD8Async") : CXLA_OK;
  }
  const cx_gpu_gemm_rt *g = &st->gemms[step];
  double one64[2] = {1, 0}, zero64[2] = {0, 0}; /* (re, im) for the complex types */
  float one32[2] = {1, 0}, zero32[2] = {0, 0};
  int f64 = p->type == CXLA_F64 || p->type == CXLA_C128;
  int r = st->lt->Matmul(st->lt_handle, g->desc, f64 ? (void *)one64 : (void *)one32, (void *)(uintptr_t)rhs, g->a,
                         (void *)(uintptr_t)lhs, g->b, f64 ? (void *)zero64 : (void *)zero32, (void *)(uintptr_t)out,
                         g->c, (void *)(uintptr_t)out, g->c, &g->algo, (void *)(uintptr_t)st->lt_workspace,
                         st->lt_workspace_size, stream);
  return r ? cx_blaslt_error(ctx, st->lt, r, s->in->name) : CXLA_OK;
}

void cx_gpu_gemm_unload(gpu_state *st) {
  const cx_blaslt *lt = st->lt;
  for (int i = 0; st->gemms && i < st->prog.nsteps; i++) {
    cx_gpu_gemm_rt *g = &st->gemms[i];
    if (g->a) lt->MatrixLayoutDestroy(g->a);
    if (g->b) lt->MatrixLayoutDestroy(g->b);
    if (g->c) lt->MatrixLayoutDestroy(g->c);
    if (g->desc) lt->MatmulDescDestroy(g->desc);
  }
  cx_free(st->gemms);
  st->gemms = NULL;
  cx_gpu_free(st->device, st->lt_workspace, st->lt_workspace_got);
  if (st->lt_handle) lt->Destroy(st->lt_handle);
  st->lt_workspace = 0, st->lt_handle = NULL;
}
