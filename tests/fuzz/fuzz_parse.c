/* fuzz_parse.c — libFuzzer harness for the HLO text front end.
 *
 * Each input is parsed as a module (the bytes are passed with their length and are not
 * NUL-terminated, so the parser must respect `len`). A module that parses is verified; a
 * module that verifies is printed, and the printed text must parse and verify again and print
 * identically — anything else is a real bug and stops the fuzzer with __builtin_trap().
 * The same bytes are also parsed as a literal; a literal that parses must print and re-parse
 * to an equal literal. Errors are fine (they must only not crash, leak or read out of bounds:
 * the harness is built with ASan + UBSan).
 *
 * Build: make fuzz.  Run: build/fuzz/fuzz_parse -dict=tests/fuzz/hlo.dict CORPUS tests/fuzz/seeds */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/verify.h"
#include "text/hlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cxla_context *ctx;

static void die(const char *what, const char *detail, const char *text) {
  fprintf(stderr, "fuzz_parse: %s\n  detail: %s\n  printed text:\n%s\n", what, detail ? detail : "",
          text ? text : "(none)");
  __builtin_trap();
}

static char *print_module(cx_module *m) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  return cx_sb_take(&sb);
}

static void check_module(const uint8_t *data, size_t size) {
  cx_module *m = NULL, *m2 = NULL;
  char *t1 = NULL, *t2 = NULL;
  if (cx_parse_module(ctx, (const char *)data, size, "fuzz.hlo", &m) != CXLA_OK) goto done;
  if (!m) die("parser returned OK without a module", NULL, NULL);
  if (cx_verify_module(m) != CXLA_OK) goto done;
  t1 = print_module(m);
  if (!t1) die("printing a verified module failed", cxla_context_errmsg(ctx), NULL);
  if (cx_parse_module(ctx, t1, strlen(t1), "printed.hlo", &m2) != CXLA_OK)
    die("the printed text of a verified module does not parse", cxla_context_errmsg(ctx), t1);
  if (cx_verify_module(m2) != CXLA_OK)
    die("the printed text of a verified module does not verify", cxla_context_errmsg(ctx), t1);
  t2 = print_module(m2);
  if (!t2) die("printing the re-parsed module failed", cxla_context_errmsg(ctx), t1);
  if (strcmp(t1, t2) != 0) die("print -> parse -> print is not a fixed point", t2, t1);
  cxla_cost c;
  if (cxla_module_cost(m, &c) != CXLA_OK || !(c.flops >= 0 && c.transcendentals >= 0 && c.bytes_accessed >= 0))
    die("the cost analysis of a verified module failed or went negative", cxla_context_errmsg(ctx), t1);
done:
  cx_module_free(m);
  cx_module_free(m2);
  cx_free(t1);
  cx_free(t2);
}

static void check_literal(const uint8_t *data, size_t size) {
  cxla_literal *a = NULL, *b = NULL;
  char *t = NULL;
  if (cx_parse_literal(ctx, (const char *)data, size, &a) != CXLA_OK) goto done;
  if (!a) die("literal parser returned OK without a literal", NULL, NULL);
  t = cxla_literal_to_string(a);
  if (!t) die("printing a parsed literal failed", NULL, NULL);
  if (cx_parse_literal(ctx, t, strlen(t), &b) != CXLA_OK)
    die("a printed literal does not parse", cxla_context_errmsg(ctx), t);
  /* NaN payloads and the sign of a NaN are not kept by "nan", so compare values (NaN matches
   * NaN) rather than bits. */
  cx_sb why;
  cx_sb_init(&why);
  if (!cx_literal_compare(b, a, 0, 0, &why)) die("a printed literal parses to a different value", why.buf, t);
  cx_sb_free(&why);
done:
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  cx_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && cxla_context_create(&ctx) != CXLA_OK) {
    fprintf(stderr, "fuzz_parse: cannot create a context\n");
    abort();
  }
  /* A private copy, exactly `size` bytes long, so reads past the end are caught. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  check_module(copy, size);
  check_literal(copy, size);
  free(copy);
  return 0;
}
