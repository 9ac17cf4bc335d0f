/*
 * quill_rt_pool.h - the explicit pool API of runtime/quill_rt.c, for the
 * code that links that file compiled with QUILL_RT_NO_DEFAULT: Quill's JIT
 * (one pool per JIT instance), the pool's unit tests and the stage
 * profiler in bench/.
 *
 * quill_rt.c itself does not include this header: it is shipped as one
 * self-contained C file next to compiled objects (see its header comment).
 */
#ifndef QUILL_RT_POOL_H
#define QUILL_RT_POOL_H

#include <stdint.h>

/* One stage's work: run tasks [begin, end) with args. */
typedef void (*quill_rt_task_fn)(void *args, int64_t begin, int64_t end);

typedef struct quill_rt_pool quill_rt_pool;

/* A pool that runs stages on nthreads threads (the caller and nthreads - 1
 * workers); NULL on failure. quill_rt_pool_run with a NULL pool runs the
 * stage on the caller. */
quill_rt_pool *quill_rt_pool_create(int nthreads);
void quill_rt_pool_destroy(quill_rt_pool *pool);

/* Run fn over [0, ntasks) split into chunks on the caller and the pool's
 * workers; returns when every chunk is done. */
void quill_rt_pool_run(quill_rt_pool *pool, quill_rt_task_fn fn, void *args,
                       int64_t ntasks);

#endif
