/*
 * test_rt_pool_race.c - the thread pool of compiled models
 * (targets/llvm/runtime/quill_rt.c) never lets a late worker claim a
 * chunk of a stage that is still being set up.
 *
 * The race: a worker reads state = (generation g, chunk k) when stage g
 * has no chunk left, is held up, and the caller meanwhile finishes stage
 * g and writes the next stage's fn, args and counts. With state still
 * (g, k), the worker's compare-and-swap succeeded with those new fields:
 * it ran chunk k of the next stage, which ran again once the stage
 * opened, and counted it off twice, so the caller could return (its args,
 * on its stack, gone) while a chunk still ran. That is a crash inside a
 * stage of a threaded model (seen once as a SEGV in an AMX stage under
 * ThreadSanitizer in example.concurrent-callers).
 *
 * The window is a few instructions wide; this test widens it with the
 * runtime's test hooks, compiled in here (QUILL_RT_TEST_HOOK): a worker
 * sleeps right after reading state, and the caller sleeps between writing
 * a stage's fields and opening it. Stages alternate between 2 tasks (the
 * caller claims both before the worker looks) and 64; every task must
 * run exactly once. Before the fix (state closed, (g + 1, CLOSED), before
 * the fields change) most rounds ran a chunk twice.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static pthread_t caller_thread;

static void nap_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* where 0: a thread has read state in run_chunks; 1: the caller has
 * written a stage's fields and not yet opened it */
static void test_hook(int where) {
  if (where == 0 && !pthread_equal(pthread_self(), caller_thread))
    nap_us(300);
  else if (where == 1)
    nap_us(1000);
}

#define QUILL_RT_NO_DEFAULT
#define QUILL_RT_TEST_HOOK(where) test_hook(where)
#include "targets/llvm/runtime/quill_rt.c"

typedef struct stage {
  atomic_int count[64];
  int64_t ntasks;
  atomic_int bad;
} stage;

static void task(void *p, int64_t b, int64_t e) {
  stage *s = p;
  if (b < 0 || e > s->ntasks || b >= e) {
    atomic_fetch_add(&s->bad, 1);
    return;
  }
  for (int64_t t = b; t < e; t++)
    atomic_fetch_add(&s->count[t], 1);
}

static int run_stage(quill_rt_pool *pool, stage *s, int64_t n) {
  for (int t = 0; t < 64; t++)
    atomic_init(&s->count[t], 0);
  atomic_init(&s->bad, 0);
  s->ntasks = n;
  quill_rt_pool_run(pool, task, s, n);
  int ok = atomic_load(&s->bad) == 0;
  for (int64_t t = 0; t < n; t++)
    ok &= atomic_load(&s->count[t]) == 1;
  return ok;
}

int main(void) {
  caller_thread = pthread_self();
  quill_rt_pool *pool = quill_rt_pool_create(2);
  CHECK(pool != NULL);
  if (!pool)
    return 1;
  static stage a, b; /* separate args, as two stages of a model */
  int bad = 0;
  for (int r = 0; r < 40; r++) {
    bad += !run_stage(pool, &a, 2);
    bad += !run_stage(pool, &b, 64);
  }
  CHECK(bad == 0);
  if (bad)
    printf("%d of 80 stages ran a task other than once\n", bad);
  quill_rt_pool_destroy(pool);
  printf("test_rt_pool_race: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
