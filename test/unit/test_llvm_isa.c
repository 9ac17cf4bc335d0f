/*
 * test_llvm_isa.c - the instruction-path answers of quill_llvm_isa_paths,
 * the one place that decides which kernel paths a target can run.
 *
 * Named CPUs (--mcpu) get fixed answers, checked here for the CPUs our
 * machines and users have: Intel Haswell (AVX2 only), Skylake-AVX512 (no
 * VNNI), Sapphire Rapids (AVX-512 VNNI, AVX-VNNI, AMX), AMD Zen 4
 * (AVX-512 VNNI, no AVX-VNNI, no AMX), Arm Cortex-A53 (no dotprod),
 * Cortex-A55/A76 and Neoverse-N1 (dotprod: neon-dot) and Neoverse-V1/N2
 * (dotprod and i8mm: neon-i8mm), with --mattr narrowing or widening some
 * of them. For the host the answer depends on the CPU the
 * test runs on, so the test checks consistency instead: every path the
 * library offers compiles and runs a quantized conv bit-exactly, and every
 * path it does not offer is refused with a message naming the paths that
 * are available.
 */
#include <stdio.h>
#include <string.h>

#include "test/unit/llvm_harness.h"

#define BIT(p) (1u << QUILL_LLVM_ISA_##p)
#define X86_AVX2 (BIT(PORTABLE) | BIT(AVX2))
#define X86_VNNI512 (X86_AVX2 | BIT(AVX_VNNI) | BIT(AVX512_VNNI))
#define A64_DOT (BIT(PORTABLE) | BIT(NEON_DOT))
#define A64_I8MM (A64_DOT | BIT(NEON_I8MM))

typedef struct isa_answer {
  const char *triple, *cpu, *features;
  unsigned paths;
  quill_llvm_isa best;
} isa_answer;

static const isa_answer answers[] = {
    {"x86_64-unknown-linux-gnu", "haswell", NULL, X86_AVX2,
     QUILL_LLVM_ISA_AVX2},
    {"x86_64-unknown-linux-gnu", "skylake-avx512", NULL, X86_AVX2,
     QUILL_LLVM_ISA_AVX2},
    /* Zen 4: no AVX-VNNI, but the avx-vnni path's vpdpbusd ymm exists as
     * the EVEX form (AVX-512 VNNI + VL) */
    {"x86_64-unknown-linux-gnu", "znver4", NULL, X86_VNNI512,
     QUILL_LLVM_ISA_AVX512_VNNI},
    {"x86_64-unknown-linux-gnu", "sapphirerapids", NULL,
     X86_VNNI512 | BIT(AMX), QUILL_LLVM_ISA_AMX},
    {"x86_64-unknown-linux-gnu", "sapphirerapids", "-avx512f",
     X86_AVX2 | BIT(AVX_VNNI), QUILL_LLVM_ISA_AVX_VNNI},
    {"x86_64-unknown-linux-gnu", "sapphirerapids", "-amx-int8", X86_VNNI512,
     QUILL_LLVM_ISA_AVX512_VNNI},
    /* the amx path asks Linux for the tile state: Linux targets only */
    {"x86_64-pc-windows-msvc", "sapphirerapids", NULL, X86_VNNI512,
     QUILL_LLVM_ISA_AVX512_VNNI},
    {"x86_64-unknown-linux-gnu", "znver4", "-avx512vnni", X86_AVX2,
     QUILL_LLVM_ISA_AVX2},
    {"x86_64-unknown-linux-gnu", "alderlake", NULL, X86_AVX2 | BIT(AVX_VNNI),
     QUILL_LLVM_ISA_AVX_VNNI},
    {"x86_64-unknown-linux-gnu", "x86-64", NULL, BIT(PORTABLE),
     QUILL_LLVM_ISA_PORTABLE},
    {"aarch64-linux-gnu", "cortex-a53", NULL, BIT(PORTABLE),
     QUILL_LLVM_ISA_PORTABLE},
    {"aarch64-linux-gnu", "generic", NULL, BIT(PORTABLE),
     QUILL_LLVM_ISA_PORTABLE},
    {"aarch64-linux-gnu", "cortex-a55", NULL, A64_DOT,
     QUILL_LLVM_ISA_NEON_DOT},
    {"aarch64-linux-gnu", "cortex-a76", NULL, A64_DOT,
     QUILL_LLVM_ISA_NEON_DOT},
    {"aarch64-linux-gnu", "cortex-a76", "-dotprod", BIT(PORTABLE),
     QUILL_LLVM_ISA_PORTABLE},
    {"aarch64-linux-gnu", "neoverse-n1", "+dotprod", A64_DOT,
     QUILL_LLVM_ISA_NEON_DOT},
    {"aarch64-linux-gnu", "neoverse-v1", NULL, A64_I8MM,
     QUILL_LLVM_ISA_NEON_I8MM},
    {"aarch64-linux-gnu", "neoverse-n2", NULL, A64_I8MM,
     QUILL_LLVM_ISA_NEON_I8MM},
    {"aarch64-linux-gnu", "neoverse-v1", "-i8mm", A64_DOT,
     QUILL_LLVM_ISA_NEON_DOT},
    {"aarch64-linux-gnu", "cortex-a76", "+i8mm", A64_I8MM,
     QUILL_LLVM_ISA_NEON_I8MM},
    {"aarch64-linux-gnu", "neoverse-v1", "-neon", BIT(PORTABLE),
     QUILL_LLVM_ISA_PORTABLE},
    /* the Arm paths are AArch64's only */
    {"x86_64-unknown-linux-gnu", "znver4", "+dotprod,+i8mm", X86_VNNI512,
     QUILL_LLVM_ISA_AVX512_VNNI},
};

