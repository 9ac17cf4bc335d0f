/*
 * test_llvm_rt_pool.c - the thread pool of compiled models
 * (targets/llvm/runtime/quill_rt.c, the JIT's quill_rt_pool_* API).
 *
 * Threads claim chunks of a stage with a compare-and-swap; a stage must
 * run every task exactly once and return only when all are done, whatever
 * the task count (fewer tasks than threads, counts that do not divide),
 * the thread count (more threads than this machine's cores), and whether
 * the workers are spinning (stages back to back) or asleep (a pause
 * longer than their spin between stages). Each task adds 1 to its own
 * counter; after every stage each counter must be exactly 1, and no range
 * may leave [0, ntasks).
 *
 * The same runtime is also compiled into this test under names of its own
 * (race_pool_*) with QUILL_RT_INTERLEAVE defined as a delay at two points,
 * holding open the windows where its threads interleave: (1) a thread has
 * read the pool's state and not yet the stage's fields, (2) a caller has
 * written the next stage's fields and not yet published its generation.
 * The bug this found (the concurrent-callers example under
 * ThreadSanitizer: a SEGV in an AMX stage): a worker that read the state
 * of a finished stage, and then the next stage's larger chunk count,
 * claimed a chunk of the finished stage and ran it on the next stage's
 * arguments. There, stages alternate between 2 and 64 tasks back to back
 * on one reused argument block (as the compiled code's argument array
 * is); without the fix some of every 40 go wrong.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime under -std=c11 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static void interleave(int point) {
  struct timespec ts = {0, point == 1 ? 300000 : 1000000};
  nanosleep(&ts, NULL);
}

/* the runtime with its windows held open, under names of its own (libquill
 * has the real one, quill_rt_pool_*) */
#define QUILL_RT_NO_DEFAULT
#define QUILL_RT_INTERLEAVE(point) interleave(point)
#define quill_rt_pool_create race_pool_create
#define quill_rt_pool_destroy race_pool_destroy
#define quill_rt_pool_run race_pool_run
#include "targets/llvm/runtime/quill_rt.c"
#undef quill_rt_pool_create
#undef quill_rt_pool_destroy
#undef quill_rt_pool_run

quill_rt_pool *quill_rt_pool_create(int nthreads);
void quill_rt_pool_destroy(quill_rt_pool *pool);
void quill_rt_pool_run(quill_rt_pool *pool,
                       void (*fn)(void *, int64_t, int64_t), void *args,
                       int64_t ntasks);

typedef struct stage {
  atomic_int *count; /* per task */
  int64_t ntasks;
  atomic_int bad;    /* ranges outside [0, ntasks) or empty */
  int slow_first;    /* task 0 takes a while: the others go elsewhere */
} stage;

static void task(void *p, int64_t b, int64_t e) {
  stage *s = p;
  if (b < 0 || e > s->ntasks || b >= e) {
    atomic_fetch_add(&s->bad, 1);
    return;
  }
  for (int64_t t = b; t < e; t++) {
    if (t == 0 && s->slow_first) {
      struct timespec ts = {0, 2000000}; /* 2 ms */
      nanosleep(&ts, NULL);
    }
    atomic_fetch_add_explicit(&s->count[t], 1, memory_order_relaxed);
  }
}

/* Run one stage of n tasks on the pool; true if each ran exactly once. */
static int run_stage(quill_rt_pool *pool, int64_t n, int slow_first) {
  stage s;
  s.count = calloc((size_t)n, sizeof *s.count);
  if (!s.count)
    return 0;
  for (int64_t t = 0; t < n; t++)
    atomic_init(&s.count[t], 0);
  s.ntasks = n;
  atomic_init(&s.bad, 0);
  s.slow_first = slow_first;
  quill_rt_pool_run(pool, task, &s, n);
  int ok = atomic_load(&s.bad) == 0;
  for (int64_t t = 0; t < n; t++)
    if (atomic_load_explicit(&s.count[t], memory_order_relaxed) != 1)
      ok = 0;
  free(s.count);
  return ok;
}

/* Stages of 2 and 64 tasks back to back on the pool with its windows held
 * open, all on one argument block; the number that go wrong. */
static int race_stages(quill_rt_pool *pool) {
  stage s;
  s.count = calloc(64, sizeof *s.count);
  if (!s.count)
    return -1;
  s.slow_first = 0;
  int wrong = 0;
  for (int r = 0; r < 40; r++) {
    int64_t n = r % 2 ? 64 : 2;
    for (int t = 0; t < 64; t++)
      atomic_init(&s.count[t], 0);
    s.ntasks = n;
    atomic_init(&s.bad, 0);
    race_pool_run(pool, task, &s, n);
    int ok = atomic_load(&s.bad) == 0;
    /* every task once, and none of a past stage run on this one */
    for (int64_t t = 0; t < 64; t++)
      if (atomic_load(&s.count[t]) != (t < n))
        ok = 0;
    wrong += !ok;
  }
  free(s.count);
  return wrong;
}

int main(void) {
  static const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 31, 1000, 100003};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  for (int nthreads = 1; nthreads <= 4; nthreads++) {
    quill_rt_pool *pool = quill_rt_pool_create(nthreads);
    CHECK(pool != NULL);
    if (!pool)
      continue;
    /* back to back: workers spinning between stages */
    for (int r = 0; r < 300; r++)
      CHECK(run_stage(pool, sizes[r % nsizes], 0));
    /* a pause longer than the workers' spin: they sleep and are woken */
    for (int r = 0; r < 4; r++) {
      struct timespec ts = {0, 5000000}; /* 5 ms */
      nanosleep(&ts, NULL);
      CHECK(run_stage(pool, sizes[(r * 3) % nsizes], 0));
    }
    /* the thread that takes task 0 is held up: the rest is claimed by the
     * others, and the stage still waits for it */
    CHECK(run_stage(pool, 64, 1));
    quill_rt_pool_destroy(pool);
  }
  for (int nthreads = 2; nthreads <= 3; nthreads++) {
    quill_rt_pool *pool = race_pool_create(nthreads);
    CHECK(pool != NULL);
    if (!pool)
      continue;
    int wrong = race_stages(pool);
    if (wrong)
      fprintf(stderr, "%d threads, windows held open: %d of 40 stages wrong\n",
              nthreads, wrong);
    CHECK(wrong == 0);
    race_pool_destroy(pool);
  }
  /* no pool: everything on the caller */
  CHECK(run_stage(NULL, 1000, 0));
  printf("test_llvm_rt_pool: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
