/* fusion_helpers.h — helpers for the fusion tests: run the fusion passes with verification and
 * interpreter equivalence, count kernels and fused instructions, and scale a module's shapes
 * up to full size for kernel counts that are not run. */
#ifndef FUSION_HELPERS_H
#define FUSION_HELPERS_H
#include "ir/clone.h"
#include "ir/verify.h"
#include "passes/fusion_util.h"
#include "passes_helpers.h"

/* Replaces every occurrence of from by to (caller frees). */
char *fh_subst(const char *text, const char *from, const char *to);
/* The module with batch 8 -> 4096 and features 16 -> 1024 (caller frees). */
char *fh_full_size(const char *text);
/* Loop fusion, multi-output fusion, dot epilogue fusion, as the CPU pipeline runs them, each
 * checked to succeed and verify. */
void fh_run_fusion(cx_module *m, const char *file, int line);
/* Parses, runs fh_run_fusion, checks interpreter equivalence (exact) on several argument sets
 * and that running the passes again changes nothing, and returns the fused module (caller frees), or NULL after a failure. With the environment
 * variable CXLA_FUSION_TEST_PRINT set, prints the result and cx_fusion_explain. */
cx_module *fh_fuse_equiv(const char *text, const char *file, int line);
#define FUSE(text) fh_fuse_equiv((text), __FILE__, __LINE__)
/* Runs `pass` alone on text with the same checks. */
cx_module *fh_pass_equiv(const char *text, cx_pass_fn pass, const char *file, int line);
#define PASS_ONLY(text, pass) fh_pass_equiv((text), (pass), __FILE__, __LINE__)
/* Kernel count of the full-size variant after fh_run_fusion (not run: it is large). */
int fh_full_size_kernels(const char *text, const char *file, int line);
#define FULL_SIZE_KERNELS(text) fh_full_size_kernels((text), __FILE__, __LINE__)
/* Instructions with op `op` in all fused computations of m. */
int fh_count_fused(const cx_module *m, cx_op op);
/* ENTRY fusions of a kind (multi: only those with a tuple root). */
int fh_count_fusions(const cx_module *m, cx_fusion_kind kind, int multi);
/* Largest number of non-parameter instructions / reduces in one fused computation. */
int fh_max_fused_size(const cx_module *m);
int fh_max_fused_reduces(const cx_module *m);
/* Checks that every called computation comes before its caller in m->comps. */
void fh_check_comp_order(const cx_module *m, const char *file, int line);
#define CHECK_COMP_ORDER(m) fh_check_comp_order((m), __FILE__, __LINE__)

#endif
