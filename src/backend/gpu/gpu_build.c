/* gpu_build.c — a module compiled for an NVIDIA GPU without one (see gpu_build.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/gpu_build.h"
#include "backend/gpu/gpu_graph.h"
#include "backend/gpu/libdevice.h"
#include "backend/gpu/ptx.h"
#include "codegen/cg.h"
#include "codegen/kernel_reuse.h"
#include "interp/interp.h"
#include "ir/clone.h"
#include "ir/custom_call.h"
#include "ir/while_trips.h"
#include "passes/fusion_key.h"
#include "passes/fusion_plan.h"
#include "passes/library_lowering.h"
#include "passes/pass.h"

typedef struct builder {
  cxla_context *ctx;
  cx_gpu_prog *p;
  cx_cg cg;
  int lenient, tf32;
  unsigned mode;
  int dnn;                /* cuDNN: 0 not asked yet, 1 there, -1 not (dnn_why says why) */
  const char *dnn_why;
  int64_t steps_cap, kernels_cap, scratch_cap;
  int loops;              /* while loops around the computation being sequenced */
  cx_kreuse reuse;        /* fusion kernels by what they compute (codegen/kernel_reuse.h) */
  int *rng_words, nrng;   /* the scratch entries of rng run counters (placed after the build) */
  int64_t rng_cap;
} builder;

static cx_gpu_step *new_step(builder *b) {
  cx_gpu_prog *p = b->p;
  if (!cx_vec_reserve((void **)&p->steps, &b->steps_cap, p->nsteps + 1, sizeof *p->steps)) return NULL;
  cx_gpu_step *s = &p->steps[p->nsteps++];
  memset(s, 0, sizeof *s);
  return s;
}

static cxla_status refuse(builder *b, const cx_instr *in, const char *why) {
  const char *name = in->name ? in->name : "?";
  if (!b->lenient)
    return cx_error(b->ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: %s (%s) cannot run on the GPU yet: %s", name,
                    cx_op_name(in->op), why);
  if (!b->p->nskipped++) b->p->first_skip = cx_arena_strdup(&b->p->m->arena, why);
  return CXLA_OK;
}

static int leaf_slot(builder *b, const cx_instr *in, int leaf) { return cx_buffers_slot(&b->p->bufs, in, leaf); }

/* device-to-device copies of every leaf of `from` into `to` where their slots differ */
static cxla_status copy_leaves(builder *b, const cx_instr *to, const cx_instr *from) {
  const cx_buffers *bufs = &b->p->bufs;
  int n = bufs->nleaves[to->id];
  if (bufs->nleaves[from->id] != n) return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: leaf counts differ", to->name);
  for (int l = 0; l < n; l++) {
    int d = leaf_slot(b, to, l), f = leaf_slot(b, from, l);
    if (d < 0 || f < 0) return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", to->name);
    if (d == f || !bufs->slots[d].size) continue;
    if (bufs->slots[d].size != bufs->slots[f].size)
      return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: leaf %d sizes differ", to->name, l);
    cx_gpu_step *s = new_step(b);
    if (!s) return cx_oom(b->ctx);
    *s = (cx_gpu_step){.kind = CX_GPU_COPY, .in = to, .dst = d, .src = f};
  }
  return CXLA_OK;
}

enum { VEC = 4 };

/* emit: the kernel emitter of a non-fusion instruction (its arguments must not alias), or NULL
 * for a fusion's */
typedef cxla_status (*emit_fn)(cx_cg *cg, cx_instr *in, cx_kernel *out);

/* A launch step of kernel kn (emitted with status st): new (index < 0: its name joins the
 * program's kernels) or the earlier kernel `index`, which computes the same thing. Takes
 * slots (freed on failure). */
static cxla_status add_launch(builder *b, cx_instr *in, cxla_status st, const cx_kernel *kn, int index, int *slots, int n,
                              int nout, int vec) {
  if (st == CXLA_OK && kn->total % vec)
    st = cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: kernel %s: %d elements a thread do not divide %lld", kn->name,
                  vec, (long long)kn->total);
  if (st == CXLA_OK && (kn->nout != nout || kn->nout + kn->nin != n))
    st = cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: kernel %s takes %d+%d pointers, %s has %d+%d", kn->name,
                  kn->nout, kn->nin, in->name, nout, n - nout);
  cx_gpu_prog *p = b->p;
  cx_gpu_step *s = NULL;
  if (st == CXLA_OK && index < 0 &&
      !cx_vec_reserve((void **)&p->kernels, &b->kernels_cap, p->nkernels + 1, sizeof *p->kernels))
    st = cx_oom(b->ctx);
  if (st == CXLA_OK && !(s = new_step(b))) st = cx_oom(b->ctx);
  if (st != CXLA_OK) {
    cx_free(slots);
    return st;
  }
  if (index < 0) {
    memcpy(p->kernels[p->nkernels], kn->name, sizeof kn->name);
    index = p->nkernels++;
  } else {
    p->nreused++;
  }
  *s = (cx_gpu_step){.kind = CX_GPU_LAUNCH, .in = in, .kernel = index, .total = kn->total, .vec = vec, .nargs = n,
                     .slots = slots};
  return CXLA_OK;
}

/* Whether the only memory shared among a kernel's arguments is a scatter's result q with its
 * operand q (buffer assignment lets a scatter take over an operand that dies there): its kernel
 * reads the results, which start as the operands (copied only when they differ), the indices
 * and the updates, never the operand arguments, so those may alias. */
static int scatter_pairs_only(const cx_instr *in, const int *slots, int nout, int n) {
  if (in->op != CX_OP_SCATTER) return 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (slots[i] == slots[j] && !(i < nout && j == nout + i)) return 0;
  return 1;
}

