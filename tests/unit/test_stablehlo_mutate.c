/* test_stablehlo_mutate.c — the translation meets well-formed trees with unexpected content:
 * every op of every committed artifact, in turn, loses its attributes, operands or results,
 * gets attributes of the wrong kind, or takes the name of another op (known or refused). Each
 * translation must end in a module (which the verifier then judges) or in one error naming the
 * file and, for an op's fault, the op; never a crash or a leak (ASan runs this too). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/verify.h"
#include "stablehlo/translate.h"
#include "test.h"

typedef struct mut_stats {
  int translations, modules, errors;
  unsigned turn;
} mut_stats;

static const char *const other_names[] = {
    "vhlo.add_v1", "vhlo.while_v1", "vhlo.reduce_v1", "vhlo.custom_call_v1", "vhlo.case_v1", "vhlo.sort_v1",
    "vhlo.convolution_v1", "vhlo.gather_v2", "vhlo.scatter_v2", "vhlo.call_v1", "vhlo.get_tuple_element_v1",
    "vhlo.optimization_barrier_v1", "vhlo.einsum_v1", "vhlo.torch_index_select_v1", "vhlo.unary_einsum_v1", "vhlo.bogus_v9", "vhlo.return_v1", "vhlo.func_v1", "func.call",
    "vhlo.dynamic_slice_v1", "vhlo.rng_bit_generator_v1", "vhlo.select_and_scatter_v1", "vhlo.composite_v2"};

static void translate_once(const cx_mlir_tree *t, const char *file, mut_stats *st, const char *what) {
  cx_module *m = NULL;
  cxla_status s = cx_stablehlo_to_module(test_ctx(), t, file, &m);
  st->translations++;
  if (s == CXLA_OK) {
    CHECK_MSG(m != NULL, "%s: %s: OK without a module", file, what);
    if (m) cx_verify_module(m); /* may refuse; must not crash */
    cx_module_free(m);
    st->modules++;
    return;
  }
  st->errors++;
  CHECK_MSG(m == NULL, "%s: %s: a module after an error", file, what);
  const char *msg = cxla_context_errmsg(test_ctx());
  CHECK_MSG(strstr(msg, file) && strstr(msg, "error: "), "%s: %s: message '%s' does not name the file", file, what, msg);
}

static void mutate_op(const cx_mlir_tree *t, cx_mlir_op *op, const char *file, mut_stats *st) {
  int na = op->num_attrs, no = op->num_operands, nr = op->num_results;
  const char *name = op->name;
  op->num_attrs = 0;
  translate_once(t, file, st, "no attributes");
  op->num_attrs = na;
  if (no) {
    op->num_operands = 0;
    translate_once(t, file, st, "no operands");
    op->num_operands = no - 1;
    translate_once(t, file, st, "one operand fewer");
    op->num_operands = no;
  }
  if (nr) {
    op->num_results = nr - 1;
    translate_once(t, file, st, "one result fewer");
    op->num_results = nr;
  }
  /* each attribute in turn of another kind: a string, an integer, an empty array */
  static cx_mlir_attr str = {.kind = CX_MLIR_ATTR_STRING, .dialect = "vhlo", .u.str = {"x", 1, NULL}};
  static cx_mlir_attr arr = {.kind = CX_MLIR_ATTR_ARRAY, .dialect = "vhlo", .u.array = {0, NULL}};
  static cx_mlir_type i64 = {.kind = CX_MLIR_TYPE_INT, .dialect = "vhlo", .width = 64};
  static cx_mlir_attr big = {.kind = CX_MLIR_ATTR_INT, .dialect = "vhlo", .u.integer = {&i64, (uint64_t)1 << 40, (int64_t)1 << 40}};
  const cx_mlir_attr *subst[3] = {&str, &big, &arr};
  /* the kinds and the names take turns over the ops, so that each is tried many times while the
   * test stays short */
  for (int i = 0; i < na; i++) {
    const cx_mlir_attr *keep = op->attrs[i].value;
    op->attrs[i].value = subst[st->turn++ % 3];
    translate_once(t, file, st, op->attrs[i].name);
    op->attrs[i].value = keep;
  }
  for (int k = 0; k < 3; k++) {
    op->name = other_names[st->turn++ % CX_ARRAY_LEN(other_names)];
    translate_once(t, file, st, op->name);
  }
  op->name = name;
}

static void walk(const cx_mlir_tree *t, const cx_mlir_block *b, const char *file, mut_stats *st, int depth) {
  for (int i = 0; i < b->num_ops; i++) {
    cx_mlir_op *op = b->ops[i];
    if (depth > 0) mutate_op(t, op, file, st); /* depth 0: builtin.module itself */
    for (int r = 0; r < op->num_regions; r++)
      for (int k = 0; k < op->regions[r].num_blocks; k++) walk(t, &op->regions[r].blocks[k], file, st, depth + 1);
  }
}

