/*
 * isa.c - target selection: triple, CPU and features (like llc's
 * -mtriple/-mcpu/-mattr, defaulting to the host) and the instruction path
 * the integer conv/matmul kernels take.
 *
 *   triple  --LLVMNormalizeTargetTriple--> LLVMGetTargetFromTriple (error if
 *           LLVM has no such target)
 *   cpu     checked against LLVM 19's CPU list for x86 and AArch64 (other
 *           targets pass it through); the host's name for a host compile
 *   features  "+a,-b"; the host's full feature list for a host compile
 *
 * The C API cannot ask LLVM which features a CPU name implies, so the ISA
 * choice reads a table of x86 CPU classes below and then applies the
 * explicit +/- features on top (a host compile gets the complete host list
 * from LLVMGetHostCPUFeatures, so the table only matters for cross
 * compiles with -mcpu). Path preference: amx > avx512-vnni > avx-vnni >
 * avx2 > portable. A forced --isa the features lack is an error. The amx
 * path also needs Linux (the code asks it for the tile state); compiling
 * for the host, it is chosen only when the running kernel offers that
 * state (arch_prctl ARCH_GET_XCOMP_SUPP).
 *
 * AArch64 the same way: a table of the CPUs LLVM 19 gives dotprod (sdot)
 * and i8mm (smmla), read from clang-19's __ARM_FEATURE_DOTPROD and
 * __ARM_FEATURE_MATMUL_INT8 for each -mcpu, then +/-dotprod, +/-i8mm
 * (and -neon) on top. Path preference: neon-i8mm > neon-dot > portable.
 */
#define _DEFAULT_SOURCE /* syscall() */
#include <stdio.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <llvm-c/Target.h>

#include "targets/llvm/cg.h"

static const char *const isa_names[QUILL_LLVM_ISA_COUNT] = {
    "auto",        "portable", "avx2",     "avx-vnni",
    "avx512-vnni", "amx",      "neon-dot", "neon-i8mm"};

const char *quill_llvm_isa_name(quill_llvm_isa isa) {
  return isa < QUILL_LLVM_ISA_COUNT ? isa_names[isa] : "?";
}

bool quill_llvm_isa_parse(const char *name, quill_llvm_isa *out) {
  for (unsigned i = 0; i < QUILL_LLVM_ISA_COUNT; i++)
    if (!strcmp(name, isa_names[i])) {
      *out = (quill_llvm_isa)i;
      return true;
    }
  return false;
}

/* ---- x86 CPU classes (LLVM 19 names, llc -mcpu=help) ----------------------- */

enum { X_BASE, X_AVX2, X_AVX512, X_AVX512VNNI, X_AVXVNNI, X_AVX512_AVXVNNI };

static const struct {
  const char *name;
  int cls;
} x86_cpus[] = {
    {"alderlake", X_AVXVNNI}, {"arrowlake", X_AVXVNNI},
    {"arrowlake-s", X_AVXVNNI}, {"arrowlake_s", X_AVXVNNI},
    {"broadwell", X_AVX2}, {"cannonlake", X_AVX512},
    {"cascadelake", X_AVX512VNNI}, {"clearwaterforest", X_AVXVNNI},
    {"cooperlake", X_AVX512VNNI}, {"core-avx2", X_AVX2},
    {"core_4th_gen_avx", X_AVX2}, {"core_4th_gen_avx_tsx", X_AVX2},
    {"core_5th_gen_avx", X_AVX2}, {"core_5th_gen_avx_tsx", X_AVX2},
    {"emeraldrapids", X_AVX512_AVXVNNI}, {"gracemont", X_AVXVNNI},
    {"grandridge", X_AVXVNNI}, {"graniterapids", X_AVX512_AVXVNNI},
    {"graniterapids-d", X_AVX512_AVXVNNI}, {"graniterapids_d", X_AVX512_AVXVNNI},
    {"haswell", X_AVX2}, {"icelake-client", X_AVX512VNNI},
    {"icelake-server", X_AVX512VNNI}, {"icelake_client", X_AVX512VNNI},
    {"icelake_server", X_AVX512VNNI}, {"knl", X_AVX2}, {"knm", X_AVX2},
    {"lunarlake", X_AVXVNNI}, {"meteorlake", X_AVXVNNI},
    {"mic_avx512", X_AVX2}, {"pantherlake", X_AVXVNNI},
    {"raptorlake", X_AVXVNNI}, {"rocketlake", X_AVX512VNNI},
    {"sapphirerapids", X_AVX512_AVXVNNI}, {"sierraforest", X_AVXVNNI},
    {"skx", X_AVX512}, {"skylake", X_AVX2}, {"skylake-avx512", X_AVX512},
    {"skylake_avx512", X_AVX512}, {"tigerlake", X_AVX512VNNI},
    {"x86-64-v3", X_AVX2}, {"x86-64-v4", X_AVX512}, {"znver1", X_AVX2},
    {"znver2", X_AVX2}, {"znver3", X_AVX2}, {"znver4", X_AVX512VNNI},
    {"znver5", X_AVX512_AVXVNNI}, {"bdver4", X_AVX2},
};

