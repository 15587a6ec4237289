/* test_codegen_kernel.c — kernel-level properties: the kOutput epilogue (also in place over the
 * GEMM result), in-place elementwise kernels, vectorisation of elementwise, transcendental and
 * reduction kernels (vector registers in the host assembly), the IR flags the design relies
 * on (noalias, contract, reassoc), what cx_emit_supported refuses, and single-thread
 * throughput of a large elementwise chain. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include "codegen/jit.h"
#include "codegen_harness.h"
#include "ir/verify.h"
#include "passes/fusion_plan.h"
#include "passes/pass.h"
#include "text/hlo.h"

#define EPI(body_root)                                                                          \
  "HloModule o\nfo {\n a = f32[33,40] parameter(0)\n w = f32[40,27] parameter(1)\n"            \
  " bias = f32[27] parameter(2)\n"                                                             \
  " d = f32[33,27] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"            \
  " bb = f32[33,27] broadcast(bias), dimensions={1}\n s = f32[33,27] add(d, bb)\n" body_root   \
  "}\nENTRY e {\n x = f32[33,40] parameter(0)\n y = f32[40,27] parameter(1)\n b = f32[27] parameter(2)\n" \
  " ROOT f = f32[33,27] fusion(x, y, b), kind=kOutput, calls=fo\n}\n"

TEST(codegen_kernel_epilogue) {
  const char *relu = EPI(" z = f32[] constant(0)\n zb = f32[33,27] broadcast(z), dimensions={}\n"
                         " ROOT r = f32[33,27] maximum(s, zb)\n");
  const char *gelu = EPI(" t = f32[33,27] tanh(s)\n ROOT r = f32[33,27] multiply(t, s)\n");
  for (int in_place = 0; in_place < 2; in_place++) {
    cgt_opts o = {.in_place = in_place};
    CHECK_EQ_INT(CGT(relu, &o), 0);
    CHECK_EQ_INT(o.nfusions, 1);
    o = (cgt_opts){.in_place = in_place, .ulps = 2};
    CHECK_EQ_INT(CGT(gelu, &o), 0);
  }
  /* the dot epilogue fusion pass makes the same kind of fusion */
  cgt_opts o = {.fusion_pass = 2, .in_place = 1};
  CHECK_EQ_INT(CGT("HloModule o\nENTRY e {\n x = f32[16,24] parameter(0)\n y = f32[24,8] parameter(1)\n"
                   " b = f32[8] parameter(2)\n d = f32[16,8] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                   " bb = f32[16,8] broadcast(b), dimensions={1}\n s = f32[16,8] add(d, bb)\n"
                   " z = f32[] constant(0)\n zb = f32[16,8] broadcast(z), dimensions={}\n"
                   " ROOT r = f32[16,8] maximum(s, zb)\n}\n", &o), 0);
  CHECK(o.nfusions >= 1);
}

TEST(codegen_kernel_in_place_elementwise) {
  cgt_opts o = {.fusion_pass = 2, .alias_operand = {1}};
  CHECK_EQ_INT(CGT("HloModule i\nENTRY e {\n a = f32[1000] parameter(0)\n b = f32[1000] parameter(1)\n"
                   " m = f32[1000] add(a, b)\n ROOT s = f32[1000] multiply(m, a)\n}\n", &o), 0);
  CHECK_EQ_INT(o.nfusions, 1);
  /* an operand read through a transpose cannot share the output's memory: refused */
  const char *text = "HloModule i\nENTRY e {\n a = f32[8,8] parameter(0)\n"
                     " ROOT t = f32[8,8] transpose(a), dimensions={1,0}\n}\n";
  cx_module *m = cgt_parse(text, __FILE__, __LINE__);
  int changed;
  if (!m) return;
  CHECK_OK(cx_pass_wrap_singletons(m, &changed));
  CHECK_OK(cx_fusion_plan_module(m));
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("i", c);
  cx_cg cg;
  cx_cg_init(&cg, test_ctx(), m, c, mod, &cx_target_cpu);
  cx_kernel k;
  cx_kalias alias;
  int slots[2] = {0, 0};
  cx_kalias_of_slots(&alias, slots, 1, 2);
  CHECK(cx_emit_kernel_ex(&cg, m->entry->root, &alias, &k) == CXLA_ERR_INTERNAL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "alias");
  cx_cg_dispose(&cg);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  cx_module_free(m);
}

