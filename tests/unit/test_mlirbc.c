/* test_mlirbc.c — the MLIR bytecode reader (src/stablehlo/bytecode*.c) on real StableHLO
 * portable artifacts written by JAX (tests/stablehlo/artifacts, scripts/stablehlo_artifacts.py):
 * each reads, and its ops, result types and block arguments are what jaxlib itself reads from
 * the same bytes (the .facts files, written by jaxlib's deserializer, not by this reader).
 * Then damage: every truncation and single-bit flip of an artifact is either read or refused with
 * a message naming a byte offset (never a crash: run under ASan), and every allocation failure
 * during a read comes back as out-of-memory without leaks. */
#include <stdint.h>
#include "stablehlo/bytecode_int.h"
#include "test.h"

static const char *const artifacts[] = {
    "elementwise", "dot", "reduce", "while_loop", "cond", "case", "scatter_gather", "sort",
    "conv", "linalg", "large_constant", "mixed_types", "rng_iota", "export", "export_poly",
    "target_0_9_0", "target_0_12_0", "target_0_14_0"};

/* The bytecode version each artifact was written with (older StableHLO targets, older format). */
static int bytecode_version_of(const char *name) {
  if (!strcmp(name, "target_0_9_0")) return 0;
  if (!strcmp(name, "target_0_12_0")) return 3;
  if (!strcmp(name, "target_0_14_0")) return 4;
  return 6;
}

static char *slurp(const char *name, const char *ext, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/stablehlo/artifacts/%s%s", test_srcdir(), name, ext);
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (!s) return NULL;
  s[n] = 0;
  *len = (size_t)n;
  return s;
}

/* The StableHLO name jaxlib gives back for a vhlo op (VhloLegalizeToStablehlo's rule). */
static void stablehlo_name(const cx_mlir_op *op, char *buf, size_t n) {
  const char *name = op->name;
  if (strncmp(name, "vhlo.", 5)) {
    snprintf(buf, n, "%s", name);
    return;
  }
  const cx_mlir_op *parent = op->parent && op->parent->parent ? op->parent->parent->parent : NULL;
  if (!strcmp(name, "vhlo.func_v1")) snprintf(buf, n, "func.func");
  else if (!strcmp(name, "vhlo.call_v1")) snprintf(buf, n, "func.call");
  else if (!strcmp(name, "vhlo.return_v1") && parent && !strcmp(parent->name, "vhlo.func_v1"))
    snprintf(buf, n, "func.return");
  else {
    const char *v = strrchr(name, '_');
    int len = v && v[1] == 'v' ? (int)(v - name) - 5 : (int)strlen(name) - 5;
    snprintf(buf, n, "stablehlo.%.*s", len, name + 5);
  }
}

/* The same digest the generator writes from jaxlib's reading. */
static void digest(cx_sb *sb, const cx_mlir_op *op, int depth) {
  char name[256];
  stablehlo_name(op, name, sizeof name);
  for (int i = 0; i < depth; i++) cx_sb_puts(sb, "  ");
  cx_sb_printf(sb, "%s operands=%d regions=%d -> ", name, op->num_operands, op->num_regions);
  for (int i = 0; i < op->num_results; i++) {
    if (i) cx_sb_puts(sb, ", ");
    cx_mlir_print_type(sb, op->results[i].type);
  }
  cx_sb_putc(sb, '\n');
  for (int r = 0; r < op->num_regions; r++)
    for (int b = 0; b < op->regions[r].num_blocks; b++) {
      const cx_mlir_block *blk = &op->regions[r].blocks[b];
      if (blk->num_args) {
        for (int i = 0; i <= depth; i++) cx_sb_puts(sb, "  ");
        cx_sb_puts(sb, "^bb(");
        for (int i = 0; i < blk->num_args; i++) {
          if (i) cx_sb_puts(sb, ", ");
          cx_mlir_print_type(sb, blk->args[i].type);
        }
        cx_sb_puts(sb, ")\n");
      }
      for (int i = 0; i < blk->num_ops; i++) digest(sb, blk->ops[i], depth + 1);
    }
}

