/*
 * quill_rt.c - the thread-pool shim for models compiled by `quill compile
 * --threads N` (N > 1). Shipped as C source next to the object file:
 *
 *   cc -O2 main.c model.o quill_rt.c -lpthread
 *
 * The generated code calls
 *
 *   void quill_rt_parallel_for(void (*fn)(void *, int64_t, int64_t),
 *                              void *args, int64_t ntasks, int32_t nthreads);
 *
 * once per parallel kernel stage: run fn(args, t0, t1) over [0, ntasks),
 * split into at most nthreads contiguous ranges, and return when all are
 * done. The calling thread takes the first range; the others go to a pool
 * of nthreads - 1 workers created on first use and kept for the life of
 * the process. A host with its own scheduler can define
 * quill_rt_parallel_for itself instead of linking this file.
 *
 * Quill's JIT compiles this same file with QUILL_RT_NO_DEFAULT and uses the
 * explicit pool API (quill_rt_pool_*), one pool per JIT instance.
 *
 * Any number of threads may run models at once (each with its own
 * scratch): a pool serves one caller's stage at a time, and a caller that
 * finds it busy (another thread is in a stage) runs its own stage on its
 * own thread instead of waiting, so concurrent callers never share the
 * pool's stage slot and none of them blocks on another.
 *
 * A model runs its stages back to back, microseconds apart, so handing a
 * stage over must be cheap: a stage is a bump of an atomic generation
 * number, workers spin on it for a while (pause instructions, and a
 * sched_yield now and then for machines with fewer cores than threads)
 * before they fall back to sleeping on a condition variable, and the
 * caller spins on the count of workers still running before it sleeps. Between two
 * runs of the model the workers go back to sleep.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#define QUILL_RT_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define QUILL_RT_PAUSE() __asm__ __volatile__("yield")
#else
#define QUILL_RT_PAUSE() ((void)0)
#endif

/* Pause iterations a thread spins before it sleeps (tens of microseconds);
 * every QUILL_RT_YIELD of them it yields the CPU, so that a spinning thread
 * does not hold up a working one when there are more threads than cores. */
#define QUILL_RT_SPIN 20000
#define QUILL_RT_YIELD 4096

static void spin_pause(int i) {
  if (i % QUILL_RT_YIELD == QUILL_RT_YIELD - 1)
    sched_yield();
  else
    QUILL_RT_PAUSE();
}

typedef void (*quill_rt_task_fn)(void *, int64_t, int64_t);

typedef struct quill_rt_pool {
  pthread_mutex_t mu;
  pthread_cond_t start, done;
  pthread_t *threads;
  int nworkers;
  atomic_ulong generation; /* bumped once per parallel_for */
  atomic_int pending;      /* workers still running this generation */
  atomic_int stop;
  atomic_int busy;         /* a caller owns the stage slot below */
  quill_rt_task_fn fn;     /* written before the generation bump */
  void *args;
  int64_t ntasks;
} quill_rt_pool;

typedef struct worker_arg {
  quill_rt_pool *pool;
  int index; /* 1..nworkers: the range it runs */
} worker_arg;

/* Range k of n parts of [0, total). */
static void range(int64_t total, int parts, int k, int64_t *b, int64_t *e) {
  int64_t q = total / parts, r = total % parts;
  *b = k * q + (k < r ? k : r);
  *e = *b + q + (k < r ? 1 : 0);
}

static void *worker_main(void *p) {
  worker_arg *wa = p;
  quill_rt_pool *pool = wa->pool;
  unsigned long seen = 0; /* the generation at creation: a stage started
                             before this thread ran is still ahead */
  for (;;) {
    unsigned long g = atomic_load_explicit(&pool->generation,
                                           memory_order_acquire);
    for (int i = 0; g == seen && i < QUILL_RT_SPIN; i++) {
      spin_pause(i);
      g = atomic_load_explicit(&pool->generation, memory_order_acquire);
    }
    if (g == seen) { /* idle: sleep until the next stage */
      pthread_mutex_lock(&pool->mu);
      while (atomic_load(&pool->generation) == seen &&
             !atomic_load(&pool->stop))
        pthread_cond_wait(&pool->start, &pool->mu);
      pthread_mutex_unlock(&pool->mu);
      g = atomic_load_explicit(&pool->generation, memory_order_acquire);
    }
    if (atomic_load(&pool->stop))
      break;
    seen = g;
    int64_t b, e;
    range(pool->ntasks, pool->nworkers + 1, wa->index, &b, &e);
    if (b < e)
      pool->fn(pool->args, b, e);
    if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) ==
        1) { /* the last one wakes a sleeping caller */
      pthread_mutex_lock(&pool->mu);
      pthread_cond_signal(&pool->done);
      pthread_mutex_unlock(&pool->mu);
    }
  }
  free(wa);
  return NULL;
}

