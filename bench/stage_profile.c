/*
 * stage_profile.c - per-stage thread profile of a model compiled by
 * `quill compile --threads N` (bench-stage-profile, not run by ctest;
 * bench/stage_profile.py drives it and prints the table).
 *
 *   quill compile m.qir -o m.o --name m --threads 2
 *   cc -shared -fPIC -o m.so m.o
 *   bench-stage-profile m.so m.h [--name m] [--threads T] [--reps R]
 *
 * The compiled code calls quill_rt_parallel_for once per parallel stage;
 * this program defines that symbol itself (exported from the executable,
 * so m.so binds to it) and runs the stage on the shipped pool
 * (runtime/quill_rt.c's quill_rt_pool_run; --threads 1 runs every stage on
 * the caller, the single-thread baseline). Around each stage it records
 * the wall time, and around each chunk a thread runs, which thread ran it
 * (the caller or a worker) and that thread's CPU time for it:
 *
 *   run r:  [serial code] stage 0 [serial] stage 1 ...       (wall: total)
 *   stage k:  caller ──chunk──chunk──wait┐                   (wall: stage)
 *             worker ──chunk──chunk──────┘   (CPU in chunks, per thread)
 *
 * The chunk clock is the thread's CPU time by default; on this kind of
 * virtual machine reading it is a system call of about 0.2 us, twice a
 * chunk, which a stage of 20-30 chunks (AMX stages, a transformer's small
 * ones) pays 10 us or more of in the two-thread run and not in the
 * one-thread run (one chunk a stage). `--chunk-clock wall` reads the
 * monotonic clock instead (about 0.02 us, the vDSO): right when the
 * threads keep their cores (a quiet machine, real-time priority), not on
 * a loaded one.
 *
 * Per stage it prints the least over R runs (other processes only ever
 * add time) of the wall time and of the CPU time in chunks on the caller
 * and on the workers, the median chunk counts and the least CPU time in
 * the chunks of both (one run's sum); then the whole run's
 * median and least wall time, its least CPU time on the caller, the
 * sum of the stages' least wall times, and the serial part: the sum over
 * the gaps before, between and after the parallel stages of the least
 * CPU time the caller spent in each (code that never goes to the pool). CPU
 * time in chunks does not count time a thread waited for a core, so on a
 * loaded machine max(caller, workers) + the hand-over still estimates what
 * the stage takes when both threads have a core.
 *
 * Inputs are f32 (every model of the zoo), filled with a fixed pattern;
 * every buffer gets 8 bytes per element, enough for any element type.
 * quill_rt_parallel_for has no context argument, so the profile lives in
 * one file-scope pointer: a bench program's state, never the library's.
 */
#define _GNU_SOURCE /* RTLD_*, clock_gettime */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/readfile.h"
#include "targets/llvm/runtime/quill_rt_pool.h"

typedef quill_rt_task_fn task_fn;

#define MAX_STAGES 4096
#define MAX_REPS 2000

typedef struct stage_rec {
  uintptr_t fn;     /* the trampoline's address */
  int64_t ntasks;
  double *wall;     /* per rep, ns */
  double *cpu[2];   /* per rep: CPU ns in chunks, [0] caller [1] workers */
  double *chunks[2];
  double *gap;      /* per rep: the caller's CPU ns since the last stage */
} stage_rec;

typedef struct profile {
  quill_rt_pool *pool;
  pthread_t caller;
  int rep, reps, k, nstages;
  clockid_t chunk_clock;
  double last_cpu;  /* the caller's CPU ns at the end of the last stage */
  stage_rec st[MAX_STAGES];
} profile;

static profile *the_profile; /* see the header comment */

static double ns_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct chunk_args {
  clockid_t clock; /* the chunks' clock: see the header */
  task_fn fn;
  void *args;
  stage_rec *st;
  int rep;
  pthread_t caller;
  pthread_mutex_t mu;
} chunk_args;

static void timed_chunk(void *p, int64_t b, int64_t e) {
  chunk_args *a = p;
  double c0 = ns_of(a->clock);
  a->fn(a->args, b, e);
  double c = ns_of(a->clock) - c0;
  int w = !pthread_equal(pthread_self(), a->caller);
  pthread_mutex_lock(&a->mu);
  a->st->cpu[w][a->rep] += c;
  a->st->chunks[w][a->rep] += 1;
  pthread_mutex_unlock(&a->mu);
}

