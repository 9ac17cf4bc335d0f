/*
 * llvm_kernels.c - speed of the LLVM target's integer conv kernels, against
 * the machine's measured VNNI peak (bench-llvm-kernels, not run by ctest).
 *
 *   bench-llvm-kernels [--isa PATH] [--threads N] [--reps R] [--filter S]
 *                      [--tflite] [--peak]
 *
 * For each layer shape (ResNet-18 / MobileNetV2-like qconv2d layers: u8
 * activations in NHWC as inside a network (NHWC input and output,
 * transposed to and from the op's NCHW views, which costs nothing), per-channel s8 weights, f32 requantization with half_even rounding as
 * the x86-vnni backend config does, or --tflite: fixed-point with tflite
 * rounding), the graph is
 * compiled with the JIT and run R times; the best and median times are
 * reported with GOP/s (2 ops per multiply-accumulate, from the median) and
 * the share of the peak. --peak prints the peak alone. The peak
 * is measured in the same run: a loop of 14 independent vpdpbusd zmm
 * chains (64 MACs each) on one core, times the thread count. On a CPU
 * with AMX-INT8 the AMX peak (tdpbusd) is printed too, for reference,
 * on any AVX2 CPU the avx2 path's peak (vpmaddubsw + vpmaddwd +
 * vpaddd ymm, and the i16 vpmaddwd + vpaddd step), and on an AVX-VNNI
 * CPU the avx-vnni path's ({vex} vpdpbusd ymm).
 */
#define _DEFAULT_SOURCE /* syscall(), for the AMX permission */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "targets/llvm/llvm_target.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This thread's CPU time: the AVX2 peak is compared with stages' CPU
 * time (bench/stage_profile.py), and time slices lost to other processes
 * on a loaded machine do not count. */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Peak u8*s8 MACs per second of one core from AMX (tdpbusd: a 16x64 u8
 * tile times a 16x64 s8 tile into 16x16 i32, 16384 MACs), or 0 when the
 * CPU or the kernel does not offer AMX-INT8. Quill's amx path (what
 * --isa auto picks on such a machine) runs convs and matmuls on the same
 * tiles; the number says how much int8 throughput the machine has
 * beyond vpdpbusd, which other engines' kernels may use. */
static double amx_peak(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) ||
      !(d & (1u << 25)))
    return 0;
  /* ask Linux for the tile data state (ARCH_REQ_XCOMP_PERM, XTILEDATA) */
  if (syscall(SYS_arch_prctl, 0x1023, 18))
    return 0;
  unsigned char cfg[64] = {0};
  cfg[0] = 1; /* palette 1: 8 tiles of up to 16 rows x 64 bytes */
  for (int t = 0; t < 8; t++) {
    cfg[16 + 2 * t] = 64; /* colsb */
    cfg[48 + t] = 16;     /* rows */
  }
  static unsigned char src[16 * 64];
  long iters = 100000;
  double best = 0;
  __asm__ volatile("ldtilecfg %0" ::"m"(cfg));
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm6\n\t"
                   "tileloadd (%0,%1,1), %%tmm7" ::"r"(src),
                   "r"(64L));
  for (int r = 0; r < 30; r++) {
    long n = iters;
    double t0 = now_s();
    __asm__ volatile("tilezero %%tmm0\n\t"
                     "tilezero %%tmm1\n\t"
                     "tilezero %%tmm2\n\t"
                     "tilezero %%tmm3\n\t"
                     "1:\n\t"
                     "tdpbusd %%tmm7, %%tmm6, %%tmm0\n\t"
                     "tdpbusd %%tmm7, %%tmm6, %%tmm1\n\t"
                     "tdpbusd %%tmm7, %%tmm6, %%tmm2\n\t"
                     "tdpbusd %%tmm7, %%tmm6, %%tmm3\n\t"
                     "dec %0\n\t"
                     "jnz 1b\n\t"
                     : "+r"(n)
                     :
                     : "cc");
    double t = now_s() - t0;
    double macs = (double)iters * 4 * 16384 / t;
    if (macs > best)
      best = macs;
  }
  __asm__ volatile("tilerelease");
  return best;
}
#else
static double amx_peak(void) { return 0; }
#endif

#if defined(__x86_64__)
/* The best rate over `runs` runs of loop(iters), each iteration
 * `macs` multiply-accumulates, on `clock` (wall or this thread's CPU). */
static double best_rate(void (*loop)(long), long iters, int runs,
                        double macs, double (*clock)(void)) {
  double best = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = clock();
    loop(iters);
    double rate = (double)iters * macs / (clock() - t0);
    if (rate > best)
      best = rate;
  }
  return best;
}

