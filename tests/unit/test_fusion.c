/* test_fusion.c — the fusion passes on modules written as JAX emits them: kernel counts
 * (worked out by hand from the fusion rules, see each test), structure (kinds, what was
 * duplicated), and for every module the interpreter's results before and after fusion, which
 * must agree exactly. Shapes are small for the interpreter; the kernel counts are also taken
 * on the full-size shapes (f32[4096,1024]) without running them. */
#include "core/flags.h"
#include "fusion_helpers.h"

/* ---- modules ---- */

#define MAX_REGION "region_0.3 {\n  Arg_0.4 = f32[] parameter(0)\n  Arg_1.5 = f32[] parameter(1)\n" \
                   "  ROOT maximum.6 = f32[] maximum(Arg_0.4, Arg_1.5)\n}\n\n"
#define ADD_REGION "region_1.13 {\n  Arg_0.14 = f32[] parameter(0)\n  Arg_1.15 = f32[] parameter(1)\n" \
                   "  ROOT add.16 = f32[] add(Arg_0.14, Arg_1.15)\n}\n\n"

/* jax.nn.softmax(x, axis=-1) */
static const char *SOFTMAX =
    "HloModule jit_softmax, entry_computation_layout={(f32[8,16]{1,0})->f32[8,16]{1,0}}\n\n"
    MAX_REGION ADD_REGION
    "ENTRY main.22 {\n"
    "  Arg_0.1 = f32[8,16]{1,0} parameter(0)\n"
    "  constant.2 = f32[] constant(-inf)\n"
    "  reduce.7 = f32[8]{0} reduce(Arg_0.1, constant.2), dimensions={1}, to_apply=region_0.3\n"
    "  reshape.8 = f32[8,1]{1,0} reshape(reduce.7)\n"
    "  reshape.9 = f32[8]{0} reshape(reshape.8)\n"
    "  broadcast.10 = f32[8,16]{1,0} broadcast(reshape.9), dimensions={0}\n"
    "  subtract.11 = f32[8,16]{1,0} subtract(Arg_0.1, broadcast.10)\n"
    "  exponential.12 = f32[8,16]{1,0} exponential(subtract.11)\n"
    "  constant.17 = f32[] constant(0)\n"
    "  reduce.18 = f32[8]{0} reduce(exponential.12, constant.17), dimensions={1}, to_apply=region_1.13\n"
    "  reshape.19 = f32[8,1]{1,0} reshape(reduce.18)\n"
    "  reshape.20 = f32[8]{0} reshape(reshape.19)\n"
    "  broadcast.21 = f32[8,16]{1,0} broadcast(reshape.20), dimensions={0}\n"
    "  ROOT divide.22 = f32[8,16]{1,0} divide(exponential.12, broadcast.21)\n"
    "}\n";

/* An attention's softmax as the step's forward pass leaves it: the exp and the row sums are
 * also results (the backward pass reads them), so the row fusion keeps them as outputs of the
 * one kernel that also divides. */
static const char *SOFTMAX_KEPT =
    "HloModule jit_attn, entry_computation_layout={(f32[2,3,8,16]{3,2,1,0})->(f32[2,3,8,16]{3,2,1,0}, "
    "f32[2,3,8]{2,1,0}, f32[2,3,8,16]{3,2,1,0})}\n\n"
    MAX_REGION ADD_REGION
    "ENTRY main {\n"
    "  s = f32[2,3,8,16]{3,2,1,0} parameter(0)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  mx = f32[2,3,8]{2,1,0} reduce(s, ninf), dimensions={3}, to_apply=region_0.3\n"
    "  mb = f32[2,3,8,16]{3,2,1,0} broadcast(mx), dimensions={0,1,2}\n"
    "  sub = f32[2,3,8,16]{3,2,1,0} subtract(s, mb)\n"
    "  e = f32[2,3,8,16]{3,2,1,0} exponential(sub)\n"
    "  z = f32[] constant(0)\n"
    "  sm = f32[2,3,8]{2,1,0} reduce(e, z), dimensions={3}, to_apply=region_1.13\n"
    "  sb = f32[2,3,8,16]{3,2,1,0} broadcast(sm), dimensions={0,1,2}\n"
    "  p = f32[2,3,8,16]{3,2,1,0} divide(e, sb)\n"
    "  ROOT t = (f32[2,3,8,16]{3,2,1,0}, f32[2,3,8]{2,1,0}, f32[2,3,8,16]{3,2,1,0}) tuple(p, sm, e)\n"
    "}\n";