/* An optimizer's update, as jax writes it for Adam: one loop fusion whose three outputs (the
 * parameter and both moments) each take the memory of a different operand (donated buffers).
 * Each output must come back right, and each in-place operand must be read through its own
 * output's pointer: read through its parameter instead, LLVM guards the vector loop with an
 * overlap check that out == in fails, and every element ran in the scalar loop. */
static const char adam_text[] =
    "HloModule adam\nfa {\n m = f32[1000] parameter(0)\n v = f32[1000] parameter(1)\n g = f32[1000] parameter(2)\n"
    " p = f32[1000] parameter(3)\n c9 = f32[] constant(0.9)\n c1 = f32[] constant(0.1)\n"
    " c99 = f32[] constant(0.999)\n c01 = f32[] constant(0.001)\n e = f32[] constant(1e-08)\n"
    " b9 = f32[1000] broadcast(c9), dimensions={}\n b1 = f32[1000] broadcast(c1), dimensions={}\n"
    " b99 = f32[1000] broadcast(c99), dimensions={}\n b01 = f32[1000] broadcast(c01), dimensions={}\n"
    " be = f32[1000] broadcast(e), dimensions={}\n"
    " m9 = f32[1000] multiply(b9, m)\n g1 = f32[1000] multiply(b1, g)\n m2 = f32[1000] add(m9, g1)\n"
    " gg = f32[1000] multiply(g, g)\n v9 = f32[1000] multiply(b99, v)\n gg1 = f32[1000] multiply(b01, gg)\n"
    " v2 = f32[1000] add(v9, gg1)\n s = f32[1000] sqrt(v2)\n se = f32[1000] add(s, be)\n"
    " u = f32[1000] divide(m2, se)\n lu = f32[1000] multiply(b01, u)\n p2 = f32[1000] subtract(p, lu)\n"
    " ROOT t = (f32[1000], f32[1000], f32[1000]) tuple(p2, m2, v2)\n}\n"
    "ENTRY e {\n m = f32[1000] parameter(0)\n v = f32[1000] parameter(1)\n g = f32[1000] parameter(2)\n"
    " p = f32[1000] parameter(3)\n"
    " ROOT f = (f32[1000], f32[1000], f32[1000]) fusion(m, v, g, p), kind=kLoop, calls=fa\n}\n";

TEST(codegen_kernel_in_place_outputs) {
  /* values: output 0 in p's memory, 1 in m's, 2 in v's (crossed, so a wrong pairing reads
   * another moment), every chunk order the harness tries */
  cgt_opts o = {.alias_operand = {4, 1, 2}, .lo = 0, .hi = 4, .no_specials = 1, .ulps = 4}; /* fma contraction */
  CHECK_EQ_INT(CGT(adam_text, &o), 0);
  CHECK_EQ_INT(o.nfusions, 1);

  /* structure: the three in-place operands' pointers are never read (their outputs' are), the
   * gradient's is; every pointer is noalias */
  cx_module *m = cgt_parse(adam_text, __FILE__, __LINE__);
  if (!m) return;
  CHECK_OK(cx_fusion_plan_module(m));
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("adam", c);
  cx_cg cg;
  cx_cg_init(&cg, test_ctx(), m, c, mod, &cx_target_cpu);
  int slots[7] = {0, 1, 2, 1, 2, 3, 0}; /* p2 m2 v2 | m v g p */
  cx_kalias alias;
  cx_kalias_of_slots(&alias, slots, 3, 7);
  CHECK(alias.mask == 0x5f && alias.to[3] == 1 && alias.to[4] == 2 && alias.to[6] == 0 && alias.to[5] == 5);
  cx_kernel k;
  CHECK_OK(cx_emit_kernel_ex(&cg, m->entry->root, &alias, &k));
  char body[96];
  snprintf(body, sizeof body, "%s.body", k.name);
  LLVMValueRef fn = LLVMGetNamedFunction(mod, body);
  CHECK(fn != NULL);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (unsigned i = 0; fn && i < 7; i++) {
    int read = LLVMGetFirstUse(LLVMGetParam(fn, i)) != NULL;
    if (i == 3 || i == 4 || i == 6) CHECK(!read);
    else CHECK(read);
    CHECK(LLVMGetEnumAttributeAtIndex(fn, i + 1, noalias) != NULL);
  }
  cx_cg_dispose(&cg);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  cx_module_free(m);
}