static void mutate_dir(const char *sub, mut_stats *st, int *files) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/tests/stablehlo/%s", test_srcdir(), sub);
  DIR *d = opendir(dir);
  CHECK_MSG(d, "cannot open %s", dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 8 || strcmp(e->d_name + n - 7, ".mlirbc")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len);
    size_t got = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    cx_mlir_tree *t = NULL;
    if (got == (size_t)len && cx_mlirbc_read(test_ctx(), b, (size_t)len, e->d_name, &t) == CXLA_OK) {
      walk(t, &t->top, e->d_name, st, 0);
      (*files)++;
    }
    cx_mlir_tree_free(t);
    free(b);
  }
  closedir(d);
}

TEST(stablehlo_mutated_trees) {
  mut_stats st = {0, 0, 0, 0};
  int files = 0;
  mutate_dir("programs", &st, &files);
  mutate_dir("artifacts", &st, &files);
  CHECK_MSG(files >= 30, "only %d artifacts read", files);
  CHECK(st.errors > 0 && st.modules > 0);
  printf("    %d artifacts, %d mutated translations: %d modules, %d refused\n", files, st.translations, st.modules,
         st.errors);
}

/* Every allocation of a translation, in turn, fails: the translation returns
 * CXLA_ERR_OUT_OF_MEMORY and no module, and leaks nothing (ASan). */
TEST(stablehlo_translation_allocation_failures) {
  static const char *const names[] = {"cond_case", "while_loops", "linalg", "collectives", "feeds", "gather_scatter"};
  for (int a = 0; a < CX_ARRAY_LEN(names); a++) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/stablehlo/programs/%s.mlirbc", test_srcdir(), names[a]);
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f, "cannot open %s", path);
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len);
    size_t got = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    cx_mlir_tree *t = NULL;
    CHECK(got == (size_t)len && cx_mlirbc_read(test_ctx(), b, (size_t)len, names[a], &t) == CXLA_OK);
    int64_t n = 0;
    for (; t && n < 100000; n++) {
      cx_module *m = NULL;
      cx_alloc_fail_after(n);
      cxla_status s = cx_stablehlo_to_module(test_ctx(), t, names[a], &m);
      int64_t injected = cx_alloc_failures();
      cx_alloc_fail_after(-1);
      if (!injected) {
        CHECK_MSG(s == CXLA_OK && m, "%s: %s", names[a], cxla_context_errmsg(test_ctx()));
        cx_module_free(m);
        break;
      }
      CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY && !m, "%s: allocation %lld failed and the translation returned %s: %s",
                names[a], (long long)n, cxla_status_str(s), cxla_context_errmsg(test_ctx()));
      cx_module_free(m);
    }
    CHECK_MSG(n > 2, "%s: %lld allocation points", names[a], (long long)n); /* the arena takes big blocks */
    cx_mlir_tree_free(t);
    free(b);
  }
}

/* A VHLO op cxla has no rule for is refused by its name, with the op's MLIR location; MLIR
 * bytecode of other dialects (not a portable artifact) is refused saying so. */
TEST(stablehlo_refusals_name_op_and_location) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/stablehlo/programs/elementwise.mlirbc", test_srcdir());
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len);
  size_t got = b ? fread(b, 1, (size_t)len, f) : 0;
  fclose(f);
  cx_mlir_tree *t = NULL;
  CHECK(got == (size_t)len && cx_mlirbc_read(test_ctx(), b, (size_t)len, "e.mlirbc", &t) == CXLA_OK);
  cx_mlir_op *mod = t ? cx_mlir_block_find(&t->top, "builtin.module") : NULL;
  cx_mlir_op *main_fn = mod ? cx_mlir_find_func(mod, "main") : NULL;
  CHECK(main_fn && main_fn->num_regions == 1 && main_fn->regions[0].blocks[0].num_ops > 1);
  if (main_fn) {
    cx_mlir_op *op = main_fn->regions[0].blocks[0].ops[0];
    char where[256];
    cx_mlir_loc_str(op->loc, where, sizeof where);
    CHECK_MSG(strstr(where, "stablehlo_pairs.py:"), "the artifact's locations: %s", where);
    const char *name = op->name;
    cx_module *m = NULL;
    op->name = "vhlo.unary_einsum_v1";
    CHECK_EQ_INT(cx_stablehlo_to_module(test_ctx(), t, "e.mlirbc", &m), CXLA_ERR_UNSUPPORTED);
    const char *msg = cxla_context_errmsg(test_ctx());
    CHECK_STR_CONTAINS(msg, "e.mlirbc: error: ");
    CHECK_STR_CONTAINS(msg, where);
    CHECK_STR_CONTAINS(msg, "vhlo.unary_einsum_v1: not supported: unary_einsum is deprecated");
    op->name = "vhlo.frobnicate_v7";
    CHECK_EQ_INT(cx_stablehlo_to_module(test_ctx(), t, "e.mlirbc", &m), CXLA_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "vhlo.frobnicate_v7: not supported: unknown VHLO op");
    op->name = name;
    CHECK(m == NULL);
  }
  cx_mlir_tree_free(t);
  free(b);
  /* plain MLIR bytecode (func and stablehlo ops, as mlir-opt writes it) */
  snprintf(path, sizeof path, "%s/tests/stablehlo/artifacts/resource.mlirbc", test_srcdir());
  cxla_module *pm = NULL;
  CHECK_EQ_INT(cxla_module_parse_file(test_ctx(), path, &pm), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "is not a StableHLO portable artifact (VHLO)");
}