/* The same, but the divide also reads a column sum of the exp (through a broadcast, so it is
 * no operand the divide's kernel can compute): merging the divide into the row kernel would
 * make that kernel both feed and read the column sum, a cycle. Two row kernels stay. */
static const char *SOFTMAX_KEPT_CYCLE =
    "HloModule jit_attn_cycle, entry_computation_layout={(f32[2,3,8,16]{3,2,1,0})->(f32[2,3,8,16]{3,2,1,0}, "
    "f32[2,3,8,16]{3,2,1,0})}\n\n"
    MAX_REGION ADD_REGION
    "ENTRY main {\n"
    "  s = f32[2,3,8,16]{3,2,1,0} parameter(0)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  mx = f32[2,3,8]{2,1,0} reduce(s, ninf), dimensions={3}, to_apply=region_0.3\n"
    "  mb = f32[2,3,8,16]{3,2,1,0} broadcast(mx), dimensions={0,1,2}\n"
    "  sub = f32[2,3,8,16]{3,2,1,0} subtract(s, mb)\n"
    "  e = f32[2,3,8,16]{3,2,1,0} exponential(sub)\n"
    "  z = f32[] constant(0)\n"
    "  sm = f32[2,3,8]{2,1,0} reduce(e, z), dimensions={3}, to_apply=region_1.13\n"
    "  cs = f32[3,8,16]{2,1,0} reduce(e, z), dimensions={0}, to_apply=region_1.13\n"
    "  csb = f32[2,3,8,16]{3,2,1,0} broadcast(cs), dimensions={1,2,3}\n"
    "  sb = f32[2,3,8,16]{3,2,1,0} broadcast(sm), dimensions={0,1,2}\n"
    "  q = f32[2,3,8,16]{3,2,1,0} divide(e, sb)\n"
    "  p = f32[2,3,8,16]{3,2,1,0} add(q, csb)\n"
    "  ROOT t = (f32[2,3,8,16]{3,2,1,0}, f32[2,3,8,16]{3,2,1,0}) tuple(p, e)\n"
    "}\n";