/* Every other x86 CPU LLVM 19 knows (no AVX2). */
static const char *const x86_base_cpus =
    " amdfam10 athlon athlon-4 athlon-fx athlon-mp athlon-tbird athlon-xp"
    " athlon64 athlon64-sse3 atom atom_sse4_2 atom_sse4_2_movbe barcelona"
    " bdver1 bdver2 bdver3 bonnell btver1 btver2 c3 c3-2 core-avx-i core2"
    " core_2_duo_sse4_1 core_2_duo_ssse3 core_2nd_gen_avx core_3rd_gen_avx"
    " core_aes_pclmulqdq core_i7_sse4_2 corei7 corei7-avx generic geode"
    " goldmont goldmont-plus goldmont_plus i386 i486 i586 i686 ivybridge k6"
    " k6-2 k6-3 k8 k8-sse3 lakemont nehalem nocona opteron opteron-sse3"
    " penryn pentium pentium-m pentium-mmx pentium2 pentium3 pentium3m"
    " pentium4 pentium4m pentium_4 pentium_4_sse3 pentium_ii pentium_iii"
    " pentium_iii_no_xmm_regs pentium_m pentium_mmx pentium_pro pentiumpro"
    " prescott sandybridge silvermont slm tremont westmere winchip-c6"
    " winchip2 x86-64 x86-64-v2 yonah ";

static const char *const aarch64_cpus =
    " a64fx ampere1 ampere1a ampere1b apple-a10 apple-a11 apple-a12 apple-a13"
    " apple-a14 apple-a15 apple-a16 apple-a17 apple-a7 apple-m4 carmel"
    " cortex-a34 cortex-a35 cortex-a510 cortex-a520 cortex-a520ae cortex-a53"
    " cortex-a55 cortex-a57 cortex-a65 cortex-a65ae cortex-a710 cortex-a715"
    " cortex-a72 cortex-a720 cortex-a720ae cortex-a725 cortex-a73 cortex-a75"
    " cortex-a76 cortex-a76ae cortex-a77 cortex-a78 cortex-a78ae cortex-a78c"
    " cortex-r82 cortex-r82ae cortex-x1 cortex-x1c cortex-x2 cortex-x3"
    " cortex-x4 cortex-x925 exynos-m3 exynos-m4 exynos-m5 falkor generic kryo"
    " neoverse-512tvb neoverse-e1 neoverse-n1 neoverse-n2 neoverse-n3"
    " neoverse-v1 neoverse-v2 neoverse-v3 neoverse-v3ae oryon-1 saphira"
    " thunderx thunderx2t99 thunderx3t110 thunderxt81 thunderxt83"
    " thunderxt88 tsv110 apple-m1 apple-m2 apple-m3 apple-latest ";

