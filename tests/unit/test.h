/* test.h — a tiny test framework: TEST(name) registers a test; CHECK records failures with
 * file:line and keeps going; the runner prints one line per test and "N passed, N failed". */
#ifndef CX_TEST_H
#define CX_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cxla.h"

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A context shared by the tests of one run (fresh per test). */
cxla_context *test_ctx(void);
/* Directory of the source tree (for tests/hlo etc.), from the CXLA_SRC env var or ".". */
const char *test_srcdir(void);
/* HLO text (named `name` in messages) compiled on test_ctx() for backend with the donate
 * mask; NULL, with the failure recorded, when it does not parse or compile. */
cxla_executable *test_compile_text(const char *text, const char *name, const char *backend, uint64_t donate);
/* test_compile_text's executable run once on the argument x: its result (to destroy), or NULL
 * with the failure recorded. */
cxla_literal *test_run_text(const char *text, const char *name, const char *backend, const cxla_literal *x);

#define TEST(name)                                                         \
  static void name(void);                                                  \
  __attribute__((constructor)) static void register_##name(void) {         \
    test_register(#name, name);                                            \
  }                                                                        \
  static void name(void)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);        \
  } while (0)
#define CHECK_MSG(cond, ...)                                               \
  do {                                                                     \
    if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);               \
  } while (0)
#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    cxla_status s_ = (expr);                                               \
    if (s_ != CXLA_OK)                                                     \
      test_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, cxla_status_str(s_), \
                cxla_context_errmsg(test_ctx()));                          \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                 \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    if (a_ != b_) test_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, a_, b_); \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                              \
  do {                                                                     \
    double a_ = (a), b_ = (b);                                             \
    if (!(fabs(a_ - b_) <= (tol) || (isnan(a_) && isnan(b_))))            \
      test_fail(__FILE__, __LINE__, "%s == %.9g, expected %.9g", #a, a_, b_); \
  } while (0)
#define CHECK_STR_CONTAINS(hay, needle)                                    \
  do {                                                                     \
    const char *h_ = (hay);                                                \
    if (!h_ || !strstr(h_, (needle)))                                      \
      test_fail(__FILE__, __LINE__, "'%s' does not contain '%s'", h_ ? h_ : "(null)", (needle)); \
  } while (0)

#endif