/* The vector width a kernel asks LLVM for (the "prefer-vector-width" attribute of the function the
 * runtime calls), on a target of `bits`-wide vectors; NULL when it asks for none. */
static char *preferred_width(const char *text, int bits) {
  static char got[16];
  cx_module *m = cgt_parse(text, __FILE__, __LINE__);
  if (!m) return NULL;
  CHECK_OK(cx_fusion_plan_module(m));
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("w", c);
  cx_target t = cx_target_cpu;
  t.vector_bits = bits;
  cx_cg cg;
  cx_cg_init(&cg, test_ctx(), m, c, mod, &t);
  cx_kernel k;
  char *r = NULL;
  CHECK_OK(cx_emit_kernel(&cg, m->entry->root, &k));
  static const char key[] = "prefer-vector-width";
  LLVMAttributeRef a = cg.status == CXLA_OK ? LLVMGetStringAttributeAtIndex(k.fn, LLVMAttributeFunctionIndex, key, sizeof key - 1) : NULL;
  if (a) {
    unsigned n = 0;
    const char *v = LLVMGetStringAttributeValue(a, &n);
    snprintf(got, sizeof got, "%.*s", (int)n, v);
    r = got;
  }
  cx_cg_dispose(&cg);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  cx_module_free(m);
  return r;
}

/* A loop over codegen's own f32 functions (gelu's tanh) asks for 512-bit vectors where the host
 * has them (LLVM prefers 256 on AVX-512 CPUs; the arithmetic bounds such loops); plain
 * arithmetic and f64 functions (libm calls) keep LLVM's choice, as does a 256-bit host. */
TEST(codegen_kernel_wide_vectors_for_math) {
  static const char tanh_text[] = "HloModule t\nf {\n x = f32[4096] parameter(0)\n t = f32[4096] tanh(x)\n"
                                  " ROOT y = f32[4096] multiply(t, x)\n}\nENTRY e {\n x = f32[4096] parameter(0)\n"
                                  " ROOT r = f32[4096] fusion(x), kind=kLoop, calls=f\n}\n";
  static const char mul_text[] = "HloModule t\nf {\n x = f32[4096] parameter(0)\n ROOT y = f32[4096] multiply(x, x)\n}\n"
                                 "ENTRY e {\n x = f32[4096] parameter(0)\n"
                                 " ROOT r = f32[4096] fusion(x), kind=kLoop, calls=f\n}\n";
  const char *w = preferred_width(tanh_text, 512);
  CHECK(w != NULL && strcmp(w, "512") == 0);
  CHECK(preferred_width(tanh_text, 256) == NULL);
  CHECK(preferred_width(mul_text, 512) == NULL);
}

/* A loop kernel over rows of 16 to 112 f32 (a multiple of 16) asks for 512-bit vectors: a
 * pooling's 16 channels in one trip; 10-wide rows would go all to the remainder, and 256-wide
 * ones keep LLVM's choice. */
