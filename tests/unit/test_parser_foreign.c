/* test_parser_foreign.c — files that are not HLO text (StableHLO/MLIR, protobuf binaries,
 * buffer-assignment dumps, LLVM IR) get one error through the public parse entry that says
 * what the file is and how to get HLO text; HLO text that merely mentions those formats still
 * parses. */
#include <stdarg.h>
#include "test.h"

/* Parses len bytes as `name` through the public API; checks that it fails with CXLA_ERR_PARSE
 * and that the message contains each of the NULL-terminated needles. */
static void expect_foreign(const char *text, size_t len, const char *name, int line, ...) {
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse(test_ctx(), text, len, name, &m);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s != CXLA_ERR_PARSE) test_fail(__FILE__, line, "status %s, expected parse error: %s", cxla_status_str(s), got);
  if (m) {
    test_fail(__FILE__, line, "module not NULL after an error");
    cxla_module_destroy(m);
  }
  va_list ap;
  va_start(ap, line);
  for (const char *needle; (needle = va_arg(ap, const char *));)
    if (!strstr(got, needle)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, needle);
  va_end(ap);
}
#define FOREIGN(text, name, ...) expect_foreign(text, strlen(text), name, __LINE__, __VA_ARGS__, (const char *)NULL)

static const char jax_hint[] = "jax.jit(f).lower(*args).as_text(dialect=\"hlo\")";

TEST(parser_foreign_mlir) {
  FOREIGN("module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n"
          "  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\n"
          "    %0 = stablehlo.sine %arg0 : tensor<3xf32>\n    return %0 : tensor<3xf32>\n  }\n}\n",
          "f.mlir", "f.mlir:1:1: error: this is MLIR (StableHLO) text, not HLO text", jax_hint,
          "--xla_dump_to=DIR and take DIR/module_*.before_optimizations.txt");
  /* without the module wrapper, and with leading comments: reported at the first token */
  FOREIGN("// lowered\nfunc.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n", "g.mlir",
          "g.mlir:2:1: error: this is MLIR (StableHLO) text");
  FOREIGN("#loc = loc(unknown)\n\"builtin.module\"() ({}) : () -> ()\n", "h.mlir", "h.mlir:1:1: error: this is MLIR");
  FOREIGN("%0 = mhlo.add %a, %b : tensor<f32>\n", "i.mlir", "i.mlir:1:1: error: this is MLIR");
  /* MLIR bytecode is read as a StableHLO artifact (test_stablehlo_translate.c); these bytes are
   * not one, and the reader says where */
  const char bytecode[] = "ML\xefR\x00\x01\x02\x03";
  expect_foreign(bytecode, sizeof bytecode - 1, "f.mlirbc", __LINE__, "f.mlirbc", "byte ", (const char *)NULL);
  FOREIGN("module @m {\n}\n", "m.mlir", "m.mlir:1:1: error: this is MLIR (StableHLO) text",
          "cxla also reads StableHLO as MLIR bytecode");
}

TEST(parser_foreign_protobuf) {
  /* HloModuleProto: field 1 (name) = "jit_f", field 2 (entry_computation_name) = "main" */
  const char proto[] = "\x0a\x05jit_f\x12\x04main\x1a\x00";
  const char *hint = "dump text instead with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\"";
  expect_foreign(proto, sizeof proto - 1, "m.hlo.pb", __LINE__,
                 "m.hlo.pb:1:1: error: this looks like a binary HloModuleProto (an .hlo.pb file), not HLO text", hint,
                 jax_hint, (const char *)NULL);
  /* the same bytes under another name: still recognised by the leading field tag */
  expect_foreign(proto, sizeof proto - 1, "model.hlo", __LINE__, "model.hlo:1:1: error: this looks like a binary HloModuleProto",
                 (const char *)NULL);
  /* a .pb file whose first byte is another field */
  const char other[] = "\x10\x03\x1a\x02\x08\x01";
  expect_foreign(other, sizeof other - 1, "x.pb", __LINE__, "x.pb:1:1: error: this looks like a binary HloModuleProto",
                 (const char *)NULL);
  /* binary that is nothing in particular */
  const char junk[] = "\x7f" "ELF\x02\x01\x01";
  expect_foreign(junk, sizeof junk - 1, "a.out", __LINE__, "a.out:1:1: error: this is binary data, not HLO text", jax_hint,
                 (const char *)NULL);
  FOREIGN("hlo_module {\n  name: \"jit_f\"\n}\n", "m.pbtxt", "m.pbtxt:1:1: error: this is a protobuf in text format");
}

