/* test_randgraph_gen.c — the random graph generator's own tests: seeds name the same graph
 * every time, every graph verifies and runs on the interpreter, the generator covers the ops
 * the brief asks for, the analysis rules mark what must not be compared, the tolerances are
 * tight enough to notice a wrong element, and the shrinker cuts a module down to what a
 * failure needs. Nothing here needs the CPU backend. */
#include <math.h>
#include "randgraph.h"
#include "interp/interp.h"
#include "ir/types.h"
#include "test.h"

#define NSEEDS 300

static int count_op(cx_module *m, cx_op op) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) n += m->comps[k]->instrs[i]->op == op;
  return n;
}

static int has_type(cx_module *m, cxla_type t) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++)
      if (m->comps[k]->instrs[i]->shape.type == t) return 1;
  return 0;
}

TEST(randgraph_seeds_are_deterministic_and_valid) {
  rg_config cfg;
  rg_config_default(&cfg);
  for (uint64_t seed = 1; seed <= 40; seed++) {
    rg_graph a, b;
    CHECK_OK(rg_generate(test_ctx(), seed, &cfg, &a));
    CHECK_OK(rg_generate(test_ctx(), seed, &cfg, &b));
    if (!a.text || !b.text) {
      rg_graph_free(&a);
      rg_graph_free(&b);
      continue;
    }
    CHECK_MSG(!strcmp(a.text, b.text), "seed %llu: two different graphs", (unsigned long long)seed);
    CHECK_OK(cxla_module_verify(a.m));
    /* the graph's outputs are all comparable, and the interpreter runs it */
    int n = 0;
    char why[200];
    rg_val *v = rg_analyze(a.m, a.params, a.nparams, &n, why, sizeof why);
    CHECK(v && n > 0);
    for (int i = 0; v && i < n; i++) CHECK_MSG(!v[i].bad, "seed %llu leaf %d: %s", (unsigned long long)seed, i, why);
    cx_free(v);
    cxla_literal *args[64], *out = NULL;
    for (int i = 0; i < a.nparams && i < 64; i++)
      args[i] = rg_make_input(&a.m->entry->params[i]->shape, &a.params[i], seed + (uint64_t)i);
    CHECK_MSG(cx_interp_run(a.m, a.nparams, args, &out) == CXLA_OK, "seed %llu: %s", (unsigned long long)seed,
              cxla_context_errmsg(test_ctx()));
    cxla_literal_destroy(out);
    for (int i = 0; i < a.nparams && i < 64; i++) cxla_literal_destroy(args[i]);
    rg_graph_free(&a);
    rg_graph_free(&b);
  }
}