static void test_named_cpus(void) {
  for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
    const isa_answer *a = &answers[i];
    quill_context *ctx = quill_context_create(NULL, NULL);
    quill_diag_set_handler(ctx, diag_capture, (void *)1);
    quill_llvm_options o;
    quill_llvm_options_init(&o);
    o.triple = a->triple;
    o.cpu = a->cpu;
    o.features = a->features;
    unsigned paths = 0;
    quill_llvm_isa best = QUILL_LLVM_ISA_AUTO;
    CHECK(quill_llvm_isa_paths(ctx, &o, &paths, &best) == QUILL_OK);
    if (paths != a->paths || best != a->best)
      fprintf(stderr, "%s %s %s: paths 0x%x (want 0x%x), best %s (want %s)\n",
              a->triple, a->cpu, a->features ? a->features : "", paths,
              a->paths, quill_llvm_isa_name(best),
              quill_llvm_isa_name(a->best));
    CHECK(paths == a->paths);
    CHECK(best == a->best);
    quill_context_destroy(ctx);
  }
  /* a CPU LLVM does not know is an error, not an answer */
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, NULL);
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  o.triple = "x86_64-unknown-linux-gnu";
  o.cpu = "pentium9";
  unsigned paths = 0;
  CHECK(quill_llvm_isa_paths(ctx, &o, &paths, NULL) == QUILL_ERR_INVALID);
  quill_context_destroy(ctx);
}

/* A quantized 3x3 conv with random weights, large enough for the vector
 * kernels (16 channels in and out). */
static char qconv_text[8192];

static void make_qconv(void) {
  size_t n = (size_t)snprintf(
      qconv_text, sizeof qconv_text,
      "func @f(%%x: tensor<1x16x6x6x!quant.uniform<u8:f32, 0.05:128>>)\n"
      "    -> tensor<1x16x6x6x!quant.uniform<u8:f32, 0.1:120>> {\n"
      "  %%w = constant {value = dense<\"0x");
  for (int i = 0; i < 16 * 16 * 9; i++)
    n += (size_t)snprintf(qconv_text + n, sizeof qconv_text - n, "%02X",
                          (unsigned)rnd_int(0, 255));
  snprintf(qconv_text + n, sizeof qconv_text - n,
           "\"> : tensor<16x16x3x3x!quant.uniform<i8:f32, 0.02:0>>} : "
           "tensor<16x16x3x3x!quant.uniform<i8:f32, 0.02:0>>\n"
           "  %%y = qconv2d %%x, %%w {pads = [1, 1, 1, 1]} : "
           "tensor<1x16x6x6x!quant.uniform<u8:f32, 0.1:120>>\n"
           "  return %%y\n}\n");
}

static void diag_keep(void *ud, quill_loc loc, quill_diag_severity sev,
                      const char *msg) {
  (void)loc;
  if (sev == QUILL_DIAG_ERROR)
    snprintf(ud, 512, "%s", msg);
}

/* The host: what the library offers runs bit-exactly, what it does not
 * offer is refused (with the available paths named). */
static void test_host(void) {
  unsigned mask = host_path_mask(NULL);
  CHECK(mask & BIT(PORTABLE));
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, NULL);
  quill_llvm_options o;
  quill_llvm_options_init(&o);
  o.features = test_mattr();
  quill_llvm_isa best = QUILL_LLVM_ISA_AUTO;
  CHECK(quill_llvm_isa_paths(ctx, &o, NULL, &best) == QUILL_OK);
  CHECK(best != QUILL_LLVM_ISA_AUTO && (mask & (1u << best)));
  quill_context_destroy(ctx);
  printf("host paths:");
  for (unsigned i = QUILL_LLVM_ISA_PORTABLE; i < QUILL_LLVM_ISA_COUNT; i++)
    if (mask & (1u << i))
      printf(" %s%s", quill_llvm_isa_name((quill_llvm_isa)i),
             i == best ? " (auto)" : "");
  printf("\n");

  for (unsigned i = QUILL_LLVM_ISA_PORTABLE; i < QUILL_LLVM_ISA_COUNT; i++) {
    if (mask & (1u << i)) {
      llvm_case c = {.name = "qconv", .text = qconv_text,
                     .isa = (quill_llvm_isa)i};
      CHECK(run_case(&c));
      continue;
    }
    char msg[512] = "";
    ctx = quill_context_create(NULL, NULL);
    quill_diag_set_handler(ctx, diag_keep, msg);
    quill_module *m =
        quill_parse_module(ctx, qconv_text, strlen(qconv_text), "qconv", 0);
    CHECK(m != NULL);
    quill_llvm_options_init(&o);
    o.features = test_mattr();
    o.isa = (quill_llvm_isa)i;
    quill_llvm_compiled *cm = NULL;
    CHECK(m && quill_llvm_compile(ctx, quill_module_graph(m, 0), &o, &cm) ==
                   QUILL_ERR_INVALID);
    CHECK(strstr(msg, "is not available") && strstr(msg, "portable"));
    /* the message names the available paths, not LLVM's feature string */
    CHECK(!strstr(msg, "+sse"));
    quill_llvm_compiled_destroy(cm);
    if (m)
      quill_module_destroy(m);
    quill_context_destroy(ctx);
  }
}

int main(void) {
  test_named_cpus();
  make_qconv();
  test_host();
  printf("test_llvm_isa: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