/* 14 independent vpdpbusd zmm chains (64 MACs each) an iteration. */
static void vnni_loop(long n) {
  __asm__ volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "vpternlogd $0xff, %%zmm14, %%zmm14, %%zmm14\n\t"
      "vpternlogd $0xff, %%zmm15, %%zmm15, %%zmm15\n\t"
      "1:\n\t"
#define VZ(k) "vpdpbusd %%zmm14, %%zmm15, %%zmm" #k "\n\t"
      VZ(0) VZ(1) VZ(2) VZ(3) VZ(4) VZ(5) VZ(6) VZ(7) VZ(8) VZ(9) VZ(10)
          VZ(11) VZ(12) VZ(13)
#undef VZ
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
        "cc");
}

/* 12 chains of vpmaddubsw ymm (u8 x s8 pairs to i16), vpmaddwd ymm with
 * ones (i16 pairs to i32), vpaddd ymm: 32 MACs each. */
static void ubsw_loop(long n) {
  __asm__ volatile(
#define UB(k) "vpmaddubsw %%ymm14, %%ymm15, %%ymm12\n\t" \
              "vpmaddwd %%ymm13, %%ymm12, %%ymm12\n\t"    \
              "vpaddd %%ymm12, %%ymm" #k ", %%ymm" #k "\n\t"
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
      "vpcmpeqd %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpsrlw $15, %%ymm13, %%ymm13\n\t"
      "1:\n\t" UB(0) UB(1) UB(2) UB(3) UB(4) UB(5) UB(6) UB(7) UB(8) UB(9)
          UB(10) UB(11)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
#undef UB
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
        "cc");
}