TEST(codegen_kernel_wide_vectors_for_short_rows) {
  static const char fmt[] = "HloModule t\nf {\n x = f32[64,%d] parameter(0)\n b = f32[%d] parameter(1)\n"
                            " bb = f32[64,%d] broadcast(b), dimensions={1}\n ROOT y = f32[64,%d] add(x, bb)\n}\n"
                            "ENTRY e {\n x = f32[64,%d] parameter(0)\n b = f32[%d] parameter(1)\n"
                            " ROOT r = f32[64,%d] fusion(x, b), kind=kLoop, calls=f\n}\n";
  char text[1024];
  int widths[3] = {16, 10, 256};
  for (int i = 0; i < 3; i++) {
    int w = widths[i];
    snprintf(text, sizeof text, fmt, w, w, w, w, w, w, w);
    const char *got = preferred_width(text, 512);
    if (w == 16) CHECK_MSG(got && strcmp(got, "512") == 0, "rows of 16: %s", got ? got : "no preference");
    else CHECK_MSG(got == NULL, "rows of %d: %s", w, got ? got : "no preference");
    if (w == 16) CHECK(preferred_width(text, 256) == NULL);
  }
}

/* A column reduction asks for 512-bit vectors when its lanes (the innermost kept dim) fill them:
 * 16 channels of a pooling gradient's bias sum, not 10 (the lanes would all go to the remainder). */
TEST(codegen_kernel_wide_vectors_for_columns) {
  static const char fmt[] = "HloModule t\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                            " ROOT s = f32[] add(a, b)\n}\nf {\n x = f32[8,6,6,%d] parameter(0)\n z = f32[] constant(0)\n"
                            " ROOT r = f32[8,%d] reduce(x, z), dimensions={1,2}, to_apply=add\n}\nENTRY e {\n"
                            " x = f32[8,6,6,%d] parameter(0)\n ROOT r = f32[8,%d] fusion(x), kind=kInput, calls=f\n}\n";
  char text[1024];
  snprintf(text, sizeof text, fmt, 16, 16, 16, 16);
  const char *w = preferred_width(text, 512);
  CHECK(w != NULL && strcmp(w, "512") == 0);
  CHECK(preferred_width(text, 256) == NULL);
  snprintf(text, sizeof text, fmt, 10, 10, 10, 10);
  CHECK(preferred_width(text, 512) == NULL);
}

/* The flags the design relies on reach the IR. */
TEST(codegen_kernel_ir_flags) {
  char *ir = NULL;
  cgt_opts o = {.fusion_pass = 1, .ir = &ir, .no_specials = 1, .atol = 1e-2, .rtol = 1e-5};
  CHECK_EQ_INT(CGT("HloModule f\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
                   "ENTRY e {\n x = f32[64,100] parameter(0)\n y = f32[64,100] parameter(1)\n"
                   " m = f32[64,100] multiply(x, y)\n z = f32[] constant(0)\n"
                   " r = f32[64] reduce(x, z), dimensions={1}, to_apply=add\n"
                   " ROOT t = (f32[64,100], f32[64]) tuple(m, r)\n}\n", &o), 0);
  CHECK_STR_CONTAINS(ir, "noalias");
  CHECK_STR_CONTAINS(ir, "fmul contract");
  CHECK_STR_CONTAINS(ir, "fadd reassoc contract");
  CHECK_STR_CONTAINS(ir, "alwaysinline");
  cx_free(ir);
}

static void expect_vector(const char *text, double ulps, const char *file, int line) {
  cgt_opts o = {.fusion_pass = 2, .ulps = ulps, .no_specials = 1, .atol = 1e-2, .rtol = 1e-5};
  if (cgt_check(text, &o, file, line)) return;
#if defined(__x86_64__)
  if (o.vectorized != 1) test_fail(file, line, "no vector registers in the kernel's assembly");
#endif
}
#define VEC(text, ulps) expect_vector((text), (ulps), __FILE__, __LINE__)

