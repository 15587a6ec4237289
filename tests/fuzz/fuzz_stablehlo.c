/* fuzz_stablehlo.c — libFuzzer harness for the MLIR bytecode reader (StableHLO portable
 * artifacts, src/stablehlo/bytecode*.c).
 *
 * Each input is read as bytecode. A read that fails must say where (": byte N:" in the message)
 * and return a parse or out-of-memory status; a read that succeeds must give a tree whose every
 * op, value, type and block is there (no NULL where the header promises a pointer, value ids
 * below the tree's count, operands defined before use) and that prints. Anything else stops the
 * fuzzer with __builtin_trap(). Errors are fine; crashes, leaks and out-of-bounds reads are not
 * (the harness is built with ASan + UBSan).
 *
 * Build: make fuzz.  Run: build/fuzz/fuzz_stablehlo CORPUS tests/fuzz/seeds_stablehlo */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/mlir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cxla_context *ctx;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_stablehlo: %s\n  detail: %s\n", what, detail ? detail : "");
  __builtin_trap();
}

static void check_block(const cx_mlir_tree *t, const cx_mlir_block *b, int depth);

static void check_op(const cx_mlir_tree *t, const cx_mlir_op *op, int depth) {
  if (!op || !op->name || !op->dialect || !op->loc) die("op without name, dialect or location", NULL);
  for (int i = 0; i < op->num_operands; i++) {
    const cx_mlir_value *v = op->operands[i];
    if (!v || !v->type || v->id < 0 || v->id >= t->num_values) die("bad operand", op->name);
  }
  for (int i = 0; i < op->num_results; i++)
    if (!op->results[i].type || op->results[i].def != op) die("bad result", op->name);
  for (int i = 0; i < op->num_attrs; i++)
    if (!op->attrs[i].name || !op->attrs[i].value) die("bad attribute", op->name);
  for (int i = 0; i < op->num_successors; i++)
    if (!op->successors[i]) die("bad successor", op->name);
  for (int r = 0; r < op->num_regions; r++) {
    if (op->regions[r].parent != op) die("region without its parent", op->name);
    for (int b = 0; b < op->regions[r].num_blocks; b++) check_block(t, &op->regions[r].blocks[b], depth + 1);
  }
  (void)cx_mlir_op_attr(op, "sym_name");
}

static void check_block(const cx_mlir_tree *t, const cx_mlir_block *b, int depth) {
  for (int i = 0; i < b->num_args; i++)
    if (!b->args[i].type || b->args[i].block != b) die("bad block argument", NULL);
  for (int i = 0; i < b->num_ops; i++) {
    if (b->ops[i]->parent != b) die("op without its block", b->ops[i]->name);
    check_op(t, b->ops[i], depth);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && cxla_context_create(&ctx) != CXLA_OK) {
    fprintf(stderr, "fuzz_stablehlo: cannot create a context\n");
    abort();
  }
  /* A private copy, exactly `size` bytes long, so reads past the end are caught. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  cx_mlir_tree *t = NULL;
  cxla_status s = cx_mlirbc_read(ctx, copy, size, "fuzz.mlirbc", &t);
  if (s != CXLA_OK) {
    if (t) die("a failed read returned a tree", cxla_context_errmsg(ctx));
    if (s != CXLA_ERR_PARSE && s != CXLA_ERR_OUT_OF_MEMORY) die("unexpected status", cxla_status_str(s));
    if (s == CXLA_ERR_PARSE && !strstr(cxla_context_errmsg(ctx), ": byte "))
      die("an error that names no byte offset", cxla_context_errmsg(ctx));
  } else {
    if (!t) die("a read returned OK without a tree", NULL);
    check_block(t, &t->top, 0);
    for (int i = 0; i < t->top.num_ops; i++) (void)cx_mlir_find_func(t->top.ops[i], "main");
    char *a = cx_mlir_print_tree(t, 0), *b = cx_mlir_print_tree(t, 1);
    if (!a || !b) die("printing a tree failed", NULL);
    cx_free(a);
    cx_free(b);
    cx_mlir_tree_free(t);
  }
  free(copy);
  return 0;
}