/* 12 chains of the i16 step, vpmaddwd + vpaddd ymm: 16 MACs each. */
static void wd_loop(long n) {
  __asm__ volatile(
#define WD(k) "vpmaddwd %%ymm14, %%ymm15, %%ymm12\n\t" \
              "vpaddd %%ymm12, %%ymm" #k ", %%ymm" #k "\n\t"
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
      "1:\n\t" WD(0) WD(1) WD(2) WD(3) WD(4) WD(5) WD(6) WD(7) WD(8) WD(9)
          WD(10) WD(11)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
#undef WD
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm14", "xmm15", "cc");
}

/* 12 chains of {vex} vpdpbusd ymm (AVX-VNNI): 32 MACs each. */
static void avxvnni_loop(long n) {
  __asm__ volatile(
#define VD(k) "%{vex%} vpdpbusd %%ymm14, %%ymm15, %%ymm" #k "\n\t"
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
      "1:\n\t" VD(0) VD(1) VD(2) VD(3) VD(4) VD(5) VD(6) VD(7) VD(8) VD(9)
          VD(10) VD(11)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
#undef VD
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15", "cc");
}
#endif

/* Peak u8*s8 MACs per second of one core, from vpdpbusd zmm, best of 60
 * short wall-clock runs (robust to sharing); 0 on a CPU without AVX-512
 * VNNI (the loop would stop with SIGILL there). */
static double vnni_peak(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni"))
    return 0;
  return best_rate(vnni_loop, 1000000, 60, 14 * 64, now_s);
#else
  return 0;
#endif
}

/* Peak u8*s8 MACs per second of one core from AVX2 alone, the sequence
 * Quill's avx2 path (and oneDNN's AVX2 int8 kernels) run per 32 MACs
 * (ubsw_loop); with `i16`, the i16 x i16 step instead (wd_loop: the avx2
 * path's kind for weights whose u8 x s8 pairs could saturate i16). CPU
 * time, best of 200 runs of about 1 ms (some catch an idle sibling). 0
 * on a CPU without AVX2. */
static double avx2_peak(bool i16) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2"))
    return 0;
  return i16 ? best_rate(wd_loop, 250000, 200, 12 * 16, cpu_s)
             : best_rate(ubsw_loop, 250000, 200, 12 * 32, cpu_s);
#else
  (void)i16;
  return 0;
#endif
}

/* Peak u8*s8 MACs per second of one core from AVX-VNNI (avxvnni_loop),
 * what the avx-vnni path runs on a CPU without AVX-512 (Intel client
 * cores). CPU time, best of 200 short runs; 0 on a CPU without AVX-VNNI. */
static double avxvnni_peak(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avxvnni"))
    return 0;
  return best_rate(avxvnni_loop, 250000, 200, 12 * 32, cpu_s);
#else
  return 0;
#endif
}

typedef struct layer {
  const char *name;
  int C, M, H, W, K, stride, group;
} layer;

static const layer layers[] = {
    {"r18.conv1 7x7/2 3->64 @224", 3, 64, 224, 224, 7, 2, 1},
    {"r18 3x3 64->64 @56", 64, 64, 56, 56, 3, 1, 1},
    {"r18 3x3/2 64->128 @56", 64, 128, 56, 56, 3, 2, 1},
    {"r18 3x3 128->128 @28", 128, 128, 28, 28, 3, 1, 1},
    {"r18 3x3 256->256 @14", 256, 256, 14, 14, 3, 1, 1},
    {"r18 3x3 512->512 @7", 512, 512, 7, 7, 3, 1, 1},
    {"r18 1x1/2 64->128 @56", 64, 128, 56, 56, 1, 2, 1},
    {"mb2 1x1 24->144 @56", 24, 144, 56, 56, 1, 1, 1},
    {"mb2 dw3x3 144 @56", 144, 144, 56, 56, 3, 1, 144},
    {"mb2 1x1 144->24 @56", 144, 24, 56, 56, 1, 1, 1},
    {"mb2 1x1 96->576 @14", 96, 576, 14, 14, 1, 1, 1},
    {"1x1/2 256->512 @14", 256, 512, 14, 14, 1, 2, 1},
    {"dw3x3 32 @112", 32, 32, 112, 112, 3, 1, 32},
};

static char *layer_text(const layer *l, bool fixed) {
  int Cg = l->C / l->group, pad = l->K / 2;
  int OH = (l->H + 2 * pad - l->K) / l->stride + 1;
  int OW = (l->W + 2 * pad - l->K) / l->stride + 1;
  size_t nw = (size_t)l->M * (size_t)Cg * (size_t)l->K * (size_t)l->K;
  size_t cap = nw * 2 + (size_t)l->M * 40 + 4096;
  char *t = malloc(cap);
  size_t n = 0;
  n += (size_t)snprintf(t + n, cap - n,
                        "func @f(%%xh: tensor<1x%dx%dx%dx!quant.uniform<u8:f32, "
                        "0.02:128>>) -> tensor<1x%dx%dx%dx!quant.uniform<u8:f32,"
                        " 0.05:0>> {\n"
                        "  %%x = transpose %%xh {perm = [0, 3, 1, 2]} : "
                        "tensor<1x%dx%dx%dx!quant.uniform<u8:f32, 0.02:128>>\n"
                        "  %%w = constant {value = dense<\"0x",
                        l->H, l->W, l->C, OH, OW, l->M, l->C, l->H, l->W);
  unsigned seed = 12345;
  for (size_t i = 0; i < nw; i++) {
    seed = seed * 1103515245u + 12345u;
    n += (size_t)snprintf(t + n, cap - n, "%02X",
                          (unsigned)(((seed >> 16) % 255) - 127) & 0xFF);
  }
  n += (size_t)snprintf(t + n, cap - n,
                        "\"> : tensor<%dx%dx%dx%dx!quant.uniform<i8<-127:127>:"
                        "f32, 0.01:0>>} : tensor<%dx%dx%dx%dx!quant.uniform<"
                        "i8<-127:127>:f32, 0.01:0>>\n",
                        l->M, Cg, l->K, l->K, l->M, Cg, l->K, l->K);
  n += (size_t)snprintf(t + n, cap - n,
                        "  %%y = qconv2d %%x, %%w {group = %d, strides = [%d, "
                        "%d], pads = [%d, %d, %d, %d]",
                        l->group, l->stride, l->stride, pad, pad, pad, pad);
  if (fixed) {
    n += (size_t)snprintf(t + n, cap - n,
                          ", rounding = \"tflite\", multiplier = [");
    for (int m = 0; m < l->M; m++)
      n += (size_t)snprintf(t + n, cap - n, "%s%d", m ? ", " : "",
                            1073741824 + m * 1000);
    n += (size_t)snprintf(t + n, cap - n, "], shift = [");
    for (int m = 0; m < l->M; m++)
      n += (size_t)snprintf(t + n, cap - n, "%s-8", m ? ", " : "");
    n += (size_t)snprintf(t + n, cap - n, "]");
  }
  n += (size_t)snprintf(t + n, cap - n,
                        "} : tensor<1x%dx%dx%dx!quant.uniform<u8:f32, "
                        "0.05:0>>\n  %%yh = transpose %%y {perm = [0, 2, 3, 1]} "
                        ": tensor<1x%dx%dx%dx!quant.uniform<u8:f32, 0.05:0>>\n"
                        "  return %%yh\n}\n",
                        l->M, OH, OW, OH, OW, l->M);
  return t;
}

int main(int argc, char **argv) {
  quill_llvm_isa isa = QUILL_LLVM_ISA_AUTO;
  unsigned threads = 1;
  int reps = 20;
  const char *filter = NULL;
  bool fixed = false, peak_only = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--isa") && i + 1 < argc)
      quill_llvm_isa_parse(argv[++i], &isa);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
      filter = argv[++i];
    else if (!strcmp(argv[i], "--tflite"))
      fixed = true;
    else if (!strcmp(argv[i], "--peak"))
      peak_only = true;
  }
  if (reps < 1)
    reps = 1;
  double peak = vnni_peak() * threads;
  if (peak > 0)
    printf("VNNI peak (vpdpbusd zmm loop, %u thread%s): %.1f GMAC/s = %.1f "
           "GOP/s\n",
           threads, threads > 1 ? "s" : "", peak * 1e-9, 2 * peak * 1e-9);
  else
    printf("VNNI peak: this CPU has no AVX-512 VNNI (no %%peak column)\n");
  double amx = amx_peak() * threads;
  if (amx > 0)
    printf("AMX peak (tdpbusd loop, %u thread%s): %.1f "
           "GMAC/s = %.1f GOP/s\n",
           threads, threads > 1 ? "s" : "", amx * 1e-9, 2 * amx * 1e-9);
  double ub = avx2_peak(false) * threads, wd = avx2_peak(true) * threads;
  if (ub > 0)
    printf("AVX2 peak (vpmaddubsw + vpmaddwd + vpaddd ymm loop, %u thread%s): "
           "%.1f GMAC/s; i16 (vpmaddwd + vpaddd ymm): %.1f GMAC/s\n",
           threads, threads > 1 ? "s" : "", ub * 1e-9, wd * 1e-9);
  double av = avxvnni_peak() * threads;
  if (av > 0)
    printf("AVX-VNNI peak ({vex} vpdpbusd ymm loop, %u thread%s): %.1f "
           "GMAC/s\n",
           threads, threads > 1 ? "s" : "", av * 1e-9);
  if (peak_only)
    return 0;
  printf("%-30s %8s %9s %9s %9s %7s %s\n", "layer", "compile", "best ms",
         "median ms", "GOP/s", "%peak", "isa");
  for (size_t k = 0; k < sizeof layers / sizeof layers[0]; k++) {
    const layer *l = &layers[k];
    if (filter && !strstr(l->name, filter))
      continue;
    quill_context *ctx = quill_context_create(NULL, NULL);
    char *text = layer_text(l, fixed);
    if (getenv("QUILL_BENCH_DUMP")) { /* the graph, for quill compile */
      FILE *f = fopen(getenv("QUILL_BENCH_DUMP"), "w");
      if (f) {
        fputs(text, f);
        fclose(f);
      }
    }
    quill_module *m = quill_parse_module(ctx, text, strlen(text), l->name, 0);
    free(text);
    if (!m || quill_verify_module(m)) {
      fprintf(stderr, "%s: bad graph\n", l->name);
      return 1;
    }
    quill_graph *g = quill_module_graph(m, 0);
    quill_llvm_options o;
    quill_llvm_options_init(&o);
    o.isa = isa;
    o.threads = threads;
    quill_llvm_jit *jit;
    double t0 = now_s();
    if (quill_llvm_jit_create(ctx, g, &o, &jit)) {
      fprintf(stderr, "%s: compile failed\n", l->name);
      return 1;
    }
    double tc = now_s() - t0;
    quill_tensor in, out;
    quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)), &in);
    quill_tensor_alloc(ctx, quill_graph_result_type(g, 0), &out);
    for (size_t i = 0; i < in.size; i++)
      ((unsigned char *)in.data)[i] = (unsigned char)(i * 7 + i / 13);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = -2; r < reps; r++) {
      double a = now_s();
      quill_llvm_jit_run_into(jit, &in, 1, &out, 1);
      if (r >= 0)
        t[r] = now_s() - a;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double best = t[0], med = t[reps / 2];
    free(t);
    int pad = l->K / 2;
    double OH = (l->H + 2 * pad - l->K) / l->stride + 1;
    double OW = (l->W + 2 * pad - l->K) / l->stride + 1;
    double macs = OH * OW * l->M * (double)(l->C / l->group) * l->K * l->K;
    printf("%-30s %6.0fms %9.3f %9.3f %9.1f %6.1f%% %s\n", l->name,
           tc * 1e3, best * 1e3, med * 1e3, 2 * macs / med * 1e-9,
           peak > 0 ? 100 * macs / med / peak : 0.0,
           quill_llvm_isa_name(quill_llvm_jit_isa(jit)));
    quill_tensor_free(ctx, &in);
    quill_tensor_free(ctx, &out);
    quill_llvm_jit_destroy(jit);
    quill_module_destroy(m);
    quill_context_destroy(ctx);
  }
  return 0;
}
