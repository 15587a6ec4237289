/* codegen_harness.c — see codegen_harness.h. */
#include <stdint.h>
#include <time.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "codegen/emit.h"
#include "codegen/jit.h"
#include "codegen/libmvec.h"
#include "codegen/llvm_compile.h"
#include "codegen_harness.h"
#include "core/flags.h"
#include "ir/literal.h"
#include "ir/verify.h"
#include "passes/fusion_plan.h"
#include "passes/pass.h"
#include "text/hlo.h"

uint64_t cgt_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double unit(uint64_t *s) { return (double)(cgt_rand(s) >> 11) * 0x1p-53; }

cx_module *cgt_parse(const char *text, const char *file, int line) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s != CXLA_OK) {
    test_fail(file, line, "parse/verify: %s", cxla_context_errmsg(test_ctx()));
    cx_module_free(m);
    return NULL;
  }
  return m;
}

/* ---- inputs ---- */

static void fill_random(cxla_literal *lit, const cgt_opts *o, uint64_t *rng) {
  cxla_type t = lit->shape.type;
  int64_t n = cx_shape_elems(&lit->shape);
  if (cx_type_is_complex(t)) { /* each part as a float of the component type */
    t = cx_type_part(t);
    n *= 2;
  }
  double lo = o->lo, hi = o->hi;
  if (lo == 0 && hi == 0) { lo = -8; hi = 8; }
  int64_t ilo = o->ilo, ihi = o->ihi;
  if (ilo == 0 && ihi == 0) { ilo = -5; ihi = 20; }
  static const double fspecial[] = {0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0, -0.0, 1, -1, 0x1p-149, 3.4e38, -3.4e38, 0.5, 65504};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = cgt_rand(rng);
    if (cx_type_is_float(t)) {
      double v;
      if (!o->no_specials && r % 10 == 0) v = fspecial[(r >> 8) % CX_ARRAY_LEN(fspecial)];
      else if (!o->no_specials && r % 10 == 1) v = ((r >> 9) & 1 ? -1 : 1) * ldexp(1 + unit(rng), (int)((r >> 12) % 60) - 30);
      else v = lo + (hi - lo) * unit(rng);
      cx_store_f64(t, lit->data, i, v);
    } else if (t == CXLA_PRED) {
      cx_store_i64(t, lit->data, i, (int64_t)(r & 1));
    } else {
      int bits = cx_type_bits(t);
      int sgn = cx_type_kind(t) == CX_KIND_SINT;
      int64_t v;
      switch (r % 10) {
      case 0: v = sgn ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0; break;
      case 1: v = sgn ? (bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1) : -1; break;
      case 2: v = (int64_t)((r >> 8) % 3) - 1; break;
      case 3: case 4: case 5: case 6: v = ilo + (int64_t)((r >> 8) % (uint64_t)(ihi - ilo + 1)); break;
      default: v = (int64_t)cgt_rand(rng); break;
      }
      cx_store_i64(t, lit->data, i, v);
    }
  }
}

/* ---- comparisons ---- */

static int64_t fkey(uint64_t bits, int w, int *isnan_) {
  uint64_t sign = (uint64_t)1 << (w - 1), mag = bits & (sign - 1);
  uint64_t inf = w == 16 ? 0 : w == 32 ? 0x7f800000u : 0x7ff0000000000000ull;
  *isnan_ = mag > inf;
  return bits & sign ? -(int64_t)mag - 1 : (int64_t)mag;
}

double cgt_ulps(cxla_type t, const void *a, const void *b, int64_t i) {
  uint64_t ua = 0, ub = 0;
  int w = 8 * (int)cxla_type_size(t);
  memcpy(&ua, (const char *)a + i * (w / 8), (size_t)(w / 8));
  memcpy(&ub, (const char *)b + i * (w / 8), (size_t)(w / 8));
  int na, nb;
  int64_t ka = fkey(ua, w, &na), kb = fkey(ub, w, &nb);
  if (w == 16) { /* f16: exponent 5 bits; bf16: 8 bits */
    uint64_t inf = t == CXLA_F16 ? 0x7c00 : 0x7f80;
    na = (ua & 0x7fff) > inf;
    nb = (ub & 0x7fff) > inf;
  }
  if (na || nb) return na && nb ? 0 : 1e300;
  /* in integers: the keys of f64 values need all 64 bits */
  uint64_t d = ka > kb ? (uint64_t)ka - (uint64_t)kb : (uint64_t)kb - (uint64_t)ka;
  return (double)d;
}

