/*
 * fail_alloc.h - an allocator for the C unit tests' allocation-failure
 * cases: quill_context_create(failing_alloc, &fa) fails every allocation
 * once fa.budget allocations have been made (budget < 0: never) and counts
 * the live ones in fa.live, so a test can check that nothing leaks after a
 * failure.
 */
#ifndef QUILL_TEST_UNIT_FAIL_ALLOC_H
#define QUILL_TEST_UNIT_FAIL_ALLOC_H

#include <stdlib.h>

typedef struct fail_alloc {
  long budget; /* allocations left before failing; < 0: never fail */
  long live;   /* outstanding allocations */
} fail_alloc;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  fail_alloc *fa = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr)
      fa->live--;
    free(ptr);
    return NULL;
  }
  if (fa->budget == 0)
    return NULL;
  if (fa->budget > 0)
    fa->budget--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    fa->live++;
  return p;
}

#endif /* QUILL_TEST_UNIT_FAIL_ALLOC_H */
