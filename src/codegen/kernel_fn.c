/* kernel_fn.c — the kernel function scaffold (see emit.h): the target's entry function (its
 * kernel ABI: cg->target) around an internal body whose pointer parameters carry noalias,
 * plus verification and cleanup on failure. */
#include <stdio.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include "codegen/emit.h"

static void add_fn_attr(cx_cg *cg, LLVMValueRef fn, LLVMAttributeIndex at, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, at, LLVMCreateEnumAttribute(cg->llctx, kind, 0));
}

void cx_kalias_of_slots(cx_kalias *a, const int *slots, int nout, int n) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < n && i < 64; i++) a->to[i] = (signed char)i;
  for (int i = 0; i < nout && i < 64; i++)
    for (int j = 0; j < n && j < 64; j++)
      if (j != i && slots[j] == slots[i]) {
        a->mask |= (1ull << i) | (1ull << j);
        if (j > i && a->to[j] == j) a->to[j] = (signed char)i;
      }
}

/* The output whose pointer every marked operand can be read through, per argument (-1 for
 * none), when the pairs allow it: each marked operand shares exactly one output's buffer and
 * no two outputs share one. */
static int through_outputs(const cx_kalias *a, int nout, int nargs, int *via) {
  if (!a || !a->mask) return 0;
  for (int i = 0; i < nargs; i++) via[i] = -1;
  for (int i = 0; i < nargs && i < 64; i++) {
    if (!(a->mask >> i & 1)) continue;
    int o = a->to[i];
    if (i < nout) {
      if (o != i) return 0; /* two outputs in one buffer */
      continue;
    }
    if (o < 0 || o >= nout) return 0;
    via[i] = o;
  }
  return 1;
}

cxla_status cx_kfn_begin(cx_kfn *k, cx_cg *cg, const cx_instr *fusion, int nargs, const cx_kalias *alias,
                         int shared) {
  memset(k, 0, sizeof *k);
  k->cg = cg;
  k->nargs = nargs;
  if (nargs > CX_EMIT_MAX_ARGS)
    return cx_cg_fail(cg, CXLA_ERR_UNSUPPORTED, "codegen: %s has %d kernel arguments (max %d)",
                      fusion->name, nargs, CX_EMIT_MAX_ARGS);
  /* a symbol-safe name: kernel number + the fusion's name */
  int at = snprintf(k->name, sizeof k->name, "cx_k%d_", cg->nkernels++);
  for (const char *s = fusion->name ? fusion->name : "fusion"; *s && at < (int)sizeof k->name - 1; s++)
    k->name[at++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ? *s : '_');
  k->name[at] = 0;

  k->outer = cg->target->kernel_declare(cg, k->name, nargs);
  LLVMTypeRef it[CX_EMIT_MAX_ARGS + 2];
  for (int i = 0; i < nargs; i++) it[i] = cg->t_ptr;
  it[nargs] = it[nargs + 1] = cg->t_i64;
  char body[80];
  snprintf(body, sizeof body, "%s.body", k->name);
  k->inner = LLVMAddFunction(cg->mod, body, LLVMFunctionType(cg->t_void, it, (unsigned)nargs + 2, 0));
  LLVMSetLinkage(k->inner, LLVMInternalLinkage);
  add_fn_attr(cg, k->inner, LLVMAttributeFunctionIndex, "alwaysinline");
  add_fn_attr(cg, k->inner, LLVMAttributeFunctionIndex, "nounwind");
  /* In place (`shared`: the flagged arguments ARE the buffers their pairs name): each operand
   * sharing an output's memory is read through that output's own pointer (it is read only at
   * the output's index, which check_in_place guarantees). LLVM then sees one pointer with
   * dependence distance 0 and vectorises without a runtime overlap check, which, with out ==
   * in, would otherwise send every element to the scalar loop (an Adam update writing the
   * parameter and both moments in place ran scalar: 3x slower). Every parameter keeps noalias:
   * the aliased operand parameters are never dereferenced. */
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  int via[CX_EMIT_MAX_ARGS];
  uint64_t may_alias = alias ? alias->mask : 0;
  int through_output = shared && nout > 0 && through_outputs(alias, nout, nargs, via);
  for (int i = 0; i < nargs; i++)
    if (through_output || !(i < 64 && (may_alias >> i) & 1))
      add_fn_attr(cg, k->inner, (LLVMAttributeIndex)(i + 1), "noalias");

  /* entry: the buffers and the range as the target passes them, then the body */
  LLVMBuilderRef b = cg->b;
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->llctx, k->outer, "entry"));
  LLVMValueRef args[CX_EMIT_MAX_ARGS + 2];
  cg->target->kernel_args(cg, k->outer, nargs, args);
  LLVMBuildCall2(b, LLVMGlobalGetValueType(k->inner), k->inner, args, (unsigned)nargs + 2, "");
  LLVMBuildRetVoid(b);

  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->llctx, k->inner, "entry"));
  for (int i = 0; i < nargs; i++) k->ptr[i] = LLVMGetParam(k->inner, (unsigned)i);
  if (through_output)
    for (int i = nout; i < nargs; i++)
      if (via[i] >= 0) k->ptr[i] = k->ptr[via[i]];
  k->begin = LLVMGetParam(k->inner, (unsigned)nargs);
  k->end = LLVMGetParam(k->inner, (unsigned)nargs + 1);
  cx_gen_init(&k->g, cg, k->inner, k->name);
  return CXLA_OK;
}