static cxla_status launch(builder *b, cx_instr *in, emit_fn emit) {
  const cx_buffers *bufs = &b->p->bufs;
  int n = bufs->nleaves[in->id], nout = n;
  for (int j = 0; j < in->nops; j++) n += bufs->nleaves[in->ops[j]->id];
  int *slots = cx_malloc(sizeof *slots * (size_t)(n ? n : 1));
  if (!slots) return cx_oom(b->ctx);
  int k = 0;
  for (int l = 0; l < nout; l++) slots[k++] = leaf_slot(b, in, l);
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < bufs->nleaves[in->ops[j]->id]; l++) slots[k++] = leaf_slot(b, in->ops[j], l);
  for (int i = 0; i < k; i++)
    if (slots[i] < 0) {
      cx_free(slots);
      return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has an argument without a slot", in->name);
    }
  cx_kalias alias; /* as the cpu sequencer: arguments sharing memory with an output */
  cx_kalias_of_slots(&alias, slots, nout, n);
  /* a loop fusion's thread computes VEC consecutive elements when VEC divides them: 16-byte
   * loads and stores for 4-byte types (reductions keep their own threads) */
  int64_t elems = cx_shape_elems(in->shape.type == CXLA_TUPLE ? cx_shape_leaf(&in->shape, 0) : &in->shape);
  int vec = in->a.fusion_kind == CX_FUSION_LOOP && elems % VEC == 0 && elems >= VEC * 256 ? VEC : 1;
  /* a fusion that computes what an earlier one did launches that one's kernel */
  char *key = NULL;
  if (!emit) {
    char extra[CX_KALIAS_TEXT + 16];
    cx_kalias_describe(&alias, extra);
    snprintf(extra + strlen(extra), 16, " vec %d", vec);
    if (!(key = cx_fusion_key(in, extra))) {
      cx_free(slots);
      return cx_oom(b->ctx);
    }
    const cx_kreuse_entry *same = cx_kreuse_find(&b->reuse, key);
    if (same) {
      cx_free(key);
      return add_launch(b, in, CXLA_OK, &same->k, (int)same->index, slots, n, nout, vec);
    }
  }
  b->cg.elems_per_thread = vec;
  cx_kernel kn;
  int own_alias = emit && alias.mask && !scatter_pairs_only(in, slots, nout, n);
  cxla_status st = own_alias ? cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s shares memory with its operand", in->name)
                   : emit ? emit(&b->cg, in, &kn)
                   : alias.mask ? cx_emit_kernel_ex(&b->cg, in, &alias, &kn) : cx_emit_kernel(&b->cg, in, &kn);
  b->cg.elems_per_thread = 1;
  int index = b->p->nkernels;
  st = add_launch(b, in, st, &kn, -1, slots, n, nout, vec);
  if (key && st == CXLA_OK && !cx_kreuse_add(&b->reuse, key, &kn, index)) return cx_oom(b->ctx);
  if (key && st != CXLA_OK) cx_free(key);
  return st;
}

/* Whether convolutions can go to cuDNN, asked once per build: CXLA_CUDNN=off says no; the
 * emulation (gpu-emu) has its own; a real GPU's cuDNN is opened now, so that a missing one
 * sends the convolutions to the emitter (counted, with the reason) rather than failing when
 * the executable loads. A library CXLA_CUDNN names that does not open is refused here,
 * naming it: it was asked for. (gpu-emu makes the same decision, then runs its emulation.) */
static cxla_status cudnn_choice(builder *b) {
  if (b->dnn) return CXLA_OK;
  const char *e = getenv("CXLA_CUDNN");
  int named = e && *e, emu = (b->mode & CX_GPU_LLVM_IMAGE) != 0;
  char err[768];
  b->dnn = -1;
  if (named && !strcmp(e, "off")) {
    b->dnn_why = "CXLA_CUDNN=off";
    return CXLA_OK;
  }
  const cx_cudnn *lib = emu && !named ? NULL : cx_cudnn_get(e, err, sizeof err);
  if (!lib && named) return cx_error(b->ctx, CXLA_ERR_DEVICE, "gpu backend: CXLA_CUDNN=%s: %s", e, err);
  if (!(b->p->dnn = emu ? cx_cudnn_emu() : lib)) {
    if (!(b->dnn_why = cx_arena_strdup(&b->p->m->arena, err))) return cx_oom(b->ctx);
    return CXLA_OK;
  }
  b->dnn = 1;
  return CXLA_OK;
}

/* the root of a fusion that is one op over the fusion's parameters (the library lowering's
 * wrapped convolutions) */
static const cx_instr *single_op_root(const cx_instr *fusion, cx_op op) {
  const cx_instr *r = fusion->called[0]->root;
  if (!r || r->op != op) return NULL;
  for (int j = 0; j < r->nops; j++)
    if (r->ops[j]->op != CX_OP_PARAMETER || r->ops[j]->a.index < 0 || r->ops[j]->a.index >= fusion->nops) return NULL;
  return r;
}

/* A convolution fusion as a cuDNN step; 0 when cuDNN declines it (counted, the first reason
 * kept), and the emitter's kernel computes it instead. */
static cxla_status conv_step(builder *b, cx_instr *in, const cx_instr *conv, int *done) {
  cx_gpu_conv c;
  const char *why = NULL;
  *done = 0;
  CX_TRY(cudnn_choice(b));
  int ok = b->dnn > 0 ? cx_gpu_conv_plan(conv, b->tf32, &c, &why) : (why = b->dnn_why, 0);
  int slots[3] = {leaf_slot(b, in, 0), leaf_slot(b, in->ops[conv->ops[0]->a.index], 0),
                  leaf_slot(b, in->ops[conv->ops[1]->a.index], 0)};
  if (ok && (slots[0] < 0 || slots[1] < 0 || slots[2] < 0))
    return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  if (ok && (slots[0] == slots[1] || slots[0] == slots[2])) ok = 0, why = "its result shares memory with an operand";
  if (!ok) {
    if (!b->p->nconv_fallbacks++) b->p->conv_fallback = why;
    return CXLA_OK;
  }
  int *own = cx_malloc(sizeof slots);
  cx_gpu_step *s = own ? new_step(b) : NULL;
  if (!s) {
    cx_free(own);
    return cx_oom(b->ctx);
  }
  memcpy(own, slots, sizeof slots);
  *s = (cx_gpu_step){.kind = CX_GPU_CONV, .in = in, .nargs = 3, .slots = own, .conv = c};
  b->p->nconvs_dnn++;
  *done = 1;
  return CXLA_OK;
}