/* Over the CI seeds every construct of the brief shows up, in a fair share of the graphs. */
TEST(randgraph_covers_the_ops) {
  static const cx_op want[] = {
      CX_OP_ADD, CX_OP_SUBTRACT, CX_OP_MULTIPLY, CX_OP_DIVIDE, CX_OP_MAXIMUM, CX_OP_EXP, CX_OP_LOG, CX_OP_TANH,
      CX_OP_SQRT, CX_OP_COMPARE, CX_OP_SELECT, CX_OP_CLAMP, CX_OP_CONVERT, CX_OP_BROADCAST, CX_OP_RESHAPE,
      CX_OP_TRANSPOSE, CX_OP_SLICE, CX_OP_PAD, CX_OP_CONCATENATE, CX_OP_REVERSE, CX_OP_IOTA, CX_OP_DYNAMIC_SLICE,
      CX_OP_DYNAMIC_UPDATE_SLICE, CX_OP_REDUCE, CX_OP_DOT, CX_OP_REDUCE_WINDOW, CX_OP_GATHER, CX_OP_WHILE,
      CX_OP_CONDITIONAL, CX_OP_TUPLE, CX_OP_POWER, CX_OP_REMAINDER, CX_OP_SHIFT_LEFT, CX_OP_AND,
      CX_OP_BITCAST_CONVERT, CX_OP_REDUCE_PRECISION, CX_OP_TOPK, CX_OP_CHOLESKY, CX_OP_TRIANGULAR_SOLVE,
      CX_OP_RNG_BIT_GENERATOR, CX_OP_STOCHASTIC_CONVERT};
  static const cxla_type types[] = {CXLA_F32, CXLA_F64, CXLA_S32, CXLA_S8, CXLA_U32, CXLA_PRED, CXLA_F16, CXLA_BF16};
  int graphs[CX_ARRAY_LEN(want)] = {0}, typed[CX_ARRAY_LEN(types)] = {0}, variadic = 0, big = 0, special = 0;
  int64_t total = 0;
  rg_config cfg;
  rg_config_default(&cfg);
  for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
    rg_graph g;
    if (rg_generate(test_ctx(), seed, &cfg, &g) != CXLA_OK) {
      CHECK_MSG(0, "seed %llu: %s", (unsigned long long)seed, cxla_context_errmsg(test_ctx()));
      continue;
    }
    for (int k = 0; k < g.m->ncomps; k++) total += g.m->comps[k]->ninstrs;
    for (int i = 0; i < CX_ARRAY_LEN(want); i++) graphs[i] += count_op(g.m, want[i]) > 0;
    for (int i = 0; i < CX_ARRAY_LEN(types); i++) typed[i] += has_type(g.m, types[i]);
    for (int i = 0; i < g.m->entry->ninstrs; i++) {
      cx_instr *in = g.m->entry->instrs[i];
      variadic += in->op == CX_OP_REDUCE && in->nops == 4;
      big += cx_type_is_array(in->shape.type) && cx_shape_elems(&in->shape) >= 100000;
    }
    for (int p = 0; p < g.nparams; p++) special += g.params[p].v.special;
    rg_graph_free(&g);
  }
  if (getenv("CXLA_RANDGRAPH_STATS")) {
    printf("    %lld instructions in %d graphs\n", (long long)total, NSEEDS);
    for (int i = 0; i < CX_ARRAY_LEN(want); i++) printf("    %-22s in %3d graphs\n", cx_op_name(want[i]), graphs[i]);
    for (int i = 0; i < CX_ARRAY_LEN(types); i++) printf("    %-22s in %3d graphs\n", cxla_type_name(types[i]), typed[i]);
    printf("    argmax reduces %d, 100k-element values %d, NaN/inf parameters %d\n", variadic, big, special);
  }
  for (int i = 0; i < CX_ARRAY_LEN(want); i++)
    CHECK_MSG(graphs[i] >= NSEEDS / 30, "%s in only %d of %d graphs", cx_op_name(want[i]), graphs[i], NSEEDS);
  for (int i = 0; i < CX_ARRAY_LEN(types); i++)
    CHECK_MSG(typed[i] >= NSEEDS / 15, "%s in only %d of %d graphs", cxla_type_name(types[i]), typed[i], NSEEDS);
  CHECK_MSG(variadic >= 5, "only %d argmax reduces", variadic);
  CHECK_MSG(big >= 3, "only %d values of 100k elements", big);
  CHECK_MSG(special >= 5, "only %d parameters with NaN/inf", special);
}

/* The tolerances must still see a wrong element: over the CI seeds, moving one element of
 * each float output by 1% of its largest magnitude (16 ulps for f16/bf16) must
 * fail the comparison for most outputs (loops that amplify their state and long f16/bf16
 * chains are allowed to be loose; 89% are caught at the time of writing). */
static void leaves(cxla_literal *l, cxla_literal **out, int *n, int cap) {
  if (cxla_literal_type(l) != CXLA_TUPLE) {
    if (*n < cap) out[(*n)++] = l;
    return;
  }
  for (int i = 0; i < cxla_literal_tuple_size(l); i++) leaves(cxla_literal_tuple_get(l, i), out, n, cap);
}