TEST(codegen_kernel_vectorized) {
  VEC("HloModule v\nENTRY e {\n a = f32[4096] parameter(0)\n b = f32[4096] parameter(1)\n"
      " m = f32[4096] multiply(a, b)\n ROOT s = f32[4096] add(m, a)\n}\n", 2);
  VEC("HloModule v\nENTRY e {\n a = f32[4096] parameter(0)\n ROOT x = f32[4096] exponential(a)\n}\n", 1);
  VEC("HloModule v\nENTRY e {\n a = f32[4096] parameter(0)\n ROOT x = f32[4096] tanh(a)\n}\n", 1);
  VEC("HloModule v\nENTRY e {\n a = f32[4096] parameter(0)\n ROOT x = f32[4096] log(a)\n}\n", 1);
  VEC("HloModule v\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n x = f32[16,4096] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[16] reduce(x, z), dimensions={1}, to_apply=add\n}\n", 0);
  VEC("HloModule v\nENTRY e {\n a = f32[64,128] parameter(0)\n b = f32[128] parameter(1)\n"
      " bb = f32[64,128] broadcast(b), dimensions={1}\n ROOT s = f32[64,128] add(a, bb)\n}\n", 0);
}

/* What the cpu backend's own pipeline (no unroll pass) must still vectorise: a 2x2 max-pool
 * over 16 channels (its taps emitted unrolled; as a loop nest it ran one element at a time)
 * and a bias + ReLU over rows of 16 channels (its column loop asks for no interleaving: 8
 * lanes interleaved 4 times needed 32-element rows, and every 16-wide row ran scalar). */
TEST(codegen_kernel_vectorized_lean_pipeline) {
  cgt_opts o = {.fusion_pass = 1, .lean = 1};
  CHECK_EQ_INT(CGT("HloModule p\nmax {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\n"
                   "ENTRY e {\n x = f32[4,28,28,16] parameter(0)\n z = f32[] constant(-inf)\n"
                   " ROOT r = f32[4,14,14,16] reduce-window(x, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n}\n",
                   &o), 0);
  CHECK_EQ_INT(o.vectorized, 1);
  char *ir = NULL;
  o = (cgt_opts){.fusion_pass = 2, .lean = 1, .ir = &ir};
  CHECK_EQ_INT(CGT("HloModule b\nENTRY e {\n x = f32[4,28,28,16] parameter(0)\n b = f32[16] parameter(1)\n"
                   " bb = f32[4,28,28,16] broadcast(b), dimensions={3}\n a = f32[4,28,28,16] add(x, bb)\n"
                   " z = f32[] constant(0)\n zb = f32[4,28,28,16] broadcast(z), dimensions={}\n"
                   " ROOT r = f32[4,28,28,16] maximum(a, zb)\n}\n", &o), 0);
  CHECK_EQ_INT(o.vectorized, 1);
  CHECK(ir && strstr(ir, "llvm.loop.interleave.count"));
  cx_free(ir);
}

/* Ops the emitter leaves to the interpreter are refused with a reason, never miscompiled. */
TEST(codegen_kernel_unsupported) {
  cgt_opts o = {.expect_unsupported = 1};
  CHECK_EQ_INT(CGT("HloModule u\ncmp {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                   " ROOT c = pred[] compare(a, b), direction=LT\n}\n"
                   "fs {\n p = f32[10] parameter(0)\n ROOT s = f32[10] sort(p), dimensions={0}, to_apply=cmp\n}\n"
                   "ENTRY e {\n x = f32[10] parameter(0)\n ROOT f = f32[10] fusion(x), kind=kLoop, calls=fs\n}\n", &o), 0);
  CHECK_EQ_INT(CGT("HloModule u\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
                   "fs {\n p = f32[10] parameter(0)\n i = s32[3,1] parameter(1)\n u = f32[3] parameter(2)\n"
                   " ROOT s = f32[10] scatter(p, i, u), update_window_dims={}, inserted_window_dims={0},"
                   " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n"
                   "ENTRY e {\n x = f32[10] parameter(0)\n y = s32[3,1] parameter(1)\n z = f32[3] parameter(2)\n"
                   " ROOT f = f32[10] fusion(x, y, z), kind=kLoop, calls=fs\n}\n", &o), 0);
  o = (cgt_opts){.expect_unsupported = 1, .fusion_pass = 1};
  CHECK_EQ_INT(CGT("HloModule u\nge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                   " ROOT c = pred[] compare(a, b), direction=GE\n}\n"
                   "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
                   "ENTRY e {\n x = f32[4,4] parameter(0)\n s = f32[2,2] parameter(1)\n z = f32[] constant(0)\n"
                   " ROOT r = f32[4,4] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n}\n",
                   &o), 0);
}