/* AArch64 CPUs with dotprod, and those with i8mm too (LLVM 19). */
static const char *const aarch64_dotprod_cpus =
    " ampere1 ampere1a ampere1b apple-a13 apple-a14 apple-a15 apple-a16"
    " apple-a17 apple-m4 cortex-a510 cortex-a520 cortex-a520ae cortex-a55"
    " cortex-a65 cortex-a65ae cortex-a710 cortex-a715 cortex-a720"
    " cortex-a720ae cortex-a725 cortex-a75 cortex-a76 cortex-a76ae cortex-a77"
    " cortex-a78 cortex-a78ae cortex-a78c cortex-r82 cortex-r82ae cortex-x1"
    " cortex-x1c cortex-x2 cortex-x3 cortex-x4 cortex-x925 exynos-m4"
    " exynos-m5 neoverse-512tvb neoverse-e1 neoverse-n1 neoverse-n2"
    " neoverse-n3 neoverse-v1 neoverse-v2 neoverse-v3 neoverse-v3ae oryon-1"
    " saphira tsv110 apple-m1 apple-m2 apple-m3 apple-latest ";
static const char *const aarch64_i8mm_cpus =
    " ampere1 ampere1a ampere1b apple-a15 apple-a16 apple-a17 apple-m4"
    " cortex-a510 cortex-a520 cortex-a520ae cortex-a710 cortex-a715"
    " cortex-a720 cortex-a720ae cortex-a725 cortex-x2 cortex-x3 cortex-x4"
    " cortex-x925 neoverse-512tvb neoverse-n2 neoverse-n3 neoverse-v1"
    " neoverse-v2 neoverse-v3 neoverse-v3ae oryon-1 apple-m2 apple-m3"
    " apple-latest ";

static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if (p[-1] == ' ' && p[n] == ' ')
      return true;
  return false;
}

/* -1 if the cpu is unknown for x86. */
static int x86_class(const char *cpu) {
  for (size_t i = 0; i < sizeof x86_cpus / sizeof x86_cpus[0]; i++)
    if (!strcmp(cpu, x86_cpus[i].name))
      return x86_cpus[i].cls;
  return in_list(x86_base_cpus, cpu) ? X_BASE : -1;
}

/* CPUs LLVM 19 gives AVX512-VBMI. */
static const char *const vbmi_cpus =
    " cannonlake icelake-client icelake-server tigerlake rocketlake"
    " sapphirerapids emeraldrapids graniterapids graniterapids-d"
    " graniterapids_d diamondrapids znver4 znver5 ";

/* CPUs LLVM 19 gives AMX-INT8 and AMX-TILE. */
static const char *const amx_cpus =
    " sapphirerapids emeraldrapids graniterapids graniterapids-d"
    " graniterapids_d diamondrapids ";

static void set_class(cg_target *t, int cls) {
  t->avx2 = t->fma = cls != X_BASE;
  t->avx512f = t->avx512bw = t->avx512vl = t->avx512dq =
      cls == X_AVX512 || cls == X_AVX512VNNI || cls == X_AVX512_AVXVNNI;
  t->avx512vnni = cls == X_AVX512VNNI || cls == X_AVX512_AVXVNNI;
  t->avxvnni = cls == X_AVXVNNI || cls == X_AVX512_AVXVNNI;
}