/* operands of the fusion being compared, for messages */
static cxla_literal **cur_ins;
static int cur_nin;

static void print_inputs(int64_t i) {
  for (int k = 0; k < cur_nin; k++) {
    if (cx_shape_elems(&cur_ins[k]->shape) <= i) continue;
    cxla_type t = cur_ins[k]->shape.type;
    if (cx_type_is_complex(t))
      fprintf(stdout, "      input %d: (%a, %a)\n", k, cx_load_f64(cx_type_part(t), cur_ins[k]->data, 2 * i),
              cx_load_f64(cx_type_part(t), cur_ins[k]->data, 2 * i + 1));
    else if (cx_type_is_float(t)) fprintf(stdout, "      input %d: %a\n", k, cx_load_f64(t, cur_ins[k]->data, i));
    else fprintf(stdout, "      input %d: %lld\n", k, (long long)cx_load_i64(t, cur_ins[k]->data, i));
  }
}

static int compare(const cgt_opts *o, double *maxu, cxla_type t, const void *want, const void *got, int64_t n,
                   const char *what, const char *file, int line) {
  int fails = 0, per = 1;
  if (cx_type_is_complex(t)) { /* part by part: element i's parts are 2i and 2i+1 */
    t = cx_type_part(t);
    n *= 2;
    per = 2;
  }
  size_t es = cxla_type_size(t);
  for (int64_t i = 0; i < n; i++) {
    int bad;
    if (cx_type_is_float(t)) {
      double u = cgt_ulps(t, want, got, i);
      double w = cx_load_f64(t, want, i), g = cx_load_f64(t, got, i);
      if (u < 1e300 && u > *maxu) *maxu = u;
      /* +0 and -0 are one ulp apart: with ulps 0 the sign of zero counts, whatever atol says */
      bad = u > o->ulps && ((w == 0 && g == 0) || !(fabs(w - g) <= o->atol + o->rtol * fabs(w)));
    } else {
      bad = memcmp((const char *)want + i * (int64_t)es, (const char *)got + i * (int64_t)es, es) != 0;
    }
    if (bad && fails++ < 4) {
      if (cx_type_is_float(t))
        test_fail(file, line, "%s[%lld]: got %.9g, want %.9g (%g ulps)", what, (long long)i,
                  cx_load_f64(t, got, i), cx_load_f64(t, want, i), cgt_ulps(t, want, got, i));
      else
        test_fail(file, line, "%s[%lld]: got %lld, want %lld", what, (long long)i,
                  (long long)cx_load_i64(t, got, i), (long long)cx_load_i64(t, want, i));
      print_inputs(i / per);
    }
  }
  if (fails > 4) test_fail(file, line, "%s: %d mismatches in all", what, fails);
  return fails;
}

/* ---- the optimised module's assembly (vectorisation check) ---- */

