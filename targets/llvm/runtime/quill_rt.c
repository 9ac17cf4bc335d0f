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
 * split into contiguous ranges, on the calling thread and a pool of
 * nthreads - 1 workers created on first use and kept for the life of the
 * process, and return when all are done. A host with its own scheduler can define
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
 * stage over must be cheap, and a worker that is late (asleep, or
 * descheduled on a loaded machine) must not hold the caller up:
 *
 *   slot[t] = generation << 32 | lo << 16 | hi   (an atomic word per thread)
 *
 *   caller: every slot = (g+1, CLOSED), fn, args, chunks
 *             ──> slot[t] = (g+1, thread t's home chunks [lo, hi))
 *             ──> claim chunks ─────────────────────────────────────┐
 *   worker t: sees slot[t] = (g+1, open) ──> claim chunks ──────────┤
 *   caller: waits until every claimed chunk is done <───────────────┘
 *
 * The stage's tasks are cut into up to 16 contiguous chunks per thread,
 * of sizes that differ by at most one task (with 4 per thread, 21 tasks
 * on 2 threads were 7 chunks of 3, which left one thread 12 of the 21),
 * and thread t (the caller is 0) owns the t-th contiguous part of the
 * chunks, its home. A thread claims the first chunk left in its home
 * (lo + 1), then steals the last chunk left in the others' homes (hi - 1),
 * each with a compare-and-swap on that slot (which fails once the
 * generation has moved on, so a late worker never runs a finished
 * stage). Homes keep each thread on the same part of every stage: the
 * rows a thread wrote in one stage are the rows it reads in the next,
 * still in its own core's cache. When every thread claimed the next chunk
 * of one shared counter instead, a thread's chunks were a different
 * interleaving each stage, and MobileNetV2's depthwise stages, which read
 * little else, took 1.5x the CPU time on 2 threads that they take on one
 * (the other core's cache lines). A worker that has not woken up by the
 * time the caller has stolen every chunk costs nothing:
 * the caller waits only for chunks already claimed. Idle workers spin on
 * the generation for QUILL_RT_SPIN_NS of wall time (pause instructions;
 * a fixed count of pauses lasts 10x longer on one CPU than on another),
 * then sleep on a condition variable; the caller locks the mutex to wake
 * them only when one sleeps. Between two runs of the model the workers go
 * back to sleep.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define QUILL_RT_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define QUILL_RT_PAUSE() __asm__ __volatile__("yield")
#else
#define QUILL_RT_PAUSE() ((void)0)
#endif

/* Wall time an idle worker spins before it sleeps, and a caller waits for
 * claimed chunks before it sleeps. Every QUILL_RT_YIELD pauses a spinning
 * thread yields the CPU, so that it does not hold up a working one when
 * there are more threads than cores. */
#define QUILL_RT_SPIN_NS 200000
#define QUILL_RT_WAIT_NS 2000000
#define QUILL_RT_YIELD 4096
/* Chunks per thread: enough to even out uneven tasks and late workers
 * (the last chunk leaves the other threads idle for at most 1/16 of a
 * thread's share; at 4, a 28-task stage went 16:12 on 2 threads), few
 * enough that claims (a compare-and-swap each) cost nothing next to a
 * chunk and a chunk stays a contiguous run of tasks. */
#define QUILL_RT_CHUNKS_PER_THREAD 16
/* Test hooks (test/unit/test_rt_pool_race.c widens race windows with
 * them): 0, a thread has read a slot to claim; 1, the caller has written
 * a stage's fields and not yet opened it. */
#ifndef QUILL_RT_TEST_HOOK
#define QUILL_RT_TEST_HOOK(where) ((void)0)
#endif
/* The chunk half (lo << 16 | hi) of a slot whose stage is being set up:
 * empty (lo >= hi), and never an open stage's (lo <= QUILL_RT_MAX_CHUNKS). */
#define QUILL_RT_CLOSED 0xffff0000u
#define QUILL_RT_MAX_CHUNKS 0xfffe

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One step of a spin-wait that started at *t0 (0: not yet read); false
 * once it has lasted `budget` ns. The clock is read every 64 steps. */
static int spin_step(unsigned *i, uint64_t *t0, uint64_t budget) {
  ++*i;
  if (*i % QUILL_RT_YIELD == 0)
    sched_yield();
  else
    QUILL_RT_PAUSE();
  if (*i % 64)
    return 1;
  uint64_t t = now_ns();
  if (!*t0)
    *t0 = t;
  return t - *t0 < budget;
}

typedef void (*quill_rt_task_fn)(void *, int64_t, int64_t);

/* The words every thread writes during a stage (a slot on each claim,
 * `left` once its chunks are done) sit on cache lines of their own: on
 * the line of the stage's read-mostly fields, each claim would take those
 * from the other threads' caches too. */
#define QUILL_RT_LINE 64

/* Thread t's slot: generation << 32 | lo << 16 | hi, the chunks [lo, hi)
 * of its home not claimed yet; on a cache line of its own (each claim
 * writes it). */
typedef struct quill_rt_slot {
  _Alignas(QUILL_RT_LINE) _Atomic uint64_t word;
  char pad[QUILL_RT_LINE - sizeof(uint64_t)];
} quill_rt_slot;

typedef struct quill_rt_pool quill_rt_pool;

/* What a worker thread starts with: its pool and its slot's index. */
typedef struct quill_rt_worker {
  quill_rt_pool *pool;
  int self;
} quill_rt_worker;

typedef struct quill_rt_pool {
  pthread_mutex_t mu;
  pthread_cond_t start, done;
  pthread_t *threads;
  int nworkers;
  atomic_int stop;
  atomic_int busy;         /* a caller owns the stage fields below */
  atomic_int sleepers;     /* workers waiting on `start` */
  atomic_int caller_sleeps; /* the caller waits on `done` */
  /* The stage, written by its caller before the generation moves on and
   * read by workers before they claim a chunk (atomics: a late worker may
   * read the next stage's values, and then its claim fails). */
  _Atomic(quill_rt_task_fn) fn;
  _Atomic(void *) args;
  atomic_llong ntasks, nchunks;
  uint32_t generation;     /* the owner's copy of the current generation */
  int nslots;              /* threads: the caller and the workers */
  quill_rt_slot *slot;     /* [nslots] */
  quill_rt_worker *workers; /* [nslots - 1] */
  _Alignas(QUILL_RT_LINE) atomic_llong left; /* chunks not finished */
  char pad[QUILL_RT_LINE - sizeof(atomic_llong)];
} quill_rt_pool;

static uint32_t slot_gen(uint64_t w) { return (uint32_t)(w >> 32); }
static uint32_t slot_lo(uint64_t w) { return (uint32_t)(w >> 16) & 0xffff; }
static uint32_t slot_hi(uint64_t w) { return (uint32_t)w & 0xffff; }

/* Claim and run chunks of generation `gen` until none is left (or the
 * generation has moved on), from thread self's home first, then from the
 * others' (from their ends); returns how many it ran. */
static int64_t claim_chunks(quill_rt_pool *pool, uint32_t gen, int self) {
  int64_t ran = 0;
  for (int i = 0; i < pool->nslots; i++) {
    int u = (self + i) % pool->nslots;
    _Atomic uint64_t *slot = &pool->slot[u].word;
    uint64_t s = atomic_load_explicit(slot, memory_order_acquire);
    for (;;) {
      if (slot_gen(s) != gen)
        return ran; /* a later stage: this one is finished */
      uint32_t lo = slot_lo(s), hi = slot_hi(s);
      if (lo >= hi)
        break; /* empty, or not open yet (its owner or the caller will) */
      QUILL_RT_TEST_HOOK(0);
      /* acquire, with the caller's release stores: a value of the next
       * stage is read only after its CLOSED slots, and the claim fails */
      quill_rt_task_fn fn =
          atomic_load_explicit(&pool->fn, memory_order_acquire);
      void *args = atomic_load_explicit(&pool->args, memory_order_acquire);
      int64_t n = atomic_load_explicit(&pool->ntasks, memory_order_acquire);
      int64_t nchunks =
          atomic_load_explicit(&pool->nchunks, memory_order_acquire);
      uint32_t k = u == self ? lo : hi - 1;
      uint64_t next = u == self ? s + (1u << 16) : s - 1;
      if ((int64_t)k >= nchunks)
        return ran;
      if (!atomic_compare_exchange_weak_explicit(slot, &s, next,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire))
        continue; /* s reloaded: another thread claimed, or a new stage */
      /* chunk k: [k n / nchunks, (k + 1) n / nchunks), sizes within one */
      int64_t b = (int64_t)k * n / nchunks;
      int64_t e = ((int64_t)k + 1) * n / nchunks;
      fn(args, b, e);
      ran++;
      s = atomic_load_explicit(slot, memory_order_acquire);
    }
  }
  return ran;
}

/* Run chunks of generation `gen` (claim_chunks), then count them off
 * `left` at once: one write to that shared line per thread and stage,
 * not one per chunk (each a transfer of the line between the cores while
 * the other thread works too). The stage cannot finish, nor the
 * generation move on, before these chunks are counted off. A worker
 * descheduled between two of its chunks now holds the caller up until it
 * runs again; that window is a few loads and a compare-and-swap, against
 * the chunk it may be descheduled in, which holds the caller up either
 * way. (A count per thread beside its slot word, summed by the waiting
 * caller, was no faster than one decrement a chunk: the caller's polls
 * moved that line back and forth instead.) */
static void run_chunks(quill_rt_pool *pool, uint32_t gen, int self) {
  int64_t ran = claim_chunks(pool, gen, self);
  /* seq_cst, with the caller's store of caller_sleeps before it
   * rechecks `left`: it either sees 0 or is woken here */
  if (ran > 0 && atomic_fetch_sub(&pool->left, ran) == ran &&
      atomic_load(&pool->caller_sleeps)) { /* the last chunks */
    pthread_mutex_lock(&pool->mu);
    pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->mu);
  }
}

/* The generation of a stage open for claims that a worker which has
 * seen `seen` has not joined yet, or `seen` (nothing new, or a stage
 * being set up). */
static uint32_t open_generation(uint64_t s, uint32_t seen) {
  return (uint32_t)s == QUILL_RT_CLOSED ? seen : slot_gen(s);
}

static void *worker_main(void *p) {
  quill_rt_pool *pool = ((quill_rt_worker *)p)->pool;
  int self = ((quill_rt_worker *)p)->self;
  _Atomic uint64_t *mine = &pool->slot[self].word;
  /* the generation at creation: a stage started before this thread ran
   * is still claimable, and run_chunks finds out */
  uint32_t seen = 0;
  for (;;) {
    unsigned i = 0;
    uint64_t t0 = 0;
    uint32_t g = open_generation(
        atomic_load_explicit(mine, memory_order_acquire), seen);
    while (g == seen && !atomic_load_explicit(&pool->stop,
                                              memory_order_relaxed) &&
           spin_step(&i, &t0, QUILL_RT_SPIN_NS))
      g = open_generation(
          atomic_load_explicit(mine, memory_order_acquire), seen);
    if (g == seen) { /* idle: sleep until the next stage */
      atomic_fetch_add(&pool->sleepers, 1);
      pthread_mutex_lock(&pool->mu);
      while (open_generation(atomic_load(mine), seen) == seen &&
             !atomic_load(&pool->stop))
        pthread_cond_wait(&pool->start, &pool->mu);
      pthread_mutex_unlock(&pool->mu);
      atomic_fetch_sub(&pool->sleepers, 1);
      g = open_generation(
          atomic_load_explicit(mine, memory_order_acquire), seen);
    }
    if (atomic_load(&pool->stop))
      break;
    seen = g;
    run_chunks(pool, g, self);
  }
  return NULL;
}

void quill_rt_pool_destroy(quill_rt_pool *pool);

/* A pool that runs stages on nthreads threads (the caller included).
 * Returns NULL on failure. */
quill_rt_pool *quill_rt_pool_create(int nthreads) {
  quill_rt_pool *pool = aligned_alloc(QUILL_RT_LINE, sizeof *pool);
  if (!pool)
    return NULL;
  memset(pool, 0, sizeof *pool);
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->start, NULL);
  pthread_cond_init(&pool->done, NULL);
  atomic_init(&pool->stop, 0);
  atomic_init(&pool->busy, 0);
  atomic_init(&pool->sleepers, 0);
  atomic_init(&pool->caller_sleeps, 0);
  atomic_init(&pool->left, 0);
  atomic_init(&pool->fn, NULL);
  atomic_init(&pool->args, NULL);
  atomic_init(&pool->ntasks, 0);
  atomic_init(&pool->nchunks, 0);
  /* every thread gets at least one chunk number: 16 per thread, at most
   * QUILL_RT_MAX_CHUNKS in all */
  int nw = nthreads > 1 ? nthreads - 1 : 0;
  if (nw > QUILL_RT_MAX_CHUNKS / QUILL_RT_CHUNKS_PER_THREAD - 1)
    nw = QUILL_RT_MAX_CHUNKS / QUILL_RT_CHUNKS_PER_THREAD - 1;
  pool->threads = calloc(nw ? (size_t)nw : 1, sizeof *pool->threads);
  pool->workers = calloc(nw ? (size_t)nw : 1, sizeof *pool->workers);
  pool->slot = aligned_alloc(QUILL_RT_LINE,
                             (size_t)(nw + 1) * sizeof *pool->slot);
  if (!pool->threads || !pool->workers || !pool->slot) {
    quill_rt_pool_destroy(pool);
    return NULL;
  }
  for (int t = 0; t <= nw; t++)
    atomic_init(&pool->slot[t].word, 0);
  pool->nslots = 1;
  for (int i = 0; i < nw; i++) {
    pool->workers[i].pool = pool;
    pool->workers[i].self = i + 1;
    /* a worker reads nslots' slots only in stages opened after this */
    pool->nslots = i + 2;
    if (pthread_create(&pool->threads[i], NULL, worker_main,
                       &pool->workers[i]) != 0) {
      pool->nslots = i + 1;
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
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->nworkers; i++)
    pthread_join(pool->threads[i], NULL);
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->start);
  pthread_cond_destroy(&pool->done);
  free(pool->threads);
  free(pool->workers);
  free(pool->slot);
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
  int T = pool->nslots;
  int64_t want = (int64_t)T * QUILL_RT_CHUNKS_PER_THREAD;
  int64_t nchunks = ntasks < want ? ntasks : want;
  uint32_t gen = ++pool->generation;
  /* Close the last stage before its fields change: a worker that read a
   * slot (gen - 1, lo, hi) and is late to claim from it (all of that
   * stage's chunks are claimed) would otherwise still succeed, the slot
   * being unchanged, with this stage's fn, args and counts, run a chunk of
   * it that is run again once it opens, and count it off `left` twice: the
   * caller then returns, and its args (on its stack) go, while that chunk
   * still runs. */
  for (int t = 0; t < T; t++)
    atomic_store(&pool->slot[t].word, (uint64_t)gen << 32 | QUILL_RT_CLOSED);
  atomic_store_explicit(&pool->fn, fn, memory_order_release);
  atomic_store_explicit(&pool->args, args, memory_order_release);
  atomic_store_explicit(&pool->ntasks, ntasks, memory_order_release);
  atomic_store_explicit(&pool->nchunks, nchunks, memory_order_release);
  atomic_store_explicit(&pool->left, nchunks, memory_order_relaxed);
  QUILL_RT_TEST_HOOK(1);
  /* publishes the fields above; seq_cst with the load of `sleepers` (and
   * the worker's increment before it rechecks): a worker either sees its
   * slot open or is counted and woken here. Thread t's home: chunks
   * [t nchunks / T, (t + 1) nchunks / T). */
  for (int t = 0; t < T; t++) {
    uint64_t lo = (uint64_t)(t * nchunks / T);
    uint64_t hi = (uint64_t)((t + 1) * nchunks / T);
    atomic_store(&pool->slot[t].word, (uint64_t)gen << 32 | lo << 16 | hi);
  }
  if (atomic_load(&pool->sleepers)) {
    pthread_mutex_lock(&pool->mu);
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->mu);
  }
  run_chunks(pool, gen, 0);
  unsigned i = 0;
  uint64_t t0 = 0;
  while (atomic_load_explicit(&pool->left, memory_order_acquire) > 0 &&
         spin_step(&i, &t0, QUILL_RT_WAIT_NS))
    ;
  if (atomic_load_explicit(&pool->left, memory_order_acquire) > 0) {
    atomic_store(&pool->caller_sleeps, 1);
    pthread_mutex_lock(&pool->mu);
    while (atomic_load(&pool->left) > 0)
      pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    atomic_store(&pool->caller_sleeps, 0);
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