TEST(randgraph_tolerances_see_a_wrong_element) {
  rg_config cfg;
  rg_config_default(&cfg);
  int tried = 0, seen = 0, exact = 0;
  double worst = 0;
  for (uint64_t seed = 1; seed <= 150; seed++) {
    rg_graph g;
    if (rg_generate(test_ctx(), seed, &cfg, &g) != CXLA_OK) continue;
    cxla_literal *args[64], *out = NULL;
    int np = g.nparams < 64 ? g.nparams : 64, n = 0;
    for (int i = 0; i < np; i++) args[i] = rg_make_input(&g.m->entry->params[i]->shape, &g.params[i], seed * 3 + (uint64_t)i);
    rg_val *tol = rg_analyze(g.m, g.params, g.nparams, &n, NULL, 0);
    if (tol && cx_interp_run(g.m, np, args, &out) == CXLA_OK) {
      cxla_literal *lv[64];
      int nl = 0;
      leaves(out, lv, &nl, 64);
      for (int i = 0; i < nl && i < n; i++) {
        cxla_type t = cxla_literal_type(lv[i]);
        int64_t ne = cxla_literal_element_count(lv[i]);
        if (!cx_type_is_float(t) || ne == 0) continue;
        double rtol, atol, big = 0;
        rg_tolerance(&tol[i], t, &rtol, &atol);
        exact += atol == 0 && rtol == 0;
        for (int64_t k = 0; k < ne; k++) {
          double v = cxla_literal_get_f64(lv[i], k);
          if (isfinite(v)) big = fmax(big, fabs(v));
        }
        int64_t k = (int64_t)(seed * 7919 % (uint64_t)ne);
        double v = cxla_literal_get_f64(lv[i], k);
        if (!isfinite(v) || big == 0) continue;
        cxla_literal *bad = cxla_literal_clone(test_ctx(), lv[i]);
        double rel = fmax(0.01, 16 * rg_eps(t)); /* bf16: 6%, f16: 1.6%: a few ulps may differ */
        cxla_literal_set_f64(bad, k, v + rel * big);
        tried++;
        if (!cx_literal_compare(bad, lv[i], rtol, atol, NULL)) seen++;
        else {
          worst = fmax(worst, atol / big);
          if (getenv("CXLA_RANDGRAPH_STATS"))
            printf("    seed %llu leaf %d: %s missed: atol %.3g rtol %.3g max %.3g err %.3g range [%.3g, %.3g]\n",
                   (unsigned long long)seed, i, cxla_type_name(t), atol, rtol, big, tol[i].err, tol[i].lo, tol[i].hi);
        }
        cxla_literal_destroy(bad);
      }
    }
    cxla_literal_destroy(out);
    cx_free(tol);
    for (int i = 0; i < np; i++) cxla_literal_destroy(args[i]);
    rg_graph_free(&g);
  }
  if (getenv("CXLA_RANDGRAPH_STATS"))
    printf("    a 1%% error caught in %d of %d float outputs (%d compared exactly); loosest missed atol/max %.3g\n", seen,
           tried, exact, worst);
  CHECK_MSG(tried >= 100, "only %d float outputs", tried);
  CHECK_MSG(seen >= tried * 85 / 100, "a 1%% error caught in only %d of %d float outputs", seen, tried);
}

/* The shrinker keeps what the failure needs and drops the rest: with "fails" meaning "the
 * result depends on a gather of a computed value", a generated graph shrinks to little more
 * than the gather, the op computing its operand, and their inputs. */
static int gather_of_op(void *user, const char *text, const rg_param *params, int nparams) {
  (void)params, (void)nparams;
  ++*(int *)user;
  cx_module *m = NULL;
  if (cxla_module_parse(test_ctx(), text, strlen(text), "t", &m) != CXLA_OK) return 0;
  cx_comp_remove_dead(m->entry); /* what the root uses */
  int found = 0;
  for (int i = 0; i < m->entry->ninstrs; i++) {
    cx_instr *in = m->entry->instrs[i];
    found |= in->op == CX_OP_GATHER && in->ops[0]->op != CX_OP_PARAMETER;
  }
  cxla_module_destroy(m);
  return found;
}

TEST(randgraph_shrinker_keeps_the_failure) {
  rg_config cfg;
  rg_config_default(&cfg);
  int shrunk = 0;
  for (uint64_t seed = 1; seed <= 300 && shrunk < 2; seed++) {
    rg_graph g;
    if (rg_generate(test_ctx(), seed, &cfg, &g) != CXLA_OK) continue;
    int calls = 0;
    if (gather_of_op(&calls, g.text, g.params, g.nparams)) {
      rg_param *p = cx_malloc(sizeof *p * (size_t)(g.nparams + 1));
      memcpy(p, g.params, sizeof *p * (size_t)g.nparams);
      int np = g.nparams, tries = 0;
      char *min = rg_shrink(test_ctx(), g.text, &p, &np, gather_of_op, &calls, 2000, &tries);
      CHECK(min != NULL);
      if (min) {
        cx_module *m = NULL;
        CHECK_OK(cxla_module_parse(test_ctx(), min, strlen(min), "min", &m));
        CHECK_MSG(gather_of_op(&calls, min, p, np), "seed %llu: the shrunk module lost the failure:\n%s",
                  (unsigned long long)seed, min);
        CHECK_EQ_INT(np, cxla_module_num_parameters(m));
        /* gather, its operand's op and that op's operands, the indices */
        CHECK_MSG(m && m->entry->ninstrs <= 7, "seed %llu: %d instructions left:\n%s", (unsigned long long)seed,
                  m ? m->entry->ninstrs : -1, min);
        cxla_module_destroy(m);
      }
      free(min);
      cx_free(p);
      shrunk++;
    }
    rg_graph_free(&g);
  }
  CHECK_EQ_INT(shrunk, 2);
}