void quill_rt_parallel_for(task_fn fn, void *args, int64_t ntasks,
                           int32_t nthreads) {
  (void)nthreads;
  profile *pr = the_profile;
  double c_in = ns_of(CLOCK_THREAD_CPUTIME_ID);
  if (pr->k >= MAX_STAGES) {
    fn(args, 0, ntasks);
    return;
  }
  stage_rec *st = &pr->st[pr->k++];
  if (pr->k > pr->nstages) {
    pr->nstages = pr->k;
    st->fn = (uintptr_t)fn;
    st->ntasks = ntasks;
    size_t n = (size_t)pr->reps;
    st->wall = calloc(n, sizeof(double));
    st->gap = calloc(n, sizeof(double));
    for (int w = 0; w < 2; w++) {
      st->cpu[w] = calloc(n, sizeof(double));
      st->chunks[w] = calloc(n, sizeof(double));
    }
  }
  int rep = pr->rep < 0 ? 0 : pr->rep; /* warm-ups write rep 0, reset */
  chunk_args a = {pr->chunk_clock, fn,         args,
                  st,              rep,        pr->caller,
                  PTHREAD_MUTEX_INITIALIZER};
  double t0 = ns_of(CLOCK_MONOTONIC);
  quill_rt_pool_run(pr->pool, timed_chunk, &a, ntasks);
  st->wall[rep] = ns_of(CLOCK_MONOTONIC) - t0;
  st->gap[rep] = c_in - pr->last_cpu;
  pr->last_cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (0: the least, 0.5: the median). */
static double quantile(const double *v, int n, double q) {
  double *s = malloc((size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double m = s[(int)(q * (n - 1))];
  free(s);
  return m;
}

/* The value of `#define <ANY>_<key> N` in the header, or -1. */
static long header_value(const char *hdr, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "_%s ", key);
  for (const char *p = strstr(hdr, "#define "); p;
       p = strstr(p + 1, "#define ")) {
    const char *end = strchr(p, '\n');
    const char *k = strstr(p, pat);
    if (k && (!end || k < end))
      return strtol(k + strlen(pat), NULL, 10);
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench-stage-profile M.so M.h [--name m] "
                    "[--threads T] [--reps R] [--chunk-clock cpu|wall]\n");
    return 2;
  }
  const char *name = "m";
  int threads = 2, reps = 50;
  clockid_t chunk_clock = CLOCK_THREAD_CPUTIME_ID;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--name"))
      name = argv[i + 1];
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--chunk-clock")) {
      if (strcmp(argv[i + 1], "wall") && strcmp(argv[i + 1], "cpu")) {
        fprintf(stderr, "bench-stage-profile: --chunk-clock is cpu or wall, "
                        "not %s\n", argv[i + 1]);
        return 2;
      }
      chunk_clock = !strcmp(argv[i + 1], "wall") ? CLOCK_MONOTONIC
                                                 : CLOCK_THREAD_CPUTIME_ID;
    }
  }
  if (reps < 1 || reps > MAX_REPS)
    reps = 50;
  quill_context *ctx = quill_context_create(NULL, NULL);
  char *hdr;
  size_t hdr_len, hdr_cap;
  bool opened;
  int err = quill_read_file(ctx, argv[2], QUILL_READ_TEXT, &hdr, &hdr_len,
                            &hdr_cap, &opened);
  if (err) {
    fprintf(stderr, "%s: %s\n", argv[2],
            quill_read_strerror(err, QUILL_READ_TEXT));
    return 1;
  }
  long scratch = header_value(hdr, "SCRATCH_SIZE");
  long nin = header_value(hdr, "NUM_INPUTS");
  long nout = header_value(hdr, "NUM_OUTPUTS");
  if (scratch < 0 || nin < 0 || nout < 0 || nin + nout > 64) {
    fprintf(stderr, "%s: not a Quill model header\n", argv[2]);
    return 1;
  }
  void *ptrs[65];
  for (long i = 0; i < nin + nout; i++) {
    char key[32];
    snprintf(key, sizeof key, i < nin ? "IN%ld_SIZE" : "OUT%ld_SIZE",
             i < nin ? i : i - nin);
    long n = header_value(hdr, key);
    if (n < 0)
      n = 1;
    ptrs[i] = aligned_alloc(64, ((size_t)n * 8 + 63) / 64 * 64);
    if (i < nin)
      for (long k = 0; k < n; k++)
        ((float *)ptrs[i])[k] = (float)((k * 7919) % 255) / 64.0f - 2.0f;
  }
  ptrs[nin + nout] = aligned_alloc(64, ((size_t)scratch + 64) / 64 * 64);
  quill_free(ctx, hdr, hdr_cap);
  quill_context_destroy(ctx);
  void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  char sym[256];
  snprintf(sym, sizeof sym, "%s_run_argv", name);
  int (*run)(void **) = (int (*)(void **))dlsym(so, sym);
  if (!run) {
    fprintf(stderr, "%s: no %s\n", argv[1], sym);
    return 1;
  }
  profile *pr = calloc(1, sizeof *pr);
  pr->pool = threads > 1 ? quill_rt_pool_create(threads) : NULL;
  pr->caller = pthread_self();
  pr->reps = reps;
  pr->chunk_clock = chunk_clock;
  the_profile = pr;
  double *total = calloc((size_t)reps, sizeof *total);
  double *tcpu = calloc((size_t)reps, sizeof *tcpu);
  double *tail = calloc((size_t)reps, sizeof *tail);
  for (int r = -2; r < reps; r++) {
    pr->rep = r;
    pr->k = 0;
    for (int k = 0; k < pr->nstages && r <= 0; k++) { /* warm-up data */
      pr->st[k].wall[0] = 0;
      for (int w = 0; w < 2; w++)
        pr->st[k].cpu[w][0] = pr->st[k].chunks[w][0] = 0;
    }
    double t0 = ns_of(CLOCK_MONOTONIC), c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    pr->last_cpu = c0;
    if (run(ptrs) != 0) {
      fprintf(stderr, "%s returned an error\n", sym);
      return 1;
    }
    double c1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    if (r >= 0) {
      total[r] = ns_of(CLOCK_MONOTONIC) - t0;
      tcpu[r] = c1 - c0;
      tail[r] = c1 - pr->last_cpu;
    }
  }
  Dl_info di;
  uintptr_t base = dladdr((void *)run, &di) ? (uintptr_t)di.dli_fbase : 0;
  printf("# stage fn_offset ntasks wall_us caller_cpu_us worker_cpu_us "
         "caller_chunks worker_chunks chunks_cpu_us\n");
  double sum = 0, serial = quantile(tail, reps, 0);
  for (int k = 0; k < pr->nstages; k++) {
    stage_rec *st = &pr->st[k];
    serial += quantile(st->gap, reps, 0);
    double w = quantile(st->wall, reps, 0);
    sum += w;
    for (int r = 0; r < reps; r++) /* per run: both threads' chunks */
      st->wall[r] = st->cpu[0][r] + st->cpu[1][r];
    printf("stage %d 0x%lx %lld %.2f %.2f %.2f %.1f %.1f %.2f\n", k,
           (unsigned long)(st->fn - base), (long long)st->ntasks, w * 1e-3,
           quantile(st->cpu[0], reps, 0) * 1e-3,
           quantile(st->cpu[1], reps, 0) * 1e-3,
           quantile(st->chunks[0], reps, 0.5),
           quantile(st->chunks[1], reps, 0.5),
           quantile(st->wall, reps, 0) * 1e-3);
  }
  printf("total threads %d wall_us %.2f best_us %.2f caller_cpu_us %.2f "
         "stages_wall_us %.2f serial_cpu_us %.2f\n",
         threads, quantile(total, reps, 0.5) * 1e-3,
         quantile(total, reps, 0) * 1e-3, quantile(tcpu, reps, 0) * 1e-3,
         sum * 1e-3, serial * 1e-3);
  quill_rt_pool_destroy(pr->pool);
  the_profile = NULL;
  for (int k = 0; k < pr->nstages; k++) {
    free(pr->st[k].wall);
    free(pr->st[k].gap);
    for (int w = 0; w < 2; w++) {
      free(pr->st[k].cpu[w]);
      free(pr->st[k].chunks[w]);
    }
  }
  free(pr);
  free(total);
  free(tcpu);
  free(tail);
  for (long i = 0; i <= nin + nout; i++)
    free(ptrs[i]);
  dlclose(so);
  return 0;
}