static cx_mlir_tree *read_artifact(const char *name, char **bytes, size_t *len) {
  *bytes = slurp(name, ".mlirbc", len);
  if (!*bytes) return NULL;
  cx_mlir_tree *t = NULL;
  CHECK_OK(cx_mlirbc_read(test_ctx(), *bytes, *len, name, &t));
  return t;
}

TEST(mlirbc_artifacts_match_jaxlib) {
  for (int a = 0; a < CX_ARRAY_LEN(artifacts); a++) {
    size_t len, flen;
    char *bytes, *facts = slurp(artifacts[a], ".facts", &flen);
    cx_mlir_tree *t = read_artifact(artifacts[a], &bytes, &len);
    if (t && facts) {
      CHECK_EQ_INT(t->bytecode_version, bytecode_version_of(artifacts[a]));
      CHECK_MSG(!strncmp(t->producer, "StableHLO_v", 11), "%s: producer %s", artifacts[a], t->producer);
      cx_sb sb;
      cx_sb_init(&sb);
      for (int i = 0; i < t->top.num_ops; i++) digest(&sb, t->top.ops[i], 0);
      char *got = cx_sb_take(&sb);
      CHECK_MSG(got && !strcmp(got, facts), "%s: the reader's ops differ from jaxlib's:\n--- reader\n%s--- jaxlib\n%s",
                artifacts[a], got ? got : "(oom)", facts);
      cx_free(got);
      char *text = cx_mlir_print_tree(t, 1);
      CHECK(text != NULL && strstr(text, "\"vhlo.func_v1\"") && strstr(text, "loc("));
      cx_free(text);
    }
    cx_mlir_tree_free(t);
    free(bytes);
    free(facts);
  }
}

