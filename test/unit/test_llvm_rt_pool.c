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
 * may leave [0, ntasks). The split: min(ntasks, 16 x threads) chunks
 * (QUILL_RT_CHUNKS_PER_THREAD), sizes within one task of each other (at
 * 4 chunks per thread, 21 tasks on 2 threads were 7 chunks of 3: one
 * thread ran 12 of the 21).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "targets/llvm/runtime/quill_rt_pool.h"


typedef struct stage {
  atomic_int *count; /* per task */
  int64_t ntasks;
  atomic_int bad;    /* ranges outside [0, ntasks) or empty */
  atomic_int calls;  /* ranges run */
  atomic_llong minlen, maxlen;
  int slow_first;    /* task 0 takes a while: the others go elsewhere */
} stage;

static void task(void *p, int64_t b, int64_t e) {
  stage *s = p;
  if (b < 0 || e > s->ntasks || b >= e) {
    atomic_fetch_add(&s->bad, 1);
    return;
  }
  atomic_fetch_add(&s->calls, 1);
  long long len = e - b, m = atomic_load(&s->minlen);
  while (len < m && !atomic_compare_exchange_weak(&s->minlen, &m, len))
    ;
  m = atomic_load(&s->maxlen);
  while (len > m && !atomic_compare_exchange_weak(&s->maxlen, &m, len))
    ;
  for (int64_t t = b; t < e; t++) {
    if (t == 0 && s->slow_first) {
      struct timespec ts = {0, 2000000}; /* 2 ms */
      nanosleep(&ts, NULL);
    }
    atomic_fetch_add_explicit(&s->count[t], 1, memory_order_relaxed);
  }
}

/* Run one stage of n tasks on the pool of `threads` threads; true if each
 * ran exactly once, in the expected chunks. */
static int run_stage(quill_rt_pool *pool, int threads, int64_t n,
                     int slow_first) {
  stage s;
  s.count = calloc((size_t)n, sizeof *s.count);
  if (!s.count)
    return 0;
  for (int64_t t = 0; t < n; t++)
    atomic_init(&s.count[t], 0);
  s.ntasks = n;
  atomic_init(&s.bad, 0);
  atomic_init(&s.calls, 0);
  atomic_init(&s.minlen, n);
  atomic_init(&s.maxlen, 0);
  s.slow_first = slow_first;
  quill_rt_pool_run(pool, task, &s, n);
  int ok = atomic_load(&s.bad) == 0;
  int64_t want = pool && threads > 1 && n > 1 ? 16 * (int64_t)threads : 1;
  ok &= atomic_load(&s.calls) == (n < want ? n : want);
  ok &= atomic_load(&s.maxlen) - atomic_load(&s.minlen) <= 1;
  for (int64_t t = 0; t < n; t++)
    if (atomic_load_explicit(&s.count[t], memory_order_relaxed) != 1)
      ok = 0;
  free(s.count);
  return ok;
}

int main(void) {
  static const int64_t sizes[] = {1,  2,  3,  5,  7,    8,
                                  9,  10, 21, 31, 40,   70,
                                  1000, 100003};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  for (int nthreads = 1; nthreads <= 4; nthreads++) {
    quill_rt_pool *pool = quill_rt_pool_create(nthreads);
    CHECK(pool != NULL);
    if (!pool)
      continue;
    /* back to back: workers spinning between stages */
    for (int r = 0; r < 300; r++)
      CHECK(run_stage(pool, nthreads, sizes[r % nsizes], 0));
    /* a pause longer than the workers' spin: they sleep and are woken */
    for (int r = 0; r < 4; r++) {
      struct timespec ts = {0, 5000000}; /* 5 ms */
      nanosleep(&ts, NULL);
      CHECK(run_stage(pool, nthreads, sizes[(r * 3) % nsizes], 0));
    }
    /* the thread that takes task 0 is held up: the rest is claimed by the
     * others, and the stage still waits for it */
    CHECK(run_stage(pool, nthreads, 64, 1));
    quill_rt_pool_destroy(pool);
  }
  /* no pool: everything on the caller */
  CHECK(run_stage(NULL, 1, 1000, 0));
  printf("test_llvm_rt_pool: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
