/*
 * callers.c - the concurrency contract of a compiled model: any number of
 * threads may call it at once, each with its own scratch buffer, and get
 * the bytes a lone caller gets (test/examples/concurrent.sh links it with
 * a model compiled by `quill compile --threads 2 --name model` and the
 * shipped quill_rt.c, once plainly and once under ThreadSanitizer).
 *
 *   callers THREADS CALLS_PER_THREAD
 *
 * First every input (a few seeded random images) is run alone to get its
 * expected output; then THREADS threads each make CALLS_PER_THREAD calls on
 * the inputs in turn and compare every output byte with the expected one.
 * Exit 0 when every call returned 0 and every output matched.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define NINPUTS 6

static uint8_t inputs[NINPUTS][MODEL_IN0_SIZE];
static uint8_t expected[NINPUTS][MODEL_OUT0_SIZE];
static long calls_per_thread;
static atomic_long wrong, failed;

static void *caller(void *arg) {
  long id = (long)(intptr_t)arg;
  unsigned char *scratch = aligned_alloc(
      MODEL_SCRATCH_ALIGN, (MODEL_SCRATCH_SIZE + MODEL_SCRATCH_ALIGN - 1) /
                               MODEL_SCRATCH_ALIGN * MODEL_SCRATCH_ALIGN);
  uint8_t *out = malloc(MODEL_OUT0_SIZE);
  if (!scratch || !out) {
    atomic_fetch_add(&failed, 1);
    free(scratch);
    free(out);
    return NULL;
  }
  for (long i = 0; i < calls_per_thread; i++) {
    int k = (int)((id + i) % NINPUTS);
    memset(out, 0xA5, MODEL_OUT0_SIZE);
    if (model_run(inputs[k], out, scratch) != 0)
      atomic_fetch_add(&failed, 1);
    else if (memcmp(out, expected[k], MODEL_OUT0_SIZE))
      atomic_fetch_add(&wrong, 1);
  }
  free(scratch);
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS CALLS_PER_THREAD\n", argv[0]);
    return 2;
  }
  int nthreads = atoi(argv[1]);
  calls_per_thread = atol(argv[2]);
  if (nthreads < 1 || nthreads > 64 || calls_per_thread < 1) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < NINPUTS; k++)
    for (size_t i = 0; i < MODEL_IN0_SIZE; i++) {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      inputs[k][i] = (uint8_t)((s * 2685821657736338717ull) >> 56);
    }
  unsigned char *scratch = aligned_alloc(
      MODEL_SCRATCH_ALIGN, (MODEL_SCRATCH_SIZE + MODEL_SCRATCH_ALIGN - 1) /
                               MODEL_SCRATCH_ALIGN * MODEL_SCRATCH_ALIGN);
  if (!scratch)
    return 1;
  for (int k = 0; k < NINPUTS; k++)
    if (model_run(inputs[k], expected[k], scratch) != 0) {
      fprintf(stderr, "model_run failed\n");
      return 1;
    }
  free(scratch);
  pthread_t t[64];
  for (int i = 0; i < nthreads; i++)
    if (pthread_create(&t[i], NULL, caller, (void *)(intptr_t)i)) {
      fprintf(stderr, "cannot start thread %d\n", i);
      return 1;
    }
  for (int i = 0; i < nthreads; i++)
    pthread_join(t[i], NULL);
  long total = nthreads * calls_per_thread;
  printf("%d threads, %ld calls: %ld wrong outputs, %ld failed calls\n",
         nthreads, total, atomic_load(&wrong), atomic_load(&failed));
  return atomic_load(&wrong) || atomic_load(&failed) ? 1 : 0;
}
