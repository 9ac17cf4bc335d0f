/*
 * check.h - the C unit tests' CHECK(cond): counts every check, and on a
 * failed one counts it and prints file:line and the condition, then goes
 * on; main() prints the counts and returns failures != 0.
 */
#ifndef QUILL_TEST_UNIT_CHECK_H
#define QUILL_TEST_UNIT_CHECK_H

#include <stdio.h>

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

#endif /* QUILL_TEST_UNIT_CHECK_H */