/* Apply "+f,-g" on top of the CPU's features. */
static void apply_features(cg_target *t, const char *fs) {
  const char *p = fs;
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 1 && (p[0] == '+' || p[0] == '-')) {
      bool on = p[0] == '+';
      char f[64];
      size_t m = n - 1 < sizeof f - 1 ? n - 1 : sizeof f - 1;
      memcpy(f, p + 1, m);
      f[m] = '\0';
      if (!strcmp(f, "avx2")) {
        t->avx2 = on;
        if (!on)
          t->avx512f = t->avx512bw = t->avx512vl = t->avx512vnni =
              t->avxvnni = false;
      } else if (!strcmp(f, "avx512f")) {
        t->avx512f = on;
        if (on)
          t->avx2 = t->fma = true;
        else
          t->avx512bw = t->avx512vl = t->avx512vnni = false;
      } else if (!strcmp(f, "avx512bw")) {
        t->avx512bw = on;
      } else if (!strcmp(f, "avx512vl")) {
        t->avx512vl = on;
      } else if (!strcmp(f, "avx512dq")) {
        t->avx512dq = on;
      } else if (!strcmp(f, "fma")) {
        t->fma = on;
      } else if (!strcmp(f, "avx512vnni")) {
        t->avx512vnni = on;
      } else if (!strcmp(f, "avx512vbmi")) {
        t->avx512vbmi = on;
      } else if (!strcmp(f, "avxvnni")) {
        t->avxvnni = on;
      } else if (!strcmp(f, "amx-int8")) {
        t->amx_int8 = on;
      } else if (!strcmp(f, "amx-tile")) {
        t->amx_tile = on;
      } else if (!on && (!strcmp(f, "avx") || !strcmp(f, "sse2"))) {
        t->avx2 = t->avx512f = t->avx512bw = t->avx512vl = t->avx512vnni =
            t->avxvnni = t->fma = false;
      }
    }
    p = e ? e + 1 : NULL;
  }
  /* Implied by the instructions the kernels use. */
  if (!t->avx512f)
    t->avx512bw = t->avx512vl = t->avx512dq = t->avx512vnni = false;
  if (!t->avx512bw)
    t->avx512vbmi = false;
  t->amx = t->amx_int8 && t->amx_tile;
  if (!t->avx2)
    t->avxvnni = false;
}

/* AArch64: "+dotprod,-i8mm" on top of the CPU's features. */
static void apply_aarch64_features(cg_target *t, const char *fs) {
  const char *p = fs;
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 1 && (p[0] == '+' || p[0] == '-')) {
      bool on = p[0] == '+';
      const char *f = p + 1;
      size_t m = n - 1;
      if (m == 7 && !strncmp(f, "dotprod", 7))
        t->dotprod = on;
      else if (m == 4 && !strncmp(f, "i8mm", 4))
        t->i8mm = on;
      else if (!on && m == 4 && !strncmp(f, "neon", 4))
        t->dotprod = t->i8mm = false;
    }
    p = e ? e + 1 : NULL;
  }
}

/* Does the running kernel offer the AMX tile data state (XTILEDATA,
 * state component 18)? */
static bool host_amx_state(void) {
#if defined(__linux__) && defined(__x86_64__)
  unsigned long supported = 0;
  return syscall(SYS_arch_prctl, 0x1021 /* ARCH_GET_XCOMP_SUPP */,
                 &supported) == 0 &&
         (supported & (1ul << 18));
#else
  return false;
#endif
}

/* Which instruction paths the target's features allow. A host compile
 * (the host CPU, not a --mcpu) gets the amx path only if the running
 * kernel offers the tile state; for a named CPU the generated code asks
 * for it when it runs. */
static void target_paths(cg_target *t, bool host_cpu,
                         bool can[QUILL_LLVM_ISA_COUNT]) {
  memset(can, 0, QUILL_LLVM_ISA_COUNT * sizeof *can);
  can[QUILL_LLVM_ISA_PORTABLE] = true;
  can[QUILL_LLVM_ISA_AVX2] = t->x86 && t->avx2;
  /* vpdpbusd on ymm: VEX (avx-vnni) or EVEX (avx512-vnni + avx512vl) */
  can[QUILL_LLVM_ISA_AVX_VNNI] =
      t->x86 && t->avx2 && (t->avxvnni || (t->avx512vnni && t->avx512vl));
  can[QUILL_LLVM_ISA_AVX512_VNNI] =
      t->x86 && t->avx512f && t->avx512bw && t->avx512vnni;
  t->linux_os = strstr(t->triple, "-linux") != NULL;
  can[QUILL_LLVM_ISA_AMX] = can[QUILL_LLVM_ISA_AVX512_VNNI] && t->amx &&
                            t->linux_os && !strncmp(t->triple, "x86_64", 6) &&
                            (!host_cpu || host_amx_state());
  can[QUILL_LLVM_ISA_NEON_DOT] = t->aarch64 && t->dotprod;
  can[QUILL_LLVM_ISA_NEON_I8MM] = t->aarch64 && t->i8mm;
}

