/* codegen_harness.h — the codegen tests' harness: for every fusion in a module's ENTRY, emit its
 * kernel (cx_emit_kernel, or cx_emit_epilogue for kOutput), JIT it, run it over [0, total) in
 * several uneven chunks (called in reverse order) on random inputs, and compare each output
 * with the interpreter's value of the fused computation on the same inputs. */
#ifndef CODEGEN_HARNESS_H
#define CODEGEN_HARNESS_H
#include "codegen/cg.h"
#include "interp/interp.h"
#include "test.h"

typedef struct cgt_opts {
  double ulps;          /* float tolerance in units of the result type (0: bit exact; -0 != +0) */
  double atol;          /* ... or an absolute tolerance */
  double rtol;          /* ... plus a relative one: |got - want| <= atol + rtol * |want| */
  int chunks;           /* 0: 7 uneven chunks */
  int no_specials;      /* floats without NaN/inf/huge values (reassociated reductions) */
  double lo, hi;        /* float inputs mostly uniform in [lo, hi] (default [-8, 8]) */
  int64_t ilo, ihi;     /* "small" integers in [ilo, ihi] (default [-5, 20]) */
  uint64_t seed;
  int fusion_pass;      /* 0: module already has fusions; 1: cx_pass_wrap_singletons; 2: fusion passes;
                           3 / 4: the whole CPU pipeline with fusion on / off */
  int skip_unsupported; /* fusions cx_emit_supported refuses are counted in nunsupported, not failures */
  int nunsupported;
  int expect_unsupported; /* every fusion must be refused by cx_emit_supported */
  int libm_only;        /* f64 math calls scalar libm (as --cpu-libmvec=off); else libmvec's
                           variants where the host has them, as the cpu backend */
  int in_place;         /* kOutput: run with output 0 == the GEMM result */
  int alias_operand[4]; /* [i] > 0: emit with cx_emit_kernel_ex, output i in operand alias_operand[i]-1's memory */
  char **ir;            /* if set: the module's LLVM IR before optimisation (caller frees) */
  /* fills operand `k` of the fusion instead of random values (NULL: random) */
  void (*fill)(cxla_literal *lit, int k, void *user);
  void *user;
  /* results */
  double max_ulps;      /* largest float difference seen, in ulps */
  int nfusions;         /* fusions checked */
  int nsplit;           /* of them, column reductions split over row blocks (cx_kernel.parts) */
  int lean;             /* the vectorisation check after the cpu backend's own pipeline
                           (cx_llvm_pipeline at the default opt level), not default<O3> */
  int vectorized;       /* asm of the module had zmm/ymm registers (x86_64 only), after
                           default<O3> (or the lean pipeline) or the one in $CXLA_CG_PIPELINE */
  double best_gbs;      /* with time_runs > 0: best GB/s of the last fusion (bytes of its operands + outputs) */
  int time_runs;
} cgt_opts;

/* Parses and verifies (failing the test on errors). */
cx_module *cgt_parse(const char *text, const char *file, int line);
/* Runs the checks on every ENTRY fusion of text. Returns the number of failures. */
int cgt_check(const char *text, cgt_opts *o, const char *file, int line);
#define CGT(text, opts) cgt_check((text), (opts), __FILE__, __LINE__)

/* Distance of two values of float type t in units in the last place (-0 and +0 are 1 apart;
 * any NaN matches any NaN; NaN vs number is huge). a, b are element i of typed arrays. */
double cgt_ulps(cxla_type t, const void *a, const void *b, int64_t i);

/* A random 64-bit number generator (splitmix64). */
uint64_t cgt_rand(uint64_t *state);

#endif
