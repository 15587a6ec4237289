/* test_cpu_helpers.h — shared by the CPU backend tests: parse modules and literals from text,
 * run a module on the cpu backend and on the interpreter and compare. */
#ifndef CX_TEST_CPU_HELPERS_H
#define CX_TEST_CPU_HELPERS_H
#include "ir/ir.h"
#include "passes/buffers.h"
#include "test.h"

/* Parsed and verified module (NULL after a failed CHECK). */
cx_module *cpu_parse(const char *text);
/* A literal from HLO literal text ("f32[2] {1, 2}"). */
cxla_literal *cpu_lit(const char *text);
/* The instruction called `name` in any computation of m (NULL if none). */
cx_instr *cpu_find(cx_module *m, const char *name);

/* The most inputs cpu_check takes (the transformer block's gradient has 19). */
#define CPU_CHECK_MAX_ARGS 32

/* Compiles `text` for cpu (flags: extra cxla flags, may be NULL), runs it on the inputs, runs
 * the interpreter too, and compares (rtol/atol for floats). Returns 1 if they agree (0, after a
 * failed CHECK, for more than CPU_CHECK_MAX_ARGS inputs); *stats
 * (if given) receives a malloc'd copy of the compile stats; *got (if given) the cpu result. */
int cpu_check(const char *text, int nargs, const char *const *inputs, const char *flags, double rtol, double atol,
              char **stats, cxla_literal **got);
/* "f32[n] {v0, v1, ...}" with v_i = (i % mod) * scale + offset (malloc'd, caller frees). */
char *cpu_ramp(const char *type, int n, int mod, double scale, double offset);
/* The same for any rank: "f32[2,3] {{v0, v1, v2}, {v3, v4, v5}}". */
char *cpu_ramp_nd(const char *type, const int64_t *dims, int rank, int mod, double scale, double offset);
/* The integer after "fallbacks=" in compile stats, or -1. */
int cpu_fallbacks(const char *stats);

#endif
