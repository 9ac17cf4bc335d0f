/*
 * llvm_model.c - whole-model speed of the LLVM target (bench-llvm-model,
 * not run by ctest).
 *
 *   bench-llvm-model MODEL.qir [--isa PATH] [--threads N] [--reps R]
 *                    [--check]
 *
 * Compiles the module's first graph with the JIT (reporting the compile
 * time), fills the inputs with a fixed pattern, runs it R times after two
 * warm-up runs and prints the best and median times (and, with 1 thread,
 * the thread's CPU time per run, which a loaded machine disturbs less).
 * --check also runs the reference interpreter once and compares every
 * output byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/readfile.h"
#include "ir/verifier.h"
#include "targets/llvm/llvm_target.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: with 1 thread, the run's own time even
 * when the machine is loaded (wall time then counts other processes). */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench-llvm-model MODEL.qir [--isa P] [--threads "
                    "N] [--reps R] [--check]\n");
    return 2;
  }
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  int reps = 50;
  bool check = false;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--isa") && i + 1 < argc)
      quill_llvm_isa_parse(argv[++i], &o.isa);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      o.threads = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--parallel-all"))
      o.parallel_all = true;
    else if (!strcmp(argv[i], "--noinline"))
      o.noinline = true;
    else if (!strcmp(argv[i], "--check"))
      check = true;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  char *text;
  size_t len, cap;
  bool opened;
  /* a model's text: the data cap (ViT-B/16's .qir is 177 MB), not the
   * 64 MiB one of lists and configs */
  int err = quill_read_file(ctx, argv[1], 0, &text, &len, &cap, &opened);
  if (err) {
    fprintf(stderr, "%s: %s\n", argv[1], quill_read_strerror(err, 0));
    return 1;
  }
  quill_module *m = quill_parse_module(ctx, text, len, argv[1], 0);
  quill_free(ctx, text, cap);
  if (!m || quill_verify_module(m))
    return 1;
  quill_graph *g = quill_module_graph(m, 0);
  double t0 = now_s();
  quill_llvm_jit *jit;
  if (quill_llvm_jit_create(ctx, g, &o, &jit))
    return 1;
  double tc = now_s() - t0;
  unsigned nin = quill_graph_num_args(g), nout = quill_graph_num_results(g);
  quill_tensor *in = calloc(nin, sizeof *in), *out = calloc(nout, sizeof *out);
  for (unsigned i = 0; i < nin; i++) {
    quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, i)), &in[i]);
    size_t n = quill_tensor_num_elements(&in[i]);
    for (size_t k = 0; k < n; k++)
      quill_tensor_set_f64(&in[i], k, (double)((k * 7919) % 255) / 64.0 - 2.0);
  }
  for (unsigned i = 0; i < nout; i++)
    quill_tensor_alloc(ctx, quill_graph_result_type(g, i), &out[i]);
  double *t = malloc((size_t)reps * sizeof *t);
  double *tcpu = malloc((size_t)reps * sizeof *tcpu);
  for (int r = -2; r < reps; r++) {
    double a = now_s(), ac = cpu_s();
    quill_llvm_jit_run_into(jit, in, nin, out, nout);
    if (r >= 0) {
      t[r] = now_s() - a;
      tcpu[r] = cpu_s() - ac;
    }
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  qsort(tcpu, (size_t)reps, sizeof *tcpu, cmp_double);
  printf("%s: isa %s, %u thread%s: compile %.0f ms, best %.3f ms, median "
         "%.3f ms",
         argv[1], quill_llvm_isa_name(quill_llvm_jit_isa(jit)), o.threads,
         o.threads > 1 ? "s" : "", tc * 1e3, t[0] * 1e3, t[reps / 2] * 1e3);
  if (o.threads == 1)
    printf(" (thread CPU time: best %.3f ms, median %.3f ms)", tcpu[0] * 1e3,
           tcpu[reps / 2] * 1e3);
  printf("\n");
  free(tcpu);
  int rc = 0;
  if (check) {
    quill_tensor *ref = calloc(nout, sizeof *ref);
    if (quill_ref_run(ctx, g, in, nin, ref, nout))
      rc = 1;
    for (unsigned i = 0; !rc && i < nout; i++)
      if (ref[i].size != out[i].size ||
          memcmp(ref[i].data, out[i].data, ref[i].size)) {
        printf("output %u differs from the reference\n", i);
        rc = 1;
      }
    if (!rc)
      printf("outputs equal the reference interpreter's bit for bit\n");
    quill_ref_tensors_free(ctx, ref, nout);
    free(ref);
  }
  free(t);
  quill_ref_tensors_free(ctx, in, nin);
  quill_ref_tensors_free(ctx, out, nout);
  free(in);
  free(out);
  quill_llvm_jit_destroy(jit);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  return rc;
}