TEST(parser_foreign_dumps) {
  FOREIGN("BufferAssignment:\nallocation 0: size 12, parameter 0, shape |f32[3]| at ShapeIndex {}:\n",
          "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
          "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt:1:1: error: this is a buffer-assignment dump",
          "DIR/module_*.before_optimizations.txt");
  /* cxla's own dump (--dump-to) */
  FOREIGN("BufferAssignment for module m\narena: 0 bytes\n", "m.buffer-assignment.txt",
          "m.buffer-assignment.txt:1:1: error: this is a buffer-assignment dump");
  /* the other reports of an XLA dump folder, by content and by name */
  FOREIGN("\nTotal bytes used: 1184 (1.2KiB)\n\nUsed values:\n", "v.txt", "v.txt:2:1: error: this is a buffer-assignment dump");
  FOREIGN("Used values:\n", "m.cpu_after_optimizations-buffer-assignment-values.txt",
          "m.cpu_after_optimizations-buffer-assignment-values.txt:1:1: error: this is a buffer-assignment dump");
  FOREIGN("HloLiveRange (max 12):\n  InstructionSequence:\n", "lr.txt",
          "lr.txt:1:1: error: this is an XLA dump report (live ranges or memory usage), not an HLO module");
  FOREIGN("Memory Space: default (color=0)\nTotal bytes: 1184 (1.2KiB)\n", "mem.txt", "mem.txt:1:1: error: this is an XLA dump report");
  FOREIGN("x\n", "m.cpu_after_optimizations-memory-usage-report.txt", "memory-usage-report.txt:1:1: error: this is an XLA dump report");
  FOREIGN("xla_cpu_enable_fast_min_max: false\nxla_dump_to: \"/tmp/d\"\n", "module_0001.jit_f.debug_options",
          "module_0001.jit_f.debug_options:1:1: error: this is a protobuf in text format");
  FOREIGN("; ModuleID = 'm'\nsource_filename = \"m\"\n", "m.ll", "m.ll:1:1: error: this is LLVM IR");
}

TEST(parser_foreign_not_fooled) {
  /* HLO text that mentions the other formats (names, metadata) is still HLO */
  const char *ok = "HloModule module, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
                   "ENTRY func.func {\n  BufferAssignment = f32[3]{0} parameter(0), metadata={op_name=\"stablehlo.sine\"}\n"
                   "  ROOT mhlo.x = f32[3]{0} sine(BufferAssignment)\n}\n";
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), ok, strlen(ok), "ok.hlo", &m));
  cxla_module_destroy(m);
  /* a bare computation is never taken for another format, whatever its file name or mentions */
  const char *bare = "ENTRY e {\n  ROOT x = f32[] parameter(0), metadata={op_name=\"stablehlo.sine in func.func\"}\n}\n";
  m = NULL;
  cxla_status st = cxla_module_parse(test_ctx(), bare, strlen(bare), "m-buffer-assignment.txt", &m);
  CHECK_MSG(st == CXLA_OK || !strstr(cxla_context_errmsg(test_ctx()), "error: this "), "%s", cxla_context_errmsg(test_ctx()));
  cxla_module_destroy(m);
  /* plain text that is none of them keeps the usual message */
  FOREIGN("main = {\n}\n", "t.hlo", "t.hlo:1:1: error: expected 'HloModule', got 'main'");
  /* bare computations are HLO too (XLA's parser reads them; its tests write them) */
  FOREIGN("ENTRY main {\n}\n", "t.hlo", "t.hlo:1:7: error: computation 'main' has no instructions");
  FOREIGN("", "t.hlo", "t.hlo:1:1: error: expected 'HloModule', got end of file");
}