/* flax LayerNorm (fast variance: mean(x^2) - mean(x)^2), eps 1e-6, scale and bias. */
static const char *LAYER_NORM =
    "HloModule jit_layer_norm, entry_computation_layout={(f32[8,16]{1,0}, f32[16]{0}, f32[16]{0})->f32[8,16]{1,0}}\n\n"
    ADD_REGION
    "region_2.40 {\n  Arg_0.41 = f32[] parameter(0)\n  Arg_1.42 = f32[] parameter(1)\n"
    "  ROOT add.43 = f32[] add(Arg_0.41, Arg_1.42)\n}\n\n"
    "ENTRY main.36 {\n"
    "  Arg_0.1 = f32[8,16]{1,0} parameter(0)\n"
    "  Arg_1.2 = f32[16]{0} parameter(1)\n"
    "  Arg_2.3 = f32[16]{0} parameter(2)\n"
    "  constant.4 = f32[] constant(0)\n"
    "  reduce.9 = f32[8]{0} reduce(Arg_0.1, constant.4), dimensions={1}, to_apply=region_1.13\n"
    "  constant.10 = f32[] constant(16)\n"
    "  broadcast.11 = f32[8]{0} broadcast(constant.10), dimensions={}\n"
    "  divide.12 = f32[8]{0} divide(reduce.9, broadcast.11)\n"
    "  multiply.14 = f32[8,16]{1,0} multiply(Arg_0.1, Arg_0.1)\n"
    "  reduce.15 = f32[8]{0} reduce(multiply.14, constant.4), dimensions={1}, to_apply=region_2.40\n"
    "  divide.16 = f32[8]{0} divide(reduce.15, broadcast.11)\n"
    "  multiply.17 = f32[8]{0} multiply(divide.12, divide.12)\n"
    "  subtract.18 = f32[8]{0} subtract(divide.16, multiply.17)\n"
    "  broadcast.19 = f32[8]{0} broadcast(constant.4), dimensions={}\n"
    "  maximum.20 = f32[8]{0} maximum(broadcast.19, subtract.18)\n"
    "  reshape.21 = f32[8,1]{1,0} reshape(divide.12)\n"
    "  reshape.22 = f32[8]{0} reshape(reshape.21)\n"
    "  broadcast.23 = f32[8,16]{1,0} broadcast(reshape.22), dimensions={0}\n"
    "  subtract.24 = f32[8,16]{1,0} subtract(Arg_0.1, broadcast.23)\n"
    "  constant.25 = f32[] constant(1e-06)\n"
    "  broadcast.26 = f32[8]{0} broadcast(constant.25), dimensions={}\n"
    "  add.27 = f32[8]{0} add(maximum.20, broadcast.26)\n"
    "  rsqrt.28 = f32[8]{0} rsqrt(add.27)\n"
    "  reshape.29 = f32[8,1]{1,0} reshape(rsqrt.28)\n"
    "  reshape.30 = f32[8]{0} reshape(reshape.29)\n"
    "  broadcast.31 = f32[8,16]{1,0} broadcast(reshape.30), dimensions={0}\n"
    "  multiply.32 = f32[8,16]{1,0} multiply(subtract.24, broadcast.31)\n"
    "  broadcast.33 = f32[8,16]{1,0} broadcast(Arg_1.2), dimensions={1}\n"
    "  multiply.34 = f32[8,16]{1,0} multiply(multiply.32, broadcast.33)\n"
    "  broadcast.35 = f32[8,16]{1,0} broadcast(Arg_2.3), dimensions={1}\n"
    "  ROOT add.36 = f32[8,16]{1,0} add(multiply.34, broadcast.35)\n"
    "}\n";

/* optax.softmax_cross_entropy(logits, labels): -sum(labels * log_softmax(logits), -1) */
#define XENT_BODY(logits)                                                                                   \
  "  reduce.10 = f32[8]{0} reduce(" logits ", constant.5), dimensions={1}, to_apply=region_0.3\n"           \
  "  reshape.11 = f32[8,1]{1,0} reshape(reduce.10)\n"                                                       \
  "  reshape.12 = f32[8]{0} reshape(reshape.11)\n"                                                          \
  "  broadcast.13 = f32[8,16]{1,0} broadcast(reshape.12), dimensions={0}\n"                                 \
  "  subtract.14 = f32[8,16]{1,0} subtract(" logits ", broadcast.13)\n"                                     \
  "  exponential.15 = f32[8,16]{1,0} exponential(subtract.14)\n"                                            \
  "  reduce.20 = f32[8]{0} reduce(exponential.15, constant.6), dimensions={1}, to_apply=region_1.13\n"      \
  "  reshape.21 = f32[8,1]{1,0} reshape(reduce.20)\n"                                                       \
  "  log.22 = f32[8,1]{1,0} log(reshape.21)\n"                                                              \
  "  reshape.23 = f32[8]{0} reshape(log.22)\n"                                                              \
  "  broadcast.24 = f32[8,16]{1,0} broadcast(reshape.23), dimensions={0}\n"                                 \
  "  subtract.25 = f32[8,16]{1,0} subtract(subtract.14, broadcast.24)\n"                                    \
  "  multiply.26 = f32[8,16]{1,0} multiply(Arg_1.2, subtract.25)\n"                                         \
  "  reduce.31 = f32[8]{0} reduce(multiply.26, constant.6), dimensions={1}, to_apply=region_2.27\n"