/* A 16M-element f32 chain on one thread (1M unless CXLA_BENCH is set), in GB/s of operand +
 * result bytes. Printed, not asserted: timings depend on the machine. */
TEST(codegen_kernel_throughput) {
  int n = getenv("CXLA_BENCH") ? 16 << 20 : 1 << 20;
  char text[512];
  snprintf(text, sizeof text, "HloModule t\nENTRY e {\n a = f32[%d] parameter(0)\n b = f32[%d] parameter(1)\n"
           " s = f32[%d] add(a, b)\n h = f32[] constant(0.5)\n hb = f32[%d] broadcast(h), dimensions={}\n"
           " q = f32[%d] multiply(s, hb)\n m = f32[%d] maximum(q, b)\n ROOT r = f32[%d] multiply(m, a)\n}\n",
           n, n, n, n, n, n, n);
  cgt_opts o = {.fusion_pass = 2, .time_runs = 5};
  CHECK_EQ_INT(CGT(text, &o), 0);
  printf("    %d-element f32 chain (add, mul, max, mul): %.1f GB/s on one thread\n", n, o.best_gbs);
  snprintf(text, sizeof text, "HloModule t\nENTRY e {\n a = f32[%d] parameter(0)\n ROOT r = f32[%d] exponential(a)\n}\n", n, n);
  o = (cgt_opts){.fusion_pass = 2, .ulps = 1, .time_runs = 5};
  CHECK_EQ_INT(CGT(text, &o), 0);
  printf("    %d-element f32 exp: %.1f GB/s (%.2f Gelem/s) on one thread\n", n, o.best_gbs, o.best_gbs / 8);
}

/* Allocation failures while emitting end in an error (never a crash), and leave the LLVM module
 * valid: the half-built kernel is deleted. */
TEST(codegen_kernel_allocation_failures) {
  const char *text = "HloModule a\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n x = f32[16,50] parameter(0)\n y = f32[50] parameter(1)\n"
                     " yb = f32[16,50] broadcast(y), dimensions={1}\n s = f32[16,50] subtract(x, yb)\n"
                     " e = f32[16,50] exponential(s)\n z = f32[] constant(0)\n"
                     " r = f32[16] reduce(e, z), dimensions={1}, to_apply=add\n ROOT t = (f32[16,50], f32[16]) tuple(e, r)\n}\n";
  cx_module *m = cgt_parse(text, __FILE__, __LINE__);
  int changed, failed = 0, ok = 0;
  if (!m) return;
  CHECK_OK(cx_pass_fusion(m, &changed));
  CHECK_OK(cx_fusion_plan_module(m));
  cx_instr *f = NULL;
  for (int i = 0; i < m->entry->ninstrs; i++)
    if (m->entry->instrs[i]->op == CX_OP_FUSION) f = m->entry->instrs[i];
  CHECK(f != NULL);
  for (int n = 0; f && n < 200 && !ok; n++) {
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("a", c);
    cx_cg cg;
    cx_cg_init(&cg, test_ctx(), m, c, mod, &cx_target_cpu);
    cx_kernel k;
    int64_t before = cx_alloc_failures();
    cx_alloc_fail_after(n);
    cxla_status s = cx_emit_kernel(&cg, f, &k);
    int hit = cx_alloc_failures() > before;
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) ok = 1;
    else {
      failed++;
      CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY && hit, "n=%d: %s", n, cxla_status_str(s));
    }
    char *msg = NULL;
    CHECK_MSG(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg), "n=%d: %s", n, msg ? msg : "");
    LLVMDisposeMessage(msg);
    cx_cg_dispose(&cg);
    LLVMDisposeModule(mod);
    LLVMContextDispose(c);
  }
  CHECK(ok);
  CHECK(failed > 0);
  cx_module_free(m);
}
