/*
 * test_llvm_rt_race.c - the thread pool of compiled models
 * (targets/llvm/runtime/quill_rt.c) with the windows where its threads
 * interleave held open, so that an ordering bug shows on every run
 * instead of once in a hundred thousand stages.
 *
 * The runtime is compiled into this test with QUILL_RT_INTERLEAVE defined
 * as a delay at two points: (1) a thread has read the pool's state and not
 * yet the stage's fields, (2) a caller has written the next stage's
 * fields and not yet published its generation. The bug this found (the
 * concurrent-callers example under ThreadSanitizer: a SEGV in an AMX
 * stage): a worker that read the state of a finished stage, and then the
 * next stage's larger chunk count, claimed a chunk of the finished stage
 * and ran it on the next stage's arguments. Stages alternate between 2
 * and 64 tasks, back to back on one reused argument block (as the compiled
 * code's argument array is); each task must run exactly once.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime under -std=c11 */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"

static void interleave(int point) {
  struct timespec ts = {0, point == 1 ? 300000 : 1000000};
  nanosleep(&ts, NULL);
}

/* the runtime itself, under names of its own (libquill has the real one) */
#define QUILL_RT_NO_DEFAULT
#define QUILL_RT_INTERLEAVE(point) interleave(point)
#define quill_rt_pool_create race_pool_create
#define quill_rt_pool_destroy race_pool_destroy
#define quill_rt_pool_run race_pool_run
#include "targets/llvm/runtime/quill_rt.c"

typedef struct stage {
  atomic_int count[64];
  int64_t ntasks;
  atomic_int bad; /* ranges outside [0, ntasks) or empty */
} stage;

static void task(void *p, int64_t b, int64_t e) {
  stage *s = p;
  if (b < 0 || e > s->ntasks || b >= e) {
    atomic_fetch_add(&s->bad, 1);
    return;
  }
  for (int64_t t = b; t < e; t++)
    atomic_fetch_add_explicit(&s->count[t], 1, memory_order_relaxed);
}

int main(void) {
  for (int nthreads = 2; nthreads <= 3; nthreads++) {
    quill_rt_pool *pool = race_pool_create(nthreads);
    CHECK(pool != NULL);
    if (!pool)
      continue;
    stage s; /* one argument block for every stage */
    int wrong = 0;
    for (int r = 0; r < 40; r++) {
      int64_t n = r % 2 ? 64 : 2;
      for (int t = 0; t < 64; t++)
        atomic_init(&s.count[t], 0);
      s.ntasks = n;
      atomic_init(&s.bad, 0);
      race_pool_run(pool, task, &s, n);
      int ok = atomic_load(&s.bad) == 0;
      for (int64_t t = 0; t < n; t++)
        if (atomic_load(&s.count[t]) != 1)
          ok = 0;
      /* a task run late, by a chunk claimed for a finished stage */
      for (int64_t t = n; t < 64; t++)
        if (atomic_load(&s.count[t]) != 0)
          ok = 0;
      wrong += !ok;
    }
    if (wrong)
      fprintf(stderr, "%d threads: %d of 40 stages wrong\n", nthreads, wrong);
    CHECK(wrong == 0);
    race_pool_destroy(pool);
  }
  printf("test_llvm_rt_race: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