int cx_kfn_bind_params(cx_kfn *k, const cx_comp *body, int first) {
  cx_gen_binding b = {body, k->ptr + first, NULL, k->nargs - first};
  return cx_gen_push_binding(&k->g, &b);
}

cxla_status cx_kfn_end(cx_kfn *k, cx_kernel *out, int64_t total, int64_t grain, int nout, int nin) {
  cx_cg *cg = k->cg;
  cxla_status st = cg->status;
  cx_gen_dispose(&k->g);
  if (st == CXLA_OK) {
    LLVMBuildRetVoid(cg->b);
    if (LLVMVerifyFunction(k->inner, LLVMReturnStatusAction)) {
      char *msg = NULL;
      LLVMVerifyModule(cg->mod, LLVMReturnStatusAction, &msg);
      st = cx_cg_fail(cg, CXLA_ERR_INTERNAL, "codegen: invalid LLVM IR for kernel %s: %.300s", k->name,
                      msg ? msg : "");
      LLVMDisposeMessage(msg);
    }
  }
  if (st != CXLA_OK) {
    if (k->outer) LLVMDeleteFunction(k->outer);
    if (k->inner) LLVMDeleteFunction(k->inner);
    k->outer = k->inner = NULL;
    return st;
  }
  /* a vector width the body asked for (libmvec.c) applies where the body is inlined and
   * vectorised: in the entry function */
  if (k->outer != k->inner && cx_cg_prefers_wide_vectors(k->inner)) cx_cg_prefer_wide_vectors(cg, k->outer);
  memset(out, 0, sizeof *out);
  out->fn = k->outer;
  snprintf(out->name, sizeof out->name, "%s", k->name);
  out->total = total;
  out->grain = grain < 1 ? 1 : grain;
  out->nout = nout;
  out->nin = nin;
  return CXLA_OK;
}

int cx_emit_out_leaves(const cx_shape *s, const cx_shape **leaves, int max) {
  if (s->type != CXLA_TUPLE) {
    if (!cx_type_is_array(s->type) || max < 1) return -1;
    leaves[0] = s;
    return 1;
  }
  if (s->ntuple > max) return -1;
  for (int i = 0; i < s->ntuple; i++) {
    if (s->tuple[i].type == CXLA_TUPLE || !cx_type_is_array(s->tuple[i].type)) return -1;
    leaves[i] = &s->tuple[i];
  }
  return s->ntuple;
}