static cxla_status fusion(builder *b, cx_instr *in) {
  if (in->ncalled != 1 || !cx_fusion_plan_fits(in->plan, in))
    return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no fusion plan", in->name);
  if (in->plan->relabels) return copy_leaves(b, in, in->ops[0]);
  const cx_instr *conv = single_op_root(in, CX_OP_CONVOLUTION);
  int done = 0;
  if (conv) CX_TRY(conv_step(b, in, conv, &done));
  if (done) return CXLA_OK;
  const char *why = "not a kLoop/kInput fusion";
  int loop_kind = in->a.fusion_kind == CX_FUSION_LOOP || in->a.fusion_kind == CX_FUSION_INPUT;
  if (!loop_kind || !cx_emit_supported(in, &why) || !cx_nvptx_supports(in, &why)) return refuse(b, in, why);
  return launch(b, in, NULL);
}

/* An instruction that is a kernel of its own (codegen's cx_instr_kernel); a scatter's results
 * start as copies of its operands, which its kernel then combines the updates into. */
/* Rows a top-k ranks in one kernel (n^2 comparisons a row); longer ones run as passes. */
enum { TOPK_ONE_KERNEL_ROW = 16384, TOPK_TILE = 512 };
static cxla_status topk_passes(builder *b, cx_instr *in);

static cxla_status own_kernel(builder *b, cx_instr *in) {
  const cx_instr_kernel *k = cx_emit_instr_kernel(in);
  const char *why = "no GPU code for this custom-call target";
  if (!k || !k->ok(in, &why)) return refuse(b, in, why);
  cx_topk_plan tp;
  if (cx_emit_topk_plan(in, 1, &tp) && tp.n > TOPK_ONE_KERNEL_ROW) return topk_passes(b, in);
  for (int q = 0; in->op == CX_OP_SCATTER && q < in->nops / 2; q++) {
    int d = leaf_slot(b, in, q), f = leaf_slot(b, in->ops[q], 0);
    if (d < 0 || f < 0) return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
    if (d == f || !b->p->bufs.slots[d].size) continue;
    cx_gpu_step *s = new_step(b);
    if (!s) return cx_oom(b->ctx);
    *s = (cx_gpu_step){.kind = CX_GPU_COPY, .in = in, .dst = d, .src = f};
  }
  return launch(b, in, k->emit);
}

/* Rows a sort places in one kernel (a thread's n comparisons: n^2 a row); a longer row is
 * sorted in tiles of SORT_TILE and merged, log2(row / tile) passes. */
enum { SORT_ONE_KERNEL_ROW = 16384, SORT_TILE = 512 };

/* the merge passes' scratch: one copy of every output, from offset 0 of the executable's
 * scratch memory (the steps of one execution run in order, so every sort can share it);
 * returns the first of n scratch slot numbers (past the assignment's slots, gpu_exec.c) */
static int sort_scratch(builder *b, const cx_instr *in) {
  cx_gpu_prog *p = b->p;
  int first = p->bufs.nslots + p->nscratch;
  if (!cx_vec_reserve((void **)&p->scratch_off, &b->scratch_cap, p->nscratch + in->nops, sizeof *p->scratch_off))
    return -1;
  int64_t at = 0;
  for (int q = 0; q < in->nops; q++) {
    p->scratch_off[p->nscratch++] = at;
    at += (cx_shape_bytes(&in->ops[q]->shape) + 255) & ~(int64_t)255;
  }
  if (at > p->scratch_size) p->scratch_size = at;
  return first;
}

/* Scratch slots of the given sizes, from offset 0 of the executable's scratch memory (as
 * sort_scratch); the first slot number, or -1 without memory. */
static int scratch_slots(builder *b, int n, const int64_t *bytes) {
  cx_gpu_prog *p = b->p;
  int first = p->bufs.nslots + p->nscratch;
  if (!cx_vec_reserve((void **)&p->scratch_off, &b->scratch_cap, p->nscratch + n, sizeof *p->scratch_off)) return -1;
  int64_t at = 0;
  for (int q = 0; q < n; q++) {
    p->scratch_off[p->nscratch++] = at;
    at += (bytes[q] + 255) & ~(int64_t)255;
  }
  if (at > p->scratch_size) p->scratch_size = at;
  return first;
}

/* A top-k of rows past TOPK_ONE_KERNEL_ROW (cg.h's cx_topk_plan): candidate runs from tiles
 * of TOPK_TILE, merged in pairs until one run is left; the runs alternate between two
 * scratch buffers sized for the largest level, and the last merge writes the result. */
