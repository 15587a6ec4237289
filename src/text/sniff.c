/* sniff.c — what a text that does not start with 'HloModule' is instead. People reach for the
 * wrong file often: jax's lower(...).as_text() prints StableHLO (MLIR) unless asked for HLO,
 * XLA can dump modules as protobuf binaries (*.hlo.pb), and an XLA dump folder holds a
 * *buffer-assignment.txt beside each module's text. "expected 'HloModule'" helps nobody there;
 * naming the file and the way to HLO text does. The parser asks only after the first token is
 * not HloModule, so no module that parses today is ever rejected here. */
#include <string.h>
#include "text/parse_int.h"

#define JAX_HLO "in jax print HLO text with jax.jit(f).lower(*args).as_text(dialect=\"hlo\")"
#define DUMP_HLO "DIR/module_*.before_optimizations.txt"

static const char mlir_text[] =
    "this is MLIR (StableHLO) text, not HLO text; " JAX_HLO ", or run with XLA_FLAGS=--xla_dump_to=DIR and take " DUMP_HLO
    "; cxla also reads StableHLO as MLIR bytecode (a portable artifact: jax.export.export(jax.jit(f))(*args)"
    ".mlir_module_serialized), not as MLIR text";
static const char mlir_bytecode[] =
    "this is MLIR bytecode (serialized StableHLO), not HLO text; " JAX_HLO
    ", or run with XLA_FLAGS=--xla_dump_to=DIR and take " DUMP_HLO;
static const char proto_binary[] =
    "this looks like a binary HloModuleProto (an .hlo.pb file), not HLO text; dump text instead with "
    "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" and take " DUMP_HLO ", or " JAX_HLO;
static const char other_binary[] =
    "this is binary data, not HLO text (which starts with 'HloModule'); " JAX_HLO
    ", or run with XLA_FLAGS=--xla_dump_to=DIR and take " DUMP_HLO;
static const char proto_text[] =
    "this is a protobuf in text format (a .pbtxt or an XLA dump's .debug_options), not HLO text; dump HLO text with "
    "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" and take " DUMP_HLO ", or " JAX_HLO;
static const char buffer_assignment[] =
    "this is a buffer-assignment dump (*buffer-assignment.txt), not an HLO module; take the module's text "
    "from the same dump folder (XLA: " DUMP_HLO "; cxla --dump-to: DIR/*.hlo)";
static const char dump_report[] =
    "this is an XLA dump report (live ranges or memory usage), not an HLO module; take the module's text "
    "from the same dump folder (" DUMP_HLO ")";
static const char llvm_ir[] =
    "this is LLVM IR (a compiler dump such as *.ll), not HLO text; " JAX_HLO
    ", or run with XLA_FLAGS=--xla_dump_to=DIR and take " DUMP_HLO;

/* NUL or a control character other than blanks near the start: no text editor wrote this. */
static int looks_binary(const unsigned char *s, size_t n) {
  if (n > 512) n = 512;
  for (size_t i = 0; i < n; i++) {
    unsigned c = s[i];
    if (c == 0 || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')) return 1;
  }
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static int tok_is(const cx_token *t, const char *w) {
  size_t n = strlen(w);
  return t->kind == TK_WORD && t->len == n && !memcmp(t->s, w, n);
}

/* Whether needle occurs in the first 64 KiB of text (which need not be NUL-terminated). */
static int mentions(const char *text, size_t len, const char *needle) {
  size_t k = strlen(needle);
  if (len > 65536) len = 65536;
  for (size_t i = 0; i + k <= len; i++)
    if (text[i] == needle[0] && !memcmp(text + i, needle, k)) return 1;
  return 0;
}

const char *cx_sniff_foreign(const char *text, size_t len, const char *filename, const cx_token *first,
                             cx_loc *loc) {
  const unsigned char *u = (const unsigned char *)text;
  loc->line = 1;
  loc->col = 1;
  if (!text || !len) return NULL;
  if (len >= 4 && !memcmp(text, "ML\xefR", 4)) return mlir_bytecode;
  if (looks_binary(u, len)) {
    /* Field 1, length-delimited: HloModuleProto's name (or HloProto's module) comes first. */
    if (u[0] == 0x0a || (filename && ends_with(filename, ".pb"))) return proto_binary;
    return other_binary;
  }
  *loc = cx_tok_loc(first);
  cx_token second = {TK_EOF, text, 0, 1, 1, NULL};
  if (first->kind == TK_WORD && !memchr(first->s, '\n', first->len)) {
    cx_lexer lx;
    cx_lex_init(&lx, text, len);
    cx_lex_rewind_after(&lx, first);
    second = cx_lex_next(&lx);
  }
  /* Bare computations ("ENTRY e {", "add {", "%add (x: f32[]) -> f32[] {") read as HLO: only
   * what their first tokens say may reject them, never their file name or what they mention. */
  int bare = tok_is(first, "ENTRY") || (first->kind == TK_WORD && (second.kind == TK_LBRACE || second.kind == TK_LPAREN));
  const char *name = filename && !bare ? filename : "";
  if (tok_is(first, "BufferAssignment") || strstr(name, "buffer-assignment") ||
      (tok_is(first, "Total") && tok_is(&second, "bytes")))
    return buffer_assignment;
  if (tok_is(first, "HloLiveRange") || (tok_is(first, "Memory") && tok_is(&second, "Space")) ||
      strstr(name, "-live-range") || strstr(name, "memory-usage-report"))
    return dump_report;
  int mlir_words = mentions(text, len, "stablehlo.") || mentions(text, len, "mhlo.") || mentions(text, len, "func.func");
  if (tok_is(first, "func.func") || tok_is(first, "builtin.module") || first->kind == TK_HASH ||
      (tok_is(first, "module") && (second.kind != TK_LBRACE || mlir_words)) || (!bare && mlir_words))
    return mlir_text;
  if ((first->kind == TK_WORD && second.kind == TK_COLON) || (tok_is(first, "hlo_module") && second.kind == TK_LBRACE) ||
      ends_with(name, ".pbtxt") || ends_with(name, ".debug_options"))
    return proto_text;
  if (first->kind == TK_ERROR && first->len && first->s[0] == ';' && mentions(text, len, "ModuleID")) return llvm_ir;
  return NULL;
}