/* "portable, avx2, ..." */
static void paths_list(const bool can[QUILL_LLVM_ISA_COUNT], char *buf,
                       size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (unsigned i = QUILL_LLVM_ISA_PORTABLE; i < QUILL_LLVM_ISA_COUNT; i++)
    if (can[i] && n < size)
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
                            isa_names[i]);
}

void cg_target_free(quill_context *ctx, cg_target *t) {
  if (t->triple)
    quill_string_free(ctx, t->triple);
  if (t->cpu)
    quill_string_free(ctx, t->cpu);
  if (t->features)
    quill_string_free(ctx, t->features);
  memset(t, 0, sizeof *t);
}

static void init_llvm_targets(void) {
  /* Idempotent: LLVM ignores re-registration. */
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers(); /* inline asm (the AMX permission call) */
}

quill_status cg_target_init(quill_context *ctx, const quill_llvm_options *o,
                            cg_target *t) {
  memset(t, 0, sizeof *t);
  init_llvm_targets();
  quill_loc nowhere = quill_loc_unknown();
  char *host = LLVMGetDefaultTargetTriple();
  char *norm_host = LLVMNormalizeTargetTriple(host);
  char *norm = o->triple ? LLVMNormalizeTargetTriple(o->triple)
                         : LLVMNormalizeTargetTriple(host);
  t->host = !o->triple || !strcmp(norm, norm_host);
  t->triple = quill_strdup(ctx, norm);
  LLVMDisposeMessage(host);
  LLVMDisposeMessage(norm_host);
  LLVMDisposeMessage(norm);
  if (!t->triple)
    return QUILL_ERR_NOMEM;
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    quill_error(ctx, nowhere, "unsupported target triple '%s': %s",
                o->triple ? o->triple : t->triple, err ? err : "unknown");
    LLVMDisposeMessage(err);
    cg_target_free(ctx, t);
    return QUILL_ERR_INVALID;
  }
  const char *tname = LLVMGetTargetName(target);
  t->x86 = !strcmp(tname, "x86-64") || !strcmp(tname, "x86");
  t->aarch64 = !strncmp(tname, "aarch64", 7) || !strcmp(tname, "arm64");
  bool host_cpu = t->host && !o->cpu;
  if (host_cpu) {
    char *n = LLVMGetHostCPUName(), *f = LLVMGetHostCPUFeatures();
    t->cpu = quill_strdup(ctx, n);
    t->features = quill_strdup(ctx, o->features ? o->features : f);
    if (o->features && t->features) { /* host list, then the user's */
      quill_string_free(ctx, t->features);
      size_t len = strlen(f) + strlen(o->features) + 2;
      t->features = quill_alloc(ctx, len);
      if (t->features)
        snprintf(t->features, len, "%s,%s", f, o->features);
    }
    LLVMDisposeMessage(n);
    LLVMDisposeMessage(f);
  } else {
    t->cpu = quill_strdup(ctx, o->cpu ? o->cpu : "generic");
    t->features = quill_strdup(ctx, o->features ? o->features : "");
  }
  if (!t->cpu || !t->features) {
    cg_target_free(ctx, t);
    return QUILL_ERR_NOMEM;
  }
  if (t->x86) {
    int cls = x86_class(t->cpu);
    if (cls < 0 && !host_cpu) {
      quill_error(ctx, nowhere, "unsupported CPU '%s' for target '%s' (see "
                                "'llc -mtriple=%s -mcpu=help')",
                  t->cpu, t->triple, t->triple);
      cg_target_free(ctx, t);
      return QUILL_ERR_INVALID;
    }
    set_class(t, cls < 0 ? X_BASE : cls);
    t->amx_int8 = t->amx_tile = in_list(amx_cpus, t->cpu);
    t->avx512vbmi = in_list(vbmi_cpus, t->cpu);
    apply_features(t, t->features);
  } else if (t->aarch64) {
    if (!host_cpu && !in_list(aarch64_cpus, t->cpu)) {
      quill_error(ctx, nowhere, "unsupported CPU '%s' for target '%s'", t->cpu,
                  t->triple);
      cg_target_free(ctx, t);
      return QUILL_ERR_INVALID;
    }
    t->dotprod = in_list(aarch64_dotprod_cpus, t->cpu);
    t->i8mm = in_list(aarch64_i8mm_cpus, t->cpu);
    apply_aarch64_features(t, t->features);
  }
  bool can[QUILL_LLVM_ISA_COUNT];
  target_paths(t, host_cpu, can);
  if (o->isa != QUILL_LLVM_ISA_AUTO) {
    if (o->isa >= QUILL_LLVM_ISA_COUNT || !can[o->isa]) {
      bool os = o->isa == QUILL_LLVM_ISA_AMX && t->amx &&
                can[QUILL_LLVM_ISA_AVX512_VNNI];
      char have[128];
      paths_list(can, have, sizeof have);
      quill_error(ctx, nowhere, "instruction path '%s' is not available on "
                                "CPU '%s' (target '%s'; paths available: "
                                "%s)%s",
                  quill_llvm_isa_name(o->isa), t->cpu, t->triple, have,
                  !os ? ""
                  : host_cpu ? ": the running Linux does not offer the AMX "
                              "tile state, or this is not x86-64 Linux"
                            : ": the amx path needs an x86-64 Linux target");
      cg_target_free(ctx, t);
      return QUILL_ERR_INVALID;
    }
    t->isa = o->isa;
  } else {
    t->isa = can[QUILL_LLVM_ISA_NEON_I8MM]     ? QUILL_LLVM_ISA_NEON_I8MM
             : can[QUILL_LLVM_ISA_NEON_DOT]    ? QUILL_LLVM_ISA_NEON_DOT
             : can[QUILL_LLVM_ISA_AMX]         ? QUILL_LLVM_ISA_AMX
             : can[QUILL_LLVM_ISA_AVX512_VNNI] ? QUILL_LLVM_ISA_AVX512_VNNI
             : can[QUILL_LLVM_ISA_AVX_VNNI]  ? QUILL_LLVM_ISA_AVX_VNNI
             : can[QUILL_LLVM_ISA_AVX2]      ? QUILL_LLVM_ISA_AVX2
                                             : QUILL_LLVM_ISA_PORTABLE;
  }
  return QUILL_OK;
}

