/*
 * check.h - the C unit tests' CHECK(cond): counts every check, and on a
 * failed one counts it and prints file:line and the condition, then goes
 * on; main() prints the counts and returns failures != 0. CHECK_STR(got,
 * want) compares two strings (got may be NULL) and prints both on failure.
 */
#ifndef QUILL_TEST_UNIT_CHECK_H
#define QUILL_TEST_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond)                                                           \
  do {                                                                        \
    checks++;                                                                 \
    if (!(cond)) {                                                            \
      failures++;                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                         \
    }                                                                         \
  } while (0)

#define CHECK_STR(got, want)                                                  \
  do {                                                                        \
    const char *g_ = (got), *w_ = (want);                                     \
    checks++;                                                                 \
    if (!g_ || strcmp(g_, w_) != 0) {                                         \
      failures++;                                                             \
      fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__,         \
              __LINE__, g_ ? g_ : "(null)", w_);                              \
    }                                                                         \
  } while (0)

#endif /* QUILL_TEST_UNIT_CHECK_H */