/* Decoded values, checked against what the generator's programs say. */
TEST(mlirbc_attribute_values) {
  size_t len;
  char *bytes;
  cx_mlir_tree *t = read_artifact("linalg", &bytes, &len);
  if (t) {
    const cx_mlir_op *module = t->top.ops[0];
    CHECK_STR_CONTAINS(cx_mlir_attr_cstr(cx_mlir_op_attr(module, "sym_name")), "jit_linalg");
    const cx_mlir_attr *np = cx_mlir_op_attr(module, "mhlo.num_partitions");
    CHECK(np && np->kind == CX_MLIR_ATTR_INT && np->u.integer.value == 1 && np->u.integer.type->width == 32);
    const cx_mlir_op *main_fn = cx_mlir_find_func(module, "main");
    CHECK(main_fn != NULL);
    const cx_mlir_attr *ft = cx_mlir_op_attr(main_fn, "function_type");
    CHECK(ft && ft->kind == CX_MLIR_ATTR_TYPE && ft->u.type->kind == CX_MLIR_TYPE_FUNCTION &&
          ft->u.type->n == 1 && ft->u.type->nout == 2);
    CHECK_STR_CONTAINS(cx_mlir_attr_cstr(cx_mlir_op_attr(main_fn, "sym_visibility")), "public");
    /* the lapack custom call of cholesky, with its enum and alias attributes */
    const cx_mlir_op *chol = cx_mlir_find_func(module, "cholesky");
    const cx_mlir_op *cc = NULL;
    for (int i = 0; chol && i < chol->regions[0].blocks[0].num_ops; i++)
      if (!strcmp(chol->regions[0].blocks[0].ops[i]->name, "vhlo.custom_call_v1")) cc = chol->regions[0].blocks[0].ops[i];
    CHECK(cc != NULL);
    if (cc) {
      CHECK_STR_CONTAINS(cx_mlir_attr_cstr(cx_mlir_op_attr(cc, "call_target_name")), "lapack_spotrf_ffi");
      const cx_mlir_attr *api = cx_mlir_op_attr(cc, "api_version");
      CHECK(api && api->kind == CX_MLIR_ATTR_ENUM && api->u.enm.which == CX_MLIR_ENUM_CUSTOM_CALL_API_VERSION);
      const cx_mlir_attr *al = cx_mlir_op_attr(cc, "output_operand_aliases");
      CHECK(al && al->kind == CX_MLIR_ATTR_ARRAY && al->u.array.n == 1 &&
            al->u.array.elems[0]->kind == CX_MLIR_ATTR_OUTPUT_OPERAND_ALIAS &&
            al->u.array.elems[0]->u.alias.nout == 1 && al->u.array.elems[0]->u.alias.operand_index == 0);
      char loc[256];
      cx_mlir_loc_str(cc->loc, loc, sizeof loc);
      CHECK_MSG(!strcmp(loc, "cholesky"), "location %s", loc); /* JAX names it, no file */
      cx_mlir_loc_str(main_fn->regions[0].blocks[0].ops[0]->loc, loc, sizeof loc);
      CHECK_STR_CONTAINS(loc, "stablehlo_artifacts.py:");
    }
  }
  cx_mlir_tree_free(t);
  free(bytes);

  /* large_constant: x + arange(600)/7 (a 20x30 f32 constant), 11 packed booleans, a splat true */
  t = read_artifact("large_constant", &bytes, &len);
  int seen_big = 0, seen_bools = 0, seen_splat = 0, seen_fsplat = 0;
  const cx_mlir_op *f = t ? cx_mlir_find_func(t->top.ops[0], "main") : NULL;
  for (int i = 0; f && i < f->regions[0].blocks[0].num_ops; i++) {
    const cx_mlir_op *op = f->regions[0].blocks[0].ops[i];
    if (strcmp(op->name, "vhlo.constant_v1")) continue;
    const cx_mlir_attr *v = cx_mlir_op_attr(op, "value");
    if (!v || v->kind != CX_MLIR_ATTR_TENSOR) continue;
    if (v->u.dense.count == 600 && !v->u.dense.splat && v->u.dense.size == 2400) {
      float x;
      memcpy(&x, v->u.dense.data + 4 * 599, 4);
      CHECK_NEAR(x, 599.0f / 7.0f, 1e-4);
      seen_big = 1;
    }
    if (v->u.dense.count == 11 && v->u.dense.size == 11) {
      static const uint8_t want[11] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0};
      CHECK(!memcmp(v->u.dense.data, want, 11));
      seen_bools = 1;
    }
    if (v->u.dense.count == 12 && v->u.dense.splat) {
      float x;
      CHECK(v->u.dense.size == 4);
      memcpy(&x, v->u.dense.data, 4);
      CHECK_NEAR(x, 2.5, 0);
      seen_fsplat = 1;
    }
    if (v->u.dense.count == 9 && v->u.dense.splat) {
      CHECK(v->u.dense.size == 1 && v->u.dense.data[0] == 1);
      seen_splat = 1;
    }
  }
  CHECK(seen_big && seen_bools && seen_splat && seen_fsplat);
  cx_mlir_tree_free(t);
  free(bytes);
}

/* The constants of mixed_types (bf16 3, ui8 200, i32 -7) and rng_iota's algorithm enum. */
static const cx_mlir_attr *constant_of(const cx_mlir_op *f, const char *type) {
  for (int i = 0; f && i < f->regions[0].blocks[0].num_ops; i++) {
    const cx_mlir_op *op = f->regions[0].blocks[0].ops[i];
    if (strcmp(op->name, "vhlo.constant_v1")) continue;
    cx_sb sb;
    cx_sb_init(&sb);
    cx_mlir_print_type(&sb, op->results[0].type);
    char *t = cx_sb_take(&sb);
    int hit = t && !strcmp(t, type);
    cx_free(t);
    if (hit) return cx_mlir_op_attr(op, "value");
  }
  return NULL;
}