static cxla_status topk_passes(builder *b, cx_instr *in) {
  cx_topk_plan p;
  if (!cx_emit_topk_plan(in, TOPK_TILE, &p)) return refuse(b, in, "no GPU code for this top-k");
  int64_t most = 0;
  for (int64_t m = p.ntiles, cap = p.cap0; m > 1; m = (m + 1) / 2, cap = 2 * cap < p.k ? 2 * cap : p.k)
    if (m * cap > most) most = m * cap;
  int64_t bytes[2] = {4 * p.rows * most, 4 * p.rows * most};
  int runs[2] = {scratch_slots(b, 2, bytes), 0};
  runs[1] = runs[0] + 1;
  int vals = leaf_slot(b, in, 0), idx = leaf_slot(b, in, 1), x = leaf_slot(b, in->ops[0], 0);
  if (runs[0] < 0) return cx_oom(b->ctx);
  if (vals < 0 || idx < 0 || x < 0) return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  int *slots = cx_malloc(2 * sizeof *slots);
  if (!slots) return cx_oom(b->ctx);
  slots[0] = runs[0], slots[1] = x;
  cx_kernel kn;
  cxla_status st = cx_emit_topk_tiles(&b->cg, in, &p, &kn);
  CX_TRY(add_launch(b, in, st, &kn, -1, slots, 2, 1, 1));
  int cur = 0;
  for (int64_t m = p.ntiles, cap = p.cap0; m > 1; cur = !cur) {
    int64_t m_out = (m + 1) / 2, cap_out = m_out == 1 ? p.k : 2 * cap < p.k ? 2 * cap : p.k;
    int final = m_out == 1, n = final ? 4 : 3;
    if (!(slots = cx_malloc(sizeof *slots * (size_t)n))) return cx_oom(b->ctx);
    if (final) slots[0] = vals, slots[1] = idx, slots[2] = x, slots[3] = runs[cur];
    else slots[0] = runs[!cur], slots[1] = x, slots[2] = runs[cur];
    st = cx_emit_topk_merge(&b->cg, in, &p, m, cap, cap_out, &kn);
    CX_TRY(add_launch(b, in, st, &kn, -1, slots, n, final ? 2 : 1, 1));
    m = m_out, cap = cap_out;
  }
  return CXLA_OK;
}

/* rng: a kernel (codegen/rng_emit.c). Inside a loop the values depend on how often the
 * instruction ran before in the execution (interp/rng.c): a u64 counter in the executable's
 * scratch memory, zeroed when an execution starts (gpu_exec.c), read by the kernel and
 * advanced by a one-thread kernel after it, so a loop captured as a graph counts too. */
static cxla_status rng(builder *b, cx_instr *in) {
  const char *why = NULL;
  if (!cx_emit_rng_ok(in, &why)) return refuse(b, in, why);
  int counted = b->loops > 0, n = counted ? 4 : 3, word = -1;
  if (counted) {
    cx_gpu_prog *p = b->p;
    word = p->bufs.nslots + p->nscratch;
    if (!cx_vec_reserve((void **)&p->scratch_off, &b->scratch_cap, p->nscratch + 1, sizeof *p->scratch_off) ||
        !cx_vec_reserve((void **)&b->rng_words, &b->rng_cap, b->nrng + 1, sizeof *b->rng_words))
      return cx_oom(b->ctx);
    b->rng_words[b->nrng] = p->nscratch;
    p->scratch_off[p->nscratch++] = 8 * (int64_t)b->nrng++; /* relative: rng_place adds the base */
  }
  int *slots = cx_malloc(sizeof *slots * 4);
  if (!slots) return cx_oom(b->ctx);
  slots[0] = leaf_slot(b, in, 0), slots[1] = leaf_slot(b, in->ops[0], 0), slots[2] = leaf_slot(b, in->ops[1], 0);
  slots[3] = word;
  if (slots[0] < 0 || slots[1] < 0 || slots[2] < 0) {
    cx_free(slots);
    return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  }
  cx_kernel kn;
  cxla_status st = cx_emit_rng_kernel(&b->cg, in, counted, &kn);
  CX_TRY(add_launch(b, in, st, &kn, -1, slots, n, 1, 1));
  if (!counted) return CXLA_OK;
  int *one = cx_malloc(sizeof *one);
  if (!one) return cx_oom(b->ctx);
  *one = word;
  st = cx_emit_rng_count_kernel(&b->cg, in, &kn);
  return add_launch(b, in, st, &kn, -1, one, 1, 1, 1);
}

/* the run counters after everything else in the scratch memory (a sort's passes use it from
 * offset 0 at any time) */
static void rng_place(builder *b) {
  cx_gpu_prog *p = b->p;
  if (!b->nrng) return;
  p->rng_off = (p->scratch_size + 255) & ~(int64_t)255;
  for (int j = 0; j < b->nrng; j++) p->scratch_off[b->rng_words[j]] += p->rng_off;
  p->rng_bytes = 8 * (int64_t)b->nrng;
  p->scratch_size = p->rng_off + p->rng_bytes;
}

static cxla_status sort(builder *b, cx_instr *in) {
  const cx_instr_kernel *k = cx_emit_instr_kernel(in);
  const char *why = NULL;
  if (!k || !k->ok(in, &why)) return refuse(b, in, why ? why : "no GPU code for this sort");
  int64_t len = in->ops[0]->shape.dims[in->a.dims.v[0]];
  if (len <= SORT_ONE_KERNEL_ROW) return own_kernel(b, in);
  int n = in->nops, out[16], src[16], scratch = sort_scratch(b, in);
  if (scratch < 0) return cx_oom(b->ctx);
  for (int q = 0; q < n; q++) {
    out[q] = leaf_slot(b, in, q), src[q] = leaf_slot(b, in->ops[q], 0);
    if (out[q] < 0 || src[q] < 0) return cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  }
  int passes = 1, alias = 0;
  for (int64_t w = SORT_TILE; w < len; w *= 2) passes++;
  for (int q = 0; q < n; q++)
    for (int j = 0; j < n; j++) alias |= out[q] == src[j];
  /* The passes alternate between the result and the scratch, the last one writing the result.
   * A result in its operand's memory must not be the first pass's destination: one more merge,
   * of runs as long as the row (a copy), then makes the count even. */
  if (alias && passes % 2) passes++;
  int into_out = passes % 2;
  const int *from = src;
  int64_t width = 0;
  for (int pass = 0; pass < passes; pass++, into_out = !into_out) {
    int *slots = cx_malloc(sizeof *slots * (size_t)(2 * n));
    if (!slots) return cx_oom(b->ctx);
    for (int q = 0; q < n; q++) slots[q] = into_out ? out[q] : scratch + q, slots[n + q] = from[q];
    cx_kernel kn;
    cxla_status st = pass == 0 ? cx_emit_sort_tiles(&b->cg, in, SORT_TILE, &kn) : cx_emit_sort_merge(&b->cg, in, width, &kn);
    CX_TRY(add_launch(b, in, st, &kn, -1, slots, 2 * n, n, 1));
    from = b->p->steps[b->p->nsteps - 1].slots;
    width = width ? 2 * width : SORT_TILE;
  }
  return CXLA_OK;
}