quill_status quill_llvm_isa_paths(quill_context *ctx,
                                  const quill_llvm_options *o,
                                  unsigned *paths, quill_llvm_isa *best) {
  quill_llvm_options auto_o = *o;
  auto_o.isa = QUILL_LLVM_ISA_AUTO;
  cg_target t;
  quill_status st = cg_target_init(ctx, &auto_o, &t);
  if (st)
    return st;
  bool can[QUILL_LLVM_ISA_COUNT];
  target_paths(&t, t.host && !o->cpu, can);
  unsigned mask = 0;
  for (unsigned i = QUILL_LLVM_ISA_PORTABLE; i < QUILL_LLVM_ISA_COUNT; i++)
    if (can[i])
      mask |= 1u << i;
  if (paths)
    *paths = mask;
  if (best)
    *best = t.isa;
  cg_target_free(ctx, &t);
  return QUILL_OK;
}

LLVMTargetMachineRef cg_target_machine(quill_context *ctx, const cg_target *t,
                                       unsigned opt_level) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    quill_error(ctx, quill_loc_unknown(), "unsupported target triple '%s': %s",
                t->triple, err ? err : "unknown");
    LLVMDisposeMessage(err);
    return NULL;
  }
  LLVMCodeGenOptLevel lvl = opt_level == 0   ? LLVMCodeGenLevelNone
                            : opt_level == 1 ? LLVMCodeGenLevelLess
                            : opt_level == 2 ? LLVMCodeGenLevelDefault
                                             : LLVMCodeGenLevelAggressive;
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, lvl,
                              LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    quill_error(ctx, quill_loc_unknown(), "cannot create a target machine for "
                                          "'%s' (cpu '%s')",
                t->triple, t->cpu);
  return tm;
}