TEST(mlirbc_constants_and_enums) {
  size_t len;
  char *bytes;
  cx_mlir_tree *t = read_artifact("mixed_types", &bytes, &len);
  const cx_mlir_op *f = t ? cx_mlir_find_func(t->top.ops[0], "main") : NULL;
  const cx_mlir_attr *bf = constant_of(f, "tensor<bf16>"), *u8 = constant_of(f, "tensor<ui8>"),
                     *i32 = constant_of(f, "tensor<i32>");
  CHECK(bf && bf->kind == CX_MLIR_ATTR_TENSOR && bf->u.dense.size == 2 && bf->u.dense.data[0] == 0x40 &&
        bf->u.dense.data[1] == 0x40);
  CHECK(u8 && u8->kind == CX_MLIR_ATTR_TENSOR && u8->u.dense.size == 1 && u8->u.dense.data[0] == 200 &&
        u8->u.dense.type->elem->sign == CX_MLIR_UNSIGNED);
  if (i32 && i32->kind == CX_MLIR_ATTR_TENSOR && i32->u.dense.size == 4) {
    int32_t v;
    memcpy(&v, i32->u.dense.data, 4);
    CHECK_EQ_INT(v, -7);
  } else {
    CHECK(!"no i32 constant");
  }
  cx_mlir_tree_free(t);
  free(bytes);
  t = read_artifact("rng_iota", &bytes, &len);
  f = t ? cx_mlir_find_func(t->top.ops[0], "main") : NULL;
  const cx_mlir_op *rng = f ? cx_mlir_block_find(&f->regions[0].blocks[0], "vhlo.rng_bit_generator_v1") : NULL;
  const cx_mlir_attr *alg = cx_mlir_op_attr(rng, "rng_algorithm");
  CHECK(alg && alg->kind == CX_MLIR_ATTR_ENUM && alg->u.enm.which == CX_MLIR_ENUM_RNG_ALGORITHM &&
        alg->u.enm.value == 2 && !strcmp(alg->u.enm.name, "PHILOX"));
  cx_mlir_tree_free(t);
  free(bytes);

  /* conv: NHWC x HWIO with SAME padding; 17 properties whose names come only from the order */
  t = read_artifact("conv", &bytes, &len);
  f = t ? cx_mlir_find_func(t->top.ops[0], "main") : NULL;
  const cx_mlir_op *conv = f ? cx_mlir_block_find(&f->regions[0].blocks[0], "vhlo.convolution_v1") : NULL;
  CHECK(conv && conv->num_props == 17);
  const cx_mlir_attr *a = cx_mlir_op_attr(conv, "input_feature_dimension");
  CHECK(a && a->kind == CX_MLIR_ATTR_INT && a->u.integer.value == 3);
  a = cx_mlir_op_attr(conv, "kernel_input_feature_dimension");
  CHECK(a && a->kind == CX_MLIR_ATTR_INT && a->u.integer.value == 2);
  a = cx_mlir_op_attr(conv, "padding");
  CHECK(a && a->kind == CX_MLIR_ATTR_TENSOR && a->u.dense.splat && a->u.dense.count == 4 && a->u.dense.data[0] == 1);
  a = cx_mlir_op_attr(conv, "window_reversal"); /* bit-packed i1 in the file, a byte each here */
  CHECK(a && a->kind == CX_MLIR_ATTR_TENSOR && a->u.dense.count == 2 && a->u.dense.size == 2 && !a->u.dense.splat);
  a = cx_mlir_op_attr(conv, "precision_config");
  CHECK(a && a->kind == CX_MLIR_ATTR_ARRAY && a->u.array.n == 2 && a->u.array.elems[0]->kind == CX_MLIR_ATTR_ENUM);
  cx_mlir_tree_free(t);
  free(bytes);
}

