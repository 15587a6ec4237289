/* passes_helpers.h — helpers for the pass tests: parse HLO text, run one pass, print, and the
 * central check that a pass preserved semantics exactly (interpreter results before and after
 * on inputs that include NaN, -0, infinities and integer extremes). */
#ifndef PASSES_HELPERS_H
#define PASSES_HELPERS_H
#include "interp/interp.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "test.h"

/* Parses and verifies text (a test failure and NULL otherwise). */
cx_module *tp_parse(const char *text, const char *file, int line);
#define TP_PARSE(text) tp_parse((text), __FILE__, __LINE__)
/* Canonical text of the whole module (caller frees). */
char *tp_print(const cx_module *m);
/* Canonical text of one instruction without its name ("f32[2]{0} add(a, b)" style, root
 * marker dropped), for checking what an instruction became. Caller frees. */
char *tp_instr(const cx_instr *in);
/* The ENTRY instruction called `name`, or NULL. */
cx_instr *tp_find(const cx_module *m, const char *name);
/* Number of ENTRY instructions with op `op`. */
int tp_count(const cx_module *m, cx_op op);
/* The same over every computation of m. */
int tp_count_all(const cx_module *m, cx_op op);

/* Runs `pass` on m; checks that it succeeded, that *changed matches expect_changed (-1: do
 * not check), and that the result verifies. */
void tp_run_pass(cx_module *m, cx_pass_fn pass, int expect_changed, const char *file, int line);
#define TP_RUN(m, pass, expect) tp_run_pass((m), (pass), (expect), __FILE__, __LINE__)

/* Random arguments for m's ENTRY parameters: seed 0 gives special values first (NaN, -0,
 * +-inf, integer minimum and maximum, 0, +-1), other seeds mix specials and random values.
 * Returns the number of arguments (args[] holds new literals; free with tp_free_args). */
int tp_random_args(const cx_module *m, uint64_t seed, cxla_literal **args, int max);
void tp_free_args(int n, cxla_literal **args);
/* Whether two literals are the same bit for bit, except that any NaN matches any NaN. */
int tp_same(const cxla_literal *a, const cxla_literal *b, cx_sb *why);

/* Runs `before` and `after` on `trials` argument sets and checks the results agree (tp_same).
 * Runs that fail on `before` (e.g. a loop limit) must fail on `after` too. */
void tp_check_equivalent(cx_module *before, cx_module *after, int trials, const char *file, int line);
#define TP_EQUIV(before, after, trials) tp_check_equivalent((before), (after), (trials), __FILE__, __LINE__)

/* The whole story for one text: parse, clone, run `pass` (expect_changed as in tp_run_pass),
 * check equivalence on `trials` argument sets, and return the transformed module (the
 * caller frees it) or NULL after a failure. */
cx_module *tp_pass_equiv(const char *text, cx_pass_fn pass, int expect_changed, int trials, const char *file,
                         int line);
#define TP_PASS(text, pass, expect) tp_pass_equiv((text), (pass), (expect), 8, __FILE__, __LINE__)

/* The simplification fixpoint (simplify, fold, cse, dce) after inlining, without dumps. */
cxla_status tp_optimize(cx_module *m);

#endif