static int asm_has_vectors(LLVMModuleRef mod, const char *pipeline) {
#if defined(__x86_64__)
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  char *err = NULL;
  int found = -1;
  if (!LLVMGetTargetFromTriple(triple, &target, &err)) {
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, cpu, feat, LLVMCodeGenLevelAggressive,
                                                      LLVMRelocDefault, LLVMCodeModelJITDefault);
    LLVMModuleRef copy = LLVMCloneModule(mod);
    LLVMSetTarget(copy, triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(copy, dl);
    LLVMDisposeTargetData(dl);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    const char *pipe = getenv("CXLA_CG_PIPELINE");
    LLVMErrorRef e = LLVMRunPasses(copy, pipe ? pipe : pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    LLVMMemoryBufferRef buf = NULL;
    if (!e && !LLVMTargetMachineEmitToMemoryBuffer(tm, copy, LLVMAssemblyFile, &err, &buf)) {
      char *text = cx_strndup(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
      found = text && (strstr(text, "%zmm") || strstr(text, "%ymm"));
      if (getenv("CXLA_CG_ASM") && text) fputs(text, stderr);
      cx_free(text);
      LLVMDisposeMemoryBuffer(buf);
    }
    if (e) LLVMConsumeError(e);
    LLVMDisposeModule(copy);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  return found;
#else
  (void)mod;
  return -1;
#endif
}

static char *cx_strdup_llvm(LLVMModuleRef mod) {
  char *ir = LLVMPrintModuleToString(mod);
  char *d = cx_strdup(ir);
  LLVMDisposeMessage(ir);
  return d;
}

/* ---- one fusion ---- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef void (*kfn)(void **args, int64_t begin, int64_t end);

/* UBSan's -fsanitize=function checks a type signature stored just before the callee, which
 * JIT-compiled code does not have (reading it can even fault at a page boundary). */
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
static void call_kernel(kfn fn, void **args, int64_t begin, int64_t end) { fn(args, begin, end); }

/* fn over [from, to) in nc uneven chunks, called last first */
static void run_chunks(kfn fn, void **args, int64_t from, int64_t to, int nc, uint64_t *rng) {
  int64_t cut[66], n = to - from;
  cut[0] = from;
  cut[nc] = to;
  for (int i = 1; i < nc; i++) cut[i] = from + (n ? (int64_t)(cgt_rand(rng) % (uint64_t)(n + 1)) : 0);
  for (int i = 1; i < nc; i++)
    for (int j = i + 1; j < nc; j++)
      if (cut[j] < cut[i]) { int64_t t = cut[i]; cut[i] = cut[j]; cut[j] = t; }
  for (int i = nc - 1; i >= 0; i--) call_kernel(fn, args, cut[i], cut[i + 1]);
}

static int leaves_of(const cx_shape *s, const cx_shape **out) {
  if (s->type != CXLA_TUPLE) { out[0] = s; return 1; }
  for (int i = 0; i < s->ntuple; i++) out[i] = &s->tuple[i];
  return s->ntuple;
}

static const cx_instr *find_dot(const cx_comp *c) {
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op == CX_OP_DOT) return c->instrs[i];
  return NULL;
}

static int run_fusion(cx_module *m, cx_instr *f, const cx_kernel *k, kfn fn, cgt_opts *o, uint64_t *rng,
                      const char *file, int line) {
  int nin = f->nops, fails = 0;
  cxla_literal *ins[128] = {0}, *ref = NULL, *gemm = NULL;
  const cx_shape *ol[128];
  int nout = leaves_of(&f->shape, ol);
  void *outs[128] = {0}, *args[261], *scratch = NULL;
  cx_comp *c = f->called[0];
  const cx_instr *dot = find_dot(c);
  for (int i = 0; i < nin; i++) {
    cx_shape s = f->ops[i]->shape;
    s.has_layout = 0;
    ins[i] = cx_literal_new(&s);
    if (o->fill) o->fill(ins[i], i, o->user);
    else fill_random(ins[i], o, rng);
  }
  cx_interp st;
  cx_interp_init(&st, m);
  if (cx_interp_call(&st, c, nin, ins, &ref) != CXLA_OK) {
    test_fail(file, line, "interpreter: %s", cxla_context_errmsg(test_ctx()));
    fails++;
    goto done;
  }
  if (f->a.fusion_kind == CX_FUSION_OUTPUT) {
    cx_instr *root = c->root;
    c->root = (cx_instr *)dot; /* the GEMM's value: the fused computation up to its dot */
    cxla_status s = cx_interp_call(&st, c, nin, ins, &gemm);
    c->root = root;
    if (s != CXLA_OK) { test_fail(file, line, "interpreter (dot): %s", cxla_context_errmsg(test_ctx())); fails++; goto done; }
  }
  int na = 0;
  for (int i = 0; i < nout; i++) {
    size_t bytes = (size_t)cx_shape_bytes(ol[i]);
    outs[i] = cx_malloc(bytes + 64);
    memset(outs[i], 0xA5, bytes + 64);
    args[na++] = outs[i];
  }
  if (gemm) {
    args[na++] = gemm->data;
    if (o->in_place) args[0] = gemm->data;
  }
  for (int i = 0; i < nin; i++) args[na++] = ins[i]->data;
  for (int i = 0; i < nout && i < 4; i++)
    if (o->alias_operand[i] > 0) args[i] = ins[o->alias_operand[i] - 1]->data; /* in place */
  if (k->nout != nout || k->nout + k->nin != na) {
    test_fail(file, line, "kernel %s takes %d+%d pointers, expected %d+%d", k->name, k->nout, k->nin, nout, na - nout);
    fails++;
    goto done;
  }
  /* a split reduction's scratch, garbage at first: its first phase must write all it reads */
  if (k->parts > 0) {
    scratch = cx_malloc((size_t)k->scratch + 64);
    memset(scratch, 0xA5, (size_t)k->scratch + 64);
    args[na] = scratch;
  }
  /* uneven chunks, called last first: a split reduction's first phase, then its second */
  int nc = o->chunks ? o->chunks : 7;
  if (k->parts > 0) run_chunks(fn, args, 0, k->parts, nc, rng);
  run_chunks(fn, args, k->parts, k->parts + k->total, nc, rng);
  cur_ins = ins;
  cur_nin = nin;
  for (int i = 0; i < nout; i++) {
    const cxla_literal *want = ref->shape.type == CXLA_TUPLE ? ref->elems[i] : ref;
    char what[160];
    snprintf(what, sizeof what, "%s (%s %s) output %d", f->name, cx_op_name(c->root->op),
             c->root->name ? c->root->name : "", i);
    fails += compare(o, &o->max_ulps, ol[i]->type, want->data, args[i], cx_shape_elems(ol[i]), what, file, line);
  }
  if (o->time_runs > 0 && !fails) {
    double best = 1e30, bytes = 0;
    for (int i = 0; i < nout; i++) bytes += (double)cx_shape_bytes(ol[i]);
    for (int i = 0; i < nin; i++) bytes += (double)cx_shape_bytes(&ins[i]->shape);
    for (int r = 0; r < o->time_runs; r++) {
      double t0 = now_s();
      if (k->parts > 0) call_kernel(fn, args, 0, k->parts);
      call_kernel(fn, args, k->parts, k->parts + k->total);
      double t = now_s() - t0;
      if (t < best) best = t;
    }
    o->best_gbs = bytes / best / 1e9;
  }
done:
  cx_free(scratch);
  for (int i = 0; i < nout; i++) cx_free(outs[i]);
  for (int i = 0; i < nin; i++) cxla_literal_destroy(ins[i]);
  cxla_literal_destroy(ref);
  cxla_literal_destroy(gemm);
  return fails;
}

int cgt_check(const char *text, cgt_opts *o, const char *file, int line) {
  int fails = 0, changed = 0;
  o->max_ulps = 0;
  o->nfusions = 0;
  o->nsplit = 0;
  o->vectorized = -1;
  cx_module *m = cgt_parse(text, file, line);
  if (!m) return 1;
  cxla_status s = CXLA_OK;
  if (o->fusion_pass == 1) s = cx_pass_wrap_singletons(m, &changed);
  if (o->fusion_pass == 2) {
    s = cx_pass_fusion(m, &changed);
    if (s == CXLA_OK) s = cx_pass_multi_output_fusion(m, &changed);
  }
  if (o->fusion_pass >= 3) {
    cx_flags fl;
    cx_flags_init(&fl);
    fl.fusion = o->fusion_pass == 3;
    cx_pass_opts pc_opts = cx_pass_opts_from_flags(&fl);
    cx_pass_ctx pc = {&pc_opts, 1, 0, NULL};
    s = cx_pass_pipeline(&pc, m);
    cx_flags_free(&fl);
  }
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s == CXLA_OK) s = cx_fusion_plan_module(m);
  if (s != CXLA_OK) {
    test_fail(file, line, "fusion pass: %s", cxla_context_errmsg(test_ctx()));
    cx_module_free(m);
    return 1;
  }
  cx_jit *j = NULL;
  if (cx_jit_create(test_ctx(), 3, NULL, 0, &j) != CXLA_OK) {
    test_fail(file, line, "jit: %s", cxla_context_errmsg(test_ctx()));
    cx_module_free(m);
    return 1;
  }
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("cgt", cx_jit_context(j));
  cx_cg cg;
  cx_target host = cx_target_cpu;
  host.libmvec = o->libm_only ? 0 : cx_libmvec_level(cx_jit_target(j).features);
  cx_cg_init(&cg, test_ctx(), m, cx_jit_context(j), mod, &host);
  cx_instr *fus[256];
  cx_kernel ks[256];
  int nf = 0;
  o->nunsupported = 0;
  /* fusions of every computation (ENTRY, loop bodies, branches), not inside other fusions */
  for (int ci = 0; ci < m->ncomps; ci++)
  for (int i = 0; i < m->comps[ci]->ninstrs && nf < 256; i++) {
    cx_instr *f = m->comps[ci]->instrs[i];
    if (f->op != CX_OP_FUSION) continue;
    const char *why = NULL;
    int ok = cx_emit_supported(f, &why);
    if (!ok && o->skip_unsupported && !o->expect_unsupported) {
      o->nunsupported++;
      if (getenv("CXLA_CG_WHY")) printf("      unsupported %s: %s\n", f->name, why);
      continue;
    }
    if (o->expect_unsupported) {
      if (ok) { test_fail(file, line, "%s: expected cx_emit_supported to refuse it", f->name); fails++; }
      else if (!why || !*why) { test_fail(file, line, "%s: refused without a reason", f->name); fails++; }
      continue;
    }
    if (!ok) { test_fail(file, line, "%s: not supported: %s", f->name, why ? why : "?"); fails++; continue; }
    int is_out = f->a.fusion_kind == CX_FUSION_OUTPUT;
    if (is_out) s = cx_emit_epilogue(&cg, f, &ks[nf]);
    else if (o->alias_operand[0] > 0) {
      int nout = f->shape.type == CXLA_TUPLE ? f->shape.ntuple : 1;
      int slots[CX_EMIT_MAX_ARGS];
      int nargs = nout + f->nops < CX_EMIT_MAX_ARGS ? nout + f->nops : CX_EMIT_MAX_ARGS;
      for (int a = 0; a < nargs; a++) slots[a] = a;
      for (int i = 0; i < nout && i < 4; i++)
        if (o->alias_operand[i] > 0 && nout + o->alias_operand[i] - 1 < nargs) slots[nout + o->alias_operand[i] - 1] = i;
      cx_kalias alias;
      cx_kalias_of_slots(&alias, slots, nout, nargs);
      s = cx_emit_kernel_ex(&cg, f, &alias, &ks[nf]);
    } else s = cx_emit_kernel(&cg, f, &ks[nf]);
    if (s != CXLA_OK) {
      test_fail(file, line, "%s: emit: %s", f->name, cxla_context_errmsg(test_ctx()));
      fails++;
      cg.status = CXLA_OK;
      continue;
    }
    fus[nf++] = f;
  }
  cx_cg_dispose(&cg);
  if (o->ir) *o->ir = cx_strdup_llvm(mod);
  if (getenv("CXLA_CG_IR")) {
    char *ir = LLVMPrintModuleToString(mod);
    fputs(ir, stderr);
    LLVMDisposeMessage(ir);
  }
  if (nf) o->vectorized = asm_has_vectors(mod, o->lean ? cx_llvm_pipeline(2) : "default<O3>");
  if (cx_jit_add_module(j, mod, NULL, NULL) != CXLA_OK) {
    test_fail(file, line, "jit add: %s", cxla_context_errmsg(test_ctx()));
    fails++;
    nf = 0;
  }
  uint64_t rng = o->seed ? o->seed : 12345;
  for (int i = 0; i < nf; i++) {
    void *addr = NULL;
    if (cx_jit_lookup(j, ks[i].name, &addr) != CXLA_OK || !addr) {
      test_fail(file, line, "lookup %s: %s", ks[i].name, cxla_context_errmsg(test_ctx()));
      fails++;
      continue;
    }
    fails += run_fusion(m, fus[i], &ks[i], (kfn)addr, o, &rng, file, line);
    o->nfusions++;
    o->nsplit += ks[i].parts > 0;
  }
  cx_jit_destroy(j);
  cx_module_free(m);
  return fails;
}