/* What cuBLASLt computes natively: f16/bf16 too, accumulating in f32. */
static const cx_gemm_target cublaslt = {.half = 1};

/* A dot the library lowering left in GEMM form (operands in a BLAS layout, integer dots
 * turned into reduce fusions). */
static cxla_status gemm(builder *b, cx_instr *in) {
  cx_gemm_plan plan;
  const char *why = "not a dot";
  if (!cx_dot_plan(in, &cublaslt, &plan, &why)) return refuse(b, in, why);
  int *slots = cx_malloc(3 * sizeof *slots);
  if (!slots) return cx_oom(b->ctx);
  slots[0] = leaf_slot(b, in, 0), slots[1] = leaf_slot(b, in->ops[0], 0), slots[2] = leaf_slot(b, in->ops[1], 0);
  int have = slots[0] >= 0 && slots[1] >= 0 && slots[2] >= 0;
  cx_gpu_step *s = have ? new_step(b) : NULL;
  if (!s) {
    cx_free(slots);
    return have ? cx_oom(b->ctx) : cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  }
  *s = (cx_gpu_step){.kind = CX_GPU_GEMM, .in = in, .nargs = 3, .slots = slots, .gemm = plan};
  b->p->ngemms++;
  return CXLA_OK;
}

/* A library call's step: the slots of in's result leaves, then of its operands' leaves. */
static cxla_status library_step(builder *b, cx_instr *in, cx_gpu_step tmpl) {
  const cx_buffers *bufs = &b->p->bufs;
  int n = bufs->nleaves[in->id];
  for (int j = 0; j < in->nops; j++) n += bufs->nleaves[in->ops[j]->id];
  int *slots = cx_malloc(sizeof *slots * (size_t)(n ? n : 1)), k = 0, ok = 1;
  if (!slots) return cx_oom(b->ctx);
  for (int l = 0; l < bufs->nleaves[in->id]; l++) ok &= (slots[k++] = leaf_slot(b, in, l)) >= 0;
  for (int j = 0; j < in->nops; j++)
    for (int l = 0; l < bufs->nleaves[in->ops[j]->id]; l++) ok &= (slots[k++] = leaf_slot(b, in->ops[j], l)) >= 0;
  cx_gpu_step *s = ok ? new_step(b) : NULL;
  if (!s) {
    cx_free(slots);
    return ok ? cx_oom(b->ctx) : cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  }
  tmpl.in = in, tmpl.nargs = n, tmpl.slots = slots;
  *s = tmpl;
  return CXLA_OK;
}

static int64_t batch_of(const cx_shape *s) { /* the matrices in the two minor dims */
  int64_t n = 1;
  for (int d = 0; d + 2 < s->rank; d++) n *= s->dims[d];
  return n;
}

static int solver_type(cxla_type t) { return t == CXLA_F32 || t == CXLA_F64 || t == CXLA_C64 || t == CXLA_C128; }
static const char k_solver_types[] = "cuSOLVER and cuBLAS are called on f32, f64, c64 and c128 only";

static cxla_status linalg_step(builder *b, cx_instr *in, const cx_la_desc *d) {
  if (d->m > INT32_MAX || d->n > INT32_MAX || d->k > INT32_MAX || d->ucols > INT32_MAX || d->vrows > INT32_MAX)
    return refuse(b, in, "a matrix dimension over 2^31 - 1 (cuSOLVER takes 32-bit sizes)");
  b->p->nlinalg++;
  CX_TRY(library_step(b, in, (cx_gpu_step){.kind = CX_GPU_LINALG, .la = *d}));
  /* a batched cholesky may factor a matrix again from its operand (gpu_linalg.c): not when the
   * result is the operand's memory */
  cx_gpu_step *s = &b->p->steps[b->p->nsteps - 1];
  s->la_batched = cx_gpu_linalg_batched(d) && (d->routine != CX_LA_CHOLESKY || s->slots[0] != s->slots[1]);
  b->p->nlinalg_batched += s->la_batched;
  return CXLA_OK;
}

/* cholesky and triangular-solve as the cpu backend describes them (sequencer_linalg.c) */
static cxla_status cholesky(builder *b, cx_instr *in) {
  const cx_shape *a = &in->ops[0]->shape;
  if (!solver_type(a->type)) return refuse(b, in, k_solver_types);
  int64_t n = a->dims[a->rank - 1];
  cx_la_desc d = {.routine = CX_LA_CHOLESKY, .type = a->type, .batch = batch_of(a), .m = n, .n = n, .k = n,
                  .lower = in->a.lower != 0};
  return linalg_step(b, in, &d);
}

static cxla_status triangular_solve(builder *b, cx_instr *in) {
  const cx_shape *a = &in->ops[0]->shape, *x = &in->ops[1]->shape;
  if (!solver_type(a->type)) return refuse(b, in, k_solver_types);
  int t = in->a.transpose_a;
  cx_la_desc d = {.routine = CX_LA_TRSM, .type = a->type, .batch = batch_of(x), .m = x->dims[x->rank - 2],
                  .n = x->dims[x->rank - 1], .k = a->dims[a->rank - 1], .lower = in->a.lower != 0,
                  .left = in->a.left_side != 0, .trans = t == CX_TRANSPOSE_ADJOINT ? 2 : t == CX_TRANSPOSE_YES,
                  .unit = in->a.unit_diagonal != 0};
  return linalg_step(b, in, &d);
}

/* The LAPACK custom-calls, mapped as the cpu backend maps them (sequencer_linalg.c). Those
 * cuSOLVER has the routine for are LINALG steps; the others run the cpu's routine on the host
 * (HOST_LA: gpu_host_linalg.c), each for the reason given here. Other targets run as kernels of
 * their own (codegen's cx_instr_kernel) or are refused. */