#define REGION2 "region_2.27 {\n  Arg_0.28 = f32[] parameter(0)\n  Arg_1.29 = f32[] parameter(1)\n" \
                "  ROOT add.30 = f32[] add(Arg_0.28, Arg_1.29)\n}\n\n"

static const char *SOFTMAX_XENT =
    "HloModule jit_xent, entry_computation_layout={(f32[8,16]{1,0}, f32[8,16]{1,0})->f32[8]{0}}\n\n"
    MAX_REGION ADD_REGION REGION2
    "ENTRY main.32 {\n"
    "  Arg_0.1 = f32[8,16]{1,0} parameter(0)\n"
    "  Arg_1.2 = f32[8,16]{1,0} parameter(1)\n"
    "  constant.5 = f32[] constant(-inf)\n"
    "  constant.6 = f32[] constant(0)\n"
    XENT_BODY("Arg_0.1")
    "  ROOT negate.32 = f32[8]{0} negate(reduce.31)\n"
    "}\n";

/* One MLP step: relu(x.w1 + b1).w2 + b2 as logits, softmax cross-entropy, mean over the batch. */
static const char *MLP_STEP =
    "HloModule jit_mlp_loss, entry_computation_layout={(f32[8,32]{1,0}, f32[8,16]{1,0}, f32[32,64]{1,0}, "
    "f32[64]{0}, f32[64,16]{1,0}, f32[16]{0})->f32[]}\n\n"
    MAX_REGION ADD_REGION REGION2
    "region_3.50 {\n  Arg_0.51 = f32[] parameter(0)\n  Arg_1.52 = f32[] parameter(1)\n"
    "  ROOT add.53 = f32[] add(Arg_0.51, Arg_1.52)\n}\n\n"
    "ENTRY main.60 {\n"
    "  Arg_0.1 = f32[8,32]{1,0} parameter(0)\n"
    "  Arg_1.2 = f32[8,16]{1,0} parameter(1)\n"
    "  Arg_2.3 = f32[32,64]{1,0} parameter(2)\n"
    "  Arg_3.4 = f32[64]{0} parameter(3)\n"
    "  Arg_4.40 = f32[64,16]{1,0} parameter(4)\n"
    "  Arg_5.41 = f32[16]{0} parameter(5)\n"
    "  constant.5 = f32[] constant(-inf)\n"
    "  constant.6 = f32[] constant(0)\n"
    "  dot.42 = f32[8,64]{1,0} dot(Arg_0.1, Arg_2.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  broadcast.43 = f32[8,64]{1,0} broadcast(Arg_3.4), dimensions={1}\n"
    "  add.44 = f32[8,64]{1,0} add(dot.42, broadcast.43)\n"
    "  broadcast.45 = f32[8,64]{1,0} broadcast(constant.6), dimensions={}\n"
    "  maximum.46 = f32[8,64]{1,0} maximum(add.44, broadcast.45)\n"
    "  dot.47 = f32[8,16]{1,0} dot(maximum.46, Arg_4.40), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  broadcast.48 = f32[8,16]{1,0} broadcast(Arg_5.41), dimensions={1}\n"
    "  add.49 = f32[8,16]{1,0} add(dot.47, broadcast.48)\n"
    XENT_BODY("add.49")
    "  negate.32 = f32[8]{0} negate(reduce.31)\n"
    "  reduce.54 = f32[] reduce(negate.32, constant.6), dimensions={0}, to_apply=region_3.50\n"
    "  constant.55 = f32[] constant(8)\n"
    "  ROOT divide.56 = f32[] divide(reduce.54, constant.55)\n"
    "}\n";

