/* inline.c — replaces every `call` by a copy of its callee's instructions (parameters become
 * the call's operands, the callee's root takes the call's place), in every computation except
 * fused ones, as XLA's CallInliner does before the simplifier, so that later passes see through
 * calls. Callees that nothing calls any more are removed from the module.
 *
 * Fusions in the input (XLA's optimised dumps have them: kLoop, kInput, kOutput, and kCustom
 * for another compiler's kernel such as XLA:CPU's YNNPACK dots) are inlined the same way: they
 * are XLA's decisions for XLA's emitters; cxla's fusion passes, which run later, decide again
 * for its own (a multi-output kInput fusion of reduces over different dimensions, which no
 * cxla emitter takes, or a dot inside a kCustom fusion, would otherwise run on the
 * interpreter).
 *
 * A callee may itself contain calls: its copy's calls are appended to the caller and visited
 * by the same loop, so nesting of any depth is flattened in one run. HLO forbids recursion;
 * a (malformed) recursive module would grow forever, so the copies are capped. */
#include "ir/clone.h"
#include "ir/edit.h"
#include "passes/pass.h"

#define CX_INLINE_MAX_INSTRS (1 << 22)

/* "add.12" -> "add": inlined copies get fresh numbers but keep the readable part. */
static const char *base_name(const char *name, char *buf, size_t n) {
  if (!name) return "inlined";
  size_t len = 0;
  while (name[len] && len + 1 < n) { buf[len] = name[len]; len++; }
  buf[len] = 0;
  size_t k = len;
  while (k > 0 && buf[k - 1] >= '0' && buf[k - 1] <= '9') k--;
  if (k > 0 && k < len && buf[k - 1] == '.') buf[k - 1] = 0;
  return buf;
}

/* Copies f's instructions into c for call `ci`; *result is the value that replaces the call. */
static cxla_status inline_call(cx_comp *c, cx_instr *ci, cx_instr **result) {
  cx_comp *f = ci->called[0];
  cx_module *m = c->module;
  int n = f->ninstrs;
  cx_instr **map = cx_calloc((size_t)(n ? n : 1), sizeof *map);
  cx_instr **ops = NULL;
  int64_t opcap = 0;
  cxla_status s = CXLA_OK;
  if (!map) return cx_oom(m->ctx);
  for (int i = 0; i < n; i++) f->instrs[i]->aux = (void *)(intptr_t)(i + 1);
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_instr *src = f->instrs[i];
    if (src->op == CX_OP_PARAMETER) {
      if (src->a.index < 0 || src->a.index >= ci->nops) {
        s = cx_error_at(m, ci->loc, CXLA_ERR_INTERNAL, "call %s: callee %s has parameter %lld but the call has %d operands",
                        ci->name ? ci->name : "?", f->name, (long long)src->a.index, ci->nops);
        break;
      }
      map[i] = ci->ops[src->a.index];
      continue;
    }
    if (!cx_vec_reserve((void **)&ops, &opcap, src->nops + 1, sizeof *ops)) { s = cx_oom(m->ctx); break; }
    for (int j = 0; j < src->nops; j++) {
      intptr_t k = (intptr_t)src->ops[j]->aux;
      if (src->ops[j]->parent != f || k <= 0 || k > i) {
        s = cx_error_at(m, src->loc, CXLA_ERR_INTERNAL, "inline: %s uses a value from outside %s", src->name, f->name);
        break;
      }
      ops[j] = map[k - 1];
    }
    if (s != CXLA_OK) break;
    cx_instr *cp = cx_instr_clone(c, src, ops);
    char buf[128];
    const char *name = cp ? cx_module_unique_name(m, base_name(src->name, buf, sizeof buf)) : NULL;
    if (!name) { s = CXLA_ERR_OUT_OF_MEMORY; break; }
    cp->name = name;
    map[i] = cp;
  }
  for (int i = 0; i < n; i++) f->instrs[i]->aux = NULL;
  if (s == CXLA_OK) {
    intptr_t r = -1;
    for (int i = 0; i < n; i++)
      if (f->instrs[i] == f->root) r = i;
    if (r < 0) s = cx_error(m->ctx, CXLA_ERR_INTERNAL, "inline: computation %s has no root", f->name);
    else *result = map[r];
  }
  cx_free(map);
  cx_free(ops);
  return s;
}

static int inlinable(const cx_instr *in) { return in->op == CX_OP_CALL || in->op == CX_OP_FUSION; }

/* Replaced calls record their replacement in aux; one sweep at the end redirects every use
 * (a replacement may itself be a call replaced later, hence the chains). */
static cxla_status inline_comp(cx_comp *c, int *count) {
  int inlined = 0;
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  for (int i = 0; i < c->ninstrs; i++) { /* c->ninstrs grows as callees are copied in */
    cx_instr *ci = c->instrs[i];
    if (!inlinable(ci) || ci->ncalled != 1 || !ci->called[0] || ci->called[0] == c) continue;
    if (c->ninstrs > CX_INLINE_MAX_INSTRS)
      return cx_error_at(c->module, ci->loc, CXLA_ERR_UNSUPPORTED,
                         "inline: computation %s grew past %d instructions (recursive calls?)", c->name,
                         CX_INLINE_MAX_INSTRS);
    cx_instr *r = NULL;
    CX_TRY(inline_call(c, ci, &r));
    ci->aux = r;
    inlined++;
  }
  if (!inlined) return CXLA_OK;
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    for (int j = 0; j < in->nops; j++)
      while (in->ops[j]->aux) in->ops[j] = in->ops[j]->aux;
  }
  while (c->root && c->root->aux) c->root = c->root->aux;
  for (int i = 0; i < c->ninstrs; i++)
    if (!c->instrs[i]->aux) c->instrs[n++] = c->instrs[i];
  c->ninstrs = n;
  for (int i = 0; i < n; i++) c->instrs[i]->aux = NULL;
  /* the copies were appended after the call's users */
  CX_TRY(cx_comp_resort(c, "inline"));
  *count += inlined;
  return CXLA_OK;
}

cxla_status cx_pass_inline_calls(cx_module *m, int *changed) {
  *changed = 0;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) s = inline_comp(m->comps[i], changed);
  cx_module_clear_comp_aux(m);
  if (s == CXLA_OK && *changed) cx_module_remove_unreachable(m);
  return s;
}