/* Float encodings: each format's largest finite value, a subnormal, and its NaN/inf. */
TEST(mlirbc_float_formats) {
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_BF16, 0x3F80), 1.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F16, 0x7BFF), 65504.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_TF32, 0x1FC00), 1.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E4M3FN, 0x7E), 448.0, 0);
  CHECK(isnan(cx_mlir_float_value(CX_MLIR_F8E4M3FN, 0x7F)));
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E5M2, 0x7B), 57344.0, 0);
  CHECK(isinf(cx_mlir_float_value(CX_MLIR_F8E5M2, 0xFC)) && cx_mlir_float_value(CX_MLIR_F8E5M2, 0xFC) < 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E4M3, 0x77), 240.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E3M4, 0x6F), 15.5, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E4M3FNUZ, 0x7F), 240.0, 0);
  CHECK(isnan(cx_mlir_float_value(CX_MLIR_F8E4M3FNUZ, 0x80)));
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E5M2FNUZ, 0x7F), 57344.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E4M3B11FNUZ, 0x7F), 30.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F8E8M0FNU, 0x7F), 1.0, 0);
  CHECK(isnan(cx_mlir_float_value(CX_MLIR_F8E8M0FNU, 0xFF)));
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F4E2M1FN, 0x7), 6.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F4E2M1FN, 0x9), -0.5, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F6E2M3FN, 0x1F), 7.5, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F6E3M2FN, 0x1F), 28.0, 0);
  CHECK_NEAR(cx_mlir_float_value(CX_MLIR_F32, 0xC0490FDB), -3.14159274101257324, 0);
}

/* ---- hand-made bytecode: a builtin.module whose attribute dictionary holds {x = attrs[first]},
 * with the builtin attributes given, to reach what JAX never writes (cycles, deep nesting, DAGs
 * that stand for huge trees). */
typedef struct {
  uint8_t b[1 << 16];
  size_t n;
} wbuf;

static void put(wbuf *w, uint8_t v) {
  if (w->n < sizeof w->b) w->b[w->n++] = v;
}
static void put_varint(wbuf *w, uint64_t v) { /* one or two bytes is all these files need */
  if (v < 128) {
    put(w, (uint8_t)(v << 1 | 1));
  } else {
    put(w, (uint8_t)((v << 2 | 2) & 0xFF));
    put(w, (uint8_t)(v >> 6));
  }
}
static void put_section(wbuf *w, int id, const wbuf *d) {
  put(w, (uint8_t)id);
  put_varint(w, d->n);
  for (size_t i = 0; i < d->n; i++) put(w, d->b[i]);
}

/* attrs[i] are encodings (code and fields) of builtin attributes; attr 0 must be a location,
 * attr 1 the string "x". The dictionary is appended as the last attribute. */
static int asm_entry = -1; /* this attribute is stored as assembly text, not custom-encoded */

static size_t handmade(wbuf *out, const wbuf *attrs, int nattrs, int first) {
  static wbuf sec, tmp;
  memset(out, 0, sizeof *out);
  const uint8_t head[] = {'M', 'L', 0xEF, 'R'};
  for (int i = 0; i < 4; i++) put(out, head[i]);
  put_varint(out, 5);
  put(out, 't');
  put(out, 0);
  /* strings: builtin, module, x */
  memset(&sec, 0, sizeof sec);
  put_varint(&sec, 3);
  put_varint(&sec, 2);
  put_varint(&sec, 7);
  put_varint(&sec, 8);
  const char strs[] = "builtin\0module\0x";
  for (size_t i = 0; i < sizeof strs; i++) put(&sec, (uint8_t)strs[i]);
  put_section(out, 0, &sec);
  /* dialects: builtin; op names: module (not registered, so no properties) */
  memset(&sec, 0, sizeof sec);
  put_varint(&sec, 1);
  put_varint(&sec, 0);
  put_varint(&sec, 1);
  put_varint(&sec, 0);
  put_varint(&sec, 1);
  put_varint(&sec, 1 << 1);
  put_section(out, 1, &sec);
  /* attributes, then the dictionary {x = attrs[first]} */
  memset(&sec, 0, sizeof sec);
  memset(&tmp, 0, sizeof tmp);
  put_varint(&tmp, (uint64_t)nattrs + 1);
  put_varint(&tmp, 0);
  put_varint(&tmp, 0);
  put_varint(&tmp, (uint64_t)nattrs + 1);
  for (int i = 0; i < nattrs; i++) {
    for (size_t k = 0; k < attrs[i].n; k++) put(&sec, attrs[i].b[k]);
    put_varint(&tmp, attrs[i].n << 1 | (i != asm_entry));
  }
  size_t before = sec.n;
  put_varint(&sec, 1); /* DictionaryAttr */
  put_varint(&sec, 1);
  put_varint(&sec, 1);
  put_varint(&sec, (uint64_t)first);
  put_varint(&tmp, (sec.n - before) << 1 | 1);
  put_section(out, 2, &sec);
  put_section(out, 3, &tmp);
  /* IR: one op, builtin.module, with attributes, at location attr 0 */
  memset(&sec, 0, sizeof sec);
  put_varint(&sec, 1 << 1);
  put_varint(&sec, 0);
  put(&sec, 1);
  put_varint(&sec, 0);
  put_varint(&sec, (uint64_t)nattrs);
  put_section(out, 4, &sec);
  memset(&sec, 0, sizeof sec);
  put_section(out, 8, &sec);
  return out->n;
}