/* Nine elementwise ops in a row (with a broadcast 0 for the relu). */
static const char *CHAIN =
    "HloModule jit_chain, entry_computation_layout={(f32[8,16]{1,0}, f32[8,16]{1,0})->f32[8,16]{1,0}}\n\n"
    "ENTRY main.14 {\n"
    "  Arg_0.1 = f32[8,16]{1,0} parameter(0)\n"
    "  Arg_1.2 = f32[8,16]{1,0} parameter(1)\n"
    "  add.3 = f32[8,16]{1,0} add(Arg_0.1, Arg_1.2)\n"
    "  multiply.4 = f32[8,16]{1,0} multiply(add.3, Arg_0.1)\n"
    "  subtract.5 = f32[8,16]{1,0} subtract(multiply.4, Arg_1.2)\n"
    "  exponential.6 = f32[8,16]{1,0} exponential(subtract.5)\n"
    "  negate.7 = f32[8,16]{1,0} negate(exponential.6)\n"
    "  tanh.8 = f32[8,16]{1,0} tanh(negate.7)\n"
    "  constant.9 = f32[] constant(0)\n"
    "  broadcast.10 = f32[8,16]{1,0} broadcast(constant.9), dimensions={}\n"
    "  maximum.11 = f32[8,16]{1,0} maximum(tanh.8, broadcast.10)\n"
    "  abs.12 = f32[8,16]{1,0} abs(maximum.11)\n"
    "  ROOT log-plus-one.13 = f32[8,16]{1,0} log-plus-one(abs.12)\n"
    "}\n";

/* ---- kernel counts of the models ---- */

/* Softmax: max-reduce; {exp(x - max), sum} as one multi-output kInput fusion (the sum's loop
 * also stores exp for the divide); divide. The exp is computed once. */
TEST(fusion_softmax_three_kernels) {
  cx_module *m = FUSE(SOFTMAX);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 3);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_EXP), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 0), 2);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_LOOP, 0), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_EXP) + tp_count(m, CX_OP_REDUCE) + tp_count(m, CX_OP_DIVIDE), 0);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
  CHECK_EQ_INT(FULL_SIZE_KERNELS(SOFTMAX), 3);
}

/* Layer norm: mean and mean-of-squares reduce in one loop over x, with the rsqrt(var + eps)
 * epilogue (multi-output kInput: {rsqrt, mean}); then the normalisation loop: 2 kernels. */
TEST(fusion_layer_norm_two_kernels) {
  cx_module *m = FUSE(LAYER_NORM);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  CHECK(cx_count_kernels(m) <= 3);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_REDUCE), 2);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_RSQRT), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
  CHECK_EQ_INT(FULL_SIZE_KERNELS(LAYER_NORM), 2);
}

/* Softmax cross-entropy: max-reduce; log(sum(exp(x - max))) (reduce with a log epilogue);
 * -sum(labels * (x - max - logsumexp)) (reduce with a negate epilogue): 3 kernels. */
TEST(fusion_softmax_xent_three_kernels) {
  cx_module *m = FUSE(SOFTMAX_XENT);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 3);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_EXP), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_LOG), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 0), 3);
  cx_module_free(m);
  CHECK_EQ_INT(FULL_SIZE_KERNELS(SOFTMAX_XENT), 3);
}

/* MLP step, 6 kernels: relu(x.w1 + b1) and (h.w2 + b2) are two kOutput fusions (GEMM +
 * epilogue); the loss is max-reduce, log-sum-exp, -sum(labels * log_softmax), and the batch
 * mean (reduce of the negated row losses, divided by 8). */
TEST(fusion_mlp_step_dot_epilogues) {
  cx_module *m = FUSE(MLP_STEP);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 6);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 2);
  CHECK_EQ_INT(tp_count(m, CX_OP_DOT), 0);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_DOT), 2);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_MAXIMUM), 1); /* relu (reducers are not fused computations) */
  cx_module_free(m);
}

TEST(fusion_elementwise_chain_one_kernel) {
  cx_module *m = FUSE(CHAIN);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_LOOP, 0), 1);
  CHECK_EQ_INT(m->entry->ninstrs, 3); /* two parameters and the fusion */
  cx_module_free(m);
  CHECK_EQ_INT(FULL_SIZE_KERNELS(CHAIN), 1);
}