void quill_rt_pool_destroy(quill_rt_pool *pool);

/* A pool that runs stages on nthreads threads (the caller included).
 * Returns NULL on failure. */
quill_rt_pool *quill_rt_pool_create(int nthreads) {
  quill_rt_pool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return NULL;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->start, NULL);
  pthread_cond_init(&pool->done, NULL);
  atomic_init(&pool->generation, 0);
  atomic_init(&pool->pending, 0);
  atomic_init(&pool->stop, 0);
  atomic_init(&pool->busy, 0);
  int nw = nthreads > 1 ? nthreads - 1 : 0;
  pool->threads = calloc(nw ? (size_t)nw : 1, sizeof *pool->threads);
  if (!pool->threads) {
    quill_rt_pool_destroy(pool);
    return NULL;
  }
  for (int i = 0; i < nw; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (!wa)
      break;
    wa->pool = pool;
    wa->index = i + 1;
    if (pthread_create(&pool->threads[i], NULL, worker_main, wa) != 0) {
      free(wa);
      break;
    }
    pool->nworkers++;
  }
  return pool;
}

void quill_rt_pool_destroy(quill_rt_pool *pool) {
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mu);
  atomic_store(&pool->stop, 1);
  atomic_fetch_add(&pool->generation, 1);
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->nworkers; i++)
    pthread_join(pool->threads[i], NULL);
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->start);
  pthread_cond_destroy(&pool->done);
  free(pool->threads);
  free(pool);
}

/* Run fn over [0, ntasks) on the pool's threads; returns when done. A NULL
 * pool runs everything on the caller. */
void quill_rt_pool_run(quill_rt_pool *pool, quill_rt_task_fn fn, void *args,
                       int64_t ntasks) {
  if (!pool || pool->nworkers == 0 || ntasks < 2 ||
      atomic_exchange_explicit(&pool->busy, 1, memory_order_acquire)) {
    fn(args, 0, ntasks); /* no pool, nothing to split, or another caller's
                            stage is running on it */
    return;
  }
  pool->fn = fn;
  pool->args = args;
  pool->ntasks = ntasks;
  atomic_store_explicit(&pool->pending, pool->nworkers, memory_order_relaxed);
  /* the bump publishes fn/args/ntasks; the broadcast (cheap without
   * sleepers) wakes workers that stopped spinning */
  pthread_mutex_lock(&pool->mu);
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->mu);
  int64_t b, e;
  range(ntasks, pool->nworkers + 1, 0, &b, &e);
  if (b < e)
    fn(args, b, e);
  for (int i = 0; i < QUILL_RT_SPIN &&
                  atomic_load_explicit(&pool->pending, memory_order_acquire) > 0;
       i++)
    spin_pause(i);
  if (atomic_load_explicit(&pool->pending, memory_order_acquire) > 0) {
    pthread_mutex_lock(&pool->mu);
    while (atomic_load(&pool->pending) > 0)
      pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
  }
  atomic_store_explicit(&pool->busy, 0, memory_order_release);
}

#ifndef QUILL_RT_NO_DEFAULT
/* The process-wide pool of the shipped shim, created on first use with
 * the thread count of the first call (under a lock: several threads may
 * make their first call at once). */
static quill_rt_pool *_Atomic default_pool;
static pthread_mutex_t default_mu = PTHREAD_MUTEX_INITIALIZER;

void quill_rt_parallel_for(quill_rt_task_fn fn, void *args, int64_t ntasks,
                           int32_t nthreads) {
  if (nthreads < 2) {
    fn(args, 0, ntasks);
    return;
  }
  quill_rt_pool *pool =
      atomic_load_explicit(&default_pool, memory_order_acquire);
  if (!pool) {
    pthread_mutex_lock(&default_mu);
    pool = atomic_load_explicit(&default_pool, memory_order_relaxed);
    if (!pool) {
      pool = quill_rt_pool_create(nthreads);
      atomic_store_explicit(&default_pool, pool, memory_order_release);
    }
    pthread_mutex_unlock(&default_mu);
  }
  quill_rt_pool_run(pool, fn, args, ntasks); /* NULL: runs on the caller */
}
#endif