static const struct { int routine; const char *host; } k_lapack[CX_CC_KIND_COUNT] = {
  [CX_CC_POTRF] = {CX_LA_POTRF + 1, NULL}, [CX_CC_TRSM] = {CX_LA_TRSM + 1, NULL},
  [CX_CC_GETRF] = {CX_LA_GETRF + 1, NULL}, [CX_CC_GEQRF] = {CX_LA_GEQRF + 1, NULL},
  [CX_CC_ORGQR] = {CX_LA_ORGQR + 1, NULL}, [CX_CC_SYEVD] = {CX_LA_SYEVD + 1, NULL},
  [CX_CC_GESDD] = {CX_LA_GESDD + 1, NULL}, [CX_CC_GESVD] = {CX_LA_GESVD + 1, NULL},
  [CX_CC_SYTRD] = {CX_LA_SYTRD + 1, NULL}, [CX_CC_ORMQR] = {CX_LA_ORMQR + 1, NULL},
  [CX_CC_GEES] = {CX_LA_GEES + 1, "no NVIDIA library has a Schur decomposition"},
  [CX_CC_GEHRD] = {CX_LA_GEHRD + 1, "no NVIDIA library has a Hessenberg reduction"},
  [CX_CC_GEQP3] = {CX_LA_GEQP3 + 1, "no NVIDIA library has a column-pivoted QR"},
  [CX_CC_GEEV] = {CX_LA_GEEV + 1, "cuSOLVER's Xgeev (CUDA 12.6+) is not called yet: its real eigenvectors come in "
                                  "LAPACK's packed pairs and jaxlib's NaN rule needs the input checked, both kernels to write"},
  [CX_CC_GTSV] = {CX_LA_GTSV + 1, "cuSPARSE's gtsv2 leaves the diagonals as they are and has no info word; the target's "
                                  "results are LAPACK's factored diagonals and info"},
  [CX_CC_GTSV_PERTURBED] = {CX_LA_GTSV_PERTURBED + 1, "jaxlib's own solve (rt/gtsv_perturbed.c), in no NVIDIA library"},
};

/* why a LAPACK custom-call target runs on the host (NULL: on cuSOLVER; "" not LAPACK) */
const char *cx_gpu_lapack_host_reason(int kind) {
  if (kind < 0 || kind >= CX_CC_KIND_COUNT || !k_lapack[kind].routine) return "";
  return k_lapack[kind].host;
}

static cxla_status custom_call(builder *b, cx_instr *in) {
  cx_lapack_call c;
  int t = cx_cc_target_of(in), kind = t < 0 ? -1 : (int)cx_cc_info_of((cx_cc_target)t)->kind;
  /* a host callback: a host step (cx_interp_check_module has refused the ones the process's
   * dispatcher does not know, and those with tuple operands or nested results) */
  if (kind == CX_CC_HOST_CALLBACK) return library_step(b, in, (cx_gpu_step){.kind = CX_GPU_CALLBACK});
  int r = kind < 0 ? 0 : k_lapack[kind].routine;
  if (!r || !cx_lapack_call_of(in, &c)) return own_kernel(b, in);
  if (!solver_type(c.type)) return refuse(b, in, k_solver_types);
  cx_la_desc d = {.routine = r - 1, .type = c.type, .batch = c.batch, .m = c.m, .n = c.n, .k = c.k, .lower = c.lower,
                  .left = c.left, .trans = c.trans, .unit = c.unit_diag, .mode = c.mode, .mode_left = c.mode_left};
  if (d.routine == CX_LA_GESDD || d.routine == CX_LA_GESVD) {
    const cx_shape *u = &in->shape.tuple[2], *vt = &in->shape.tuple[3];
    d.ucols = u->dims[u->rank - 1];
    d.vrows = vt->dims[vt->rank - 2];
  }
  if (d.routine == CX_LA_ORMQR) d.ucols = c.acols;
  if (d.routine == CX_LA_GEHRD) d.ucols = c.ilo, d.vrows = c.ihi;
  if (!k_lapack[kind].host) return linalg_step(b, in, &d);
  if (d.m > INT32_MAX || d.n > INT32_MAX || d.k > INT32_MAX || d.ucols > INT32_MAX || d.vrows > INT32_MAX)
    return refuse(b, in, "a matrix dimension over 2^31 - 1 (LAPACK takes 32-bit sizes)");
  b->p->nhost_linalg++;
  return library_step(b, in, (cx_gpu_step){.kind = CX_GPU_HOST_LA, .la = d});
}

/* an fft: the transform over the minor fft_length dims, the leading ones a batch */
static cxla_status fft(builder *b, cx_instr *in) {
  const cx_attrs *a = &in->a;
  cxla_type part = cx_type_part(in->ops[0]->shape.type);
  cx_gpu_fft f = {.type = a->fft_type, .rank = (int)a->fft_length.n, .f64 = part == CXLA_F64, .scale = 1};
  if (f.rank < 1 || f.rank > 3 || (part != CXLA_F32 && part != CXLA_F64)) return refuse(b, in, "malformed fft");
  int64_t whole = 1, half = 1;
  for (int i = 0; i < f.rank; i++) {
    int64_t n = a->fft_length.v[i];
    if (n < 1 || n > INT32_MAX) return refuse(b, in, "cuFFT takes lengths from 1 to 2^31 - 1");
    f.n[i] = (int)n;
    whole *= n;
    half *= i + 1 < f.rank ? n : n / 2 + 1;
  }
  f.in_dist = f.type == CX_FFT_IRFFT ? half : whole;
  f.out_dist = f.type == CX_FFT_RFFT ? half : whole;
  f.batch = cx_shape_elems(&in->shape) / f.out_dist;
  if (f.type == CX_FFT_IFFT || f.type == CX_FFT_IRFFT) f.scale = 1.0 / (double)whole;
  if (f.batch > INT32_MAX || f.in_dist > INT32_MAX || f.out_dist > INT32_MAX ||
      f.batch * f.out_dist * (f.type == CX_FFT_IRFFT ? 1 : 2) > INT32_MAX)
    return refuse(b, in, "a batch of transforms over 2^31 - 1 elements (cuFFT's int sizes)");
  if (!f.batch) return CXLA_OK; /* nothing to compute */
  b->p->nffts++;
  return library_step(b, in, (cx_gpu_step){.kind = CX_GPU_FFT, .fft = f});
}