/* A second run finds nothing to do: every decision holds for fusions as for raw ops. */
TEST(fusion_is_idempotent) {
  const char *texts[] = {SOFTMAX, LAYER_NORM, SOFTMAX_XENT, MLP_STEP, CHAIN};
  for (int i = 0; i < CX_ARRAY_LEN(texts); i++) {
    cx_module *m = TP_PARSE(texts[i]);
    if (!m) continue;
    fh_run_fusion(m, __FILE__, __LINE__);
    int k = cx_count_kernels(m);
    TP_RUN(m, cx_pass_fusion, 0);
    TP_RUN(m, cx_pass_multi_output_fusion, 0);
    TP_RUN(m, cx_pass_dot_epilogue_fusion, 0);
    CHECK_EQ_INT(cx_count_kernels(m), k);
    cx_module_free(m);
  }
}

/* The whole CPU pipeline (inline, simplification fixpoint, fusion passes, DCE) gives the same
 * kernel counts, and --fusion=off one kernel per memory-computing op. */
static int pipeline_kernels(const char *text, int fusion, const char *file, int line) {
  cx_module *m = tp_parse(text, file, line);
  if (!m) return -1;
  cx_module *orig = cx_module_clone(m);
  cx_flags f;
  cx_flags_init(&f);
  f.fusion = fusion;
  cx_pass_opts pc_opts = cx_pass_opts_from_flags(&f);
  cx_pass_ctx pc = {&pc_opts, 1, 0, NULL};
  cxla_status s = cx_pass_pipeline(&pc, m);
  if (s != CXLA_OK) test_fail(file, line, "pipeline: %s", cxla_context_errmsg(test_ctx()));
  else if (orig) tp_check_equivalent(orig, m, 3, file, line);
  int k = s == CXLA_OK ? cx_count_kernels(m) : -1;
  cx_module_free(orig);
  cx_module_free(m);
  return k;
}
#define PIPELINE_KERNELS(text, fusion) pipeline_kernels((text), (fusion), __FILE__, __LINE__)

TEST(fusion_cpu_pipeline_counts) {
  /* row fusion makes each of softmax, layer norm and softmax cross-entropy one kernel */
  CHECK_EQ_INT(PIPELINE_KERNELS(SOFTMAX, 1), 1);
  CHECK_EQ_INT(PIPELINE_KERNELS(LAYER_NORM, 1), 1);
  CHECK_EQ_INT(PIPELINE_KERNELS(SOFTMAX_XENT, 1), 1);
  CHECK_EQ_INT(PIPELINE_KERNELS(MLP_STEP, 1), 4);
  CHECK_EQ_INT(PIPELINE_KERNELS(CHAIN, 1), 1);
  /* results the row kernel keeps for other readers: still one kernel (two before the row fusion
   * kept them); where keeping them would close a cycle, the divide stays apart */
  CHECK_EQ_INT(PIPELINE_KERNELS(SOFTMAX_KEPT, 1), 1);
  int cyc = PIPELINE_KERNELS(SOFTMAX_KEPT_CYCLE, 1);
  CHECK_MSG(cyc >= 2, "softmax whose divide reads a column sum of its exp: %d kernels", cyc);
  /* 12 MiB of rows: the row kernel stores its one input-shaped output non-temporally, which two
   * would not get; the divide stays a kernel of its own */
  char *a = fh_subst(SOFTMAX_KEPT, "2,3,8,16", "4,3,256,1024"), *big = a ? fh_subst(a, "2,3,8]", "4,3,256]") : NULL;
  CHECK(big && PIPELINE_KERNELS(big, 1) == 2);
  cx_free(a);
  cx_free(big);
  /* Unfused: whatever the simplifier leaves, every op is a kernel; far more than fused. */
  int off = PIPELINE_KERNELS(SOFTMAX, 0);
  CHECK_MSG(off >= 7, "softmax with --fusion=off: %d kernels", off);
  if (getenv("CXLA_FUSION_TEST_PRINT")) printf("softmax --fusion=off after the pipeline: %d kernels\n", off);
  CHECK_EQ_INT(PIPELINE_KERNELS(CHAIN, 0), 10);
}
