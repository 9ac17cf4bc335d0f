/*
 * qrandom_gen.h - shared by test_llvm_qrandom.c and
 * test_llvm_qrandom_fused.c: the text generator of random .qir graphs
 * (emit into a growing buffer; 8-bit quant types per tensor or per axis,
 * hex constants, random weights and their quant parameters, a
 * requantization's attributes, constant i32 biases) and the driver that
 * runs each drawn graph on every ISA path of the host against the
 * reference interpreter (llvm_harness.h's run_case).
 *
 * Each test's graphs come from llvm_harness.h's one seeded xorshift
 * stream, drawn in the order the test's table of ops lists them:
 * QUILL_LLVM_RANDOM_CASES scales the number of graphs (60 per op by
 * default, a fixed share of that for the slower ops), QUILL_LLVM_RANDOM_SEED
 * changes the seed; a failing case prints its .qir.
 */
#ifndef QUILL_TEST_UNIT_QRANDOM_GEN_H
#define QUILL_TEST_UNIT_QRANDOM_GEN_H

#include "ir/quant.h"
#include "ir/strbuf.h"
#include "llvm_harness.h"

static const char *const roundings[] = {"half_even", "half_away", "half_up",
                                        "tflite"};

typedef struct gen {
  char *buf;
  size_t len, cap;
  bool wsparse; /* s8 weights mostly small, a few large (emit_rand_weights) */
} gen;

static inline void emit(gen *g, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if ((size_t)n < g->cap - g->len) {
      g->len += (size_t)n;
      return;
    }
    g->cap = g->cap * 2 + (size_t)n + 64;
    g->buf = realloc(g->buf, g->cap);
  }
}

static inline double rnd_range(double lo, double hi) {
  return lo + (hi - lo) * rnd_unit();
}

/* An 8-bit quant type: "!quant.uniform<u8:f32, s:zp>" or per axis. */
static inline void qtype(gen *g, bool u8, double scale, int64_t zp) {
  emit(g, "!quant.uniform<%s:f32, %.9g:%lld>", u8 ? "u8" : "i8", scale,
       (long long)zp);
}

static inline void qtype_axis(gen *g, bool u8, int axis, int64_t n,
                              const double *scales, const int64_t *zps) {
  emit(g, "!quant.uniform<%s:f32:%d, {", u8 ? "u8" : "i8", axis);
  for (int64_t i = 0; i < n; i++)
    emit(g, "%s%.9g:%lld", i ? ", " : "", scales[i], (long long)zps[i]);
  emit(g, "}>");
}

static inline void hex_bytes(gen *g, const uint8_t *p, size_t n) {
  emit(g, "\"0x");
  for (size_t i = 0; i < n; i++)
    emit(g, "%02X", p[i]);
  emit(g, "\"");
}

/* The weight element type (quant, per tensor or axis). */
typedef struct wparams {
  bool u8, axis;
  int64_t n;
  double scales[512];
  int64_t zps[512];
} wparams;

static inline void wtype(gen *g, const wparams *w, int axis);

/* "  %w = constant" of random 4-D weights [d0, d1, d2, d3] of type w
 * (per axis 0): u8 in [0, 255], i8 in [lo, 127]. */
static inline void emit_rand_weights(gen *g, const wparams *w,
                                     const int64_t d[4], int lo) {
  size_t nw = (size_t)(d[0] * d[1] * d[2] * d[3]);
  uint8_t *b = malloc(nw);
  for (size_t i = 0; i < nw; i++)
    b[i] = (uint8_t)(w->u8 ? rnd_int(0, 255) : rnd_int(lo, 127));
  /* wsparse: |w| <= 40 but 2% in 90..127, so that a few vpmaddubsw pairs
   * could saturate: the avx2 path splits them (conv_ubsw.c) */
  for (size_t i = 0; g->wsparse && !w->u8 && i < nw; i++)
    b[i] = (uint8_t)(rnd() % 50 == 0 ? (rnd() % 2 ? 1 : -1) * rnd_int(90, 127)
                                     : rnd_int(-40, 40));
  emit(g, "  %%w = constant {value = dense<");
  hex_bytes(g, b, nw);
  for (int k = 0; k < 2; k++) {
    emit(g, "%s : tensor<%lldx%lldx%lldx%lldx", k ? ">}" : ">",
         (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3]);
    wtype(g, w, 0);
  }
  emit(g, ">\n");
  free(b);
}

static inline void wtype(gen *g, const wparams *w, int axis) {
  if (w->axis)
    qtype_axis(g, w->u8, axis, w->n, w->scales, w->zps);
  else
    qtype(g, w->u8, w->scales[0], w->zps[0]);
}

static inline void random_wparams(wparams *w, int64_t nch) {
  w->u8 = rnd() % 6 == 0;
  w->axis = nch <= 512 && rnd() % 2 == 0;
  w->n = w->axis ? nch : 1;
  int zmode = (int)(rnd() % 4); /* 0: symmetric, else sometimes random */
  for (int64_t i = 0; i < w->n; i++) {
    w->scales[i] = rnd_range(0.002, 0.05);
    if (w->u8)
      w->zps[i] = zmode == 0 ? 128 : rnd_int(100, 156);
    else
      w->zps[i] = zmode == 0 ? 0 : rnd_int(-20, 20);
  }
}