/* a ragged-dot in the canonical form (passes/ragged_dot_lowering.c): a cuBLAS GEMM per group */
static cxla_status ragged_dot(builder *b, cx_instr *in) {
  const cx_shape *l = &in->ops[0]->shape, *r = &in->ops[1]->shape, *gs = &in->ops[2]->shape;
  int contracting = in->shape.rank == 4;
  if (l->rank != 5 || gs->rank != 3 || gs->type != CXLA_S64 || r->rank != (contracting ? 5 : 4))
    return refuse(b, in, "ragged-dot not in the canonical form (passes/ragged_dot_lowering.c)");
  if (!solver_type(in->shape.type)) return refuse(b, in, "an integer ragged-dot (cuBLAS multiplies floats only)");
  cx_gpu_step t = {.kind = CX_GPU_RAGGED, .sel = contracting, .nbranch = in->shape.type,
                   .ragged = {l->dims[0], l->dims[1], l->dims[2], l->dims[3], l->dims[4], r->dims[r->rank - 1], gs->dims[2]}};
  if (t.ragged[2] * t.ragged[3] > INT32_MAX || t.ragged[4] > INT32_MAX || t.ragged[5] > INT32_MAX)
    return refuse(b, in, "a group's GEMM is larger than cuBLAS's int sizes");
  b->p->nragged++;
  return library_step(b, in, t);
}

/* infeed and outfeed: host steps (gpu_host.c) over the data's array leaves */
static cxla_status feed(builder *b, cx_instr *in) {
  const cx_instr *of = in->op == CX_OP_INFEED ? in : in->ops[0];
  if (in->op == CX_OP_INFEED && (in->shape.type != CXLA_TUPLE || in->shape.ntuple != 2))
    return refuse(b, in, "an infeed whose result is not (data, token)");
  int n = cx_shape_leaf_count(in->op == CX_OP_INFEED ? &in->shape.tuple[0] : &of->shape);
  int *slots = cx_malloc(sizeof *slots * (size_t)(n ? n : 1)), ok = 1;
  if (!slots) return cx_oom(b->ctx);
  for (int l = 0; l < n; l++) ok &= (slots[l] = leaf_slot(b, of, l)) >= 0;
  cx_gpu_step *s = ok ? new_step(b) : NULL;
  if (!s) {
    cx_free(slots);
    return ok ? cx_oom(b->ctx) : cx_error(b->ctx, CXLA_ERR_INTERNAL, "gpu backend: %s has no slot", in->name);
  }
  *s = (cx_gpu_step){.kind = in->op == CX_OP_INFEED ? CX_GPU_INFEED : CX_GPU_OUTFEED, .in = in, .nargs = n, .slots = slots};
  return CXLA_OK;
}

typedef cxla_status (*step_fn)(builder *b, cx_instr *in);
static cxla_status comp_steps(builder *b, cx_comp *c);

static cxla_status nothing(builder *b, cx_instr *in) { /* slots alias their sources (buffers.c) */
  (void)b, (void)in;
  return CXLA_OK;
}
static cxla_status copy(builder *b, cx_instr *in) { return copy_leaves(b, in, in->ops[0]); }

/* the one-element predicate or index of a loop or conditional, as the host will read it */
static int selector(builder *b, const cx_instr *x) {
  cxla_type t = x->shape.type;
  return (t == CXLA_PRED || t == CXLA_S32) && cx_shape_elems(&x->shape) == 1 ? leaf_slot(b, x, 0) : -1;
}

/* init copies into the loop state, the WHILE step, the condition's steps, the body's and the
 * copies of its result into the state (buffer assignment gives the state one set of slots) */
static cxla_status loop(builder *b, cx_instr *in) {
  cx_comp *cond = in->called[0], *body = in->called[1];
  CX_TRY(copy_leaves(b, in, in->ops[0]));
  int w = b->p->nsteps, sel = selector(b, cond->root);
  if (sel < 0) return refuse(b, in, "the loop condition is not a pred scalar with a slot");
  if (!new_step(b)) return cx_oom(b->ctx);
  b->loops++;
  cxla_status st = comp_steps(b, cond);
  int at_body = b->p->nsteps;
  if (st == CXLA_OK) st = comp_steps(b, body);
  b->loops--;
  CX_TRY(st);
  CX_TRY(copy_leaves(b, in, body->root));
  int64_t trips;
  if (!cx_while_trip_count(in, &trips)) trips = -1;
  else b->p->nloops_known++;
  b->p->steps[w] = (cx_gpu_step){.kind = CX_GPU_WHILE, .in = in, .sel = sel, .body = at_body, .end = b->p->nsteps,
                                 .trips = trips};
  return CXLA_OK;
}

static cxla_status conditional(builder *b, cx_instr *in) {
  int n = in->ncalled, sel = selector(b, in->ops[0]);
  if (n < 1 || sel < 0) return refuse(b, in, "the branch index is not a pred or s32 scalar with a slot");
  int *at = cx_malloc(sizeof *at * (size_t)(n + 1)), c = b->p->nsteps;
  if (!at || !new_step(b)) {
    cx_free(at);
    return cx_oom(b->ctx);
  }
  cxla_status s = CXLA_OK;
  for (int k = 0; k < n && s == CXLA_OK; k++) {
    at[k] = b->p->nsteps;
    s = comp_steps(b, in->called[k]);
    if (s == CXLA_OK) s = copy_leaves(b, in, in->called[k]->root);
  }
  at[n] = b->p->nsteps;
  b->p->steps[c] = (cx_gpu_step){.kind = CX_GPU_COND, .in = in, .sel = sel, .nbranch = n, .slots = at, .end = at[n]};
  return s;
}