static wbuf attr_table[400];

static void base_attrs(void) {
  memset(attr_table, 0, sizeof attr_table);
  put_varint(&attr_table[0], 15); /* UnknownLoc */
  put_varint(&attr_table[1], 2);  /* StringAttr "x" */
  put_varint(&attr_table[1], 2);
}

TEST(mlirbc_handmade_nesting) {
  static wbuf file;
  cx_mlir_tree *t = NULL;
  /* a DAG: attr i = [i+1, i+1] for 60 levels over a unit: 2^60 leaves if expanded */
  base_attrs();
  for (int i = 2; i < 62; i++) {
    put_varint(&attr_table[i], 0);
    put_varint(&attr_table[i], 2);
    put_varint(&attr_table[i], (uint64_t)i + 1);
    put_varint(&attr_table[i], (uint64_t)i + 1);
  }
  put_varint(&attr_table[62], 7); /* UnitAttr */
  size_t n = handmade(&file, attr_table, 63, 2);
  CHECK_OK(cx_mlirbc_read(test_ctx(), file.b, n, "dag", &t));
  if (t) {
    const cx_mlir_attr *x = cx_mlir_op_attr(t->top.ops[0], "x");
    CHECK(x && x->kind == CX_MLIR_ATTR_ARRAY && x->u.array.elems[0] == x->u.array.elems[1]);
    char *text = cx_mlir_print_tree(t, 0); /* bounded, not 2^60 */
    CHECK(text && strlen(text) < ((size_t)1 << 25));
    cx_free(text);
  }
  cx_mlir_tree_free(t);

  /* a chain 300 deep: refused, not a stack overflow */
  base_attrs();
  for (int i = 2; i < 302; i++) {
    put_varint(&attr_table[i], 0);
    put_varint(&attr_table[i], 1);
    put_varint(&attr_table[i], (uint64_t)i + 1);
  }
  put_varint(&attr_table[302], 7);
  n = handmade(&file, attr_table, 303, 2);
  CHECK(cx_mlirbc_read(test_ctx(), file.b, n, "deep", &t) == CXLA_ERR_PARSE && !t);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "nested more than");

  /* a cycle: attr 2 = [3], attr 3 = [2] */
  base_attrs();
  put_varint(&attr_table[2], 0);
  put_varint(&attr_table[2], 1);
  put_varint(&attr_table[2], 3);
  put_varint(&attr_table[3], 0);
  put_varint(&attr_table[3], 1);
  put_varint(&attr_table[3], 2);
  n = handmade(&file, attr_table, 4, 2);
  CHECK(cx_mlirbc_read(test_ctx(), file.b, n, "cycle", &t) == CXLA_ERR_PARSE && !t);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "refers to itself");

  /* the same file without the cycle reads (so the builder itself is right) */
  attr_table[3].n = 0;
  put_varint(&attr_table[3], 7);
  n = handmade(&file, attr_table, 4, 2);
  CHECK_OK(cx_mlirbc_read(test_ctx(), file.b, n, "nocycle", &t));
  cx_mlir_tree_free(t);

  /* MLIR's fallback for attributes without a custom encoding: NUL-terminated assembly text,
   * kept opaque for the translator to refuse by name; without its NUL it is refused */
  base_attrs();
  const char text[] = "#foo.bar<1>";
  for (size_t i = 0; i < sizeof text; i++) put(&attr_table[2], (uint8_t)text[i]);
  asm_entry = 2;
  n = handmade(&file, attr_table, 3, 2);
  CHECK_OK(cx_mlirbc_read(test_ctx(), file.b, n, "asm", &t));
  const cx_mlir_attr *x = t ? cx_mlir_op_attr(t->top.ops[0], "x") : NULL;
  CHECK(x && x->kind == CX_MLIR_ATTR_OPAQUE && x->u.opaque.asm_text && !strcmp(x->u.opaque.asm_text, text) &&
        !strcmp(x->dialect, "builtin"));
  cx_mlir_tree_free(t);
  attr_table[2].n--;
  n = handmade(&file, attr_table, 3, 2);
  CHECK(cx_mlirbc_read(test_ctx(), file.b, n, "asm", &t) == CXLA_ERR_PARSE && !t);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "without a terminating NUL");
  asm_entry = -1;
}