/* Requantization attributes (and the result's quant params). */
static inline void requant_attrs(gen *g, bool *fixed_out, double sx,
                                 const wparams *w, double sy, int64_t nch,
                                 const char *rounding, bool yu8) {
  bool tfl = !strcmp(rounding, "tflite");
  if (rnd() % 3 == 0) { /* a fused relu/clip: act_min <= act_max */
    int64_t qmin = yu8 ? 0 : -128, qmax = yu8 ? 255 : 127;
    int64_t lo = rnd_int(qmin, (qmin + qmax) / 2), hi = rnd_int(lo, qmax);
    emit(g, "act_min = %lld, act_max = %lld, ", (long long)lo, (long long)hi);
  }
  bool fixed = tfl || rnd() % 2;
  *fixed_out = fixed;
  emit(g, "rounding = \"%s\"", rounding);
  if (!fixed)
    return;
  bool per = w->axis && rnd() % 3 != 0;
  int64_t n = per ? nch : 1;
  bool random_ms = rnd() % 5 == 0;
  int32_t *m = malloc((size_t)n * sizeof *m);
  int *sh = malloc((size_t)n * sizeof *sh);
  for (int64_t c = 0; c < n; c++) {
    if (random_ms) {
      m[c] = (int32_t)rnd_int(0, INT32_MAX);
      sh[c] = (int)rnd_int(-31, 8);
    } else {
      double real = sx * w->scales[per ? c : 0] / sy;
      quill_quantize_multiplier(real, &m[c], &sh[c]);
    }
  }
  emit(g, ", multiplier = [");
  for (int64_t c = 0; c < n; c++)
    emit(g, "%s%lld", c ? ", " : "", (long long)m[c]);
  emit(g, "], shift = [");
  for (int64_t c = 0; c < n; c++)
    emit(g, "%s%d", c ? ", " : "", sh[c]);
  emit(g, "]");
  free(m);
  free(sh);
}

/* %<name> = a constant i32 bias of N random values in [-20000, 20000]. */
static inline void emit_bias(gen *g, const char *name, int64_t N) {
  int32_t *b = malloc((size_t)N * 4);
  for (int64_t i = 0; i < N; i++)
    b[i] = (int32_t)rnd_int(-20000, 20000);
  emit(g, "  %%%s = constant {value = dense<", name);
  hex_bytes(g, (const uint8_t *)b, (size_t)N * 4);
  emit(g, "> : tensor<%lldxi32>} : tensor<%lldxi32>\n", (long long)N,
       (long long)N);
  free(b);
}

/* ---- the driver ---------------------------------------------------------- */

/* Draws one graph of op `op` (an index into the test's table) into g. */
typedef void (*qrandom_draw)(gen *g, int op);

/* The number of cases per op (QUILL_LLVM_RANDOM_CASES, default 60); seeds
 * the generator with QUILL_LLVM_RANDOM_SEED. */
static inline int qrandom_setup(void) {
  const char *e = getenv("QUILL_LLVM_RANDOM_CASES");
  int ncases = e ? atoi(e) : 60;
  e = getenv("QUILL_LLVM_RANDOM_SEED");
  rng_state ^= e ? (uint64_t)strtoull(e, NULL, 10) * 0x9E3779B97F4A7C15ull : 0;
  if (!rng_state)
    rng_state = 1;
  return ncases;
}

/* Runs nop ops in order, ceil(ncases / share[op]) graphs of op `op` each
 * (drawn by draw, named names[op]#i), every graph on every ISA path this
 * machine can execute and every 7th with 2 threads: one check per graph
 * and path. Prints the counts; non-zero if a check failed. */
static inline int qrandom_run(const char *prog, int ncases, int nop,
                              const char *const *names, const int *share,
                              qrandom_draw draw) {
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  printf("%s: %d cases per op on", prog, ncases);
  for (unsigned k = 0; k < nisa; k++)
    printf(" %s", quill_llvm_isa_name(isas[k]));
  printf("\n");
  for (int op = 0; op < nop; op++)
    for (int i = 0; i < (ncases + share[op] - 1) / share[op]; i++) {
      gen g = {NULL, 0, 0, false};
      g.cap = 4096;
      g.buf = malloc(g.cap);
      g.buf[0] = '\0';
      draw(&g, op);
      char name[64];
      snprintf(name, sizeof name, "%s#%d", names[op], i);
      bool bad = false;
      for (unsigned k = 0; k < nisa; k++) {
        llvm_case c = {name, g.buf, 0, isas[k], (i % 7 == 0) ? 2 : 1, 0,
                       false};
        bool ok = run_case(&c);
        CHECK(ok);
        bad |= !ok;
      }
      if (bad)
        fprintf(stderr, "---- failing case %s:\n%s\n", name, g.buf);
      free(g.buf);
    }
  printf("%s: %d checks, %d failures\n", prog, checks, failures);
  return failures != 0;
}

#endif /* QUILL_TEST_UNIT_QRANDOM_GEN_H */