/* What each op becomes; an op not here is refused unless it only re-labels bytes, with the
 * reason ops.def's gpu column gives (the ops it marks EMIT run inside kernel fusions). */
static const step_fn k_steps[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = nothing, [CX_OP_CONSTANT] = nothing, [CX_OP_TUPLE] = nothing,
  [CX_OP_GET_TUPLE_ELEMENT] = nothing, [CX_OP_COPY] = copy, [CX_OP_FUSION] = fusion, [CX_OP_DOT] = gemm,
  [CX_OP_WHILE] = loop, [CX_OP_CONDITIONAL] = conditional, [CX_OP_SORT] = sort,
  [CX_OP_AFTER_ALL] = nothing, /* a token: no bytes */ [CX_OP_ADD_DEPENDENCY] = copy, /* its operand, ordered */
  [CX_OP_TOPK] = own_kernel, [CX_OP_SCATTER] = own_kernel,
  [CX_OP_SELECT_AND_SCATTER] = own_kernel, [CX_OP_RNG_BIT_GENERATOR] = own_kernel, [CX_OP_CUSTOM_CALL] = custom_call,
  [CX_OP_CHOLESKY] = cholesky, [CX_OP_TRIANGULAR_SOLVE] = triangular_solve, [CX_OP_FFT] = fft,
  [CX_OP_RAGGED_DOT] = ragged_dot, [CX_OP_RNG] = rng, [CX_OP_INFEED] = feed, [CX_OP_OUTFEED] = feed,
};

/* why an instruction that has no step of its own is refused */
static const char *top_level_why(cx_op op) {
  cx_op_gpu g = cx_op_gpu_of(op);
  if (g == CX_GPU_REFUSED || g == CX_GPU_NONE || g == CX_GPU_REWRITTEN) return cx_op_gpu_why(op);
  return "it runs only inside a kernel fusion, and this one is not in one";
}

static cxla_status comp_steps(builder *b, cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (k_steps[in->op]) CX_TRY(k_steps[in->op](b, in));
    else if (in->nops == 1 && cx_buffers_instr_is_alias(in)) CX_TRY(copy_leaves(b, in, in->ops[0]));
    else CX_TRY(refuse(b, in, top_level_why(in->op)));
    if (b->cg.status != CXLA_OK) return b->cg.status;
  }
  return CXLA_OK;
}

static cxla_status passes(cxla_context *ctx, cx_module **mp, const cx_flags *flags) {
  cx_pass_opts po = cx_pass_opts_from_flags(flags);
  cx_pass_ctx pc = {.opts = &po};
  CX_TRY(cx_interp_check_module(*mp));
  CX_TRY(cx_pass_pipeline(&pc, *mp));
  CX_TRY(cx_module_compact(mp)); /* the executable keeps it: fusion's dead clones go */
  cx_module *m = *mp;
  CX_TRY(cx_lower_library_ops(m, &cublaslt)); /* dots in GEMM form (f16/bf16 stay so), convolutions as kernels */
  CX_TRY(cx_fusion_plan_module(m));
  (void)ctx;
  return cx_dump_finish(&pc, m);
}

cxla_status cx_gpu_build(cxla_context *ctx, cx_module *m, const cx_flags *flags, const cx_nvptx_arch *arch,
                         unsigned mode, cx_gpu_prog *out) {
  memset(out, 0, sizeof *out);
  out->m = m;
  out->arch = *arch;
  out->graph_kernel = -1;
  CX_TRY(passes(ctx, &out->m, flags));
  m = out->m;
  /* a donated parameter's memory may hold a result leaf (gpu_exec.c hands it to the result) */
  CX_TRY(cx_buffers_assign_donated(m, flags->donated, flags->ndonated, &out->bufs));
  builder b = {.ctx = ctx, .p = out, .lenient = (mode & CX_GPU_LENIENT) != 0, .tf32 = flags->gpu_tf32, .mode = mode};
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(m->name ? m->name : "cxla", llctx);
  cx_cg_init(&b.cg, ctx, m, llctx, mod, &cx_target_nvptx);
  cxla_status s = comp_steps(&b, m->entry);
  rng_place(&b);
  cx_free(b.rng_words);
  cx_kreuse_free(&b.reuse);
  cx_cg_dispose(&b.cg);
  if (s == CXLA_OK && (mode & CX_GPU_GRAPHS)) s = cx_gpu_graph_plan(ctx, out, mod);
  if (s == CXLA_OK) s = cx_libdevice_link(ctx, mod, flags->gpu_libdevice);
  if (s == CXLA_OK && (mode & CX_GPU_LLVM_IMAGE)) s = cx_ptx_emit_llvm(ctx, mod, arch, flags->opt_level, &out->ptx);
  else if (s == CXLA_OK) s = cx_ptx_emit(ctx, mod, arch, flags->opt_level, &out->ptx);
  LLVMDisposeModule(mod);
  LLVMContextDispose(llctx);
  return s;
}

void cx_gpu_prog_free(cx_gpu_prog *p) {
  for (int i = 0; i < p->nsteps; i++) cx_free(p->steps[i].slots);
  cx_free(p->steps);
  cx_free(p->scratch_off);
  cx_free(p->kernels);
  cx_free(p->ptx);
  cx_buffers_free(&p->bufs);
  cx_module_free(p->m);
  memset(p, 0, sizeof *p);
}

void cx_gpu_grid(int64_t total, unsigned *block, unsigned *grid) {
  *block = 256;
  int64_t g = (total + 255) / 256;
  *grid = (unsigned)(g < 1 ? 1 : g);
}