/* Every prefix of an artifact is refused with a byte offset; every single-bit flip is read or
 * refused the same way, and a flipped file that reads still prints. */
static void damage(const char *name, int flips) {
  size_t len;
  char *bytes = slurp(name, ".mlirbc", &len);
  if (!bytes) return;
  char *copy = malloc(len);
  int refused = 0, read_ok = 0;
  for (size_t n = 0; n < len; n++) {
    cx_mlir_tree *t = NULL;
    memcpy(copy, bytes, n);
    cxla_status s = cx_mlirbc_read(test_ctx(), copy, n, name, &t);
    CHECK_MSG(s == CXLA_ERR_PARSE && !t, "%s: prefix of %zu bytes: %s", name, n, cxla_status_str(s));
    if (s != CXLA_OK) CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), ": byte ");
    cx_mlir_tree_free(t);
  }
  for (size_t i = 0; flips && i < len; i++)
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, bytes, len);
      copy[i] ^= (char)(1 << bit);
      cx_mlir_tree *t = NULL;
      cxla_status s = cx_mlirbc_read(test_ctx(), copy, len, name, &t);
      if (s == CXLA_OK) {
        read_ok++;
        char *text = cx_mlir_print_tree(t, 1);
        CHECK(text != NULL);
        cx_free(text);
      } else {
        refused++;
        CHECK_MSG(s == CXLA_ERR_PARSE, "%s: flip %zu.%d: %s", name, i, bit, cxla_status_str(s));
        CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), ": byte ");
      }
      cx_mlir_tree_free(t);
    }
  if (flips) {
    printf("    %s: %zu prefixes refused; of %zu bit flips %d refused, %d still read\n", name, len, len * 8,
           refused, read_ok);
    CHECK(refused > 0);
  }
  free(copy);
  free(bytes);
}

TEST(mlirbc_truncations_and_bit_flips) {
  damage("conv", 1);
  damage("export", 1);
  damage("target_0_9_0", 1); /* bytecode version 0 */
  damage("while_loop", 0);
  damage("large_constant", 0);
}

