/* fuzz_stablehlo_translate.c — libFuzzer harness for the whole StableHLO front door: bytes ->
 * MLIR tree -> cx_module -> verifier (cxla_module_parse_stablehlo), then the module printed.
 *
 * A failure must be one of the statuses the call documents (parse, unsupported, verify, out of
 * memory) with a message naming the input; a success must give a module that prints. Anything
 * else stops the fuzzer with __builtin_trap(). Mutated artifacts mostly fail in the reader, so
 * the seeds are whole artifacts (tests/stablehlo/programs and artifacts) and the mutations that
 * survive reading reach the translation with ops, attributes and types it did not expect.
 *
 * Build: make fuzz.  Run: build/fuzz/fuzz_stablehlo_translate CORPUS tests/stablehlo/programs */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cxla.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cxla_context *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && cxla_context_create(&ctx) != CXLA_OK) {
    fprintf(stderr, "fuzz_stablehlo_translate: cannot create a context\n");
    abort();
  }
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse_stablehlo(ctx, data, size, "fuzz.mlirbc", &m);
  if (s != CXLA_OK) {
    const char *msg = cxla_context_errmsg(ctx);
    /* the verifier names the module's file when it knows where; the reader and the
     * translation always do */
    if (m || !msg || (s != CXLA_ERR_VERIFY && !strstr(msg, "fuzz.mlirbc"))) {
      fprintf(stderr, "fuzz_stablehlo_translate: a failure without the input's name or with a module: %s\n", msg);
      __builtin_trap();
    }
    if (s != CXLA_ERR_PARSE && s != CXLA_ERR_UNSUPPORTED && s != CXLA_ERR_VERIFY && s != CXLA_ERR_OUT_OF_MEMORY) {
      fprintf(stderr, "fuzz_stablehlo_translate: status %s: %s\n", cxla_status_str(s), msg);
      __builtin_trap();
    }
    return 0;
  }
  char *text = cxla_module_to_string(m);
  if (!text) {
    fprintf(stderr, "fuzz_stablehlo_translate: a translated module does not print: %s\n", cxla_context_errmsg(ctx));
    __builtin_trap();
  }
  cxla_cost c;
  if (cxla_module_cost(m, &c) != CXLA_OK || !(c.flops >= 0 && c.transcendentals >= 0 && c.bytes_accessed >= 0)) {
    fprintf(stderr, "fuzz_stablehlo_translate: cost analysis failed or went negative: %s\n%s", cxla_context_errmsg(ctx), text);
    __builtin_trap();
  }
  free(text);
  cxla_module_destroy(m);
  return 0;
}