TEST(mlirbc_refuses_clearly) {
  cx_mlir_tree *t = NULL;
  CHECK(cx_mlirbc_read(test_ctx(), "HloModule m", 11, "x.hlo", &t) == CXLA_ERR_PARSE && !t);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "not MLIR bytecode");
  CHECK(!cx_mlirbc_sniff("HloModule", 9) && cx_mlirbc_sniff("ML\xEFR\x0d", 5));
  /* a newer bytecode version than the reader knows */
  CHECK(cx_mlirbc_read(test_ctx(), "ML\xEFR\x0f" "x\0", 7, "v7", &t) == CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "bytecode version 7");
  /* a section that claims more bytes than the file has */
  CHECK(cx_mlirbc_read(test_ctx(), "ML\xEFR\x0d" "p\0\x01\xff", 9, "big", &t) == CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "big: byte 7: section 1 claims");
}

/* Plain MLIR bytecode (not VHLO) with a dense_resource blob: the resource sections, and the
 * properties of ops this reader has no names for, kept as bytes. */
TEST(mlirbc_dense_resource) {
  size_t len;
  char *bytes;
  cx_mlir_tree *t = read_artifact("resource", &bytes, &len);
  const cx_mlir_op *f = t ? cx_mlir_block_find(&t->top.ops[0]->regions[0].blocks[0], "func.func") : NULL;
  CHECK(f != NULL);
  if (f) {
    const cx_mlir_attr *p = cx_mlir_op_attr(f, "(properties)");
    CHECK(p && p->kind == CX_MLIR_ATTR_OPAQUE && !strcmp(p->dialect, "func"));
    const cx_mlir_op *c = cx_mlir_block_find(&f->regions[0].blocks[0], "stablehlo.constant");
    const cx_mlir_attr *r = cx_mlir_op_attr(c, "cxla.blob");
    CHECK(r && r->kind == CX_MLIR_ATTR_DENSE_RESOURCE);
    if (r && r->kind == CX_MLIR_ATTR_DENSE_RESOURCE) {
      CHECK(!strcmp(r->u.res.key, "blob1") && r->u.res.size == 16 && r->u.res.align == 4);
      float v[4];
      memcpy(v, r->u.res.data, 16);
      CHECK(v[0] == 1.0f && v[1] == 2.0f && v[2] == 3.0f && v[3] == 4.0f);
      CHECK_EQ_INT(cx_mlir_type_numel(r->u.res.type), 4);
    }
    char loc[64];
    cx_mlir_loc_str(c ? c->loc : NULL, loc, sizeof loc);
    CHECK_STR_CONTAINS(loc, "-:4:10");
  }
  cx_mlir_tree_free(t);
  free(bytes);
  damage("resource", 1);
}

static void fail_allocations(const char *name) {
  size_t len;
  char *bytes = slurp(name, ".mlirbc", &len);
  if (!bytes) return;
  int64_t n;
  for (n = 0; n < 10000; n++) {
    cx_alloc_fail_after(n);
    cx_mlir_tree *t = NULL;
    cxla_status s = cx_mlirbc_read(test_ctx(), bytes, len, name, &t);
    char *text = s == CXLA_OK ? cx_mlir_print_tree(t, 1) : NULL;
    int64_t injected = cx_alloc_failures(); /* read before cx_alloc_fail_after resets it */
    cx_alloc_fail_after(-1);
    if (!injected) {
      CHECK_MSG(s == CXLA_OK && text, "%s: run without injected failures: %s", name, cxla_context_errmsg(test_ctx()));
      cx_free(text);
      cx_mlir_tree_free(t);
      break;
    }
    /* the printer reports its own failure by returning NULL */
    CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY || (s == CXLA_OK && !text),
              "%s: allocation %lld failed and the read returned %s: %s", name, (long long)n,
              cxla_status_str(s), cxla_context_errmsg(test_ctx()));
    CHECK(s == CXLA_OK || !t);
    cx_free(text);
    cx_mlir_tree_free(t);
  }
  CHECK_MSG(n > 2 && n < 10000, "%s: %lld allocation points", name, (long long)n);
  free(bytes);
}

TEST(mlirbc_allocation_failures) {
  for (int a = 0; a < CX_ARRAY_LEN(artifacts); a++) fail_allocations(artifacts[a]);
  fail_allocations("resource");
}
